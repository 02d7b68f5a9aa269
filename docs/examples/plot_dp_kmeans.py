"""
DP k-means on a Gaussian mixture
================================

:class:`~privlearn.cluster.DPKMeans` with ``method="maxcover"`` is Algorithm 2 of
Chaturvedi, Nguyen & Xu (2021): a private greedy max cover on grids of shrinking radius picks
candidate centres by the exponential mechanism, a noisy-count proxy data set is clustered by
weighted k-means, and the centres are released in the original space by noisy averaging and
one DP Lloyd round.

Every point must lie in a ball of public ``radius`` around the origin (a point outside it is
an error unless ``clip=True``). The fit releases the centres (``cluster_centers_``) and
``privacy_``; the labels of the training points and the cost on them are diagnostics of the
raw data, computed only with ``diagnostics=True`` and not private.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from privlearn.cluster import DPKMeans

# %%
# Six Gaussian components in the plane with centres on the circle of radius 8. The public
# radius is 12: ``clip=True`` projects the rare point outside that ball onto it (a per-point
# map, no privacy cost) instead of refusing the data.
angles = 2 * np.pi * np.arange(6) / 6
true_centres = 8.0 * np.column_stack([np.cos(angles), np.sin(angles)])
X, _ = make_blobs(n_samples=20000, centers=true_centres, cluster_std=1.3, random_state=0)
radius = 12.0

# %%
# Private fits at two budgets, and scikit-learn's non-private k-means for comparison. The
# cost, minus :meth:`~privlearn.cluster.DPKMeans.score` (lower is better), is computed on the same
# points, as an evaluation outside the private release.
fits = {
    eps: DPKMeans(
        n_clusters=6,
        epsilon=eps,
        method="maxcover",  # the paper's algorithm (the estimator's default is "lsh")
        radius=radius,
        clip=True,
        n_samples=len(X),
        seed=0,
    ).fit(X)
    for eps in (1.0, 8.0)
}
lloyd = KMeans(n_clusters=6, n_init=4, random_state=0).fit(X)
for eps, km in fits.items():
    print(f"epsilon = {eps}: k-means cost {-km.score(X):.4g}")
print(f"non-private Lloyd: k-means cost {lloyd.inertia_:.4g}")
print(fits[1.0].privacy_)

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 4.5), layout="constrained", sharey=True)
for ax, (eps, km) in zip(axes, fits.items()):
    ax.scatter(X[:, 0], X[:, 1], s=2, c="0.75", rasterized=True)
    ax.scatter(*true_centres.T, marker="+", s=120, c="k", label="true centres")
    ax.scatter(*lloyd.cluster_centers_.T, marker="x", s=60, c="tab:blue", label="Lloyd")
    ax.scatter(
        *km.cluster_centers_.T,
        marker="o",
        s=60,
        facecolors="none",
        edgecolors="tab:red",
        linewidths=2,
        label=f"DPKMeans, eps = {eps}",
    )
    ax.set_aspect("equal")
    ax.set_title(f"epsilon = {eps}, delta = 1e-6")
    ax.legend(loc="lower left", fontsize="small")
plt.show()
