"""Run Google's DP LSH clustering (``learning/clustering`` of google/differential-privacy) on
one data set, in its own process, for ``bench_kmeans.py``.

Google's code is never copied into privlearn's tree: :func:`locate_source` finds it through
the environment variable ``PRIVLEARN_GOOGLE_DP`` (a git clone or mirror of the repository, a
checkout of it, or an extracted ``learning/clustering`` folder; unset: Google is skipped with
a note); from a git directory it extracts
``learning/clustering`` (``git archive``) into ``~/.cache/privlearn-bench/google-dp-<commit>``.
The parent process (the benchmark) then starts this file as a subprocess with that folder on
the import path::

    python google_kmeans_runner.py --src DIR --x X.npy --k 8 --epsilon 1 --delta 1e-6 \
        --radius 1 --seed 0 --out centers.npy --meta meta.json

or, for a whole grid, once with ``--serve`` (fit requests as JSON lines on stdin, one reply
line each on stdout: the interpreter start and the imports, several seconds, are paid once).
Each fit loads ``X`` (float64, rows), calls ``clustering_algorithm.private_lsh_clustering(k,
Data(X, radius), DifferentialPrivacyParam(epsilon, delta))`` with Google's defaults, and
writes the released centres to ``--out`` and a JSON line of measurements to ``--meta``:
``seconds`` (the call alone), ``peak_extra_bytes`` (VmHWM after the call minus VmRSS before
it, Linux; a fresh process's number is the one to quote, a serving process may reuse memory
freed by earlier fits) and Google's source commit. The benchmark scores the centres itself.

Google's randomness is numpy's global generator (``np.random``: the SimHash directions, the
noise) and scikit-learn's k-means++ without a ``random_state``, which also draws from it;
``--seed`` seeds it. Google's ``ClusteringResult`` computes the non-private loss and labels of
every row in a Python loop after the centres are released; that convenience is not part of
the private algorithm, so the call is timed with ``ClusteringResult`` replaced by a holder of
the centres (the benchmark computes the loss itself, outside every timer).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import harness

ENV_VAR = "PRIVLEARN_GOOGLE_DP"
SUBDIR = "learning/clustering"


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "privlearn-bench"


def _git(path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, timeout=120)


def locate_source() -> tuple[Path | None, str]:
    """``(folder, note)``: the folder to put on ``sys.path`` (it holds the package
    ``clustering``), or ``None`` and why not.

    Looks at ``$PRIVLEARN_GOOGLE_DP`` (default: the mirror path above, when it exists). A
    folder holding ``clustering_algorithm.py`` is used as the package itself; a checkout with
    ``learning/clustering`` uses ``learning``; a git directory (bare or not) has
    ``learning/clustering`` of its ``HEAD`` extracted once into the cache (keyed by commit).
    """
    raw = os.environ.get(ENV_VAR)
    if raw is None:
        return None, (
            f"no source: set {ENV_VAR} to a clone of google/differential-privacy (or its "
            "learning/clustering folder)"
        )
    src = Path(raw).expanduser()
    if not src.exists():
        return None, f"{ENV_VAR}={raw} does not exist"
    if (src / "clustering_algorithm.py").is_file():  # an extracted learning/clustering
        if src.name == "clustering":
            return src.parent, f"extracted folder {src}"
        digest = hashlib.sha256(str(src.resolve()).encode()).hexdigest()[:12]
        link_dir = _cache_root() / f"google-dp-link-{digest}"
        link_dir.mkdir(parents=True, exist_ok=True)
        link = link_dir / "clustering"
        if not link.exists():
            link.symlink_to(src.resolve(), target_is_directory=True)
        return link_dir, f"extracted folder {src} (linked as package 'clustering')"
    if (src / SUBDIR / "clustering_algorithm.py").is_file():  # a checkout
        return src / "learning", f"checkout {src}"
    head = _git(src, "rev-parse", "HEAD")
    if head.returncode != 0:
        return None, f"{src} is neither a git directory nor a folder with {SUBDIR}"
    commit = head.stdout.decode().strip()
    dest = _cache_root() / f"google-dp-{commit[:12]}"
    if not (dest / "learning" / "clustering" / "clustering_algorithm.py").is_file():
        tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = _git(src, "archive", "--format=tar", "HEAD", SUBDIR)
        if archive.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            return None, f"git archive of {SUBDIR} failed in {src}: " + (
                archive.stderr.decode().strip()[:200] or "no such path at HEAD"
            )
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
        shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)
    (dest / "COMMIT").write_text(commit + "\n")
    return dest / "learning", f"git {src} at {commit[:12]}"


def check_dependencies(path: Path, python: str = sys.executable) -> str | None:
    """``None`` when Google's package imports in a subprocess with ``path`` on ``sys.path``;
    otherwise the error (a missing module such as ``absl`` or ``dp_accounting``)."""
    code = f"import sys; sys.path.insert(0, {str(path)!r}); import clustering.clustering_algorithm"
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    if proc.returncode == 0:
        return None
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else f"import failed (exit {proc.returncode})"


def source_commit(path: Path) -> str | None:
    """The commit recorded when the source was extracted from git, if any."""
    f = path.parent / "COMMIT"
    return f.read_text().strip() if f.is_file() else None


class _Centers:
    """Stands in for Google's ``ClusteringResult`` during the timed call: keeps the centres
    and skips its per-row Python loop computing the (non-private) loss and labels."""

    def __init__(self, data: Any, centers: Any, labels: Any = None, loss: Any = None) -> None:
        self.data = data
        self.centers = centers


def _import_google(src: Path) -> tuple[Any, Any]:
    """Google's ``clustering_algorithm`` and ``clustering_params`` modules from ``src``."""
    sys.path.insert(0, str(src))
    import logging as std_logging

    from absl import logging as absl_logging
    from clustering import clustering_algorithm, clustering_params

    absl_logging.set_verbosity(absl_logging.WARNING)
    std_logging.getLogger("absl").setLevel(std_logging.WARNING)
    clustering_algorithm.ClusteringResult = _Centers
    return clustering_algorithm, clustering_params


