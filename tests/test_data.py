"""Tests of privlearn.data: loaders, preprocessing, synthetic generators, inventory.

Real-data tests call ``require_data(...)`` first: a missing file skips locally and fails in CI.
The expected shapes and label counts below were computed once from the files in
``shared/data`` and checked against its README where the README states them (row counts,
11,982 / 1,984 MNIST 3-vs-8 rows, 97,278 ``normal.`` KDD rows, the KDD sha256, the MNIST md5).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import os
import re
import struct
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

import privlearn.data as pdata
from privlearn.data import (
    ADULT_CATEGORIES,
    adult_scaler_stats,
    dataset_inventory,
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
    make_gaussian_mixture,
    make_large_categorical,
    make_msd_like,
    make_sphere_separable,
    maxabs_scale,
    minmax_scale,
    normalize_rows,
    project_to_ball,
    random_projection,
    random_projection_matrix,
    read_idx,
    row_norms,
)
from privlearn.exceptions import PrivacyLeakWarning

MNIST_TRAIN = ("mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz")
MNIST_TEST = ("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz")
KDD = "kddcup99/kddcup.data_10_percent.gz"
PHISHING = "phishing/phishing.txt.gz"
ADULT = ("adult/adult.data", "adult/adult.test")

# (rows, features without the label, number of +1 labels); README: 1253x10, 189x10, 379x10,
# 575x9 with the label included.
HELR_EXPECTED = {
    "edin": (1253, 9, 274),
    "lbw": (189, 9, 130),
    "pcs": (379, 9, 153),
    "uis": (575, 8, 428),
}
MNIST_TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
MNIST_TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
KDD_SHA256 = "8045aca0d84e70e622d1148d7df782496f6333bf6eb979a1b0837c42a9fd9561"
MNIST_TRAIN_IMAGES_MD5 = "6bbc9ace898e44ae57da46a324031adb"


@pytest.fixture(scope="module")
def cached(data_home: Path):
    """Load each real data set at most once per module: ``cached(load_mnist, "train")``.

    Call ``require_data`` before it. Tests must not modify the returned arrays.
    """
    store: dict = {}

    def get(loader, *args, **kwargs):
        key = (loader.__name__, args, tuple(sorted(kwargs.items())))
        if key not in store:
            store[key] = loader(*args, data_home=data_home, **kwargs)
        return store[key]

    return get


def _check_X(X: np.ndarray, shape: tuple[int, int]) -> None:
    assert isinstance(X, np.ndarray)
    assert X.shape == shape
    assert X.dtype == np.float64
    assert X.flags.c_contiguous
    assert np.isfinite(X).all()


def _check_binary(y: np.ndarray, n: int, n_positive: int) -> None:
    assert y.dtype == np.int64
    assert y.shape == (n,)
    assert set(np.unique(y).tolist()) == {-1, 1}
    assert int((y == 1).sum()) == n_positive


# ----------------------------------------------------------------------------- data folder


def test_get_data_home_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("PRIVLEARN_DATA", str(tmp_path / "env"))
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"
    assert get_data_home(str(tmp_path)) == tmp_path
    assert get_data_home() == tmp_path / "env"
    monkeypatch.setenv("PRIVLEARN_DATA", "")
    assert get_data_home() == Path.home() / "privlearn_data"
    monkeypatch.delenv("PRIVLEARN_DATA")
    assert get_data_home() == Path.home() / "privlearn_data"
    assert get_data_home("~/x") == Path.home() / "x"
    with pytest.raises(TypeError, match="data_home"):
        get_data_home(3)


def test_public_api_exports():
    for name in pdata.__all__:
        assert hasattr(pdata, name), name
    assert {"load_mnist", "make_sphere_separable", "dataset_inventory"} <= set(pdata.__all__)


@pytest.mark.parametrize(
    ("call", "relative"),
    [
        (lambda h: load_mnist("train", data_home=h), MNIST_TRAIN[0]),
        (lambda h: load_mnist38("test", data_home=h), MNIST_TEST[0]),
        (lambda h: load_kddcup99(data_home=h), KDD),
        (lambda h: load_phishing(data_home=h), PHISHING),
        (lambda h: load_adult("test", data_home=h), ADULT[1]),
        (lambda h: load_helr("nhanes3", data_home=h), "helr/nhanes3.txt"),
    ],
)
def test_missing_file_names_file_and_folder(tmp_path, call, relative):
    with pytest.raises(FileNotFoundError) as info:
        call(tmp_path)
    message = str(info.value)
    assert relative in message
    assert str(tmp_path) in message
    assert "PRIVLEARN_DATA" in message
    assert info.value.filename == str(tmp_path / relative)


def test_missing_file_uses_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PRIVLEARN_DATA", str(tmp_path))
    # nhanes3 is not embedded in the package: its absence is reported with the env folder
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path))):
        load_helr("nhanes3")


def test_nhanes3_is_accepted_but_absent(require_data, data_home):
    require_data("helr/edin.txt")
    if (data_home / "helr" / "nhanes3.txt").exists():
        pytest.skip("nhanes3.txt is present here")
    with pytest.raises(FileNotFoundError, match="nhanes3.txt"):
        load_helr("nhanes3", data_home=data_home)


@pytest.mark.parametrize(
    ("call", "exc"),
    [
        (lambda: load_helr("edinburgh"), ValueError),
        (lambda: load_helr(3), TypeError),
        (lambda: load_mnist("validation"), ValueError),
        (lambda: load_mnist(0), TypeError),
        (lambda: load_mnist38("all"), ValueError),
        (lambda: load_adult("dev"), ValueError),
        (lambda: load_adult("train", preprocess="zscore"), ValueError),
        (lambda: load_adult("train", scaler_stats={"age": (0, 1)}), ValueError),
        (lambda: load_phishing(sparse="yes"), TypeError),
        (lambda: load_kddcup99(n_samples=0), ValueError),
        (lambda: load_kddcup99(n_samples=494_022), ValueError),
        (lambda: load_kddcup99(n_samples=10.0), TypeError),
        (lambda: load_kddcup99(n_samples=True), TypeError),
        (lambda: load_kddcup99(n_samples=10, seed="x"), TypeError),
        (lambda: load_mnist("train", return_feature_names=1), TypeError),
        (lambda: load_idash(12), TypeError),
        (lambda: load_msd(None), TypeError),
    ],
)
def test_bad_arguments(call, exc, tmp_path, monkeypatch):
    # Argument errors come before any file access: point the data folder at an empty one.
    monkeypatch.setenv("PRIVLEARN_DATA", str(tmp_path))
    with pytest.raises(exc):
        call()


# ------------------------------------------------------------------------------------ HELR


@pytest.mark.parametrize("name", sorted(HELR_EXPECTED))
def test_helr_shapes_and_labels(require_data, name):
    home = require_data(f"helr/{name}.txt")
    n, d, n_pos = HELR_EXPECTED[name]
    X, y, names = load_helr(name, data_home=home, return_feature_names=True)
    _check_X(X, (n, d))
    _check_binary(y, n, n_pos)
    assert names == [f"x{j + 1}" for j in range(d)]
    raw = np.loadtxt(home / "helr" / f"{name}.txt", delimiter="\t")
    np.testing.assert_array_equal(X, raw[:, :-1])
    np.testing.assert_array_equal(y, 2 * raw[:, -1].astype(np.int64) - 1)


def test_helr_default_folder_from_environment(require_data, monkeypatch):
    home = require_data("helr/lbw.txt")
    monkeypatch.setenv("PRIVLEARN_DATA", str(home))
    X, y = load_helr("lbw")
    assert X.shape == (189, 9)


def test_helr_parsing_crlf_and_label_check(tmp_path):
    (tmp_path / "helr").mkdir()
    (tmp_path / "helr" / "pcs.txt").write_bytes(b"1\t2.5\t1\r\n3\t4\t0\r\n")
    X, y = load_helr("pcs", data_home=tmp_path, verify=False)
    np.testing.assert_array_equal(X, [[1.0, 2.5], [3.0, 4.0]])
    np.testing.assert_array_equal(y, [1, -1])
    (tmp_path / "helr" / "uis.txt").write_text("1\t2\n3\t2\n")
    with pytest.raises(ValueError, match="label"):
        load_helr("uis", data_home=tmp_path, verify=False)


def test_idash_csv(tmp_path):
    path = tmp_path / "idash.csv"
    path.write_text("cancer,snp1,snp2\n1,0,2\n0,1,1\n1,2,0\n")
    X, y, names = load_idash(path, return_feature_names=True)
    _check_X(X, (3, 2))
    np.testing.assert_array_equal(X, [[0, 2], [1, 1], [2, 0]])
    np.testing.assert_array_equal(y, [1, -1, 1])
    assert names == ["snp1", "snp2"]
    gz = tmp_path / "idash.csv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    np.testing.assert_array_equal(load_idash(gz)[0], X)
    bad = tmp_path / "bad.csv"
    bad.write_text("y,a\n2,1\n")
    with pytest.raises(ValueError, match="label"):
        load_idash(bad)
    with pytest.raises(FileNotFoundError, match="nothere.csv"):
        load_idash(tmp_path / "nothere.csv")


# -------------------------------------------------------------------------------- phishing


def test_phishing(require_data, cached):
    require_data(PHISHING)
    X, y, names = cached(load_phishing, return_feature_names=True)
    _check_X(X, (11055, 68))
    _check_binary(y, 11055, 6157)
    assert names[0] == "f1" and names[-1] == "f68"
    # README: rows already unit length, every non-zero is 0.18257 (30 non-zeros per row).
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 0.18257 * np.sqrt(30), rtol=1e-12)
    assert set(np.unique(X).tolist()) == {0.0, 0.18257}
    Xs, ys = cached(load_phishing, sparse=True)
    assert isinstance(Xs, sp.csr_matrix)
    assert Xs.dtype == np.float64
    np.testing.assert_array_equal(Xs.toarray(), X)
    np.testing.assert_array_equal(ys, y)


# ----------------------------------------------------------------------------------- adult


def test_adult_schema_matches_names_file(require_data):
    home = require_data("adult/adult.names")
    text = (home / "adult" / "adult.names").read_text()
    schema = {}
    for line in text.splitlines():
        m = re.match(r"^([a-z-]+): (.*)\.$", line)
        if m and m.group(2) != "continuous":
            schema[m.group(1)] = tuple(v.strip() for v in m.group(2).split(","))
    assert schema == ADULT_CATEGORIES


@pytest.mark.parametrize(
    ("subset", "n", "n_pos", "n_missing"),
    [
        ("train", 32561, 7841, {"workclass": 1836, "occupation": 1843, "native-country": 583}),
        ("test", 16281, 3846, {"workclass": 963, "occupation": 966, "native-country": 274}),
    ],
)
def test_adult_raw(require_data, cached, subset, n, n_pos, n_missing):
    require_data(*ADULT)
    X, y, names = cached(load_adult, subset, return_feature_names=True)
    _check_X(X, (n, 105))
    _check_binary(y, n, n_pos)
    assert names[:6] == ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                         "hours-per-week"]  # fmt: skip
    assert X[:, 0].min() == 17 and X[:, 0].max() == 90
    for col, vocab in ADULT_CATEGORIES.items():
        idx = [names.index(f"{col}={level}") for level in vocab]
        block = X[:, idx]
        assert set(np.unique(block).tolist()) <= {0.0, 1.0}
        row_sums = block.sum(axis=1)
        assert row_sums.max() == 1.0
        assert int((row_sums == 0).sum()) == n_missing.get(col, 0)


def test_adult_train_and_test_share_columns(require_data, cached):
    require_data(*ADULT)
    names_train = cached(load_adult, "train", return_feature_names=True)[2]
    names_test = cached(load_adult, "test", return_feature_names=True)[2]
    assert names_train == names_test
    # "Holand-Netherlands" occurs in train only; the public schema keeps its column in test.
    j = names_test.index("native-country=Holand-Netherlands")
    assert cached(load_adult, "test", return_feature_names=True)[0][:, j].sum() == 0


def test_adult_dpscd_preprocessing(require_data, cached):
    require_data(*ADULT)
    with pytest.warns(PrivacyLeakWarning, match="scaler_stats"):
        X, y, names = load_adult("train", data_home=require_data(*ADULT),
                                 preprocess="dpscd", return_feature_names=True)  # fmt: skip
    _check_X(X, (32561, 88))
    _check_binary(y, 32561, 7841)
    assert not any(n.startswith(("fnlwgt", "education=")) or n == "fnlwgt" for n in names)
    assert names[:5] == ["age", "education-num", "capital-gain", "capital-loss",
                         "hours-per-week"]  # fmt: skip
    np.testing.assert_allclose(X[:, :5].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(X[:, :5].std(axis=0), 1.0, rtol=1e-12)
    raw, _, raw_names = cached(load_adult, "train", return_feature_names=True)
    for j, name in enumerate(names[5:], start=5):
        np.testing.assert_array_equal(X[:, j], raw[:, raw_names.index(name)])


def test_adult_public_scaler_stats(require_data, cached):
    home = require_data(*ADULT)
    with pytest.warns(PrivacyLeakWarning):
        stats_train = adult_scaler_stats("train", data_home=home)
    assert set(stats_train) == {"age", "education-num", "capital-gain", "capital-loss",
                                "hours-per-week"}  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        X, _, names = load_adult("test", data_home=home, preprocess="dpscd",
                                 scaler_stats=stats_train, return_feature_names=True)  # fmt: skip
    raw, _, raw_names = cached(load_adult, "test", return_feature_names=True)
    for col, (mean, std) in stats_train.items():
        expected = (raw[:, raw_names.index(col)] - mean) / std
        np.testing.assert_allclose(X[:, names.index(col)], expected, rtol=1e-13, atol=1e-13)
    bad = dict(stats_train, age=(38.0, 0.0))
    with pytest.raises(ValueError, match="std"):
        load_adult("test", data_home=home, preprocess="dpscd", scaler_stats=bad)
    with pytest.raises(ValueError, match="unknown"):
        load_adult("test", data_home=home, preprocess="dpscd",
                   scaler_stats=dict(stats_train, fnlwgt=(0.0, 1.0)))  # fmt: skip


def test_adult_parsing_on_small_files(tmp_path):
    (tmp_path / "adult").mkdir()
    row = "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, "
    (tmp_path / "adult" / "adult.test").write_text(
        "|1x3 Cross validator\n"
        + row + "White, Male, 2174, 0, 40, United-States, >50K.\n"
        + "50, ?, 83311, Bachelors, 13, Divorced, ?, Husband, White, Female, 0, 0, 13, ?, "
        "<=50K.\n\n"
    )  # fmt: skip
    X, y, names = load_adult("test", data_home=tmp_path, verify=False, return_feature_names=True)
    np.testing.assert_array_equal(y, [1, -1])
    assert X.shape == (2, 105)
    wc = [names.index(f"workclass={v}") for v in ADULT_CATEGORIES["workclass"]]
    np.testing.assert_array_equal(X[:, wc].sum(axis=1), [1, 0])
    assert X[0, names.index("workclass=State-gov")] == 1
    assert X[1, names.index("sex=Female")] == 1
    (tmp_path / "adult" / "adult.data").write_text(
        row + "Martian, Male, 0, 0, 40, United-States, <=50K\n"
    )
    with pytest.raises(ValueError, match="Martian"):
        load_adult("train", data_home=tmp_path, verify=False)


def _adult_line(label: str) -> str:
    return (
        "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, "
        f"White, Male, 2174, 0, 40, United-States, {label}\n"
    )


def test_load_adult_frame_on_small_files(tmp_path):
    (tmp_path / "adult").mkdir()
    (tmp_path / "adult" / "adult.test").write_text(
        "|1x3 Cross validator\n"
        + _adult_line(">50K.")
        + "50, ?, 83311, Bachelors, 13, Divorced, ?, Husband, White, Female, 0, 0, 13, ?, "
        "<=50K.\n\n"
    )
    frame = load_adult_frame("test", data_home=tmp_path, verify=False)
    assert list(frame.columns) == list(pdata.ADULT_COLUMNS)
    assert frame.shape == (2, 15)
    assert frame["income"].tolist() == [1, 0] and frame["income"].dtype == np.int64
    assert frame["age"].tolist() == [39, 50] and frame["age"].dtype == np.int64
    assert frame.loc[0, "workclass"] == "State-gov"  # stripped of the leading space
    assert frame.loc[0, "native-country"] == "United-States"
    assert frame[["workclass", "occupation", "native-country"]].iloc[1].isna().all()
    assert not frame.loc[0].isna().any()
    (tmp_path / "adult" / "adult.data").write_text(_adult_line("maybe"))
    with pytest.raises(ValueError, match="maybe"):
        load_adult_frame("train", data_home=tmp_path, verify=False)
    (tmp_path / "adult" / "adult.data").write_text(_adult_line("<=50K").replace("39,", "old,"))
    with pytest.raises(ValueError, match="'old'"):
        load_adult_frame("train", data_home=tmp_path, verify=False)
    with pytest.raises(ValueError, match="subset"):
        load_adult_frame("validation", data_home=tmp_path, verify=False)
    with pytest.raises(FileNotFoundError, match="adult.data"):
        load_adult_frame("train", data_home=tmp_path / "nothing")


# ------------------------------------------------------------------ embedded (package data)
# These run without any data folder: the copies shipped in privlearn/data/embedded.

EMBEDDED_README = pdata.EMBEDDED_DIR / "README.md"


@pytest.fixture
def no_data_home(monkeypatch, tmp_path):
    """An empty default data folder: the loaders fall back to the embedded copies."""
    empty = tmp_path / "empty_data"
    empty.mkdir()
    monkeypatch.setenv("PRIVLEARN_DATA", str(empty))
    return empty


def test_embedded_files_are_listed_with_their_sha256():
    text = EMBEDDED_README.read_text(encoding="utf-8")
    files = sorted(
        p.relative_to(pdata.EMBEDDED_DIR).as_posix()
        for p in pdata.EMBEDDED_DIR.rglob("*")
        if p.is_file() and p.name not in ("README.md", "LICENSE")
    )
    assert len(files) == 11
    total = 0
    for rel in files:
        path = pdata.EMBEDDED_DIR / rel
        total += path.stat().st_size
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert re.search(rf"`{re.escape(rel)}`.*{digest}", text), rel
    assert total < 5_000_000  # "a few MB at most"
    assert set(pdata.EMBEDDED_FILES.values()) <= set(files)
    for licence in ("MIT", "CC BY 4.0", "CC BY-SA 3.0"):
        assert licence in text
    assert "Copyright (c) 2019 Miran Kim" in (pdata.EMBEDDED_DIR / "helr" / "LICENSE").read_text()


def test_embedded_fallback_without_data_home(no_data_home):
    for name, (n, d, n_pos) in HELR_EXPECTED.items():
        X, y = load_helr(name)
        _check_X(X, (n, d))
        _check_binary(y, n, n_pos)
    X, y = load_phishing()
    _check_X(X, (11055, 68))
    X, y = load_mnist("test")
    _check_X(X, (10_000, 784))
    assert np.bincount(y, minlength=10).tolist() == MNIST_TEST_COUNTS
    path, source = pdata.data_source("adult/adult.data")
    assert source == "embedded" and path.parent.parent == pdata.EMBEDDED_DIR
    # an explicit data folder is used alone; MNIST train and the full KDD file are not embedded
    assert pdata.data_source("adult/adult.data", no_data_home) == (None, "missing")
    with pytest.raises(FileNotFoundError, match="edin.txt"):
        load_helr("edin", data_home=no_data_home)
    with pytest.raises(FileNotFoundError, match="train-images"):
        load_mnist("train")
    with pytest.raises(FileNotFoundError, match="kddcup.data_10_percent.gz"):
        load_kddcup99()


def test_embedded_adult_frame(no_data_home):
    expected = {
        "train": (32561, 7841, {"workclass": 1836, "occupation": 1843, "native-country": 583}),
        "test": (16281, 3846, {"workclass": 963, "occupation": 966, "native-country": 274}),
    }
    for subset, (n, n_pos, n_missing) in expected.items():
        frame = load_adult_frame(subset)
        assert frame.shape == (n, 15)
        assert int(frame["income"].sum()) == n_pos
        assert set(frame["income"].unique().tolist()) == {0, 1}
        missing = {c: int(v) for c, v in frame.isna().sum().items() if v}
        assert missing == n_missing
        for col, vocab in ADULT_CATEGORIES.items():
            assert set(frame[col].dropna().unique()) <= set(vocab), col
        for col in pdata.ADULT_NUMERIC_COLUMNS:
            assert frame[col].dtype == np.int64
        # the same rows as the encoded loader
        X, y = load_adult(subset)
        np.testing.assert_array_equal(np.where(y > 0, 1, 0), frame["income"].to_numpy())
        np.testing.assert_array_equal(X[:, 0], frame["age"].to_numpy())


def test_embedded_kddcup99_subsample(no_data_home):
    X, y, names = load_kddcup99_embedded(return_feature_names=True)
    _check_X(X, (pdata.KDDCUP99_EMBEDDED_ROWS, 118))
    assert len(names) == 118 and names[0] == "duration"
    for col, size in (("protocol_type", 3), ("service", 66), ("flag", 11)):
        idx = [j for j, nm in enumerate(names) if nm.startswith(col + "=")]
        assert len(idx) == size
        np.testing.assert_array_equal(X[:, idx].sum(axis=1), 1.0)
    # about the normal share of the 10% file (97,278 / 494,021 = 19.7%)
    assert 0.18 < float(np.mean(y == -1)) < 0.21
    Xs, ys = load_kddcup99_embedded(n_samples=100, seed=3)
    rows = np.sort(np.random.default_rng(3).choice(len(X), size=100, replace=False))
    np.testing.assert_array_equal(Xs, X[rows])
    np.testing.assert_array_equal(ys, y[rows])
    with pytest.raises(ValueError, match="n_samples"):
        load_kddcup99_embedded(n_samples=50_001)


@pytest.mark.needs_data
def test_embedded_copies_equal_the_real_files(require_data):
    import lzma

    home = require_data(*pdata.EMBEDDED_FILES)
    for relative, copy in pdata.EMBEDDED_FILES.items():
        original = (home / relative).read_bytes()
        stored = (pdata.EMBEDDED_DIR / copy).read_bytes()
        if copy.endswith(".xz"):
            stored = lzma.decompress(stored)
        elif copy.endswith(".gz") and not relative.endswith(".gz"):
            stored = gzip.decompress(stored)
        assert stored == original, relative


@pytest.mark.needs_data
def test_embedded_kddcup99_is_the_song13_subsample(require_data):
    from privlearn.experiments.runs import derive_seed

    home = require_data(KDD)
    X, y, names = load_kddcup99_embedded(return_feature_names=True)
    seed = derive_seed("song13", "kddcup99", "subsample")
    Xf, yf, names_f = load_kddcup99(
        data_home=home, n_samples=pdata.KDDCUP99_EMBEDDED_ROWS, seed=seed,
        return_feature_names=True,
    )  # fmt: skip
    assert names == names_f
    np.testing.assert_array_equal(X, Xf)
    np.testing.assert_array_equal(y, yf)


# -------------------------------------------------------------------------------- kddcup99


def test_kddcup99_full(require_data, cached):
    require_data(KDD)
    X, y, names = cached(load_kddcup99, return_feature_names=True)
    _check_X(X, (494_021, 118))
    _check_binary(y, 494_021, 494_021 - 97_278)  # README: 97,278 "normal." rows
    assert len(names) == 118 and len(set(names)) == 118
    assert "protocol_type" not in names and "src_bytes" in names
    for col, size in (("protocol_type", 3), ("service", 66), ("flag", 11)):
        idx = [j for j, nm in enumerate(names) if nm.startswith(col + "=")]
        assert len(idx) == size
        np.testing.assert_array_equal(X[:, idx].sum(axis=1), 1.0)
    assert X[0, names.index("protocol_type=tcp")] == 1
    assert X[0, names.index("src_bytes")] == 181 and X[0, names.index("dst_bytes")] == 5450


def test_kddcup99_subsample(require_data, cached):
    home = require_data(KDD)
    X, y, _ = cached(load_kddcup99, return_feature_names=True)
    Xs, ys = load_kddcup99(data_home=home, n_samples=2000, seed=7)
    rows = np.sort(np.random.default_rng(7).choice(494_021, size=2000, replace=False))
    np.testing.assert_array_equal(Xs, X[rows])
    np.testing.assert_array_equal(ys, y[rows])
    assert Xs.flags.c_contiguous and Xs.dtype == np.float64


# ----------------------------------------------------------------------------------- MNIST


def test_mnist_train_and_test(require_data, cached):
    require_data(*MNIST_TRAIN, *MNIST_TEST)
    for subset, counts in (("train", MNIST_TRAIN_COUNTS), ("test", MNIST_TEST_COUNTS)):
        X, y = cached(load_mnist, subset)
        _check_X(X, (sum(counts), 784))
        assert y.dtype == np.int64
        assert np.bincount(y, minlength=10).tolist() == counts
        assert X.min() == 0 and X.max() == 255
        np.testing.assert_array_equal(X, np.floor(X))


def test_mnist_all_is_train_then_test(require_data, cached):
    home = require_data(*MNIST_TRAIN, *MNIST_TEST)
    X, y, names = load_mnist("all", data_home=home, return_feature_names=True)
    assert X.shape == (70_000, 784) and y.shape == (70_000,)
    assert names[0] == "pixel_0_0" and names[29] == "pixel_1_1"
    Xtr, ytr = cached(load_mnist, "train")
    Xte, yte = cached(load_mnist, "test")
    np.testing.assert_array_equal(y, np.concatenate([ytr, yte]))
    np.testing.assert_array_equal(X[59_990:60_010], np.vstack([Xtr[-10:], Xte[:10]]))


def test_mnist_file_checksum_matches_readme(require_data):
    home = require_data(MNIST_TRAIN[0])
    with gzip.open(home / MNIST_TRAIN[0], "rb") as fh:
        assert hashlib.md5(fh.read()).hexdigest() == MNIST_TRAIN_IMAGES_MD5


@pytest.mark.parametrize(("subset", "n_three", "n_eight"), [("train", 6131, 5851),
                                                            ("test", 1010, 974)])  # fmt: skip
def test_mnist38(require_data, cached, subset, n_three, n_eight):
    require_data(*MNIST_TRAIN, *MNIST_TEST)
    X, y, names = cached(load_mnist38, subset, return_feature_names=True)
    _check_X(X, (n_three + n_eight, 196))
    _check_binary(y, n_three + n_eight, n_three)
    assert X.shape[0] == {"train": 11_982, "test": 1_984}[subset]  # README
    assert X.min() == 0 and X.max() <= 255
    np.testing.assert_array_equal(X, np.floor(X))
    assert len(names) == 196
    # Independent recomputation from the full-resolution images, in original order.
    full_X, full_y = cached(load_mnist, subset)
    keep = (full_y == 3) | (full_y == 8)
    pooled = full_X[keep].reshape(-1, 14, 2, 14, 2).sum(axis=(2, 4)) / 4
    np.testing.assert_array_equal(X, np.floor(pooled).reshape(-1, 196))
    np.testing.assert_array_equal(y, np.where(full_y[keep] == 3, 1, -1))


def _idx_bytes(array: np.ndarray, type_code: int = 0x08) -> bytes:
    header = struct.pack(">BBBB", 0, 0, type_code, array.ndim)
    header += struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def _write_mnist(home: Path, subset: str, images: np.ndarray, labels: np.ndarray) -> None:
    img, lab = MNIST_TRAIN if subset == "train" else MNIST_TEST
    (home / "mnist").mkdir(exist_ok=True)
    (home / img).write_bytes(gzip.compress(_idx_bytes(images)))
    (home / lab).write_bytes(gzip.compress(_idx_bytes(labels)))


def test_mnist38_pooling_on_handmade_idx(tmp_path):
    images = np.zeros((3, 28, 28), dtype=np.uint8)
    images[0, 0:2, 0:2] = [[1, 2], [3, 4]]  # sum 10 -> floor(2.5) = 2
    images[0, 26:28, 26:28] = [[255, 255], [255, 254]]  # sum 1019 -> 254
    images[0, 2:4, 0:2] = 3  # sum 12 -> 3 exactly
    images[1] = 200  # a digit 5: dropped
    images[2, 0:2, 2:4] = [[0, 0], [0, 3]]  # sum 3 -> 0
    images[2, 0:2, 0:2] = 255  # -> 255
    labels = np.array([3, 5, 8], dtype=np.uint8)
    _write_mnist(tmp_path, "train", images, labels)
    X, y = load_mnist38("train", data_home=tmp_path, verify=False)
    _check_X(X, (2, 196))
    np.testing.assert_array_equal(y, [1, -1])
    grid = X.reshape(2, 14, 14)
    assert grid[0, 0, 0] == 2 and grid[0, 13, 13] == 254 and grid[0, 1, 0] == 3
    assert grid[1, 0, 1] == 0 and grid[1, 0, 0] == 255
    assert X[0].sum() == 2 + 254 + 3 and X[1].sum() == 255
    Xf, yf = load_mnist("train", data_home=tmp_path, verify=False)
    np.testing.assert_array_equal(Xf, images.reshape(3, 784).astype(np.float64))
    np.testing.assert_array_equal(yf, [3, 5, 8])


def test_read_idx_types_and_plain_files(tmp_path):
    arr = np.arange(24, dtype=np.int32).reshape(2, 3, 4) - 5
    path = tmp_path / "a.idx"
    path.write_bytes(_idx_bytes(arr, 0x0C))  # uncompressed, big-endian int32
    out = read_idx(path)
    np.testing.assert_array_equal(out, arr)
    assert out.dtype == np.int32 and out.dtype.isnative
    floats = np.linspace(-1, 1, 5)
    path.write_bytes(gzip.compress(_idx_bytes(floats, 0x0E)))
    np.testing.assert_array_equal(read_idx(path), floats)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda b: b"\x01" + b[1:], "magic"),
        (lambda b: b[:2] + b"\x07" + b[3:], "type code"),
        (lambda b: b[:3] + b"\x00" + b[4:], "0 dimensions"),
        (lambda b: b[:-1], "data bytes"),
        (lambda b: b + b"\x00", "data bytes"),
        (lambda b: b[:6], "truncated"),
        (lambda b: b[:4] + struct.pack(">I", 4) + b[8:], "data bytes"),
    ],
)
def test_read_idx_corruption(tmp_path, mutate, match):
    good = _idx_bytes(np.zeros((3, 28, 28), dtype=np.uint8))
    path = tmp_path / "x.idx.gz"
    path.write_bytes(gzip.compress(mutate(good)))
    with pytest.raises(ValueError, match=match):
        read_idx(path)


def test_corrupt_mnist_files_raise_valueerror(tmp_path):
    images = np.zeros((3, 28, 28), dtype=np.uint8)
    _write_mnist(tmp_path, "test", images, np.array([3, 8], dtype=np.uint8))
    with pytest.raises(ValueError, match="labels"):
        load_mnist("test", data_home=tmp_path, verify=False)
    _write_mnist(tmp_path, "test", images[:, :27], np.array([3, 8, 1], dtype=np.uint8))
    with pytest.raises(ValueError, match="28, 28"):
        load_mnist38("test", data_home=tmp_path, verify=False)
    _write_mnist(tmp_path, "test", images, np.array([3, 8, 10], dtype=np.uint8))
    with pytest.raises(ValueError, match="digit"):
        load_mnist("test", data_home=tmp_path, verify=False)
    (tmp_path / MNIST_TEST[0]).write_bytes(b"\x1f\x8b\x08\x00garbage-not-deflate")
    with pytest.raises(ValueError):
        load_mnist("test", data_home=tmp_path, verify=False)


# ------------------------------------------------------------------------------------- MSD


def _msd_rows(rng: np.random.Generator, n: int = 6) -> tuple[np.ndarray, np.ndarray]:
    X = np.round(rng.normal(size=(n, 90)) * 30, 5)
    X[:, 7] = 0.0  # zeros are omitted from svmlight lines
    y = rng.integers(1922, 2012, size=n).astype(np.float64)
    return X, y


def test_msd_csv_and_svmlight_agree(tmp_path):
    X, y = _msd_rows(np.random.default_rng(0))
    csv_text = "".join(
        f"{int(t)}," + ",".join(repr(float(v)) for v in row) + "\n" for t, row in zip(y, X)
    )
    svm_text = "".join(
        f"{int(t)} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0) + "\n"
        for t, row in zip(y, X)
    )
    files = {
        "msd.txt": csv_text.encode(),
        "msd.svm": svm_text.encode(),
        "msd.txt.gz": gzip.compress(csv_text.encode()),
        "msd.svm.bz2": bz2.compress(svm_text.encode()),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    with zipfile.ZipFile(tmp_path / "msd.zip", "w") as zf:
        zf.writestr("YearPredictionMSD.txt", csv_text)
    for name in [*files, "msd.zip"]:
        Xl, yl, names = load_msd(tmp_path / name, return_feature_names=True)
        _check_X(Xl, (6, 90))
        assert yl.dtype == np.float64
        np.testing.assert_array_equal(Xl, X, err_msg=name)
        np.testing.assert_array_equal(yl, y, err_msg=name)
        assert names[0] == "timbre_avg_1" and names[-1] == "timbre_cov_78"


def test_msd_rejects_bad_files(tmp_path):
    bad_csv = tmp_path / "bad.txt"
    bad_csv.write_text("2001,1.0,2.0\n1999,3.0,4.0\n")
    with pytest.raises(ValueError, match="91"):
        load_msd(bad_csv)
    bad_svm = tmp_path / "bad.svm"
    bad_svm.write_text("2001 1:1.0 91:2.0\n")
    with pytest.raises(ValueError):
        load_msd(bad_svm)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(ValueError, match="empty"):
        load_msd(empty)
    with pytest.raises(FileNotFoundError, match="YearPredictionMSD.txt"):
        load_msd(tmp_path / "YearPredictionMSD.txt")


# ---------------------------------------------------------------------------- preprocessing


@pytest.fixture
def mats():
    rng = np.random.default_rng(123)
    dense = rng.normal(size=(300, 40)) * rng.exponential(3.0, size=40)
    dense[rng.random(dense.shape) < 0.7] = 0.0
    dense[5] = 0.0  # an all-zero row
    dense[:, 3] = 0.0  # an all-zero column
    dense[7] = dense[8] / (np.linalg.norm(dense[8]) * 2)  # a row well inside the unit ball
    return dense, sp.csr_matrix(dense)


def test_normalize_rows(mats):
    dense, csr = mats
    before = dense.copy()
    out = normalize_rows(dense)
    np.testing.assert_array_equal(dense, before)  # input untouched
    _check_X(out, dense.shape)
    norms = np.linalg.norm(out, axis=1)
    assert norms.max() <= 1.0
    np.testing.assert_array_equal(out[5], 0.0)
    nonzero = np.linalg.norm(dense, axis=1) > 0
    np.testing.assert_allclose(norms[nonzero], 1.0, rtol=1e-14)
    np.testing.assert_allclose(out * np.linalg.norm(dense, axis=1)[:, None], dense, atol=1e-12)
    out_csr = normalize_rows(csr)
    assert isinstance(out_csr, sp.csr_matrix)
    np.testing.assert_allclose(out_csr.toarray(), out, rtol=1e-14, atol=1e-15)
    assert row_norms(out_csr).max() <= 1.0


def test_normalize_rows_never_exceeds_one():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20000, 17)) * 10.0 ** rng.uniform(-5, 5, size=(20000, 1))
    assert np.linalg.norm(normalize_rows(X), axis=1).max() <= 1.0
    assert np.linalg.norm(project_to_ball(X, 0.3), axis=1).max() <= 0.3


@pytest.mark.parametrize("radius", [1.0, 2.5])
def test_project_to_ball(mats, radius):
    dense, csr = mats
    out = project_to_ball(dense, radius)
    _check_X(out, dense.shape)
    before = np.linalg.norm(dense, axis=1)
    after = np.linalg.norm(out, axis=1)
    inside = before <= radius
    assert inside.sum() >= 2 and (~inside).sum() >= 100
    np.testing.assert_array_equal(out[inside], dense[inside])
    assert after.max() <= radius
    np.testing.assert_allclose(after[~inside], radius, rtol=1e-14)
    # the direction is kept
    np.testing.assert_allclose(out[~inside] * (before[~inside] / radius)[:, None],
                               dense[~inside], rtol=1e-12, atol=1e-12)  # fmt: skip
    out_csr = project_to_ball(csr, radius)
    assert isinstance(out_csr, sp.csr_matrix)
    np.testing.assert_allclose(out_csr.toarray(), out, rtol=1e-14, atol=1e-15)
    with pytest.raises(ValueError):
        project_to_ball(dense, 0.0)
    with pytest.raises(TypeError):
        project_to_ball(dense, "1")


def test_maxabs_scale(mats):
    dense, csr = mats
    with pytest.warns(PrivacyLeakWarning, match="max_abs"):
        out = maxabs_scale(dense)
    _check_X(out, dense.shape)
    assert np.abs(out).max() == 1.0
    np.testing.assert_allclose(np.abs(out).max(axis=0)[np.abs(dense).max(axis=0) > 0], 1.0)
    np.testing.assert_array_equal(out[:, 3], 0.0)
    with pytest.warns(PrivacyLeakWarning):
        out_csr = maxabs_scale(csr)
    assert isinstance(out_csr, sp.csr_matrix)
    np.testing.assert_allclose(out_csr.toarray(), out, rtol=1e-15)
    bound = np.full(dense.shape[1], 5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pub = maxabs_scale(dense, bound)
        pub_csr = maxabs_scale(csr, 5.0)
        unclipped = maxabs_scale(dense, 5.0, clip=False)
    assert np.abs(pub).max() <= 1.0
    np.testing.assert_array_equal(pub, np.clip(dense / 5.0, -1, 1))
    np.testing.assert_array_equal(pub_csr.toarray(), pub)
    np.testing.assert_array_equal(unclipped, dense / 5.0)
    assert np.abs(unclipped).max() > 1.0
    with pytest.raises(ValueError, match="positive"):
        maxabs_scale(dense, np.zeros(dense.shape[1]))
    with pytest.raises(ValueError, match="shape"):
        maxabs_scale(dense, np.ones(3))


def test_minmax_scale(mats):
    dense, csr = mats
    with pytest.warns(PrivacyLeakWarning, match="lower"):
        out = minmax_scale(dense)
    _check_X(out, dense.shape)
    assert out.min() == 0.0 and out.max() == 1.0
    np.testing.assert_array_equal(out[:, 3], 0.0)  # a constant column maps to 0
    lo, hi = -50.0, np.full(dense.shape[1], 50.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pub = minmax_scale(dense, lo, hi)
    np.testing.assert_allclose(pub, np.clip((dense + 50.0) / 100.0, 0, 1), rtol=1e-15)
    assert pub.min() >= 0.0 and pub.max() <= 1.0
    with pytest.raises(ValueError, match="both"):
        minmax_scale(dense, lower=0.0)
    with pytest.raises(ValueError, match="exceed"):
        minmax_scale(dense, 1.0, 1.0)
    with pytest.raises(TypeError, match="sparse"):
        minmax_scale(csr, 0.0, 1.0)


def test_random_projection(mats):
    dense, csr = mats
    a = random_projection(dense, 7, seed=11)
    _check_X(a, (dense.shape[0], 7))
    np.testing.assert_array_equal(a, random_projection(dense, 7, seed=11))
    assert not np.allclose(a, random_projection(dense, 7, seed=12))
    R = random_projection_matrix(dense.shape[1], 7, seed=11)
    assert R.shape == (40, 7)
    np.testing.assert_allclose(a, dense @ R, rtol=1e-12, atol=1e-12)
    b = random_projection(csr, 7, seed=11)
    assert isinstance(b, np.ndarray) and b.flags.c_contiguous
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    # The matrix depends only on (n_features, n_components, seed): same for another data set.
    np.testing.assert_array_equal(random_projection(dense[:10], 7, seed=11), a[:10])
    with pytest.raises(ValueError):
        random_projection(dense, 0, seed=1)
    with pytest.raises(TypeError):
        random_projection(dense, 2.0, seed=1)


def test_random_projection_matrix_distribution():
    k = 50
    R = random_projection_matrix(4000, k, seed=2024)  # 200,000 N(0, 1/k) entries
    # Fixed seed: a deterministic check; a correct generator fails it with probability ~1e-6.
    assert abs(R.mean()) < 5 * np.sqrt(1 / k / R.size)
    assert abs(R.var() * k - 1) < 5 * np.sqrt(2 / R.size)
    assert stats.kstest(R.ravel() * np.sqrt(k), "norm").pvalue > 1e-6


@pytest.mark.parametrize(
    ("bad", "exc"),
    [
        (np.array([1.0, 2.0]), ValueError),
        (np.array([[1.0, np.nan]]), ValueError),
        (np.array([[1.0, np.inf]]), ValueError),
        (np.array([["a", "b"]]), TypeError),
    ],
)
def test_preprocess_input_validation(bad, exc):
    for fn in (normalize_rows, project_to_ball, lambda X: random_projection(X, 2, seed=0)):
        with pytest.raises(exc):
            fn(bad)


# -------------------------------------------------------------------------------- synthetic


def test_make_sphere_separable():
    X, y, w = make_sphere_separable(seed=0, return_hyperplane=True)
    _check_X(X, (10_000, 5))
    assert y.dtype == np.int64 and set(np.unique(y).tolist()) == {-1, 1}
    np.testing.assert_allclose(np.linalg.norm(w), 1.0, rtol=1e-15)
    margins = X @ w
    assert np.abs(margins).min() >= 0.001
    np.testing.assert_array_equal(y, np.sign(margins).astype(np.int64))
    assert np.linalg.norm(X, axis=1).max() <= 1.0
    # Label balance: binomial(10000, 1/2); the bound fails with probability < 1e-6.
    assert abs((y == 1).mean() - 0.5) < 5 * 0.005
    # Uniform in the ball: P(||x|| <= 1/2) = 2**-5 (rejection removes a negligible slab).
    frac = (np.linalg.norm(X, axis=1) <= 0.5).mean()
    assert abs(frac - 1 / 32) < 5 * np.sqrt((1 / 32) * (31 / 32) / 10_000)
    X2, y2 = make_sphere_separable(seed=0)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)
    assert not np.array_equal(make_sphere_separable(seed=1)[0], X)


def test_make_sphere_separable_is_linearly_separable_lp():
    # Independent of w: an LP finds v with y_i <x_i, v> >= margin for all i, |v_j| <= 1.
    from scipy.optimize import linprog

    X, y = make_sphere_separable(n=2000, d=5, margin=0.01, seed=3)
    res = linprog(np.zeros(5), A_ub=-(y[:, None] * X), b_ub=-0.01 * np.ones(2000),
                  bounds=[(-1, 1)] * 5, method="highs")  # fmt: skip
    assert res.status == 0


def test_make_sphere_separable_arguments():
    with pytest.raises(ValueError):
        make_sphere_separable(margin=1.0)
    with pytest.raises(ValueError):
        make_sphere_separable(n=0)
    with pytest.raises(TypeError):
        make_sphere_separable(d=2.0)
    with pytest.raises(TypeError):
        make_sphere_separable(seed="s")
    X, y = make_sphere_separable(n=50, d=3, margin=0.5, seed=9)
    assert X.shape == (50, 3)
    assert np.linalg.norm(X, axis=1).min() >= 0.5  # |<w, x>| >= 0.5 forces ||x|| >= 0.5


def test_make_msd_like():
    from sklearn.linear_model import LinearRegression

    X, y = make_msd_like(20_000, seed=4)
    _check_X(X, (20_000, 90))
    assert y.dtype == np.float64 and y.shape == (20_000,)
    assert y.min() >= 1922 and y.max() <= 2011
    np.testing.assert_array_equal(y, np.round(y))
    assert 1994 < y.mean() < 2002 and 7 < y.std() < 12
    assert stats.skew(y) < -0.3  # left-skewed like the real years
    r2 = LinearRegression().fit(X, y).score(X, y)
    assert 0.15 < r2 < 0.45  # a real but modest linear signal (model value ~0.28)
    np.testing.assert_array_equal(make_msd_like(100, d=7, seed=4)[0],
                                  make_msd_like(100, d=7, seed=4)[0])  # fmt: skip
    assert make_msd_like(100, d=7, seed=4)[0].shape == (100, 7)


def test_make_gaussian_mixture():
    X, labels, centers = make_gaussian_mixture(seed=8, return_centers=True)
    _check_X(X, (50_000, 100))
    assert labels.dtype == np.int64 and centers.shape == (64, 100)
    counts = np.bincount(labels, minlength=64)
    assert counts.size == 64
    p = 1 / 64
    assert np.abs(counts - 50_000 * p).max() < 6 * np.sqrt(50_000 * p * (1 - p))
    np.testing.assert_allclose(np.linalg.norm(centers, axis=1), 10.0, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(X - centers[labels], axis=1), 1.0, rtol=1e-12)
    # Well separated: nearest center recovers every label.
    d2 = (X**2).sum(1)[:, None] - 2 * X @ centers.T + (centers**2).sum(1)[None, :]
    np.testing.assert_array_equal(d2.argmin(axis=1), labels)
    X2, l2 = make_gaussian_mixture(n=500, k=4, d=3, seed=8, spread=0.5)
    np.testing.assert_array_equal(X2, make_gaussian_mixture(n=500, k=4, d=3, seed=8,
                                                            spread=0.5)[0])  # fmt: skip
    assert X2.shape == (500, 3) and set(np.unique(l2).tolist()) <= {0, 1, 2, 3}


def test_make_large_categorical():
    from sklearn.metrics import roc_auc_score

    df, y, effects = make_large_categorical(n=3000, seed=21, return_effects=True)
    assert df.shape == (3000, 40)
    assert list(df.columns) == [f"x{i}" for i in range(1, 11)] + [f"n{i}" for i in range(1, 31)]
    assert y.dtype == np.int64 and set(np.unique(y).tolist()) == {-1, 1}
    assert 0.15 < (y == 1).mean() < 0.85
    assert all(isinstance(v, str) for v in df["x1"].head())
    assert re.fullmatch(r"n7\.c\d{3}", df["n7"].iloc[0])
    assert df[[f"x{i}" for i in range(1, 11)]].nunique().max() <= 10
    assert 300 < df["n1"].nunique() <= 500
    for name, eff in effects.items():
        if name.startswith("x"):
            assert len(eff) == 10 and int((eff == 0).sum()) == 5
        else:
            assert len(eff) == 500 and (eff == 0).all()
    score = sum(effects[c].loc[df[c]].to_numpy() for c in df.columns)
    assert roc_auc_score(y, score) > 0.8  # y follows the level effects (+ N(0,1) noise)
    df2, y2 = make_large_categorical(n=3000, seed=21)
    assert df2.equals(df)
    np.testing.assert_array_equal(y2, y)


def test_make_large_categorical_design_seed_and_uniform_levels():
    a, _, ea = make_large_categorical(n=500, seed=1, design_seed=99, return_effects=True)
    b, _, eb = make_large_categorical(n=500, seed=2, design_seed=99, return_effects=True)
    assert all(ea[c].equals(eb[c]) for c in ea)  # same design
    assert not a.equals(b)  # different rows
    df, _ = make_large_categorical(n=20_000, seed=3, n_signal=1, n_noise=0, signal_levels=4,
                                   level_probs="uniform")  # fmt: skip
    freq = df["x1"].value_counts(normalize=True).to_numpy()
    assert np.abs(freq - 0.25).max() < 0.02
    with pytest.raises(ValueError):
        make_large_categorical(level_probs="zipf")
    with pytest.raises(ValueError):
        make_large_categorical(n_signal=0, n_noise=0)


# -------------------------------------------------------------------------------- inventory


@pytest.mark.needs_data
def test_inventory_on_real_data(require_data, data_home):
    require_data(KDD, "helr/edin.txt")
    rows = dataset_inventory(data_home)
    assert len(rows) == 14
    for row in rows:
        keys = {"dataset", "file", "path", "found", "source", "size", "sha256", "verified"}
        assert set(row) == keys
        assert row["source"] == ("data folder" if row["found"] else "missing")
        assert row["path"] == str(data_home / row["file"])
        if row["found"]:
            assert row["size"] == os.path.getsize(row["path"])
            assert re.fullmatch(r"[0-9a-f]{64}", row["sha256"])
            assert row["verified"] is True  # every real file is the pinned one
        else:
            assert row["size"] is None and row["sha256"] is None and row["verified"] is None
    by_file = {row["file"]: row for row in rows}
    assert by_file[KDD]["sha256"] == KDD_SHA256  # README checksum
    assert {r["dataset"] for r in rows} == {"helr", "mnist", "kddcup99", "phishing", "adult"}
    assert sum(r["dataset"] == "helr" for r in rows) == 5 and "helr/nhanes3.txt" in by_file
    fast = dataset_inventory(data_home, checksums=False)
    assert [r["found"] for r in fast] == [r["found"] for r in rows]
    assert all(r["sha256"] is None and r["verified"] is None for r in fast)


def test_inventory_empty_folder(tmp_path):
    (tmp_path / "helr").mkdir()
    (tmp_path / "helr" / "lbw.txt").write_bytes(b"1\t0\n")
    rows = dataset_inventory(tmp_path)
    found = [r for r in rows if r["found"]]
    assert [r["file"] for r in found] == ["helr/lbw.txt"]
    assert found[0]["size"] == 4
    assert found[0]["sha256"] == hashlib.sha256(b"1\t0\n").hexdigest()
    assert found[0]["verified"] is False  # not the published lbw.txt: the loaders refuse it
    with pytest.raises(TypeError):
        dataset_inventory(tmp_path, checksums="yes")


def test_inventory_lists_embedded_copies(no_data_home):
    (no_data_home / "helr").mkdir()
    (no_data_home / "helr" / "lbw.txt").write_bytes(b"1\t0\n")
    by_file = {r["file"]: r for r in dataset_inventory()}
    assert by_file["helr/lbw.txt"]["source"] == "data folder"  # the data folder comes first
    assert by_file["helr/lbw.txt"]["size"] == 4
    edin = by_file["helr/edin.txt"]
    assert edin["source"] == "embedded" and edin["found"]
    assert edin["path"] == str(pdata.EMBEDDED_DIR / "helr" / "edin.txt.gz")
    assert edin["sha256"] == hashlib.sha256(Path(edin["path"]).read_bytes()).hexdigest()
    assert edin["verified"] is True  # the embedded copies match their pins
    assert by_file[KDD]["source"] == "missing" and not by_file[KDD]["found"]
    assert by_file["helr/nhanes3.txt"]["source"] == "missing"
    assert {r["file"] for r in by_file.values() if r["source"] == "embedded"} == set(
        pdata.EMBEDDED_FILES
    ) - {"helr/lbw.txt"}


# ------------------------------------------------------------- the missing-data test policy


def test_missing_data_policy(monkeypatch):
    from conftest import missing_data_is_failure, no_data_run

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("PRIVLEARN_NO_DATA_RUN", raising=False)
    assert not missing_data_is_failure() and not no_data_run()  # a developer machine: skip
    monkeypatch.setenv("CI", "true")
    assert missing_data_is_failure()  # CI: a missing file fails
    monkeypatch.setenv("PRIVLEARN_NO_DATA_RUN", "1")
    assert no_data_run() and not missing_data_is_failure()  # the deliberate no-data run: skip


def test_reproductions_name_the_embedded_data(no_data_home):
    from privlearn.experiments import kmeans, quadgrad, song13

    X, y, note = song13.prepare_dataset("kddcup99", 400)
    assert X.shape == (400, 9) and set(np.unique(y).tolist()) == {-1.0, 1.0}
    assert "EMBEDDED 50,000-row subsample" in note
    # an explicit data folder is used alone: no stand-in
    with pytest.raises(FileNotFoundError):
        song13.prepare_dataset("kddcup99", 400, data_home=no_data_home)
    assert kmeans.data._mnist_test_only(None) and not kmeans.data._mnist_test_only(no_data_home)
    assert quadgrad.data._source("lbw", None) == "embedded"
    assert quadgrad.data._source("mnist38", None) == "missing"
