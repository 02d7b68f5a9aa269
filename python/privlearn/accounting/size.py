"""The size of the private data set, kept private (or declared public by the user).

Under add/remove-one neighbours the number of rows ``n`` is itself private: two neighbouring
data sets differ in ``n`` by one, so anything that shapes a run or is released (the number of
steps, a sampling rate ``q = b / n``, ``lambda * n``, a grid's radii, a number of picks, a default
delta) must not depend on the exact ``n``. Every private estimator therefore resolves one
:class:`DatasetSize` before it reads the data:

- the user declares the size public (``n_samples=`` the public size): nothing is spent, the
  statement says "dataset size treated as public", and a data set of another size is refused;
- otherwise a small, stated part of the budget buys an exact discrete-Laplace count
  (Canonne, Kamath, Steinke 2020; :func:`privlearn.mechanisms.discrete_laplace`): the count of
  rows has L1 sensitivity 1 under add/remove-one, so ``n + DLap(1/eps_n)`` is ``eps_n``-DP, and
  the schedule is derived from that noisy count only (post-processing). The estimator composes
  ``eps_n`` with the rest of its budget (basic composition) and reports the total.

Under replace-one neighbours the size is fixed by the relation (both data sets have ``n`` rows),
so estimators whose statement is replace-one use the exact ``n`` and say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from privlearn._checks import as_index, as_real
from privlearn.exceptions import LargeDeltaWarning

__all__ = [
    "DEFAULT_DELTA",
    "MAX_PLANNED_SIZE",
    "MAX_PLANNED_STEPS",
    "SIZE_EPSILON_FRACTION",
    "DatasetSize",
    "LargeDeltaWarning",
    "check_delta",
    "planned_size_cap",
    "public_size",
    "resolve_size",
]

#: The default delta of every (epsilon, delta) estimator: a fixed public number, never a
#: function of the private ``n``. ``1e-6`` is below ``1/n`` for data sets up to a million rows
#: (the usual rule ``delta << 1/n``); pass a smaller ``delta`` for larger data.
DEFAULT_DELTA = 1e-6

#: Share of a fit's epsilon spent on the noisy row count when the size is not declared public.
SIZE_EPSILON_FRACTION = 0.05

#: Public cap on a size planned from a noisy count: the count is clamped to
#: ``[floor, cap]`` (post-processing) with ``cap <= MAX_PLANNED_SIZE``, so a tiny epsilon (a very
#: noisy count) cannot plan a run for billions of rows, and a worst case over the counts
#: (an a-priori guarantee) is taken over a bounded range. Declare ``n_samples=`` (a public size)
#: for larger data.
MAX_PLANNED_SIZE = 1 << 30

#: Public cap on the number of steps of a schedule planned from a noisy count: the count is
#: also clamped so that ``ceil(epochs * m / batch_size) <= MAX_PLANNED_STEPS``
#: (:func:`planned_size_cap`). Declare ``n_samples=`` for longer runs.
MAX_PLANNED_STEPS = 1 << 23


def planned_size_cap(floor: int, epochs: int, batch_size: int) -> int:
    """The public cap of a size planned from a noisy count: at most
    :data:`MAX_PLANNED_SIZE` rows and at most :data:`MAX_PLANNED_STEPS` steps of
    ``ceil(epochs * m / batch_size)``, and never below ``floor``. A function of public
    parameters only."""
    by_steps = (MAX_PLANNED_STEPS * batch_size) // max(1, epochs)
    return max(int(floor), min(MAX_PLANNED_SIZE, by_steps))


def check_delta(delta: float, size: DatasetSize | None, what: str = "") -> None:
    """Warn (:class:`LargeDeltaWarning`) when ``delta > 1 / (10 m)`` for the size ``m`` the run
    was planned with: the declared public size, the noisy count, or the exact size where the
    neighbouring relation fixes it (replace-one). Never keyed on a private exact size (nothing
    is said when the size is not used)."""
    if size is None or size.value is None or not delta > 0.0:
        return
    if size.source not in ("public", "replace_one", "noisy_count", "given"):
        return
    if delta > 1.0 / (10.0 * size.value):
        import warnings

        which = "noisy count n~" if size.source in ("noisy_count", "given") else "size n"
        warnings.warn(
            f"{what}delta={delta:g} is larger than 1/(10 n) for the {which}={size.value}: "
            "a mechanism that publishes a row in the clear with probability delta would meet "
            "the statement; pass a smaller delta (e.g. delta=1/(100 n))",
            LargeDeltaWarning,
            stacklevel=4,
        )


@dataclass(frozen=True)
class DatasetSize:
    """The data-set size a run is planned with.

    Attributes
    ----------
    value : int or None
        The size the schedule uses: the public size, the exact size under replace-one
        neighbours, or the noisy count (clamped to ``[floor, cap]``, post-processing).
        ``None`` when the schedule does not use the size (``source == "unused"``: nothing
        about it is stored or released).
    source : {"public", "replace_one", "noisy_count", "given", "unused", "not_private"}
        Where ``value`` comes from. ``"given"``: a noisy count drawn and accounted by the
        caller (``n_samples=`` a :class:`DatasetSize`), not by this fit.
    epsilon : float
        Epsilon spent on the count (0 unless ``source == "noisy_count"``).
    bounds : tuple of int or None
        ``(floor, cap)``, the public range a noisy count is clamped to
        (:func:`planned_size_cap`); None otherwise.
    """

    value: int | None
    source: str
    epsilon: float = 0.0
    bounds: tuple[int, int] | None = None

    @property
    def public(self) -> bool:
        """Whether the exact size is treated as public (declared, or fixed by the relation)."""
        return self.source in ("public", "replace_one", "unused")

    def describe(self) -> str:
        """One line for a privacy statement."""
        if self.source == "public":
            return f"dataset size treated as public (n_samples={self.value})"
        if self.source == "replace_one":
            return f"dataset size n={self.value} public (replace-one neighbours share it)"
        if self.source == "noisy_count":
            clamp = ""
            if self.bounds is not None:
                clamp = f", clamped to the public range [{self.bounds[0]}, {self.bounds[1]}]"
            return (
                f"dataset size private: schedule from a noisy count n~={self.value} "
                f"(exact discrete Laplace, epsilon {self.epsilon:.6g}{clamp})"
            )
        if self.source == "given":
            return (
                f"dataset size private: schedule from a noisy count n~={self.value} drawn and "
                "accounted by the caller"
            )
        if self.source == "unused":
            return (
                "dataset size not used by the schedule (every update is bounded for any data); "
                "not stored"
            )
        return f"not private: exact size n={self.value} used"


def public_size(n_samples: Any, n: int) -> DatasetSize | None:
    """The declared public size, checked against the data: ``None`` when not declared. A
    :class:`DatasetSize` from a noisy count (drawn by the caller) is returned as ``"given"``.

    Raises
    ------
    ValueError
        When the declared size differs from the number of rows (the statement would be false);
        the message quotes the declared size only, never the private row count.
    """
    if n_samples is None:
        return None
    if isinstance(n_samples, DatasetSize):
        if n_samples.source in ("noisy_count", "given"):
            # a private size the caller drew and accounted (e.g. a private search that counts
            # its training split once for all its candidates): used as is, never compared
            return DatasetSize(n_samples.value, "given")
        if n_samples.source != "public":
            raise ValueError(
                f"n_samples must be an int, or a DatasetSize that is public or a noisy count, "
                f"got one of source {n_samples.source!r}"
            )
        n_samples = n_samples.value
    declared = as_index(n_samples, "n_samples", lower=1, upper=1 << 62)
    if declared != n:
        raise ValueError(
            f"n_samples={declared} was declared as the public dataset size, but X has another "
            "number of rows: a privacy statement that treats the size as public would be false "
            "(declare the size of the data actually passed, or n_samples=None for a noisy count)"
        )
    return DatasetSize(declared, "public")


def resolve_size(
    n: int,
    *,
    n_samples: Any = None,
    epsilon: float,
    seed: int | None,
    floor: int = 1,
    cap: int | None = None,
    ledger: Any = None,
) -> DatasetSize:
    """The size to plan a run with, under add/remove-one neighbours.

    Parameters
    ----------
    n : int
        The number of rows of the private data (read, never released as is).
    n_samples : int or None
        The user's public size; when given it must equal ``n`` and nothing is spent.
    epsilon : float
        Epsilon of the noisy count (``> 0``); ``inf`` means a non-private fit (exact ``n``).
    seed : int or None
        Key of the count's noise (``None``: from the operating system).
    floor : int, default=1
        Lower clamp of the noisy count (a public post-processing, e.g. the batch size).
    cap : int or None, default=None
        Upper clamp of the noisy count (public: :func:`planned_size_cap`); None: no upper
        clamp.
    ledger : object, optional
        Charged ``epsilon`` before the count is drawn.
    """
    declared = public_size(n_samples, n)
    if declared is not None:
        return declared
    eps = as_real(epsilon, "count epsilon", numbers_only=True)
    if math.isinf(eps):
        return DatasetSize(n, "not_private")
    if not eps > 0.0:
        raise ValueError(f"the epsilon of the noisy row count must be > 0, got {eps}")
    from privlearn.mechanisms import discrete_laplace

    scale = 1.0 / eps
    noisy = int(discrete_laplace(int(n), scale=scale, seed=seed, ledger=ledger, epsilon=eps))
    if cap is None:
        return DatasetSize(max(int(floor), noisy), "noisy_count", eps)
    top = max(int(floor), int(cap))
    return DatasetSize(min(top, max(int(floor), noisy)), "noisy_count", eps, (int(floor), top))
