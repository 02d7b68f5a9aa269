"""Test accuracy before / after tight accounting (issue 20, "Must show"): what every unit of
epsilon buys when the noise is calibrated by a tighter accountant and DP-SCD stops paying for
its dual variables.

The script measures whatever ``privlearn`` is on ``PYTHONPATH`` and stores the runs under a
``--label`` (``before`` for the code with RDP calibration and the old DP-SCD, ``after`` for the
PLD accountant and DP-SCD with a hidden dual state) in ``bench/results/tight_accounting.json``,
keeping the other labels already there. ``--compare before after`` prints the before / after
table (mean +- sd over the seeds per cell) and writes ``bench/results/tight_accounting.md``.

Grid (one process, one thread; sized to run in <= 10 minutes on one core):

- estimators: :class:`~privlearn.linear.DPSGDClassifier` and
  :class:`~privlearn.linear.DPSCDClassifier` with their DEFAULTS (whatever the measured code's
  defaults are) and ``epsilon`` in {0.5, 1, 3}, ``delta`` at its default, seeds 0..4 (the seed
  is the estimator's secret randomness; an int makes runs reproducible). Declared: only the
  label set (``classes=``, the public list of labels of each task: it changes no noise). The
  data-set size is NOT declared (the defaults plan from a noisy count whose epsilon is part of
  the total); ``--public-n`` declares it instead. MNIST (ten digits) is the multinomial model
  for DP-SGD and one-vs-rest (10 tasks, one budget) for DP-SCD.
- data (``PRIVLEARN_DATA``, see ``../shared/data/README.md``), one fixed split each, the same
  for every run and both labels; every feature mapped by PUBLIC bounds only (no data-derived
  statistic, no privacy spent) into ``[-1/sqrt(d), 1/sqrt(d)]`` (so every row has norm <= 1,
  as both estimators assume), the map of ``DPFeatureScaler`` without quantiles:

  - ``adult``: :func:`privlearn.data.load_adult`, the official UCI split (32,561 / 16,281),
    105 columns; ``log1p`` of fnlwgt, capital-gain and capital-loss, public ranges age
    [0, 100], log1p fnlwgt [0, 15], education-num [0, 20], log1p capital-gain / -loss
    [0, 12], hours-per-week [0, 100], one-hot [0, 1] (as ``bench_defaults.py``);
  - ``phishing``: :func:`privlearn.data.load_phishing`, seeded 75/25 split (8,291 / 2,764);
    the LIBSVM rows already have unit norm and are used as they are;
  - ``kddcup99``: :func:`privlearn.data.load_kddcup99`, a fixed subsample of 40,000 rows
    (seed 0; ``--quick``: 4,000) of the 10% file, normal vs attack, seeded 75/25 split
    (30,000 / 10,000); ``log1p`` of the 13 unbounded counters with public ranges
    [0, log1p(hi)] (hi from the KDD schema, as ``bench_workflow.py``), the schema ranges of
    the 2-second / 100-connection counts, [0, 1] for rates, flags and one-hot;
  - ``mnist``: :func:`privlearn.data.load_mnist`, ten digits, a fixed subsample of 10,000 of
    the 60,000 training images (seed 0; ``--quick``: 1,000), the official 10,000-row test
    file (``--quick``: its first 2,000); public pixel range [0, 255].

- the hinge setting of the issue on adult: ``DPSCDClassifier(loss="hinge", epsilon=1,
  delta=1e-3, batch_size=500, clip=0.1, epochs=20, alpha=1e-4)``, other parameters at their
  defaults, ``n_samples`` DECLARED public (as in Damaskinos et al. 2021), seeds 0..2, on
  adult preprocessed as in the DP-SCD reproduction (``privlearn reproduce dpscd``):
  ``load_adult(preprocess="dpscd")`` with the training file's mean / std, features divided by
  their max |x| on the training part, rows scaled to unit norm (data-derived scaling, as in
  the paper; 32,561 / 16,281 rows, 88 features).

Recorded per run: test accuracy, ``privacy_.epsilon`` / ``delta``, the accountant, the noise
the fitted estimator reports (DP-SGD: ``noise_multiplier`` and ``noise_scale``; DP-SCD:
``sigma``, ``noise_std`` and ``sensitivity``; any field missing on the measured code is left
out), the steps, how the size entered, the training epsilon of the statement, the warnings the
fit raised, and the fit time (``fit`` alone, calibration included). The JSON also records the
git commit (and whether the tree was dirty) of the measured ``privlearn``.

Usage::

    cd <checkout> && PYTHONPATH=$PWD/python PRIVLEARN_DATA=../shared/data OMP_NUM_THREADS=1 \\
        python bench/python/bench_tight_accounting.py --label before     # or --label after
    python bench/python/bench_tight_accounting.py --compare before after
    python bench/python/bench_tight_accounting.py --quick --label smoke   # into the scratch folder

``--out DIR``: the folder of ``tight_accounting.json`` (default ``bench/results``; ``--quick``:
the scratch folder); each run is kept in it under its label.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import benchdata
import harness
import numpy as np

DEFAULT_MD = harness.RESULTS / "tight_accounting.md"

SEEDS = (0, 1, 2, 3, 4)
EPSILONS = (0.5, 1.0, 3.0)
SPLIT_SEED = 0  # the fixed splits and subsamples (public randomness, not a fit's seed)
KDD_ROWS, KDD_ROWS_QUICK = 40_000, 4_000
MNIST_TRAIN, MNIST_TRAIN_QUICK, MNIST_TEST_QUICK = 10_000, 1_000, 2_000

HINGE_PARAMS: dict[str, Any] = {
    "loss": "hinge",
    "epsilon": 1.0,
    "delta": 1e-3,
    "batch_size": 500,
    "clip": 0.1,
    "epochs": 20,
    "alpha": 1e-4,
}
HINGE_SEEDS = (0, 1, 2)

# privacy_ fields recorded when the fitted estimator has them (the "after" code may add or drop
# some; missing ones are left out)
PRIVACY_FIELDS = (
    "epsilon",
    "delta",
    "accountant",
    "neighboring",
    "sampling",
    "variant",
    "steps",
    "tasks",
    "clip",
    "sensitivity",
    "noise_multiplier",
    "noise_scale",
    "sigma",
    "noise_std",
)


@dataclass
class Data:
    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    note: str

    @property
    def classes(self) -> list[Any]:
        return sorted(np.unique(np.concatenate([self.y, self.y_test])).tolist())


# ---- data ----------------------------------------------------------------------------------
def public_scale(X: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Map every feature from its public range ``[lo, hi]`` (values clipped to it) onto
    ``[-1/sqrt(d), 1/sqrt(d)]``: every row then has norm <= 1 (no data-derived statistic)."""
    d = X.shape[1]
    Z = (np.clip(X, lo, hi) - lo) / (hi - lo)
    return np.ascontiguousarray((2.0 * Z - 1.0) / math.sqrt(d))


