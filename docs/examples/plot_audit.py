"""
An empirical privacy audit
==========================

A differential-privacy claim can be checked, in one direction, by experiment. If a mechanism
*M* is ε-DP, then for neighbouring data sets *D, D'* and any
event *S*,

.. code-block:: text

   P(M(D') ∈ S) ≤ e^ε P(M(D) ∈ S).

:mod:`privlearn.audit` runs the mechanism many times on both sides, counts how often the
outputs fall in *S*, and turns the counts into Clopper-Pearson confidence bounds on the
two probabilities. Their ratio gives an **empirical lower bound** on ε that
holds with confidence 1 − α; if it exceeds the claim, the claim is refuted. An
audit never proves privacy: passing only means that these draws could not refute it.

Here the neighbouring data give a count of 0 and 1 (sensitivity 1), released by the snapping
Laplace mechanism (:func:`privlearn.mechanisms.laplace`) with the claim
ε = 1. A correct release is compared with a buggy one that adds only half
the noise (so it is really 2-DP). :func:`~privlearn.audit.audit_pure_dp_split` chooses the
threshold event S = {output > t} on half of the draws and audits it on the
other half, so that the choice does not bias the bound.
"""

import matplotlib.pyplot as plt
import numpy as np

from privlearn.audit import audit_pure_dp_split
from privlearn.mechanisms import laplace

claim = 1.0
draws = [500, 1000, 2000, 4000, 8000, 16000]
releases = {
    "correct (noise for eps = 1)": claim,
    "buggy (half the noise: eps = 2)": 2 * claim,
}
bounds = {name: [] for name in releases}
for name, noise_epsilon in releases.items():
    for i, n in enumerate(draws):
        # n independent releases on D (true count 0) and on D' (true count 1).
        out0 = laplace(np.zeros(n), sensitivity=1.0, epsilon=noise_epsilon, seed=2 * i)
        out1 = laplace(np.ones(n), sensitivity=1.0, epsilon=noise_epsilon, seed=2 * i + 1)
        result, event = audit_pure_dp_split(out0, out1, epsilon_claim=claim, alpha=1e-3)
        bounds[name].append(result.epsilon_lower)
        if n == draws[-1]:
            verdict = "passed" if result.passed else "REFUTED"
            print(f"{name}: {verdict}, epsilon >= {result.epsilon_lower:.3f} ({event})")

# %%
fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
for name, values in bounds.items():
    ax.plot(draws, values, marker="o", label=name)
ax.axhline(claim, color="k", ls="--", label="claimed epsilon")
ax.set_xscale("log")
ax.set_xlabel("draws per side (half to choose the event, half to audit)")
ax.set_ylabel("Clopper-Pearson lower bound on epsilon")
ax.set_title("Auditing a Laplace release, confidence 1 - 1e-3")
ax.legend()
plt.show()
