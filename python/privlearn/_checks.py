"""Argument checks shared by every public function: each raises a ValueError or TypeError that
names the argument and what was wrong. Pure Python (the numpy reference may use it)."""

from __future__ import annotations

import numbers
import operator
import os
from typing import Any

import numpy as np

__all__ = [
    "as_index",
    "as_non_negative",
    "as_positive",
    "as_probability",
    "as_real",
    "as_threads",
    "check_sparse_structure",
    "max_threads",
]


def as_index(value: Any, name: str, *, upper: int, lower: int = 0) -> int:
    """An integer in ``[lower, upper]``; bools, floats and strings raise ``TypeError``."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
    if value < lower or value > upper:
        raise ValueError(f"{name} must lie in [{lower}, {upper}], got {value}")
    return value


def as_real(
    value: Any, name: str, *, allow_bool: bool = False, numbers_only: bool = False
) -> float:
    """``float(value)``, or ``TypeError("<name> must be a real number, got <type>")``.

    ``None``, ``str`` and ``bytes`` are rejected, and so is ``bool`` unless ``allow_bool``.
    Anything else ``float()`` accepts (numpy scalars, 0-d arrays, objects with ``__float__``)
    is converted, unless ``numbers_only``: then only instances of :class:`numbers.Real`
    (Python and numpy integers and floats, ``Fraction``) are, and numpy bools are rejected.
    The value is not range-checked: NaN and infinities pass through.
    """
    bad = isinstance(value, (str, bytes)) or value is None
    bad = bad or (isinstance(value, bool) and not allow_bool)
    bad = bad or (numbers_only and not isinstance(value, numbers.Real))
    if bad:
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}") from None


def as_non_negative(value: Any, name: str) -> float:
    """A finite float >= 0; bools raise ``TypeError``."""
    value = as_real(value, name)
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def as_positive(value: Any, name: str) -> float:
    """A finite float > 0 (``True``/``False`` are accepted as 1.0/0.0)."""
    value = as_real(value, name, allow_bool=True)
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def as_probability(value: Any, name: str) -> float:
    """A float in ``[0, 1]`` (``True``/``False`` are accepted as 1.0/0.0)."""
    value = as_real(value, name, allow_bool=True)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value}")
    return value


def max_threads() -> int:
    """Largest ``n_threads`` accepted: ``max(4 * os.cpu_count(), 256)`` (the core's
    ``parallel::max_threads``). Larger requests crash GNU OpenMP (it keeps per-thread team
    state on the stack and aborts when thread creation fails), so they are refused."""
    return max(4 * (os.cpu_count() or 1), 256)


def as_threads(n_threads: Any) -> int:
    """Thread request for the core: ``None`` -> 0 (the core's default: ``OMP_NUM_THREADS`` or
    all cores), ``-1`` -> all cores, ``k`` in ``[1, max_threads()]`` -> ``k``.

    Raises
    ------
    TypeError
        For bools, floats and other non-integers.
    ValueError
        For 0, negatives other than -1, and counts above :func:`max_threads`.
    """
    if n_threads is None:
        return 0
    n = as_index(n_threads, "n_threads", lower=-(1 << 62), upper=1 << 62)
    if n == -1:
        return os.cpu_count() or 1
    limit = max_threads()
    if n < 1 or n > limit:
        raise ValueError(
            f"n_threads must be None, -1 or an integer in [1, {limit}] "
            f"(max(4 x cores, 256)), got {n}"
        )
    return n


def _index_array(arr: Any, what: str) -> np.ndarray:
    """A 1-D integer array (the stored index arrays of a sparse matrix), else a ValueError."""
    arr = np.asarray(arr)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ValueError(
            f"{what} must be a 1-D integer array, got dtype {arr.dtype} and shape {arr.shape}"
        )
    return arr


def check_sparse_structure(X: Any, name: str = "X") -> None:
    """Check the stored structure of a scipy sparse matrix before anything indexes with it.

    scipy checks a CSR matrix's index ranges only when asked to (``check_format(True)``), and
    its arrays are writable after construction, while its compiled kernels (and the core's)
    index with the stored indices unchecked: an index out of range, a negative one, a
    non-monotone ``indptr`` or arrays of mismatched length read or write outside the arrays.
    This check runs in O(nnz) vectorised numpy and raises a ``ValueError`` naming the fault:

    - CSR / CSC / BSR: ``indptr`` of length ``n_major + 1`` starting at 0, non-decreasing,
      ending at ``len(indices) == len(data)``; every index in ``[0, n_minor)``;
    - COO: ``row``/``col`` as long as ``data``, in ``[0, n_rows)`` and ``[0, n_cols)``.

    Other formats (LIL, DOK, DIA) hold Python-level or self-checking structures and are left
    to scipy; dense input and non-2-D sparse arrays are ignored (the callers' shape checks
    reject the latter). Duplicate or unsorted indices are valid here (callers canonicalise).

    Parameters
    ----------
    X : any
        Checked only when ``scipy.sparse.issparse(X)``.
    name : str
        The argument's name in the messages.
    """
    import scipy.sparse as sp

    if not sp.issparse(X):
        return
    shape = tuple(X.shape)
    if len(shape) != 2:
        return
    n_rows, n_cols = (operator.index(s) for s in shape)
    if n_rows < 0 or n_cols < 0:
        raise ValueError(f"{name} has a negative shape {shape}")
    fmt = X.format
    if fmt not in ("csr", "csc", "bsr", "coo"):
        return
    data = np.asarray(X.data)
    if fmt in ("csr", "csc", "bsr"):
        if fmt == "bsr":
            r, c = X.blocksize
            if r < 1 or c < 1 or n_rows % r or n_cols % c:
                raise ValueError(f"{name} has blocksize {(r, c)} that does not tile shape {shape}")
            n_major, n_minor = n_rows // r, n_cols // c
            block_ok = data.ndim == 3 and data.shape[1:] == (r, c)
            n_data = data.shape[0] if block_ok else -1
        else:
            n_major, n_minor = (n_rows, n_cols) if fmt == "csr" else (n_cols, n_rows)
            n_data = data.shape[0] if data.ndim == 1 else -1
        kind = "column" if fmt != "csc" else "row"
        indptr = _index_array(X.indptr, f"{name}.indptr")
        indices = _index_array(X.indices, f"{name}.indices")
        if indptr.shape[0] != n_major + 1:
            raise ValueError(
                f"{name} is a malformed {fmt.upper()} matrix: indptr has length "
                f"{indptr.shape[0]}, expected {n_major + 1} for shape {shape}"
            )
        if indptr[0] != 0:
            raise ValueError(
                f"{name} is a malformed {fmt.upper()} matrix: indptr[0] is {int(indptr[0])}, "
                "expected 0"
            )
        steps = np.diff(indptr)
        if (steps < 0).any():
            at = int(np.flatnonzero(steps < 0)[0])
            raise ValueError(
                f"{name} is a malformed {fmt.upper()} matrix: indptr is not non-decreasing "
                f"(indptr[{at + 1}] = {int(indptr[at + 1])} < indptr[{at}] = {int(indptr[at])})"
            )
        nnz = int(indptr[-1])
        if indices.shape[0] != nnz or n_data != nnz:
            raise ValueError(
                f"{name} is a malformed {fmt.upper()} matrix: indptr[-1] = {nnz} stored "
                f"entries, but indices has length {indices.shape[0]} and data has shape "
                f"{data.shape}"
            )
        _check_range(
            indices, n_minor, f"{name} is a malformed {fmt.upper()} matrix: {kind} index", shape
        )
    elif fmt == "coo":
        if data.ndim != 1:
            raise ValueError(f"{name}.data must be 1-D, got shape {data.shape}")
        for what, arr, bound in (("row", X.row, n_rows), ("column", X.col, n_cols)):
            idx = _index_array(arr, f"{name}.{'row' if what == 'row' else 'col'}")
            if idx.shape[0] != data.shape[0]:
                raise ValueError(
                    f"{name} is a malformed COO matrix: {idx.shape[0]} {what} indices for "
                    f"{data.shape[0]} stored values"
                )
            _check_range(idx, bound, f"{name} is a malformed COO matrix: {what} index", shape)


def _check_range(idx: np.ndarray, bound: int, what: str, shape: tuple[int, ...]) -> None:
    """ValueError naming the first entry of ``idx`` outside ``[0, bound)``."""
    if idx.shape[0] == 0:
        return
    lo, hi = int(idx.min()), int(idx.max())
    if lo < 0 or hi >= bound:
        bad = int(np.flatnonzero((idx < 0) | (idx >= bound))[0])
        raise ValueError(
            f"{what} {int(idx[bad])} (stored entry {bad}) lies outside [0, {bound}) for shape "
            f"{shape}"
        )
