"""Loaders for the real data sets used by the papers privlearn reproduces.

Every loader returns ``X`` as a C-contiguous ``float64`` array of shape
``(n_samples, n_features)`` (or a :class:`scipy.sparse.csr_matrix` where asked for) and the
labels ``y``:

- binary classification: ``int64`` in ``{-1, +1}`` (each loader documents which class is ``+1``);
- multi-class: the natural ``int64`` labels (MNIST digits);
- regression: ``float64`` (YearPredictionMSD years).

Every loader takes ``return_feature_names=False``; when it is true the loader returns
``(X, y, feature_names)`` with ``feature_names`` a ``list[str]`` of length ``n_features``.
One-hot columns are named ``"<column>=<level>"``.

Files are looked up in a data folder (see :func:`get_data_home`); a missing file raises
:class:`FileNotFoundError` naming the file and the folder. Loaders never write to the folder and
never download anything.

Before parsing, a loader checks the file against its pinned SHA-256 (the digest
``privlearn datasets download`` verifies with; see :mod:`privlearn.data.integrity`), once per
process while the file is unchanged. A file that differs (a changed row, a truncated copy,
another version) raises :class:`~privlearn.exceptions.DataIntegrityError`, a ``ValueError``
naming the file and the command that fetches a verified copy; ``verify=False`` reads a file as
it is (your own edited copy, a hand-made test file).

A file that is present but unusable raises :class:`ValueError` naming it: a truncated or
corrupt gzip/bzip2/zip stream, a file with no data rows (empty, blank or header only), or a
NaN / infinite value (the message gives the row, 0-based among the data rows, and the column).
"""

from __future__ import annotations

import bz2
import contextlib
import errno
import gzip
import lzma
import os
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import PrivacyLeakWarning
from .home import ENV_VAR, PathLike, get_data_home
from .integrity import verify_data_file, verify_embedded_file

__all__ = [
    "get_data_home",
    "read_idx",
    "load_helr",
    "load_idash",
    "load_phishing",
    "load_adult",
    "load_adult_frame",
    "adult_scaler_stats",
    "load_kddcup99",
    "load_kddcup99_embedded",
    "data_source",
    "ADULT_COLUMNS",
    "KDDCUP99_EMBEDDED_ROWS",
    "EMBEDDED_DIR",
    "EMBEDDED_FILES",
    "load_mnist",
    "load_mnist38",
    "load_msd",
    "HELR_NAMES",
    "ADULT_NUMERIC_COLUMNS",
    "ADULT_CATEGORIES",
    "KDDCUP99_COLUMNS",
]


# --------------------------------------------------------------------------------------------
# The registry of known files (relative to the data folder). ``inventory.py`` lists exactly
# these; loaders use the same paths.
# --------------------------------------------------------------------------------------------

HELR_NAMES: tuple[str, ...] = ("edin", "lbw", "nhanes3", "pcs", "uis")
"""Data sets of Kim et al. 2018 (HELR) accepted by :func:`load_helr`."""

_MNIST_FILES: dict[str, tuple[str, str]] = {
    "train": ("mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz"),
    "test": ("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"),
}
_KDD_FILE = "kddcup99/kddcup.data_10_percent.gz"
_PHISHING_FILE = "phishing/phishing.txt.gz"
_ADULT_FILES: dict[str, str] = {"train": "adult/adult.data", "test": "adult/adult.test"}
_ADULT_NAMES_FILE = "adult/adult.names"

KNOWN_FILES: tuple[tuple[str, str], ...] = (
    *(("helr", f"helr/{name}.txt") for name in HELR_NAMES),
    ("mnist", _MNIST_FILES["train"][0]),
    ("mnist", _MNIST_FILES["train"][1]),
    ("mnist", _MNIST_FILES["test"][0]),
    ("mnist", _MNIST_FILES["test"][1]),
    ("kddcup99", _KDD_FILE),
    ("phishing", _PHISHING_FILE),
    ("adult", _ADULT_FILES["train"]),
    ("adult", _ADULT_FILES["test"]),
    ("adult", _ADULT_NAMES_FILE),
)
"""Every file the loaders know, as ``(dataset, path relative to the data folder)``."""

EMBEDDED_DIR = Path(__file__).resolve().parent / "embedded"
"""The package-data folder with the small public data sets shipped inside privlearn."""

EMBEDDED_FILES: dict[str, str] = {
    **{f"helr/{name}.txt": f"helr/{name}.txt.gz" for name in ("edin", "lbw", "pcs", "uis")},
    _PHISHING_FILE: "phishing/phishing.txt.gz",
    _ADULT_FILES["train"]: "adult/adult.data.xz",
    _ADULT_FILES["test"]: "adult/adult.test.xz",
    _ADULT_NAMES_FILE: "adult/adult.names.gz",
    _MNIST_FILES["test"][0]: "mnist/t10k-images-idx3-ubyte.gz",
    _MNIST_FILES["test"][1]: "mnist/t10k-labels-idx1-ubyte.gz",
}
"""Data-folder file -> its embedded copy (relative to :data:`EMBEDDED_DIR`).

Each embedded copy holds exactly the content of the original file (compressed with gzip or xz
where the original is plain text; see ``embedded/README.md`` for sources, licences and
SHA-256 digests). A loader called WITHOUT an explicit ``data_home`` reads the embedded copy
when the file is not in the default data folder; an explicit ``data_home`` is used alone.
The KDD Cup 1999 subsample (``kddcup99/kddcup.data_10_percent.song13_50k.xz``) is not a copy
of a data-folder file: only :func:`load_kddcup99_embedded` reads it.
"""

_KDD_EMBEDDED = "kddcup99/kddcup.data_10_percent.song13_50k.xz"


# --------------------------------------------------------------------------------------------
# Small helpers: data folder, argument checks, file lookup, output conventions.
# --------------------------------------------------------------------------------------------


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a str (one of {list(choices)}), got {type(value).__name__}"
        )
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; expected one of {list(choices)}")
    return value


def _check_path(path: Any, what: str) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} path must be a str or an os.PathLike, got {type(path).__name__}")
    p = Path(os.fspath(path)).expanduser()
    if not p.is_file():
        raise FileNotFoundError(
            errno.ENOENT, f"{what} file {p.name!r} not found in folder '{p.parent}'", str(p)
        )
    return p


def _embedded_copy(relative: str) -> Path | None:
    """The embedded copy of a data-folder file, or ``None`` when privlearn ships none."""
    name = EMBEDDED_FILES.get(relative)
    if name is None:
        return None
    path = EMBEDDED_DIR / name
    return path if path.is_file() else None


def data_source(relative: str, data_home: PathLike | None = None) -> tuple[Path | None, str]:
    """Where a loader would read the data file ``relative`` from, without reading it.

    Parameters
    ----------
    relative : str
        The file relative to the data folder, ``/``-separated (e.g. ``"adult/adult.data"``;
        see :data:`KNOWN_FILES`).
    data_home : str or os.PathLike, optional
        Data folder (see :func:`get_data_home`). When given explicitly, the embedded copy is
        never used.

    Returns
    -------
    path : pathlib.Path or None
        The file that would be read, ``None`` when there is none.
    source : {"data folder", "embedded", "missing"}
        ``"embedded"``: the file is not in the (default) data folder and the copy shipped
        inside the package (:data:`EMBEDDED_DIR`) is read instead.
    """
    home = get_data_home(data_home)
    path = home / relative
    if path.is_file():
        return path, "data folder"
    if data_home is None:
        copy = _embedded_copy(relative)
        if copy is not None:
            return copy, "embedded"
    return None, "missing"


