"""The raw-table recipe of the gallery (``docs/examples/plot_tabular_recipe.py``) against
diffprivlib and a non-private baseline, on the raw UCI Adult table (issue 22).

Data: :func:`privlearn.data.load_adult_frame` (the raw UCI files; ``?`` is a missing value;
32,561 training and 16,281 test rows; predict ``income > 50K``). Every contender is fitted
on the training file and scored on the test file (ROC AUC and accuracy).

Contenders, at a TOTAL epsilon per run (delta = 1e-6 for privlearn; diffprivlib is pure DP):

- ``privlearn``: the gallery's recipe, one :class:`~privlearn.accounting.PrivacyLedger`
  holding it: private 1% / 99% quantile bounds of ``age`` and ``hours-per-week`` inside public
  ranges (:class:`~privlearn.preprocessing.DPFeatureScaler`, 10% of epsilon), public maps for
  ``capital-gain`` / ``capital-loss`` (log1p over the schema's range) and ``education-num``,
  one-hot with the schema's public levels for the six small categoricals, Laplace impact codes
  for ``occupation`` and ``native-country`` (:class:`~privlearn.encoding.ImpactEncoder`, 10%),
  and :class:`~privlearn.linear.DPSGDClassifier` at its defaults (80%).
- ``diffprivlib``: ``diffprivlib.models.LogisticRegression(epsilon=total, data_norm=1)``, its
  other parameters at their defaults, with its own honest preprocessing, all of it public (no
  budget spent before the model): the five numeric columns mapped by public ranges (``age``
  over [0, 120], ``hours-per-week`` over [0, 168], the same log1p map for the capital columns,
  ``education-num`` over 1-16), one-hot of all eight categoricals with the schema's levels
  (missing: all zeros), then every row projected onto the unit ball (a per-row map).
- ``diffprivlib_on_recipe``: the same diffprivlib model on privlearn's private features (the
  recipe's columns, rows projected onto the unit ball), with the model's 80% of epsilon: the
  two models compared on equal inputs.
- ``nonprivate``: scikit-learn's ``LogisticRegression`` on standardised numeric columns and
  one-hot categoricals (levels read from the data).

``--study`` runs the recipe's own variants instead (:func:`study`): the budget split between
bounds, codes and model, and one-hot coding of every column; the gallery example quotes it.

Run: ``PRIVLEARN_DATA=../shared/data python bench/python/workflow_recipe.py [--quick]``
(diffprivlib comes with the ``experiments`` extra; where it cannot be imported its rows say
why).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import harness
import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from privlearn.accounting import PrivacyLedger
from privlearn.data import ADULT_CATEGORIES, load_adult_frame, project_to_ball
from privlearn.encoding import ImpactEncoder
from privlearn.experiments.peers import PeerUnavailable, import_diffprivlib, sklearn_logreg_shim
from privlearn.linear import DPSGDClassifier
from privlearn.preprocessing import DPFeatureScaler

EPSILONS = (0.5, 1.0, 3.0)
SEEDS = (0, 1, 2, 3, 4)
DELTA = 1e-6

# ---- the recipe (as in docs/examples/plot_tabular_recipe.py) ---------------------------------
QUANTILE = ["age", "hours-per-week"]
QUANTILE_RANGES = ([0.0, 0.0], [120.0, 168.0])
HEAVY = ["capital-gain", "capital-loss"]
SMALL = ["workclass", "education", "marital-status", "relationship", "race", "sex"]
LARGE = ["occupation", "native-country"]
SPLIT = {"bounds": 0.1, "codes": 0.1, "model": 0.8}


def log_scaled(z: Any) -> Any:
    """Public map: log1p, then [0, log1p(99,999)] onto [0, 1/2]."""
    return 0.5 * np.log1p(np.clip(z, 0.0, 99_999.0)) / np.log1p(99_999.0)


def education_scaled(z: Any) -> Any:
    """Public map: the schema's range 1-16 onto [0, 1/2]."""
    return 0.5 * (np.clip(z, 1.0, 16.0) - 1.0) / 15.0


