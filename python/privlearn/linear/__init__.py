"""Private linear models: DP-SGD (Song et al. 2013; Abadi et al. 2016) and DP-SCD (Damaskinos
et al. 2021); quadratic-gradient logistic regression in the clear (Chiang)."""

from __future__ import annotations

from privlearn.linear.estimators import DPSGDClassifier, DPSGDPrivacy, DPSGDRegressor
from privlearn.linear.quadgrad import (
    QuadraticGradientLogisticRegression,
    Schedule,
    quadgrad_train,
)
from privlearn.linear.scd import scd_train
from privlearn.linear.scd_estimators import DPSCDClassifier, DPSCDPrivacy, DPSCDRegressor
from privlearn.linear.sgd import sgd_train
from privlearn.linear.softmax import softmax_sgd_train

__all__ = [
    "DPSCDClassifier",
    "DPSCDPrivacy",
    "DPSCDRegressor",
    "DPSGDClassifier",
    "DPSGDPrivacy",
    "DPSGDRegressor",
    "QuadraticGradientLogisticRegression",
    "Schedule",
    "quadgrad_train",
    "scd_train",
    "sgd_train",
    "softmax_sgd_train",
]
