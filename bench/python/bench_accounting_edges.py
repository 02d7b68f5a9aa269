"""Issue 30 edge cases of the tightest accountant: epsilon and calibrated sigma at the schedules
the issue measured, by privlearn's PLD (``epsilon_for_sigma_pld``), its tightest statement
(``epsilon_of_noise``, min of PLD and RDP), RDP (``epsilon_for_sigma``) and dp_accounting's
PLD accountant (connect-the-dots, pessimistic, grid 1e-4) as the reference.

Each case runs once in a cold child process under a wall-clock limit (``harness.in_child``:
a crash or a time-out is reported, not fatal); the time excludes the imports. Usage::

    python bench/python/bench_accounting_edges.py [--label before|after] [--no-dpa] [--grid]
        [--quick] [--out DIR]

Writes ``<out>/accounting_edges_<label>.json`` (``accounting_edges_grid_<label>.json`` with
``--grid``; the rows or the grid count with the machine record) and prints a Markdown table.
``--quick``: the first two epsilon and calibration cases, no dp_accounting, into the scratch
folder. The files in ``bench/results`` from before the harness hold the bare rows / count.
"""

from __future__ import annotations

import harness

#: (q, sigma, steps, delta): the epsilon cases of issue 30 and DESIGN.md's test vectors.
EPS_CASES = [
    (0.01, 1.0, 10_000_000, 1e-6),
    (0.001, 100.0, 100_000, 1e-6),
    (1e-5, 5.0, 1_000_000, 1e-10),
    (0.01, 4.0, 10_000, 1e-5),
    (0.01, 1.1, 10_000, 1e-5),
    (256 / 60000, 1.1, 14063, 1e-5),
    (0.5, 0.5, 4000, 1e-6),
    (0.1, 0.25, 1000, 1e-6),
]
#: (epsilon, delta, q, steps): calibration cases.
CAL_CASES = [
    (1e4, 1e-5, 0.01, 1),
    (100.0, 1e-6, 0.01, 1 << 40),
    (1.0, 1e-6, 0.001, 10_000_000),
    (3.0, 1e-6, 64 / 30162, 9426),
]
LIMIT_S = 120.0
#: The grid of ``--grid``: how often the PLD alone is looser than RDP (delta 1e-6).
GRID_Q = (1e-5, 1e-4, 1e-3, 1e-2, 0.1)
GRID_SIGMA = (0.5, 1.0, 2.0, 5.0, 20.0, 100.0)
GRID_STEPS = (100, 10_000, 1_000_000)


def _grid() -> dict:
    """Cells where the PLD's epsilon exceeds RDP's (or the PLD fails), and where the tightest
    statement exceeds RDP's."""
    from privlearn.accounting import epsilon_for_sigma, epsilon_for_sigma_pld, epsilon_of_noise

    looser, failed, stated_looser, cells = [], [], [], 0
    for q in GRID_Q:
        for s in GRID_SIGMA:
            for t in GRID_STEPS:
                cells += 1
                rdp = epsilon_for_sigma(s, 1e-6, q=q, steps=t)
                try:
                    pld = epsilon_for_sigma_pld(s, 1e-6, q=q, steps=t)
                except Exception as exc:  # noqa: BLE001 - counted
                    failed.append((q, s, t, type(exc).__name__))
                    pld = float("inf")
                if pld > rdp:
                    looser.append((q, s, t, pld, rdp))
                try:
                    if epsilon_of_noise(s, 1e-6, q=q, steps=t) > rdp:
                        stated_looser.append((q, s, t))
                except Exception:  # noqa: BLE001 - counted
                    stated_looser.append((q, s, t))
    return {
        "cells": cells,
        "pld_looser": looser,
        "pld_failed": failed,
        "stated_looser_than_rdp": stated_looser,
    }


def _eps(kind: str, q: float, s: float, t: int, d: float) -> float:
    from privlearn.accounting import epsilon_for_sigma, epsilon_for_sigma_pld, epsilon_of_noise

    if kind == "pld":
        return epsilon_for_sigma_pld(s, d, q=q, steps=t)
    if kind == "tightest":
        return epsilon_of_noise(s, d, q=q, steps=t)
    if kind == "rdp":
        return epsilon_for_sigma(s, d, q=q, steps=t)
    import dp_accounting as dpa

    acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), t)
    return acc.get_epsilon(d)


def _cal(kind: str, e: float, d: float, q: float, t: int) -> float:
    from privlearn.accounting import calibrate_noise, calibrate_sigma, calibrate_sigma_pld

    if kind == "pld":
        return calibrate_sigma_pld(e, d, q=q, steps=t)
    if kind == "tightest":
        return calibrate_noise(e, d, q=q, steps=t)
    return calibrate_sigma(e, d, q=q, steps=t)


def _fmt(r: dict) -> str:
    if "value" in r:
        return f"{r['value']:.5g} ({r['seconds']:.2f}s)"
    return r["error"][:40]


def _run(fn, *args) -> dict:  # type: ignore[no-untyped-def]
    out = harness.in_child(
        fn, *args, limit_s=LIMIT_S, imports=("dp_accounting", "privlearn.accounting")
    )
    if "value" in out:
        out["value"] = float(out["value"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = harness.cli(__doc__, "accounting_edges", reps=None)
    ap.add_argument("--label", default="after")
    ap.add_argument("--no-dpa", action="store_true")
    ap.add_argument("--grid", action="store_true", help="only the grid count")
    args = ap.parse_args(argv)
    out = harness.out_dir(args)
    machine = harness.machine()
    if args.grid:
        with harness.BackgroundLoad() as load:
            res = _grid()
        print(
            f"{res['cells']} cells: PLD looser than RDP in {len(res['pld_looser'])}, PLD failed "
            f"in {len(res['pld_failed'])}, statement looser than RDP in "
            f"{len(res['stated_looser_than_rdp'])}"
        )
        report = {"bench": "accounting_edges", "machine": harness.finish(machine, load), **res}
        harness.write_json(report, out / f"accounting_edges_grid_{args.label}.json")
        return 0
    kinds = ["pld", "tightest", "rdp"] + ([] if args.no_dpa or args.quick else ["dpa"])
    eps_cases, cal_cases = (EPS_CASES[:2], CAL_CASES[:2]) if args.quick else (EPS_CASES, CAL_CASES)
    rows = []
    print("| q | sigma | steps | delta | " + " | ".join(kinds) + " |")
    print("|---" * (4 + len(kinds)) + "|")
    with harness.BackgroundLoad(children=True) as load:
        for case in eps_cases:
            res = {k: _run(_eps, k, *case) for k in kinds}
            rows.append({"case": case, **res})
            print(
                f"| {case[0]:.4g} | {case[1]:g} | {case[2]} | {case[3]:g} | "
                + " | ".join(_fmt(res[k]) for k in kinds)
                + " |",
                flush=True,
            )
        print("\n| epsilon | delta | q | steps | sigma pld | tightest | rdp |")
        print("|---|---|---|---|---|---|---|")
        for case in cal_cases:
            res = {k: _run(_cal, k, *case) for k in ("pld", "tightest", "rdp")}
            rows.append({"calibrate": case, **res})
            print(
                f"| {case[0]:g} | {case[1]:g} | {case[2]:.4g} | {case[3]} | "
                + " | ".join(_fmt(res[k]) for k in ("pld", "tightest", "rdp"))
                + " |",
                flush=True,
            )
    report = {"bench": "accounting_edges", "machine": harness.finish(machine, load), "rows": rows}
    harness.write_json(report, out / f"accounting_edges_{args.label}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
