"""Reproduction of Song, Chaudhuri, Sarwate 2013 (``privlearn reproduce song13``).

The full reproduction takes minutes; these tests run its computation on small synthetic
settings (and one small KDDCup99 smoke test) and check the files, the CSV contents, the
seeding, the centralised optimum and the claim checks.
"""

from __future__ import annotations

import csv
import math
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize

from privlearn import cli
from privlearn._losses import objective
from privlearn.exceptions import PrivacyLeakWarning
from privlearn.experiments import REGISTRY, figures, runs, song13, tables
from privlearn.linear import sgd_train
from privlearn.random import key_from_seed

try:
    import matplotlib  # noqa: F401

    HAVE_MPL = True
except ImportError:  # pragma: no cover - matplotlib comes with the test extra
    HAVE_MPL = False

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, list[Path]]:
    """All three rates, b in {1, 5, 10}, 3 runs, n = 2,000 synthetic points."""
    out = tmp_path_factory.mktemp("song13")
    written = song13.reproduce(
        out,
        datasets=("synthetic",),
        batch_sizes=(10, 1, 5),
        repeats=3,
        sizes={"synthetic": 2000},
        path_points=20,
        n_jobs=2,
        plots=HAVE_MPL,
        progress=False,
    )
    return out, written


def test_files_are_written(tiny):
    out, written = tiny
    names = {p.name for p in written}
    expected = {
        "final_objective_runs.csv",
        "final_objective.csv",
        "paths.csv",
        "optimum.csv",
        "summary.md",
    }
    assert expected <= names
    for p in written:
        assert p.parent == out and p.is_file() and p.stat().st_size > 0


@pytest.mark.skipif(not HAVE_MPL, reason="matplotlib not installed")
def test_figures_are_pngs(tiny):
    out, written = tiny
    pngs = sorted(p.name for p in written if p.suffix == ".png")
    assert pngs == [
        "fig1_objective_vs_samples.png",
        "fig2_objective_vs_batch_size.png",
        "fig3_learning_rates.png",
    ]
    for name in pngs:
        assert (out / name).read_bytes()[:8] == PNG_MAGIC


def test_run_csv_has_one_row_per_run(tiny):
    out, _ = tiny
    rows = _read_csv(out / "final_objective_runs.csv")
    assert list(rows[0]) == [
        "dataset",
        "rate",
        "batch_size",
        "mechanism",
        "run",
        "seed",
        "n_steps",
        "objective",
    ]
    # 3 rates x 3 batch sizes x 2 mechanisms x 3 runs
    assert len(rows) == 54
    keys = {(r["rate"], int(r["batch_size"]), r["mechanism"], int(r["run"])) for r in rows}
    assert len(keys) == 54
    assert {r["rate"] for r in rows} == set(song13.RATES)
    assert {r["mechanism"] for r in rows} == {"private", "non-private"}
    for r in rows:
        b = int(r["batch_size"])
        assert int(r["n_steps"]) == math.ceil(2000 / b)  # one pass of disjoint batches
        assert int(r["seed"]) == song13.simulation._run_seed("synthetic", b, int(r["run"]))
    # private and non-private runs share the seed (hence the permutation) ...
    seeds = {}
    for r in rows:
        seeds.setdefault((r["rate"], r["batch_size"], r["run"]), set()).add(r["seed"])
    assert all(len(s) == 1 for s in seeds.values())
    # ... and so do the learning rates (common random numbers)
    by_b_run = {}
    for r in rows:
        by_b_run.setdefault((r["batch_size"], r["run"]), set()).add(r["seed"])
    assert all(len(s) == 1 for s in by_b_run.values())


def test_every_final_objective_is_at_least_the_optimum(tiny):
    out, _ = tiny
    opt = _read_csv(out / "optimum.csv")
    assert [r["dataset"] for r in opt] == ["synthetic"]
    assert (int(opt[0]["n"]), int(opt[0]["d"])) == (2000, 5)
    assert float(opt[0]["grad_norm"]) < 1e-6
    best = float(opt[0]["objective"])
    for r in _read_csv(out / "final_objective_runs.csv"):
        assert float(r["objective"]) >= best - 1e-9
    summary = _read_csv(out / "final_objective.csv")
    assert len(summary) == 18
    for r in summary:
        assert float(r["optimum"]) == pytest.approx(best)
        assert float(r["std"]) >= 0 and int(r["n_runs"]) == 3