def load_adult_data() -> Data:
    from privlearn.data import load_adult

    X, y = load_adult("train")
    X_test, y_test = load_adult("test")
    logcols = [1, 3, 4]  # fnlwgt, capital-gain, capital-loss (numeric columns in file order)
    X[:, logcols] = np.log1p(X[:, logcols])
    X_test[:, logcols] = np.log1p(X_test[:, logcols])
    lo, hi = np.zeros(X.shape[1]), np.ones(X.shape[1])
    hi[:6] = [100.0, 15.0, 20.0, 12.0, 12.0, 100.0]
    return Data(
        "adult",
        public_scale(X, lo, hi),
        y,
        public_scale(X_test, lo, hi),
        y_test,
        "UCI adult.data / adult.test (official split), 105 columns; log1p(fnlwgt, capital-*), "
        "public ranges, mapped to [-1/sqrt(d), 1/sqrt(d)]",
    )


def load_phishing_data() -> Data:
    from privlearn.data import load_phishing

    X, y = load_phishing()
    X, y, X_test, y_test = benchdata.split(X, y, 0.25, SPLIT_SEED)
    return Data(
        "phishing",
        np.ascontiguousarray(X),
        y,
        np.ascontiguousarray(X_test),
        y_test,
        "LIBSVM phishing (unit rows, used as they are), seeded 75/25 split",
    )


