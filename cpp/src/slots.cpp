// CKKS-like slot-layout simulator kernels (see privlearn/he/slots.hpp).

#include "privlearn/he/slots.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "privlearn/checks.hpp"
#include "privlearn/parallel.hpp"

namespace privlearn::he {

namespace {

// Slots per work item: a multiple of 8 (one ChaCha20 block holds 8 raws), so every chunk starts
// on a block boundary.
constexpr Index kChunk = 4096;
// Costs for the thread policy (parallel::threads_for; ns of one thread per slot value, cheap
// end): an element-wise operation streamed from memory, and one with its noise draw (ChaCha20
// words and the integer transform). A training iteration opens ~100 regions, each a few hundred
// microseconds at the paper's sizes: they run on one thread. Results never depend on it.
constexpr double kNsPerSlot = 0.5;
constexpr double kNsPerNoisySlot = 4.0;

inline double slot_work(Index n_ct, Index slots, bool noisy) {
  return static_cast<double>(n_ct) * static_cast<double>(slots) *
         (noisy ? kNsPerNoisySlot : kNsPerSlot);
}

void check_batch(Index n_ct, Index slots) {
  checks::require(n_ct >= 1 && n_ct <= kMaxCiphertexts,
                  "number of ciphertexts must lie in [1, 2^23], got " + std::to_string(n_ct));
  checks::require(slots >= 1 && slots <= kMaxSlots && (slots & (slots - 1)) == 0,
                  "slots must be a power of two <= 2^16, got " + std::to_string(slots));
}

void check_noise(const Noise& noise, std::uint64_t n_ops) {
  checks::require(std::isfinite(noise.scale) && noise.scale >= 0.0,
                  "noise scale must be finite and >= 0");
  checks::require(noise.op_id + n_ops <= kMaxOpId,
                  "operation id exceeds the noise address space (2^22 operations)");
}

// Work items: (ciphertext, chunk) pairs.
struct Items {
  Index per_ct;
  Index count;
  Items(Index n_ct, Index slots) : per_ct((slots + kChunk - 1) / kChunk), count(n_ct * per_ct) {}
};

// z * scale for slots [j0, j0 + n) of ciphertext c into buf (n <= kChunk).
void noise_chunk(const Noise& noise, Index c, Index j0, Index n, double* buf) noexcept {
  alignas(64) std::uint32_t words[2 * kChunk];
  const std::uint64_t start = noise.op_id * kOpStride + static_cast<std::uint64_t>(c) * kCtStride +
                              static_cast<std::uint64_t>(j0);
  const std::size_t nb = static_cast<std::size_t>((n + 7) / 8);
  random::chacha20_blocks(noise.key, start >> 3, noise.stream, nb, words);
  for (Index q = 0; q < n; ++q) {
    const std::uint64_t r = static_cast<std::uint64_t>(words[2 * q]) |
                            (static_cast<std::uint64_t>(words[2 * q + 1]) << 32);
    buf[q] = noise_draw(r) * noise.scale;
  }
}

// body(c, j0, n) on every work item, dynamic chunks of one item (4096 slots): a thread on a quiet
// core takes over the items of a descheduled one. work_ns: the call's cost estimate.
template <class Body>
void for_items(const Items& items, Index slots, int n_threads, double work_ns, Body&& body) {
  const int threads = parallel::threads_for(n_threads, work_ns);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && items.count >= 2)
#endif
  for (Index it = 0; it < items.count; ++it) {
    const Index c = it / items.per_ct;
    const Index j0 = (it % items.per_ct) * kChunk;
    const Index n = std::min(kChunk, slots - j0);
    body(c, j0, n);
  }
  (void)threads;
}

}  // namespace

