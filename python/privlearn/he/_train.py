"""Packed encrypted logistic-regression training (Kim et al. 2018a's encoding) on the simulator.

Packing (Kim, Song, Kim, Lee, Cheon 2018a, Section 3): the matrix ``Z`` with rows
``(y_i, y_i x_i1, .., y_i x_id)`` is padded to ``d' = 2^ceil(log2(d + 1))`` columns and packed
row by row, ``slots / d'`` rows per ciphertext, into as many ciphertexts as needed. The weights
``V`` and ``W`` (and, for the enhanced method, ``B-bar``'s diagonal, Chiang Section 5) are
replicated in every row of one ciphertext each.

One NAG iteration (Chiang, Algorithm 1, in slot form), with the step constant folded into the
encrypted data where it costs no depth (``Z`` is fresh, far above the working level):

1. ``M = Z * V`` (ciphertext product, every data ciphertext);
2. SumColVec: rotate-and-add by ``1, 2, .., d'/2`` puts ``u_i = y_i beta^T x_i`` in column 0;
3. mask column 0 (plaintext product), replicate by rotate-and-add by ``-1, .., -d'/2``;
4. ``sigma(-u) z`` with the least-squares sigmoid polynomial at minimal depth:
   ``0.5 z - a1 u z - a3 u^3 z - a5 u^5 z - a7 u^7 z`` as ``(c_k z) u``, ``((c_k z) u) u^2``,
   ``((c_k z) u) u^4`` (``u^2``, ``u^4`` by squaring), i.e. depth 2 (degree 3) or 3 (degrees
   5 and 7) after ``u``; the constants ``c_k`` include the step size (``gamma_t`` for the
   baseline, ``N_t`` for the enhanced method) and are encoded with ``log_p`` significant bits
   (a scale of up to ``2 log_p`` bits: ``Z`` is fresh, so this costs no depth);
5. SumRowVec: add the data ciphertexts, rotate-and-add by ``d', 2d', .., slots/2``: the scaled
   gradient, replicated in every row;
6. enhanced only: times ``B-bar`` (encrypted at ``bbar_bits``, e.g. 40: that many bits consumed);
7. NAG: ``w = V + step``, ``V = (1 - eta) w + eta W``, ``W = w``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privlearn._checks import as_index, as_threads
from privlearn.he._params import CKKSParams, DepthExhaustedError
from privlearn.he._sim import Ciphertext, Simulator

__all__ = [
    "SIGMOID_POLYNOMIALS",
    "PackedLayout",
    "HETrainingReport",
    "HEPlan",
    "train_logreg",
    "plan_logreg",
    "clear_logreg",
    "bbar_diagonal",
]

#: Least-squares fits of the sigmoid on [-8, 8] (Kim et al. 2018a): odd coefficients a1, a3, ...
SIGMOID_POLYNOMIALS: dict[int, tuple[float, ...]] = {
    3: (0.15012, -0.001593),
    5: (0.19131, -0.0045963, 0.0000412332),
    7: (0.216884, -0.00819276, 0.000165861, -1.19581e-6),
}
EPSILON = 1e-8
#: Most iterations :func:`train_logreg`, :func:`plan_logreg` and :func:`clear_logreg` accept
#: (also the cap of the ``iterations=None`` search; every encrypted iteration costs depth).
MAX_ITERATIONS = 10_000
#: Accepted range of ``bbar_bits``: at least the smallest ``log_p`` a :class:`CKKSParams`
#: accepts (10), at most twice the largest (2 * 60).
BBAR_BITS_RANGE = (10, 120)


def _pow2(k: int) -> int:
    return 1 << max(0, math.ceil(math.log2(k)))


@dataclass(frozen=True)
class PackedLayout:
    """Where Kim et al.'s row-by-row packing puts an ``n x (d + 1)`` matrix."""

    n: int
    d1: int  # d + 1 columns (intercept first)
    slots: int

    @property
    def d_pad(self) -> int:
        """Columns per packed row: the next power of two >= d + 1."""
        return _pow2(self.d1)

    @property
    def rows_per_ct(self) -> int:
        return self.slots // self.d_pad

    @property
    def n_ct(self) -> int:
        return -(-self.n // self.rows_per_ct)

    def check(self) -> None:
        if self.d_pad > self.slots:
            raise ValueError(
                f"a packed row needs {self.d_pad} slots (d + 1 = {self.d1} padded to a power of "
                f"two) but a ciphertext has only {self.slots}"
            )

    def pack(self, Z: np.ndarray) -> np.ndarray:
        out = np.zeros((self.n_ct * self.rows_per_ct, self.d_pad))
        out[: self.n, : self.d1] = Z
        return out.reshape(self.n_ct, self.slots)

    def replicate(self, v: np.ndarray) -> np.ndarray:
        row = np.zeros(self.d_pad)
        row[: self.d1] = v
        return np.tile(row, self.rows_per_ct)[None, :]

    def mask(self) -> np.ndarray:
        row = np.zeros(self.d_pad)
        row[0] = 1.0
        return np.tile(row, self.rows_per_ct)[None, :]


def bbar_diagonal(X1: np.ndarray) -> np.ndarray:
    """``B-bar_kk = 1 / (eps + sum_j |H-bar_kj|)`` with ``H-bar = -X^T X / 4`` (Chiang, Def. 3.2,
    Algorithm 1 lines 1-7; ``X`` includes the intercept column)."""
    from privlearn._specs.quadgrad import check_computed_bbar

    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
        H = 0.25 * np.einsum("ij,ik->jk", X1, X1)  # no BLAS threads for this tiny product
        b = 1.0 / (EPSILON + np.abs(H).sum(axis=1))
    return check_computed_bbar(b)  # ValueError when X^T X overflowed (B-bar 0 or NaN)


def _nag_etas(iterations: int) -> list[float]:
    """``eta_t = (1 - alpha_t) / alpha_{t+1}`` with ``alpha_0 = 0.01`` (Kim et al. 2018a)."""
    a0 = 0.01
    a1 = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * a0 * a0))
    out = []
    for _ in range(iterations):
        out.append((1.0 - a0) / a1)
        a0, a1 = a1, 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * a1 * a1))
    return out


