"""The loaders verify every data file against its pinned SHA-256 before parsing (issue 30, 8).

The good files are rebuilt from the copies embedded in the package (each holds exactly the
bytes of the original file), so these tests need no data folder; the real files of
``shared/data`` are checked against the pins in :func:`test_real_data_files_match_their_pins`.
"""

from __future__ import annotations

import gzip
import hashlib
import lzma
import os
import pickle
import re
import shutil
from pathlib import Path

import pytest

import privlearn.data.download as download
import privlearn.data.integrity as integrity
import privlearn.data.loaders as loaders
from privlearn.data import (
    EMBEDDED_DIR,
    EMBEDDED_FILES,
    load_adult,
    load_helr,
    load_kddcup99_embedded,
    load_mnist,
    load_phishing,
)
from privlearn.data.loaders import KNOWN_FILES
from privlearn.exceptions import DataIntegrityError

ADULT_PIN = "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"


def _original(relative: str) -> bytes:
    """The bytes of the original data file, from its embedded copy."""
    stored = EMBEDDED_DIR / EMBEDDED_FILES[relative]
    data = stored.read_bytes()
    if stored.suffix == ".xz":
        return lzma.decompress(data)
    if stored.suffix == ".gz" and not relative.endswith(".gz"):
        return gzip.decompress(data)
    return data


def _put(home: Path, relative: str, data: bytes) -> Path:
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _check_message(exc: DataIntegrityError, path: Path, dataset: str) -> str:
    msg = str(exc)
    assert isinstance(exc, ValueError)
    assert f"'{path}'" in msg
    assert f"privlearn datasets download {dataset}" in msg
    assert "pinned sha256" in msg and "verify=False" in msg
    # nothing computed from the altered file is quoted: not its digest
    assert hashlib.sha256(path.read_bytes()).hexdigest() not in msg
    assert exc.path == path and exc.dataset == dataset
    return msg


def test_duplicated_row_in_adult_data_is_refused(tmp_path):
    lines = _original("adult/adult.data").splitlines(keepends=True)
    path = _put(tmp_path, "adult/adult.data", b"".join(lines[:5] + lines[4:]))
    with pytest.raises(DataIntegrityError) as info:
        load_adult("train", tmp_path)
    msg = _check_message(info.value, path, "adult")
    assert ADULT_PIN in msg and "3,974,305 bytes" in msg
    assert info.value.expected == ADULT_PIN and info.value.relative == "adult/adult.data"
    # read as it is on request; the pinned file itself loads
    assert load_adult("train", tmp_path, verify=False)[0].shape[0] == 32562
    _put(tmp_path, "adult/adult.data", _original("adult/adult.data"))
    assert load_adult("train", tmp_path)[0].shape[0] == 32561


def test_ten_row_phishing_file_is_refused(tmp_path):
    lines = gzip.decompress(_original("phishing/phishing.txt.gz")).splitlines(keepends=True)
    path = _put(tmp_path, "phishing/phishing.txt.gz", gzip.compress(b"".join(lines[:10])))
    with pytest.raises(DataIntegrityError) as info:
        load_phishing(tmp_path)
    assert "of its decompressed content" in _check_message(info.value, path, "phishing")
    assert load_phishing(tmp_path, verify=False)[0].shape == (10, 68)
    # another gzip of the pinned content is the published file
    _put(tmp_path, "phishing/phishing.txt.gz", gzip.compress(b"".join(lines), compresslevel=1))
    assert load_phishing(tmp_path)[0].shape == (11055, 68)


