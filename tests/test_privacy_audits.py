"""Whole-estimator privacy audits: every private estimator, fitted many times on two
neighbouring data sets chosen adversarially, must not be distinguishable beyond its claim.

How an audit works. ``N`` fits on ``D`` (``seed = 0 .. N-1``) and ``N`` fits on the neighbour
``D'`` (``seed = N .. 2N-1``) each release one scalar (a coefficient, a centre's candidate count,
a noisy count of the code book). A fit that raises, or releases a non-finite value, is an
outcome too (coded :data:`ABNORMAL`): raising on one side and not on the other distinguishes the
two data sets as well as any number does. The threshold event (``value > t`` or ``<= t``) is
chosen on the first half of each side's fits and the Clopper-Pearson lower bound on epsilon is
computed on the other half (:func:`privlearn.audit.audit_pure_dp_split`), so choosing the event
costs nothing in confidence. The bound accounts for ``delta``: it is
``log((TPR_lower - delta) / FPR_upper)`` in both directions. Each count gets a two-sided
Clopper-Pearson interval at level ``1 - ALPHA``: an estimator that keeps its claim fails an
audit with probability at most ``2 ALPHA = 1%`` (99% confidence); where two events are tested
on the same fits (the overflow audits) each gets ``ALPHA / 2`` (Bonferroni). The seeds are fixed,
so every test is deterministic. The claim is the largest ``privacy_.epsilon`` (and ``delta``)
that any of the audited fits reports.

The neighbours.

(a) *Step count and sampling rate.* ``D`` has 1000 rows whose clipped gradients (DP-SGD) or
    scaled dual updates (DP-SCD) all push coefficient 0 the same way; ``D'`` adds one null row
    ``x = 0``, which contributes nothing. With ``batch_size = 500`` a schedule planned from the
    exact size runs ``ceil(1000/500) = 2`` steps on ``D`` and ``ceil(1001/500) = 3`` on ``D'``,
    and the coefficient shows it almost deterministically: a claimed epsilon of 1 is refuted
    at any confidence. A schedule planned from a declared public size (which the null row would
    contradict) or from a noisy count is a post-processing of a private quantity and passes.
    A second neighbour changes only ``q = b/n`` (998 vs 999 rows, both 2 steps). DP k-means: its
    schedule (radii and picks per radius, Balcan et al.'s tree depth) depends on the size;
    256 vs 257 rows (max cover) and 1024 vs 1025 (Balcan) change it.

(b) *Overflow canaries.* One row ``x = 1e308 * ones`` (or a target ``y = 1.7e308``): a fit must
    either clip it to a finite contribution or refuse it for every seed (a documented input
    precondition); non-finite coefficients, or a ``ValueError`` for some seeds only, refute any
    finite epsilon.

(c) *Clip-boundary canaries.* ``D`` pushes coefficient 0 one way with per-example
    contributions exactly at the clip bound; ``D'`` replaces one row by a row of norm exactly 1
    pointing the other way (replace-one: the l2-laplace and fixed-batch variants) or by a null
    row (add/remove-one: Poisson variants, the other rows unchanged, the size declared public
    where the estimator takes ``n_samples``). One step over all rows (``batch_size = n``),
    so the released coefficient is the mechanism's single noisy release shifted by (nearly) the
    sensitivity, and the audit is as sharp as a threshold test can be.

Power: the claims below are chosen so that a 2x violation would be caught. A Gaussian
``(epsilon, delta)`` claim at ``delta = 1e-6`` is witnessed only by events of probability about
``1e-6``: a few thousand fits cannot refute even a badly broken mechanism there (simulated, one
Gaussian release with ``mu = 1`` at ``delta = 1e-5``: claim 4.4, while the half-noise mechanism,
true epsilon 10, gives bounds of only about 3 with 2,000 draws per side). So the canary audits
fit the Gaussian mechanisms at ``delta = 0.1`` with noise multiplier 1 (RDP claim 1.656 for one
release; its exact epsilon is 1.16), where the mechanism with half the noise (true epsilon 3.8)
is refuted with :data:`N_CANARY` fits per side. Each ``*_broken`` test runs the same audit on
such a deliberately broken configuration, claiming the original epsilon, and asserts that the
bound EXCEEDS the claim. Measured (claim 1.656): DP-SGD fixed / Poisson / regressor 0.52 for
the audited fits and 2.19 for the broken twin; DP-SCD dual 0.53 / 2.22 (since issue 20 its
sensitivity is ``C`` on ``v``, the dual state being hidden, so its twin halves the noise as
DP-SGD's do; before, ``sqrt(2) C`` from Lemma 1: 0.37, and a twin dividing by 3), seq
0.00 / 2.31, primal 0.00 / 2.21. DP-SCD releases only ``theta = v / (lambda N)``, and the
``2 C sqrt(L (L+1))`` of SeqDP-SCD and of the primal variant exceeds the shift of ``theta`` by
``sqrt(6)`` and ``sqrt(3)``; their twins therefore divide the noise by 5 and 4, which makes the
true epsilon of the released ``theta`` about 2.5x the claim. The hidden dual state of issue 20
has its own canary (a hinge example whose hidden ``alpha`` saturates; end of the file). The pure-DP
audits: l2-laplace at epsilon 2 (2-dimensional noise: 1.26 audited, 2.69 for the twin
calibrated for epsilon 4) and impact coding at epsilon 1 (0.67, and 1.68 for half the noise
scale). The step-count audits need no such care: a schedule that follows the exact size gives
a near-deterministic distinguisher (with ``N_STEP = 150`` fits per side, 75 audited, a
perfect separation gives the bound ``log((1 - u) / u) = 2.49`` with ``u = 1 - (ALPHA /
2)**(1/75)``, above twice the claims of 1; 3.19 with the former 300 fits per side; see
:func:`test_step_count_audit_detects_a_schedule_from_the_exact_size`).

Runtime: about 100 CPU-seconds (``pytest -n 0``; 340, then 185, before issue 32 item 4; every
fit uses the core backend, 2-3 features, at most 1025 rows, one to a few hundred steps). The
refits of one public schedule reuse its calibration and statement (the estimators' cache per
public schedule, also with a given noise multiplier; DP k-means's max-cover plan and Gaussian
steps likewise); a size from a noisy count is a schedule per count value, so those audits pay
one calibration per distinct count (about a third of their fits) -- where the rows' number is
not what an audit is about (the add-one overflow canaries, the label sets), the data set is
small enough (60 rows) that the count plans the public floor's schedule. The LSH audits skip
the coreset's post-processing k-means (:class:`_CoresetMean`).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from privlearn import audit as A
from privlearn.cluster import DPKMeans
from privlearn.encoding import ImpactEncoder
from privlearn.exceptions import PrivacyLeakWarning
from privlearn.linear import DPSCDClassifier as _DPSCDClassifier
from privlearn.linear import DPSCDRegressor as _DPSCDRegressor
from privlearn.linear import DPSGDClassifier as _DPSGDClassifier
from privlearn.linear import DPSGDRegressor as _DPSGDRegressor

# The audits exercise each mechanism in the papers' configuration (Song et al.'s l2-laplace
# with batch 10 and one pass, DP-SCD with 5 epochs and C = 0.5, no intercept, rows checked);
# the estimators' defaults are chosen by experiment instead (tests/test_linear_edges.py).
_PAPER_SGD = dict(batch_size=10, epochs=1, learning_rate="inv_sqrt", fit_intercept=False)
_PAPER_SCD = dict(epochs=5, clip=0.5, clip_rows=False, fit_intercept=False)


def DPSGDClassifier(**kw):  # noqa: N802 - the class with the paper's settings
    return _DPSGDClassifier(**{**_PAPER_SGD, "mechanism": "l2-laplace", "clip_rows": False, **kw})


#: A public target bound holding every audited target (issue 22): these audits are of the
#: training mechanisms, on y as given; the private target bound has its own audit (end of file).
_PUBLIC_TARGET = dict(target_bounds=(-1e6, 1e6), target_scale=False)


def DPSGDRegressor(**kw):  # noqa: N802
    return _DPSGDRegressor(**{**_PAPER_SGD, **_PUBLIC_TARGET, **kw})


def DPSCDClassifier(**kw):  # noqa: N802
    return _DPSCDClassifier(**{**_PAPER_SCD, **kw})


def DPSCDRegressor(**kw):  # noqa: N802
    return _DPSCDRegressor(**{**_PAPER_SCD, **_PUBLIC_TARGET, **kw})


#: Two-sided Clopper-Pearson level of each count: a correct estimator fails an audit with
#: probability at most ``2 ALPHA`` (99% confidence).
ALPHA = 0.005
#: The released value of a fit that raised or released a non-finite value (finite, so the
#: threshold search can use it; below every real statistic).
ABNORMAL = -1e308
#: fits per side of the step-count audits (near-deterministic distinguisher: a perfect
#: separation of the 75 audited fits per side bounds epsilon by 2.49, > 2x the claims of 1)
N_STEP = 150
N_CANARY = 2000  # fits per side of the clip-boundary audits and their broken twins
N_OVERFLOW = 200  # fits per side of the overflow audits
N_IMPACT = 1000
CANARY_DELTA = 0.1
FEATURES = 3

Make = Callable[[int], Any]
Statistic = Callable[[Any], float]


# ---- the harness ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Draws:
    """What ``N`` seeded fits on one data set released."""

    values: np.ndarray  # the statistic per fit (ABNORMAL: raised or non-finite)
    raised: tuple[str, ...]  # the errors of the fits that raised
    epsilon: float  # largest epsilon any fit claimed (0 if none finished)
    delta: float


#: The audited fits that leave ``classes`` undeclared read the label set from y and say so (a
#: ``PrivacyLeakWarning`` per fit; :func:`test_unique_label_read_from_y_is_stated_public`
#: asserts it): expected in the harness, where it is dropped; every other warning is passed on.
_LABEL_SET_READ = "read the label set from the private labels y"


def _fit_one(make: Make, seed: int, X: Any, y: Any) -> Any:
    """``make(seed).fit(X, y)``, or the ValueError / ArithmeticError it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = make(seed).fit(X, y)
        except (ValueError, ArithmeticError) as exc:
            result = exc
    for w in caught:
        if issubclass(w.category, RuntimeWarning):
            continue  # overflow in numpy: a non-finite release, counted by the caller
        if issubclass(w.category, PrivacyLeakWarning) and _LABEL_SET_READ in str(w.message):
            continue
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result


