"""The addresses of a k-means fit's own randomness: the ChaCha20 stream ids, one purpose each,
and :class:`SeedSource`, the independent sub-seeds of the mechanisms of one fit.

Belongs here: a new stream id of the k-means package (keep them distinct: a stream id is a
random quantity's address, DESIGN.md "Randomness") and anything that derives seeds or
streams from a fit's ``seed``. Not here: the mechanisms that consume the seeds.
"""

from __future__ import annotations

import numpy as np

from privlearn.random import Stream

__all__ = [
    "STREAM_INIT",
    "STREAM_JL",
    "STREAM_PICKS",
    "STREAM_SEEDS",
    "STREAM_SIZE",
    "SeedSource",
]

# stream ids of the estimator's own randomness (one purpose each)
STREAM_JL = 0x6B6D65616E730001  # "kmeans" | 1
STREAM_PICKS = 0x6B6D65616E730002
STREAM_SEEDS = 0x6B6D65616E730003
STREAM_INIT = 0x6B6D65616E730004
STREAM_SIZE = 0x6B6D65616E730005  # the noisy row count (kept apart: other noise unchanged)


class SeedSource:
    """Independent 63-bit sub-seeds for the mechanisms of one fit (from the fit's key), so that
    ``seed=None`` means OS entropy everywhere and an int seed reproduces the whole fit."""

    def __init__(self, seed: int | None) -> None:
        self.stream = Stream(seed, stream=0)
        self._seeds = self.stream.substream(STREAM_SEEDS)
        self._next = 0

    def __call__(self) -> int:
        value = int(self._seeds.raws(self._next, 1)[0] >> np.uint64(1))
        self._next += 1
        return value

    def substream(self, stream: int) -> Stream:
        return self.stream.substream(stream)  # type: ignore[return-value]

    def seed_for(self, stream: int) -> int:
        """A 63-bit seed from its own stream (independent of the ``__call__`` sequence)."""
        return int(self.substream(stream).raws(0, 1)[0] >> np.uint64(1))
