"""Issue 32, items 2 and 4: the cost of a small fit, and the memory of a dense multiclass fit.

Small fits are what a hyperparameter search and the privacy audits run by the thousand, and
there a fit's Python around the core is most of its time. Contenders, interleaved
(:func:`harness.compare`, thread CPU time, ``--fits`` fits each on 200 x 5 rows, public size and
classes declared, the calibration cached after the warm-up):

- ``privlearn_sgd`` / ``privlearn_scd``: ``DPSGDClassifier`` / ``DPSCDClassifier`` as they are;
- ``privlearn_sgd_sklearn_checks``: the same DP-SGD fit through scikit-learn's ``check_X_y`` and
  ``check_classification_targets`` (what the fit ran before stop 40: the shortcuts
  ``_plain_fit_data`` and ``check_classification_target`` switched off);
- peers: scikit-learn's ``SGDClassifier`` (not private, 5 epochs) and diffprivlib's
  ``LogisticRegression`` (epsilon 1, ``data_norm`` 1).

Memory (tracemalloc's peak of new allocations during one fit, relative to X's size): a
3-class ``DPSGDClassifier`` (softmax) 1-epoch fit on ``--n`` x 100 dense rows, reading the view
of the rows (since stop 40) and with the view materialised first (the stop-39 dense path).

Usage::

    python bench/python/bench_small_fit.py [--fits 200] [--reps 9] [--n 200000] [--quick]
"""

from __future__ import annotations

import time
import tracemalloc
import warnings
from typing import Any, Callable

import harness
import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from privlearn._design_matrix import RowView
from privlearn.linear import DPSCDClassifier, DPSGDClassifier, _rows
from privlearn.linear import softmax as _softmax

BENCH = "small_fit"


def _fits(make: Callable[[int], Any], X: np.ndarray, y: np.ndarray, k: int) -> Callable[[], Any]:
    def run() -> harness.Partial:
        t0 = time.thread_time()
        for seed in range(k):
            make(seed).fit(X, y)
        return harness.Partial(time.thread_time() - t0)

    return run


def _sklearn_checks(run: Callable[[], Any]) -> Callable[[], Any]:
    """``run`` with the fit's two shortcuts around scikit-learn's checks switched off."""

    def wrapped() -> Any:
        plain, target = _rows._plain_fit_data, _rows.check_classification_target
        _rows._plain_fit_data = lambda X, y: False
        _rows.check_classification_target = check_classification_targets
        try:
            return run()
        finally:
            _rows._plain_fit_data, _rows.check_classification_target = plain, target

    return wrapped


