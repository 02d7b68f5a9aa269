#pragma once
// CKKS-like slot-layout simulator: the slot arithmetic of a batch of ciphertexts.
//
// A batch is a row-major (n_ct, slots) array of float64 slot values: row c holds the slots of
// ciphertext c. Nothing is encrypted here. The Python layer (privlearn.he) keeps each batch's
// metadata (remaining modulus bits, scale, tracked error bound) and decides the size of the
// CKKS error each operation adds; these kernels only apply the arithmetic and, when asked, add
// the seeded error. Every kernel is elementwise or a fixed-order reduction, so results are
// bit-identical for any thread count and equal, bit for bit, to the numpy twin
// (privlearn.reference.he), which repeats each floating-point operation in the same order.
//
// Error draws (the "noise" of an operation): slot j of ciphertext c in operation op_id uses
//   r = raw(op_id * kOpStride + c * kCtStride + j)   of the ChaCha20 stream (key, stream),
//   z = 2 * (h0 + h1 + h2 + h3) - 4 * 65535          with h_k the four 16-bit fields of r,
// i.e. a centred Irwin-Hall(4) variable on a 2^-16 grid (variance 4 (65536^2 - 1) / 3): a sum
// of independent bounded terms, approximately Gaussian (CLT) like the CKKS error it models, and
// computed with integer arithmetic only, so C++ and numpy agree exactly (a Box-Muller normal
// would differ in the last ulps between libm and numpy). The slot gets `+ z * scale`, where the
// caller passes scale = (error standard deviation) / sqrt(var z).

#include <cstdint>
#include <vector>

#include "privlearn/random.hpp"
#include "privlearn/types.hpp"

namespace privlearn::he {

inline constexpr std::uint64_t kOpStride = std::uint64_t{1} << 40;  // addresses per operation
inline constexpr std::uint64_t kCtStride = std::uint64_t{1} << 17;  // addresses per ciphertext
inline constexpr Index kMaxSlots = Index{1} << 16;                  // log_n <= 17
inline constexpr Index kMaxCiphertexts = Index{1} << 23;
inline constexpr std::uint64_t kMaxOpId = std::uint64_t{1} << 22;

// The seeded error of one operation; scale == 0 means none.
struct Noise {
  random::Key key{};
  std::uint64_t stream = 0;
  std::uint64_t op_id = 0;
  double scale = 0.0;
};

enum class BinaryOp : int { add = 0, sub = 1, mul = 2 };

// The integer-valued draw z for raw r (see the header comment).
inline double noise_draw(std::uint64_t r) noexcept {
  const std::int64_t s = static_cast<std::int64_t>((r & 0xFFFFu) + ((r >> 16) & 0xFFFFu) +
                                                   ((r >> 32) & 0xFFFFu) + (r >> 48));
  return static_cast<double>(2 * s - 4 * 65535);
}

// x[c, j] += z(op_id, c, j) * scale, in place.
void add_noise(double* x, Index n_ct, Index slots, const Noise& noise, int n_threads);

// out = ((a OP b) * factor) + z * scale, elementwise; b has b_rows == n_ct rows or 1 row
// (broadcast to every ciphertext). factor == 1 skips the multiplication.
void binary(const double* a, Index n_ct, const double* b, Index b_rows, Index slots, BinaryOp op,
            double factor, const Noise& noise, double* out, int n_threads);

// out = ((a OP c) * factor) + z * scale with a scalar c (OP is add or mul).
void scalar(const double* a, Index n_ct, Index slots, BinaryOp op, double c, double factor,
            const Noise& noise, double* out, int n_threads);

// out[c, j] = a[c, (j + k) mod slots] + z * scale: CKKS rotation to the left by k.
void rotate(const double* a, Index n_ct, Index slots, Index k, const Noise& noise, double* out,
            int n_threads);

// For each step s_i in order (operation id noise.op_id + i):
//   a[c, j] <- a[c, j] + (a[c, (j + s_i) mod slots] + z * scale)
// in place: the rotate-and-add sums (SumColVec, replication, SumRowVec) of Kim et al. 2018a.
void rotate_sum(double* a, Index n_ct, Index slots, const std::vector<Index>& steps,
                const Noise& noise, int n_threads);

// out[j] = a[0, j] + a[1, j] + ... + a[n_ct - 1, j], added in ciphertext order.
void sum_rows(const double* a, Index n_ct, Index slots, double* out, int n_threads);

// Per-slot error bound of a product (worst case over the operands' bounds ea, eb):
//   out = (|a| eb + (|b| + eb) ea) * factor + |factor - 1| (|a| + ea)(|b| + eb) + fixed
// (the second term only when factor != 1); b and eb have 1 or n_ct rows.
void bound_mul(const double* a, const double* ea, Index n_ct, const double* b, const double* eb,
               Index b_rows, Index slots, double factor, double fixed, double* out,
               int n_threads);

// max |a| over all entries (0 for an empty array).
double max_abs(const double* a, Index size, int n_threads);

}  // namespace privlearn::he