def recipe_columns(
    epsilon: float,
    ledger: Any,
    seed: int | None,
    split: dict[str, float] | None = None,
    impact_code: bool = True,
) -> ColumnTransformer:
    """The recipe's private features at a TOTAL ``epsilon`` (it spends the bounds' and the
    codes' shares of it, ``split``; default :data:`SPLIT`). ``impact_code=False``: one-hot
    the two larger columns too (public schema, no budget for codes)."""
    eps = {part: share * epsilon for part, share in (split or SPLIT).items()}
    if not impact_code:
        return ColumnTransformer([
            ("bounds", DPFeatureScaler(
                epsilon=eps["bounds"], bounds=QUANTILE_RANGES, quantile_range=(0.01, 0.99),
                lattice_bits=12, seed=seed, ledger=ledger), QUANTILE),
            ("heavy", FunctionTransformer(log_scaled), HEAVY),
            ("education", FunctionTransformer(education_scaled), ["education-num"]),
            ("onehot", OneHotEncoder(
                categories=[list(ADULT_CATEGORIES[c]) for c in (*SMALL, *LARGE)],
                handle_unknown="ignore", sparse_output=False), [*SMALL, *LARGE]),
        ])  # fmt: skip
    return ColumnTransformer([
        ("bounds", DPFeatureScaler(
            epsilon=eps["bounds"], bounds=QUANTILE_RANGES, quantile_range=(0.01, 0.99),
            lattice_bits=12, seed=seed, ledger=ledger), QUANTILE),
        ("heavy", FunctionTransformer(log_scaled, feature_names_out="one-to-one"), HEAVY),
        ("education", FunctionTransformer(education_scaled, feature_names_out="one-to-one"),
         ["education-num"]),
        ("onehot", OneHotEncoder(
            categories=[list(ADULT_CATEGORIES[c]) for c in SMALL],
            handle_unknown="ignore", sparse_output=False), SMALL),
        ("codes", ImpactEncoder(
            "bayes", mode="laplace", epsilon=eps["codes"],
            categories=[[*ADULT_CATEGORIES[c], np.nan] for c in LARGE],
            classes=[0, 1], seed=seed, ledger=ledger), LARGE),
    ])  # fmt: skip


def make_recipe(
    epsilon: float,
    ledger: Any,
    seed: int | None = None,
    split: dict[str, float] | None = None,
    impact_code: bool = True,
) -> Pipeline:
    """The private pipeline at a TOTAL ``epsilon``, every fit charged to ``ledger``
    (``split``, ``impact_code``: as :func:`recipe_columns`; without impact codes their
    share goes to the model)."""
    split = dict(split or SPLIT)
    if not impact_code:
        split["model"] += split.pop("codes")
        split["codes"] = 0.0
    model = DPSGDClassifier(
        epsilon=split["model"] * epsilon, classes=[0, 1], seed=seed, ledger=ledger
    )
    columns = recipe_columns(epsilon, ledger, seed, split, impact_code)
    return Pipeline([("columns", columns), ("model", model)])


#: The variants of :func:`study`: (name, split, impact_code).
STUDY = (
    ("05/05/90", {"bounds": 0.05, "codes": 0.05, "model": 0.9}, True),
    ("10/10/80 (the recipe)", SPLIT, True),
    ("20/20/60", {"bounds": 0.2, "codes": 0.2, "model": 0.6}, True),
    ("10/0/90, one-hot for every column", SPLIT, False),
)


def study(
    epsilons: Sequence[float] = (0.5, 1.0), seeds: Sequence[int] = (0, 1, 2)
) -> list[dict[str, Any]]:
    """The budget split (bounds / codes / model) and the coding of the two larger columns:
    mean test AUC per variant of :data:`STUDY` (the numbers quoted in the gallery example)."""
    train, test = load_adult_frame("train"), load_adult_frame("test")
    y, y_test = train.pop("income").to_numpy(), test.pop("income").to_numpy()
    rows = []
    for epsilon in epsilons:
        for name, split, impact_code in STUDY:
            aucs = []
            for seed in seeds:
                ledger = PrivacyLedger(epsilon, DELTA, neighboring="add_remove")
                pipe = make_recipe(epsilon, ledger, seed, split, impact_code).fit(train, y)
                aucs.append(float(roc_auc_score(y_test, pipe.decision_function(test))))
            rows.append(dict(variant=name, epsilon=epsilon, auc=float(np.mean(aucs)), aucs=aucs))
    return rows


