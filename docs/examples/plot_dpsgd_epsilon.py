"""
Private logistic regression: accuracy against epsilon
=====================================================

:class:`~privlearn.linear.DPSGDClassifier` trains a logistic regression by differentially
private mini-batch SGD. This example fits it on a small synthetic problem at several privacy
levels and plots the test accuracy against ε, for the two mechanisms:

* ``mechanism="gaussian"`` (Abadi et al. 2016): per-example clipping, Gaussian noise,
  Poisson batches, (ε, δ)-DP by the RDP accountant;
* ``mechanism="l2-laplace"`` (Song, Chaudhuri & Sarwate 2013): disjoint batches and noise of
  density proportional to exp(-(ε/2)‖z‖), pure
  ε-DP. Its rows must have norm at most 1, so the features are scaled into
  the unit ball with a public bound before the fit.

The dashed line is the same code with ``epsilon=float("inf")``: no noise at all.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from privlearn.data import project_to_ball
from privlearn.linear import DPSGDClassifier

# %%
# Data: 4,000 rows, 10 features. Scaling by a public constant and projecting onto the unit
# ball is a per-row map that spends no privacy (unlike scaling by the data's own maximum).
X, y = make_classification(
    n_samples=4000, n_features=10, n_informative=6, class_sep=1.0, random_state=0
)
X = project_to_ball(X / 4.0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

# %%
# Fit each mechanism at each epsilon, three seeds each. The training-set size is declared
# public (``n_samples=``) so that the whole budget goes to training; without it, 5% of
# epsilon would buy a noisy count of the rows.
epsilons = [0.1, 0.3, 1.0, 3.0, 10.0]
seeds = [0, 1, 2]
settings = {
    "gaussian": dict(mechanism="gaussian", batch_size=64, epochs=5),
    "l2-laplace": dict(mechanism="l2-laplace", batch_size=50, epochs=1, fit_intercept=False),
}
curves = {}
for name, params in settings.items():
    curves[name] = [
        np.mean(
            [
                DPSGDClassifier(epsilon=eps, n_samples=len(X_train), seed=s, **params)
                .fit(X_train, y_train)
                .score(X_test, y_test)
                for s in seeds
            ]
        )
        for eps in epsilons
    ]
clear = DPSGDClassifier(epsilon=float("inf"), seed=0).fit(X_train, y_train)

# %%
# Every fitted estimator carries the statement of what it spent:
clf = DPSGDClassifier(epsilon=1.0, n_samples=len(X_train), seed=0).fit(X_train, y_train)
print(clf.privacy_)

# %%
fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
for name, accs in curves.items():
    ax.plot(epsilons, accs, marker="o", label=name)
ax.axhline(clear.score(X_test, y_test), color="k", ls="--", label="no noise (eps = inf)")
ax.set_xscale("log")
ax.set_xlabel("epsilon")
ax.set_ylabel("test accuracy (mean of 3 seeds)")
ax.set_title("DPSGDClassifier on 2,800 training rows")
ax.legend()
plt.show()