def load_kdd_data(n_rows: int) -> Data:
    from privlearn.data import load_kddcup99

    X, y, names = load_kddcup99(n_samples=n_rows, seed=SPLIT_SEED, return_feature_names=True)
    lo, hi = np.zeros(X.shape[1]), np.ones(X.shape[1])  # rates, flags, one-hot: [0, 1]
    benchdata.check_kdd_columns(names)
    for j, n in enumerate(names):
        if n in benchdata.KDD_PUBLIC:
            lo[j], hi[j] = benchdata.KDD_PUBLIC[n]
        elif n in benchdata.KDD_WIDE:  # unbounded counters: log1p, then [0, log1p(hi)]
            X[:, j] = np.log1p(np.maximum(X[:, j], 0.0))
            hi[j] = math.log1p(benchdata.KDD_WIDE[n][1])
    X, y, X_test, y_test = benchdata.split(X, y, 0.25, SPLIT_SEED)
    return Data(
        "kddcup99",
        public_scale(X, lo, hi),
        y,
        public_scale(X_test, lo, hi),
        y_test,
        f"KDD Cup 99 10% file: fixed subsample of {n_rows:,} rows (seed {SPLIT_SEED}), normal "
        "vs attack, 118 columns, seeded 75/25 split; log1p of the 13 unbounded counters, "
        "public schema ranges, mapped to [-1/sqrt(d), 1/sqrt(d)]",
    )


def load_mnist_data(n_train: int, n_test: int | None) -> Data:
    from privlearn.data import load_mnist

    X, y = load_mnist("train")
    X_test, y_test = load_mnist("test")
    idx = benchdata.subsample(len(y), n_train, SPLIT_SEED)
    X, y = X[idx], y[idx]
    if n_test is not None:
        X_test, y_test = X_test[:n_test], y_test[:n_test]
    d = X.shape[1]
    lo, hi = np.zeros(d), np.full(d, 255.0)
    test_note = "official test file" if n_test is None else f"first {n_test:,} official test rows"
    return Data(
        "mnist",
        public_scale(X, lo, hi),
        y,
        public_scale(X_test, lo, hi),
        y_test,
        f"MNIST ten digits: fixed subsample of {n_train:,} of the 60,000 training images "
        f"(seed {SPLIT_SEED}), {test_note}; public pixel range [0, 255], mapped to "
        "[-1/sqrt(d), 1/sqrt(d)]",
    )


def load_adult_dpscd() -> Data:
    """Adult as in the DP-SCD reproduction: the paper's preprocessing, unit rows."""
    from privlearn.data import adult_scaler_stats, load_adult, maxabs_scale, normalize_rows
    from privlearn.exceptions import PrivacyLeakWarning

    with warnings.catch_warnings():
        # data-derived scaling, as in Damaskinos et al. 2021 (outside the DP guarantee)
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        stats = adult_scaler_stats("train")
        X, y = load_adult("train", preprocess="dpscd", scaler_stats=stats)
        X_test, y_test = load_adult("test", preprocess="dpscd", scaler_stats=stats)
        bound = np.abs(X).max(axis=0)
        bound = np.where(bound > 0, bound, 1.0)
        X, X_test = maxabs_scale(X, bound), maxabs_scale(X_test, bound)
    return Data(
        "adult_dpscd",
        np.ascontiguousarray(normalize_rows(X)),
        y,
        np.ascontiguousarray(normalize_rows(X_test)),
        y_test,
        "UCI adult, DP-SCD paper preprocessing (fnlwgt, education dropped; numeric columns "
        "standard-scaled with the training mean / std; 88 columns), features / training max "
        "|x|, rows unit-normalised (data-derived scaling, as in the paper)",
    )


