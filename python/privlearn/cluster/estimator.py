"""``DPKMeans``: differentially private k-means by grid max cover (Chaturvedi, Nguyen & Xu
2021) or by the Balcan et al. (2017) baseline."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans

from privlearn._checks import as_index
from privlearn.accounting import (
    Composed,
    GaussianEvent,
    LaplaceEvent,
    PrivacyLedger,
    PrivacyStatement,
    PureDPEvent,
)
from privlearn.cluster import balcan as _balcan
from privlearn.cluster._common import (
    STREAM_INIT,
    STREAM_JL,
    STREAM_PICKS,
    SeedSource,
    assign,
    check_data,
    gaussian_sigma,
    jl_project,
    kmeans_cost,
    noisy_average,
    resolve_radius,
)
from privlearn.cluster.maxcover import (
    default_picks,
    default_radii,
    maxcover_candidates,
    maxcover_pick_epsilon,
)
from privlearn.mechanisms import discrete_laplace

__all__ = ["DEFAULT_SPLIT", "DPKMeans", "proxy_counts"]

#: Default budget split of the max-cover method (fractions of epsilon; delta: "delta_*").
#: Chosen by experiment on the synthetic mixture (n = 50,000, k in {8, 64}, 2 seeds; mean cost
#: at k = 64: 2.96e6 for (0.5, 0.2, 0.15, 0.15), 2.61e6 for (0.3, 0.1, 0.3, 0.3), 2.49e6 for
#: this one). The final noisy averaging in the original space dominates the cost (its Gaussian
#: noise grows with the dimension), so the last DP Lloyd round gets the largest share.
DEFAULT_SPLIT: dict[str, float] = {
    "maxcover": 0.3,
    "proxy": 0.1,
    "average": 0.15,
    "lloyd": 0.45,
    "delta_maxcover": 0.5,
    "delta_average": 0.25,
    "delta_lloyd": 0.25,
}
_METHODS = ("maxcover", "balcan")


def proxy_counts(
    Y: np.ndarray, candidates: np.ndarray, epsilon: float, seed: int | None
) -> np.ndarray:
    """Noisy proxy multiplicities (Algorithm 2, step 3): for each candidate ``c`` the number of
    points whose nearest candidate is ``c``, plus exact discrete Laplace noise of scale
    ``1/epsilon`` (the count vector has L1 sensitivity 1 under add/remove: ``epsilon``-DP,
    Lemma 2.3), clamped at 0 (post-processing). ``epsilon = inf``: exact counts."""
    counts = np.bincount(assign(Y, candidates), minlength=candidates.shape[0]).astype(np.int64)
    if math.isinf(epsilon):
        return counts.astype(np.float64)
    noisy = np.asarray(discrete_laplace(counts, 1.0 / epsilon, seed), dtype=np.float64)
    return np.maximum(noisy, 0.0)


class DPKMeans(ClusterMixin, BaseEstimator):
    """Differentially private k-means.

    ``method="maxcover"``: Chaturvedi, Nguyen & Xu (2021), Algorithm 2:

    1. a data-independent Gaussian (Johnson-Lindenstrauss) map to ``proj_dim`` dimensions,
       divided by the public radius ``Lambda`` and rows projected into the unit ball;
    2. for radii ``1, 1/2, ..., 2**-(L-1)``, ``L = ceil(log2(n)/4) + 1``
       (:func:`~privlearn.cluster.maxcover.default_radii`),
       a private greedy max cover on the grid of unit ``grid_factor * r / sqrt(p)`` with
       ``picks`` picks per radius (:func:`~privlearn.cluster.maxcover.default_picks`,
       ``k ceil(log2(n)/2)``), every pick by the exponential mechanism over the whole grid
       (Claim 4.2); the per-pick parameter comes from the Gupta et al. (2010) set-cover bound
       (:func:`~privlearn.cluster.maxcover.maxcover_pick_epsilon`);
    3. the proxy data set: candidates with noisy counts (:func:`proxy_counts`);
    4. scikit-learn ``KMeans`` with ``sample_weight`` on the proxy, the points assigned to the
       nearest of its ``k`` centres in the projected space, centres released in the original
       space by noisy averaging (Algorithm 1), then ``lloyd_steps`` DP Lloyd rounds (Section 7).

    ``method="balcan"``: :mod:`privlearn.cluster.balcan`.

    Parameters
    ----------
    n_clusters : int, default=8
    epsilon : float, default=1.0
        Total epsilon (``inf``: no privacy, no noise; the greedy picks the best cover).
    delta : float, default=1e-6
    method : {"maxcover", "balcan"}
    radius : float or None
        Public radius ``Lambda``: the data lie in ``B(0, Lambda)``. ``None`` takes it from the
        data with a :class:`~privlearn.exceptions.PrivacyLeakWarning`.
    clip : bool, default=False
        Project rows outside ``B(0, Lambda)`` onto it instead of raising ``ValueError``.
    proj_dim : int or None
        Projected dimension ``p`` (default ``min(d, 4)``; the paper's theory uses
        ``O(log n)``, its experiments a smaller subspace; the grid work grows like
        ``(2 pi e)^(p/2)``).
    grid_factor : float, default=1.0
    radii, picks : optional overrides of the defaults above.
    lloyd_steps : int, default=1
    budget_split : dict, optional
        Overrides of :data:`DEFAULT_SPLIT` (max-cover) or
        :data:`~privlearn.cluster.balcan.BALCAN_SPLIT` (Balcan); fractions must sum to 1.
    n_threads : int or None
    seed : int or None, default=None
        ``None``: OS entropy (production); an int makes the fit reproducible.
    backend : {"core", "reference"}
        The max-cover routine: C++ core or the numpy twin (identical picks).

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d)
        The private centres.
    labels_ : ndarray (n,)
        Nearest private centre of each training point. Not private (a function of each row).
    privacy_ : PrivacyStatement
        Total ``(epsilon, delta)`` (basic composition of the ledger's entries) and the events.
    ledger_ : PrivacyLedger or None
    n_candidates_ : int
        Distinct candidate centres (max cover: the set ``C``; Balcan: the candidate set).
    inertia_ : float
        k-means cost of the training data at ``cluster_centers_`` (not private; a diagnostic).
    maxcover_ : MaxCoverResult or None
        With ``epsilon = inf`` only: the greedy's picks and covers (diagnostics).
    proj_dim_, radius_ : int, float
    """

    def __init__(
        self,
        n_clusters: int = 8,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        method: str = "maxcover",
        radius: float | None = None,
        *,
        clip: bool = False,
        proj_dim: int | None = None,
        grid_factor: float = 1.0,
        radii: list[float] | None = None,
        picks: int | None = None,
        lloyd_steps: int = 1,
        budget_split: dict[str, float] | None = None,
        n_threads: int | None = None,
        seed: int | None = None,
        backend: str = "core",
    ) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.radius = radius
        self.clip = clip
        self.proj_dim = proj_dim
        self.grid_factor = grid_factor
        self.radii = radii
        self.picks = picks
        self.lloyd_steps = lloyd_steps
        self.budget_split = budget_split
        self.n_threads = n_threads
        self.seed = seed
        self.backend = backend

    # ---- validation ------------------------------------------------------------------------
    def _check_params(self, n: int, d: int) -> None:
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {self.method!r}")
        if self.backend not in ("core", "reference"):
            raise ValueError(f"backend must be 'core' or 'reference', got {self.backend!r}")
        if isinstance(self.n_clusters, bool) or not isinstance(self.n_clusters, (int, np.integer)):
            raise TypeError(f"n_clusters must be an int, got {type(self.n_clusters).__name__}")
        if not 1 <= self.n_clusters <= n:
            raise ValueError(f"n_clusters must lie in [1, n_samples={n}], got {self.n_clusters}")
        eps = float(self.epsilon)
        if not eps > 0.0 or math.isnan(eps):
            raise ValueError(f"epsilon must be > 0 (or inf), got {self.epsilon}")
        delta = float(self.delta)
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")
        if self.radius is not None and not (
            float(self.radius) > 0.0 and math.isfinite(self.radius)
        ):
            raise ValueError(f"radius must be a finite number > 0, got {self.radius}")
        if not float(self.grid_factor) > 0.0:
            raise ValueError(f"grid_factor must be > 0, got {self.grid_factor}")
        as_index(self.lloyd_steps, "lloyd_steps", upper=1000)
        if self.proj_dim is not None:
            as_index(self.proj_dim, "proj_dim", lower=1, upper=16)

    def _split(self) -> dict[str, float]:
        base = dict(DEFAULT_SPLIT if self.method == "maxcover" else _balcan.BALCAN_SPLIT)
        if self.method == "balcan":
            base.update({"delta_candidates": 1 / 3, "delta_recovery": 1 / 3, "delta_lloyd": 1 / 3})
        if self.budget_split:
            unknown = set(self.budget_split) - set(base)
            if unknown:
                raise ValueError(
                    f"unknown budget_split keys {sorted(unknown)}; known: {sorted(base)}"
                )
            base.update({k: float(v) for k, v in self.budget_split.items()})
        eps_keys = [k for k in base if not k.startswith("delta_")]
        if self.lloyd_steps == 0:
            # no Lloyd round: its share goes to the averaging / recovery step
            target = "average" if self.method == "maxcover" else "recovery"
            base[target] += base.pop("lloyd")
            base[f"delta_{'average' if target == 'average' else 'recovery'}"] += base.pop(
                "delta_lloyd"
            )
            eps_keys.remove("lloyd")
        for group in (eps_keys, [k for k in base if k.startswith("delta_")]):
            total = math.fsum(base[k] for k in group)
            if any(base[k] <= 0 for k in group) or abs(total - 1.0) > 1e-9:
                raise ValueError(f"budget_split fractions {group} must be > 0 and sum to 1")
        return base

    # ---- fitting -----------------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> DPKMeans:
        """Fit on ``X`` (n, d); spends ``(epsilon, delta)`` (see ``privacy_``)."""
        del y
        X = check_data(X)
        n, d = X.shape
        self._check_params(n, d)
        X, radius = resolve_radius(X, self.radius, bool(self.clip))
        eps, delta = float(self.epsilon), float(self.delta)
        private = not math.isinf(eps)
        split = self._split()
        ledger = PrivacyLedger(eps, delta) if private else None
        seeds = SeedSource(self.seed)
        p = min(d, 4) if self.proj_dim is None else int(self.proj_dim)
        Y, _ = jl_project(X, radius, p, seeds.substream(STREAM_JL))
        part = {k: (eps * v if not k.startswith("delta_") else delta * v) for k, v in split.items()}
        if not private:
            part = {k: (math.inf if not k.startswith("delta_") else v) for k, v in part.items()}
        events: list[Any] = []
        k = int(self.n_clusters)
        if self.method == "maxcover":
            centers, n_cand = self._fit_maxcover(X, Y, radius, part, seeds, ledger, events)
        else:
            centers, n_cand = self._fit_balcan(X, Y, radius, part, seeds, ledger, events)
        for step in range(int(self.lloyd_steps)):
            per = part["lloyd"] / self.lloyd_steps
            per_d = part["delta_lloyd"] / self.lloyd_steps
            labels = assign(X, centers)
            centers = noisy_average(
                X, labels, k, radius, per, per_d, seeds, ledger, f"lloyd {step}"
            )
            if private:
                events.append(self._average_events(per, per_d, radius, d))
        self.cluster_centers_ = centers
        self.labels_ = assign(X, centers)
        self.inertia_ = kmeans_cost(X, centers)
        self.n_candidates_ = int(n_cand)
        self.proj_dim_ = p
        self.radius_ = radius
        self.ledger_ = ledger
        self.n_features_in_ = d
        if private:
            spent = ledger.spent
            self.privacy_ = PrivacyStatement(
                epsilon=spent.epsilon,
                delta=spent.delta,
                accountant="pure (basic composition; Gupta et al. 2010 for the greedy cover)",
                events=tuple(events),
                neighboring="add_remove",
            )
        else:
            self.privacy_ = PrivacyStatement(math.inf, 0.0, "none (epsilon=inf: not private)")
        return self

    @staticmethod
    def _average_events(eps: float, delta: float, radius: float, d: int) -> Composed:
        """Noisy averaging: discrete Laplace counts (scale 2/eps) and Gaussian sums."""
        sigma = gaussian_sigma(radius, eps / 2.0, delta, d)
        return Composed((LaplaceEvent(2.0 / eps), GaussianEvent(sigma / radius)))

    def _fit_maxcover(self, X, Y, radius, part, seeds, ledger, events):  # type: ignore[no-untyped-def]
        n = X.shape[0]
        k = int(self.n_clusters)
        radii = default_radii(n) if self.radii is None else [float(r) for r in self.radii]
        picks = default_picks(k, n) if self.picks is None else int(self.picks)
        private = ledger is not None
        if private:
            eps_pick = maxcover_pick_epsilon(part["maxcover"], part["delta_maxcover"], len(radii))
            ledger.spend(part["maxcover"], part["delta_maxcover"], label="max cover")
            events.append(PureDPEvent(part["maxcover"]))
        else:
            eps_pick = math.inf
        key = seeds.substream(STREAM_PICKS).key
        res = maxcover_candidates(
            Y,
            radii,
            eps_pick=eps_pick,
            key=key,
            stream=STREAM_PICKS,
            picks=picks,
            grid_factor=float(self.grid_factor),
            backend=self.backend,
            n_threads=self.n_threads,
        )
        cand = np.unique(res.centers, axis=0)
        self.maxcover_ = res if not private else None
        if private:
            ledger.spend(part["proxy"], 0.0, label="proxy counts")
            events.append(LaplaceEvent(1.0 / part["proxy"]))
        weights = proxy_counts(Y, cand, part["proxy"], seeds() if private else 0)
        # KMeans needs k samples of positive weight: a tiny floor (post-processing)
        weights = weights + 1e-6
        km = KMeans(n_clusters=min(k, cand.shape[0]), n_init=3, random_state=seeds() % (2**31))
        km.fit(cand, sample_weight=weights)
        centers_proj = km.cluster_centers_
        labels = assign(Y, centers_proj)
        centers = noisy_average(
            X, labels, k, radius, part["average"], part["delta_average"], seeds, ledger, "average"
        )
        if private:
            events.append(
                self._average_events(part["average"], part["delta_average"], radius, X.shape[1])
            )
        return centers, cand.shape[0]

    def _fit_balcan(self, X, Y, radius, part, seeds, ledger, events):  # type: ignore[no-untyped-def]
        k = int(self.n_clusters)
        private = ledger is not None
        cand = _balcan.balcan_candidates(
            Y, part["candidates"], part["delta_candidates"], seeds, ledger
        )
        if private:
            events.append(PureDPEvent(part["candidates"]))
        if cand.shape[0] < k:  # pad with data-independent uniform points of the unit ball
            extra = k - cand.shape[0]
            stream = seeds.substream(STREAM_INIT)
            g = stream.normal(1 << 30, extra * Y.shape[1]).reshape(extra, Y.shape[1])
            u = stream.uniform(1 << 31, extra) ** (1.0 / Y.shape[1])
            g = g / np.linalg.norm(g, axis=1, keepdims=True) * u[:, None]
            cand = np.concatenate([cand, g], axis=0)
        centres_proj = _balcan.balcan_local_search(Y, cand, k, part["local_search"], seeds, ledger)
        if private:
            events.append(PureDPEvent(part["local_search"]))
        centers = _balcan.balcan_recover(
            X, Y, centres_proj, radius, part["recovery"], part["delta_recovery"], seeds, ledger
        )
        if private:
            events.append(
                self._average_events(part["recovery"], part["delta_recovery"], radius, X.shape[1])
            )
        return centers, cand.shape[0]

    # ---- use -------------------------------------------------------------------------------
    def _check_fitted_X(self, X: Any) -> np.ndarray:
        if not hasattr(self, "cluster_centers_"):
            raise ValueError("this DPKMeans is not fitted yet: call fit first")
        X = check_data(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the model {self.n_features_in_}")
        return X

    def predict(self, X: Any) -> np.ndarray:
        """Index of the nearest private centre of each row."""
        return assign(self._check_fitted_X(X), self.cluster_centers_)

    def score(self, X: Any, y: Any = None) -> float:
        """The k-means cost ``sum_i min_j ||x_i - c_j||**2`` of ``X`` (lower is better; unlike
        scikit-learn's ``KMeans.score``, which returns its negative)."""
        del y
        return kmeans_cost(self._check_fitted_X(X), self.cluster_centers_)