def fit_one(
    modules: tuple[Any, Any],
    X: Any,
    k: int,
    epsilon: float,
    delta: float,
    radius: float,
    seed: int,
) -> tuple[Any, dict[str, Any]]:
    """Google's released centres for one fit and the measurements (module docstring)."""
    import numpy as np

    clustering_algorithm, clustering_params = modules
    data = clustering_params.Data(X, radius)
    privacy = clustering_params.DifferentialPrivacyParam(epsilon, delta)
    gc.collect()
    np.random.seed(seed)  # noqa: NPY002 - Google's code draws from the global generator
    reset = harness.reset_peak_memory()
    rss0 = harness.status_kib("VmRSS")
    seconds, result = harness.timed(
        lambda: clustering_algorithm.private_lsh_clustering(k, data, privacy)
    )
    hwm = harness.status_kib("VmHWM")
    centers = np.asarray(result.centers, dtype=np.float64)
    extra = None if hwm is None or rss0 is None else max(0, hwm - rss0) * 1024
    meta = {
        "seconds": seconds,
        "peak_extra_bytes": extra,
        "peak_reset": reset,
        "n_centers": int(centers.shape[0]),
    }
    return centers, meta


def serve(src: Path) -> int:
    """Answer fit requests, one JSON object a line on stdin (``x``, ``k``, ``epsilon``,
    ``delta``, ``radius``, ``seed``, ``out``): the centres go to ``out`` (.npy), the
    measurements (or ``{"error": ...}``) to stdout, one line each; ends at end of input.
    Saves the interpreter start and imports (seconds) per fit; ``X`` is loaded once per
    file. Anything Google's code prints goes to stderr."""
    import contextlib

    import numpy as np

    reply = sys.stdout
    modules = _import_google(src)
    with contextlib.redirect_stdout(sys.stderr):  # first-call set-up, not timed
        warm = np.random.default_rng(0).uniform(-0.5, 0.5, (500, 2))
        fit_one(modules, warm, 2, 1.0, 1e-6, 1.0, 0)
    cache: dict[str, Any] = {}
    commit = source_commit(src)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            if req["x"] not in cache:
                cache.clear()
                gc.collect()
                cache[req["x"]] = np.load(req["x"])
            args = (req["k"], req["epsilon"], req["delta"], req["radius"], req["seed"])
            with contextlib.redirect_stdout(sys.stderr):
                centers, meta = fit_one(modules, cache[req["x"]], *args)
            np.save(req["out"], centers)
            meta["commit"] = commit
        except Exception as exc:  # noqa: BLE001 - reported to the benchmark, which goes on
            meta = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        reply.write(json.dumps(meta) + "\n")
        reply.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", required=True, type=Path, help="folder holding package clustering")
    p.add_argument("--serve", action="store_true", help="answer JSON requests on stdin")
    p.add_argument("--x", type=Path, help=".npy file with X (n, d) float64")
    p.add_argument("--k", type=int)
    p.add_argument("--epsilon", type=float)
    p.add_argument("--delta", type=float)
    p.add_argument("--radius", type=float)
    p.add_argument("--seed", type=int)
    p.add_argument("--out", type=Path, help=".npy file for the centres")
    p.add_argument("--meta", type=Path, help="JSON file for the measurements")
    args = p.parse_args(argv)
    if args.serve:
        return serve(args.src)
    needed = ("x", "k", "epsilon", "delta", "radius", "seed", "out", "meta")
    missing = [f"--{n}" for n in needed if getattr(args, n) is None]
    if missing:
        p.error("one fit needs " + ", ".join(missing))
    import numpy as np

    modules = _import_google(args.src)
    X = np.load(args.x)
    centers, meta = fit_one(modules, X, args.k, args.epsilon, args.delta, args.radius, args.seed)
    np.save(args.out, centers)
    meta["commit"] = source_commit(args.src)
    args.meta.write_text(json.dumps(meta) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