def _data_file(relative: str, data_home: PathLike | None, verify: bool = True) -> Path:
    """Return ``data_home / relative`` (or, with no explicit ``data_home``, its embedded copy);
    raise a helpful FileNotFoundError if neither exists. With ``verify``, the file is first
    checked against its pinned SHA-256 (:mod:`privlearn.data.integrity`; once per process
    while it is unchanged): a mismatch is a :class:`~privlearn.exceptions.DataIntegrityError`."""
    home = get_data_home(data_home)
    path = home / relative
    found, source = data_source(relative, data_home)
    if found is not None:
        if verify:
            if source == "embedded":
                verify_embedded_file(found, EMBEDDED_FILES[relative], relative)
            else:
                verify_data_file(found, relative)
        return found
    raise FileNotFoundError(
        errno.ENOENT,
        f"data file {relative!r} not found in data folder '{home}'. Pass data_home=... "
        f"or set the {ENV_VAR} environment variable to the folder that holds the data "
        f"sets, or download it: privlearn datasets download {relative.split('/', 1)[0]} "
        f"(privlearn.data.fetch)",
        str(path),
    )


#: What reading a damaged file can raise: OS and decompression errors (``gzip.BadGzipFile``
#: is an ``OSError``, a truncated stream an ``EOFError``), undecodable bytes, and the parsers'
#: ``ValueError`` subclasses (pandas' ``ParserError`` and ``EmptyDataError``).
_READ_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    zlib.error,
    zipfile.BadZipFile,
    UnicodeDecodeError,
    ValueError,
)


@contextlib.contextmanager
def _reading(path: Path, what: str) -> Iterator[None]:
    """Turn the errors of reading ``path`` into a ``ValueError`` that names the file.

    Only the reading call belongs in the block: the loaders' own ``ValueError`` checks run
    outside it so that their messages are not rewrapped.
    """
    try:
        yield
    except FileNotFoundError:
        raise
    except _READ_ERRORS as exc:
        if type(exc).__name__ == "EmptyDataError":  # pandas: nothing to parse
            raise ValueError(f"'{path}' is empty: it has no {what} rows") from None
        raise ValueError(
            f"'{path}' is not a readable {what} file ({type(exc).__name__}: {exc})"
        ) from None


@contextlib.contextmanager
def _no_extra_fields(path: Path, n_fields: int) -> Iterator[None]:
    """With ``names=`` and ``index_col=False``, pandas only warns (and drops data) when a row
    has more fields than names; make that a ValueError naming the file."""
    import warnings

    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            yield
        except pd.errors.ParserWarning:
            raise ValueError(f"'{path}' has rows with more than {n_fields} fields") from None


def _check_rows(n_rows: int, path: Path, what: str) -> None:
    """A file that parsed to zero rows (empty, blank or header only) is a ValueError."""
    if n_rows == 0:
        raise ValueError(f"'{path}' has no {what} data rows (the file is empty or header only)")


def _check_finite(
    values: Any, path: Path, names: Sequence[str] | None = None, what: str = "value"
) -> None:
    """Raise a ValueError naming the first NaN / infinite entry (row and column) of ``values``.

    ``values`` is a 1-d or 2-d ndarray or a CSR matrix; rows are 0-based data rows.
    """
    if sp.issparse(values):
        csr = sp.csr_matrix(values)
        bad = np.flatnonzero(~np.isfinite(csr.data))
        if bad.size == 0:
            return
        k = int(bad[0])
        i = int(np.searchsorted(csr.indptr, k, side="right") - 1)
        j = int(csr.indices[k])
        value = csr.data[k]
    else:
        arr = np.asarray(values, dtype=np.float64)
        finite = np.isfinite(arr)
        if finite.all():
            return
        if arr.ndim == 1:
            i, j = int(np.flatnonzero(~finite)[0]), None
            value = arr[i]
        else:
            i, j = (int(v) for v in np.argwhere(~finite)[0])
            value = arr[i, j]
    if j is None:
        where = f"row {i}"
    else:
        column = repr(names[j]) if names is not None else str(j)
        where = f"row {i}, column {column}"
    raise ValueError(f"'{path}': non-finite {what} {value} in {where}")


def _as_X(X: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(X, dtype=np.float64)


def _binary_labels(raw: np.ndarray, positive: Any, negative: Any, what: str) -> np.ndarray:
    """Map ``positive -> +1`` and ``negative -> -1``; any other value is a ValueError."""
    raw = np.asarray(raw)
    pos = raw == positive
    neg = raw == negative
    bad = ~(pos | neg)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{what}: label {raw[i]!r} in row {i} is neither {positive!r} nor {negative!r}"
        )
    return np.where(pos, 1, -1).astype(np.int64)


def _result(X: Any, y: np.ndarray, names: list[str], return_feature_names: bool) -> tuple[Any, ...]:
    if X.shape[1] != len(names):  # internal consistency; never expected to fire
        raise AssertionError(f"{X.shape[1]} columns but {len(names)} feature names")
    if return_feature_names:
        return X, y, names
    return X, y


