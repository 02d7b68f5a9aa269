"""Reproduction of Chaturvedi, Nguyen & Xu (2021), "Differentially private k-means clustering
via exponential mechanism and max cover", Section 7, Figure 1: the k-means objective against
the number of centres k in {2, 4, 8, 16, 32, 64} at epsilon = 1, delta = 1e-6, mean and
standard deviation over 5 runs, for

- max cover (:class:`privlearn.cluster.DPKMeans`, ``method="maxcover"``),
- Balcan et al. 2017 (ours, ``method="balcan"``),
- not in the paper: the LSH-tree coreset (``method="lsh"``, privlearn's default since issue
  21), shown next to the paper's methods so that the figure says where the default stands,
- diffprivlib's ``KMeans`` (DP Lloyd; an installed peer, skipped when absent),
- non-private Lloyd (scikit-learn ``KMeans``, k-means++, 10 iterations),

on (a) the synthetic mixture of 64 Gaussians (50,000 points in R^100; public radius
Lambda = 11 = centre norm 10 + offset 1) and (b) MNIST, 70,000 x 784 raw pixels
(Lambda = 255 sqrt(784)).

The table and the figure add a one-centre reference (k = 1, non-private): the cost of the data
at its exact mean, the best any single centre can do, computed like the other rows. Where a
private method's cost is above it, private k-means does not help over the trivial one-centre
solution; ``summary.md`` lists, per data set and private method, the k at which it is
below.

``--quick`` subsamples both data sets to 10,000 rows, uses k in {2, 8, 32} and 2 runs
(about a minute on 2 cores). The paper reports that max cover beats Balcan et al. on both data
sets; ``summary.md`` states whether that holds here (the comparison is max cover against
Balcan et al. only, both requested explicitly by ``method=``, never by the estimator's default),
and, on a separate line, where the LSH-tree coreset stands against the better of the two and
against the one-centre reference (:func:`lsh_standing`).

The data-set size is treated as private (the estimators' default): each private fit spends
:data:`~privlearn.accounting.SIZE_EPSILON_FRACTION` of epsilon on a noisy row count and plans
its schedule (max cover: radii and picks per radius; Balcan et al.: grid levels) from it, the
rest of the budget being split as before (the LSH-tree coreset's schedule does not depend on
the size: it spends nothing on a count). ``kmeans_runs.csv`` records the planning size and
the schedule of every private run next to the schedule the exact size would give, and
``summary.md`` says in which runs they differ. The reported cost is an evaluation, computed
explicitly from the released centres and the training data (outside the guarantee).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privlearn.accounting import SIZE_EPSILON_FRACTION
from privlearn.experiments import register
from privlearn.experiments.claims import Claim, claim_verdict
from privlearn.experiments.figures import (
    fit_legend,
    fit_suptitle,
    fit_title,
    new_figure,
    require_matplotlib,
    save_figure,
)
from privlearn.experiments.runs import derive_seed, parallel_map
from privlearn.experiments.summary import missing_data_reason
from privlearn.experiments.tables import (
    fmt_mean_std,
    markdown_table,
    mean_std,
    write_csv,
    write_text,
)

__all__ = ["KMeansResult", "diffprivlib_kmeans", "lsh_standing", "reproduce", "run", "simulate"]

KS = (2, 4, 8, 16, 32, 64)
QUICK_KS = (2, 8, 32)
METHODS = ("maxcover", "balcan", "lsh", "diffprivlib", "lloyd")
#: The paper's two private methods (its Figure 1 claim compares them); each is requested by an
#: explicit ``method=``: the estimator's default is ``"lsh"``.
PAPER_METHODS = ("maxcover", "balcan")
LABELS = {
    "maxcover": "max cover (ours)",
    "balcan": "Balcan et al. 2017",
    "lsh": "LSH-tree coreset (privlearn default)",
    "diffprivlib": "diffprivlib DP-Lloyd",
    "lloyd": "Lloyd (non-private)",
}
EPSILON, DELTA = 1.0, 1e-6
#: The one-centre baseline: the data mean, the exact minimiser of the k = 1 cost.
ONE_CENTRE = "one_centre"
ONE_CENTRE_LABEL = "one centre (exact data mean, non-private reference)"
#: Panel titles: the data that ran.
_DATA_TITLES = {"synthetic": "64 Gaussians (synthetic)", "mnist": "MNIST raw pixels"}
_FULL_ROWS = {"synthetic": 50_000, "mnist": 70_000}


def diffprivlib_kmeans() -> Any:
    """diffprivlib's ``KMeans`` class, or ``None`` when diffprivlib is not installed (imported
    through :func:`~privlearn.experiments.peers.import_diffprivlib`)."""
    from privlearn.experiments.peers import PeerUnavailable, import_diffprivlib

    try:
        return import_diffprivlib().models.KMeans
    except PeerUnavailable:
        return None


_MNIST_TEST_ONLY_NOTE = (
    "mnist: the data folder lacks the MNIST training files, so only the 10,000 test images "
    "embedded in privlearn ran (a SUBSET of the paper's 70,000; `privlearn datasets download "
    "mnist` for all of them)"
)


def _mnist_test_only(data_home: Any) -> bool:
    """Without an explicit data folder and without the MNIST training files, the test images
    (embedded in the package) stand in for the 70,000 rows."""
    from privlearn.data import data_source

    if data_home is not None:
        return False
    train = ("mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz")
    test = ("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz")
    return any(data_source(f)[0] is None for f in train) and all(
        data_source(f)[0] is not None for f in test
    )


def _load(dataset: str, n: int | None, data_home: Any) -> tuple[np.ndarray, float, np.ndarray]:
    """``(X, Lambda, bounds)`` (bounds: per-feature public box for diffprivlib)."""
    if dataset == "synthetic":
        from privlearn.data.synthetic import make_gaussian_mixture

        X, _ = make_gaussian_mixture(
            50_000 if n is None else n, seed=derive_seed("kmeans", "synthetic")
        )
        return X, 11.0, np.array([-11.0, 11.0])
    if dataset == "mnist":
        from privlearn.data import load_mnist

        if _mnist_test_only(data_home):
            X, _ = load_mnist("test")  # the embedded copy (named in the summary)
        else:
            X, _ = load_mnist("all", data_home)
        if n is not None and n < X.shape[0]:
            rng = np.random.default_rng(derive_seed("kmeans", "mnist-subsample"))
            X = X[np.sort(rng.choice(X.shape[0], n, replace=False))]
        return (
            np.ascontiguousarray(X, dtype=np.float64),
            255.0 * math.sqrt(784.0),
            np.array([0.0, 255.0]),
        )
    raise ValueError(f"unknown data set {dataset!r}")


def _schedule(method: str, k: int, n: int, p: int) -> str:
    """The schedule a planning size ``n`` gives (max cover: radii x picks; Balcan: levels)."""
    from privlearn.cluster import default_picks, default_radii
    from privlearn.cluster.balcan import default_levels

    if method == "maxcover":
        return f"{len(default_radii(n))} radii x {default_picks(k, n)} picks"
    return f"{default_levels(n, p)} levels"


def _fit_cost(
    X: np.ndarray, radius: float, bounds: np.ndarray, method: str, k: int, seed: int
) -> tuple[float, dict[str, Any]]:
    """``(cost, schedule info)``: the k-means cost of ``X`` at the fitted centres, computed
    explicitly here (an evaluation on the training data, not part of any release)."""
    from privlearn.cluster import DPKMeans
    from privlearn.cluster._assignment import kmeans_cost

    info: dict[str, Any] = {"planning_n": "", "schedule": "", "schedule_exact_n": ""}
    if method == "lsh":  # the size plans nothing here: no count, no planning_n
        model = DPKMeans(k, EPSILON, DELTA, method="lsh", radius=radius, seed=seed, n_threads=1)
        model.fit(X)
        info["schedule"] = f"tree {model.tree_levels_} levels, {model.n_candidates_} cells"
        return kmeans_cost(X, model.cluster_centers_), info
    if method in PAPER_METHODS:
        model = DPKMeans(k, EPSILON, DELTA, method=method, radius=radius, seed=seed, n_threads=1)
        model.fit(X)
        planning_n = model.dataset_size_.value
        info = {
            "planning_n": planning_n,
            "schedule": _schedule(method, k, planning_n, model.proj_dim_),
            "schedule_exact_n": _schedule(method, k, X.shape[0], model.proj_dim_),
        }
        return kmeans_cost(X, model.cluster_centers_), info
    if method == "lloyd":
        from sklearn.cluster import KMeans

        km = KMeans(k, init="k-means++", n_init=1, max_iter=10, random_state=seed % 2**31)
        return kmeans_cost(X, km.fit(X).cluster_centers_), info
    if method == "diffprivlib":
        cls = diffprivlib_kmeans()
        lower = np.full(X.shape[1], bounds[0])
        upper = np.full(X.shape[1], bounds[1])
        model = cls(k, epsilon=EPSILON, bounds=(lower, upper), random_state=seed % 2**31)
        return kmeans_cost(X, model.fit(X).cluster_centers_), info
    raise ValueError(f"unknown method {method!r}")


def one_centre_cost(X: np.ndarray) -> float:
    """The k-means cost of the single best centre: ``X`` at its mean (non-private).

    The mean minimises ``sum_i ||x_i - c||**2`` over all centres ``c``, so no one-centre
    solution, private or not, costs less: a private k-means whose cost is above this line does
    worse than the trivial one-centre solution. Computed with the same
    :func:`~privlearn.cluster._assignment.kmeans_cost` as every other row (an evaluation on the
    training data, outside any guarantee).
    """
    from privlearn.cluster._assignment import kmeans_cost

    return kmeans_cost(X, X.mean(axis=0, keepdims=True))


@dataclass
class KMeansResult:
    """Costs of every (data set, method, k, run)."""

    datasets: list[str]
    ks: list[int]
    runs: int
    quick: bool
    n_rows: dict[str, int] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    #: Data set -> what stood in for it (e.g. the embedded MNIST test images).
    notes: dict[str, str] = field(default_factory=dict)
    #: Data set -> cost of the one-centre baseline (:data:`ONE_CENTRE`).
    one_centre: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    def costs(self, dataset: str, method: str, k: int) -> list[float]:
        return [
            r["cost"]
            for r in self.rows
            if r["dataset"] == dataset and r["method"] == method and r["k"] == k
        ]


def simulate(
    *,
    datasets: tuple[str, ...] = ("synthetic", "mnist"),
    ks: tuple[int, ...] = KS,
    runs: int = 5,
    n: int | None = None,
    methods: tuple[str, ...] = METHODS,
    data_home: Any = None,
    n_jobs: int | None = None,
    quick: bool = False,
    progress: bool = True,
) -> KMeansResult:
    """Fit every method ``runs`` times for every k on every data set (``n``: subsample size)."""
    start = time.perf_counter()
    res = KMeansResult(list(datasets), list(ks), runs, quick)
    methods = tuple(methods)
    if "diffprivlib" in methods:
        from privlearn.experiments.peers import PeerUnavailable, import_diffprivlib

        try:
            import_diffprivlib()
        except PeerUnavailable as exc:  # skipped, and the summary says why
            methods = tuple(m for m in methods if m != "diffprivlib")
            res.skipped.append(f"diffprivlib ({exc})")
    for dataset in list(datasets):
        try:
            X, radius, bounds = _load(dataset, n, data_home)
        except FileNotFoundError as exc:  # a missing real data set: reported, not fatal
            res.datasets.remove(dataset)
            res.skipped.append(f"{dataset}: NOT RUN ({missing_data_reason(exc, data_home)})")
            continue
        res.n_rows[dataset] = X.shape[0]
        if dataset == "mnist" and _mnist_test_only(data_home):
            res.notes[dataset] = _MNIST_TEST_ONLY_NOTE
        res.one_centre[dataset] = one_centre_cost(X)
        jobs = [(m, k, r) for k in ks for m in methods for r in range(runs)]

        def one(
            job: tuple[str, int, int],
            X: np.ndarray = X,
            radius: float = radius,
            bounds: np.ndarray = bounds,
            dataset: str = dataset,
        ) -> dict[str, Any]:
            m, k, r = job
            seed = derive_seed("kmeans", dataset, m, k, r)
            t = time.perf_counter()
            cost, info = _fit_cost(X, radius, bounds, m, k, seed)
            return {
                "dataset": dataset,
                "method": m,
                "k": k,
                "run": r,
                "cost": cost,
                "seconds": time.perf_counter() - t,
                **info,
            }

        res.rows += parallel_map(
            one, jobs, n_jobs=n_jobs, desc=f"kmeans {dataset}", progress=progress
        )
    res.seconds = time.perf_counter() - start
    return res


def evaluate_claims(res: KMeansResult) -> list[Claim]:
    """The paper's claim: max cover attains a lower k-means objective than Balcan et al."""
    judged: dict[str, bool] = {}
    details = []
    for dataset in res.datasets:
        ratios, wins = [], 0
        for k in res.ks:
            a, b = res.costs(dataset, "maxcover", k), res.costs(dataset, "balcan", k)
            if a and b:
                ratios.append(np.mean(a) / np.mean(b))
                wins += int(np.mean(a) < np.mean(b))
        if ratios:
            gm = float(np.exp(np.mean(np.log(ratios))))
            judged[dataset] = gm < 1.0
            details.append(
                f"{dataset}: max cover lower at {wins} of {len(ratios)} k; geometric-mean cost "
                f"ratio max cover / Balcan = {gm:.3f}"
            )
    return [
        Claim(
            "max cover beats Balcan et al.",
            "Section 7, Results and Figure 1",
            "geometric mean over k of mean cost(max cover) / mean cost(Balcan) < 1, per data set",
            claim_verdict(judged, "data sets"),
            details,
        )
    ]


