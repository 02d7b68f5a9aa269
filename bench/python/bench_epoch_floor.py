"""Issue 32, items 1 and 2: a default DP-SGD epoch and the fixed cost of a fit, against the floor
of an epoch, two streaming passes ``X.T @ (X @ w)``, on one thread.

Everything runs in one process with the repetitions interleaved (:func:`harness.compare`),
medians of ``--reps``; claims are ratios to the floor measured in the same rounds. Data: ``n``
dense rows (default 200,000, 20,000 with ``--quick``; the issue's 1,000,000 with
``--n 1000000``), ``d = 100``, uniformly random unit-norm directions, labels from a random
linear model.

- ``core_epoch``: :func:`privlearn.linear.sgd_train` with the ``DPSGDClassifier`` defaults
  (Poisson sampling, expected batch 64, clip 1, noise multiplier 1 on the exact lattice, the
  intercept column appended: ``d + 1`` columns), one epoch. With ``--baseline DIR`` (a folder
  holding a package ``oldcore`` with an older ``_core`` build) the same call runs on that build
  too, interleaved, and the coefficients are checked to be equal bit for bit.
- ``core_epoch_csr``: the same call on the a9a-like CSR set (``bench_sgd.make_a9a_like``: ``n``
  rows, 123 columns, 14 non-zeros per row) against its own floor ``floor_csr`` (scipy's
  ``X.T @ (X @ w)``); the dense core epoch includes :func:`sgd_train`'s one pass of input
  checks (a CSR matrix is checked by Python's as_design_matrix: scipy's canonical int32 matrix,
  as it is). A ``--baseline`` build (its own binding, int64 indices before stop 39) gets an int64
  copy made once before the timings, as its fits handed it, through its own keywords.
- ``core_marginal_epoch`` and ``core_marginal_epoch_csr``: the same calls with ``epochs=2``
  minus ``epochs=1`` (the median over rounds of the difference): the cost of one more epoch,
  without the call's one-time work (its pass of input checks).
- ``estimator_epoch``: ``DPSGDClassifier`` (defaults, ``n_samples`` and ``classes`` declared),
  the time of a 2-epoch fit minus a 1-epoch fit (the median over rounds of the difference).
- ``fixed``: a 1-epoch fit minus ``estimator_epoch``: with ``n_samples``/``classes`` declared or
  not, and with the lattice calibration cached (a refit of the same schedule) or cold.
- ``estimator_epoch_csr`` and ``fixed_csr``: the same two fits (declared) on the a9a-like CSR
  set, against ``floor_csr``: the fixed cost of a sparse fit (its checks, the intercept column:
  a view since stop 39, no copy of the matrix or of its indices).
- ``core_marginal_epoch_noise_free`` (and ``_csr``): the same core epoch with sigma = 0 (no
  lattice draws); ``noise / floor`` is the epoch's exact noise as a multiple of the floor (the
  paired epoch minus the paired noise-free epoch): the split of item 1's gap.
- ``discrete_gaussian``: ns per exact lattice draw (variance 2^60: noise multiplier 1 at the
  2^-30 lattice) vs a Box-Muller normal.

Usage::

    python bench/python/bench_epoch_floor.py [--n 200000] [--reps 5] [--baseline DIR]
        [--draws-differ] [--clock {wall,cpu}] [--quick] [--out DIR]

With ``--baseline`` the baseline build's discrete Gaussian and Box-Muller draws are timed too
(``baseline_discrete_gaussian``, ``baseline_box_muller``); ``--draws-differ`` skips the
bit-for-bit check of the coefficients when the baseline's sampler draws other noise.
``--clock cpu`` times the calling thread's CPU time (the fit rows then miss the calibration
work done on other threads).
"""

from __future__ import annotations

import importlib
import platform
import sys
import warnings
from pathlib import Path
from typing import Any

import harness
import numpy as np
from bench_sgd import make_a9a_like

from privlearn import _core
from privlearn._design_matrix import as_design_matrix
from privlearn._specs.sgd import SGD_DEFAULTS, prepare_sgd
from privlearn.linear import DPSGDClassifier, sgd_train
from privlearn.linear import estimators as _est
from privlearn.linear import sgd as _sgd

