"""Downloading the data sets (``privlearn.data.fetch``) against a local HTTP server.

Every test serves its files from ``http.server.ThreadingHTTPServer`` on 127.0.0.1 (port 0)
and points the registry at it: nothing here reaches the internet.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import threading
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import privlearn.data as pdata
from privlearn import cli
from privlearn.data import download
from privlearn.data.download import DatasetSource, DownloadError, RemoteFile
from privlearn.data.loaders import KNOWN_FILES

TIMEOUT = 0.5  # seconds: the stalling handler waits far longer


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------------------------
# The local server
# --------------------------------------------------------------------------------------------


@dataclass
class Server:
    """Routes: URL path -> (kind, body); kinds: ok, cut (Content-Length lies), stall, endless
    (no Content-Length, ``body`` repeated until the client leaves, capped at 64 MB so that a
    regression fails instead of filling the disk), huge (announces 10**12 bytes, then as
    endless), trickle (one byte every TIMEOUT / 10 s, each read well within TIMEOUT, for up
    to 20 s)."""

    url: str = ""
    routes: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    hits: Counter = field(default_factory=Counter)
    sent: Counter = field(default_factory=Counter)
    release: threading.Event = field(default_factory=threading.Event)

    def add(self, path: str, body: bytes, kind: str = "ok") -> str:
        self.routes[path] = (kind, body)
        return self.url + path


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            state.hits[self.path] += 1
            if self.path not in state.routes:
                self.send_error(404, "Not Found")
                return
            kind, body = state.routes[self.path]
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                if kind == "huge":
                    self.send_header("Content-Length", str(10**12))
                elif kind != "endless":
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if kind in ("endless", "huge"):
                    sent = 0
                    while sent < 64 << 20 and not state.release.is_set():
                        self.wfile.write(body)
                        sent += len(body)
                    state.sent[self.path] += sent
                elif kind == "trickle":
                    for i in range(int(20 / (TIMEOUT / 10))):
                        if state.release.wait(TIMEOUT / 10):
                            break
                        self.wfile.write(body[i % len(body) : i % len(body) + 1])
                        self.wfile.flush()
                elif kind == "ok":
                    self.wfile.write(body)
                elif kind == "cut":  # announce len(body), send half, close
                    self.wfile.write(body[: len(body) // 2])
                elif kind == "stall":  # send a little, then nothing for much longer than TIMEOUT
                    self.wfile.write(body[:10])
                    self.wfile.flush()
                    state.release.wait(10)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up
                pass

        def log_message(self, *args: object) -> None:  # quiet
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture(autouse=True)
def _no_mirror(monkeypatch):
    monkeypatch.delenv(download.MIRROR_ENV_VAR, raising=False)


PAYLOAD = bytes(range(256)) * 400  # 102,400 bytes


def toy_source(url: str, data: bytes = PAYLOAD, **kwargs) -> DatasetSource:
    rf = RemoteFile("toy/toy.bin", url, sha(data), len(data), **kwargs)
    return DatasetSource("toy", (rf,), source="a test server", licence="test")


@pytest.fixture
def toy(server, monkeypatch) -> Server:
    """A data set ``toy`` (one file, pinned) whose canonical URL is the local server's."""
    url = server.add("/canonical/toy.bin", PAYLOAD)
    monkeypatch.setitem(download.SOURCES, "toy", toy_source(url))
    return server


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


# --------------------------------------------------------------------------------------------
# Success, idempotence, force
# --------------------------------------------------------------------------------------------


def test_fetch_writes_the_verified_file(toy, tmp_path):
    home = tmp_path / "data"
    paths = pdata.fetch("toy", home, progress=False)
    assert paths == [home / "toy" / "toy.bin"]
    assert paths[0].read_bytes() == PAYLOAD
    assert files_under(home) == ["toy/toy.bin"]  # no temporary file left
    assert toy.hits["/canonical/toy.bin"] == 1


