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
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, Normalizer
from sklearn.utils.validation import check_X_y

from privlearn._checks import as_real
from privlearn.accounting import (
    DEFAULT_DELTA,
    NEIGHBORING_RELATIONS,
    PrivacyStatement,
    RDPAccountant,
)
from privlearn.accounting.rdp import DEFAULT_ORDERS, _as_orders, rdp_pure_dp
from privlearn.accounting.size import DatasetSize, resolve_size
from privlearn.model_selection import repetitions as _rep
from privlearn.random import Stream

__all__ = ["PrivateHyperparameterSearch", "SearchPrivacy"]

_DISTRIBUTIONS = ("truncated_negative_binomial", "poisson")
# Streams of the search's own randomness (distinct from the estimators' streams).
_STREAM_SPLIT, _STREAM_K, _STREAM_PICK, _STREAM_SEEDS = 0x5E01, 0x5E02, 0x5E03, 0x5E04
#: Transformers that learn nothing from the data, allowed before the private step.
_STATELESS = (Normalizer, FunctionTransformer)


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
        The training split's noisy count that planned candidates with a private size (its
        ``epsilon`` is part of ``epsilon``, by basic composition); None when none needed it.
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
        return "\n".join(
            [
                f"({self.epsilon:.6g}, {self.delta:.6g})-DP private hyperparameter search",
                f"  {k}; the best of K independent repetitions is released",
                f"  by {self.theorem}",
                f"  one repetition: {per}; candidates' epsilons "
                f"{', '.join(f'{e:.6g}' for e in self.candidate_epsilons)}; noisy validation "
                f"count epsilon {self.score_epsilon:.6g}; {self.composition} composition of "
                "training and score (disjoint splits)",
                f"  neighbouring relation: {rel}; public inputs: {self.public_inputs}",
                *(
                    [f"  {self.size.describe()}, part of the total (basic composition)"]
                    if self.size is not None
                    else []
                ),
                "  released: best_estimator_, best_params_, best_score_ "
                "(not K, not the other runs)",
            ]
        )


def _private_steps(est: Any) -> list[Any]:
    """The fitted steps of ``est`` that carry a ``privacy_`` (checked: nothing else learns)."""
    steps = [s for _, s in est.steps] if isinstance(est, Pipeline) else [est]
    found = []
    for s in steps:
        if s is None or s == "passthrough":
            continue
        if hasattr(s, "privacy_"):
            found.append(s)
        elif not isinstance(s, _STATELESS):
            raise ValueError(
                f"pipeline step {type(s).__name__} learns from the data without a privacy "
                "statement; only privlearn estimators (with privacy_) and stateless transformers "
                "(Normalizer, FunctionTransformer) may see the private rows"
            )
    if not found:
        raise ValueError("the estimator has no private step (no privacy_ after fit)")
    return found


def _cost(est: Any, orders: np.ndarray) -> tuple[np.ndarray, float | None, float, str | None]:
    """(RDP curve, pure epsilon or None, epsilon, relation) of a fitted candidate.

    The curve must be a function of public inputs only: a statement planned from a noisy
    count of the private rows has a curve that depends on the count, which Theorem 2 cannot
    take as a fixed bound, so it is refused.
    """
    curve = np.zeros(orders.shape)
    pure: float | None = 0.0
    total_eps = 0.0
    relation: str | None = None
    for step in _private_steps(est):
        p = step.privacy_
        eps = float(p.epsilon)
        delta = float(getattr(p, "delta", 0.0))
        if not math.isfinite(eps):
            raise ValueError(f"candidate {type(step).__name__} is not private (epsilon = inf)")
        size = getattr(p, "size", None)
        if size is not None and getattr(size, "source", None) == "noisy_count":
            raise ValueError(
                f"candidate {type(step).__name__} drew its own noisy count of the private rows, "
                "so its RDP curve depends on the data and is no fixed per-repetition bound for "
                "the tuning theorem (the search counts its training split once and gives the "
                "count to the candidates through n_samples)"
            )
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
        elif stmt is not None and stmt.accountant == "rdp" and stmt.events:
            acc = RDPAccountant(orders, neighboring=stmt.neighboring)
            for e in stmt.events:
                acc.compose(e)
            curve = curve + acc.rdp
            pure = None
        else:
            raise ValueError(
                f"candidate {type(step).__name__}: privacy_ is neither pure DP nor an RDP "
                "statement with its events; it cannot be accounted for"
            )
    return curve, pure, total_eps, relation


