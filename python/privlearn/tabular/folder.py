"""What ``privlearn fit`` and ``privlearn predict`` do: a fitted pipeline written to a folder
(model, statement, report with figures), and predictions from such a folder.

The folder is built in a temporary sibling and renamed into place at the end, so a failed run
(bad input, a refused budget, an interrupt) leaves no half-written folder.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from privlearn.progress import progress_bar
from privlearn.tabular.estimators import PrivateTabularClassifier, PrivateTabularRegressor
from privlearn.tabular.schema import Schema

__all__ = ["MODEL_FILE", "fit_to_folder", "predict_from_folder", "read_table"]

MODEL_FILE = "model.joblib"


def read_table(path: str | Path, what: str = "table") -> Any:
    """A CSV file as a DataFrame (values as written; the schema says what is missing)."""
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{what} not found: {str(p)!r}")
    try:
        return pd.read_csv(p, low_memory=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what} {str(p)!r} is not a readable CSV file: {exc}") from None


def _check_out_dir(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(
            f"output folder {str(out)!r} already exists and is not empty: choose a new one (a "
            "fitted model is never overwritten)"
        )
    parent = out.resolve().parent
    if not parent.is_dir():
        raise FileNotFoundError(f"the parent folder of {str(out)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise PermissionError(f"cannot write into {str(parent)!r}")


def fit_to_folder(
    table: str | Path,
    schema: str | Path,
    out: str | Path,
    *,
    epsilon: float,
    delta: float | None = None,
    seed: int | None = None,
    test: str | Path | None = None,
    model: str = "sgd",
    verbose: int = 1,
) -> Path:
    """Fit the pipeline on ``table`` (CSV) with ``schema`` and write ``out``.

    ``out`` holds ``model.joblib``, ``schema.json``, ``statement.txt``, ``statement.json``,
    ``report.md`` and its PNG figures (``budget.png``, ``weights.png``; with ``test``:
    ``roc.png`` and ``calibration.png`` or ``residuals.png``, and ``metrics.json``).
    """
    out = Path(out)
    _check_out_dir(out)
    _plt()  # the report needs matplotlib: say so before any fit
    sch = Schema.load(schema)
    bar = progress_bar(verbose, 4 if test is not None else 3, "privlearn fit", "step")
    try:
        frame = read_table(table)
        test_frame = read_table(test, "test table") if test is not None else None
        bar.update(1)
        cls = PrivateTabularClassifier if sch.target.task == "classification" else (
            PrivateTabularRegressor
        )  # fmt: skip
        est = cls(sch, epsilon=epsilon, delta=delta, seed=seed, model=model)
        if sch.target.name not in frame.columns:
            raise ValueError(f"the table has no column {sch.target.name!r}, the schema's target")
        est.fit(frame)
        bar.update(1)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.resolve().parent))
        try:
            _write_folder(est, sch, tmp, test_frame, bar)
            if out.exists():
                out.rmdir()  # empty (checked above)
            os.rename(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    finally:
        bar.close()
    return out


def _write_folder(est: Any, sch: Schema, tmp: Path, test: Any, bar: Any) -> None:
    import joblib

    joblib.dump(est, tmp / MODEL_FILE)
    sch.save(tmp / "schema.json")
    (tmp / "statement.txt").write_text(str(est.privacy_) + "\n", encoding="utf-8")
    (tmp / "statement.json").write_text(
        json.dumps(est.privacy_.to_dict(), indent=2) + "\n", encoding="utf-8"
    )
    metrics = None
    figures = _figures(est, tmp)
    bar.update(1)
    if test is not None:
        metrics, more = _test_figures(est, sch, test, tmp)
        figures += more
        (tmp / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        bar.update(1)
    (tmp / "report.md").write_text(_report(est, sch, figures, metrics), encoding="utf-8")


def _plt() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            "privlearn fit writes its report with matplotlib, which is not installed: "
            "pip install matplotlib (or privlearn's 'plot' extra)"
        ) from None

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _figures(est: Any, tmp: Path) -> list[tuple[str, str]]:
    plt = _plt()
    figs = []
    p = est.privacy_
    if p.releases:
        fig, ax = plt.subplots(figsize=(6, 2.2 + 0.3 * len(p.releases)), layout="constrained")
        names = [f"{r.part} ({r.estimator})" for r in p.releases]
        ax.barh(names, [r.epsilon for r in p.releases], color="tab:blue")
        for i, r in enumerate(p.releases):
            ax.text(r.epsilon, i, f" {r.epsilon:.3g} ({r.share:.0%})", va="center")
        ax.set_xlabel(f"epsilon (total {p.epsilon:.3g} of {p.requested[0]:.3g})")
        ax.set_title("Budget split")
        ax.invert_yaxis()
        ax.set_xlim(0, max(r.epsilon for r in p.releases) * 1.35)
        fig.savefig(tmp / "budget.png", dpi=110)
        plt.close(fig)
        figs.append(("Budget split", "budget.png"))
    weights = est.column_weights()
    order = sorted(weights, key=weights.get)
    fig, ax = plt.subplots(figsize=(6, 1.5 + 0.28 * len(order)), layout="constrained")
    ax.barh(order, [weights[c] for c in order], color="tab:green")
    ax.set_xlabel("norm of the column's coefficients (model scale)")
    ax.set_title("Weight of each original column")
    fig.savefig(tmp / "weights.png", dpi=110)
    plt.close(fig)
    figs.append(("Weight of each original column", "weights.png"))
    return figs


def _test_figures(est: Any, sch: Schema, test: Any, tmp: Path) -> tuple[dict, list]:
    from sklearn import metrics as skm

    plt = _plt()
    name = sch.target.name
    if name not in test.columns:
        raise ValueError(f"the test table has no column {name!r}, the schema's target")
    y_raw = test[name]
    X = test.drop(columns=[name])
    figs: list[tuple[str, str]] = []
    if sch.target.task == "regression":
        y = np.asarray(y_raw, dtype=float)
        keep = np.isfinite(y)
        pred = est.predict(X)[keep]
        y = y[keep]
        m = {
            "rows": int(keep.sum()),
            "r2": float(skm.r2_score(y, pred)),
            "rmse": float(math.sqrt(skm.mean_squared_error(y, pred))),
            "mae": float(skm.mean_absolute_error(y, pred)),
        }
        fig, ax = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
        ax[0].scatter(pred, y - pred, s=4, alpha=0.4)
        ax[0].axhline(0, color="k", lw=1)
        ax[0].set_xlabel("prediction")
        ax[0].set_ylabel("residual")
        ax[1].hist(y - pred, bins=50)
        ax[1].set_xlabel("residual")
        fig.suptitle(f"Test residuals: R^2 {m['r2']:.3f}, RMSE {m['rmse']:.3g}")
        fig.savefig(tmp / "residuals.png", dpi=110)
        plt.close(fig)
        return m, [("Residuals on the test table", "residuals.png")]
    from privlearn.tabular.schema import level_key

    classes = list(est.classes_)
    keys = {level_key(c): i for i, c in enumerate(classes)}
    idx = np.array([keys.get(level_key(v), -1) for v in y_raw.to_numpy()])
    keep = idx >= 0
    proba = est.predict_proba(X)[keep]
    idx = idx[keep]
    m = {
        "rows": int(keep.sum()),
        "accuracy": float(np.mean(np.argmax(proba, axis=1) == idx)),
        "log_loss": float(skm.log_loss(idx, proba, labels=list(range(len(classes))))),
    }
    if len(classes) == 2:
        y = idx == 1
        m["roc_auc"] = float(skm.roc_auc_score(y, proba[:, 1]))
        m["brier"] = float(skm.brier_score_loss(y, proba[:, 1]))
        fpr, tpr, _ = skm.roc_curve(y, proba[:, 1])
        fig, ax = plt.subplots(figsize=(4.2, 4), layout="constrained")
        ax.plot(fpr, tpr, label=f"AUC {m['roc_auc']:.3f}")
        ax.plot([0, 1], [0, 1], "k--", lw=1)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.set_title(f"ROC (positive class {classes[1]!r})")
        ax.legend(loc="lower right")
        fig.savefig(tmp / "roc.png", dpi=110)
        plt.close(fig)
        from sklearn.calibration import calibration_curve

        frac, mean = calibration_curve(y, proba[:, 1], n_bins=10, strategy="quantile")
        fig, ax = plt.subplots(figsize=(4.2, 4), layout="constrained")
        ax.plot(mean, frac, "o-", label="model")
        ax.plot([0, 1], [0, 1], "k--", lw=1, label="perfect")
        ax.set_xlabel("predicted probability")
        ax.set_ylabel("observed frequency")
        ax.set_title(f"Calibration (Brier {m['brier']:.3f})")
        ax.legend(loc="upper left")
        fig.savefig(tmp / "calibration.png", dpi=110)
        plt.close(fig)
        figs += [("ROC curve on the test table", "roc.png"), ("Calibration", "calibration.png")]
    return m, figs


def _report(est: Any, sch: Schema, figures: list, metrics: dict | None) -> str:
    p = est.privacy_
    lines = ["# privlearn fit report", ""]
    if p.private:
        lines.append(
            f"A {type(est).__name__} of target `{sch.target.name}`, "
            f"**({p.epsilon:.4g}, {p.delta:.3g})-differentially private** under add/remove-one "
            f"neighbours (requested at most ({p.requested[0]:.4g}, {p.requested[1]:.3g}))."
        )
    else:
        lines.append("**Not private** (epsilon = inf): for experiments only.")
    for w in p.warnings:
        lines += ["", f"**Warning:** {w}"]
    lines += ["", "## Releases", "", "| part | estimator | share | epsilon | delta |"]
    lines.append("|---|---|---|---|---|")
    for r in p.releases:
        lines.append(
            f"| {r.part} | {r.estimator} | {r.share:.1%} | {r.epsilon:.4g} | {r.delta:.3g} |"
        )
    lines += ["", "The full statement is in `statement.txt` (and `statement.json`).", ""]
    if metrics:
        lines += ["## Test metrics", ""]
        lines += [f"- {k}: {v:.4g}" if isinstance(v, float) else f"- {k}: {v}" for k, v in
                  metrics.items()]  # fmt: skip
        lines.append("")
        lines.append(
            "(The test table is read in the clear to compute these: they are not covered by "
            "the statement; do not publish them if the test rows are private.)"
        )
        lines.append("")
    lines += ["## Figures", ""]
    for title, fname in figures:
        lines += [f"### {title}", "", f"![{title}]({fname})", ""]
    lines += [
        "## Files",
        "",
        f"- `{MODEL_FILE}`: the fitted estimator (`joblib.load`; `privlearn predict DIR ...`)",
        "- `schema.json`: the public schema it was fitted with",
        "- `statement.txt`, `statement.json`: the privacy statement",
        "",
    ]
    return "\n".join(lines)


def predict_from_folder(folder: str | Path, table: str | Path, out: str | Path) -> Path:
    """Write one row per row of ``table``: the prediction, and for a classifier one
    ``proba_<class>`` column per class. Written to a temporary file, then renamed."""
    import joblib
    import pandas as pd

    folder = Path(folder)
    model_path = folder / MODEL_FILE
    if not model_path.is_file():
        raise FileNotFoundError(
            f"{str(folder)!r} holds no {MODEL_FILE}: give the folder written by 'privlearn fit'"
        )
    out = Path(out)
    if out.is_dir():
        raise IsADirectoryError(f"--out {str(out)!r} is a folder; give a file name")
    if not out.resolve().parent.is_dir():
        raise FileNotFoundError(f"the folder of {str(out)!r} does not exist")
    est = joblib.load(model_path)
    if not isinstance(est, (PrivateTabularClassifier, PrivateTabularRegressor)):
        raise TypeError(f"{str(model_path)!r} does not hold a privlearn tabular model")
    frame = read_table(table)
    result = pd.DataFrame(index=frame.index)
    if isinstance(est, PrivateTabularClassifier):
        proba = est.predict_proba(frame)
        classes = list(est.classes_)
        result["prediction"] = np.asarray(classes, dtype=object)[np.argmax(proba, axis=1)]
        for j, c in enumerate(classes):
            result[f"proba_{c}"] = proba[:, j]
    else:
        result["prediction"] = est.predict(frame)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.tmp-", dir=out.resolve().parent)
    os.close(fd)
    try:
        result.to_csv(tmp, index=False)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out
