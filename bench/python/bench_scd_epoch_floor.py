"""Issue 32, items 1 and 5 for DP-SCD: a default ``DPSCDClassifier`` epoch and a non-private
SDCA epoch against the floor of an epoch, two streaming passes ``X.T @ (X @ w)``, on one thread.

Everything runs in one process with the repetitions interleaved (:func:`harness.compare`),
medians of ``--reps``; claims are ratios to the floor measured in the same rounds.

Data
----
- ``dense``: ``n`` rows (default 200,000; the issue's 1,000,000 with ``--n 1000000``),
  ``d = 100``, uniformly random unit-norm directions, labels from a random linear model.
- ``a9a-like``: ``bench_sgd.make_a9a_like`` (SYNTHETIC sparse CSR, 32,561 x 123, 14 non-zeros
  per row); its ~7 MB live in the last-level cache, so the floor there is a cache pass, not a
  memory-bandwidth one (reported for information).

Contenders (per data set)
-------------------------
- ``floor``: ``X.T @ (X @ w)`` (numpy / scipy, BLAS limited to 1 thread for the whole run,
  outside the timed calls).
- ``dpscd_epoch``: :func:`privlearn.linear.scd_train` with the exact arguments a default
  ``DPSCDClassifier(epochs=1, n_threads=1)`` passes to it (captured from a fit: Algorithm 1,
  Poisson batches of 100, ``C = 0.01``, the hidden dual state, the jitter, exact lattice noise
  on ``v`` from the discrete Gaussian), without the diagnostics path (``record_every = 0``).
- ``dpscd_epoch_kernel``: the same call to the compiled kernel alone (the Python-side input
  validation done outside the timing; the fit's rows, a view ``(s_i x_i, 0.5)`` of ``X``, are
  passed as the view, and a checked CSR ``X`` without the core's own check, exactly as
  ``scd_train`` passes them).
- ``sdca_epoch``: ``scd_train(variant="scd")``, one non-private SDCA epoch (hinge).
- ``dense-in-cache/dpscd_epoch`` (``--in-cache-rows``, default 20,000; 0 leaves it out): the
  same call on that many rows of the same kind, with the dense set's step count, so that it
  makes as many row visits while its rows stay in cache; its time over the dense epoch's
  (``dense-in-cache / dense``, median of same-round ratios) is the share of the epoch that is
  arithmetic rather than waiting on memory.
- ``baseline_*`` (with ``--baseline DIR``, a folder holding a package ``oldcore`` with an
  older ``_core`` build): the same two calls on that build, interleaved; their results are
  checked to be equal bit for bit to the current build's.

Usage::

    python bench/python/bench_scd_epoch_floor.py [--n 200000] [--reps 7] [--baseline DIR]
        [--clock {wall,cpu}] [--in-cache-rows 20000]

``--clock cpu`` times the calling thread's CPU time instead of wall time (every contender runs
on that one thread): on a shared machine it leaves out the time the process waited for a core.
"""

from __future__ import annotations

import functools
import importlib
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import bench_sgd as _sgd
import harness
import numpy as np
import scipy.sparse as sp

import privlearn.linear.scd as _scd
from privlearn import _core
from privlearn._design_matrix import RowView
from privlearn._specs.scd import SCD_DEFAULTS, prepare_scd
from privlearn.linear import DPSCDClassifier, scd_train
from privlearn.linear._kernels import dense_or_csr
from privlearn.random import key_from_seed

BENCH = "scd_epoch_floor"
TARGET = 2.0  # DP-SCD epoch <= 2x X.T @ (X @ w), one thread (issue 32, item 1)


def default_kwargs(X: Any, y01: np.ndarray) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """(X, y, kwargs) that a default one-epoch ``DPSCDClassifier`` fit passes to ``scd_train``."""
    seen: dict[str, Any] = {}
    real = _scd.scd_train

    def spy(Xt: Any, yt: np.ndarray, **kw: Any) -> Any:
        seen.update(X=Xt, y=yt, kw=kw)
        return real(Xt, yt, **kw)

    spy.__name__ = "scd_train"  # the estimator looks its trainer up by name
    _scd.scd_train = spy
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DPSCDClassifier(epochs=1, n_threads=1, seed=1, verbose=0).fit(X, y01)
    finally:
        _scd.scd_train = real
    kw = dict(seen["kw"])
    kw["record_every"] = 0
    return seen["X"], np.asarray(seen["y"]), kw


