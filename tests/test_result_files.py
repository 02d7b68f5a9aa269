"""Result files of the reproductions are written atomically (issue 30, 8)."""

from __future__ import annotations

import errno
import os
import pickle

import pytest

import privlearn.experiments.files as files
from privlearn.experiments.files import OutputWriteError, atomic_output, is_disk_full
from privlearn.experiments.tables import write_csv, write_text


def test_atomic_output_writes_the_whole_file_with_umask_permissions(tmp_path):
    path = tmp_path / "r.txt"
    with atomic_output(path, "w", encoding="utf-8") as fh:
        fh.write("héllo\n")
        assert not path.exists()  # nothing visible before the block ends
    assert path.read_text(encoding="utf-8") == "héllo\n"
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["r.txt"]


def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary(tmp_path):
    path = write_text(tmp_path / "s.md", "old\n")
    with pytest.raises(OutputWriteError) as info:
        with atomic_output(path, "w") as fh:
            fh.write("half a ")
            raise OSError(errno.ENOSPC, "No space left on device")
    exc = info.value
    assert exc.errno == errno.ENOSPC and exc.filename == str(path) and is_disk_full(exc)
    assert str(exc) == f"cannot write '{path}': No space left on device [errno 28]"
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["s.md"]
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is OutputWriteError and str(back) == str(exc)


def test_a_failed_rename_leaves_no_file(tmp_path, monkeypatch):
    def replace(src, dst):
        raise OSError(errno.EDQUOT, "Disk quota exceeded")

    monkeypatch.setattr(files.os, "replace", replace)
    with pytest.raises(OutputWriteError, match="Disk quota exceeded") as info:
        write_csv(tmp_path / "t.csv", [{"a": 1}], ["a"])
    assert is_disk_full(info.value)
    assert list(tmp_path.iterdir()) == []


def test_other_exceptions_pass_through_and_clean_up(tmp_path):
    with pytest.raises(KeyError):
        write_csv(tmp_path / "t.csv", [{"a": 1}], ["b"])
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OutputWriteError, match="missing"):  # no such folder
        write_text(tmp_path / "missing" / "x.md", "x")
    with pytest.raises(ValueError, match="mode"):
        with atomic_output(tmp_path / "x", "a"):
            pass


def test_save_figure_writes_a_png_atomically(tmp_path):
    pytest.importorskip("matplotlib")
    from privlearn.experiments.figures import new_figure, save_figure

    fig, axes = new_figure(1, 1)
    axes[0, 0].plot([0, 1], [1, 0])
    path = save_figure(fig, tmp_path / "f.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.png"]
