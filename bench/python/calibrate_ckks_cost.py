"""Calibrate the CKKS cost model of :mod:`privlearn.he` against real CKKS (SEAL via TenSEAL).

Times real operations with ``tenseal.sealapi`` (single-threaded, as SEAL evaluates one
operation on one thread) for ring degrees ``2^13 .. 2^15`` and several remaining moduli (the
ciphertext is mod-switched down the RNS chain), and writes the medians to
``python/privlearn/he/cost_table.json``, to which :class:`privlearn.he.CostModel` fits
``seconds = c_k (N log N / (2^15 15)) (mod_bits / 100)^e_k`` per operation kind:

- ``add``: ``Evaluator.add``;
- ``mul``: ``multiply`` + ``relinearize`` + ``rescale_to_next`` (a ciphertext product);
- ``mul_plain``: encoding a vector at the ciphertext's level + ``multiply_plain`` + rescale
  (plaintext and constant products: the simulator encodes them on the fly);
- ``rotate``: ``rotate_vector`` (a Galois automorphism + key switching);
- ``encrypt``: encode + public-key encryption at the top level; ``decrypt``: decrypt + decode.

Chains: ``[60, 40 x L, 60]`` bits within SEAL's 128-bit limit (``L = 2, 7, 18`` for
``log_n = 13, 14, 15``: 200, 400 and 840 bits). The machine is shared: the medians of ``--reps``
repetitions are recorded with the load average.

Usage::

    python bench/python/calibrate_ckks_cost.py [--quick] [--reps 5]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import harness
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "python" / "privlearn" / "he" / "cost_table.json"
#: log_n -> (bits of q0 and of the special prime, number of 40-bit rescaling primes)
CHAINS = {13: (60, 2), 14: (60, 7), 15: (60, 18)}


def calibrate(log_n: int, edge: int, levels: int, reps: int, points: int) -> list[dict[str, Any]]:
    """Median seconds per operation kind at ``points`` remaining-modulus sizes."""
    import tenseal.sealapi as seal

    n = 1 << log_n
    sizes = [edge] + [40] * levels + [edge]
    parms = seal.EncryptionParameters(seal.SCHEME_TYPE.CKKS)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(seal.CoeffModulus.Create(n, sizes))
    ctx = seal.SEALContext(parms, True, seal.SEC_LEVEL_TYPE.TC128)
    keygen = seal.KeyGenerator(ctx)
    pk = seal.PublicKey()
    keygen.create_public_key(pk)
    relin = seal.RelinKeys()
    keygen.create_relin_keys(relin)
    galois = seal.GaloisKeys()
    keygen.create_galois_keys([ctx.key_context_data().galois_tool().get_elt_from_step(1)], galois)
    encryptor = seal.Encryptor(ctx, pk)
    decryptor = seal.Decryptor(ctx, keygen.secret_key())
    ev = seal.Evaluator(ctx)
    encoder = seal.CKKSEncoder(ctx)
    scale = 2.0**40
    values = list(np.random.default_rng(0).uniform(-1, 1, n // 2))

    def fresh() -> Any:
        pt = seal.Plaintext()
        encoder.encode(values, scale, pt)
        ct = seal.Ciphertext()
        encryptor.encrypt(pt, ct)
        return ct

    rows = []
    drops = sorted({round(i * (levels - 1) / max(points - 1, 1)) for i in range(points)})
    base = fresh()
    for drop in drops:
        ct = base
        for _ in range(drop):
            nxt = seal.Ciphertext()
            ev.mod_switch_to_next(ct, nxt)
            ct = nxt
        mod_bits = edge + 40 * (levels - drop)

        def op_add(ct: Any = ct) -> None:
            r = seal.Ciphertext()
            ev.add(ct, ct, r)

        def op_mul(ct: Any = ct) -> None:
            r = seal.Ciphertext()
            ev.multiply(ct, ct, r)
            ev.relinearize_inplace(r, relin)
            ev.rescale_to_next_inplace(r)

        def op_mul_plain(ct: Any = ct) -> None:
            pt = seal.Plaintext()
            encoder.encode(values, scale, pt)
            ev.mod_switch_to_inplace(pt, ct.parms_id())
            r = seal.Ciphertext()
            ev.multiply_plain(ct, pt, r)
            ev.rescale_to_next_inplace(r)

        def op_rotate(ct: Any = ct) -> None:
            r = seal.Ciphertext()
            ev.rotate_vector(ct, 1, galois, r)

        def op_decrypt(ct: Any = ct) -> None:
            pt = seal.Plaintext()
            decryptor.decrypt(ct, pt)
            encoder.decode_double(pt)

        ops = {
            "add": op_add,
            "mul": op_mul,
            "mul_plain": op_mul_plain,
            "rotate": op_rotate,
            "decrypt": op_decrypt,
        }
        if drop == 0:
            ops["encrypt"] = fresh
        cmp = harness.compare(ops, reps)  # the operations interleaved, after a warm-up
        for kind, t in cmp.timings.items():
            rows.append({"op": kind, "log_n": log_n, "mod_bits": mod_bits, "seconds": t.median})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = harness.cli(__doc__, "ckks_cost")  # --quick: 2 points per ring, 3 reps
    args = parser.parse_args(argv)
    # the package's table, unless --out (a folder) is given; --quick writes to scratch
    out = TABLE if args.out is None and not args.quick else harness.out_dir(args) / TABLE.name
    reps = 3 if args.quick else args.reps
    points = 2 if args.quick else 4
    machine = harness.machine()
    rows: list[dict[str, Any]] = []
    for log_n, (edge, levels) in CHAINS.items():
        with harness.stopwatch() as sw:
            rows += calibrate(log_n, edge, levels, reps, points)
        print(f"log_n = {log_n}: {sw.seconds:.1f} s", flush=True)
    import tenseal

    from privlearn.he import CostModel

    model = CostModel.fit(rows)
    data = {
        "description": "median seconds of real CKKS operations (SEAL via tenseal.sealapi, one "
        "thread); fitted by privlearn.he.CostModel",
        "machine": f"{machine['cpu_model']}, {machine['cpu_count']} cores (shared), "
        f"{machine['date'][:10]}",
        "tenseal": tenseal.__version__,
        "reps": reps,
        "loadavg_start": machine.get("loadavg_start"),
        "loadavg_end": harness.loadavg(),
        "fit": {k: {"c": c, "e": e} for k, (c, e) in model.coefficients.items()},
        "rows": rows,
    }
    harness.write_json(data, out)
    for kind, (c, e) in model.coefficients.items():
        print(f"{kind:10s} c = {c:.3e} s  e = {e:.2f}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