def _fits(make: Make, X: Any, y: Any, seeds: range, statistic: Statistic) -> Draws:
    values = np.empty(len(seeds))
    raised: list[str] = []
    epsilon = delta = 0.0
    for k, seed in enumerate(seeds):
        est = _fit_one(make, seed, X, y)
        if isinstance(est, Exception):
            values[k] = ABNORMAL
            raised.append(f"{type(est).__name__}: {est}")
            continue
        value = float(statistic(est))
        values[k] = value if math.isfinite(value) else ABNORMAL
        epsilon = max(epsilon, float(est.privacy_.epsilon))
        delta = max(delta, float(est.privacy_.delta))
    return Draws(values, tuple(raised), epsilon, delta)


@dataclass(frozen=True)
class Outcome:
    bound: float  # Clopper-Pearson lower bound on epsilon
    epsilon: float  # the claim
    delta: float
    text: str

    def __str__(self) -> str:
        return self.text


def _audit(
    d0: Draws,
    d1: Draws,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    abnormal_event: bool = False,
) -> Outcome:
    """Lower bound on epsilon from the two sides' draws (threshold chosen on the first half;
    with ``abnormal_event`` also the fixed event "raised or non-finite", Bonferroni)."""
    if epsilon is None:
        epsilon = max(d0.epsilon, d1.epsilon)
    if delta is None:
        delta = max(d0.delta, d1.delta)
    assert math.isfinite(epsilon) and epsilon > 0.0, f"no private fit finished: {d0.raised[:1]}"
    alpha = ALPHA / 2 if abnormal_event else ALPHA
    split, event = A.audit_pure_dp_split(d0.values, d1.values, epsilon, delta, alpha=alpha)
    bound = split.epsilon_lower
    lines = [f"threshold event {event} (chosen on the first half): {split}"]
    if abnormal_event:
        fixed = A.audit_pure_dp(
            d0.values, d1.values, lambda o: o == ABNORMAL, epsilon, delta, alpha=alpha
        )
        bound = max(bound, fixed.epsilon_lower)
        lines.append(f"event 'raised or non-finite': {fixed}")
    for name, d in (("D", d0), ("D'", d1)):
        finite = d.values[d.values != ABNORMAL]
        stats = (
            f"median {np.median(finite):.6g}, range [{finite.min():.6g}, {finite.max():.6g}]"
            if finite.size
            else "no finite value"
        )
        lines.append(
            f"{name}: {d.values.size} fits, {len(d.raised)} raised, "
            f"{int((d.values == ABNORMAL).sum()) - len(d.raised)} non-finite; {stats}"
        )
        if d.raised:
            lines.append(f"   first error: {d.raised[0][:300]}")
    text = (
        f"empirical epsilon >= {bound:.4f} vs claim ({epsilon:.6g}, {delta:.3g})\n  "
        + "\n  ".join(lines)
    )
    print(text)
    return Outcome(bound, epsilon, delta, text)


def _run(make: Make, D: tuple, D1: tuple, n: int, statistic: Statistic) -> tuple[Draws, Draws]:
    return (
        _fits(make, *D, range(n), statistic),
        _fits(make, *D1, range(n, 2 * n), statistic),
    )


@functools.cache
def _public_size(cls: Any, n: int) -> dict[str, int]:
    """``n_samples=n`` where the estimator takes a declared public size (the neighbours of
    the canary audits have the same size), nothing for estimators without the parameter.
    Cached: the canaries call it per fit, and ``get_params`` (a signature inspection) was a
    fifth of a small fit's time; the result is only ever unpacked, never changed."""
    return {"n_samples": n} if "n_samples" in cls().get_params() else {}


def _coef(k: int = 0) -> Statistic:
    """Coefficient ``k`` (NaN unless every released coefficient is finite)."""

    def statistic(est: Any) -> float:
        w = np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)]
        return float(w[k]) if np.isfinite(w).all() else math.nan

    return statistic


def _coef_sum(est: Any) -> float:
    """The coefficients projected on the all-ones direction (the primal canary's direction)."""
    w = np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)]
    return float(w.sum()) if np.isfinite(w).all() else math.nan


