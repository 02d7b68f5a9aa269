"""The privacy statement of a tabular pipeline: every release, its share, its relation, and
what is public, released and secret."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from privlearn.accounting import PrivacyStatement

__all__ = ["Release", "TabularPrivacy"]

_RELATIONS = {"add_remove": "add/remove-one", "replace_one": "replace-one", None: "unstated"}


@dataclass(frozen=True)
class Release:
    """One private release of the pipeline.

    Attributes
    ----------
    part : str
        ``"bounds"``, ``"codes"`` or ``"model"``.
    estimator : str
        The estimator that made it (``DPFeatureScaler``, ``ImpactEncoder``, ``DPSGDClassifier``...).
    share : float
        Its planned share of the pipeline's epsilon (the budget rule).
    epsilon, delta : float
        What it spent, from its own ``privacy_``.
    neighboring : str or None
        The relation its guarantee holds under.
    mechanism : str
        How it was released.
    released : str
        What it released.
    statement : PrivacyStatement
        The estimator's own ``privacy_`` (all the detail).
    """

    part: str
    estimator: str
    share: float
    epsilon: float
    delta: float
    neighboring: str | None
    mechanism: str
    released: str
    statement: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "part": self.part,
            "estimator": self.estimator,
            "share": self.share,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "neighboring": self.neighboring,
            "mechanism": self.mechanism,
            "released": self.released,
            "detail": str(self.statement) if self.statement is not None else None,
        }


@dataclass(frozen=True)
class TabularPrivacy(PrivacyStatement):
    """The ``privacy_`` of :class:`~privlearn.tabular.PrivateTabularClassifier` and
    :class:`~privlearn.tabular.PrivateTabularRegressor`.

    ``epsilon`` and ``delta`` are the basic composition (Dwork & Roth 2014, Theorem 3.16) of
    the releases in ``releases`` (sums of their own ``privacy_`` figures), all under
    add/remove-one neighbours; they never exceed the ``epsilon`` and ``delta`` the estimator
    was given.

    Attributes
    ----------
    releases : tuple of Release
    requested : tuple of float
        The ``(epsilon, delta)`` the estimator was given (its cap).
    rule : str
        The budget rule that set the shares, in words.
    public : tuple of str
        Inputs taken as public (not protected).
    released : tuple of str
        What the fitted pipeline holds that depends on the rows.
    secret : tuple of str
        What stays secret.
    warnings : tuple of str
        Where the guarantee does NOT hold as stated (a schema drafted from the data).
    """

    releases: tuple[Release, ...] = ()
    requested: tuple[float, float] = (math.inf, 0.0)
    rule: str = ""
    public: tuple[str, ...] = ()
    released: tuple[str, ...] = ()
    secret: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def private(self) -> bool:
        """Whether the guarantee is a finite epsilon."""
        return math.isfinite(self.epsilon)

    def __str__(self) -> str:
        if not self.private:
            head = "NOT PRIVATE (epsilon = inf): no noise anywhere; for experiments only"
        else:
            head = (
                f"({self.epsilon:.6g}, {self.delta:.6g})-DP under add/remove-one neighbours "
                f"(one person's row in or out), basic composition of {len(self.releases)} "
                f"releases; requested at most ({self.requested[0]:.6g}, {self.requested[1]:.6g})"
            )
        lines = [f"Privacy statement of the tabular pipeline: {head}"]
        for w in self.warnings:
            lines.append(f"WARNING: {w}")
        if self.rule:
            lines.append(f"budget rule: {self.rule}")
        lines.append("releases:")
        width = max([len(r.part) for r in self.releases] + [4])
        for i, r in enumerate(self.releases, start=1):
            lines.append(
                f"  {i}. {r.part:<{width}}  share {r.share:6.1%}  epsilon {r.epsilon:<10.6g} "
                f"delta {r.delta:<9.3g} {_RELATIONS.get(r.neighboring, r.neighboring)}  "
                f"[{r.estimator}]"
            )
            lines.append(f"     mechanism: {r.mechanism}")
            lines.append(f"     released:  {r.released}")
        if self.releases and self.private:
            lines.append(
                f"  total: epsilon {self.epsilon:.6g}, delta {self.delta:.6g} (sum of the releases)"
            )
        lines.append("public (taken as given, not protected):")
        lines += [f"  - {p}" for p in self.public]
        lines.append("released (depends on the rows; covered by the guarantee):")
        lines += [f"  - {p}" for p in self.released]
        lines.append("secret:")
        lines += [f"  - {p}" for p in self.secret]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the statement."""

        def num(x: float) -> Any:
            return x if math.isfinite(x) else str(x)

        return {
            "epsilon": num(self.epsilon),
            "delta": self.delta,
            "neighboring": self.neighboring,
            "composition": "basic",
            "requested": {"epsilon": num(self.requested[0]), "delta": self.requested[1]},
            "rule": self.rule,
            "releases": [{**r.to_dict(), "epsilon": num(r.epsilon)} for r in self.releases],
            "public": list(self.public),
            "released": list(self.released),
            "secret": list(self.secret),
            "warnings": list(self.warnings),
        }