def _default_schedule(enhanced: bool, n: int) -> Callable[[int], float]:
    if enhanced:
        return lambda t: 1.0 + 0.9**t
    return lambda t: 10.0 / ((1.0 + t) * n)


@dataclass
class HETrainingReport:
    """What :func:`train_logreg` returns.

    Attributes
    ----------
    coef_ : ndarray of shape (d + 1,)
        Decrypted weights, intercept first.
    iterations : int
        Iterations run.
    levels : list of int
        Levels (``log_p``-bit rescales) left on the weight ciphertext after each iteration.
    mod_bits : list of int
        Modulus bits left on the weight ciphertext after each iteration.
    op_counts : dict
        Operation counters (ct-ct and ct-pt multiplications, rotations, rescales, key
        switches, ...) and ``rotation_keys`` (distinct rotation amounts).
    est_learn_seconds : float
        Estimated encrypted learn time from the calibrated cost model (single thread).
    storage_bytes : float
        Upload: the encrypted data ciphertexts (plus ``B-bar`` for the enhanced method) at the
        full modulus, as in the paper's "Storage" column.
    key_bytes : float
        Relinearisation key plus one key per distinct rotation.
    rotation_steps : list of int
        The distinct rotation amounts (mod slots), i.e. the Galois keys a real run needs.
    error_realized : float or None
        With ``compare_exact=True``: ``max |coef_ - coef_exact|`` against the same run without
        CKKS error, i.e. what the simulated error did to the weights (the worst-case
        ``error_bound`` grows much faster over iterations than the typical error).
    error_bound : float or None
        Tracked bound on the CKKS error of ``coef_`` (None for real CKKS and dry runs).
    """

    coef_: np.ndarray | None
    iterations: int
    levels: list[int]
    mod_bits: list[int]
    op_counts: dict[str, int]
    est_learn_seconds: float
    storage_bytes: float
    key_bytes: float
    error_bound: float | None
    params: CKKSParams
    layout: PackedLayout
    method: str
    backend: str
    beta_path: list[np.ndarray] = field(default_factory=list)
    rotation_steps: list[int] = field(default_factory=list)
    error_realized: float | None = None

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """``beta_0 + X beta_1:`` for scaled features ``X`` (no intercept column)."""
        if self.coef_ is None:
            raise ValueError("a plan has no coefficients")
        X = np.asarray(X, dtype=np.float64)
        return self.coef_[0] + X @ self.coef_[1:]

    def summary(self) -> str:
        """A few lines: method, parameters, iterations and levels, operations, cost, error."""
        p, lay = self.params, self.layout
        c = self.op_counts
        lines = [
            f"{self.method} on {self.backend}: {self.iterations} iterations, log_n = {p.log_n}, "
            f"log_q = {p.log_q}, log_p = {p.log_p} (~{p.security_bits:.0f}-bit security)",
            f"packing: d' = {lay.d_pad} columns, {lay.rows_per_ct} rows per ciphertext, "
            f"{lay.n_ct} data ciphertexts",
            f"levels left after each iteration: {self.levels}",
            f"operations: {c['ct_ct_mult']} ct-ct mult, {c['ct_pt_mult']} ct-pt mult, "
            f"{c['rotations']} rotations, {c['rescales']} rescales, {c['key_switches']} key "
            f"switches, {c['rotation_keys']} rotation keys",
            f"estimated learn time {self.est_learn_seconds / 60:.2f} min (one thread); upload "
            f"{self.storage_bytes / 1e9:.3f} GB; keys {self.key_bytes / 1e9:.2f} GB",
        ]
        if self.error_bound is not None:
            lines.append(f"worst-case error bound on coef_: {self.error_bound:.2e}")
        if self.error_realized is not None:
            lines.append(f"realised CKKS error on coef_: {self.error_realized:.2e}")
        return "\n".join(lines)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """P(y = +1 | x) with the exact sigmoid."""
        from scipy.special import expit

        return expit(self.decision_function(X))


