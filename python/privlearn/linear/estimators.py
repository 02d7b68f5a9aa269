"""scikit-learn estimators for private mini-batch SGD: :class:`DPSGDClassifier` and
:class:`DPSGDRegressor`.

Two mechanisms, both run by :func:`privlearn.linear.sgd_train` (or its numpy twin
:func:`privlearn.reference.linear.sgd_train` with ``backend="reference"``):

``"l2-laplace"`` -- Song, Chaudhuri, Sarwate (2013), "Stochastic gradient descent with
    differentially private updates", Section III: the mini-batch update (eq. 6) with noise of
    density proportional to ``exp(-(epsilon/2) ||z||)`` (eq. 5), disjoint batches (one random
    permutation per pass), rows with ``||x_i|| <= 1`` so that ``||grad loss|| <= 1`` for the
    log and hinge losses, and the projection onto the ball of radius ``1 / alpha`` used in
    their experiments. One pass is ``epsilon``-DP (Theorem 1: the sensitivity of each update is
    ``2 eta_t / b`` and the batches are disjoint, so parallel composition applies); several
    passes compose by basic composition. Pure DP, replace-one neighbours.

``"gaussian"`` -- Abadi et al. (2016), "Deep learning with differential privacy",
    Algorithm 1: per-example clipping to ``clip``, Gaussian noise ``N(0, sigma^2 clip^2 I)`` on
    the summed clipped gradients, Poisson sampling (rate ``q = batch_size / n``) or fixed-size
    batches drawn without replacement, accounted by the tightest sound accountant of
    :mod:`privlearn.accounting` (the privacy loss distribution for Poisson batches, RDP for
    fixed ones). ``sigma`` is calibrated to the target ``(epsilon, delta)`` with
    :func:`privlearn.accounting.calibrate_noise`, or given as ``noise_multiplier``.

Both minimise ``(alpha/2) ||w||^2 + (1/n) sum_i loss(x_i^T w, y_i)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from privlearn._checks import as_index
from privlearn._labels import (
    CLASSES_PARAM_DOC,
    LabelSet,
)
from privlearn._specs.arguments import EPSILON_MAX, EPSILON_MIN
from privlearn._specs.sgd import SCHEDULES, SGDRun
from privlearn.accounting import (
    DisjointBatches,
    GaussianEvent,
    LatticeSlack,
    PoissonSampled,
    PrivacyStatement,
    PureDPAccountant,
    PureDPEvent,
    SampledWithoutReplacement,
    accountant_for,
    calibrate_lattice_sigma,
    calibrate_noise,
    epsilon_of_noise,
    lattice_slack,
    lattice_statement,
)
from privlearn.accounting.size import DatasetSize
from privlearn.backends import backend_for_array
from privlearn.linear._base import (
    FitSetup,
    PrivateLinearModel,
    RowRule,
    objective_path,
    store_params,
)
from privlearn.linear._param_docs import (
    DEFAULTS_NOTE_DOC,
    LEDGER_PARAM_DOC,
    ROW_PROJECTION_ATTR_DOC,
    RUN_PARAMS_DOC,
)
from privlearn.linear._params import (
    ACCOUNTED_AS,
    ETA0_RANGE,
    INTERCEPT_SCALING_RANGE,
    NEIGHBORING,
    _alpha,
    _bounded,
    _check_steps,
    _choice,
    _clip,
    _delta,
    _epochs,
)
from privlearn.linear._prediction import LinearClassifierMixin, LinearRegressorMixin
from privlearn.linear._privacy_record import FitPrivacyRecord
from privlearn.linear._statement import (
    TrainingDiagnostics,
)
from privlearn.linear._target import TARGET_FRACTION, TARGET_PARAMS_DOC, TargetBound
from privlearn.random import lattice_noise_description, noise_lattice

__all__ = ["DPSGDClassifier", "DPSGDPrivacy", "DPSGDRegressor"]

_EPSILON_SPLITS = ("total", "per_pass")
_SAMPLINGS = {"l2-laplace": ("disjoint",), "gaussian": ("poisson", "fixed")}
_DEFAULT_SAMPLING = {"l2-laplace": "disjoint", "gaussian": "poisson"}


# Lattice calibrations of the Gaussian mechanism, keyed by the public schedule that determines
# them (target epsilon and delta, sensitivity ratio, noise coordinates, sampling rate, steps,
# sampler, planned size): ``(sigma, LatticeSlack)``, both immutable, and under
# ``("statement", *key, ...)`` the frozen PrivacyStatement of that schedule; with a given noise
# multiplier, the LatticeSlack under the multiplier's key. Bounded, oldest dropped. Sized for
# the fits of a size planned from a noisy count: each count is its own schedule, and the
# counts of a few hundred refits (an audit, a search) take about a hundred values (two
# entries each, under a kB apiece).
_CALIBRATIONS: dict[tuple[Any, ...], Any] = {}
_CALIBRATION_CACHE_SIZE = 1024


def _remember_calibration(key: tuple[Any, ...], value: Any) -> None:
    """Store one calibration in :data:`_CALIBRATIONS`, dropping the oldest beyond its size."""
    if len(_CALIBRATIONS) >= _CALIBRATION_CACHE_SIZE:
        _CALIBRATIONS.pop(next(iter(_CALIBRATIONS)))
    _CALIBRATIONS[key] = value


@dataclass(frozen=True)
class DPSGDPrivacy(FitPrivacyRecord):
    """What a DP-SGD fit spent, and how (the ``privacy_`` attribute of the estimators).

    Attributes
    ----------
    epsilon : float
        Total epsilon of the whole fit (``inf``: not private).
    delta : float
        Total delta (0 for the pure-DP ``"l2-laplace"`` mechanism and for non-private fits).
    mechanism : str
        ``"l2-laplace"``, ``"gaussian"`` or ``"none"`` (``epsilon = inf``: no noise).
    accountant : str
        ``"pure"`` (basic + parallel composition), ``"pld"`` (Poisson batches: the privacy
        loss distribution), ``"rdp"`` (fixed batches) or ``"none"``.
    neighboring : str or None
        ``"replace_one"`` (l2-laplace; Gaussian with fixed-size batches) or ``"add_remove"``
        (Gaussian with Poisson sampling).
    sampling : str
        The batch sampler the trainer used (``"disjoint"``, ``"poisson"`` or ``"fixed"``).
    steps : int
        SGD steps (noisy releases).
    clip : float
        Bound ``C`` on the per-example gradient norm used for the sensitivity (``inf`` when
        unbounded, i.e. a non-private fit without clipping).
    sensitivity : float
        L2 sensitivity of the summed batch gradient under ``neighboring``: ``2 C``
        (replace-one) or ``C`` (add/remove-one).
    noise_multiplier : float or None
        Gaussian: standard deviation of the noise divided by ``C`` (``sigma`` of Abadi et al.,
        the value given to the trainer). The accountant's events hold ``noise std /
        sensitivity``, which is ``sigma / 2`` for fixed-size batches (replace-one).
    noise_scale : float or None
        l2-laplace: ``2 C / epsilon_per_pass``, the noise density being proportional to
        ``exp(-||z|| / noise_scale)``; Gaussian: the noise standard deviation ``sigma C``.
    noise : str or None
        Gaussian: how the noise is released (the exact discrete Gaussian on the lattice
        ``C 2^-k``; the accountant composes the rounded continuous Gaussian's events, plus the
        lattice slack of :mod:`privlearn.accounting.lattice`, ``statement.lattice``).
    epsilon_per_pass : float or None
        l2-laplace: the epsilon of one pass over the data.
    passes : int or None
        l2-laplace: the number of passes (``epochs``).
    epsilon_split : str or None
        l2-laplace: ``"total"`` or ``"per_pass"`` (how the ``epsilon`` parameter was read).
    statement : PrivacyStatement or None
        The accountant's statement of the training part (composed events, best RDP order,
        ...); None if not private.
    size : DatasetSize or None
        How the data-set size entered the run: declared public (``n_samples=``), fixed by a
        replace-one relation, or an exact discrete-Laplace noisy count whose epsilon
        (``size.epsilon``) is part of ``epsilon`` (basic composition with the training part).
    labels : LabelSet or None
        Classifiers: the label set (``classes_``) and whether it was declared public with
        ``classes=`` or read from the private ``y`` (then not covered by this guarantee: it is
        treated as public, and ``str(privacy_)`` says so); None for regressors.

    worst_case : bool
        Whether the training epsilon is the worst case over the noisy count's public range
        ``size.bounds`` (``noise_multiplier=`` with a private size): then ``statement`` holds
        that bound (no events: the curve is a maximum over counts, not one composition).

    ``epsilon`` and ``delta`` are a-priori guarantees: functions of public inputs only, never
    of the noisy count (with ``epsilon=`` given the noise is calibrated for the planned count
    so the training part meets its target whatever the count; with ``noise_multiplier=`` the
    training part is the worst case over the counts).
    """

    epsilon: float
    delta: float
    mechanism: str
    accountant: str
    neighboring: str | None
    sampling: str
    steps: int
    clip: float
    sensitivity: float
    noise_multiplier: float | None = None
    noise_scale: float | None = None
    epsilon_per_pass: float | None = None
    passes: int | None = None
    epsilon_split: str | None = None
    statement: PrivacyStatement | None = None
    size: DatasetSize | None = None
    labels: LabelSet | None = None
    worst_case: bool = False
    noise: str | None = None
    target: TargetBound | None = None

    def __str__(self) -> str:
        if not self.private:
            return (
                f"not private (epsilon = inf): plain SGD without noise, {self.steps} steps, "
                f"{self.sampling} batches"
            )
        lines = [f"({self.epsilon:.6g}, {self.delta:.6g})-DP, {self.mechanism} mechanism"]
        if self.mechanism == "l2-laplace":
            lines.append(
                f"  {self.passes} pass(es) x {self.epsilon_per_pass:.6g}-DP per pass "
                f"(disjoint batches: parallel composition within a pass, basic composition "
                f"across passes; epsilon_split={self.epsilon_split!r})"
            )
            lines.append(
                f"  noise density ~ exp(-||z|| / {self.noise_scale:.6g}), gradient bound "
                f"C = {self.clip:g}, sensitivity 2C = {self.sensitivity:g}, {self.steps} steps"
            )
        else:
            lines.append(
                f"  noise multiplier sigma = {self.noise_multiplier:.6g} (noise std "
                f"{self.noise_scale:.6g}), clip C = {self.clip:g}, sensitivity "
                f"{self.sensitivity:g}, {self.sampling} sampling, {self.steps} steps"
            )
            if self.noise:
                lines.append(f"  noise: {self.noise}")
        lines += self._shared_lines()
        return "\n".join(lines)


@dataclass(frozen=True)
class _Plan:
    """Everything the trainer is called with, resolved from the parameters and the data."""

    mechanism: str  # passed to sgd_train
    sampling: str
    epsilon: float  # l2-laplace: epsilon per pass given to the trainer
    sigma: float  # gaussian: noise multiplier given to the trainer
    clip: float  # given to the trainer (0 = no clipping)
    radius: float
    steps: int  # 0 = let the trainer compute it (disjoint batches)
    rate: float  # Poisson sampling rate given to the trainer (0 = batch_size / n)
    privacy: DPSGDPrivacy


class _DPSGDBase(PrivateLinearModel):
    """DP-SGD on the shared plan; subclasses define the loss, the label handling and the
    mechanism."""

    # ---- to be provided by subclasses ----------------------------------------------------------
    def _loss_name(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def _mechanism_name(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    # ---- the plan's hooks ------------------------------------------------------------------------
    def _setup(self, d: int, fit_intercept: bool) -> FitSetup:
        mechanism = _choice(self._mechanism_name(), "mechanism", ("l2-laplace", "gaussian"))
        song = mechanism == "l2-laplace"
        extra = {
            "mechanism": mechanism,
            "loss": self._loss_name(),
            "alpha": _alpha(self.alpha, positive=song),
            "batch_size": as_index(self.batch_size, "batch_size", lower=1, upper=1 << 40),
            "epochs": _epochs(self.epochs),
            "learning_rate": _choice(self.learning_rate, "learning_rate", SCHEDULES),
            "eta0": _bounded(self.eta0, "eta0", ETA0_RANGE),
            "clip": _clip(self.clip),
        }
        sampling = self.sampling
        if sampling is None:
            sampling = _DEFAULT_SAMPLING[mechanism]
        _choice(sampling, "sampling", ("disjoint", "poisson", "fixed"))
        if sampling not in _SAMPLINGS[mechanism]:
            why = (
                "Song et al.'s guarantee is by parallel composition over disjoint batches"
                if song
                else "the accountants cover Poisson and fixed-size (without replacement) sampling"
            )
            raise ValueError(
                f"sampling={sampling!r} does not match mechanism={mechanism!r}: {why}; use "
                f"sampling in {_SAMPLINGS[mechanism]}"
            )
        extra["sampling"] = sampling
        extra["split"] = _choice(
            getattr(self, "epsilon_split", "total"), "epsilon_split", _EPSILON_SPLITS
        )
        epsilon, noise_multiplier = self._noise_target(multiplier_allowed=not song)
        scaling = self._intercept_scaling(mechanism, fit_intercept)
        # Song et al.'s proof needs ||x|| <= 1 (with the intercept column: the augmented row);
        # the Gaussian mechanism clips the gradients instead (clip_rows is not offered there).
        bound = math.sqrt(1.0 - scaling**2) if fit_intercept and song else 1.0
        rows = RowRule(
            bound,
            checked=song,
            reason="the l2-laplace mechanism (Song et al. 2013, Theorem 1) needs ||x_i|| <= 1 so "
            "that ||grad loss|| <= 1",
        )
        delta = _delta(self.delta, pure=song)
        return FitSetup(epsilon, noise_multiplier, delta, scaling, rows, extra)

    _trainer = "sgd_train"

    def _trainer_name(self, setup: FitSetup) -> str:
        return "softmax_sgd_train" if setup.extra.get("n_classes", 2) > 2 else "sgd_train"

    def _trainer_kwargs(self, setup: FitSetup, plan: _Plan) -> dict[str, Any]:
        e = setup.extra
        kwargs = dict(
            sampling=plan.sampling,
            learning_rate=e["learning_rate"],
            alpha=e["alpha"],
            batch_size=e["batch_size"],
            epochs=e["epochs"],
            steps=plan.steps,
            rate=plan.rate,
            eta0=e["eta0"],
            clip=plan.clip,
            sigma=plan.sigma,
            radius=plan.radius,
        )
        if e.get("n_classes", 2) > 2:  # multinomial: Gaussian mechanism, whole-gradient clip
            return {**kwargs, "n_classes": e["n_classes"]}
        return {**kwargs, "loss": e["loss"], "mechanism": plan.mechanism, "epsilon": plan.epsilon}

    def _diagnostics(
        self, X: Any, y: np.ndarray, setup: FitSetup, run: SGDRun
    ) -> TrainingDiagnostics:
        e = setup.extra
        classes = e.get("n_classes", 2)
        loss = "log_loss" if classes > 2 else e["loss"]
        return TrainingDiagnostics(  # streamed over row blocks: within a quarter of X's bytes
            objective_path=objective_path(X, y, run.path, loss, e["alpha"], classes),
            objective_steps=np.asarray(run.path_steps, dtype=np.int64),
        )

    def _intercept_scaling(self, mechanism: str, fit_intercept: bool) -> float:
        s = self.intercept_scaling
        if s is None:
            s = 0.5 if mechanism == "l2-laplace" else 1.0
        s = _bounded(s, "intercept_scaling", INTERCEPT_SCALING_RANGE)
        if fit_intercept and mechanism == "l2-laplace" and not s < 1.0:
            raise ValueError(
                "with mechanism='l2-laplace' and fit_intercept=True the augmented rows "
                f"[x_i, intercept_scaling] must have norm <= 1: intercept_scaling must be < 1, "
                f"got {s}"
            )
        return s

    def _plan(
        self, setup: FitSetup, n: int, d: int, seed: int | None, ledger: Any, dry: bool = False
    ) -> _Plan:
        e = setup.extra
        mechanism, sampling, batch_size = e["mechanism"], e["sampling"], e["batch_size"]
        epochs, clip, alpha = e["epochs"], e["clip"], e["alpha"]
        epsilon, noise_multiplier, delta = setup.epsilon, setup.noise_multiplier, setup.delta
        private = setup.private
        size, train_eps = self._planned_size(
            setup, n, seed, ledger, poisson=sampling == "poisson", floor=batch_size, dry=dry
        )
        m = size.value  # the size the schedule is planned with
        assert m is not None

        if mechanism == "l2-laplace":
            assert epsilon is not None
            steps = _check_steps(epochs * (-(-m // batch_size)), 1)
            # ||grad loss|| <= ||x|| <= 1 for the log and hinge losses; clip < 1 bounds it more.
            bound_c = clip if 0.0 < clip < 1.0 else 1.0
            core_clip = clip if 0.0 < clip < 1.0 else 0.0
            radius = 1.0 / alpha
            if not private:
                return _Plan(
                    "none", sampling, math.inf, 0.0, core_clip, radius, 0, 0.0,
                    _not_private(sampling, steps, bound_c, size),
                )  # fmt: skip
            eps_pass = epsilon / epochs if e["split"] == "total" else epsilon
            if not EPSILON_MIN <= eps_pass <= EPSILON_MAX:  # the trainer's range (sgd.hpp)
                raise ValueError(
                    f"the l2-laplace mechanism needs an epsilon per pass in [{EPSILON_MIN:g}, "
                    f"{EPSILON_MAX:g}] (its noise radius 2C/epsilon must stay representable), "
                    f"got {eps_pass:g} (epsilon={epsilon:g}, epochs={epochs}, "
                    f"epsilon_split={e['split']!r}): raise epsilon or lower epochs"
                )
            acc = PureDPAccountant(neighboring="replace_one")
            acc.compose(DisjointBatches(PureDPEvent(eps_pass)), count=epochs)
            statement = acc.statement(0.0)
            privacy = DPSGDPrivacy(
                epsilon=statement.epsilon,
                delta=0.0,
                mechanism="l2-laplace",
                accountant="pure",
                neighboring="replace_one",
                sampling=sampling,
                steps=steps,
                clip=bound_c,
                sensitivity=2.0 * bound_c,
                noise_scale=2.0 * bound_c / eps_pass,
                epsilon_per_pass=eps_pass,
                passes=epochs,
                epsilon_split=e["split"],
                statement=statement,
                size=size,
            )
            return _Plan("l2-laplace", sampling, eps_pass, 0.0, core_clip, radius, 0, 0.0, privacy)

        # Gaussian mechanism (Abadi et al. 2016, Algorithm 1): T and q from the planned size.
        steps = _check_steps(-(-(epochs * m) // batch_size), e.get("tasks", 1))
        q = min(1.0, batch_size / m)
        rate = q if sampling == "poisson" else 0.0
        if not private:
            bound_c = clip if clip > 0.0 else math.inf
            return _Plan(
                "none", sampling, math.inf, 0.0, clip, 0.0, steps, rate,
                _not_private(sampling, steps, bound_c, size),
            )  # fmt: skip
        if not clip > 0.0:
            raise ValueError(
                "the gaussian mechanism needs clip > 0 (the per-example gradient bound is its "
                "sensitivity); clip=0 is only allowed with epsilon=inf"
            )
        # Noise multiplier of the accounted event = noise std / L2 sensitivity of the summed
        # clipped gradients: C under add/remove-one (Poisson), 2C under replace-one (fixed).
        ratio = 1.0 if sampling == "poisson" else 2.0
        # The core adds the noise exactly on the lattice C 2^-k (random.hpp, noise_lattice): the
        # continuous accountant of the rounded Gaussian plus the lattice slack
        # (privlearn.accounting.lattice); coordinates: steps x (d + 1) x classes, an upper bound.
        coords = steps * (d + 1) * (e["n_classes"] if e.get("n_classes", 2) > 2 else 1)

        def slack_of(sigma_event: float) -> LatticeSlack:
            eps_about = train_eps if train_eps is not None else epsilon_of(sigma_event, delta)
            return lattice_slack(_lattice_scale(sigma_event * ratio), coords, delta, eps_about)

        # Calibrated and stated by the tightest sound accountant of the sampler: the privacy
        # loss distribution for Poisson batches, RDP for fixed ones (accounting.tightest).
        # (eps, delta) -> sigma and (sigma, delta) -> eps of the continuous Gaussian
        curve = dict(q=q, steps=steps, sampling=ACCOUNTED_AS[sampling], n=m)
        continuous = partial(calibrate_noise, **curve)
        epsilon_of = partial(epsilon_of_noise, **curve)

        if noise_multiplier is None:
            assert train_eps is not None
            # Cached per public schedule (issue 32, item 2): the calibration is a deterministic
            # function of these public numbers only, so a refit of the same schedule (a
            # cross-validation fold, a grid point, a rerun) reuses it instead of ~1 s of
            # privacy-loss-distribution compositions.
            cache_key = (
                "sgd", float(train_eps), float(delta), ratio, int(coords), float(q), int(steps),
                ACCOUNTED_AS[sampling], int(m),
            )  # fmt: skip
            cached = _CALIBRATIONS.get(cache_key)
            if cached is None:
                cached = calibrate_lattice_sigma(train_eps, delta, slack_of, continuous, epsilon_of)
                _remember_calibration(cache_key, cached)
            sigma_event, slack = cached
            sigma = sigma_event * ratio
            stated_key = ("statement", *cache_key, sampling, int(n), int(batch_size))
        else:
            sigma = noise_multiplier
            sigma_event = sigma / ratio
            # A given noise multiplier: the slack and the statement are functions of the same
            # public numbers (the multiplier, the schedule, the training epsilon that sizes the
            # slack's tail term): cached under them, so a refit of the same schedule neither
            # recomputes the slack nor composes the privacy loss distribution again.
            cache_key = (
                "sgd-sigma", float(sigma_event), float(delta), ratio, int(coords), float(q),
                int(steps), ACCOUNTED_AS[sampling], int(m),
                None if train_eps is None else float(train_eps),
            )  # fmt: skip
            slack = _CALIBRATIONS.get(cache_key)
            if slack is None:
                slack = slack_of(sigma_event)
                _remember_calibration(cache_key, slack)
            stated_key = ("statement", *cache_key, sampling, int(n), int(batch_size))
        if sampling == "poisson":
            event = PoissonSampled(q, GaussianEvent(sigma_event))
        else:
            event = SampledWithoutReplacement(n, batch_size, GaussianEvent(sigma_event))
        # The statement of a schedule is a function of the same public numbers as its
        # calibration: cached with it (a frozen PrivacyStatement), so a refit does not
        # compose the privacy loss distribution again (issue 32, item 2). The accountant is
        # fixed to the sampler's neighbouring relation: a mismatched event raises
        # UnsupportedEventError instead of a wrong number.
        statement = _CALIBRATIONS.get(stated_key)
        if statement is None:
            acc = accountant_for(NEIGHBORING[sampling], sigma_event).compose(event, count=steps)
            statement = lattice_statement(acc, slack, delta)
            _remember_calibration(stated_key, statement)
        classes = e["n_classes"] if e.get("n_classes", 2) > 2 else 1
        statement, total, worst_case = self._stated_total(
            setup, statement, size, sigma=sigma_event, batch_size=batch_size, epochs=epochs,
            tasks=1, lattice=(_lattice_scale(sigma), (d + 1) * classes),
        )  # fmt: skip
        privacy = DPSGDPrivacy(
            epsilon=total,
            delta=delta,
            mechanism="gaussian",
            accountant=statement.accountant,
            neighboring=NEIGHBORING[sampling],
            sampling=sampling,
            steps=steps,
            clip=clip,
            sensitivity=ratio * clip,
            noise_multiplier=sigma,
            noise_scale=sigma * clip,
            noise=lattice_noise_description(sigma),
            statement=statement,
            size=size,
            worst_case=worst_case,
        )
        return _Plan("gaussian", sampling, math.inf, sigma, clip, 0.0, steps, rate, privacy)


def _lattice_scale(sigma: float) -> float:
    """A lower bound of the lattice noise's scale ``s`` (lattice units) for noise multiplier
    ``sigma``: the square root of the sampler's variance for one coordinate
    (:func:`privlearn.random.noise_lattice`; more coordinates only add rounding noise)."""
    return float(math.isqrt(noise_lattice(sigma, 1)[2]))


def _not_private(sampling: str, steps: int, clip: float, size: DatasetSize) -> DPSGDPrivacy:
    return DPSGDPrivacy(
        epsilon=math.inf,
        delta=0.0,
        mechanism="none",
        accountant="none",
        neighboring=None,
        sampling=sampling,
        steps=steps,
        clip=clip,
        sensitivity=math.inf,
        size=size,
    )


_COMMON_PARAMS = (
    """
    epsilon : float or None, default=1.0
        Privacy target, in ``[1e-9, 1e4]``. ``float("inf")`` runs the same code path without
        noise (plain SGD; ``privacy_`` then says "not private"). ``None`` only together with
        ``noise_multiplier``. With a noisy count the noise is calibrated for the planned count,
        so the training part meets its share of ``epsilon`` whatever the count: the guarantee
        holds a priori, and ``privacy_.epsilon`` is the target.
    delta : float or None, default=None
        Gaussian mechanism: the target delta in (0, 1); ``None`` means
        :data:`privlearn.accounting.DEFAULT_DELTA` (``1e-6``, the same for every privlearn
        estimator and never a function of the private ``n``; choose a smaller delta for data
        sets of more than about a million rows). The l2-laplace mechanism is pure DP: ``None``
        or 0.
    n_samples : int or None, default=None
        The dataset size, declared PUBLIC. Under add/remove-one neighbours (Gaussian mechanism
        with Poisson sampling) the size is private by default: 5% of ``epsilon``
        (:data:`privlearn.accounting.SIZE_EPSILON_FRACTION`; 0.05 when the noise is given as
        ``noise_multiplier``) buys an exact discrete-Laplace noisy count ``n~``, clamped to the
        public range ``[batch_size, cap]`` (at most
        :data:`~privlearn.accounting.size.MAX_PLANNED_SIZE` rows and
        :data:`~privlearn.accounting.size.MAX_PLANNED_STEPS` steps; stated), and the
        schedule (``T = ceil(epochs n~ / batch_size)``, ``q = batch_size / n~``) is derived
        from it; ``privacy_`` reports the total. Give ``n_samples`` when the size is already
        public: nothing is spent on it, ``privacy_`` says "dataset size treated as public",
        and data of another size is refused. Replace-one fits (l2-laplace, fixed batches)
        share the size between neighbours by definition and use the exact ``n``."""
    + LEDGER_PARAM_DOC
    + """
    noise_multiplier : float or None, default=None
        Gaussian mechanism only: Abadi et al.'s ``sigma`` (noise std / ``clip``) instead of a
        target epsilon (give ``epsilon=None``); the epsilon it achieves at ``delta`` is
        reported in ``privacy_``. With a private size (Poisson sampling, no ``n_samples``) the
        steps and the rate depend on the noisy count, so the report is the worst case over the
        count's public range (an a-priori guarantee, the same for every count); declare
        ``n_samples`` or give ``epsilon`` for a tight number.
    batch_size : int, default=64 (classifier) or 128 (regressor)
        ``b`` (disjoint / fixed batches, <= n_samples) or the expected lot size ``L``
        (Poisson: rate ``q = batch_size / n~``, at most 1).
    epochs : int, default=20
        Passes over the data. Disjoint batches: ``epochs * ceil(n / b)`` steps; Poisson
        ``ceil(epochs * n~ / batch_size)`` and fixed batches ``ceil(epochs * n / batch_size)``.
    alpha : float, default=1e-4
        L2 regularisation ``lambda`` of the objective: 0 (Gaussian only) or in
        ``[1e-12, 1e6]`` (outside it the arithmetic of the updates overflows).
    learning_rate : {"inv_sqrt", "inv_lambda_t", "constant"}, default="constant"
        ``eta0 / sqrt(t)``, ``1 / (alpha t)`` or ``eta0`` at step ``t = 1, 2, ...``.
    eta0 : float, default=1.0
        Base learning rate, in ``[1e-12, 1e6]``."""
)

_TAIL_PARAMS = (
    """
    fit_intercept : bool, default=True
        Append a constant column of value ``intercept_scaling`` and learn its weight ``w_b``
        like any other (it is regularised); ``intercept_ = intercept_scaling * w_b``.
    diagnostics : bool, default=False
        Also compute NON-PRIVATE training diagnostics (the objective along the run, read on the
        raw data) into ``diagnostics_``. Off by default: a default fit streams X only as the
        algorithm needs and keeps nothing its guarantee does not cover.
    record_every : int or None, default=None
        With ``diagnostics=True``: record the iterate every ``record_every`` steps (and at the
        end); ``None`` gives about 150 points. Ignored otherwise.
    n_threads : int or None, default=None
        Threads of the core's batch gradient (results do not depend on it)."""
    + RUN_PARAMS_DOC
)

