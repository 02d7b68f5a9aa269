"""The side-by-side timing harness shared by every benchmark of ``bench/python``.

One home for what each benchmark used to repeat:

- :func:`compare` times contenders **interleaved** (round robin per repetition, the order
  alternating between rounds, so a drifting background load hits every contender alike) and
  returns medians, quartiles (IQR) and ratios to a named baseline; ``clock="cpu"`` times the
  calling thread's CPU time instead of wall time (:data:`CLOCKS`);
- :func:`machine` records where and how it ran: CPU model, cores, load average before (and,
  through :func:`finish`, after), thread settings, versions of privlearn / numpy /
  scikit-learn and the peers, and the git commit;
- :class:`BackgroundLoad` measures the CPU time used by other processes while it runs;
- :func:`stopwatch` / :func:`timed` time one block / call (a single measurement, e.g. a fit
  inside an accuracy study); :func:`in_child` times one call in a child process under a
  wall-clock limit (a crash or a time-out is reported, not fatal);
- :func:`cli` is the command-line convention (``--quick``, ``--reps``, ``--out``, and
  ``--clock`` on request): a quick run
  writes to a scratch folder unless ``--out`` is given, so it never overwrites the published
  ``bench/results``; :func:`publish` writes ``<out>/<bench>.json`` and (re)writes that
  benchmark's row of ``<out>/README.md``.

A new benchmark is a short file (``bench/README.md`` has it whole)::

    import harness

    def main(argv=None):
        args = harness.cli(__doc__, "dot").parse_args(argv)  # --quick, --reps, --out
        x = np.random.default_rng(0).random(10_000 if args.quick else 1_000_000)
        m = harness.machine()
        cmp = harness.compare({"numpy": lambda: x @ x, "loop": lambda: sum(x * x)},
                              args.reps, baseline="loop")
        result = f"numpy {harness.fx(cmp.speedup('numpy'))} the loop"
        row = harness.row("dot", result, "n/a", harness.finish(m, cmp), "[dot.json](dot.json)")
        harness.publish({"bench": "dot", "machine": m, **cmp.as_dict()},
                        harness.out_dir(args), "dot", row)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"
#: where ``--quick`` runs write unless ``--out`` is given
SCRATCH = Path(tempfile.gettempdir()) / "privlearn-bench"

#: distributions whose versions the machine record lists (missing ones are recorded as None)
PEERS = (
    "numpy",
    "scipy",
    "scikit-learn",
    "threadpoolctl",
    "diffprivlib",
    "dp-accounting",
    "prv-accountant",
    "torch",
    "opacus",
    "category-encoders",
    "tenseal",
    "dask",
)

#: environment variables that set thread counts or thread behaviour
THREAD_ENV = (
    "OMP_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "PRIVLEARN_MIN_THREAD_WORK_NS",
)

#: the clocks :func:`compare` can time with: wall time, or the calling thread's CPU time
#: (robust on a busy shared machine when everything timed runs on the calling thread; work
#: handed to other threads, e.g. OpenMP or BLAS pools, is not counted)
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}

#: the standard note on how a :func:`compare` benchmark's numbers were taken
MEDIANS_NOTE = (
    "Medians of interleaved repetitions in one process (round robin over all contenders); "
    "a contender faster than 0.2 s per call is called 'inner' times per sample and its "
    "time divided."
)

README_HEADER = """\
# Benchmark results

Written by the scripts in `bench/python/` (one JSON file per benchmark, with every measurement,
the derived ratios and the machine). Conventions:

- Every number is the **median** of several repetitions; the JSON files also keep the minimum.
- Contenders are run **side by side in one process** on the same data (repetitions interleaved),
  and claims are **ratios** between them: these machines are shared and noisy, so absolute
  rates move from run to run and between machines; the ratios are much steadier.
- Each benchmark owns one row of the table below; re-running a benchmark replaces its row.
- The benchmark scripts time, record and write through `bench/python/harness.py`:
  `compare()` runs the contenders round robin (order alternating between rounds) and keeps
  medians, quartiles and ratios to a baseline; the JSON's `machine` holds the CPU, cores, load
  average before and after, the background load, thread settings, versions (privlearn, numpy,
  peers) and the git commit. `--quick` runs write to `/tmp/privlearn-bench` unless `--out` is
  given, so they never replace these files.

