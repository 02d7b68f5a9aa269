"""The tightest sound accountant for a Gaussian run: which one prices which sampler.

- Poisson-subsampled Gaussian steps, or steps that read every row (``q = 1``), under
  add/remove-one neighbours: both the privacy loss distribution
  (:mod:`~privlearn.accounting.pld`; pessimistic, tight to the discretisation) and Renyi DP
  (:mod:`~privlearn.accounting.rdp`) bound the same events, so the smaller of the two epsilons
  is stated and the smaller of the two noise multipliers is calibrated (a minimum of sound
  bounds is sound). The statement names the accountant that bounds it and shows the other's
  epsilon beside it. The PLD is the tighter almost everywhere; RDP wins where the PLD's grid is
  coarse against one step's loss or where the FFT round-off of a very long composition is of
  the order of delta (its estimate is charged to the PLD: :func:`~privlearn.accounting.pld.
  compose_plds`).
- Where the PLD cannot run (noise multipliers below
  :data:`~privlearn.accounting.pld.PLD_MIN_SIGMA`, epsilons in the tens or more; a composition
  whose FFT window would exceed its limit even on the coarsest grid,
  :class:`~privlearn.accounting.pld.PLDRangeError`; more than
  :data:`~privlearn.accounting.pld.MAX_STEPS` steps), Renyi DP alone, and the statement says
  why (``note``). Nothing an estimator accepts fails in the accountant.
- Fixed-size batches drawn without replacement (replace-one neighbours): Renyi DP (Wang, Balle,
  Kasiviswanathan 2019). The loss distribution of that sampler has no closed-form dominating
  pair that we (or dp_accounting) account for, so these runs keep RDP and say so
  (``accountant="rdp"``).

The estimators call only these functions, so the choice is made in one place.
"""

from __future__ import annotations

import math
from typing import Any

from .accountant import PrivacyStatement, RDPAccountant, _unsupported
from .calibrate import calibrate_sigma, epsilon_for_sigma
from .events import Event, UnsupportedEventError
from .pld import (
    CALIBRATION_INTERVAL,
    DEFAULT_INTERVAL,
    MAX_STEPS,
    PLD_MIN_SIGMA,
    PLDAccountant,
    PLDRangeError,
    _as_rate,
    _calibrate,
    _unpack,
    epsilon_for_sigma_pld,
)
from .rdp import _as_delta

__all__ = [
    "TightestAccountant",
    "accountant_for",
    "calibrate_noise",
    "epsilon_of_noise",
    "uses_pld",
]


def uses_pld(sampling: str) -> bool:
    """Whether runs on this sampler (``"poisson"`` or ``"without_replacement"``) are priced by
    the PLD accountant (with Renyi DP: the smaller bound is stated)."""
    if sampling not in ("poisson", "without_replacement"):
        raise ValueError(f"sampling must be 'poisson' or 'without_replacement', got {sampling!r}")
    return sampling == "poisson"