_ATTRIBUTES = (
    """
    n_features_in_ : int
    privacy_ : DPSGDPrivacy
        The privacy the fit spent: epsilon, delta, mechanism, noise, sensitivity, how the
        dataset size entered the run, and the accountant's statement (``str(privacy_)`` is
        readable). It covers ``coef_``, ``intercept_`` and ``n_steps_``."""
    + ROW_PROJECTION_ATTR_DOC
    + """
    n_steps_ : int
        Steps run (a function of the public or noisy size only).
    diagnostics_ : TrainingDiagnostics
        Only with ``diagnostics=True``: ``objective_path`` (``(alpha/2)||w||^2 + mean_i loss``
        at the recorded iterates, on the rows the trainer saw) and ``objective_steps``. NOT
        PRIVATE: computed on the raw data; never release it with the model."""
)


class DPSGDClassifier(LinearClassifierMixin, ClassifierMixin, _DPSGDBase):
    _multiclass_proba = "softmax"

    @property
    def _multiclass(self) -> bool:  # type: ignore[override]
        """``K > 2`` classes: the multinomial model (Gaussian mechanism, log loss) only."""
        return self.mechanism == "gaussian" and self.loss == "log_loss"

    __doc__ = f"""Binary linear classifier trained by differentially private mini-batch SGD.

    Minimises ``(alpha/2)||w||^2 + (1/n) sum_i loss(y_i x_i^T w)`` with labels mapped to
    ``{{-1, +1}}`` (``classes_[1]`` is ``+1``).

    Parameters
    ----------
    mechanism : {{"l2-laplace", "gaussian"}}, default="gaussian"
        ``"l2-laplace"``: Song, Chaudhuri, Sarwate (2013), Section III, eq. (6) with the noise
        of eq. (5), density ``prop. to exp(-(eps/2)||z||)``; disjoint batches (one random
        permutation per pass); rows must satisfy ``||x_i|| <= 1`` (Theorem 1), the iterate is
        projected onto the ball of radius ``1 / alpha``. Pure DP under replace-one neighbours.
        ``"gaussian"``: Abadi et al. (2016), Algorithm 1: per-example clipping to ``clip``,
        noise ``N(0, sigma^2 clip^2 I)``, Poisson or fixed-size batches, the tightest sound
        accountant (PLD for Poisson batches, RDP for fixed ones).
    loss : {{"log_loss", "hinge"}}, default="log_loss"
{CLASSES_PARAM_DOC}{_COMMON_PARAMS}
    epsilon_split : {{"total", "per_pass"}}, default="total"
        l2-laplace: how ``epsilon`` is spread over the ``epochs`` passes. ``"total"``: each
        pass is ``epsilon / epochs``-DP, so the whole fit is ``epsilon``-DP (basic
        composition). ``"per_pass"``: each pass is ``epsilon``-DP, the fit ``epochs * epsilon``
        -DP (Song et al. make a single pass, where both agree). Ignored by the Gaussian
        mechanism, whose epsilon always covers the whole fit.
    clip : float, default=1.0
        Gaussian: the per-example gradient clipping norm ``C`` (required > 0 unless
        ``epsilon=inf``; 0 = no clipping). l2-laplace: the rows already bound the gradient by
        1, so ``clip >= 1`` (or 0) is Song et al.'s unclipped update with sensitivity 2, and
        ``0 < clip < 1`` clips to ``C = clip`` with sensitivity ``2 C`` and noise density
        ``prop. to exp(-(eps/(2C))||z||)``.
    sampling : {{"disjoint", "poisson", "fixed"}} or None, default=None
        ``None``: ``"disjoint"`` for l2-laplace, ``"poisson"`` for Gaussian. l2-laplace only
        accepts ``"disjoint"``; Gaussian accepts ``"poisson"`` (add/remove-one neighbours) and
        ``"fixed"`` (batches of exactly ``batch_size`` without replacement, replace-one
        neighbours, sensitivity ``2 clip``). Anything else is a ValueError: the sampler and
        the accountant must agree.
    clip_rows : bool or None, default=None
        ``None``: True for l2-laplace (whose proof needs the row bound), False for the
        Gaussian mechanism (which clips the gradients and keeps the rows as they are).
        True: project each training row onto the unit ball (l2-laplace with ``fit_intercept``: the
        ball of radius ``sqrt(1 - intercept_scaling^2)``, so that the augmented row has norm
        <= 1). A per-row map, so it costs no privacy. ``predict`` and ``decision_function``
        apply the same projection to their rows (``row_projection_`` is its radius), so the
        model never meets raw rows it was not trained on. False: the l2-laplace mechanism
        raises ValueError naming the first row with norm > 1.
    intercept_scaling : float or None, default=None
        Value of the constant intercept column. ``None``: 0.5 for l2-laplace (rows then need
        ``||x_i|| <= sqrt(0.75)``) and 1.0 for Gaussian. Must be < 1 for l2-laplace.
{_TAIL_PARAMS}

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class (``+1``).
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
{_ATTRIBUTES}

    Notes
    -----
    Privacy of the l2-laplace fit (Song et al. 2013, Theorem 1): with ``||x_i|| <= 1`` the
    log and hinge losses have ``||grad loss|| <= 1``, so replacing one example changes the
    update by at most ``2 eta_t / b``; noise ``Z_t / b`` with density ``prop. to
    exp(-(eps/2)||z||)`` makes each update ``eps``-DP, and since every example is in exactly one
    batch of a pass, a pass is ``eps``-DP (parallel composition). Passes add up (basic
    composition). ``w0 = 0`` and the permutation do not depend on the data.

    Privacy of the Gaussian fit: ``steps`` Poisson-subsampled (or without-replacement)
    Gaussian mechanisms composed by the tightest sound accountant (``privacy_.statement``):
    the privacy loss distribution for Poisson batches (the RDP epsilon stated beside it), RDP
    with the tight RDP -> (eps, delta) conversion for fixed batches.
{DEFAULTS_NOTE_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from privlearn.linear import DPSGDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = np.where(X @ [1.0, -1.0, 0.5] > 0, "yes", "no")
    >>> clf = DPSGDClassifier(epsilon=1.0, classes=["no", "yes"], seed=0)  # public labels
    >>> clf = clf.fit(X, y)   # Gaussian, intercept
    >>> clf.privacy_.epsilon <= 1.0
    True
    >>> song = DPSGDClassifier(
    ...     mechanism="l2-laplace", epsilon=1.0, batch_size=20, classes=["no", "yes"], seed=0
    ... )
    >>> song.fit(X, y).privacy_.epsilon
    1.0
    >>> clf.classes_.tolist()
    ['no', 'yes']
    """

    def __init__(
        self,
        *,
        mechanism: str = "gaussian",
        loss: str = "log_loss",
        epsilon: float | None = 1.0,
        delta: float | None = None,
        n_samples: int | None = None,
        classes: Any = None,
        ledger: Any = None,
        noise_multiplier: float | None = None,
        epsilon_split: str = "total",
        batch_size: int = 64,
        epochs: int = 20,
        alpha: float = 1e-4,
        learning_rate: str = "constant",
        eta0: float = 1.0,
        clip: float = 1.0,
        sampling: str | None = None,
        clip_rows: bool | None = None,
        fit_intercept: bool = True,
        intercept_scaling: float | None = None,
        diagnostics: bool = False,
        record_every: int | None = None,
        n_threads: int | None = None,
        verbose: int = 1,
        seed: int | None = None,
        backend: str = "core",
    ) -> None:
        store_params(self, locals())

    def _loss_name(self) -> str:
        return _choice(self.loss, "loss", ("log_loss", "hinge"))

    def _mechanism_name(self) -> str:
        return _choice(self.mechanism, "mechanism", ("l2-laplace", "gaussian"))

    def fit(self, X: Any, y: Any) -> DPSGDClassifier:
        """Fit the model (spends the privacy budget described in ``privacy_``).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            Finite values; converted to float64 (C-contiguous) or canonical CSR.
        y : array-like of shape (n_samples,)
            Class labels (any hashable, sortable values): two classes (the binary model), or
            more for the multinomial model (``mechanism="gaussian"``, ``loss="log_loss"``).
            With ``classes=`` declared, every label must belong to it.

        Returns
        -------
        self
        """
        return self._fit_classifier(X, y)

    def _fit_class_tasks(self, X: Any, y: Any, classes: np.ndarray, tasks: list[Any]) -> None:
        """Two classes: the binary model; more: the multinomial (softmax) model on the class
        codes, where the parameters allow it."""
        if len(tasks) == 1:  # two classes: the binary model, unchanged
            self._fit(X, tasks[0])
        else:
            if self._mechanism_name() != "gaussian" or self._loss_name() != "log_loss":
                raise ValueError(
                    "Only binary classification is supported with these parameters: "
                    "more than 2 classes need the multinomial model: mechanism='gaussian' "
                    "and loss='log_loss' (softmax regression, Abadi et al. 2016, with the whole "
                    "per-example gradient clipped); Song et al.'s l2-laplace mechanism and the "
                    "hinge loss are binary"
                )
            dist = backend_for_array(y)
            if dist is not None:  # refused in _fit (the softmax model is not distributed)
                codes = dist.map_values(y, lambda b: np.searchsorted(classes, b).astype(np.float64))
            else:
                codes = np.searchsorted(classes, y).astype(np.float64)
            self._fit(X, codes, n_classes=int(classes.size))


