"""The ``privlearn`` command line."""

from __future__ import annotations

import subprocess
import sys

import pytest

import privlearn
from privlearn import cli


@pytest.mark.needs_data
def test_info_reports_build_and_data(require_data, capsys):
    home = require_data("helr/edin.txt")
    assert cli.main(["info", "--data-home", str(home)]) == 0
    out = capsys.readouterr().out
    assert f"privlearn {privlearn.__version__}" in out
    assert "openmp" in out and "threads" in out
    assert "ms of work in a region" in out  # the thread policy (issue 14)
    assert "dask       dask " in out  # the test extra installs dask and distributed
    assert "helr" in out.split("found:")[1].splitlines()[0]


@pytest.mark.needs_data
def test_datasets_lists_files_with_checksums(require_data, capsys):
    home = require_data("helr/edin.txt")
    assert cli.main(["datasets", "--data-home", str(home)]) == 0
    out = capsys.readouterr().out
    assert "helr/edin.txt" in out
    # sha256 of the MIT-licensed HELR edin file in shared/data
    assert "e317c014a68e44d0274099d19c1ea3759444e2b63be794d0374205561264970c" in out
    assert "helr/nhanes3.txt" in out and "missing" in out


def test_datasets_on_an_empty_folder(tmp_path, capsys):
    assert cli.main(["datasets", "--data-home", str(tmp_path), "--no-checksums"]) == 0
    assert "0 of 14 files found" in capsys.readouterr().out


