"""Data set-up shared by several benchmarks of ``bench/python`` (the timing, records and
writers are in :mod:`harness`).

- :data:`KDD_PUBLIC` / :data:`KDD_WIDE`: the public ranges of KDD Cup 99's count columns from
  its schema, and wide public ranges of its unbounded counters (used with a log map or private
  quantiles inside them);
- :func:`split`: a seeded train / test split of rows (public randomness, not a fit's seed);
- :func:`subsample`: the sorted indices of a seeded subsample.
"""

from __future__ import annotations

import numpy as np

#: column -> public range (KDD Cup 99 schema): connections to the same host in the past 2 s
#: (capped at 511) and among the last 100 / 255 connections
KDD_PUBLIC = {
    "count": (0.0, 511.0),
    "srv_count": (0.0, 511.0),
    "dst_host_count": (0.0, 255.0),
    "dst_host_srv_count": (0.0, 255.0),
}
#: KDD Cup 99's unbounded counters -> a wide public range
KDD_WIDE = {
    "duration": (0.0, 6e4),
    "src_bytes": (0.0, 1e7),
    "dst_bytes": (0.0, 1e7),
    "wrong_fragment": (0.0, 10.0),
    "urgent": (0.0, 10.0),
    "hot": (0.0, 100.0),
    "num_failed_logins": (0.0, 10.0),
    "num_compromised": (0.0, 1000.0),
    "num_root": (0.0, 1000.0),
    "num_file_creations": (0.0, 100.0),
    "num_shells": (0.0, 10.0),
    "num_access_files": (0.0, 10.0),
    "num_outbound_cmds": (0.0, 10.0),
}


def check_kdd_columns(names: list[str]) -> None:
    """Raises RuntimeError when a column of :data:`KDD_PUBLIC` / :data:`KDD_WIDE` is missing."""
    missing = (set(KDD_PUBLIC) | set(KDD_WIDE)) - set(names)
    if missing:
        raise RuntimeError(f"KDD columns not found: {sorted(missing)}")


def split(X: np.ndarray, y: np.ndarray, test: float, seed: int) -> tuple[np.ndarray, ...]:
    """(X_train, y_train, X_test, y_test): a ``test`` fraction of the rows, drawn by a seeded
    permutation, in the test part; both parts keep the file's row order."""
    perm = np.random.default_rng(seed).permutation(len(y))
    cut = int(round(len(y) * (1.0 - test)))
    tr, te = np.sort(perm[:cut]), np.sort(perm[cut:])
    return X[tr], y[tr], X[te], y[te]


def subsample(n: int, m: int, seed: int) -> np.ndarray:
    """Sorted indices of ``m`` of ``n`` rows drawn without replacement (seeded)."""
    return np.sort(np.random.default_rng(seed).choice(n, m, replace=False))
