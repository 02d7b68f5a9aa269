"""Private hyperparameter search: :class:`PrivateHyperparameterSearch`.

Papernot & Steinke (2022), "Hyperparameter tuning with Renyi differential privacy": run a
random number ``K`` of independent repetitions; each picks a candidate configuration uniformly
at random, trains it on a training split of the private rows and releases a noisy score on
the held-out validation split; the best repetition is the output. The accounting (pure
functions of numbers) is in :mod:`privlearn.model_selection.repetitions`.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, Normalizer
from sklearn.utils.validation import check_X_y

from privlearn._checks import as_real, check_sparse_structure
from privlearn.accounting import (
    DEFAULT_DELTA,
    NEIGHBORING_RELATIONS,
    PrivacyStatement,
    RDPAccountant,
)
from privlearn.accounting.events import DiscreteGaussianEvent, Event, GaussianEvent
from privlearn.accounting.rdp import DEFAULT_ORDERS, _as_orders, rdp_pure_dp
from privlearn.accounting.size import DatasetSize
from privlearn.mechanisms._bits import spend
from privlearn.model_selection import repetitions as _rep
from privlearn.preprocessing.scalers import UnitBallProjector
from privlearn.random import Stream

__all__ = [
    "INERT_PARAMS",
    "MAX_SEARCH_MEAN_REPETITIONS",
    "MAX_SEARCH_ORDER",
    "PrivateHyperparameterSearch",
    "SearchPrivacy",
]

_DISTRIBUTIONS = ("truncated_negative_binomial", "poisson")
# Streams of the search's own randomness (distinct from the estimators' streams).
_STREAM_SPLIT, _STREAM_K, _STREAM_PICK, _STREAM_SEEDS = 0x5E01, 0x5E02, 0x5E03, 0x5E04
#: Transformers known to map each row on its own (they learn nothing from the data).
_ROW_MAPS = (Normalizer, UnitBallProjector)
#: Largest ``mean_repetitions`` the search accepts (public): each repetition is a whole fit,
#: so a larger mean is not a tuning run (``E[K] = 1e5`` ran for minutes on a small grid).
MAX_SEARCH_MEAN_REPETITIONS = 1000.0
#: Default epsilon of one noisy validation count when the total is planned for candidates that
#: are not all pure DP: this share of the per-repetition pure epsilon that the total allows
#: (:func:`~privlearn.model_selection.repetitions.plan_repetition_epsilon`). The count has
#: sensitivity 1 on a validation split of thousands of rows, so a small epsilon costs little
#: accuracy, and under parallel composition its curve then stays below the training curves at
#: the orders that set the total.
SCORE_SHARE = 0.25
#: Relative width of the bisections that plan a total from ``epsilon=`` (the target is first
#: lowered by this fraction, so the planned total never exceeds ``epsilon``).
PLAN_RTOL = 1e-9
#: Parameters (by name, nested ``step__name`` too) that never enter a privlearn estimator's
#: privacy statement: the step size and its schedule, and how a fit runs (threads, back-end,
#: progress, diagnostics, the seed). Grid entries that differ only in these share one plan;
#: each real fit is still checked against the plan (a candidate whose statement did depend on
#: one of them is refused with a RuntimeError, never released).
INERT_PARAMS = frozenset(
    {
        "eta0", "learning_rate", "verbose", "n_threads", "backend", "diagnostics",
        "record_every", "seed",
    }
)  # fmt: skip
#: Largest scale ``1 / score_epsilon`` of the noisy validation count (the exact discrete
#: Laplace sampler's limit), checked before the charge.
_MAX_SCORE_SCALE = 2.0**40
#: Largest RDP order the search accepts (public; the default orders stop at 1024): the
#: fixed-size sampling curves are sums of ``order`` terms (``orders=[1e300]`` asked numpy for
#: an array of that length).
MAX_SEARCH_ORDER = 1e4
#: The parameters the search itself sets on the candidates when it plans them.
_PLANNED_PARAMS = ("epsilon", "noise_multiplier", "n_samples")


@dataclass(frozen=True)
class SearchPrivacy:
    """The privacy of a whole search (the ``privacy_`` attribute).

    Attributes
    ----------
    epsilon, delta : float
        The search is ``(epsilon, delta)``-DP (``delta = 0``: the pure bound was smaller).
    theorem : str
        Which result gave the total.
    distribution : str
        ``"truncated_negative_binomial"`` or ``"poisson"``.
    eta, gamma : float or None
        Truncated negative binomial parameters.
    mean_repetitions : float
        ``E[K]`` (``mu`` for Poisson).
    repetition_epsilon : float or None
        Pure epsilon of one repetition when every candidate is pure DP.
    candidate_epsilons : tuple of float
        Each candidate's own epsilon (its ``privacy_.epsilon``), in grid order.
    score_epsilon : float
        Epsilon of the noisy validation count of one repetition.
    composition : str
        How training and score combine in one repetition (``"parallel"``: the max).
    orders, repetition_rdp : tuple of float
        The RDP curve of one repetition (max over candidates, combined with the score).
    best_order : float or None
        Order of the RDP conversion (None for the pure bound).
    neighboring : str or None
        The candidates' neighbouring relation (the search's).
    public_inputs : str
        What the statement treats as public.
    size : DatasetSize or None
        The public training size given to candidates that keep the size private (from the
        declared ``n_samples``; nothing spent); None when none needed it.
    target_epsilon : float or None
        The total the search was asked to meet (``epsilon=``); None when each candidate ran
        with its own budget.
    plan : tuple of str
        How each candidate's noise was planned from the total, in grid order (e.g.
        ``"noise_multiplier=1.23"`` for a Gaussian candidate, ``"epsilon=0.33"`` for a pure
        one); empty without a target.
    accountant : str
        The accounting chain of the total: the candidates' curves, the theorem and the
        conversion to ``(epsilon, delta)``.
    planned_noise : tuple of (float or None)
        With a target: each candidate's planned ``noise_multiplier`` parameter (None for a
        pure-DP candidate, whose planned epsilon is in ``candidate_epsilons``); empty otherwise.
    """

    epsilon: float
    delta: float
    theorem: str
    distribution: str
    eta: float | None
    gamma: float | None
    mean_repetitions: float
    repetition_epsilon: float | None
    candidate_epsilons: tuple[float, ...]
    score_epsilon: float
    composition: str
    orders: tuple[float, ...]
    repetition_rdp: tuple[float, ...]
    best_order: float | None
    neighboring: str | None
    public_inputs: str
    size: DatasetSize | None = None
    target_epsilon: float | None = None
    plan: tuple[str, ...] = ()
    accountant: str = ""
    planned_noise: tuple[float | None, ...] = ()

    def __str__(self) -> str:
        if self.distribution == "poisson":
            k = f"K ~ Poisson(mu={self.mean_repetitions:.6g})"
        else:
            k = (
                f"K ~ truncated negative binomial (eta={self.eta:g}, gamma={self.gamma:.6g}, "
                f"E[K]={self.mean_repetitions:.6g})"
            )
        rel = NEIGHBORING_RELATIONS.get(str(self.neighboring), self.neighboring)
        per = (
            f"{self.repetition_epsilon:.6g}-DP"
            if self.repetition_epsilon is not None
            else "RDP curve (max over candidates)"
        )
        if self.target_epsilon is not None:
            budget = [
                f"  total epsilon {self.target_epsilon:.6g} requested (spent {self.epsilon:.6g} "
                f"at delta {self.delta:.6g}); per-candidate plan, solved from the total: "
                + "; ".join(self.plan)
            ]
        else:
            budget = ["  no total requested: each candidate ran with its own budget"]
        return "\n".join(
            [
                f"({self.epsilon:.6g}, {self.delta:.6g})-DP private hyperparameter search",
                f"  {k}; the best of K independent repetitions is released",
                f"  by {self.theorem}",
                *budget,
                *([f"  accountant: {self.accountant}"] if self.accountant else []),
                f"  one repetition: {per}; candidates' epsilons "
                f"{', '.join(f'{e:.6g}' for e in self.candidate_epsilons)}; noisy validation "
                f"count epsilon {self.score_epsilon:.6g}; {self.composition} composition of "
                "training and score (disjoint splits)",
                f"  neighbouring relation: {rel}; public inputs: {self.public_inputs}",
                *(
                    [
                        f"  candidates planned with the public expected training size "
                        f"{self.size.value} (from the declared n_samples)"
                    ]
                    if self.size is not None
                    else []
                ),
                "  the seed, the split, K and the picks are secret randomness; the guarantee "
                "is fixed before any row is read",
                "  released: best_estimator_, best_params_, best_score_ "
                "(not K, not the other runs)",
            ]
        )


def _steps(est: Any) -> list[tuple[str, Any]]:
    """``(name, step)`` of a Pipeline (``("", est)`` for a lone estimator)."""
    if isinstance(est, Pipeline):
        return [(name, s) for name, s in est.steps if s is not None and s != "passthrough"]
    return [("", est)]


def _is_privlearn(step: Any) -> bool:
    """Whether ``step`` is (a subclass of) a privlearn estimator (its ``privacy_`` is then
    required after the dry fit)."""
    return any(c.__module__.split(".")[0] == "privlearn" for c in type(step).__mro__)


def _check_structure(est: Any, row_wise: tuple[str, ...]) -> None:
    """Refuse, before anything is fitted, a step that may learn from the rows across rows.

    A transformer placed before the private step sees every training row; the candidates'
    guarantees hold for the rows they receive, so a step may come before them only if it maps
    each row on its own (neighbouring data sets stay neighbours) or is itself private (its
    ``privacy_`` is then accounted). A :class:`~sklearn.preprocessing.FunctionTransformer` runs
    any function of the whole array (``X - X.mean(0)`` moves every row when one changes, which
    breaks both the training and the score sensitivity), so it is accepted only where the user
    declares it row-wise (``row_wise_steps``)."""
    for name, step in _steps(est):
        if name and name in row_wise:
            continue
        if isinstance(step, _ROW_MAPS) or _is_privlearn(step):
            continue
        if isinstance(step, FunctionTransformer):
            raise ValueError(
                f"pipeline step {name!r} is a FunctionTransformer: its function may mix rows "
                "(e.g. X - X.mean(0)), which breaks the candidates' sensitivities; if it maps "
                f"each row on its own, declare it with row_wise_steps=({name!r},)"
            )
        raise ValueError(
            f"pipeline step {name or type(step).__name__!r} ({type(step).__name__}) learns "
            "from the data without a privacy statement; only privlearn estimators (with "
            "privacy_), per-row maps (Normalizer, UnitBallProjector) and steps declared in "
            "row_wise_steps may see the private rows"
        )


def _private_steps(est: Any, row_wise: tuple[str, ...]) -> list[Any]:
    """The fitted steps of ``est`` that carry a ``privacy_`` (checked: nothing else learns)."""
    found = []
    for name, s in _steps(est):
        if hasattr(s, "privacy_"):
            found.append(s)
        elif not (isinstance(s, _ROW_MAPS) or (name and name in row_wise)):
            raise ValueError(
                f"pipeline step {name or type(s).__name__!r} ({type(s).__name__}) learns from "
                "the data without a privacy statement; only privlearn estimators (with "
                "privacy_), per-row maps (Normalizer, UnitBallProjector) and steps declared in "
                "row_wise_steps may see the private rows"
            )
    if not found:
        raise ValueError("the estimator has no private step (no privacy_ after fit)")
    return found


@dataclass(frozen=True)
class _Plan:
    """What a dry fit of one candidate on the public stand-in says about its privacy."""

    curve: np.ndarray  # RDP of the training part at the search's orders
    pure: float | None  # pure epsilon when every private step is pure DP
    epsilon: float  # the candidate's own total (sum of its private steps' epsilons)
    relation: str | None
    counts: bool  # whether a step drew its own noisy count of the rows


def _cost(est: Any, orders: np.ndarray, row_wise: tuple[str, ...]) -> _Plan:
    """The privacy of a fitted candidate, read from its steps' statements."""
    curve = np.zeros(orders.shape)
    pure: float | None = 0.0
    total_eps = 0.0
    relation: str | None = None
    counts = False
    for step in _private_steps(est, row_wise):
        p = step.privacy_
        eps = float(p.epsilon)
        delta = float(getattr(p, "delta", 0.0))
        if not math.isfinite(eps):
            raise ValueError(f"candidate {type(step).__name__} is not private (epsilon = inf)")
        size = getattr(p, "size", None)
        if size is not None and getattr(size, "source", None) == "noisy_count":
            counts = True  # refused by the caller (an a-posteriori curve)
        stmt = p if isinstance(p, PrivacyStatement) else getattr(p, "statement", None)
        rel = getattr(p, "neighboring", None) or getattr(stmt, "neighboring", None)
        if rel is not None:
            if relation not in (None, rel):
                raise ValueError("the private steps use different neighbouring relations")
            relation = rel
        total_eps += eps
        if delta == 0.0:
            curve = curve + rdp_pure_dp(eps, orders)
            if pure is not None:
                pure += eps
        elif stmt is not None and stmt.accountant in ("rdp", "pld") and stmt.events:
            # the RDP curve of the candidate's events (a PLD-calibrated candidate too): the
            # private-selection theorem (Papernot and Steinke 2022) composes RDP curves
            acc = RDPAccountant(orders, neighboring=stmt.neighboring)
            for e in stmt.events:
                acc.compose(e)
            curve = curve + acc.rdp
            pure = None
        elif not counts:  # a counting candidate is refused by the caller, with its reason
            raise ValueError(
                f"candidate {type(step).__name__}: privacy_ is neither pure DP nor an RDP or "
                "PLD statement with its events; it cannot be accounted for"
            )
    return _Plan(curve, pure, total_eps, relation, counts)


