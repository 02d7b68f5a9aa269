"""The practitioner's one call (issue 31): :class:`privlearn.tabular.PrivateTabularClassifier`
on raw public tables at a TOTAL epsilon of 0.5, 1 and 3, side by side with diffprivlib's
documented pipeline and non-private scikit-learn.

Tables (``PRIVLEARN_DATA``; the embedded copies otherwise), one fixed split each:

- ``adult``: the raw UCI Adult frame (:func:`privlearn.data.load_adult_frame`), train / test
  files, with :func:`privlearn.tabular.adult_schema` (written from ``adult.names``).
- ``kddcup99-50k``: the embedded 50,000-row subsample of KDD Cup 99 10% as a raw table
  (numeric columns with the KDD schema's public ranges, log maps and private bounds for the
  unbounded counters, the three categoricals by name; ``service``, 66 levels, impact coded),
  normal vs attack, 80 / 20 split.
- ``phishing``: the 68 binary indicator columns of the LIBSVM file as a 0/1 table (schema:
  every column ``binary``), 75 / 25 split.
- ``helr-<name>`` (edin, lbw, pcs, uis): the small medical tables of Kim et al. 2018, 75 / 25
  split. There is no codebook for them here: their schema is DRAFTED from the training split
  (:func:`privlearn.tabular.draft_schema`, ranges and 0/1 columns read from the rows), so these
  rows compare methods but are not private releases (the statement says so).

Contenders, same split, same total epsilon (delta 1e-6 for privlearn; diffprivlib is pure):

- ``privlearn``: ``PrivateTabularClassifier(schema, epsilon)`` at its defaults;
- ``diffprivlib``: its documented pipeline: ``diffprivlib.models.StandardScaler`` with the
  schema's public bounds on the numeric columns (10% of epsilon), public one-hot for the
  categoricals (missing -> its own all-zero block), 0/1 binaries, then
  ``diffprivlib.models.LogisticRegression(epsilon=90%, data_norm=sqrt(m))`` with ``m`` the
  number of original columns (a data-independent norm: standardised columns of about unit
  scale); missing numerics imputed with the public range's middle;
- ``nonprivate``: scikit-learn's StandardScaler + OneHotEncoder + LogisticRegression.

Metric: test ROC AUC, mean and std over 5 seeds. Also timed: one privlearn fit on adult's
train + test rows (48,842) on one core.

``--study``: the budget-rule experiment behind :func:`privlearn.tabular.budget_split`: on
adult (2 private-bound columns) and on adult with all six numeric columns given private bounds
(12 quantiles), the bounds share (codes fixed at 5%) and the codes share at epsilon 0.5 and 1,
3 seeds.

Run: ``PRIVLEARN_DATA=../shared/data python bench/python/bench_tabular.py [--quick] [--study]``
Results: ``bench/results/tabular.json`` (``tabular_study.json``) and a markdown table.
"""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import benchdata
import harness
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from privlearn.experiments.peers import import_diffprivlib, sklearn_logreg_shim
from privlearn.tabular import PrivateTabularClassifier, Schema, adult_schema, draft_schema
from privlearn.tabular.schema import level_key

EPSILONS = (0.5, 1.0, 3.0)
SPLIT_SEED = 20261129


def load_adult() -> tuple[pd.DataFrame, pd.DataFrame, Schema]:
    from privlearn.data import load_adult_frame

    return load_adult_frame("train"), load_adult_frame("test"), adult_schema()


def load_phishing() -> tuple[pd.DataFrame, pd.DataFrame, Schema]:
    from privlearn.data import load_phishing as load

    X, y = load()
    frame = pd.DataFrame((X > 0).astype(int), columns=[f"f{j + 1}" for j in range(X.shape[1])])
    frame["label"] = (y > 0).astype(int)
    train, test = train_test_split(frame, test_size=0.25, random_state=SPLIT_SEED % 2**32)
    schema = Schema.from_dict(
        {
            "columns": {c: {"type": "binary"} for c in frame.columns if c != "label"},
            "target": {"name": "label", "classes": [0, 1]},
        }
    )
    return train, test, schema


