"""The whole private workflow on real data (issues 13 and 22): raw features -> private scaling
-> privately tuned model, against privlearn's default estimator, diffprivlib and a non-private
reference, at a TOTAL epsilon of 0.5, 1 and 3.

Data sets (``PRIVLEARN_DATA``, see ``../shared/data/README.md``), one fixed seeded split
each, identical for every contender (``--datasets``; default adult, the credit-like public
table of issue 22):

- ``adult``: :func:`privlearn.data.load_adult` (6 raw numeric columns + one-hot), the UCI
  train / test files. Public bounds per numeric column from the census schema, private
  quantiles for those 6 columns only; the one-hot columns use the public bounds ``(0, 1)``.
- ``phishing``: the LIBSVM file (68 one-hot columns of the 30 UCI attributes, rows scaled to
  unit norm, so every entry is 0 or ``1/sqrt(30)``): public bounds ``(0, 1/sqrt(30))``, no
  quantile (the scaler spends nothing); 75 / 25 split.
- ``kddcup99``: a 100,000-row subsample (``--quick``: 20,000) of the 10% file, normal vs
  attack; 80 / 20 split. Rates, flags and the two 2-second connection counts have public
  ranges from the KDD schema; the 13 unbounded counters (durations, bytes, ...) get private
  quantiles inside wide public ranges.
- ``mnist``: all ten digits, 20,000 training rows (``--quick``: 5,000) drawn from the
  official training file, the official 10,000-row test file; pixels have the public range
  ``[0, 255]`` (the scaler spends nothing).

Contenders, all from the same private preprocessing (one :class:`DPFeatureScaler` fit per
data set, epsilon and seed; its epsilon is deducted from every private contender):

- ``privlearn_tuned``: the documented search (``docs/user_guide/preprocessing_tuning.rst``):
  :class:`~privlearn.model_selection.PrivateHyperparameterSearch` (Papernot & Steinke 2022)
  over the fixed grid :data:`GRID` of Gaussian :class:`DPSGDClassifier` with
  ``epsilon=`` the total the scaler left: the search plans every candidate's noise
  multiplier from that total itself (no hand bisection); the size is declared public
  (``n_samples=``). A :class:`~privlearn.accounting.PrivacyLedger` with the total cap holds
  scaler and search.
- ``privlearn_default``: ``DPSGDClassifier(mechanism="gaussian", epsilon=rest)``, every other
  parameter at its default (recorded in the JSON).
- ``diffprivlib``: ``diffprivlib.models.LogisticRegression(epsilon=rest, data_norm=1)`` (rows
  have norm <= 1 after the scaler), its other parameters at their defaults.
- ``nonprivate``: scikit-learn's ``LogisticRegression`` on the same scaled features.

Privacy: delta = ``privlearn.accounting.DEFAULT_DELTA`` (1e-6) for every contender (the
scaler and diffprivlib are pure DP); totals compose by basic composition and the reported
epsilon is the true total (scaler + model). Metrics: test accuracy, ROC AUC on the binary
sets. Results: ``<out>/workflow.json`` (``--out`` a folder: default ``bench/results``,
``--quick`` the scratch folder) and a markdown table on stdout.

Two more sections are run when their modules are present beside this file (each skipped with
its reason otherwise): ``workflow_recipe.run(...)`` (the raw-data recipe) and
``workflow_regression.run(...)`` (the regressors).

Run: ``PRIVLEARN_DATA=../shared/data python bench/python/bench_workflow.py [--quick]``
(``pip install "diffprivlib>=0.6"``: the ``experiments`` extra).
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import benchdata
import harness
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, roc_auc_score

from privlearn.accounting import DEFAULT_DELTA, PrivacyLedger
from privlearn.experiments.peers import import_diffprivlib as _import_diffprivlib
from privlearn.experiments.peers import sklearn_logreg_shim
from privlearn.experiments.runs import derive_seed
from privlearn.linear import DPSGDClassifier
from privlearn.model_selection import PrivateHyperparameterSearch
from privlearn.preprocessing import DPFeatureScaler

EPSILONS = (0.5, 1.0, 3.0)
DELTA = DEFAULT_DELTA
#: Share of the total epsilon given to the scaler when it estimates quantiles.
SCALER_SHARE = 0.15
#: The documented search (docs/user_guide/preprocessing_tuning.rst), as written there: K
#: truncated negative binomial with eta = -0.5 and E[K] = 2, a 10% validation split, over a
#: fixed grid of Gaussian DPSGDClassifier configurations; epsilon= is the search's total, the
#: candidates' noise is planned from it.
SEARCH = dict(eta=-0.5, mean_repetitions=2.0, validation_fraction=0.1)
GRID = {"batch_size": [256, 512], "epochs": [20], "eta0": [2.0, 4.0]}
SPLIT_SEED = 20240513


# ---- diffprivlib under this scikit-learn ------------------------------------------------------
def import_diffprivlib() -> Any:
    """diffprivlib's LogisticRegression (shims: :mod:`privlearn.experiments.peers`)."""
    return _import_diffprivlib().models.LogisticRegression


