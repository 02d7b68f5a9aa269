"""ChaCha20 streams: RFC test vectors, an independent oracle, core == reference, thread
independence, distributions and bad input.

Statistical tests use fixed seeds, so each is deterministic; the stated false-failure
probability is the chance that a correct sampler fails at that threshold for a seed chosen at
random (each KS/chi-square test rejects at p < 1e-4, each z-test at |z| > 4.5: about 1e-5).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from privlearn import _core
from privlearn import random as core_random
from privlearn.reference import random as ref_random

P_MIN = 1e-4  # KS / chi-square rejection threshold = false-failure probability per test
Z_MAX = 4.5  # z-test threshold, two-sided false-failure probability ~7e-6

STREAMS = [core_random.Stream, ref_random.Stream]
BLOCKS = [core_random.chacha20_block, ref_random.chacha20_block]


def _le_bytes(words: np.ndarray) -> str:
    return np.asarray(words, dtype="<u4").tobytes().hex()


# ---- ChaCha20 block function ----------------------------------------------------------------
@pytest.mark.parametrize("block", BLOCKS)
def test_rfc8439_section_2_3_2(block):
    key = bytes(range(32))
    # nonce 00 00 00 09 00 00 00 4a 00 00 00 00 and block count 1 in the 64/64 layout
    out = block(key, 0x0900000000000001, 0x4A000000)
    expected = [
        0xE4E7F110,
        0x15593BD1,
        0x1FDD0F50,
        0xC47120A3,
        0xC7F4D1C7,
        0x0368C033,
        0x9AAA2204,
        0x4E6CD4C3,
        0x466482D2,
        0x09AA9F07,
        0x05D7C214,
        0xA2028BD9,
        0xD19C12B5,
        0xB94E16DE,
        0xE883D0CB,
        0x4E3C50A2,
    ]
    assert out.dtype == np.uint32
    assert out.tolist() == expected


@pytest.mark.parametrize("block", BLOCKS)
def test_rfc8439_appendix_a1_vectors(block):
    # A.1 test vectors #1 and #2: all-zero key and nonce, block counters 0 and 1
    assert _le_bytes(block(bytes(32), 0, 0)) == (
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
        "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
    )
    assert _le_bytes(block(bytes(32), 1, 0)) == (
        "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
        "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f"
    )


def test_block_matches_cryptography_oracle():
    """OpenSSL's ChaCha20 (via `cryptography`) takes state words 12-15 as a 16-byte nonce."""
    ciphers = pytest.importorskip("cryptography.hazmat.primitives.ciphers")
    rng = np.random.default_rng(20261120)
    for _ in range(25):
        key = rng.bytes(32)
        counter = int(rng.integers(0, 2**63)) * 2 + int(rng.integers(0, 2))
        stream = int(rng.integers(0, 2**63)) * 2 + int(rng.integers(0, 2))
        nonce = counter.to_bytes(8, "little") + stream.to_bytes(8, "little")
        enc = ciphers.Cipher(ciphers.algorithms.ChaCha20(key, nonce), mode=None).encryptor()
        keystream = enc.update(bytes(64))
        for block in BLOCKS:
            assert _le_bytes(block(key, counter, stream)) == keystream.hex()


# ---- keys and seeds -----------------------------------------------------------------------------
def test_seed_expansion_identical_and_documented():
    for seed in [0, 1, 42, 2**64 - 1]:
        k = core_random.key_from_seed(seed)
        assert k == ref_random.key_from_seed(seed)
        assert len(k) == 32
        # documented: words 0-7 of block(zero key, counter=seed, stream=SEED_STREAM)
        from privlearn._stream_base import SEED_STREAM

        assert (
            k == ref_random.chacha20_block(bytes(32), seed, SEED_STREAM)[:8].astype("<u4").tobytes()
        )
    assert core_random.key_from_seed(1) != core_random.key_from_seed(2)


@pytest.mark.parametrize("Stream", STREAMS)
def test_seed_none_draws_fresh_keys_and_explicit_key_is_used(Stream):
    a, b = Stream(), Stream()
    assert a.key != b.key and len(a.key) == 32
    key = bytes(range(32))
    s = Stream(key=key, stream=0x4A000000 << 0)
    assert s.key == key
    # word 16 of stream 0x4a000000 is word 0 of block 1 under this key
    np.testing.assert_array_equal(s.words(16, 16), ref_random.chacha20_block(key, 1, 0x4A000000))