HEPlan = HETrainingReport


def _real_array(values: Any, name: str) -> np.ndarray:
    """``values`` as a float64 array; complex, string and other non-real input is an error."""
    if hasattr(values, "toarray") and hasattr(values, "nnz"):  # scipy.sparse
        raise TypeError(f"{name} must be a dense array, got {type(values).__name__}")
    a = np.asarray(values)
    if a.dtype.kind == "c":
        raise TypeError(f"{name} must be real, got complex values (dtype {a.dtype})")
    if a.dtype.kind not in "biuf":
        try:
            a = a.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must be an array of real numbers, got dtype {a.dtype}"
            ) from None
    return np.asarray(a, dtype=np.float64)


def _check_data(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    X = _real_array(X, "X")
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-d array, got shape {X.shape}")
    if not np.isfinite(X).all():
        i, j = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"X contains NaN or infinite values (first at row {i}, column {j})")
    y = _real_array(y, "y")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-d with {X.shape[0]} entries, got shape {y.shape}")
    if not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinite values")
    classes = np.unique(y)
    if classes.shape[0] != 2:
        raise ValueError(f"y must be binary (two classes), got {classes.shape[0]} classes")
    if set(classes.tolist()) <= {0.0, 1.0} or set(classes.tolist()) <= {-1.0, 1.0}:
        ys = np.where(y == classes[1], 1.0, -1.0)
    else:
        raise ValueError(f"y must be labelled {{0, 1}} or {{-1, +1}}, got {classes.tolist()}")
    return np.ascontiguousarray(X), ys


def _check_method(optimizer: str, sigmoid_degree: Any) -> None:
    if optimizer != "nag":
        raise ValueError(
            f"optimizer must be 'nag' for encrypted training, got {optimizer!r} (Adagrad and "
            "Adam need a division / square root per step, which the paper does not encrypt)"
        )
    if isinstance(sigmoid_degree, bool) or sigmoid_degree not in SIGMOID_POLYNOMIALS:
        raise ValueError(f"sigmoid_degree must be 3, 5 or 7, got {sigmoid_degree!r}")


def _check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _check_iterations(iterations: Any) -> int | None:
    """``None`` or an int in ``[1, MAX_ITERATIONS]`` (floats such as 2.7 are a TypeError)."""
    if iterations is None:
        return None
    return as_index(iterations, "iterations", lower=1, upper=MAX_ITERATIONS)


def _positive_int(value: Any, name: str, upper: int) -> int:
    v = as_index(value, name, lower=-(1 << 62), upper=1 << 62)
    if not 1 <= v <= upper:
        raise ValueError(f"{name} must be a positive int (at most {upper}), got {v}")
    return v


def _check_bbar_bits(bbar_bits: Any) -> int:
    lo, hi = BBAR_BITS_RANGE
    return as_index(bbar_bits, "bbar_bits", lower=lo, upper=hi)