def contenders_for(
    name: str, X: Any, y01: np.ndarray, oldcore: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    Xt, yt, kw = default_kwargs(X, y01)
    ypm = 2.0 * y01 - 1.0
    w = np.full(X.shape[1], 1.0 / math.sqrt(X.shape[1]))
    key = key_from_seed(3)
    cores = {"": _core} | ({"baseline_": harness.CoreShim(oldcore)} if oldcore is not None else {})
    out: dict[str, Any] = {}
    results: dict[str, Any] = {}

    def floor() -> None:
        X.T @ (X @ w)  # BLAS on one thread: main() times inside harness.blas_threads(1)

    out[f"{name}/floor"] = floor
    # the kernel alone: the arguments validated once, outside the timed call
    spec_kw = {k: v for k, v in kw.items() if k != "n_threads"}
    Xk, yk, spec = prepare_scd(Xt, yt, **{**SCD_DEFAULTS, **spec_kw})
    args, extra = spec.core_args(1)
    for prefix, core in cores.items():
        # the call scd_train makes: view=True (a RowView's rows read in place, not copied) and,
        # on a core that has it, check_structure=False (the CSR X was checked by prepare_scd)
        csr = core.scd_train_csr
        if "check_structure" in (csr.__doc__ or ""):
            csr = functools.partial(csr, check_structure=False)

        # a build without CSR views (before stop 39) gets the matrix its fits made (int64
        # indices), made here once (outside the kernel's timing, as its fits made it before
        # the call)
        Xb = Xk
        if prefix and isinstance(Xk, RowView) and sp.issparse(Xk.X):
            if "row_scale" not in (core.scd_train_csr.__doc__ or ""):
                Xb = Xk.materialize()
                Xb.indices, Xb.indptr = Xb.indices.astype(np.int64), Xb.indptr.astype(np.int64)

        def kernel(core: Any = core, csr: Any = csr, Xb: Any = Xb) -> None:
            dense_or_csr(Xb, core.scd_train_dense, csr, yk, *args, view=True, **extra)

        out[f"{name}/{prefix}dpscd_epoch_kernel"] = kernel

        def dp(core: Any = core, prefix: str = prefix) -> None:
            _scd._core = core
            try:
                results[f"{prefix}dpscd"] = scd_train(Xt, yt, **kw).coef
            finally:
                _scd._core = _core

        def sdca(core: Any = core, prefix: str = prefix) -> None:
            _scd._core = core
            try:
                results[f"{prefix}sdca"] = scd_train(
                    X, ypm, key=key, n_threads=1, variant="scd", loss="hinge", alpha=1e-4
                ).coef
            finally:
                _scd._core = _core

        out[f"{name}/{prefix}dpscd_epoch"] = dp
        out[f"{name}/{prefix}sdca_epoch"] = sdca
    config = {k: v for k, v in kw.items() if k not in ("key",)}
    return out, {"results": results, "trainer_kwargs": config, "trainer_shape": list(Xt.shape)}


def main(argv: list[str] | None = None) -> int:
    p = harness.cli(__doc__, BENCH, reps=7, clock=True)
    p.add_argument("--n", type=int, default=200_000, help="dense rows (default 200,000)")
    p.add_argument("--baseline", type=Path, default=None, help="folder with package oldcore")
    p.add_argument(
        "--rtol",
        type=float,
        default=0.0,
        help="compare with the baseline to this relative tolerance instead of bit for bit "
        "(for a baseline that draws its normals with another kernel, e.g. before f5d5687)",
    )
    p.add_argument(
        "--in-cache-rows",
        type=int,
        default=20_000,
        help="rows of the in-cache DP-SCD run with the dense set's visits (0: none)",
    )
    args = p.parse_args(argv)
    n = 20_000 if args.quick else args.n
    oldcore = None
    if args.baseline is not None:
        sys.path.insert(0, str(args.baseline))
        oldcore = importlib.import_module("oldcore._core")
    m = harness.machine()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 100))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y01 = (X @ rng.standard_normal(100) > 0).astype(np.int64)
    a9 = _sgd.make_a9a_like()
    contenders: dict[str, Any] = {}
    info: dict[str, Any] = {}
    for name, XX, yy in (("dense", X, y01), ("a9a-like", a9.X, (a9.y > 0).astype(np.int64))):
        c, i = contenders_for(name, XX, yy, oldcore)
        contenders |= c
        info[name] = i
    if args.in_cache_rows > 0:  # as many visits on rows that stay in cache
        Xi = rng.standard_normal((args.in_cache_rows, 100))
        Xi /= np.linalg.norm(Xi, axis=1, keepdims=True)
        Xit, yit, kwi = default_kwargs(Xi, (Xi @ rng.standard_normal(100) > 0).astype(np.int64))
        kwi = dict(kwi, steps=info["dense"]["trainer_kwargs"]["steps"])
        contenders["dense-in-cache/dpscd_epoch"] = lambda: scd_train(Xit, yit, **kwi)
    # BLAS limited once around the whole comparison: entering threadpoolctl's limit costs
    # ~0.5-2 ms, as much as the a9a-like floor itself (it was inside the floor's timing)
    with harness.blas_threads(1):
        cmp = harness.compare(contenders, repeats=args.reps, clock=args.clock, verbose=True)
    med = {k: t.median for k, t in cmp.timings.items()}
    identical = {}
    ratios: dict[str, float | None] = {}
    for name, i in info.items():
        res = i.pop("results")
        for what in ("dpscd", "sdca"):
            if f"baseline_{what}" in res:
                a, b = res[what], res[f"baseline_{what}"]
                identical[f"{name}/{what}"] = bool(
                    np.allclose(a, b, rtol=args.rtol, atol=0.0)
                    if args.rtol > 0
                    else np.array_equal(a, b)
                )
        fl = med[f"{name}/floor"]
        for k in med:
            if k.startswith(f"{name}/") and not k.endswith("/floor"):
                ratios[f"{k} / floor"] = harness.ratio(med[k], fl)
        for what in ("dpscd_epoch", "dpscd_epoch_kernel", "sdca_epoch"):
            if f"{name}/baseline_{what}" in med:
                ratios[f"{name}/{what} / baseline"] = harness.ratio(
                    med[f"{name}/{what}"], med[f"{name}/baseline_{what}"]
                )
    if "dense-in-cache/dpscd_epoch" in cmp.timings:
        ratios["dense-in-cache / dense, paired"] = cmp.paired(
            "dense-in-cache/dpscd_epoch", "dense/dpscd_epoch"
        )
    if identical and not all(identical.values()):
        print(f"ERROR: results differ from the baseline build: {identical}", file=sys.stderr)
        return 1
    report = {
        "bench": BENCH,
        "config": {
            "n_dense": n,
            "d": 100,
            "reps": args.reps,
            "threads": 1,
            "clock": args.clock,
            **info,
        },
        "machine": harness.finish(m, cmp),
        **cmp.as_dict(),
        "ratios": ratios,
        "identical_to_baseline": identical,
    }
    for k, v in ratios.items():
        print(f"{k:45s} {harness.fmt(v)}")
    r = ratios
    result = (
        f"1 thread, floor = `X.T @ (X @ w)`: default DPSCDClassifier epoch (Poisson L = 100, "
        f"C = 0.01, hidden alpha, jitter, lattice noise) dense {n} x 100 "
        f"{harness.fx(r.get('dense/dpscd_epoch / floor'), '.2f')} (kernel alone "
        f"{harness.fx(r.get('dense/dpscd_epoch_kernel / floor'), '.2f')}), a9a-like "
        f"{harness.fx(r.get('a9a-like/dpscd_epoch / floor'), '.2f')}; non-private SDCA hinge "
        f"epoch dense {harness.fx(r.get('dense/sdca_epoch / floor'), '.2f')}, a9a-like "
        f"{harness.fx(r.get('a9a-like/sdca_epoch / floor'), '.2f')}"
    )
    if "dense-in-cache / dense, paired" in r:
        result += (
            f"; the dense epoch's visits on {args.in_cache_rows} rows in cache: "
            f"{r['dense-in-cache / dense, paired']:.2f} of its time"
        )
    if oldcore is not None:
        result += (
            f"; before (baseline build): DP-SCD dense "
            f"{harness.fx(r.get('dense/baseline_dpscd_epoch / floor'), '.2f')} (kernel "
            f"{harness.fx(r.get('dense/baseline_dpscd_epoch_kernel / floor'), '.2f')}), a9a-like "
            f"{harness.fx(r.get('a9a-like/baseline_dpscd_epoch / floor'), '.2f')}; SDCA dense "
            f"{harness.fx(r.get('dense/baseline_sdca_epoch / floor'), '.2f')}, a9a-like "
            f"{harness.fx(r.get('a9a-like/baseline_sdca_epoch / floor'), '.2f')} ("
            f"{f'equal to rtol {args.rtol:g}' if args.rtol > 0 else 'bit-identical'}: "
            f"{all(identical.values())})"
        )
    met = (r.get("dense/dpscd_epoch / floor") or math.inf) <= TARGET
    row = harness.row(
        BENCH,
        result,
        f"DP-SCD epoch <= {TARGET:g}x floor (dense): {harness.met(met)}",
        report["machine"],
        f"[{BENCH}.json]({BENCH}.json); {args.reps} reps, medians, {args.clock} clock",
    )
    harness.publish(report, harness.out_dir(args), BENCH, None if args.quick else row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
