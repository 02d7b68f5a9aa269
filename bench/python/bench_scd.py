"""Stochastic coordinate descent (DP-SCD, Damaskinos et al. 2021): the C++ core vs the numpy
reference, vs scikit-learn's solvers (time to the same objective), and vs one memory pass.

All contenders run in one process, side by side on the same data, with their repetitions
interleaved (round robin over every contender), so that the ratios are measured under the same
background load. Reported numbers are medians over ``--reps`` repetitions.

Data
----
- ``msd-like``: **synthetic**, YearPredictionMSD's shape (``n = 463,715`` rows, ``d = 90``):
  :func:`privlearn.data.make_msd_like` (Gaussian features, a linear year model with a skewed
  noise), then :func:`~privlearn.data.maxabs_scale` (bounds from the data) and
  :func:`~privlearn.data.normalize_rows` (unit-norm rows, as DP-SCD assumes). Ridge targets:
  the years standardised (mean 0, variance 1: there is no intercept); hinge / logistic labels:
  ``+1`` when the year is above its median, else ``-1`` (about 50% positive).
- ``a9a-like``: the **synthetic** sparse a9a stand-in of ``bench_sgd.py`` (imported:
  ``n = 32,561``, 123 binary features in 14 one-hot groups, unit-norm rows, CSR, ~25%
  positive); the +/-1 labels are the targets of all three losses (ridge: regression on them).

Part 1: epoch time of private SCD
---------------------------------
Algorithm 1 (``variant="dual"``): Poisson batches of expected size ``L = 1000``, updates scaled
to ``|zeta| <= C = 1``, Gaussian noise ``noise_std = sqrt(2) sigma C`` with ``sigma = 1``
(Lemma 1), ``lambda = 1e-4``, one epoch (``ceil(n / L)`` steps); ridge on ``msd-like``, logistic
on ``a9a-like``.

- ``core``: :func:`privlearn.linear.scd_train` through the public Python function (input
  validation included), 1 and 2 threads (``--threads``).
- ``reference``: :func:`privlearn.reference.linear.scd_train` (numpy, BLAS limited to 1 thread),
  on the full data by default (``--ref-n`` for a subsample: then compared per example).
- ``validate``: the input validation alone (``prepare_scd``: finiteness check of X, etc.), to
  show the share of the epoch it takes (for information).

Target: core 1 thread >= 50x the reference (examples per second, every data set).

Part 2: time to the same objective at epsilon = infinity
--------------------------------------------------------
For each data set and each loss (ridge, hinge, logistic), ``P(w) = mean loss + (lambda/2)
||w||^2`` with ``lambda = 1e-4``, no intercept. "Same objective" = ``P(w) <= P* (1 + 1e-4)``
(``--rel-tol``). ``P*`` is computed once with tight solvers: the exact normal-equation solution
(ridge), a tight scikit-learn fit (``LinearSVC(tol=1e-8)``, ``LogisticRegression(tol=1e-10)``)
and a long SDCA run (``--opt-epochs``, 30); ``P*`` is the smallest primal value found, and the
largest dual value ``D(alpha)`` of the SDCA run certifies it: when ``(P* - D) / P*`` exceeds
``rel_tol / 10``, a 4x longer SDCA run tightens both (``certificate_ok`` says whether it
then holds).

- ``core scd``: ``scd_train(variant="scd")`` (SDCA: one example per step, a permutation per
  epoch, exact coordinate updates: closed form (ridge, hinge), up to ``SDCA_NEWTON`` Newton
  iterations in the log-odds (logistic); sequential, 1 thread). One untimed run with the
  objective recorded every ``n // 4`` steps (a quarter epoch) finds the first point that
  reaches the target; the timed runs stop there (``steps``), and their model is checked to
  reach it.
- ``core dual``: Algorithm 1 without noise or scaling (``L = 1000``, Poisson), 1 thread,
  epoch granularity, at most ``--dual-epochs`` epochs (for information: its sigma' = L safe step
  needs many more epochs than SDCA).
- ``sklearn``: ``Ridge(alpha=lambda n, solver="sag")``, ``LinearSVC(C=1/(lambda n),
  loss="hinge", dual=True)`` (liblinear dual coordinate descent) and ``LogisticRegression(
  C=1/(lambda n))`` (lbfgs, its default), all ``fit_intercept=False``, BLAS limited to 1 thread:
  the same minimiser. Untimed probe fits with ``tol`` = 1, 1e-1, 3e-2, 1e-2, ... find the loosest
  tolerance that reaches the target; the timed fits use it.

Target: sklearn time / core scd time >= 1 (core at least as fast, single-threaded), every data
set and loss.

Part 3: epoch time vs one memory pass
-------------------------------------
``numpy``: one ``X.T @ (X @ w)`` on the same array, BLAS limited to 1 and 2 threads (two reads
of X: memory-bandwidth bound). Ratio: the core's part-1 epoch time / that pass, same thread
count. Target: <= 2 on ``msd-like`` (the a9a-like array, ~5 MB, lives in cache, so the pass is
not a bandwidth reference there: its ratio is reported for information).

Usage::

    python bench/python/bench_scd.py [--quick] [--reps 5] [--out bench/results]

Writes ``<out>/scd.json`` (all measurements, probes, ratios, machine) and updates this
benchmark's row in ``<out>/README.md``.
"""

from __future__ import annotations

import importlib
import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import bench_sgd as _sgd
import harness
import numpy as np
import scipy.sparse as sp