def _const_bits(params: CKKSParams, c: float) -> int:
    """Scale bits for a constant multiplying the fresh data: enough for ``log_p`` significant
    bits of ``c`` (small step sizes such as ``a5 gamma_t`` would otherwise keep only a few),
    at most ``2 log_p`` so that the product stays at or above ``u``'s level (no depth cost).
    An RNS chain rescales by ``log_p`` only."""
    if params.primes is not None or c == 0.0:
        return params.log_p
    extra = max(0, math.ceil(-math.log2(abs(c))))
    return min(2 * params.log_p, params.log_p + extra)


def _iteration(
    sim: Simulator,
    Zc: Ciphertext,
    V: Ciphertext,
    W: Ciphertext,
    Bc: Ciphertext | None,
    mask: np.ndarray,
    layout: PackedLayout,
    coefs: tuple[float, ...],
    step: float,
    eta: float,
) -> tuple[Ciphertext, Ciphertext]:
    """One packed NAG iteration (module docstring, steps 1-7). Returns ``(V, W)``."""
    half = layout.d_pad // 2
    col_steps = [1 << k for k in range(int(math.log2(layout.d_pad)))] if half else []
    # steps 1-3: u_i replicated over row i
    M = sim.mul(Zc, V)
    if col_steps:
        M = sim.rotate_sum(M, col_steps)
        M = sim.mul_plain(M, mask)
        M = sim.rotate_sum(M, [-s for s in col_steps])
    u = M
    # step 4: sigma(-u) z * step, constants on the fresh data (no depth)
    deg = 2 * len(coefs) - 1
    u2 = sim.mul(u, u)
    u4 = sim.mul(u2, u2) if deg >= 5 else None
    p = sim.params
    total = sim.mul_const(Zc, 0.5 * step, _const_bits(p, 0.5 * step))
    for k, a in enumerate(coefs):
        zk = sim.mul_const(Zc, -a * step, _const_bits(p, a * step))
        term = sim.mul(zk, u)
        power = 2 * k + 1
        if power in (3, 7):
            term = sim.mul(term, u2)
        if power in (5, 7):
            term = sim.mul(term, u4)
        total = sim.add(total, term)
    # step 5: SumRowVec
    g = sim.sum_cts(total)
    row_steps = [layout.d_pad << k for k in range(int(math.log2(layout.rows_per_ct)))]
    if row_steps:
        g = sim.rotate_sum(g, row_steps)
    # step 6: quadratic gradient
    if Bc is not None:
        g = sim.mul(g, Bc)
    # step 7: NAG
    w_tmp = sim.add(V, g)
    V_new = sim.add(sim.mul_const(w_tmp, 1.0 - eta), sim.mul_const(W, eta))
    return V_new, w_tmp


def _resolve_params(params: CKKSParams | None) -> CKKSParams:
    if params is None:
        return CKKSParams()
    if not isinstance(params, CKKSParams):
        raise TypeError(f"params must be a CKKSParams, got {type(params).__name__}")
    return params


def _key_bytes(params: CKKSParams, n_rotation_keys: int) -> float:
    return (1 + n_rotation_keys) * params.key_bytes()


