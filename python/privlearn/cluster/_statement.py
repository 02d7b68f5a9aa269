"""What a private k-means fit says about itself: :class:`KMeansPrivacyStatement` (the privacy
statement with the data-set size and the public inputs) and :class:`KMeansDiagnostics` (the
non-private diagnostics of ``diagnostics=True``).

Belongs here: the statement and diagnostics types and the text that goes into them. Not
here: the accounting (``privlearn.accounting``) or the noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privlearn.accounting import PrivacyStatement
from privlearn.cluster.maxcover import MaxCoverPlan

__all__ = ["KMeansDiagnostics", "KMeansPrivacyStatement", "plan_text", "public_inputs"]


@dataclass(frozen=True)
class KMeansPrivacyStatement(PrivacyStatement):
    """A :class:`~privlearn.accounting.PrivacyStatement` that also names how the data-set size
    was treated and every public input the guarantee takes as given.

    Attributes
    ----------
    dataset_size : str
        :meth:`privlearn.accounting.DatasetSize.describe` of the size the schedule used (a
        declared public size, a noisy count and its epsilon, or "not used").
    public_inputs : tuple of str
        The quantities the guarantee treats as public (``name=value``): they are not
        protected, and the guarantee holds only if they were not chosen by looking at the
        private data.
    """

    dataset_size: str = ""
    public_inputs: tuple[str, ...] = ()

    def __str__(self) -> str:
        lines = [super().__str__()]
        if self.dataset_size:
            lines.append(f"dataset size: {self.dataset_size}")
        if self.public_inputs:
            lines.append("public inputs: " + ", ".join(self.public_inputs))
        lines.append(
            "secret: the rows, the noise and the seed (secret randomness: an int seed makes "
            "runs reproducible for research; whoever knows it knows the noise -- not a release "
            "setting)"
        )
        return "\n".join(lines)


@dataclass(frozen=True)
class KMeansDiagnostics:
    """Diagnostics of one :class:`~privlearn.cluster.DPKMeans` fit. **NOT PRIVATE.**

    Every field is computed on the raw training data and is *not* covered by the fit's
    privacy statement: pickling, logging or publishing this object releases it. It is only
    created with ``DPKMeans(diagnostics=True)``, for experiments on non-sensitive data.

    Attributes
    ----------
    n_samples : int
        The exact number of training rows.
    labels : numpy.ndarray of int64, shape (n_samples,)
        Nearest released centre of every training row.
    inertia : float
        k-means cost of the training data at the released centres.
    maxcover : MaxCoverResult or None
        The greedy's picks together with their exact covers and grid sizes (max cover only).
    """

    n_samples: int
    labels: np.ndarray
    inertia: float
    maxcover: Any = None


def public_inputs(
    method: str, prm: dict[str, Any], radius: float, d: int, p: int
) -> tuple[str, ...]:
    """``name=value`` of every input the guarantee of a :class:`~privlearn.cluster.DPKMeans`
    fit treats as public (``prm``: its checked parameters), for
    :attr:`KMeansPrivacyStatement.public_inputs`."""
    out = [
        f"method={method}",
        f"n_clusters={prm['k']}",
        f"epsilon={prm['epsilon']:g}",
        f"delta={prm['delta']:g}",
    ]
    if prm["radius"] is None:
        out.append(f"radius={radius:g} (taken from the data: NOT covered by the guarantee)")
    else:
        out.append(f"radius={radius:g}" + (" (rows clipped to it)" if prm["clip"] else ""))
    if method == "lsh":
        out += [
            f"n_features={d}",
            f"max_depth={prm['max_depth']}",
            f"private_scale={prm['private_scale']}",
        ]
    else:
        out += [f"n_features={d}", f"proj_dim={p}"]
    if prm["n_samples"] is not None:
        out.append(f"n_samples={prm['n_samples']}")
    if method == "maxcover":
        out.append(f"grid_factor={prm['grid_factor']:g}")
        if prm["radii"] is not None:
            out.append(f"radii={prm['radii']}")
        if prm["picks"] is not None:
            out.append(f"picks={prm['picks']}")
    out.append(f"lloyd_steps={prm['lloyd_steps']}")
    split = ", ".join(f"{key}: {v:.6g}" for key, v in prm["split"].items())
    out.append(f"budget_split={{{split}}}")
    return tuple(out)  # the seed is secret randomness, not a public input


def plan_text(plan: MaxCoverPlan, eps_size: float) -> str:
    """The accountant of a tight max-cover fit (its :class:`~privlearn.cluster.MaxCoverPlan`
    and the epsilon of the noisy row count, 0 if none), named for its statement (without the
    closing parenthesis)."""
    if plan.accountant == "zcdp":
        picks = "greedy picks as bounded range, eps_pick^2/8-zCDP each (Cesar & Rogers 2021)"
    else:
        picks = (
            "greedy picks by Gupta et al. 2010 (tighter here than zCDP), added by basic composition"
        )
    text = (
        f"rdp (Renyi-DP composition of the max-cover fit at order {plan.best_order:g}: "
        f"{picks}; proxy counts, noisy averaging and Lloyd rounds (discrete Laplace "
        "counts as pure DP, lattice Gaussian sums); tight conversion"
    )
    if eps_size > 0.0:
        text += "; basic composition with the noisy row count"
    return text
