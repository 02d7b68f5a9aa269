"""Time cost model of CKKS operations, calibrated against real CKKS (SEAL through TenSEAL).

``bench/python/calibrate_ckks_cost.py`` times real operations for several ring degrees and
modulus sizes on the machine at hand and writes ``cost_table.json`` next to this module. The
model fitted to it is, per operation kind ``k``,

    seconds(k, log_n, mod_bits) = c_k * (N log2 N / (2^15 * 15)) * (mod_bits / 100) ** e_k,

(the NTT-dominated cost grows like ``N log N`` per RNS limb; key switching grows faster than
linearly in the number of limbs, hence the fitted exponent ``e_k``), fitted by least squares
on ``log(seconds)``. Extrapolating to ``log_n = 16`` and ``log q = 1200`` (the paper's HEAAN
parameters) is an estimate, not a measurement: HEAAN's big-integer arithmetic and SEAL's RNS
arithmetic differ by small constant factors.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CostModel", "OP_KINDS", "default_cost_model"]

#: Operation kinds the model prices (a rescale is priced inside "mul" and "mul_plain").
OP_KINDS = ("add", "mul", "mul_plain", "rotate", "encrypt", "decrypt")
_TABLE = Path(__file__).with_name("cost_table.json")
# Used only when no calibration table exists (rough single-core SEAL figures, 2^15 ring, 100 bits).
_FALLBACK = {
    "add": (2.0e-4, 1.0),
    "mul": (2.0e-2, 1.6),
    "mul_plain": (3.0e-3, 1.0),
    "rotate": (1.8e-2, 1.6),
    "encrypt": (1.0e-2, 1.0),
    "decrypt": (2.0e-3, 1.0),
}


def _ring_factor(log_n: int) -> float:
    return (2.0**log_n * log_n) / (2.0**15 * 15.0)


class CostModel:
    """Seconds per CKKS operation as a function of the ring and the remaining modulus.

    Parameters
    ----------
    coefficients : dict, optional
        ``{kind: (c, e)}``; default: fitted to the committed calibration table (or rough
        built-in values when it is missing).
    source : str
        Where the coefficients come from (reported with estimates).
    """

    def __init__(self, coefficients: dict[str, tuple[float, float]], source: str = "custom"):
        missing = [k for k in OP_KINDS if k not in coefficients]
        if missing:
            raise ValueError(f"cost model lacks operation kinds {missing}")
        self.coefficients = {k: (float(c), float(e)) for k, (c, e) in coefficients.items()}
        self.source = source

    @classmethod
    def fit(cls, rows: list[dict[str, Any]], source: str = "fit") -> CostModel:
        """Least-squares fit of ``log c_k`` and ``e_k`` per kind to rows with keys ``op``,
        ``log_n``, ``mod_bits`` and ``seconds``."""
        coef: dict[str, tuple[float, float]] = {}
        for kind in OP_KINDS:
            sel = [r for r in rows if r["op"] == kind]
            if not sel:
                coef[kind] = _FALLBACK[kind]
                continue
            y = np.array([math.log(r["seconds"] / _ring_factor(int(r["log_n"]))) for r in sel])
            x = np.array([math.log(r["mod_bits"] / 100.0) for r in sel])
            if np.ptp(x) > 0:
                A = np.column_stack([np.ones_like(x), x])
                (lc, e), *_ = np.linalg.lstsq(A, y, rcond=None)
            else:
                lc, e = float(np.mean(y)), 1.0
            coef[kind] = (math.exp(lc), float(e))
        return cls(coef, source)

    def seconds(self, kind: str, log_n: int, mod_bits: float) -> float:
        """Estimated seconds of one operation of ``kind`` on a ciphertext with ``mod_bits``."""
        c, e = self.coefficients[kind]
        return c * _ring_factor(log_n) * (max(mod_bits, 1.0) / 100.0) ** e

    def __repr__(self) -> str:
        return f"CostModel(source={self.source!r})"


@lru_cache(maxsize=1)
def default_cost_model() -> CostModel:
    """The model fitted to ``cost_table.json`` (written by the calibration script)."""
    if _TABLE.exists():
        data = json.loads(_TABLE.read_text())
        return CostModel.fit(data["rows"], source=f"cost_table.json ({data.get('machine', '?')})")
    return CostModel(_FALLBACK, source="built-in fallback (no calibration table)")