def test_present_file_is_not_downloaded_again_and_force_does(toy, tmp_path):
    home = tmp_path / "data"
    pdata.fetch("toy", home, progress=False)
    pdata.fetch("toy", home, progress=False)
    assert toy.hits["/canonical/toy.bin"] == 1
    pdata.fetch("toy", home, progress=False, force=True)
    assert toy.hits["/canonical/toy.bin"] == 2
    assert (home / "toy" / "toy.bin").read_bytes() == PAYLOAD


def test_present_file_with_a_wrong_checksum_is_replaced(toy, tmp_path, capsys):
    home = tmp_path / "data"
    (home / "toy").mkdir(parents=True)
    (home / "toy" / "toy.bin").write_bytes(b"stale")
    pdata.fetch("toy", home)
    assert (home / "toy" / "toy.bin").read_bytes() == PAYLOAD
    assert toy.hits["/canonical/toy.bin"] == 1
    err = capsys.readouterr().err
    assert "fails its checksum" in err and f"downloading {toy.url}/canonical/toy.bin" in err


def test_progress_false_is_silent_and_progress_true_reports(toy, tmp_path, capsys):
    pdata.fetch("toy", tmp_path / "a", progress=False)
    assert capsys.readouterr().err == ""
    pdata.fetch("toy", tmp_path / "a")
    assert "toy/toy.bin: already present and verified" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Failures: nothing left behind, a clear error
# --------------------------------------------------------------------------------------------