@pytest.mark.parametrize("Stream", STREAMS)
def test_substream_changes_only_the_stream(Stream):
    s = Stream(seed=5, stream=1)
    t = s.substream(2)
    assert t.key == s.key and t.stream == 2
    assert not np.array_equal(s.words(0, 8), t.words(0, 8))


# ---- core == reference --------------------------------------------------------------------------
SPANS = [(0, 1), (3, 37), (15, 100), (1001, 555), (2**40 + 5, 77)]


@pytest.mark.parametrize("seed", [0, 7, 123456789])
@pytest.mark.parametrize("start,n", SPANS)
@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_core_equals_reference_all_samplers(seed, start, n, n_threads):
    c, r = core_random.Stream(seed=seed, stream=3), ref_random.Stream(seed=seed, stream=3)
    t = {"n_threads": n_threads}
    np.testing.assert_array_equal(c.words(start, n, **t), r.words(start, n))
    np.testing.assert_array_equal(c.raws(start, n, **t), r.raws(start, n))
    np.testing.assert_array_equal(c.uniform(start, n, **t), r.uniform(start, n))
    np.testing.assert_allclose(c.normal(start, n, **t), r.normal(start, n), rtol=1e-14)
    np.testing.assert_allclose(
        c.exponential(start, n, 2.5, **t), r.exponential(start, n, 2.5), rtol=1e-14
    )
    np.testing.assert_allclose(c.laplace(start, n, 0.7, **t), r.laplace(start, n, 0.7), rtol=1e-14)
    row = start % 2**31
    for shape in [1.0, 4.0, 0.3, 2.5, 17.2]:
        np.testing.assert_allclose(
            c.gamma(row, n, shape, 1.5, **t), r.gamma(row, n, shape, 1.5), rtol=1e-14
        )
    np.testing.assert_allclose(
        c.l2_laplace(row, min(n, 40), 7, 0.5, **t),
        r.l2_laplace(row, min(n, 40), 7, 0.5),
        rtol=1e-14,
    )
    np.testing.assert_array_equal(
        c.choice_without_replacement(row, 1000, 50), r.choice_without_replacement(row, 1000, 50)
    )
    np.testing.assert_array_equal(c.permutation(row, 300), r.permutation(row, 300))
    np.testing.assert_array_equal(c.poisson_mask(row, 999, 0.1, **t), r.poisson_mask(row, 999, 0.1))


@pytest.mark.parametrize("population,k", [(10, 10), (10**6, 3), (97, 40), (2**40, 5)])
def test_choice_dense_and_sparse_paths_agree_with_reference(population, k):
    c, r = core_random.Stream(seed=11), ref_random.Stream(seed=11)
    got = c.choice_without_replacement(9, population, k)
    np.testing.assert_array_equal(got, r.choice_without_replacement(9, population, k))
    assert got.dtype == np.int64 and len(set(got.tolist())) == k
    assert got.min() >= 0 and got.max() < population


def test_core_is_bit_identical_across_thread_counts():
    s = core_random.Stream(seed=99, stream=17)
    n = 300_001  # several work chunks, an odd tail
    for method, args in [
        ("words", ()),
        ("uniform", ()),
        ("normal", ()),
        ("exponential", (3.0,)),
        ("laplace", (3.0,)),
    ]:
        base = getattr(s, method)(5, n, *args, n_threads=1)
        for t in (2, 4):
            assert np.array_equal(getattr(s, method)(5, n, *args, n_threads=t), base), method
    for t in (2, 4):
        assert np.array_equal(
            s.gamma(0, 3000, 2.5, n_threads=t), s.gamma(0, 3000, 2.5, n_threads=1)
        )
        assert np.array_equal(
            s.l2_laplace(0, 500, 9, 1.0, n_threads=t), s.l2_laplace(0, 500, 9, 1.0, n_threads=1)
        )
        assert np.array_equal(
            s.poisson_mask(3, 100_000, 0.3, n_threads=t),
            s.poisson_mask(3, 100_000, 0.3, n_threads=1),
        )