def _run(
    sim: Simulator,
    n: int,
    d: int,
    Z: np.ndarray | None,
    bbar: np.ndarray | None,
    *,
    enhanced: bool,
    iterations: int | None,
    sigmoid_degree: int,
    schedule: Callable[[int], float] | None,
    bbar_bits: int,
    record_path: bool = False,
) -> HETrainingReport:
    p = sim.params
    layout = PackedLayout(n, d + 1, p.slots)
    layout.check()
    sched = _default_schedule(enhanced, n) if schedule is None else schedule
    coefs = SIGMOID_POLYNOMIALS[sigmoid_degree]
    dry = sim.dry
    zero = np.zeros((1, p.slots))
    Zc = sim.encrypt(np.zeros((layout.n_ct, p.slots)) if dry else layout.pack(Z))
    V = sim.encrypt(zero)
    W = sim.encrypt(zero)
    Bc = None
    if enhanced:
        Bc = sim.encrypt(zero if dry else layout.replicate(bbar), scale_bits=bbar_bits)
    mask = layout.mask()
    limit = 10_000 if iterations is None else iterations
    etas = _nag_etas(limit)
    levels, mod_bits, path = [], [], []
    done = 0
    for t in range(limit):
        step = _step(sched, t)
        try:
            V, W = _iteration(sim, Zc, V, W, Bc, mask, layout, coefs, step, etas[t])
        except DepthExhaustedError:
            if iterations is None:
                break
            raise
        done += 1
        levels.append((V.mod_bits - p.log_q0) // p.log_p)
        mod_bits.append(V.mod_bits)
        if record_path and not dry:
            path.append(sim.decrypt(V)[0, : d + 1].copy())
    final = sim.decrypt(V)
    coef = None if final is None else _finite_result(final[0, : d + 1].copy())
    storage = layout.n_ct * p.ciphertext_bytes() + (p.ciphertext_bytes() if enhanced else 0.0)
    counts = dict(sim.counts)
    counts["rotation_keys"] = len(sim.rotation_keys)
    return HETrainingReport(
        coef_=coef,
        iterations=done,
        levels=levels,
        mod_bits=mod_bits,
        op_counts=counts,
        est_learn_seconds=sim.est_seconds,
        storage_bytes=storage,
        key_bytes=_key_bytes(p, len(sim.rotation_keys)),
        error_bound=sim.error_bound(V, slice(0, d + 1)),
        params=p,
        layout=layout,
        method="enhanced NAG" if enhanced else "NAG",
        backend="planner (dry run)" if dry else sim.backend,
        beta_path=path,
        rotation_steps=sorted(sim.rotation_keys),
    )


def _step(schedule: Callable[[int], float], t: int) -> float:
    """``schedule(t)`` as a finite float, or a ValueError / TypeError naming the schedule."""
    value = schedule(t)
    if isinstance(value, (str, bytes, bool)) or value is None or np.iscomplexobj(value):
        raise TypeError(f"schedule({t}) must return a real number, got {value!r}")
    try:
        step = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"schedule({t}) must return a real number, got {value!r}") from None
    if not math.isfinite(step):
        raise ValueError(f"schedule({t}) must return a finite number, got {step}")
    return step


