"""Every reproduction figure fits its canvas and names the data that ran (issue 15, item 3).

Each figure a reproduction saves is caught through ``figures.FIGURE_HOOKS`` and checked on the
Figure object (not on the image): after a draw, the window extent of every title, axis label,
tick label, text and legend lies inside the figure (1-pixel tolerance), and the suptitle, the
figure legends and the panel titles do not overlap one another.

The quick reproductions run on the data found under ``PRIVLEARN_DATA`` (what is missing is
skipped, as in ``privlearn reproduce all --quick``); dpscd, whose quick run takes minutes, runs
its quick layout (the five tasks of Fig. 1, Figs. 2 and 3) on tiny sizes. The narrow layouts
that appear when real data are missing (one panel per row) run on an empty data folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from privlearn import cli  # noqa: E402
from privlearn.experiments import REGISTRY, dpscd, figures, kmeans, song13, summary  # noqa: E402

TOL = 1.0  # pixels


# ---- the check ------------------------------------------------------------------------------


def _extents(fig: Any, renderer: Any) -> Iterator[tuple[str, Any]]:
    """``(description, window extent)`` of every text and legend drawn on ``fig``.

    An axis (tick labels, its label and offset text) counts through ``get_tightbbox``, which
    covers only the ticks that are drawn.
    """

    def text(what: str, artist: Any) -> Iterator[tuple[str, Any]]:
        if artist.get_visible() and artist.get_text().strip():
            yield f"{what} {artist.get_text()!r}", artist.get_window_extent(renderer)

    if fig._suptitle is not None:
        yield from text("suptitle", fig._suptitle)
    for t in fig.texts:
        if t is not fig._suptitle:
            yield from text("figure text", t)
    for leg in fig.legends:
        yield "figure legend", leg.get_window_extent(renderer)
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        for title in (ax.title, ax._left_title, ax._right_title):
            yield from text(f"axes {i} title", title)
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            box = axis.get_tightbbox(renderer)
            if box is not None:
                yield f"axes {i} {name} axis ({axis.label.get_text()!r})", box
        for t in ax.texts:
            yield from text(f"axes {i} text", t)
        if ax.get_legend() is not None:
            yield f"axes {i} legend", ax.get_legend().get_window_extent(renderer)


def layout_problems(fig: Any) -> list[str]:
    """What lies outside ``fig`` or overlaps another headline text (empty: all good)."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    problems = []
    headline = []
    for what, box in _extents(fig, renderer):
        if box.x0 < -TOL or box.y0 < -TOL or box.x1 > width + TOL or box.y1 > height + TOL:
            problems.append(
                f"{what} outside the figure: extent ({box.x0:.1f}, {box.y0:.1f}, "
                f"{box.x1:.1f}, {box.y1:.1f}) vs {width:.0f} x {height:.0f}"
            )
        if what.startswith(("suptitle", "figure legend")) or " title " in what:
            headline.append((what, box))
    for i, (wa, ba) in enumerate(headline):
        for wb, bb in headline[i + 1 :]:
            dx = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
            dy = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
            if dx > TOL and dy > TOL:
                problems.append(f"{wa} overlaps {wb}")
    return problems


class Saved:
    """What the figure hook recorded: per saved file, its layout problems and axes titles."""

    def __init__(self) -> None:
        self.problems: dict[str, list[str]] = {}
        self.titles: dict[str, list[str]] = {}
        self.suptitles: dict[str, str] = {}
        self.legends: dict[str, list[str]] = {}

    def __call__(self, fig: Any, path: Path) -> None:
        key = f"{path.parent.name}/{path.name}"
        self.problems[key] = layout_problems(fig)
        self.titles[key] = [ax.get_title() for ax in fig.axes if ax.get_visible()]
        self.suptitles[key] = fig._suptitle.get_text() if fig._suptitle else ""
        labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
        for ax in fig.axes:
            if ax.get_legend() is not None:
                labels += [t.get_text() for t in ax.get_legend().get_texts()]
        self.legends[key] = labels

    def assert_clean(self) -> None:
        assert self.problems, "no figure was saved"
        bad = {k: v for k, v in self.problems.items() if v}
        assert not bad, "\n".join(f"{k}: {p}" for k, v in bad.items() for p in v)


@pytest.fixture
def saved(monkeypatch: pytest.MonkeyPatch) -> Saved:
    record = Saved()
    monkeypatch.setattr(figures, "FIGURE_HOOKS", [record])
    return record


# ---- the check itself can fail ----------------------------------------------------------------


