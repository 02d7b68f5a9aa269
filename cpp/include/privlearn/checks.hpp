#pragma once
// Input checks shared by every kernel. They throw std::invalid_argument (pybind11 turns it into
// a Python ValueError) and must run before any OpenMP region: no exception may escape one.

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "privlearn/types.hpp"

namespace privlearn::checks {

[[noreturn]] inline void fail(const std::string& message) { throw std::invalid_argument(message); }

inline void require(bool condition, const std::string& message) {
  if (!condition) fail(message);
}

inline void finite(double value, const char* name) {
  if (!std::isfinite(value)) fail(std::string(name) + " must be finite, got " + std::to_string(value));
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
  for (Index i = 0; i < X.rows(); ++i)
    for (Index j = 0; j < X.cols(); ++j)
      if (!std::isfinite(X(i, j)))
        fail(std::string(name) + " contains a non-finite value at row " + std::to_string(i) +
             ", column " + std::to_string(j));
}

}  // namespace privlearn::checks