# ---- one run -------------------------------------------------------------------------------
def privacy_record(privacy: Any) -> dict[str, Any]:
    """The noise and the guarantee the fitted estimator states (fields it lacks are left out)."""
    out: dict[str, Any] = {}
    for name in PRIVACY_FIELDS:
        if hasattr(privacy, name):
            value = getattr(privacy, name)
            if isinstance(value, (bool, int, float, str)) or value is None:
                out[name] = float(value) if isinstance(value, float) else value
    statement = getattr(privacy, "statement", None)
    if statement is not None:
        out["training_epsilon"] = float(getattr(statement, "epsilon", math.nan))
        out["statement_accountant"] = getattr(statement, "accountant", None)
    size = getattr(privacy, "size", None)
    if size is not None:
        out["size_source"] = getattr(size, "source", None)
        out["size_epsilon"] = float(getattr(size, "epsilon", 0.0) or 0.0)
    return out


def noise_of(rec: dict[str, Any]) -> float:
    """The noise multiplier the run reports (DP-SGD ``noise_multiplier``, DP-SCD ``sigma``)."""
    for key in ("noise_multiplier", "sigma"):
        value = rec.get("privacy", {}).get(key)
        if isinstance(value, (int, float)):
            return float(value)
    return math.nan


def noise_std_of(rec: dict[str, Any]) -> float:
    """The noise standard deviation the run reports (DP-SGD ``noise_scale``, DP-SCD
    ``noise_std``): comparable across a change of the stated sensitivity."""
    for key in ("noise_std", "noise_scale"):
        value = rec.get("privacy", {}).get(key)
        if isinstance(value, (int, float)):
            return float(value)
    return math.nan


def run_one(
    estimator: str, params: dict[str, Any], data: Data, seed: int, setting: str
) -> dict[str, Any]:
    from privlearn.linear import DPSCDClassifier, DPSGDClassifier

    cls = {"DPSGDClassifier": DPSGDClassifier, "DPSCDClassifier": DPSCDClassifier}[estimator]
    rec: dict[str, Any] = {
        "dataset": data.name,
        "estimator": estimator,
        "setting": setting,
        "epsilon": float(params["epsilon"]),
        "seed": seed,
        "params": {k: v for k, v in params.items() if k != "classes"},
    }
    model = cls(**params, seed=seed)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rec["fit_s"] = harness.timed(lambda: model.fit(data.X, data.y))[0]
        rec["accuracy"] = float(np.mean(model.predict(data.X_test) == data.y_test))
        rec["privacy"] = privacy_record(model.privacy_)
        msgs = sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught})
        if msgs:
            rec["warnings"] = msgs
    except Exception as exc:  # keep the rest of the grid; the record says what failed
        rec["error"] = f"{type(exc).__name__}: {exc}"
    return rec


def grid(datasets: dict[str, Data], quick: bool, public_n: bool) -> Iterable[tuple[Any, ...]]:
    seeds = SEEDS[:1] if quick else SEEDS
    for name, data in datasets.items():
        if name == "adult_dpscd":
            continue
        for estimator in ("DPSGDClassifier", "DPSCDClassifier"):
            for eps in EPSILONS:
                params: dict[str, Any] = {"epsilon": eps, "classes": data.classes}
                if public_n:
                    params["n_samples"] = int(data.X.shape[0])
                for seed in seeds:
                    yield estimator, params, data, seed, "defaults"
    if "adult_dpscd" in datasets:
        data = datasets["adult_dpscd"]
        params = {**HINGE_PARAMS, "classes": data.classes, "n_samples": int(data.X.shape[0])}
        for seed in HINGE_SEEDS[:1] if quick else HINGE_SEEDS:
            yield "DPSCDClassifier", params, data, seed, "hinge"