from privlearn._losses import objective
from privlearn._specs.scd import SCD_DEFAULTS, prepare_scd
from privlearn.data import make_msd_like, maxabs_scale, normalize_rows
from privlearn.linear import scd_train as core_scd_train
from privlearn.random import key_from_seed
from privlearn.reference.linear import scd_train as reference_scd_train

blas_threads = harness.blas_threads
fmt, fx, ratio = harness.fmt, harness.fx, harness.ratio
Dataset = _sgd.Dataset

BENCH = "scd"
TARGET_REFERENCE = 50.0  # core 1-thread examples/s / reference examples/s
TARGET_SKLEARN = 1.0  # sklearn time to target / core scd 1-thread time to target
TARGET_BANDWIDTH = 2.0  # core epoch / numpy X.T @ (X @ w), same threads (msd-like)

#: Newton iterations (in the log-odds) of the logistic SDCA step: an exact coordinate step.
#: The private runs keep the paper's single Newton step in beta.
SDCA_NEWTON = 3
ALPHA = 1e-4  # lambda
BATCH = 1000  # L
CLIP = 1.0  # C
SIGMA = 1.0  # noise multiplier: noise_std = sqrt(2) sigma C (Lemma 1)
MSD_N = 463715
MSD_D = 90
EPOCH_LOSS = {"msd-like": "squared", "a9a-like": "log_loss"}  # part 1
LOSSES = ("squared", "hinge", "log_loss")  # part 2
LOSS_NAME = {"squared": "ridge", "hinge": "hinge", "log_loss": "logistic"}
#: probe tolerances of the scikit-learn solvers (loosest first)
SKLEARN_TOLS = (1.0,) + tuple(
    float(f"{m}e-{e}") for e in range(1, 11) for m in (3, 1)
)  # 1 .. 1e-10
CERTIFY = 10  # P* is certified when (P* - best dual) / P* <= rel_tol / CERTIFY
PROBES_PER_EPOCH = 4  # SDCA objective recorded every quarter epoch


# ---- data ---------------------------------------------------------------------------------


class ScdData(Dataset):
    """A design matrix with one target vector per loss (regression targets for ridge)."""

    def __init__(self, name: str, X: Any, y_reg: np.ndarray, y_cls: np.ndarray, note: str):
        super().__init__(name, X, y_cls, note)
        self.targets = {"squared": y_reg, "hinge": y_cls, "log_loss": y_cls}

    def head(self, m: int) -> ScdData:
        return ScdData(
            f"{self.name}[:{m}]",
            self.X[:m],
            self.targets["squared"][:m],
            self.y[:m],
            self.note,
        )


