"""Rows and the public ball ``B(0, radius)``: squared row norms, the radius check with its
rounding tolerance (or clipping), and projection onto a ball.

Every function works row by row (no blocked reductions), so a partition of the rows gets the
bits of the whole array: the Dask back-end (:mod:`privlearn.distributed.kmeans`) relies on it.
Belongs here: per-row geometry of the rows against the ball. Not here: input conversion
(:mod:`privlearn.cluster._inputs`) or maps between spaces (:mod:`privlearn.cluster._projection`).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ROW_NORM_TOLERANCE",
    "clip_rows",
    "outside_message",
    "project_ball",
    "row_sq_norms",
]

#: Relative slack of the radius check: a row of norm in ``(radius, radius * (1 + tol)]`` is
#: taken to be in the ball up to rounding (float32 data normalised to the radius: the float32
#: rounding of each entry, ``2**-24`` relative, shows in the float64 norm) and projected onto
#: the ball exactly as ``clip=True`` would (a per-row map); a row further out is an error (or
#: is clipped with ``clip=True``). The sensitivity stays ``radius``.
ROW_NORM_TOLERANCE = 1e-6


def row_sq_norms(X: np.ndarray) -> np.ndarray:
    """``||x_i||**2`` of every row, summed over the columns in order: every row's value is
    the same whatever the other rows (no blocked or pairwise reduction), so a partition of
    the rows gets the bits of the whole array (the Dask fit relies on it)."""
    out = X[:, 0] * X[:, 0]
    for j in range(1, X.shape[1]):
        out += X[:, j] * X[:, j]
    return out


def clip_rows(X: np.ndarray, radius: float, clip: bool, first_row: int = 0) -> np.ndarray:
    """``X`` with rows of norm above ``radius`` projected onto the ball (``clip=True``) or a
    ``ValueError`` saying which precondition failed and how to fix it. The message quotes only
    public inputs (the radius, the tolerance): no norm, excess or row index of the private
    data (``first_row``, the offset of a Dask chunk, is kept for the signature). Rows within
    :data:`ROW_NORM_TOLERANCE` (relative) of the radius are rounding, not data: they are
    projected in both cases. Never writes to ``X``: a copy is made when a row changes."""
    del first_row
    norms = np.sqrt(row_sq_norms(X))
    outside = norms > radius
    if outside.any():
        if not clip and (norms > radius * (1.0 + ROW_NORM_TOLERANCE)).any():
            raise ValueError(outside_message(radius))
        X = X.copy()
        X[outside] *= (radius / norms[outside])[:, None]
    return X


def outside_message(radius: float) -> str:
    """The error of a row outside ``B(0, radius)``: the failed precondition and its fixes, in
    terms of public inputs only."""
    return (
        f"X has rows outside the public ball B(0, radius={radius!r}) (L2 norm above the radius, "
        f"beyond the rounding tolerance {ROW_NORM_TOLERANCE:g}), which the privacy proof needs "
        "every row to lie in; pass clip=True to project such rows onto the ball (a per-row "
        "map, no privacy cost), or pass a larger public radius (a bound known without looking "
        "at these rows)"
    )


def project_ball(Y: np.ndarray, r: float = 1.0) -> np.ndarray:
    """Rows of ``Y`` projected onto the closed ball of radius ``r`` (rows inside unchanged)."""
    norms = np.sqrt(row_sq_norms(Y))
    scale = np.where(norms > r, r / np.maximum(norms, 1e-300), 1.0)
    out = Y * scale[:, None]
    # guard against rounding just above r
    norms2 = row_sq_norms(out)
    bad = norms2 > r * r
    if bad.any():
        out[bad] *= np.nextafter(1.0, 0.0) ** 4
    return out