def test_datasets_and_info_name_the_embedded_copies(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PRIVLEARN_DATA", str(tmp_path))
    assert cli.main(["datasets", "--no-checksums"]) == 0
    out = capsys.readouterr().out
    edin = next(line for line in out.splitlines() if line.startswith("helr       helr/edin.txt"))
    assert "embedded" in edin and "missing" not in edin
    kdd = next(line for line in out.splitlines() if "kddcup.data_10_percent.gz" in line)
    assert "missing" in kdd  # only a subsample of KDD Cup 1999 is embedded
    assert "10 of 14 files found (10 of them embedded" in out
    assert "embedded subsample: kddcup99/" in out
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "embedded (the copies shipped in the package" in out
    assert "missing: kddcup99" in out
    # an explicit data folder is used alone
    assert cli.main(["datasets", "--data-home", str(tmp_path), "--no-checksums"]) == 0
    assert "0 of 14 files found\n" in capsys.readouterr().out


def test_reproduce_lists_and_rejects_unknown_names(capsys):
    assert cli.main(["reproduce", "--list"]) == 0
    assert cli.main(["reproduce", "no-such-paper"]) == 2
    assert "unknown reproduction 'no-such-paper'" in capsys.readouterr().err


def test_console_script_help():
    out = subprocess.run(
        [sys.executable, "-m", "privlearn.cli", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for command in ("info", "datasets", "reproduce"):
        assert command in out


def test_missing_command_is_an_error():
    with pytest.raises(SystemExit) as exc:
        cli.main([])
    assert exc.value.code == 2


def test_download_flags_in_help(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["datasets", "download", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--force", "--mirror", "--timeout", "--no-progress", "--data-home"):
        assert flag in out
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "--help"])
    assert "--download" in capsys.readouterr().out


def test_datasets_download_rejects_unknown_and_private_sets(tmp_path, capsys):
    assert cli.main(["datasets", "download", "no-such-set", "--data-home", str(tmp_path)]) == 2
    assert "unknown data set 'no-such-set'" in capsys.readouterr().err
    assert cli.main(["datasets", "download", "idash", "--data-home", str(tmp_path)]) == 1
    assert "no public source" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing was created


# ---- bad arguments are argparse errors, never tracebacks (issue 19) ------------------------------
def _usage_error(argv, capsys) -> str:
    """Run the CLI; it must exit with argparse's code 2; return its stderr."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "usage:" in err
    return err


@pytest.mark.parametrize("flag", ["--timeout", "--deadline"])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "-1", "abc", "1e400", "1e12"])
def test_download_seconds_must_be_positive_and_finite(flag, value, tmp_path, capsys):
    argv = ["datasets", "download", "helr", "--data-home", str(tmp_path), f"{flag}={value}"]
    err = _usage_error(argv, capsys)
    assert f"argument {flag}:" in err and repr(value) in err
    assert list(tmp_path.iterdir()) == []  # nothing was downloaded or created


@pytest.fixture
def no_run(monkeypatch):
    """Record downloads and reproduction runs instead of doing them."""
    import dataclasses

    from privlearn.experiments import REGISTRY

    calls = []
    cli._load_reproductions()
    monkeypatch.setattr(cli, "_download_all", lambda names, home, **kw: calls.append(names) or [])
    for name, rep in list(REGISTRY.items()):
        fake = dataclasses.replace(rep, run=lambda out, quick, _n=name: calls.append(_n) or [])
        monkeypatch.setitem(REGISTRY, name, fake)
    return calls


def test_reproduce_out_empty_string_is_refused(no_run, capsys):
    err = _usage_error(["reproduce", "impact", "--out", ""], capsys)
    assert "argument --out: must name a folder, got an empty string" in err
    assert no_run == []


def test_reproduce_out_on_a_file_is_refused(no_run, tmp_path, capsys):
    afile = tmp_path / "results.txt"
    afile.write_text("keep me")
    err = _usage_error(["reproduce", "impact", "--download", "--out", str(afile)], capsys)
    assert f"'{afile}' exists and is not a folder" in err
    err = _usage_error(["reproduce", "impact", "--out", str(afile / "sub")], capsys)
    assert "a part of its path is a file" in err
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "impact").write_text("")  # where the reproduction would write
    err = _usage_error(["reproduce", "impact", "--out", str(tmp_path / "out")], capsys)
    assert "impact' exists and is not a folder" in err
    assert afile.read_text() == "keep me" and no_run == []  # nothing downloaded or run


def test_reproduce_out_on_a_read_only_location_is_refused(no_run, tmp_path, monkeypatch, capsys):
    import errno
    from pathlib import Path

    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "write_bytes", read_only)  # the probe file, as on a ro mount
    err = _usage_error(["reproduce", "impact", "--out", str(tmp_path / "r")], capsys)
    assert "cannot write to" in err and "Read-only file system" in err
    monkeypatch.setattr(Path, "mkdir", read_only)
    err = _usage_error(["reproduce", "impact", "--out", str(tmp_path / "s")], capsys)
    assert "Read-only file system" in err
    assert no_run == []


def test_reproduce_out_unwritable_for_real(no_run, tmp_path, capsys):
    import os

    if os.geteuid() == 0:  # root writes through permission bits: use a read-only mount
        target = "/sys/privlearn-cli-test"
        try:
            os.mkdir(target)
        except OSError:
            pass  # refused (sysfs is read-only for files and folders of our own)
        else:  # pragma: no cover - a writable /sys
            os.rmdir(target)
            pytest.skip("no read-only location to test with as root")
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = str(locked / "out")
    err = _usage_error(["reproduce", "impact", "--out", target], capsys)
    assert "argument --out: cannot write to" in err
    assert no_run == []


def test_reproduce_valid_out_runs(no_run, tmp_path, capsys):
    assert cli.main(["reproduce", "impact", "--quick", "--out", str(tmp_path / "o")]) == 0
    assert no_run == ["impact"] and (tmp_path / "o" / "impact").is_dir()
    assert not any(p.name.startswith(".privlearn-write-test") for p in (tmp_path / "o").iterdir())


@pytest.mark.parametrize(
    "argv",
    [["info"], ["datasets"], ["datasets", "download", "helr"]],
)
def test_empty_data_home_is_refused(argv, capsys):
    """``--data-home ""`` would read and write the current folder, as ``--out ""`` did."""
    err = _usage_error([*argv, "--data-home", ""], capsys)
    assert "argument --data-home: must name a folder, got an empty string" in err


# ---- reproduce on a full disk: checked up front, atomic results, one clear line (issue 30) -----
def _fake_reproduction(monkeypatch, run):
    """Register the reproduction ``fake`` (run by ``privlearn reproduce fake``)."""
    from privlearn.experiments import REGISTRY, Reproduction

    cli._load_reproductions()
    monkeypatch.setitem(REGISTRY, "fake", Reproduction("fake", "a paper", "a test", run))


def _write_results(out, quick):
    from privlearn.experiments.tables import write_csv, write_text

    return [
        write_csv(out / "table.csv", [{"a": 1.5, "b": "x"}], ["a", "b"]),
        write_text(out / "summary.md", "# summary\n" + "a line of the summary\n" * 200),
    ]


def test_reproduce_refuses_a_nearly_full_disk_before_running(monkeypatch, tmp_path, capsys):
    import shutil

    from privlearn.experiments.files import OUTPUT_BYTES_PER_REPRODUCTION

    ran = []
    _fake_reproduction(monkeypatch, lambda out, quick: ran.append(out) or [])
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=10 << 20))
    err = _usage_error(["reproduce", "fake", "--out", str(tmp_path / "o")], capsys)
    assert f"argument --out: only 10.0 MiB free on the disk of '{tmp_path / 'o'}'" in err
    assert "need 64 MiB" in err and "OUTPUT_BYTES_PER_REPRODUCTION" in err
    assert ran == []  # refused before anything ran
    need = OUTPUT_BYTES_PER_REPRODUCTION
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=need - 1))
    _usage_error(["reproduce", "fake", "--out", str(tmp_path / "o")], capsys)
    assert ran == []
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=need))
    assert cli.main(["reproduce", "fake", "--out", str(tmp_path / "o")]) == 0
    assert len(ran) == 1


def test_reproduce_disk_full_mid_run_is_one_line_and_leaves_no_partial_file(
    monkeypatch, tmp_path, capsys
):
    import errno

    import privlearn.experiments.files as files

    _fake_reproduction(monkeypatch, _write_results)
    real_fdopen = files.os.fdopen
    budget = [100]  # bytes the "disk" still takes: the CSV fits, the summary does not

    class Disk:
        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            budget[0] -= len(data)
            if budget[0] < 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.fh.write(data)

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    monkeypatch.setattr(files.os, "fdopen", lambda fd, *a, **k: Disk(real_fdopen(fd, *a, **k)))
    out = tmp_path / "o"
    out.mkdir()
    (out / "fake").mkdir()
    (out / "fake" / "summary.md").write_text("the summary of an earlier run\n")
    assert cli.main(["reproduce", "fake", "--out", str(out)]) == 1
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"cannot write '{out / 'fake' / 'summary.md'}': No space left on device" in err
    assert "[errno 28]" in err and "no partial file was left" in err
    assert f"Free some space in '{out}'" in err
    # the CSV is whole, the earlier summary untouched, no temporary file remains
    assert (out / "fake" / "table.csv").read_text() == "a,b\n1.5,x\n"
    assert (out / "fake" / "summary.md").read_text() == "the summary of an earlier run\n"
    assert sorted(p.name for p in (out / "fake").iterdir()) == ["summary.md", "table.csv"]


def test_reproduce_disk_full_outside_the_writers_is_one_line(monkeypatch, tmp_path, capsys):
    import errno

    def run(out, quick):  # e.g. a scratch file of a parallel back-end
        raise OSError(errno.ENOSPC, "No space left on device", "/tmp/joblib-scratch")

    _fake_reproduction(monkeypatch, run)
    assert cli.main(["reproduce", "fake", "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "fake stopped: No space left on device ('/tmp/joblib-scratch')" in err


def test_reproduce_other_errors_are_not_hidden(monkeypatch, tmp_path):
    def run(out, quick):
        raise PermissionError(13, "Permission denied", "/somewhere/else")

    _fake_reproduction(monkeypatch, run)
    with pytest.raises(PermissionError):  # not a result file, not a full disk: a real bug
        cli.main(["reproduce", "fake", "--out", str(tmp_path / "o")])


def test_reproduce_reports_an_altered_data_file(monkeypatch, tmp_path, capsys):
    from privlearn.exceptions import DataIntegrityError

    def run(out, quick):
        raise DataIntegrityError(
            "data file 'x/adult/adult.data' is not the published adult/adult.data; run "
            "`privlearn datasets download adult`",
            path="x/adult/adult.data",
            relative="adult/adult.data",
            dataset="adult",
            expected="0" * 64,
        )

    _fake_reproduction(monkeypatch, run)
    assert cli.main(["reproduce", "fake", "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "[fake] FAILED: data file 'x/adult/adult.data'" in err
    assert "privlearn datasets download adult" in err


def test_reproduce_runs_blas_on_one_thread(monkeypatch, tmp_path):
    """``privlearn reproduce`` runs each reproduction with every BLAS library on one thread
    (issue 32, item 3: OpenBLAS teams spinning on the reproductions' small problems tripled
    the CPU time of ``reproduce impact --quick``); the caller's setting is restored after."""
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    seen: list[list[int]] = []

    def run(out, quick):
        seen.append(blas_threads())
        return []

    _fake_reproduction(monkeypatch, run)
    with threadpool_limits(limits=2, user_api="blas"):
        assert cli.main(["reproduce", "fake", "--quick", "--out", str(tmp_path / "o")]) == 0
        after = blas_threads()
    assert len(seen) == 1 and seen[0] and set(seen[0]) == {1}
    assert after and set(after) == {2}


def test_datasets_flags_a_file_that_is_not_the_pinned_one(tmp_path, capsys):
    (tmp_path / "helr").mkdir()
    (tmp_path / "helr" / "edin.txt").write_text("1\t2\t1\n")
    assert cli.main(["datasets", "--data-home", str(tmp_path)]) == 0
    edin = next(line for line in capsys.readouterr().out.splitlines() if "helr/edin.txt" in line)
    assert edin.endswith("NOT the pinned file: privlearn datasets download helr")