def lsh_standing(res: KMeansResult) -> str:
    """One line, outside the paper's claim: where the LSH-tree coreset (the estimator's default)
    stands, per data set, against the better of the paper's two private methods at each k and
    against the one-centre reference; computed from the results (empty when it did not run)."""
    parts = []
    for dataset in res.datasets:
        ratios, wins, below, ks = [], 0, 0, 0
        base = res.one_centre.get(dataset)
        for k in res.ks:
            lsh = res.costs(dataset, "lsh", k)
            if not lsh:
                continue
            ks += 1
            if base is not None:
                below += int(np.mean(lsh) < base)
            paper = [np.mean(c) for m in PAPER_METHODS if (c := res.costs(dataset, m, k))]
            if paper:
                ratios.append(np.mean(lsh) / min(paper))
                wins += int(np.mean(lsh) < min(paper))
        if not ks:
            continue
        text = f"{dataset}: "
        if ratios:
            gm = float(np.exp(np.mean(np.log(ratios))))
            text += (
                f"lower than the better of max cover and Balcan et al. at {wins} of {len(ratios)} "
                f"k (geometric-mean cost ratio {gm:.3f})"
            )
        if base is not None:
            text += (", " if ratios else "") + f"below one centre at {below} of {ks} k"
        parts.append(text)
    if not parts:
        return ""
    return f"{LABELS['lsh']}: " + "; ".join(parts) + "."