def test_the_check_finds_a_clipped_suptitle_a_wide_legend_and_overlapping_titles():
    fig = Figure(figsize=(4.5, 3.5), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax in axes:
        ax.plot([0, 1], [0, 1], label="a long legend entry")
        ax.set_title("a panel title far wider than its own column")
    fig.suptitle("a suptitle that is much wider than this small figure of four and a half in")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=1)
    problems = layout_problems(fig)
    assert any(p.startswith("suptitle") and "outside" in p for p in problems)
    assert any("title" in p and "overlaps" in p for p in problems)
    fig2 = Figure(figsize=(4.5, 3.5), layout="constrained")
    ax = fig2.subplots()
    for i in range(6):
        ax.plot([0, 1], [i, i], label=f"entry number {i}")
    fig2.legend(loc="outside lower center", ncols=6)
    assert any(p.startswith("figure legend") for p in layout_problems(fig2))


def test_the_layout_helpers_fix_those_figures():
    from privlearn.experiments.figures import fit_legend, fit_suptitle, fit_title

    fig = Figure(figsize=(4.5, 3.5), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax in axes:
        for i in range(6):
            ax.plot([0, 1], [i, i], label=f"entry number {i}")
        fit_title(ax, "a panel title far wider than its own column")
    fit_suptitle(fig, "a suptitle that is much wider than this small figure of four and a half in")
    fit_legend(fig, *axes[0].get_legend_handles_labels())
    assert layout_problems(fig) == []
    assert fig.legends[0]._ncols < 6 and "\n" in fig._suptitle.get_text()


# ---- the reproductions ------------------------------------------------------------------------


@pytest.mark.slow  # a whole `privlearn reproduce NAME --quick` each
@pytest.mark.parametrize("name", ["song13", "kmeans", "quadgrad", "impact"])
def test_quick_reproduction_figures_fit(
    name, saved, tmp_path, data_home, require_data, monkeypatch
):
    """``privlearn reproduce NAME --quick`` on the available data: every figure fits. The
    quadratic-gradient figures are drawn from the HELR sets only (no synthetic stand-in): a data
    folder without them (a fresh clone, the no-data CI run) reads the copies embedded in the
    package, and the summary says so."""
    monkeypatch.setenv("PRIVLEARN_DATA", str(data_home))
    cli._load_reproductions()
    written = REGISTRY[name].run(tmp_path / name, True)
    pngs = sorted(p.name for p in written if p.suffix == ".png")
    assert pngs and sorted(k.split("/")[1] for k in saved.problems) == pngs
    saved.assert_clean()
    # what the quick run cut is said at the top of every summary (issue 32, item 3)
    summary = (tmp_path / name / "summary.md").read_text(encoding="utf-8")
    quick_note = [line for line in summary.splitlines() if line.startswith("**Quick mode**: ")]
    assert quick_note and " instead of " in quick_note[0], name
    if name == "impact":  # the real-data table (Adult: the data folder or the embedded copy)
        summary = (tmp_path / name / "summary.md").read_text(encoding="utf-8")
        assert "## Real data: UCI Adult" in summary and "| bayes cross |" in summary
    if name == "quadgrad":
        summary = (tmp_path / name / "summary.md").read_text(encoding="utf-8")
        embedded = not (Path(data_home) / "helr" / "lbw.txt").is_file()
        assert ("| embedded |" in summary) == embedded
        assert "- **lbw**: NOT RUN" not in summary


def _dpscd_quick_layout(out: Path, data_home: Any, tasks: tuple[str, ...]) -> list[Path]:
    """The quick run's figures (tasks, epsilons, Figs. 2-3) on tiny sizes and grids."""
    tiny = dpscd.Grid(
        batch_sizes=(10, 100),
        scd_clips=(0.05,),
        sgd_clips=(1.0,),
        learning_rates=(0.3,),
        fig3_batch_sizes=(10, 100),
        fig3_clips=(0.1, 1.0),
    )
    return dpscd.reproduce(
        out,
        tasks=tasks,
        runs=2,
        epochs=2,
        grids={ds: tiny for ds in ("msd", "phishing", "adult")},
        sizes={"msd": 800, "phishing": 800, "adult": 800},
        fig3_runs=1,
        data_home=data_home,
        quick=True,
        progress=False,
    )


@pytest.mark.slow
def test_dpscd_figures_fit_and_name_the_stand_in(saved, tmp_path, data_home):
    written = _dpscd_quick_layout(tmp_path / "dpscd", data_home, dpscd.PAPER_TASKS)
    assert {p.name for p in written if p.suffix == ".png"} == {
        "fig1_privacy_utility.png",
        "fig2_convergence.png",
        "fig3_batch_size.png",
    }
    saved.assert_clean()
    stand_in = not dpscd.find_msd_files(data_home)
    msd = "YearPredictionMSD-like (synthetic)" if stand_in else "YearPredictionMSD"
    every_title = [t for titles in saved.titles.values() for t in titles]
    msd_titles = [t for t in every_title if "MSD" in t.replace("\n", " ")]
    assert len(msd_titles) == 1 + 2 + 1  # Fig. 1 panel, Fig. 2 panels, Fig. 3
    assert all(msd in t.replace("\n", " ") for t in msd_titles), msd_titles
    summary = (tmp_path / "dpscd" / "summary.md").read_text(encoding="utf-8")
    assert f"### msd-ridge ({msd}, ridge regression, test MSE)" in summary
    if stand_in:
        assert "on YearPredictionMSD " not in summary
        assert "per epoch (YearPredictionMSD)" not in summary


def test_narrow_layouts_when_real_data_are_missing(saved, tmp_path):
    """On an empty data folder only the synthetic sets run: one-panel rows, same titles."""
    empty = tmp_path / "empty"
    empty.mkdir()
    song13.reproduce(
        tmp_path / "song13",
        batch_sizes=(1, 10),
        repeats=2,
        sizes={"synthetic": 1500},
        path_points=20,
        data_home=empty,
        progress=False,
    )
    res = kmeans.simulate(
        ks=(2, 8), runs=1, n=1500, methods=("maxcover", "lloyd"), data_home=empty, progress=False
    )
    kmeans.write_outputs(res, tmp_path / "kmeans")
    _dpscd_quick_layout(tmp_path / "dpscd", empty, ("msd-ridge",))
    assert {
        "song13/fig1_objective_vs_samples.png",
        "kmeans/fig1_kmeans_objective.png",
        "dpscd/fig1_privacy_utility.png",
    } <= set(saved.problems)
    saved.assert_clean()
    # the long suptitles did not fit one line of the one-column figures: they were wrapped
    assert "\n" in saved.suptitles["song13/fig1_objective_vs_samples.png"]
    assert "\n" in saved.suptitles["dpscd/fig1_privacy_utility.png"]


# ---- summaries: one short line per missing data set -------------------------------------------


def test_missing_data_is_one_short_line(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    song13.reproduce(
        tmp_path / "song13",
        datasets=("mnist", "kddcup99"),
        batch_sizes=(5,),
        repeats=1,
        data_home=empty,
        plots=False,
        progress=False,
    )
    dpscd.reproduce(
        tmp_path / "dpscd",
        tasks=("phishing-svm", "adult-svm"),
        epsilons=(1.0,),
        runs=1,
        epochs=1,
        data_home=empty,
        plots=False,
        progress=False,
    )
    expected = {
        "song13": {
            "mnist": "mnist/train-images-idx3-ubyte.gz",
            "kddcup99": "kddcup99/kddcup.data_10_percent.gz",
        },
        "dpscd": {"phishing": "phishing/phishing.txt.gz", "adult": "adult/adult.data"},
    }
    for name, files in expected.items():
        summary = (tmp_path / name / "summary.md").read_text(encoding="utf-8")
        for dataset, rel in files.items():
            line = (
                f"- **{dataset}**: NOT RUN (missing {rel} under {empty}; run "
                f"`privlearn datasets download {dataset}`)."
            )
            assert line in summary.splitlines(), summary
        # the loader's long advice is not repeated per data set
        assert "environment variable" not in summary and "Pass data_home" not in summary


def test_missing_data_reason_without_a_known_file(tmp_path):
    exc = FileNotFoundError(2, "not found", str(tmp_path / "idash" / "idash.csv"))
    assert summary.missing_data_reason(exc, tmp_path) == f"missing idash/idash.csv under {tmp_path}"
    assert summary.missing_data_reason(FileNotFoundError("no file\nmore"), tmp_path) == "no file"
    elsewhere = FileNotFoundError(2, "not found", "/elsewhere/x.csv")
    assert summary.missing_data_reason(elsewhere, tmp_path) == "missing /elsewhere/x.csv"


def test_not_run_lines_and_files_section():
    assert summary.not_run_lines({"uis": "missing helr/uis.txt", "idash": "no file"}) == [
        "- **uis**: NOT RUN (missing helr/uis.txt).",
        "- **idash**: NOT RUN (no file).",
    ]
    assert summary.not_run_lines({}) == []
    # the same bullets data_section ends with
    assert summary.data_section([], {"uis": "x"})[2:3] == summary.not_run_lines({"uis": "x"})
    files = summary.files_section({}, {"runs.csv": "every run", "fig.png": "Figure 1"})
    assert files == ["## Files", "", "- `runs.csv`: every run", "- `fig.png`: Figure 1", ""]


# ---- k-means: the one-centre baseline ---------------------------------------------------------


def test_kmeans_one_centre_baseline(saved, tmp_path):
    res = kmeans.simulate(
        datasets=("synthetic",),
        ks=(2, 8),
        runs=2,
        n=2000,
        methods=("maxcover", "lloyd"),
        progress=False,
    )
    X, _, _ = kmeans.data._load("synthetic", 2000, None)
    centred = X - X.mean(axis=0)
    base = float(np.sum(centred * centred))
    assert res.one_centre["synthetic"] == pytest.approx(base, rel=1e-9)
    # the mean is the best single centre: moving it costs n ||shift||^2 more
    shifted = kmeans.one_centre_cost(X) + X.shape[0] * 0.25
    from privlearn.cluster._assignment import kmeans_cost

    assert kmeans_cost(X, X.mean(axis=0, keepdims=True) + 0.5 / np.sqrt(X.shape[1])) == (
        pytest.approx(shifted, rel=1e-9)
    )
    # non-private Lloyd with k >= 2 is below one centre on the 64-Gaussian mixture
    assert max(res.costs("synthetic", "lloyd", 8)) < base
    out = tmp_path / "kmeans"
    kmeans.write_outputs(res, out)
    csv_text = (out / "kmeans_summary.csv").read_text().splitlines()
    assert any(line.startswith("synthetic,one_centre,1,") for line in csv_text)
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"| 1 (one centre) |  | {base:.4g} |" in summary
    assert f"Below the one-centre cost {base:.4g}: max cover (ours) at " in summary
    saved.assert_clean()
    assert kmeans.ONE_CENTRE_LABEL in saved.legends["kmeans/fig1_kmeans_objective.png"]


def test_kmeans_figure_adds_the_lsh_default_beside_the_paper_claim(saved, tmp_path, monkeypatch):
    """The LSH-tree coreset (the estimator's default) is drawn and tabled next to the paper's
    methods, the paper's claim still compares max cover with Balcan et al. (each fitted with an
    explicit ``method=``), and a separate line says where LSH stands, computed from the costs."""
    import functools

    from privlearn.cluster import DPKMeans

    requested = []
    real_init = DPKMeans.__init__

    @functools.wraps(real_init)  # sklearn reads the parameters from the signature
    def spy(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        requested.append(kwargs.get("method"))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(DPKMeans, "__init__", spy)
    res = kmeans.simulate(
        datasets=("synthetic",),
        ks=(2, 8),
        runs=1,
        n=1500,
        methods=("maxcover", "balcan", "lsh", "lloyd"),
        progress=False,
    )
    monkeypatch.setattr(DPKMeans, "__init__", real_init)
    assert sorted(requested) == sorted(["maxcover", "balcan", "lsh"] * 2)  # never the default
    for row in res.rows:
        assert (row["planning_n"] != "") == (row["method"] in kmeans.PAPER_METHODS)
        if row["method"] == "lsh":
            assert row["schedule"].startswith("tree ")
    out = tmp_path / "kmeans"
    kmeans.write_outputs(res, out)
    legend = saved.legends["kmeans/fig1_kmeans_objective.png"]
    assert kmeans.LABELS["lsh"] in legend and kmeans.ONE_CENTRE_LABEL in legend
    assert "non-private reference" in kmeans.ONE_CENTRE_LABEL
    saved.assert_clean()
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "| LSH-tree coreset (privlearn default) |" in summary
    claim = kmeans.evaluate_claims(res)[0]
    assert claim.name == "max cover beats Balcan et al." and "LSH" not in " ".join(claim.details)
    # the standing line follows the costs: rebuild it from them
    lsh = [np.mean(res.costs("synthetic", "lsh", k)) for k in (2, 8)]
    best = [
        min(np.mean(res.costs("synthetic", m, k)) for m in ("maxcover", "balcan")) for k in (2, 8)
    ]
    wins = sum(a < b for a, b in zip(lsh, best))
    below = sum(c < res.one_centre["synthetic"] for c in lsh)
    gm = float(np.exp(np.mean(np.log(np.array(lsh) / np.array(best)))))
    line = kmeans.lsh_standing(res)
    assert f"at {wins} of 2 k (geometric-mean cost ratio {gm:.3f})" in line
    assert f"k (geometric-mean cost ratio {gm:.3f}), below one centre at {below} of 2 k" in line
    assert f"- Beyond the paper: {line}" in summary
    # a run without LSH has no such line
    res.rows = [r for r in res.rows if r["method"] != "lsh"]
    assert kmeans.lsh_standing(res) == ""