def test_one_run_recomputed_from_its_seed(tiny):
    """A row of the CSV is exactly sgd_train with the recorded seed, evaluated by objective()."""
    out, _ = tiny
    X, y, _ = song13.prepare_dataset("synthetic", 2000)
    rows = _read_csv(out / "final_objective_runs.csv")
    row = next(
        r
        for r in rows
        if r["rate"] == "10/sqrt(t)"
        and r["batch_size"] == "5"
        and r["mechanism"] == "private"
        and r["run"] == "2"
    )
    fit = sgd_train(
        X,
        y,
        key=key_from_seed(int(row["seed"])),
        mechanism="l2-laplace",
        learning_rate="inv_sqrt",
        eta0=10.0,
        alpha=1e-4,
        batch_size=5,
        epsilon=1.0,
        radius=1e4,
    )
    value = objective(X, y, fit.coef, "log_loss", 1e-4)[0]
    assert float(row["objective"]) == pytest.approx(value, rel=1e-10)


def test_paths_csv(tiny):
    out, _ = tiny
    rows = _read_csv(out / "paths.csv")
    assert list(rows[0]) == [
        "dataset",
        "rate",
        "batch_size",
        "mechanism",
        "step",
        "samples",
        "n_runs",
        "mean",
        "std",
    ]
    groups: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for r in rows:
        groups.setdefault((r["rate"], r["batch_size"], r["mechanism"]), []).append(r)
    assert len(groups) == 18
    finals = {
        (r["rate"], r["batch_size"], r["mechanism"]): float(r["mean"])
        for r in _read_csv(out / "final_objective.csv")
    }
    for key, path in groups.items():
        steps = [int(r["step"]) for r in path]
        b = int(key[1])
        assert steps[0] == 0 and steps == sorted(set(steps))
        assert steps[-1] == math.ceil(2000 / b)
        assert 15 <= len(path) <= 25  # about path_points = 20 recorded iterates
        assert float(path[0]["mean"]) == pytest.approx(math.log(2.0))  # w_0 = 0
        assert float(path[0]["std"]) == 0.0
        assert int(path[-1]["samples"]) == 2000
        assert float(path[-1]["mean"]) == pytest.approx(finals[key])


def test_summary_states_every_claim(tiny):
    out, _ = tiny
    text = (out / "summary.md").read_text(encoding="utf-8")
    assert "holds" in text and "± " in text
    for claim in song13.evaluate_claims(_tiny_result()):
        assert claim.name in text
        assert claim.verdict in text
    assert "synthetic" in text and "n=2000" in text


def _tiny_result() -> song13.Song13Result:
    return song13.simulate(
        datasets=("synthetic",),
        batch_sizes=(1, 5, 10),
        repeats=3,
        sizes={"synthetic": 2000},
        path_points=20,
        n_jobs=1,
        progress=False,
    )


def test_results_do_not_depend_on_threads_or_order(tiny):
    a = _tiny_result()
    b = song13.simulate(
        datasets=("synthetic",),
        batch_sizes=(10, 5, 1),
        repeats=3,
        sizes={"synthetic": 2000},
        path_points=20,
        n_jobs=2,
        progress=False,
    )
    assert a.paths.keys() == b.paths.keys()
    for key in a.paths:
        np.testing.assert_array_equal(a.paths[key][0], b.paths[key][0])
        np.testing.assert_array_equal(a.paths[key][1], b.paths[key][1])


def test_claims_on_a_constructed_result():
    """The checks follow their stated thresholds (numbers made up, not simulated)."""
    bs = [1, 5, 10, 50]
    res = song13.Song13Result(
        datasets=["mnist"],
        batch_sizes=bs,
        rates=["1/sqrt(t)", "10/sqrt(t)"],
        repeats=2,
        quick=True,
        sizes={"mnist": (100, 15)},
        optimum={"mnist": (0.1, 0.0)},
    )
    steps = np.array([0, 10])
    finals = {
        # (rate, b, mech): (run 1, run 2)
        ("1/sqrt(t)", 1, "private"): (1.0, 3.0),  # far (2.0 vs 0.2) and noisy
        ("1/sqrt(t)", 1, "non-private"): (0.2, 0.2001),
        ("1/sqrt(t)", 5, "private"): (0.3, 0.32),  # 55% above non-private
        ("1/sqrt(t)", 5, "non-private"): (0.2, 0.2),
        ("1/sqrt(t)", 10, "private"): (0.23, 0.23),  # 4.5% above: matches
        ("1/sqrt(t)", 10, "non-private"): (0.22, 0.22),
        ("1/sqrt(t)", 50, "private"): (0.5, 0.5),
        ("1/sqrt(t)", 50, "non-private"): (0.3, 0.3),
        ("10/sqrt(t)", 50, "private"): (0.6, 0.6),  # worse than 1/sqrt(t) at b = 50
    }
    for (rate, b, mech), vals in finals.items():
        obj = np.array([[math.log(2.0), v] for v in vals])
        res.paths[("mnist", rate, b, mech)] = (steps, obj)
    claims = song13.evaluate_claims(res)
    assert [c.verdict for c in claims] == [
        "holds",  # b=1 far and noisy (std 1.41 vs 7e-5 and vs 0 at b=10)
        "holds",  # b=10 within 10%
        "holds",  # best b = 10, intermediate
        "not evaluated",  # no synthetic / 1/(lambda t)
        "does not hold",  # 10/sqrt(t) not closer to the optimum
    ]