@contextlib.contextmanager
def _open_binary(path: Path) -> Iterator[IO[bytes]]:
    """Open ``path`` for binary reading, decompressing gzip, bzip2 or single-member zip.

    The compression is detected from the file's magic bytes, not its name (xz too).
    """
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as stream:
            yield stream
    elif head[:4] == b"\xfd7zX":
        with lzma.open(path, "rb") as stream:
            yield stream
    elif head[:3] == b"BZh":
        with bz2.open(path, "rb") as stream:
            yield stream
    elif head[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(path) as zf:
            members = [m for m in zf.infolist() if not m.is_dir()]
            if len(members) != 1:
                raise ValueError(
                    f"zip archive '{path}' must hold exactly one file, it holds {len(members)}"
                )
            with zf.open(members[0]) as stream:
                yield stream
    else:
        with open(path, "rb") as stream:
            yield stream


# --------------------------------------------------------------------------------------------
# HELR (Kim et al. 2018) and iDASH
# --------------------------------------------------------------------------------------------


def load_helr(
    name: str,
    data_home: PathLike | None = None,
    *,
    return_feature_names: bool = False,
    verify: bool = True,
) -> tuple[Any, ...]:
    """Load one of the small medical data sets of Kim et al. 2018 (HELR).

    The quadratic-gradient paper (Chiang, "Privacy-preserving logistic regression training with a
    faster gradient variant") evaluates on the same sets as its baseline Kim et al. 2018a:
    edin, lbw, nhanes3, pcs and uis. The file ``helr/{name}.txt`` is TAB separated, has no
    header, and holds a 0/1 label in its LAST column (the convention of the HELR code's
    ``readData``). Features are returned unscaled.

    Parameters
    ----------
    name : {"edin", "lbw", "nhanes3", "pcs", "uis"}
        Data set name. ``nhanes3`` is not in the shared data folder but is accepted: its
        loader raises :class:`FileNotFoundError` when the file is absent.
    data_home : str or os.PathLike, optional
        Data folder (see :func:`get_data_home`).
    return_feature_names : bool, default False
        Also return the feature names. The files have no header, so the names are
        ``"x1", ..., "xd"`` in file order.
    verify : bool, default True
        Check the file against its pinned SHA-256 before parsing (once per process while it
        is unchanged; see :mod:`privlearn.data.integrity`); ``False`` reads it as it is.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64
        ``+1`` where the file's label is 1, ``-1`` where it is 0.
    feature_names : list of str
        Only when ``return_feature_names`` is true.
    """
    name = _check_choice("HELR data set name", name, HELR_NAMES)
    return_feature_names = _check_bool("return_feature_names", return_feature_names)
    verify = _check_bool("verify", verify)
    path = _data_file(f"helr/{name}.txt", data_home, verify)
    import pandas as pd

    with _reading(path, "HELR"), _open_binary(path) as stream:
        frame = pd.read_csv(stream, sep="\t", header=None, dtype=np.float64)
    values = frame.to_numpy(dtype=np.float64)
    if values.ndim != 2 or values.shape[1] < 2:
        raise ValueError(f"'{path}' must have at least 2 TAB separated columns")
    _check_rows(values.shape[0], path, "HELR")
    names = [f"x{j + 1}" for j in range(values.shape[1] - 1)]
    _check_finite(values, path, [*names, "label"])
    y = _binary_labels(values[:, -1], 1.0, 0.0, f"'{path}'")
    X = _as_X(values[:, :-1])
    return _result(X, y, names, return_feature_names)


def load_idash(path: PathLike, *, return_feature_names: bool = False) -> tuple[Any, ...]:
    """Load the iDASH 2017 genomic data set (or any CSV laid out the same way).

    The file is a CSV with a header row; the FIRST column is the 0/1 label (cancer status in
    the iDASH 2017 task 3 data used by Kim et al. 2018a and the quadratic-gradient paper), the
    other columns are numeric features.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file (may be gzip/bzip2 compressed).
    return_feature_names : bool, default False
        Also return the feature names (the header of the feature columns).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64
        ``+1`` for label 1, ``-1`` for label 0.
    feature_names : list of str
        Only when ``return_feature_names`` is true.
    """
    p = _check_path(path, "iDASH")
    return_feature_names = _check_bool("return_feature_names", return_feature_names)
    import pandas as pd

    with _reading(p, "iDASH CSV"), _open_binary(p) as stream:
        frame = pd.read_csv(stream, header=0)
    if frame.shape[1] < 2:
        raise ValueError(f"'{p}' must have a label column and at least one feature column")
    _check_rows(frame.shape[0], p, "iDASH")
    try:
        values = frame.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"'{p}' has non-numeric entries: {exc}") from None
    _check_finite(values, p, [str(c) for c in frame.columns])
    y = _binary_labels(values[:, 0], 1.0, 0.0, f"'{p}'")
    X = _as_X(values[:, 1:])
    names = [str(c) for c in frame.columns[1:]]
    return _result(X, y, names, return_feature_names)


# --------------------------------------------------------------------------------------------
# Phishing (LIBSVM)
# --------------------------------------------------------------------------------------------

PHISHING_N_FEATURES = 68


def load_phishing(
    data_home: PathLike | None = None,
    *,
    sparse: bool = False,
    return_feature_names: bool = False,
    verify: bool = True,
) -> tuple[Any, ...]:
    """Load the LIBSVM "phishing" data set (11,055 x 68), used by DP-SCD (Damaskinos et al. 2021).

    Read from ``phishing/phishing.txt.gz`` with :func:`sklearn.datasets.load_svmlight_file`
    (``n_features=68``). The LIBSVM version is already binarised and every row has unit L2
    norm.

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        Data folder (see :func:`get_data_home`).
    sparse : bool, default False
        Return ``X`` as a :class:`scipy.sparse.csr_matrix` instead of a dense array.
    return_feature_names : bool, default False
        Also return the feature names ``"f1", ..., "f68"`` (the LIBSVM 1-based indices).
    verify : bool, default True
        Check the file against its pinned SHA-256 before parsing (once per process while it
        is unchanged; see :mod:`privlearn.data.integrity`); ``False`` reads it as it is.

    Returns
    -------
    X : ndarray or csr_matrix of shape (11055, 68), float64
    y : ndarray of shape (n_samples,), int64
        ``+1`` for LIBSVM label 1, ``-1`` for LIBSVM label 0.
    feature_names : list of str
        Only when ``return_feature_names`` is true.
    """
    sparse = _check_bool("sparse", sparse)
    return_feature_names = _check_bool("return_feature_names", return_feature_names)
    verify = _check_bool("verify", verify)
    path = _data_file(_PHISHING_FILE, data_home, verify)
    from sklearn.datasets import load_svmlight_file

    with _reading(path, "LIBSVM"):
        X, raw = load_svmlight_file(str(path), n_features=PHISHING_N_FEATURES, dtype=np.float64)
    _check_rows(X.shape[0], path, "LIBSVM")
    names = [f"f{j + 1}" for j in range(PHISHING_N_FEATURES)]
    _check_finite(raw, path, what="label")
    _check_finite(X, path, names)
    y = _binary_labels(raw, 1.0, 0.0, f"'{path}'")
    X = sp.csr_matrix(X, dtype=np.float64) if sparse else _as_X(X.toarray())
    return _result(X, y, names, return_feature_names)


# --------------------------------------------------------------------------------------------
# UCI Adult
# --------------------------------------------------------------------------------------------

ADULT_COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
"""The 15 fields of the UCI Adult files, in file order (``adult.names``)."""

ADULT_NUMERIC_COLUMNS: tuple[str, ...] = (
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
)
"""The continuous columns of Adult, in file order."""

# The public schema, copied from the attribute list at the end of ``adult/adult.names``
# (order as listed there). Using it, rather than the levels seen in the data, gives train and
# test identical columns and keeps the column layout independent of the private rows.
ADULT_CATEGORIES: dict[str, tuple[str, ...]] = {
    "workclass": (
        "Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
        "Without-pay", "Never-worked",
    ),
    "education": (
        "Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
        "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate",
        "5th-6th", "Preschool",
    ),
    "marital-status": (
        "Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
        "Married-spouse-absent", "Married-AF-spouse",
    ),
    "occupation": (
        "Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
        "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
        "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
        "Armed-Forces",
    ),
    "relationship": (
        "Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried",
    ),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": (
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
        "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico",
        "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan",
        "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand",
        "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands",
    ),
}  # fmt: skip
"""Public one-hot vocabularies of the Adult categorical columns (from ``adult.names``)."""

_ADULT_DPSCD_DROP = ("fnlwgt", "education")
_ADULT_DPSCD_NUMERIC = tuple(c for c in ADULT_NUMERIC_COLUMNS if c not in _ADULT_DPSCD_DROP)


