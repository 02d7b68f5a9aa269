"""The benchmark harness (bench/python/harness.py): interleaving, statistics, records, writers.

Fast: no benchmark is run; the contenders return fixed :class:`harness.Partial` seconds so the
medians, quartiles and ratios are exact.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "python"


@pytest.fixture(scope="module")
def harness():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("harness")
    finally:
        sys.path.remove(str(BENCH))


def test_compare_interleaves_and_alternates(harness) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []
    contenders = {k: (lambda k=k: calls.append(k)) for k in ("a", "b", "c")}
    cmp = harness.compare(contenders, repeats=3, warmup=1)
    # warm-up once each, then round robin with the order reversed every other round
    assert calls == ["a", "b", "c"] + ["a", "b", "c"] + ["c", "b", "a"] + ["a", "b", "c"]
    assert all(len(t.times) == 3 for t in cmp.timings.values())


def test_compare_statistics_and_ratios(harness) -> None:  # type: ignore[no-untyped-def]
    def seq(values: list[float]):  # type: ignore[no-untyped-def]
        it = iter(values)
        return lambda: harness.Partial(next(it), "v")

    cmp = harness.compare(
        {"base": seq([2.0, 4.0, 6.0, 8.0, 10.0]), "fast": seq([1.0, 1.0, 2.0, 3.0, 5.0])},
        repeats=5,
        warmup=0,
        baseline="base",
    )
    base, fast = cmp["base"], cmp["fast"]
    assert base.median == 6.0 and fast.median == 2.0
    assert base.quartiles == (4.0, 8.0) and base.iqr == 4.0
    assert fast.value == "v"
    assert cmp.ratios() == {"base": 1.0, "fast": pytest.approx(1 / 3)}
    assert cmp.speedup("fast") == pytest.approx(3.0)
    # per-round ratios 1/2, 1/4, 2/6, 3/8, 5/10: their median, not the ratio of medians (1/3)
    assert cmp.paired("fast") == pytest.approx(3 / 8)
    assert cmp.paired("base", over="fast") == pytest.approx(8 / 3)
    d = cmp.as_dict()
    assert d["timings"]["base"]["median_s"] == 6.0 and d["timings"]["base"]["iqr_s"] == 4.0
    json.dumps(d)  # JSON-ready


def test_compare_groups_enter_around_once_per_group(harness) -> None:  # type: ignore[no-untyped-def]
    entered: list[tuple[int, str]] = []

    class Ctx:
        def __init__(self, rep: int, key: str):
            entered.append((rep, key))

        def __enter__(self) -> None:
            return None

        def __exit__(self, *exc: object) -> None:
            return None

    names = ["quiet|1", "quiet|2", "load|1", "load|2"]
    cmp = harness.compare(
        {k: (lambda: None) for k in names},
        repeats=2,
        warmup=0,
        group=lambda k: k.split("|")[0],
        around=Ctx,
    )
    assert entered == [(0, "quiet"), (0, "load"), (1, "load"), (1, "quiet")]
    assert all(len(t.times) == 2 for t in cmp.timings.values())


def test_compare_calibrates_inner_calls(harness) -> None:  # type: ignore[no-untyped-def]
    n = [0]

    def tiny() -> None:
        n[0] += 1

    cmp = harness.compare({"tiny": tiny}, repeats=2, warmup=0, min_sample_s=1e-3)
    t = cmp["tiny"]
    assert t.inner > 1 and len(t.times) == 2
    assert n[0] == 1 + 2 * t.inner  # one calibrating call, then 2 samples of `inner` calls


def test_compare_rejects_bad_arguments(harness) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="baseline"):
        harness.compare({"a": lambda: None}, repeats=1, baseline="b")
    with pytest.raises(ValueError, match="repeats"):
        harness.compare({"a": lambda: None}, repeats=0)


def test_compare_cpu_clock_counts_only_this_threads_cpu_time(harness) -> None:  # type: ignore[no-untyped-def]
    import time

    def sleeper() -> None:  # wall time without CPU time
        time.sleep(0.05)

    def spinner() -> None:  # CPU time on the calling thread
        t0 = time.thread_time()
        while time.thread_time() - t0 < 0.02:
            pass

    contenders = {"sleep": sleeper, "spin": spinner}
    cpu = harness.compare(contenders, repeats=2, warmup=0, clock="cpu")
    wall = harness.compare(contenders, repeats=2, warmup=0)
    assert cpu.clock == "cpu" and cpu.as_dict()["clock"] == "cpu" and wall.clock == "wall"
    assert cpu["sleep"].median < 0.025 <= 0.05 <= wall["sleep"].median  # the sleep is not CPU
    assert cpu["spin"].median >= 0.02 and wall["spin"].median >= 0.02
    # a Partial's seconds are taken as they are, whatever the clock
    part = harness.compare({"p": lambda: harness.Partial(3.0)}, repeats=1, warmup=0, clock="cpu")
    assert part["p"].median == 3.0
    with pytest.raises(ValueError, match="clock"):
        harness.compare(contenders, repeats=1, clock="gpu")


def test_cli_clock_option_on_request(harness) -> None:  # type: ignore[no-untyped-def]
    assert harness.cli("doc", "demo", clock=True).parse_args([]).clock == "wall"
    assert harness.cli("doc", "demo", clock=True).parse_args(["--clock", "cpu"]).clock == "cpu"
    assert not hasattr(harness.cli("doc", "demo").parse_args([]), "clock")
    with pytest.raises(SystemExit):
        harness.cli("doc", "demo", clock=True).parse_args(["--clock", "gpu"])


def test_machine_record(harness) -> None:  # type: ignore[no-untyped-def]
    m = harness.machine()
    for key in ("cpu_model", "cpu_count", "loadavg_start", "git_commit", "threads", "peers"):
        assert key in m
    assert "numpy" in m["peers"] and "OMP_NUM_THREADS" in m["threads"]
    harness.finish(m, 0.5)
    assert "loadavg_end" in m and m["background_load_cores"] == 0.5
    json.dumps(m)


def test_readme_row_is_replaced_or_appended(harness, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    readme = tmp_path / "README.md"
    harness.update_readme(readme, "| `x` | one |", "x")
    harness.update_readme(readme, "| `y` | two |", "y")
    harness.update_readme(readme, "| `x` | three |", "x")
    lines = readme.read_text().splitlines()
    assert lines.count("| `x` | three |") == 1 and "| `x` | one |" not in lines
    assert lines.index("| `x` | three |") < lines.index("| `y` | two |")
    assert lines[0] == "# Benchmark results"


def test_cli_quick_writes_to_scratch(harness, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(harness, "SCRATCH", tmp_path / "scratch")
    args = harness.cli("doc", "demo").parse_args(["--quick"])
    out = harness.out_dir(args)
    assert out == tmp_path / "scratch" and args.reps == 5
    path = harness.publish({"bench": "demo"}, out, "demo", "| `demo` | r |")
    assert json.loads(path.read_text()) == {"bench": "demo"}
    assert "| `demo` | r |" in (out / "README.md").read_text()
    args = harness.cli("doc", "demo").parse_args(["--out", str(tmp_path / "o"), "--reps", "2"])
    assert harness.out_dir(args) == tmp_path / "o" and args.reps == 2


def test_cli_omit_leaves_options_out(harness) -> None:  # type: ignore[no-untyped-def]
    p = harness.cli("doc", "demo", omit=("reps", "out"))
    args = p.parse_args(["--quick"])
    assert args.quick and not hasattr(args, "reps") and not hasattr(args, "out")
    with pytest.raises(SystemExit):
        p.parse_args(["--reps", "2"])


def test_stopwatch_and_limited(harness) -> None:  # type: ignore[no-untyped-def]
    with harness.stopwatch() as sw:
        inside = sw.elapsed()
    assert sw.seconds is not None and 0.0 <= inside <= sw.seconds
    assert sw.cpu_seconds is not None and sw.cpu_seconds >= 0.0
    call = harness.limited(lambda: 42, threads=1, per=4.0)
    part = call()
    assert isinstance(part, harness.Partial) and part.value == 42 and part.seconds >= 0.0
    # compare() counts the Partial's seconds (the time divided by `per`)
    cmp = harness.compare({"x": harness.limited(lambda: 7, per=1e9)}, repeats=2, warmup=0)
    assert cmp["x"].value == 7 and cmp["x"].median < 1e-6


def _child_ok(a: int, b: int) -> int:
    return a + b


def _child_raises() -> None:
    raise ValueError("bad input")


def _child_sleeps() -> None:
    import time

    time.sleep(30)


def test_in_child_value_error_and_timeout(harness) -> None:  # type: ignore[no-untyped-def]
    ok = harness.in_child(_child_ok, 2, 3, imports=("json",))
    assert ok["value"] == 5 and ok["seconds"] >= 0.0
    bad = harness.in_child(_child_raises)
    assert bad["error"].startswith("ValueError: bad input") and "value" not in bad
    slow = harness.in_child(_child_sleeps, limit_s=0.5)
    assert slow == {"error": "timeout > 0.5 s"}


def test_formatting_and_worst(harness) -> None:  # type: ignore[no-untyped-def]
    assert harness.fmt_rate(2.5e6) == "2.50 M/s" and harness.fmt_rate(1234.0) == "1.2 k/s"
    assert harness.fmt_rate(12.0) == "12 /s" and harness.fmt_rate(3e6, "B/s") == "3.00 MB/s"
    assert harness.fmt_seconds(0.0123) == "12.3 ms" and harness.fmt_seconds(2.0) == "2.00 s"
    assert harness.fmt_seconds(None) == "n/a"
    assert harness.worst([3.0, 1.0, 2.0]) == 1.0 and harness.worst([3.0, 1.0], max) == 3.0
    assert harness.worst([3.0, None]) is None and harness.worst([]) is None


def test_benchdata_split_subsample_and_kdd_columns(harness) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    benchdata = importlib.import_module("benchdata")
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10)
    Xa, ya, Xb, yb = benchdata.split(X, y, 0.3, seed=0)
    assert len(yb) == 3 and sorted([*ya, *yb]) == list(range(10))
    assert list(ya) == sorted(ya) and np.array_equal(Xa[:, 0], 2 * ya)
    assert np.array_equal(benchdata.split(X, y, 0.3, seed=0)[3], yb)  # seeded
    idx = benchdata.subsample(100, 10, seed=1)
    assert len(set(idx)) == 10 and list(idx) == sorted(idx)
    names = [*benchdata.KDD_PUBLIC, *benchdata.KDD_WIDE]
    benchdata.check_kdd_columns(names)
    with pytest.raises(RuntimeError, match="count"):
        benchdata.check_kdd_columns(names[1:])


def test_readme_example_benchmark_runs(harness, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The 'new benchmark' example of bench/README.md (and the top-level README) runs and
    writes its JSON (with the machine record) and its README row."""
    import re

    root = BENCH.parents[1]
    found = re.search(r"```python\n(.*?)```", (root / "bench" / "README.md").read_text(), re.S)
    assert found is not None
    code = found.group(1)
    assert code in (root / "README.md").read_text()  # the two copies agree
    namespace: dict = {"__name__": "bench_dot"}
    exec(compile(code, "bench_dot.py", "exec"), namespace)  # noqa: S102 - our own docs
    namespace["main"](["--quick", "--reps", "2", "--out", str(tmp_path)])
    report = json.loads((tmp_path / "dot.json").read_text())
    assert report["timings"]["numpy"]["reps"] == 2 and report["baseline"] == "loop"
    assert "loadavg_end" in report["machine"] and "git_commit" in report["machine"]
    assert "| `dot` | numpy " in (tmp_path / "README.md").read_text()


