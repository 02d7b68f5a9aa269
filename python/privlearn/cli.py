"""The ``privlearn`` command line: ``info``, ``datasets [download]``, ``reproduce``, ``fit`` and
``predict``."""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

import privlearn

__all__ = ["REPRODUCTION_DATA", "main"]


def _cmd_info(args: argparse.Namespace) -> int:
    from privlearn import _core
    from privlearn.data import dataset_inventory, get_data_home

    home = get_data_home(args.data_home)
    files = dataset_inventory(args.data_home, checksums=False)
    found = sorted({f["dataset"] for f in files if f["found"]})
    missing = sorted({f["dataset"] for f in files if not f["found"]} - set(found))
    embedded = sorted({f["dataset"] for f in files if f["source"] == "embedded"})
    print(f"privlearn {privlearn.__version__}")
    print(f"python     {platform.python_version()} ({sys.executable})")
    print(f"openmp     {'yes' if _core.has_openmp else 'no'}")
    print(
        f"threads    {_core.default_threads()} by default (cpu count {os.cpu_count()}); one "
        f"per {_core.min_thread_work_ns() / 1e6:g} ms of work in a region, "
        f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '')}"
    )
    dask = _dask_version() or "not installed (pip install 'privlearn[dask]')"
    print(f"dask       {dask}")
    print(f"data home  {home}{'' if home.is_dir() else '  (not found)'}")
    print(f"data sets  found: {', '.join(found) or 'none'}")
    if embedded:
        print(
            f"           embedded (the copies shipped in the package; {home} lacks them): "
            f"{', '.join(embedded)}"
        )
    if missing:
        print(f"           missing: {', '.join(missing)}")
    return 0


