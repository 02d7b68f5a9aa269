#pragma once
// Input checks shared by every kernel. They throw std::invalid_argument (pybind11 turns it into
// a Python ValueError) and must run before any OpenMP region: no exception may escape one.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "privlearn/types.hpp"

namespace privlearn::checks {

[[noreturn]] inline void fail(const std::string& message) { throw std::invalid_argument(message); }

inline void require(bool condition, const std::string& message) {
  if (!condition) fail(message);
}
// The same for a literal message: no std::string is built unless the check fails (checks in
// per-row and per-step loops).
inline void require(bool condition, const char* message) {
  if (!condition) fail(message);
}

inline void finite(double value, const char* name) {
  if (!std::isfinite(value)) fail(std::string(name) + " must be finite, got " + std::to_string(value));
}

// Every entry of v[0 .. n) finite, in one branch-free pass; fails with "<name> contains NaN or
// infinite values", quoting neither a value nor which kind (v holds private values: labels,
// targets; issue 30, item 5).
inline void all_finite_values(const double* v, Index n, const char* name) {
  bool ok = true;
  for (Index i = 0; i < n; ++i) ok &= std::isfinite(v[i]);
  if (!ok) fail(std::string(name) + " contains NaN or infinite values");
}

inline void positive(double value, const char* name) {
  if (!(value > 0.0) || !std::isfinite(value))
    fail(std::string(name) + " must be a finite number > 0, got " + std::to_string(value));
}

inline void probability(double value, const char* name) {
  if (!(value >= 0.0 && value <= 1.0))
    fail(std::string(name) + " must lie in [0, 1], got " + std::to_string(value));
}

inline void non_negative(Index value, const char* name) {
  if (value < 0) fail(std::string(name) + " must be >= 0, got " + std::to_string(value));
}

// Every entry of a dense matrix is finite; names the first offending entry.
inline void all_finite(const MatRef& X, const char* name) {
  const Index m = X.cols();
  for (Index i = 0; i < X.rows(); ++i) {
    // Branch-free integer test of the whole row, which the compiler vectorises (this check reads
    // all of X, so it should cost one read of memory): a double is inf or NaN iff its exponent
    // field is all ones, iff adding one to that field carries into the sign bit. The position
    // is searched for only on failure.
    const double* x = X.row(i).data();
    constexpr std::uint64_t kExp = 0x7FF0000000000000ULL, kOne = 0x0010000000000000ULL;
    std::uint64_t bad = 0;
    for (Index j = 0; j < m; ++j) {
      std::uint64_t u;
      std::memcpy(&u, x + j, sizeof u);
      bad |= (u & kExp) + kOne;
    }
    if (bad >> 63)
      for (Index j = 0; j < m; ++j)
        if (!std::isfinite(x[j]))
          fail(std::string(name) + " contains a non-finite value at row " + std::to_string(i) +
               ", column " + std::to_string(j));
  }
}

}  // namespace privlearn::checks

namespace privlearn::checks {

// The fit's one pass of checks over a dense X (issue 32, item 2): the plain sum of squares of
// each row into sq[0..rows) (four partial sums over k mod 4, then (q0 + q1) + (q2 + q3): the
// order of DenseRows::dot_sq) and, from it, every entry finite: a NaN or infinite entry makes
// its row's sum NaN or inf, so only a row whose sum is not finite is read again, exactly (a row
// of finite entries whose squares overflow is no error: its sum is inf and the caller rescales
// it, as every row outside ScaledNorm's plain range, rows.hpp). Fails with "<name> contains NaN
// or infinite values", quoting no value.
inline void finite_row_squares(const MatRef& X, double* sq, const char* name) {
  const Index m = X.cols();
  for (Index i = 0; i < X.rows(); ++i) {
    const double* x = X.row(i).data();
    double q[4] = {0.0, 0.0, 0.0, 0.0};
    Index k = 0;
    for (; k + 4 <= m; k += 4)
      for (int l = 0; l < 4; ++l) q[l] += x[k + l] * x[k + l];
    for (; k < m; ++k) q[0] += x[k] * x[k];
    sq[i] = (q[0] + q[1]) + (q[2] + q[3]);
    if (!std::isfinite(sq[i]))
      for (Index j = 0; j < m; ++j)
        if (!std::isfinite(x[j])) fail(std::string(name) + " contains NaN or infinite values");
  }
}

}  // namespace privlearn::checks