def train_logreg(
    X: Any,
    y: Any,
    optimizer: str = "nag",
    enhanced: bool = True,
    iterations: int | None = None,
    sigmoid_degree: int = 5,
    params: CKKSParams | None = None,
    backend: str = "simulator",
    seed: int | None = None,
    *,
    noise: bool = True,
    schedule: Callable[[int], float] | None = None,
    bbar_bits: int = 40,
    n_threads: int | None = None,
    record_path: bool = False,
    engine: Simulator | None = None,
    compare_exact: bool = False,
) -> HETrainingReport:
    """Train logistic regression with Kim et al. 2018a's packed CKKS algorithm (simulated or real).

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Features, already scaled (e.g. min-max to [0, 1]); the intercept column is added here.
    y : array of shape (n_samples,)
        Labels in {0, 1} or {-1, +1}.
    optimizer : {"nag"}
        Nesterov's accelerated gradient (Kim et al. 2018a / Chiang Algorithm 1).
    enhanced : bool, default=True
        Quadratic-gradient (enhanced) NAG: step ``N_t B-bar g`` with ``N_t = 1 + 0.9^t``
        (Chiang Section 5). ``False``: the baseline step ``gamma_t g``,
        ``gamma_t = 10 / ((1 + t) n)``.
    iterations : int or None, default=None
        ``None`` runs as many iterations as the modulus allows (see :func:`plan_logreg`); more
        than fit raises :class:`~privlearn.he.DepthExhaustedError`. An int in
        ``[1, MAX_ITERATIONS]`` (10,000); floats such as ``2.0`` are a ``TypeError``.
    sigmoid_degree : {3, 5, 7}, default=5
        Degree of the least-squares sigmoid polynomial on [-8, 8].
    params : CKKSParams, optional
        Default ``CKKSParams()`` (the paper's ``log_n = 16, log_q = 1200, log_p = 30``).
    backend : {"simulator", "reference", "tenseal"}, default="simulator"
        The simulator with C++ kernels, the same with the numpy twin kernels (bit-identical),
        or real CKKS through TenSEAL/SEAL (``log_n`` 13-15; ``params`` as made by
        :func:`privlearn.he.tenseal_params`).
    seed : int or None, default=None
        Seed of the simulated CKKS error (``None``: OS entropy); with ``backend="tenseal"`` it
        seeds SEAL's generator (reproducible, not secure).
    noise : bool, default=True
        Simulated CKKS error on (``False``: exact arithmetic, for equivalence tests).
    schedule : callable, optional
        ``t -> step constant`` replacing the default ``N_t`` / ``gamma_t``; it must return a
        finite real number.
    bbar_bits : int, default=40
        Scale bits of the encrypted ``B-bar`` (Chiang Section 5 uses 40), an int in
        ``[10, 120]`` (:data:`BBAR_BITS_RANGE`: at least the smallest ``log_p``, at most twice
        the largest). The product with ``B-bar`` consumes that many modulus bits.
    n_threads : int or None, default=None
        Threads of the simulator's C++ kernels (results do not depend on it): ``None`` for the
        default (``OMP_NUM_THREADS`` or all cores), ``-1`` for all cores, or a positive int.
    record_path : bool, default=False
        Keep the decrypted weights after every iteration (``beta_path``).
    engine : Simulator, optional
        A ready engine to run on (e.g. a ``TenSEALEngine`` whose Galois keys were prepared);
        overrides ``backend``, ``params``, ``seed``, ``noise`` and ``n_threads``.
    compare_exact : bool, default=False
        Also run the identical computation without CKKS error (simulator) and report the
        difference as ``error_realized``.

    Returns
    -------
    HETrainingReport

    Raises
    ------
    TypeError
        For an argument of the wrong type: complex or non-numeric ``X`` / ``y``, a float
        ``iterations`` or ``bbar_bits``, a non-bool ``enhanced``, a float ``n_threads``.
    ValueError
        For an argument out of range: non-finite ``X`` / ``y``, labels other than two of
        ``{0, 1}`` / ``{-1, +1}``, ``iterations < 1``, ``bbar_bits`` outside ``[10, 120]``,
        ``n_threads`` of 0 or below -1, a schedule value that is not finite.
    """
    X, ys = _check_data(X, y)
    _check_method(optimizer, sigmoid_degree)
    enhanced = _check_bool(enhanced, "enhanced")
    noise = _check_bool(noise, "noise")
    record_path = _check_bool(record_path, "record_path")
    compare_exact = _check_bool(compare_exact, "compare_exact")
    params = _resolve_params(params) if engine is None else engine.params
    bbar_bits = _check_bbar_bits(bbar_bits)
    iterations = _check_iterations(iterations)
    as_threads(n_threads)  # validate now; the engine resolves it again
    if schedule is not None and not callable(schedule):
        raise TypeError(f"schedule must be None or a callable t -> step, got {schedule!r}")
    n, d, Z, bbar = _prepare(X, ys, enhanced)
    if iterations is None:
        plan = plan_logreg(
            n,
            d,
            enhanced=enhanced,
            sigmoid_degree=sigmoid_degree,
            params=params,
            bbar_bits=bbar_bits,
        )
        iterations = plan.iterations
        if iterations == 0:
            raise DepthExhaustedError("not even one iteration fits in the modulus")
    sim = engine or _make_engine(backend, params, noise=noise, seed=seed, n_threads=n_threads)
    kwargs = dict(
        enhanced=bool(enhanced),
        iterations=int(iterations),
        sigmoid_degree=sigmoid_degree,
        schedule=schedule,
        bbar_bits=int(bbar_bits),
    )
    report = _run(sim, n, d, Z, bbar, record_path=record_path, **kwargs)
    if compare_exact:
        exact = _run(
            Simulator(params, noise=False, seed=0, n_threads=n_threads), n, d, Z, bbar, **kwargs
        )
        report.error_realized = float(np.abs(report.coef_ - exact.coef_).max())
    return report


def _prepare(
    X: np.ndarray, ys: np.ndarray, enhanced: bool
) -> tuple[int, int, np.ndarray, np.ndarray | None]:
    """The data owner's side: ``Z = y * [1, X]`` and ``B-bar`` (checked inputs)."""
    n, d = X.shape
    X1 = np.column_stack([np.ones(n), X])
    Z = ys[:, None] * X1
    return n, d, Z, bbar_diagonal(X1) if enhanced else None


def _make_engine(
    backend: str, params: CKKSParams, *, noise: bool, seed: int | None, n_threads: int | None
) -> Simulator:
    if backend == "simulator":
        return Simulator(params, noise=noise, seed=seed, backend="core", n_threads=n_threads)
    if backend == "reference":
        return Simulator(params, noise=noise, seed=seed, backend="reference")
    if backend == "tenseal":
        from privlearn.he._tenseal import TenSEALEngine

        return TenSEALEngine(params, seed=seed)
    raise ValueError(f"backend must be 'simulator', 'reference' or 'tenseal', got {backend!r}")


