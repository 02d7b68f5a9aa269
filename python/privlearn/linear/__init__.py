"""Private linear models: DP-SGD (Song et al. 2013; Abadi et al. 2016)."""

from __future__ import annotations

from privlearn.linear.sgd import sgd_train

__all__ = ["sgd_train"]
