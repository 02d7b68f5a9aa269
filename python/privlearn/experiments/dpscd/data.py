"""The data of the DP-SCD reproduction: Section 5's data sets, split and preprocessed.

Belongs here: finding YearPredictionMSD (:func:`find_msd_files`), loading, subsampling,
scaling and splitting each data set into train / validation / test (:func:`prepare_dataset`,
:class:`Split`), and the exact ridge optimum of Fig. 2 (:func:`ridge_optimum`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from privlearn._losses import objective
from privlearn.experiments.dpscd.settings import (
    _DATA_LABELS,
    _MSD_STAND_IN,
    _MSD_TEST,
    _MSD_TRAIN,
    _PHISHING_TEST_FRACTION,
    _TAG,
    LAMBDA,
    VALID_FRACTION,
)
from privlearn.experiments.runs import derive_seed


@dataclass
class Split:
    """Preprocessed data of one data set: 75% train / 25% validation of the training part,
    and the test part."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    note: str
    #: Name of the data that ran, for figure titles and table captions (e.g.
    #: ``"YearPredictionMSD-like (synthetic)"`` for the stand-in); the default is the data set's.
    label: str = ""


def find_msd_files(data_home: Any = None) -> tuple[Path, ...]:
    """YearPredictionMSD under the data folder: ``(uci_file,)``, ``(train, test)`` or ``()``.

    Looks in ``msd/``, ``YearPredictionMSD/`` and ``yearpredictionmsd/`` for the UCI file
    (``YearPredictionMSD.txt``, optionally ``.zip`` / ``.gz`` / ``.bz2``) or the LIBSVM pair
    (``YearPredictionMSD`` and ``YearPredictionMSD.t``, optionally ``.bz2``).
    """
    from privlearn.data import get_data_home

    home = get_data_home(data_home)
    for folder in ("msd", "YearPredictionMSD", "yearpredictionmsd"):
        base = home / folder
        if not base.is_dir():
            continue
        for ext in ("", ".zip", ".gz", ".bz2"):
            for name in ("YearPredictionMSD.txt", "YearPredictionMSD.csv"):
                if (base / (name + ext)).is_file():
                    return (base / (name + ext),)
        for ext in ("", ".bz2"):
            train = base / f"YearPredictionMSD{ext}"
            test = base / f"YearPredictionMSD.t{ext}"
            if train.is_file() and test.is_file():
                return (train, test)
    return ()


def _subsample(X: np.ndarray, y: np.ndarray, n: int | None, seed: int) -> tuple[Any, Any]:
    if n is None or n >= X.shape[0]:
        return X, y
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(X.shape[0], size=int(n), replace=False))
    return X[rows], y[rows]


