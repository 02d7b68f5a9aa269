"""Data loaders, preprocessing and synthetic generators.

Loaders read the real data sets of the papers from a data folder (``data_home`` argument,
else the ``PRIVLEARN_DATA`` environment variable, else ``~/privlearn_data``; see
:func:`get_data_home`) and return ``X`` as C-contiguous float64 and ``y`` as int64 in
``{-1, +1}`` (binary), natural int64 labels (multi-class) or float64 (regression).
Preprocessing that computes statistics from the data emits
:class:`~privlearn.exceptions.PrivacyLeakWarning`; synthetic generators are seeded with
``numpy.random.default_rng(seed)``.

:func:`fetch` (``fetch("all")``, ``fetch_<name>``; on the command line
``privlearn datasets download NAME|all``) downloads the real data sets from their public sources
into the data folder, each file verified against a pinned SHA-256 (see
:mod:`privlearn.data.download`):

=========  ==========================================  ================  =========================
data set   source                                      licence           download
=========  ==========================================  ================  =========================
adult      UCI archive (canonical)                     CC BY 4.0         pinned
helr       GitHub K-miran/HELR at a fixed commit       MIT               pinned
kddcup99   UCI archive, 10% subset (canonical)         CC BY 4.0         pinned
mnist      ossci-datasets S3 (torchvision's mirror)    CC BY-SA 3.0      pinned
phishing   LIBSVM data page (canonical; stored .gz)    see below         pinned
msd        UCI archive, YearPredictionMSD (211 MB)     CC BY 4.0         NOT pinned, not in "all"
idash      iDASH 2017 competition                      participants      not downloadable
=========  ==========================================  ================  =========================

The LIBSVM page states no licence for phishing; the underlying UCI Phishing Websites data set
is CC BY 4.0.
"""

from __future__ import annotations

from .download import (
    SOURCES,
    DownloadError,
    fetch,
    fetch_adult,
    fetch_helr,
    fetch_kddcup99,
    fetch_mnist,
    fetch_msd,
    fetch_phishing,
)
from .inventory import dataset_inventory
from .loaders import (
    ADULT_CATEGORIES,
    ADULT_COLUMNS,
    ADULT_NUMERIC_COLUMNS,
    EMBEDDED_DIR,
    EMBEDDED_FILES,
    HELR_NAMES,
    KDDCUP99_COLUMNS,
    KDDCUP99_EMBEDDED_ROWS,
    adult_scaler_stats,
    data_source,
    get_data_home,
    load_adult,
    load_adult_frame,
    load_helr,
    load_idash,
    load_kddcup99,
    load_kddcup99_embedded,
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
    "ADULT_COLUMNS",
    "EMBEDDED_DIR",
    "EMBEDDED_FILES",
    "KDDCUP99_EMBEDDED_ROWS",
    "ADULT_NUMERIC_COLUMNS",
    "HELR_NAMES",
    "KDDCUP99_COLUMNS",
    "SOURCES",
    "DownloadError",
    "adult_scaler_stats",
    "data_source",
    "dataset_inventory",
    "fetch",
    "fetch_adult",
    "fetch_helr",
    "fetch_kddcup99",
    "fetch_mnist",
    "fetch_msd",
    "fetch_phishing",
    "get_data_home",
    "load_adult",
    "load_adult_frame",
    "load_helr",
    "load_idash",
    "load_kddcup99",
    "load_kddcup99_embedded",
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
