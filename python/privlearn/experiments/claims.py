"""The paper's qualitative claims, checked on the reproduced numbers.

Belongs here: the :class:`Claim` record every reproduction returns from its
``evaluate_claims`` and the rule that turns per-part checks into a verdict
(:func:`claim_verdict`). The markdown a summary shows for them is in
:mod:`privlearn.experiments.summary`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Claim", "claim_verdict"]


@dataclass(frozen=True)
class Claim:
    """One qualitative claim of a paper, checked on the reproduced numbers."""

    name: str
    source: str
    criterion: str
    verdict: str  # "holds", "does not hold ..." or "not evaluated"
    details: list[str]


def claim_verdict(per_part: dict[str, bool], unit: str = "") -> str:
    """``holds`` when every part (data set, task) supports the claim, ``does not hold (holds on
    k of n <unit>)`` when some do, ``does not hold`` when none do, ``not evaluated`` when empty."""
    if not per_part:
        return "not evaluated"
    ok = sum(per_part.values())
    if ok == len(per_part):
        return "holds"
    if ok:
        suffix = f" {unit}" if unit else ""
        return f"does not hold (holds on {ok} of {len(per_part)}{suffix})"
    return "does not hold"