def test_git_helper(harness, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    top = harness.git(harness.REPO, "rev-parse", "--show-toplevel")
    if top is None:  # not a git checkout (e.g. an unpacked sdist): nothing to compare
        pytest.skip("not a git checkout")
    assert Path(top).resolve() == harness.REPO.resolve()
    assert harness.git_commit().split("-")[0] == harness.git(
        harness.REPO, "rev-parse", "--short", "HEAD"
    )
    assert harness.git(tmp_path / "missing", "status") is None  # a failure is None, not a raise


def test_fmt_opt_and_script_child(harness, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert harness.fmt_opt(1.23456, ".2f") == "1.23" and harness.fmt_opt(None, ".2f") == "-"
    assert harness.fmt_opt(None, ".2f", missing="n/a") == "n/a"
    script = tmp_path / "child.py"
    script.write_text(
        "import json, os, sys\n"
        "spec = json.loads(sys.argv[2])\n"
        "if spec.get('fail'):\n"
        "    sys.exit('boom')\n"
        "print('noise')\n"
        "print(json.dumps({'x': spec['x'] * 2, 'path': os.environ.get('PYTHONPATH')}))\n"
    )
    out = harness.script_child(script, {"x": 21}, pythonpath=tmp_path)
    assert out == {"x": 42, "path": str(tmp_path.resolve())}
    with pytest.raises(RuntimeError, match="boom"):
        harness.script_child(script, {"fail": True})


def test_tree_label_names_no_machine_path(harness, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert harness.tree_label(harness.REPO / "python" / "privlearn") == "python/privlearn"
    assert harness.tree_label(tmp_path / "old" / "python") == "external:old/python"
    assert harness.tree_label(None) is None


def test_core_shim_drops_keywords_an_older_build_lacks(harness) -> None:  # type: ignore[no-untyped-def]
    class Old:
        def scd_train_csr(self, *args, **kw):  # type: ignore[no-untyped-def]
            """DP stochastic coordinate descent on CSR rows."""
            return args, kw

        other = 3

    class New(Old):
        def scd_train_csr(self, *args, **kw):  # type: ignore[no-untyped-def]
            """... check_structure=False skips the check ..."""
            return args, kw

    old = harness.CoreShim(Old())
    assert old.scd_train_csr(1, a=2, check_structure=False) == ((1,), {"a": 2})
    assert old.other == 3
    new = harness.CoreShim(New())
    assert new.scd_train_csr(1, check_structure=False) == ((1,), {"check_structure": False})


def test_core_shim_materialises_a_csr_view_for_an_older_build(harness) -> None:  # type: ignore[no-untyped-def]
    """An older build without CSR views gets the matrix the view stands for (what its fits
    made), not the view's keywords dropped; a build with views gets the view itself."""
    import numpy as np
    import scipy.sparse as sp

    from privlearn._design_matrix import RowView

    class Old:
        def sgd_train_csr(self, *args, **kw):  # type: ignore[no-untyped-def]
            """Private mini-batch SGD on CSR rows."""
            return args, kw

    class New:
        def sgd_train_csr(self, *args, **kw):  # type: ignore[no-untyped-def]
            """... check_structure ... the view (row_scale[i] * X[i], intercept) ..."""
            return args, kw

    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    scale = np.array([0.5, 1.0])
    args = (X.data, X.indices, X.indptr, 3, "y")
    (data, indices, indptr, n_cols, y), kw = harness.CoreShim(Old()).sgd_train_csr(
        *args, check_structure=False, row_scale=scale, intercept=0.25
    )
    M = RowView(X, scale, 0.25).materialize()
    assert kw == {} and n_cols == 4 and y == "y" and indices.dtype == indptr.dtype == np.int64
    assert np.array_equal(sp.csr_matrix((data, indices, indptr), (2, 4)).toarray(), M.toarray())
    got = harness.CoreShim(New()).sgd_train_csr(*args, row_scale=scale, intercept=0.25)
    assert got[1]["intercept"] == 0.25 and got[0][3] == 3
