"""scikit-learn estimators for differentially private stochastic coordinate descent:
:class:`DPSCDRegressor` (ridge regression) and :class:`DPSCDClassifier` (logistic regression,
SVM).

Damaskinos, Mendler-Duenner, Guerraoui, Papandreou, Parnell, "Differentially Private Stochastic
Coordinate Descent", AAAI 2021 ("the paper"). The estimators minimise

    ``P(theta) = (1/N) sum_i loss(x_i^T theta, y_i) + (lambda/2) ||theta||^2``

(``lambda`` is the ``alpha`` parameter) by coordinate descent on the dual problem (3) and
release ``theta = v / (lambda N)`` (Algorithm 1, line 16). Training is done by
:func:`privlearn.linear.scd_train` (C++ core) or its numpy twin
:func:`privlearn.reference.linear.scd_train` (``backend="reference"``); the noise and the
accounting are decided here.

Privacy of each variant (``N`` examples, batch size ``L``, scaling bound ``C``, ``T`` steps;
rows must satisfy ``||x_i|| <= 1``; the noise multiplier ``sigma`` is always the noise standard
deviation divided by the L2 sensitivity ``S_f`` of one step, eq. (5) of the paper):

``variant="dual"``, ``sampling="poisson"`` -- Algorithm 1 with Poisson batches of rate
    ``q = L / N``, ``T = ceil(epochs N / L)``, add/remove-one neighbours, with a HIDDEN dual
    state (issue 20): only ``v`` is released (``theta_t = v_t / (lambda N)``), ``alpha`` never
    is. Adding or removing one example ``j`` changes ``v_t - v_{t-1}`` by its own scaled update
    ``zeta_j x_j`` (``|zeta_j| <= C``, Step 8, ``||x_j|| <= 1``) when it is sampled, so
    ``S_f = C`` (the ``v`` half of Lemma 1; the paper's ``sqrt(2) C`` came from releasing
    ``alpha`` as well) and the noise is ``N(0, sigma^2 C^2)`` per coordinate of ``v``, exact on
    a lattice. ``alpha`` receives no privacy noise (the argument below), only an optional
    per-visit jitter ``N(0, (alpha_jitter sigma C)^2)`` on the batch's coordinates, an
    algorithmic knob that costs nothing. Accounted as ``PoissonSampled(q, GaussianEvent(sigma))``
    x ``T`` (Theorem 1, by the tightest sound accountant: the privacy loss distribution of the
    sampled Gaussian, with its RDP bound stated beside it; :mod:`privlearn.accounting.tightest`).

``variant="dual"``, ``sampling="fixed"`` -- batches of exactly ``L`` rows drawn without
    replacement; the matching neighbouring relation is replace-one. Replacing example ``j``
    moves ``zeta_j`` from one value in ``[-C, C]`` to another (up to ``2 C``) and ``v`` by
    ``zeta_j x_j - zeta'_j x'_j`` (up to ``2 C``), so ``S_f = 2 sqrt(2) C``: for the same
    ``sigma`` the trainer adds twice the noise of the Poisson case, exactly as
    :class:`~privlearn.linear.DPSGDClassifier` doubles its noise for fixed batches. Accounted
    as ``SampledWithoutReplacement(N, L, GaussianEvent(sigma))`` x ``T`` (Wang, Balle,
    Kasiviswanathan 2019).

``variant="seq"`` -- SeqDP-SCD (Section 5 and the paper's Appendix C): the batch is processed
    sequentially, each update seeing the previous ones, so one example can change every later
    update of its batch: ``S_f = 2 C sqrt(L (L + 1))`` (``L`` coordinates of ``alpha`` by up
    to ``2 C`` each, ``v`` by up to ``2 C L``). That bound needs the batch to have exactly
    ``L`` rows, so the private fit requires ``sampling="fixed"`` (replace-one neighbours,
    accounted as for ``"dual"`` with fixed batches); Poisson batches have an unbounded size,
    hence an unbounded sensitivity, and are refused.

``variant="primal"`` -- Section 3.2 (the paper's Algorithm 2 and Lemma 4): ``L`` coordinates
    of ``theta`` per step, each update reading every example and scaled to ``|delta| <= C``,
    noise on the ``L`` updated coordinates; ``T = ceil(epochs M / L)``. Every step touches
    every example (sampling ratio ``q = 1``: no amplification) and ``S_f = 2 C sqrt(L (L + 1))``
    (Lemma 4; the ``L`` released coordinates alone move by at most ``2 C`` each, so the bound
    holds for replace-one and add/remove-one neighbours alike). Accounted as
    ``GaussianEvent(sigma)`` x ``T`` with ``sigma`` from ``calibrate_noise(q=1)`` (the exact
    Gaussian privacy loss distribution of ``T`` full passes).

``variant="scd"`` -- the non-private SDCA baseline (exact steps, one example at a time):
    ``epsilon`` must be ``inf``.

``epsilon=inf`` runs any variant without noise and without scaling (``clip`` is ignored).

What the guarantee covers: the sequence of released models ``theta_t = v_t / (lambda N)`` and
in particular ``coef_`` (and ``n_steps_``); never ``alpha``.

Why ``alpha`` needs no noise under Poisson batches (the hidden-state argument, issue 20). Fix
neighbours ``D`` and ``D' = D`` minus example ``z``. In the dual variant each example's update
at step ``t`` reads only its own row and label, its own ``alpha_j`` and the released
``v_{t-1}``; so ``alpha_j`` after step ``t`` is a function of that row, of ``j``'s own sampling
bits and jitter draws up to ``t``, and of the released history ``h = (v_1, ..., v_{t-1})``.

1. Condition on the sampling bits and jitter draws of every example except ``z``. Poisson
   sampling draws each example's bits independently, so this conditioning has the same law in
   both worlds, and given it the mean of step ``t``'s output is a function ``mu_t(h)`` of the
   history: under ``D'`` the step releases ``N(mu_t(h), sigma^2 C^2 I)``.
2. Under ``D`` the step adds ``b zeta_z x_z`` with ``b ~ Bernoulli(q)`` drawn afresh (independent
   of the past and of ``z``'s hidden state ``s``: its earlier bits and jitter). Given ``h`` the
   release is the mixture, over the posterior of ``s`` given ``h``, of
   ``(1 - q) N(mu_t(h), .) + q N(mu_t(h) + c_s, .)`` with ``||c_s|| <= C``; the ``D'`` release
   is the same mixture of ``N(mu_t(h), .)``.
3. Renyi divergence is jointly quasi-convex (van Erven and Harremoes 2014, Theorem 13) and the
   hockey-stick divergence jointly convex, so the divergence of the two mixtures (in either
   direction) is at most the largest over ``s`` of the divergence between the Poisson-subsampled
   Gaussian with shift ``c_s`` and the plain Gaussian, which is at most that of the subsampled
   Gaussian mechanism with sensitivity ``C``: exactly the event the accountant composes.
4. The bound holds for every history, so adaptive composition (Mironov 2017, Proposition 1;
   for the hockey-stick form, composition of dominating pairs) bounds the whole transcript
   ``v_1, ..., v_T`` given the conditioning by ``T`` such steps; removing the conditioning is
   one more mixture with the same weights in both worlds (step 3 again).

Hence noise ``sigma C`` on ``v`` alone gives the stated guarantee, and any per-example
randomness on ``alpha_j`` (the jitter) is free. The argument needs (a) independent per-example
sampling: with fixed-size batches drawn without replacement the bits are coupled, so
conditioning on the others' bits reveals ``z``'s; (b) independent updates within a batch: in
SeqDP-SCD later updates of a batch read ``v`` after ``z``'s update, so ``z`` changes up to
``L`` updates and the others' hidden states ``alpha_j`` then depend on ``z``; (c) that
``alpha`` stays hidden. So fixed batches and SeqDP-SCD keep the earlier proof: every coordinate
of ``alpha`` receives fresh ``N(0, noise_std^2)`` at every step, drawn lazily (when row ``j`` is
sampled at step ``t`` it first receives ``N(0, (t - last_j) noise_std^2)``, the steps it
missed, addressed by ``(row, step)``, exactly the distribution of noising the whole vector
each step), so that the hypothetical mechanism that releases the whole noisy
``(alpha_t, v_t)`` every step is an adaptive composition of subsampled Gaussians of the stated
sensitivity, and the real algorithm (releasing ``v`` only) is its post-processing. (Noise on
the batch's coordinates only, as Algorithm 1 line 13 prints it, fits neither proof when
``alpha`` is released.) ``tests/test_privacy_audits.py`` audits the whole estimators, including
a canary whose hidden ``alpha`` saturates.

The dataset size: under add/remove-one neighbours (Poisson batches) ``N`` is private, so ``T``,
``q`` and ``lambda N`` come from the public ``n_samples`` or from an exact discrete-Laplace noisy
count (:mod:`privlearn.accounting.size`); fixed batches are replace-one (the size is fixed by the
relation), and the primal variant's schedule does not involve ``N``.
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
from privlearn._specs.scd import SCD_VARIANTS, SCDRun
from privlearn.accounting import (
    Event,
    GaussianEvent,
    LatticeSlack,
    PoissonSampled,
    PrivacyStatement,
    SampledWithoutReplacement,
    accountant_for,
    calibrate_lattice_sigma,
    calibrate_noise,
    epsilon_of_noise,
    lattice_slack,
    lattice_statement,
)
from privlearn.accounting.size import DatasetSize, public_size
from privlearn.linear._base import FitSetup, PrivateLinearModel, RowRule, store_params
from privlearn.linear._param_docs import (
    DEFAULTS_NOTE_DOC,
    LEDGER_PARAM_DOC,
    ROW_PROJECTION_ATTR_DOC,
    RUN_PARAMS_DOC,
)
from privlearn.linear._params import (
    ACCOUNTED_AS,
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
    _plan_size,
)
from privlearn.linear._target import TARGET_FRACTION, TARGET_PARAMS_DOC, TargetBound
from privlearn.linear.estimators import _CALIBRATIONS, _remember_calibration
from privlearn.random import lattice_noise_description, noise_lattice

__all__ = ["DPSCDClassifier", "DPSCDPrivacy", "DPSCDRegressor"]

#: Default ``alpha_jitter`` of the estimators (a multiple of ``sigma C``), chosen by experiment
#: (see the ``alpha_jitter`` parameter).
ALPHA_JITTER = 0.75

_SAMPLINGS = ("poisson", "fixed")
_SAMPLING_TEXT = {
    "poisson": "Poisson batches",
    "fixed": "fixed-size batches without replacement",
    "all": "every example read at each step",
    "permutation": "one example per step (a random permutation per epoch)",
}


@dataclass(frozen=True)
class DPSCDPrivacy(FitPrivacyRecord):
    """What a DP-SCD fit spent, and how (the ``privacy_`` attribute of the estimators).

    Attributes
    ----------
    epsilon : float
        Total epsilon of the whole fit (``inf``: not private).
    delta : float
        Total delta (0 for a non-private fit).
    variant : str
        ``"dual"`` (Algorithm 1), ``"seq"`` (SeqDP-SCD), ``"primal"`` (Section 3.2) or
        ``"scd"`` (non-private SDCA).
    accountant : str
        ``"pld"`` (Poisson batches and the primal's full passes: the privacy loss
        distribution, the tighter bound), ``"rdp"`` (fixed batches, or a noise too small for
        the PLD grid) or ``"none"``.
    neighboring : str or None
        ``"add_remove"`` (Poisson batches) or ``"replace_one"`` (fixed batches; primal).
    sampling : str
        What each step reads: ``"poisson"`` or ``"fixed"`` batches of examples (dual, seq),
        ``"all"`` (primal: every example, ``q = 1``) or ``"permutation"`` (scd).
    sampling_rate : float
        ``q``: ``L / N`` for the dual variants, 1 for the primal variant, ``1 / N`` for scd.
    steps : int
        ``T``, the number of noisy releases (composed mechanisms).
    batch_size : int
        ``L``: examples per step (dual, seq), coordinates per step (primal).
    clip : float
        ``C``, the bound every coordinate update is scaled to (Algorithm 1, Step 8); 0 when no
        scaling was done (non-private fit).
    sensitivity : float
        ``S_f``, the L2 sensitivity of one step under ``neighboring``: ``C`` (dual with Poisson
        batches: only ``v`` is released, the dual state stays hidden, issue 20; the paper's
        Lemma 1 gives ``sqrt(2) C`` for releasing ``[alpha; v]``), ``2 sqrt(2) C`` (dual with
        fixed batches) or ``2 C sqrt(L (L + 1))`` (seq; primal,
        Lemma 4). ``inf`` for a non-private fit.
    sigma : float or None
        The noise multiplier: noise standard deviation / ``S_f`` (the paper's ``sigma``, eq. 5
        and Algorithm 1 line 2; the accountant's ``GaussianEvent(sigma)``).
    noise_std : float
        Standard deviation of the Gaussian noise added to every released coordinate,
        ``sigma * S_f`` (0 for a non-private fit).
    statement : PrivacyStatement or None
        The accountant's statement of the training part (composed events, the PLD epsilon
        with the RDP epsilon beside it or the RDP best order, neighbouring relation); None if
        not private.
    size : DatasetSize or None
        How the data-set size entered the run: declared public (``n_samples=``), fixed by a
        replace-one relation, not used (primal: ``value`` is None, nothing about the size is
        stored), or an exact discrete-Laplace noisy count whose epsilon (``size.epsilon``) is
        part of ``epsilon`` (basic composition).
    tasks : int
        Binary problems trained on the same rows: 1, or ``K`` for one-vs-rest over ``K > 2``
        classes; the accountant composes ``tasks x steps`` mechanisms (each problem's ``T``
        steps see every row).
    labels : LabelSet or None
        Classifiers: the label set (``classes_``) and whether it was declared public with
        ``classes=`` or read from the private ``y`` (then not covered by this guarantee: it is
        treated as public, and ``str(privacy_)`` says so); None for regressors.

    worst_case : bool
        Whether the training epsilon is the worst case over the noisy count's public range
        ``size.bounds`` (``noise_multiplier=`` with a private size); ``statement`` then holds
        that bound (no events).

    ``epsilon`` and ``delta`` are a-priori guarantees: functions of public inputs only, never
    of the noisy count (with ``epsilon=`` the noise is calibrated for the planned count, so the
    training part meets its target whatever the count; with ``noise_multiplier=`` the training
    part is the worst case over the counts).

    noise : str or None
        How the noise is released: for the dual variant the exact discrete Gaussian on the
        lattice ``C 2^-k`` for ``v`` (accounted as the rounded continuous Gaussian plus the
        lattice slack of :mod:`privlearn.accounting.lattice`, ``statement.lattice``), and what
        ``alpha`` receives: with Poisson batches nothing for privacy (hidden, issue 20) and the
        per-visit jitter ``N(0, (alpha_jitter sigma C)^2)``; otherwise per-step noise.
    """

    epsilon: float
    delta: float
    variant: str
    accountant: str
    neighboring: str | None
    sampling: str
    sampling_rate: float
    steps: int
    batch_size: int
    clip: float
    sensitivity: float
    sigma: float | None = None
    noise_std: float = 0.0
    statement: PrivacyStatement | None = None
    size: DatasetSize | None = None
    tasks: int = 1
    labels: LabelSet | None = None
    worst_case: bool = False
    noise: str | None = None
    target: TargetBound | None = None

    def __str__(self) -> str:
        if not self.private:
            return (
                f"not private (epsilon = inf): variant {self.variant!r} without noise or "
                f"scaling, {self.steps} steps, "
                f"{_SAMPLING_TEXT.get(self.sampling, self.sampling)}"
            )
        lines = [
            f"({self.epsilon:.6g}, {self.delta:.6g})-DP, DP-SCD variant {self.variant!r} "
            f"(Damaskinos et al. 2021)",
            f"  Gaussian noise std {self.noise_std:.6g} = sigma {self.sigma:.6g} x sensitivity "
            f"{self.sensitivity:.6g} (C = {self.clip:g}, L = {self.batch_size})",
            f"  {self.steps} steps, {_SAMPLING_TEXT.get(self.sampling, self.sampling)}, "
            f"q = {self.sampling_rate:.6g}",
        ]
        if self.tasks > 1:
            lines.append(
                f"  one-vs-rest: {self.tasks} binary problems x {self.steps} steps on the same "
                "rows, composed by the accountant"
            )
        if self.noise:
            lines.append(f"  noise: {self.noise}")
        lines += self._shared_lines()
        return "\n".join(lines)


@dataclass(frozen=True)
class _Plan:
    """The trainer's schedule, noise and scaling, resolved from the parameters and the data
    size the run is planned with (public, replace-one, or a noisy count)."""

    clip: float  # given to scd_train (0 = no scaling)
    noise_std: float
    steps: int  # T
    rate: float  # Poisson rate given to scd_train (0 = L / N)
    n_scale: float  # the N of lambda N given to scd_train (0 = the exact N)
    privacy: DPSCDPrivacy
    hidden_alpha: bool = False  # Poisson dual, private: no noise on alpha (issue 20)
    alpha_jitter: float = 0.0  # std of the per-visit jitter on the batch's alpha


def _not_private(
    variant: str, sampling: str, rate: float, steps: int, batch_size: int, size: DatasetSize
) -> DPSCDPrivacy:
    return DPSCDPrivacy(
        epsilon=math.inf,
        delta=0.0,
        variant=variant,
        accountant="none",
        neighboring=None,
        sampling=sampling,
        sampling_rate=rate,
        steps=steps,
        batch_size=batch_size,
        clip=0.0,
        sensitivity=math.inf,
        size=size,
    )


class _DPSCDBase(PrivateLinearModel):
    """DP-SCD on the shared plan; subclasses define the loss and the label handling."""

    def _loss_name(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    # ---- the plan's hooks ------------------------------------------------------------------------
    def _setup(self, d: int, fit_intercept: bool) -> FitSetup:
        loss = self._loss_name()
        variant = _choice(self.variant, "variant", SCD_VARIANTS)
        sampling = _choice(self.sampling, "sampling", _SAMPLINGS)
        # lambda > 0: the dual problem (3) and theta = v / (lambda N) need it.
        alpha = _alpha(self.alpha, positive=True)
        if variant == "primal" and loss == "hinge":
            raise ValueError(
                "variant='primal' supports the squared and logistic losses only (its "
                "coordinate step needs a differentiable loss); use variant='dual' for the hinge"
            )
        m = d + 1 if fit_intercept else d
        batch_size = as_index(self.batch_size, "batch_size", lower=1, upper=1 << 40)
        if variant == "primal" and batch_size > m:
            raise ValueError(
                f"batch_size ({batch_size}) must be <= the number of coordinates = {m} for "
                "variant='primal' (L coordinates are updated per step)"
            )
        epochs = _epochs(self.epochs)
        clip = _clip(self.clip)
        alpha_jitter = _bounded(self.alpha_jitter, "alpha_jitter", (0.0, 100.0))
        scaling = 0.0
        if fit_intercept:
            scaling = _bounded(self.intercept_scaling, "intercept_scaling", (1e-6, 1.0))
            if not scaling < 1.0:
                raise ValueError(
                    "with fit_intercept=True the augmented rows [x_i, intercept_scaling] must "
                    f"have norm <= 1: intercept_scaling must be < 1, got {scaling}"
                )
        epsilon, noise_multiplier = self._noise_target()
        setup = FitSetup(
            epsilon,
            noise_multiplier,
            _delta(self.delta),
            scaling,
            # the augmented rows have norm <= 1 (Lemma 1's normalised data)
            RowRule(
                math.sqrt(1.0 - scaling**2) if fit_intercept else 1.0,
                checked=True,
                reason="DP-SCD (Damaskinos et al. 2021, Lemma 1) needs normalised rows, "
                "||x_i|| <= 1, so that a scaled update moves v by at most C",
            ),
            {
                "loss": loss,
                "variant": variant,
                "sampling": sampling,
                "alpha": alpha,
                # scd takes one example per step (T = epochs N); the batch size plays no role
                "batch_size": 1 if variant == "scd" else batch_size,
                "epochs": epochs,
                "clip": clip,
                "m": m,
                "alpha_jitter": alpha_jitter,
            },
        )
        private = setup.private
        if variant == "scd" and private:
            raise ValueError(
                "variant='scd' is the non-private SDCA baseline (exact, unscaled, noiseless "
                "steps): it needs epsilon=inf; use variant='dual' (Algorithm 1) for a "
                "private fit"
            )
        if private and variant == "seq" and sampling == "poisson":
            raise ValueError(
                "variant='seq' with sampling='poisson' cannot be made private: the sequential "
                "updates give sensitivity 2 C sqrt(B (B + 1)) for a batch of B rows, and a "
                "Poisson batch has no size bound; use sampling='fixed' (batches of exactly "
                "batch_size rows, replace-one neighbours)"
            )
        if private and not clip > 0.0:
            raise ValueError(
                "a private DP-SCD fit needs clip > 0: every update is scaled to |zeta| <= clip "
                "(Algorithm 1, Step 8), which bounds the sensitivity (Lemma 1)"
            )
        return setup

    _trainer = "scd_train"

    def _trainer_kwargs(self, setup: FitSetup, plan: _Plan) -> dict[str, Any]:
        e = setup.extra
        return dict(
            loss=e["loss"],
            variant=e["variant"],
            sampling=e["sampling"],
            alpha=e["alpha"],
            batch_size=e["batch_size"],
            epochs=e["epochs"],
            steps=plan.steps,
            rate=plan.rate,
            n_scale=plan.n_scale,
            clip=plan.clip,
            noise_std=plan.noise_std,
            hidden_alpha=plan.hidden_alpha,
            alpha_jitter=plan.alpha_jitter,
        )

    def _diagnostics(
        self, X: Any, y: np.ndarray, setup: FitSetup, run: SCDRun
    ) -> TrainingDiagnostics:
        objective = np.asarray(run.primal_path, dtype=np.float64)
        return TrainingDiagnostics(
            objective_path=objective,
            objective_steps=np.asarray(run.path_steps, dtype=np.int64),
            duality_gap_path=objective - np.asarray(run.dual_path),
            dual_coef=np.asarray(run.dual_coef, dtype=np.float64),
        )

    def _plan(
        self, setup: FitSetup, n: int, d: int, seed: int | None, ledger: Any, dry: bool = False
    ) -> _Plan:
        e = setup.extra
        variant, sampling, epochs, clip = e["variant"], e["sampling"], e["epochs"], e["clip"]
        epsilon, noise_multiplier, delta = setup.epsilon, setup.noise_multiplier, setup.delta
        private = setup.private
        L = e["batch_size"]
        m = e["m"]
        tasks = e.get("tasks", 1)  # one-vs-rest problems, each T steps over the same rows

        if variant == "scd":
            size, _ = _plan_size(n, self.n_samples, epsilon, add_remove=False, seed=seed, floor=1)
            steps = _check_steps(epochs * n, tasks)
            plain = _not_private(variant, "permutation", 1.0 / n, steps, L, size)
            return _Plan(0.0, 0.0, steps, 0.0, 0.0, plain)
        # The size the schedule is planned with. Poisson batches are accounted under
        # add/remove-one neighbours, where n is private: T, q and lambda N come from the public
        # or noisy size. Fixed batches are replace-one (the relation fixes n). The primal
        # variant's schedule (T = ceil(epochs M / L), q = 1) does not involve n at all: its
        # statement (add/remove-one) stores no size, so nothing released depends on n.
        if variant == "primal":
            public_size(self.n_samples, n)
            size = DatasetSize(None, "unused")
            train_eps = epsilon
            units = m
        else:
            size, train_eps = self._planned_size(
                setup, n, seed, ledger, poisson=sampling == "poisson", floor=L, dry=dry
            )
            assert size.value is not None
            units = size.value
        steps = _check_steps(-(-(epochs * units) // L), tasks)
        q = 1.0 if variant == "primal" else min(1.0, L / units)
        rate = q if variant != "primal" and sampling == "poisson" else 0.0
        n_scale = float(units) if size.source in ("noisy_count", "given") else 0.0
        if not private:
            what = "all" if variant == "primal" else sampling
            plain = _not_private(variant, what, q, steps, L, size)
            return _Plan(0.0, 0.0, steps, rate, n_scale, plain)

        event: Event
        if variant == "primal":
            # Section 3.2: every step reads every example (q = 1); Lemma 4. Every update is
            # scaled to |delta| <= C whatever the data, so the bound holds between any two data
            # sets: add/remove-one (stated) and replace-one alike.
            sampled_as, neighboring, what = "poisson", "add_remove", "all"
            sensitivity = 2.0 * clip * math.sqrt(L * (L + 1.0))
        else:
            sampled_as = ACCOUNTED_AS[sampling]
            neighboring, what = NEIGHBORING[sampling], sampling
            if variant == "seq":  # SeqDP-SCD, fixed batches (replace-one)
                sensitivity = 2.0 * clip * math.sqrt(L * (L + 1.0))
            elif sampling == "poisson":  # add/remove-one, hidden dual state (issue 20):
                sensitivity = clip  # only v is released; ||zeta_j x_j|| <= C (Lemma 1 on v)
            else:  # replace-one: zeta_j and v both move by up to 2C
                sensitivity = 2.0 * math.sqrt(2.0) * clip
        # The dual variant releases v with exact lattice noise (scd.cpp, scd_apply_units): the
        # continuous accountant of the rounded Gaussian plus the lattice slack over v's
        # steps x tasks x m coordinates (privlearn.accounting.lattice); alpha's noise (never
        # released) stays floating point.
        lattice = variant == "dual" and clip > 0.0  # (while sigma sensitivity / C <= 2^39)
        coords = steps * tasks * (m + 1)

        # Calibrated and stated by the tightest sound accountant of the sampler: the privacy
        # loss distribution for Poisson batches and the primal's full passes (q = 1), RDP for
        # fixed batches (accounting.tightest).
        # (eps, delta) -> sigma and (sigma, delta) -> eps of the continuous Gaussian
        curve = dict(q=q, steps=steps * tasks, sampling=sampled_as, n=units)
        continuous = partial(calibrate_noise, **curve)
        epsilon_of = partial(epsilon_of_noise, **curve)

        def slack_of(sig: float) -> LatticeSlack:
            eps_about = train_eps if train_eps is not None else epsilon_of(sig, delta)
            variance = noise_lattice(_lattice_sigma(sig * sensitivity, clip), 1)[2]
            return lattice_slack(float(math.isqrt(variance)), coords, delta, eps_about)

        slack: LatticeSlack | None = None
        if noise_multiplier is None:
            assert train_eps is not None
            # Cached per public schedule (issue 32, item 2): the calibration is a function of
            # these public numbers only; a refit of the same schedule reuses it.
            cache_key = (
                "scd", float(train_eps), float(delta), float(q), int(steps * tasks),
                sampled_as, int(units), float(sensitivity), float(clip), int(coords), lattice,
            )  # fmt: skip
            cached = _CALIBRATIONS.get(cache_key)
            if cached is None:
                sigma0 = continuous(train_eps, delta)
                on_lattice = lattice and (sigma0 * sensitivity) / clip <= 2.0**38
                if on_lattice:
                    cached = (True, *calibrate_lattice_sigma(
                        train_eps, delta, slack_of, continuous, epsilon_of
                    ))  # fmt: skip
                else:
                    cached = (False, sigma0, None)
                _remember_calibration(cache_key, cached)
            lattice, sigma, slack = cached
        else:
            sigma = noise_multiplier
            lattice = lattice and (sigma * sensitivity) / clip <= 2.0**39  # as scd.cpp
            # A given noise multiplier: the slack (and below, the statement) are functions of
            # these public numbers (the training epsilon sizes the slack's tail term): cached,
            # so a refit of the same schedule does not recompute them (issue 32, item 2).
            cache_key = (
                "scd-sigma", float(sigma), float(delta), float(q), int(steps * tasks),
                sampled_as, int(units), float(sensitivity), float(clip), int(coords), lattice,
                None if train_eps is None else float(train_eps),
            )  # fmt: skip
            if lattice:
                slack = _CALIBRATIONS.get(cache_key)
                if slack is None:
                    slack = slack_of(sigma)
                    _remember_calibration(cache_key, slack)
        noise_event = GaussianEvent(sigma)
        # the hidden dual state (issue 20): Poisson dual, alpha never released, no noise on it
        hidden = variant == "dual" and sampling == "poisson"
        if variant == "primal":
            event = noise_event
        elif sampling == "poisson":
            event = PoissonSampled(q, noise_event)
        else:
            event = SampledWithoutReplacement(n, L, noise_event)
        # The accountant is fixed to the sampler's neighbouring relation: a mismatched event
        # raises UnsupportedEventError instead of giving a wrong number.
        # cached with its calibration (a function of the same public numbers, and of the event
        # and relation): a refit does not compose the accountant again (issue 32, item 2)
        stated_key = ("statement", *cache_key, variant, what, neighboring, int(n), int(L))
        statement = _CALIBRATIONS.get(stated_key)
        if statement is None:
            accountant = accountant_for(neighboring, sigma).compose(event, count=steps * tasks)
            if slack is not None:
                statement = lattice_statement(accountant, slack, delta)
            else:
                statement = accountant.statement(delta)
            _remember_calibration(stated_key, statement)
        statement, total, worst_case = self._stated_total(
            setup, statement, size, sigma=sigma, batch_size=L, epochs=epochs, tasks=tasks,
            lattice=None if slack is None else (slack.scale, tasks * (m + 1)),
        )  # fmt: skip
        privacy = DPSCDPrivacy(
            epsilon=total,
            delta=delta,
            variant=variant,
            accountant=statement.accountant,
            neighboring=neighboring,
            sampling=what,
            sampling_rate=q,
            steps=steps,
            batch_size=L,
            clip=clip,
            sensitivity=sensitivity,
            sigma=sigma,
            noise_std=sigma * sensitivity,
            statement=statement,
            size=size,
            tasks=tasks,
            worst_case=worst_case,
            noise=_noise_text(
                lattice, hidden, sigma * sensitivity / clip, e.get("alpha_jitter", 0.0)
            ),
        )
        jitter = e.get("alpha_jitter", 0.0) * sigma * clip if hidden else 0.0
        if not sigma * sensitivity <= 1e12:  # the trainer's bound, named in the estimator's terms
            raise ValueError(
                f"the noise standard deviation sigma * sensitivity = {sigma * sensitivity:g} "
                f"exceeds 1e12 (sigma {sigma:g}, sensitivity {sensitivity:g} from clip={clip:g}): "
                "lower clip (the noise scales with it) or raise epsilon"
            )
        if not jitter <= 1e12:  # the trainer's bound; raised by the dry plan, before any charge
            raise ValueError(
                f"alpha_jitter * sigma * clip = {jitter:g} exceeds 1e12: lower alpha_jitter"
            )
        return _Plan(clip, sigma * sensitivity, steps, rate, n_scale, privacy, hidden, jitter)


def _noise_text(lattice: bool, hidden: bool, multiplier: float, jitter: float) -> str:
    """``privacy_.noise``: how v's noise is drawn and what alpha receives."""
    v = (
        "v: " + lattice_noise_description(multiplier)
        if lattice
        else "floating-point Gaussian (Box-Muller)"
    )
    if hidden:
        return (
            v + "; alpha: hidden (never released, no privacy noise; issue 20), per-visit "
            f"jitter N(0, ({jitter:g} sigma C)^2) on the batch's alpha"
        )
    return v + ("; alpha (not released): floating-point Gaussian" if lattice else "")


