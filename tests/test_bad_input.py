"""Bad input gets a clear ValueError / TypeError naming the problem, never a crash, a hang or a
silently wrong answer.

Covers: ``calibrate_sigma``'s iteration parameters (a tiny ``rtol`` used to loop for ever), the
data loaders on damaged files (non-finite values, no data rows, truncated or garbage
compression), the encrypted trainer ``train_logreg`` and the clear quadratic-gradient trainer.
Cases that could hang run in a subprocess with a timeout, so a regression fails instead of
stalling the suite. Every damaged file is written under ``tmp_path``.
"""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from privlearn.accounting import calibrate_sigma
from privlearn.data import (
    KDDCUP99_COLUMNS,
    load_adult,
    load_helr,
    load_idash,
    load_kddcup99,
    load_mnist,
    load_msd,
    load_phishing,
)

_TIMEOUT = 60


def _run_python(code: str, timeout: float = _TIMEOUT) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; a hang becomes a test failure, not a stall."""
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not finish within {timeout} s (hang):\n{code}")


# ---- accounting: calibrate_sigma -----------------------------------------------------------


_RTOL_OUT_OF_RANGE = [1e-17, 1e-13, 0.0, -1e-4, 1.0, 2.0, float("nan"), float("inf")]
_RTOL_SMALLEST = [1e-12, 1e-9, 1e-4, 0.5]


def _outcomes(code: str) -> dict[str, str]:
    """Run ``code`` (one ``print(json.dumps([case, outcome]))`` per case) in one fresh
    interpreter with the timeout of :func:`_run_python`: the parametrized tests below share it,
    one interpreter start (about 1 CPU-s of imports) instead of one per case (issue 32 item 4).
    Each case catches its own exception, so one bad case fails only its own test; a hang or a
    crash fails them all."""
    out = _run_python(code)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(line) for line in out.stdout.splitlines())


@pytest.fixture(scope="module")
def rtol_out_of_range_outcomes() -> dict[str, str]:
    return _outcomes(
        f"""
        import json
        from privlearn.accounting import calibrate_sigma
        for rtol in {[str(r) for r in _RTOL_OUT_OF_RANGE]!r}:
            try:
                calibrate_sigma(1.0, 1e-5, q=0.01, steps=1000, rtol=float(rtol))
            except Exception as exc:
                outcome = f"{{type(exc).__name__}}: {{exc}}"
            else:
                outcome = "returned"
            print(json.dumps([rtol, outcome]), flush=True)
        """
    )


@pytest.mark.parametrize("rtol", _RTOL_OUT_OF_RANGE)
def test_calibrate_sigma_rtol_out_of_range_raises_without_hanging(rtol, rtol_out_of_range_outcomes):
    outcome = rtol_out_of_range_outcomes[str(rtol)]
    assert outcome.startswith("ValueError:"), outcome
    assert "rtol" in outcome


@pytest.mark.parametrize("rtol", ["1e-4", None, 1e-4j])
def test_calibrate_sigma_rtol_wrong_type(rtol):
    with pytest.raises(TypeError, match="rtol"):
        calibrate_sigma(1.0, 1e-5, q=0.01, steps=1000, rtol=rtol)


@pytest.fixture(scope="module")
def smallest_rtol_outcomes() -> dict[str, str]:
    return _outcomes(
        f"""
        import json
        from privlearn.accounting import calibrate_sigma, epsilon_for_sigma
        for rtol in {_RTOL_SMALLEST!r}:
            try:
                for eps, q, steps in [(1.0, 0.01, 1000), (1e3, 1.0, 1), (1e-3, 1e-6, 10**9)]:
                    s = calibrate_sigma(eps, 1e-5, q=q, steps=steps, rtol=rtol)
                    assert s > 0
                    assert epsilon_for_sigma(s, 1e-5, q=q, steps=steps) <= eps * (1 + 1e-9)
                    assert epsilon_for_sigma(s / (1 + rtol), 1e-5, q=q, steps=steps) > eps
            except Exception as exc:
                outcome = f"{{type(exc).__name__}}: {{exc}}"
            else:
                outcome = "ok"
            print(json.dumps([repr(rtol), outcome]), flush=True)
        """
    )


@pytest.mark.parametrize("rtol", _RTOL_SMALLEST)
def test_calibrate_sigma_smallest_rtol_terminates_and_is_tight(rtol, smallest_rtol_outcomes):
    assert smallest_rtol_outcomes[repr(rtol)] == "ok"


def test_calibrate_sigma_shrink_loop_is_bounded():
    """A gap function that never lets the bracket shrink ends in a ValueError."""
    from privlearn.accounting import calibrate as cal

    with pytest.raises(ValueError, match="epsilon is NaN"):
        # NaN inside the bracket: neither end can be trusted to move.
        cal._shrink_bracket(lambda s: float("nan"), 1.0, 1.0, 2.0, -0.5, 1e-6)
    with pytest.raises(ValueError, match="did not converge"):
        # A bracket of two adjacent floats cannot reach a width below one ulp.
        lo = 1.0
        hi = float(np.nextafter(np.nextafter(lo, 2.0), 2.0))
        cal._shrink_bracket(lambda s: 0.0 if s >= hi else 1.0, lo, 1.0, hi, -0.5, 1e-300)


def test_calibrate_sigma_property_holds():
    """Hypothesis over any floats for epsilon, delta, q, steps and rtol: a ValueError /
    TypeError, or a sigma > 0 that meets the target. Run in a subprocess so that a hang
    regression fails the test."""
    code = """
        import math
        from hypothesis import given, settings, HealthCheck, strategies as st
        from privlearn.accounting import calibrate_sigma, epsilon_for_sigma

        anyfloat = st.floats(allow_nan=True, allow_infinity=True)
        steps_st = st.one_of(st.integers(-10, 10**12), anyfloat)

        @settings(max_examples=50, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(eps=anyfloat, delta=anyfloat, q=anyfloat, steps=steps_st,
               rtol=st.one_of(anyfloat, st.just(1e-4), st.just(1e-12)))
        def prop(eps, delta, q, steps, rtol):
            try:
                sigma = calibrate_sigma(eps, delta, q=q, steps=steps, rtol=rtol)
            except (ValueError, TypeError) as exc:
                assert str(exc)
                return
            assert math.isfinite(sigma) and sigma > 0
            assert epsilon_for_sigma(sigma, delta, q=q, steps=steps) <= eps * (1 + 1e-9)

        @settings(max_examples=50, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(eps=st.floats(1e-3, 1e3), delta=st.floats(1e-12, 0.5),
               q=st.floats(1e-6, 1.0), steps=st.integers(1, 10**9),
               rtol=st.floats(1e-12, 0.9))
        def prop_valid(eps, delta, q, steps, rtol):
            try:
                sigma = calibrate_sigma(eps, delta, q=q, steps=steps, rtol=rtol)
            except ValueError as exc:
                assert "reaches epsilon" in str(exc), exc
                return
            assert math.isfinite(sigma) and sigma > 0
            assert epsilon_for_sigma(sigma, delta, q=q, steps=steps) <= eps * (1 + 1e-9)

        prop()
        prop_valid()
        print("ok")
    """
    out = _run_python(code, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().endswith("ok")


# ---- data loaders: damaged files -----------------------------------------------------------


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _gz(text: str) -> bytes:
    return gzip.compress(text.encode())


def _kdd_row(duration: str = "0", src_bytes: str = "181", label: str = "normal.") -> str:
    fields = ["0"] * len(KDDCUP99_COLUMNS)
    fields[0] = duration
    fields[1:4] = ["tcp", "http", "SF"]
    fields[4] = src_bytes
    return ",".join([*fields, label])


def _adult_row(age: str = "39") -> str:
    return (
        f"{age}, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, "
        "White, Male, 2174, 0, 40, United-States, <=50K"
    )


_GARBAGE_GZ = b"\x1f\x8b\x08\x00" + b"this is not a deflate stream" * 4


def _truncated_gz(text: str) -> bytes:
    whole = _gz(text)
    return whole[: len(whole) // 2]


# Each loader: (relative path in the data folder, loader call, a good file's text, a text
# with NaN, a text with inf, compressed?)
_KDD_GOOD = "\n".join([_kdd_row(), _kdd_row(label="smurf.")]) + "\n"
_PHISH_GOOD = "1 1:0.5 2:0.5\n0 3:0.5\n"
_HELR_GOOD = "1\t2\t1\n3\t4\t0\n"
_ADULT_GOOD = _adult_row() + "\n" + _adult_row("50").replace("<=50K", ">50K") + "\n"

LOADERS = {
    "kddcup99": (
        "kddcup99/kddcup.data_10_percent.gz",
        lambda home: load_kddcup99(home, verify=False),
        _KDD_GOOD,
        "\n".join([_kdd_row(), _kdd_row(src_bytes="nan")]) + "\n",
        "\n".join([_kdd_row(), _kdd_row(duration="inf")]) + "\n",
        True,
    ),
    "phishing": (
        "phishing/phishing.txt.gz",
        lambda home: load_phishing(home, verify=False),
        _PHISH_GOOD,
        "1 1:0.5\n0 2:nan 3:0.5\n",
        "1 1:0.5\n0 3:inf\n",
        True,
    ),
    "helr": (
        "helr/edin.txt",
        lambda home: load_helr("edin", home, verify=False),
        _HELR_GOOD,
        "1\t2\t1\n3\tnan\t0\n",
        "1\t2\t1\n-inf\t4\t0\n",
        False,
    ),
    "adult": (
        "adult/adult.data",
        lambda home: load_adult("train", home, verify=False),
        _ADULT_GOOD,
        _adult_row() + "\n" + _adult_row("nan") + "\n",
        _adult_row() + "\n" + _adult_row("inf") + "\n",
        False,
    ),
}


def _encode(text: str, compressed: bool) -> bytes:
    return _gz(text) if compressed else text.encode()


@pytest.mark.parametrize("name", list(LOADERS))
def test_loader_good_file_loads(tmp_path, name):
    rel, call, good, _, _, compressed = LOADERS[name]
    _write(tmp_path / rel, _encode(good, compressed))
    X, y = call(tmp_path)
    assert X.shape[0] == 2 and np.isfinite(X.toarray() if hasattr(X, "toarray") else X).all()
    assert set(np.unique(y)) <= {-1, 1}


@pytest.mark.parametrize("name", list(LOADERS))
@pytest.mark.parametrize("which", ["nan", "inf"])
def test_loader_non_finite_value_names_file_row_and_column(tmp_path, name, which):
    rel, call, _, with_nan, with_inf, compressed = LOADERS[name]
    path = _write(tmp_path / rel, _encode(with_nan if which == "nan" else with_inf, compressed))
    with pytest.raises(ValueError) as info:
        call(tmp_path)
    msg = str(info.value)
    assert path.name in msg
    assert "row 1" in msg
    assert "column" in msg
    assert "non-finite" in msg or "non-numeric" in msg


@pytest.mark.parametrize("name", list(LOADERS))
@pytest.mark.parametrize("content", ["", "\n\n", "header-only"])
def test_loader_empty_file_raises(tmp_path, name, content):
    rel, call, _, _, _, compressed = LOADERS[name]
    if content == "header-only":
        # these formats have no header line; a lone comment / blank line is all there is
        content = {"adult": "", "helr": "\n", "phishing": "# comment\n", "kddcup99": "\n"}[name]
    path = _write(tmp_path / rel, _encode(content, compressed))
    with pytest.raises(ValueError, match="empty|no .*rows") as info:
        call(tmp_path)
    assert path.name in str(info.value)


@pytest.mark.parametrize("name", [n for n in LOADERS if LOADERS[n][5]])
@pytest.mark.parametrize("damage", ["truncated", "garbage", "zero-bytes-gz-name"])
def test_loader_damaged_gzip_raises_value_error(tmp_path, name, damage):
    rel, call, good, _, _, _ = LOADERS[name]
    data = {"truncated": _truncated_gz(good * 50), "garbage": _GARBAGE_GZ}.get(damage, b"")
    path = _write(tmp_path / rel, data)
    with pytest.raises(ValueError) as info:
        call(tmp_path)
    assert path.name in str(info.value)


def test_adult_test_file_with_only_its_comment_line(tmp_path):
    path = _write(tmp_path / "adult/adult.test", "|1x3 Cross validator\n")
    with pytest.raises(ValueError, match="no .*rows|empty") as info:
        load_adult("test", tmp_path, verify=False)
    assert path.name in str(info.value)


def test_rows_with_extra_fields_are_not_shifted_silently(tmp_path):
    _write(tmp_path / "adult/adult.data", "7, " + _adult_row() + "\n" + _adult_row() + "\n")
    with pytest.raises(ValueError, match="adult.data' has rows with more than 15 fields"):
        load_adult("train", tmp_path, verify=False)
    _write(tmp_path / LOADERS["kddcup99"][0], _gz("7," + _KDD_GOOD))
    with pytest.raises(ValueError, match="kddcup.data_10_percent.gz"):  # shifted: not numeric
        load_kddcup99(tmp_path, verify=False)


def test_kddcup99_n_samples_more_than_rows(tmp_path):
    _write(tmp_path / LOADERS["kddcup99"][0], _gz(_KDD_GOOD))
    with pytest.raises(ValueError, match="n_samples=5 is more than the 2 rows"):
        load_kddcup99(tmp_path, n_samples=5, seed=0, verify=False)


def test_phishing_non_finite_label(tmp_path):
    path = _write(tmp_path / "phishing/phishing.txt.gz", _gz("1 1:0.5\nnan 2:0.5\n"))
    with pytest.raises(ValueError, match="non-finite label nan in row 1") as info:
        load_phishing(tmp_path, verify=False)
    assert path.name in str(info.value)


# iDASH and YearPredictionMSD take a path (optionally compressed).


def test_idash_header_only_nan_and_damaged_gzip(tmp_path):
    header_only = _write(tmp_path / "h.csv", "label,a,b\n")
    with pytest.raises(ValueError, match="no iDASH data rows") as info:
        load_idash(header_only)
    assert "h.csv" in str(info.value)
    empty = _write(tmp_path / "e.csv", "")
    with pytest.raises(ValueError, match="empty"):
        load_idash(empty)
    nan = _write(tmp_path / "n.csv", "label,a,b\n1,0.5,0.5\n0,nan,1\n")
    with pytest.raises(ValueError, match=r"non-finite value nan in row 1, column 'a'"):
        load_idash(nan)
    inf = _write(tmp_path / "i.csv.gz", _gz("label,a,b\n1,0.5,inf\n"))
    with pytest.raises(ValueError, match=r"row 0, column 'b'"):
        load_idash(inf)
    for i, data in enumerate([_truncated_gz("label,a\n" + "1,2\n" * 500), _GARBAGE_GZ]):
        bad = _write(tmp_path / f"bad{i}.csv.gz", data)
        with pytest.raises(ValueError, match=f"bad{i}.csv.gz"):
            load_idash(bad)


def test_msd_nan_empty_and_damaged_gzip(tmp_path):
    row = ",".join(["2001"] + ["0.5"] * 90)
    nan_row = ",".join(["2001"] + ["0.5"] * 89 + ["nan"])
    ok = _write(tmp_path / "ok.txt", row + "\n")
    X, y = load_msd(ok)
    assert X.shape == (1, 90) and y[0] == 2001
    nan = _write(tmp_path / "nan.txt", row + "\n" + nan_row + "\n")
    with pytest.raises(ValueError, match=r"nan.txt': non-finite value nan in row 1, column"):
        load_msd(nan)
    year = _write(tmp_path / "year.txt", "inf 1:0.5\n")
    with pytest.raises(ValueError, match="non-finite year inf in row 0"):
        load_msd(year)
    for name, data in [("blank.txt", "\n \n"), ("empty.gz", _gz(""))]:
        with pytest.raises(ValueError, match="empty"):
            load_msd(_write(tmp_path / name, data))
    for i, data in enumerate([_truncated_gz(row * 200), _GARBAGE_GZ]):
        bad = _write(tmp_path / f"bad{i}.gz", data)
        with pytest.raises(ValueError, match=f"bad{i}.gz"):
            load_msd(bad)


def _idx(data: np.ndarray) -> bytes:
    header = struct.pack(">BBBB", 0, 0, 0x08, data.ndim) + struct.pack(
        f">{data.ndim}I", *data.shape
    )
    return header + data.astype(np.uint8).tobytes()


def test_mnist_empty_and_damaged(tmp_path):
    images = tmp_path / "mnist/train-images-idx3-ubyte.gz"
    labels = tmp_path / "mnist/train-labels-idx1-ubyte.gz"
    _write(images, gzip.compress(_idx(np.zeros((0, 28, 28)))))
    _write(labels, gzip.compress(_idx(np.zeros(0))))
    with pytest.raises(ValueError, match="no images") as info:
        load_mnist("train", tmp_path, verify=False)
    assert images.name in str(info.value)
    _write(images, _truncated_gz(_idx(np.zeros((3, 28, 28))).decode("latin-1")))
    with pytest.raises(ValueError, match=images.name):
        load_mnist("train", tmp_path, verify=False)
    _write(images, _GARBAGE_GZ)
    with pytest.raises(ValueError, match=images.name):
        load_mnist("train", tmp_path, verify=False)


# ---- HE training: train_logreg -------------------------------------------------------------


def _he_data(n: int = 40, d: int = 3):
    rng = np.random.default_rng(0)
    X = rng.random((n, d)) / d
    y = np.where(rng.random(n) > 0.5, 1, 0)
    return X, y


def _he_params():
    from privlearn.he import CKKSParams

    return CKKSParams(log_n=13, log_q=290, log_special=60, ks_digit_bits=50)


def _inf_at_row_2(X):
    X = X.copy()
    X[2, 0] = np.inf
    return X


_HE_CASES = [
    ("X complex", lambda X, y, k: (X + 1j, y, k), TypeError, "X must be real"),
    ("y complex", lambda X, y, k: (X, y + 0j, k), TypeError, "y must be real"),
    ("X strings", lambda X, y, k: (np.full(X.shape, "a"), y, k), TypeError, "X must be an array"),
    ("X inf", lambda X, y, k: (_inf_at_row_2(X), y, k), ValueError, r"infinite.*row 2, column 0"),
    ("y nan", lambda X, y, k: (X, np.where(y == 1, np.nan, 0.0), k), ValueError, "y contains NaN"),
    ("iterations 2.7", {"iterations": 2.7}, TypeError, "iterations must be an integer"),
    ("iterations 2.0", {"iterations": 2.0}, TypeError, "iterations must be an integer"),
    ("iterations str", {"iterations": "3"}, TypeError, "iterations must be an integer"),
    ("iterations bool", {"iterations": True}, TypeError, "iterations must be an integer"),
    ("iterations 0", {"iterations": 0}, ValueError, "iterations must lie in"),
    ("iterations -3", {"iterations": -3}, ValueError, "iterations must lie in"),
    ("iterations huge", {"iterations": 10**9}, ValueError, "iterations must lie in"),
    ("n_threads 0", {"n_threads": 0}, ValueError, "n_threads"),
    ("n_threads -5", {"n_threads": -5}, ValueError, "n_threads"),
    ("n_threads 2.5", {"n_threads": 2.5}, TypeError, "n_threads"),
    ("bbar_bits -1000", {"bbar_bits": -1000}, ValueError, r"bbar_bits must lie in \[10, 120\]"),
    ("bbar_bits 0", {"bbar_bits": 0}, ValueError, "bbar_bits must lie in"),
    ("bbar_bits 5000", {"bbar_bits": 5000}, ValueError, "bbar_bits must lie in"),
    ("bbar_bits 40.0", {"bbar_bits": 40.0}, TypeError, "bbar_bits must be an integer"),
    ("enhanced str", {"enhanced": "no"}, TypeError, "enhanced must be a bool"),
    ("schedule number", {"schedule": 0.5}, TypeError, "schedule must be None or a callable"),
    ("schedule nan", {"schedule": lambda t: float("nan")}, ValueError, r"schedule\(0\).*finite"),
    ("schedule complex", {"schedule": lambda t: 1j}, TypeError, r"schedule\(0\).*real"),
]


@pytest.mark.parametrize(
    "change, exc, pattern", [c[1:] for c in _HE_CASES], ids=[c[0] for c in _HE_CASES]
)
def test_train_logreg_bad_arguments(change, exc, pattern):
    from privlearn.he import train_logreg

    X, y = _he_data()
    kwargs = {"iterations": 1, "params": _he_params(), "seed": 0}
    if callable(change):
        X, y, kwargs = change(X, y, kwargs)
    else:
        kwargs.update(change)
    with pytest.raises(exc, match=pattern):
        train_logreg(X, y, **kwargs)


def test_train_logreg_valid_edge_values_still_work():
    from privlearn.he import train_logreg

    X, y = _he_data()
    for kwargs in ({"bbar_bits": 10}, {"bbar_bits": 40, "n_threads": -1}, {"n_threads": 1}):
        rep = train_logreg(X, y, iterations=1, params=_he_params(), seed=0, **kwargs)
        assert rep.iterations == 1 and np.isfinite(rep.coef_).all()


def test_plan_and_clear_logreg_bad_arguments():
    from privlearn.he import clear_logreg, plan_logreg

    X, y = _he_data()
    with pytest.raises(TypeError, match="n must be an integer"):
        plan_logreg(2.5, 3, params=_he_params())
    with pytest.raises(TypeError, match="iterations must be an integer"):
        plan_logreg(40, 3, iterations=2.5, params=_he_params())
    with pytest.raises(ValueError, match="bbar_bits must lie in"):
        plan_logreg(40, 3, bbar_bits=-1000, params=_he_params())
    with pytest.raises(TypeError, match="iterations must be an integer"):
        clear_logreg(X, y, iterations=2.5)
    with pytest.raises(ValueError, match="iterations must lie in"):
        clear_logreg(X, y, iterations=-1)
    with pytest.raises(TypeError, match="X must be real"):
        clear_logreg(X + 1j, y)


# ---- quadratic gradient in the clear ---------------------------------------------------------


def _qg_data(n: int = 40, d: int = 3):
    rng = np.random.default_rng(1)
    X = rng.random((n, d))
    y = np.where(rng.random(n) > 0.5, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("backend", ["core", "reference"])
def test_quadgrad_train_bad_arguments(backend):
    if backend == "core":
        from privlearn.linear.quadgrad import quadgrad_train
    else:
        from privlearn.reference.quadgrad import quadgrad_train
    import scipy.sparse as sp

    X, y = _qg_data()
    with pytest.raises(TypeError, match="X must be real"):
        quadgrad_train(X + 1j, y)
    with pytest.raises(TypeError, match="X must be real"):
        quadgrad_train(sp.csr_matrix(X + 1j), y)
    with pytest.raises(ValueError, match="y must be numeric"):
        quadgrad_train(X, y + 0j)
    with pytest.raises(TypeError, match="beta0 must be real"):
        quadgrad_train(X, y, beta0=np.ones(3) + 1j)
    with pytest.raises(ValueError, match="beta0 contains NaN"):
        quadgrad_train(X, y, beta0=np.array([0.0, np.nan, 0.0]))
    with pytest.raises(TypeError, match="bbar must be real"):
        quadgrad_train(X, y, bbar=np.ones(3) + 1j)
    for max_iter in (2.7, 3.0, "3"):
        with pytest.raises(TypeError, match="max_iter must be an integer"):
            quadgrad_train(X, y, max_iter=max_iter)
    for max_iter in (0, -2):
        with pytest.raises(ValueError, match="max_iter must be >= 1"):
            quadgrad_train(X, y, max_iter=max_iter)
    if backend == "core":  # the reference accepts n_threads for signature compatibility only
        for n_threads, exc in ((0, ValueError), (-5, ValueError), (2.5, TypeError)):
            with pytest.raises(exc, match="n_threads"):
                quadgrad_train(X, y, n_threads=n_threads)


def test_quadgrad_helpers_bad_arguments():
    from privlearn.linear.quadgrad import (
        fixed_hessian_diagonal,
        logistic_loglik_gradient,
        quadgrad_bbar,
    )

    X, y = _qg_data()
    with pytest.raises(TypeError, match="X must be real"):
        quadgrad_bbar(X + 1j)
    with pytest.raises(TypeError, match="epsilon"):
        quadgrad_bbar(X, epsilon="a")
    for eps in (float("nan"), -1.0, 0.0):
        with pytest.raises(ValueError, match="epsilon"):
            quadgrad_bbar(X, epsilon=eps)
    for n_threads in (0, -5):
        with pytest.raises(ValueError, match="n_threads"):
            quadgrad_bbar(X, n_threads=n_threads)
    with pytest.raises(TypeError, match="beta must be real"):
        logistic_loglik_gradient(X, y, np.ones(3) + 1j)
    with pytest.raises(ValueError, match="beta contains NaN"):
        logistic_loglik_gradient(X, y, np.array([np.nan, 0.0, 0.0]))
    with pytest.raises(ValueError, match=r"beta must have shape \(3,\)"):
        logistic_loglik_gradient(X, y, np.ones(2))
    with pytest.raises(TypeError, match="X must be real"):
        logistic_loglik_gradient(X + 1j, y, np.ones(3))
    with pytest.raises(TypeError, match="A must be real"):
        fixed_hessian_diagonal(np.eye(3) + 1j)
    with pytest.raises(ValueError, match="epsilon"):
        fixed_hessian_diagonal(np.eye(3), float("nan"))
    ll, g = logistic_loglik_gradient(X, y, np.zeros(3))
    assert np.isclose(ll, -X.shape[0] * np.log(2.0)) and g.shape == (3,)


@pytest.mark.parametrize("backend", ["core", "reference"])
def test_quadgrad_estimator_bad_arguments(backend):
    from privlearn.linear.quadgrad import QuadraticGradientLogisticRegression as QG

    X, y = _qg_data()
    for n_threads, exc in ((0, ValueError), (-5, ValueError), (1.5, TypeError)):
        with pytest.raises(exc, match="n_threads"):
            QG(n_threads=n_threads, backend=backend).fit(X, y)
    with pytest.raises(TypeError, match="max_iter must be an integer"):
        QG(max_iter=2.5, backend=backend).fit(X, y)
    with pytest.raises(ValueError, match="[Cc]omplex"):
        QG(backend=backend).fit(X + 1j, y)
    est = QG(max_iter=3, n_threads=-1, backend=backend).fit(X, y)
    assert np.isfinite(est.coef_).all()


# ---- malformed sparse matrices (issue 19) ---------------------------------------------------
# scipy checks a CSR matrix's index ranges only on request and its arrays stay writable, while
# its compiled kernels and the core index with the stored indices unchecked: a malformed matrix
# used to kill the process (SIGSEGV in ``predict`` / ``maxabs_scale``), be merged into the
# intercept column (an index equal to n_features under ``fit_intercept=True``) or pass silently
# (negative indices). Every entry point now checks the structure first.


def _csr_ok():
    import scipy.sparse as sp

    X = np.array([[0.3, 0.0, -0.2], [0.0, 0.1, 0.0], [0.2, -0.4, 0.1], [0.0, 0.0, 0.5]])
    return sp.csr_matrix(X)


def _malformed(kind: str):
    """A 4 x 3 CSR matrix with one structural fault, built the way a user could (scipy's
    constructor checks only lengths; the arrays are writable afterwards)."""
    import scipy.sparse as sp

    M = _csr_ok()
    data, indices, indptr = M.data.copy(), M.indices.copy(), M.indptr.copy()
    if kind == "index_too_large":
        indices[3] = 10**6
    elif kind == "index_negative":
        indices[3] = -1
    elif kind == "index_equals_n_features":
        indices[3] = 3
    elif kind == "shape_too_small":
        return sp.csr_matrix((data, indices, indptr), shape=(4, 2))  # index 2 stored
    elif kind == "indptr_not_monotone":
        M.indptr = np.array([0, 3, 2, 6, 7])
        return M
    elif kind == "indptr_wrong_length":
        M.indptr = indptr[:-1]
        return M
    elif kind == "indptr_not_from_zero":
        M.indptr = indptr + 1
        return M
    elif kind == "data_indices_mismatch":
        M.data = data[:-1]
        return M
    elif kind == "float_indices":
        M.indices = indices.astype(np.float64)
        return M
    M.indices = indices
    return M


_MALFORMED = [
    "index_too_large",
    "index_negative",
    "index_equals_n_features",
    "shape_too_small",
    "indptr_not_monotone",
    "indptr_wrong_length",
    "indptr_not_from_zero",
    "data_indices_mismatch",
    "float_indices",
]
_MALFORMED_MSG = r"malformed CSR|indptr|indices"


def _csr_entry_points():
    """``(name, callable)`` for every public function / method that takes a CSR matrix."""
    from privlearn._design_matrix import as_design_matrix
    from privlearn._design_matrix import row_norms as lc_row_norms
    from privlearn.data import preprocess as pp
    from privlearn.linear import DPSCDClassifier, DPSGDClassifier
    from privlearn.linear.quadgrad import (
        QuadraticGradientLogisticRegression,
        logistic_loglik_gradient,
        quadgrad_bbar,
    )
    from privlearn.preprocessing import UnitBallProjector

    rng = np.random.default_rng(0)
    Xfit = rng.normal(size=(200, 3))
    Xfit /= 2.0 * np.linalg.norm(Xfit, axis=1, keepdims=True)
    yfit = (Xfit[:, 0] > 0).astype(int)
    sgd = DPSGDClassifier(epsilon=1.0, seed=0, n_samples=200, classes=[0, 1]).fit(Xfit, yfit)
    qg = QuadraticGradientLogisticRegression(max_iter=2).fit(Xfit, yfit)
    proj = UnitBallProjector().fit(Xfit)
    y4 = np.array([0, 1, 0, 1])
    ypm = y4 * 2.0 - 1.0
    small = {"epsilon": 1.0, "n_samples": 4, "batch_size": 2}
    return [
        ("as_design_matrix", as_design_matrix),
        ("_design_matrix.row_norms", lc_row_norms),
        ("data.row_norms", pp.row_norms),
        ("normalize_rows", pp.normalize_rows),
        ("project_to_ball", pp.project_to_ball),
        ("maxabs_scale", pp.maxabs_scale),
        ("maxabs_scale(max_abs)", lambda X: pp.maxabs_scale(X, max_abs=1.0)),
        ("UnitBallProjector.fit", UnitBallProjector().fit),
        ("UnitBallProjector.transform", proj.transform),
        ("DPSGDClassifier.predict", sgd.predict),
        ("DPSGDClassifier.decision_function", sgd.decision_function),
        ("DPSGDClassifier.fit", lambda X: DPSGDClassifier(**small).fit(X, y4)),
        ("DPSCDClassifier.fit", lambda X: DPSCDClassifier(**small).fit(X, y4)),
        ("QuadGrad.predict", qg.predict),
        ("QuadGrad.fit", lambda X: QuadraticGradientLogisticRegression(max_iter=2).fit(X, y4)),
        ("quadgrad_bbar", quadgrad_bbar),
        ("logistic_loglik_gradient", lambda X: logistic_loglik_gradient(X, ypm, np.zeros(3))),
    ]


def test_malformed_csr_raises_at_every_entry_point():
    """Every (entry point, fault) pair: a ValueError naming the structure, never a result."""
    import re
    import warnings

    from privlearn.exceptions import PrivacyLeakWarning

    failures = []
    for name, call in _csr_entry_points():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            call(_csr_ok())  # the well-formed matrix is accepted
        for kind in _MALFORMED:
            M = _malformed(kind)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PrivacyLeakWarning)
                    call(M)
            except ValueError as exc:
                if not re.search(_MALFORMED_MSG, str(exc)):
                    failures.append(f"{name}/{kind}: unclear message {exc}")
            except Exception as exc:  # noqa: BLE001 - any other type is a failure here
                failures.append(f"{name}/{kind}: {type(exc).__name__}: {exc}")
            else:
                failures.append(f"{name}/{kind}: accepted")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("kind", _MALFORMED)
def test_malformed_csr_message_names_the_fault(kind):
    from privlearn._checks import check_sparse_structure

    expected = {
        "index_too_large": r"column index 1000000 \(stored entry 3\) lies outside \[0, 3\)",
        "index_negative": r"column index -1 \(stored entry 3\)",
        "index_equals_n_features": r"column index 3 \(stored entry 3\) lies outside \[0, 3\)",
        "shape_too_small": r"column index 2 .* outside \[0, 2\) for shape \(4, 2\)",
        "indptr_not_monotone": r"indptr is not non-decreasing",
        "indptr_wrong_length": r"indptr has length 4, expected 5",
        "indptr_not_from_zero": r"indptr\[0\] is 1",
        "data_indices_mismatch": r"indptr\[-1\] = 7 stored entries, but indices has length 7 "
        r"and data has shape \(6,\)",
        "float_indices": r"X.indices must be a 1-D integer array",
    }[kind]
    with pytest.raises(ValueError, match=expected):
        check_sparse_structure(_malformed(kind))


def test_malformed_csr_no_longer_kills_the_process():
    """The two reported crashes (SIGSEGV / heap corruption), run in a fresh interpreter."""
    code = """
        import numpy as np, scipy.sparse as sp, warnings
        from privlearn.linear import DPSGDClassifier
        from privlearn.data.preprocess import maxabs_scale
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(0)
        X = rng.normal(size=(300, 3)); X /= 2 * np.linalg.norm(X, axis=1, keepdims=True)
        est = DPSGDClassifier(epsilon=1.0, seed=0, n_samples=300).fit(X, (X[:, 0] > 0) * 1)
        for call in (est.predict, maxabs_scale):
            for bad in (10**6, -1):
                M = sp.csr_matrix(X[:5]); M.indices[2] = bad
                try:
                    call(M)
                except ValueError as exc:
                    print("ValueError", exc)
                else:
                    print("accepted")
    """
    out = _run_python(code)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert len(lines) == 4 and all(line.startswith("ValueError") for line in lines), out.stdout


def test_malformed_csc_and_coo_raise():
    import scipy.sparse as sp

    from privlearn._checks import check_sparse_structure
    from privlearn.data.preprocess import normalize_rows

    C = sp.csc_matrix(_csr_ok().toarray())
    C.indices[0] = 7  # a row index of a 4-row matrix
    with pytest.raises(ValueError, match=r"malformed CSC matrix: row index 7"):
        normalize_rows(C)
    Q = sp.coo_matrix(_csr_ok().toarray())
    Q.col[1] = -3
    with pytest.raises(ValueError, match=r"malformed COO matrix: column index -3"):
        check_sparse_structure(Q)
    with pytest.raises(ValueError, match=r"malformed COO matrix"):
        normalize_rows(Q)
    # unsorted and duplicate indices are valid structure: summed, not refused
    D = sp.csr_matrix((np.array([1.0, 2.0]), np.array([1, 1]), np.array([0, 2])), shape=(1, 2))
    assert np.allclose(normalize_rows(D).toarray(), [[0.0, 1.0]])


def test_malformed_csc_to_quadgrad_predict_raises():
    """scikit-learn's ``check_array`` converts a CSC matrix to CSR with scipy's unchecked
    kernels: the structure is checked before it."""
    import scipy.sparse as sp

    from privlearn.linear.quadgrad import QuadraticGradientLogisticRegression

    X = _csr_ok().toarray()
    est = QuadraticGradientLogisticRegression(max_iter=2).fit(X, np.array([0, 1, 0, 1]))
    C = sp.csc_matrix(X)
    C.indices[0] = 10**6
    with pytest.raises(ValueError, match="malformed CSC matrix: row index 1000000"):
        est.predict(C)


_LINEAR_CSC_CODE = """
    import numpy as np, scipy.sparse as sp, warnings
    from privlearn.linear import DPSGDClassifier
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)); X /= 2 * np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] > 0) * 1
    est = DPSGDClassifier(epsilon=1.0, seed=0, n_samples=300).fit(X, y)
    C = sp.csc_matrix(X); C.indices[2] = 10**6
    Q = sp.coo_matrix(X); Q.row[2] = 10**6
    for call, M in ((est.predict, C), (est.predict, Q),
                    (lambda M: DPSGDClassifier(epsilon=1.0, n_samples=300).fit(M, y), C)):
        try:
            call(M)
        except ValueError as exc:
            print("ValueError", exc)
        else:
            print("accepted")