# ---- the other contenders ---------------------------------------------------------------------
def _scaled_by(lo: float, hi: float) -> FunctionTransformer:
    return FunctionTransformer(lambda z: (np.clip(z, lo, hi) - lo) / (hi - lo))


def public_columns() -> ColumnTransformer:
    """diffprivlib's inputs: public ranges and the schema's one-hot levels, no budget."""
    return ColumnTransformer([
        ("age", _scaled_by(0.0, 120.0), ["age"]),
        ("hours", _scaled_by(0.0, 168.0), ["hours-per-week"]),
        ("heavy", FunctionTransformer(lambda z: 2.0 * log_scaled(z)), HEAVY),
        ("education", _scaled_by(1.0, 16.0), ["education-num"]),
        ("onehot", OneHotEncoder(
            categories=[list(ADULT_CATEGORIES[c]) for c in (*SMALL, *LARGE)],
            handle_unknown="ignore", sparse_output=False), [*SMALL, *LARGE]),
    ])  # fmt: skip


def nonprivate_model() -> Pipeline:
    return Pipeline([
        ("columns", ColumnTransformer([
            ("numeric", StandardScaler(), [*QUANTILE, *HEAVY, "education-num"]),
            ("categorical", OneHotEncoder(handle_unknown="ignore"), [*SMALL, *LARGE]),
        ])),
        ("model", LogisticRegression(max_iter=2000)),
    ])  # fmt: skip