FAILURES = {
    # name: (served body, kind, words the error must contain)
    "truncated file": (PAYLOAD[:5000], "ok", ["sha256 mismatch", "received 5000 bytes"]),
    "connection cut": (PAYLOAD, "cut", ["truncated"]),
    "wrong checksum": (PAYLOAD[::-1], "ok", ["sha256 mismatch", sha(PAYLOAD), sha(PAYLOAD[::-1])]),
    "HTTP 404": (None, "ok", ["HTTP 404"]),
    "stalled server": (PAYLOAD, "stall", ["timed out: no data from the server for 0.5 s"]),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_a_failed_download_leaves_nothing_and_says_why(case, server, monkeypatch, tmp_path):
    body, kind, words = FAILURES[case]
    url = f"{server.url}/canonical/toy.bin"
    if body is not None:
        server.add("/canonical/toy.bin", body, kind)
    monkeypatch.setitem(download.SOURCES, "toy", toy_source(url))
    home = tmp_path / "data"
    with pytest.raises(DownloadError) as info:
        pdata.fetch("toy", home, progress=False, timeout=TIMEOUT)
    message = str(info.value)
    assert url in message and str(home / "toy" / "toy.bin") in message
    for word in words:
        assert word in message
    assert info.value.url == url and info.value.path == home / "toy" / "toy.bin"
    assert isinstance(info.value, OSError)
    assert files_under(home) == []  # no partial file, no temporary file


@pytest.mark.parametrize("case", ["wrong checksum", "stalled server"])
def test_a_failed_forced_download_keeps_the_good_file(case, server, monkeypatch, tmp_path):
    body, kind, _ = FAILURES[case]
    url = server.add("/canonical/toy.bin", PAYLOAD)
    monkeypatch.setitem(download.SOURCES, "toy", toy_source(url))
    home = tmp_path / "data"
    pdata.fetch("toy", home, progress=False)
    server.add("/canonical/toy.bin", body, kind)
    with pytest.raises(DownloadError):
        pdata.fetch("toy", home, progress=False, force=True, timeout=TIMEOUT)
    assert files_under(home) == ["toy/toy.bin"]
    assert (home / "toy" / "toy.bin").read_bytes() == PAYLOAD


def test_unreachable_server_is_a_download_error(monkeypatch, tmp_path):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/toy.bin"
    monkeypatch.setitem(download.SOURCES, "toy", toy_source(url))
    with pytest.raises(DownloadError, match="cannot reach the server"):
        pdata.fetch("toy", tmp_path, progress=False, timeout=TIMEOUT)
    assert files_under(tmp_path) == []


# --------------------------------------------------------------------------------------------
# Mirrors, gzip-stored sources, unpinned files
# --------------------------------------------------------------------------------------------


def test_base_url_and_environment_mirror(server, monkeypatch, tmp_path):
    # the canonical URL is dead; the mirror has the data-folder layout
    monkeypatch.setitem(download.SOURCES, "toy", toy_source(f"{server.url}/gone/toy.bin"))
    server.add("/mirror/toy/toy.bin", PAYLOAD)
    pdata.fetch("toy", tmp_path / "a", progress=False, base_url=f"{server.url}/mirror/")
    assert (tmp_path / "a" / "toy" / "toy.bin").read_bytes() == PAYLOAD
    monkeypatch.setenv(download.MIRROR_ENV_VAR, f"{server.url}/mirror")
    pdata.fetch("toy", tmp_path / "b", progress=False)
    assert (tmp_path / "b" / "toy" / "toy.bin").read_bytes() == PAYLOAD
    assert server.hits["/mirror/toy/toy.bin"] == 2 and server.hits["/gone/toy.bin"] == 0
    with pytest.raises(ValueError, match="http, https or file URL"):
        pdata.fetch("toy", tmp_path, base_url="ftp://example.invalid/data")


def test_a_file_url_mirror(monkeypatch, tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy" / "toy.bin").write_bytes(PAYLOAD)
    monkeypatch.setitem(download.SOURCES, "toy", toy_source("http://127.0.0.1:9/unused"))
    pdata.fetch("toy", tmp_path / "data", progress=False, base_url=mirror.as_uri())
    assert (tmp_path / "data" / "toy" / "toy.bin").read_bytes() == PAYLOAD


def gz_source(url: str, raw: bytes) -> DatasetSource:
    """Like phishing: an uncompressed source stored gzip-compressed."""
    rf = RemoteFile("gz/data.txt.gz", url, sha(raw), len(raw), gzip=True, content_sha256=sha(raw))
    return DatasetSource("gz", (rf,), source="a test server", licence="test")


def test_an_uncompressed_source_is_stored_as_deterministic_gzip(server, monkeypatch, tmp_path):
    raw = b"0 1:0.18257 2:0.18257\n1 3:0.18257\n" * 500
    url = server.add("/libsvm/data", raw)
    monkeypatch.setitem(download.SOURCES, "gz", gz_source(url, raw))
    (path,) = pdata.fetch("gz", tmp_path / "a", progress=False)
    (again,) = pdata.fetch("gz", tmp_path / "b", progress=False)
    assert gzip.decompress(path.read_bytes()) == raw
    assert path.read_bytes() == again.read_bytes()  # no name, mtime 0
    pdata.fetch("gz", tmp_path / "a", progress=False)  # verified through its content
    assert server.hits["/libsvm/data"] == 2
    server.add("/libsvm/data", raw.replace(b"1 3:", b"0 3:"))
    with pytest.raises(DownloadError, match="sha256 mismatch"):
        pdata.fetch("gz", tmp_path / "c", progress=False)
    assert files_under(tmp_path / "c") == []


def test_a_mirror_may_serve_another_gzip_of_the_same_content(server, monkeypatch, tmp_path):
    raw = b"some IDX-like content\n" * 1000
    other = gzip.compress(raw, compresslevel=1, mtime=123456)
    canonical = gzip.compress(raw, compresslevel=9, mtime=0)
    rf = RemoteFile("gz/f.gz", f"{server.url}/gone", sha(canonical), len(canonical),
                    content_sha256=sha(raw))  # fmt: skip
    monkeypatch.setitem(download.SOURCES, "gz", DatasetSource("gz", (rf,), "test", "test"))
    server.add("/m/gz/f.gz", other)
    (path,) = pdata.fetch("gz", tmp_path / "a", progress=False, base_url=f"{server.url}/m")
    assert path.read_bytes() == other
    server.add("/m/gz/f.gz", gzip.compress(raw + b"x"))
    with pytest.raises(DownloadError, match="decompressed sha256") as info:
        pdata.fetch("gz", tmp_path / "b", progress=False, base_url=f"{server.url}/m")
    assert sha(raw) in str(info.value)
    assert files_under(tmp_path / "b") == []


def test_unpinned_msd_is_checked_for_zip_integrity(server, monkeypatch, tmp_path, capsys):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("YearPredictionMSD.txt", "2001,0.5,0.25\n" * 100)
    good = buf.getvalue()
    start = good.index(b"YearPredictionMSD.txt") + len("YearPredictionMSD.txt")
    bad_crc, bad_deflate = bytearray(good), bytearray(good)
    bad_crc[start + 5] ^= 0xFF  # the member still inflates, but its CRC-32 no longer matches
    bad_deflate[start] ^= 0xFF  # the member no longer inflates
    url = server.add("/uci/YearPredictionMSD.txt.zip", good)
    (rf,) = download.SOURCES["msd"].files
    assert rf.sha256 is None  # documented as unpinned
    msd = replace(download.SOURCES["msd"], files=(replace(rf, url=url),))
    monkeypatch.setitem(download.SOURCES, "msd", msd)
    (path,) = pdata.fetch_msd(tmp_path / "a")
    assert path == tmp_path / "a" / "msd" / "YearPredictionMSD.txt.zip"
    assert f"NOT verified against a pinned sha256 (none is known); its sha256 is {sha(good)}" in (
        capsys.readouterr().err
    )
    with pytest.raises(DownloadError, match="sha256 mismatch"):
        pdata.fetch_msd(tmp_path / "b", sha256="0" * 64, progress=False)
    pdata.fetch_msd(tmp_path / "b", sha256=sha(good), progress=False)
    for bad, why in ((bad_crc, "fails its CRC-32 check"), (bad_deflate, "not a valid zip")):
        server.add("/uci/YearPredictionMSD.txt.zip", bytes(bad))
        with pytest.raises(DownloadError, match=why):
            pdata.fetch_msd(tmp_path / "c", progress=False)
        assert files_under(tmp_path / "c") == []
    server.add("/uci/YearPredictionMSD.txt.zip", b"<html>not a zip</html>")
    with pytest.raises(DownloadError, match="not a valid zip archive"):
        pdata.fetch_msd(tmp_path / "c", progress=False)
    assert "msd" not in download.fetchable_datasets(all_only=True)


# --------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# Bounded downloads (issue 19): size cap, overall deadline, stale temporary files, gzip bombs
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["endless", "huge"])
def test_an_endless_response_stops_one_byte_past_the_pinned_size(kind, server, monkeypatch,
                                                                 tmp_path):  # fmt: skip
    """Used to write everything the server sent (5.4 GB before the run was killed)."""
    url = server.add("/canonical/toy.bin", PAYLOAD, kind)
    monkeypatch.setitem(download.SOURCES, "toy", toy_source(url))
    home = tmp_path / "data"
    with pytest.raises(DownloadError) as info:
        pdata.fetch("toy", home, progress=False, timeout=TIMEOUT)
    if kind == "huge":
        assert f"announces {10**12} bytes, more than the {len(PAYLOAD)} bytes pinned" in str(
            info.value
        )
    else:
        assert f"sent more than the {len(PAYLOAD)} bytes pinned" in str(info.value)
    assert files_under(home) == []


def test_a_trickling_server_hits_the_overall_deadline(server, monkeypatch, tmp_path):
    """Every byte arrives well within the per-read timeout, so only the deadline can end it."""
    import time

    url = server.add("/canonical/toy.bin", PAYLOAD, "trickle")
    monkeypatch.setitem(download.SOURCES, "toy", toy_source(url))
    start = time.monotonic()
    with pytest.raises(DownloadError, match=r"took longer than the deadline of 1 s \(received"):
        pdata.fetch("toy", tmp_path, progress=False, timeout=TIMEOUT, deadline=1.0)
    assert time.monotonic() - start < 15  # not the 20 s the trickle lasts
    assert files_under(tmp_path) == []


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), 1e12])
def test_deadline_and_timeout_are_checked(bad, toy, tmp_path):
    for name in ("deadline", "timeout"):
        with pytest.raises(ValueError, match=f"{name} must be a positive, finite number"):
            pdata.fetch("toy", tmp_path, progress=False, **{name: bad})
    with pytest.raises(TypeError, match="deadline must be a number of seconds"):
        pdata.fetch("toy", tmp_path, progress=False, deadline="60")
    assert files_under(tmp_path) == []
    assert download.DEFAULT_DEADLINE == 3600.0