def _dry_fit(est: Any, rows: int, d: int, labels: np.ndarray) -> Any:
    """A clone of ``est`` fitted on a public stand-in (zeros, ``rows`` x ``d``, the labels
    repeated). No private row is read and nothing is charged (candidates carry no ledger:
    refused in :meth:`PrivateHyperparameterSearch._check_params`)."""
    dry = clone(est)
    _set_matching(dry, "seed", 0)
    cache = getattr(_DRY_CACHE, "fits", None)  # one search's dry fits (fit() opens it)
    key = None
    if cache is not None:
        key = _params_key(type(dry), dry.get_params(deep=True), rows, d, np.asarray(labels))
        if key is not None and key in cache:
            return cache[key]
    stand_in_y = np.resize(labels, rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warnings about the stand-in, not the private rows
        dry.fit(np.zeros((rows, d)), stand_in_y)
    if key is not None:
        cache[key] = dry
    return dry


#: The dry fits of the search running in this thread (a dry fit is a function of its
#: estimator's parameters and the stand-in's shape and labels: equal ones are fitted once).
_DRY_CACHE = threading.local()


def _params_key(*values: Any) -> str | None:
    """A content hash of ``values`` (numpy arrays by value, never a truncated repr), or None
    when they cannot be hashed (then nothing is shared)."""
    try:
        import joblib

        return str(joblib.hash(values))
    except Exception:  # noqa: BLE001 - an unpicklable parameter: no sharing, no error
        return None


def _dry_plan(
    est: Any, rows: int, d: int, labels: np.ndarray, orders: np.ndarray, row_wise: tuple[str, ...]
) -> _Plan:
    """The privacy of ``est`` read from a dry fit on a public stand-in (:func:`_dry_fit`)."""
    return _cost(_dry_fit(est, rows, d, labels), orders, row_wise)


def _scaled_noise(event: Event, factor: float) -> Event:
    """``event`` with every Gaussian noise multiplier (nested ones too) multiplied by
    ``factor``; the sampling, counts and other mechanisms are kept."""
    if isinstance(event, (GaussianEvent, DiscreteGaussianEvent)):
        return dataclasses.replace(event, noise_multiplier=event.noise_multiplier * factor)
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(event):  # type: ignore[arg-type]
        v = getattr(event, f.name)
        if isinstance(v, Event):
            changes[f.name] = _scaled_noise(v, factor)
        elif isinstance(v, tuple) and v and all(isinstance(x, Event) for x in v):
            changes[f.name] = tuple(_scaled_noise(x, factor) for x in v)
    return dataclasses.replace(event, **changes) if changes else event  # type: ignore[type-var]


def _noise_multipliers(event: Event) -> set[float]:
    """The Gaussian noise multipliers inside ``event``."""
    if isinstance(event, (GaussianEvent, DiscreteGaussianEvent)):
        return {float(event.noise_multiplier)}
    out: set[float] = set()
    for f in dataclasses.fields(event):  # type: ignore[arg-type]
        v = getattr(event, f.name)
        for x in v if isinstance(v, tuple) else (v,):
            if isinstance(x, Event):
                out |= _noise_multipliers(x)
    return out


@dataclass(frozen=True)
class _Knob:
    """How the plan of a total moves one candidate's privacy.

    ``kind="pure"``: the candidate is pure DP; the plan sets its pure total ``value`` (its
    ``epsilon`` parameters are rescaled, :meth:`PrivateHyperparameterSearch._scale_to`); its
    curve is taken as ``rdp_pure_dp(value)``, an upper bound of the sum of its steps' curves.
    ``kind="gaussian"``: one private step adds Gaussian noise with one noise multiplier; the
    plan sets it (``value``, the step's ``noise_multiplier`` parameter, its ``epsilon`` set to
    None); the curve is that of the step's events with the multiplier replaced, plus the
    ``fixed`` curve of the candidate's other (pure) steps."""

    kind: str
    relation: str | None
    fixed: np.ndarray
    events: tuple[Event, ...] = ()
    sigma0: float = 1.0
    prefix: str = ""
    param_ratio: float = 1.0  # the noise_multiplier parameter per unit of the events' multiplier
    fixed_epsilon: float = 0.0  # the pure epsilon of the steps behind ``fixed``
    fixed_steps: tuple[str, ...] = ()  # their class names (for the messages)

    def parameter(self, value: float) -> float:
        """The ``noise_multiplier`` parameter giving events with multiplier ``value`` (they
        differ by the sensitivity convention: e.g. fixed-size batches, sensitivity ``2C``)."""
        return value * self.param_ratio

    def key(self) -> tuple[Any, ...]:
        """Candidates with equal keys have equal curves for equal values."""
        unit = tuple(_scaled_noise(e, 1.0 / self.sigma0) for e in self.events)
        return (self.kind, self.relation, self.fixed.tobytes(), repr(unit))

    def curve(self, value: float, orders: np.ndarray) -> np.ndarray:
        if self.kind == "pure":
            return rdp_pure_dp(value, orders)
        acc = RDPAccountant(orders, neighboring=self.relation)
        for e in self.events:
            acc.compose(_scaled_noise(e, value / self.sigma0))
        return self.fixed + acc.rdp


def _knob(dry: Any, plan: _Plan, orders: np.ndarray, row_wise: tuple[str, ...]) -> _Knob:
    """The :class:`_Knob` of a dry-fitted candidate (ValueError when its noise cannot be
    planned from a total)."""
    if plan.pure is not None:
        return _Knob("pure", plan.relation, np.zeros(orders.shape))
    fixed = np.zeros(orders.shape)
    fixed_eps, fixed_names = 0.0, []
    tuned: list[tuple[str, Any]] = []
    for name, step in _steps(dry):
        p = getattr(step, "privacy_", None)
        if p is None:
            continue
        if float(getattr(p, "delta", 0.0)) == 0.0:
            fixed = fixed + rdp_pure_dp(float(p.epsilon), orders)
            fixed_eps += float(p.epsilon)
            fixed_names.append(type(step).__name__)
        else:
            tuned.append((name, step))
    what = type(tuned[0][1]).__name__ if tuned else type(dry).__name__
    if len(tuned) != 1:
        raise ValueError(
            f"candidate {what}: epsilon= plans one Gaussian step per candidate (its "
            f"noise_multiplier); this candidate has {len(tuned)} steps that are not pure DP"
        )
    name, step = tuned[0]
    stmt = (
        step.privacy_
        if isinstance(step.privacy_, PrivacyStatement)
        else getattr(step.privacy_, "statement", None)
    )
    if "noise_multiplier" not in step.get_params() or stmt is None or not stmt.events:
        raise ValueError(
            f"candidate {what}: epsilon= plans the noise of Gaussian candidates through their "
            "noise_multiplier parameter and their events; this one has neither"
        )
    sigmas = set().union(*(_noise_multipliers(e) for e in stmt.events))
    if len(sigmas) != 1:
        raise ValueError(
            f"candidate {what}: its events carry {len(sigmas)} different noise multipliers; "
            "epsilon= plans candidates with one"
        )
    sigma0 = sigmas.pop()
    # the parameter behind the events' multiplier, as the statement reports it (checked by a
    # dry fit once planned)
    param = getattr(step.privacy_, "noise_multiplier", None) or getattr(
        step.privacy_, "sigma", None
    )
    ratio = float(param) / sigma0 if param else 1.0
    return _Knob(
        "gaussian", stmt.neighboring, fixed, tuple(stmt.events), sigma0,
        f"{name}__" if name else "", ratio, fixed_eps, tuple(fixed_names),
    )  # fmt: skip


def _solve(f: Any, lo: float, hi: float, target: float, *, increasing: bool, what: str) -> float:
    """The value at the boundary of ``{x : f(x) <= target}`` (``f`` monotone, positive ``x``),
    by doubling a bracket from ``[lo, hi]`` and bisection in ``log x`` to a relative width of
    ``PLAN_RTOL``; the feasible end is returned."""

    def ok(x: float) -> bool:
        return bool(f(x) <= target)

    # feasible side: small x when f increases, large x when it decreases
    good, bad = (lo, hi) if increasing else (hi, lo)
    step = 0.5 if increasing else 2.0
    for _ in range(80):
        if ok(good):
            break
        good *= step
    else:
        raise ValueError(f"no {what} meets the total")
    for _ in range(80):
        if not ok(bad):
            break
        good, bad = bad, bad / step
    else:
        return good  # pragma: no cover - a total that nothing reaches
    for _ in range(200):
        if abs(math.log(bad / good)) <= PLAN_RTOL:
            break
        mid = math.sqrt(good * bad)
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def _stand_in_labels(est: Any, y: np.ndarray) -> np.ndarray:
    """Labels of a dry run's stand-in: the candidate's declared label set (``classes=``, a
    public input) where it has one, so the dry run plans the classes of the real fit."""
    declared = _matching(est.get_params(deep=True), "classes")
    if declared:
        return np.asarray(est.get_params(deep=True)[declared[0]])
    return np.unique(y)


def _set_matching(est: Any, name: str, value: Any) -> None:
    """Set every parameter called ``name`` (or ``*__name``) of ``est``."""
    keys = [k for k in est.get_params(deep=True) if k == name or k.endswith("__" + name)]
    if keys:
        est.set_params(**{k: value for k in keys})


def _matching(params: dict[str, Any], name: str) -> list[str]:
    """Keys of ``params`` called ``name`` (or ``*__name``) with a value other than None."""
    return [
        k for k, v in params.items() if (k == name or k.endswith("__" + name)) and v is not None
    ]


def _plan_key(params: dict[str, Any]) -> tuple[Any, ...]:
    """The part of a grid entry that can change a candidate's privacy statement: every
    parameter but those in :data:`INERT_PARAMS` (compared by content). Entries with equal
    keys are planned once (:meth:`PrivateHyperparameterSearch.fit`)."""
    kept = sorted((k, v) for k, v in params.items() if k.rsplit("__", 1)[-1] not in INERT_PARAMS)
    content = _params_key([k for k, _ in kept], [v for _, v in kept])
    if content is None:  # unhashable values: compare by identity (no sharing across objects)
        return tuple((k, id(v)) for k, v in kept)
    return (content,)


def _copy_planned(src: Any, dst: Any) -> None:
    """Give ``dst`` the parameters the plan set on ``src`` (its ``epsilon``,
    ``noise_multiplier`` and ``n_samples`` parameters, nested ones too): the two differ only in
    inert parameters, so ``dst`` then has ``src``'s planned statement."""
    params = src.get_params(deep=True)
    keys = [k for k in params if k.rsplit("__", 1)[-1] in _PLANNED_PARAMS]
    if keys:
        dst.set_params(**{k: params[k] for k in keys})


def _n_validation(n: int, frac: float) -> int:
    """Size of the fixed-size validation split (replace-one candidates): ``round(frac n)``,
    at least 1, leaving at least 2 training rows."""
    return min(max(1, int(round(frac * n))), n - 2)


class PrivateHyperparameterSearch(BaseEstimator):
    """Differentially private hyperparameter search over privlearn estimators.

    Papernot & Steinke (2022): ``K`` independent repetitions, ``K`` random and hidden; each
    repetition picks a configuration uniformly at random from ``param_grid``, fits it on the
    training split of the private rows and releases the number of correct validation
    predictions with exact discrete Laplace noise; the repetition with the largest noisy
    count (ties broken by an independent uniform draw) is the output. The whole run is
    accounted in ``privacy_``, a guarantee fixed before any private row is read: it depends on
    the parameters, the grid and the public sizes only, never on the seed or a noisy count.

    Parameters
    ----------
    estimator : estimator
        A privlearn classifier (or a scikit-learn Pipeline of per-row maps and privlearn
        steps) whose ``privacy_`` after ``fit`` is pure DP, or an RDP statement whose curve
        depends on public inputs only. Candidates must not set ``n_samples`` nor a ``ledger``
        (the search is charged once, see ``ledger``).
    param_grid : dict or list of dict
        The candidate configurations (:class:`sklearn.model_selection.ParameterGrid`).
    epsilon : float or None, default=None
        ``None``: each candidate runs with its own budget (its parameters) and ``privacy_``
        reports the total. A float: the search's TOTAL epsilon (at ``delta``), for every kind
        of candidate; ``privacy_.epsilon <= epsilon``, equal to it within a relative 1e-9.
        Pure-DP candidates only: the per-repetition pure epsilon ``e`` is solved from it
        (:func:`~privlearn.model_selection.repetitions.plan_repetition_epsilon`, with the
        ``(2 + eta) e`` bound); each candidate's ``epsilon`` parameters are then scaled until
        its planned total (its ``privacy_.epsilon``, e.g. ``epochs * epsilon`` with
        ``epsilon_split="per_pass"``) is at most the training share of ``e`` (``e`` with
        ``"parallel"`` composition, ``e - score_epsilon`` with ``"sequential"``). Otherwise
        (Gaussian candidates, e.g. the default DP-SGD and DP-SCD, alone or beside pure ones)
        each Gaussian candidate's ``noise_multiplier`` (its ``epsilon`` set to None) and each
        pure candidate's total are solved so that Papernot & Steinke's total of the whole
        grid meets ``epsilon`` (see Notes); the grid must not set ``noise_multiplier``.
    delta : float or None, default=None
        Delta of the total's conversion; ``None``: :data:`privlearn.accounting.DEFAULT_DELTA`.
    repetitions : {"truncated_negative_binomial", "poisson"}, default="truncated_negative_binomial"
        Distribution of ``K``, drawn exactly (no truncation:
        :func:`~privlearn.model_selection.repetitions.sample_repetitions`).
    eta : float, default=1.0
        Shape of the truncated negative binomial, in ``(-1, 1e6]`` (1: geometric, 0:
        logarithmic; below 0 the tail of ``K`` is heavy, ``P[K > k] ~ k^eta``).
    mean_repetitions : float, default=10.0
        ``E[K]`` (``gamma`` is solved from it; Poisson: ``mu``), at most
        ``MAX_SEARCH_MEAN_REPETITIONS`` (1000, public).
    validation_fraction : float, default=0.2
        Share of the rows in the validation split (see Notes).
    score_epsilon : float or None, default=None
        Epsilon of one noisy validation count (scale ``1/score_epsilon``; the count of
        correct predictions has sensitivity 1). ``None``: with a target ``epsilon`` and pure
        candidates, the per-repetition pure epsilon (half of it with ``"sequential"``
        composition); with a target and Gaussian candidates, ``SCORE_SHARE`` (a quarter) of
        it; without a target, the candidates' largest pure epsilon (required for Gaussian
        candidates).
    composition : {"parallel", "sequential"}, default="parallel"
        How training and score combine in one repetition (see
        :func:`~privlearn.model_selection.repetitions.repetition_rdp`).
    orders : array_like, default DEFAULT_ORDERS
        RDP orders, each at most ``MAX_SEARCH_ORDER`` (1e4).
    seed : int or None, default=None
        Key of the search's randomness (split, K, picks, tie-breaks) and of the candidates'
        seeds: part of the secret randomness; ``None``: from the operating system (right for
        a release).
    ledger : object, optional
        Charged ONCE, ``ledger.spend(epsilon, delta, label=...)`` with the search's total,
        after every parameter and candidate was checked and planned and before any private
        row is used for training. One entry whatever ``K``: a ledger on a candidate would
        record every repetition and reveal ``K``, which the theorems need hidden.
    n_samples : int or None, default=None
        The number of rows of ``X``, declared public. Needed only for candidates that keep
        the size private (add/remove-one sampling, e.g. Gaussian DP-SGD with Poisson
        sampling): they are planned from the public expected training size
        ``n_samples - round(validation_fraction * n_samples)``, so their curves, and the
        total, are fixed before any row is read. A data set of another size is refused.
    row_wise_steps : tuple of str or None, default=()
        Names of pipeline steps the user declares to map each row on its own (``None`` or
        ``()``: none) (e.g. a
        :class:`~sklearn.preprocessing.FunctionTransformer` of ``np.tanh``). Undeclared
        FunctionTransformers, and any step that is neither a privlearn estimator nor a known
        per-row map (Normalizer, UnitBallProjector), are refused.

    Attributes
    ----------
    best_estimator_ : estimator or None
        The selected fitted model (None when a Poisson ``K`` was 0).
    best_params_ : dict or None
    best_score_ : int or None
        Its noisy number of correct validation predictions.
    candidates_ : list of dict
        The configurations (public).
    privacy_ : SearchPrivacy

    Notes
    -----
    *Privacy.* One repetition ``Q`` is the mixture, with data-independent weights, of the
    candidates: its RDP is at most the max over candidates, order by order. The candidates'
    curves are read from their own accountants by fitting each once on a public stand-in
    (zeros with the training split's shape; no ledger, nothing charged) before any private
    row is used; each real fit's statement must equal the planned one (checked). The noisy
    count is ``score_epsilon``-DP; training and score see disjoint rows, so one repetition
    costs their max ("parallel"). The total is Theorem 2 of Papernot & Steinke (truncated
    negative binomial K; with pure-DP repetitions also the ``(2 + eta) eps`` bound, ``3 eps``
    for geometric K as in Liu & Talwar 2019) or Theorem 6 (Poisson K), converted to
    ``(epsilon, delta)`` with :func:`privlearn.accounting.rdp_to_epsilon`. The theorems cover
    the best repetition's output (model, configuration, noisy score) only: ``K`` and the
    other runs are not released (the search keeps no ``n_repetitions_``, and charges a ledger
    once; note that the run time reveals ``K``).

    *A total for every candidate kind.* With ``epsilon=`` and a candidate that is not pure
    DP, each candidate's curve is modelled from its dry fit: the events of its Gaussian step
    with the noise multiplier replaced (the sampling and the number of steps are fixed by the
    public schedule), plus the pure curves ``min(eps, alpha eps^2 / 2)`` of its pure steps
    (or of the whole candidate). Two monotone solves by bisection: the multiplier (pure:
    epsilon) that would meet the total if the candidate were alone in the grid, then one
    common factor on all of them so that the max over the grid meets it. The planned
    candidates are fitted dry once more and their curves must equal the model. The statement
    (``privacy_.plan``, ``planned_noise``, ``accountant``) says the total, the plan and the
    accounting chain. Everything depends on the public inputs only (the grid, the search's
    settings, the declared size).

    *The split.* Drawn once and shared by every repetition; the theorems apply to ``Q`` on the
    pair (training, validation) and the split is a data-independent mixture. Replace-one
    candidates (``n`` is fixed by the relation): a uniformly random validation set of exactly
    ``round(validation_fraction * n)`` rows, so the training size, and every candidate's
    curve, is a function of ``n`` alone. Add/remove-one candidates: each row independently
    with probability ``validation_fraction`` (a fixed-size split of a data set with one more
    row would move every row); their schedules come from the public ``n_samples``.

    *Not a posteriori.* A candidate planned from a noisy count of its rows (or of the
    training split) has a curve that depends on the count, and a total reported from it
    varies with the seed on identical data; the search therefore refuses such candidates
    unless ``n_samples`` is declared.

    Only classifiers are supported (the score is a count of correct predictions).
    """

    def __init__(
        self,
        estimator: Any,
        param_grid: Any,
        *,
        epsilon: float | None = None,
        delta: float | None = None,
        repetitions: str = "truncated_negative_binomial",
        eta: float = 1.0,
        mean_repetitions: float = 10.0,
        validation_fraction: float = 0.2,
        score_epsilon: float | None = None,
        composition: str = "parallel",
        orders: Any = DEFAULT_ORDERS,
        seed: int | None = None,
        ledger: Any = None,
        n_samples: int | None = None,
        row_wise_steps: tuple[str, ...] | None = (),
    ) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.repetitions = repetitions
        self.eta = eta
        self.mean_repetitions = mean_repetitions
        self.validation_fraction = validation_fraction
        self.score_epsilon = score_epsilon
        self.composition = composition
        self.orders = orders
        self.seed = seed
        self.ledger = ledger
        self.n_samples = n_samples
        self.row_wise_steps = row_wise_steps

    # ---- parameters -----------------------------------------------------------------------
    def _check_params(self) -> dict[str, Any]:
        """Every parameter, checked before anything is fitted or charged."""
        if not is_classifier(self.estimator):
            raise TypeError(
                "estimator must be a classifier (the score is a noisy count of correct "
                f"validation predictions), got {type(self.estimator).__name__}"
            )
        try:
            candidates = list(ParameterGrid(self.param_grid))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"param_grid: {exc}") from None
        if not candidates:
            raise ValueError("param_grid has no candidate")
        if self.repetitions not in _DISTRIBUTIONS:
            raise ValueError(
                f"repetitions must be one of {_DISTRIBUTIONS}, got {self.repetitions!r}"
            )
        if self.composition not in ("parallel", "sequential"):
            raise ValueError(
                f"composition must be 'parallel' or 'sequential', got {self.composition!r}"
            )
        delta = DEFAULT_DELTA if self.delta is None else as_real(self.delta, "delta")
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must lie in (0, 1), got {delta}")
        frac = as_real(self.validation_fraction, "validation_fraction")
        if not 0.0 < frac < 1.0:
            raise ValueError(f"validation_fraction must lie in (0, 1), got {frac}")
        mean = as_real(self.mean_repetitions, "mean_repetitions")
        if not (math.isfinite(mean) and mean <= MAX_SEARCH_MEAN_REPETITIONS):
            raise ValueError(
                f"mean_repetitions must be at most {MAX_SEARCH_MEAN_REPETITIONS:g} (each "
                f"repetition is a whole fit), got {self.mean_repetitions}"
            )
        eta = gamma = None
        if self.repetitions == "truncated_negative_binomial":
            mean = _rep._mean(mean, "mean_repetitions", 1.0, MAX_SEARCH_MEAN_REPETITIONS)
            eta = _rep._eta(self.eta)
            gamma = _rep.negative_binomial_gamma(eta, mean)
        else:
            mean = _rep._mean(mean, "mean_repetitions", 0.0, MAX_SEARCH_MEAN_REPETITIONS)
        score_eps = None
        if self.score_epsilon is not None:
            score_eps = as_real(self.score_epsilon, "score_epsilon")
            if not (math.isfinite(score_eps) and score_eps > 0.0):
                raise ValueError(f"score_epsilon must be finite and > 0, got {score_eps}")
        target = None
        if self.epsilon is not None:
            target = as_real(self.epsilon, "epsilon")
            if not (math.isfinite(target) and target > 0.0):
                raise ValueError(f"epsilon must be finite and > 0, got {target}")
        orders = np.atleast_1d(_as_orders(self.orders)).astype(np.float64)
        if orders.max() > MAX_SEARCH_ORDER:
            raise ValueError(
                f"orders must be at most {MAX_SEARCH_ORDER:g} (the candidates' RDP curves are "
                f"computed term by term up to the order), got an order of {orders.max():g}"
            )
        n_samples = None
        if self.n_samples is not None:
            from privlearn._checks import as_index

            n_samples = as_index(self.n_samples, "n_samples", lower=3, upper=1 << 62)
        row_wise = () if self.row_wise_steps is None else self.row_wise_steps  # None: none
        try:
            names_ok = not isinstance(row_wise, str) and all(isinstance(r, str) for r in row_wise)
        except TypeError:  # not iterable
            names_ok = False
        if not names_ok:
            raise TypeError(
                "row_wise_steps must be a tuple of pipeline step names (str), or None or () "
                f"for none, got {row_wise!r}"
            )
        row_wise = tuple(row_wise)
        names = {name for name, _ in _steps(self.estimator)}
        unknown = [r for r in row_wise if r not in names]
        if unknown:
            raise ValueError(f"row_wise_steps names no step of the pipeline: {unknown}")
        base = self.estimator.get_params(deep=True)
        for key in _matching(base, "n_samples"):
            raise ValueError(
                f"the estimator must not declare n_samples ({key}): its training rows are a "
                "random split of the data; declare the data's size on the search instead"
            )
        for key in _matching(base, "ledger"):
            raise ValueError(
                f"the estimator carries a ledger ({key}): a candidate's ledger would record "
                "every repetition and reveal their number K, which Papernot & Steinke's "
                "theorems need hidden; pass the ledger to PrivateHyperparameterSearch("
                "ledger=...), which is charged once with the whole search's guarantee"
            )
        for params in candidates:
            if target is not None and _matching(params, "noise_multiplier"):
                raise ValueError(
                    "with epsilon= (a total) the search plans each candidate's noise: the grid "
                    "must not set noise_multiplier (leave epsilon=None to give the candidates "
                    "their own noise)"
                )
            if _matching(params, "n_samples"):
                raise ValueError("candidates must not declare n_samples (the split sets it)")
            if _matching(params, "ledger"):
                raise ValueError(
                    "candidates must not set a ledger (it would reveal K): pass it to the "
                    "search as ledger="
                )
        # the structure (which steps see the rows) once per distinct set of pipeline-level
        # entries (a step replaced): a step's own parameters (``step__name``), or a lone
        # estimator's, cannot change it
        seen: set[tuple[Any, ...]] = set()
        pipeline = isinstance(self.estimator, Pipeline)
        for params in candidates:
            key = tuple(
                sorted((k, repr(v)) for k, v in params.items() if pipeline and "__" not in k)
            )
            if key not in seen:
                seen.add(key)
                _check_structure(clone(self.estimator).set_params(**params), row_wise)
        if self.ledger is not None and not callable(getattr(self.ledger, "spend", None)):
            raise TypeError(
                f"ledger must have a spend(epsilon, delta, label) method, got {self.ledger!r}"
            )
        return dict(
            candidates=candidates, delta=delta, frac=frac, eta=eta, gamma=gamma, mean=mean,
            score_eps=score_eps, target=target, orders=orders, n_samples=n_samples,
            row_wise=row_wise,
        )  # fmt: skip

    def _per_repetition(self, cfg: dict[str, Any]) -> float | None:
        """The per-repetition pure epsilon ``e`` that the target total allows
        (:func:`~privlearn.model_selection.repetitions.plan_repetition_epsilon`); None without
        a target."""
        if cfg["target"] is None:
            return None
        return _rep.plan_repetition_epsilon(
            cfg["target"], cfg["delta"], distribution=self.repetitions, eta=cfg["eta"],
            gamma=cfg["gamma"], mu=cfg["mean"], orders=cfg["orders"],
        )  # fmt: skip

    def _budgets(self, cfg: dict[str, Any], per: float) -> tuple[float, float]:
        """``(training budget, score epsilon)`` of one repetition of pure-DP candidates for a
        target total: the per-repetition pure epsilon ``per`` is the max of the two
        ("parallel") or their sum ("sequential")."""
        score = cfg["score_eps"]
        if self.composition == "parallel":
            if score is None:
                score = per
            if score > per:
                raise ValueError(
                    f"score_epsilon={score:g} exceeds the per-repetition epsilon {per:.6g} "
                    f"that a total of epsilon={cfg['target']:g} allows"
                )
            return per, score
        if score is None:
            score = per / 2.0
        if not score < per:
            raise ValueError(
                f"score_epsilon={score:g} leaves nothing for training: with sequential "
                f"composition training and score share the per-repetition epsilon {per:.6g}"
            )
        return per - score, score

    def _total_of(self, cfg: dict[str, Any], score_rdp: np.ndarray) -> Any:
        """``curves -> the search's epsilon`` (no pure bound: some candidate is not pure)."""

        def total(curves: list[np.ndarray]) -> float:
            rep_rdp = _rep.repetition_rdp(curves, score_rdp, self.composition)
            return _rep.repeat_epsilon(
                cfg["orders"], rep_rdp, cfg["delta"], distribution=self.repetitions,
                eta=cfg["eta"], gamma=cfg["gamma"], mu=cfg["mean"],
            )[0]  # fmt: skip

        return total

    def _plan_total(self, knobs: list[_Knob], score_eps: float, cfg: dict[str, Any]) -> list[float]:
        """Each candidate's noise (Gaussian: noise multiplier; pure: its pure total) so that
        the search's total meets ``cfg["target"]``.

        The total is Papernot & Steinke's Theorem 2 (Theorem 6 for Poisson ``K``) on the
        max over candidates of their RDP curves with the score's, converted by the tight
        RDP conversion (:func:`~privlearn.model_selection.repetitions.repeat_epsilon`). Two
        one-dimensional solves, both monotone:

        1. for each distinct candidate alone, the noise whose search total (that candidate
           the only one in the grid) is the target: its value ``v_c`` (bisection);
        2. a common factor ``z >= 1``, Gaussian multipliers ``z v_c`` and pure totals
           ``v_c / z``, the smallest with the total of the whole grid at most the target
           (the max of curves costs more than any one of them; bisection in ``log z``).

        Candidates keep the relative noise that would make each of them meet the target on
        its own. Everything is a function of public inputs (the grid, the settings, the
        public training size of the dry fits)."""
        orders = cfg["orders"]
        target = cfg["target"] * (1.0 - PLAN_RTOL)
        total = self._total_of(cfg, rdp_pure_dp(score_eps, orders))
        floor = total([np.zeros(orders.shape)])
        if not floor < target:
            raise ValueError(
                f"the noisy validation counts (score_epsilon={score_eps:.6g}) and the random "
                f"number of repetitions alone cost epsilon {floor:.6g} >= the total "
                f"epsilon={cfg['target']:g}: nothing is left for training; lower "
                "score_epsilon or mean_repetitions, or raise epsilon or delta"
            )
        keys = [k.key() for k in knobs]
        distinct = {key: k for key, k in zip(keys, knobs)}
        base: dict[Any, float] = {}
        for key, k in distinct.items():
            one = lambda v, k=k: total([k.curve(v, orders)])  # noqa: E731
            if k.kind == "pure":
                base[key] = _solve(one, target, 2 * target, target, increasing=True,
                                   what="pure candidate epsilon")  # fmt: skip
            else:
                if k.fixed_steps and not total([k.fixed]) < target:
                    self._refuse_fixed(k, total, target, cfg)
                base[key] = _solve(one, k.sigma0, 2 * k.sigma0, target, increasing=False,
                                   what="noise multiplier")  # fmt: skip

        def value(key: Any, z: float) -> float:
            return base[key] * z if distinct[key].kind == "gaussian" else base[key] / z

        def joint(z: float) -> float:
            return total([k.curve(value(key, z), orders) for key, k in distinct.items()])

        z = _solve(joint, 1.0, 2.0, target, increasing=False, what="common noise factor")
        return [value(key, z) for key in keys]

    @staticmethod
    def _refuse_fixed(k: _Knob, total: Any, target: float, cfg: dict[str, Any]) -> None:
        """Refuse a Gaussian candidate whose pure steps alone (e.g. a private scaler) reach
        the total: no noise on its Gaussian step can meet it. The message says what the pure
        steps cost once repeated and the most they may spend (public inputs only)."""
        orders = cfg["orders"]
        most = _solve(
            lambda v: total([rdp_pure_dp(v, orders)]), target, 2 * target, target,
            increasing=True, what="pure epsilon",
        )  # fmt: skip
        steps = ", ".join(sorted(set(k.fixed_steps)))
        raise ValueError(
            f"the candidates' pure-DP step(s) ({steps}) spend epsilon {k.fixed_epsilon:.6g} "
            "per repetition, and repeated a random number of times with the noisy validation "
            f"counts they alone reach the search's total epsilon={cfg['target']:g}: no noise "
            "on the Gaussian step can meet it. The search's total covers every step of every "
            f"repetition: give the pure step(s) less than {most:.3g} in all, leaving room "
            f"for the Gaussian step (e.g. epsilon={most / 2:.2g}), or raise the search's "
            "epsilon, or fit the scaler once outside the search on its own budget"
        )

    # ---- fitting ---------------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> PrivateHyperparameterSearch:
        """Run the search (spends ``privacy_.epsilon``, ``privacy_.delta``).

        Everything is checked and planned first (parameters, data, the candidates' dry
        plans on a public stand-in, the total); the ledger is charged once; then the
        repetitions run.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        outer = getattr(_DRY_CACHE, "fits", None)
        _DRY_CACHE.fits = {} if outer is None else outer  # the dry fits of this search
        try:
            return self._fit_search(X, y)
        finally:
            _DRY_CACHE.fits = outer

    def _fit_search(self, X: Any, y: Any) -> PrivateHyperparameterSearch:
        """:meth:`fit` (with the search's dry-fit cache open)."""
        cfg = self._check_params()
        check_sparse_structure(X)
        X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
        n, d = X.shape
        orders, row_wise = cfg["orders"], cfg["row_wise"]
        if cfg["n_samples"] is not None and cfg["n_samples"] != n:
            raise ValueError(
                f"n_samples={cfg['n_samples']} was declared as the public dataset size, but X "
                "has another number of rows: a statement that treats the size as public would "
                "be false"
            )
        if n < 3:
            raise ValueError("the data is too small for a training and a validation split")
        seed = self.seed
        labels = np.unique(y)
        per = self._per_repetition(cfg)
        # Candidates whose grid entries differ only in parameters that leave the privacy
        # statement unchanged (INERT_PARAMS, e.g. the learning rate) share one plan: the dry
        # fits below run once per group (its first member), so planning costs per distinct
        # privacy configuration, not per grid value; every real fit is checked against it.
        group: dict[tuple[Any, ...], int] = {}
        rep_of = [group.setdefault(_plan_key(c), i) for i, c in enumerate(cfg["candidates"])]
        reps = sorted(group.values())
        estimators = {i: clone(self.estimator).set_params(**cfg["candidates"][i]) for i in reps}

        # 1. the candidates' relation, and whether they would count the rows (dry runs on a
        # stand-in of the public training size: n - round(validation_fraction n))
        n_fixed = n - _n_validation(n, cfg["frac"])
        first_of = {i: _dry_plan(estimators[i], n_fixed, d, labels, orders, row_wise) for i in reps}
        first = [first_of[r] for r in rep_of]
        relations = {p.relation for p in first if p.relation is not None}
        if len(relations) > 1:
            raise ValueError("the candidates use different neighbouring relations")
        relation = relations.pop() if relations else None
        # (a candidate that counts its rows is Gaussian: its first plan holds the count only)
        all_pure = all(p.pure is not None and not p.counts for p in first)
        score_eps = cfg["score_eps"]
        train_budget = None
        if per is not None and all_pure:  # pure candidates: the per-repetition epsilon
            train_budget, score_eps = self._budgets(cfg, per)
            for est in estimators.values():
                _set_matching(est, "epsilon", train_budget)
        elif per is not None and score_eps is None:
            score_eps = SCORE_SHARE * per
        size = None
        if any(p.counts for p in first):
            if cfg["n_samples"] is None:
                raise ValueError(
                    "a candidate keeps the data size private (add/remove-one sampling) and "
                    "would plan its schedule from a noisy count: its curve, and the search's "
                    "total, would then depend on the count (an a-posteriori epsilon that "
                    "changes with the seed on identical data). Declare the size public with "
                    "n_samples= on the search (the candidates are then planned from the public "
                    "expected training size), or use replace-one candidates "
                    "(e.g. sampling='fixed')"
                )
            m = cfg["n_samples"] - _n_validation(cfg["n_samples"], cfg["frac"])
            size = DatasetSize(m, "given")
            for est in estimators.values():
                _set_matching(est, "n_samples", size)
        # the stand-in's rows: a public size (the declared training size, or n_fixed: replace-one
        # candidates share n), never the size of the random split
        rows = n_fixed if size is None else size.value

        # 2. the split (its randomness is the search's, independent of the data)
        split = Stream(seed, stream=_STREAM_SPLIT)
        if relation == "replace_one" and size is None:
            val = np.zeros(n, dtype=bool)
            val[split.choice_without_replacement(0, n, n - n_fixed)] = True
        else:
            val = split.poisson_mask(0, n, cfg["frac"])
        train_idx, val_idx = np.flatnonzero(~val), np.flatnonzero(val)
        if train_idx.size < 2 or val_idx.size < 1:
            raise ValueError("the data is too small for a training and a validation split")
        Xt, yt, Xv, yv = X[train_idx], y[train_idx], X[val_idx], y[val_idx]

        # 3. the plans on the public stand-in, scaled to the target (one per group)
        plan_of: dict[int, _Plan] = {}
        dry_of: dict[int, Any] = {}
        for i in reps:
            est = estimators[i]
            dry = _dry_fit(est, rows, d, _stand_in_labels(est, yt))
            plan = _cost(dry, orders, row_wise)
            if plan.counts:
                raise ValueError(
                    f"candidate {type(est).__name__} still draws its own noisy count: its "
                    "curve would depend on the data"
                )
            if train_budget is not None:
                plan = self._scale_to(est, plan, train_budget, rows, d, yt, cfg)
            plan_of[i], dry_of[i] = plan, dry
        notes: tuple[str, ...] = ()
        noise: list[float | None] = []
        if per is not None and not all_pure:
            assert score_eps is not None
            knob_of = {i: _knob(dry_of[i], plan_of[i], orders, row_wise) for i in reps}
            values = dict(zip(reps, self._plan_total([knob_of[i] for i in reps], score_eps, cfg)))
            note_of: dict[int, str] = {}
            noise_of: dict[int, float | None] = {}
            for i in reps:
                est, k, v = estimators[i], knob_of[i], values[i]
                labels_c = _stand_in_labels(est, yt)
                if k.kind == "gaussian":
                    est.set_params(
                        **{
                            k.prefix + "noise_multiplier": k.parameter(v),
                            k.prefix + "epsilon": None,
                        }
                    )
                    plan = _dry_plan(est, rows, d, labels_c, orders, row_wise)
                    if not np.allclose(plan.curve, k.curve(v, orders), rtol=1e-9, atol=0.0):
                        raise ValueError(
                            f"candidate {type(est).__name__}: with noise_multiplier="
                            f"{k.parameter(v):.6g} its "
                            "events differ from the planned ones; it cannot be planned from a "
                            "total (give each candidate its budget and leave epsilon=None)"
                        )
                    note_of[i] = (
                        f"noise_multiplier={k.parameter(v):.6g} (own epsilon {plan.epsilon:.4g})"
                    )
                    noise_of[i] = k.parameter(v)
                else:
                    _set_matching(est, "epsilon", per)  # every epsilon parameter, one value
                    cur = _dry_plan(est, rows, d, labels_c, orders, row_wise)
                    assert per is not None and cur.pure is not None and cur.pure > 0.0
                    start = per * v / cur.pure  # totals are linear in the epsilon parameters
                    _set_matching(est, "epsilon", start)
                    cur = _dry_plan(est, rows, d, labels_c, orders, row_wise)
                    plan = self._scale_to(est, cur, v, rows, d, yt, cfg, value=start)
                    note_of[i] = f"epsilon={plan.epsilon:.6g} (pure)"
                    noise_of[i] = None
                plan_of[i] = plan
            notes = tuple(f"#{j} {note_of[r]}" for j, r in enumerate(rep_of))
            noise = [noise_of[r] for r in rep_of]
        elif train_budget is not None:
            notes = tuple(
                f"#{j} epsilon={plan_of[r].epsilon:.6g} (pure)" for j, r in enumerate(rep_of)
            )
            noise = [None] * len(rep_of)
        plans = [plan_of[r] for r in rep_of]
        pures = [p.pure for p in plans]
        if all_pure != all(p is not None for p in pures):
            raise ValueError(
                "the candidates' dry fits on the training split disagree with the first ones "
                "about being pure DP: their statements depend on more than the public inputs"
            )
        if score_eps is None:
            if not all_pure:
                raise ValueError("score_epsilon is required when a candidate is not pure DP")
            score_eps = max(pures)  # type: ignore[type-var]
        if not 1.0 / score_eps <= _MAX_SCORE_SCALE:
            raise ValueError(
                f"the noisy validation count's epsilon {score_eps:.6g} is below "
                f"{1.0 / _MAX_SCORE_SCALE:.3g} (its discrete Laplace scale 1/epsilon is at most "
                "2**40): raise score_epsilon (or the search's epsilon)"
            )
        score_rdp = rdp_pure_dp(score_eps, orders)
        rep_rdp = _rep.repetition_rdp([p.curve for p in plans], score_rdp, self.composition)
        rep_pure = None
        if all_pure:
            train_pure = max(pures)  # type: ignore[type-var]
            rep_pure = (
                max(train_pure, score_eps)
                if self.composition == "parallel"
                else train_pure + score_eps
            )
        eps, delta, order = _rep.repeat_epsilon(
            orders, rep_rdp, cfg["delta"], distribution=self.repetitions, eta=cfg["eta"],
            gamma=cfg["gamma"], mu=cfg["mean"], pure_epsilon=rep_pure,
        )  # fmt: skip
        if cfg["target"] is not None and eps > cfg["target"] * (1.0 + 1e-12):
            raise RuntimeError(  # pragma: no cover - the plan above guarantees it
                f"the planned total {eps:.6g} exceeds the target epsilon={cfg['target']:g}"
            )
        accountant = (
            "each candidate's RDP curve from its own events (a PLD-calibrated candidate too; "
            "pure steps min(eps, alpha eps^2 / 2)), max over candidates with the score's, "
            "the theorem above, tight RDP -> (eps, delta) conversion (Canonne, Kamath, "
            "Steinke 2020; Balle et al. 2020)"
        )
        if order is None:
            accountant = "pure DP: (2 + eta) x the per-repetition epsilon"
        if self.repetitions == "poisson":
            theorem = "Papernot & Steinke 2022, Theorem 6 (Poisson K), RDP -> (eps, delta)"
        elif order is None:
            theorem = (
                "Papernot & Steinke 2022, Theorem 2 as lambda -> inf: (2 + eta) eps pure DP "
                "(3 eps for geometric K, Liu & Talwar 2019)"
            )
        else:
            theorem = (
                "Papernot & Steinke 2022, Theorem 2 (truncated negative binomial K), "
                "RDP -> (eps, delta)"
            )
        public = "the number of features, the candidate grid and the search's parameters"
        if size is not None:
            public += f", the dataset size (n_samples={cfg['n_samples']}, declared)"
        elif relation == "replace_one":
            public += f", the dataset size n={n} (replace-one neighbours share it)"
        privacy = SearchPrivacy(
            epsilon=eps, delta=delta, theorem=theorem, distribution=self.repetitions,
            eta=cfg["eta"], gamma=cfg["gamma"], mean_repetitions=cfg["mean"],
            repetition_epsilon=rep_pure, candidate_epsilons=tuple(p.epsilon for p in plans),
            score_epsilon=score_eps, composition=self.composition,
            orders=tuple(orders.tolist()), repetition_rdp=tuple(rep_rdp.tolist()),
            best_order=order, neighboring=relation, public_inputs=public, size=size,
            target_epsilon=cfg["target"], plan=notes, accountant=accountant,
            planned_noise=tuple(noise),
        )  # fmt: skip

        # 4. one charge: the whole search, before any private row is used for training
        spend(self.ledger, eps, delta, "PrivateHyperparameterSearch.fit")

        # 5. the repetitions (K exact: no truncation)
        k = _rep.sample_repetitions(
            Stream(seed, stream=_STREAM_K).uniform, distribution=self.repetitions,
            eta=cfg["eta"], gamma=cfg["gamma"], mu=cfg["mean"],
        )  # fmt: skip
        picks = Stream(seed, stream=_STREAM_PICK)
        seeds = Stream(seed, stream=_STREAM_SEEDS)
        best: tuple[float, float, int, Any, int] | None = None
        from privlearn.mechanisms import discrete_laplace

        for r in range(k):
            c = int(picks.choice_without_replacement(r, len(cfg["candidates"]), 1)[0])
            tie = float(seeds.uniform(3 * r, 1)[0])  # independent tie-breaker, part of Q
            fit_seed, score_seed = None, None
            if seed is not None:
                words = seeds.uniform(3 * r + 1, 2)
                fit_seed, score_seed = int(words[0] * 2**53), int(words[1] * 2**53)
            # the picked configuration with its group's planned parameters (built here: the
            # planning above touched one estimator per group)
            est = clone(self.estimator).set_params(**cfg["candidates"][c])
            _copy_planned(estimators[rep_of[c]], est)
            _set_matching(est, "seed", fit_seed)
            est.fit(Xt, yt)
            ran = _cost(est, orders, row_wise)
            planned = plans[c]
            same = np.allclose(ran.curve, planned.curve, rtol=1e-9, atol=0.0) and math.isclose(
                ran.epsilon, planned.epsilon, rel_tol=1e-9
            )
            if not same:
                raise RuntimeError(  # the fit's own epsilon is a function of the rows: not quoted
                    f"candidate {cfg['candidates'][c]} ran with another privacy statement than "
                    f"the one planned and charged (epsilon {planned.epsilon:.6g}): its statement "
                    "depends on more than the public inputs and the parameters the search "
                    f"plans with (parameters taken to leave it unchanged: {sorted(INERT_PARAMS)})"
                )
            correct = int(np.sum(est.predict(Xv) == yv))
            noisy = int(discrete_laplace(correct, 1.0 / score_eps, seed=score_seed))
            key = (noisy, tie)
            if best is None or key > (best[0], best[1]):
                best = (noisy, tie, c, est, r)
        self.candidates_ = cfg["candidates"]
        self.privacy_ = privacy
        if best is None:
            warnings.warn(
                "the Poisson number of repetitions was 0: the search released nothing "
                "(its budget is spent)",
                RuntimeWarning,
                stacklevel=3,
            )
            self.best_estimator_ = self.best_params_ = self.best_score_ = None
        else:
            self.best_score_ = best[0]
            self.best_params_ = dict(cfg["candidates"][best[2]])
            self.best_estimator_ = best[3]
        return self

    def _scale_to(
        self,
        est: Any,
        plan: _Plan,
        budget: float,
        rows: int,
        d: int,
        yt: np.ndarray,
        cfg: dict[str, Any],
        value: float | None = None,
    ) -> _Plan:
        """Scale ``est``'s ``epsilon`` parameters until its planned pure total is at most
        ``budget`` (a candidate's total need not be its ``epsilon``: ``epochs * epsilon`` with
        ``epsilon_split="per_pass"``). Totals are linear in the parameter for the pure
        mechanisms, so one rescaling suffices; a few more (each shrinking by the ratio) cover
        rounding. ``value``: the current value of the ``epsilon`` parameters (``budget``
        when None)."""
        labels = np.unique(yt)
        value = budget if value is None else value
        for _ in range(8):
            if plan.pure is None:
                raise ValueError(
                    "epsilon= (a target total) is planned for pure-DP candidates only; for RDP "
                    "candidates give each its budget (epsilon/delta parameters) and leave "
                    "epsilon=None"
                )
            if plan.pure <= budget:
                return plan
            value *= budget / plan.pure * (1.0 - 1e-12)
            _set_matching(est, "epsilon", value)
            plan = _dry_plan(est, rows, d, labels, cfg["orders"], cfg["row_wise"])
        raise ValueError(
            f"candidate {type(est).__name__}: no epsilon parameter brings its planned total "
            f"to the per-repetition budget {budget:.6g}"
        )

    # ---- delegation ------------------------------------------------------------------------
    def _best(self) -> Any:
        if not hasattr(self, "privacy_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("call fit first")
        if self.best_estimator_ is None:
            raise RuntimeError("the search drew K = 0 repetitions: there is no model")
        return self.best_estimator_

    def predict(self, X: Any) -> np.ndarray:
        """Predictions of ``best_estimator_``."""
        return self._best().predict(X)

    def decision_function(self, X: Any) -> np.ndarray:
        """``best_estimator_.decision_function``."""
        return self._best().decision_function(X)

    def score(self, X: Any, y: Any) -> float:
        """``best_estimator_.score`` (on data you pass: not private if it is private data)."""
        return float(self._best().score(X, y))

    @property
    def classes_(self) -> np.ndarray:
        """``best_estimator_.classes_``."""
        return self._best().classes_
