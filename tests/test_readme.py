"""Every ```python block of README.md runs as written, and the docs build runs every gallery
example (issue 22).

The rule for README blocks (keep it when you add one):

- **Each block runs on its own**, in a fresh namespace, as a reader who copies just that block
  would run it: it imports what it uses and loads its own data. Data come from sets that are
  always present on a fresh offline machine: scikit-learn's bundled sets, privlearn's
  synthetic generators, or the loaders of the sets embedded in the package (helr, phishing,
  adult, MNIST's test file), which read ``$PRIVLEARN_DATA`` when it has the file and the
  embedded copy otherwise. Here ``PRIVLEARN_DATA`` is what the suite uses (``conftest.py``).
- **A continuation says so.** A block whose first line starts with ``# continued`` runs in the
  namespace left by the block before it (itself run first, with its own predecessors).
- A block must not emit a :class:`~privlearn.exceptions.PrivacyLeakWarning` or a
  :class:`~privlearn.exceptions.LargeDeltaWarning`: the README's examples are the private way
  of doing things.

Blocks run in this process with ``exec`` (the package is imported once; the whole file takes
well under a minute on two cores); a failure names the README line that raised. Shell blocks
(```bash) and unlabelled blocks (command-line synopses) are not run.

The gallery (``docs/examples/plot_*.py``) runs when the documentation is built: sphinx-gallery
executes every script that ``filename_pattern`` in ``docs/conf.py`` matches, and
``tests/test_docs.py`` builds the site with warnings as errors and checks each example's page
and figure (``test_docs_build_gallery_example``). :func:`test_docs_build_runs_every_example`
below pins that: a pattern that skipped a script would leave it untested.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
import traceback
import warnings
from pathlib import Path

import pytest

from privlearn.exceptions import LargeDeltaWarning, PrivacyLeakWarning

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BENCH = ROOT / "bench" / "python"
CONTINUATION = "# continued"
# Modules of optional extras (``dask``): a block that needs one is skipped where it is missing,
# except under CI (``CI=true``), which installs the ``test`` extra and must run every block.
OPTIONAL_MODULES = {"dask", "distributed"}

# Blocks expected to fail as they stand (none now); a pending block runs normally as soon as its
# text changes.
PENDING: dict[str, str] = {}


def _blocks(text: str) -> list[tuple[int, str]]:
    """``(line number of the block's first code line, code)`` for each ```python block."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i + 1
            end = start
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            assert end < len(lines), f"README.md:{i + 1}: unterminated ```python block"
            blocks.append((start + 1, "\n".join(lines[start:end]) + "\n"))
            i = end
        i += 1
    return blocks


BLOCKS = _blocks(README.read_text(encoding="utf-8"))


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def _exec_block(line: int, code: str, namespace: dict) -> None:
    """Execute one block (its first code line is README line ``line``) in ``namespace``; an
    error fails the test with the README line that raised."""
    # Pad with blank lines so that tracebacks give README.md's own line numbers.
    compiled = compile("\n" * (line - 1) + code, str(README), "exec")
    # the Benchmarks section's example is a file of bench/python (it imports the harness)
    sys.path.insert(0, str(BENCH))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            warnings.simplefilter("error", LargeDeltaWarning)
            exec(compiled, namespace)
    except Exception as exc:
        root = (getattr(exc, "name", None) or "").partition(".")[0]
        if (
            isinstance(exc, ModuleNotFoundError)
            and root in OPTIONAL_MODULES
            and os.environ.get("CI", "").lower() != "true"
        ):
            pytest.skip(f"README.md:{line}: needs {root} (pip install '.[dask]')")
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(README)]
        where = frames[-1].lineno if frames else line
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        pytest.fail(
            f"README.md:{where}: the ```python block starting at line {line} raised "
            f"{type(exc).__name__}: {exc}\n{text[-3000:]}",
            pytrace=False,
        )
    finally:
        sys.path.remove(str(BENCH))


def _run(index: int) -> dict:
    """Run block ``index`` (and, for a continuation, the blocks it continues); return the
    namespace it leaves."""
    line, code = BLOCKS[index]
    if code.lstrip().startswith(CONTINUATION):
        assert index > 0, f"README.md:{line}: the first block cannot be a continuation"
        namespace = _run(index - 1)
    else:
        namespace = {"__name__": "__readme__"}
    _exec_block(line, code, namespace)
    return namespace


def test_a_failing_block_names_its_readme_line() -> None:
    with pytest.raises(pytest.fail.Exception, match=r"README\.md:43: .*line 41 raised ValueError"):
        _exec_block(41, "x = 1\ny = 2\nraise ValueError('boom')\n", {})
    # a PrivacyLeakWarning is an error in a README block
    code = "import warnings\nfrom privlearn.exceptions import PrivacyLeakWarning\n"
    code += "warnings.warn('leak', PrivacyLeakWarning)\n"
    with pytest.raises(pytest.fail.Exception, match=r"README\.md:12: .*PrivacyLeakWarning"):
        _exec_block(10, code, {})


def test_readme_has_its_python_blocks() -> None:
    assert len(BLOCKS) >= 12, f"found only {len(BLOCKS)} ```python blocks in README.md"
    for line, code in BLOCKS:
        ast.parse(code, filename=f"README.md:{line}")  # a syntax error names its block


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[f"line{line}" for line, _ in BLOCKS])
def test_readme_block_runs(index: int, data_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRIVLEARN_DATA", str(data_home))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    line, code = BLOCKS[index]
    reason = PENDING.get(_digest(code))
    if reason is not None:
        try:
            _run(index)
        except pytest.fail.Exception:
            pytest.xfail(f"README.md:{line}: {reason}")
        pytest.fail(f"README.md:{line}: the pending block runs now: drop its PENDING entry")
    _run(index)


def _gallery_pattern() -> str:
    """``filename_pattern`` of ``sphinx_gallery_conf`` in docs/conf.py, read without running it."""
    tree = ast.parse((ROOT / "docs" / "conf.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and any(getattr(t, "id", None) == "sphinx_gallery_conf" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            conf = {
                k.value: v for k, v in zip(node.value.keys, node.value.values)
                if isinstance(k, ast.Constant)
            }  # fmt: skip
            pattern = conf.get("filename_pattern")
            assert isinstance(pattern, ast.Constant), "filename_pattern must be a literal"
            return pattern.value
    raise AssertionError("docs/conf.py defines no sphinx_gallery_conf")


def test_docs_build_runs_every_example() -> None:
    """sphinx-gallery executes a script when ``re.search(filename_pattern, path)`` matches
    (its ``ignore_pattern`` only filters further); every example must match, and
    tests/test_docs.py must check each one's built page."""
    pattern = _gallery_pattern()
    examples = sorted((ROOT / "docs" / "examples").glob("*.py"))
    assert any(p.name == "plot_tabular_recipe.py" for p in examples)
    for path in examples:
        assert re.search(pattern, f"docs/examples/{path.name}"), (
            f"{path.name} does not match filename_pattern {pattern!r}: the docs build would "
            "show it without running it"
        )
    test_docs = (ROOT / "tests" / "test_docs.py").read_text(encoding="utf-8")
    assert "def test_docs_build_gallery_example" in test_docs
    assert 'glob("plot_*.py")' in test_docs
    assert all(p.name.startswith("plot_") for p in examples)