def plan_logreg(
    n: int,
    d: int,
    *,
    enhanced: bool = True,
    iterations: int | None = None,
    sigmoid_degree: int = 5,
    params: CKKSParams | None = None,
    bbar_bits: int = 40,
    optimizer: str = "nag",
) -> HETrainingReport:
    """How many iterations fit, and what they cost, for ``n`` rows and ``d`` features, without data.

    Runs the exact operation sequence of :func:`train_logreg` on a dry simulator (levels,
    counters and cost only), so its iteration count, levels and operation counts are those of
    a real run. With ``iterations=None`` it runs until the next iteration would exhaust the
    modulus; with a number it raises :class:`~privlearn.he.DepthExhaustedError` when that many
    do not fit.
    """
    _check_method(optimizer, sigmoid_degree)
    params = _resolve_params(params)
    enhanced = _check_bool(enhanced, "enhanced")
    n, d = _positive_int(n, "n", 1 << 40), _positive_int(d, "d", 1 << 30)
    iterations = _check_iterations(iterations)
    bbar_bits = _check_bbar_bits(bbar_bits)
    kwargs = dict(
        enhanced=bool(enhanced),
        sigmoid_degree=sigmoid_degree,
        schedule=None,
        bbar_bits=int(bbar_bits),
    )
    if iterations is None:  # find the count, then count exactly that many iterations
        probe = _run(
            Simulator(params, dry=True, noise=False, seed=0),
            int(n),
            int(d),
            None,
            None,
            iterations=None,
            **kwargs,
        )
        iterations = probe.iterations
        if iterations == 0:
            return probe
    sim = Simulator(params, dry=True, noise=False, seed=0)
    return _run(
        sim,
        int(n),
        int(d),
        None,
        None,
        iterations=iterations,
        **kwargs,
    )


def clear_logreg(
    X: Any,
    y: Any,
    *,
    enhanced: bool = True,
    iterations: int = 4,
    sigmoid_degree: int = 5,
    schedule: Callable[[int], float] | None = None,
    return_path: bool = False,
) -> Any:
    """The same packed algorithm evaluated in the clear in float64 (no packing, no modulus).

    ``beta`` after ``iterations`` NAG steps with the polynomial sigmoid: ``u = Z V``,
    ``g = Z^T (step * p(-u))`` (``p`` the sigmoid polynomial), times ``B-bar`` when enhanced,
    then Chiang Algorithm 1 line 31. The simulator with ``noise=False`` reproduces it.
    """
    X, ys = _check_data(X, y)
    _check_method("nag", sigmoid_degree)
    enhanced = _check_bool(enhanced, "enhanced")
    iterations = as_index(iterations, "iterations", lower=1, upper=MAX_ITERATIONS)
    if schedule is not None and not callable(schedule):
        raise TypeError(f"schedule must be None or a callable t -> step, got {schedule!r}")
    n, d = X.shape
    X1 = np.column_stack([np.ones(n), X])
    Z = ys[:, None] * X1
    bbar = bbar_diagonal(X1)
    sched = _default_schedule(enhanced, n) if schedule is None else schedule
    coefs = SIGMOID_POLYNOMIALS[sigmoid_degree]
    V = np.zeros(d + 1)
    W = np.zeros(d + 1)
    path = []
    for t, eta in enumerate(_nag_etas(iterations)):
        u = Z @ V
        s = _step(sched, t)
        weight = 0.5 * s + sum(-a * s * u ** (2 * k + 1) for k, a in enumerate(coefs))
        g = Z.T @ weight
        if enhanced:
            g = bbar * g
        w_tmp = V + g
        V = (1.0 - eta) * w_tmp + eta * W
        W = w_tmp
        path.append(V.copy())
    V = _finite_result(V)
    return (V, path) if return_path else V


def _finite_result(beta: np.ndarray) -> np.ndarray:
    """The trained coefficients, or a ValueError instead of NaN / infinite ones: features far
    from order one overflow the polynomial sigmoid's powers in double precision (and real CKKS
    would have wrapped around its modulus long before, decrypting garbage)."""
    if not np.isfinite(beta).all():
        raise ValueError(
            "the training overflowed double precision (non-finite coefficients): the features "
            "are too large in magnitude for the polynomial sigmoid; scale them to [0, 1] as "
            "the paper does (privlearn.data.minmax_scale with public bounds)"
        )
    return beta