def _dask_version() -> str | None:
    """``dask <v>, distributed <v>`` when both are installed (fits on Dask clusters)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"dask {version('dask')}, distributed {version('distributed')}"
    except PackageNotFoundError:
        return None


def _cmd_datasets(args: argparse.Namespace) -> int:
    if getattr(args, "action", None) == "download":
        return _cmd_datasets_download(args)
    from privlearn.data import SOURCES, dataset_inventory, get_data_home

    home = get_data_home(args.data_home)
    rows = dataset_inventory(args.data_home, checksums=not args.no_checksums)
    print(f"data home: {home}")
    print(f"{'dataset':<10} {'file':<34} {'source':<11} {'size':>11}  sha256")
    for row in rows:
        size = f"{row['size']:,}" if row["found"] else "missing"
        digest = row["sha256"] or ("" if row["found"] else "-")
        if row["verified"] is False:
            digest += f"  NOT the pinned file: privlearn datasets download {row['dataset']}"
        source = "embedded" if row["source"] == "embedded" else ("folder" if row["found"] else "-")
        print(f"{row['dataset']:<10} {row['file']:<34} {source:<11} {size:>11}  {digest}")
    n_found = sum(r["found"] for r in rows)
    n_embedded = sum(r["source"] == "embedded" for r in rows)
    print(f"{n_found} of {len(rows)} files found", end="")
    print(
        f" ({n_embedded} of them embedded in the package: sizes and sha256 of the stored, "
        "possibly compressed, copies; see privlearn/data/embedded/README.md)"
        if n_embedded
        else ""
    )
    if args.data_home is None:
        print(
            "embedded subsample: kddcup99/kddcup.data_10_percent.song13_50k.xz (50,000 rows of "
            "the 10% file; privlearn.data.load_kddcup99_embedded)"
        )
    print()
    print("sources (privlearn datasets download NAME|all; see privlearn.data.SOURCES):")
    print(f"{'dataset':<10} {'download':<20} {'licence':<18} from")
    for src in SOURCES.values():
        if not src.fetchable:
            how = "not downloadable"
        elif all(f.sha256 or f.content_sha256 for f in src.files):
            how = "sha256-pinned" + ("" if src.in_all else ", by name")
        else:
            how = "NOT pinned, by name"
        hosts = sorted({urlsplit(f.url).netloc for f in src.files}) or ["-"]
        print(f"{src.name:<10} {how:<20} {src.licence_short:<18} {', '.join(hosts)}")
    for src in SOURCES.values():
        if not (src.fetchable and src.in_all) or src.licence_short == "none stated":
            print(f"  {src.name}: {src.licence}. {src.note}".rstrip())
    return 0


def _download_all(
    names: Sequence[str],
    data_home: str | None,
    *,
    force: bool = False,
    progress: bool = True,
    base_url: str | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
) -> list[str]:
    """Fetch each data set in ``names``; report each result; return the names that failed."""
    from privlearn.data import fetch, get_data_home
    from privlearn.data.download import DEFAULT_DEADLINE, DEFAULT_TIMEOUT

    home = get_data_home(data_home)
    failed = []
    for name in names:
        try:
            paths = fetch(
                name,
                home,
                force=force,
                progress=progress,
                base_url=base_url,
                timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                deadline=DEFAULT_DEADLINE if deadline is None else deadline,
            )
        except (OSError, ValueError) as exc:  # DownloadError is an OSError
            print(f"[{name}] FAILED: {exc}", file=sys.stderr)
            failed.append(name)
        else:
            print(f"[{name}] {len(paths)} files verified in {home / name}")
    return failed


def _cmd_datasets_download(args: argparse.Namespace) -> int:
    from privlearn.data.download import SOURCES, fetchable_datasets

    if args.name != "all" and args.name not in SOURCES:
        print(
            f"unknown data set {args.name!r}; available: all, {', '.join(SOURCES)}",
            file=sys.stderr,
        )
        return 2
    names = fetchable_datasets(all_only=True) if args.name == "all" else [args.name]
    failed = _download_all(
        names,
        args.data_home,
        force=args.force,
        progress=not args.no_progress,
        base_url=args.mirror,
        timeout=args.timeout,
        deadline=args.deadline,
    )
    if failed:
        print(
            f"{len(failed)} of {len(names)} data sets failed: {', '.join(failed)}", file=sys.stderr
        )
        return 1
    return 0


#: reproduction -> the data sets (``privlearn.data.SOURCES`` keys) its real-data parts read;
#: ``privlearn reproduce NAME --download`` fetches them first (helr includes nhanes3). Not
#: listed: YearPredictionMSD (dpscd uses a synthetic stand-in without it; not sha256-pinned,
#: 211 MB: ``privlearn datasets download msd``) and iDASH (no public source).
REPRODUCTION_DATA: dict[str, tuple[str, ...]] = {
    "song13": ("kddcup99", "mnist"),
    "dpscd": ("phishing", "adult"),
    "quadgrad": ("helr", "mnist"),
    "kmeans": ("mnist",),
    "impact": (),
}


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from privlearn.experiments import REGISTRY

    _load_reproductions()
    if args.list or args.name is None:
        if not REGISTRY:
            print("no reproductions are registered yet")
        for rep in REGISTRY.values():
            print(f"{rep.name:<10} {rep.paper}: {rep.summary}")
        return 0
    names = list(REGISTRY) if args.name == "all" else [args.name]
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        print(
            f"unknown reproduction {unknown[0]!r}; available: all, {', '.join(REGISTRY)}",
            file=sys.stderr,
        )
        return 2
    if not names:
        print("no reproductions are registered yet: nothing to run")
        return 0
    out_root = Path(args.out)
    problem = _check_out(out_root, names)
    if problem is not None:  # before any download or run: exit 2 with argparse's usage line
        args.parser.error(f"argument --out: {problem}")
    failed: list[str] = []
    if args.download:
        needed: list[str] = []
        for name in names:
            if name not in REPRODUCTION_DATA:
                print(f"[{name}] declares no data sets: nothing to download", file=sys.stderr)
            needed += [d for d in REPRODUCTION_DATA.get(name, ()) if d not in needed]
        if needed:
            print(f"downloading the data sets of {', '.join(names)}: {', '.join(needed)}")
            failed = _download_all(needed, None)
        if failed:
            print(
                f"could not download {', '.join(failed)}: the parts that need it are reported "
                "as NOT RUN",
                file=sys.stderr,
            )
    from privlearn.exceptions import DataIntegrityError
    from privlearn.experiments.files import OutputWriteError, is_disk_full

    for done, name in enumerate(names):
        start = time.perf_counter()
        out_dir = out_root / name
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            written = REGISTRY[name].execute(out_dir, args.quick)
        except DataIntegrityError as exc:  # an altered data file: the other papers still run
            print(f"[{name}] FAILED: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        except OSError as exc:  # a full disk (or a result file that cannot be written): stop
            if not (isinstance(exc, OutputWriteError) or is_disk_full(exc)):
                raise
            print(_write_failure(exc, name, out_root, done), file=sys.stderr)
            return 1
        print(f"[{name}] {len(written)} files in {out_dir} ({time.perf_counter() - start:.1f} s)")
        for path in written:
            print(f"    {path}")
    return 1 if failed else 0


def _write_failure(exc: OSError, name: str, out_root: Path, done: int) -> str:
    """The one line ``privlearn reproduce`` ends with when a result cannot be written."""
    from privlearn.experiments.files import OutputWriteError

    what = (
        str(exc)
        if isinstance(exc, OutputWriteError)
        else (f"{exc.strerror or exc}" + (f" ('{exc.filename}')" if exc.filename else ""))
    )
    finished = f"; the {done} reproduction(s) before it finished" if done else ""
    return (
        f"privlearn reproduce: {name} stopped: {what}{finished}; no partial file was left. "
        f"Free some space in '{out_root}' or choose another --out, then run it again."
    )


def _check_out(out_root: Path, names: Sequence[str]) -> str | None:
    """Create ``out_root`` and make sure each ``out_root/NAME`` can be written, or say why not
    (a file in the way, no permission, a read-only file system, less free space than
    ``OUTPUT_BYTES_PER_REPRODUCTION`` per reproduction)."""
    try:
        out_root.mkdir(parents=True, exist_ok=True)
        for name in names:
            sub = out_root / name
            if sub.exists() and not sub.is_dir():
                return f"'{sub}' exists and is not a folder"
        probe = out_root / f".privlearn-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        free = shutil.disk_usage(out_root).free
    except FileExistsError:
        return f"'{out_root}' exists and is not a folder"
    except NotADirectoryError:
        return f"'{out_root}' cannot be a folder: a part of its path is a file"
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        return f"cannot write to '{out_root}': {why}"
    from privlearn.experiments.files import OUTPUT_BYTES_PER_REPRODUCTION as per

    need = per * len(names)
    if free < need:
        mib = 1 << 20
        return (
            f"only {free / mib:.1f} MiB free on the disk of '{out_root}'; {len(names)} "
            f"reproduction(s) need {need // mib} MiB ({per // mib} MiB each, "
            "privlearn.experiments.files.OUTPUT_BYTES_PER_REPRODUCTION): free some space or "
            "choose another --out"
        )
    return None


def _seconds(text: str) -> float:
    """argparse type: a positive, finite number of seconds (at most ``MAX_SECONDS``)."""
    from privlearn.data.download import MAX_SECONDS

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (0.0 < value <= MAX_SECONDS):
        raise argparse.ArgumentTypeError(
            f"must be a positive, finite number of seconds (at most {MAX_SECONDS:g}), got {text!r}"
        )
    return value


def _out_folder(text: str) -> str:
    """argparse type: a non-empty folder name (``""`` would silently mean the current folder);
    used by ``--out`` and ``--data-home``."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "must name a folder, got an empty string (use '.' for the current folder)"
        )
    if "\0" in text:
        raise argparse.ArgumentTypeError("a folder name cannot contain a NUL character")
    return text