class TightestAccountant(PLDAccountant):
    """The smaller of two sound bounds on the same add/remove-one events: the privacy loss
    distribution (:class:`~privlearn.accounting.PLDAccountant`) and Renyi DP
    (:class:`~privlearn.accounting.RDPAccountant`).

    It takes every event Renyi DP takes under add/remove-one; the PLD is run where it can
    (Gaussian and Poisson-subsampled Gaussian events with a noise multiplier of at least
    :data:`~privlearn.accounting.pld.PLD_MIN_SIGMA`, within its FFT window). ``statement``
    names the accountant whose epsilon is stated (``"pld"`` or ``"rdp"``), shows the other's
    beside it (``rdp_epsilon`` / ``pld_epsilon``) and, where the PLD did not run or RDP was the
    tighter, says why (``note``).

    Parameters
    ----------
    interval : float, default 1e-4
        Grid step of the PLD (:class:`~privlearn.accounting.PLDAccountant`).
    neighboring : {"add_remove"}
        Only add/remove-one (the PLD's dominating pairs); replace-one runs use RDP alone.

    Examples
    --------
    >>> from privlearn.accounting import GaussianEvent, PoissonSampled, TightestAccountant
    >>> acc = TightestAccountant().compose(PoissonSampled(0.01, GaussianEvent(4.0)), 10_000)
    >>> st = acc.statement(1e-5)
    >>> st.accountant, round(st.epsilon, 3), round(st.rdp_epsilon, 3)
    ('pld', 0.947, 1.035)
    >>> tiny = TightestAccountant().compose(PoissonSampled(0.01, GaussianEvent(0.1)), 10)
    >>> tiny.statement(1e-5).accountant  # below the PLD's floor: Renyi DP, and it says why
    'rdp'
    """

    _name = "tightest"

    def __init__(self, interval: float = DEFAULT_INTERVAL, neighboring: str = "add_remove"):
        super().__init__(interval, neighboring)
        self._rdp = RDPAccountant(neighboring=neighboring)
        self._no_pld: str | None = None  # why the PLD does not cover the events (None: it does)
        self._steps = 0  # Gaussian steps the PLD composes

    def _cost(self, event: Event) -> Any:
        return self._rdp._cost(event)

    def compose(self, event: Event, count: int = 1) -> TightestAccountant:
        """Add ``count`` adaptive repetitions of ``event``; returns ``self``."""
        event, count, relation = self._check(event, count)
        if relation == "replace_one":
            raise _unsupported(event, "tightest", "replace-one neighbours: use RDPAccountant")
        self._rdp.compose(event, count)  # raises (nothing composed) for an event RDP refuses
        if self._no_pld is None:
            try:
                steps = sum(c for _, _, c in _unpack(event)) * count
            except UnsupportedEventError as exc:
                self._no_pld = str(exc)
            else:
                self._steps += steps
                if self._steps > MAX_STEPS:
                    self._no_pld = f"more than {MAX_STEPS} steps"
        self._record(event, count, relation)
        return self

    def _pld_epsilon(self, delta: float) -> tuple[float, str | None]:
        """The PLD's epsilon (``inf`` and why where it cannot run)."""
        if self._no_pld is not None:
            return math.inf, self._no_pld
        if not self._events:
            return 0.0, None
        try:
            return PLDAccountant.get_epsilon(self, delta), None
        except PLDRangeError as exc:
            return math.inf, str(exc)

    def _pld_grid(self) -> float | None:
        """The grid step the PLD composed on (None: closed form, or no PLD)."""
        if self._no_pld is not None or not self._events or self._plain_mu() is not None:
            return None
        try:
            return self._composed()[0].interval
        except PLDRangeError:
            return None

    def get_epsilon(self, delta: float) -> float:
        """The smaller of the PLD's and Renyi DP's epsilon at ``delta``."""
        delta = _as_delta(delta)
        return min(self._pld_epsilon(delta)[0], self._rdp.get_epsilon(delta))

    def get_delta(self, epsilon: float) -> float:
        """The smaller of the PLD's and Renyi DP's delta at ``epsilon``."""
        rdp = self._rdp.get_delta(epsilon)
        if self._no_pld is not None:
            return rdp
        try:
            return min(rdp, PLDAccountant.get_delta(self, epsilon))
        except PLDRangeError:
            return rdp

    def rdp_epsilon(self, delta: float) -> float:
        """Epsilon of the same events by the Renyi-DP accountant."""
        return self._rdp.get_epsilon(delta)

    def statement(self, delta: float) -> PrivacyStatement:
        """The :class:`PrivacyStatement` at ``delta``: the smaller epsilon, the accountant that
        gives it, the other's epsilon beside it and, where RDP bounds it, why."""
        delta = _as_delta(delta)
        r_eps, order = self._rdp.get_epsilon_and_order(delta)
        p_eps, why = self._pld_epsilon(delta)
        common = dict(delta=float(delta), events=self.events, neighboring=self._neighboring)
        if p_eps <= r_eps:
            note = None
            h = self._pld_grid()
            if h is not None and h > self._interval * (1 + 1e-9):
                note = (
                    f"PLD on the grid {h:g} (coarsened from {self._interval:g} to fit its "
                    "FFT window; still pessimistic)"
                )
            return PrivacyStatement(
                epsilon=p_eps, accountant="pld", rdp_epsilon=r_eps, note=note, **common
            )
        if why is None:
            why = (
                "the PLD's bound is the looser one here (its loss grid or its FFT round-off; "
                "both bounds are sound, the smaller is stated)"
            )
        else:
            why = f"the PLD accountant did not run ({why}): Renyi DP alone"
        return PrivacyStatement(
            epsilon=r_eps,
            accountant="rdp",
            best_order=order,
            pld_epsilon=p_eps,
            note=why,
            **common,
        )

    def __repr__(self) -> str:
        return f"TightestAccountant(interval={self._interval:g}, {len(self._events)} events)"


