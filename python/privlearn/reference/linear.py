"""numpy twin of the core's private mini-batch SGD (``cpp/include/privlearn/linear/sgd.hpp``).

Same signature and the same random draws as :func:`privlearn.linear.sgd_train`, so core and
reference models agree to ``rtol=1e-10``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from privlearn._design_matrix import clip_coefficients, scaled_norm, scaled_row_norms
from privlearn._losses import dual_objective, loss_derivative, objective
from privlearn._specs.scd import SCD_DEFAULTS, SCDRun, check_scd_result, prepare_scd, scd_step_count
from privlearn._specs.sgd import (
    SGD_DEFAULTS,
    SGDRun,
    check_sgd_iterate,
    prepare_sgd,
    sgd_step_count,
)
from privlearn._specs.softmax import (
    SOFTMAX_DEFAULTS,
    SoftmaxRun,
    check_softmax_iterate,
    prepare_softmax,
    softmax_step_count,
)
from privlearn.reference.random import Stream, noise_lattice, round_shift_even

__all__ = ["scd_train", "sgd_train", "softmax_sgd_train"]


# Fixed-point sums (``privlearn/fixed_sum.hpp``): a bounded term t is stored as trunc(t * 2**30 /
# bound) in int64, so a batch sum is exact and independent of the order of its terms.
_FRACTION_BITS = 30


def _to_units(t: np.ndarray) -> np.ndarray:
    """``trunc(t)`` as int64, NaN -> 0, saturated at +-2**62 (``fixed::to_units``)."""
    with np.errstate(invalid="ignore"):
        u = np.trunc(np.clip(t, -(2.0**62), 2.0**62))
    return np.where(np.isnan(u), 0.0, u).astype(np.int64)


def fixed_point_units(coef: np.ndarray, Xb: Any, bound: float) -> np.ndarray:
    """``sum_i coef_i x_i`` for terms bounded by ``bound`` per entry, as the exact int64 sum of
    their fixed-point units ``bound * 2**-30`` (``fixed::sum``)."""
    to_units = 2.0**_FRACTION_BITS / bound
    a = coef * to_units
    d = Xb.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):
        if sp.issparse(Xb):
            Xb = sp.csr_matrix(Xb)
            terms = _to_units(Xb.data * np.repeat(a, np.diff(Xb.indptr)))
            units = np.zeros(d, dtype=np.int64)
            np.add.at(units, Xb.indices, terms)
        else:
            units = _to_units(a[:, None] * Xb).sum(axis=0, dtype=np.int64)
    return units


def fixed_point_sum(coef: np.ndarray, Xb: Any, bound: float) -> np.ndarray:
    """``sum_i coef_i x_i`` for terms bounded by ``bound`` per entry, summed exactly in
    fixed point and returned as float64 (``fixed::sum`` then ``fixed::to_real``)."""
    units = fixed_point_units(coef, Xb, bound)
    return units.astype(np.float64) * math.ldexp(bound, -_FRACTION_BITS)


def lattice_release(
    units: np.ndarray, noise: Stream, start: int, sigma: float, bound: float
) -> np.ndarray:
    """The Gaussian mechanism on an exact fixed-point sum, released exactly on a lattice (the
    twin of the core's ``random::noise_lattice`` / ``add_lattice_noise``).

    ``units`` (int64, units of ``bound * 2**-30``) are rounded to the lattice
    ``bound * 2**-frac_bits`` (half to even; no rounding when ``frac_bits = 30``) and get the
    exact discrete Gaussian draws ``start`` to ``start + len(units) - 1`` of ``noise`` (Canonne,
    Kamath, Steinke 2020): an integer vector computed exactly, converted to float64 only then
    (post-processing). See :func:`privlearn.random.noise_lattice` for the privacy argument.
    """
    units = np.asarray(units, dtype=np.int64).reshape(-1)
    frac_bits, shift, variance = noise_lattice(sigma, units.shape[0])
    if shift:
        units = np.array([round_shift_even(int(u), shift) for u in units], dtype=np.int64)
    with np.errstate(over="ignore"):
        noisy = units + noise.discrete_gaussian(start, units.shape[0], variance)
    return noisy.astype(np.float64) * math.ldexp(bound, -frac_bits)


def fixed_order_margins(Xb: Any, w: np.ndarray) -> np.ndarray:
    """``x_i^T w`` for each row, summed in the core's fixed order (``DenseRows::dot_fixed`` in
    ``rows.hpp``: four partial sums over ``k mod 4``, then ``(d0 + d1) + (d2 + d3)``; a CSR row
    sequentially in stored order, as scipy's product), so that the twin agrees with the core
    exactly even where a partial sum overflows (issue 30, item 8)."""
    if sp.issparse(Xb):
        return np.asarray(Xb @ w).reshape(-1)
    P = np.asarray(Xb) * w  # the products, rounded as in the core (no fused multiply-add)
    m = P.shape[1]
    acc = np.zeros((P.shape[0], 4))
    top = m - m % 4
    for k in range(0, top, 4):
        acc += P[:, k : k + 4]
    for k in range(top, m):
        acc[:, 0] += P[:, k]
    return (acc[:, 0] + acc[:, 1]) + (acc[:, 2] + acc[:, 3])


def _learning_rate(schedule: str, eta0: float, alpha: float, step: int) -> float:
    s = float(step + 1)
    if schedule == "inv_sqrt":
        return eta0 / np.sqrt(s)
    if schedule == "inv_lambda_t":
        return 1.0 / (alpha * s)
    return eta0


def sgd_train(
    X: Any, y: Any, *, key: bytes, w0: Any = None, n_threads: int | None = None, **kw: Any
) -> SGDRun:
    """Private mini-batch SGD in numpy; see :func:`privlearn.linear.sgd_train` for the arguments.

    ``n_threads`` is accepted for signature compatibility and ignored.
    """
    X, y, w, spec = prepare_sgd(X, y, w0, key=key, **{**SGD_DEFAULTS, **kw})
    n, d = X.shape
    steps = sgd_step_count(n, spec)
    batches = Stream(key=spec.key, stream=spec.batch_stream)
    noises = Stream(key=spec.key, stream=spec.noise_stream)
    per_pass = -(-n // spec.batch_size)
    perm = np.empty(0, dtype=np.int64)
    path, path_steps = [], []
    q_rate = spec.rate if spec.rate > 0 else spec.batch_size / n
    for t in range(steps):
        if spec.sampling == "disjoint":
            p, k = divmod(t, per_pass)
            if k == 0:
                perm = batches.permutation(p, n)
            rows = perm[k * spec.batch_size : (k + 1) * spec.batch_size]
        elif spec.sampling == "fixed":
            rows = batches.choice_without_replacement(t, n, spec.batch_size)
        else:
            rows = batches.poisson_sample(t, n, q_rate)
        Xb = X[rows]
        with np.errstate(over="ignore", invalid="ignore"):
            c = loss_derivative(spec.loss, fixed_order_margins(Xb, w), y[rows])
        if spec.clip > 0:  # sign(c) min(|c|, C / ||x_i||), overflow-safe (as the core)
            scale, root = scaled_row_norms(Xb)
            c = clip_coefficients(c, scale, root, spec.clip)
            if spec.mechanism == "gaussian" and spec.sigma > 0:  # exact noise on the lattice
                units = fixed_point_units(c, Xb, spec.clip)
                grad = lattice_release(units, noises, t * d, spec.sigma, spec.clip)
            else:
                grad = fixed_point_sum(c, Xb, spec.clip)  # exact: bounded terms
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                grad = np.asarray(Xb.T @ c).reshape(-1)
        if spec.mechanism == "l2-laplace" and np.isfinite(spec.epsilon):
            unit = spec.clip if spec.clip > 0 else 1.0
            grad = grad + unit * noises.l2_laplace(t, 1, d, spec.epsilon)[0]
        denom = float(spec.batch_size) if spec.sampling == "poisson" else float(len(rows))
        eta = _learning_rate(spec.learning_rate, spec.eta0, spec.alpha, t)
        with np.errstate(over="ignore", invalid="ignore"):
            w = w - eta * (spec.alpha * w + grad / denom)
        if spec.radius > 0 and np.isfinite(spec.radius):
            scale, root = scaled_norm(w)
            with np.errstate(over="ignore"):
                too_long = scale * root > spec.radius
            if too_long:
                w = w * ((spec.radius / scale) / root)
        if spec.record_every > 0 and ((t + 1) % spec.record_every == 0 or t + 1 == steps):
            path.append(w)
            path_steps.append(t + 1)
    check_sgd_iterate(w)
    return SGDRun(
        coef=w,
        path=np.array(path).reshape(len(path), d),
        path_steps=np.array(path_steps, dtype=np.int64),
        n_steps=steps,
    )


# ---- DP-SCD ------------------------------------------------------------------------------------
_BETA_MIN, _BETA_MAX = 1e-4, 1.0 - 1e-4
_NEWTON_TOL = 1e-12  # as kNewtonTol in scd.cpp


def _dual_step(
    loss: str,
    a: np.ndarray,
    y: np.ndarray,
    q: np.ndarray,
    z: np.ndarray,
    s: float,
    lam_n: float,
    newton_steps: int = 1,
) -> np.ndarray:
    """Closed-form minimiser of the local dual subproblem (see ``linear/scd.hpp``)."""
    if loss == "squared":
        return (y - z - a) / (1.0 + s * q / lam_n)
    if loss == "hinge":
        with np.errstate(divide="ignore", invalid="ignore"):
            b = np.clip(y * a + lam_n * (1.0 - y * z) / (s * q), 0.0, 1.0)
        return np.where(q > 0.0, y * b - a, 0.0)
    c = s * q / lam_n
    b = np.clip(y * a, _BETA_MIN, _BETA_MAX)
    if newton_steps == 1:  # the paper's step: one Newton step in beta
        g = np.log(b / (1.0 - b)) + y * z + c * (b - y * a)
        h = 1.0 / (b * (1.0 - b)) + c
        return y * np.clip(b - g / h, _BETA_MIN, _BETA_MAX) - a
    # Newton in the log-odds u = logit(beta) (see scd.hpp); an entry stops once it settles
    u = np.log(b / (1.0 - b))
    rhs = y * z - c * (y * a)
    active = np.ones(u.shape, dtype=bool)
    with np.errstate(over="ignore"):
        for _ in range(newton_steps):
            sg = 1.0 / (1.0 + np.exp(-u))
            g = u + c * sg + rhs
            h = 1.0 + c * (sg * (1.0 - sg))
            nxt = u - g / h
            moved = np.abs(nxt - u)
            u = np.where(active, nxt, u)
            active &= moved > _NEWTON_TOL
            if not active.any():
                break
        return y * np.clip(1.0 / (1.0 + np.exp(-u)), _BETA_MIN, _BETA_MAX) - a


def _scale(values: np.ndarray, clip: float) -> np.ndarray:
    """``sign(v) min(|v|, C)``; NaN -> 0 (as ``scale_to`` in scd.cpp); ``clip = 0``: as is."""
    if clip <= 0:
        return values
    values = np.asarray(values, dtype=np.float64)
    out = np.where(np.abs(values) > clip, np.copysign(clip, values), values)
    return np.where(np.isnan(values), 0.0, out)


def scd_train(X: Any, y: Any, *, key: bytes, n_threads: int | None = None, **kw: Any):
    """DP-SCD in numpy; see :func:`privlearn.linear.scd_train` for the arguments.

    ``n_threads`` is accepted for signature compatibility and ignored.
    """
    X, y, spec = prepare_scd(X, y, key=key, **{**SCD_DEFAULTS, **kw})
    n, m = X.shape
    steps = scd_step_count(n, m, spec)
    n_eff = spec.n_eff(n)
    lam_n = spec.alpha * n_eff
    sparse = sp.issparse(X)
    batches = Stream(key=spec.key, stream=spec.batch_stream)
    noise_v = Stream(key=spec.key, stream=spec.noise_stream)
    noise_c = Stream(key=spec.key, stream=spec.noise_stream + 2)
    noise_j = Stream(key=spec.key, stream=spec.noise_stream + 1)  # alpha_jitter
    with np.errstate(over="ignore"):
        sq = (
            np.asarray(X.multiply(X).sum(axis=1)).reshape(-1)
            if sparse
            else np.einsum("ij,ij->i", X, X)
        )

    def check_rows(batch: np.ndarray, z: np.ndarray) -> None:
        bad = ~(np.isfinite(sq[batch]) & np.isfinite(z))
        if bad.any():
            j = int(np.asarray(batch)[np.flatnonzero(bad)[0]])
            raise ValueError(
                f"row {j} of X contains NaN or infinite values or has a squared norm beyond "
                "DBL_MAX (DP-SCD assumes ||x_j|| <= 1: scale the rows), or v overflowed"
            )

    path_steps: list[int] = []
    primal_path: list[float] = []
    dual_path: list[float] = []

    def due(t: int) -> bool:
        return spec.record_every > 0 and ((t + 1) % spec.record_every == 0 or t + 1 == steps)

    def record(t: int, theta: np.ndarray, a: np.ndarray | None) -> None:
        path_steps.append(t + 1)
        primal_path.append(float(objective(X, y, theta, spec.loss, spec.alpha)[0]))
        dual_path.append(np.nan if a is None else dual_objective(X, y, spec.loss, spec.alpha, a))

    def row(j: int) -> np.ndarray:
        return X[j].toarray().reshape(-1) if sparse else X[j]

    if spec.variant == "primal":
        cols = X.tocsc() if sparse else X
        theta, w = np.zeros(m), np.zeros(n)

        def column(k: int) -> np.ndarray:
            return cols[:, k].toarray().reshape(-1) if sparse else cols[:, k]

        for t in range(steps):
            coords = batches.choice_without_replacement(t, m, spec.batch_size)
            for k in coords:
                col = column(k)
                if spec.loss == "squared":
                    with np.errstate(over="ignore"):  # overflow is handled below, as in the core
                        g, h = col @ (w - y), col @ col
                else:
                    with np.errstate(over="ignore"):
                        e = 1.0 / (1.0 + np.exp(y * w))
                    g, h = col @ (-y * e), (col * col) @ (e * (1.0 - e))
                with np.errstate(over="ignore", invalid="ignore"):
                    grad = g / n_eff + spec.alpha * theta[k]
                    hess = h / n_eff + spec.alpha
                    delta = float(_scale(np.array([-grad / hess]), spec.clip)[0])
                theta[k] += delta
                w = w + delta * col
            if spec.noise_std > 0:
                e = spec.noise_std * noise_v.normal(t * m, len(coords))
                for k, ek in zip(coords, e):
                    theta[k] += ek
                    w = w + ek * column(k)
            if due(t):
                record(t, theta, None)
        check_scd_result(theta, "coefficient")
        return SCDRun(
            coef=theta,
            dual_coef=np.empty(0),
            v=theta * lam_n,
            path_steps=np.array(path_steps, dtype=np.int64),
            primal_path=np.array(primal_path),
            dual_path=np.array(dual_path),
            n_steps=steps,
        )

    a, v = np.zeros(n), np.zeros(m)
    perm = np.empty(0, dtype=np.int64)
    q_rate = spec.rate if spec.rate > 0 else spec.batch_size / n
    noisy = spec.noise_std > 0
    lazy = noisy and not spec.hidden_alpha  # hidden_alpha: no noise on alpha (scd.hpp)
    last = np.zeros(n, dtype=np.int64)  # lazy alpha noise: steps already noised (scd.hpp)

    def jitter(t: int, batch: np.ndarray) -> None:
        """alpha_j += alpha_jitter N(0, 1) for the batch rows (address t N + j)."""
        if spec.alpha_jitter > 0 and batch.size:
            a[batch] += spec.alpha_jitter * noise_j._normal_at(t * n + batch)

    for t in range(steps):
        if spec.variant == "scd":
            epoch, k = divmod(t, n)
            if k == 0:
                perm = batches.permutation(epoch, n)
            batch = perm[k : k + 1]
        elif spec.poisson:
            batch = batches.poisson_sample(t, n, q_rate)
        else:
            batch = batches.choice_without_replacement(t, n, spec.batch_size)
        if lazy and batch.size:  # the noise of the steps since each batch row's last visit
            missed = t - last[batch]
            hit = missed > 0
            rows_hit = batch[hit]
            a[rows_hit] += (
                spec.noise_std
                * np.sqrt(missed[hit].astype(np.float64))
                * noise_c._normal_at(t * n + rows_hit)
            )
            last[batch] = t
        if spec.variant == "dual":
            Xb = X[batch]
            z = np.asarray(Xb @ v).reshape(-1) / lam_n
            check_rows(batch, z)
            zeta = _scale(
                _dual_step(
                    spec.loss,
                    a[batch],
                    y[batch],
                    sq[batch],
                    z,
                    spec.batch_size,
                    lam_n,
                    spec.newton_steps,
                ),
                spec.clip,
            )
            a[batch] += zeta
            jitter(t, batch)
            if spec.clip > 0 and noisy and spec.noise_std / spec.clip <= 2.0**39:
                # exact sum, exact noise on the lattice (scd.cpp)
                units = fixed_point_units(zeta, Xb, spec.clip)
                sigma_l = (spec.noise_std / spec.clip) * (1.0 + 2.0**-50)
                v = v + lattice_release(units, noise_v, t * m, sigma_l, spec.clip)
            elif spec.clip > 0:  # bounded updates: the exact fixed-point sum (fixed_sum.hpp)
                v = v + fixed_point_sum(zeta, Xb, spec.clip)
            else:
                v = v + np.asarray(Xb.T @ zeta).reshape(-1)
        else:
            for j in batch:
                xj = row(j)
                z = np.array([xj @ v / lam_n])
                check_rows(np.array([j]), z)
                step = _dual_step(
                    spec.loss,
                    a[j : j + 1],
                    y[j : j + 1],
                    sq[j : j + 1],
                    z,
                    1.0,
                    lam_n,
                    spec.newton_steps,
                )
                step = float(_scale(step, spec.clip)[0])
                a[j] += step
                v = v + step * xj
            jitter(t, batch)
        lattice = spec.variant == "dual" and spec.clip > 0 and spec.noise_std / spec.clip <= 2.0**39
        if noisy and not lattice:  # float noise (no lattice)
            v = v + spec.noise_std * noise_v.normal(t * m, m)
        if due(t):
            record(t, v / lam_n, a)
    if lazy:  # outstanding catch-up, so the returned alpha has the hypothetical's distribution
        missed = steps - last
        a = a + np.where(
            missed > 0,
            spec.noise_std * np.sqrt(missed.astype(np.float64)) * noise_c.normal(steps * n, n),
            0.0,
        )
    check_scd_result(v, "coefficient")
    check_scd_result(a, "dual variable")
    return SCDRun(
        coef=v / lam_n,
        dual_coef=a,
        v=v,
        path_steps=np.array(path_steps, dtype=np.int64),
        primal_path=np.array(primal_path),
        dual_path=np.array(dual_path),
        n_steps=steps,
    )


# ---- softmax regression by Gaussian DP-SGD (cpp/include/privlearn/linear/softmax.hpp) ----------
def _softmax_coefficients(
    Z: np.ndarray, labels: np.ndarray, scale: np.ndarray, root: np.ndarray, clip: float
) -> np.ndarray:
    """Per-row gradient coefficients ``r_i = p_i - e_{y_i}`` (clipped), as the core.

    ``p_i = softmax(z_i)`` with the maximum subtracted; infinite maxima are limits (uniform over
    the classes at ``+inf``; uniform when all are ``-inf``); a row with a NaN score gets 0
    (clipping) or NaN. Clipping multiplies ``r_i`` by
    ``min(1, (((C / sx) / rx) / sr) / rr)`` (0 for a zero row or ``r_i = 0``).
    """
    b, k = Z.shape
    nan = np.isnan(Z).any(axis=1)
    Zs = np.where(nan[:, None], 0.0, Z)
    m = Zs.max(axis=1) if k else np.zeros(b)
    inf = np.isinf(m)
    with np.errstate(over="ignore", invalid="ignore"):
        E = np.exp(Zs - np.where(inf, 0.0, m)[:, None])
    limit = np.where((m[:, None] > 0) & (Zs != m[:, None]), 0.0, 1.0)
    E = np.where(inf[:, None], limit, E)
    P = E / E.sum(axis=1)[:, None]
    P[np.arange(b), labels] -= 1.0
    if clip > 0:
        sr, rr = scaled_row_norms(P)
        ok = (root > 0) & (rr > 0)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
            lim = (
                ((clip / np.where(ok, scale, 1.0)) / np.where(ok, root, 1.0))
                / np.where(ok, sr, 1.0)
            ) / np.where(ok, rr, 1.0)
        f = np.where(ok, np.where(lim >= 1.0, 1.0, lim), 0.0)
        P = P * f[:, None]
    return np.where(nan[:, None], 0.0 if clip > 0 else np.nan, P)


def softmax_sgd_train(
    X: Any,
    y: Any,
    *,
    key: bytes,
    n_classes: int,
    W0: Any = None,
    n_threads: int | None = None,
    **kw: Any,
) -> SoftmaxRun:
    """Softmax regression by Gaussian DP-SGD in numpy; see
    :func:`privlearn.linear.softmax.softmax_sgd_train` for the arguments.

    ``n_threads`` is accepted for signature compatibility and ignored.
    """
    X, y, W, spec = prepare_softmax(
        X, y, W0, key=key, n_classes=n_classes, **{**SOFTMAX_DEFAULTS, **kw}
    )
    n, d = X.shape
    k = spec.n_classes
    steps = softmax_step_count(n, spec)
    batches = Stream(key=spec.key, stream=spec.batch_stream)
    noises = Stream(key=spec.key, stream=spec.noise_stream)
    q_rate = spec.rate if spec.rate > 0 else spec.batch_size / n
    path, path_steps = [], []
    for t in range(steps):
        if spec.sampling == "fixed":
            rows = batches.choice_without_replacement(t, n, spec.batch_size)
        else:
            rows = batches.poisson_sample(t, n, q_rate)
        Xb = X[rows]
        with np.errstate(over="ignore", invalid="ignore"):
            Z = np.asarray(Xb @ W).reshape(len(rows), k)
        scale, root = scaled_row_norms(Xb) if spec.clip > 0 else (None, None)
        A = _softmax_coefficients(Z, y[rows], scale, root, spec.clip)
        if spec.clip > 0 and spec.sigma > 0:  # exact sums, class by class, noised on the lattice
            units = np.stack([fixed_point_units(A[:, c], Xb, spec.clip) for c in range(k)])
            grad = lattice_release(units, noises, t * d * k, spec.sigma, spec.clip)
            grad = grad.reshape(k, d).T
        elif spec.clip > 0:  # bounded entries: exact fixed-point sums, class by class
            grad = np.stack([fixed_point_sum(A[:, c], Xb, spec.clip) for c in range(k)], axis=1)
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                grad = np.asarray(Xb.T @ A).reshape(d, k)
        denom = float(spec.batch_size) if spec.sampling == "poisson" else float(len(rows))
        eta = _learning_rate(spec.learning_rate, spec.eta0, spec.alpha, t)
        with np.errstate(over="ignore", invalid="ignore"):
            W = W - eta * (spec.alpha * W + grad / denom)
        if spec.radius > 0 and np.isfinite(spec.radius):
            s, r = scaled_norm(W.reshape(-1))
            with np.errstate(over="ignore"):
                too_long = s * r > spec.radius
            if too_long:
                W = W * ((spec.radius / s) / r)
        if spec.record_every > 0 and ((t + 1) % spec.record_every == 0 or t + 1 == steps):
            path.append(W.reshape(-1))
            path_steps.append(t + 1)
    check_softmax_iterate(W, k)
    return SoftmaxRun(
        coef=W,
        path=np.array(path).reshape(len(path), d * k),
        path_steps=np.array(path_steps, dtype=np.int64),
        n_steps=steps,
    )