@pytest.mark.parametrize(
    ("relative", "load"),
    [
        ("helr/edin.txt", lambda home: load_helr("edin", home)),
        ("adult/adult.test", lambda home: load_adult("test", home)),
        ("mnist/t10k-labels-idx1-ubyte.gz", lambda home: load_mnist("test", home)),
    ],
)
def test_truncated_file_is_refused(tmp_path, relative, load):
    if relative.startswith("mnist"):  # its images must be good: the labels are what fails
        images = "mnist/t10k-images-idx3-ubyte.gz"
        _put(tmp_path, images, _original(images))
    data = _original(relative)
    path = _put(tmp_path, relative, data[: len(data) // 2])
    with pytest.raises(DataIntegrityError) as info:
        load(tmp_path)
    _check_message(info.value, path, relative.split("/")[0])


def test_verification_is_cached_per_unchanged_file(tmp_path, monkeypatch):
    calls = []
    check = download._check_stored

    def counting(rf, path):
        calls.append(path)
        return check(rf, path)

    monkeypatch.setattr(download, "_check_stored", counting)
    path = _put(tmp_path, "helr/lbw.txt", _original("helr/lbw.txt"))
    load_helr("lbw", tmp_path)
    load_helr("lbw", tmp_path)
    assert calls == [path]  # hashed once
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    load_helr("lbw", tmp_path)
    assert len(calls) == 2  # changed modification time: hashed again
    # an edit of the same size is caught (the cached digest is not reused)
    data = bytearray(path.read_bytes())
    data[0:1] = b"9" if data[0:1] != b"9" else b"8"
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000))
    with pytest.raises(DataIntegrityError):
        load_helr("lbw", tmp_path)
    assert len(calls) == 3
    load_helr("lbw", tmp_path, verify=False)
    assert len(calls) == 3  # verify=False does not hash
    path.write_bytes(_original("helr/lbw.txt"))
    load_helr("lbw", tmp_path)
    integrity.clear_verification_cache()
    load_helr("lbw", tmp_path)
    assert len(calls) == 5  # a cleared cache hashes again


def test_embedded_copies_are_pinned_and_verified():
    stored = {*EMBEDDED_FILES.values(), "kddcup99/kddcup.data_10_percent.song13_50k.xz"}
    assert set(integrity.EMBEDDED_SHA256) == stored
    readme = (EMBEDDED_DIR / "README.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| `([^`]+)` \| \d+ \| ([0-9a-f]{64}) \|", readme, re.M))
    assert table == integrity.EMBEDDED_SHA256
    for name, pin in integrity.EMBEDDED_SHA256.items():
        assert hashlib.sha256((EMBEDDED_DIR / name).read_bytes()).hexdigest() == pin


def test_damaged_embedded_copy_is_refused(tmp_path, monkeypatch):
    fake = tmp_path / "embedded"
    shutil.copytree(EMBEDDED_DIR, fake)
    for name in ("helr/edin.txt.gz", "kddcup99/kddcup.data_10_percent.song13_50k.xz"):
        data = bytearray((fake / name).read_bytes())
        data[-20] ^= 0xFF
        (fake / name).write_bytes(bytes(data))
    monkeypatch.setattr(loaders, "EMBEDDED_DIR", fake)
    monkeypatch.setenv("PRIVLEARN_DATA", str(tmp_path / "empty"))
    with pytest.raises(DataIntegrityError, match="embedded in privlearn") as info:
        load_helr("edin")
    msg = str(info.value)
    assert str(fake / "helr/edin.txt.gz") in msg and "Reinstall privlearn" in msg
    assert "privlearn datasets download helr" in msg
    assert load_helr("lbw")[0].shape == (189, 9)  # the intact copies still load
    with pytest.raises(DataIntegrityError, match="only shipped inside the package"):
        load_kddcup99_embedded(n_samples=10, seed=0)


@pytest.mark.needs_data
def test_real_data_files_match_their_pins(data_home, require_data):
    # a missing folder is a skip on a fresh clone and in CI's no-data run, a failure under CI
    require_data(KNOWN_FILES[0][1])
    present = [rel for _, rel in KNOWN_FILES if (data_home / rel).is_file()]
    assert present, f"no data file found in {data_home}"
    for rel in present:
        integrity.verify_data_file(data_home / rel, rel)  # raises on a mismatch


def test_verify_must_be_a_bool(tmp_path):
    with pytest.raises(TypeError, match="verify must be a bool"):
        load_helr("edin", tmp_path, verify="yes")
    with pytest.raises(TypeError, match="verify must be a bool"):
        load_mnist("test", tmp_path, verify=1)


def test_error_pickles(tmp_path):
    err = DataIntegrityError(
        "m", path=tmp_path / "f", relative="helr/f", dataset="helr", expected="0" * 64
    )
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is DataIntegrityError and str(back) == "m"
    assert (back.path, back.relative, back.dataset, back.expected) == (
        err.path,
        "helr/f",
        "helr",
        "0" * 64,
    )
