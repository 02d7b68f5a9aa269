"""``DPKMeans``: differentially private k-means by grid max cover (Chaturvedi, Nguyen & Xu
2021) or by the Balcan et al. (2017) baseline.

Under the add/remove-one statement the number of rows is private: the schedule (number of
radii and of picks per radius, Balcan et al.'s tree depth) is derived from a declared public
size or from a noisy count (:func:`privlearn.accounting.resolve_size`), and the fitted
estimator keeps only what the guarantee covers (the centres, the statement, the public shape).

Here: :class:`DPKMeans` (its parameter checks, public caps and the fit's driver: budget,
noisy count, schedule, noise, statement). The pieces it drives live in the package's modules
named for what they hold: ``_inputs`` (``X`` and the radius), ``_ball`` (row norms, clipping),
``_projection`` (the JL map), ``_assignment`` (nearest centres, cost), ``_noisy_average``
(cluster sums, noisy centres: the private Lloyd round), ``_proxy`` (the proxy data set),
``_budget`` (the budget splits), ``_seeds`` (stream ids, sub-seeds), ``_statement`` (the
statement, its text, the diagnostics), ``_rows`` (the data operations, shared with the Dask
back-end); the algorithms in ``maxcover``, ``balcan``, ``lsh_coreset`` and ``private_scale``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils import Tags

from privlearn._checks import as_index, as_real, as_threads
from privlearn.accounting import (
    DEFAULT_DELTA,
    SIZE_EPSILON_FRACTION,
    Composed,
    DatasetSize,
    GaussianEvent,
    LaplaceEvent,
    PrivacyLedger,
    PureDPEvent,
    SelfComposed,
    public_size,
    resolve_size,
)
from privlearn.backends import backend_for
from privlearn.cluster import balcan as _balcan
from privlearn.cluster._assignment import assign, kmeans_cost
from privlearn.cluster._budget import DEFAULT_SPLIT, PAPER_SPLIT, budget_split
from privlearn.cluster._inputs import check_data
from privlearn.cluster._lattice_slack import gdp_lattice_epsilon
from privlearn.cluster._noisy_average import (
    average_events,
    gaussian_sigma,
    noisy_centres,
    noisy_centres_planned,
)
from privlearn.cluster._projection import jl_matrix
from privlearn.cluster._proxy import noisy_counts, proxy_counts, proxy_threshold, proxy_weights
from privlearn.cluster._rows import _LocalRows
from privlearn.cluster._seeds import STREAM_INIT, STREAM_JL, STREAM_PICKS, STREAM_SIZE, SeedSource
from privlearn.cluster._statement import (
    KMeansDiagnostics,
    KMeansPrivacyStatement,
    plan_text,
    public_inputs,
)
from privlearn.cluster.lsh_coreset import (
    LLOYD_COUNT_SHARE,
    LSH_BRANCH_SD,
    LSH_CELL_THRESHOLD_SD,
    LSH_DEPTH,
    LSH_MAX_NODES,
    LSH_THRESHOLD_SD,
    MAX_DEPTH,
    STREAM_LSH,
    LSHSchedule,
    gaussian_centres,
    gdp_mu,
    grow_tree,
    lattice_sigma,
    lloyd_keep_threshold,
    lsh_hyperplanes,
    lsh_split,
    release_coreset,
)
from privlearn.cluster.maxcover import (
    MaxCoverPlan,
    MaxCoverResult,
    count_offsets,
    default_picks,
    default_radii,
    maxcover_pick_epsilon,
    plan_maxcover,
)
from privlearn.fixed_point import fixed_point_exponent, fixed_point_value
from privlearn.mechanisms._bits import spend
from privlearn.mechanisms.gaussian import analytic_gaussian_epsilon
from privlearn.progress import as_verbose

__all__ = [
    "DEFAULT_SPLIT",
    "MAX_CLUSTERS",
    "MAX_GRID_FACTOR",
    "MAX_LSH_MU",
    "PAPER_SPLIT",
    "DPKMeans",
    "proxy_counts",
    "proxy_threshold",
    "proxy_weights",
    "sklearn_expected_failures",
]

_METHODS = ("lsh", "maxcover", "balcan")
#: Accountants of the max-cover method: "rdp" (:func:`~privlearn.cluster.maxcover.
#: plan_maxcover`) or "paper" (basic composition of the paper's stages, Gupta et al. for the
#: greedy cover, unthresholded proxy counts: the form of Chaturvedi et al. 2021).
_ACCOUNTANTS = ("rdp", "paper")

#: Largest ``n_clusters`` :class:`DPKMeans` accepts: a public cap, so that refusing does not
#: depend on the private number of rows. Every centre is a noisy average (a count with
#: discrete Laplace noise of scale ``2 / eps_avg`` and a sum with Gaussian noise), so a centre
#: needs well over ``1 / eps_avg`` rows to be more than noise; a thousand centres already need
#: hundreds of thousands of rows per unit of epsilon, while the cost grows faster than ``k``
#: (``k log N`` grid picks per radius, a weighted k-means with ``k`` centres on the
#: candidates, ``k`` noisy averages per round; measured on 300 rows in 3-D: 1.7 s at
#: ``k = 1024``, 93 s at ``k = 4096``). ``k`` is compared with the number of rows only when
#: that number is public (``n_samples=`` declared, or ``epsilon=inf``).
MAX_CLUSTERS = 1024
#: Largest ``grid_factor``: the grid unit is ``grid_factor * r / sqrt(p)``, so every location
#: lies within ``grid_factor * r / 2`` of a grid point; above 2 a point may have no grid point
#: within the threshold radius ``r`` and the greedy's covers lose their meaning.
MAX_GRID_FACTOR = 2.0
_MAX_PICKS = 1 << 20
#: Largest offset set (grid points within a threshold radius of a point, Claim 4.1) a fit
#: accepts: every point visits all of them at every radius, so the grid work is about
#: ``n * offsets * len(radii)``; 2**22 allows ``grid_factor >= 0.07`` at ``proj_dim=4`` and the
#: default ``grid_factor=1`` up to ``proj_dim=9``. A public cap (a function of ``grid_factor``
#: and ``proj_dim`` only), checked before any spend.
MAX_FIT_OFFSETS = 1 << 22
#: Largest ``picks * len(radii)`` (the candidate set of the greedy cover).
_MAX_TOTAL_PICKS = 1 << 22
#: The smallest threshold radius a default schedule can have (``default_radii`` of a planning
#: size below ``2**64``: at most 17 radii), for the grid-size check before any spend.
_MIN_DEFAULT_RADIUS = 2.0**-16
#: Largest GDP ``mu`` of a ``method="lsh"`` fit (the private scale's releases take at most
#: ``mu <= 64`` each; at ``mu = 64`` a unit-sensitivity count has noise sd 1/64). A larger
#: ``epsilon`` is capped to :func:`max_lsh_epsilon` with a warning: the fit spends less than
#: asked, and ``privacy_`` says what it spent.
MAX_LSH_MU = 64.0
#: Work budget (``restarts * coreset points * k * d``) of the weighted k-means on the LSH
#: coreset (:func:`lsh_kmeans_restarts`).
LSH_KMEANS_WORK = 1 << 26


def lsh_kmeans_restarts(n_points: int, k: int, d: int) -> int:
    """Restarts (``n_init``) of the weighted k-means on an LSH coreset of ``n_points`` cells:
    as many as fit in :data:`LSH_KMEANS_WORK`, between 3 and 30 (a function of released and
    public numbers; the k-means is post-processing, so restarts cost no privacy).

    A small cluster far from the bulk (2% of a 70,000 x 5 table) is found by a k-means++
    start only 10-30% of the time; with 3 restarts the coreset's k-means missed it in about
    half the fits at every epsilon (1.2x the optimum at k = 2, issue 30). Small coresets
    (low ``k * d``) get up to 30 restarts; large ones (MNIST, k = 16: 3 restarts) keep the
    former cost.
    """
    work = max(1, int(n_points) * int(k) * int(d))
    return int(min(30, max(3, LSH_KMEANS_WORK // work)))


def max_lsh_epsilon(delta: float) -> float:
    """The ``epsilon`` of a ``MAX_LSH_MU``-GDP fit at ``delta`` (analytic conversion; about
    2351 at ``delta = 1e-6``): the most a ``method="lsh"`` fit spends."""
    return analytic_gaussian_epsilon(MAX_LSH_MU, delta)


class DPKMeans(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """Differentially private k-means.

    ``method="lsh"`` (the default): a private coreset from a tree of SimHash prefixes
    (:mod:`privlearn.cluster.lsh_coreset`, after Chang, Ghazi, Kumar & Manurangsi 2021):

    1. a private scale (``private_scale=True``,
       :func:`privlearn.cluster.private_scale.private_scale`): a noisy centre and a radius
       from a noisy histogram of the distances on a public lattice;
    2. ``max_depth`` data-independent hyperplanes through the centre give every row a code; the
       prefix tree grows by noisy counts against public thresholds (multiples of the noise);
    3. the noisy counts and sums of the cells (rows clipped to the private ball) form a
       weighted coreset (cells below a public threshold dropped);
    4. weighted k-means++ and Lloyd on the coreset (scikit-learn), then ``lloyd_steps`` private
       Lloyd rounds on the data.

    Every release is Gaussian, so the fit is ``mu``-GDP with ``mu**2`` split by
    ``budget_split`` (:data:`~privlearn.cluster.LSH_SPLIT`) and composed exactly (Dong, Roth &
    Su 2022); ``(epsilon, delta)`` is the analytic conversion. Nothing depends on the number of
    rows (no noisy count is spent). Measured against Google's DP LSH clustering, max cover,
    Balcan et al. and diffprivlib in ``bench/results/kmeans_compare.md``.

    ``method="maxcover"``: Chaturvedi, Nguyen & Xu (2021), Algorithm 2:

    1. a data-independent Gaussian (Johnson-Lindenstrauss) map to ``proj_dim`` dimensions,
       divided by the public radius ``Lambda`` and rows projected into the unit ball;
    2. for radii ``1, 1/2, ..., 2**-(L-1)``, ``L = ceil(log2(N)/4) + 1``
       (:func:`~privlearn.cluster.maxcover.default_radii`),
       a private greedy max cover on the grid of unit ``grid_factor * r / sqrt(p)`` with
       ``picks`` picks per radius (:func:`~privlearn.cluster.maxcover.default_picks`,
       ``k ceil(log2(N)/2)``), every pick by the exponential mechanism over the whole grid
       (Claim 4.2);
    3. the proxy data set: candidates with noisy counts (:func:`proxy_counts`);
    4. scikit-learn ``KMeans`` with ``sample_weight`` on the proxy, the points assigned to the
       nearest of its ``k`` centres in the projected space, centres released in the original
       space by noisy averaging (Algorithm 1), then ``lloyd_steps`` DP Lloyd rounds (Section 7).

    Where the paper leaves the choice open, the default (``accountant="rdp"``, issue 21) is
    tighter: the whole fit (every pick as an ``eps_pick``-bounded-range choice,
    ``eps_pick**2/8``-zCDP; the proxy and averaging counts as pure DP; the lattice Gaussian
    sums) is composed by Renyi DP and calibrated to the caller's budget
    (:func:`~privlearn.cluster.maxcover.plan_maxcover`: at ``epsilon = 1`` each pick gets
    2-7x the Gupta et al. parameter and the final average 2.5-2.8x less noise), and
    released proxy counts below the public threshold ``2 ln(m) / eps_proxy`` (``m``
    candidates, :func:`proxy_threshold`) are zeroed before the weighted k-means
    (post-processing: the empty grid picks no longer pull centres). ``accountant="paper"``
    keeps the paper's form: per-stage ``(epsilon, delta)`` added by basic composition, the
    greedy cover by the Gupta et al. (2010) set-cover bound
    (:func:`~privlearn.cluster.maxcover.maxcover_pick_epsilon`), the split
    :data:`PAPER_SPLIT`, unthresholded proxy counts.

    ``method="balcan"``: the Balcan et al. (2017) baseline (:mod:`privlearn.cluster.balcan`),
    whose hierarchical grids have :func:`~privlearn.cluster.balcan.default_levels` ``(N, p)``
    levels.

    **The data-set size.** The statement is add/remove-one, so the number of rows ``n`` is
    private and ``N`` above is never the exact ``n``: either the caller declares the size
    public (``n_samples=``; it must equal ``len(X)``, nothing is spent and the statement says
    "dataset size treated as public"), or the fit spends
    :data:`~privlearn.accounting.SIZE_EPSILON_FRACTION` of ``epsilon`` on an exact
    discrete-Laplace count ``N = n + DLap(1 / eps_n)`` (:func:`privlearn.accounting.resolve_size`)
    and plans with it. The rest of ``epsilon`` (and all of ``delta``) is split by
    ``budget_split`` as before; the total is the caller's ``(epsilon, delta)``. When nothing
    needs the size (max cover with both ``radii`` and ``picks`` given) no count is drawn.

    Parameters
    ----------
    n_clusters : int, default=8
        ``k``, at most the public cap :data:`MAX_CLUSTERS` (1024). Must not exceed the number
        of rows when the size is public (declared ``n_samples=``, or ``epsilon=inf``); with a
        private size it is not compared with the exact ``n`` (that refusal would itself reveal
        the size): a fit with more centres than rows runs, the surplus centres being noise, and
        warns when ``k`` exceeds the noisy count. Every refusal (this one and those of the
        other parameters: a grid too fine, a budget too small to calibrate a Gaussian step)
        comes before any budget is spent.
    epsilon : float, default=1.0
        Total epsilon, noisy count included (``inf``: no privacy, no noise; the greedy picks
        the best cover and the exact size is used). ``method="lsh"`` spends at most
        :func:`max_lsh_epsilon` (``mu = MAX_LSH_MU`` GDP; about 2351 at ``delta = 1e-6``): a
        larger finite epsilon is capped with a ``UserWarning``.
    delta : float, default=:data:`~privlearn.accounting.DEFAULT_DELTA`
        Total delta (a fixed public number, never a function of ``n``).
    method : {"lsh", "maxcover", "balcan"}, default="lsh"
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
        In ``(0, MAX_GRID_FACTOR]`` (:data:`MAX_GRID_FACTOR` = 2: every location then lies
        within ``r`` of a grid point). The grid's offset set (Claim 4.1), a function of
        ``grid_factor`` and ``proj_dim`` only, must hold at most ``MAX_FIT_OFFSETS`` (2**22)
        points.
    radii : sequence of float, optional
        Public threshold radii in ``(0, 4]`` (override of the default above).
    picks : int, optional
        Public number of picks per radius (override of the default above).
    lloyd_steps : int, default=1
    budget_split : dict, optional
        Overrides of :data:`DEFAULT_SPLIT` (max cover; :data:`PAPER_SPLIT` with
        ``accountant="paper"``) or :data:`~privlearn.cluster.balcan.BALCAN_SPLIT` (Balcan);
        fractions must sum to 1. They split the epsilon left after the noisy count (with
        ``accountant="rdp"``: its zCDP budget), and all of delta.
    n_samples : int or None, default=None
        The public data-set size. ``None``: the size is private (a noisy count plans the run).
    ledger : PrivacyLedger or None, default=None
        A budget shared with other fits (:class:`privlearn.accounting.PrivacyLedger`): charged
        the whole ``(epsilon, delta)`` before the data are used; a spend the cap cannot cover
        raises :class:`~privlearn.exceptions.BudgetExceededError` and nothing is fitted.
    diagnostics : bool, default=False
        Also keep :class:`~privlearn.cluster.KMeansDiagnostics` (training labels,
        training cost, exact size, the greedy's covers) as ``diagnostics_``. **Not private**:
        these are computed on the raw data and are not covered by ``privacy_``.
    n_threads : int or None
        ``None``: the core's default; ``-1``: all cores; ``k >= 1``.
    verbose : int, default=1
        Progress of a fit on a ``dask.array``: a tqdm bar of the rounds on the workers (passes
        over the data and max-cover picks) on stderr (0: none; 1: when stderr is a terminal;
        2: always). It never changes the result. An in-memory fit shows none.
    seed : int or None, default=None
        ``None``: OS entropy (production); an int makes the fit reproducible (and the noise
        known to whoever knows it).
    backend : {"core", "reference"}
        The max-cover routine: C++ core or the numpy twin (identical picks).
    max_depth : int or None
        ``method="lsh"`` only: the code length (tree levels), in ``[1, 62]``; ``None``: 20.
    private_scale : bool or None
        ``method="lsh"`` only (``None``: True): estimate the centre and radius privately
        (share ``budget_split["scale"]``; the radius by the noise rule of
        :func:`~privlearn.cluster.private_scale.private_radius`) instead of clipping to the
        public ``B(0, radius)``. A released radius not below ``radius`` falls back to the
        public ball (post-processing). ``False`` when ``radius`` is already tight.
    accountant : {"rdp", "paper"}, default="rdp"
        Max cover only (Balcan et al. ignore it): ``"rdp"``, the whole fit composed by Renyi
        DP with thresholded proxy counts (above); ``"paper"``, the paper's basic composition
        with the Gupta et al. bound and :data:`PAPER_SPLIT`.

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d)
        The private centres.
    privacy_ : KMeansPrivacyStatement
        Total ``(epsilon, delta)`` (basic composition of the ledger's entries: the noisy count
        and, with ``accountant="rdp"``, one Renyi-DP entry for the whole max-cover fit), the
        events, the accountant, the neighbouring relation (add/remove-one), how the size was
        treated and the public inputs.
    plan_ : MaxCoverPlan or None
        The noise of every stage and the composed guarantee of a private max-cover fit with
        ``accountant="rdp"`` (:func:`~privlearn.cluster.maxcover.plan_maxcover`; a function of
        public inputs and the schedule), else ``None``.
    ledger_ : PrivacyLedger or None
    dataset_size_ : DatasetSize or None
        The size the schedule used (declared public, noisy count, or the exact size when
        ``epsilon=inf``); ``None`` when the schedule did not need one.
    radii_, picks_ : list of float, int
        The max-cover schedule (``None`` for Balcan).
    n_levels_ : int or None
        Balcan's grid levels (``None`` for max cover).
    tree_levels_ : int
        ``method="lsh"``: the deepest level of the released tree (public: a function of the
        noisy counts).
    scale_centre_, scale_radius_ : ndarray (d,), float
        ``method="lsh"``: the centre and radius the fit clipped to: the released ones, or the
        public origin and ``radius`` (``private_scale=False``, or a released radius not below
        ``radius``).
    n_candidates_ : int
        Distinct candidate centres (LSH: the coreset; max cover: the set ``C``; Balcan: the
        candidates),
        a function of the private picks / histograms and the schedule only.
    proj_dim_, radius_, n_features_in_ : int, float, int
    diagnostics_ : KMeansDiagnostics
        Only with ``diagnostics=True``. **NOT PRIVATE.**

    Notes
    -----
    ``X`` may be a row-chunked ``dask.array`` (``method="lsh"`` or ``"maxcover"``, with a
    ``dask.distributed`` client): the LSH codes, grid covers, counts and exact (fixed-point)
    cluster sums are computed on the workers and merged, the tree, every pick and all noise are
    drawn once on the driver at the same random addresses, so the fit equals the single-machine
    fit bit for bit (:class:`privlearn.distributed.kmeans.DaskRows`). The driver is trusted: it
    sees the rows' LSH codes, the noiseless cover counts and per-cell/cluster sums.
    ``method="balcan"`` and ``diagnostics=True`` refuse dask input.

    Nothing computed on the raw training data outside the mechanisms is kept: use
    ``predict``/``transform``/``score`` (functions of the released centres) on any data,
    and evaluate the training cost explicitly when it is needed.
    """

    def __init__(
        self,
        n_clusters: int = 8,
        epsilon: float = 1.0,
        delta: float = DEFAULT_DELTA,
        method: str = "lsh",
        radius: float | None = None,
        *,
        clip: bool = False,
        proj_dim: int | None = None,
        grid_factor: float = 1.0,
        radii: Sequence[float] | None = None,
        picks: int | None = None,
        lloyd_steps: int = 1,
        budget_split: dict[str, float] | None = None,
        n_samples: int | None = None,
        ledger: Any = None,
        diagnostics: bool = False,
        n_threads: int | None = None,
        verbose: int = 1,
        seed: int | None = None,
        backend: str = "core",
        max_depth: int | None = None,
        private_scale: bool | None = None,
        accountant: str = "rdp",
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
        self.n_samples = n_samples
        self.ledger = ledger
        self.diagnostics = diagnostics
        self.n_threads = n_threads
        self.verbose = verbose
        self.seed = seed
        self.backend = backend
        self.max_depth = max_depth
        self.private_scale = private_scale
        self.accountant = accountant

    # ---- validation ------------------------------------------------------------------------
    def _params(self) -> dict[str, Any]:
        """Every constructor parameter, checked and converted (before the data are read)."""
        if not isinstance(self.method, str) or self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {self.method!r}")
        if not isinstance(self.backend, str) or self.backend not in ("core", "reference"):
            raise ValueError(f"backend must be 'core' or 'reference', got {self.backend!r}")
        if not isinstance(self.accountant, str) or self.accountant not in _ACCOUNTANTS:
            raise ValueError(f"accountant must be one of {_ACCOUNTANTS}, got {self.accountant!r}")
        out: dict[str, Any] = {}
        out["k"] = as_index(self.n_clusters, "n_clusters", lower=1, upper=1 << 62)
        if out["k"] > MAX_CLUSTERS:
            raise ValueError(
                f"n_clusters={out['k']} exceeds the public cap MAX_CLUSTERS={MAX_CLUSTERS} "
                "(each centre is a noisy average: so many cannot all be more than noise)"
            )
        eps = as_real(self.epsilon, "epsilon", numbers_only=True)
        if math.isnan(eps) or not eps > 0.0:
            raise ValueError(f"epsilon must be > 0 (or inf), got {self.epsilon}")
        delta = as_real(self.delta, "delta", numbers_only=True)
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")
        if self.method == "lsh" and math.isfinite(eps) and gdp_mu(eps, delta) > MAX_LSH_MU:
            capped = max_lsh_epsilon(delta)
            warnings.warn(
                f"epsilon={eps:g} is more than method='lsh' can use at delta={delta:g}: its "
                f"Gaussian releases are capped at mu={MAX_LSH_MU:g} GDP (epsilon={capped:.6g}), "
                "already next to no noise; the fit spends that and privacy_ reports it",
                UserWarning,
                stacklevel=3,
            )
            eps = capped
        out["epsilon"], out["delta"] = eps, delta
        if self.radius is None:
            out["radius"] = None
        else:
            radius = as_real(self.radius, "radius", numbers_only=True)
            if not (math.isfinite(radius) and radius > 0.0):
                raise ValueError(f"radius must be a finite number > 0, got {self.radius}")
            out["radius"] = radius
        out["clip"] = _as_bool(self.clip, "clip")
        out["diagnostics"] = _as_bool(self.diagnostics, "diagnostics")
        out["proj_dim"] = (
            None
            if self.proj_dim is None
            else as_index(self.proj_dim, "proj_dim", lower=1, upper=16)
        )
        grid_factor = as_real(self.grid_factor, "grid_factor", numbers_only=True)
        if not (math.isfinite(grid_factor) and 0.0 < grid_factor <= MAX_GRID_FACTOR):
            raise ValueError(
                f"grid_factor must lie in (0, {MAX_GRID_FACTOR:g}] (above it a point may have no "
                f"grid point within the threshold radius), got {self.grid_factor}"
            )
        out["grid_factor"] = grid_factor
        out["radii"] = None if self.radii is None else _as_radii(self.radii)
        out["picks"] = (
            None if self.picks is None else as_index(self.picks, "picks", lower=1, upper=_MAX_PICKS)
        )
        if out["radii"] is not None and out["picks"] is not None:
            if len(out["radii"]) * out["picks"] > _MAX_TOTAL_PICKS:
                raise ValueError(
                    f"picks * len(radii) = {len(out['radii']) * out['picks']} exceeds "
                    f"{_MAX_TOTAL_PICKS} grid picks"
                )
        out["lloyd_steps"] = as_index(self.lloyd_steps, "lloyd_steps", upper=1000)
        out["n_samples"] = (
            None
            if self.n_samples is None
            else as_index(self.n_samples, "n_samples", lower=1, upper=1 << 62)
        )
        out["n_threads"] = as_threads(self.n_threads)
        out["verbose"] = as_verbose(self.verbose)
        out["seed"] = (
            None if self.seed is None else as_index(self.seed, "seed", upper=(1 << 64) - 1)
        )
        out["max_depth"] = (
            LSH_DEPTH
            if self.max_depth is None
            else as_index(self.max_depth, "max_depth", lower=1, upper=MAX_DEPTH)
        )
        if self.private_scale is None:
            out["private_scale"] = self.method == "lsh"
        else:
            out["private_scale"] = _as_bool(self.private_scale, "private_scale")
            if out["private_scale"] and self.method != "lsh":
                raise ValueError("private_scale=True is implemented for method='lsh' only")
        if self.method != "lsh" and self.max_depth is not None:
            raise ValueError("max_depth applies to method='lsh' only")
        if self.method == "lsh":
            if self.budget_split is not None and not isinstance(self.budget_split, Mapping):
                raise TypeError(
                    f"budget_split must be a dict, got {type(self.budget_split).__name__}"
                )
            overrides = (
                None
                if self.budget_split is None
                else {
                    k: as_real(v, f"budget_split[{k!r}]", numbers_only=True)
                    for k, v in self.budget_split.items()
                }
            )
            out["split"] = lsh_split(
                overrides, private_scale=out["private_scale"], lloyd_steps=out["lloyd_steps"]
            )
        else:
            out["split"] = self._split(out["lloyd_steps"])
        return out

    def _split(self, lloyd_steps: int) -> dict[str, float]:
        return budget_split(self.method, self.accountant, self.budget_split, lloyd_steps)

    def _check_plan(self, prm: dict[str, Any], d: int, p: int) -> float:
        """Every refusal that does not need the data, before any budget is spent: the grid
        (offset set and grid extent, max cover), the greedy's delta, and the calibration of
        every Gaussian step. Returns the epsilon the noisy count will take (0 if none)."""
        eps, delta = prm["epsilon"], prm["delta"]
        private = not math.isinf(eps)
        eps_size = 0.0
        if private and prm["n_samples"] is None and self._needs_size(prm):
            eps_size = SIZE_EPSILON_FRACTION * eps
        if self.method == "maxcover":
            gf = prm["grid_factor"]
            radii = [1.0] if prm["radii"] is None else list(prm["radii"])
            for r in radii:  # the core's unit and rho (default radii are powers of 2: as r=1)
                unit = gf * r / math.sqrt(p)
                if count_offsets(p, r / unit, MAX_FIT_OFFSETS) > MAX_FIT_OFFSETS:
                    raise ValueError(
                        f"grid_factor={gf:g} with proj_dim={p} makes the offset set (grid points "
                        f"within a radius of a point) larger than {MAX_FIT_OFFSETS}: use a larger "
                        "grid_factor or a smaller proj_dim"
                    )
            r_min = _MIN_DEFAULT_RADIUS if prm["radii"] is None else min(radii)
            if (1.0 + r_min) / (gf * r_min / math.sqrt(p)) + 1.0 >= 1e9:
                raise ValueError(
                    f"grid_factor={gf:g} is too fine for the threshold radius {r_min:g} "
                    f"(proj_dim={p}): more than 1e9 grid points per axis; use a larger grid_factor"
                )
        if not private:
            return eps_size
        if self.method == "lsh":
            self._lsh_plan(prm, d, 1.0)  # refuses a budget too small for a step's lattice
            return 0.0
        eps_rest = eps - eps_size
        split = prm["split"]
        if self.method == "maxcover" and self._tight():
            try:  # the plan's budget does not depend on the schedule: checked with 1 pick
                plan_maxcover(
                    eps_rest,
                    delta,
                    n_picks=1,
                    n_radii=1,
                    split=split,
                    lloyd_steps=prm["lloyd_steps"],
                    radius=1.0,
                    d=d,
                )
            except ValueError:
                raise ValueError(
                    f"epsilon={eps:g}, delta={delta:g} are too small for the noisy averaging "
                    f"and lloyd_steps={prm['lloyd_steps']} Lloyd rounds: their Gaussian sums "
                    f"on {d} coordinates cannot be calibrated (the lattice alone costs more); "
                    "raise epsilon or delta, or use fewer lloyd_steps"
                ) from None
            return eps_size
        if self.method == "maxcover":
            n_radii = 1 if prm["radii"] is None else len(prm["radii"])
            delta_pick = delta * split["delta_maxcover"] / n_radii
            if not delta_pick <= 0.5:
                raise ValueError(
                    "delta * budget_split['delta_maxcover'] / len(radii) must be <= 1/2 (Gupta "
                    f"et al.'s greedy cover bound), got {delta_pick:g}"
                )
            steps = [("the noisy averaging", split["average"], split["delta_average"])]
        else:
            steps = [("the recovery", split["recovery"], split["delta_recovery"])]
        n_lloyd = prm["lloyd_steps"]
        if n_lloyd:
            steps.append(
                (
                    f"each of lloyd_steps={n_lloyd} Lloyd rounds",
                    split["lloyd"] / n_lloyd,
                    split["delta_lloyd"] / n_lloyd,
                )
            )
        for what, e_frac, d_frac in steps:
            try:
                gaussian_sigma(1.0, eps_rest * e_frac / 2.0, delta * d_frac, d)
            except ValueError:
                raise ValueError(
                    f"epsilon={eps:g}, delta={delta:g} are too small for {what}: its share "
                    f"(epsilon {eps_rest * e_frac:.3g}, delta {delta * d_frac:.3g}) cannot "
                    f"calibrate a Gaussian on {d} coordinates (its lattice alone costs more); "
                    "raise epsilon or delta, or use fewer lloyd_steps"
                ) from None
        return eps_size

    def _tight(self) -> bool:
        """Whether the fit is the max-cover method under the tight (Renyi DP) accountant."""
        return self.method == "maxcover" and self.accountant == "rdp"

    def _needs_size(self, prm: dict[str, Any]) -> bool:
        """Whether the schedule depends on the data-set size (never for the LSH coreset)."""
        if self.method == "lsh":
            return False
        return self.method == "balcan" or prm["radii"] is None or prm["picks"] is None

    # ---- fitting -----------------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> DPKMeans:
        """Fit on ``X`` (n, d); spends ``(epsilon, delta)`` (see ``privacy_``).

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            The private data, rows in ``B(0, radius)`` (or ``clip=True``; rows within a
            relative 1e-6 of the radius, float32 rounding, are projected onto the ball). A
            scipy sparse matrix is checked and densified; a pandas DataFrame with nullable
            columns (``Float64``) is accepted without missing values.
        y : ignored

        Returns
        -------
        self
        """
        del y
        for name in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, name)  # a refit never keeps a previous fit's attributes
        prm = self._params()
        dist = backend_for(X)  # a dask collection: its back-end (privlearn.backends)
        if dist is not None:
            if self.method not in ("lsh", "maxcover"):
                raise NotImplementedError(
                    f"DPKMeans(method={self.method!r}) does not accept dask input; "
                    "method='lsh' and method='maxcover' do"
                )
            if prm["diagnostics"]:
                raise ValueError(
                    "diagnostics=True is not supported on dask input (the diagnostics are "
                    "per-row and non-private); fit with diagnostics=False"
                )
            rows: Any = dist.kmeans_rows(X, verbose=prm["verbose"])
        else:
            rows = _LocalRows(X)
        try:
            return self._fit_rows(rows, prm)
        finally:
            rows.close()  # the progress bar of a fit on dask

    def _fit_rows(self, rows: Any, prm: dict[str, Any]) -> DPKMeans:
        """:meth:`fit` on its validated parameters and rows (``_LocalRows`` or ``DaskRows``)."""
        n, d = rows.n, rows.d
        eps, delta, k = prm["epsilon"], prm["delta"], prm["k"]
        private = not math.isinf(eps)
        seeds = SeedSource(prm["seed"])
        ledger = PrivacyLedger(eps, delta) if private else None
        events: list[Any] = []

        radius = rows.resolve_radius(prm["radius"], prm["clip"])  # checked before any spend
        p = min(d, 4) if prm["proj_dim"] is None else prm["proj_dim"]
        self._check_plan(prm, d, p)  # every refusal before any spend
        declared = public_size(prm["n_samples"], n)  # a declared size must match the data
        if (declared is not None or not private) and k > n:
            raise ValueError(f"n_clusters must lie in [1, n_samples={n}], got {k}")
        if private and self.ledger is not None:  # a budget shared with other fits: charged first
            spend(self.ledger, eps, delta, "DPKMeans.fit", "add_remove")  # as privacy_

        # -- the data-set size: declared public, exact (not private), noisy count, or unused
        size: DatasetSize | None = declared
        eps_size = 0.0
        if size is None and not private:
            size = DatasetSize(n, "not_private")
        elif size is None and self._needs_size(prm):
            eps_size = SIZE_EPSILON_FRACTION * eps
            ledger.spend(eps_size, 0.0, label="noisy row count")  # type: ignore[union-attr]
            size = resolve_size(n, epsilon=eps_size, seed=seeds.seed_for(STREAM_SIZE), floor=1)
            events.append(LaplaceEvent(1.0 / eps_size))
        if size is not None and not size.public and private and k > size.value:
            warnings.warn(
                f"n_clusters={k} exceeds the noisy row count (dataset_size_): the surplus "
                "centres will be mostly noise",
                UserWarning,
                stacklevel=2,
            )

        if self.method == "lsh":
            return self._fit_lsh(rows, prm, radius, seeds, ledger)
        rows.project(jl_matrix(d, p, seeds.substream(STREAM_JL)), radius)
        eps_rest = eps - eps_size
        part = {
            key: (delta * v if key.startswith("delta_") else eps_rest * v)
            for key, v in prm["split"].items()
        }
        self.radii_: list[float] | None = None
        self.picks_: int | None = None
        self.n_levels_: int | None = None
        self.plan_: MaxCoverPlan | None = None
        res: MaxCoverResult | None = None
        if self.method == "maxcover":
            centers, n_cand, res = self._fit_maxcover(
                rows, radius, part, prm, size, seeds, ledger, events
            )
        else:
            centers, n_cand = self._fit_balcan(
                rows.X, rows.Y, radius, part, size, seeds, ledger, events
            )
        steps = 0 if self._tight() else prm["lloyd_steps"]  # tight max cover: its own rounds
        for step in range(steps):
            per = part["lloyd"] / steps
            per_d = part["delta_lloyd"] / steps
            stats = rows.cluster_sums(centers, k, radius, projected=False)
            centers = noisy_centres(stats, radius, per, per_d, seeds, ledger, f"lloyd {step}")
            if private:
                events.append(average_events(per, per_d, radius, d))
        self.cluster_centers_ = centers
        self.n_candidates_ = int(n_cand)
        self.proj_dim_ = p
        self.radius_ = radius
        if ledger is not None:
            ledger.close()  # the fit's own record: no further charge, so it may be pickled
        self.ledger_ = ledger
        self.dataset_size_ = size
        self.n_features_in_ = d
        public = public_inputs(self.method, prm, radius, d, p)
        if size is not None:
            size_text = size.describe()
        else:
            size_text = "not used (radii and picks given: the schedule does not depend on it)"
        if private:
            spent = ledger.spent  # type: ignore[union-attr]
            accountant = "pure (basic composition"
            if self._tight():
                accountant = plan_text(self.plan_, eps_size)
            elif self.method == "maxcover":
                accountant += "; Gupta et al. 2010 for the greedy cover"
            self.privacy_ = KMeansPrivacyStatement(
                epsilon=spent.epsilon,
                delta=spent.delta,
                accountant=accountant + ")",
                events=tuple(events),
                neighboring="add_remove",
                dataset_size=size_text,
                public_inputs=public,
            )
        else:
            self.privacy_ = KMeansPrivacyStatement(
                math.inf,
                0.0,
                "none (epsilon=inf: not private)",
                dataset_size=size_text,
                public_inputs=public,
            )
        if prm["diagnostics"]:
            self.diagnostics_ = KMeansDiagnostics(
                n_samples=n,
                labels=assign(rows.X, centers),
                inertia=kmeans_cost(rows.X, centers),
                maxcover=res,
            )
        return self

    def _fit_maxcover(self, rows, radius, part, prm, size, seeds, ledger, events):  # type: ignore[no-untyped-def]
        k = prm["k"]
        radii = default_radii(size.value) if prm["radii"] is None else list(prm["radii"])
        picks = default_picks(k, size.value) if prm["picks"] is None else prm["picks"]
        self.radii_, self.picks_ = radii, picks
        private = ledger is not None
        tight = self._tight()
        plan: MaxCoverPlan | None = None
        if private and tight:
            eps_rest = sum(v for key, v in part.items() if not key.startswith("delta_"))
            plan = plan_maxcover(
                eps_rest,
                prm["delta"],
                n_picks=picks * len(radii),
                n_radii=len(radii),
                split=prm["split"],
                lloyd_steps=prm["lloyd_steps"],
                radius=radius,
                d=rows.d,
                gaussian_releases=(1 + prm["lloyd_steps"]) * k,
            )
            self.plan_ = plan
            ledger.spend(plan.epsilon, plan.delta, label="max cover fit (Renyi DP)")
            eps_pick, eps_proxy = plan.eps_pick, plan.eps_proxy
            events.append(SelfComposed(PureDPEvent(eps_pick), picks * len(radii)))
        elif private:
            eps_pick = maxcover_pick_epsilon(part["maxcover"], part["delta_maxcover"], len(radii))
            ledger.spend(part["maxcover"], part["delta_maxcover"], label="max cover")
            events.append(PureDPEvent(part["maxcover"]))
            eps_proxy = part["proxy"]
        else:
            eps_pick = eps_proxy = math.inf
        key = seeds.substream(STREAM_PICKS).key
        res = rows.maxcover(
            radii,
            eps_pick=eps_pick,
            key=key,
            stream=STREAM_PICKS,
            picks=picks,
            grid_factor=prm["grid_factor"],
            backend=self.backend,
            n_threads=prm["n_threads"],
        )
        cand = np.unique(res.centers, axis=0)
        if private and not tight:
            ledger.spend(part["proxy"], 0.0, label="proxy counts")
        if private:
            events.append(LaplaceEvent(1.0 / eps_proxy))
        weights = noisy_counts(rows.nearest_counts(cand), eps_proxy, seeds() if private else 0)
        points = cand
        if tight:  # public threshold (post-processing): drop the phantom candidates
            keep = proxy_weights(weights, k, proxy_threshold(cand.shape[0], eps_proxy))
            points, weights = cand[keep], weights[keep]
        # KMeans needs k samples of positive weight: a tiny floor (post-processing)
        weights = weights + 1e-6
        km = KMeans(n_clusters=min(k, points.shape[0]), n_init=3, random_state=seeds() % (2**31))
        from privlearn.parallel import fork_safe_threads

        with fork_safe_threads():  # scikit-learn's OpenMP pool does not survive fork()
            km.fit(points, sample_weight=weights)
        stats = rows.cluster_sums(km.cluster_centers_, k, radius, projected=True)
        if plan is not None:
            centers = noisy_centres_planned(
                stats, radius, plan.rounds[0].count_scale, plan.rounds[0].sigma, seeds
            )
            for step, rnd in enumerate(plan.rounds):
                if step:
                    stats = rows.cluster_sums(centers, k, radius, projected=False)
                    centers = noisy_centres_planned(
                        stats, radius, rnd.count_scale, rnd.sigma, seeds
                    )
                events.append(
                    Composed((LaplaceEvent(rnd.count_scale), GaussianEvent(1.0 / rnd.mu)))
                )
            return centers, cand.shape[0], res
        centers = noisy_centres(
            stats, radius, part["average"], part["delta_average"], seeds, ledger, "average"
        )
        if private:
            events.append(average_events(part["average"], part["delta_average"], radius, rows.d))
        elif tight:
            for step in range(prm["lloyd_steps"]):
                stats = rows.cluster_sums(centers, k, radius, projected=False)
                centers = noisy_centres(stats, radius, math.inf, 0.0, seeds, None, f"lloyd {step}")
        return centers, cand.shape[0], res

    def _fit_balcan(self, X, Y, radius, part, size, seeds, ledger, events):  # type: ignore[no-untyped-def]
        k = int(self.n_clusters)
        private = ledger is not None
        self.n_levels_ = _balcan.default_levels(size.value, Y.shape[1])
        cand = _balcan.balcan_candidates(
            Y, part["candidates"], part["delta_candidates"], seeds, ledger, n_levels=self.n_levels_
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
        centres_proj = _balcan.balcan_local_search(  # memory: its matrix up to 1.5 X.nbytes
            Y, cand, k, part["local_search"], seeds, ledger, max_matrix_bytes=3 * X.nbytes // 2
        )
        if private:
            events.append(PureDPEvent(part["local_search"]))
        centers = _balcan.balcan_recover(
            X, Y, centres_proj, radius, part["recovery"], part["delta_recovery"], seeds, ledger
        )
        if private:
            events.append(
                average_events(part["recovery"], part["delta_recovery"], radius, X.shape[1])
            )
        return centers, cand.shape[0]

    # ---- the LSH-tree coreset ----------------------------------------------------------------
    def _lsh_plan(
        self, prm: dict[str, Any], d: int, r: float
    ) -> tuple[float, LSHSchedule, float, float, float]:
        """The GDP plan of an LSH fit whose rows lie in a ball of radius ``r``: ``(mu_scale,
        schedule, sigma of a Lloyd count, sigma of a Lloyd sum, mu of all Lloyd rounds)``
        (every ``mu`` an upper bound, the lattices' share included). Raises ``ValueError`` when a
        step's share of ``mu`` is too small for its lattice (before any spend)."""
        split = prm["split"]
        mu = gdp_mu(prm["epsilon"], prm["delta"])
        try:
            schedule = LSHSchedule.plan(
                mu * math.sqrt(split["tree"]),
                mu * math.sqrt(split["counts"]),
                mu * math.sqrt(split["sums"]),
                r,
                depth=prm["max_depth"],
                threshold_sd=LSH_THRESHOLD_SD,
                cell_threshold_sd=LSH_CELL_THRESHOLD_SD,
                max_nodes=LSH_MAX_NODES,
                branch_sd=LSH_BRANCH_SD,
                dim=d,
            )
            sig_n = sig_s = math.inf
            steps = prm["lloyd_steps"]
            if steps:
                mu_round = mu * math.sqrt(split["lloyd"] / steps)
                sig_n = lattice_sigma(1.0, mu_round * math.sqrt(LLOYD_COUNT_SHARE))
                sig_s = lattice_sigma(r, mu_round * math.sqrt(1.0 - LLOYD_COUNT_SHARE))
        except ValueError as exc:
            raise ValueError(
                f"epsilon={prm['epsilon']:g}, delta={prm['delta']:g} are too small for "
                f"method='lsh' with max_depth={prm['max_depth']} and "
                f"lloyd_steps={prm['lloyd_steps']}: {exc}"
            ) from None
        mu_scale = mu * math.sqrt(split.get("scale", 0.0))
        mu_lloyd = mu * math.sqrt(split["lloyd"]) if prm["lloyd_steps"] else 0.0
        return mu_scale, schedule, sig_n, sig_s, mu_lloyd

    def _fit_lsh(self, rows, prm, radius, seeds, ledger):  # type: ignore[no-untyped-def]
        """``method="lsh"``: private scale, LSH-tree coreset, weighted k-means on it, private
        Lloyd rounds on the data (:mod:`privlearn.cluster.lsh_coreset`); one mu-GDP release."""
        k, d = prm["k"], rows.d
        private = ledger is not None
        centre, r, mu_scale_spent = np.zeros(d), radius, 0.0
        if private:
            ledger.spend(prm["epsilon"], prm["delta"], label="LSH coreset k-means (mu-GDP)")
            mu_scale = self._lsh_plan(prm, d, radius)[0]
            if prm["private_scale"]:
                centre, r, mu_scale_spent = rows.private_scale(
                    radius, mu_scale, seeds, prm["n_threads"]
                )
                if not r < radius:  # post-processing: the public ball holds every row and
                    centre, r = np.zeros(d), radius  # its sensitivity is no larger (issue 30)
            _, schedule, sig_n, sig_s, mu_lloyd = self._lsh_plan(prm, d, r)
        else:
            schedule = LSHSchedule(
                depth=prm["max_depth"],
                sigma_tree=0.0,
                sigma_count=0.0,
                sigma_sum=0.0,
                threshold=1.0,
                cell_threshold=1.0,
                max_nodes=LSH_MAX_NODES,
                mu=0.0,
                branch_threshold=1.0,
            )
            sig_n = sig_s = mu_lloyd = 0.0
        H, t = lsh_hyperplanes(d, schedule.depth, seeds.substream(STREAM_LSH))
        codes = rows.lsh_codes(centre, H, t, prm["n_threads"])
        kept, _ = grow_tree(np.sort(codes), schedule, seeds)
        del codes
        n_cells = sum(int(p.size) for p in kept)
        stats = rows.lsh_cell_sums(kept, schedule.depth, n_cells, centre, r, H, t, prm["n_threads"])
        if private:
            points, weights = release_coreset(stats, centre, r, schedule, seeds)
        else:
            counts, hi, lo = stats
            keep = counts > 0
            points = (
                centre
                + fixed_point_value(hi, lo, fixed_point_exponent(r))[keep] / counts[keep, None]
            )
            weights = counts[keep].astype(np.float64)
        n_core = points.shape[0]
        if n_core < k:  # k-means needs k points: the centre, with a negligible weight
            points = np.vstack([points, np.tile(centre, (k - n_core, 1))])
            weights = np.concatenate([weights, np.full(k - n_core, 1e-9)])
        from privlearn.parallel import fork_safe_threads

        restarts = lsh_kmeans_restarts(points.shape[0], k, d)  # post-processing: free
        km = KMeans(n_clusters=k, n_init=restarts, random_state=seeds() % (2**31))
        with fork_safe_threads(), warnings.catch_warnings():
            # fewer distinct points than k (e.g. the padding above repeats the centre):
            # scikit-learn's "duplicate points in X" is about these internal points, not the
            # caller's X, and the repeated centres it returns are what the padding means
            warnings.filterwarnings(
                "ignore", message="Number of distinct clusters", category=ConvergenceWarning
            )
            km.fit(points, sample_weight=weights)
        centers = np.asarray(km.cluster_centers_, dtype=np.float64)
        steps = prm["lloyd_steps"]
        for _ in range(steps):
            stats = rows.nearest_sums(centers, k, centre, r, prm["n_threads"])
            if private:
                keep = lloyd_keep_threshold(sig_n, sig_s, d, r)
                centers = gaussian_centres(stats, centre, r, sig_n, sig_s, seeds, centers, keep)
            else:
                counts, hi, lo = stats
                ok = counts > 0
                sums = fixed_point_value(hi, lo, fixed_point_exponent(r))
                centers = centers.copy()
                centers[ok] = centre + sums[ok] / counts[ok, None]
        self.cluster_centers_ = centers
        self.n_candidates_ = int(n_core)
        self.radii_, self.picks_, self.n_levels_ = None, None, None
        self.tree_levels_ = max(level for level, p in enumerate(kept) if p.size or level == 0)
        self.scale_centre_, self.scale_radius_ = np.array(centre), float(r)
        self.proj_dim_ = None
        self.radius_ = radius
        if ledger is not None:
            ledger.close()
        self.ledger_ = ledger
        self.dataset_size_ = None
        self.n_features_in_ = d
        public = public_inputs(self.method, prm, radius, d, d)
        size_text = "not used (the LSH schedule does not depend on it)"
        if private:
            mu_total = math.sqrt(mu_scale_spent**2 + schedule.mu**2 + mu_lloyd**2)
            # Gaussian calls: the private scale's 3, one per tree level, the cells' count and
            # sum, a count and a sum per Lloyd round (public bounds)
            releases = 3 * bool(prm["private_scale"]) + schedule.depth + 2 + 2 * steps
            self.privacy_ = KMeansPrivacyStatement(
                epsilon=max(  # the lattice value proves it; the mu value, as calibrated,
                    analytic_gaussian_epsilon(mu_total, prm["delta"]),  # is nearly always larger
                    gdp_lattice_epsilon(mu_total, releases, prm["delta"]),
                ),
                delta=prm["delta"],
                accountant=(
                    f"Gaussian DP (every release a Gaussian, composed exactly: mu={mu_total:.6g}, "
                    "Dong, Roth & Su 2022; (epsilon, delta) by the analytic conversion, at least "
                    "that of the rounded continuous Gaussians plus the lattice slack of the exact "
                    f"discrete Gaussian noise of {releases} releases)"
                ),
                events=(GaussianEvent(1.0 / mu_total),),
                neighboring="add_remove",
                dataset_size=size_text,
                public_inputs=public,
            )
        else:
            self.privacy_ = KMeansPrivacyStatement(
                math.inf,
                0.0,
                "none (epsilon=inf: not private)",
                dataset_size=size_text,
                public_inputs=public,
            )
        if prm["diagnostics"]:
            self.diagnostics_ = KMeansDiagnostics(
                n_samples=rows.n,
                labels=assign(rows.X, centers),
                inertia=kmeans_cost(rows.X, centers),
            )
        return self

    # ---- use -------------------------------------------------------------------------------
    def _check_fitted_X(self, X: Any) -> np.ndarray:
        if not hasattr(self, "cluster_centers_"):
            raise NotFittedError("this DPKMeans is not fitted yet: call fit first")
        X = check_data(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but DPKMeans is expecting "
                f"{self.n_features_in_} features as input"
            )
        return X

    @property
    def _n_features_out(self) -> int:
        """Number of transformed output features (one distance per centre)."""
        return int(self.cluster_centers_.shape[0])

    def __sklearn_tags__(self) -> Tags:
        """scikit-learn's tags: sparse input is accepted (densified), the fit is random
        unless ``seed`` is given (fresh noise: ``non_deterministic``), and the checks that
        a DP k-means cannot pass are listed in :func:`sklearn_expected_failures`."""
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.seed is None
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    def predict(self, X: Any) -> np.ndarray:
        """Index of the nearest private centre of each row (always in ``[0, n_clusters)``,
        also for rows whose squared distances overflow: see
        :func:`~privlearn.cluster._assignment.assign`)."""
        return assign(self._check_fitted_X(X), self.cluster_centers_)

    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        """``fit(X)`` then ``predict(X)``: the labels are returned to the caller, not kept on
        the estimator (they are not private; ``diagnostics=True`` keeps a copy)."""
        return self.fit(X, y).predict(X)

    def transform(self, X: Any) -> np.ndarray:
        """Euclidean distance of each row to each private centre, shape (n, k)."""
        return euclidean_distances(self._check_fitted_X(X), self.cluster_centers_)

    def score(self, X: Any, y: Any = None) -> float:
        """The negative k-means cost of ``X`` under the fitted centres (higher is better), as
        scikit-learn's ``KMeans.score``.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            Any data with the training data's features.
        y : ignored

        Returns
        -------
        float
            ``-sum_i min_j ||x_i - c_j||**2`` (the k-means objective of Chaturvedi, Nguyen &
            Xu 2021, Section 2.1, negated), ``<= 0``.

        Notes
        -----
        A diagnostic computed exactly on the ``X`` passed in, **not a private release**: it
        is covered by no guarantee, and on the training data it reveals the private rows'
        cost. Only the centres are private; publish a score of private data only through a
        mechanism of its own.
        """
        del y
        return -kmeans_cost(self._check_fitted_X(X), self.cluster_centers_)


def sklearn_expected_failures(estimator: DPKMeans | None = None) -> dict[str, str]:
    """The checks of :func:`sklearn.utils.estimator_checks.check_estimator` that
    :class:`DPKMeans` fails by design, with the reason (pass it as
    ``expected_failed_checks``; ``estimator``: the instance checked, whose ``seed`` decides
    whether two fits may differ)."""
    out = {
        "check_clustering": (
            "a private fit keeps no labels_: the training rows' labels are per-row outputs on "
            "the private data, not covered by the guarantee (use predict, or "
            "diagnostics=True, which is marked non-private)"
        ),
    }
    if estimator is None or estimator.seed is None:
        out["check_fit_idempotent"] = (
            "seed=None draws fresh noise from the operating system at every fit (the DP "
            "default): two fits on the same data differ by design; pass seed= to reproduce"
        )
    return out


def _as_bool(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _as_radii(radii: Any) -> tuple[float, ...]:
    """Public radii: a non-empty sequence of finite numbers in ``(0, 4]``."""
    if isinstance(radii, (str, bytes, Mapping)) or not isinstance(radii, (Sequence, np.ndarray)):
        raise TypeError(f"radii must be a sequence of numbers, got {type(radii).__name__}")
    out = tuple(as_real(r, "radii entry", numbers_only=True) for r in radii)
    if not 1 <= len(out) <= 64:
        raise ValueError(f"radii must hold 1 to 64 radii, got {len(out)}")
    for r in out:
        if not (math.isfinite(r) and 0.0 < r <= 4.0):
            raise ValueError(f"every radius must lie in (0, 4], got {r}")
    return out
