"""What an :class:`~privlearn.encoding.ImpactEncoder` fit spent (its ``privacy_``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from privlearn._labels import LabelSet
from privlearn.accounting import LaplaceEvent, PrivacyStatement, PureDPAccountant, PureDPEvent

__all__ = ["ImpactPrivacy", "continuous_laplace_privacy", "laplace_privacy", "no_privacy"]


@dataclass(frozen=True)
class ImpactPrivacy:
    """The privacy guarantee of the code book learned by one fit.

    Attributes
    ----------
    epsilon : float
        Total epsilon of the released code book (``inf``: not private).
    delta : float
        Always 0 (pure DP) for the Laplace mode.
    mechanism : str
        ``"discrete_laplace"`` (mode ``"laplace"``, binary or multiclass outcome),
        ``"discrete_laplace+snapping_laplace"`` (mode ``"laplace"``, continuous outcome) or
        ``"none"``.
    neighboring : str or None
        ``"add_remove"``: neighbouring data sets differ by adding or removing one row. Under
        replace-one neighbours the epsilon doubles (one row leaves one count and enters another
        in every column).
    noise_scale : float or None
        Scale ``t`` of the discrete Laplace noise on every count.
    sensitivity : float or None
        L1 sensitivity of the vector of all released counts: one row touches exactly one
        level of each column and adds 1 to one count of that level (``n_true`` or ``n_false``;
        for a multiclass outcome one entry of the level's class histogram; for a continuous
        outcome the level's row count), so it is the number of columns.
    epsilon_per_column : float or None
        The epsilon of one column's released statistics: ``1 / noise_scale`` for the counts of
        a binary or multiclass outcome (L1 sensitivity 1); ``2 / noise_scale`` for the row
        counts and outcome sums of a continuous outcome (``1 / noise_scale`` each).
    n_columns : int
        Columns coded.
    levels_public : bool
        Whether the level set came from the user (``categories=``): when it was read from the
        training data, the set of levels present is itself not protected.
    statement : PrivacyStatement or None
        The pure-DP accountant's statement (one Laplace event per column; for a continuous
        outcome also one pure-DP event for the outcome sums of all columns).
    target_type : str
        ``"binary"``, ``"multiclass"`` or ``"continuous"``.
    n_classes : int or None
        Classes of a binary or multiclass outcome (entries of each level's count vector).
    target_bounds : (float, float) or None
        Continuous outcome: the public bounds ``(lo, hi)`` the outcome was clipped to.
    sum_noise_scale : float or None
        Continuous outcome: scale ``lambda`` of the snapping-mechanism Laplace noise on every
        level's sum of ``clip(y, lo, hi) - (lo + hi) / 2``.
    sum_sensitivity : float or None
        Continuous outcome: L1 sensitivity of the vector of all released sums,
        ``n_columns * (hi - lo) / 2`` (one row adds at most ``(hi - lo) / 2`` in absolute
        value to one level's centred sum per column).
    labels : LabelSet or None
        The outcome's label set and target type, and whether each was declared public
        (``classes=``, ``target_type=``) or read from the private ``y`` (then not covered by
        this guarantee: treated as public, and ``str(privacy_)`` says so).
    """

    epsilon: float
    delta: float
    mechanism: str
    neighboring: str | None
    noise_scale: float | None
    sensitivity: float | None
    epsilon_per_column: float | None
    n_columns: int
    levels_public: bool
    statement: PrivacyStatement | None = None
    target_type: str = "binary"
    n_classes: int | None = 2
    target_bounds: tuple[float, float] | None = None
    sum_noise_scale: float | None = None
    sum_sensitivity: float | None = None
    labels: LabelSet | None = None

    @property
    def private(self) -> bool:
        """Whether the code book is differentially private (finite epsilon)."""
        return math.isfinite(self.epsilon)

    def __str__(self) -> str:
        if not self.private:
            return "not private (no noise: the codes are exact functions of the outcomes)"
        head = f"({self.epsilon:.6g}, 0)-DP under add/remove-one neighbours: discrete Laplace "
        cols = f"({self.n_columns} column(s), one level each)"
        if self.target_type == "continuous":
            lo, hi = self.target_bounds  # type: ignore[misc]
            text = (
                f"{head}noise of scale {self.noise_scale:.6g} on every level's row count "
                f"(L1 sensitivity {self.sensitivity:g}) and snapping-mechanism Laplace noise "
                f"of scale {self.sum_noise_scale:.6g} on every level's sum of the outcome "
                f"clipped to [{lo:g}, {hi:g}] and centred at {(lo + hi) / 2:g} (L1 sensitivity "
                f"{self.sum_sensitivity:g}), half of epsilon each {cols}"
            )
        elif self.target_type == "multiclass":
            text = (
                f"{head}noise of scale {self.noise_scale:.6g} on each of the {self.n_classes} "
                f"class counts of every level, L1 sensitivity {self.sensitivity:g} {cols}"
            )
        else:
            text = (
                f"{head}noise of scale {self.noise_scale:.6g} on every level's n_true and "
                f"n_false, L1 sensitivity {self.sensitivity:g} {cols}"
            )
        if not self.levels_public:
            text += "; the level set was read from the data and is not covered"
        if self.labels is not None and self.labels.statement_line():
            text += "\n" + self.labels.statement_line()
        return text


def no_privacy(
    n_columns: int,
    levels_public: bool,
    target_type: str = "binary",
    n_classes: int | None = 2,
    target_bounds: tuple[float, float] | None = None,
) -> ImpactPrivacy:
    """The ``privacy_`` of a fit without noise."""
    return ImpactPrivacy(
        epsilon=math.inf,
        delta=0.0,
        mechanism="none",
        neighboring=None,
        noise_scale=None,
        sensitivity=None,
        epsilon_per_column=None,
        n_columns=n_columns,
        levels_public=levels_public,
        target_type=target_type,
        n_classes=n_classes,
        target_bounds=target_bounds,
    )


def laplace_privacy(
    noise_scale: float,
    n_columns: int,
    levels_public: bool,
    target_type: str = "binary",
    n_classes: int = 2,
) -> ImpactPrivacy:
    """The ``privacy_`` of discrete Laplace counts of scale ``noise_scale`` on ``n_columns``.

    Each column's counts have L1 sensitivity 1 (add/remove one row changes one count by 1:
    ``n_true`` or ``n_false`` of the row's level, or for ``n_classes`` classes one entry of
    that level's class histogram), so a column costs ``1 / noise_scale`` (the geometric
    mechanism; Canonne, Kamath & Steinke 2020) whatever the number of classes, and the columns
    compose: ``epsilon = n_columns / noise_scale``.
    """
    accountant = PureDPAccountant(neighboring="add_remove")
    accountant.compose(LaplaceEvent(noise_scale), count=n_columns)
    statement = accountant.statement()
    return ImpactPrivacy(
        epsilon=statement.epsilon,
        delta=0.0,
        mechanism="discrete_laplace",
        neighboring="add_remove",
        noise_scale=float(noise_scale),
        sensitivity=float(n_columns),
        epsilon_per_column=1.0 / float(noise_scale),
        n_columns=n_columns,
        levels_public=levels_public,
        statement=statement,
        target_type=target_type,
        n_classes=n_classes,
    )


def continuous_laplace_privacy(
    noise_scale: float,
    sum_noise_scale: float,
    sum_epsilon: float,
    n_columns: int,
    levels_public: bool,
    target_bounds: tuple[float, float],
) -> ImpactPrivacy:
    """The ``privacy_`` of a continuous-outcome Laplace fit.

    Per column two vectors are released: the row count of every level, with discrete Laplace
    noise of scale ``t = noise_scale`` (L1 sensitivity 1: ``1 / t``), and the sum of
    ``clip(y, lo, hi) - (lo + hi) / 2`` of every level, by the snapping mechanism (L1
    sensitivity ``(hi - lo) / 2``: one row enters one level's sum with a centred value of
    absolute value at most ``(hi - lo) / 2``), calibrated for all columns together to
    ``sum_epsilon = n_columns / t`` (Mironov 2012, floating-point term included). Basic
    composition: ``epsilon = 2 n_columns / t``.
    """
    lo, hi = target_bounds
    accountant = PureDPAccountant(neighboring="add_remove")
    accountant.compose(LaplaceEvent(noise_scale), count=n_columns)
    accountant.compose(PureDPEvent(sum_epsilon))
    statement = accountant.statement()
    return ImpactPrivacy(
        epsilon=statement.epsilon,
        delta=0.0,
        mechanism="discrete_laplace+snapping_laplace",
        neighboring="add_remove",
        noise_scale=float(noise_scale),
        sensitivity=float(n_columns),
        epsilon_per_column=statement.epsilon / n_columns,
        n_columns=n_columns,
        levels_public=levels_public,
        statement=statement,
        target_type="continuous",
        n_classes=None,
        target_bounds=(float(lo), float(hi)),
        sum_noise_scale=float(sum_noise_scale),
        sum_sensitivity=n_columns * (hi - lo) / 2.0,
    )