def _lattice_sigma(noise_std: float, clip: float) -> float:
    """The noise multiplier of v's lattice noise, as the core computes it (scd.cpp,
    ``lattice_sigma``: ``noise_std / clip`` enlarged by ``2^-50``)."""
    return (noise_std / clip) * (1.0 + 2.0**-50)


_COMMON_PARAMS = (
    """
    epsilon : float or None, default=1.0
        Privacy target for the whole fit, in ``[1e-9, 1e4]`` (or ``inf``); the noise
        multiplier is calibrated to it by the tightest sound accountant
        (:func:`privlearn.accounting.calibrate_noise`: the privacy loss distribution for
        Poisson batches and the primal's full passes, RDP for fixed batches; the smaller noise
        wins). ``float("inf")`` runs the same variant
        without noise and without scaling (``clip`` is ignored; ``privacy_`` says "not
        private"). ``None`` only together with ``noise_multiplier``. With a noisy count the
        noise is calibrated for the planned count, so the training part meets its share of
        ``epsilon`` whatever the count: the guarantee holds a priori, and ``privacy_.epsilon``
        is the target.
    delta : float or None, default=None
        Target delta in (0, 1). ``None`` means :data:`privlearn.accounting.DEFAULT_DELTA`
        (``1e-6``, the same for every privlearn estimator and never a function of the private
        ``n``; the paper's experiments use 1e-3). Choose ``delta`` well below ``1 / n``.
    n_samples : int or None, default=None
        The dataset size, declared PUBLIC. Under add/remove-one neighbours (``"dual"`` with
        Poisson batches) the size is private by default: 5% of ``epsilon``
        (:data:`privlearn.accounting.SIZE_EPSILON_FRACTION`; 0.05 when the noise is given as
        ``noise_multiplier``) buys an exact discrete-Laplace noisy count ``N~`` (clamped to the
        public range ``[L, cap]``: at most :data:`~privlearn.accounting.size.MAX_PLANNED_SIZE`
        rows and :data:`~privlearn.accounting.size.MAX_PLANNED_STEPS` steps; stated), and
        ``T = ceil(epochs N~ / L)``, ``q = L / N~`` and ``lambda N~`` (in every update and in
        ``theta = v / (lambda N~)``) are derived from it; ``privacy_`` reports the total. Give
        ``n_samples`` when the size is public: nothing is spent, the statement says so, and
        data of another size is refused. Fixed batches (replace-one) share the size between
        neighbours by definition; the primal variant's schedule does not involve it."""
    + LEDGER_PARAM_DOC
    + """
    noise_multiplier : float or None, default=None
        The paper's ``sigma`` (noise std / sensitivity ``S_f``) instead of a target epsilon
        (give ``epsilon=None``); the epsilon it achieves at ``delta`` is reported in
        ``privacy_``. With a private size (Poisson batches, no ``n_samples``) ``T`` and ``q``
        depend on the noisy count, so the report is the worst case over the count's public
        range (an a-priori guarantee, the same for every count); declare ``n_samples`` or give
        ``epsilon`` for a tight number.
    variant : {"dual", "seq", "primal", "scd"}, default="dual"
        ``"dual"``: Algorithm 1 (independent updates of a batch; with Poisson batches only ``v``
        is released and noised, sensitivity ``C``, the dual state ``alpha`` stays hidden; with
        fixed batches ``2 sqrt(2) C`` and noise on ``alpha`` too). ``"seq"``: SeqDP-SCD,
        sequential updates within a batch (sensitivity
        ``2 C sqrt(L (L+1))``; private fits need ``sampling="fixed"``). ``"primal"``: Section
        3.2, ``batch_size`` coordinates of ``theta`` per step over all examples (``q = 1``,
        sensitivity ``2 C sqrt(L (L+1))``, Lemma 4; not for the hinge loss). ``"scd"``: the
        non-private SDCA baseline (``epsilon=inf`` only; one example per step).
    sampling : {"poisson", "fixed"}, default="poisson"
        Batches of the dual variants. ``"poisson"``: each example independently with
        probability ``q = batch_size / n`` (add/remove-one neighbours). ``"fixed"``: exactly
        ``batch_size`` examples without replacement (replace-one neighbours, sensitivity
        ``2 sqrt(2) C`` instead of ``C``, and per-step noise on every ``alpha_j``: the hidden-state
        argument needs independent sampling). Ignored by ``"primal"`` and ``"scd"``.
    batch_size : int, default=100
        ``L``: (expected) examples per step (dual, seq; <= n_samples) or coordinates per step
        (primal; <= n_features, + 1 with ``fit_intercept``). Ignored by ``"scd"``.
    epochs : int, default=20
        ``T = ceil(epochs * n / L)`` steps (dual, seq), ``ceil(epochs * M / L)`` (primal),
        ``epochs * n`` (scd).
    clip : float, default=0.01
        ``C``: every coordinate update is scaled to magnitude <= ``C`` (Algorithm 1, Step 8);
        must be > 0 for a private fit (0.5 was the best value in the paper's Figure 3 on its
        data; 0.01 was best for the classifier's 20 epochs in privlearn's experiment, below).
        Re-run with the tight accountant and the hidden dual state (issue 20,
        ``bench/python/bench_defaults.py``): the classifier's search preferred C 0.1 with 5
        epochs on its binary validation sets (mean AUC +0.003), but on held-out accuracy that
        choice loses on phishing (0.919 vs 0.932 at eps 1) and on ten-digit MNIST one-vs-rest
        (0.664 vs 0.785) and wins only on adult (0.839 vs 0.832), so the classifier keeps
        C 0.01 and 20 epochs; the regressor's search preferred C 0.03 on the 100,000-row
        msd-like set (validation R^2 0.253 vs 0.241) but it no longer beats the mean on 5,000
        rows (tests/test_linear_edges.py), so it keeps 0.01 (issue 22 revisits regression).
    alpha : float, default=1e-4 (classifier) or 1e-2 (regressor)
        ``lambda`` > 0, the L2 regularisation of the primal objective; the model is
        ``theta = v / (lambda N)``.
    alpha_jitter : float, default=0.75
        Dual variant with Poisson batches (private fits): the standard deviation, as a multiple
        of ``sigma C``, of the jitter ``N(0, (alpha_jitter sigma C)^2)`` added to ``alpha_j`` of
        every sampled example after its update, in ``[0, 100]``. Free for privacy (the dual
        state is never released; per-example randomness of the hidden state does not enter
        the guarantee, see :mod:`privlearn.linear.scd_estimators`); ignored by the other
        variants, which keep their per-step noise on ``alpha``. Chosen by experiment
        (``bench/python/bench_scd_jitter.py``, adult.data / adult.test, 88 features, unit rows,
        public n = 32,561, eps 1, test accuracy over 10 seeds, +- standard error): the hinge
        setting of issue 20 (delta 1e-3, L 500, C 0.1, 20 epochs, lambda 1e-4, no intercept)
        gives 0.8214 +- 0.0031 without jitter (5 seeds), 0.8376 +- 0.0003 at 0.5,
        0.8375 +- 0.0003 at 0.75, 0.8374 +- 0.0004 at 1, 0.8362 +- 0.0004 at 1.5 (before
        issue 20: 0.7962 +- 0.0045; the paper's Algorithm 1, ``sqrt(2) sigma C`` on ``v`` and
        on the batch's ``alpha``: 0.8367 +- 0.0004; non-private 0.8425); the defaults
        (log_loss, delta 1e-6, L 100, C 0.01, intercept) are flat: 0.8365 +- 0.0002 (0.5),
        0.8367 +- 0.0002 (0.75), 0.8370 +- 0.0002 (1), 0.8374 +- 0.0003 (1.5); before issue
        20: 0.8355 +- 0.0005.
    clip_rows : bool or None, default=None
        ``None`` is True here (Lemma 1 needs the row bound).
        True: project each training row onto the unit ball (with ``fit_intercept``: the ball of
        radius ``sqrt(1 - intercept_scaling^2)``). A per-row map, so it costs no privacy.
        ``predict`` and ``decision_function`` apply the same projection to their rows
        (``row_projection_`` is its radius), so the model never meets raw rows it was not
        trained on. False: a row with norm > 1 raises ValueError naming the first such row
        (Lemma 1 needs normalised rows).
    fit_intercept : bool, default=True
        Append a constant column of value ``intercept_scaling`` and learn its weight ``w_b``
        like any other (it is regularised); ``intercept_ = intercept_scaling * w_b``. Rows then
        need ``||x_i|| <= sqrt(1 - intercept_scaling^2)`` (``clip_rows=True``, the default,
        projects them there). Without it the model has no intercept (``intercept_ = 0``), as
        in the paper.
    intercept_scaling : float, default=0.5
        Value of the intercept column, in (0, 1).
    diagnostics : bool, default=False
        Also compute the NON-PRIVATE training diagnostics (objective and duality gap along the
        run, the dual variables) into ``diagnostics_``. Off by default: the fitted estimator
        then holds only what ``privacy_`` covers.
    record_every : int or None, default=None
        With ``diagnostics=True``: record them every ``record_every`` steps (and at the end);
        ``None`` gives about 150 points. Ignored otherwise.
    n_threads : int or None, default=None
        Threads of the core's batch update (``"dual"``); results do not depend on it."""
    + RUN_PARAMS_DOC
)