def _read_adult(subset: str, data_home: PathLike | None, verify: Any = True) -> Any:
    import pandas as pd

    verify = _check_bool("verify", verify)
    path = _data_file(_ADULT_FILES[subset], data_home, verify)
    # adult.test starts with the line "|1x3 Cross validator"; both files may end in blank lines.
    with _no_extra_fields(path, len(ADULT_COLUMNS)), _reading(path, "UCI Adult"):
        with _open_binary(path) as stream:
            frame = pd.read_csv(
                stream,
                header=None,
                index_col=False,
                names=list(ADULT_COLUMNS),
                sep=",",
                skipinitialspace=True,
                skiprows=1 if subset == "test" else 0,
                skip_blank_lines=True,
                dtype=str,
                keep_default_na=False,
                engine="c",
            )
    _check_rows(len(frame), path, "UCI Adult")
    if frame.isna().any().any():
        raise ValueError(f"'{path}' has rows with fewer than {len(ADULT_COLUMNS)} fields")
    return frame, path


def _one_hot_fixed(
    values: np.ndarray, column: str, vocabulary: Sequence[str], where: str, missing: str | None
) -> np.ndarray:
    """One-hot ``values`` against a fixed vocabulary; ``missing`` gives an all-zero row."""
    import pandas as pd

    codes = np.asarray(pd.Index(list(vocabulary)).get_indexer(values), dtype=np.intp)
    unknown = codes < 0
    if missing is not None:
        unknown &= np.asarray(values) != missing
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise ValueError(
            f"{where}: value {values[i]!r} of column {column!r} (row {i}) is not in the "
            f"public schema {list(vocabulary)}"
        )
    block = np.zeros((len(values), len(vocabulary)), dtype=np.float64)
    rows = np.flatnonzero(codes >= 0)
    block[rows, codes[rows]] = 1.0
    return block


def _validate_scaler_stats(stats: Any) -> dict[str, tuple[float, float]]:
    if not isinstance(stats, Mapping):
        raise TypeError(
            f"scaler_stats must be a mapping {{column: (mean, std)}}, got {type(stats).__name__}"
        )
    unknown = sorted(set(stats) - set(_ADULT_DPSCD_NUMERIC))
    missing = [c for c in _ADULT_DPSCD_NUMERIC if c not in stats]
    if unknown or missing:
        raise ValueError(
            f"scaler_stats must have exactly the keys {list(_ADULT_DPSCD_NUMERIC)}; "
            f"missing {missing}, unknown {unknown}"
        )
    out: dict[str, tuple[float, float]] = {}
    for col in _ADULT_DPSCD_NUMERIC:
        try:
            mean, std = (float(v) for v in stats[col])
        except (TypeError, ValueError):
            raise TypeError(
                f"scaler_stats[{col!r}] must be a pair of numbers (mean, std), got {stats[col]!r}"
            ) from None
        if not (np.isfinite(mean) and np.isfinite(std) and std > 0):
            raise ValueError(
                f"scaler_stats[{col!r}] = ({mean}, {std}): mean must be finite and std > 0"
            )
        out[col] = (mean, std)
    return out


def _adult_numeric(frame: Any, columns: Sequence[str], path: Path) -> np.ndarray:
    import pandas as pd

    block = np.empty((len(frame), len(columns)), dtype=np.float64)
    for j, col in enumerate(columns):
        vals = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=np.float64)
        if not np.isfinite(vals).all():
            i = int(np.flatnonzero(~np.isfinite(vals))[0])
            raw = frame[col].iloc[i]
            raise ValueError(
                f"'{path}': non-numeric or non-finite {col!r} value {raw!r} in row {i}, "
                f"column {col!r}"
            )
        block[:, j] = vals
    return block


def _stats_from(block: np.ndarray) -> dict[str, tuple[float, float]]:
    mean = block.mean(axis=0)
    std = block.std(axis=0)
    return {c: (float(m), float(s)) for c, m, s in zip(_ADULT_DPSCD_NUMERIC, mean, std)}


def adult_scaler_stats(
    subset: str = "train", data_home: PathLike | None = None, *, verify: bool = True
) -> dict[str, tuple[float, float]]:
    """Compute the mean and standard deviation of Adult's DP-SCD numeric columns.

    The usual pattern is to compute these on the training set and pass them to
    ``load_adult("test", preprocess="dpscd", scaler_stats=...)``, so that train and test are
    scaled identically. Because the statistics come from the (private) data, this emits a
    :class:`~privlearn.exceptions.PrivacyLeakWarning` -- once, here, where the leak happens.

    Parameters
    ----------
    subset : {"train", "test"}, default "train"
        Which file the statistics are computed on.
    data_home : str or os.PathLike, optional
        Data folder (see :func:`get_data_home`).
    verify : bool, default True
        Check the file against its pinned SHA-256 before parsing (once per process while it
        is unchanged; see :mod:`privlearn.data.integrity`); ``False`` reads it as it is.

    Returns
    -------
    dict
        ``{column: (mean, std)}`` for ``age``, ``education-num``, ``capital-gain``,
        ``capital-loss`` and ``hours-per-week`` (population std, ``ddof=0``).
    """
    import warnings

    subset = _check_choice("subset", subset, ("train", "test"))
    frame, path = _read_adult(subset, data_home, verify)
    block = _adult_numeric(frame, _ADULT_DPSCD_NUMERIC, path)
    warnings.warn(
        "adult_scaler_stats computes means and standard deviations from the private data; "
        "standard-scaling with them leaks privacy outside any DP accounting",
        PrivacyLeakWarning,
        stacklevel=2,
    )
    return _stats_from(block)