def _summary_rows(res: KMeansResult) -> list[dict[str, Any]]:
    out = []
    for dataset in res.datasets:
        if dataset in res.one_centre:
            out.append(
                {
                    "dataset": dataset,
                    "method": ONE_CENTRE,
                    "k": 1,
                    "mean_cost": res.one_centre[dataset],
                    "std_cost": 0.0,
                    "runs": 1,
                }
            )
        for method in METHODS:
            for k in res.ks:
                c = res.costs(dataset, method, k)
                if c:
                    mean, std = mean_std(c)
                    out.append(
                        {
                            "dataset": dataset,
                            "method": method,
                            "k": k,
                            "mean_cost": mean,
                            "std_cost": std,
                            "runs": len(c),
                        }
                    )
    return out


def _size_note(res: KMeansResult) -> str:
    """Where the numbers depend on planning with a noisy row count instead of the exact size."""
    private = [r for r in res.rows if r["method"] in PAPER_METHODS]
    text = (
        "Data-set size: private. Each private fit spends "
        f"{SIZE_EPSILON_FRACTION:.0%} of epsilon on an exact discrete-Laplace row count and "
        "plans its schedule (max cover: radii x picks per radius; Balcan et al.: grid levels) "
        f"from it; the other mechanisms share the remaining {1 - SIZE_EPSILON_FRACTION:.0%}, so "
        "every private cost differs from a run that treats the size as public (slightly more "
        "noise)."
    )
    if any(r["method"] == "lsh" for r in res.rows):
        text += (
            " The LSH-tree coreset spends nothing on a count: its tree schedule does not depend "
            "on the size (its runs' schedule column gives the tree it grew)."
        )
    if not private:
        return text
    changed = [r for r in private if r["schedule"] != r["schedule_exact_n"]]
    if not changed:
        return text + (
            f" In all {len(private)} private runs the noisy count gave the same schedule as the "
            "exact size would, so no number changes through the schedule."
        )
    where = sorted({f"{r['dataset']} {r['method']} k={r['k']}" for r in changed})
    return text + (
        f" In {len(changed)} of {len(private)} private runs the noisy count gave another "
        f"schedule than the exact size would ({'; '.join(where)}): their costs change through "
        "the schedule as well (see planning_n, schedule and schedule_exact_n in kmeans_runs.csv)."
    )


