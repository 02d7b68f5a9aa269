"""Time the README's two set-up commands on a fresh clone: the first and the second install.

``python bench/python/bench_install.py`` clones this checkout (committed state, ``git clone``)
into a temporary folder, makes a fresh virtual environment and runs, timed:

1. ``pip install ".[experiments]"`` (the main job's install: a full compile of the C++ core),
2. ``pip install ".[test]"`` (the test command's install, same source: it must reuse the build).

For each step it records the wall time and how many object files ninja compiled (from the build
directory's ``.ninja_log``, ``build/{wheel_tag}``), and checks that ``privlearn._core`` imports.
pip's download cache is left as the user has it (a warm cache removes network time from both
steps alike). Results go to ``bench/results/install.json`` and the ``install`` row of
``bench/results/README.md``.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RESULTS = REPO / "bench" / "results"
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

STEPS = (("experiments", '".[experiments]"'), ("test", '".[test]"'))


def _compiled(build_root: Path) -> dict[str, int]:
    """Object files ninja compiled per build (``.ninja_log`` lists one line per compile)."""
    counts: dict[str, int] = {}
    for log in build_root.glob("*/.ninja_log"):
        for line in log.read_text().splitlines()[1:]:
            parts = line.split("\t")
            if len(parts) >= 4 and parts[3].endswith(".o"):
                counts[parts[3]] = counts.get(parts[3], 0) + 1
    return counts


def run(repo: Path = REPO) -> dict[str, Any]:
    machine = harness.machine()
    with tempfile.TemporaryDirectory(prefix="privlearn-install-") as tmp:
        clone = Path(tmp) / "privlearn"
        subprocess.run(["git", "clone", "--quiet", str(repo), str(clone)], check=True)
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env = dict(os.environ, VIRTUAL_ENV=str(venv), PATH=f"{venv}/bin:{os.environ['PATH']}")
        env.pop("PYTHONPATH", None)
        subprocess.run(
            ["python", "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
            cwd=clone,
            env=env,
            check=True,
        )
        steps: list[dict[str, Any]] = []
        seen: dict[str, int] = {}
        for extra, spec in STEPS:
            command = f"pip install --quiet {spec}"
            with harness.stopwatch() as sw:
                subprocess.run(command, shell=True, cwd=clone, env=env, check=True)
            wall = sw.seconds
            counts = _compiled(clone / "build")
            compiled = sum(counts.values()) - sum(seen.values())
            seen = counts
            imported = subprocess.run(
                ["python", "-c", "import privlearn._core as c; print(c.has_openmp)"],
                cwd=tmp,
                env=env,
                capture_output=True,
                text=True,
            )
            steps.append(
                dict(
                    command=f"pip install {spec}",
                    extra=extra,
                    wall_s=round(wall, 1),
                    objects_compiled=compiled,
                    core_imports=imported.returncode == 0,
                )
            )
            print(f"{steps[-1]}", file=sys.stderr)
    m = harness.finish(machine)
    return dict(
        benchmark="install",
        date=date.today().isoformat(),
        machine=f"{m['cpu_model'] or platform.machine()}, {m['cpu_count']} cores",
        python=m["python"],
        machine_record=m,
        steps=steps,
    )


def readme_row(report: dict[str, Any]) -> str:
    first, second = report["steps"]
    result = (
        f"fresh clone, fresh venv: `{first['command']}` {first['wall_s']:.0f} s "
        f"({first['objects_compiled']} objects compiled), then `{second['command']}` "
        f"{second['wall_s']:.0f} s ({second['objects_compiled']} compiled)"
    )
    met = second["objects_compiled"] == 0 and all(s["core_imports"] for s in report["steps"])
    target = "the second install compiles nothing: " + ("met" if met else "**not met**")
    return (
        f"| `install` | {result} | {target} | {report['machine']}, Python {report['python']} "
        f"| {report['date']} | [install.json](install.json), `bench/python/bench_install.py` |"
    )


def main(argv: list[str] | None = None) -> int:
    args = harness.cli(__doc__, "install", reps=1).parse_args(argv)
    report = run()
    harness.publish(report, harness.out_dir(args), "install", readme_row(report))
    print(readme_row(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
