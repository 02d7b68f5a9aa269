"""Private regression on public regression sets (issue 22, item 7): privlearn's default
regressors against diffprivlib's LinearRegression, the mean predictor and non-private least
squares, at epsilon 0.5 / 1 / 3.

Data sets (no download, no hand scaling of the target):

- ``diabetes``: scikit-learn's bundled ``load_diabetes`` (442 x 10, raw target: a disease
  progression score between 25 and 346). Its features come already centred and scaled by
  scikit-learn; their per-column range is treated as PUBLIC (say so: it is read from the
  bundled file, as a user would read a published schema). The target's public bound is
  ``(0, 400)``, a declared domain range of the score.
- ``msd``: :func:`privlearn.data.make_msd_like` (YearPredictionMSD-shaped, 90 features,
  release years in 1922..2011), 20,000 rows (``quick``: 8,000). Features ``N(0, 1)`` get the
  public per-feature range ``(-4, 4)`` (clipped); the target's public bound is ``(1900, 2020)``.

Features: public per-row maps only (no privacy cost), so every row has L2 norm <= 1.
diabetes: every column from its public range onto ``[-1, 1] / sqrt(d)``. msd: clipped to
``(-4, 4)``, divided by ``1.5 sqrt(d)`` (typical row norm 2/3) and projected onto the unit ball
(dividing by ``4 sqrt(d)`` instead leaves rows of norm 1/4 and a Hessian of eigenvalues about
``1/1400``, which a private SGD cannot climb in 20 epochs). Every contender sees the same rows;
diffprivlib gets ``bounds_X`` = the public per-feature range of those rows and ``bounds_y``
equal to privlearn's declared target bound (the fair user's inputs).

Contenders (held-out 25% split per seed, R^2 on it):

- ``dpsgd`` / ``dpscd``: ``DPSGDRegressor`` / ``DPSCDRegressor`` with every parameter at its
  default except ``epsilon``, ``seed`` and the declared ``target_bounds``;
- ``dpsgd_privbound`` / ``dpscd_privbound``: the same without ``target_bounds``: the bound is
  estimated privately with ``target_fraction`` of epsilon (for information: on 330 rows the
  exponential mechanism cannot find the quartiles in a range of 1e9 at epsilon <= 1);
- ``diffprivlib``: ``diffprivlib.models.LinearRegression(epsilon, bounds_X, bounds_y)``
  (pure DP; imported only through :func:`privlearn.experiments.peers.import_diffprivlib`);
- ``mean``: the PRIVATE mean predictor: the Laplace mean of ``clip(y)`` in the public target
  bound, with epsilon split evenly between a noisy sum and a noisy count (a fair private
  baseline; the training mean is printed in the notes for reference);
- ``ols``: non-private scikit-learn ``LinearRegression`` (epsilon column ignored).

Run: ``PYTHONPATH=python python bench/python/workflow_regression.py [--quick] [--tune]``.
``--tune`` runs the small grids that chose the regressors' defaults (validation split of the
training part, epsilon 1 and 3).
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import harness
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from privlearn.data.synthetic import make_msd_like
from privlearn.linear import DPSCDRegressor, DPSGDRegressor

TARGET_BOUNDS = {"diabetes": (0.0, 400.0), "msd": (1900.0, 2020.0)}


def _unit_rows(X: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Each column from its PUBLIC range onto ``[-1, 1] / sqrt(d)`` (clipped): rows of norm
    <= 1."""
    d = X.shape[1]
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    return np.clip((X - mid) / half, -1.0, 1.0) / math.sqrt(d)


def _projected_rows(X: np.ndarray, bound: float, radius: float) -> np.ndarray:
    """Clip each feature to the PUBLIC range ``(-bound, bound)``, divide by
    ``radius sqrt(d)`` and project each row onto the unit ball: public per-row maps (no
    privacy cost); every feature then lies in ``+- bound / (radius sqrt(d))``."""
    d = X.shape[1]
    Z = np.clip(X, -bound, bound) / (radius * math.sqrt(d))
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    return Z / np.maximum(1.0, norms)


#: Public per-feature half-range of the rows each data set gives the models (diffprivlib's
#: ``bounds_X``).
FEATURE_BOUND: dict[str, float] = {}


