"""What the ``privacy_`` records of the private linear fits share: :class:`DPSGDPrivacy
<privlearn.linear.DPSGDPrivacy>` and :class:`DPSCDPrivacy <privlearn.linear.DPSCDPrivacy>`.

What belongs here: a field's meaning or a line of ``str(privacy_)`` that is the same for every
family: whether the fit is private, and the lines after the family's own description of its
mechanism (how the dataset size entered, the regressors' target bound and budget split, the
accountant's statement, the classifiers' label set). A family's mechanism, noise and sampling
text stays in its estimator module.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from privlearn.linear._statement import _statement_lines

if TYPE_CHECKING:
    from privlearn._labels import LabelSet
    from privlearn.accounting import PrivacyStatement
    from privlearn.accounting.size import DatasetSize
    from privlearn.linear._target import TargetBound

__all__ = ["FitPrivacyRecord"]


class FitPrivacyRecord:
    """Mixin of the frozen ``privacy_`` dataclasses (which hold the fields named below)."""

    epsilon: float
    neighboring: str | None
    statement: PrivacyStatement | None
    size: DatasetSize | None
    labels: LabelSet | None
    worst_case: bool
    target: TargetBound | None

    @property
    def private(self) -> bool:
        """Whether the fit is differentially private (finite epsilon)."""
        return math.isfinite(self.epsilon)

    def _shared_lines(self) -> list[str]:
        """The lines of ``str(privacy_)`` after the family's own: the dataset size, the target
        bound and the budget split (regressors), the accountant's statement and the label set
        (classifiers)."""
        target_eps = self.target.epsilon if self.target is not None else 0.0
        lines = _statement_lines(
            self.size, self.epsilon - target_eps, self.neighboring, worst_case=self.worst_case
        )
        if self.target is not None:  # regressors: how the target's range entered the fit
            lines.append(self.target.statement_line())
            if target_eps > 0.0:
                size_eps = self.size.epsilon if self.size is not None else 0.0
                lines.append(
                    f"  budget split (basic composition): target bound {target_eps:.6g} + "
                    f"dataset size {size_eps:.6g} + training "
                    f"{self.epsilon - target_eps - size_eps:.6g} = {self.epsilon:.6g}"
                )
        if self.statement is not None:
            lines += ["  " + line for line in str(self.statement).splitlines()]
        if self.labels is not None and self.labels.statement_line():
            lines.append(self.labels.statement_line())  # classifiers: how the label set entered
        return lines