BENCH = "epoch_floor"
DRAWS = 200_000  # noise draws per discrete_gaussian / box_muller call


def main(argv: list[str] | None = None) -> int:
    p = harness.cli(__doc__, BENCH, reps=5, clock=True)
    p.add_argument("--n", type=int, default=None, help="dense rows (default 200,000)")
    p.add_argument("--baseline", type=Path, default=None, help="folder with package oldcore")
    p.add_argument(
        "--draws-differ",
        action="store_true",
        help="the baseline build draws different noise (a changed sampler): skip the bit-for-bit "
        "check of the coefficients",
    )
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    n, d = args.n or (20_000 if args.quick else 200_000), 100
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y01 = (X @ rng.standard_normal(d) > 0).astype(int)
    Xc = np.hstack([X, np.ones((n, 1))]) / np.sqrt(2.0)
    ypm = 2.0 * y01 - 1.0
    w = rng.standard_normal(d)
    kw = dict(
        key=bytes(32), n_threads=1, mechanism="gaussian", sampling="poisson", batch_size=64,
        epochs=1, sigma=1.0, clip=1.0, alpha=1e-4, eta0=1.0, learning_rate="constant",
        loss="log_loss",
    )  # fmt: skip
    cores: dict[str, Any] = {"": _core}
    if args.baseline is not None:
        sys.path.insert(0, str(args.baseline))
        cores["baseline_"] = importlib.import_module("oldcore._core")
    coefs: dict[str, np.ndarray] = {}
    sparse = make_a9a_like(n)  # the a9a-like CSR set (bench_sgd), n rows
    ws = rng.standard_normal(sparse.X.shape[1])
    Xs = as_design_matrix(sparse.X)  # scipy's canonical int32 matrix itself (no copy)
    # a baseline build's CSR input: an int64 copy made once (what its fits handed it; a call
    # would otherwise copy the indices into fresh pages each time, which made rounds bimodal)
    Xs64 = Xs.copy()
    Xs64.indices, Xs64.indptr = Xs.indices.astype(np.int64), Xs.indptr.astype(np.int64)

    def core_run(
        core: Any, name: str, csr: bool = False, epochs: int = 1, sigma: float = 1.0
    ) -> None:
        if csr and core is not _core:  # its binding, without this tree's keywords
            call = SGD_DEFAULTS | {k: v for k, v in kw.items() if k != "n_threads"}
            call["epochs"] = epochs
            X_, y_, w0, spec = prepare_sgd(Xs64, sparse.y, None, **call)
            args_, extra = spec.core_args(1)
            out = core.sgd_train_csr(
                X_.data, X_.indices, X_.indptr, X_.shape[1], y_, w0, *args_, **extra
            )
            coefs[name] = np.asarray(out[0])
            return
        _sgd._core = core
        try:
            Xr, yr = (Xs, sparse.y) if csr else (Xc, ypm)
            coefs[name] = sgd_train(Xr, yr, **(kw | {"epochs": epochs, "sigma": sigma})).coef
        finally:
            _sgd._core = _core

    def fit(epochs: int, declared: bool, cached: bool) -> None:
        saved = dict(_est._CALIBRATIONS)
        if not cached:
            _est._CALIBRATIONS.clear()
        extra = dict(n_samples=n, classes=[0, 1]) if declared else {}
        DPSGDClassifier(epochs=epochs, n_threads=1, verbose=0, seed=1, **extra).fit(X, y01)
        _est._CALIBRATIONS.update(saved)  # a cold fit leaves the others' entries cached

    def fit_csr(epochs: int) -> None:
        declared = dict(n_samples=n, classes=[-1.0, 1.0])
        DPSGDClassifier(epochs=epochs, n_threads=1, verbose=0, seed=1, **declared).fit(
            sparse.X, sparse.y
        )

    key = bytes(range(32))
    tasks: dict[str, Any] = {"floor": lambda: X.T @ (X @ w)}
    for pre, core in cores.items():
        tasks[f"{pre}core_epoch"] = lambda c=core, k=f"{pre}core_epoch": core_run(c, k)
    tasks["core_epochs2"] = lambda: core_run(_core, "core_epochs2", epochs=2)
    # the same epochs without noise (sigma 0: no lattice draws): the epoch's split into its
    # noise and the rest (sampling, row visits, clipping, fixed-point sums)
    tasks["core_epoch_noise_free"] = lambda: core_run(_core, "nf1", sigma=0.0)
    tasks["core_epochs2_noise_free"] = lambda: core_run(_core, "nf2", epochs=2, sigma=0.0)
    tasks["floor_csr"] = lambda: sparse.X.T @ (sparse.X @ ws)
    for pre, core in cores.items():
        k = f"{pre}core_epoch_csr"
        tasks[k] = lambda c=core, k=k: core_run(c, k, csr=True)
    tasks["core_epochs2_csr"] = lambda: core_run(_core, "core_epochs2_csr", csr=True, epochs=2)
    tasks["core_epoch_csr_noise_free"] = lambda: core_run(_core, "nfc1", csr=True, sigma=0.0)
    tasks["core_epochs2_csr_noise_free"] = lambda: core_run(
        _core, "nfc2", csr=True, epochs=2, sigma=0.0
    )
    tasks |= {
        "fit1_declared": lambda: fit(1, True, True),
        "fit2_declared": lambda: fit(2, True, True),
        "fit1_undeclared": lambda: fit(1, False, True),
        "fit1_undeclared_cold": lambda: fit(1, False, False),
        "fit1_csr": lambda: fit_csr(1),
        "fit2_csr": lambda: fit_csr(2),
    }
    for pre, c in cores.items():  # "baseline_discrete_gaussian", "baseline_box_muller" too
        tasks[f"{pre}discrete_gaussian"] = lambda c=c: c.random_discrete_gaussian(
            key, 5, 0, DRAWS, 1 << 60, 0, 1
        )
        tasks[f"{pre}box_muller"] = lambda c=c: c.random_normal(key, 5, 0, DRAWS, 1)
    m = harness.machine()
    m["processor"] = platform.processor()  # kept for the earlier readers of this JSON
    # the warm-up call of each task fills the calibration cache for the cached fits
    with harness.blas_threads(1):
        cmp = harness.compare(tasks, args.reps, baseline="floor", clock=args.clock, verbose=True)
    identical = None
    if "baseline_core_epoch" in coefs and not args.draws_differ:
        identical = all(
            bool(np.array_equal(coefs[k], coefs[f"baseline_{k}"]))
            for k in ("core_epoch", "core_epoch_csr")
        )
    med = {k: t.median for k, t in cmp.timings.items()}
    fl, r = med["floor"], harness.ratio
    # the two fits run in the same round: the median of the rounds' differences (a median of
    # each fit apart lets a noisy round of one fit move the difference)
    t2, t1 = cmp.timings["fit2_declared"].times, cmp.timings["fit1_declared"].times
    est_epoch = float(np.median(np.subtract(t2, t1)))

    def marginal(two: str, one: str) -> float:  # the same, for a core call
        return float(np.median(np.subtract(cmp.timings[two].times, cmp.timings[one].times)))

    core_marginal = marginal("core_epochs2", "core_epoch")
    est_epoch_csr = marginal("fit2_csr", "fit1_csr")
    core_marginal_csr = marginal("core_epochs2_csr", "core_epoch_csr")

    def per_round(two: str, one: str, floor: str) -> float:
        """The median over rounds of (two - one) / floor, all three from the same round."""
        t = cmp.timings
        return float(
            np.median((np.array(t[two].times) - np.array(t[one].times)) / np.array(t[floor].times))
        )

    ratios = {
        "core_epoch / floor": r(med["core_epoch"], fl),
        "core_epoch_csr / floor_csr": r(med["core_epoch_csr"], med["floor_csr"]),
        "core_marginal_epoch / floor": r(core_marginal, fl),
        "core_marginal_epoch_csr / floor_csr": r(core_marginal_csr, med["floor_csr"]),
        "estimator_epoch / floor": r(est_epoch, fl),
        "fixed_declared / floor": r(med["fit1_declared"] - est_epoch, fl),
        "fixed_undeclared / floor": r(med["fit1_undeclared"] - est_epoch, fl),
        "fixed_undeclared_cold_calibration / floor": r(med["fit1_undeclared_cold"] - est_epoch, fl),
        "estimator_epoch_csr / floor_csr": r(est_epoch_csr, med["floor_csr"]),
        "fixed_csr / floor_csr": r(med["fit1_csr"] - est_epoch_csr, med["floor_csr"]),
        "discrete_gaussian / box_muller": r(med["discrete_gaussian"], med["box_muller"]),
        # the same epochs as medians of per-round ratios (each round's own floor): steadier
        # when the machine's speed drifts between rounds
        "estimator_epoch / floor, paired": per_round("fit2_declared", "fit1_declared", "floor"),
        "core_marginal_epoch / floor, paired": per_round("core_epochs2", "core_epoch", "floor"),
        "core_marginal_epoch_csr / floor_csr, paired": per_round(
            "core_epochs2_csr", "core_epoch_csr", "floor_csr"
        ),
        # the epoch without its noise, and the noise's share (epoch - noise-free epoch)
        "core_marginal_epoch_noise_free / floor, paired": per_round(
            "core_epochs2_noise_free", "core_epoch_noise_free", "floor"
        ),
        "core_marginal_epoch_csr_noise_free / floor_csr, paired": per_round(
            "core_epochs2_csr_noise_free", "core_epoch_csr_noise_free", "floor_csr"
        ),
    }
    ratios["noise / floor"] = (
        ratios["core_marginal_epoch / floor, paired"]
        - ratios["core_marginal_epoch_noise_free / floor, paired"]
    )
    ratios["noise_csr / floor_csr"] = (
        ratios["core_marginal_epoch_csr / floor_csr, paired"]
        - ratios["core_marginal_epoch_csr_noise_free / floor_csr, paired"]
    )
    if "baseline_core_epoch" in med:
        ratios |= {
            "baseline_core_epoch / floor": r(med["baseline_core_epoch"], fl),
            "core_epoch / baseline_core_epoch": r(med["core_epoch"], med["baseline_core_epoch"]),
            "core_epoch / baseline_core_epoch, paired": cmp.paired(
                "core_epoch", "baseline_core_epoch"
            ),
            "core_epoch_csr / baseline_core_epoch_csr, paired": cmp.paired(
                "core_epoch_csr", "baseline_core_epoch_csr"
            ),
            "baseline_core_epoch_csr / floor_csr": r(
                med["baseline_core_epoch_csr"], med["floor_csr"]
            ),
            "baseline_discrete_gaussian / baseline_box_muller": r(
                med["baseline_discrete_gaussian"], med["baseline_box_muller"]
            ),
            "discrete_gaussian / baseline_discrete_gaussian": r(
                med["discrete_gaussian"], med["baseline_discrete_gaussian"]
            ),
        }
    draws = ("discrete_gaussian", "box_muller", "baseline_discrete_gaussian", "baseline_box_muller")
    report = {
        "bench": BENCH,
        "config": {
            "n": n,
            "d": d,
            "reps": args.reps,
            "threads": 1,
            "batch_size": 64,
            "baseline_draws_differ": bool(args.draws_differ),
            "clock": args.clock,
        },
        "machine": harness.finish(m, cmp),
        "median_s": med,
        "all_s": {k: t.times for k, t in cmp.timings.items()},
        "ns_per_draw": {k: med[k] / DRAWS * 1e9 for k in draws if k in med},
        "ratios": ratios,
        "identical_to_baseline": identical,
        **cmp.as_dict(),
    }
    for k, v in ratios.items():
        print(f"{k:50s} {harness.fmt(v)}")
    if identical is False:
        print("ERROR: a core epoch differs from the baseline build's", file=sys.stderr)
    # JSON only: the README row of epoch_floor is written by hand (its notes on the clock and
    # the baseline build)
    harness.publish(report, harness.out_dir(args), BENCH, None)
    return 1 if identical is False else 0


if __name__ == "__main__":
    raise SystemExit(main())