# ---- data -------------------------------------------------------------------------------------
@dataclass
class Data:
    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    bounds: tuple[np.ndarray, np.ndarray]
    quantile_features: list[int]
    notes: str
    binary: bool = field(init=False)

    def __post_init__(self) -> None:
        self.binary = np.unique(self.y).size == 2


def load_adult_data() -> Data:
    from privlearn.data import load_adult

    X, y, names = load_adult("train", return_feature_names=True)
    X_test, y_test = load_adult("test")
    # public ranges of the 6 numeric columns (adult.names / census schema), then one-hot
    public = {
        "age": (0.0, 100.0),
        "fnlwgt": (0.0, 1.5e6),
        "education-num": (1.0, 16.0),
        "capital-gain": (0.0, 1e5),
        "capital-loss": (0.0, 5000.0),
        "hours-per-week": (0.0, 100.0),
    }
    lo, hi = np.zeros(X.shape[1]), np.ones(X.shape[1])
    numeric = [j for j, n in enumerate(names) if n in public]
    for j in numeric:
        lo[j], hi[j] = public[names[j]]
    return Data(
        "adult", X, y, X_test, y_test, (lo, hi), numeric,
        "UCI adult.data (32,561) / adult.test (16,281); 105 columns: 6 raw numeric "
        "(private quantiles in public census ranges) + one-hot (public bounds (0, 1))",
    )  # fmt: skip


def load_phishing_data() -> Data:
    from privlearn.data import load_phishing

    X, y = load_phishing()
    X, y, X_test, y_test = benchdata.split(X, y, 0.25, SPLIT_SEED)
    top = 1.0 / math.sqrt(30.0)
    return Data(
        "phishing", X, y, X_test, y_test, (np.zeros(X.shape[1]), np.full(X.shape[1], top)), [],
        "LIBSVM phishing (11,055 x 68: one-hot of the 30 UCI attributes, unit rows, so every "
        "entry is 0 or 1/sqrt(30)); public bounds (0, 1/sqrt(30)), no quantile; 75/25 split",
    )  # fmt: skip


def load_kdd_data(n_rows: int) -> Data:
    from privlearn.data import load_kddcup99

    X, y, names = load_kddcup99(n_samples=n_rows, seed=SPLIT_SEED, return_feature_names=True)
    lo, hi = np.zeros(X.shape[1]), np.ones(X.shape[1])  # rates, flags, one-hot: [0, 1]
    quant = []
    benchdata.check_kdd_columns(names)
    for j, n in enumerate(names):
        if n in benchdata.KDD_PUBLIC:
            lo[j], hi[j] = benchdata.KDD_PUBLIC[n]
        elif n in benchdata.KDD_WIDE:  # unbounded: private quantiles inside the wide range
            lo[j], hi[j] = benchdata.KDD_WIDE[n]
            quant.append(j)
    X, y, X_test, y_test = benchdata.split(X, y, 0.2, SPLIT_SEED)
    return Data(
        "kddcup99", X, y, X_test, y_test, (lo, hi), quant,
        f"KDD Cup 99 10% file, {n_rows:,} rows drawn with seed {SPLIT_SEED}, normal vs attack, "
        "118 columns; private quantiles for the 13 unbounded counters, public schema ranges "
        "for the rest; 80/20 split",
    )  # fmt: skip