def _load_reproductions() -> None:
    """Import every experiments module so each registers itself."""
    import importlib
    import pkgutil

    import privlearn.experiments as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{pkg.__name__}.{info.name}")


def _positive_epsilon(text: str) -> float:
    """``--epsilon``: a number > 0 (``inf``: no privacy, experiments only)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:  # NaN too
        raise argparse.ArgumentTypeError(f"epsilon must be > 0, got {text!r}")
    return value


def _tabular_errors() -> tuple[type[BaseException], ...]:
    from privlearn.exceptions import BudgetExceededError

    return (ValueError, TypeError, OSError, ImportError, BudgetExceededError)


def _cmd_fit(args: argparse.Namespace) -> int:
    from privlearn.tabular.folder import fit_to_folder

    try:
        out = fit_to_folder(
            args.table,
            args.schema,
            args.out,
            epsilon=args.epsilon,
            delta=args.delta,
            seed=args.seed,
            test=args.test,
            model=args.model,
            verbose=0 if args.no_progress else 1,
        )
    except _tabular_errors() as exc:
        print(f"privlearn fit: error: {exc}", file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return 2
    print(f"wrote {out}: model.joblib, statement.txt, statement.json, report.md and figures")
    print((out / "statement.txt").read_text(encoding="utf-8").splitlines()[0])
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    from privlearn.tabular.folder import predict_from_folder

    try:
        out = predict_from_folder(args.folder, args.table, args.out)
    except _tabular_errors() as exc:
        print(f"privlearn predict: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="privlearn",
        description="Privacy-preserving machine learning: build facts, data sets and paper "
        "reproductions.",
    )
    parser.add_argument("--version", action="version", version=f"privlearn {privlearn.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    data_help = "data folder (default: $PRIVLEARN_DATA, else ~/privlearn_data)"
    p = sub.add_parser(
        "info", help="version, OpenMP, thread policy, Dask support and data sets found"
    )
    p.add_argument("--data-home", type=_out_folder, default=None, help=data_help)
    p.set_defaults(func=_cmd_info)

    p = sub.add_parser("datasets", help="which data files are found, with sizes and sha256")
    p.add_argument("--data-home", type=_out_folder, default=None, help=data_help)
    p.add_argument("--no-checksums", action="store_true", help="skip the sha256 of each file")
    p.set_defaults(func=_cmd_datasets)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    d = actions.add_parser(
        "download",
        help="download data sets from their public sources, verified against pinned sha256",
        description="Download a data set (or all the sha256-pinned ones) into the data folder. "
        "Every file is verified against its pinned sha256 and written atomically; files "
        "already present and verified are not downloaded again.",
    )
    d.add_argument(
        "name",
        nargs="?",
        default="all",
        metavar="NAME",
        help="a data set (adult, helr, kddcup99, mnist, phishing, msd) or 'all' (default: the "
        "sha256-pinned ones, all but msd)",
    )
    d.add_argument("--data-home", type=_out_folder, default=argparse.SUPPRESS, help=data_help)
    d.add_argument("--force", action="store_true", help="download even verified files again")
    d.add_argument("--no-progress", action="store_true", help="no progress bars or status lines")
    d.add_argument(
        "--mirror",
        default=None,
        metavar="URL",
        help="mirror laid out like a data folder (URL/NAME/FILE; default: "
        "$PRIVLEARN_DATA_MIRROR, else the canonical sources)",
    )
    d.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="S",
        help="seconds to wait for the connection and each block of data (default: 60)",
    )
    d.add_argument(
        "--deadline",
        type=_seconds,
        default=None,
        metavar="S",
        help="seconds one file's download may take in all (default: 3600)",
    )

    p = sub.add_parser(
        "reproduce",
        help="regenerate a paper's headline table or figure (CSV + PNG)",
        description="Regenerate a paper's headline table or figure. NAME is a registered "
        "reproduction or 'all'; without NAME (or with --list) the available ones are listed.",
    )
    p.add_argument("name", nargs="?", default=None, metavar="NAME", help="reproduction or 'all'")
    p.add_argument("--quick", action="store_true", help="small sizes for a fast check")
    p.add_argument(
        "--out",
        type=_out_folder,
        default="privlearn-results",
        help="output folder, created if needed and checked to be writable before anything "
        "runs (default: %(default)s)",
    )
    p.add_argument("--list", action="store_true", help="list the available reproductions")
    p.add_argument(
        "--download",
        action="store_true",
        help="first download the data sets the chosen reproductions need (into $PRIVLEARN_DATA, "
        "else ~/privlearn_data; see 'privlearn datasets download')",
    )
    p.set_defaults(func=_cmd_reproduce, parser=p)

    p = sub.add_parser(
        "fit",
        help="fit a private model on a CSV table with a public schema; write a model folder",
        description="Fit privlearn.tabular's private pipeline (private bounds, impact codes, "
        "DP-SGD) on TABLE (CSV) under ONE total budget, with the public SCHEMA (JSON or "
        "TOML; the target column is the schema's). Writes OUT: model.joblib, schema.json, "
        "statement.txt, statement.json, report.md and PNG figures. OUT must not exist (or be "
        "empty); on any error nothing is written.",
    )
    p.add_argument("table", metavar="TABLE.csv", help="the training table (CSV with a header)")
    p.add_argument("--schema", required=True, metavar="SCHEMA", help="public schema (.json/.toml)")
    p.add_argument(
        "--epsilon", required=True, type=_positive_epsilon, metavar="E", help="total epsilon"
    )
    p.add_argument("--delta", type=float, default=None, help="total delta (default 1e-6)")
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="reproducible noise (research runs only; default: keyed from the OS)",
    )
    p.add_argument("--test", default=None, metavar="TEST.csv", help="a test table for the report")
    p.add_argument("--model", choices=("sgd", "scd"), default="sgd", help="DP-SGD or DP-SCD")
    p.add_argument("--out", required=True, metavar="DIR", help="the model folder to write")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_fit)

    p = sub.add_parser(
        "predict",
        help="predict with a model folder written by 'privlearn fit'",
        description="One output row per row of TABLE: 'prediction', and for a classifier "
        "one 'proba_<class>' column per class.",
    )
    p.add_argument("folder", metavar="DIR", help="the folder written by 'privlearn fit'")
    p.add_argument("table", metavar="TABLE.csv", help="the rows to predict (CSV)")
    p.add_argument("--out", required=True, metavar="PRED.csv", help="the predictions file")
    p.set_defaults(func=_cmd_predict)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privlearn`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