#: KDD Cup 99: public ranges from the KDD schema; the binary flags; counters with a log map
#: and private bounds inside wide public ranges (as ``bench_workflow.py``).
_KDD_BINARY = ("land", "logged_in", "root_shell", "is_host_login", "is_guest_login")
_KDD_WIDE = {**benchdata.KDD_WIDE, "su_attempted": (0.0, 10.0)}


def load_kdd_table() -> tuple[pd.DataFrame, pd.DataFrame, Schema]:
    """The embedded 50,000-row KDD Cup 99 subsample as a raw table (categoricals as their
    names again), 80 / 20 split; levels of the three categoricals are the whole file's
    vocabularies (protocol, service and flag names, public)."""
    from privlearn.data import load_kddcup99_embedded

    X, y, names = load_kddcup99_embedded(return_feature_names=True)
    frame = pd.DataFrame(X[:, :38], columns=names[:38])
    cols: dict[str, Any] = {}
    for c in names[:38]:
        if c in _KDD_BINARY:
            cols[c] = {"type": "binary"}
        elif c in benchdata.KDD_PUBLIC:
            cols[c] = {
                "type": "numeric",
                "range": list(benchdata.KDD_PUBLIC[c]),
                "bounds": "public",
            }
        elif c in _KDD_WIDE:
            cols[c] = {"type": "numeric", "range": list(_KDD_WIDE[c]), "transform": "log"}
        else:  # the rates
            cols[c] = {"type": "numeric", "range": [0, 1], "bounds": "public"}
    for cat in ("protocol_type", "service", "flag"):
        idx = [j for j, n in enumerate(names) if n.startswith(cat + "=")]
        levels = [names[j].split("=", 1)[1] for j in idx]
        frame[cat] = np.asarray(levels, dtype=object)[np.argmax(X[:, idx], axis=1)]
        cols[cat] = {"type": "categorical", "levels": levels}
    frame["attack"] = (y > 0).astype(int)
    train, test = train_test_split(frame, test_size=0.2, random_state=SPLIT_SEED % 2**32)
    schema = Schema.from_dict({"columns": cols, "target": {"name": "attack", "classes": [0, 1]}})
    return train, test, schema