def load_adult(
    subset: str = "train",
    data_home: PathLike | None = None,
    *,
    preprocess: str | None = None,
    scaler_stats: Mapping[str, Sequence[float]] | None = None,
    return_feature_names: bool = False,
    verify: bool = True,
) -> tuple[Any, ...]:
    """Load the UCI Adult (census income) data set from the raw UCI files.

    Reads ``adult/adult.data`` (32,561 rows, ``subset="train"``) or ``adult/adult.test``
    (16,281 rows, ``subset="test"``; its first comment line and the trailing ``.`` of its labels
    are handled). The label is income: ``">50K"`` -> ``+1``, ``"<=50K"`` -> ``-1``.

    Columns of ``X`` are the numeric columns (file order) followed by one one-hot block per
    categorical column (file order). The one-hot vocabularies are the PUBLIC schema listed in
    ``adult/adult.names`` (:data:`ADULT_CATEGORIES`), so train and test have identical columns
    and the layout does not depend on the data; a missing value (``?``) gives an all-zero
    block, and a value outside the schema is a ``ValueError``.

    Parameters
    ----------
    subset : {"train", "test"}, default "train"
    data_home : str or os.PathLike, optional
        Data folder (see :func:`get_data_home`).
    preprocess : {None, "dpscd"}, default None
        ``None``: the 6 raw numeric columns (unscaled) + one-hot of all 8 categoricals
        (105 columns). ``"dpscd"``: the preprocessing of the DP-SCD paper (Damaskinos,
        Mendler-Dunner, Guerraoui, Papandreou, Parnell, AAAI 2021, Appendix E): drop ``fnlwgt``
        and ``education``, standard-scale the 5 remaining numeric columns, one-hot the 7
        remaining categoricals (88 columns). Rows are NOT normalised; DP-SCD assumes
        ``||x_i|| = 1``, so follow with :func:`privlearn.data.normalize_rows`.
    scaler_stats : mapping, optional
        Only with ``preprocess="dpscd"``: public ``{column: (mean, std)}`` for exactly
        ``age``, ``education-num``, ``capital-gain``, ``capital-loss``, ``hours-per-week``.
        When omitted, the mean and std of the loaded subset itself are used and a
        :class:`~privlearn.exceptions.PrivacyLeakWarning` is emitted, because scaling with
        statistics of the private data leaks privacy. See :func:`adult_scaler_stats`.
    return_feature_names : bool, default False
        Also return the feature names (numeric column names, then ``"<column>=<level>"``).
    verify : bool, default True
        Check the file against its pinned SHA-256 before parsing (once per process while it
        is unchanged; see :mod:`privlearn.data.integrity`); ``False`` reads it as it is.

    Returns
    -------
    X : ndarray of shape (n_samples, 105) or (n_samples, 88), float64
    y : ndarray of shape (n_samples,), int64
        ``+1`` for ``>50K``, ``-1`` for ``<=50K``.
    feature_names : list of str
        Only when ``return_feature_names`` is true.
    """
    import warnings

    subset = _check_choice("subset", subset, ("train", "test"))
    if preprocess is not None:
        preprocess = _check_choice("preprocess", preprocess, ("dpscd",))
    return_feature_names = _check_bool("return_feature_names", return_feature_names)
    if scaler_stats is not None:
        if preprocess != "dpscd":
            raise ValueError('scaler_stats is only used with preprocess="dpscd"')
        stats = _validate_scaler_stats(scaler_stats)

    frame, path = _read_adult(subset, data_home, verify)
    labels = frame["income"].str.rstrip(".").to_numpy()
    y = _binary_labels(labels, ">50K", "<=50K", f"'{path}'")

    if preprocess == "dpscd":
        numeric = _ADULT_DPSCD_NUMERIC
        categorical = [c for c in ADULT_CATEGORIES if c not in _ADULT_DPSCD_DROP]
    else:
        numeric = ADULT_NUMERIC_COLUMNS
        categorical = list(ADULT_CATEGORIES)

    num = _adult_numeric(frame, numeric, path)
    if preprocess == "dpscd":
        if scaler_stats is None:
            warnings.warn(
                "load_adult(preprocess='dpscd') standard-scales the numeric columns with the "
                "mean and std of the loaded (private) data, which leaks privacy outside any DP "
                "accounting; pass public scaler_stats={column: (mean, std)} to avoid it",
                PrivacyLeakWarning,
                stacklevel=2,
            )
            stats = _stats_from(num)
        mean = np.array([stats[c][0] for c in numeric])
        std = np.array([stats[c][1] for c in numeric])
        std = np.where(std > 0, std, 1.0)
        num = (num - mean) / std

    blocks = [num]
    names = list(numeric)
    for col in categorical:
        vocab = ADULT_CATEGORIES[col]
        blocks.append(_one_hot_fixed(frame[col].to_numpy(), col, vocab, f"'{path}'", missing="?"))
        names.extend(f"{col}={level}" for level in vocab)
    X = _as_X(np.hstack(blocks))
    return _result(X, y, names, return_feature_names)


def load_adult_frame(
    subset: str = "train", data_home: PathLike | None = None, *, verify: bool = True
) -> Any:
    """Load the raw UCI Adult table as a :class:`pandas.DataFrame` (no encoding, no scaling).

    The starting point of a recipe from a raw table to a private model: the 15 columns of
    ``adult/adult.names`` with their names (:data:`ADULT_COLUMNS` order) and the raw values.
    Reads ``adult/adult.data`` (``subset="train"``, 32,561 rows) or ``adult/adult.test``
    (``subset="test"``, 16,281 rows; its first comment line is skipped). Without an explicit
    ``data_home``, a file missing from the default data folder is read from the copy embedded
    in the package (see :func:`data_source`).

    Parameters
    ----------
    subset : {"train", "test"}, default "train"
    data_home : str or os.PathLike, optional
        Data folder (see :func:`get_data_home`).
    verify : bool, default True
        Check the file against its pinned SHA-256 before parsing (once per process while it
        is unchanged; see :mod:`privlearn.data.integrity`); ``False`` reads it as it is.

    Returns
    -------
    pandas.DataFrame
        One row per person. The 6 numeric columns (:data:`ADULT_NUMERIC_COLUMNS`) are
        ``int64``; the 8 categorical columns (:data:`ADULT_CATEGORIES`) are strings, stripped
        of surrounding spaces, with the file's ``?`` (missing) as ``NaN``; ``income`` is
        ``int64``: ``1`` for ``">50K"``, ``0`` for ``"<=50K"`` (the trailing ``.`` of
        ``adult.test``'s labels removed).

    Raises
    ------
    FileNotFoundError
        When the file is neither in the data folder nor (without ``data_home``) embedded.
    DataIntegrityError
        With ``verify``, when the file does not match its pinned SHA-256.
    ValueError
        On a damaged file: wrong number of fields, a non-numeric value in a numeric column,
        or an income label other than ``>50K`` / ``<=50K``.

    Examples
    --------
    >>> from privlearn.data import load_adult_frame
    >>> frame = load_adult_frame("train")  # doctest: +SKIP
    >>> frame.shape, int(frame["income"].sum())  # doctest: +SKIP
    ((32561, 15), 7841)
    """
    import pandas as pd

    subset = _check_choice("subset", subset, ("train", "test"))
    frame, path = _read_adult(subset, data_home, verify)
    labels = frame["income"].str.strip().str.rstrip(".").to_numpy()
    income = (_binary_labels(labels, ">50K", "<=50K", f"'{path}'") > 0).astype(np.int64)
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    for col in ADULT_COLUMNS[:-1]:
        if col in ADULT_NUMERIC_COLUMNS:
            vals = _adult_numeric(frame, (col,), path)[:, 0]
            out[col] = vals.astype(np.int64) if np.all(vals == np.round(vals)) else vals
        else:
            text = frame[col].astype(str).str.strip()
            out[col] = text.where(text != "?", np.nan)
    out["income"] = income
    return out


# --------------------------------------------------------------------------------------------
# KDD Cup 1999 (10 percent)
# --------------------------------------------------------------------------------------------

KDDCUP99_COLUMNS: tuple[str, ...] = (
    "duration", "protocol_type", "service", "flag", "src_bytes", "dst_bytes", "land",
    "wrong_fragment", "urgent", "hot", "num_failed_logins", "logged_in", "num_compromised",
    "root_shell", "su_attempted", "num_root", "num_file_creations", "num_shells",
    "num_access_files", "num_outbound_cmds", "is_host_login", "is_guest_login", "count",
    "srv_count", "serror_rate", "srv_serror_rate", "rerror_rate", "srv_rerror_rate",
    "same_srv_rate", "diff_srv_rate", "srv_diff_host_rate", "dst_host_count",
    "dst_host_srv_count", "dst_host_same_srv_rate", "dst_host_diff_srv_rate",
    "dst_host_same_src_port_rate", "dst_host_srv_diff_host_rate", "dst_host_serror_rate",
    "dst_host_srv_serror_rate", "dst_host_rerror_rate", "dst_host_srv_rerror_rate",
)  # fmt: skip
"""The 41 feature names of KDD Cup 1999 (``kddcup.names``), in file order."""

