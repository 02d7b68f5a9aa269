"""Shared fixtures: the real-data folder and the policy for missing data files.

The data folder is ``PRIVLEARN_DATA``, else ``../shared/data`` beside the checkout.

Tests that read real data files ask for them through ``require_data(...)`` (or the
``data_home`` fixture). Every such test carries the ``needs_data`` marker (registered in
``pyproject.toml``; added here automatically to every test that uses ``require_data`` or
``data_home``), so ``pytest -m needs_data`` selects exactly the data-dependent part of the suite.

What a missing data file does:

- on a developer machine (``CI`` unset): the test is skipped, so the README's test command is
  green on a fresh clone without data;
- under ``CI=true``: the test FAILS, so CI can never pass by silently skipping the real-data
  tests;
- under ``CI=true`` with ``PRIVLEARN_NO_DATA_RUN=1`` (the deliberate no-data run: CI runs
  ``PRIVLEARN_DATA=<empty folder> PRIVLEARN_NO_DATA_RUN=1 pytest -m needs_data`` to prove that
  the suite passes without data): the test is skipped again. In that run the loaders called
  without an explicit ``data_home`` read the small sets embedded in the package
  (``privlearn/data/embedded``: HELR, phishing, Adult, the MNIST test images; see
  :func:`privlearn.data.data_source`), so the tests written against the default data folder
  (the quick reproductions, the embedded-data tests of ``test_data.py``) still run on real data.

Threads under pytest-xdist: ``pyproject.toml`` runs the suite on one worker per core
(``-n auto``). So that the workers do not oversubscribe the cores, each worker sets
``OMP_NUM_THREADS`` (the core's default thread count, :func:`privlearn.parallel.get_num_threads`)
and the BLAS thread counts to ``cores // workers`` (at least 1) before anything loads an OpenMP
or BLAS runtime, unless the variable is already set. A test that asks for ``n_threads=2``
explicitly still gets two threads (the core caps a request at the cores, not at the default);
tests that start a fresh interpreter to observe the thread pool remove these variables again
with :data:`WORKER_THREAD_ENV` (see ``tests/test_threads.py``).

File order under pytest-xdist: with ``--dist loadfile`` a test file is one unit of work, handed
to the next free worker in collection order (``--no-loadscope-reorder`` in ``pyproject.toml``
keeps that order; xdist's own reorder puts the files with the most tests first, which left a
few slow files with few tests, e.g. ``test_figures.py``, to run alone at the end). The
collection is therefore sorted so that the slowest files (:data:`SLOW_FILES`) start first and
the many short ones fill the gaps at the end (longest-processing-time-first scheduling); within
a file the order is unchanged.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parent.parent
_DEFAULT_DATA = _REPO.parent / "shared" / "data"
_TRUE = ("1", "true", "yes")


def _limit_worker_threads() -> dict[str, None]:
    """Cap each xdist worker's OpenMP/BLAS threads at ``cores // workers``; return the variables
    set here (mapped to ``None``: what a subprocess env update needs to remove them again)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if workers < 2:
        return {}
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    per_worker = str(max(1, (cores or 1) // workers))
    set_here: dict[str, None] = {}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        if var not in os.environ:
            os.environ[var] = per_worker
            set_here[var] = None
    return set_here


#: The thread variables this conftest set in an xdist worker, each mapped to ``None``.
WORKER_THREAD_ENV: dict[str, None] = _limit_worker_threads()


@contextlib.contextmanager
def only_warnings(*expected: type[Warning], match: str = "") -> Iterator[None]:
    """Let the block emit ``expected`` warnings (whose message matches ``match``), or none; any
    other warning fails the test.

    ``pytest.warns`` for a warning that depends on the inputs (e.g. an
    :class:`~privlearn.exceptions.UndeclaredBoundWarning`, issued only below a size threshold,
    inside a property test): the run prints no warning the test did not ask for, and a new one
    is a failure rather than noise.
    """
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        yield
    other = [
        w
        for w in seen
        if not (issubclass(w.category, expected) and re.search(match, str(w.message)))
    ]
    assert not other, [f"{w.category.__name__}: {w.message}" for w in other]


def _data_home() -> Path:
    env = os.environ.get("PRIVLEARN_DATA")
    return Path(env) if env else _DEFAULT_DATA


def _ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def no_data_run() -> bool:
    """``PRIVLEARN_NO_DATA_RUN`` is set: the deliberate run on an empty data folder."""
    return os.environ.get("PRIVLEARN_NO_DATA_RUN", "").lower() in _TRUE


def missing_data_is_failure() -> bool:
    """Under CI a missing data file fails the test, except in the deliberate no-data run."""
    return _ci() and not no_data_run()


#: Test files by decreasing cost (CPU-seconds of a full run on the shared 2-core machine, the
#: subprocesses a file starts included, issue 32 item 4); the files not listed are short (under
#: about 5 s each) and follow in their usual order. Only the order matters: update it when a
#: file becomes much slower or faster.
SLOW_FILES = (
    "test_privacy_audits.py",  # ~100
    "test_figures.py",  # ~70
    "test_threads.py",  # ~33 (fresh interpreters)
    "test_docs.py",  # ~30 (the sphinx build)
    "test_cluster.py",
    "test_cluster_privacy.py",
    "test_encoding.py",
    "test_sgd.py",
    "test_data.py",
    "test_scd.py",
    "test_he.py",
    "test_pld.py",
    "test_bad_input.py",
    "test_interrupt.py",  # ~10, waits included
    "test_distributed_kmeans.py",
    "test_tabular.py",
    "test_numeric_edges.py",
    "test_song13.py",
    "test_ledger.py",
    "test_distributed_linear.py",
    "test_model_selection.py",
    "test_linear_edges.py",
    "test_readme.py",
    "test_accounting_edges.py",
    "test_distributed_encoding.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that reads the data folder with ``needs_data``; put the slowest files
    first (:data:`SLOW_FILES`; a stable sort, so each file keeps its own order)."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "require_data" in fixtures or "data_home" in fixtures:
            item.add_marker(pytest.mark.needs_data)
    rank = {name: i for i, name in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session")
def data_home() -> Path:
    """The folder with the real data sets (``PRIVLEARN_DATA``, else ``../shared/data``)."""
    return _data_home()


@pytest.fixture
def require_data(data_home: Path):
    """Return a checker: ``require_data("mnist/train-images-idx3-ubyte.gz")``.

    A missing file is a skip on a developer machine but a failure under CI (``CI=true``), so
    CI can never pass by silently skipping the real-data tests -- except in the deliberate
    no-data run (``PRIVLEARN_NO_DATA_RUN=1``), where it is a skip (see the module docstring).
    """

    def check(*relative: str) -> Path:
        for rel in relative:
            path = data_home / rel
            if not path.exists():
                msg = f"data file {path} not found (set PRIVLEARN_DATA)"
                if missing_data_is_failure():
                    pytest.fail(
                        f"{msg}; under CI a missing data file is a failure (set "
                        "PRIVLEARN_NO_DATA_RUN=1 for the deliberate no-data run)"
                    )
                pytest.skip(msg)
        return data_home

    return check