def test_centralized_optimum_matches_a_direct_minimisation():
    X, y, _ = song13.prepare_dataset("synthetic", 500)
    w, value, grad_norm = song13.centralized_optimum(X, y, 1e-2)

    def f(v):
        return objective(X, y, v, "log_loss", 1e-2)[0]

    direct = minimize(f, np.zeros(X.shape[1]), method="BFGS", options={"gtol": 1e-10})
    assert value == pytest.approx(direct.fun, rel=1e-9)
    np.testing.assert_allclose(w, direct.x, atol=1e-4)
    assert grad_norm < 1e-6


def test_non_private_sgd_reaches_the_optimum_on_the_paper_synthetic_set():
    """With 1/(lambda t) one non-private pass at b=10 over n=10,000 ends within 5% of the
    sklearn optimum (the paper's Fig. 2 'centralized' line), while private SGD stays above."""
    res = song13.simulate(
        datasets=("synthetic",),
        batch_sizes=(10,),
        rates=("1/(lambda t)",),
        repeats=2,
        path_points=10,
        progress=False,
    )
    opt = res.optimum["synthetic"][0]
    non_private = res.final("synthetic", "1/(lambda t)", 10, "non-private")
    private = res.final("synthetic", "1/(lambda t)", 10, "private")
    assert res.sizes["synthetic"] == (10_000, 5)
    assert np.all(non_private >= opt - 1e-9)
    assert np.all(non_private <= 1.05 * opt)
    assert np.all(private > 1.05 * opt)


def test_prepare_synthetic_is_deterministic_and_in_the_ball():
    X1, y1, note = song13.prepare_dataset("synthetic", 300)
    X2, y2, _ = song13.prepare_dataset("synthetic", 300)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert X1.shape == (300, 5) and set(np.unique(y1)) == {-1.0, 1.0}
    assert np.linalg.norm(X1, axis=1).max() <= 1.0
    assert "margin 0.001" in note
    with pytest.raises(ValueError, match="unknown data set"):
        song13.prepare_dataset("cifar", 10)


def test_missing_real_data_is_skipped_and_reported(tmp_path):
    written = song13.reproduce(
        tmp_path / "out",
        datasets=("mnist",),
        batch_sizes=(5,),
        repeats=1,
        data_home=tmp_path / "empty",
        plots=False,
        progress=False,
    )
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "**mnist**: NOT RUN" in summary
    assert "not evaluated" in summary
    assert len(_read_csv(tmp_path / "out" / "final_objective_runs.csv")) == 0
    assert not any(p.suffix == ".png" for p in written)


def test_kddcup99_smoke(require_data, tmp_path):
    home = require_data("kddcup99/kddcup.data_10_percent.gz")
    with warnings.catch_warnings():
        # the paper's data-derived feature scaling is reproduced on purpose: its
        # PrivacyLeakWarning is silenced inside prepare_dataset, never passed on
        warnings.simplefilter("error", PrivacyLeakWarning)
        X, y, note = song13.prepare_dataset("kddcup99", 3000, data_home=home)
    assert X.shape == (3000, 9)
    assert np.linalg.norm(X, axis=1).max() <= 1.0
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert "d=9" in note
    written = song13.reproduce(
        tmp_path,
        datasets=("kddcup99",),
        batch_sizes=(1, 10),
        rates=("1/sqrt(t)",),
        repeats=2,
        sizes={"kddcup99": 3000},
        path_points=10,
        data_home=home,
        plots=HAVE_MPL,
        progress=False,
    )
    rows = _read_csv(tmp_path / "final_objective_runs.csv")
    assert len(rows) == 8 and {r["dataset"] for r in rows} == {"kddcup99"}
    assert (tmp_path / "summary.md") in written
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "kddcup99" in summary and "NOT RUN" not in summary
    if HAVE_MPL:
        assert (tmp_path / "fig1_objective_vs_samples.png").read_bytes()[:8] == PNG_MAGIC
        assert not (tmp_path / "fig3_learning_rates.png").exists()  # needs the synthetic set


def test_mnist_preparation(require_data):
    home = require_data("mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # pixels use the public bound 255
        X, y, note = song13.prepare_dataset("mnist", 2000, data_home=home)
    assert X.shape == (2000, 15)
    assert np.linalg.norm(X, axis=1).max() <= 1.0
    assert 0.05 < np.mean(y == 1) < 0.2  # digit 1 is about 11% of MNIST
    assert "d=15" in note and "2000 training images" in note


def test_cli_lists_song13(capsys):
    assert cli.main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert "song13" in out and "Song, Chaudhuri, Sarwate 2013" in out
    assert REGISTRY["song13"].run is song13.run


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"privlearn\[experiments\]"):
        figures.require_matplotlib()
    with pytest.raises(ImportError, match=r"privlearn\[experiments\]"):
        song13.reproduce(Path("unused"), repeats=1, progress=False)