| benchmark | result (medians) | targets | machine | date | details |
|---|---|---|---|---|---|
"""


# ---- the machine -----------------------------------------------------------------------------


def cpu_model() -> str | None:
    """CPU model name from /proc/cpuinfo (Linux), else platform.processor()."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def git(path: Path, *args: str, timeout: float = 30) -> str | None:
    """The stripped output of ``git -C path args...``, or None when git fails or is missing."""
    try:
        run = subprocess.run(
            ["git", "-C", str(path), *args], capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return run.stdout.strip() if run.returncode == 0 else None


def git_commit(root: Path = REPO) -> str | None:
    """The repository's HEAD commit (with ``-dirty`` when tracked files changed), if known."""
    head = git(root, "rev-parse", "--short", "HEAD", timeout=10)
    if head is None:
        return None
    return head + ("-dirty" if git(root, "status", "--porcelain", "--untracked-files=no") else "")


def version(dist: str) -> str | None:
    """Installed version of a distribution, or None."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _version

    try:
        return _version(dist)
    except PackageNotFoundError:
        return None


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or None where unknown."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def thread_settings() -> dict[str, Any]:
    """Thread-related environment, the core's OpenMP build and default, and the BLAS pools."""
    out: dict[str, Any] = {k: os.environ.get(k) for k in THREAD_ENV}
    try:
        from privlearn import _core

        out["has_openmp"] = bool(_core.has_openmp)
        out["core_default_threads"] = int(_core.default_threads())
    except (ImportError, AttributeError):
        out["has_openmp"] = out["core_default_threads"] = None
    try:
        from threadpoolctl import threadpool_info

        out["blas"] = [
            {k: p.get(k) for k in ("internal_api", "num_threads", "version")}
            for p in threadpool_info()
        ]
    except ImportError:
        out["blas"] = None
    return out


def machine(peers: tuple[str, ...] = PEERS) -> dict[str, Any]:
    """Where, when and how the benchmark runs (call it before timing; :func:`finish` after)."""
    try:
        usable: int | None = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = None
    try:
        import privlearn

        pl_version = getattr(privlearn, "__version__", None)
    except ImportError:
        pl_version = None
    threads = thread_settings()
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "mem_total_gib": mem_total_gib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "privlearn": pl_version,
        "numpy": version("numpy"),
        "peers": {p: version(p) for p in peers},
        "git_commit": git_commit(),
        # flat copies kept for the existing readers of the JSON files
        "has_openmp": threads["has_openmp"],
        "core_default_threads": threads["core_default_threads"],
        "omp_num_threads_env": threads["OMP_NUM_THREADS"],
        "threads": threads,
        "loadavg_start": loadavg(),
    }


def mem_total_gib() -> float | None:
    """Total memory of the machine in GiB (Linux), or None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def status_kib(field: str) -> int | None:
    """A ``kB`` field of /proc/self/status (``VmRSS``, ``VmHWM``), or None off Linux."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def reset_peak_memory() -> bool:
    """Reset this process's peak RSS (VmHWM) to its current RSS; False where not allowed."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def finish(m: dict[str, Any], background: Any = None) -> dict[str, Any]:
    """Adds the end-of-run load average and the background load (a :class:`BackgroundLoad`,
    a :class:`Comparison`, or a number of cores) to the machine record ``m``; returns it."""
    m["loadavg_end"] = loadavg()
    cores = getattr(background, "background_load_cores", getattr(background, "cores", background))
    if cores is not None:
        m["background_load_cores"] = cores
    return m


def proc_stat_busy_s() -> float | None:
    """Busy CPU seconds of the whole machine since boot (all cores; Linux), or None."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    busy = sum(ticks) - ticks[3] - ticks[4]
    return busy / os.sysconf("SC_CLK_TCK")


