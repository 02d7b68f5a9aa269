"""The note's schemes on a real table: the 8 categorical columns of UCI Adult.

Belongs here: the Adult schemes (:data:`ADULT_METHODS`) and rows (:data:`ADULT_N_TRAIN` drawn
from ``adult.data``; ``adult.test`` halved into calibration and test rows), and
:func:`adult_table`, which writes ``adult_runs.csv`` and ``adult_table.md`` (appended to the
reproduction's ``summary.md``). Not here: the schemes and scoring
(:mod:`~privlearn.experiments.impact.methods`), shared with the synthetic comparison.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from privlearn.experiments.impact.methods import (
    _QUICK_SIGMAS,
    _TAG,
    METHODS,
    SIGMAS,
    _code_fit_predict,
    _error,
    choose_encoder,
)
from privlearn.experiments.impact.outputs import score_cells
from privlearn.experiments.impact.simulate import column
from privlearn.experiments.runs import derive_seed
from privlearn.experiments.summary import missing_data_reason, not_run_lines
from privlearn.experiments.tables import markdown_table, write_csv, write_text

#: Schemes of the Adult table (a subset of :data:`METHODS`: the note's main contrasts).
ADULT_METHODS: tuple[str, ...] = (
    "bayes naive",
    "bayes laplace",
    "bayes split",
    "bayes cross",
    "bayes jackknife",
    "counts naive",
    "counts laplace",
    "sklearn TargetEncoder(cv=5)",
)
#: Training rows drawn from adult.data (the note's train size); adult.test is split in half
#: into a calibration set (choice of sigma) and a test set.
ADULT_N_TRAIN = 2_000


def _adult_parts(r: int, train: Any, test: Any) -> tuple[dict[str, Any], list[list[str]]]:
    from privlearn.data import ADULT_CATEGORIES

    cols = list(ADULT_CATEGORIES)

    def part(frame: Any) -> tuple[Any, np.ndarray]:
        X = frame[cols].astype(object).where(frame[cols].notna(), "?")
        return X.reset_index(drop=True), frame["income"].to_numpy(dtype=np.int64)

    rng = np.random.default_rng(derive_seed(_TAG, "adult", r, "rows"))
    rows = np.sort(rng.choice(len(train), size=ADULT_N_TRAIN, replace=False))
    half = np.random.default_rng(derive_seed(_TAG, "adult", r, "cal")).permutation(len(test))
    cal, te = np.sort(half[: len(test) // 2]), np.sort(half[len(test) // 2 :])
    parts = {
        "train": part(train.iloc[rows]),
        "cal": part(test.iloc[cal]),
        "test": part(test.iloc[te]),
    }
    # the public schema of adult.names (plus "?" for a missing value): not data-dependent
    cats = [[*ADULT_CATEGORIES[c], "?"] for c in cols]
    return parts, cats


def adult_table(
    out_dir: Path, quick: bool, *, data_home: Any = None, seeds: int | None = None
) -> list[Path]:
    """The note's schemes on a real table: the 8 categorical columns of UCI Adult.

    Per seed, :data:`ADULT_N_TRAIN` rows drawn from ``adult.data`` train (codes + logistic
    model, as in :func:`run_seed`); ``adult.test`` is split in half into a calibration set (the
    Laplace sigma) and a test set. Only the categorical columns are coded and modelled, so the
    table isolates the coding. Writes ``adult_runs.csv`` and ``adult_table.md`` and returns
    their paths; a missing Adult file writes a NOT RUN note instead. Without ``data_home``,
    the copy of Adult embedded in the package is used when the data folder lacks it (the
    table says which).
    """
    from sklearn.metrics import roc_auc_score

    out_dir = Path(out_dir)
    n_seeds = (1 if quick else 5) if seeds is None else int(seeds)
    sigmas = _QUICK_SIGMAS if quick else SIGMAS
    by_name = {m.name: m for m in METHODS}
    rows: list[dict[str, Any]] = []
    source = "missing"
    try:
        from privlearn.data import data_source, load_adult_frame

        train = load_adult_frame("train", data_home)
        test = load_adult_frame("test", data_home)
        _, source = data_source("adult/adult.data", data_home)
        for r in range(n_seeds):
            parts, cats = _adult_parts(r, train, test)
            Xtr, ytr = parts["train"]
            Xte, yte = parts["test"]
            for name in ADULT_METHODS:
                method = by_name[name]
                enc, sigma, _ = choose_encoder(
                    method, ("adult", r), cats, sigmas, parts["train"], parts["cal"]
                )
                mask, ptr, pte, privacy = _code_fit_predict(enc, Xtr, ytr, Xte)
                rows.append(
                    {
                        "seed": r,
                        "method": name,
                        "sigma": sigma,
                        "epsilon": privacy.epsilon if privacy is not None else math.inf,
                        "train_auc": roc_auc_score(ytr[mask], ptr),
                        "test_auc": roc_auc_score(yte, pte),
                        "test_error": _error(pte, yte),
                    }
                )
    except FileNotFoundError as exc:
        why = {"adult": missing_data_reason(exc, data_home)}
        text = "\n".join(["## Real data: UCI Adult", "", *not_run_lines(why), ""])
        return [write_text(out_dir / "adult_table.md", text)]
    cols = ["seed", "method", "sigma", "epsilon", "train_auc", "test_auc", "test_error"]
    written = [write_csv(out_dir / "adult_runs.csv", rows, cols)]
    where = {
        "embedded": "the copy of UCI Adult embedded in privlearn (identical to the UCI files)",
        "data folder": "UCI Adult from the data folder",
    }[source]
    table = []
    for name in ADULT_METHODS:
        if name not in {row["method"] for row in rows}:
            continue
        eps = column(rows, name, "epsilon")
        table.append(
            (
                name,
                *score_cells(lambda key, name=name: column(rows, name, key)),
                ", ".join("inf" if np.isinf(e) else f"{e:.3g}" for e in eps),
            )
        )
    lines = [
        "## Real data: UCI Adult (categorical columns only)",
        "",
        f"Data: {where}. {n_seeds} seed{'s' if n_seeds != 1 else ''}; per seed "
        f"{ADULT_N_TRAIN:,} training rows drawn from adult.data, adult.test split in half into "
        "calibration (chooses the Laplace sigma) and "
        "test rows. The 8 categorical columns (public level lists of adult.names, `?` as its "
        "own level) are coded; the logistic model sees only the codes. epsilon: code book "
        "privacy for the chosen sigma, per seed (8 columns); inf = not private (sigma = 0 "
        "is no noise).",
        "",
        markdown_table(
            ["scheme", "train AUC", "test AUC", "test error", "sigma", "epsilon per seed"], table
        ),
        "",
    ]
    written.append(write_text(out_dir / "adult_table.md", "\n".join(lines)))
    return written