def load_helr_table(name: str) -> tuple[pd.DataFrame, pd.DataFrame, Schema]:
    from privlearn.data import load_helr

    X, y = load_helr(name)
    frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(X.shape[1])])
    frame["label"] = (y > 0).astype(int)
    train, test = train_test_split(frame, test_size=0.25, random_state=SPLIT_SEED % 2**32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the draft says loudly that it read the rows
        schema = draft_schema(train, "label")
    return train, test, schema


def numeric_bounds(schema: Schema) -> dict[str, tuple[float, float]]:
    out = {}
    for c in schema.columns:
        if c.type == "numeric":
            lo, hi = c.range
            if c.transform == "log":
                lo, hi = float(np.log1p(lo)), float(np.log1p(hi))
            out[c.name] = (lo, hi)
    return out


def _frames(schema: Schema, frame: pd.DataFrame) -> pd.DataFrame:
    """The schema's columns with public per-row maps diffprivlib cannot do itself: log maps,
    missing numerics -> the range's middle, categoricals as strings with a missing level."""
    out = pd.DataFrame(index=frame.index)
    for c in schema.columns:
        if c.type == "ignore":
            continue
        col = frame[c.name]
        if c.type == "numeric":
            lo, hi = numeric_bounds(schema)[c.name]
            v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
            if c.transform == "log":
                v = np.log1p(np.clip(v, 0, None))
            out[c.name] = np.clip(np.where(np.isnan(v), (lo + hi) / 2, v), lo, hi)
        elif c.type == "binary":
            one = level_key(c.levels[1])
            out[c.name] = np.array([level_key(v) == one for v in col], dtype=float)
        else:
            out[c.name] = col.astype(object).where(col.notna(), "__missing__").astype(str)
    return out


def diffprivlib_pipeline(schema: Schema, epsilon: float, seed: int) -> Pipeline:
    dp = import_diffprivlib().models

    bounds = numeric_bounds(schema)
    numeric = list(bounds)
    cats = [c.name for c in schema.columns if c.type == "categorical"]
    binary = [c.name for c in schema.columns if c.type == "binary"]
    m = len(numeric) + len(cats) + len(binary)
    parts = []
    eps_scaler = 0.1 * epsilon if numeric else 0.0
    if numeric:
        lo = np.array([bounds[c][0] for c in numeric])
        hi = np.array([bounds[c][1] for c in numeric])
        parts.append(
            (
                "numeric",
                dp.StandardScaler(epsilon=eps_scaler, bounds=(lo, hi), random_state=seed),
                numeric,
            )
        )
    if cats:
        levels = [[str(v) for v in schema[c].levels] for c in cats]
        parts.append(("cats", OneHotEncoder(categories=levels, handle_unknown="ignore"), cats))
    if binary:
        parts.append(("binary", FunctionTransformer(), binary))
    model = dp.LogisticRegression(
        epsilon=epsilon - eps_scaler, data_norm=math.sqrt(m), random_state=seed, max_iter=1000
    )
    return Pipeline([("columns", ColumnTransformer(parts, sparse_threshold=0)), ("model", model)])


def nonprivate_pipeline(schema: Schema) -> Pipeline:
    numeric = list(numeric_bounds(schema))
    cats = [c.name for c in schema.columns if c.type == "categorical"]
    binary = [c.name for c in schema.columns if c.type == "binary"]
    parts = []
    if numeric:
        parts.append(("numeric", StandardScaler(), numeric))
    if cats:
        parts.append(("cats", OneHotEncoder(handle_unknown="ignore"), cats))
    if binary:
        parts.append(("binary", "passthrough", binary))
    return Pipeline(
        [("columns", ColumnTransformer(parts)), ("model", LogisticRegression(max_iter=2000))]
    )


def run_table(name: str, loader: Any, seeds: int, epsilons: tuple[float, ...]) -> dict:
    train, test, schema = loader()
    target = schema.target.name
    y_train, y_test = train[target].to_numpy(), test[target].to_numpy()
    Xd_train, Xd_test = _frames(schema, train), _frames(schema, test)
    out: dict[str, Any] = {
        "rows_train": len(train),
        "rows_test": len(test),
        "schema_source": schema.source,
        "results": {},
    }
    base = nonprivate_pipeline(schema).fit(Xd_train, y_train)
    out["nonprivate_auc"] = float(roc_auc_score(y_test, base.predict_proba(Xd_test)[:, 1]))
    for eps in epsilons:
        cell: dict[str, list[float]] = {"privlearn": [], "diffprivlib": [], "privlearn_s": []}
        for s in range(seeds):
            with harness.stopwatch() as sw, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = PrivateTabularClassifier(schema, epsilon=eps, seed=s).fit(train)
            cell["privlearn_s"].append(sw.seconds)
            assert est.privacy_.epsilon <= eps
            cell["privlearn"].append(
                float(roc_auc_score(y_test, est.predict_proba(test.drop(columns=target))[:, 1]))
            )
            with sklearn_logreg_shim(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                dpl = diffprivlib_pipeline(schema, eps, s).fit(Xd_train, y_train)
                proba = dpl.predict_proba(Xd_test)[:, 1]
            cell["diffprivlib"].append(float(roc_auc_score(y_test, proba)))
        out["results"][str(eps)] = {
            k: {"mean": float(np.mean(v)), "std": float(np.std(v)), "values": v}
            for k, v in cell.items()
        }
        r = out["results"][str(eps)]
        print(
            f"{name:<14} eps {eps:<4g} privlearn {r['privlearn']['mean']:.3f} "
            f"+- {r['privlearn']['std']:.3f}  diffprivlib {r['diffprivlib']['mean']:.3f} "
            f"+- {r['diffprivlib']['std']:.3f}  non-private {out['nonprivate_auc']:.3f}  "
            f"({np.median(cell['privlearn_s']):.2f} s/fit)",
            flush=True,
        )
    return out


def time_50k(reps: int = 3) -> dict[str, Any]:
    from privlearn.data import load_adult_frame

    frame = pd.concat([load_adult_frame("train"), load_adult_frame("test")], ignore_index=True)
    seeds = iter(range(reps))

    def fit() -> Any:
        return PrivateTabularClassifier(adult_schema(), epsilon=1.0, seed=next(seeds)).fit(frame)

    t = harness.compare({"fit": fit}, reps, warmup=0)["fit"]
    return {"rows": len(frame), "median_s": t.median, **t.as_dict()}


def adult_regression_schema() -> Schema:
    """Adult with ``hours-per-week`` as a regression target (public range [0, 168]: the hours
    of a week) and ``income`` as a binary feature."""
    d = adult_schema().to_dict()
    del d["columns"]["hours-per-week"]
    d["columns"]["income"] = {"type": "binary"}
    d["target"] = {"name": "hours-per-week", "range": [0, 168]}
    return Schema.from_dict(d)


def run_regression(seeds: int, epsilons: tuple[float, ...]) -> dict[str, Any]:
    """PrivateTabularRegressor vs diffprivlib's LinearRegression (public bounds on every
    column after public one-hot coding) vs least squares, on Adult's hours-per-week."""
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score

    from privlearn.data import load_adult_frame
    from privlearn.tabular import PrivateTabularRegressor

    dp = import_diffprivlib().models
    schema = adult_regression_schema()
    train, test = load_adult_frame("train"), load_adult_frame("test")
    target = schema.target.name
    y_train, y_test = train[target].to_numpy(float), test[target].to_numpy(float)
    Xd_train, Xd_test = _frames(schema, train), _frames(schema, test)
    bounds = numeric_bounds(schema)
    numeric = list(bounds)
    cats = [c.name for c in schema.columns if c.type == "categorical"]
    binary = [c.name for c in schema.columns if c.type == "binary"]
    coder = ColumnTransformer(
        [
            ("numeric", "passthrough", numeric),
            ("cats", OneHotEncoder(
                categories=[[str(v) for v in schema[c].levels] for c in cats],
                handle_unknown="ignore", sparse_output=False), cats),
            ("binary", "passthrough", binary),
        ]
    )  # fmt: skip
    Z_train = coder.fit_transform(Xd_train)  # public maps only (declared levels)
    Z_test = coder.transform(Xd_test)
    lo = np.zeros(Z_train.shape[1])
    hi = np.ones(Z_train.shape[1])
    for j, c in enumerate(numeric):
        lo[j], hi[j] = bounds[c]
    ols = LinearRegression().fit(Z_train, y_train)
    out: dict[str, Any] = {
        "rows_train": len(train),
        "target": target,
        "ols_r2": float(r2_score(y_test, ols.predict(Z_test))),
        "results": {},
    }
    for eps in epsilons:
        cell: dict[str, list[float]] = {"privlearn": [], "diffprivlib": []}
        for s in range(seeds):
            est = PrivateTabularRegressor(schema, epsilon=eps, seed=s).fit(train)
            assert est.privacy_.epsilon <= eps
            cell["privlearn"].append(float(est.score(test.drop(columns=target), y_test)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lr = dp.LinearRegression(
                    epsilon=eps, bounds_X=(lo, hi), bounds_y=(0.0, 168.0), random_state=s
                ).fit(Z_train, y_train)
            cell["diffprivlib"].append(float(r2_score(y_test, lr.predict(Z_test))))
        out["results"][str(eps)] = {
            k: {"mean": float(np.mean(v)), "std": float(np.std(v)), "values": v}
            for k, v in cell.items()
        }
        r = out["results"][str(eps)]
        print(
            f"adult-hours R^2 eps {eps:<4g} privlearn {r['privlearn']['mean']:.3f} +- "
            f"{r['privlearn']['std']:.3f}  diffprivlib {r['diffprivlib']['mean']:.3g}  "
            f"least squares {out['ols_r2']:.3f}",
            flush=True,
        )
    return out


def study(seeds: int) -> dict[str, Any]:
    """The bounds and codes shares on adult and on adult with six private-bound columns."""
    train, test, schema = load_adult()
    six = schema.to_dict()
    for c in ("age", "education-num", "capital-gain", "capital-loss", "hours-per-week"):
        six["columns"][c]["bounds"] = "private"
    six["columns"]["fnlwgt"] = {"type": "numeric", "range": [0, 1.5e6]}
    variants = {"adult": schema, "adult-six-bounds": Schema.from_dict(six)}
    y_test = test["income"].to_numpy()
    out: dict[str, Any] = {}
    for vname, sch in variants.items():
        for eps in (0.5, 1.0):
            grid = [{"bounds": b, "codes": 0.05} for b in (0.03, 0.06, 0.12, 0.24, 0.4)]
            if vname == "adult":
                grid += [{"bounds": 0.06, "codes": c} for c in (0.02, 0.1, 0.2)]
            for split in grid:
                split = {**split, "model": 1.0 - split["bounds"] - split["codes"]}
                aucs = []
                for s in range(seeds):
                    est = PrivateTabularClassifier(sch, epsilon=eps, seed=s, split=split)
                    est.fit(train)
                    proba = est.predict_proba(test.drop(columns="income"))[:, 1]
                    aucs.append(float(roc_auc_score(y_test, proba)))
                key = f"{vname} eps={eps} bounds={split['bounds']} codes={split['codes']}"
                out[key] = {"mean": float(np.mean(aucs)), "std": float(np.std(aucs))}
                print(f"{key}: AUC {np.mean(aucs):.4f} +- {np.std(aucs):.4f}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = harness.cli(__doc__, "tabular", reps=3)  # --quick: 2 seeds, adult + phishing
    # (--reps: fits of the one-core 48,842-row timing)
    parser.add_argument("--study", action="store_true", help="the budget-rule experiment")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--regression", action="store_true", help="only the regression")
    parser.add_argument(
        "--tables",
        nargs="+",
        default=None,
        help="run only these tables and merge them into an existing tabular.json",
    )
    args = parser.parse_args(argv)
    machine = harness.machine()
    RESULTS = harness.out_dir(args)
    if args.study:
        doc = {"machine": machine, "study": study(3 if not args.quick else 1)}
        harness.write_json(
            {**doc, "machine": harness.finish(machine)}, RESULTS / "tabular_study.json"
        )
        return 0
    seeds = 2 if args.quick else args.seeds
    if args.regression:
        doc = {"machine": machine, "seeds": seeds, "regression": run_regression(seeds, EPSILONS)}
        harness.finish(machine)
        harness.write_json(doc, RESULTS / "tabular_regression.json")
        return 0
    tables: dict[str, Any] = {
        "adult": load_adult,
        "kddcup99-50k": load_kdd_table,
        "phishing": load_phishing,
    }
    if not args.quick:
        for name in ("edin", "lbw", "pcs", "uis"):
            tables[f"helr-{name}"] = lambda name=name: load_helr_table(name)
    sw = harness.stopwatch()
    out_path = RESULTS / "tabular.json"
    previous: dict[str, Any] = {}
    if args.tables:
        unknown = [t for t in args.tables if t not in tables]
        if unknown:
            parser.error(f"unknown tables {unknown}; known: {list(tables)}")
        tables = {t: tables[t] for t in args.tables}
        if out_path.exists():
            previous = json.loads(out_path.read_text())
    results = {name: run_table(name, loader, seeds, EPSILONS) for name, loader in tables.items()}
    if previous:
        results = {**previous.get("results", {}), **results}
    timing = time_50k(args.reps)
    print(f"one fit of {timing['rows']} rows: {timing['median_s']:.2f} s (median of {args.reps})")
    lines = [
        "| table | rows | eps | privlearn AUC | diffprivlib AUC | non-private | ahead |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        for eps, cell in r["results"].items():
            p, d = cell["privlearn"], cell["diffprivlib"]
            lines.append(
                f"| {name} | {r['rows_train']} | {eps} | {p['mean']:.3f} +- {p['std']:.3f} | "
                f"{d['mean']:.3f} +- {d['std']:.3f} | {r['nonprivate_auc']:.3f} | "
                f"{'yes' if p['mean'] > d['mean'] else 'NO'} |"
            )
    table = "\n".join(lines)
    print(table)
    doc = {
        "machine": machine,
        "seeds": seeds,
        "epsilons": EPSILONS,
        "results": results,
        "time_50k": timing,
        "table": table,
        "runtime_s": sw.elapsed(),
    }
    if previous:
        doc["runtime_s"] += previous.get("runtime_s", 0.0)
    harness.finish(machine)
    harness.write_json(doc, out_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