def _draws_count(est: Any, X: np.ndarray, y: np.ndarray) -> bool:
    """Whether a fit of ``est`` plans from its own noisy count (a dry run on public rows)."""
    dry = clone(est)
    _set_matching(dry, "seed", 0)
    dry.fit(X, y)
    for step in _private_steps(dry):
        size = getattr(step.privacy_, "size", None)
        if getattr(size, "source", None) == "noisy_count":
            return True
    return False


def _set_matching(est: Any, name: str, value: Any) -> None:
    """Set every parameter called ``name`` (or ``*__name``) of ``est``."""
    keys = [k for k in est.get_params(deep=True) if k == name or k.endswith("__" + name)]
    if keys:
        est.set_params(**{k: value for k in keys})


class PrivateHyperparameterSearch(BaseEstimator):
    """Differentially private hyperparameter search over privlearn estimators.

    Papernot & Steinke (2022): ``K`` independent repetitions, ``K`` random and hidden; each
    repetition picks a configuration uniformly at random from ``param_grid``, fits it on the
    training split of the private rows and releases the number of correct validation
    predictions with exact discrete Laplace noise; the repetition with the largest noisy
    count (ties broken by an independent uniform draw) is the output. The whole run is
    accounted in ``privacy_``.

    Parameters
    ----------
    estimator : estimator
        A privlearn classifier (or a scikit-learn Pipeline of stateless transformers and
        privlearn steps) whose ``privacy_`` after ``fit`` is pure DP, or an RDP statement whose
        curve depends on public inputs only (a replace-one sampler; a fit planned from a noisy
        count of the rows is refused, see Notes). Candidates must not set ``n_samples``.
    param_grid : dict or list of dict
        The candidate configurations (:class:`sklearn.model_selection.ParameterGrid`).
    epsilon : float or None, default=None
        ``None``: each candidate runs with its own budget (its parameters) and ``privacy_``
        reports the total. A float: the search's target total; the per-repetition pure epsilon
        is solved from it (:func:`~privlearn.model_selection.repetitions.plan_repetition_epsilon`)
        and set as every candidate's ``epsilon``: only for pure-DP candidates.
    delta : float or None, default=None
        Delta of the total's conversion; ``None``: :data:`privlearn.accounting.DEFAULT_DELTA`.
    repetitions : {"truncated_negative_binomial", "poisson"}, default="truncated_negative_binomial"
        Distribution of ``K``.
    eta : float, default=1.0
        Shape of the truncated negative binomial, ``> -1`` (1: geometric, 0: logarithmic).
    mean_repetitions : float, default=10.0
        ``E[K]`` (``gamma`` is solved from it; Poisson: ``mu``).
    validation_fraction : float, default=0.2
        Each row goes to the validation split independently with this probability.
    score_epsilon : float or None, default=None
        Epsilon of one noisy validation count (scale ``1/score_epsilon``; the count of
        correct predictions has sensitivity 1). ``None``: the per-repetition pure epsilon
        (with parallel composition the score then adds nothing); required for RDP candidates.
    composition : {"parallel", "sequential"}, default="parallel"
        How training and score combine in one repetition (see
        :func:`~privlearn.model_selection.repetitions.repetition_rdp`).
    orders : array_like, default DEFAULT_ORDERS
        RDP orders.
    seed : int or None, default=None
        Key of the search's randomness (split, K, picks) and of the candidates' seeds;
        ``None``: from the operating system (right for a release).
    ledger : object, optional
        ``ledger.spend(epsilon, delta, label=...)`` with the search's total before any row is
        used for training (a :class:`privlearn.accounting.PrivacyLedger` refuses a spend over
        its cap with ``BudgetExceededError``).

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
    (zeros with the training split's shape) before any private row is used; since they depend
    on public inputs only, each real fit's statement must equal the planned one (checked; a
    mismatch is an error). The noisy count is ``score_epsilon``-DP; training and score see
    disjoint rows, so one repetition costs their max ("parallel"). The total is Theorem 2 of
    Papernot & Steinke (truncated negative binomial K; with pure-DP repetitions also the
    ``(2 + eta) eps`` bound, ``3 eps`` for geometric K as in Liu & Talwar 2019) or Theorem 6
    (Poisson K), converted to ``(epsilon, delta)`` with
    :func:`privlearn.accounting.rdp_to_epsilon`. The theorems cover the best repetition's
    output (model, configuration, noisy score) only: ``K`` and the other runs are not
    released (the search keeps no ``n_repetitions_``; note that the run time reveals ``K``).
    The split is drawn once and shared by every repetition; the theorems apply to ``Q`` on
    the pair (training, validation) and the split is a data-independent mixture.

    A fit planned from a noisy count of its rows (add/remove-one Gaussian DP-SGD without a
    public size) has an RDP curve that depends on the count; no fixed per-repetition bound is
    available, so such candidates are refused.

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
        count_epsilon: float = 0.05,
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
        self.count_epsilon = count_epsilon

    # ---- parameters -----------------------------------------------------------------------
    def _check_params(self) -> dict[str, Any]:
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
        eta = gamma = None
        if self.repetitions == "truncated_negative_binomial":
            mean = _rep._mean(self.mean_repetitions, "mean_repetitions", 1.0)
            eta = _rep._eta(self.eta)
            gamma = _rep.negative_binomial_gamma(eta, mean)
        else:
            mean = _rep._mean(self.mean_repetitions, "mean_repetitions", 0.0)
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
        for params in candidates:
            for key, value in params.items():
                if (key == "n_samples" or key.endswith("__n_samples")) and value is not None:
                    raise ValueError("candidates must not declare n_samples (the split sets it)")
        for key, value in self.estimator.get_params(deep=True).items():
            if (key == "n_samples" or key.endswith("__n_samples")) and value is not None:
                raise ValueError(
                    "the estimator must not declare n_samples: its training rows are a random "
                    "split of the data"
                )
        return dict(
            candidates=candidates, delta=delta, frac=frac, eta=eta, gamma=gamma, mean=mean,
            score_eps=score_eps, target=target, orders=orders,
        )  # fmt: skip

    # ---- fitting ---------------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> PrivateHyperparameterSearch:
        """Run the search (spends ``privacy_.epsilon``, ``privacy_.delta``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        cfg = self._check_params()
        X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
        n, d = X.shape
        seed = self.seed
        # 1. the split: one independent draw per row, independent of the data
        val = Stream(seed, stream=_STREAM_SPLIT).poisson_mask(0, n, cfg["frac"])
        train_idx, val_idx = np.flatnonzero(~val), np.flatnonzero(val)
        if train_idx.size < 2 or val_idx.size < 1:
            raise ValueError("the data is too small for a training and a validation split")
        # 2. plan: each candidate's cost, read from its accountant on a public stand-in
        estimators = []
        for params in cfg["candidates"]:
            est = clone(self.estimator).set_params(**params)
            estimators.append(est)
        rep_pure_target = None
        if cfg["target"] is not None:
            rep_pure_target = _rep.plan_repetition_epsilon(
                cfg["target"], cfg["delta"], distribution=self.repetitions, eta=cfg["eta"],
                gamma=cfg["gamma"], mu=cfg["mean"], orders=cfg["orders"],
            )  # fmt: skip
            for est in estimators:
                _set_matching(est, "epsilon", rep_pure_target)
        stand_in = np.zeros((train_idx.size, d))
        stand_in_y = np.resize(np.array([0, 1]), train_idx.size)
        # Candidates that keep the size private (add/remove-one sampling) would each draw a
        # noisy count of their rows; the theorem needs curves fixed before the repetitions, so
        # the search counts the training split once (count_epsilon, charged first) and gives
        # the count to every candidate (n_samples=DatasetSize: planned, not re-counted).
        size = None
        if any(_draws_count(est, stand_in, stand_in_y) for est in estimators):
            count_eps = as_real(self.count_epsilon, "count_epsilon")
            if not (math.isfinite(count_eps) and count_eps > 0.0):
                raise ValueError(f"count_epsilon must be finite and > 0, got {count_eps}")
            count_seed = None if seed is None else int(seed) ^ 0x5E05
            size = resolve_size(
                train_idx.size, epsilon=count_eps, seed=count_seed, ledger=self.ledger
            )
            for est in estimators:
                _set_matching(est, "n_samples", size)
        plans = []
        for est in estimators:
            dry = clone(est)
            _set_matching(dry, "seed", 0)
            plans.append(_cost(dry.fit(stand_in, stand_in_y), cfg["orders"]))
        relations = {p[3] for p in plans if p[3] is not None}
        if len(relations) > 1:
            raise ValueError("the candidates use different neighbouring relations")
        pures = [p[1] for p in plans]
        all_pure = all(p is not None for p in pures)
        if rep_pure_target is not None and not all_pure:
            raise ValueError(
                "epsilon= (a target total) is planned for pure-DP candidates only; for RDP "
                "candidates give each its budget (epsilon/delta parameters) and leave epsilon=None"
            )
        score_eps = cfg["score_eps"]
        if score_eps is None:
            if not all_pure:
                raise ValueError("score_epsilon is required when a candidate is not pure DP")
            score_eps = max(pures)  # type: ignore[type-var]
        score_rdp = rdp_pure_dp(score_eps, cfg["orders"])
        rep_rdp = _rep.repetition_rdp([p[0] for p in plans], score_rdp, self.composition)
        rep_pure = None
        if all_pure:
            train_pure = max(pures)  # type: ignore[type-var]
            rep_pure = (
                max(train_pure, score_eps)
                if self.composition == "parallel"
                else train_pure + score_eps
            )
        eps, delta, order = _rep.repeat_epsilon(
            cfg["orders"], rep_rdp, cfg["delta"], distribution=self.repetitions, eta=cfg["eta"],
            gamma=cfg["gamma"], mu=cfg["mean"], pure_epsilon=rep_pure,
        )  # fmt: skip
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
        privacy = SearchPrivacy(
            epsilon=eps, delta=delta, theorem=theorem, distribution=self.repetitions,
            eta=cfg["eta"], gamma=cfg["gamma"], mean_repetitions=cfg["mean"],
            repetition_epsilon=rep_pure, candidate_epsilons=tuple(p[2] for p in plans),
            score_epsilon=score_eps, composition=self.composition,
            orders=tuple(cfg["orders"].tolist()), repetition_rdp=tuple(rep_rdp.tolist()),
            best_order=order, neighboring=relations.pop() if relations else None,
            public_inputs="the number of features, the candidate grid, the search's parameters "
            "and the seed",
        )  # fmt: skip
        # 3. charge the whole search before any private row is used for training (the count,
        # if any, was charged before it was drawn)
        if self.ledger is not None:
            self.ledger.spend(eps, delta, label="private hyperparameter search")
        if size is not None:
            privacy = dataclasses.replace(
                privacy, epsilon=privacy.epsilon + size.epsilon, size=size
            )
        # 4. the repetitions
        k = _rep.sample_repetitions(
            float(Stream(seed, stream=_STREAM_K).uniform(0, 1)[0]), distribution=self.repetitions,
            eta=cfg["eta"], gamma=cfg["gamma"], mu=cfg["mean"],
        )  # fmt: skip
        picks = Stream(seed, stream=_STREAM_PICK)
        seeds = Stream(seed, stream=_STREAM_SEEDS)
        Xt, yt, Xv, yv = X[train_idx], y[train_idx], X[val_idx], y[val_idx]
        best: tuple[float, float, int, Any, int] | None = None
        for r in range(k):
            c = int(picks.choice_without_replacement(r, len(estimators), 1)[0])
            tie = float(seeds.uniform(3 * r, 1)[0])  # independent tie-breaker, part of Q
            fit_seed, score_seed = None, None
            if seed is not None:
                words = seeds.uniform(3 * r + 1, 2)
                fit_seed, score_seed = int(words[0] * 2**53), int(words[1] * 2**53)
            est = clone(estimators[c])
            _set_matching(est, "seed", fit_seed)
            est.fit(Xt, yt)
            curve, pure, ran_eps, _ = _cost(est, cfg["orders"])
            planned = plans[c]
            same = np.allclose(curve, planned[0], rtol=1e-9, atol=0.0) and math.isclose(
                ran_eps, planned[2], rel_tol=1e-9
            )
            if not same:
                raise RuntimeError(
                    f"candidate {cfg['candidates'][c]} ran with epsilon {ran_eps:.6g} but "
                    f"{planned[2]:.6g} was planned and charged: its statement depends on more "
                    "than the public inputs"
                )
            from privlearn.mechanisms import discrete_laplace

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
                stacklevel=2,
            )
            self.best_estimator_ = self.best_params_ = self.best_score_ = None
        else:
            self.best_score_ = best[0]
            self.best_params_ = dict(cfg["candidates"][best[2]])
            self.best_estimator_ = best[3]
        return self

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