def test_a_stale_part_file_is_removed_and_a_live_one_kept(toy, tmp_path):
    """A run killed by SIGKILL leaves its temporary file: the next run removes it, unless a
    live download holds it (advisory lock)."""
    fcntl = pytest.importorskip("fcntl")
    folder = tmp_path / "toy"
    folder.mkdir()
    stale = folder / ".toy.bin.0123456789ab.part"
    stale.write_bytes(PAYLOAD[:1000])
    live = folder / ".toy.bin.ba9876543210.part"
    live.write_bytes(PAYLOAD[:10])
    other = folder / ".other.bin.0123456789ab.part"  # another file's: not ours to remove
    other.write_bytes(b"x")
    with open(live, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        pdata.fetch("toy", tmp_path, progress=False)
        assert files_under(tmp_path) == sorted(
            ["toy/.other.bin.0123456789ab.part", "toy/.toy.bin.ba9876543210.part", "toy/toy.bin"]
        )
    pdata.fetch("toy", tmp_path, progress=False, force=True)  # the lock is gone: stale now
    assert files_under(tmp_path) == ["toy/.other.bin.0123456789ab.part", "toy/toy.bin"]


def test_a_killed_download_leaves_a_part_that_the_next_run_removes(toy, tmp_path):
    """A real SIGKILL mid-download (a child process), then a normal run."""
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    toy.add("/canonical/toy.bin", PAYLOAD, "trickle")
    code = textwrap.dedent(f"""
        from privlearn.data import download
        from privlearn.data.download import DatasetSource, RemoteFile
        rf = RemoteFile("toy/toy.bin", {toy.url + "/canonical/toy.bin"!r}, {sha(PAYLOAD)!r},
                        {len(PAYLOAD)})
        download.SOURCES["toy"] = DatasetSource("toy", (rf,), source="s", licence="l")
        download.fetch("toy", {str(tmp_path)!r}, progress=False, timeout=5.0)
    """)
    child = subprocess.Popen([sys.executable, "-c", code], env={**os.environ})
    try:
        for _ in range(200):  # wait for its temporary file
            if list((tmp_path / "toy").glob(".toy.bin.*.part")) if (tmp_path / "toy").is_dir() \
                    else []:  # fmt: skip
                break
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(10)
    parts = list((tmp_path / "toy").glob(".toy.bin.*.part"))
    assert len(parts) == 1  # what a killed run leaves
    toy.add("/canonical/toy.bin", PAYLOAD)
    pdata.fetch("toy", tmp_path, progress=False)
    assert files_under(tmp_path) == ["toy/toy.bin"]


def _gzip_bomb(size: int) -> bytes:
    """A gzip file of ``size`` zero bytes: one member of 1 MiB (about 1 KB) repeated (gzip
    readers concatenate members)."""
    return gzip.compress(bytes(1 << 20), compresslevel=9, mtime=0) * (size >> 20)


def test_a_gzip_bomb_from_a_mirror_is_not_decompressed_fully(server, monkeypatch, tmp_path):
    """Content pinned at 308,000 bytes; the mirror's gzip (65 KB) inflates to 64 MiB.
    Decompression stops one read past the pinned size (the old code inflated everything, then
    compared)."""
    raw = b"some IDX-like content\n" * 14000
    canonical = gzip.compress(raw, compresslevel=9, mtime=0)
    rf = RemoteFile("gz/f.gz", f"{server.url}/gone", sha(canonical), len(canonical),
                    content_sha256=sha(raw), content_size=len(raw))  # fmt: skip
    monkeypatch.setitem(download.SOURCES, "gz", DatasetSource("gz", (rf,), "test", "test"))
    bomb = _gzip_bomb(64 << 20)
    assert len(bomb) < len(raw) + (1 << 16)  # within the mirror's size bound: only inflating
    server.add("/m/gz/f.gz", bomb)
    inflated = []
    real_open = gzip.open

    def counting_open(*args, **kwargs):
        fh = real_open(*args, **kwargs)
        real_read = fh.read

        def read(n=-1):
            out = real_read(n)
            inflated.append(len(out))
            return out

        fh.read = read
        return fh

    monkeypatch.setattr(download.gzip, "open", counting_open)
    with pytest.raises(DownloadError, match="exceeds its pinned size of 308000 bytes"):
        pdata.fetch("gz", tmp_path / "a", progress=False, base_url=f"{server.url}/m")
    assert 0 < sum(inflated) <= len(raw) + (1 << 20)  # not 256 MiB
    assert files_under(tmp_path / "a") == []
    # the same bound applies to a bomb already in the data folder (replaced by a good copy)
    (tmp_path / "b" / "gz").mkdir(parents=True)
    (tmp_path / "b" / "gz" / "f.gz").write_bytes(bomb)
    server.add("/m/gz/f.gz", canonical)
    inflated.clear()
    pdata.fetch("gz", tmp_path / "b", progress=False, base_url=f"{server.url}/m")
    assert (tmp_path / "b" / "gz" / "f.gz").read_bytes() == canonical
    assert sum(inflated) <= 2 * (len(raw) + (1 << 20))


def test_every_gzip_content_pin_has_a_size():
    for src in download.SOURCES.values():
        for rf in src.files:
            if rf.content_sha256 is not None:
                assert rf.content_size is not None and rf.content_size > 0, rf.path


def test_every_loader_file_has_a_pinned_source():
    registry = {rf.path: rf for src in download.SOURCES.values() for rf in src.files}
    for _, relative in KNOWN_FILES:
        rf = registry[relative]
        assert rf.sha256 is not None and len(rf.sha256) == 64
        assert rf.url.startswith("https://")
    # the reference data folder holds every known file but nhanes3 (not in shared/data)
    shared = {p for p, rf in registry.items() if rf.shared is not None}
    assert shared == {rel for _, rel in KNOWN_FILES} - {"helr/nhanes3.txt"}


@pytest.mark.parametrize(
    "rf",
    [rf for src in download.SOURCES.values() for rf in src.files if rf.shared is not None],
    ids=lambda rf: rf.path,
)
def test_pins_match_the_reference_data_folder(rf, require_data):
    home = require_data(rf.path)
    data = (home / rf.path).read_bytes()
    if rf.shared == "identical":  # the reference copy is the source file itself
        assert sha(data) == rf.sha256
        assert len(data) == rf.size
    else:  # the reference copy is a recompression: only its content is the source's
        assert rf.shared == "content"
        assert sha(data) != rf.sha256
    if rf.content_sha256 is not None:
        assert sha(gzip.decompress(data)) == rf.content_sha256
        assert len(gzip.decompress(data)) == rf.content_size
    if rf.gzip:
        assert rf.content_sha256 == rf.sha256  # the source is the uncompressed content


def test_fetch_functions_and_terms():
    for name in ("adult", "helr", "kddcup99", "mnist", "phishing", "msd"):
        fn = getattr(pdata, f"fetch_{name}")
        assert fn.__name__ == f"fetch_{name}"
        src = download.SOURCES[name]
        assert src.fetchable and src.licence in " ".join(fn.__doc__.split())
    assert "NOT pinned" in pdata.fetch_msd.__doc__ or "Not pinned" in pdata.fetch_msd.__doc__
    assert download.fetchable_datasets(all_only=True) == [
        "adult", "helr", "kddcup99", "mnist", "phishing"
    ]  # fmt: skip
    with pytest.raises(ValueError, match="no public source"):
        pdata.fetch("idash")
    with pytest.raises(ValueError, match="unknown data set 'nope'"):
        pdata.fetch("nope")
    with pytest.raises(ValueError, match="timeout"):
        pdata.fetch("adult", timeout=0)
    assert "not downloadable" in pdata.__doc__  # the table of terms in the module docstring


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------


def test_cli_datasets_download(toy, tmp_path, capsys):
    home = tmp_path / "data"
    argv = ["datasets", "download", "toy", "--data-home", str(home), "--no-progress"]
    assert cli.main(argv) == 0
    assert f"[toy] 1 files verified in {home / 'toy'}" in capsys.readouterr().out
    assert (home / "toy" / "toy.bin").read_bytes() == PAYLOAD
    # --data-home before the action; present files are not downloaded again
    assert cli.main(["datasets", "--data-home", str(home), "download", "toy"]) == 0
    assert toy.hits["/canonical/toy.bin"] == 1
    assert cli.main(argv + ["--force"]) == 0
    assert toy.hits["/canonical/toy.bin"] == 2


def test_cli_datasets_download_failure_and_mirror(server, monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(download.SOURCES, "toy", toy_source(f"{server.url}/gone/toy.bin"))
    home = tmp_path / "data"
    argv = ["datasets", "download", "toy", "--data-home", str(home), "--no-progress"]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "[toy] FAILED" in err and "HTTP 404" in err and f"{server.url}/gone/toy.bin" in err
    assert files_under(home) == []
    server.add("/m/toy/toy.bin", PAYLOAD)
    assert cli.main(argv + ["--mirror", f"{server.url}/m"]) == 0
    assert cli.main(["datasets", "download", "nope"]) == 2


def test_cli_datasets_download_all(monkeypatch, tmp_path, capsys):
    calls = []
    monkeypatch.setattr(pdata, "fetch", lambda name, home, **kw: calls.append(name) or [])
    assert cli.main(["datasets", "download", "--data-home", str(tmp_path)]) == 0
    assert calls == ["adult", "helr", "kddcup99", "mnist", "phishing"]


def test_cli_datasets_lists_sources_and_terms(tmp_path, capsys):
    assert cli.main(["datasets", "--data-home", str(tmp_path), "--no-checksums"]) == 0
    out = capsys.readouterr().out
    assert "privlearn datasets download" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "sha256-pinned" in lines["mnist"] and "ossci-datasets.s3.amazonaws.com" in lines["mnist"]
    assert "NOT pinned" in lines["msd"] and "not downloadable" in lines["idash"]
    assert "no public source" in out


@pytest.fixture
def fake_reproductions(monkeypatch):
    """Replace the registered reproductions' ``run`` by a recorder (nothing is computed)."""
    from privlearn.experiments import REGISTRY

    cli._load_reproductions()
    events: list[tuple[str, str]] = []
    for name, rep in list(REGISTRY.items()):

        def run(out_dir, quick, _name=name):
            events.append(("run", _name))
            return []

        monkeypatch.setitem(REGISTRY, name, replace(rep, run=run))

    def fake_fetch(name, data_home=None, **kwargs):
        events.append(("fetch", name))
        if name in events_fail:
            raise DownloadError(f"https://example.invalid/{name}", Path(name), "HTTP 503")
        return []

    events_fail: set[str] = set()
    monkeypatch.setattr(pdata, "fetch", fake_fetch)
    return events, events_fail


def test_reproduce_download_fetches_what_the_reproduction_needs(fake_reproductions, tmp_path):
    events, _ = fake_reproductions
    assert cli.main(["reproduce", "song13", "--quick", "--download", "--out", str(tmp_path)]) == 0
    assert events == [("fetch", "kddcup99"), ("fetch", "mnist"), ("run", "song13")]
    events.clear()
    assert cli.main(["reproduce", "song13", "--quick", "--out", str(tmp_path)]) == 0
    assert events == [("run", "song13")]  # no --download: nothing fetched


def test_reproduce_all_download_fetches_each_set_once(fake_reproductions, tmp_path, capsys):
    events, fail = fake_reproductions
    fail.add("phishing")
    assert cli.main(["reproduce", "all", "--quick", "--download", "--out", str(tmp_path)]) == 1
    fetched = [n for kind, n in events if kind == "fetch"]
    assert sorted(fetched) == ["adult", "helr", "kddcup99", "mnist", "phishing"]
    assert len(fetched) == len(set(fetched))
    kinds = [kind for kind, _ in events]
    assert kinds == ["fetch"] * 5 + ["run"] * (len(kinds) - 5)  # all downloads come first
    assert {n for kind, n in events if kind == "run"} == set(cli.REPRODUCTION_DATA)
    err = capsys.readouterr().err
    assert "[phishing] FAILED" in err and "HTTP 503" in err and "NOT RUN" in err


def test_every_reproduction_declares_its_data_sets():
    from privlearn.experiments import REGISTRY

    cli._load_reproductions()
    assert set(cli.REPRODUCTION_DATA) == set(REGISTRY)
    for needs in cli.REPRODUCTION_DATA.values():
        for name in needs:
            assert download.SOURCES[name].fetchable and download.SOURCES[name].in_all


def test_os_replace_is_the_last_step(toy, tmp_path, monkeypatch):
    # a failure of the final rename leaves no temporary file either
    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        pdata.fetch("toy", tmp_path, progress=False)
    assert files_under(tmp_path) == []


# --------------------------------------------------------------------------------------------
# The real registry end to end, served from the reference data folder over loopback
# --------------------------------------------------------------------------------------------


@pytest.fixture
def shared_mirror(require_data, server) -> tuple[Path, Server]:
    """The local server with the reference data folder's files under ``/mirror/``."""
    home = require_data(*(rel for _, rel in KNOWN_FILES if rel != "helr/nhanes3.txt"))
    for _, rel in KNOWN_FILES:
        if (home / rel).is_file():
            server.add(f"/mirror/{rel}", (home / rel).read_bytes())
    return home, server


def test_real_registry_from_a_mirror_of_the_reference_folder(shared_mirror, tmp_path):
    _, server = shared_mirror
    home = tmp_path / "data"
    for name in ("adult", "kddcup99", "mnist", "phishing"):
        pdata.fetch(name, home, progress=False, base_url=f"{server.url}/mirror")
    X, y = pdata.load_phishing(home)
    assert X.shape == (11055, 68)
    X, y = pdata.load_mnist("test", home)
    assert X.shape == (10000, 784)
    assert pdata.load_adult("test", home)[0].shape[0] == 16281
    # the whole folder is now verified: nothing is downloaded again
    before = sum(server.hits.values())
    for name in ("adult", "kddcup99", "mnist", "phishing"):
        pdata.fetch(name, home, progress=False, base_url=f"{server.url}/mirror")
    assert sum(server.hits.values()) == before
    # nhanes3 is not in the reference folder: a clear 404, the other helr files are written
    with pytest.raises(DownloadError, match=r"helr/nhanes3.txt.*HTTP 404"):
        pdata.fetch_helr(home, progress=False, base_url=f"{server.url}/mirror")
    assert sorted(p.name for p in (home / "helr").iterdir()) == ["edin.txt", "lbw.txt"]


def test_real_phishing_pin_through_the_canonical_path(shared_mirror, monkeypatch, tmp_path):
    # the LIBSVM page serves the uncompressed file; privlearn stores it gzip-compressed
    ref, server = shared_mirror
    raw = gzip.decompress((ref / "phishing" / "phishing.txt.gz").read_bytes())
    url = server.add("/libsvm/binary/phishing", raw)
    (rf,) = download.SOURCES["phishing"].files
    src = replace(download.SOURCES["phishing"], files=(replace(rf, url=url),))
    monkeypatch.setitem(download.SOURCES, "phishing", src)
    (path,) = pdata.fetch_phishing(tmp_path, progress=False)
    assert path == tmp_path / "phishing" / "phishing.txt.gz"
    assert gzip.decompress(path.read_bytes()) == raw
    assert pdata.load_phishing(tmp_path)[0].shape == (11055, 68)


def test_a_missing_file_error_points_at_the_download_command(tmp_path):
    with pytest.raises(FileNotFoundError, match="privlearn datasets download adult"):
        pdata.load_adult("train", tmp_path)


def test_progress_bar_on_a_terminal(toy, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(download.sys.stderr, "isatty", lambda: True, raising=False)
    pdata.fetch("toy", tmp_path)
    err = capsys.readouterr().err
    assert "\rtoy/toy.bin:" in err and "/100k" in err  # a tqdm bar sized by Content-Length