_KDD_CATEGORICAL = ("protocol_type", "service", "flag")
_KDD_N_ROWS = 494_021


def _check_seed(seed: Any) -> Any:
    if seed is None or isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(
            f"seed must be None, an int or a numpy.random.Generator, got {type(seed).__name__}"
        )
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return int(seed)


def load_kddcup99(
    data_home: PathLike | None = None,
    *,
    n_samples: int | None = None,
    seed: int | np.random.Generator | None = None,
    return_feature_names: bool = False,
    verify: bool = True,
) -> tuple[Any, ...]:
    """Load the KDD Cup 1999 10% data set, normal vs. malicious (Song, Chaudhuri, Sarwate 2013).

    Reads ``kddcup99/kddcup.data_10_percent.gz`` (494,021 rows, 41 features + label) with
    :func:`pandas.read_csv`. ``X`` holds the 38 numeric columns (file order) followed by one-hot
    blocks for ``protocol_type``, ``service`` and ``flag``. Their vocabularies are the sorted
    distinct values of the WHOLE file (3, 66 and 11 levels in the 10% file), so the layout is
    the same for every subsample; this is a data-dependent schema, acceptable here because the
    levels are protocol/service/flag names, not personal attributes.

    Song et al. 2013 use a random subsample of 50,000 rows, normalise each feature, project
    rows onto the unit ball and randomly project to d = 9 (see :mod:`privlearn.data.preprocess`).

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        Data folder (see :func:`get_data_home`).
    n_samples : int, optional
        If given, a uniformly random subset of this many rows drawn WITHOUT replacement with
        ``numpy.random.default_rng(seed)``; rows keep their original file order.
    seed : int or numpy.random.Generator, optional
        Seed of the subsample (``None``: fresh OS entropy).
    return_feature_names : bool, default False
        Also return the feature names.
    verify : bool, default True
        Check the file against its pinned SHA-256 before parsing (once per process while it
        is unchanged; see :mod:`privlearn.data.integrity`); ``False`` reads it as it is.

    Returns
    -------
    X : ndarray of shape (n_samples, 118), float64
    y : ndarray of shape (n_samples,), int64
        ``-1`` for ``normal.`` connections, ``+1`` for every attack type.
    feature_names : list of str
        Only when ``return_feature_names`` is true.
    """
    return_feature_names = _check_bool("return_feature_names", return_feature_names)
    seed = _check_seed(seed)
    _check_kdd_n_samples(n_samples, _KDD_N_ROWS)
    verify = _check_bool("verify", verify)
    path = _data_file(_KDD_FILE, data_home, verify)
    return _kdd_from(path, n_samples, seed, None, return_feature_names)


def _check_kdd_n_samples(n_samples: Any, upper: int) -> None:
    if n_samples is not None:
        if isinstance(n_samples, (bool, np.bool_)) or not isinstance(n_samples, (int, np.integer)):
            raise TypeError(f"n_samples must be None or an int, got {type(n_samples).__name__}")
        if not 1 <= n_samples <= upper:
            raise ValueError(f"n_samples must be in [1, {upper}], got {n_samples}")


def _kdd_from(
    path: Path,
    n_samples: int | None,
    seed: Any,
    vocabs: Mapping[str, Sequence[str]] | None,
    return_feature_names: bool,
) -> tuple[Any, ...]:
    """Parse a KDD Cup 1999 CSV; ``vocabs=None``: one-hot levels from the file itself."""
    import pandas as pd

    names_all = [*KDDCUP99_COLUMNS, "label"]
    dtypes: dict[str, Any] = {c: np.float64 for c in KDDCUP99_COLUMNS}
    for c in (*_KDD_CATEGORICAL, "label"):
        dtypes[c] = str
    with _no_extra_fields(path, len(names_all)), _reading(path, "KDD Cup 1999"):
        with _open_binary(path) as stream:
            frame = pd.read_csv(
                stream, header=None, names=names_all, index_col=False, dtype=dtypes, engine="c"
            )
    _check_rows(len(frame), path, "KDD Cup 1999")
    text_columns = [*_KDD_CATEGORICAL, "label"]
    missing = frame[text_columns].isna().any(axis=1).to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ValueError(f"'{path}' has rows with missing fields (first: row {i})")
    numeric = [c for c in KDDCUP99_COLUMNS if c not in _KDD_CATEGORICAL]
    # a missing numeric field also reads as NaN: reported here with its row and column
    _check_finite(frame[numeric].to_numpy(dtype=np.float64), path, numeric)
    if n_samples is not None and n_samples > len(frame):
        raise ValueError(f"n_samples={n_samples} is more than the {len(frame)} rows of '{path}'")

    # Vocabulary from the whole file, before any subsampling.
    if vocabs is None:
        vocabs = {c: sorted(frame[c].unique()) for c in _KDD_CATEGORICAL}
    if n_samples is not None:
        rng = np.random.default_rng(seed)
        rows = np.sort(rng.choice(len(frame), size=n_samples, replace=False))
        frame = frame.iloc[rows]

    labels = frame["label"].to_numpy()
    y = np.where(labels == "normal.", -1, 1).astype(np.int64)
    blocks = [frame[numeric].to_numpy(dtype=np.float64)]
    names = list(numeric)
    for col in _KDD_CATEGORICAL:
        blocks.append(
            _one_hot_fixed(frame[col].to_numpy(), col, vocabs[col], f"'{path}'", missing=None)
        )
        names.extend(f"{col}={level}" for level in vocabs[col])
    X = _as_X(np.hstack(blocks))
    return _result(X, y, names, return_feature_names)


#: The sorted distinct values of the categorical columns over the WHOLE 10% file (3, 66 and 11
#: levels): the one-hot layout of :func:`load_kddcup99`, reused for the embedded subsample so
#: that both give the same 118 columns.
_KDD_VOCABS: dict[str, tuple[str, ...]] = {
    "protocol_type": ("icmp", "tcp", "udp"),
    "service": (
        "IRC", "X11", "Z39_50", "auth", "bgp", "courier", "csnet_ns", "ctf", "daytime",
        "discard", "domain", "domain_u", "echo", "eco_i", "ecr_i", "efs", "exec", "finger",
        "ftp", "ftp_data", "gopher", "hostnames", "http", "http_443", "imap4", "iso_tsap",
        "klogin", "kshell", "ldap", "link", "login", "mtp", "name", "netbios_dgm",
        "netbios_ns", "netbios_ssn", "netstat", "nnsp", "nntp", "ntp_u", "other", "pm_dump",
        "pop_2", "pop_3", "printer", "private", "red_i", "remote_job", "rje", "shell", "smtp",
        "sql_net", "ssh", "sunrpc", "supdup", "systat", "telnet", "tftp_u", "tim_i", "time",
        "urh_i", "urp_i", "uucp", "uucp_path", "vmnet", "whois",
    ),
    "flag": ("OTH", "REJ", "RSTO", "RSTOS0", "RSTR", "S0", "S1", "S2", "S3", "SF", "SH"),
}  # fmt: skip

