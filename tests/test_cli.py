"""The ``privlearn`` command line."""

from __future__ import annotations

import subprocess
import sys

import pytest

import privlearn
from privlearn import cli


def test_info_reports_build_and_data(require_data, capsys):
    home = require_data("helr/edin.txt")
    assert cli.main(["info", "--data-home", str(home)]) == 0
    out = capsys.readouterr().out
    assert f"privlearn {privlearn.__version__}" in out
    assert "openmp" in out and "threads" in out
    assert "ms of work in a region" in out  # the thread policy (issue 14)
    assert "dask       dask " in out  # the test extra installs dask and distributed
    assert "helr" in out.split("found:")[1].splitlines()[0]


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
