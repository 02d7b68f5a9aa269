"""Data loaders, preprocessing and synthetic generators.

Loaders read the real data sets of the papers from a data folder (``data_home`` argument,
else the ``PRIVLEARN_DATA`` environment variable, else ``~/privlearn_data``; see
:func:`get_data_home`) and return ``X`` as C-contiguous float64 and ``y`` as int64 in
``{-1, +1}`` (binary), natural int64 labels (multi-class) or float64 (regression).
Preprocessing that computes statistics from the data emits
:class:`~privlearn.exceptions.PrivacyLeakWarning`; synthetic generators are seeded with
``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

from .inventory import dataset_inventory
from .loaders import (
    ADULT_CATEGORIES,
    ADULT_NUMERIC_COLUMNS,
    HELR_NAMES,
    KDDCUP99_COLUMNS,
    adult_scaler_stats,
    get_data_home,
    load_adult,
    load_helr,
    load_idash,
    load_kddcup99,
    load_mnist,
    load_mnist38,
    load_msd,
    load_phishing,
    read_idx,
)
from .preprocess import (
    maxabs_scale,
    minmax_scale,
    normalize_rows,
    project_to_ball,
    random_projection,
    random_projection_matrix,
    row_norms,
)
from .synthetic import (
    make_gaussian_mixture,
    make_large_categorical,
    make_msd_like,
    make_sphere_separable,
)

__all__ = [
    "ADULT_CATEGORIES",
    "ADULT_NUMERIC_COLUMNS",
    "HELR_NAMES",
    "KDDCUP99_COLUMNS",
    "adult_scaler_stats",
    "dataset_inventory",
    "get_data_home",
    "load_adult",
    "load_helr",
    "load_idash",
    "load_kddcup99",
    "load_mnist",
    "load_mnist38",
    "load_msd",
    "load_phishing",
    "make_gaussian_mixture",
    "make_large_categorical",
    "make_msd_like",
    "make_sphere_separable",
    "maxabs_scale",
    "minmax_scale",
    "normalize_rows",
    "project_to_ball",
    "random_projection",
    "random_projection_matrix",
    "read_idx",
    "row_norms",
]