KDDCUP99_EMBEDDED_ROWS = 50_000
"""Rows of the KDD Cup 1999 subsample embedded in the package (:func:`load_kddcup99_embedded`)."""


def load_kddcup99_embedded(
    *,
    n_samples: int | None = None,
    seed: Any = None,
    return_feature_names: bool = False,
    verify: bool = True,
) -> tuple[Any, ...]:
    """Load the 50,000-row SUBSAMPLE of KDD Cup 1999 embedded in the package.

    The embedded file holds the rows of the 10% file that Song, Chaudhuri, Sarwate 2013's
    reproduction draws (:func:`load_kddcup99` with ``n_samples=50000`` and the seed of
    ``privlearn.experiments.song13``), raw, in file order (see ``embedded/README.md``). It is a
    subsample, never the whole data set: results computed on it must say so. The one-hot
    layout is that of the whole file (:func:`load_kddcup99`: 118 columns, same names).

    Parameters
    ----------
    n_samples : int, optional
        If given, a uniformly random subset of this many of the 50,000 rows, drawn WITHOUT
        replacement with ``numpy.random.default_rng(seed)``; rows keep their order.
    seed : int or numpy.random.Generator, optional
        Seed of the subsample (``None``: fresh OS entropy).
    return_feature_names : bool, default False
        Also return the feature names.
    verify : bool, default True
        Check the file against its pinned SHA-256 before parsing (once per process while it
        is unchanged; see :mod:`privlearn.data.integrity`); ``False`` reads it as it is.

    Returns
    -------
    X : ndarray of shape (n_samples, 118), float64
    y : ndarray of shape (n_samples,), int64
        ``-1`` for ``normal.`` connections, ``+1`` for every attack type.
    feature_names : list of str
        Only when ``return_feature_names`` is true.
    """
    return_feature_names = _check_bool("return_feature_names", return_feature_names)
    verify = _check_bool("verify", verify)
    seed = _check_seed(seed)
    _check_kdd_n_samples(n_samples, KDDCUP99_EMBEDDED_ROWS)
    path = EMBEDDED_DIR / _KDD_EMBEDDED
    if not path.is_file():
        raise FileNotFoundError(
            errno.ENOENT, f"the embedded KDD Cup 1999 subsample is missing ('{path}')", str(path)
        )
    if verify:
        verify_embedded_file(path, _KDD_EMBEDDED)
    return _kdd_from(path, n_samples, seed, _KDD_VOCABS, return_feature_names)


# --------------------------------------------------------------------------------------------
# MNIST (IDX files)
# --------------------------------------------------------------------------------------------

_IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def read_idx(path: PathLike) -> np.ndarray:
    """Read an IDX file (the MNIST format), gzip-compressed or not.

    The header is big-endian: two zero bytes, a type code (``0x08`` unsigned byte, ``0x09``
    signed byte, ``0x0B`` int16, ``0x0C`` int32, ``0x0D`` float32, ``0x0E`` float64), the
    number of dimensions, then one uint32 size per dimension, followed by the data.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip compression is detected from its magic bytes.

    Returns
    -------
    ndarray
        Array of the stored shape, in native byte order.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the header is corrupt (bad magic, unknown type, zero dimensions) or the data length
        does not match the sizes in the header, or the gzip stream is corrupt.
    """
    p = _check_path(path, "IDX")
    try:
        with _open_binary(p) as stream:
            raw = stream.read()
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile) as exc:
        raise ValueError(f"'{p}' is not a readable IDX file: {exc}") from None
    if len(raw) < 4:
        raise ValueError(f"'{p}': IDX header truncated ({len(raw)} bytes)")
    if raw[0] != 0 or raw[1] != 0:
        raise ValueError(
            f"'{p}': bad IDX magic number 0x{raw[:4].hex()} (must start with two zero bytes)"
        )
    type_code, ndim = raw[2], raw[3]
    if type_code not in _IDX_DTYPES:
        raise ValueError(f"'{p}': unknown IDX data type code 0x{type_code:02x}")
    if ndim == 0:
        raise ValueError(f"'{p}': IDX header declares 0 dimensions")
    header_len = 4 + 4 * ndim
    if len(raw) < header_len:
        raise ValueError(f"'{p}': IDX header truncated (needs {header_len} bytes)")
    shape = tuple(int(s) for s in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = _IDX_DTYPES[type_code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    actual = len(raw) - header_len
    if actual != expected:
        raise ValueError(
            f"'{p}': IDX sizes {shape} need {expected} data bytes but the file has {actual}"
        )
    data = np.frombuffer(raw, dtype=dtype, offset=header_len).reshape(shape)
    return data.astype(dtype.newbyteorder("="), copy=True)


def _read_mnist_raw(
    subset: str, data_home: PathLike | None, verify: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Return the uint8 images (n, 28, 28) and uint8 labels (n,) of one MNIST subset."""
    img_rel, lab_rel = _MNIST_FILES[subset]
    img_path = _data_file(img_rel, data_home, verify)
    lab_path = _data_file(lab_rel, data_home, verify)
    images = read_idx(img_path)
    labels = read_idx(lab_path)
    if images.dtype != np.uint8 or images.ndim != 3 or images.shape[1:] != (28, 28):
        raise ValueError(
            f"'{img_path}': expected unsigned-byte images of shape (n, 28, 28), got "
            f"{images.dtype} {images.shape}"
        )
    if labels.dtype != np.uint8 or labels.ndim != 1:
        raise ValueError(
            f"'{lab_path}': expected a 1-d unsigned-byte label file, got "
            f"{labels.dtype} {labels.shape}"
        )
    if images.shape[0] == 0:
        raise ValueError(f"'{img_path}' holds no images (the IDX header declares 0 rows)")
    if labels.shape[0] != images.shape[0]:
        raise ValueError(
            f"MNIST {subset}: {images.shape[0]} images in '{img_path}' but "
            f"{labels.shape[0]} labels in '{lab_path}'"
        )
    if labels.size and labels.max() > 9:
        raise ValueError(f"'{lab_path}': label {int(labels.max())} is not a digit 0..9")
    return images, labels


def load_mnist(
    subset: str = "train",
    data_home: PathLike | None = None,
    *,
    return_feature_names: bool = False,
    verify: bool = True,
) -> tuple[Any, ...]:
    """Load MNIST from the official IDX files in ``mnist/``.

    Used with raw pixels by DP k-means (Chaturvedi, Nguyen, Xu 2021: 70,000 x 784) and for the
    1-vs-all task of Song, Chaudhuri, Sarwate 2013.

    Parameters
    ----------
    subset : {"train", "test", "all"}, default "train"
        ``"train"`` (60,000 rows), ``"test"`` (10,000 rows) or ``"all"`` (train then test,
        70,000 rows).
    data_home : str or os.PathLike, optional
        Data folder (see :func:`get_data_home`).
    return_feature_names : bool, default False
        Also return the feature names ``"pixel_<row>_<col>"`` (row-major, 0-based).
    verify : bool, default True
        Check the files against its pinned SHA-256 before parsing (once per process while they
        are unchanged; see :mod:`privlearn.data.integrity`); ``False`` reads them as they are.

    Returns
    -------
    X : ndarray of shape (n_samples, 784), float64
        Pixel values 0..255 (not rescaled).
    y : ndarray of shape (n_samples,), int64
        The digits 0..9.
    feature_names : list of str
        Only when ``return_feature_names`` is true.

    Raises
    ------
    ValueError
        On a corrupt IDX header, inconsistent sizes, or an unknown ``subset``.
    """
    subset = _check_choice("subset", subset, ("train", "test", "all"))
    return_feature_names = _check_bool("return_feature_names", return_feature_names)
    parts = ("train", "test") if subset == "all" else (subset,)
    verify = _check_bool("verify", verify)
    raws = [_read_mnist_raw(s, data_home, verify) for s in parts]
    n = sum(img.shape[0] for img, _ in raws)
    X = np.empty((n, 784), dtype=np.float64)
    y = np.empty(n, dtype=np.int64)
    start = 0
    for img, lab in raws:
        stop = start + img.shape[0]
        X[start:stop] = img.reshape(img.shape[0], 784)
        y[start:stop] = lab
        start = stop
    names = [f"pixel_{r}_{c}" for r in range(28) for c in range(28)]
    return _result(X, y, names, return_feature_names)


def _pool2x2_floor_mean(images: np.ndarray) -> np.ndarray:
    """floor(sum of each 2x2 block / 4) of uint8 images (n, 28, 28) -> int (n, 14, 14)."""
    n, h, w = images.shape
    blocks = images.reshape(n, h // 2, 2, w // 2, 2).astype(np.int64)
    return blocks.sum(axis=(2, 4)) // 4


def load_mnist38(
    subset: str = "train",
    data_home: PathLike | None = None,
    *,
    return_feature_names: bool = False,
    verify: bool = True,
) -> tuple[Any, ...]:
    """Load the MNIST 3-vs-8 task downsampled to 14 x 14 (quadratic-gradient paper).

    The restructured MNIST of Han et al. 2019, used by the quadratic-gradient paper (11,982
    training rows, 196 features): only the digits 3 and 8, in their original order; each
    feature is ``floor(sum of a 2x2 pixel block / 4)`` (values 0..255), blocks in row-major
    order.

    Parameters
    ----------
    subset : {"train", "test"}, default "train"
        ``"train"`` gives 11,982 rows, ``"test"`` 1,984 rows.
    data_home : str or os.PathLike, optional
        Data folder (see :func:`get_data_home`).
    return_feature_names : bool, default False
        Also return the feature names ``"block_<row>_<col>"`` (0-based, 14 x 14).
    verify : bool, default True
        Check the files against its pinned SHA-256 before parsing (once per process while they
        are unchanged; see :mod:`privlearn.data.integrity`); ``False`` reads them as they are.

    Returns
    -------
    X : ndarray of shape (n_samples, 196), float64
        Integer values 0..255.
    y : ndarray of shape (n_samples,), int64
        ``+1`` for digit 3, ``-1`` for digit 8.
    feature_names : list of str
        Only when ``return_feature_names`` is true.
    """
    subset = _check_choice("subset", subset, ("train", "test"))
    return_feature_names = _check_bool("return_feature_names", return_feature_names)
    verify = _check_bool("verify", verify)
    images, labels = _read_mnist_raw(subset, data_home, verify)
    keep = (labels == 3) | (labels == 8)
    pooled = _pool2x2_floor_mean(images[keep])
    X = _as_X(pooled.reshape(pooled.shape[0], 196))
    y = np.where(labels[keep] == 3, 1, -1).astype(np.int64)
    names = [f"block_{r}_{c}" for r in range(14) for c in range(14)]
    return _result(X, y, names, return_feature_names)


# --------------------------------------------------------------------------------------------
# YearPredictionMSD
# --------------------------------------------------------------------------------------------

MSD_N_FEATURES = 90
_MSD_NAMES = [f"timbre_avg_{j + 1}" for j in range(12)] + [f"timbre_cov_{j + 1}" for j in range(78)]


def load_msd(path: PathLike, *, return_feature_names: bool = False) -> tuple[Any, ...]:
    """Load YearPredictionMSD (Million Song Dataset year prediction), used by DP-SCD.

    Two layouts are recognised from the first non-empty line of the file:

    - the UCI CSV (``YearPredictionMSD.txt``): no header, 91 comma-separated fields, the year
      first, then 12 timbre averages and 78 timbre covariances;
    - the LIBSVM/svmlight version (``YearPredictionMSD`` / ``.t``): ``year idx:value ...``,
      read with :func:`sklearn.datasets.load_svmlight_file` (``n_features=90``).

    gzip, bzip2 and single-member zip compression are detected from the magic bytes. The UCI
    convention is to train on the first 463,715 rows (the DP-SCD paper's training set) and
    test on the last 51,630; the LIBSVM files are already split that way.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    return_feature_names : bool, default False
        Also return the feature names (``timbre_avg_1..12``, ``timbre_cov_1..78``).

    Returns
    -------
    X : ndarray of shape (n_samples, 90), float64
    y : ndarray of shape (n_samples,), float64
        The release years.
    feature_names : list of str
        Only when ``return_feature_names`` is true.
    """
    import pandas as pd
    from sklearn.datasets import load_svmlight_file

    p = _check_path(path, "YearPredictionMSD")
    return_feature_names = _check_bool("return_feature_names", return_feature_names)
    first = b""
    with _reading(p, "YearPredictionMSD"), _open_binary(p) as stream:
        for line in stream:
            if line.strip():
                first = line.strip()
                break
    if not first:
        raise ValueError(f"'{p}' is empty: it has no YearPredictionMSD data rows")
    if b":" in first:
        with _reading(p, "90-feature svmlight"), _open_binary(p) as stream:
            Xs, y = load_svmlight_file(stream, n_features=MSD_N_FEATURES, dtype=np.float64)
        X = Xs.toarray()
    else:
        with _reading(p, "numeric CSV"), _open_binary(p) as stream:
            frame = pd.read_csv(stream, header=None, dtype=np.float64, engine="c")
        if frame.shape[1] != MSD_N_FEATURES + 1:
            raise ValueError(
                f"'{p}': expected {MSD_N_FEATURES + 1} comma-separated fields (year + 90 "
                f"features), found {frame.shape[1]}"
            )
        values = frame.to_numpy(dtype=np.float64)
        y, X = values[:, 0], values[:, 1:]
    X = _as_X(X)
    y = np.ascontiguousarray(y, dtype=np.float64)
    _check_rows(X.shape[0], p, "YearPredictionMSD")
    _check_finite(y, p, what="year")
    _check_finite(X, p, _MSD_NAMES)
    return _result(X, y, list(_MSD_NAMES), return_feature_names)