void add_noise(double* x, Index n_ct, Index slots, const Noise& noise, int n_threads) {
  check_batch(n_ct, slots);
  check_noise(noise, 1);
  if (noise.scale == 0.0) return;
  const Items items(n_ct, slots);
  for_items(items, slots, n_threads, slot_work(n_ct, slots, true), [&](Index c, Index j0, Index n) {
    double z[kChunk];
    noise_chunk(noise, c, j0, n, z);
    double* row = x + c * slots + j0;
    for (Index q = 0; q < n; ++q) row[q] = row[q] + z[q];
  });
}

void binary(const double* a, Index n_ct, const double* b, Index b_rows, Index slots, BinaryOp op,
            double factor, const Noise& noise, double* out, int n_threads) {
  check_batch(n_ct, slots);
  check_noise(noise, 1);
  checks::require(b_rows == n_ct || b_rows == 1,
                  "second operand must have 1 or n_ct rows, got " + std::to_string(b_rows));
  checks::finite(factor, "factor");
  const bool scaled = factor != 1.0;
  const bool noisy = noise.scale != 0.0;
  const Items items(n_ct, slots);
  for_items(items, slots, n_threads, slot_work(n_ct, slots, noisy), [&](Index c, Index j0, Index n) {
    double z[kChunk];
    if (noisy) noise_chunk(noise, c, j0, n, z);
    const double* ar = a + c * slots + j0;
    const double* br = b + (b_rows == 1 ? 0 : c * slots) + j0;
    double* o = out + c * slots + j0;
    for (Index q = 0; q < n; ++q) {
      double v;
      switch (op) {
        case BinaryOp::add: v = ar[q] + br[q]; break;
        case BinaryOp::sub: v = ar[q] - br[q]; break;
        default: v = ar[q] * br[q]; break;
      }
      if (scaled) v = v * factor;
      if (noisy) v = v + z[q];
      o[q] = v;
    }
  });
}

void scalar(const double* a, Index n_ct, Index slots, BinaryOp op, double c, double factor,
            const Noise& noise, double* out, int n_threads) {
  check_batch(n_ct, slots);
  check_noise(noise, 1);
  checks::require(op == BinaryOp::add || op == BinaryOp::mul, "scalar op must be add or mul");
  checks::finite(c, "constant");
  checks::finite(factor, "factor");
  const bool scaled = factor != 1.0;
  const bool noisy = noise.scale != 0.0;
  const Items items(n_ct, slots);
  for_items(items, slots, n_threads, slot_work(n_ct, slots, noisy), [&](Index ct, Index j0, Index n) {
    double z[kChunk];
    if (noisy) noise_chunk(noise, ct, j0, n, z);
    const double* ar = a + ct * slots + j0;
    double* o = out + ct * slots + j0;
    for (Index q = 0; q < n; ++q) {
      double v = op == BinaryOp::add ? ar[q] + c : ar[q] * c;
      if (scaled) v = v * factor;
      if (noisy) v = v + z[q];
      o[q] = v;
    }
  });
}

void rotate(const double* a, Index n_ct, Index slots, Index k, const Noise& noise, double* out,
            int n_threads) {
  check_batch(n_ct, slots);
  check_noise(noise, 1);
  const Index shift = ((k % slots) + slots) % slots;
  const bool noisy = noise.scale != 0.0;
  const Items items(n_ct, slots);
  for_items(items, slots, n_threads, slot_work(n_ct, slots, noisy), [&](Index c, Index j0, Index n) {
    double z[kChunk];
    if (noisy) noise_chunk(noise, c, j0, n, z);
    const double* ar = a + c * slots;
    double* o = out + c * slots + j0;
    for (Index q = 0; q < n; ++q) {
      Index src = j0 + q + shift;
      if (src >= slots) src -= slots;
      double v = ar[src];
      if (noisy) v = v + z[q];
      o[q] = v;
    }
  });
}