def load_mnist_data(n_train: int) -> Data:
    from privlearn.data import load_mnist

    X, y = load_mnist("train")
    X_test, y_test = load_mnist("test")
    idx = benchdata.subsample(len(y), n_train, SPLIT_SEED)
    d = X.shape[1]
    return Data(
        "mnist", X[idx], y[idx], X_test, y_test, (np.zeros(d), np.full(d, 255.0)), [],
        f"MNIST, ten digits, {n_train:,} training rows drawn with seed {SPLIT_SEED}, official "
        "10,000-row test file; public pixel range [0, 255], no quantile",
    )  # fmt: skip


# ---- one run ----------------------------------------------------------------------------------
def metrics(model: Any, X: np.ndarray, y: np.ndarray, binary: bool) -> dict[str, float]:
    out = {"accuracy": float(accuracy_score(y, model.predict(X)))}
    if binary:
        out["roc_auc"] = float(roc_auc_score(y, model.decision_function(X)))
    return out


def fit_scaler(data: Data, eps_scaler: float, seed: int, ledger: Any) -> DPFeatureScaler:
    return DPFeatureScaler(
        epsilon=eps_scaler if data.quantile_features else 1.0,  # unused without quantiles
        bounds=data.bounds,
        quantile_features=data.quantile_features,
        seed=seed,
        ledger=ledger,
    ).fit(data.X)