def _one_centre_line(res: KMeansResult, dataset: str) -> str:
    """For each private method, the k at which its mean cost is below the one-centre cost."""
    base = res.one_centre.get(dataset)
    if base is None:
        return ""
    parts = []
    for m in METHODS:
        if m == "lloyd":
            continue
        ks = [k for k in res.ks if res.costs(dataset, m, k)]
        if not ks:
            continue
        below = [k for k in ks if np.mean(res.costs(dataset, m, k)) < base]
        where = "every k" if below == ks else ("no k" if not below else f"k in {below}")
        parts.append(f"{LABELS[m]} at {where}")
    if not parts:
        return ""
    return f"Below the one-centre cost {base:.4g}: " + "; ".join(parts) + "."


def _data_title(res: KMeansResult, dataset: str) -> str:
    """Panel title: the data that ran, with its size (and whether it is a subsample)."""
    n = res.n_rows[dataset]
    full = _FULL_ROWS.get(dataset)
    size = f"n = {n:,}" + (f" of {full:,}" if full and n < full else "")
    if dataset in res.notes:
        size += " (embedded test images only)"
    return f"{_DATA_TITLES.get(dataset, dataset)}, {size}"


def _figure(res: KMeansResult, summary: list[dict[str, Any]], path: Path) -> Path:
    """Section 7, Figure 1: objective vs k per data set, with the one-centre baseline."""
    one = len(res.datasets) == 1
    fig, axes = new_figure(
        1, len(res.datasets), width=5.5 if one else 4.6, height=3.6 if one else 3.2
    )
    for ax, dataset in zip(axes.ravel(), res.datasets):
        for method in METHODS:
            pts = [
                (s["k"], s["mean_cost"], s["std_cost"])
                for s in summary
                if s["dataset"] == dataset and s["method"] == method
            ]
            if pts:
                k, mu, sd = map(np.array, zip(*pts))
                ax.errorbar(k, mu, yerr=sd, marker="o", capsize=3, label=LABELS[method])
        if dataset in res.one_centre:
            ax.axhline(res.one_centre[dataset], color="k", ls="--", lw=0.9)
            ax.plot([1], [res.one_centre[dataset]], "k*--", ms=9, lw=0.9, label=ONE_CENTRE_LABEL)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks([1, *res.ks])
        ax.set_xticklabels([str(k) for k in (1, *res.ks)])
        ax.tick_params(axis="x", which="minor", bottom=False)
        ax.set_xlabel("k (number of centres)")
        ax.set_ylabel("k-means objective")
        fit_title(ax, _data_title(res, dataset), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: labels[i] == ONE_CENTRE_LABEL)
    fit_legend(fig, [handles[i] for i in order], [labels[i] for i in order])
    runs = f"{res.runs} run" + ("s, mean ± std" if res.runs > 1 else "")
    delta = f"{DELTA:.0e}".replace("e-0", "e-")  # 1e-6, not 1e-06
    fit_suptitle(
        fig, f"Fig. 1: k-means objective vs k, epsilon = {EPSILON:g}, delta = {delta} ({runs})"
    )
    return save_figure(fig, path)