void rotate_sum(double* a, Index n_ct, Index slots, const std::vector<Index>& steps,
                const Noise& noise, int n_threads) {
  check_batch(n_ct, slots);
  check_noise(noise, static_cast<std::uint64_t>(steps.size()));
  if (steps.empty()) return;
  std::vector<double> buffer(static_cast<std::size_t>(n_ct * slots));
  double* src = a;
  double* dst = buffer.data();
  const bool noisy = noise.scale != 0.0;
  const Items items(n_ct, slots);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Noise step_noise = noise;
    step_noise.op_id = noise.op_id + i;
    const Index shift = ((steps[i] % slots) + slots) % slots;
    for_items(items, slots, n_threads, slot_work(n_ct, slots, noisy), [&](Index c, Index j0, Index n) {
      double z[kChunk];
      if (noisy) noise_chunk(step_noise, c, j0, n, z);
      const double* s = src + c * slots;
      double* o = dst + c * slots + j0;
      for (Index q = 0; q < n; ++q) {
        Index from = j0 + q + shift;
        if (from >= slots) from -= slots;
        double r = s[from];
        if (noisy) r = r + z[q];
        o[q] = s[j0 + q] + r;
      }
    });
    std::swap(src, dst);
  }
  if (src != a) std::memcpy(a, src, sizeof(double) * static_cast<std::size_t>(n_ct * slots));
}

void bound_mul(const double* a, const double* ea, Index n_ct, const double* b, const double* eb,
               Index b_rows, Index slots, double factor, double fixed, double* out,
               int n_threads) {
  check_batch(n_ct, slots);
  checks::require(b_rows == n_ct || b_rows == 1,
                  "second operand must have 1 or n_ct rows, got " + std::to_string(b_rows));
  checks::finite(factor, "factor");
  checks::finite(fixed, "fixed");
  const bool scaled = factor != 1.0;
  const double slack = std::fabs(factor - 1.0);
  const Items items(n_ct, slots);
  for_items(items, slots, n_threads, slot_work(n_ct, slots, false), [&](Index c, Index j0, Index n) {
    const Index ao = c * slots + j0;
    const Index bo = (b_rows == 1 ? 0 : c * slots) + j0;
    for (Index q = 0; q < n; ++q) {
      const double aa = std::fabs(a[ao + q]);
      const double ab = std::fabs(b[bo + q]);
      const double t1 = aa * eb[bo + q];
      const double t2 = (ab + eb[bo + q]) * ea[ao + q];
      double e = t1 + t2;
      if (scaled) {
        e = e * factor;
        e = e + slack * ((aa + ea[ao + q]) * (ab + eb[bo + q]));
      }
      out[ao + q] = e + fixed;
    }
  });
}

void sum_rows(const double* a, Index n_ct, Index slots, double* out, int n_threads) {
  check_batch(n_ct, slots);
  const Items items(1, slots);
  for_items(items, slots, n_threads, slot_work(n_ct, slots, false), [&](Index, Index j0, Index n) {
    for (Index q = 0; q < n; ++q) out[j0 + q] = a[j0 + q];
    for (Index c = 1; c < n_ct; ++c) {
      const double* row = a + c * slots + j0;
      for (Index q = 0; q < n; ++q) out[j0 + q] = out[j0 + q] + row[q];
    }
  });
}

double max_abs(const double* a, Index size, int n_threads) {
  checks::non_negative(size, "size");
  const Index n_chunks = (size + kChunk - 1) / kChunk;
  std::vector<double> part(static_cast<std::size_t>(std::max<Index>(n_chunks, 1)), 0.0);
  const int threads = parallel::threads_for(n_threads, slot_work(1, size, false));
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && n_chunks >= 2)
#endif
  for (Index b = 0; b < n_chunks; ++b) {
    double m = 0.0;
    const Index hi = std::min(size, (b + 1) * kChunk);
    for (Index i = b * kChunk; i < hi; ++i) m = std::max(m, std::fabs(a[i]));
    part[static_cast<std::size_t>(b)] = m;
  }
  (void)threads;
  double m = 0.0;
  for (double v : part) m = std::max(m, v);
  return m;
}

}  // namespace privlearn::he
