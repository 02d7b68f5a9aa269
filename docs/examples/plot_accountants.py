"""
Accountants: Rényi DP against basic and advanced composition
============================================================

Gaussian DP-SGD runs thousands of Poisson-subsampled Gaussian steps. How much privacy the
whole run costs depends on how the steps are composed. :mod:`privlearn.accounting` offers:

* the **RDP accountant** (:class:`~privlearn.accounting.RDPAccountant`): the Rényi DP curve
  of the subsampled Gaussian (exact at fractional orders) is added up over the steps and
  converted once to (ε, δ) with the tight conversion;
* **basic composition** (:func:`~privlearn.accounting.basic_composition`): each step is first
  converted to (ε₀, δ₀), and the epsilons and deltas add up;
* **advanced composition** (:func:`~privlearn.accounting.advanced_composition`,
  Dwork, Rothblum & Vadhan 2010): a square-root term in the number of steps
  *T* plus a term in T ε₀², better than basic composition once the
  steps are many.

All three give valid guarantees for the same mechanism; the RDP accountant, which
:class:`~privlearn.linear.DPSGDClassifier` and :class:`~privlearn.linear.DPSCDClassifier`
use, is by far the tightest.
"""

import matplotlib.pyplot as plt
import numpy as np

from privlearn.accounting import (
    DEFAULT_ORDERS,
    GaussianEvent,
    PoissonSampled,
    RDPAccountant,
    advanced_composition,
    basic_composition,
    calibrate_sigma,
    rdp_poisson_gaussian,
    rdp_to_epsilon,
)

q, sigma, delta = 0.01, 4.0, 1e-5  # sampling rate, noise multiplier, target delta
steps = np.unique(np.logspace(1, 4, 13).astype(int))
orders = np.asarray(DEFAULT_ORDERS)
one_step = rdp_poisson_gaussian(q, sigma, orders)  # the RDP curve of a single step


def per_step_epsilon(delta0):
    """(epsilon0, delta0)-DP of one step, from its RDP curve."""
    return rdp_to_epsilon(orders, one_step, delta0)[0]


rdp, basic, advanced = [], [], []
for t in steps:
    acc = RDPAccountant().compose(PoissonSampled(q, GaussianEvent(sigma)), count=int(t))
    rdp.append(acc.get_epsilon_and_order(delta)[0])
    # Basic: T steps at delta / T each.
    basic.append(basic_composition([per_step_epsilon(delta / t)] * t, [delta / t] * t)[0])
    # Advanced: half of delta per step (delta / (2T) each), half as the slack delta'.
    advanced.append(
        advanced_composition(per_step_epsilon(delta / (2 * t)), delta / (2 * t), int(t), delta / 2)[
            0
        ]
    )

print(f"T = {steps[-1]}: RDP {rdp[-1]:.2f}, advanced {advanced[-1]:.1f}, basic {basic[-1]:.0f}")

# %%
# The inverse problem: the noise multiplier that reaches epsilon = 1 after 10,000 steps
# (:func:`~privlearn.accounting.calibrate_sigma`, the RDP accountant).
print(f"sigma for (1, 1e-5)-DP: {calibrate_sigma(1.0, 1e-5, q=q, steps=10_000):.4f}")

# %%
fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
ax.plot(steps, basic, marker="s", label="basic composition")
ax.plot(steps, advanced, marker="^", label="advanced composition")
ax.plot(steps, rdp, marker="o", label="RDP accountant")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("steps T")
ax.set_ylabel(f"epsilon at delta = {delta:g}")
ax.set_title(f"Poisson-subsampled Gaussian, q = {q}, sigma = {sigma}")
ax.legend()
plt.show()