# ---- data sets --------------------------------------------------------------------------------
def _push(n: int, *, d: int = FEATURES, target: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows alternating ``(e1, +target)`` and ``(-e1, -target)``: the hinge gradient
    (``-y x``, norm exactly 1 while the margin is below 1), the clipped squared-loss gradient
    (``target = 10``) and the scaled dual updates of every row all push coefficient 0 up."""
    sign = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = np.zeros((n, d))
    X[:, 0] = sign
    return X, sign * target


def _added(D: tuple, x: Any, target: float) -> tuple[np.ndarray, np.ndarray]:
    X, y = D
    return np.vstack([X, np.reshape(x, (1, -1))]), np.r_[y, target]


def _replaced(D: tuple, x: Any, target: float) -> tuple[np.ndarray, np.ndarray]:
    X, y = D[0].copy(), D[1].copy()
    X[0], y[0] = x, target
    return X, y


def _e1(d: int = FEATURES, scale: float = 1.0) -> np.ndarray:
    x = np.zeros(d)
    x[0] = scale
    return x


# ---- (a) the step count and the sampling rate -------------------------------------------------
_SGD_STEP = dict(
    epsilon=1.0, batch_size=500, epochs=1, clip=1.0, learning_rate="constant", eta0=0.1
)
_SCD_STEP = dict(
    epsilon=1.0, variant="dual", sampling="poisson", batch_size=500, epochs=1, alpha=1.0
)
STEP_CASES: dict[str, tuple[Make, float]] = {
    "sgd-gaussian-classifier": (
        lambda s: DPSGDClassifier(mechanism="gaussian", loss="hinge", seed=s, **_SGD_STEP),
        1.0,
    ),
    "sgd-regressor": (lambda s: DPSGDRegressor(seed=s, **_SGD_STEP), 10.0),
    "scd-dual-classifier": (lambda s: DPSCDClassifier(loss="hinge", seed=s, **_SCD_STEP), 1.0),
    "scd-dual-regressor": (lambda s: DPSCDRegressor(seed=s, **_SCD_STEP), 10.0),
}


@pytest.mark.parametrize("name", sorted(STEP_CASES))
def test_null_row_changing_the_step_count(name):
    """1000 rows vs 1000 rows + one null row: 2 vs 3 steps if planned from the exact size."""
    make, target = STEP_CASES[name]
    D = _push(1000, target=target)
    D1 = _added(D, np.zeros(FEATURES), target if target == 1.0 else 0.0)
    result = _audit(*_run(make, D, D1, N_STEP, _coef()))
    assert result.bound <= result.epsilon, f"{name}: {result}"


def test_null_row_changing_only_the_sampling_rate():
    """998 vs 999 rows (one null): both 2 steps of 500 expected rows, only ``q = b/n`` differs.

    A rate that follows the exact size moves the expected gradient sum by about one row's
    contribution, which the mechanism's noise is there to hide, so this audit passes for a
    rate from the exact size too: it guards against a larger dependence on ``n``."""
    make, _ = STEP_CASES["sgd-gaussian-classifier"]
    D = _push(998)
    D1 = _added(D, np.zeros(FEATURES), 1.0)
    result = _audit(*_run(make, D, D1, N_STEP, _coef()))
    assert result.bound <= result.epsilon, str(result)


def test_step_count_audit_detects_a_schedule_from_the_exact_size():
    """Sanity twin of the step-count audits: the old behaviour, simulated by declaring each
    data set's exact size public (so the schedule follows ``n``: 2 vs 3 steps), is refuted."""
    base = STEP_CASES["sgd-gaussian-classifier"][0]
    D = _push(1000)
    D1 = _added(D, np.zeros(FEATURES), 1.0)
    d0 = _fits(
        lambda s: base(s).set_params(**_public_size(DPSGDClassifier, 1000)),
        *D,
        range(N_STEP),
        _coef(),
    )
    d1 = _fits(
        lambda s: base(s).set_params(**_public_size(DPSGDClassifier, 1001)),
        *D1,
        range(N_STEP, 2 * N_STEP),
        _coef(),
    )
    result = _audit(d0, d1)
    assert result.bound > 2.0 * result.epsilon, str(result)


def _n_candidates(est: Any) -> float:
    return float(est.n_candidates_)


def _levels_then_candidates(est: Any) -> float:
    """Balcan et al.'s released schedule: ``n_levels_``, then ``n_candidates_`` (one number,
    ordered by levels first; fewer than 10**6 candidates), so a threshold event can be a grid
    depth or a candidate count within one depth."""
    return float(est.n_levels_) * 1e6 + float(est.n_candidates_)


@pytest.mark.parametrize(
    ("method", "n", "statistic"),
    [("maxcover", 256, _n_candidates), ("balcan", 1024, _levels_then_candidates)],
    ids=["maxcover-256", "balcan-1024"],
)
def test_dpkmeans_one_more_row_changing_the_schedule(method, n, statistic):
    """``n`` vs ``n + 1`` identical points: with the exact size, max cover runs 3 radii x 8
    picks vs 4 x 10 (256 -> 257) and Balcan et al.'s grids 7 vs 8 levels (1024 -> 1025); the
    released schedule shows it (max cover: the number of candidates; Balcan: the grid depth
    ``n_levels_``, then the number of candidates).

    Power (issue 32 item 4, measured with the sizes declared public, i.e. the schedule from the
    exact size): both statistics separate the sides perfectly, so ``N_STEP`` fits per side
    bound epsilon by 2.49, > 2x the claim of 1. Balcan's number of candidates alone moves only
    partly with the depth on these 2-dimensional points (bound 0.84 with 150 fits, 2.30 with
    the former 400); its released depth gives the perfect separation with 150."""
    X = np.zeros((n, 2))
    X1 = np.zeros((n + 1, 2))

    def make(seed: int) -> DPKMeans:
        return DPKMeans(n_clusters=2, epsilon=1.0, method=method, radius=1.0, seed=seed)

    d0 = _fits(make, X, None, range(N_STEP), statistic)
    d1 = _fits(make, X1, None, range(N_STEP, 2 * N_STEP), statistic)
    result = _audit(d0, d1)
    assert result.bound <= result.epsilon, f"DPKMeans({method!r}): {result}"


# ---- (c) clip-boundary canaries, with broken twins --------------------------------------------
@dataclass(frozen=True)
class Canary:
    """One clip-boundary audit: ``make(seed, factor)`` fits with the noise divided by
    ``factor`` (1 = the audited configuration; ``broken`` for the twin), on ``D`` vs ``D'``."""

    make: Callable[[int, float], Any]
    D: tuple
    D1: tuple
    statistic: Statistic
    broken: float
    n: int = N_CANARY


def _canaries() -> dict[str, Canary]:
    n = 100
    clf, reg = _push(n), _push(n, target=10.0)
    against_clf = _replaced(clf, -_e1(), 1.0)  # hinge gradient +e1: 2C from the others' -e1
    null_clf = _replaced(clf, np.zeros(FEATURES), 1.0)
    null_reg = _replaced(reg, np.zeros(FEATURES), 0.0)
    lap = _push(n, d=2)
    sgd = dict(batch_size=n, epochs=1, clip=1.0, learning_rate="constant", eta0=0.1)
    gauss = dict(epsilon=None, delta=CANARY_DELTA)
    scd = dict(epsilon=None, delta=CANARY_DELTA, epochs=1, alpha=1.0)
    # SeqDP-SCD: a batch of L = 2 rows (the sensitivity grows like L); primal: both
    # coordinates in one step, the canary's huge target flips both clipped updates.
    seq = _push(2, target=10.0)
    diag = np.full(2, 1.0 / math.sqrt(2.0))
    primal = (np.tile(diag, (n, 1)), np.full(n, -1.0))
    return {
        "sgd-l2-laplace": Canary(
            lambda s, f: DPSGDClassifier(
                mechanism="l2-laplace", loss="hinge", epsilon=2.0 * f, seed=s, **sgd
            ),
            lap,
            _replaced(lap, -_e1(2), 1.0),
            _coef(),
            broken=2.0,
        ),
        "sgd-gaussian-fixed": Canary(
            # fixed batches are replace-one: the noise multiplier is 2 sigma of the event
            lambda s, f: DPSGDClassifier(
                mechanism="gaussian",
                loss="hinge",
                sampling="fixed",
                noise_multiplier=2.0 / f,
                seed=s,
                **gauss,
                **sgd,
            ),
            clf,
            against_clf,
            _coef(),
            broken=2.0,
        ),  # fmt: skip
        "sgd-gaussian-poisson": Canary(
            lambda s, f: DPSGDClassifier(
                mechanism="gaussian",
                loss="hinge",
                noise_multiplier=1.0 / f,
                seed=s,
                **_public_size(DPSGDClassifier, n),
                **gauss,
                **sgd,
            ),
            clf,
            null_clf,
            _coef(),
            broken=2.0,
        ),  # fmt: skip
        "sgd-regressor": Canary(
            lambda s, f: DPSGDRegressor(
                noise_multiplier=1.0 / f,
                seed=s,
                **_public_size(DPSGDRegressor, n),
                **gauss,
                **sgd,
            ),
            reg,
            null_reg,
            _coef(),
            broken=2.0,
        ),  # fmt: skip
        "scd-dual": Canary(
            lambda s, f: DPSCDRegressor(
                noise_multiplier=1.0 / f,
                variant="dual",
                sampling="poisson",
                batch_size=n,
                seed=s,
                **_public_size(DPSCDRegressor, n),
                **scd,
            ),
            reg,
            null_reg,
            _coef(),
            broken=2.0,  # sensitivity C on v (issue 20): half the noise, as for DP-SGD
        ),  # fmt: skip
        "scd-seq": Canary(
            lambda s, f: DPSCDRegressor(
                noise_multiplier=1.0 / f,
                variant="seq",
                sampling="fixed",
                batch_size=2,
                seed=s,
                **scd,
            ),
            seq,
            _replaced(seq, -_e1(), 10.0),
            _coef(),
            broken=5.0,
        ),  # fmt: skip
        "scd-primal": Canary(
            lambda s, f: DPSCDRegressor(
                noise_multiplier=1.0 / f, variant="primal", batch_size=2, seed=s, **scd
            ),
            (primal[0][:, :2], primal[1]),
            (primal[0][:, :2], np.r_[1e4, primal[1][1:]]),
            _coef_sum,
            broken=4.0,
        ),
    }


CANARIES = _canaries()


def _canary_draws(case: Canary, factor: float) -> tuple[Draws, Draws]:
    d0, d1 = _run(lambda s: case.make(s, factor), case.D, case.D1, case.n, case.statistic)
    assert not d0.raised and not d1.raised, (d0.raised + d1.raised)[0]
    return d0, d1


@pytest.mark.parametrize("name", sorted(CANARIES))
def test_clip_boundary_canary(name):
    case = CANARIES[name]
    result = _audit(*_canary_draws(case, 1.0))
    assert result.bound <= result.epsilon, f"{name}: {result}"


@pytest.mark.parametrize("name", sorted(CANARIES))
def test_clip_boundary_canary_broken(name):
    """The same audit on a deliberately broken configuration (noise divided by
    ``case.broken`` while claiming the original epsilon) must refute the claim."""
    case = CANARIES[name]
    claimed = _fit_one(lambda s: case.make(s, 1.0), 0, *case.D).privacy_
    result = _audit(*_canary_draws(case, case.broken), epsilon=claimed.epsilon, delta=claimed.delta)
    assert result.bound > result.epsilon, f"{name}: the audit has no power: {result}"


# ---- impact coding ----------------------------------------------------------------------------
def _impact_data() -> tuple[tuple, tuple]:
    X = np.array([["a"]] * 60 + [["b"]] * 60, dtype=object)
    y = np.r_[np.ones(30), np.zeros(30), np.ones(30), np.zeros(30)]
    return (X, y), (np.vstack([X, [["a"]]]), np.r_[y, 1.0])


def _n_true_of_a(enc: Any) -> float:
    return float(enc.counts_[0][0, 0])  # level "a" (categories sorted), column n_true


@pytest.mark.parametrize("broken", [False, True])
def test_impact_encoder_laplace_canary(broken):
    """Add one row of level "a" with a positive outcome: its noisy ``n_true`` moves by 1, the
    whole L1 sensitivity of the one-column code book. ``broken``: half the noise scale while
    claiming the original epsilon (1)."""
    D, D1 = _impact_data()

    def make(seed: int) -> ImpactEncoder:
        scale = 0.5 if broken else 1.0
        return ImpactEncoder(mode="laplace", noise_scale=scale, categories=[["a", "b"]], seed=seed)

    result = _audit(*_run(make, D, D1, N_IMPACT, _n_true_of_a), epsilon=1.0, delta=0.0)
    with pytest.warns(PrivacyLeakWarning, match="read the label set"):
        fitted = make(0).fit(*D)
    assert fitted.privacy_.epsilon == pytest.approx(2.0 if broken else 1.0)
    if broken:
        assert result.bound > 1.0, f"the audit has no power: {result}"
    else:
        assert result.bound <= result.epsilon, str(result)


# ---- (b) overflow canaries --------------------------------------------------------------------
def _overflow_cases() -> dict[str, tuple[Make, tuple, tuple]]:
    rng = np.random.default_rng(20261124)
    X = rng.normal(size=(300, FEATURES))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = np.linspace(1.0, -1.0, FEATURES)
    labels, targets = np.where(X @ w > 0, 1.0, -1.0), 10.0 * (X @ w)
    big_x = np.full(FEATURES, 1e308)
    # The add-one canaries (Poisson-sampled Gaussian fits) plan their schedule from a noisy
    # count, and each count value is a schedule with its own noise calibration (~90 ms): on
    # 300 rows their 400 fits take about a hundred count values (12 CPU-s for the DP-SCD
    # audit). On the first 60 rows the count lies below its noise margin (ln(1e3) / 0.05 =
    # 138) for all but about 1% of the fits, which plan the public floor's schedule (one
    # calibration) where every batch holds every row (q = 1): the canary row enters every
    # step (issue 32 item 4). The replace-one canaries have a public size: all 300 rows.
    clf, reg = (X[:60], labels[:60]), (X[:60], targets[:60])
    sgd = dict(epsilon=1.0, batch_size=10, epochs=5, alpha=0.0, eta0=1.0)
    scd = dict(epsilon=1.0, batch_size=10, epochs=2)
    return {
        "sgd-gaussian-classifier-x": (
            lambda s: DPSGDClassifier(mechanism="gaussian", seed=s, **sgd),
            clf,
            _added(clf, big_x, 1.0),
        ),
        "sgd-l2-laplace-clip-rows-x": (
            lambda s: DPSGDClassifier(clip_rows=True, batch_size=10, seed=s),
            (X, labels),
            _replaced((X, labels), big_x, 1.0),
        ),
        "sgd-regressor-x": (
            lambda s: DPSGDRegressor(seed=s, **sgd),
            reg,
            _added(reg, big_x, 1.0),
        ),
        "sgd-regressor-y": (
            lambda s: DPSGDRegressor(seed=s, **sgd),
            reg,
            _added(reg, X[0], 1.7e308),
        ),
        "scd-dual-regressor-y": (
            lambda s: DPSCDRegressor(variant="dual", sampling="poisson", seed=s, **scd),
            reg,
            _added(reg, X[0], 1.7e308),
        ),
        "scd-seq-regressor-y": (
            lambda s: DPSCDRegressor(variant="seq", sampling="fixed", seed=s, **scd),
            (X, targets),
            _replaced((X, targets), X[1], 1.7e308),
        ),
        "scd-primal-regressor-y": (
            lambda s: DPSCDRegressor(variant="primal", seed=s, **{**scd, "batch_size": 1}),
            (X, targets),
            _replaced((X, targets), X[1], -1.7e308),
        ),
    }


OVERFLOW = _overflow_cases()


@pytest.mark.parametrize("name", sorted(OVERFLOW))
def test_overflow_canary(name):
    make, D, D1 = OVERFLOW[name]
    d0, d1 = _run(make, D, D1, N_OVERFLOW, _coef())
    assert not d0.raised, f"{name}: clean data raised: {d0.raised[0]}"
    if len(d1.raised) == N_OVERFLOW and len(set(d1.raised)) == 1:
        # A documented input precondition: the canary is refused for every seed, before any
        # randomness, with the same message (the data set is outside the mechanism's domain).
        assert d1.raised[0].startswith("ValueError"), d1.raised[0]
        print(f"{name}: refused for every seed: {d1.raised[0]}")
        return
    result = _audit(d0, d1, abnormal_event=True)
    assert result.bound <= result.epsilon, f"{name}: {result}"


# ---- private quantiles on a public lattice (issue 19) ----
# The textbook sampler of Smith's quantile returned ``z_i + U (z_{i+1} - z_i)`` in doubles, so
# the low bits of the release followed the low bits of the data points around it (Mironov
# 2012's attack, applied to the uniform draw). D: 10 points at -0.5 and 10 at 0.5 in the public
# range (-1, 1); every interval then has endpoints in 2**-1 Z and length 1/2 or 1, so every
# release on D is a multiple of 2**-53. D' adds the row 3 * 2**-60: the median interval
# [x*, 0.5] now starts at a point with bits far below 2**-53, and about half the releases on D'
# are not multiples of 2**-53. The statistic is the fractional part of ``y * 2**53`` (exact:
# a power-of-two scaling), so the threshold event "statistic > 0", fixed by this
# construction, is impossible on D and likely on D'. Measured on the old sampler with these
# draws: 0/3000 on D, 1578/3000 on D' in the audit half, a lower bound of 5.52 against a claim
# of 1 (the reviewer reported 7.91 with more draws). On the public lattice
# lower + j 2**-31 every release is a multiple of 2**-31 on both sides: bound 0.
N_QUANTILE = 6000  # independent draws per side (one quantile per column of one call)
_QUANTILE_D = np.r_[np.full(10, -0.5), np.full(10, 0.5)]
_QUANTILE_X = 3 * 2.0**-60


def _low_bits(y: Any) -> np.ndarray:
    """``frac(y * 2**53)``: 0 iff ``y`` is a multiple of ``2**-53``."""
    return np.mod(np.asarray(y, dtype=np.float64) * 2.0**53, 1.0)


def _quantile_draws(data: np.ndarray, seed: int) -> Draws:
    """``N_QUANTILE`` independent medians at epsilon 1 each: one call on ``N_QUANTILE`` copies
    of the column with ``epsilon = N_QUANTILE`` (split evenly: 1 per quantile; every column
    draws from its own stream)."""
    from privlearn.preprocessing import dp_quantiles

    y = dp_quantiles(
        np.repeat(data[:, None], N_QUANTILE, axis=1), 0.5, float(N_QUANTILE), (-1.0, 1.0), seed
    )
    return Draws(_low_bits(y), (), 1.0, 0.0)


def test_dp_quantiles_low_bits_of_the_release():
    """Guards against a quantile whose set of possible outputs depends on the data."""
    d0 = _quantile_draws(_QUANTILE_D, 0)
    d1 = _quantile_draws(np.append(_QUANTILE_D, _QUANTILE_X), 1)
    assert (d0.values == 0.0).all()  # nothing on D leaves the 2**-53 grid, old or new
    result = _audit(d0, d1)
    assert result.bound <= result.epsilon, str(result)


def test_dp_feature_scaler_low_bits_of_the_ranges():
    """The same attack on ``DPFeatureScaler`` with its default levels (0.05 and 0.95) and
    per-quantile budget (epsilon 1 over one feature: 0.5 each): D has 20 rows at 0.5, D' adds
    3 * 2**-60, which opens a run of rank 1 next to the 5% level. ``lower_`` and ``upper_`` on
    D are multiples of 2**-53; on D' the old sampler's ``lower_`` was not in 603 of 3000 fits
    of the audit half (bound 4.51; 0 on the lattice). One fit on ``N_QUANTILE`` copies of the
    feature with ``epsilon = N_QUANTILE`` is ``N_QUANTILE`` independent default fits of one
    feature (every quantile has its own stream)."""
    from privlearn.preprocessing import DPFeatureScaler

    def draws(X: np.ndarray, seed: int) -> Draws:
        sc = DPFeatureScaler(epsilon=float(N_QUANTILE), bounds=(-1.0, 1.0), seed=seed)
        sc.fit(np.repeat(X, N_QUANTILE, axis=1))
        assert sc.privacy_.epsilon_per_quantile == 0.5  # the default fit's, per quantile
        return Draws(_low_bits(sc.lower_) + _low_bits(sc.upper_), (), 1.0, 0.0)

    X = np.full((20, 1), 0.5)
    d0, d1 = draws(X, 0), draws(np.vstack([X, [[_QUANTILE_X]]]), 1)
    assert (d0.values == 0.0).all()
    result = _audit(d0, d1)
    assert result.bound <= result.epsilon, str(result)


# ---- the label set (issue 19) -----------------------------------------------------------------
# D: 60 rows labelled {0, 1}; D' adds one row x = e2 with a unique label 2. Read from y, the
# label set is 2 classes on D and 3 on D' with certainty: classes_, the number of models (the
# rows of coef_, the one-vs-rest problems, hence the noise) and an encoder's code columns all
# show it (a near-deterministic distinguisher). Declared public (classes=[0, 1, 2] on both
# sides) they cannot differ, and what remains is the mechanism's own guarantee for the one row.
# The statistic is ``1e9 x (models or classes) + (the last class's coefficient on e2, or noisy
# count of level "a")``: the released shape and the unique row's own contribution at once.
# 60 rows (400 before issue 32 item 4): the fits plan their schedule from a noisy count, one
# noise calibration per count value (about a hundred on 400 rows: 12 CPU-s); below the count's
# noise margin (138) they plan the public floor's schedule, one step with every row in the
# batch (q = 1), so the unique row always enters its one noisy release (1.5 CPU-s).
#: fits per side: a near-deterministic distinguisher (2 vs 3 classes) shows a bound of 2.49 (perfect
#: separation of 75 audited fits per side), above twice the claims of 1
N_LABELS = 150
_LABEL_CASES: dict[str, Callable[[int, Any], Any]] = {
    "scd-one-vs-rest": lambda s, classes: DPSCDClassifier(
        loss="log_loss", epochs=1, batch_size=100, classes=classes, seed=s
    ),
    "sgd-multinomial": lambda s, classes: DPSGDClassifier(
        mechanism="gaussian", loss="log_loss", batch_size=100, classes=classes, seed=s
    ),
}


def _label_data() -> tuple[tuple, tuple]:
    X, y = _push(60)
    D = (X, (y > 0).astype(np.int64))
    e2 = np.zeros(FEATURES)
    e2[1] = 1.0
    return D, _added(D, e2, 2)


def _n_models(est: Any) -> float:
    """The number of released models (rows of ``coef_``): the shape the label set fixes."""
    return float(np.atleast_2d(est.coef_).shape[0])


def _models_and_last(est: Any) -> float:
    """``1e9 x`` the number of released models plus the last model's weight on ``e2``."""
    coef = np.atleast_2d(est.coef_)
    return 1e9 * coef.shape[0] + float(coef[-1, 1]) if np.isfinite(coef).all() else math.nan


@pytest.mark.filterwarnings("ignore::privlearn.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("name", sorted(_LABEL_CASES))
def test_unique_label_with_declared_classes(name):
    """Guards issue 19 item 2: with ``classes=[0, 1, 2]`` declared (public), adding a row with a
    unique label changes neither ``classes_`` nor the shape of ``coef_`` (nor the number of
    one-vs-rest problems): the audit stays within the claim. Before: no ``classes=``; the label
    set was read from y (see the next test for that behaviour's bound)."""
    D, D1 = _label_data()
    make = _LABEL_CASES[name]
    d0, d1 = _run(lambda s: make(s, [0, 1, 2]), D, D1, N_LABELS, _models_and_last)
    fitted = make(0, [0, 1, 2]).fit(*D1)
    assert fitted.classes_.tolist() == [0, 1, 2] and "declared with classes=" in str(
        fitted.privacy_
    )
    assert np.all(np.round(d0.values / 1e9) == 3) and np.all(np.round(d1.values / 1e9) == 3)
    result = _audit(d0, d1)
    assert result.bound <= result.epsilon, f"{name}: {result}"


@pytest.mark.filterwarnings("ignore::privlearn.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("name", sorted(_LABEL_CASES))
def test_unique_label_read_from_y_is_stated_public(name):
    """The old behaviour (``classes=None``, the label set read from y) is a near-deterministic
    distinguisher (bound 2.49 with 150 fits per side against a claim of 1): it is allowed
    only because every statement now says that the label set was read from y and is treated
    as public (and fit warns); this test asserts both."""
    from privlearn.exceptions import PrivacyLeakWarning

    D, D1 = _label_data()
    make = _LABEL_CASES[name]
    for data, labels in ((D, "{0, 1}"), (D1, "{0, 1, 2}")):
        with pytest.warns(PrivacyLeakWarning, match="read the label set"):
            est = make(0, None).fit(*data)
        assert f"the label set {labels} (read from y: not protected" in str(est.privacy_)
    # the statistic is the released shape alone (the number of models): with the last model's
    # weight added, a weight just above 0 on D crossed the threshold chosen on the first half
    result = _audit(*_run(lambda s: make(s, None), D, D1, N_LABELS, _n_models))
    assert result.bound > 2.0 * result.epsilon, str(result)


def _impact_label_data() -> tuple[tuple, tuple]:
    X = np.array([["a"]] * 200 + [["b"]] * 200, dtype=object)
    y = np.tile([0, 1], 200)
    return (X, y), (np.vstack([X, [["a"]]]), np.r_[y, 2])


def _classes_and_last_count(enc: Any) -> float:
    """``1e9 x`` the number of classes plus the noisy count of the last class at level "a"."""
    return 1e9 * len(enc.classes_) + float(enc.counts_[0][0, -1])


@pytest.mark.filterwarnings("ignore::privlearn.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("declared", [True, False])
def test_impact_encoder_unique_label(declared):
    """ImpactEncoder (Laplace mode, multiclass, epsilon 1): one added row with a unique label.
    Declared ``classes=[0, 1, 2]``: the code book keeps 3 classes on both sides and the row
    moves one noisy count by 1 (the whole sensitivity): within the claim. Read from y: 2 vs 3
    classes (a near-deterministic distinguisher), so the statement must say so."""
    D, D1 = _impact_label_data()
    classes = [0, 1, 2] if declared else None

    def make(seed: int) -> ImpactEncoder:
        return ImpactEncoder(
            mode="laplace", noise_scale=1.0, categories=[["a", "b"]], target_type="multiclass",
            classes=classes, seed=seed,
        )  # fmt: skip

    stat = _classes_and_last_count if declared else (lambda enc: float(len(enc.classes_)))
    result = _audit(*_run(make, D, D1, N_LABELS, stat), epsilon=1.0, delta=0.0)
    statement = str(make(0).fit(*D).privacy_)
    if declared:
        assert "the label set {0, 1, 2} (declared with classes=)" in statement
        assert result.bound <= result.epsilon, str(result)
    else:
        assert "the label set {0, 1} (read from y: not protected" in statement
        assert result.bound > 2.0 * result.epsilon, str(result)


# ---- private hyperparameter search (issue 19) ----
N_SEARCH = 150  # searches per side


def _search_centring(seed: int) -> Any:
    """The search over a pipeline that centres the rows with the data's own mean
    (``FunctionTransformer(X - X.mean(0))``), then projects them (Normalizer) for Song et al.'s
    l2-laplace DP-SGD; documented total epsilon 1."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, Normalizer

    from privlearn.model_selection import PrivateHyperparameterSearch

    pipe = make_pipeline(
        FunctionTransformer(lambda Z: Z - Z.mean(axis=0)), Normalizer(), DPSGDClassifier()
    )
    return PrivateHyperparameterSearch(
        pipe, {"dpsgdclassifier__eta0": [1.0]}, epsilon=1.0, mean_repetitions=1.05, seed=seed
    )


def _best_score(search: Any) -> float:
    return float(search.best_score_)


def test_search_refuses_a_transformer_that_mixes_rows():
    """Guards issue 19, item 6: a FunctionTransformer was accepted as a stateless (row-wise)
    step, though ``X - X.mean(0)`` moves every row when one changes. ``D``: 4000 rows
    ``(+-0.5, 0, 0)`` labelled by the sign (centred, normalised: separable); ``D'`` replaces
    one row by ``(2000, 0, 0)`` labelled 0: the mean moves by 2, every other centred row points
    the same way after normalisation and the outlier, the only row the model can fit, points
    it the wrong way (or, when the outlier falls in the validation split, every validation
    row gets the same prediction): the model's sign is a coin flip. The released noisy
    validation count (``best_score_``; ``E[K] = 1.05``, so almost always one repetition) is in
    731..858 of about 800 on ``D`` and anywhere in -4..853 on ``D'``: measured on the old
    search, empirical epsilon >= 1.43 against the claimed 1 (150 searches per side, event
    "count <= 429" chosen on the first half). The search now
    refuses the undeclared FunctionTransformer for every seed on both sides, before anything is
    charged (nothing released), and the audit finds nothing."""
    n = 4000
    X = np.zeros((n, FEATURES))
    X[:, 0] = np.where(np.arange(n) % 2 == 0, 0.5, -0.5)
    y = (X[:, 0] > 0).astype(int)
    X1, y1 = X.copy(), y.copy()
    X1[0, 0], y1[0] = 2000.0, 0  # replace-one: row 0, (+0.5, label 1), becomes (2000, label 0)
    d0, d1 = _run(_search_centring, (X, y), (X1, y1), N_SEARCH, _best_score)
    result = _audit(d0, d1, epsilon=1.0, delta=1e-6, abnormal_event=True)
    assert result.bound <= result.epsilon, str(result)
    for d in (d0, d1):  # refused, naming the step, for every seed
        assert len(d.raised) == N_SEARCH and "'functiontransformer'" in d.raised[0]


# ---- the statement is a function of public inputs (issue 19, items 3, 5(a) and 7) ----------------
N_STATEMENT = 300  # fits per side: a statement that follows n (or n~) exactly is deterministic


def _size_value(est: Any) -> float:
    """What ``privacy_.size`` says about the number of rows (-1 when it stores none)."""
    value = est.privacy_.size.value
    return -1.0 if value is None else float(value)


def test_primal_statement_stores_no_size():
    """Guards item 3: DP-SCD's primal variant is stated under add/remove-one neighbours, so
    ``privacy_`` must not hold the exact ``n``. ``D`` (500 rows) vs ``D`` + one null row,
    statistic ``privacy_.size.value``: the old code stored ``n`` (500 vs 501 in every fit: a
    deterministic distinguisher, bound about 3.2 against the claim), now it stores nothing and
    both sides release the same value."""
    make = lambda s: DPSCDRegressor(  # noqa: E731
        variant="primal", batch_size=2, epochs=1, epsilon=1.0, seed=s
    )
    D = _push(500, target=1.0)
    D1 = _added(D, np.zeros(FEATURES), 0.0)
    d0, d1 = _run(make, D, D1, N_STATEMENT, _size_value)
    result = _audit(d0, d1)
    assert result.bound <= result.epsilon, str(result)
    assert np.unique(np.r_[d0.values, d1.values]).size == 1, "privacy_.size depends on n"


def _reported_epsilon_and_charge(est: Any) -> float:
    """``privacy_.epsilon``, checked equal to what the fit's own ledger was charged."""
    charged = est.ledger.spent.epsilon
    assert charged == pytest.approx(est.privacy_.epsilon, rel=1e-12)
    return float(est.privacy_.epsilon)


@pytest.mark.parametrize("family", ["sgd", "scd"])
def test_noise_multiplier_epsilon_does_not_follow_the_count(family):
    """Guards items 7 and 5(a): with ``noise_multiplier=`` and a private size, T and q come
    from the noisy count; a statement (and a ledger charge) of ``epsilon(n~) + count`` is an
    ex-post number that moves with the count, hence with the data (8.37..11.04 on identical data
    in the issue). ``D`` (200 rows) vs ``D`` + one null row, statistic ``privacy_.epsilon``
    (each fit charges its own ledger, which must equal it): the reported epsilon must be the
    same number for every fit on both sides (the worst case over the counts' public range).
    The old code reported a different epsilon for nearly every count, so the values were not
    all equal; being a post-processing of the 0.05-DP count, the threshold audit alone would
    not refute it, and the equality assertion is what guards the a-priori claim."""
    from privlearn.accounting import PrivacyLedger

    common = dict(epsilon=None, noise_multiplier=2.0, batch_size=20, epochs=1)

    def make(s: int) -> Any:
        ledger = PrivacyLedger(epsilon_cap=1e4, delta_cap=0.5)
        if family == "sgd":
            return _DPSGDClassifier(
                mechanism="gaussian", loss="hinge", seed=s, ledger=ledger, **common
            )
        return DPSCDClassifier(loss="hinge", seed=s, ledger=ledger, **common)

    D = _push(200)
    D1 = _added(D, np.zeros(FEATURES), 1.0)
    d0, d1 = _run(make, D, D1, 100, _reported_epsilon_and_charge)
    assert not d0.raised and not d1.raised, (d0.raised[:1], d1.raised[:1])
    values = np.unique(np.r_[d0.values, d1.values])
    assert values.size == 1, f"the reported epsilon follows the noisy count: {values[:5]}"
    # a worst case is still a claim the release must keep: the threshold audit on the
    # coefficient (same fits' configuration) stays below it
    result = _audit(*_run(make, D, D1, 100, _coef()))
    assert result.bound <= result.epsilon, str(result)


# The audits claim delta = 0.1 on purpose (the canaries need it for power) on at most a few
# thousand rows: the estimators' delta-versus-size warning (issue 19, item 8) is expected here.
pytestmark = pytest.mark.filterwarnings("ignore::privlearn.exceptions.LargeDeltaWarning")


# ---- DP-SCD hidden dual state (issue 20) ----
# Dual DP-SCD with Poisson batches now releases v with noise sigma C (sensitivity C) and keeps
# alpha hidden without noise (the hidden-state argument, privlearn.linear.scd_estimators). The
# canary is the adversarial case for that argument: a hinge example that violates its margin
# throughout (the model stays near 0, so ``1 - y z > 0`` at every visit), so every visit drives
# its dual variable towards the box bound ``y alpha = 1``: with C = 0.5 it moves v by -C e1 at
# each of its first two visits and then sits at the bound (only the per-visit jitter moves it
# back a little), so what it adds to v depends on its hidden sampling history. The other rows
# are null (they add nothing), D' replaces the canary by a null row (add/remove-one for Poisson
# batches; n declared public). L = 75 of n = 100 (q = 3/4), one epoch: T = 2 steps; the
# canary is sampled twice, saturating, with probability 9/16. Claim at noise multiplier 1,
# delta 0.1: epsilon 2.18 (RDP, 2 steps). The exact epsilon of the released coef_ (the mixture
# over the canary's visit count against the Gaussian, by numerical integration of the
# hockey-stick divergence, jitter ignored) is 1.45. Power: half the noise (exact epsilon 5.34,
# 2.45x the claim) is NOT reliably refuted at delta 0.1 by a threshold test on 1000-2000 fits
# per side (simulated bounds 1.9-2.6 against 2.18), so the twin divides the noise by 2.5 (exact
# epsilon 8.1, 3.7x the claim; simulated bounds 2.62-3.03 over four seed ranges of 1000 fits).
# Measured with these seeds: bound 0.18 for the audited fits, 2.65 for the twin.
HIDDEN_N = 100
HIDDEN_FITS = 1000
HIDDEN_BROKEN = 2.5


def _hidden_canary_data() -> tuple[tuple, tuple]:
    X = np.zeros((HIDDEN_N, FEATURES))
    X[0, 0] = 1.0  # the canary: x = e1 with label -1
    y = np.full(HIDDEN_N, -1.0)
    return (X, y), (np.zeros((HIDDEN_N, FEATURES)), y)


def _hidden_canary(factor: float) -> Make:
    return lambda s: DPSCDClassifier(
        loss="hinge", epsilon=None, noise_multiplier=1.0 / factor, delta=CANARY_DELTA,
        variant="dual", sampling="poisson", batch_size=75, epochs=1, clip=0.5, alpha=1.0,
        n_samples=HIDDEN_N, classes=[-1.0, 1.0], seed=s,
    )  # fmt: skip


def test_scd_hidden_dual_state_saturating_canary():
    """The released coefficient of the new DP-SCD (v noise sigma C, alpha hidden, default
    jitter) stays within its claim against a canary whose hidden alpha saturates."""
    D, D1 = _hidden_canary_data()
    est = _hidden_canary(1.0)(0).fit(*D)
    assert est.privacy_.sensitivity == 0.5 and est.privacy_.steps == 2
    assert "alpha: hidden" in est.privacy_.noise
    result = _audit(*_run(_hidden_canary(1.0), D, D1, HIDDEN_FITS, _coef()))
    assert result.bound <= result.epsilon, str(result)


def test_scd_hidden_dual_state_saturating_canary_broken():
    """Power: the same audit with the noise divided by 2.5 (exact epsilon of the release 3.7x
    the claim) while claiming the original epsilon refutes the claim."""
    D, D1 = _hidden_canary_data()
    claimed = _hidden_canary(1.0)(0).fit(*D).privacy_
    d0, d1 = _run(_hidden_canary(HIDDEN_BROKEN), D, D1, HIDDEN_FITS, _coef())
    result = _audit(d0, d1, epsilon=claimed.epsilon, delta=claimed.delta)
    assert result.bound > result.epsilon, f"the audit has no power: {result}"


# ---- private scale (issue 21) ----
# privlearn.cluster.private_scale releases a noisy count, a noisy coordinate sum (sensitivity
# R) and a noisy histogram of the distances to the released centre (sensitivity 1), and claims
# mu-GDP for the whole (mu**2 = mu_count**2 + mu_sum**2 + mu_radius**2, Dong, Roth & Su 2022),
# i.e. (epsilon, delta)-DP by the analytic Gaussian conversion. D: 100 rows at 0.1 e1 (R = 1);
# D' adds the canary x = -e1, of norm R and far from the mean, so it moves the count by 1, the
# sum by R and its own distance bin by 1, each shift the full sensitivity. The statistic is
# the likelihood-ratio direction of the three releases, T = count / sd_count**2 +
# <sum, x> / sd_sum**2 + hist[bin(x)] / sd_hist**2 (bin(x): the bin of ||x - c|| for the
# released centre c, a post-processing), whose shift between D and D' is mu times its
# standard deviation: the sharpest threshold test of the claim. At delta 0.1 (see the canary
# audits' power note) and mu = 1 the claim is epsilon 1.160; the broken twin halves every noise
# scale (twice the sensitivity the noise is calibrated for: true mu 2, epsilon 3.81) and keeps
# the claim. Measured with these seeds (1500 fits per side): bound 0.46 for the release
# (T's median moves from 17.81 to 18.66, about mu**2 = 1 in units of its sd 1), 1.84 for the
# twin (71.14 to 74.84, about 4 in units of 2), against the claim 1.160. The radius audit below
# is a guard (one row moves the noisy tail sum by 1 of its sd ~4): 0.00, and 3.26 for a
# near-noiseless histogram (measured by hand, not a test).
SCALE_FITS = 1500
SCALE_RADIUS_FITS = 1000
SCALE_MU = 1.0


def _scale_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X = np.zeros((100, 2))
    X[:, 0] = 0.1
    canary = np.array([-1.0, 0.0])
    return X, np.vstack([X, canary]), canary


def _scale_statistic(sc: Any, canary: np.ndarray) -> float:
    c, r = sc.centre_release, sc.radius_release
    dist = np.linalg.norm(canary - sc.centre)
    b = int(sc.lattice.bins(np.array([dist]))[0])
    return float(
        c.noisy_count / c.count_sd**2
        + canary @ c.noisy_sum / c.sum_sd**2
        + r.noisy_histogram[b] / r.histogram_sd**2
    )


def _scale_draws(X: np.ndarray, canary: np.ndarray, seeds: range, claim: float) -> Draws:
    from privlearn.cluster.private_scale import private_scale

    values = np.array([_scale_statistic(private_scale(X, 1.0, SCALE_MU, s), canary) for s in seeds])
    return Draws(values, (), claim, CANARY_DELTA)


def _scale_claim() -> float:
    from privlearn.cluster.private_scale import private_scale
    from privlearn.mechanisms.gaussian import analytic_gaussian_epsilon

    X, _, _ = _scale_data()
    mu = private_scale(X, 1.0, SCALE_MU, 0).mu
    assert mu <= SCALE_MU
    return analytic_gaussian_epsilon(mu, CANARY_DELTA)


def test_private_scale_far_row_canary():
    """The count, sum and radius histogram of the private scale stay within their composed
    GDP claim against a row of norm R far from the mean."""
    X, X1, canary = _scale_data()
    claim = _scale_claim()
    d0 = _scale_draws(X, canary, range(SCALE_FITS), claim)
    d1 = _scale_draws(X1, canary, range(SCALE_FITS, 2 * SCALE_FITS), claim)
    result = _audit(d0, d1)
    assert result.bound <= result.epsilon, str(result)


def test_private_scale_far_row_canary_broken(monkeypatch):
    """Power: every noise scale halved (the sensitivity claim doubled) while the claim is
    kept: the audit refutes it."""
    from privlearn.cluster import private_scale as ps

    X, X1, canary = _scale_data()
    claim = _scale_claim()
    honest = ps._sigma_for
    monkeypatch.setattr(ps, "_sigma_for", lambda *a: honest(*a) / 2.0)
    d0 = _scale_draws(X, canary, range(SCALE_FITS), claim)
    d1 = _scale_draws(X1, canary, range(SCALE_FITS, 2 * SCALE_FITS), claim)
    result = _audit(d0, d1)
    assert result.bound > result.epsilon, f"the audit has no power: {result}"


def test_private_scale_radius_boundary_canary():
    """The released radius alone, with the data's quantile exactly at a lattice edge: D has
    90 rows at the origin and 10 at 0.5 e2 (a tail of exactly (1 - q) n = 10 rows for
    q = 0.9), D' adds x = -e1 beyond every edge that the tail passes, which tips the rule
    (11 > 10.1 rows). Measured: bound 0.00; with the histogram's noise divided by 1000 (the
    centre's kept) the same audit gives 3.26 (47% of the radii on D below 0.39, none on D')."""
    from privlearn.cluster.private_scale import private_scale

    X = np.zeros((100, 2))
    X[90:, 1] = 0.5
    X1 = np.vstack([X, [-1.0, 0.0]])
    claim = _scale_claim()

    def draws(data: np.ndarray, seeds: range) -> Draws:
        values = [private_scale(data, 1.0, SCALE_MU, s, quantile=0.9).radius for s in seeds]
        return Draws(np.array(values), (), claim, CANARY_DELTA)

    n = SCALE_RADIUS_FITS
    result = _audit(draws(X, range(n)), draws(X1, range(n, 2 * n)))
    assert result.bound <= result.epsilon, str(result)


# ---- DPKMeans lsh (issue 21) ----
# The LSH prefix tree keeps a node when its noisy count reaches the public threshold
# ``3 sigma_tree``. Adversarial neighbours at a split: ``D`` is ``m`` copies of one point, ``D'``
# one more copy, with ``m`` the threshold rounded, so the node holding the point sits at the
# keep threshold and the extra row moves its count across it. ``max_depth=1`` and a budget
# split that gives the tree almost all of ``mu`` (no private scale, no Lloyd round) make the
# one level's release nearly the whole claim; the event is whether the fit shows a kept level-1
# node (``tree_levels_ == 1``, a function of the released tree). Claim at ``delta = 0.1``,
# epsilon 2 (``mu = 1.37``), as the canaries above: the tail events that witness a small delta
# are out of reach of a few hundred fits. Measured (800 fits per side): 0.83 for the audited
# fits, 2.78 for the twin whose every lattice sigma (and so threshold) is halved, true mu 2.7
# (simulated over the binomial draws: median 2.8, above the claim of 2 in >99% of runs; with
# 600 fits per side the median is 2.6 and one seed set gave 2.04). ~20-30 s per test.
LSH_FITS = 800
LSH_EPSILON = 2.0
LSH_SPLIT_AUDIT = dict(scale=0.001, lloyd=0.001, tree=0.978, counts=0.01, sums=0.01)
LSH_POINT = (0.5, 0.0)


def _lsh_make(seed: int) -> DPKMeans:
    return DPKMeans(
        n_clusters=1, epsilon=LSH_EPSILON, delta=CANARY_DELTA, radius=1.0, max_depth=1,
        private_scale=False, lloyd_steps=0, budget_split=LSH_SPLIT_AUDIT, seed=seed,
    )  # fmt: skip


def _lsh_split_data() -> tuple[tuple, tuple]:
    """``m`` and ``m + 1`` copies of :data:`LSH_POINT`, ``m`` the planned keep threshold
    (rounded; under a patched noise scale, the patched threshold)."""
    est = _lsh_make(0)
    schedule = est._lsh_plan(est._params(), len(LSH_POINT), 1.0)[1]
    m = max(1, round(schedule.threshold))
    X = np.tile(LSH_POINT, (m, 1))
    return (X, None), (np.tile(LSH_POINT, (m + 1, 1)), None)


def _tree_levels(est: Any) -> float:
    return float(est.tree_levels_)


class _CoresetMean:
    """Stand-in for the weighted k-means on the released coreset (scikit-learn's ``KMeans``,
    up to 30 restarts: ~7 of a fit's ~9 ms here): that k-means is post-processing of the
    released tree and coreset, runs after ``tree_levels_`` is fixed (the audited statistic,
    read from the released tree) and draws nothing from the fit's streams (its seed is drawn
    by the estimator before it is built), so the audited releases are bit for bit those of
    the real fit. Its ``cluster_centers_``: the coreset's weighted mean, repeated."""

    def __init__(self, n_clusters: int, **_: Any) -> None:
        self.n_clusters = n_clusters

    def fit(self, X: np.ndarray, sample_weight: np.ndarray) -> _CoresetMean:
        mean = np.average(X, axis=0, weights=sample_weight)
        self.cluster_centers_ = np.tile(mean, (self.n_clusters, 1))
        return self


@pytest.fixture
def coreset_kmeans_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The LSH audits' fits without the coreset's post-processing k-means
    (:class:`_CoresetMean`)."""
    from privlearn.cluster import estimator

    monkeypatch.setattr(estimator, "KMeans", _CoresetMean)


def test_lsh_audit_statistic_does_not_see_the_coreset_kmeans(coreset_kmeans_skipped):
    """The stand-in changes nothing the LSH audits read: the statistic, the released coreset
    size and the statement of a fit are those of the real fit (same seeds)."""
    D, D1 = _lsh_split_data()
    for X, seed in ((D[0], 0), (D1[0], 1), (D[0], 2)):
        stand_in = _lsh_make(seed).fit(X)
        with pytest.MonkeyPatch.context() as real:
            from sklearn.cluster import KMeans

            from privlearn.cluster import estimator

            real.setattr(estimator, "KMeans", KMeans)
            fitted = _lsh_make(seed).fit(X)
        assert _tree_levels(stand_in) == _tree_levels(fitted)
        assert stand_in.n_candidates_ == fitted.n_candidates_
        assert stand_in.privacy_ == fitted.privacy_


def test_dpkmeans_lsh_node_at_the_keep_threshold(coreset_kmeans_skipped):
    """Guards the tree's noise and threshold: one row more at a node whose count sits at the
    keep threshold is hidden within the claimed (epsilon, delta)."""
    D, D1 = _lsh_split_data()
    result = _audit(*_run(_lsh_make, D, D1, LSH_FITS, _tree_levels))
    assert result.epsilon <= LSH_EPSILON, str(result)
    assert result.bound <= result.epsilon, f"DPKMeans(method='lsh'): {result}"


def test_dpkmeans_lsh_node_at_the_keep_threshold_broken(monkeypatch, coreset_kmeans_skipped):
    """Power: every lattice-calibrated sigma of the coreset halved (true mu doubled) while the
    statement keeps the original claim: the same audit refutes it."""
    from privlearn.cluster import lsh_coreset

    claimed = _lsh_make(0).fit(np.tile(LSH_POINT, (3, 1))).privacy_
    real = lsh_coreset.lattice_sigma
    monkeypatch.setattr(lsh_coreset, "lattice_sigma", lambda s, mu: real(s, mu) / 2.0)
    D, D1 = _lsh_split_data()
    d0, d1 = _run(_lsh_make, D, D1, LSH_FITS, _tree_levels)
    assert max(d0.epsilon, d1.epsilon) == claimed.epsilon  # the statement does not see it
    result = _audit(d0, d1, epsilon=claimed.epsilon, delta=claimed.delta)
    assert result.bound > result.epsilon, f"the audit has no power: {result}"


# ---- regression target bound (issue 22) ----
# A regressor without a declared ``target_bounds`` buys its target bound with two
# exponential-mechanism quartiles of y (``privacy_.target``, epsilon_b / 2 each; basic
# composition gives the statement's epsilon_b), searched on asinh(y) in a public range.
# Neighbours differing in one huge y: D holds 3 rows at y = 9e8, D' adds y = 1e9 (the top of the
# search range). With q = 0.75 and n = 3 the lattice points in [9e8, 1e9) gain 0.75 in utility
# on D' while every point below 9e8 (nearly all of the range) loses 0.75: the largest spread
# the rank utility allows under add/remove-one, so the event "Q3 above t" approaches the
# mechanism's true ratio exp(0.75 epsilon_q). The statistic is the released Q3; the claim is
# Q3's share epsilon_b / 2 = 1. Draws: one call of the very function the regressors call
# (``_target.dp_quantiles`` with the bound's levels, range and lattice) on N_TARGET copies of
# the column, each column an independent bound (its own stream) at the per-quartile epsilon;
# ``test_private_target_bound_draws_are_the_estimators`` checks that one such column is what
# ``TargetSpec.resolve`` releases. Measured: 0.06 for the real mechanism, 1.10 for the twin
# whose quartiles run at twice their share (a 2x violation the statement does not see).
N_TARGET = 30_000
_TARGET_D = np.full(3, 9e8)
_TARGET_HUGE = 1e9


def _target_quartile_draws(y: np.ndarray, seed: int, columns: int = N_TARGET) -> Draws:
    """Q3 of ``columns`` independent private target bounds at epsilon_b = 2 (1 per quartile)."""
    from privlearn.linear import _target

    u = np.repeat(np.arcsinh(np.asarray(y, dtype=np.float64))[:, None], columns, axis=1)
    q = _target.dp_quantiles(
        u, _target.TARGET_LEVELS, 2.0 * columns, (-_target.ASINH_LIMIT, _target.ASINH_LIMIT),
        seed=seed, lattice_bits=_target.TARGET_LATTICE_BITS,
    )  # fmt: skip
    return Draws(np.sinh(q[1]), (), 1.0, 0.0)


def test_private_target_bound_draws_are_the_estimators():
    """The audited draws are the regressors' mechanism: one column is exactly the Q3 that
    ``TargetSpec.resolve`` (called by both regressors' fit) releases for the same seed."""
    from privlearn.exceptions import UndeclaredBoundWarning
    from privlearn.linear._target import check_target

    spec = check_target(None, None, 0.1)
    for seed in range(3):
        with pytest.warns(UndeclaredBoundWarning, match="no target_bounds or target_range"):
            bound = spec.resolve(_TARGET_D, 2.0, neighboring="add_remove", seed=seed,
                                 fit_intercept=True)  # fmt: skip
        single = _target_quartile_draws(_TARGET_D, seed, columns=1).values[0]
        assert bound.quartiles is not None
        assert max(bound.quartiles) == single or min(bound.quartiles) == single


def test_private_target_bound_one_huge_y():
    """Guards the private target bound's epsilon: one added huge y moves the released Q3
    no more than its claimed share allows."""
    d0 = _target_quartile_draws(_TARGET_D, 0)
    d1 = _target_quartile_draws(np.append(_TARGET_D, _TARGET_HUGE), 1)
    result = _audit(d0, d1)
    assert result.bound <= result.epsilon, str(result)


def test_private_target_bound_one_huge_y_broken(monkeypatch):
    """Power: the quartiles run at twice the epsilon the statement claims; the same audit
    refutes the claim."""
    from privlearn.linear import _target

    real = _target.dp_quantiles
    monkeypatch.setattr(
        _target, "dp_quantiles", lambda x, qs, eps, *a, **k: real(x, qs, 2.0 * eps, *a, **k)
    )
    d0 = _target_quartile_draws(_TARGET_D, 0)
    d1 = _target_quartile_draws(np.append(_TARGET_D, _TARGET_HUGE), 1)
    result = _audit(d0, d1)
    assert result.bound > result.epsilon, f"the audit has no power: {result}"