class BackgroundLoad:
    """Measures the CPU time used by *other* processes (and stolen by the hypervisor) while
    the block runs: ``cores`` is that time per wall-clock second, i.e. about how many cores
    something else kept busy (0 = quiet machine). With ``children=True`` the benchmark's own
    (waited-for) child processes count as its own. Linux only (None elsewhere)."""

    def __init__(self, children: bool = False):
        self.children = children
        self.cores: float | None = None

    def _own(self) -> float:
        t = os.times()
        return t.user + t.system + (t.children_user + t.children_system if self.children else 0)

    def __enter__(self) -> BackgroundLoad:
        self.busy0 = proc_stat_busy_s()
        self.own0 = self._own()
        self.wall0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        busy1 = proc_stat_busy_s()
        wall = time.perf_counter() - self.wall0
        if self.busy0 is not None and busy1 is not None and wall > 0:
            other = (busy1 - self.busy0) - (self._own() - self.own0)
            self.cores = max(0.0, other / wall)


@contextlib.contextmanager
def blas_threads(n: int) -> Iterator[None]:
    """Limits the BLAS / OpenMP pools of numpy and scipy (threadpoolctl) inside the block."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - comes with scikit-learn
        yield
        return
    with threadpool_limits(limits=n):
        yield


# ---- timing ----------------------------------------------------------------------------------


@dataclass
class Partial:
    """Return this from a contender to count only part of its call: ``seconds`` replaces the
    wall time of the call (e.g. a training loop without its setup); ``value`` is kept."""

    seconds: float
    value: Any = None


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(wall seconds, result) of one call of ``fn``."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def limited(
    fn: Callable[[], Any], threads: int | None = None, per: float = 1.0
) -> Callable[[], Partial]:
    """A contender for :func:`compare`: ``fn`` run with the BLAS pools limited to ``threads``
    (:func:`blas_threads`, entered outside the timed part; None: no limit), its time divided
    by ``per`` (e.g. the iterations one call runs); ``fn``'s result is kept as the value."""

    def call() -> Partial:
        with blas_threads(threads) if threads is not None else contextlib.nullcontext():
            seconds, value = timed(fn)
        return Partial(seconds / per, value)

    return call


class stopwatch:  # noqa: N801 - used like a function: ``with stopwatch() as sw``
    """Wall time of a block: ``with stopwatch() as sw: ...`` then ``sw.seconds`` (and
    ``sw.cpu_seconds``, this process's CPU time); inside the block (or without ``with``)
    ``sw.elapsed()`` is the wall time so far."""

    def __init__(self) -> None:
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        self.seconds: float | None = None
        self.cpu_seconds: float | None = None

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def __enter__(self) -> stopwatch:
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = self.elapsed()
        self.cpu_seconds = time.process_time() - self.c0


def _child(
    fn: Callable[..., Any], args: tuple[Any, ...], imports: tuple[str, ...], conn: Any
) -> None:
    import importlib

    for module in imports:  # imported before the clock starts
        importlib.import_module(module)
    t0 = time.perf_counter()
    try:
        out: dict[str, Any] = {"value": fn(*args)}
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        out = {"error": f"{type(exc).__name__}: {str(exc)[:100]}"}
    out["seconds"] = round(time.perf_counter() - t0, 3)
    conn.send(out)


