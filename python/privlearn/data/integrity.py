"""Verify the data files the loaders read against their pinned SHA-256 digests.

Every loader that reads a known file (:data:`~privlearn.data.loaders.KNOWN_FILES`) checks it
before parsing: a file in the data folder against the pin of :data:`privlearn.data.SOURCES`
(the digests ``privlearn datasets download`` verifies downloads with), a copy embedded in the
package against :data:`EMBEDDED_SHA256` (the ``stored sha256`` column of
``privlearn/data/embedded/README.md``). A file that does not match raises
:class:`~privlearn.exceptions.DataIntegrityError` (a ``ValueError``) naming the file and the
command that fetches a verified copy, so that a changed file (a duplicated row, a truncated
download, another version) never silently changes a result.

A file is hashed once per process while it is unchanged: a verified file is remembered by its
real path, device, inode, size and modification time (nanoseconds), so a replaced or edited
file is hashed again. Cost: one read of the file (a few milliseconds for the plain files); a
gzip file whose compressed bytes differ from the pinned ones (another compressor) is
decompressed once to check its content (about 0.2 s for the MNIST training images).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from ..exceptions import DataIntegrityError

__all__ = [
    "EMBEDDED_SHA256",
    "clear_verification_cache",
    "verify_data_file",
    "verify_embedded_file",
]

#: SHA-256 of each file stored in ``privlearn/data/embedded/`` (path relative to it): the
#: ``stored sha256`` column of ``embedded/README.md``.
EMBEDDED_SHA256: dict[str, str] = {
    "helr/edin.txt.gz": "c9d4d50409787235c73af00379da2d443089b3b1de979462b94b49d4d209cd58",
    "helr/lbw.txt.gz": "74cdbc5d9e0a12573fdb280f2248cd15329b2e20d3874ebe570e350f4b68c6b4",
    "helr/pcs.txt.gz": "be330c7eaeb95392fe1222b128012ba86d0cf39ce3d7bb1647016de7bc2c1da5",
    "helr/uis.txt.gz": "79d7653eddd3819e3d683da1236fb935e7100bba16e4c58e11ffc828ed6481f6",
    "phishing/phishing.txt.gz": "b3b7c308afa818453367a9b6357455bb159c374f4c6f0238a04da59403942799",
    "adult/adult.data.xz": "03c5722d4eaeaa2962f81284344def3c5150dadc6ddf841fcbb57f233371445c",
    "adult/adult.test.xz": "45248f451a46bace9a234ece542aeadb66ea52e3c078f136d4b2c069cb38b1cd",
    "adult/adult.names.gz": "1e8ee543cb81fc9590b1a20392e41f28eab971ac9dbe519269cdf7d4658b62f2",
    "mnist/t10k-images-idx3-ubyte.gz": (
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"
    ),
    "mnist/t10k-labels-idx1-ubyte.gz": (
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"
    ),
    "kddcup99/kddcup.data_10_percent.song13_50k.xz": (
        "708cf087a4b433415c71bc9bef435801d1c26cec4df19bf4e7fc538f77f6552f"
    ),
}

_VERIFIED: set[tuple[object, ...]] = set()
_LOCK = threading.Lock()


def clear_verification_cache() -> None:
    """Forget which files were verified (the next load of each hashes it again)."""
    with _LOCK:
        _VERIFIED.clear()


def _key(path: Path, pin: str) -> tuple[object, ...]:
    st = os.stat(path)
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, pin)


def _cached(key: tuple[object, ...]) -> bool:
    with _LOCK:
        return key in _VERIFIED


def _remember(key: tuple[object, ...]) -> None:
    with _LOCK:
        _VERIFIED.add(key)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_data_file(path: Path, relative: str) -> None:
    """Check a data-folder file against its pin in :data:`privlearn.data.SOURCES`.

    Parameters
    ----------
    path : pathlib.Path
        The file in the data folder.
    relative : str
        Its path relative to the data folder (``"adult/adult.data"``): the key of its pin.
        A file without a pin (none is known for it) is not checked.

    Raises
    ------
    DataIntegrityError
        The file's SHA-256 (or, for a gzip file pinned by content, that of its decompressed
        content) differs from the pin.
    """
    from .download import SOURCES, _check_stored  # download imports the loaders

    rf = next((f for src in SOURCES.values() for f in src.files if f.path == relative), None)
    if rf is None or (rf.sha256 is None and rf.content_sha256 is None):
        return
    pin = rf.content_sha256 if rf.gzip else (rf.sha256 or rf.content_sha256)
    assert pin is not None
    key = _key(path, pin)
    if _cached(key):
        return
    if _check_stored(rf, path) is None:
        _remember(key)
        return
    size = f", {rf.size:,} bytes" if rf.size is not None else ""
    if rf.gzip:  # the pin is that of the uncompressed source; any gzip of it is accepted
        pinned = f"pinned sha256 {pin} of its decompressed content"
    elif rf.content_sha256 is not None and rf.content_sha256 != rf.sha256:
        pinned = (
            f"pinned sha256 {rf.sha256}{size}, or {rf.content_sha256} of its decompressed content"
        )
    else:
        pinned = f"pinned sha256 {pin}{size}"
    dataset = rf.dataset
    raise DataIntegrityError(
        f"data file '{path}' is not the published {relative} ({pinned}): it was changed, "
        f"truncated or is another version. Run `privlearn datasets download {dataset}` "
        f"(privlearn.data.fetch({dataset!r})) to replace it with a verified copy, or pass "
        "verify=False to the loader to read the file as it is",
        path=path,
        relative=relative,
        dataset=dataset,
        expected=pin,
    )


def verify_embedded_file(path: Path, stored: str, relative: str | None = None) -> None:
    """Check a copy embedded in the package against :data:`EMBEDDED_SHA256`.

    Parameters
    ----------
    path : pathlib.Path
        The embedded file.
    stored : str
        Its path relative to the embedded folder (``"adult/adult.data.xz"``).
    relative : str, optional
        The data-folder file it stands in for (``"adult/adult.data"``); ``None`` for a file
        that exists only embedded (the KDD Cup 1999 subsample).

    Raises
    ------
    DataIntegrityError
        The stored file's SHA-256 differs from its pin (a damaged installation).
    """
    pin = EMBEDDED_SHA256.get(stored)
    if pin is None:  # pragma: no cover - every embedded file is pinned (tested)
        return
    key = _key(path, pin)
    if _cached(key):
        return
    if _sha256(path) == pin:
        _remember(key)
        return
    dataset = stored.split("/", 1)[0]
    if relative is not None:
        fix = (
            f"Reinstall privlearn, or run `privlearn datasets download {dataset}` to put a "
            "verified copy in the data folder (the loaders read it first)"
        )
    else:
        fix = "Reinstall privlearn (this file is only shipped inside the package)"
    raise DataIntegrityError(
        f"the copy of {relative or stored} embedded in privlearn ('{path}') does not match its "
        f"pinned sha256 {pin}: the installation is damaged. {fix}",
        path=path,
        relative=relative or stored,
        dataset=dataset,
        expected=pin,
    )