_ATTRIBUTES = (
    """
    n_features_in_ : int
    privacy_ : DPSCDPrivacy
        The privacy the fit spent: epsilon, delta, ``sigma``, ``q``, ``T``, sensitivity, noise,
        how the dataset size entered the run, and the accountant's statement
        (``str(privacy_)`` is readable). It covers ``coef_`` / ``intercept_`` (the released
        models ``theta_t``) and ``n_steps_``."""
    + ROW_PROJECTION_ATTR_DOC
    + """
    n_steps_ : int
        Steps run (``T``; a function of the public or noisy size only).
    diagnostics_ : TrainingDiagnostics
        Only with ``diagnostics=True``: ``objective_path`` (``P(theta)`` of the released model
        at the recorded steps, on the rows the trainer saw), ``duality_gap_path``
        (``P(theta) - D(alpha)``; NaN for the primal variant, ``inf`` where noise pushed
        ``alpha`` outside the dual domain), ``objective_steps`` and ``dual_coef`` (``alpha``,
        one value per training example: it would reveal the batches; with Poisson batches
        it carries no privacy noise at all, the dual state being hidden). NOT PRIVATE: never
        release it with the model. Without ``diagnostics=True`` the fitted estimator holds
        no dual variable."""
)

_NOTES = (
    """
    Notes
    -----"""
    + DEFAULTS_NOTE_DOC
    + """

    Privacy (Damaskinos et al. 2021; details in :mod:`privlearn.linear.scd_estimators`):
    ``T`` Gaussian mechanisms of sensitivity ``S_f`` (``C`` on ``v`` for Algorithm 1 with
    Poisson batches, whose dual state ``alpha`` is never released and needs no noise -- the
    hidden-state argument of :mod:`privlearn.linear.scd_estimators`, issue 20; ``2 sqrt(2) C``
    with fixed batches under replace-one neighbours;
    ``2 C sqrt(L (L+1))`` for SeqDP-SCD and for the primal variant, Lemma 4), noise std
    ``sigma S_f`` per released coordinate, composed by the tightest sound accountant: the
    privacy loss distribution (PLD) for Poisson subsampling and no subsampling (primal), RDP
    with the tight RDP -> (epsilon, delta) conversion for sampling without replacement --
    Theorem 1 with the moments accountant of Abadi et al. (2016) replaced by these bounds.
    The guarantee covers the released model ``coef_`` (``theta = v / (lambda N)``,
    Algorithm 1 line 16), not the dual variables nor the objective diagnostics
    (``diagnostics_``)."""
)