def run_cell(
    data: Data, total: float, seed_idx: int, DPLR: Any, cache: dict[str, Any]
) -> dict[str, Any]:
    """All contenders at one (data set, total epsilon, seed)."""
    s = lambda *p: derive_seed("workflow", data.name, total, seed_idx, *p) % (1 << 63)  # noqa: E731
    eps_scaler = SCALER_SHARE * total if data.quantile_features else 0.0
    rest = total - eps_scaler
    out: dict[str, Any] = {}

    # the one private preprocessing, charged to the tuned pipeline's ledger
    ledger = PrivacyLedger(total, DELTA)
    with harness.stopwatch() as sw:
        scaler = fit_scaler(data, eps_scaler, s("scaler"), ledger)
        Z, Z_test = scaler.transform(data.X), scaler.transform(data.X_test)
    t_scaler = sw.seconds
    assert math.isclose(scaler.privacy_.epsilon, eps_scaler)
    scaler_stmt = str(scaler.privacy_)

    # (a) the documented search, its total = what the scaler left
    sw = harness.stopwatch()
    search = PrivateHyperparameterSearch(
        DPSGDClassifier(classes=np.unique(data.y)),  # the public label schema
        GRID,
        epsilon=rest,
        delta=DELTA,
        n_samples=Z.shape[0],  # the size is declared public
        seed=s("search"),
        ledger=ledger,
        **SEARCH,
    ).fit(Z, data.y)
    tuned_total = scaler.privacy_.epsilon + search.privacy_.epsilon
    assert tuned_total <= total * (1 + 1e-12), (tuned_total, total)
    out["privlearn_tuned"] = dict(
        metrics(search, Z_test, data.y_test, data.binary),
        epsilon=tuned_total,
        delta=search.privacy_.delta,
        seconds=t_scaler + sw.elapsed(),
        best_params=search.best_params_,
        plan=list(search.privacy_.plan),
        privacy=f"scaler: {scaler_stmt}\nsearch: {search.privacy_}\nledger: {ledger}",
    )

    # (b) privlearn's default estimator (Gaussian mechanism), same scaled rows
    sw = harness.stopwatch()
    default = DPSGDClassifier(mechanism="gaussian", epsilon=rest, seed=s("default")).fit(Z, data.y)
    out["privlearn_default"] = dict(
        metrics(default, Z_test, data.y_test, data.binary),
        epsilon=eps_scaler + default.privacy_.epsilon,
        delta=default.privacy_.delta,
        seconds=t_scaler + sw.elapsed(),
        privacy=f"scaler: {scaler_stmt}\nmodel: {default.privacy_}",
    )

    # (c) diffprivlib's LogisticRegression, data_norm from the scaler (rows have norm <= 1)
    sw = harness.stopwatch()
    with sklearn_logreg_shim(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its convergence warnings at small epsilon
        dpl = DPLR(epsilon=rest, data_norm=1.0, random_state=s("diffprivlib") % (1 << 32))
        dpl.fit(Z, data.y)
        dpl_metrics = metrics(dpl, Z_test, data.y_test, data.binary)
    out["diffprivlib"] = dict(
        dpl_metrics,
        epsilon=eps_scaler + rest,
        delta=0.0,
        seconds=t_scaler + sw.elapsed(),
        privacy=f"scaler: {scaler_stmt}\nmodel: diffprivlib LogisticRegression, "
        f"({rest:.6g}, 0)-DP objective perturbation (Chaudhuri et al. 2011, vector mechanism, "
        "epsilon / n_classes per one-vs-rest class), data_norm=1",
    )

    # (d) non-private reference on the same features (cached when the scaler is public-only)
    key = "nonprivate"
    if data.quantile_features or key not in cache:
        sec, ref = harness.timed(lambda: LogisticRegression(max_iter=1000).fit(Z, data.y))
        res = dict(
            metrics(ref, Z_test, data.y_test, data.binary),
            epsilon=math.inf,
            delta=0.0,
            seconds=t_scaler + sec,
            privacy="not private (scikit-learn LogisticRegression, defaults, max_iter=1000) "
            "on the privately scaled features",
        )
        if not data.quantile_features:
            cache[key] = res
    out[key] = res if data.quantile_features else cache[key]
    return out


# ---- driver -----------------------------------------------------------------------------------
def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for metric in ("accuracy", "roc_auc", "epsilon", "seconds"):
        vals = [r[metric] for r in runs if metric in r]
        if vals:
            arr = np.asarray(vals, dtype=np.float64)
            if not np.isfinite(arr).all():  # the non-private reference: epsilon = inf
                out[metric] = "inf (not private)"
                continue
            out[metric] = {
                "mean": float(arr.mean()),
                "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
                "values": [float(v) for v in arr],
            }
    out["delta"] = max(r["delta"] for r in runs)
    out["privacy_first_seed"] = runs[0]["privacy"]
    if "best_params" in runs[0]:
        out["best_params"] = [r["best_params"] for r in runs]
    return out


CONTENDERS = ("privlearn_tuned", "privlearn_default", "diffprivlib", "nonprivate")


def configs(DPLR: Any) -> dict[str, Any]:
    default = DPSGDClassifier(mechanism="gaussian").get_params()
    default.pop("ledger", None)
    with sklearn_logreg_shim():
        dpl = DPLR(epsilon=1.0, data_norm=1.0).get_params()
    dpl.pop("accountant", None)
    return {
        "scaler": (
            f"DPFeatureScaler(epsilon={SCALER_SHARE} * total when quantiles are estimated, else "
            "0 (public bounds only), quantile_range=(0.05, 0.95), feature_range='symmetric'); "
            "shared by the private contenders, its epsilon deducted from each"
        ),
        "privlearn_tuned": {
            "estimator": "DPSGDClassifier(classes=<public label schema>), Gaussian defaults",
            "grid": GRID,
            "search": {
                **SEARCH,
                "epsilon": "total - scaler epsilon (the search plans each candidate's noise)",
                "n_samples": "len(X) (declared public)",
                "score_epsilon": "default (a quarter of the per-repetition pure epsilon)",
            },
        },  # fmt: skip
        "privlearn_default": {
            k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v))
            for k, v in default.items()
        }
        | {"epsilon": "total - scaler epsilon"},
        "diffprivlib": {
            k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v))
            for k, v in dpl.items()
        }
        | {"epsilon": "total - scaler epsilon"},
        "nonprivate": "sklearn.linear_model.LogisticRegression(max_iter=1000)",
    }