def make_msd(n: int, d: int, seed: int = 0) -> ScdData:
    X, year = make_msd_like(n, d, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PrivacyLeakWarning: bounds from the data (a benchmark)
        X = normalize_rows(maxabs_scale(X))
    y_reg = (year - year.mean()) / year.std()
    y_cls = np.where(year > np.median(year), 1.0, -1.0)
    return ScdData(
        "msd-like",
        X,
        y_reg,
        y_cls,
        f"SYNTHETIC, YearPredictionMSD's shape (not the real file): n = {n}, d = {d}; "
        "privlearn.data.make_msd_like(seed=0), maxabs_scale (data bounds), normalize_rows; ridge "
        "targets = standardised years, labels = sign(year > median) "
        f"({100 * np.mean(y_cls > 0):.1f}% positive)",
    )


def make_a9a(n: int) -> ScdData:
    base = _sgd.make_a9a_like(n)
    return ScdData("a9a-like", base.X, base.y, base.y, base.note + "; ridge targets = the labels")


def make_adult() -> ScdData:
    """The REAL UCI Adult training file (``$PRIVLEARN_DATA/adult``), the DP-SCD paper's
    preprocessing (:func:`privlearn.data.load_adult` ``preprocess="dpscd"``, scaler statistics
    of the file itself: a benchmark), rows scaled to unit norm; +/-1 labels (ridge: regression
    on them)."""
    from privlearn.data import load_adult

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PrivacyLeakWarning: scaler statistics from the data
        X, y = load_adult("train", preprocess="dpscd")
        X = normalize_rows(np.asarray(X, dtype=np.float64))
    y = np.asarray(y, dtype=np.float64)
    return ScdData(
        "adult",
        X,
        y,
        y,
        f"REAL UCI Adult (adult.data): n = {X.shape[0]}, d = {X.shape[1]} (dense), load_adult("
        f"preprocess='dpscd'), normalize_rows; {100 * np.mean(y > 0):.1f}% positive; ridge "
        "targets = the labels",
    )


# ---- contenders -----------------------------------------------------------------------------


class Contender(_sgd.Contender):
    """bench_sgd's contender (timed by ``bench_sgd.run_contenders``) with this benchmark's
    fields: ``part`` (epoch / to_target / bandwidth / validate), ``loss`` and extras."""

    def __init__(
        self,
        data: ScdData,
        part: str,
        impl: str,
        algo: str,
        loss: str | None,
        threads: int,
        fn: Callable[[], tuple[float | None, Any]],
        warm: Callable[[], Any],
        *,
        n_rows: int | None = None,
        note: str = "",
        extra: dict[str, Any] | None = None,
    ):
        super().__init__(
            data, impl, algo, threads, fn, warm, subsample=n_rows is not None, note=note
        )
        self.part = part
        self.loss = loss
        self.n_rows = data.n if n_rows is None else n_rows
        self.extra = extra or {}

    @property
    def label(self) -> str:
        loss = f"/{LOSS_NAME[self.loss]}" if self.loss else ""
        return f"{self.part}/{self.data.name}/{self.impl}/{self.algo}{loss}/{self.threads}t"

    def result(self) -> dict[str, Any]:
        assert self.timing is not None
        t = self.timing
        out = {
            "bench": BENCH,
            "part": self.part,
            "data": self.data.name.split("[")[0],
            "impl": self.impl,
            "algo": self.algo,
            "loss": self.loss,
            "threads": self.threads,
            "n": self.n_rows,
            "d": self.data.d,
            "subsample": self.subsample,
            **t.as_dict(),
            "rate": self.n_rows / t.median,
            "unit": "examples/s",
            "note": self.note,
        }
        out.update(self.extra)
        if self.part == "to_target" and t.value is not None:
            out["objective_at_stop"] = float(t.value)
            out["reached_target"] = bool(t.value <= self.extra["target_objective"])
        return out


def dp_kwargs(loss: str) -> dict[str, Any]:
    return {
        "loss": loss,
        "variant": "dual",
        "sampling": "poisson",
        "alpha": ALPHA,
        "batch_size": BATCH,
        "epochs": 1,
        "clip": CLIP,
        "noise_std": math.sqrt(2.0) * SIGMA * CLIP,
    }


def epoch_contenders(data: ScdData, threads: list[int], ref_n: int) -> list[Contender]:
    """Part 1: one epoch of DP-SCD (core, each thread count; reference, 1 thread) and the input
    validation alone."""
    loss = EPOCH_LOSS[data.name]
    y = data.targets[loss]
    key = key_from_seed(1)
    kw = dp_kwargs(loss)
    small = data.head(min(data.n, 20000))
    out = []
    for t in threads:

        def run(t: int = t) -> tuple[None, Any]:
            core_scd_train(data.X, y, key=key, n_threads=t, **kw)
            return None, None

        def warm(t: int = t) -> None:
            core_scd_train(small.X, small.targets[loss], key=key, n_threads=t, **kw)

        out.append(Contender(data, "epoch", "core", "dp-scd", loss, t, run, warm))
    ref = data.head(ref_n) if 0 < ref_n < data.n else data
    ref_y = ref.targets[loss]
    tiny = data.head(min(data.n, 2 * BATCH))

    def run_ref() -> tuple[float, Any]:
        with blas_threads(1):
            t0 = time.perf_counter()
            reference_scd_train(ref.X, ref_y, key=key, **kw)
            return time.perf_counter() - t0, None

    def warm_ref() -> None:
        with blas_threads(1):
            reference_scd_train(tiny.X, tiny.targets[loss], key=key, **kw)

    out.append(
        Contender(
            data,
            "epoch",
            "reference",
            "dp-scd",
            loss,
            1,
            run_ref,
            warm_ref,
            n_rows=ref.n if ref is not data else None,
            note="numpy twin" + (", on a subsample" if ref is not data else ", full data"),
        )
    )

    def run_validate() -> tuple[None, Any]:
        prepare_scd(data.X, y, key=key, **{**SCD_DEFAULTS, **kw})
        return None, None

    out.append(
        Contender(
            data,
            "validate",
            "core",
            "prepare_scd",
            loss,
            1,
            run_validate,
            lambda: None,
            note="the input validation of scd_train alone (included in the core's epoch)",
        )
    )
    return out


def bandwidth_contenders(data: ScdData, threads: list[int]) -> list[Contender]:
    """Part 3: one X.T @ (X @ w) in numpy / scipy, BLAS limited to each thread count."""
    X = data.X
    w = np.full(data.d, 1.0 / math.sqrt(data.d))
    out = []
    for t in threads:

        def run(t: int = t) -> tuple[float, Any]:
            with blas_threads(t):  # entered outside the timed part (it costs ~0.5 ms)
                t0 = time.perf_counter()
                u = X.T @ (X @ w)
                seconds = time.perf_counter() - t0
            return seconds, float(np.asarray(u).reshape(-1)[0])

        out.append(
            Contender(
                data,
                "bandwidth",
                "numpy" if not sp.issparse(X) else "scipy",
                "XT(Xw)",
                None,
                t,
                run,
                run,
                note="one X.T @ (X @ w): two reads of X; threadpoolctl limit "
                + ("(OpenBLAS gemv)" if not sp.issparse(X) else "(scipy CSR: single-threaded)"),
            )
        )
    return out


# ---- part 2: optimum, probes and time-to-target contenders ---------------------------------


def _sklearn_model(loss: str, n: int, tol: float) -> Any:
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.svm import LinearSVC

    if loss == "squared":
        return Ridge(
            alpha=ALPHA * n,
            fit_intercept=False,
            solver=RIDGE_SOLVER,
            tol=tol,
            max_iter=100000,
            random_state=0,
        )
    if loss == "hinge":
        return LinearSVC(
            C=1.0 / (ALPHA * n),
            loss="hinge",
            dual=True,
            fit_intercept=False,
            tol=tol,
            max_iter=1000000,
            random_state=0,
        )
    return LogisticRegression(C=1.0 / (ALPHA * n), fit_intercept=False, tol=tol, max_iter=100000)


RIDGE_SOLVER = "sag"  # --ridge-solver
SKLEARN_NAME = {
    "squared": "Ridge(solver='sag')",
    "hinge": "LinearSVC(loss='hinge', dual=True)",
    "log_loss": "LogisticRegression(solver='lbfgs')",
}


def sklearn_fit(X: Any, y: np.ndarray, loss: str, tol: float) -> tuple[float, np.ndarray, Any]:
    """(seconds, coef, n_iter) of one single-threaded fit."""
    model = _sklearn_model(loss, X.shape[0], tol)
    with blas_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at loose tolerances
        t0 = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - t0
    n_iter = getattr(model, "n_iter_", None)
    n_iter = None if n_iter is None else int(np.max(n_iter))
    return seconds, np.asarray(model.coef_, dtype=np.float64).reshape(-1), n_iter


def primal(data: ScdData, loss: str, w: np.ndarray) -> float:
    return float(objective(data.X, data.targets[loss], w, loss, ALPHA)[0])


def exact_ridge(data: ScdData) -> np.ndarray:
    X, y, n = data.X, data.targets["squared"], data.n
    G = np.asarray((X.T @ X).todense() if sp.issparse(X) else X.T @ X) / n
    b = np.asarray(X.T @ y).reshape(-1) / n
    return np.linalg.solve(G + ALPHA * np.eye(data.d), b)


def optimum_and_probes(
    data: ScdData,
    loss: str,
    opt_epochs: int,
    dual_epochs: int,
    threads: list[int],
    rel_tol: float,
) -> tuple[dict[str, Any], list[Contender]]:
    """P* (with its certificate), the untimed probes, and the timed to-target contenders."""
    X, y, n = data.X, data.targets[loss], data.n
    key = key_from_seed(2)
    info: dict[str, Any] = {"data": data.name, "loss": loss, "sklearn": SKLEARN_NAME[loss]}
    candidates: dict[str, float] = {}
    t0 = time.perf_counter()
    if loss == "squared":
        candidates["normal_equations"] = primal(data, loss, exact_ridge(data))
    else:
        _, coef, n_iter = sklearn_fit(X, y, loss, 1e-8 if loss == "hinge" else 1e-10)
        candidates["sklearn_tight"] = primal(data, loss, coef)
        info["sklearn_tight_n_iter"] = n_iter
    # a long SDCA run: its path is also the core's probe (objective every quarter epoch)
    every = max(1, n // PROBES_PER_EPOCH)
    with blas_threads(1):
        run = core_scd_train(
            X,
            y,
            key=key,
            n_threads=1,
            variant="scd",
            newton_steps=SDCA_NEWTON,
            loss=loss,
            alpha=ALPHA,
            epochs=opt_epochs,
            record_every=every,
        )
    candidates["sdca_long"] = float(run.primal_path[-1])
    d_best = float(np.max(run.dual_path))
    certified_epochs = opt_epochs
    if (min(candidates.values()) - d_best) / abs(min(candidates.values())) > rel_tol / CERTIFY:
        # the certificate is too loose to define the target: a 4x longer run (end point only)
        certified_epochs = 4 * opt_epochs
        with blas_threads(1):
            longer = core_scd_train(
                X,
                y,
                key=key,
                n_threads=1,
                variant="scd",
                newton_steps=SDCA_NEWTON,
                loss=loss,
                alpha=ALPHA,
                epochs=certified_epochs,
                record_every=certified_epochs * n,
            )
        candidates["sdca_longer"] = float(longer.primal_path[-1])
        d_best = max(d_best, float(longer.dual_path[-1]))
    p_star = min(candidates.values())
    target = p_star + rel_tol * abs(p_star)
    info.update(
        p_star=p_star,
        p_star_candidates=candidates,
        dual_lower_bound=d_best,
        certified_rel_gap=(p_star - d_best) / abs(p_star),
        target_objective=target,
        rel_tol=rel_tol,
        optimum_seconds=time.perf_counter() - t0,
        certificate_ok=(p_star - d_best) / abs(p_star) <= rel_tol / CERTIFY,
        sdca_opt_epochs=opt_epochs,
        sdca_certificate_epochs=certified_epochs,
    )
    rel = (run.primal_path - p_star) / abs(p_star)
    info["core_scd_path"] = {
        "epochs": (run.path_steps / n).round(4).tolist(),
        "rel_gap": rel.tolist(),
    }
    hit = np.flatnonzero(run.primal_path <= target)
    contenders: list[Contender] = []
    if hit.size:
        steps = int(run.path_steps[hit[0]])
        info["core_scd_steps"] = steps
        info["core_scd_epochs"] = steps / n

        def timed_scd(steps: int = steps) -> tuple[float, float]:
            t1 = time.perf_counter()
            r = core_scd_train(
                X,
                y,
                key=key,
                n_threads=1,
                variant="scd",
                newton_steps=SDCA_NEWTON,
                loss=loss,
                alpha=ALPHA,
                steps=steps,
            )
            seconds = time.perf_counter() - t1
            return seconds, primal(data, loss, r.coef)

        contenders.append(
            Contender(
                data,
                "to_target",
                "core",
                "scd",
                loss,
                1,
                timed_scd,
                lambda: None,
                note="SDCA (variant='scd'), stopped at the first quarter epoch reaching the target",
                extra={"steps": steps, "epochs": steps / n, "target_objective": target},
            )
        )
    else:
        info["core_scd_steps"] = None
        info["core_scd_note"] = f"target not reached in {opt_epochs} epochs"

    # Algorithm 1 without noise (information): epoch granularity
    steps_per_epoch = -(-n // BATCH)
    with blas_threads(1):
        drun = core_scd_train(
            X,
            y,
            key=key,
            n_threads=max(threads),
            variant="dual",
            loss=loss,
            alpha=ALPHA,
            batch_size=BATCH,
            epochs=dual_epochs,
            record_every=steps_per_epoch,
        )
    dhit = np.flatnonzero(drun.primal_path <= target)
    info["core_dual_path"] = {
        "epochs": (drun.path_steps / steps_per_epoch).round(4).tolist(),
        "rel_gap": ((drun.primal_path - p_star) / abs(p_star)).tolist(),
    }
    if dhit.size:
        epochs = int(round(drun.path_steps[dhit[0]] / steps_per_epoch))
        info["core_dual_epochs"] = epochs
        # single-threaded only: part 2 compares single-threaded solvers (its epoch-time
        # scaling with threads is part 1's), and 2-thread runs of many epochs are what
        # suffers most from background load on a 2-core machine
        for t in (1,):

            def timed_dual(t: int = t, epochs: int = epochs) -> tuple[float, float]:
                t1 = time.perf_counter()
                r = core_scd_train(
                    X,
                    y,
                    key=key,
                    n_threads=t,
                    variant="dual",
                    loss=loss,
                    alpha=ALPHA,
                    batch_size=BATCH,
                    epochs=epochs,
                )
                seconds = time.perf_counter() - t1
                return seconds, primal(data, loss, r.coef)

            contenders.append(
                Contender(
                    data,
                    "to_target",
                    "core",
                    "dual",
                    loss,
                    t,
                    timed_dual,
                    lambda: None,
                    note=f"Algorithm 1 without noise or scaling, L = {BATCH}, Poisson; "
                    f"{epochs} epochs",
                    extra={"epochs": epochs, "target_objective": target},
                )
            )
    else:
        info["core_dual_epochs"] = None
        info["core_dual_note"] = (
            f"target not reached in {dual_epochs} epochs (relative gap after them: "
            f"{(drun.primal_path[-1] - p_star) / abs(p_star):.2e})"
        )

    # scikit-learn: loosest tolerance that reaches the target
    probes = []
    chosen = None
    for tol in SKLEARN_TOLS:
        seconds, coef, n_iter = sklearn_fit(X, y, loss, tol)
        value = primal(data, loss, coef)
        probes.append(
            {
                "tol": tol,
                "seconds": seconds,
                "n_iter": n_iter,
                "rel_gap": (value - p_star) / abs(p_star),
            }
        )
        if value <= target:
            chosen = tol
            break
    info["sklearn_probes"] = probes
    info["sklearn_tol"] = chosen
    if chosen is not None:

        def timed_sklearn(tol: float = chosen) -> tuple[float, float]:
            seconds, coef, _ = sklearn_fit(X, y, loss, tol)
            return seconds, primal(data, loss, coef)

        contenders.append(
            Contender(
                data,
                "to_target",
                "sklearn",
                SKLEARN_NAME[loss],
                loss,
                1,
                timed_sklearn,
                lambda: None,
                note=f"fit time at tol = {chosen:g} (the loosest probe reaching the target); "
                "BLAS limited to 1 thread",
                extra={"tol": chosen, "target_objective": target},
            )
        )
    return info, contenders


# ---- ratios and reporting -------------------------------------------------------------------


def find(
    results: list[dict[str, Any]],
    part: str,
    data: str,
    impl: str,
    algo: str,
    loss: str | None = None,
    threads: int = 1,
    key: str = "median_s",
) -> float | None:
    for r in results:
        if (r["part"], r["data"], r["impl"], r["algo"], r["threads"]) == (
            part,
            data,
            impl,
            algo,
            threads,
        ) and (loss is None or r["loss"] == loss):
            return float(r[key])
    return None


def compute_ratios(
    results: list[dict[str, Any]], data_names: list[str], threads: list[int]
) -> dict[str, Any]:
    per_data: dict[str, Any] = {}
    ref_ratios: list[float | None] = []
    sk_ratios: list[float | None] = []
    bw_ratios: list[float | None] = []
    for data in data_names:
        r: dict[str, Any] = {}
        core_rate = find(results, "epoch", data, "core", "dp-scd", key="rate")
        ref_rate = find(results, "epoch", data, "reference", "dp-scd", key="rate")
        r["epoch_core_1t_over_reference"] = ratio(core_rate, ref_rate)
        ref_ratios.append(r["epoch_core_1t_over_reference"])
        core_1t = find(results, "epoch", data, "core", "dp-scd")
        r["epoch_core_1t_s"] = core_1t
        r["validate_share_of_core_1t_epoch"] = ratio(
            find(results, "validate", data, "core", "prepare_scd"), core_1t
        )
        for t in threads:
            epoch_t = find(results, "epoch", data, "core", "dp-scd", threads=t)
            algo = "XT(Xw)"
            impl = "scipy" if data == "a9a-like" else "numpy"
            r[f"epoch_core_{t}t_over_xtxw_{t}t"] = ratio(
                epoch_t, find(results, "bandwidth", data, impl, algo, threads=t)
            )
            if data == "msd-like":
                bw_ratios.append(r[f"epoch_core_{t}t_over_xtxw_{t}t"])
            if t != 1:
                r[f"epoch_core_{t}t_speedup"] = ratio(core_1t, epoch_t)
                r[f"epoch_core_{t}t_speedup_best_rep"] = ratio(
                    find(results, "epoch", data, "core", "dp-scd", key="min_s"),
                    find(results, "epoch", data, "core", "dp-scd", threads=t, key="min_s"),
                )
        for loss in LOSSES:
            name = LOSS_NAME[loss]
            scd = find(results, "to_target", data, "core", "scd", loss)
            skl = find(results, "to_target", data, "sklearn", SKLEARN_NAME[loss], loss)
            r[f"to_target_{name}_core_scd_s"] = scd
            r[f"to_target_{name}_sklearn_s"] = skl
            r[f"to_target_{name}_sklearn_over_core_scd"] = ratio(skl, scd)
            sk_ratios.append(r[f"to_target_{name}_sklearn_over_core_scd"])
            dual = find(results, "to_target", data, "core", "dual", loss)
            r[f"to_target_{name}_core_dual_1t_s"] = dual
            r[f"to_target_{name}_sklearn_over_core_dual_1t"] = ratio(skl, dual)
        per_data[data] = r

    def worst(values: list[float | None], fn: Callable[[list[float]], float]) -> float | None:
        present = [v for v in values if v is not None]
        return fn(present) if present and len(present) == len(values) else None

    ref_min = worst(ref_ratios, min)
    sk_min = worst(sk_ratios, min)
    bw_max = worst(bw_ratios, max)
    return {
        "per_data": per_data,
        "core_over_reference_min": ref_min,
        "sklearn_over_core_scd_min": sk_min,
        "epoch_over_xtxw_msd_max": bw_max,
        "targets": {
            "core_over_reference_min": {
                "target": f">= {TARGET_REFERENCE} (epoch, 1 thread, every data set)",
                "met": ref_min is not None and ref_min >= TARGET_REFERENCE,
            },
            "sklearn_over_core_scd_min": {
                "target": f">= {TARGET_SKLEARN} (time to target, 1 thread, every data set and "
                "loss; a contender that never reaches the target fails it)",
                "met": sk_min is not None and sk_min >= TARGET_SKLEARN,
            },
            "epoch_over_xtxw_msd_max": {
                "target": f"<= {TARGET_BANDWIDTH} (msd-like, every thread count)",
                "met": bw_max is not None and bw_max <= TARGET_BANDWIDTH,
            },
        },
    }


def fs(x: float | None) -> str:
    """Seconds for humans, or 'n/a'."""
    if x is None:
        return "n/a"
    return f"{x * 1e3:.1f} ms" if x < 1.0 else f"{x:.2f} s"


def print_table(
    results: list[dict[str, Any]], ratios: dict[str, Any], problems: list[dict[str, Any]]
) -> None:
    print(
        f"{'part':<9} {'data':<9} {'impl':<10} {'algo':<35} {'loss':<8} {'thr':>3} "
        f"{'median':>9} {'examples/s':>11}  extra"
    )
    for r in results:
        extra = ""
        if r["part"] == "to_target":
            stop = r.get("tol", r.get("epochs"))
            extra = ("tol " if "tol" in r else "epochs ") + f"{stop:g}"
            extra += "" if r.get("reached_target", True) else "  (TARGET MISSED)"
        impl = r["impl"] + ("*" if r["subsample"] else "")
        loss = LOSS_NAME[r["loss"]] if r["loss"] else ""
        print(
            f"{r['part']:<9} {r['data']:<9} {impl:<10} {r['algo']:<35} {loss:<8} "
            f"{r['threads']:>3} {fs(r['median_s']):>9} {_sgd.fmt_rate(r['rate']):>11}  {extra}"
        )
    print("(* = on a subsample, compared per example)")
    print()
    print("optimum P* per problem (relative target gap, certificate = (P* - best dual) / P*):")
    for p in problems:
        print(
            f"  {p['data']:<9} {LOSS_NAME[p['loss']]:<8} P* = {p['p_star']:.10g}  "
            f"certified gap {p['certified_rel_gap']:.1e}"
            f"{'' if p['certificate_ok'] else ' (LOOSE)'}  core scd stops at "
            f"{fmt(p.get('core_scd_epochs'), '.2f')} epochs; dual at "
            f"{p.get('core_dual_epochs') or 'n/a'} epochs; sklearn tol "
            f"{p['sklearn_tol'] if p['sklearn_tol'] is not None else 'n/a'}"
        )
    print()
    for data, r in ratios["per_data"].items():
        print(f"[{data}]")
        for name, value in r.items():
            print(f"  {name:<52} {fmt(value, '.3g')}")
    met = {True: "met", False: "NOT met"}
    t = ratios["targets"]
    print(
        f"\ncore / reference, epoch, 1 thread, worst case      : "
        f"{fx(ratios['core_over_reference_min'], '.1f')} "
        f"(target >= {TARGET_REFERENCE:.0f}x: {met[t['core_over_reference_min']['met']]})"
    )
    print(
        f"sklearn / core scd, time to target, 1 thread, worst : "
        f"{fx(ratios['sklearn_over_core_scd_min'], '.2f')} "
        f"(target >= {TARGET_SKLEARN:.0f}x: {met[t['sklearn_over_core_scd_min']['met']]})"
    )
    print(
        f"core epoch / X.T @ (X @ w), msd-like, worst        : "
        f"{fx(ratios['epoch_over_xtxw_msd_max'], '.2f')} "
        f"(target <= {TARGET_BANDWIDTH:.0f}x: {met[t['epoch_over_xtxw_msd_max']['met']]})"
    )


def readme_row(report: dict[str, Any], json_name: str, bench: str = BENCH) -> str:
    """This benchmark's row of the results table in README.md (a partial run lists only the
    parts it measured, and only their targets)."""
    r, m, cfg = report["ratios"], report["machine"], report["config"]
    t = r["targets"]
    measured = set(cfg.get("parts", ("epoch", "to_target", "bandwidth")))
    parts = []
    for data, v in r["per_data"].items():
        tt = ", ".join(
            f"{name} {fx(v[f'to_target_{name}_sklearn_over_core_scd'], '.2f')}"
            for name in (LOSS_NAME[loss] for loss in LOSSES)
        )
        bw = ", ".join(
            f"{th}t {fx(v[f'epoch_core_{th}t_over_xtxw_{th}t'], '.1f')}" for th in cfg["threads"]
        )
        text = []
        if "epoch" in measured:
            text.append(
                f"DP-SCD epoch (L = {BATCH}) 1t {fs(v['epoch_core_1t_s'])}, core/reference "
                f"{fx(v['epoch_core_1t_over_reference'], '.1f')}"
            )
        if "to_target" in measured:
            text.append(f"time to target sklearn/core-SDCA {tt}")
        if "bandwidth" in measured and "epoch" in measured:
            text.append(f"epoch / X^T(Xw) {bw}")
        parts.append(f"{data}: " + "; ".join(text))
    result = "; ".join(parts)
    verdicts = []
    if "epoch" in measured:
        verdicts.append(
            f"core >= {TARGET_REFERENCE:.0f}x reference: "
            f"{harness.met(t['core_over_reference_min']['met'])}"
        )
    if "to_target" in measured:
        verdicts.append(
            "core at least as fast as sklearn to target: "
            f"{harness.met(t['sklearn_over_core_scd_min']['met'])}"
        )
    if "bandwidth" in measured and "epoch" in measured:
        verdicts.append(
            f"epoch <= {TARGET_BANDWIDTH:.0f}x X^T(Xw) (msd-like): "
            f"{harness.met(t['epoch_over_xtxw_msd_max']['met'])}"
        )
    targets = "; ".join(verdicts)
    sizes = {
        "msd-like": f"msd-like (synthetic) n = {cfg['msd_n']}, d = {cfg['msd_d']}",
        "a9a-like": f"a9a-like (synthetic) n = {cfg['a9a_n']}",
        "adult": "adult (real UCI file, dense, 88 columns)",
    }
    variant = ""
    if cfg.get("ridge_solver", "sag") != "sag":
        variant += f"; ridge vs Ridge(solver='{cfg['ridge_solver']}')"
    if cfg.get("baseline_core"):
        variant += "; BEFORE: core contenders on the baseline build"
    details = (
        f"[{json_name}]({json_name}), "
        + "; ".join(sizes[d] for d in r["per_data"])
        + f"; target P* (1 + {cfg['rel_tol']:g}); {cfg['reps']} reps{variant}"
    )
    mach = harness.readme_machine(m, "scikit-learn")
    return harness.row(bench, result, targets, m, details, mach)


def main(argv: list[str] | None = None) -> int:
    p = harness.cli(__doc__, BENCH)  # --quick: msd-like n = 50,000, fewer epochs
    p.add_argument("--n", type=int, default=None, help=f"msd-like rows (default {MSD_N})")
    p.add_argument("--d", type=int, default=MSD_D, help=f"msd-like features (default {MSD_D})")
    p.add_argument(
        "--a9a-n", type=int, default=_sgd.A9A_N, help=f"a9a-like rows (default {_sgd.A9A_N})"
    )
    p.add_argument(
        "--ref-n", type=int, default=0, help="reference subsample rows (default 0: full data)"
    )
    p.add_argument("--threads", type=harness.parse_threads, default=[1, 2], help="e.g. 1,2")
    p.add_argument("--rel-tol", type=float, default=1e-4, help="target: P <= P* (1 + rel_tol)")
    p.add_argument("--opt-epochs", type=int, default=None, help="SDCA epochs for P* (30)")
    p.add_argument("--dual-epochs", type=int, default=None, help="max dual epochs (20)")
    p.add_argument(
        "--parts", default="epoch,to_target,bandwidth", help="subset of epoch,to_target,bandwidth"
    )
    p.add_argument(
        "--datasets",
        default="msd-like,a9a-like",
        help="subset of msd-like,a9a-like,adult (adult: the real UCI file in $PRIVLEARN_DATA)",
    )
    p.add_argument(
        "--ridge-solver",
        default="sag",
        choices=("sag", "sparse_cg"),
        help="scikit-learn's Ridge solver of part 2 (default sag)",
    )
    p.add_argument(
        "--tag",
        default="",
        help="a variant run: writes <out>/scd_<tag>.json and its own README row scd_<tag> "
        "(also for a partial run)",
    )
    p.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="folder holding a package oldcore with an older _core build: the core contenders "
        "run on it (a before/after comparison)",
    )
    args = p.parse_args(argv)
    if args.baseline is not None:
        sys.path.insert(0, str(args.baseline))
        import privlearn.linear.scd as _scd_module

        _scd_module._core = harness.CoreShim(importlib.import_module("oldcore._core"))
    global RIDGE_SOLVER
    RIDGE_SOLVER = args.ridge_solver
    SKLEARN_NAME["squared"] = f"Ridge(solver='{RIDGE_SOLVER}')"
    names = [x.strip() for x in args.datasets.split(",") if x.strip()]
    if not names or not set(names) <= {"msd-like", "a9a-like", "adult"}:
        p.error("--datasets: expected a subset of msd-like,a9a-like,adult")
    n = args.n if args.n is not None else (50_000 if args.quick else MSD_N)
    opt_epochs = args.opt_epochs or (15 if args.quick else 30)
    dual_epochs = args.dual_epochs or (10 if args.quick else 20)
    parts = {x.strip() for x in args.parts.split(",") if x.strip()}
    if not parts <= {"epoch", "to_target", "bandwidth"}:
        p.error("--parts: expected a subset of epoch,to_target,bandwidth")
    if min(n, args.d, args.a9a_n, args.reps, opt_epochs, dual_epochs) < 1 or args.ref_n < 0:
        p.error("sizes, --reps and epochs must be positive")
    if n < BATCH or args.a9a_n < BATCH:
        p.error(f"the data sets need at least {BATCH} rows")
    if not 0 < args.rel_tol < 1:
        p.error("--rel-tol must lie in (0, 1)")

    machine = harness.machine()
    t0 = time.perf_counter()
    makers = {
        "msd-like": lambda: make_msd(n, args.d),
        "a9a-like": lambda: make_a9a(args.a9a_n),
        "adult": make_adult,
    }
    datasets = [makers[name]() for name in names]
    print(
        f"bench {BENCH}: msd-like n = {n}, d = {args.d}; a9a-like n = {args.a9a_n}; reps = "
        f"{args.reps}; threads = {args.threads}; {machine['cpu_count']} cores "
        f"({machine['cpu_model']}); data in {time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )

    contenders: list[Contender] = []
    problems: list[dict[str, Any]] = []
    with harness.BackgroundLoad() as probe_load:
        for data in datasets:
            if "epoch" in parts:
                contenders += epoch_contenders(data, args.threads, args.ref_n)
            if "bandwidth" in parts:
                contenders += bandwidth_contenders(data, args.threads)
            if "to_target" in parts:
                for loss in LOSSES:
                    t1 = time.perf_counter()
                    info, found = optimum_and_probes(
                        data, loss, opt_epochs, dual_epochs, args.threads, args.rel_tol
                    )
                    problems.append(info)
                    contenders += found
                    print(
                        f"  probed {data.name}/{LOSS_NAME[loss]} in "
                        f"{time.perf_counter() - t1:.1f} s: P* = {info['p_star']:.8g}, scd "
                        f"{fmt(info.get('core_scd_epochs'), '.2f')} epochs, sklearn tol "
                        f"{info['sklearn_tol']}",
                        file=sys.stderr,
                    )

    harness.finish(machine, _sgd.run_contenders(contenders, args.reps))
    machine["background_load_cores_probes"] = probe_load.cores

    results = [c.result() for c in contenders]
    ratios = compute_ratios(results, [d.name for d in datasets], args.threads)
    notes = [
        "Medians of interleaved repetitions in one process (round robin over all contenders); "
        "a contender faster than 0.2 s per call is called 'inner' times per sample and its "
        "time divided.",
        "core: privlearn.linear.scd_train via Python, input validation included (its share is "
        "the 'validate' row).",
        "reference: privlearn.reference.linear.scd_train, numpy, BLAS limited to 1 thread.",
        "Part 2 (epsilon = infinity): 'same objective' = P(w) <= P* (1 + rel_tol); P* = the "
        "smallest primal value of the tight solvers, certified by the largest SDCA dual value. "
        "Core SDCA stops at the first quarter epoch reaching the target (found by an untimed "
        "recorded run; its timed runs are checked: reached_target). scikit-learn uses the "
        "loosest probed tol reaching the target (untimed probes, see problems[].sklearn_probes)."
        " The scikit-learn models map lambda as alpha = lambda n (Ridge) and C = 1 / (lambda n) "
        "(LinearSVC, LogisticRegression), fit_intercept=False: the same minimiser.",
        "Part 3: numpy X.T @ (X @ w) with threadpoolctl limiting OpenBLAS to the thread count; "
        "the a9a-like array is cache-resident, so its ratio is not a bandwidth comparison.",
        "Both data sets are SYNTHETIC stand-ins (msd-like: privlearn.data.make_msd_like; "
        "a9a-like: bench_sgd.make_a9a_like).",
    ]
    report: dict[str, Any] = {
        "bench": BENCH,
        "config": {
            "msd_n": n,
            "msd_d": args.d,
            "a9a_n": args.a9a_n,
            "ref_n": args.ref_n,
            "reps": args.reps,
            "threads": args.threads,
            "quick": args.quick,
            "parts": sorted(parts),
            "alpha": ALPHA,
            "dp_scd": {
                "batch_size": BATCH,
                "sampling": "poisson",
                "clip": CLIP,
                "sigma": SIGMA,
                "noise_std": math.sqrt(2.0) * SIGMA * CLIP,
                "epoch_loss": EPOCH_LOSS,
            },
            "rel_tol": args.rel_tol,
            "opt_epochs": opt_epochs,
            "dual_epochs": dual_epochs,
            "sklearn_tols": SKLEARN_TOLS,
            "datasets": {d.name: d.note for d in datasets},
            "ridge_solver": RIDGE_SOLVER,
            "baseline_core": harness.tree_label(args.baseline),
            "tag": args.tag,
        },
        "machine": machine,
        "results": results,
        "problems": problems,
        "ratios": ratios,
        "notes": notes,
    }

    print_table(results, ratios, problems)
    load = machine.get("background_load_cores")
    if load is not None:
        print(f"background load during the timed runs                : {load:.2f} cores")
        if load > 0.25:
            print("warning: other processes were busy; 2-thread numbers are understated")

    bench = f"{BENCH}_{args.tag}" if args.tag else BENCH
    # a partial untagged run leaves README alone
    full = parts == {"epoch", "to_target", "bandwidth"} and names == ["msd-like", "a9a-like"]
    row = readme_row(report, f"{bench}.json", bench) if full or args.tag else None
    harness.publish(report, harness.out_dir(args), bench, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