def _scale(X_train: np.ndarray, X_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Max-abs scaling with the training bounds, then unit-norm rows (both parts)."""
    from privlearn.data import maxabs_scale, normalize_rows
    from privlearn.exceptions import PrivacyLeakWarning

    bound = np.abs(X_train).max(axis=0)
    bound = np.where(bound > 0, bound, 1.0)
    with warnings.catch_warnings():
        # The paper scales every feature by its maximum |x| on the training data: data-derived
        # bounds, outside the DP guarantee (PrivacyLeakWarning), reproduced on purpose.
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        X_train = maxabs_scale(X_train)
    X_test = maxabs_scale(X_test, bound)  # the same (training) bounds, clipped to [-1, 1]
    return normalize_rows(X_train), normalize_rows(X_test)


def _make_synthetic_classification(n: int, n_test: int, d: int = 20) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(derive_seed(_TAG, "synthetic", "data"))
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    X = rng.standard_normal((n + n_test, d))
    y = np.where(X @ w + 0.3 * rng.standard_normal(n + n_test) >= 0, 1.0, -1.0)
    return X[:n], y[:n], X[n:], y[n:]


def _embedded_suffix(files: tuple[str, ...], data_home: Any) -> str:
    """`` (the copy embedded in privlearn ...)`` when a loader reads the embedded files."""
    from privlearn.data import data_source

    if any(data_source(f, data_home)[1] == "embedded" for f in files):
        return " (the copy embedded in privlearn: the data folder lacks it; identical files)"
    return ""


def prepare_dataset(name: str, n_train: int | None = None, *, data_home: Any = None) -> Split:
    """Load, split and preprocess one data set of Section 5.

    Parameters
    ----------
    name : {"msd", "phishing", "adult", "synthetic"}
    n_train : int, optional
        Rows of the training part (before the validation split): the paper's size by default
        (463,715 / 8,291 / 32,561); smaller values take a seeded subsample. For the synthetic
        MSD stand-in the test part is scaled down in proportion (51,630 x n_train / 463,715).
    data_home : path, optional
        Folder of the real data (see :func:`privlearn.data.get_data_home`).

    Returns
    -------
    Split
        Unit-norm rows; labels in {-1, +1} (classification) or years minus the training mean.

    Raises
    ------
    FileNotFoundError
        If the Phishing or Adult files are missing.
    """
    from privlearn.data import (
        adult_scaler_stats,
        load_adult,
        load_msd,
        load_phishing,
        make_msd_like,
    )
    from privlearn.exceptions import PrivacyLeakWarning

    sub_seed = derive_seed(_TAG, name, "subsample")
    label = _DATA_LABELS.get(name, name)
    if name == "msd":
        files = find_msd_files(data_home)
        if len(files) == 1:
            X, y = load_msd(files[0])
            X_tr, y_tr, X_te, y_te = X[:_MSD_TRAIN], y[:_MSD_TRAIN], X[_MSD_TRAIN:], y[_MSD_TRAIN:]
            source = f"the real YearPredictionMSD file {files[0].name} (first 463,715 rows train)"
        elif len(files) == 2:
            X_tr, y_tr = load_msd(files[0])
            X_te, y_te = load_msd(files[1])
            source = f"the real YearPredictionMSD LIBSVM files {files[0].name} / {files[1].name}"
        else:
            n = _MSD_TRAIN if n_train is None else int(n_train)
            n_te = _MSD_TEST if n_train is None else max(1, round(n * _MSD_TEST / _MSD_TRAIN))
            X, y = make_msd_like(n + n_te, seed=derive_seed(_TAG, "msd", "data"))
            X_tr, y_tr, X_te, y_te = X[:n], y[:n], X[n:], y[n:]
            label = _MSD_STAND_IN
            source = (
                "SYNTHETIC stand-in (privlearn.data.make_msd_like; the real YearPredictionMSD "
                "file was not found under the data folder: `privlearn datasets download msd` "
                "fetches it)"
            )
            if n_train is not None and n < _MSD_TRAIN:
                source += (
                    f", generated with {n:,} training rows instead of the paper's 463,715 and "
                    f"{n_te:,} test rows (51,630 scaled in proportion)"
                )
        full = X_tr.shape[0]
        X_tr, y_tr = _subsample(X_tr, y_tr, n_train, sub_seed)
        offset = float(y_tr.mean())
        y_tr, y_te = y_tr - offset, y_te - offset
        size = f"{X_tr.shape[0]:,} training rows" + (
            f" (a seeded subsample of {full:,})" if X_tr.shape[0] < full else ""
        )
        note = (
            f"{source}; {size}, {X_te.shape[0]:,} test rows, 90 features; years centred by the "
            f"training mean {offset:.2f} (data-derived, as in the authors' code)"
        )
    elif name == "phishing":
        X, y = load_phishing(data_home)
        rng = np.random.default_rng(derive_seed(_TAG, name, "split"))
        perm = rng.permutation(X.shape[0])
        n_test = round(_PHISHING_TEST_FRACTION * X.shape[0])
        X_te, y_te = X[perm[:n_test]], y[perm[:n_test]]
        X_tr, y_tr = X[perm[n_test:]], y[perm[n_test:]]
        full = X_tr.shape[0]
        X_tr, y_tr = _subsample(X_tr, y_tr, n_train, sub_seed)
        note = (
            f"LIBSVM phishing{_embedded_suffix(('phishing/phishing.txt.gz',), data_home)}, "
            f"seeded 75/25 split: {X_tr.shape[0]:,} training rows"
            + (f" (a seeded subsample of {full:,})" if X_tr.shape[0] < full else "")
            + f", {X_te.shape[0]:,} test rows, 68 features"
        )
    elif name == "adult":
        with warnings.catch_warnings():
            # Standard-scaling with the mean / std of the training file, as in the paper: a
            # data-derived statistic outside the DP guarantee, reproduced on purpose.
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            stats = adult_scaler_stats("train", data_home)
        X_tr, y_tr = load_adult("train", data_home, preprocess="dpscd", scaler_stats=stats)
        X_te, y_te = load_adult("test", data_home, preprocess="dpscd", scaler_stats=stats)
        full = X_tr.shape[0]
        X_tr, y_tr = _subsample(X_tr, y_tr, n_train, sub_seed)
        adult_files = ("adult/adult.data", "adult/adult.test")
        note = (
            f"UCI adult.data / adult.test{_embedded_suffix(adult_files, data_home)}: "
            f"{X_tr.shape[0]:,} training rows"
            + (f" (a seeded subsample of {full:,})" if X_tr.shape[0] < full else "")
            + f", {X_te.shape[0]:,} test rows; fnlwgt and education dropped, 5 numeric columns "
            "standard-scaled with the adult.data mean / std, 7 categoricals one-hot (88 features)"
        )
    elif name == "synthetic":
        n = 20_000 if n_train is None else int(n_train)
        X_tr, y_tr, X_te, y_te = _make_synthetic_classification(n, max(1, n // 4))
        note = (
            f"synthetic classification (not in the paper): {n:,} training rows, "
            f"{X_te.shape[0]:,} test rows, 20 Gaussian features, y = sign(x.w + 0.3 noise)"
        )
    else:
        raise ValueError(f"unknown data set {name!r}; choose from {sorted(_DATA_LABELS)}")
    X_tr, X_te = _scale(np.asarray(X_tr, dtype=np.float64), np.asarray(X_te, dtype=np.float64))
    y_tr = np.asarray(y_tr, dtype=np.float64)
    y_te = np.asarray(y_te, dtype=np.float64)
    rng = np.random.default_rng(derive_seed(_TAG, name, "validation"))
    perm = rng.permutation(X_tr.shape[0])
    n_val = max(1, round(VALID_FRACTION * X_tr.shape[0]))
    val, fit = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    note += (
        "; features divided by their max |x| on the training part (data-derived), rows scaled "
        f"to unit norm; {fit.size:,} rows for training, {val.size:,} for validation"
    )
    return Split(
        X_train=np.ascontiguousarray(X_tr[fit]),
        y_train=np.ascontiguousarray(y_tr[fit]),
        X_val=np.ascontiguousarray(X_tr[val]),
        y_val=np.ascontiguousarray(y_tr[val]),
        X_test=np.ascontiguousarray(X_te),
        y_test=np.ascontiguousarray(y_te),
        note=note,
        label=label,
    )


def ridge_optimum(X: np.ndarray, y: np.ndarray, lam: float = LAMBDA) -> tuple[np.ndarray, float]:
    """Exact minimiser of ``(1/N) sum (x_i^T w - y_i)^2 / 2 + (lam/2)||w||^2`` and its value
    (the optimum line of Fig. 2)."""
    n, d = X.shape
    A = X.T @ X / n + lam * np.eye(d)
    w = np.linalg.solve(A, X.T @ y / n)
    return w, float(objective(X, y, w, "squared", lam)[0])