class DPSGDRegressor(LinearRegressorMixin, RegressorMixin, _DPSGDBase):
    __doc__ = f"""Linear least-squares regression by differentially private mini-batch SGD
    (Abadi et al. 2016, Algorithm 1: per-example clipping, Gaussian noise, accounted by the
    tightest sound accountant: PLD for Poisson batches, RDP for fixed ones).

    Minimises ``(alpha/2)||w||^2 + (1/n) sum_i (x_i^T w - y_i)^2 / 2``. The squared loss has
    no bounded gradient, so privacy comes from clipping each example's gradient to ``clip``
    (the Song et al. mechanism, which relies on bounded gradients, is offered by
    :class:`DPSGDClassifier`).

    Parameters
    ----------
{_COMMON_PARAMS}
{TARGET_PARAMS_DOC}    clip : float, default=0.3
        Per-example gradient clipping norm ``C`` (> 0; 0 = no clipping, only with
        ``epsilon=inf``).

    sampling : {{"poisson", "fixed"}} or None, default=None
        ``None`` = ``"poisson"`` (add/remove-one neighbours); ``"fixed"``: batches of exactly
        ``batch_size`` drawn without replacement (replace-one neighbours, sensitivity
        ``2 clip``).
    intercept_scaling : float or None, default=None
        Value of the constant intercept column (``None`` = 1.0).
{_TAIL_PARAMS}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
{_ATTRIBUTES}

    Notes
    -----
    The regressor's own defaults (``batch_size=128``, ``learning_rate="constant"``,
    ``eta0=1.0``, ``clip=0.3``, 20 epochs) were
    chosen by ``bench/python/workflow_regression.py --tune`` (issue 22): on diabetes (raw
    target, declared bound (0, 400)) and an msd-like set (8,000 rows, bound (1900, 2020)), rows
    in the unit ball, validation R^2 at epsilon 1 and 3 over 2 seeds: constant steps beat
    ``eta0 / sqrt(t)`` in most cells and ``clip`` 0.3 with batch 128 had the best sum over the
    four cells (0.39, 0.38, 0.13, 0.21; the previous defaults, ``inv_sqrt`` with clip 1 and
    batch 64, gave about 0.28, 0.31, -0.01, 0.11).
    """

    def __init__(
        self,
        *,
        epsilon: float | None = 1.0,
        delta: float | None = None,
        n_samples: int | None = None,
        target_bounds: Any = None,
        target_range: Any = None,
        target_fraction: float = TARGET_FRACTION,
        target_scale: bool = True,
        ledger: Any = None,
        noise_multiplier: float | None = None,
        batch_size: int = 128,
        epochs: int = 20,
        alpha: float = 1e-4,
        learning_rate: str = "constant",
        eta0: float = 1.0,
        clip: float = 0.3,
        sampling: str | None = None,
        fit_intercept: bool = True,
        intercept_scaling: float | None = None,
        diagnostics: bool = False,
        record_every: int | None = None,
        n_threads: int | None = None,
        verbose: int = 1,
        seed: int | None = None,
        backend: str = "core",
    ) -> None:
        store_params(self, locals())

    def _loss_name(self) -> str:
        return "squared"

    def _mechanism_name(self) -> str:
        return "gaussian"

    def fit(self, X: Any, y: Any) -> DPSGDRegressor:
        """Fit the model (spends the privacy budget described in ``privacy_``).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Finite real targets; clipped into the target bound (``target_bounds`` or the
            private bound, ``privacy_.target``) before training.

        Returns
        -------
        self
        """
        return self._fit_regressor(X, y)