def test_common_helpers(tmp_path):
    assert runs.derive_seed("a", 1) == runs.derive_seed("a", 1)
    assert runs.derive_seed("a", 1) != runs.derive_seed("a", 2)
    assert 0 <= runs.derive_seed("x") < 2**64
    assert tables.mean_std([1.0, 3.0]) == (2.0, pytest.approx(math.sqrt(2.0)))
    assert tables.mean_std([5.0]) == (5.0, 0.0)
    # a single value (a quick run's one seed) shows no "± 0" spread
    assert tables.fmt_spread([7.0], 3) == "7" and tables.fmt_spread([6.0, 8.0], 3) == "7 ± 1.4"
    p = tables.write_csv(tmp_path / "t.csv", [{"a": 1, "b": 0.1}], ["a", "b"])
    assert p.read_text().splitlines() == ["a,b", "1,0.1"]
    table = tables.markdown_table(["x", "y"], [(1, "z")])
    assert table.splitlines() == ["| x | y |", "|---|---|", "| 1 | z |"]
    assert runs.parallel_map(lambda v: v * v, [3, 1, 2], n_jobs=2, progress=False) == [9, 1, 4]


def test_parallel_map_default_follows_the_core_thread_count():
    """``n_jobs=None`` runs as many threads as the core's default (``OMP_NUM_THREADS``; one in
    a pytest-xdist worker), not one per CPU (issue 32 item 4)."""
    import threading
    import time

    from privlearn.parallel import get_num_threads, thread_limit

    def threads_used(n_threads: int) -> int:
        seen: set[int] = set()
        barrier = threading.Barrier(n_threads, timeout=10)

        def fn(v: int) -> int:
            seen.add(threading.get_ident())
            if n_threads > 1 and v < n_threads:
                barrier.wait()  # the first n_threads items meet: they run at the same time
            time.sleep(0.001)
            return v

        with thread_limit(n_threads):
            assert get_num_threads() == n_threads
            assert runs.parallel_map(fn, list(range(8)), progress=False) == list(range(8))
        return len(seen)

    assert threads_used(1) == 1
    if (os.cpu_count() or 1) >= 2:
        assert threads_used(2) == 2


def test_shared_summary_helpers(tmp_path, capsys):
    """The files section and prepare_or_skip that dpscd and song13 share."""
    from privlearn.experiments.summary import files_section, prepare_or_skip

    lines = files_section({"fig1": tmp_path / "a.png"}, ["`x.csv`: rows"], ["not drawn"])
    assert lines == ["## Files", "", "- `a.png` (fig1)", "- `x.csv`: rows", "- not drawn", ""]

    skipped: dict[str, str] = {}
    assert prepare_or_skip("t", "ok", lambda: 7, skipped, progress=False) == 7
    assert skipped == {} and capsys.readouterr().out == ""

    def missing():
        raise FileNotFoundError(2, "No such file", str(tmp_path / "adult" / "adult.data"))

    assert prepare_or_skip("t", "adult", missing, skipped, tmp_path, progress=True) is None
    assert skipped["adult"].startswith("missing adult/adult.data under ")
    out = capsys.readouterr().out
    assert out.startswith("[t] preparing adult\n[t] adult: NOT RUN (missing adult/adult.data")


def test_quick_run_settings_and_note(monkeypatch, tmp_path):
    """``--quick`` (issue 32): fewer permutations and recorded iterates, every data set and
    batch size of the paper; the full run passes no settings; the summary says what was cut."""
    from privlearn.experiments.song13.summary import _quick_note

    seen: list[dict] = []
    monkeypatch.setattr(song13, "reproduce", lambda out, **kw: seen.append(kw) or [])
    REGISTRY["song13"].run(tmp_path, True)
    REGISTRY["song13"].run(tmp_path, False)
    quick, full = seen
    assert full == {}
    assert quick == dict(repeats=3, path_points=30, quick=True)
    assert song13.QUICK_PATH_POINTS < song13.PATH_POINTS
    res = song13.Song13Result(
        datasets=["kddcup99"], batch_sizes=[1, 5], rates=["1/sqrt(t)"], repeats=3, quick=True,
        sizes={"kddcup99": (50_000, 9)}, path_points=30,
    )  # fmt: skip
    note = " ".join(_quick_note(res))
    assert note.startswith("**Quick mode**: 3 permutations per setting instead of the paper's 20")
    assert "about 30 recorded iterates per curve instead of 150" in note