"""


def test_malformed_csc_and_coo_to_linear_models_raise():
    out = _run_python(_LINEAR_CSC_CODE)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert len(lines) == 3 and all("malformed" in line for line in lines), out.stdout


_SEARCH_CSR_CODE = """
    import numpy as np, scipy.sparse as sp, warnings
    from privlearn.model_selection import PrivateHyperparameterSearch
    from privlearn.linear import DPSGDClassifier
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3)); X /= 2 * np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] > 0) * 1
    for kind in ("index", "indptr"):
        M = sp.csr_matrix(X)
        if kind == "index":
            M.indices[5] = 10**6
        else:
            M.indptr[5] = 10**4
        search = PrivateHyperparameterSearch(
            DPSGDClassifier(batch_size=16, epsilon=1.0, delta=1e-6), {"eta0": [0.1, 0.5]},
            seed=0, mean_repetitions=2, score_epsilon=0.5,
        )
        try:
            search.fit(M, y)
        except ValueError as exc:
            print("ValueError", exc, "| spent:", hasattr(search, "privacy_"))
        else:
            print("accepted")
"""


def test_malformed_csr_to_the_private_search_raises_before_anything():
    out = _run_python(_SEARCH_CSR_CODE)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert len(lines) == 2 and all("malformed CSR" in line for line in lines), out.stdout
    assert all("(312, 3)" not in line for line in lines)  # raised on X itself, not a split