def write_outputs(res: KMeansResult, out_dir: Path, *, plots: bool = True) -> list[Path]:
    """Write ``kmeans_runs.csv``, ``kmeans_summary.csv``, ``fig1_kmeans_objective.png`` and
    ``summary.md``; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [
        write_csv(
            out_dir / "kmeans_runs.csv",
            res.rows,
            [
                "dataset",
                "method",
                "k",
                "run",
                "cost",
                "seconds",
                "planning_n",
                "schedule",
                "schedule_exact_n",
            ],
        ),
    ]
    summary = _summary_rows(res)
    written.append(
        write_csv(
            out_dir / "kmeans_summary.csv",
            summary,
            ["dataset", "method", "k", "mean_cost", "std_cost", "runs"],
        )
    )
    if plots and res.datasets:
        written.append(_figure(res, summary, out_dir / "fig1_kmeans_objective.png"))
    claims = evaluate_claims(res)
    lines = [
        "# DP k-means: Chaturvedi, Nguyen & Xu 2021, Figure 1",
        "",
        (
            f"{'QUICK run: ' if res.quick else ''}epsilon = {EPSILON}, delta = {DELTA}; {res.runs} "
            f"runs per point (mean ± std); k in {res.ks}; rows: "
            + ", ".join(f"{d} {n:,}" for d, n in res.n_rows.items())
            + f"; {res.seconds:.0f} s."
        ),
        "",
    ]
    if res.skipped or res.notes:
        lines += [f"- {s}" for s in (*res.notes.values(), *res.skipped)] + [""]
    lines += [_size_note(res), ""]
    lines += [
        f"Reference: {ONE_CENTRE_LABEL}, the k = 1 row: the cost of the data at its mean, the "
        "exact minimiser of the one-centre cost, so no one-centre solution, private or not, "
        "costs less (a private one-centre estimate can only cost more). "
        "Computed like every other row: the k-means objective of the training data at the "
        "centres. A private method above this line does worse than one centre.",
        "",
    ]
    for dataset in res.datasets:
        methods = [
            m for m in METHODS if any(s["method"] == m and s["dataset"] == dataset for s in summary)
        ]
        header = ["k"] + [LABELS[m] for m in methods]
        rows = []
        if dataset in res.one_centre:
            # Lloyd with k = 1 is the data mean after one step: the baseline sits in its column.
            rows.append(
                ["1 (one centre)"]
                + [f"{res.one_centre[dataset]:.4g}" if m == "lloyd" else "" for m in methods]
            )
        for k in res.ks:
            row: list[Any] = [k]
            for m in methods:
                c = res.costs(dataset, m, k)
                row.append(fmt_mean_std(*mean_std(c)) if c else "")
            rows.append(row)
        lines += [f"## {dataset}: {_data_title(res, dataset)}", ""]
        lines += [markdown_table(header, rows), ""]
        lines += [_one_centre_line(res, dataset), ""]
    lines += ["## Claims", ""]
    for c in claims:
        lines += [f"- **{c.name}** ({c.source}; criterion: {c.criterion}): {c.verdict}."]
        lines += [f"  - {d}" for d in c.details]
    standing = lsh_standing(res)
    if standing:
        lines += [f"- Beyond the paper: {standing}"]
    written.append(write_text(out_dir / "summary.md", "\n".join(lines) + "\n"))
    return written


def reproduce(
    out_dir: Path,
    *,
    quick: bool = False,
    plots: bool = True,
    data_home: Any = None,
    n_jobs: int | None = None,
    progress: bool = True,
) -> list[Path]:
    """Run :func:`simulate` (paper settings, or the quick ones) and :func:`write_outputs`."""
    if plots:
        require_matplotlib()
    if quick:
        res = simulate(
            ks=QUICK_KS,
            runs=2,
            n=10_000,
            data_home=data_home,
            n_jobs=n_jobs,
            quick=True,
            progress=progress,
        )
    else:
        res = simulate(data_home=data_home, n_jobs=n_jobs, progress=progress)
    return write_outputs(res, out_dir, plots=plots)


@register(
    "kmeans",
    "Chaturvedi, Nguyen, Xu 2021",
    "DP k-means by grid max cover vs Balcan et al. 2017 (and privlearn's LSH-tree coreset), "
    "diffprivlib and Lloyd: objective vs k on a 64-Gaussian mixture and MNIST (Fig. 1)",
)
def run(out_dir: Path, quick: bool) -> list[Path]:
    """Reproduce Section 7, Figure 1 (``quick``: 10,000 rows, k in {2, 8, 32}, 2 runs)."""
    return reproduce(out_dir, quick=quick)