class DPSCDClassifier(LinearClassifierMixin, ClassifierMixin, _DPSCDBase):
    _multiclass = True

    __doc__ = f"""Linear classifier (logistic regression or SVM) trained by differentially
    private stochastic coordinate descent (Damaskinos et al. 2021).

    Minimises ``(lambda/2)||theta||^2 + (1/n) sum_i loss(y_i x_i^T theta)`` with labels mapped
    to ``{{-1, +1}}`` (``classes_[1]`` is ``+1``) through its dual (problem (3)): each step
    updates the dual variables of a batch by the minimisers of the local subproblems
    ``G*_j`` (eq. 8; closed form for the hinge, one Newton step for the logistic loss),
    scales them to ``|zeta| <= C`` and adds Gaussian noise to ``v`` (and, except for the
    Poisson dual variant, whose dual state stays hidden, to ``alpha``).

    ``K > 2`` classes: one-vs-rest, ``K`` binary problems (class ``k`` against the others) on
    the same rows with one budget. Every row takes part in every problem, so the accountant
    composes ``K x T`` subsampled Gaussian mechanisms (the noise is calibrated to the whole
    fit's ``(epsilon, delta)``; ``privacy_.tasks`` is ``K``) and one noisy count (if any) plans
    all of them. Binary fits are unchanged.

    Parameters
    ----------
    loss : {{"log_loss", "hinge"}}, default="log_loss"
        Logistic regression or the (L1-)hinge SVM.
{CLASSES_PARAM_DOC}{_COMMON_PARAMS}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels; binary: ``classes_[1]`` is the positive class (``+1``).
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        ``theta = v / (lambda N)`` (without the intercept weight); one row per class when
        ``K > 2`` (one-vs-rest).
    intercept_ : ndarray of shape (1,) or (n_classes,)
{_ATTRIBUTES}
{_NOTES}

    Examples
    --------
    >>> import numpy as np
    >>> from privlearn.linear import DPSCDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = np.where(X @ [1.0, -1.0, 0.5] > 0, "yes", "no")
    >>> clf = DPSCDClassifier(loss="hinge", epsilon=1.0, alpha=1e-3, classes=["no", "yes"], seed=0)
    >>> clf = clf.fit(X, y)
    >>> clf.privacy_.epsilon <= 1.0
    True
    >>> clf.classes_.tolist()
    ['no', 'yes']
    """

    def __init__(
        self,
        *,
        loss: str = "log_loss",
        epsilon: float | None = 1.0,
        delta: float | None = None,
        n_samples: int | None = None,
        classes: Any = None,
        ledger: Any = None,
        noise_multiplier: float | None = None,
        variant: str = "dual",
        sampling: str = "poisson",
        batch_size: int = 100,
        epochs: int = 20,
        clip: float = 0.01,
        alpha: float = 1e-4,
        alpha_jitter: float = ALPHA_JITTER,
        clip_rows: bool | None = None,
        fit_intercept: bool = True,
        intercept_scaling: float = 0.5,
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

    def fit(self, X: Any, y: Any) -> DPSCDClassifier:
        """Fit the model (spends the privacy budget described in ``privacy_``).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            Finite values, rows of L2 norm <= 1 (or ``clip_rows=True``); converted to float64
            (C-contiguous) or canonical CSR.
        y : array-like of shape (n_samples,)
            Class labels (any hashable, sortable values): two or more classes, or, with
            ``classes=`` declared, labels of that set (one-vs-rest over all of them).

        Returns
        -------
        self
        """
        return self._fit_classifier(X, y)


class DPSCDRegressor(LinearRegressorMixin, RegressorMixin, _DPSCDBase):
    __doc__ = f"""Ridge regression trained by differentially private stochastic coordinate
    descent (Damaskinos et al. 2021).

    Minimises ``(lambda/2)||theta||^2 + (1/n) sum_i (x_i^T theta - y_i)^2 / 2`` through its
    dual (problem (3)); each step updates the dual variables of a batch by the exact minimisers
    of the local subproblems ``G*_j`` (eq. 8), scales them to ``|zeta| <= C`` and adds Gaussian
    noise to ``v`` (and, except for the Poisson dual variant, to ``alpha``). Unlike DP-SGD the
    squared loss needs no gradient bound:
    the scaling of the coordinate steps (Step 8) bounds the sensitivity.

    Parameters
    ----------
{_COMMON_PARAMS}
{TARGET_PARAMS_DOC}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        ``theta = v / (lambda N)`` (without the intercept weight).
    intercept_ : float
{_ATTRIBUTES}
{_NOTES}

    The regressor's own defaults (20 epochs, ``alpha=1e-2``; ``clip=0.01``, ``batch_size=100``
    as listed) were chosen by ``bench/python/workflow_regression.py --tune`` (issue 22): on
    diabetes (raw target, declared bound (0, 400)) and an msd-like set (8,000 rows, bound
    (1900, 2020)), rows in the unit ball, validation R^2 at epsilon 1 and 3 over 2 seeds:
    0.39, 0.47 (diabetes) and 0.13, 0.13 (msd-like), against -2.2, 0.29, 0.20, 0.24 for
    ``alpha=1e-3`` (10 epochs; unstable on 330 rows) and the previous defaults (1 epoch,
    ``alpha=1e-4``: 4 steps on diabetes, R^2 below -1).
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
        variant: str = "dual",
        sampling: str = "poisson",
        batch_size: int = 100,
        epochs: int = 20,
        clip: float = 0.01,
        alpha: float = 1e-2,
        alpha_jitter: float = ALPHA_JITTER,
        clip_rows: bool | None = None,
        fit_intercept: bool = True,
        intercept_scaling: float = 0.5,
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

    def fit(self, X: Any, y: Any) -> DPSCDRegressor:
        """Fit the model (spends the privacy budget described in ``privacy_``).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            Finite values, rows of L2 norm <= 1 (or ``clip_rows=True``).
        y : array-like of shape (n_samples,)
            Finite real targets; clipped into the target bound (``target_bounds`` or the
            private bound, ``privacy_.target``) before training.

        Returns
        -------
        self
        """
        return self._fit_regressor(X, y)
