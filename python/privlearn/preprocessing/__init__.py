"""Private preprocessing: from raw features to rows in the unit ball under a stated budget.

==========================================  ===============================================
:func:`dp_quantiles`                        per-column quantiles by the exponential
                                            mechanism over a public range (Smith 2011)
:class:`DPFeatureScaler`                    private per-feature clipping ranges (two
                                            quantiles each), then an affine map into
                                            ``[-1/sqrt(d), 1/sqrt(d)]``: rows of norm <= 1
:class:`UnitBallProjector`                  projection of each row onto a public ball (a
                                            per-row map: no privacy cost)
:class:`PreprocessingPrivacy`               the ``privacy_`` statement of a private fit
==========================================  ===============================================

Public inputs (ranges, quantile levels, the seed) are named in every statement; the data
size is private (add/remove-one neighbours) and enters only inside the mechanism.

Example
-------
>>> import numpy as np
>>> from sklearn.pipeline import Pipeline
>>> from privlearn.linear import DPSGDClassifier
>>> from privlearn.preprocessing import DPFeatureScaler
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(40.0, 12.0, size=(4000, 2)); y = (X[:, 0] > X[:, 1]).astype(int)
>>> pipe = Pipeline([
...     ("scale", DPFeatureScaler(epsilon=0.5, bounds=(0.0, 100.0), seed=0)),
...     ("clf", DPSGDClassifier(mechanism="gaussian", epsilon=1.0, batch_size=64,
...                             epochs=3, seed=0)),
... ]).fit(X, y)
>>> pipe.score(X, y) > 0.8
True
"""

from __future__ import annotations

from privlearn.preprocessing.quantiles import PreprocessingPrivacy, dp_quantiles
from privlearn.preprocessing.scalers import DPFeatureScaler, UnitBallProjector

__all__ = ["DPFeatureScaler", "PreprocessingPrivacy", "UnitBallProjector", "dp_quantiles"]
