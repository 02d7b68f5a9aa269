#pragma once
// The inner loops over one dense row that every linear kernel runs per visit (issue 32, item 1):
// the four-lane dot products / squared norms of DenseRows (rows.hpp) and the fixed-point
// accumulation of scaled rows (fixed_sum.hpp). The lanes are written once with four-double
// vectors and compiled twice (AVX2 where the CPU has it, chosen at load time; SSE2 otherwise);
// the fixed-point accumulation has an AVX-512DQ, an AVX2 and a scalar kernel (the first the CPU
// has, chosen at load time, for a block of rows; AVX2 for one row in place; integer sums, so all
// give the same bits).
//
// Every function gives the bits of its scalar definition below: lane l of a vector operation is
// the scalar operation on lane l, the products and sums are separate roundings (no FMA:
// -ffp-contract=off), and each partial sum adds its terms in index order. So the clones agree
// with each other, with the scalar loops they replace and with the numpy twin.

#include <cstdint>

#include "privlearn/types.hpp"

namespace privlearn::row_kernels {

// For k in [0, n4) (n4 a multiple of 4), lane l = k mod 4:
//   v_k = x[k] (or x[k] * s when `scaled`),  d[l] += v_k * u[k] (when u != nullptr),
//   q[l] += v_k * v_k (when q != nullptr).
// d and q are read and updated in place (the caller continues the lanes on a tail).
void lanes(const double* x, const double* u, Index n4, bool scaled, double s, double* d,
           double* q);

// lanes() with u and q for two rows x0 (scale s0, sums d0, q0) and x1 (s1, d1, q1) at once:
// the same bits as two calls (each row keeps its own four partial sums in index order); the two
// rows' chains of adds interleave, so neither waits on its own add latency alone.
void lanes_pair(const double* x0, const double* x1, const double* u, Index n4, bool scaled,
                double s0, double s1, double* d0, double* q0, double* d1, double* q1);

// acc[k] += int64(trunc(a * x[k])) (or trunc(a * (x[k] * s)) when `scaled`) for k in [0, m),
// modular int64 addition, when every |term| < 2^31 (the caller's check, fixed::small_terms):
// the truncation through int32 of fixed::add_small_units.
void add_small_units(const double* x, Index m, bool scaled, double s, double a,
                     std::int64_t* acc);

// add_small_units for the rows r < n_rows at x + r stride, coefficients a[r] (and scales s[r],
// or s == nullptr): acc[k] += sum_r int64(trunc(a[r] * v_rk)) for k in [0, m). The int64 sum
// does not depend on the order of its terms, so the result is that of n_rows calls; each block
// of acc stays in a register while every row's terms are added (AVX-512DQ: the products convert
// to int64 directly, equal to the truncation through int32 for |term| < 2^31).
void add_small_units_rows(const double* x, Index stride, Index n_rows, Index m, const double* s,
                          const double* a, std::int64_t* acc);

// The instruction sets add_small_units_rows is built for; it runs the best one the CPU has.
enum class KernelIsa { avx512, avx2, scalar };
// add_small_units_rows with the kernel for `isa` (tests: every build agrees); false, with acc
// untouched, when this CPU or build lacks it.
bool add_small_units_rows_isa(KernelIsa isa, const double* x, Index stride, Index n_rows,
                              Index m, const double* s, const double* a, std::int64_t* acc);

}  // namespace privlearn::row_kernels
