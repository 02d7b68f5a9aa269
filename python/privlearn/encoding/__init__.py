"""Impact (target) coding of high-cardinality categoricals, with differentially private and
cross-fitted variants (Win-Vector, "Using differential privacy to reuse training data").

===============================  ==========================================================
:class:`ImpactEncoder`           scikit-learn transformer: Bayes or count codes per level;
                                 naive, Laplace-smeared (epsilon-DP), split, cross-fitted
                                 and jackknifed training codes; significance pruning;
                                 binary, multiclass (one-vs-rest) or continuous outcomes
:class:`ImpactPrivacy`           what a Laplace-mode fit spent (``ImpactEncoder.privacy_``)
:func:`bayes_code`               ``log(P(y=1 | level) / P(y=1))`` from counts
:func:`count_code`               ``n_true``, ``n_false``, log ratio, rare flag from counts
:func:`level_pvalues`            significance of each level's single-variable model
:func:`mean_code`                smoothed level mean minus the grand mean (continuous y)
===============================  ==========================================================

Pure numpy/pandas: counting is ``np.bincount``; no compiled code is needed.
"""

from __future__ import annotations

from privlearn.encoding._codes import bayes_code, count_code, level_pvalues, mean_code
from privlearn.encoding._privacy import ImpactPrivacy
from privlearn.encoding.impact import ImpactEncoder

__all__ = [
    "ImpactEncoder",
    "ImpactPrivacy",
    "bayes_code",
    "count_code",
    "level_pvalues",
    "mean_code",
]
