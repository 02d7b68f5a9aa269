"""Reproduction of Win-Vector's "Using differential privacy to reuse training data": impact
coding of high-cardinality categoricals, naive vs Laplace-smeared vs split vs cross vs jackknife.

Set-up (the note and its R code ``CodingExample.Rmd``): the generator of
:func:`privlearn.data.make_large_categorical` (10 signal variables of 10 levels, 30 noise
variables of 500 levels, level probabilities uniform random then normalised, signal effects
N(0, 1) with a random half of each signal variable's levels set to 0 as in the R code
``mkModel.R``, outcome ``sum of effects + N(0, 1) > 0``); train n = 2,000, test n = 10,000 and a
calibration set of n = 10,000 (the issue's size; the R code uses 2,000) on which the Laplace
noise scale sigma is chosen from ``0, 1, ..., 20`` by the error rate of the downstream model,
as in the R code. Each coded training set trains a logistic regression (scikit-learn, on
standardised codes, ``C = 1e4``: practically the unpenalised ``glm`` of the note), and we
report train and test AUC and the test error at threshold 0.5, for every scheme with and
without significance pruning (vtreat's ``rareSig = 0.3`` of the note's vtreat runs), over
10 seeds (each a new design and new data). Peers on the same data: scikit-learn's
``TargetEncoder(cv=5)`` and, when installed, category_encoders' ``TargetEncoder`` and
``LeaveOneOutEncoder``.

The Laplace rows are epsilon-DP code books for the chosen sigma (``epsilon = 40 / sigma`` for
40 columns); choosing sigma on the calibration set is itself not private and is not counted.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privlearn.experiments import register
from privlearn.experiments.claims import Claim, claim_verdict
from privlearn.experiments.figures import (
    fit_suptitle,
    fit_title,
    new_figure,
    require_matplotlib,
    save_figure,
)
from privlearn.experiments.runs import derive_seed, parallel_map
from privlearn.experiments.tables import (
    fmt_mean_std,
    markdown_table,
    mean_std,
    write_csv,
    write_text,
)

__all__ = [
    "BLOG_TEST_ERROR",
    "METHODS",
    "SIGMAS",
    "ImpactResult",
    "Method",
    "evaluate_claims",
    "reproduce",
    "run",
    "adult_table",
    "run_seed",
    "simulate",
    "write_outputs",
]

PAPER = 'Win-Vector (Mount), "Using differential privacy to reuse training data"'
_TAG = "impact"

N_TRAIN = 2_000
N_CAL = 10_000
N_TEST = 10_000
#: The R code's grid of Laplace scales (0 = no noise).
SIGMAS: tuple[float, ...] = tuple(float(s) for s in range(21))
_QUICK_SIGMAS: tuple[float, ...] = (0.0, 1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 20.0)
#: vtreat's rareSig in the note's vtreat runs.
SIGNIFICANCE = 0.3
N_FOLDS = 5


@dataclass(frozen=True)
class Method:
    """One coding scheme of the comparison."""

    name: str
    code: str  # "bayes" | "counts" | "peer"
    mode: str  # ImpactEncoder mode, or the peer's name
    significance: float | None = None


def _ours() -> list[Method]:
    out = []
    for sig in (None, SIGNIFICANCE):
        suffix = "" if sig is None else f" +sig{sig:g}"
        for mode in ("naive", "laplace", "split", "cross", "jackknife"):
            for code in ("bayes", "counts"):
                out.append(Method(f"{code} {mode}{suffix}", code, mode, sig))
    return out


#: Every scheme, ours then the peers.
METHODS: tuple[Method, ...] = (
    *_ours(),
    Method("sklearn TargetEncoder(cv=5)", "peer", "sklearn_target"),
    Method("category_encoders TargetEncoder", "peer", "ce_target"),
    Method("category_encoders LeaveOneOut", "peer", "ce_loo"),
)

#: Test error rates the note reports for its single run, and our scheme they correspond to.
BLOG_TEST_ERROR: dict[str, tuple[str, float]] = {
    "counts naive": ("counts, sigma = 0", 0.344),
    "counts laplace": ("counts, sigma = 12", 0.162),
    "bayes naive": ("Bayes, sigma = 0", 0.497),
    "bayes laplace": ("Bayes, sigma = 4", 0.20),
    "counts jackknife": ("counts, jackknifed", 0.176),
    "bayes jackknife": ("Bayes, jackknifed", 0.145),
    "bayes split +sig0.3": ("vtreat split", 0.164),
    "bayes cross +sig0.3": ("vtreat cross", 0.139),
}
#: Test AUCs quoted in the note's text.
_BLOG_AUC = {"naive": "0.56-0.65", "laplace": "0.92", "cross": "0.95"}

_CLAIM_TRAIN_NAIVE = 0.95  # naive: train AUC at least this ...
_CLAIM_TEST_NAIVE = 0.75  # ... and test AUC at most this
_CLAIM_LAPLACE_GAIN = 0.10  # Laplace test AUC >= naive test AUC + this
_CLAIM_CROSS_SLACK = 0.01  # cross/jackknife test AUC >= Laplace test AUC - this
_CLAIM_SPEARMAN = 0.7  # rank correlation with the note's error ordering


def _peer_available(mode: str) -> bool:
    if mode.startswith("ce_"):
        try:
            import category_encoders  # noqa: F401
        except ImportError:
            return False
    return True


def _model() -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=1e4, max_iter=3000))


def _code_fit_predict(
    enc: Any, Xtr: Any, ytr: np.ndarray, Xte: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    """Code the training and test rows with ``enc``, fit the downstream model on the rows the
    encoder leaves to it (``model_mask_``: split mode), and predict: ``(mask, train
    predictions, test predictions, the encoder's privacy_ or None)``."""
    Ztr = np.asarray(enc.fit_transform(Xtr, ytr), dtype=np.float64)
    Zte = np.asarray(enc.transform(Xte), dtype=np.float64)
    mask = getattr(enc, "model_mask_", np.ones(len(ytr), dtype=bool))
    ptr, pte = _fit_predict(Ztr[mask], ytr[mask], [Ztr[mask], Zte])
    return mask, ptr, pte, getattr(enc, "privacy_", None)


def _fit_predict(Ztr: np.ndarray, ytr: np.ndarray, Zs: list[np.ndarray]) -> list[np.ndarray]:
    model = _model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings on the (near) separable naive codes
        model.fit(Ztr, ytr)
        return [model.predict_proba(Z)[:, 1] for Z in Zs]


def _encoder(method: Method, seed: int, categories: list[Any], sigma: float | None = None) -> Any:
    from privlearn.encoding import ImpactEncoder

    kwargs: dict[str, Any] = {"significance": method.significance, "seed": seed}
    mode = method.mode
    if mode == "laplace":
        if sigma == 0.0:
            mode = "naive"
        else:  # the outcome is 0/1 by construction: its label set is public
            kwargs.update(noise_scale=sigma, categories=categories, classes=[0, 1])
    if mode == "cross":
        kwargs["cv"] = N_FOLDS
    return ImpactEncoder(method.code, mode, **kwargs)


def _peer(method: Method, seed: int) -> Any:
    if method.mode == "sklearn_target":
        import sklearn
        from sklearn.model_selection import StratifiedKFold
        from sklearn.preprocessing import TargetEncoder

        rs = seed % 2**32
        if tuple(int(v) for v in sklearn.__version__.split(".")[:2]) >= (1, 9):
            # shuffle/random_state are deprecated there in favour of a splitter as cv
            return TargetEncoder(
                target_type="binary", cv=StratifiedKFold(N_FOLDS, shuffle=True, random_state=rs)
            )
        return TargetEncoder(target_type="binary", cv=N_FOLDS, shuffle=True, random_state=rs)
    import category_encoders as ce

    if method.mode == "ce_target":
        return ce.TargetEncoder()
    return ce.LeaveOneOutEncoder()


def _data(r: int, quick: bool) -> dict[str, Any]:
    from privlearn.data import make_large_categorical

    design = derive_seed(_TAG, r, "design")
    out: dict[str, Any] = {}
    for part, n in (("train", N_TRAIN), ("cal", N_CAL), ("test", N_TEST)):
        X, y, effects = make_large_categorical(
            n, seed=derive_seed(_TAG, r, part), design_seed=design, return_effects=True
        )
        out[part] = (X, (y > 0).astype(np.int64))
        out["categories"] = [list(effects[c].index) for c in X.columns]
    return out


def _error(p: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((p >= 0.5) != (y == 1)))


def run_seed(
    r: int, methods: tuple[Method, ...] | list[Method], sigmas: tuple[float, ...], quick: bool
) -> dict[str, Any]:
    """One seed: calibrate sigma, fit every method, score it. Returns rows and ROC data."""
    from sklearn.metrics import roc_auc_score, roc_curve

    data = _data(r, quick)
    Xtr, ytr = data["train"]
    Xcal, ycal = data["cal"]
    Xte, yte = data["test"]
    cats = data["categories"]
    rows: list[dict[str, Any]] = []
    cal_rows: list[dict[str, Any]] = []
    rocs: dict[str, Any] = {}
    for method in methods:
        if method.code == "peer" and not _peer_available(method.mode):
            continue
        sigma = math.nan
        if method.mode == "laplace":
            errors = []
            for s in sigmas:
                enc = _encoder(method, derive_seed(_TAG, r, "cal", s), cats, s)
                Ztr = enc.fit_transform(Xtr, ytr)
                (pcal,) = _fit_predict(Ztr, ytr, [enc.transform(Xcal)])
                errors.append(_error(pcal, ycal))
                cal_rows.append(
                    {"seed": r, "method": method.name, "sigma": s, "cal_error": errors[-1]}
                )
            sigma = float(sigmas[int(np.argmin(errors))])  # ties: the smallest sigma
            enc = _encoder(method, derive_seed(_TAG, r, "final"), cats, sigma)
        elif method.code == "peer":
            enc = _peer(method, derive_seed(_TAG, r, "peer"))
        else:
            enc = _encoder(method, derive_seed(_TAG, r, method.mode), cats)
        start = time.perf_counter()
        mask, ptr, pte, privacy = _code_fit_predict(enc, Xtr, ytr, Xte)
        rows.append(
            {
                "seed": r,
                "method": method.name,
                "code": method.code,
                "mode": method.mode,
                "significance": "" if method.significance is None else method.significance,
                "sigma": sigma,
                "epsilon": privacy.epsilon if privacy is not None else math.inf,
                "model_rows": int(mask.sum()),
                "train_auc": roc_auc_score(ytr[mask], ptr),
                "test_auc": roc_auc_score(yte, pte),
                "train_error": _error(ptr, ytr[mask]),
                "test_error": _error(pte, yte),
                "seconds": time.perf_counter() - start,
            }
        )
        if r == 0:
            rocs[method.name] = (roc_curve(ytr[mask], ptr)[:2], roc_curve(yte, pte)[:2])
    return {"rows": rows, "cal_rows": cal_rows, "rocs": rocs}


@dataclass
class ImpactResult:
    """Everything :func:`write_outputs` needs."""

    rows: list[dict[str, Any]]
    cal_rows: list[dict[str, Any]]
    rocs: dict[str, Any]
    seeds: int
    sigmas: tuple[float, ...]
    quick: bool
    seconds: float
    methods: list[str] = field(default_factory=list)

    def values(self, method: str, key: str) -> np.ndarray:
        return np.array([row[key] for row in self.rows if row["method"] == method])

    def mean(self, method: str, key: str) -> float:
        return mean_std(self.values(method, key))[0]


def simulate(
    *,
    seeds: int = 10,
    sigmas: tuple[float, ...] = SIGMAS,
    methods: tuple[Method, ...] | list[Method] = METHODS,
    quick: bool = False,
    n_jobs: int | None = None,
    progress: bool = True,
) -> ImpactResult:
    """Run every method on ``seeds`` independent designs and data sets."""
    start = time.perf_counter()
    parts = parallel_map(
        lambda r: run_seed(r, methods, sigmas, quick),
        list(range(seeds)),
        n_jobs=n_jobs,
        desc="impact seeds",
        progress=progress,
    )
    rows = [row for p in parts for row in p["rows"]]
    names = list(dict.fromkeys(row["method"] for row in rows))
    return ImpactResult(
        rows=rows,
        cal_rows=[row for p in parts for row in p["cal_rows"]],
        rocs=parts[0]["rocs"] if parts else {},
        seeds=seeds,
        sigmas=tuple(sigmas),
        quick=quick,
        seconds=time.perf_counter() - start,
        methods=names,
    )


def _pm(values: np.ndarray) -> str:
    m, s = mean_std(values)
    return f"{m:.3f} ± {s:.3f}"


def _spearman(a: list[float], b: list[float]) -> float:
    from scipy import stats

    return float(stats.spearmanr(a, b).statistic)


def evaluate_claims(res: ImpactResult) -> list[Claim]:
    """The note's qualitative claims, checked on the mean numbers (thresholds fixed above)."""
    have = set(res.methods)
    claims = []

    parts, details = {}, []
    for code in ("bayes", "counts"):
        m = f"{code} naive"
        if m in have:
            tr, te = res.mean(m, "train_auc"), res.mean(m, "test_auc")
            parts[code] = tr >= _CLAIM_TRAIN_NAIVE and te <= _CLAIM_TEST_NAIVE
            details.append(f"{m}: train AUC {tr:.3f}, test AUC {te:.3f}")
    claims.append(
        Claim(
            "naive impact coding overfits",
            "'A bad example': train AUC nearly 1.0, test AUC 0.65 (0.56 for counts)",
            f"mean train AUC >= {_CLAIM_TRAIN_NAIVE} and mean test AUC <= {_CLAIM_TEST_NAIVE} "
            "for both codes",
            claim_verdict(parts, "codes"),
            details,
        )
    )

    parts, details = {}, []
    for code in ("bayes", "counts"):
        a, b = f"{code} naive", f"{code} laplace"
        if a in have and b in have:
            na, la = res.mean(a, "test_auc"), res.mean(b, "test_auc")
            parts[code] = la >= na + _CLAIM_LAPLACE_GAIN
            sig = fmt_mean_std(*mean_std(res.values(b, "sigma")), digits=3)
            details.append(f"{code}: test AUC {na:.3f} (naive) -> {la:.3f} (Laplace, sigma {sig})")
    claims.append(
        Claim(
            "Laplace smearing greatly improves out-of-sample performance",
            "'Differential privacy': test AUC from 0.56 to 0.92",
            f"mean test AUC of the Laplace mode >= naive + {_CLAIM_LAPLACE_GAIN} for both codes",
            claim_verdict(parts, "codes"),
            details,
        )
    )

    parts, details = {}, []
    if "bayes laplace" in have:
        lap = res.mean("bayes laplace", "test_auc")
        for m in ("bayes cross", "bayes jackknife", "bayes cross +sig0.3"):
            if m in have:
                v = res.mean(m, "test_auc")
                parts[m] = v >= lap - _CLAIM_CROSS_SLACK
                details.append(f"{m}: test AUC {v:.3f} vs bayes laplace {lap:.3f}")
    claims.append(
        Claim(
            "cross-fitting (and its jackknife) match or beat Laplace smearing",
            "'Cross training': test AUC 0.95, jackknife 'essentially identical'",
            f"mean test AUC >= bayes laplace - {_CLAIM_CROSS_SLACK}",
            claim_verdict(parts, "schemes"),
            details,
        )
    )

    ours = [m for m in BLOG_TEST_ERROR if m in have]
    details = []
    verdict = "not evaluated"
    if len(ours) >= 3:
        mine = [res.mean(m, "test_error") for m in ours]
        blog = [BLOG_TEST_ERROR[m][1] for m in ours]
        rho = _spearman(mine, blog)
        verdict = claim_verdict({"ordering": rho >= _CLAIM_SPEARMAN})
        order_blog = " < ".join(m for _, m in sorted(zip(blog, ours)))
        order_mine = " < ".join(m for _, m in sorted(zip(mine, ours)))
        details = [
            f"Spearman rank correlation {rho:.2f} over {len(ours)} schemes",
            f"note's order (test error): {order_blog}",
            f"our order (mean test error): {order_mine}",
        ]
    claims.append(
        Claim(
            "the ordering of the schemes by test error matches the note",
            "the note's single run (test errors listed in the table below)",
            f"Spearman rank correlation of mean test errors with the note's >= {_CLAIM_SPEARMAN}",
            verdict,
            details,
        )
    )
    return claims


def _fig_roc(res: ImpactResult, path: Path) -> Path:
    names = [m for m in res.methods if m in res.rocs and "+sig" not in m]
    ncols = 4
    nrows = max(1, math.ceil(len(names) / ncols))
    fig, axes = new_figure(nrows, ncols, width=3.3, height=3.0)
    for ax in axes.ravel()[len(names) :]:
        ax.set_visible(False)
    for ax, name in zip(axes.ravel(), names):
        (ftr, ttr), (fte, tte) = res.rocs[name]
        row = next(r for r in res.rows if r["method"] == name and r["seed"] == 0)
        ax.plot(ftr, ttr, color="tab:blue", lw=1.2, label=f"train {row['train_auc']:.3f}")
        ax.plot(fte, tte, color="tab:red", lw=1.2, label=f"test {row['test_auc']:.3f}")
        ax.plot([0, 1], [0, 1], color="0.6", lw=0.8, ls=":")
        fit_title(ax, name, fontsize=9)
        ax.set_xlabel("false positive rate", fontsize=8)
        ax.set_ylabel("true positive rate", fontsize=8)
        ax.legend(fontsize=7, loc="lower right", title="AUC", title_fontsize=7)
        ax.tick_params(labelsize=7)
    fit_suptitle(
        fig, "ROC of the logistic model on coded data, seed 0 (train: model rows)", fontsize=10
    )
    return save_figure(fig, path)


def _fig_calibration(res: ImpactResult, path: Path) -> Path:
    fig, axes = new_figure(1, 1, width=5.0, height=3.4)
    ax = axes[0, 0]
    for name in dict.fromkeys(r["method"] for r in res.cal_rows):
        sig = np.array(res.sigmas)
        err = np.array(
            [
                np.mean(
                    [
                        r["cal_error"]
                        for r in res.cal_rows
                        if r["method"] == name and r["sigma"] == s
                    ]
                )
                for s in sig
            ]
        )
        ax.plot(sig, err, marker="o", ms=3, lw=1.1, label=name)
    ax.set_xlabel("Laplace scale sigma (per count)")
    ax.set_ylabel(f"calibration error rate (mean of {res.seeds} seeds)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fit_title(
        ax,
        f"Choice of the Laplace scale on the calibration set (synthetic, n = {N_CAL:,})",
        fontsize=10,
    )
    return save_figure(fig, path)


def write_outputs(res: ImpactResult, out_dir: Path, *, plots: bool = True) -> list[Path]:
    """Write the CSV files, figures (if ``plots``) and ``summary.md``; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    cols = [
        "seed", "method", "code", "mode", "significance", "sigma", "epsilon", "model_rows",
        "train_auc", "test_auc", "train_error", "test_error", "seconds",
    ]  # fmt: skip
    written.append(write_csv(out_dir / "runs.csv", res.rows, cols))
    summary_rows = []
    for m in res.methods:
        row: dict[str, Any] = {"method": m, "n_seeds": len(res.values(m, "test_auc"))}
        for key in ("train_auc", "test_auc", "test_error", "sigma", "epsilon"):
            row[f"{key}_mean"], row[f"{key}_std"] = mean_std(res.values(m, key))
        summary_rows.append(row)
    written.append(
        write_csv(
            out_dir / "summary.csv",
            summary_rows,
            ["method", "n_seeds"]
            + [
                f"{k}_{s}"
                for k in ("train_auc", "test_auc", "test_error", "sigma", "epsilon")
                for s in ("mean", "std")
            ],
        )
    )
    if res.cal_rows:
        written.append(
            write_csv(
                out_dir / "calibration.csv", res.cal_rows, ["seed", "method", "sigma", "cal_error"]
            )
        )
    figures: dict[str, Path] = {}
    if plots and res.rows:
        figures["ROC curves, seed 0"] = _fig_roc(res, out_dir / "roc_seed0.png")
        if res.cal_rows:
            figures["calibration of sigma"] = _fig_calibration(res, out_dir / "calibration.png")
        written.extend(figures.values())
    claims = evaluate_claims(res)
    written.append(write_text(out_dir / "summary.md", _summary(res, claims, figures)))
    return written


def _summary(res: ImpactResult, claims: list[Claim], figures: dict[str, Path]) -> str:
    lines = [
        "# Win-Vector: using differential privacy to reuse training data (impact coding)",
        "",
        f"Reproduction of the note's experiment with `privlearn.encoding.ImpactEncoder`. "
        f"{res.seeds} seeds (each a new design and new data from `make_large_categorical`: "
        f"10 signal x 10 levels, 30 noise x 500 levels); train n = {N_TRAIN:,}, calibration "
        f"n = {N_CAL:,} (picks the Laplace sigma from {{{', '.join(f'{s:g}' for s in res.sigmas)}"
        f"}} by error rate), test n = {N_TEST:,}. Downstream model: logistic regression on the "
        f"standardised codes (C = 1e4); split mode: half the rows code, the other half train; "
        f"cross: {N_FOLDS} folds; significance pruning: binomial test at {SIGNIFICANCE} "
        f"(vtreat's rareSig in the note). Computed in {res.seconds:.0f} s.",
        "",
    ]
    if res.quick:
        lines += [
            f"**Quick mode**: {res.seeds} seeds instead of 10 and a coarser sigma grid; the "
            "standard deviations are rough (`privlearn reproduce impact` for the full run).",
            "",
        ]
    lines += ["## The note's claims, checked on the numbers", ""]
    for i, c in enumerate(claims, 1):
        lines.append(f"{i}. **{c.name}** ({c.source}): **{c.verdict}**.  ")
        lines.append(f"   Criterion: {c.criterion}.")
        for d in c.details:
            lines.append(f"   - {d}")
        lines.append("")
    lines += [
        "## Results (mean ± std over seeds)",
        "",
        "epsilon: total privacy of the code book (40 columns, add/remove-one) for the chosen "
        "sigma; inf = not private. Blog: the note's single-run test error for the matching "
        f"scheme; its text quotes test AUCs naive {_BLOG_AUC['naive']}, Laplace "
        f"{_BLOG_AUC['laplace']}, cross {_BLOG_AUC['cross']}.",
        "",
    ]
    table = []
    for m in res.methods:
        sig = res.values(m, "sigma")
        eps = res.values(m, "epsilon")
        blog = BLOG_TEST_ERROR.get(m)
        table.append(
            (
                m,
                _pm(res.values(m, "train_auc")),
                _pm(res.values(m, "test_auc")),
                _pm(res.values(m, "test_error")),
                "" if np.isnan(sig).all() else fmt_mean_std(*mean_std(sig), digits=2),
                "inf" if np.isinf(eps).all() else fmt_mean_std(*mean_std(eps), digits=3),
                "" if blog is None else f"{blog[1]:.3f} ({blog[0]})",
            )
        )
    lines.append(
        markdown_table(
            ["scheme", "train AUC", "test AUC", "test error", "sigma", "epsilon", "blog"], table
        )
    )
    lines += ["", "## Files", ""]
    for name, p in figures.items():
        lines.append(f"- `{p.name}`: {name}")
    lines += [
        "- `runs.csv`: every (seed, scheme) with sigma, epsilon, AUCs and errors",
        "- `summary.csv`: means and standard deviations",
        "- `calibration.csv`: calibration error of each sigma (Laplace schemes)",
        "",
    ]
    return "\n".join(lines)


def reproduce(
    out_dir: Path,
    *,
    seeds: int = 10,
    sigmas: tuple[float, ...] = SIGMAS,
    methods: tuple[Method, ...] | list[Method] = METHODS,
    quick: bool = False,
    plots: bool = True,
    n_jobs: int | None = None,
    progress: bool = True,
) -> list[Path]:
    """Run :func:`simulate` and :func:`write_outputs`; return the written files."""
    if plots:
        require_matplotlib()
    res = simulate(
        seeds=seeds, sigmas=sigmas, methods=methods, quick=quick, n_jobs=n_jobs, progress=progress
    )
    return write_outputs(res, out_dir, plots=plots)


# --------------------------------------------------------------------------------------------
# Real data: the same schemes on UCI Adult's categorical columns
# --------------------------------------------------------------------------------------------

#: Schemes of the Adult table (a subset of :data:`METHODS`: the note's main contrasts).
ADULT_METHODS: tuple[str, ...] = (
    "bayes naive",
    "bayes laplace",
    "bayes split",
    "bayes cross",
    "bayes jackknife",
    "counts naive",
    "counts laplace",
    "sklearn TargetEncoder(cv=5)",
)
#: Training rows drawn from adult.data (the note's train size); adult.test is split in half
#: into a calibration set (choice of sigma) and a test set.
ADULT_N_TRAIN = 2_000


def _adult_parts(r: int, train: Any, test: Any) -> tuple[dict[str, Any], list[list[str]]]:
    from privlearn.data import ADULT_CATEGORIES

    cols = list(ADULT_CATEGORIES)

    def part(frame: Any) -> tuple[Any, np.ndarray]:
        X = frame[cols].astype(object).where(frame[cols].notna(), "?")
        return X.reset_index(drop=True), frame["income"].to_numpy(dtype=np.int64)

    rng = np.random.default_rng(derive_seed(_TAG, "adult", r, "rows"))
    rows = np.sort(rng.choice(len(train), size=ADULT_N_TRAIN, replace=False))
    half = np.random.default_rng(derive_seed(_TAG, "adult", r, "cal")).permutation(len(test))
    cal, te = np.sort(half[: len(test) // 2]), np.sort(half[len(test) // 2 :])
    parts = {
        "train": part(train.iloc[rows]),
        "cal": part(test.iloc[cal]),
        "test": part(test.iloc[te]),
    }
    # the public schema of adult.names (plus "?" for a missing value): not data-dependent
    cats = [[*ADULT_CATEGORIES[c], "?"] for c in cols]
    return parts, cats


def adult_table(
    out_dir: Path, quick: bool, *, data_home: Any = None, seeds: int | None = None
) -> list[Path]:
    """The note's schemes on a real table: the 8 categorical columns of UCI Adult.

    Per seed, :data:`ADULT_N_TRAIN` rows drawn from ``adult.data`` train (codes + logistic
    model, as in :func:`run_seed`); ``adult.test`` is split in half into a calibration set (the
    Laplace sigma) and a test set. Only the categorical columns are coded and modelled, so the
    table isolates the coding. Writes ``adult_runs.csv`` and ``adult_table.md`` and returns
    their paths; a missing Adult file writes a NOT RUN note instead. Without ``data_home``,
    the copy of Adult embedded in the package is used when the data folder lacks it (the
    table says which).
    """
    from sklearn.metrics import roc_auc_score

    out_dir = Path(out_dir)
    n_seeds = (1 if quick else 5) if seeds is None else int(seeds)
    sigmas = _QUICK_SIGMAS if quick else SIGMAS
    by_name = {m.name: m for m in METHODS}
    rows: list[dict[str, Any]] = []
    source = "missing"
    try:
        from privlearn.data import data_source, load_adult_frame

        train = load_adult_frame("train", data_home)
        test = load_adult_frame("test", data_home)
        _, source = data_source("adult/adult.data", data_home)
        for r in range(n_seeds):
            parts, cats = _adult_parts(r, train, test)
            Xtr, ytr = parts["train"]
            Xcal, ycal = parts["cal"]
            Xte, yte = parts["test"]
            for name in ADULT_METHODS:
                method = by_name[name]
                sigma = math.nan
                if method.mode == "laplace":
                    errors = []
                    for s in sigmas:
                        enc = _encoder(method, derive_seed(_TAG, "adult", r, "cal", s), cats, s)
                        Ztr = enc.fit_transform(Xtr, ytr)
                        (pcal,) = _fit_predict(Ztr, ytr, [enc.transform(Xcal)])
                        errors.append(_error(pcal, ycal))
                    sigma = float(sigmas[int(np.argmin(errors))])
                    enc = _encoder(method, derive_seed(_TAG, "adult", r, "final"), cats, sigma)
                elif method.code == "peer":
                    enc = _peer(method, derive_seed(_TAG, "adult", r, "peer"))
                else:
                    enc = _encoder(method, derive_seed(_TAG, "adult", r, method.mode), cats)
                mask, ptr, pte, privacy = _code_fit_predict(enc, Xtr, ytr, Xte)
                rows.append(
                    {
                        "seed": r,
                        "method": name,
                        "sigma": sigma,
                        "epsilon": privacy.epsilon if privacy is not None else math.inf,
                        "train_auc": roc_auc_score(ytr[mask], ptr),
                        "test_auc": roc_auc_score(yte, pte),
                        "test_error": _error(pte, yte),
                    }
                )
    except FileNotFoundError as exc:
        from privlearn.experiments.summary import missing_data_reason

        text = (
            "## Real data: UCI Adult\n\n"
            f"- **adult**: NOT RUN ({missing_data_reason(exc, data_home)}).\n"
        )
        return [write_text(out_dir / "adult_table.md", text)]
    cols = ["seed", "method", "sigma", "epsilon", "train_auc", "test_auc", "test_error"]
    written = [write_csv(out_dir / "adult_runs.csv", rows, cols)]
    where = {
        "embedded": "the copy of UCI Adult embedded in privlearn (identical to the UCI files)",
        "data folder": "UCI Adult from the data folder",
    }[source]
    table = []
    for name in ADULT_METHODS:
        sel = [row for row in rows if row["method"] == name]
        if not sel:
            continue
        sig = np.array([row["sigma"] for row in sel])
        eps = np.array([row["epsilon"] for row in sel])
        table.append(
            (
                name,
                _pm(np.array([row["train_auc"] for row in sel])),
                _pm(np.array([row["test_auc"] for row in sel])),
                _pm(np.array([row["test_error"] for row in sel])),
                "" if np.isnan(sig).all() else fmt_mean_std(*mean_std(sig), digits=2),
                ", ".join("inf" if np.isinf(e) else f"{e:.3g}" for e in eps),
            )
        )
    lines = [
        "## Real data: UCI Adult (categorical columns only)",
        "",
        f"Data: {where}. {n_seeds} seed{'s' if n_seeds != 1 else ''}; per seed "
        f"{ADULT_N_TRAIN:,} training rows drawn from adult.data, adult.test split in half into "
        "calibration (chooses the Laplace sigma) and "
        "test rows. The 8 categorical columns (public level lists of adult.names, `?` as its "
        "own level) are coded; the logistic model sees only the codes. epsilon: code book "
        "privacy for the chosen sigma, per seed (8 columns); inf = not private (sigma = 0 "
        "is no noise).",
        "",
        markdown_table(
            ["scheme", "train AUC", "test AUC", "test error", "sigma", "epsilon per seed"], table
        ),
        "",
    ]
    written.append(write_text(out_dir / "adult_table.md", "\n".join(lines)))
    return written


@register(
    "impact",
    "Win-Vector, DP impact coding",
    "impact coding of high-cardinality categoricals: naive vs Laplace vs split vs cross vs "
    "jackknife (train/test AUC, test error, ROC)",
)
def run(out_dir: Path, quick: bool) -> list[Path]:
    """Reproduce the note's comparison (``quick``: 2 seeds and a coarser sigma grid).

    Writes ``summary.md``, ``runs.csv``, ``summary.csv``, ``calibration.csv``,
    ``roc_seed0.png`` and ``calibration.png`` into ``out_dir``, then the same schemes on UCI
    Adult (:func:`adult_table`: ``adult_runs.csv``, ``adult_table.md``, appended to
    ``summary.md``; the copy embedded in the package when the data folder lacks Adult).
    """
    if quick:
        written = reproduce(out_dir, seeds=2, sigmas=_QUICK_SIGMAS, quick=True)
    else:
        written = reproduce(out_dir)
    extra = adult_table(Path(out_dir), quick)
    summary = Path(out_dir) / "summary.md"
    table = (Path(out_dir) / "adult_table.md").read_text(encoding="utf-8")
    write_text(summary, summary.read_text(encoding="utf-8") + "\n" + table)
    return written + [p for p in extra if p not in written]