def in_child(
    fn: Callable[..., Any], *args: Any, limit_s: float = 120.0, imports: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Runs ``fn(*args)`` once in a child process (``fn`` must be importable: a module-level
    function) under a wall-clock limit of ``limit_s`` seconds, after importing ``imports``
    there (not timed). Returns ``{"value": ..., "seconds": ...}``, or ``{"error": ...}`` (with
    ``seconds``) when the call raised, or ``{"error": "timeout > ..."}``; never raises."""
    import multiprocessing as mp

    recv, send = mp.Pipe(False)
    proc = mp.Process(target=_child, args=(fn, args, imports, send))
    proc.start()
    out = recv.recv() if recv.poll(limit_s) else {"error": f"timeout > {limit_s:g} s"}
    proc.kill()
    proc.join()
    return out


@dataclass
class Timing:
    """The samples of one contender: seconds per call, one per repetition."""

    name: str
    times: list[float] = field(default_factory=list)
    inner: int = 1  #: calls per sample (the sample is their mean)
    value: Any = None  #: what the last call returned (unwrapped from :class:`Partial`)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def quartiles(self) -> tuple[float, float]:
        if len(self.times) < 2:
            return self.times[0], self.times[0]
        q = statistics.quantiles(self.times, n=4, method="inclusive")
        return q[0], q[2]

    @property
    def iqr(self) -> float:
        q1, q3 = self.quartiles
        return q3 - q1

    def as_dict(self) -> dict[str, Any]:
        q1, q3 = self.quartiles
        return {
            "reps": len(self.times),
            "inner": self.inner,
            "median_s": self.median,
            "min_s": min(self.times),
            "q1_s": q1,
            "q3_s": q3,
            "iqr_s": q3 - q1,
            "times_s": self.times,
        }


@dataclass
class Comparison:
    """What :func:`compare` measured."""

    timings: dict[str, Timing]
    baseline: str | None
    background_load_cores: float | None
    loadavg_start: list[float] | None
    loadavg_end: list[float] | None
    clock: str = "wall"  #: what the samples measure (a key of :data:`CLOCKS`)

    def __getitem__(self, name: str) -> Timing:
        return self.timings[name]

    def median(self, name: str) -> float:
        return self.timings[name].median

    def speedup(self, name: str, over: str | None = None) -> float:
        """How many times faster ``name`` is than ``over`` (default: the baseline), medians."""
        other = self.baseline if over is None else over
        if other is None:
            raise ValueError("speedup needs over= when compare() was given no baseline")
        return self.timings[other].median / self.timings[name].median

    def paired(self, name: str, over: str | None = None) -> float:
        """The median over rounds of ``name``'s time / ``over``'s time in the same round
        (default: the baseline). On a machine whose speed drifts from round to round this is
        steadier than a ratio of medians: both calls of a round saw the same machine."""
        other = self.baseline if over is None else over
        if other is None:
            raise ValueError("paired needs over= when compare() was given no baseline")
        a, b = self.timings[name].times, self.timings[other].times
        return statistics.median(x / y for x, y in zip(a, b, strict=True))

    def ratios(self) -> dict[str, float] | None:
        """median(name) / median(baseline) for every contender (time ratios; < 1 is faster)."""
        if self.baseline is None:
            return None
        base = self.timings[self.baseline].median
        return {k: t.median / base for k, t in self.timings.items()}

    def as_dict(self) -> dict[str, Any]:
        return {
            "timings": {k: t.as_dict() for k, t in self.timings.items()},
            "baseline": self.baseline,
            "ratio_to_baseline": self.ratios(),
            "background_load_cores": self.background_load_cores,
            "loadavg_start": self.loadavg_start,
            "loadavg_end": self.loadavg_end,
            "clock": self.clock,
        }


def _call(
    fn: Callable[[], Any], inner: int, t: Timing, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, float]:
    """(sample, wall): the mean seconds per call of ``inner`` calls by ``clock`` (a
    :class:`Partial`'s seconds where returned) and the mean wall time per call."""
    total = wall_total = 0.0
    for _ in range(inner):
        t0, c0 = time.perf_counter(), clock()
        out = fn()
        c1, wall = clock(), time.perf_counter() - t0
        wall_total += wall
        if isinstance(out, Partial):
            total += out.seconds
            t.value = out.value
        else:
            total += c1 - c0
            t.value = out
        del out
    return total / inner, wall_total / inner


def compare(
    contenders: Mapping[str, Callable[[], Any]],
    repeats: int = 5,
    warmup: int = 1,
    baseline: str | None = None,
    *,
    warm: Mapping[str, Callable[[], Any]] | None = None,
    min_sample_s: float = 0.0,
    around: Callable[[int, Any], Any] | None = None,
    group: Callable[[str], Any] | None = None,
    clock: str = "wall",
    verbose: bool = False,
) -> Comparison:
    """Time ``contenders`` side by side, their repetitions interleaved.

    Parameters
    ----------
    contenders : mapping name -> callable
        Each callable runs the timed work once. It may return :class:`Partial` to count only
        part of its call.
    repeats : int
        Samples per contender (the median is reported).
    warmup : int
        Untimed calls of each contender before timing (thread pools, caches, lazy imports).
    baseline : str, optional
        The contender that :meth:`Comparison.ratios` divides by.
    warm : mapping name -> callable, optional
        A cheaper warm-up per contender (e.g. on a slice of the data), instead of ``warmup``
        full calls.
    min_sample_s : float
        When positive, one calibrating call per contender sets ``inner`` so that a sample (the
        mean of ``inner`` calls, by wall time) lasts at least this long; a call that already
        lasts this long is kept as the first sample.
    around : callable, optional
        ``around(rep, key)`` returns a context manager entered around each round, or around
        each group of a round when ``group`` is given (e.g. a busy loop for the "load" group).
    group : callable, optional
        ``group(name)`` -> key: a round runs the contenders group by group (each group once,
        inside ``around(rep, key)``), in order, alternating as the contenders do.
    clock : {"wall", "cpu"}
        What a sample measures (:data:`CLOCKS`): wall time (``time.perf_counter``) or the
        calling thread's CPU time (``time.thread_time``). A :class:`Partial`'s seconds are
        taken as they are; ``min_sample_s`` is judged by wall time either way.
    verbose : bool
        Progress on stderr.

    Returns
    -------
    Comparison
        Per-contender :class:`Timing` (median, quartiles, minimum, samples), the background
        load during the timed rounds and the load average before and after.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    if baseline is not None and baseline not in contenders:
        raise ValueError(f"baseline {baseline!r} is not one of the contenders {list(contenders)}")
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {sorted(CLOCKS)}, got {clock!r}")
    tick = CLOCKS[clock]
    names = list(contenders)
    timings = {k: Timing(k) for k in names}
    for k in names:
        if warm is not None and k in warm:
            warm[k]()
        else:
            for _ in range(warmup):
                _call(contenders[k], 1, timings[k])
    load0 = loadavg()
    with BackgroundLoad() as bg:
        if min_sample_s > 0:
            for k in names:
                s, wall = _call(contenders[k], 1, timings[k], tick)
                if wall >= min_sample_s:
                    timings[k].times.append(s)
                else:
                    timings[k].inner = max(1, math.ceil(min_sample_s / max(wall, 1e-6)))
        for rep in range(repeats):
            order = names if rep % 2 == 0 else names[::-1]  # alternate: no fixed position
            blocks: dict[Any, list[str]] = {}
            for k in order:
                blocks.setdefault(None if group is None else group(k), []).append(k)
            for key, block in blocks.items():
                ctx = around(rep, key) if around is not None else contextlib.nullcontext()
                with ctx:
                    for k in block:
                        t = timings[k]
                        if len(t.times) < repeats:
                            t.times.append(_call(contenders[k], t.inner, t, tick)[0])
            if verbose:
                print(f"  round {rep + 1}/{repeats} done", file=sys.stderr, flush=True)
    return Comparison(timings, baseline, bg.cores, load0, loadavg(), clock)


# ---- command line and output -----------------------------------------------------------------


def cli(
    doc: str | None,
    bench: str,
    reps: int | None = 5,
    *,
    omit: tuple[str, ...] = (),
    clock: bool = False,
) -> argparse.ArgumentParser:
    """The common options: ``--quick``, ``--reps`` and ``--out`` (see :func:`out_dir`);
    ``reps=None`` leaves ``--reps`` None unless given (the script picks its own default);
    ``omit`` names options a script does without (e.g. ``("reps", "out")`` for a study that
    repeats over seeds and only prints); ``clock=True`` adds ``--clock {wall,cpu}`` (default
    wall) for :func:`compare`'s ``clock``."""
    p = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    if "quick" not in omit:
        p.add_argument("--quick", action="store_true", help="a small, fast run (writes to scratch)")
    if "reps" not in omit:
        p.add_argument(
            "--reps", type=int, default=reps, help=f"repetitions (median; default {reps or 'auto'})"
        )
    if "out" not in omit:
        p.add_argument(
            "--out",
            type=Path,
            default=None,
            help=f"results folder (default {RESULTS}; with --quick {SCRATCH})",
        )
    if clock:
        p.add_argument(
            "--clock",
            choices=sorted(CLOCKS),
            default="wall",
            help="wall time, or the calling thread's CPU time (robust on a busy shared machine "
            "when the timed work runs on the calling thread)",
        )
    return p


def out_dir(args: argparse.Namespace) -> Path:
    """``--out`` if given, else the scratch folder for ``--quick`` runs, else bench/results."""
    out = args.out if args.out is not None else (SCRATCH if args.quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_json(report: Any, path: Path) -> Path:
    """Writes ``report`` as indented JSON (non-JSON values through ``str``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return path


def publish(
    report: dict[str, Any], out: Path, bench: str, row: str | None, json_name: str | None = None
) -> Path:
    """Writes ``<out>/<bench>.json`` and, when ``row`` is given, (re)writes that benchmark's
    row of ``<out>/README.md``; returns the JSON path."""
    path = write_json(report, out / (json_name or f"{bench}.json"))
    if row is not None:
        update_readme(out / "README.md", row, bench)
    print(f"wrote {path}" + ("" if row is None else f" and {out / 'README.md'}"), file=sys.stderr)
    return path


def update_readme(path: Path, row: str, bench: str) -> None:
    """Create README.md with its header, or replace/append the table row of ``bench``."""
    text = path.read_text() if path.exists() else README_HEADER
    lines = text.splitlines()
    prefix = f"| `{bench}` |"
    for i, line in enumerate(lines):
        if line.startswith(prefix):
            lines[i] = row
            break
    else:
        # after the last row of the benchmark table (the first table: later sections have
        # tables of their own), or a new table at the end when there is none
        head = next((i for i, line in enumerate(lines) if line.startswith("| benchmark |")), None)
        if head is None:
            lines += ["", *README_HEADER.splitlines()[-2:], row]
        else:
            last = head
            while last + 1 < len(lines) and lines[last + 1].startswith("|"):
                last += 1
            lines.insert(last + 1, row)
    path.write_text("\n".join(lines) + "\n")


def readme_machine(m: dict[str, Any], *peers: str) -> str:
    """The README's machine column: CPU, cores, numpy and the named peers, and the load."""
    parts = [f"{m.get('cpu_model') or 'unknown CPU'}, {m.get('cpu_count')} cores"]
    parts += [f"numpy {m['numpy']}"] if m.get("numpy") else []
    parts += [f"{p} {m['peers'][p]}" for p in peers if m.get("peers", {}).get(p)]
    out = ", ".join(parts)
    la0, la1 = m.get("loadavg_start"), m.get("loadavg_end")
    if la0:
        out += f"; load average {la0[0]:.1f}" + (f" -> {la1[0]:.1f}" if la1 else "")
    if m.get("background_load_cores") is not None:
        out += f", background load {m['background_load_cores']:.1f} cores"
    return out


def row(
    bench: str, result: str, targets: str, m: dict[str, Any], details: str, mach: str | None = None
) -> str:
    """One row of the README table (machine column: ``mach``, else :func:`readme_machine`)."""
    mach = readme_machine(m) if mach is None else mach
    return (
        f"| `{bench}` | {result} | {targets} | {mach} | {str(m.get('date', ''))[:10]} | {details} |"
    )


# ---- small formatting helpers ----------------------------------------------------------------


def fmt(x: float | None, spec: str = ".2f") -> str:
    """A number, or 'n/a'."""
    return "n/a" if x is None else format(x, spec)


def fx(x: float | None, spec: str = ".1f") -> str:
    """A ratio with its 'x', or 'n/a'."""
    return "n/a" if x is None else f"{format(x, spec)}x"


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing or b is 0."""
    return None if a is None or b is None or b == 0 else a / b


def tree_label(path: str | Path | None) -> str | None:
    """How a results file names a privlearn tree or build: relative to the repository when
    inside it, else ``"external:<last two parts>"`` (no path of the machine it ran on)."""
    if path is None:
        return None
    p = Path(path).resolve()
    try:
        return p.relative_to(REPO).as_posix()
    except ValueError:
        return "external:" + "/".join(p.parts[-2:])


class CoreShim:
    """An older ``_core`` build standing in for the current one inside a trainer module (the
    ``--baseline`` runs: ``module._core = CoreShim(oldcore)``). Attributes are the older
    build's; a keyword that the current Python passes and the older build does not know
    (:attr:`NEW_KEYWORDS`, looked up in the function's docstring) is dropped, so the older
    build does what it always did (e.g. ``check_structure=False``: it checks the CSR X itself).
    A CSR kernel of a build without views (:attr:`CSR_VIEWS`: no ``row_scale`` in its
    docstring) given a view's ``row_scale`` / ``intercept`` gets the materialised matrix
    instead (:meth:`~privlearn._design_matrix.RowView.materialize`, with int64 indices, made
    in the call, as the older fits made it), never a silently dropped keyword.
    """

    NEW_KEYWORDS: dict[str, tuple[str, ...]] = {
        "scd_train_csr": ("check_structure",),
        "sgd_train_csr": ("check_structure",),
    }
    CSR_VIEWS = ("scd_train_csr", "sgd_train_csr")

    def __init__(self, core: Any):
        self._core = core

    def __getattr__(self, name: str) -> Any:
        f = getattr(self._core, name)
        doc = f.__doc__ or ""
        drop = [k for k in self.NEW_KEYWORDS.get(name, ()) if k not in doc]
        views = name in self.CSR_VIEWS and "row_scale" not in doc
        if not drop and not views:
            return f

        def call(*args: Any, **kw: Any) -> Any:
            for k in drop:
                kw.pop(k, None)
            scale, intercept = kw.pop("row_scale", None), kw.pop("intercept", None)
            if views and (scale is not None or intercept is not None):
                import numpy as np
                import scipy.sparse as sp

                from privlearn._design_matrix import RowView

                data, indices, indptr, n_cols, *rest = args
                X = sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, n_cols))
                M = RowView(X, scale, intercept).materialize()
                # int64 index arrays, as the older fits' as_design_matrix made them
                ix, ptr = M.indices.astype(np.int64), M.indptr.astype(np.int64)
                args = (M.data, ix, ptr, M.shape[1], *rest)
            return f(*args, **kw)

        return call


def fmt_opt(x: float | None, fmt: str, missing: str = "-") -> str:
    """``format(x, fmt)``, or ``missing`` for a number that was not measured (None)."""
    return missing if x is None else format(x, fmt)


def script_child(
    script: str | Path,
    spec: dict[str, Any],
    *,
    python: str = sys.executable,
    pythonpath: str | Path | None = None,
    timeout: float = 3600.0,
) -> dict[str, Any]:
    """Runs ``python script --child '<spec as JSON>'`` in a fresh interpreter (a clean peak
    memory; ``pythonpath``: the privlearn tree it imports) and returns the JSON object printed
    on its last line of stdout; RuntimeError with the end of stderr when it fails."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = str(Path(pythonpath).resolve())
    cmd = [python, str(Path(script).resolve()), "--child", json.dumps(spec)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"case {spec} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt_seconds(x: float | None) -> str:
    """Seconds for humans ('12.3 ms', '4.56 s'), or 'n/a'."""
    if x is None:
        return "n/a"
    return f"{x * 1e3:.1f} ms" if x < 1.0 else f"{x:.2f} s"


def fmt_rate(rate: float, unit: str = "/s") -> str:
    """A rate for humans: '1.23 M/s', '45.6 k/s', '789 /s' (``unit`` after the prefix)."""
    if rate >= 1e6:
        return f"{rate / 1e6:.2f} M{unit}"
    if rate >= 1e3:
        return f"{rate / 1e3:.1f} k{unit}"
    return f"{rate:.0f} {unit}"


def worst(values: list[float | None], fn: Callable[[list[float]], float] = min) -> float | None:
    """``fn`` (default ``min``) of ``values``, or None when any value is missing: a target
    over every case is judged only when every case was measured."""
    present = [v for v in values if v is not None]
    return fn(present) if present and len(present) == len(values) else None


def met(flag: bool | None) -> str:
    """A target's verdict for the README."""
    return {True: "met", False: "**not met**", None: "n/a"}[flag]


def parse_threads(text: str) -> list[int]:
    """'1,2' -> [1, 2] (1 is always included: the ratios are relative to it)."""
    threads = sorted({int(x) for x in text.split(",") if x.strip()} | {1})
    if threads[0] < 1:
        raise argparse.ArgumentTypeError("thread counts must be >= 1")
    return threads
