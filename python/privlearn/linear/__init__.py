"""Private linear models: DP-SGD (Song et al. 2013; Abadi et al. 2016)."""

from __future__ import annotations

from privlearn.linear.estimators import DPSGDClassifier, DPSGDPrivacy, DPSGDRegressor
from privlearn.linear.sgd import sgd_train

__all__ = ["DPSGDClassifier", "DPSGDPrivacy", "DPSGDRegressor", "sgd_train"]