def accountant_for(neighboring: str, sigma: float | None = None) -> Any:
    """A fresh accountant for runs under ``neighboring``: a :class:`TightestAccountant` (the
    smaller of the PLD's and Renyi DP's bounds; RDP alone where the PLD cannot run, e.g. a
    noise multiplier ``sigma`` below :data:`~privlearn.accounting.pld.PLD_MIN_SIGMA`) for
    add/remove-one, an :class:`RDPAccountant` for replace-one."""
    if neighboring == "add_remove":
        return TightestAccountant(neighboring="add_remove")
    return RDPAccountant(neighboring=neighboring)


def calibrate_noise(
    epsilon: float,
    delta: float,
    *,
    q: float,
    steps: int,
    sampling: str = "poisson",
    n: int | None = None,
) -> float:
    """Smallest noise multiplier meeting ``(epsilon, delta)`` by the tightest accountant of
    the sampler: for Poisson sampling the smaller of Renyi DP's
    (:func:`~privlearn.accounting.calibrate_sigma`) and the PLD's
    (:func:`~privlearn.accounting.pld.calibrate_sigma_pld`, which stops as soon as it needs
    more noise than RDP, and is skipped where it cannot run: RDP's is returned then). Bounded
    time: the PLD's probes are capped in number and in FFT length
    (:data:`~privlearn.accounting.pld.CALIBRATION_WINDOW`)."""
    rdp = calibrate_sigma(epsilon, delta, q=q, steps=steps, sampling=sampling, n=n)
    if not uses_pld(sampling) or rdp < PLD_MIN_SIGMA or int(steps) > MAX_STEPS:
        return rdp
    try:
        pld = _calibrate(
            float(epsilon),
            _as_delta(delta),
            _as_rate(q),
            int(steps),
            1e-3,
            CALIBRATION_INTERVAL,
            rdp_cap=True,
        )
    except PLDRangeError:
        return rdp
    return min(rdp, pld)


def epsilon_of_noise(
    sigma: float,
    delta: float,
    *,
    q: float,
    steps: int,
    sampling: str = "poisson",
    n: int | None = None,
) -> float:
    """Epsilon of a run with noise multiplier ``sigma`` by the tightest accountant of the
    sampler (the inverse of :func:`calibrate_noise`): for Poisson sampling the smaller of the
    PLD's and Renyi DP's."""
    rdp = epsilon_for_sigma(sigma, delta, q=q, steps=steps, sampling=sampling, n=n)
    if not uses_pld(sampling) or sigma < PLD_MIN_SIGMA or int(steps) > MAX_STEPS:
        return rdp
    try:
        return min(rdp, epsilon_for_sigma_pld(sigma, delta, q=q, steps=steps))
    except PLDRangeError:
        return rdp