# ---- provenance ----------------------------------------------------------------------------
def provenance() -> dict[str, Any]:
    import privlearn

    pkg = Path(privlearn.__file__).resolve().parent
    top = harness.git(pkg, "rev-parse", "--show-toplevel")
    code = ("python", "cpp") if top else ()
    status = harness.git(
        Path(top or pkg), "status", "--porcelain", "--untracked-files=no", "--", *code
    )
    return {
        # where the package came from, relative to its checkout (no machine path is recorded)
        "privlearn_path": str(pkg.relative_to(top)) if top else "installed",
        "privlearn_version": getattr(privlearn, "__version__", None),
        "git_commit": harness.git(pkg, "rev-parse", "HEAD"),
        # the last commit that changed the measured code (python/, cpp/) and whether the
        # working tree differs from it there
        "code_commit": harness.git(Path(top), "log", "-1", "--format=%H", "--", *code)
        if top
        else None,
        "git_branch": harness.git(pkg, "rev-parse", "--abbrev-ref", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "git_subject": harness.git(pkg, "log", "-1", "--format=%s"),
    }


# ---- tables --------------------------------------------------------------------------------
def _mean_sd(values: list[float], digits: int = 4) -> str:
    values = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    if not values:
        return "n/a"
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def _mean(values: list[float]) -> float:
    values = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return statistics.fmean(values) if values else math.nan


def _cells(records: list[dict[str, Any]]) -> dict[tuple[str, str, str, float], list[dict]]:
    cells: dict[tuple[str, str, str, float], list[dict]] = {}
    for r in records:
        key = (r["setting"], r["dataset"], r["estimator"], r["epsilon"])
        cells.setdefault(key, []).append(r)
    return cells


def _key_order(key: tuple[str, str, str, float]) -> tuple[Any, ...]:
    setting, dataset, estimator, eps = key
    order = ["adult", "phishing", "kddcup99", "mnist", "adult_dpscd"]
    pos = order.index(dataset) if dataset in order else len(order)
    est = ["DPSGDClassifier", "DPSCDClassifier"]
    return (
        setting != "defaults",
        pos,
        dataset,
        est.index(estimator) if estimator in est else 2,
        estimator,
        eps,
    )


def _short(estimator: str) -> str:
    return {"DPSGDClassifier": "DP-SGD", "DPSCDClassifier": "DP-SCD"}.get(estimator, estimator)


def label_table(run: dict[str, Any]) -> str:
    head = (
        "| setting | data | estimator | eps | accuracy (mean ± sd) | privacy_ eps | "
        "noise multiplier | noise std | fit s | runs |\n" + "|---" * 10 + "|"
    )
    rows = [head]
    cells = _cells(run["records"])
    for key in sorted(cells, key=_key_order):
        recs = cells[key]
        ok = [r for r in recs if "error" not in r]
        setting, dataset, estimator, eps = key
        rows.append(
            f"| {setting} | {dataset} | {_short(estimator)} | {eps:g} | "
            f"{_mean_sd([r['accuracy'] for r in ok])} | "
            f"{_mean([r['privacy'].get('epsilon', math.nan) for r in ok]):.4g} | "
            f"{_mean([noise_of(r) for r in ok]):.4g} | "
            f"{_mean([noise_std_of(r) for r in ok]):.4g} | "
            f"{_mean([r['fit_s'] for r in ok]):.2f} | {len(ok)}/{len(recs)} |"
        )
    return "\n".join(rows)


def compare_table(before: dict[str, Any], after: dict[str, Any], names: tuple[str, str]) -> str:
    a, b = names
    head = (
        f"| setting | data | estimator | eps | accuracy {a} | accuracy {b} | diff | "
        f"noise std {a} | noise std {b} | ratio {a}/{b} | noise mult. {a} | noise mult. {b} | "
        f"privacy_ eps {a} | privacy_ eps {b} | fit s {a} | fit s {b} |\n" + "|---" * 16 + "|"
    )
    rows = [head]
    ca, cb = _cells(before["records"]), _cells(after["records"])
    for key in sorted(set(ca) | set(cb), key=_key_order):
        ra = [r for r in ca.get(key, []) if "error" not in r]
        rb = [r for r in cb.get(key, []) if "error" not in r]
        diff = _mean([r["accuracy"] for r in rb]) - _mean([r["accuracy"] for r in ra])
        std_a, std_b = _mean([noise_std_of(r) for r in ra]), _mean([noise_std_of(r) for r in rb])
        ratio = std_a / std_b if std_b > 0 else math.nan
        setting, dataset, estimator, eps = key
        rows.append(
            f"| {setting} | {dataset} | {_short(estimator)} | {eps:g} | "
            f"{_mean_sd([r['accuracy'] for r in ra])} | {_mean_sd([r['accuracy'] for r in rb])} "
            f"| {diff:+.4f} | {std_a:.4g} | {std_b:.4g} | {ratio:.3f} | "
            f"{_mean([noise_of(r) for r in ra]):.4g} | {_mean([noise_of(r) for r in rb]):.4g} | "
            f"{_mean([r['privacy'].get('epsilon', math.nan) for r in ra]):.4g} | "
            f"{_mean([r['privacy'].get('epsilon', math.nan) for r in rb]):.4g} | "
            f"{_mean([r['fit_s'] for r in ra]):.2f} | {_mean([r['fit_s'] for r in rb]):.2f} |"
        )
    return "\n".join(rows)


def _describe(label: str, run: dict[str, Any]) -> str:
    src = run.get("source", {})
    commit = src.get("git_commit") or "unknown"
    code = src.get("code_commit") or "unknown"
    dirty = " (code differs from it: dirty tree)" if src.get("git_dirty") else ""
    return (
        f"- `{label}`: HEAD {commit[:12]} ({src.get('git_subject') or ''}), code (python/, "
        f"cpp/) at {code[:12]}{dirty}, "
        f"{run.get('date')}, {run.get('runtime_s', math.nan):.0f} s, "
        f"{'QUICK ' if run.get('quick') else ''}{len(run['records'])} runs"
    )


def compare(path: Path, md: Path, labels: tuple[str, str]) -> int:
    results = json.loads(path.read_text())
    runs = results.get("runs", {})
    for label in labels:
        if label not in runs:
            print(f"label {label!r} not in {path} (has: {sorted(runs)})", file=sys.stderr)
            return 2
    before, after = runs[labels[0]], runs[labels[1]]
    notes = after.get("datasets") or before.get("datasets") or {}
    grid_of = after.get("grid") or {}
    text = "\n".join(
        [
            f"# Tight accounting: test accuracy, {labels[0]} vs {labels[1]} (issue 20)",
            "",
            "Written by `bench/python/bench_tight_accounting.py --compare "
            f"{labels[0]} {labels[1]}` from [tight_accounting.json](tight_accounting.json).",
            "Accuracy: test accuracy, mean ± sd over the seeds "
            f"({len(grid_of.get('seeds', SEEDS))} per cell; the hinge row "
            f"{len(grid_of.get('hinge_seeds', HINGE_SEEDS))}). "
            "Noise std: the standard deviation of the Gaussian noise per released coordinate "
            "(DP-SGD `noise_scale` = sigma C, DP-SCD `noise_std`, the noise on v), and the "
            "ratio of the two labels; noise mult.: DP-SGD `noise_multiplier`, DP-SCD `sigma` "
            "(noise std / the sensitivity the code states: DP-SCD's moves with the stated "
            "sensitivity, sqrt(2) C before the hidden-state argument, so compare noise std). "
            "Fit s: mean seconds of `fit` (calibration included), one thread.",
            "",
            _describe(labels[0], before),
            _describe(labels[1], after),
            "",
            f"Declared: {after.get('declared') or before.get('declared')}",
            "",
            "Data:",
            *[f"- `{k}`: {v}" for k, v in notes.items()],
            "",
            compare_table(before, after, labels),
            "",
        ]
    )
    print(text)
    md.write_text(text)
    print(f"wrote {md}")
    return 0


# ---- main ----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = harness.cli(__doc__, "tight_accounting", omit=("reps",))  # --quick: a tiny smoke run
    ap.add_argument("--label", help="name of this run in the JSON (e.g. before / after)")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="print the A vs B table")
    ap.add_argument(
        "--public-n", action="store_true", help="declare n_samples public in the defaults grid"
    )
    ap.add_argument("--datasets", default="adult,phishing,kddcup99,mnist,adult_dpscd")
    ap.add_argument("--md", type=Path, default=DEFAULT_MD)
    args = ap.parse_args(argv)
    out = harness.out_dir(args) / "tight_accounting.json"
    if args.compare:
        return compare(out, args.md, tuple(args.compare))
    if not args.label:
        ap.error("--label is required (or --compare A B)")

    loaders: dict[str, Callable[[], Data]] = {
        "adult": load_adult_data,
        "phishing": load_phishing_data,
        "kddcup99": lambda: load_kdd_data(KDD_ROWS_QUICK if args.quick else KDD_ROWS),
        "mnist": lambda: (
            load_mnist_data(MNIST_TRAIN_QUICK, MNIST_TEST_QUICK)
            if args.quick
            else load_mnist_data(MNIST_TRAIN, None)
        ),
        "adult_dpscd": load_adult_dpscd,
    }
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    unknown = set(names) - set(loaders)
    if unknown:
        ap.error(f"unknown data sets {sorted(unknown)}; choose from {sorted(loaders)}")

    machine, t_start = harness.machine(), harness.stopwatch()
    datasets: dict[str, Data] = {}
    for name in names:
        sec, data = harness.timed(loaders[name])
        datasets[name] = data
        print(
            f"{name}: train {data.X.shape[0]} x {data.X.shape[1]}, test {data.X_test.shape[0]}, "
            f"{len(data.classes)} classes ({sec:.1f} s) -- {data.note}",
            flush=True,
        )

    declared = (
        "defaults grid: classes= (the public label set of each task)"
        + (", n_samples= (public n)" if args.public_n else "; n_samples NOT declared (noisy count)")
        + "; hinge setting: classes= and n_samples= (public n, as in the paper)"
    )
    print(f"declared: {declared}", flush=True)
    records = []
    for estimator, params, data, seed, setting in grid(datasets, args.quick, args.public_n):
        rec = run_one(estimator, params, data, seed, setting)
        records.append(rec)
        if "error" in rec:
            print(
                f"  {setting} {data.name} {estimator} eps {rec['epsilon']:g} seed {seed}: "
                f"ERROR {rec['error']}",
                flush=True,
            )
        else:
            print(
                f"  {setting} {data.name} {_short(estimator)} eps {rec['epsilon']:g} seed "
                f"{seed}: acc {rec['accuracy']:.4f}, privacy_ eps "
                f"{rec['privacy'].get('epsilon', math.nan):.4g}, noise mult "
                f"{noise_of(rec):.4g}, {rec['fit_s']:.2f} s",
                flush=True,
            )
    runtime = t_start.elapsed()

    run = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "quick": bool(args.quick),
        "runtime_s": runtime,
        "command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
        "source": provenance(),
        "machine": harness.finish(machine),
        "declared": declared,
        "datasets": {
            k: f"{v.note}; train {v.X.shape[0]}, test {v.X_test.shape[0]}"
            for k, v in datasets.items()
        },
        "grid": {
            "epsilons": list(EPSILONS),
            "seeds": list(SEEDS[:1] if args.quick else SEEDS),
            "hinge": HINGE_PARAMS,
            "hinge_seeds": list(HINGE_SEEDS[:1] if args.quick else HINGE_SEEDS),
        },
        "records": records,
    }
    print()
    print(label_table(run))
    print(f"\nruntime {runtime:.0f} s ({len(records)} runs)")

    results: dict[str, Any] = {"benchmark": "tight_accounting", "runs": {}}
    if out.exists():
        results = json.loads(out.read_text())
        results.setdefault("runs", {})
    results["benchmark"] = "tight_accounting"
    results["description"] = __doc__.split("\n\n")[0].replace("\n", " ")
    results["runs"][args.label] = run
    harness.write_json(results, out)
    print(f"wrote {out} (label {args.label!r}; labels there: {sorted(results['runs'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
