"""
Impact coding of high-cardinality categoricals
==============================================

:class:`~privlearn.encoding.ImpactEncoder` replaces each level of a categorical column by a
number learned from the outcome: with ``code="bayes"``, the impact code
log P(y = 1 \\| level) − log P(y = 1). Learned on the same rows that then
train the model, the codes leak the outcome: a downstream model fits noise columns perfectly on
the training rows and does poorly on new ones. This example uses the data of Win-Vector's note
"Using differential privacy to reuse training data" (:func:`privlearn.data.make_large_categorical`:
10 signal columns of 10 levels and 30 noise columns of 500 levels, 2,000 training rows) and
compares the ways to code the training rows (``mode``):

* ``"naive"``: codes learned on the rows they code (the leaky baseline);
* ``"laplace"``: every level's counts get exact discrete Laplace noise; the codes are then
  ε-DP with ε = number of columns / ``noise_scale``
  (a row touches one level per column), reported in ``privacy_``;
* ``"cross"``: each row is coded by codes fitted without its fold (cross-fitting), so
  ``fit_transform(X, y)`` differs from ``fit(X, y).transform(X)``.

A logistic regression is trained on the coded training rows and evaluated on 10,000 new rows,
coded with the codes fitted on all training rows.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from privlearn.data import make_large_categorical
from privlearn.encoding import ImpactEncoder

X, y, effects = make_large_categorical(2000, seed=1, design_seed=0, return_effects=True)
X_test, y_test = make_large_categorical(10_000, seed=2, design_seed=0)
print(X.shape, "levels per column:", X.nunique().min(), "to", X.nunique().max())

# %%
# The Laplace mode needs the list of levels of every column to be public (a level seen only
# in the private data would reveal that a row has it). Here the design's own level lists are
# public.
levels = [list(effects[c].index) for c in X]
encoders = {
    "naive": ImpactEncoder("bayes", mode="naive"),
    "laplace": ImpactEncoder("counts", mode="laplace", epsilon=4.0, categories=levels, seed=0),
    "cross": ImpactEncoder("bayes", mode="cross", seed=0),
}
auc = {}
for name, enc in encoders.items():
    Z = enc.fit_transform(X, y)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1)).fit(Z, y)
    Z_test = enc.transform(X_test)
    auc[name] = (
        roc_auc_score(y, model.decision_function(Z)),
        roc_auc_score(y_test, model.decision_function(Z_test)),
    )
    print(f"{name:8s} train AUC {auc[name][0]:.3f}  test AUC {auc[name][1]:.3f}")
print(encoders["laplace"].privacy_)

# %%
fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
pos = np.arange(len(auc))
ax.bar(pos - 0.2, [a[0] for a in auc.values()], width=0.4, label="training rows")
ax.bar(pos + 0.2, [a[1] for a in auc.values()], width=0.4, label="10,000 new rows")
ax.set_xticks(pos, [f'mode="{m}"' for m in auc])
ax.set_ylim(0.5, 1.0)
ax.set_ylabel("ROC AUC of the downstream logistic regression")
ax.legend(loc="upper right")
plt.show()