@settings(max_examples=40, deadline=None)
@given(start=st.integers(0, 2**45), n=st.integers(0, 200), cut=st.integers(0, 200))
def test_any_draw_is_addressable(start, n, cut):
    """A draw depends on its address only: slices of a long request equal short requests."""
    cut = min(cut, n)
    s = core_random.Stream(seed=2024)
    for method in ("words", "raws", "normal", "uniform"):
        full = getattr(s, method)(start, n)
        assert full.shape == (n,)
        np.testing.assert_array_equal(getattr(s, method)(start + cut, n - cut), full[cut:])
    w = s.words(2 * start, 2 * n)
    expected = w[0::2].astype(np.uint64) | (w[1::2].astype(np.uint64) << np.uint64(32))
    np.testing.assert_array_equal(s.raws(start, n), expected)


def test_words_are_consecutive_blocks():
    s = core_random.Stream(seed=3, stream=8)
    blocks = np.concatenate([core_random.chacha20_block(s.key, c, 8) for c in range(4)])
    np.testing.assert_array_equal(s.words(0, 64), blocks)


def test_uniform_and_laplace_bit_layout():
    s = core_random.Stream(seed=4)
    raw = s.raws(0, 1000)
    np.testing.assert_array_equal(s.uniform(0, 1000), (raw >> np.uint64(11)) * 2.0**-53)
    lap = s.laplace(0, 1000, 1.0)
    assert np.array_equal(lap < 0, (raw & np.uint64(1)) == 1)


# ---- distributions -------------------------------------------------------------------------------
N_STAT = 200_000


def _ks_ok(sample, cdf, *args):
    return stats.kstest(sample, cdf, args=args).pvalue > P_MIN


def test_uniform_distribution():
    u = core_random.Stream(seed=101).uniform(0, N_STAT)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert _ks_ok(u, "uniform")


def test_normal_distribution_and_pair_independence():
    z = core_random.Stream(seed=102).normal(0, N_STAT)
    assert _ks_ok(z, "norm")
    assert abs(z.mean()) * np.sqrt(N_STAT) < Z_MAX
    assert abs(z.var() - 1.0) / np.sqrt(2.0 / N_STAT) < Z_MAX
    # cosine and sine branches of one Box-Muller pair are independent normals
    r = np.corrcoef(z[0::2], z[1::2])[0, 1]
    assert abs(r) * np.sqrt(N_STAT / 2) < Z_MAX
    assert _ks_ok(z[0::2], "norm") and _ks_ok(z[1::2], "norm")