def datasets(quick: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{name: (X, y)}`` with rows already in the unit ball (public maps only)."""
    X, y = load_diabetes(return_X_y=True)
    # the bundled features' ranges, treated as public (scikit-learn's published scaling)
    diabetes = (_unit_rows(X, X.min(axis=0), X.max(axis=0)), y.astype(np.float64))
    FEATURE_BOUND["diabetes"] = 1.0 / math.sqrt(X.shape[1])
    n = 8_000 if quick else 20_000
    Xm, ym = make_msd_like(n, seed=2022)
    # N(0, 1) features: public range (-4, 4); x / (1.5 sqrt(d)) has a typical row norm of 2/3,
    # the few longer rows are projected onto the unit ball
    msd = (_projected_rows(Xm, 4.0, 1.5), ym)
    FEATURE_BOUND["msd"] = 4.0 / (1.5 * math.sqrt(Xm.shape[1]))
    return {"diabetes": diabetes, "msd": msd}


def _private_mean(y: np.ndarray, bounds: tuple[float, float], eps: float, seed: int) -> float:
    """Laplace mean of ``clip(y)``: a noisy sum (sensitivity ``max |bound|``) over a noisy
    count (sensitivity 1), ``eps / 2`` each, clamped into the bound (benchmark baseline)."""
    rng = np.random.default_rng(10_000 + seed)
    lo, hi = bounds
    c = np.clip(y, lo, hi)
    total = c.sum() + rng.laplace(scale=max(abs(lo), abs(hi)) / (eps / 2))
    count = max(1.0, len(c) + rng.laplace(scale=1 / (eps / 2)))
    return float(np.clip(total / count, lo, hi))


def _contenders(name: str, d: int) -> dict[str, Callable[[float, int], Any]]:
    bounds = TARGET_BOUNDS[name]
    out: dict[str, Callable[[float, int], Any]] = {
        "dpsgd": lambda e, s: DPSGDRegressor(epsilon=e, seed=s, target_bounds=bounds),
        "dpscd": lambda e, s: DPSCDRegressor(epsilon=e, seed=s, target_bounds=bounds),
        "dpsgd_privbound": lambda e, s: DPSGDRegressor(epsilon=e, seed=s),
        "dpscd_privbound": lambda e, s: DPSCDRegressor(epsilon=e, seed=s),
    }
    try:
        from privlearn.experiments.peers import PeerUnavailable, import_diffprivlib

        dpl = import_diffprivlib()
        b = FEATURE_BOUND[name]

        def diffprivlib(e: float, s: int) -> Any:
            return dpl.models.LinearRegression(
                epsilon=e, bounds_X=(np.full(d, -b), np.full(d, b)), bounds_y=bounds,
                random_state=s,
            )  # fmt: skip

        out["diffprivlib"] = diffprivlib
    except PeerUnavailable as exc:  # said in the output, the comparison skipped
        print(f"diffprivlib skipped: {exc}", file=sys.stderr)
    return out


def run(
    epsilons: Iterable[float] = (1.0, 3.0),
    repeats: int = 5,
    quick: bool = False,
    seeds: int | None = None,
) -> list[dict[str, Any]]:
    """One row per (data set, contender, epsilon): mean and sd of the held-out R^2 over
    ``repeats`` seeds (the split and the fit's seed both change with the repeat; ``seeds``, as
    ``bench_workflow.py`` passes it, overrides ``repeats``)."""
    if seeds is not None:
        repeats = seeds
    rows: list[dict[str, Any]] = []
    for name, (X, y) in datasets(quick).items():
        makers = _contenders(name, X.shape[1])
        for eps in epsilons:
            scores: dict[str, list[float]] = {k: [] for k in [*makers, "mean", "ols"]}
            seconds: dict[str, float] = {k: 0.0 for k in scores}
            for s in range(repeats):
                Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.25, random_state=s)
                for key, make in makers.items():
                    with harness.stopwatch() as sw, warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = make(eps, s).fit(Xa, ya)
                    seconds[key] += sw.seconds
                    scores[key].append(r2_score(yb, model.predict(Xb)))
                mean = _private_mean(ya, TARGET_BOUNDS[name], eps, s)
                scores["mean"].append(r2_score(yb, np.full(len(yb), mean)))
                scores["ols"].append(r2_score(yb, LinearRegression().fit(Xa, ya).predict(Xb)))
            for key, vals in scores.items():
                rows.append(
                    {
                        "data": name,
                        "model": key,
                        "epsilon": eps,
                        "r2_mean": float(np.mean(vals)),
                        "r2_sd": float(np.std(vals)),
                        "repeats": repeats,
                        "seconds": seconds[key] / repeats,
                        "n": len(y),
                    }
                )
    return rows


def tune(quick: bool = True, repeats: int = 2) -> list[dict[str, Any]]:
    """The grids that chose the defaults: each parameter of one regressor varied around the
    defaults, scored by R^2 on a validation split of the training part (never the test
    split), epsilon 1 and 3, declared target bounds."""
    sgd = [
        {"learning_rate": "constant", "eta0": e, "clip": c, "batch_size": b}
        for e in (0.5, 1.0)
        for c in (0.1, 0.3)
        for b in (64, 128, 256)
    ]
    sgd.append({"learning_rate": "inv_sqrt", "eta0": 1.0, "clip": 1.0, "batch_size": 64})
    scd = [
        {"epochs": e, "alpha": a, "clip": c}
        for e in (10, 20)
        for a in (1e-3, 1e-2)
        for c in (0.01, 0.03)
    ]
    scd += [
        {"epochs": 20, "alpha": 3e-3, "clip": 0.01},
        {"epochs": 40, "alpha": 1e-2, "clip": 0.01},
        {"epochs": 20, "alpha": 1e-2, "clip": 0.01, "batch_size": 50},
        {"epochs": 20, "alpha": 1e-2, "clip": 0.01, "batch_size": 200},
        {"epochs": 20, "alpha": 1e-2, "clip": 0.005},
        {"epochs": 1, "alpha": 1e-4, "clip": 0.01},
    ]
    grids: dict[str, tuple[type, list[dict[str, Any]]]] = {
        "DPSGDRegressor": (DPSGDRegressor, sgd),
        "DPSCDRegressor": (DPSCDRegressor, scd),
    }  # fmt: skip
    out = []
    for name, (X, y) in datasets(quick).items():
        bounds = TARGET_BOUNDS[name]
        for est, (cls, grid) in grids.items():
            for params in grid:
                for eps in (1.0, 3.0):
                    vals = []
                    for s in range(repeats):
                        Xa, _, ya, _ = train_test_split(X, y, test_size=0.25, random_state=s)
                        Xt, Xv, yt, yv = train_test_split(Xa, ya, test_size=0.3, random_state=s)
                        m = cls(epsilon=eps, seed=s, target_bounds=bounds, **params).fit(Xt, yt)
                        vals.append(r2_score(yv, m.predict(Xv)))
                    out.append(
                        {"data": name, "estimator": est, "epsilon": eps, **params,
                         "r2": float(np.mean(vals))}
                    )  # fmt: skip
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table of :func:`run`'s rows: R^2 mean +- sd per epsilon."""
    eps = sorted({r["epsilon"] for r in rows})
    head = "| data | model | " + " | ".join(f"eps {e:g}" for e in eps) + " |"
    lines = [head, "|" + "---|" * (2 + len(eps))]
    keys = list(dict.fromkeys((r["data"], r["model"]) for r in rows))
    for data, model in keys:
        cells = []
        for e in eps:
            match = [r for r in rows if (r["data"], r["model"], r["epsilon"]) == (data, model, e)]
            r = match[0] if match else None
            cells.append(f"{r['r2_mean']:.3f} +- {r['r2_sd']:.3f}" if r else "")
        lines.append(f"| {data} | {model} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = harness.cli(__doc__, "workflow_regression", omit=("reps", "out"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tune", action="store_true")
    args = parser.parse_args(argv)
    if args.tune:
        res = tune(quick=True)
        for r in res:
            print(r)
        return
    machine = harness.machine()
    rows = run(epsilons=(0.5, 1.0, 3.0), repeats=args.repeats, quick=args.quick)
    print(table(rows))
    print(harness.readme_machine(harness.finish(machine)))


if __name__ == "__main__":
    main()
