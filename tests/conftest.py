"""Shared fixtures: the real-data folder and the CI policy for missing files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parent.parent
_DEFAULT_DATA = _REPO.parent / "shared" / "data"


def _data_home() -> Path:
    env = os.environ.get("PRIVLEARN_DATA")
    return Path(env) if env else _DEFAULT_DATA


@pytest.fixture(scope="session")
def data_home() -> Path:
    """The folder with the real data sets (``PRIVLEARN_DATA``, else ``../shared/data``)."""
    return _data_home()


@pytest.fixture
def require_data(data_home: Path):
    """Return a checker: ``require_data("mnist/train-images-idx3-ubyte.gz")``.

    A missing file is a skip on a developer machine but a failure under CI (``CI=true``),
    so CI can never pass by silently skipping the real-data tests.
    """

    def check(*relative: str) -> Path:
        for rel in relative:
            path = data_home / rel
            if not path.exists():
                msg = f"data file {path} not found (set PRIVLEARN_DATA)"
                if os.environ.get("CI", "").lower() == "true":
                    pytest.fail(msg)
                pytest.skip(msg)
        return data_home

    return check