# ---- the Box-Muller kernel (cpp/src/box_muller.cpp) -------------------------------------------
def _extended_box_muller(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The oracle: r cos t, r sin t in 80-bit extended precision, t = the same double 2 pi u."""
    ext = np.longdouble
    u1 = (a >> np.uint64(11)).astype(ext) * ext(2.0) ** -53
    u2 = (b >> np.uint64(11)).astype(np.float64) * 2.0**-53
    t = (6.283185307179586 * u2).astype(ext)  # rounded to double first, as the transform says
    r = np.sqrt(ext(-2.0) * np.log(ext(1.0) - u1))
    return r * np.cos(t), r * np.sin(t)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    wd = want.astype(np.float64)
    return (np.abs(got.astype(np.longdouble) - want) / np.spacing(np.abs(wd))).astype(float)


@pytest.mark.skipif(
    np.finfo(np.longdouble).nmant < 63, reason="the oracle needs an 80-bit long double"
)
def test_box_muller_kernel_within_3_ulps_of_extended_precision():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2**64, 300_000, dtype=np.uint64)
    b = rng.integers(0, 2**64, 300_000, dtype=np.uint64)
    # edges: u = 0, u = 1 - 2^-53 (x = 2^-53: log's smallest input), u next to 1/2 (log's
    # exponent step) and at / next to every quadrant boundary k / 4 and k / 8 of t
    top = [0, 1, 2, (1 << 52) - 1, 1 << 52, (1 << 52) + 1, (1 << 53) - 1]
    top += [k * (1 << 50) + d for k in range(1, 8) for d in (-1, 0, 1)]
    e = np.array(top, dtype=np.uint64) << np.uint64(11)
    ea, eb = np.meshgrid(e, e)
    a = np.concatenate([a, ea.ravel(), [np.uint64(2**64 - 1)]])
    b = np.concatenate([b, eb.ravel(), [np.uint64(2**64 - 1)]])
    c, s = _core.random_box_muller(a, b)
    want_c, want_s = _extended_box_muller(a, b)
    for got, want in ((c, want_c), (s, want_s)):
        zero = want == 0
        assert np.all(got[zero] == 0)
        assert _ulps(got[~zero], want[~zero]).max() <= 3.0
    # r = 0 exactly when u1 = 0; the largest radius sqrt(-2 log 2^-53) at u1 = 1 - 2^-53
    assert np.all(c[a >> np.uint64(11) == 0] == 0)
    assert np.isclose(np.hypot(c[-1], s[-1]), np.sqrt(106 * np.log(2.0)), rtol=1e-15)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 15, 16, 17, 100])
def test_normal_at_scattered_is_normal_bit_for_bit(n):
    # normals_at (DP-SCD's per-row noise and jitter) and normal() share one kernel: the same
    # bits at every address, whatever the count or order; the numpy reference agrees to 1e-14
    rng = np.random.default_rng(n)
    index = rng.integers(0, 1 << 60, n, dtype=np.uint64)
    index[0] = 0
    key = core_random.Stream(seed=21, stream=6)._key
    got = _core.random_normal_at(key, 6, index)
    want = np.array([_core.random_normal(key, 6, int(i), 1)[0] for i in index])
    np.testing.assert_array_equal(got, want)
    ref = ref_random.Stream(seed=21, stream=6)._normal_at(index)
    np.testing.assert_allclose(got, ref, rtol=1e-14)


@pytest.mark.parametrize("scale", [0.5, 3.0])
def test_exponential_and_laplace_distributions(scale):
    s = core_random.Stream(seed=103)
    assert _ks_ok(s.exponential(0, N_STAT, scale), "expon", 0.0, scale)
    assert _ks_ok(s.laplace(0, N_STAT, scale), "laplace", 0.0, scale)


@pytest.mark.parametrize("shape", [1.0, 3.0, 10.0, 0.3, 2.5, 17.2])
def test_gamma_distribution(shape):
    g = core_random.Stream(seed=104).gamma(0, 50_000, shape, 2.0)
    assert g.min() > 0.0
    assert _ks_ok(g, "gamma", shape, 0.0, 2.0)


@pytest.mark.parametrize("dim,epsilon", [(1, 1.0), (3, 0.5), (15, 2.0)])
def test_l2_laplace_radius_and_direction(dim, epsilon):
    z = core_random.Stream(seed=105).l2_laplace(0, 40_000, dim, epsilon)
    radius = np.linalg.norm(z, axis=1)
    # Song et al. (2013): density prop. to exp(-(eps/2)||z||) <=> ||z|| ~ Gamma(d, 2/eps)
    assert _ks_ok(radius, "gamma", dim, 0.0, 2.0 / epsilon)
    u = z / radius[:, None]
    n = u.shape[0]
    # uniform direction: mean 0 and second moment I/d
    assert np.all(np.abs(u.mean(axis=0)) * np.sqrt(n * dim) < Z_MAX)
    if dim == 3:  # Archimedes: each coordinate of a uniform point on S^2 is U(-1, 1)
        assert _ks_ok(u[:, 0], "uniform", -1.0, 2.0)
    if dim == 1:
        assert abs((u[:, 0] > 0).mean() - 0.5) * np.sqrt(4 * n) < Z_MAX
    second = (u.T @ u) / n
    assert np.allclose(np.diag(second), 1.0 / dim, atol=Z_MAX * np.sqrt(2.0 / n))


def test_choice_is_uniform():
    s = core_random.Stream(seed=106)
    population, k, reps = 20, 5, 8000
    counts = np.zeros(population)
    first = np.zeros(population)
    for t in range(reps):
        c = s.choice_without_replacement(t, population, k)
        assert len(set(c.tolist())) == k
        counts[c] += 1
        first[c[0]] += 1
    assert stats.chisquare(counts).pvalue > P_MIN
    assert stats.chisquare(first).pvalue > P_MIN  # the order is random too
    positions = np.array([np.argmax(s.permutation(t, 10) == 0) for t in range(5000)])
    assert stats.chisquare(np.bincount(positions, minlength=10)).pvalue > P_MIN


@pytest.mark.parametrize("q", [0.0, 0.01, 0.3, 1.0])
def test_poisson_mask_rate(q):
    m = core_random.Stream(seed=107).poisson_mask(0, 100_000, q)
    assert m.dtype == np.bool_ and m.shape == (100_000,)
    if q in (0.0, 1.0):
        assert m.all() == (q == 1.0) and m.any() == (q == 1.0)
    else:
        assert abs(m.sum() - q * m.size) / np.sqrt(m.size * q * (1 - q)) < Z_MAX


# ---- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize("Stream", STREAMS)
def test_bad_arguments_raise_clear_errors(Stream):
    with pytest.raises(ValueError, match="seed"):
        Stream(seed=-1)
    with pytest.raises(TypeError, match="seed"):
        Stream(seed=1.5)
    with pytest.raises(ValueError, match="32 bytes"):
        Stream(key=b"short")
    with pytest.raises(ValueError, match="either seed or key"):
        Stream(seed=1, key=bytes(32))
    with pytest.raises(ValueError, match="stream"):
        Stream(seed=1, stream=2**64)
    s = Stream(seed=1)
    with pytest.raises(ValueError, match="n must"):
        s.normal(0, -1)
    with pytest.raises(TypeError, match="start"):
        s.uniform(0.5, 3)
    with pytest.raises(ValueError, match="scale"):
        s.laplace(0, 3, 0.0)
    with pytest.raises(ValueError, match="shape"):
        s.gamma(0, 3, float("nan"))
    with pytest.raises(ValueError, match="epsilon"):
        s.l2_laplace(0, 3, 2, -1.0)
    with pytest.raises(ValueError, match="dim"):
        s.l2_laplace(0, 3, 0, 1.0)
    with pytest.raises(ValueError, match="k must"):
        s.choice_without_replacement(0, 5, 6)
    with pytest.raises(ValueError, match="q must"):
        s.poisson_mask(0, 5, 1.5)
    with pytest.raises(ValueError, match="n_threads"):
        s.uniform(0, 3, n_threads=0)
    with pytest.raises(ValueError, match="address space"):
        s.gamma(2**32 - 1, 2, 1.0)


def test_core_checks_arrive_as_value_error():
    """The C++ layer re-checks its input; std::invalid_argument arrives as ValueError."""
    with pytest.raises(ValueError, match="32 bytes"):
        _core.random_normal(b"x" * 31, 0, 0, 4)
    with pytest.raises(ValueError, match="scale"):
        _core.random_laplace(bytes(32), 0, 0, 4, -1.0)
    with pytest.raises(ValueError, match="k must"):
        _core.choice_without_replacement(bytes(32), 0, 0, 3, 4)
    with pytest.raises(ValueError, match="address space"):
        _core.random_gamma(bytes(32), 0, 2**32, 1, 1.0, 1.0)


# ---- Poisson subsampling by geometric gaps -------------------------------------------------------
@pytest.mark.parametrize(
    "index,population,q",
    [
        (0, 1000, 0.01),
        (3, 100_000, 0.00256),
        (7, 50, 1.0),
        (9, 50, 0.0),
        (11, 10, 0.5),
        (2**32 - 1, 5000, 0.3),
        (4, 10**6, 1e-7),
        (5, 0, 0.5),
        (6, 3 * 2**20 + 17, 2e-4),  # four blocks of the layout-2 walk, the last one short
        (8, 10**6, 6.4e-5),  # DP-SGD's default batch of 64 at 1M rows: a short chunked walk
        (10, 200_000, 9e-5),  # mean 18: the shortest walk read in chunks
    ],
)
def test_poisson_sample_core_equals_reference(index, population, q):
    c, r = core_random.Stream(seed=5), ref_random.Stream(seed=5)
    got = c.poisson_sample(index, population, q)
    np.testing.assert_array_equal(got, r.poisson_sample(index, population, q))
    assert got.dtype == np.int64
    assert np.all(np.diff(got) > 0) and (got.size == 0 or (got[0] >= 0 and got[-1] < population))
    if q == 1.0:
        np.testing.assert_array_equal(got, np.arange(population))


def test_poisson_sample_is_independent_bernoulli():
    """Every element kept with probability q, independently: uniform per-element counts
    (chi-square), Binomial(n, q) batch sizes (mean and variance z-tests) and no correlation
    between neighbours (geometric gaps)."""
    s = core_random.Stream(seed=108)
    n, q, reps = 200, 0.05, 20_000
    masks = np.zeros((reps, n), dtype=bool)
    for t in range(reps):
        masks[t, s.poisson_sample(t, n, q)] = True
    assert stats.chisquare(masks.sum(axis=0)).pvalue > P_MIN
    sizes = masks.sum(axis=1)
    assert abs(sizes.mean() - n * q) / np.sqrt(n * q * (1 - q) / reps) < Z_MAX
    var_se = np.sqrt(2.0 / reps) * n * q * (1 - q)  # normal approximation of the variance's s.e.
    assert abs(sizes.var() - n * q * (1 - q)) / var_se < Z_MAX
    a, b = masks[:, :-1].ravel(), masks[:, 1:].ravel()
    r = np.corrcoef(a, b)[0, 1]
    assert abs(r) * np.sqrt(a.size) < Z_MAX


def test_poisson_sample_layout_version_two():
    """Layout 2 (issue 14): block b of 2**20 elements is its own geometric walk reading
    row(index, b * 2**21 + j). Recomputed here from the raw words for the second block."""
    assert _core.POISSON_LAYOUT_VERSION == core_random.POISSON_LAYOUT_VERSION == 2
    assert _core.POISSON_BLOCK == core_random.POISSON_BLOCK == 2**20
    s, q, n = core_random.Stream(seed=12), 3e-4, 2**21
    whole = s.poisson_sample(4, n, q)
    raws = ref_random.Stream(seed=12)._row_raws(np.array([4]), 2**21, 2000)[0]
    gaps = np.floor(np.log(1.0 - (raws >> np.uint64(11)) * 2.0**-53) / np.log1p(-q)) + 1
    expected = 2**20 - 1 + np.cumsum(gaps).astype(np.int64)
    np.testing.assert_array_equal(whole[whole >= 2**20], expected[expected < n])


@pytest.mark.parametrize("Stream", STREAMS)
@pytest.mark.parametrize(
    "population, q, start, stop",
    [
        (3 * 2**20 + 5, 1e-4, 2**20 - 3, 2**21 + 9),  # straddles two block boundaries
        (1000, 0.3, 0, 1),
        (1000, 0.3, 999, 1000),
        (1000, 0.3, 500, 500),
        (1000, 1.0, 10, 20),
        (1000, 0.0, 10, 20),
    ],
)
def test_poisson_sample_range_is_the_restriction_of_the_sample(Stream, population, q, start, stop):
    """A worker holding rows [start, stop) samples exactly its part of the batch."""
    s = Stream(seed=31)
    whole = s.poisson_sample(7, population, q)
    part = s.poisson_sample(7, population, q, start=start, stop=stop)
    np.testing.assert_array_equal(part, whole[(whole >= start) & (whole < stop)])


@given(
    cuts=st.lists(st.integers(0, 3000), min_size=0, max_size=6),
    q=st.sampled_from([0.01, 0.2, 0.9]),
)
@settings(max_examples=25, deadline=None)
def test_poisson_sample_ranges_partition_the_sample(cuts, q):
    """Any partition of the rows into ranges gives back the whole sample (core)."""
    s = core_random.Stream(seed=32)
    bounds = [0, *sorted(cuts), 3000]
    parts = [s.poisson_sample(2, 3000, q, start=a, stop=b) for a, b in zip(bounds[:-1], bounds[1:])]
    np.testing.assert_array_equal(np.concatenate(parts), s.poisson_sample(2, 3000, q))


def test_poisson_sample_is_bernoulli_across_block_boundaries():
    """Inclusion rate q on both sides of a block boundary (layout 2), z-tests."""
    s = core_random.Stream(seed=109)
    n, q, reps = 2**20 + 2**12, 0.01, 40
    lo, hi = 2**20 - 2**12, n  # 4096 rows before and after the boundary
    before = after = 0
    for t in range(reps):
        rows = s.poisson_sample(t, n, q, start=lo, stop=hi)
        before += int((rows < 2**20).sum())
        after += int((rows >= 2**20).sum())
    m = reps * 2**12
    for count in (before, after):
        assert abs(count - m * q) / np.sqrt(m * q * (1 - q)) < Z_MAX


@pytest.mark.parametrize("Stream", STREAMS)
def test_poisson_sample_bad_arguments(Stream):
    s = Stream(seed=1)
    with pytest.raises(ValueError, match="q must"):
        s.poisson_sample(0, 10, -0.1)
    with pytest.raises(ValueError, match="index"):
        s.poisson_sample(2**32, 10, 0.1)
    with pytest.raises(ValueError, match="population"):
        s.poisson_sample(0, 2**34, 0.1)
    with pytest.raises(ValueError, match="stop"):
        s.poisson_sample(0, 10, 0.1, start=0, stop=11)
    with pytest.raises(ValueError, match="start"):
        s.poisson_sample(0, 10, 0.1, start=5, stop=4)
