"""What an :class:`~privlearn.encoding.ImpactEncoder` fit spent (its ``privacy_``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from privlearn.accounting import LaplaceEvent, PrivacyStatement, PureDPAccountant

__all__ = ["ImpactPrivacy", "laplace_privacy", "no_privacy"]


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
        ``"discrete_laplace"`` (mode ``"laplace"``) or ``"none"``.
    neighboring : str or None
        ``"add_remove"``: neighbouring data sets differ by adding or removing one row. Under
        replace-one neighbours the epsilon doubles (one row leaves one count and enters another
        in every column).
    noise_scale : float or None
        Scale ``t`` of the discrete Laplace noise on every count.
    sensitivity : float or None
        L1 sensitivity of the vector of all released counts: one row touches exactly one
        level of each column and adds 1 to that level's ``n_true`` or ``n_false``, so it is the
        number of columns.
    epsilon_per_column : float or None
        ``1 / noise_scale``: the epsilon of one column's counts (L1 sensitivity 1).
    n_columns : int
        Columns coded.
    levels_public : bool
        Whether the level set came from the user (``categories=``): when it was read from the
        training data, the set of levels present is itself not protected.
    statement : PrivacyStatement or None
        The pure-DP accountant's statement (one Laplace event per column).
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

    @property
    def private(self) -> bool:
        """Whether the code book is differentially private (finite epsilon)."""
        return math.isfinite(self.epsilon)

    def __str__(self) -> str:
        if not self.private:
            return "not private (no noise: the codes are exact functions of the outcomes)"
        text = (
            f"({self.epsilon:.6g}, 0)-DP under add/remove-one neighbours: discrete Laplace "
            f"noise of scale {self.noise_scale:.6g} on every level's n_true and n_false, "
            f"L1 sensitivity {self.sensitivity:g} ({self.n_columns} column(s), one level each)"
        )
        if not self.levels_public:
            text += "; the level set was read from the data and is not covered"
        return text


def no_privacy(n_columns: int, levels_public: bool) -> ImpactPrivacy:
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
    )


def laplace_privacy(noise_scale: float, n_columns: int, levels_public: bool) -> ImpactPrivacy:
    """The ``privacy_`` of discrete Laplace counts of scale ``noise_scale`` on ``n_columns``.

    Each column's counts have L1 sensitivity 1 (add/remove one row changes one count by 1), so
    a column costs ``1 / noise_scale`` (the geometric mechanism; Canonne, Kamath & Steinke
    2020), and the columns compose: ``epsilon = n_columns / noise_scale``.
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
    )