def _multiclass_peak(n: int, materialise: bool) -> tuple[float, np.ndarray]:
    """Peak new allocations (bytes) of a 3-class 1-epoch fit, and its coefficients."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 100))
    X /= 1.2 * np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.integers(0, 3, n)
    original = _softmax.dense_or_csr

    def materialised(X: Any, dense: Any, csr: Any, *a: Any, view: bool = False, **kw: Any) -> Any:
        if isinstance(X, RowView):
            X, view = X.materialize(), False
            kw.pop("check_finite", None)
        return original(X, dense, csr, *a, view=view, **kw)

    def fit() -> Any:
        est = DPSGDClassifier(epochs=1, n_threads=1, verbose=0, seed=1, n_samples=n)
        return est.set_params(classes=[0, 1, 2]).fit(X, y)

    if materialise:
        _softmax.dense_or_csr = materialised
    try:
        fit()  # warm-up (calibration)
        tracemalloc.start()
        coef = fit().coef_
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    finally:
        _softmax.dense_or_csr = original
    return peak / X.nbytes, coef


def main(argv: list[str] | None = None) -> int:
    p = harness.cli(__doc__, BENCH, reps=9)
    p.add_argument("--fits", type=int, default=200, help="fits per sample (default 200)")
    p.add_argument("--n", type=int, default=None, help="rows of the memory fit (200,000)")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    k = min(args.fits, 20) if args.quick else args.fits
    n = args.n or (20_000 if args.quick else 200_000)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5))
    X /= 1.5 * np.linalg.norm(X, axis=1, keepdims=True)
    y = (X @ np.arange(1.0, 6.0) > 0).astype(int)
    declared = dict(epsilon=1.0, n_samples=200, classes=[0, 1], n_threads=1, verbose=0)
    tasks: dict[str, Callable[[], Any]] = {
        "privlearn_sgd": _fits(lambda s: DPSGDClassifier(seed=s, **declared), X, y, k),
        "privlearn_scd": _fits(lambda s: DPSCDClassifier(seed=s, **declared), X, y, k),
    }
    tasks["privlearn_sgd_sklearn_checks"] = _sklearn_checks(tasks["privlearn_sgd"])
    from sklearn.linear_model import SGDClassifier

    tasks["sklearn_sgd"] = _fits(
        lambda s: SGDClassifier(max_iter=5, tol=None, random_state=s), X, y, k
    )
    missing = ""
    try:
        from diffprivlib.models import LogisticRegression

        tasks["diffprivlib_logreg"] = _fits(
            lambda s: LogisticRegression(epsilon=1.0, data_norm=1.0, random_state=s), X, y, k
        )
    except ImportError:  # the bench extra's peer (it may not import with this scikit-learn)
        missing = "; diffprivlib's LogisticRegression: diffprivlib does not import here"
    m = harness.machine()
    with harness.blas_threads(1):
        cmp = harness.compare(tasks, args.reps, baseline="privlearn_sgd", verbose=True)
        view, coef_view = _multiclass_peak(n, materialise=False)
        copy, coef_copy = _multiclass_peak(n, materialise=True)
    med = {key: t.median / k * 1e3 for key, t in cmp.timings.items()}  # ms per fit
    ratios = {
        "privlearn_sgd / privlearn_sgd_sklearn_checks, paired": cmp.paired(
            "privlearn_sgd", "privlearn_sgd_sklearn_checks"
        ),
        "privlearn_sgd / sklearn_sgd": med["privlearn_sgd"] / med["sklearn_sgd"],
        "privlearn_scd / sklearn_sgd": med["privlearn_scd"] / med["sklearn_sgd"],
    }
    if "diffprivlib_logreg" in med:
        ratios["privlearn_sgd / diffprivlib_logreg"] = (
            med["privlearn_sgd"] / med["diffprivlib_logreg"]
        )
    same = bool(np.array_equal(coef_view, coef_copy))
    report = {
        "bench": BENCH,
        "config": {"fits": k, "rows": 200, "cols": 5, "reps": args.reps, "memory_n": n},
        "machine": harness.finish(m, cmp),
        "ms_per_fit": med,
        "ratios": ratios,
        "multiclass_peak_over_X": {"view": view, "materialised": copy},
        "multiclass_same_coefficients": same,
        **cmp.as_dict(),
    }
    for key, v in med.items():
        print(f"{key:32s} {v:.3f} ms/fit")
    for key, v in ratios.items():
        print(f"{key:50s} {harness.fmt(v)}")
    print(f"multiclass fit, peak new allocations / X: view {view:.3f}, materialised {copy:.3f}")
    peers = f"scikit-learn's SGDClassifier (not private) {med['sklearn_sgd']:.2f} ms"
    if "diffprivlib_logreg" in med:
        peers += f", diffprivlib's LogisticRegression {med['diffprivlib_logreg']:.2f} ms"
    peers += missing
    result = (
        f"a small fit (200 x 5, declared, {k} fits a sample): DPSGDClassifier "
        f"{med['privlearn_sgd']:.2f} ms, through scikit-learn's checks as before stop 40 "
        f"{med['privlearn_sgd_sklearn_checks']:.2f} ms (paired "
        f"{harness.fmt(ratios['privlearn_sgd / privlearn_sgd_sklearn_checks, paired'])}); "
        f"DPSCDClassifier {med['privlearn_scd']:.2f} ms; {peers}. A 3-class dense "
        f"DPSGDClassifier fit on {n:,} x 100: peak new allocations {view:.2f}x X reading the "
        f"view, {copy:.2f}x with the rows materialised (same coefficients: {same})"
    )
    row = harness.row(
        BENCH,
        result,
        "none (fixed cost and test time, items 2 and 4)",
        report["machine"],
        f"[{BENCH}.json]({BENCH}.json), `python bench/python/bench_small_fit.py --reps "
        f"{args.reps}`",
    )
    harness.publish(report, harness.out_dir(args), BENCH, row)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