def _scores(y: np.ndarray, score: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    return {"auc": float(roc_auc_score(y, score)), "accuracy": float(accuracy_score(y, pred))}


def _diffprivlib(
    dpl: Any, epsilon: float, data: tuple[np.ndarray, ...], seed: int
) -> dict[str, float]:
    """diffprivlib's LogisticRegression on ``data = (Z, y, Z_test, y_test)``, rows projected
    onto the unit ball (a per-row map) so that ``data_norm=1`` holds."""
    Z, y, Z_test, y_test = data
    with sklearn_logreg_shim(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its convergence warnings at small epsilon
        model = dpl.models.LogisticRegression(epsilon=epsilon, data_norm=1.0, random_state=seed)
        model.fit(project_to_ball(Z), y)
        Zt = project_to_ball(Z_test)
        return _scores(y_test, model.predict_proba(Zt)[:, 1], model.predict(Zt))


def run(
    epsilons: Sequence[float] = EPSILONS,
    seeds: Sequence[int] | int | None = SEEDS,
    quick: bool = False,
) -> list[dict[str, Any]]:
    """Fit every contender at every total epsilon and seed.

    ``seeds``: the seeds, or their number (``range(seeds)``; None: :data:`SEEDS`);
    ``quick``: the first seed only. Returns JSON-able rows, one per (contender, epsilon,
    seed): ``contender``, ``epsilon`` (the total spent; None for the non-private baseline),
    ``delta``, ``seed``, ``auc``, ``accuracy``, ``seconds``, or ``skipped`` with the reason
    where a peer cannot run."""
    if seeds is None:
        seeds = SEEDS
    seeds = tuple(range(seeds)) if isinstance(seeds, int) else tuple(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    seeds = seeds[:1] if quick else seeds
    train, test = load_adult_frame("train"), load_adult_frame("test")
    y, y_test = train.pop("income").to_numpy(), test.pop("income").to_numpy()
    try:
        dpl: Any = import_diffprivlib()
        dpl_reason = ""
    except PeerUnavailable as exc:
        dpl, dpl_reason = None, str(exc)
    rows: list[dict[str, Any]] = []

    seconds, base = harness.timed(lambda: nonprivate_model().fit(train, y))
    rows.append(dict(
        contender="nonprivate", epsilon=None, delta=0.0, seed=None,
        **_scores(y_test, base.decision_function(test), base.predict(test)), seconds=seconds,
    ))  # fmt: skip
    public = public_columns().fit(train)
    Z_pub, Z_pub_test = public.transform(train), public.transform(test)
    for epsilon in epsilons:
        for seed in seeds:
            sw = harness.stopwatch()
            ledger = PrivacyLedger(epsilon, DELTA, neighboring="add_remove")
            pipe = make_recipe(epsilon, ledger, seed=seed).fit(train, y)
            rows.append(dict(
                contender="privlearn", epsilon=ledger.spent.epsilon,
                delta=ledger.spent.delta, seed=seed,
                **_scores(y_test, pipe.decision_function(test), pipe.predict(test)),
                seconds=sw.elapsed(),
            ))  # fmt: skip
            if dpl is None:
                for name in ("diffprivlib", "diffprivlib_on_recipe"):
                    rows.append(dict(contender=name, epsilon=epsilon, delta=0.0, seed=seed,
                                     skipped=dpl_reason))  # fmt: skip
                continue
            sw = harness.stopwatch()
            res = _diffprivlib(dpl, epsilon, (Z_pub, y, Z_pub_test, y_test), seed)
            rows.append(dict(contender="diffprivlib", epsilon=epsilon, delta=0.0, seed=seed,
                             **res, seconds=sw.elapsed()))  # fmt: skip
            # the same model on the recipe's private features (fitted above: its bounds and
            # codes are in `pipe`, their epsilon charged to `ledger`)
            sw = harness.stopwatch()
            cols = pipe["columns"]
            data = (cols.transform(train), y, cols.transform(test), y_test)
            res = _diffprivlib(dpl, SPLIT["model"] * epsilon, data, seed)
            rows.append(dict(contender="diffprivlib_on_recipe", epsilon=epsilon, delta=0.0,
                             seed=seed, **res, seconds=sw.elapsed()))  # fmt: skip
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """A markdown table: mean (sd over seeds) test AUC / accuracy per contender and epsilon."""
    epsilons = sorted({r["epsilon"] for r in rows if r["contender"] == "privlearn"})
    order = ["privlearn", "diffprivlib", "diffprivlib_on_recipe"]
    lines = [
        "| contender | " + " | ".join(f"epsilon {e:g}: AUC / accuracy" for e in epsilons) + " |",
        "|---|" + "---|" * len(epsilons),
    ]
    for name in order:
        cells = []
        for e in epsilons:
            got = [r for r in rows if r["contender"] == name and math.isclose(r["epsilon"], e)]
            done = [r for r in got if "auc" in r]
            if not done:
                cells.append(f"not run ({got[0]['skipped']})" if got else "-")
                continue
            auc = np.array([r["auc"] for r in done])
            acc = np.array([r["accuracy"] for r in done])
            cells.append(f"{auc.mean():.3f} (±{auc.std():.3f}) / {acc.mean():.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    base = next(r for r in rows if r["contender"] == "nonprivate")
    lines.append(
        "| nonprivate | " + " | ".join(
            [f"{base['auc']:.3f} / {base['accuracy']:.3f}"] * len(epsilons)) + " |"
    )  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.cli(__doc__, "workflow_recipe", omit=("reps", "out"))  # --quick: one seed
    parser.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS))
    parser.add_argument("--seeds", type=int, default=len(SEEDS), help="number of seeds")
    parser.add_argument(
        "--study", action="store_true", help="the budget split and coding study instead"
    )
    args = parser.parse_args(argv)
    if args.study:
        print("| variant (bounds / codes / model) | epsilon | mean test AUC | per seed |")
        print("|---|---|---|---|")
        for r in study(seeds=range(min(args.seeds, 3))):
            per_seed = ", ".join(f"{a:.4f}" for a in r["aucs"])
            print(f"| {r['variant']} | {r['epsilon']:g} | {r['auc']:.3f} | {per_seed} |")
        return
    epsilons = tuple(float(e) for e in args.epsilons.split(","))
    machine, sw = harness.machine(), harness.stopwatch()
    rows = run(epsilons, seeds=args.seeds, quick=args.quick)
    print(table(rows))
    n_seeds = len({r["seed"] for r in rows if r["contender"] == "privlearn"})
    per_fit = np.median([r["seconds"] for r in rows if r["contender"] == "privlearn"])
    print(
        f"\nUCI Adult raw (train 32,561 / test 16,281), {n_seeds} seed(s), mean (sd) test AUC / "
        f"accuracy; delta 1e-6 (privlearn); privlearn pipeline fit {per_fit:.1f} s median; "
        f"total {sw.elapsed():.0f} s on {harness.readme_machine(harness.finish(machine))}"
    )


if __name__ == "__main__":
    main()
