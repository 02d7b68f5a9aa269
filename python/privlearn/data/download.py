"""Download the real data sets into the data folder, verified against pinned SHA-256 digests.

:func:`fetch` (and one ``fetch_<name>`` per data set) downloads the files a loader reads from
their canonical public source, checks each against a pinned SHA-256 and stores it as
``<data_home>/<name>/<file>``, the layout the loaders read (see
:func:`~privlearn.data.get_data_home`). The command line equivalent is
``privlearn datasets download NAME`` (or ``all``).

Guarantees
----------
- **Atomic**: a file is downloaded to a hidden temporary file in its final folder, verified,
  then moved into place with :func:`os.replace`. A failed, truncated, stalled or corrupted
  download leaves neither a partial file nor a temporary file behind and raises
  :class:`DownloadError`, whose message names the URL, the file and what went wrong (HTTP
  status, expected and received sizes or SHA-256 digests, timeout). A temporary file left by a
  run that was killed (so could not clean up) is removed by the next run for that file (only
  once no live process holds it: each writer holds an advisory lock on its temporary file).
- **Bounded**: reading stops one byte past the file's pinned size (an endless or oversized
  response fails at once instead of filling the disk); gzip content is decompressed only up to
  its pinned uncompressed size (a gzip bomb from a mirror is rejected after that many bytes);
  unpinned files (``msd``) are bounded by :data:`UNPINNED_MAX_BYTES`. Besides the per-read
  ``timeout``, each file has an overall ``deadline`` (default :data:`DEFAULT_DEADLINE`
  seconds), so a server that trickles bytes cannot keep a download alive for ever.
- **Idempotent**: a file already present with the right digest is not downloaded again
  (``force=True`` downloads it anyway).
- **Standard library only** for HTTP (:mod:`urllib.request`); ``http``, ``https`` and
  ``file`` URLs.

Mirrors
-------
``base_url=...`` (or the ``PRIVLEARN_DATA_MIRROR`` environment variable) replaces the canonical
sources by a mirror laid out like a data folder: the file ``<name>/<file>`` is read from
``<base_url>/<name>/<file>``. A web server (or a ``file://`` URL) over a copy of a complete data
folder is therefore a valid mirror. Mirrored files are verified against the same pins (a
gzip file whose compressed bytes differ is accepted when its decompressed content matches the
pinned content digest).
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import http.client
import os
import secrets
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable

from .home import PathLike, get_data_home

__all__ = [
    "MIRROR_ENV_VAR",
    "SOURCES",
    "DEFAULT_DEADLINE",
    "DEFAULT_TIMEOUT",
    "MAX_SECONDS",
    "DatasetSource",
    "DownloadError",
    "RemoteFile",
    "fetch",
    "fetch_adult",
    "fetch_helr",
    "fetch_kddcup99",
    "fetch_mnist",
    "fetch_msd",
    "fetch_phishing",
    "fetchable_datasets",
]

MIRROR_ENV_VAR = "PRIVLEARN_DATA_MIRROR"
#: Seconds to wait for the connection and for each block of data.
DEFAULT_TIMEOUT = 60.0
#: Seconds one file's download may take in all (connection, transfer and verification of the
#: bytes as they arrive), checked between reads: at 100 kB/s the 211 MB of ``msd`` fit.
DEFAULT_DEADLINE = 3600.0
#: Largest download, and largest decompressed content, of a file without a pinned size (1 GiB;
#: ``msd``'s zip is about 211 MB, its content about 430 MB).
UNPINNED_MAX_BYTES = 1 << 30
#: Largest ``timeout`` or ``deadline`` accepted, in seconds (about 116 days): sockets cannot
#: represent much longer waits (``1e12`` s overflows ``time_t``).
MAX_SECONDS = 1e7
_CHUNK = 1 << 16
_USER_AGENT = "privlearn-data-fetch (+https://pypi.org/project/privlearn/)"


class DownloadError(OSError):
    """A download failed, or its result did not match the pinned size or SHA-256.

    Attributes
    ----------
    url : str
        The URL that was read.
    path : pathlib.Path
        The data file that was to be written (it was not written).
    reason : str
        What went wrong, e.g. ``"HTTP 404 Not Found"``, ``"timed out after 60 s"`` or
        ``"sha256 mismatch: expected ..., got ..."``.
    """

    def __init__(self, url: str, path: Path, reason: str) -> None:
        self.url = url
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"download of {url} to '{self.path}' failed: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:  # picklable with its three arguments
        return (type(self), (self.url, self.path, self.reason))


@dataclass(frozen=True)
class RemoteFile:
    """One data file: where it lives in the data folder, where it comes from, its pins.

    Attributes
    ----------
    path : str
        Path relative to the data folder, ``/``-separated: ``"<dataset>/<file>"`` (the path
        the loader reads).
    url : str
        Canonical source URL.
    sha256 : str or None
        SHA-256 of the bytes served at ``url``; ``None`` when no digest can be pinned (the
        download is then checked for integrity only, see :func:`fetch_msd`).
    size : int or None
        Size in bytes of the file served at ``url`` (progress bar, truncation messages).
    gzip : bool
        The source is uncompressed and is stored gzip-compressed (fixed header: no name,
        mtime 0) because the loader reads a ``.gz`` file.
    content_sha256 : str or None
        SHA-256 of the decompressed content of the stored ``.gz`` file. A present or mirrored
        file whose gzip bytes differ (another compressor) is accepted when this matches.
    shared : {"identical", "content"} or None
        How the pins relate to the reference data folder the tests use: ``"identical"`` when
        that copy is byte-identical to the source (``sha256`` was computed from it),
        ``"content"`` when only its decompressed content is (``content_sha256`` was computed
        from it), ``None`` when the file is not in that folder.
    content_size : int or None
        Size in bytes of the decompressed content (with ``content_sha256``): decompression
        stops one byte past it, and it bounds the size of a mirror's other gzip of the same
        content. ``None``: bounded by :data:`UNPINNED_MAX_BYTES`.
    """

    path: str
    url: str
    sha256: str | None
    size: int | None
    gzip: bool = False
    content_sha256: str | None = None
    shared: str | None = "identical"
    content_size: int | None = None

    @property
    def dataset(self) -> str:
        return self.path.split("/", 1)[0]

    @property
    def filename(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class DatasetSource:
    """A data set's download recipe and terms.

    Attributes
    ----------
    name : str
        Data set name (the data folder's sub-folder).
    files : tuple of RemoteFile
        Files to download; empty when the set cannot be downloaded.
    source : str
        Who publishes the files and whether the URLs are the canonical source or a mirror.
    licence : str
        Licence and redistribution terms.
    licence_short : str
        The licence in a few words, for tables.
    fetchable : bool
        Whether :func:`fetch` can download the set.
    in_all : bool
        Whether ``fetch("all")`` / ``privlearn datasets download all`` includes it.
    note : str
        Anything else a user should know (unverified pins, sizes, why not fetchable).
    """

    name: str
    files: tuple[RemoteFile, ...]
    source: str
    licence: str
    licence_short: str = ""
    fetchable: bool = True
    in_all: bool = True
    note: str = ""


_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_OSSCI = "https://ossci-datasets.s3.amazonaws.com/mnist"
#: K-miran/HELR at a fixed commit (master, 2019-08-02): raw URLs of a commit never change.
_HELR_COMMIT = "c94951f2691d55defc82f95d3144c831eb6c8796"
_HELR = f"https://raw.githubusercontent.com/K-miran/HELR/{_HELR_COMMIT}/data"
_LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"

SOURCES: dict[str, DatasetSource] = {
    "adult": DatasetSource(
        name="adult",
        files=(
            RemoteFile(
                "adult/adult.data",
                f"{_UCI}/adult/adult.data",
                "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
                3974305,
            ),
            RemoteFile(
                "adult/adult.test",
                f"{_UCI}/adult/adult.test",
                "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
                2003153,
            ),
            RemoteFile(
                "adult/adult.names",
                f"{_UCI}/adult/adult.names",
                "c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a",
                5229,
            ),
        ),
        source="UCI Machine Learning Repository, Adult (canonical)",
        licence="CC BY 4.0 (redistribution allowed with attribution)",
        licence_short="CC BY 4.0",
    ),
    "helr": DatasetSource(
        name="helr",
        files=(
            RemoteFile(
                "helr/edin.txt",
                f"{_HELR}/edin.txt",
                "e317c014a68e44d0274099d19c1ea3759444e2b63be794d0374205561264970c",
                26313,
            ),
            RemoteFile(
                "helr/lbw.txt",
                f"{_HELR}/lbw.txt",
                "cd5817d5107829b7b85acd72ddfc3d90e63a84a213cbf0ef954235ce89b1ff24",
                4516,
            ),
            RemoteFile(
                "helr/nhanes3.txt",
                f"{_HELR}/nhanes3.txt",
                "3a3e57b94cc52530e30f57768269f984f6bff369111ad352653288117269df1c",
                778518,
                shared=None,
            ),
            RemoteFile(
                "helr/pcs.txt",
                f"{_HELR}/pcs.txt",
                "cb1affe2cdcdc154483dc37e3c7730fc758ac0cccba82fa53ec9cf99ead5971e",
                9669,
            ),
            RemoteFile(
                "helr/uis.txt",
                f"{_HELR}/uis.txt",
                "86c4b6ec9463fce3c8d7af18ae8d51976f2be0d0ede9fa8cc50c7302c8fb3666",
                12097,
            ),
        ),
        source=f"GitHub K-miran/HELR, data/ at commit {_HELR_COMMIT[:12]} (canonical)",
        licence="MIT (the HELR repository's licence; redistribution allowed)",
        licence_short="MIT",
        note="nhanes3.txt is pinned from the same commit of the repository",
    ),
    "kddcup99": DatasetSource(
        name="kddcup99",
        files=(
            RemoteFile(
                "kddcup99/kddcup.data_10_percent.gz",
                f"{_UCI}/kddcup99-mld/kddcup.data_10_percent.gz",
                "8045aca0d84e70e622d1148d7df782496f6333bf6eb979a1b0837c42a9fd9561",
                2144903,
                content_sha256="f8c8267ebcd9c0ed1fd7d6277fe5bfff8732e9b7db8e61b873542b2a534b6f9a",
                content_size=74889749,
            ),
        ),
        source="UCI Machine Learning Repository, KDD Cup 1999 Data, 10% subset (canonical)",
        licence="CC BY 4.0 (redistribution allowed with attribution)",
        licence_short="CC BY 4.0",
    ),
    "mnist": DatasetSource(
        name="mnist",
        files=(
            RemoteFile(
                "mnist/train-images-idx3-ubyte.gz",
                f"{_OSSCI}/train-images-idx3-ubyte.gz",
                "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
                9912422,
                content_sha256="ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
                content_size=47040016,
                shared="content",
            ),
            RemoteFile(
                "mnist/train-labels-idx1-ubyte.gz",
                f"{_OSSCI}/train-labels-idx1-ubyte.gz",
                "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
                28881,
                content_sha256="65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
                content_size=60008,
            ),
            RemoteFile(
                "mnist/t10k-images-idx3-ubyte.gz",
                f"{_OSSCI}/t10k-images-idx3-ubyte.gz",
                "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
                1648877,
                content_sha256="0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
                content_size=7840016,
            ),
            RemoteFile(
                "mnist/t10k-labels-idx1-ubyte.gz",
                f"{_OSSCI}/t10k-labels-idx1-ubyte.gz",
                "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
                4542,
                content_sha256="ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
                content_size=10008,
            ),
        ),
        source="the original MNIST files (LeCun, Cortes, Burges) from the ossci-datasets S3 "
        "mirror that torchvision downloads from (a mirror: the original site "
        "yann.lecun.com/exdb/mnist is often unavailable)",
        licence="CC BY-SA 3.0 (redistribution allowed with attribution, share-alike)",
        licence_short="CC BY-SA 3.0",
        note="train-images: the reference copy is a recompression of the original file "
        "(same decompressed bytes); its compressed-file pin is the widely published digest "
        "of the original",
    ),
    "phishing": DatasetSource(
        name="phishing",
        files=(
            RemoteFile(
                "phishing/phishing.txt.gz",
                f"{_LIBSVM}/binary/phishing",
                "0b0ca40e17bc95e909bfa587c408bf69904571ace01dea26e34cafc464f2da93",
                3620167,
                gzip=True,
                content_sha256="0b0ca40e17bc95e909bfa587c408bf69904571ace01dea26e34cafc464f2da93",
                shared="content",
                content_size=3620167,
            ),
        ),
        source="LIBSVM data sets (Chang and Lin), binary/phishing (canonical); stored "
        "gzip-compressed as phishing.txt.gz",
        licence="no licence stated on the LIBSVM page; derived from the UCI Phishing Websites "
        "data set (CC BY 4.0)",
        licence_short="none stated",
        note="The pin is the digest of the uncompressed LIBSVM file, computed from the "
        "decompressed reference copy",
    ),
    "msd": DatasetSource(
        name="msd",
        files=(
            RemoteFile(
                "msd/YearPredictionMSD.txt.zip",
                f"{_UCI}/00203/YearPredictionMSD.txt.zip",
                None,
                None,
                shared=None,
            ),
        ),
        source="UCI Machine Learning Repository, YearPredictionMSD (canonical)",
        licence="CC BY 4.0 (redistribution allowed with attribution)",
        licence_short="CC BY 4.0",
        in_all=False,
        note="NOT PINNED: no verified copy was available to compute a SHA-256 from; the "
        "download is checked for zip integrity (CRC-32 of every member) only, and its digest "
        "is reported so that you can pin it (fetch_msd(sha256=...)); about 211 MB, not part "
        "of 'all'",
    ),
    "idash": DatasetSource(
        name="idash",
        files=(),
        source="iDASH 2017 secure genome analysis competition (track 3)",
        licence="distributed to the competition's participants only: no public source",
        licence_short="participants only",
        fetchable=False,
        in_all=False,
        note="Place the file yourself at idash/idash.csv",
    ),
}
"""Data set name -> :class:`DatasetSource`, the registry :func:`fetch` downloads from."""


def fetchable_datasets(*, all_only: bool = False) -> list[str]:
    """Names of the data sets :func:`fetch` can download (``all_only``: those in ``"all"``)."""
    return [name for name, src in SOURCES.items() if src.fetchable and (src.in_all or not all_only)]


# --------------------------------------------------------------------------------------------
# Digests and verification
# --------------------------------------------------------------------------------------------


class _TooLarge(Exception):
    """Decompressed content beyond its bound (raised by :func:`_sha256_of`)."""


def _sha256_of(path: Path, *, decompress: bool = False, limit: int | None = None) -> str:
    """SHA-256 of a file, or of its gzip content; with ``limit``, :class:`_TooLarge` as soon as
    more than ``limit`` bytes have been read (so at most ``limit + 1 MiB`` are produced)."""
    digest = hashlib.sha256()
    total = 0
    with gzip.open(path, "rb") if decompress else open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            total += len(chunk)
            if limit is not None and total > limit:
                raise _TooLarge(total)
            digest.update(chunk)
    return digest.hexdigest()


def _content_limit(rf: RemoteFile) -> int:
    return rf.content_size if rf.content_size is not None else UNPINNED_MAX_BYTES


def _content_digest(rf: RemoteFile, path: Path) -> str | None:
    """SHA-256 of the decompressed content of a gzip file, ``None`` when it is not valid gzip;
    :class:`_TooLarge` past the pinned content size (a gzip bomb is not decompressed fully)."""
    try:
        return _sha256_of(path, decompress=True, limit=_content_limit(rf))
    except (OSError, EOFError, ValueError, zlib.error):
        return None


def _check_stored(rf: RemoteFile, path: Path) -> str | None:
    """``None`` when ``path`` is a valid copy of ``rf``, else why not (for error messages)."""
    if rf.sha256 is None and rf.content_sha256 is None:
        return _check_zip(path) if rf.path.endswith(".zip") else None
    got = _sha256_of(path)
    if not rf.gzip and rf.sha256 is not None and got == rf.sha256:
        return None
    if rf.content_sha256 is not None:
        try:
            content = _content_digest(rf, path)
        except _TooLarge:
            return (
                f"the decompressed content exceeds its pinned size of {_content_limit(rf)} "
                "bytes (decompression stopped there)"
            )
        if content == rf.content_sha256:
            return None
        what = "not valid gzip" if content is None else f"decompressed sha256 {content}"
        expected = f"sha256 {rf.sha256} or " if (rf.sha256 and not rf.gzip) else ""
        return (
            f"checksum mismatch: expected {expected}decompressed sha256 {rf.content_sha256}, "
            f"got sha256 {got} ({what})"
        )
    return f"sha256 mismatch: expected {rf.sha256}, got {got}"


def _check_zip(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as zf:
            # each member is read up to its declared size only: bound the declared total first
            declared = sum(info.file_size for info in zf.infolist())
            if declared > UNPINNED_MAX_BYTES:
                return (
                    f"the zip members declare {declared} bytes, more than the "
                    f"{UNPINNED_MAX_BYTES} bytes allowed for an unpinned file"
                )
            bad = zf.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
        return f"not a valid zip archive ({exc})"
    return None if bad is None else f"zip member {bad!r} fails its CRC-32 check"


# --------------------------------------------------------------------------------------------
# Download
# --------------------------------------------------------------------------------------------


def _resolve_base_url(base_url: str | None) -> str | None:
    if base_url is None:
        base_url = os.environ.get(MIRROR_ENV_VAR, "") or None
    if base_url is None:
        return None
    if not isinstance(base_url, str):
        raise TypeError(f"base_url must be None or a str, got {type(base_url).__name__}")
    scheme = urllib.parse.urlsplit(base_url).scheme.lower()
    if scheme not in ("http", "https", "file"):
        raise ValueError(f"base_url must be an http, https or file URL, got {base_url!r}")
    return base_url.rstrip("/")


def _progress_bar(enabled: bool, total: int | None, desc: str) -> Any:
    if not enabled or not sys.stderr.isatty():
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, leave=False)


def _describe(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        reason = exc.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            return f"timed out: no data from the server for {timeout:g} s"
        return f"cannot reach the server ({reason})"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return f"timed out: no data from the server for {timeout:g} s"
    if isinstance(exc, http.client.IncompleteRead):
        missing = f" ({exc.expected} bytes missing)" if exc.expected is not None else ""
        return f"truncated: the connection closed before the announced end{missing}"
    return f"{type(exc).__name__}: {exc}"


#: Without advisory locks (Windows), a temporary file older than this is taken to be stale.
_STALE_PART_SECONDS = 2 * DEFAULT_DEADLINE


def _lock(fd: int, *, blocking: bool) -> bool:
    """An exclusive advisory lock on ``fd`` (released when the process dies); ``False`` when
    another process holds it (non-blocking) or locks are unavailable."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError:
        return False
    return True


def _remove_stale_parts(folder: Path, filename: str) -> list[Path]:
    """Remove the temporary files ``.<filename>.*.part`` that no live download holds.

    A run killed before it could clean up (SIGKILL, power loss) leaves its temporary file; a
    writer holds an exclusive advisory lock on its file until it is done, and the lock dies with
    the process, so a file whose lock can be taken is stale. Where locks are unavailable, files
    older than twice :data:`DEFAULT_DEADLINE` are.
    """
    removed = []
    for part in folder.glob(f".{_glob_escape(filename)}.*.part"):
        try:
            fd = os.open(part, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            continue
        try:
            stale = _lock(fd, blocking=False)
            if not stale and not _locks_available():  # pragma: no cover - Windows
                stale = time.time() - os.fstat(fd).st_mtime > _STALE_PART_SECONDS
            if stale:
                part.unlink(missing_ok=True)
                removed.append(part)
        finally:
            os.close(fd)
    return removed


def _locks_available() -> bool:
    try:
        import fcntl  # noqa: F401
    except ImportError:  # pragma: no cover - Windows
        return False
    return True


def _glob_escape(name: str) -> str:
    """``name`` with the glob metacharacters ``*?[`` escaped (``glob.escape`` for one name)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _open_temp(folder: Path, filename: str) -> tuple[Path, int]:
    """A new hidden file ``.<filename>.<random>.part`` in ``folder`` (umask permissions),
    exclusively locked (advisory) for as long as this process holds it open."""
    for _ in range(100):
        tmp = folder / f".{filename}.{secrets.token_hex(6)}.part"
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666
            )
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
        _lock(fd, blocking=True)
        return tmp, fd
    raise FileExistsError(errno.EEXIST, "cannot create a temporary file", str(folder))


def _max_bytes(rf: RemoteFile, *, compress: bool, from_mirror: bool) -> int:
    """The most bytes a response for ``rf`` may have: its pinned size (a mirror may serve
    another gzip of the pinned content: bounded by the content size plus deflate's worst-case
    overhead); :data:`UNPINNED_MAX_BYTES` without a pin."""
    if from_mirror and not compress and rf.content_sha256 is not None:
        content = _content_limit(rf)
        # stored deflate blocks add 5 bytes per 65,535; headers, a file name, trailer: < 64 KiB
        return max(rf.size or 0, content + content // 8192 + (1 << 16))
    return rf.size if rf.size is not None else UNPINNED_MAX_BYTES


def _verify_download(
    rf: RemoteFile,
    tmp: Path,
    got: str,
    compressed_here: bool,
    from_mirror: bool,
    pin: str | None,
) -> str | None:
    """``None`` when the downloaded file is good, else why not.

    ``got`` is the SHA-256 of the bytes received; ``pin`` an explicit digest to require.
    """
    if pin is not None:
        return None if got == pin else f"sha256 mismatch: expected {pin}, got {got}"
    if compressed_here:  # the received bytes are the uncompressed source
        if rf.sha256 is None or got == rf.sha256:
            return None
        return f"sha256 mismatch: expected {rf.sha256}, got {got}"
    if not from_mirror and rf.sha256 is not None and got == rf.sha256:
        return None
    # a mirror may serve another gzip of the same content; an unpinned file is checked for
    # integrity
    return _check_stored(rf, tmp)


def _download(
    rf: RemoteFile,
    dest: Path,
    url: str,
    *,
    from_mirror: bool,
    timeout: float,
    progress: bool,
    sha256: str | None = None,
    deadline: float = DEFAULT_DEADLINE,
) -> None:
    """Download ``url`` to ``dest`` atomically; raise :class:`DownloadError` on any failure.

    At most :func:`_max_bytes` ``+ 1`` bytes are read, and the whole download must end within
    ``deadline`` seconds (checked between reads, each of which waits at most ``timeout``).
    """
    compress = rf.gzip and not from_mirror
    limit = _max_bytes(rf, compress=compress, from_mirror=from_mirror)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_parts(dest.parent, dest.name)
    start = time.monotonic()
    tmp, fd = _open_temp(dest.parent, dest.name)
    bar = None
    try:
        try:
            with os.fdopen(fd, "wb") as raw_out:
                sink: IO[bytes] = raw_out
                if compress:
                    sink = gzip.GzipFile(filename="", mode="wb", fileobj=raw_out, mtime=0)
                request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
                digest = hashlib.sha256()
                received = 0
                with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310
                    length = resp.headers.get("Content-Length")
                    announced = int(length) if length and length.isdigit() else None
                    if announced is not None and announced > limit:
                        raise DownloadError(
                            url,
                            dest,
                            f"the server announces {announced} bytes, more than "
                            f"the {limit} bytes pinned for this file (nothing was read)",
                        )
                    total = announced or (None if from_mirror else rf.size)
                    bar = _progress_bar(progress, total, rf.path)
                    # read1: return what one read of the socket gives, so that a trickle of
                    # bytes cannot hold a single call (and the deadline check) for hours
                    read = getattr(resp, "read1", resp.read)
                    while True:
                        if time.monotonic() - start > deadline:
                            raise DownloadError(
                                url,
                                dest,
                                f"took longer than the deadline of {deadline:g} s "
                                f"(received {received} bytes)",
                            )
                        chunk = read(min(_CHUNK, limit + 1 - received))
                        if not chunk:
                            break
                        received += len(chunk)
                        if received > limit:
                            raise DownloadError(
                                url,
                                dest,
                                f"the server sent more than the {limit} bytes pinned "
                                "for this file (reading stopped one byte past it)",
                            )
                        digest.update(chunk)
                        sink.write(chunk)
                        if bar is not None:
                            bar.update(len(chunk))
                if sink is not raw_out:
                    sink.close()
                raw_out.flush()
                os.fsync(raw_out.fileno())
        except DownloadError:
            raise
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise DownloadError(url, dest, _describe(exc, timeout)) from exc
        if announced is not None and received != announced:
            raise DownloadError(
                url, dest, f"truncated: received {received} of {announced} bytes announced"
            )
        why = _verify_download(rf, tmp, digest.hexdigest(), compress, from_mirror, sha256)
        if why is not None:
            if rf.size is not None and not from_mirror and received != rf.size:
                why += f" (received {received} bytes, expected {rf.size})"
            raise DownloadError(url, dest, why)
        os.replace(tmp, dest)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    finally:
        if bar is not None:
            bar.close()


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, file=sys.stderr, flush=True)


def _seconds(value: Any, name: str) -> float:
    """A number of seconds in ``(0, MAX_SECONDS]`` (``inf`` cannot be given to a socket)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, got {type(value).__name__}")
    value = float(value)
    if not (0 < value <= MAX_SECONDS):
        raise ValueError(
            f"{name} must be a positive, finite number of seconds (at most {MAX_SECONDS:g}), "
            f"got {value!r}"
        )
    return value


def _fetch_source(
    src: DatasetSource,
    data_home: PathLike | None,
    *,
    force: bool,
    progress: bool,
    base_url: str | None,
    timeout: float,
    sha256: dict[str, str] | None = None,
    deadline: float = DEFAULT_DEADLINE,
) -> list[Path]:
    if not src.fetchable:
        raise ValueError(
            f"data set {src.name!r} cannot be downloaded: {src.licence}. {src.note}".rstrip()
        )
    if not isinstance(force, bool):
        raise TypeError(f"force must be a bool, got {type(force).__name__}")
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__}")
    timeout = _seconds(timeout, "timeout")
    deadline = _seconds(deadline, "deadline")
    base = _resolve_base_url(base_url)
    home = get_data_home(data_home)
    paths = []
    for rf in src.files:
        dest = home.joinpath(*rf.path.split("/"))
        pin = (sha256 or {}).get(rf.filename)
        if not force and dest.is_file():
            if pin is not None:
                present_ok = _sha256_of(dest) == pin
            else:
                present_ok = _check_stored(rf, dest) is None
            if present_ok:
                _say(progress, f"{rf.path}: already present and verified")
                paths.append(dest)
                continue
            _say(progress, f"{rf.path}: present but fails its checksum; downloading it again")
        url = f"{base}/{rf.path}" if base is not None else rf.url
        _say(progress, f"{rf.path}: downloading {url}")
        _download(
            rf,
            dest,
            url,
            from_mirror=base is not None,
            timeout=timeout,
            progress=progress,
            sha256=pin,
            deadline=deadline,
        )
        if rf.sha256 is None and pin is None:
            _say(
                progress,
                f"{rf.path}: NOT verified against a pinned sha256 (none is known); its sha256 is "
                f"{_sha256_of(dest)}",
            )
        paths.append(dest)
    return paths


def fetch(
    name: str,
    data_home: PathLike | None = None,
    *,
    force: bool = False,
    progress: bool = True,
    base_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    deadline: float = DEFAULT_DEADLINE,
) -> list[Path]:
    """Download data set ``name`` (or ``"all"``) into the data folder, verified.

    Parameters
    ----------
    name : str
        A key of :data:`SOURCES` (``"adult"``, ``"helr"``, ``"kddcup99"``, ``"mnist"``,
        ``"phishing"``, ``"msd"``) or ``"all"`` (every pinned set: all but ``msd``).
    data_home : str or os.PathLike, optional
        Data folder (see :func:`~privlearn.data.get_data_home`); created if needed.
    force : bool, default False
        Download even the files already present with the right digest.
    progress : bool, default True
        A progress bar per file on a terminal and one status line per file on stderr.
    base_url : str, optional
        A mirror laid out like a data folder (``<base_url>/<name>/<file>``); default: the
        ``PRIVLEARN_DATA_MIRROR`` environment variable, else the canonical sources.
    timeout : float, default 60
        Seconds to wait for the connection and for each block of data before giving up.
    deadline : float, default 3600
        Seconds one file's download may take in all (:data:`DEFAULT_DEADLINE`); a server that
        trickles bytes just fast enough to beat ``timeout`` fails when it is reached.

    Returns
    -------
    list of pathlib.Path
        The data set's files in the data folder.

    Raises
    ------
    DownloadError
        A file could not be downloaded or failed verification (nothing is left behind).
    ValueError
        ``name`` is unknown or the set cannot be downloaded (``idash``).
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    if name == "all":
        paths: list[Path] = []
        for each in fetchable_datasets(all_only=True):
            paths += _fetch_source(
                SOURCES[each],
                data_home,
                force=force,
                progress=progress,
                base_url=base_url,
                timeout=timeout,
                deadline=deadline,
            )
        return paths
    if name not in SOURCES:
        raise ValueError(f"unknown data set {name!r}; expected one of {['all', *SOURCES]}")
    return _fetch_source(
        SOURCES[name],
        data_home,
        force=force,
        progress=progress,
        base_url=base_url,
        timeout=timeout,
        deadline=deadline,
    )


_FETCH_DOC = """Download {what} into ``<data_home>/{name}/``, verified.

    {details}

    Source: {source}. Licence: {licence}.{note}

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        Data folder (see :func:`~privlearn.data.get_data_home`); created if needed.
    force : bool, default False
        Download even the files already present with the right digest.
    progress : bool, default True
        A progress bar per file on a terminal and one status line per file on stderr.
    base_url : str, optional
        Mirror laid out like a data folder (default: ``$PRIVLEARN_DATA_MIRROR``, else the
        canonical source).
    timeout : float, default 60
        Seconds to wait for the connection and for each block of data.
    deadline : float, default 3600
        Seconds one file's download may take in all.

    Returns
    -------
    list of pathlib.Path
        The files, in the data folder.

    Raises
    ------
    DownloadError
        A download failed or did not match its pinned SHA-256 (no file is left behind).
    """


def _make_fetcher(name: str, what: str, details: str) -> Callable[..., list[Path]]:
    def fetcher(
        data_home: PathLike | None = None,
        *,
        force: bool = False,
        progress: bool = True,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        deadline: float = DEFAULT_DEADLINE,
    ) -> list[Path]:
        return fetch(
            name,
            data_home,
            force=force,
            progress=progress,
            base_url=base_url,
            timeout=timeout,
            deadline=deadline,
        )

    src = SOURCES[name]
    fetcher.__name__ = fetcher.__qualname__ = f"fetch_{name}"
    fetcher.__doc__ = _FETCH_DOC.format(
        what=what,
        name=name,
        details=details,
        source=src.source,
        licence=src.licence,
        note=f"\n\n    Note: {src.note}." if src.note else "",
    )
    return fetcher


fetch_adult = _make_fetcher(
    "adult",
    "UCI Adult (``adult.data``, ``adult.test``, ``adult.names``; 5.7 MB)",
    "Read by :func:`~privlearn.data.load_adult`.",
)
fetch_helr = _make_fetcher(
    "helr",
    "the HELR medical sets of Kim et al. 2018 (edin, lbw, nhanes3, pcs, uis; 0.8 MB)",
    "Read by :func:`~privlearn.data.load_helr`.",
)
fetch_kddcup99 = _make_fetcher(
    "kddcup99",
    "the KDD Cup 1999 10% subset (``kddcup.data_10_percent.gz``; 2.1 MB)",
    "Read by :func:`~privlearn.data.load_kddcup99`.",
)
fetch_mnist = _make_fetcher(
    "mnist",
    "the four MNIST IDX files (11.6 MB)",
    "Read by :func:`~privlearn.data.load_mnist` and :func:`~privlearn.data.load_mnist38`.",
)
fetch_phishing = _make_fetcher(
    "phishing",
    "the LIBSVM phishing set (stored as ``phishing.txt.gz``; 3.6 MB download)",
    "Read by :func:`~privlearn.data.load_phishing`.",
)


def fetch_msd(
    data_home: PathLike | None = None,
    *,
    force: bool = False,
    progress: bool = True,
    base_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    sha256: str | None = None,
    deadline: float = DEFAULT_DEADLINE,
) -> list[Path]:
    """Download YearPredictionMSD (``YearPredictionMSD.txt.zip``, about 211 MB) into ``msd/``.

    Read by :func:`~privlearn.data.load_msd`; the DP-SCD reproduction finds it at
    ``msd/YearPredictionMSD.txt.zip`` (without it, it uses a synthetic stand-in).

    **Not pinned**: no verified copy of the file was available to compute a SHA-256 from,
    so unless you pass ``sha256=`` the download is verified for integrity only (it must be a
    zip archive whose every member passes its CRC-32 check) and its digest is reported on
    stderr. It is therefore not part of ``fetch("all")``.

    Source: UCI Machine Learning Repository, YearPredictionMSD (canonical). Licence: CC BY 4.0
    (redistribution allowed with attribution).

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        Data folder (see :func:`~privlearn.data.get_data_home`); created if needed.
    force : bool, default False
        Download even when the file is present (and, with ``sha256``, matches).
    progress : bool, default True
        A progress bar on a terminal and one status line on stderr.
    base_url : str, optional
        Mirror laid out like a data folder (default: ``$PRIVLEARN_DATA_MIRROR``).
    timeout : float, default 60
        Seconds to wait for the connection and for each block of data.
    sha256 : str, optional
        The digest to require of the zip archive (e.g. one you recorded earlier).
    deadline : float, default 3600
        Seconds the download may take in all. The file is not pinned, so it may not exceed
        :data:`UNPINNED_MAX_BYTES` (1 GiB), nor its members' declared content.

    Returns
    -------
    list of pathlib.Path
        ``[<data_home>/msd/YearPredictionMSD.txt.zip]``.

    Raises
    ------
    DownloadError
        The download failed, is not a valid zip archive or does not match ``sha256``.
    """
    pins = None
    if sha256 is not None:
        if not isinstance(sha256, str) or len(sha256) != 64:
            raise ValueError(f"sha256 must be a 64-character hex digest, got {sha256!r}")
        pins = {"YearPredictionMSD.txt.zip": sha256.lower()}
    return _fetch_source(
        SOURCES["msd"],
        data_home,
        force=force,
        progress=progress,
        base_url=base_url,
        timeout=timeout,
        sha256=pins,
        deadline=deadline,
    )