def table(results: dict[str, Any], metric: str = "accuracy") -> str:
    head = "| data set | epsilon | privlearn tuned | privlearn default | diffprivlib |"
    lines = [head + " non-private |", "|---|---|---|---|---|---|"]
    for name, per_eps in results.items():
        for eps, cell in per_eps.items():
            vals = []
            for c in CONTENDERS:
                m = cell[c].get(metric)
                vals.append("n/a" if m is None else f"{m['mean']:.4f} ± {m['std']:.4f}")
            tuned = cell["privlearn_tuned"].get(metric)
            dpl = cell["diffprivlib"].get(metric)
            if tuned and dpl and tuned["mean"] > dpl["mean"]:
                vals[0] = f"**{vals[0]}**"
            lines.append(f"| {name} | {eps} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


#: Sections written by other modules beside this file: (module, what it runs).
SECTIONS = (
    ("workflow_recipe", "the raw-data recipe"),
    ("workflow_regression", "the regressors vs diffprivlib LinearRegression and the mean"),
)


def extra_sections(quick: bool, seeds: int) -> dict[str, Any]:
    """Run each module of :data:`SECTIONS` that can be imported (``module.run(quick=...,
    seeds=..., epsilons=...)`` returns a JSON-able result); a missing one is skipped with its
    reason."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    out: dict[str, Any] = {}
    for name, what in SECTIONS:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            print(f"{name} ({what}): skipped: {exc}", flush=True)
            out[name] = {"skipped": str(exc)}
            continue
        rows = module.run(quick=quick, seeds=seeds, epsilons=EPSILONS)
        out[name] = {"what": what, "rows": rows, "table": module.table(rows)}
        print(f"\n{name} ({what}):\n{out[name]['table']}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = harness.cli(__doc__, "workflow", omit=("reps",))  # --quick: 1 seed, subsamples
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument(
        "--datasets", default="adult", help="comma-separated: adult, phishing, kddcup99, mnist"
    )
    args = parser.parse_args(argv)
    out = harness.out_dir(args) / "workflow.json"
    machine = harness.machine()
    # the data folder beside the checkout (as the tests use it) unless PRIVLEARN_DATA says
    os.environ.setdefault(
        "PRIVLEARN_DATA", str(Path(__file__).resolve().parents[3] / "shared" / "data")
    )
    seeds = args.seeds or (1 if args.quick else 5)
    DPLR = import_diffprivlib()
    loaders = {
        "adult": load_adult_data,
        "phishing": load_phishing_data,
        "kddcup99": lambda: load_kdd_data(20_000 if args.quick else 100_000),
        "mnist": lambda: load_mnist_data(5_000 if args.quick else 20_000),
    }
    start = harness.stopwatch()
    results: dict[str, Any] = {}
    data_notes: dict[str, Any] = {}
    plans: dict[str, Any] = {}
    for name in args.datasets.split(","):
        t_data = harness.stopwatch()
        data = loaders[name]()
        data_notes[name] = {
            "notes": data.notes,
            "n_train": int(len(data.y)),
            "n_test": int(len(data.y_test)),
            "n_features": int(data.X.shape[1]),
            "n_classes": int(np.unique(data.y).size),
            "quantile_features": len(data.quantile_features),
        }
        results[name] = {}
        cache: dict[str, Any] = {}
        for total in EPSILONS:
            runs = [run_cell(data, total, k, DPLR, cache) for k in range(seeds)]
            results[name][str(total)] = {c: summarize([r[c] for r in runs]) for c in CONTENDERS}
            eps_scaler = SCALER_SHARE * total if data.quantile_features else 0.0
            plans[f"{name}/{total}"] = {
                "scaler_epsilon": eps_scaler,
                "search_budget": total - eps_scaler,
                "search_epsilon_spent": [r["privlearn_tuned"]["epsilon"] for r in runs],
                "candidate_plan_first_seed": runs[0]["privlearn_tuned"]["plan"],
            }
            acc = {c: results[name][str(total)][c]["accuracy"]["mean"] for c in CONTENDERS}
            print(f"{name} eps={total}: " + ", ".join(f"{c}={v:.4f}" for c, v in acc.items()),
                  f"({start.elapsed():.0f} s)", flush=True)  # fmt: skip
        data_notes[name]["seconds"] = t_data.elapsed()
    runtime = start.elapsed()
    doc = {
        "benchmark": "bench/python/bench_workflow.py" + (" --quick" if args.quick else ""),
        "issue": "13, 22: raw features -> private scaling -> the documented private search "
        "(epsilon= a total) vs the default estimator, diffprivlib and non-private",
        "seeds": seeds,
        "epsilons": list(EPSILONS),
        "delta": DELTA,
        "composition": "basic composition of the scaler (pure) and the model",
        "runtime_seconds": runtime,
        "machine": harness.finish(machine),
        "data": data_notes,
        "configuration": configs(DPLR),
        "plans": plans,
        "results": results,
        "table_accuracy": table(results, "accuracy"),
        "table_roc_auc": table({k: v for k, v in results.items() if k != "mnist"}, "roc_auc"),
    }
    doc["sections"] = extra_sections(args.quick, seeds)
    harness.write_json(doc, out)
    print(doc["table_accuracy"])
    print()
    print(doc["table_roc_auc"])
    print(f"\nruntime {runtime:.0f} s, {seeds} seed(s); written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
