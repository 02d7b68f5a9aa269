"""The coding schemes of the impact-coding comparison and how one is fitted and scored.

Belongs here: the experiment's settings (sizes, the Laplace grid, significance, folds), the
schemes (:class:`Method`, :data:`METHODS`: ours in every mode, with and without significance
pruning, then the peers), the note's single-run numbers they are compared with
(:data:`BLOG_TEST_ERROR`), and the steps every data set shares: build a scheme's encoder (the
Laplace scale chosen on a calibration set: :func:`choose_encoder`), code the rows, fit the
downstream logistic model and score it. Not here: where the rows come from (synthetic:
:mod:`~privlearn.experiments.impact.simulate`; UCI Adult:
:mod:`~privlearn.experiments.impact.adult`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from privlearn.experiments.runs import derive_seed

PAPER = 'Win-Vector (Mount), "Using differential privacy to reuse training data"'
_TAG = "impact"

N_TRAIN = 2_000
N_CAL = 10_000
N_TEST = 10_000
#: ``--quick`` (issue 32): one seed (as the note's single run), the R code's calibration size
#: and a smaller test set.
QUICK_SEEDS = 1
QUICK_N_CAL = 2_000
QUICK_N_TEST = 4_000
#: The R code's grid of Laplace scales (0 = no noise).
SIGMAS: tuple[float, ...] = tuple(float(s) for s in range(21))
#: ``--quick``'s coarser grid (the full runs choose sigma between 4 and 16).
_QUICK_SIGMAS: tuple[float, ...] = (0.0, 2.0, 4.0, 8.0, 12.0, 16.0)
#: vtreat's rareSig in the note's vtreat runs.
SIGNIFICANCE = 0.3
N_FOLDS = 5


def part_sizes(quick: bool) -> dict[str, int]:
    """Rows of the synthetic train, calibration and test sets (smaller ones with ``quick``)."""
    if quick:
        return {"train": N_TRAIN, "cal": QUICK_N_CAL, "test": QUICK_N_TEST}
    return {"train": N_TRAIN, "cal": N_CAL, "test": N_TEST}


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
    with warnings.catch_warnings():
        # category_encoders (a peer) sets pandas' deprecated 'future.no_silent_downcasting'
        # option on every call under pandas >= 3: a warning addressed to its code, not ours
        warnings.filterwarnings(
            "ignore",
            message="'future.no_silent_downcasting' is deprecated",
            category=DeprecationWarning,
        )
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


def choose_encoder(
    method: Method,
    key: tuple[Any, ...],
    categories: list[Any],
    sigmas: tuple[float, ...],
    train: tuple[Any, np.ndarray],
    cal: tuple[Any, np.ndarray],
) -> tuple[Any, float, list[float]]:
    """The encoder of ``method`` for one seed: ``(encoder, sigma, calibration errors)``.

    A Laplace scheme codes the training rows with every scale of ``sigmas``, scores the
    downstream model's error rate on the calibration rows ``cal`` and keeps the scale with the
    lowest error (ties: the smallest), as in the note's R code; ``sigma`` is NaN and the error
    list empty for the other schemes. ``key`` names the seed (e.g. ``(r,)`` or
    ``("adult", r)``): every random draw is derived from it.
    """
    if method.mode == "laplace":
        (Xtr, ytr), (Xcal, ycal) = train, cal
        errors = []
        for s in sigmas:
            enc = _encoder(method, derive_seed(_TAG, *key, "cal", s), categories, s)
            Ztr = enc.fit_transform(Xtr, ytr)
            (pcal,) = _fit_predict(Ztr, ytr, [enc.transform(Xcal)])
            errors.append(_error(pcal, ycal))
        sigma = float(sigmas[int(np.argmin(errors))])  # ties: the smallest sigma
        return _encoder(method, derive_seed(_TAG, *key, "final"), categories, sigma), sigma, errors
    if method.code == "peer":
        return _peer(method, derive_seed(_TAG, *key, "peer")), math.nan, []
    return _encoder(method, derive_seed(_TAG, *key, method.mode), categories), math.nan, []


def _error(p: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((p >= 0.5) != (y == 1)))
