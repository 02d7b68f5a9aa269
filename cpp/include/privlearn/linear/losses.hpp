#pragma once
// Per-example losses of the linear models, as functions of the margin z = x^T w and the label y:
//   log_loss  l = log(1 + exp(-y z)),  dl/dz = -y / (1 + exp(y z))
//   hinge     l = max(0, 1 - y z),     dl/dz = -y if y z < 1 else 0   (a subgradient)
//   squared   l = (z - y)^2 / 2,       dl/dz = z - y
// The gradient with respect to w is (dl/dz) x.

#include <cmath>
#include <string>

#include "privlearn/checks.hpp"

namespace privlearn::linear {

enum class Loss { log_loss = 0, hinge = 1, squared = 2 };

inline Loss loss_from_string(const std::string& name) {
  if (name == "log_loss") return Loss::log_loss;
  if (name == "hinge") return Loss::hinge;
  if (name == "squared") return Loss::squared;
  checks::fail("unknown loss '" + name + "' (expected log_loss, hinge or squared)");
}

inline double loss_value(Loss loss, double z, double y) {
  switch (loss) {
    case Loss::log_loss: {
      const double m = y * z;  // log(1 + exp(-m)), stable for both signs
      return m > 0 ? std::log1p(std::exp(-m)) : -m + std::log1p(std::exp(m));
    }
    case Loss::hinge:
      return std::fmax(0.0, 1.0 - y * z);
    case Loss::squared:
      return 0.5 * (z - y) * (z - y);
  }
  return 0.0;
}

inline double loss_derivative(Loss loss, double z, double y) {
  switch (loss) {
    case Loss::log_loss:
      return -y / (1.0 + std::exp(y * z));
    case Loss::hinge:
      return y * z < 1.0 ? -y : 0.0;
    case Loss::squared:
      return z - y;
  }
  return 0.0;
}

// ---- Parameter bounds shared by the linear trainers (sgd.hpp, scd.hpp) ----------------------
// Chosen so that no product of parameters the kernels form (eta0 * alpha, 1 / (alpha t),
// sigma * clip, noise_std * sqrt(T), ...) can overflow or vanish into subnormals, while leaving
// orders of magnitude beyond any sensible setting. The Python layer (_specs/arguments.py) checks
// the same bounds first.
inline constexpr double kScaleMin = 1e-12;   // alpha (> 0), eta0, clip (> 0): in [1e-12, 1e12]
inline constexpr double kScaleMax = 1e12;    // ... and noise_std in [0, 1e12]
inline constexpr double kSigmaMin = 1e-6;    // Gaussian noise multiplier (> 0): [1e-6, 1e6]
inline constexpr double kSigmaMax = 1e6;
inline constexpr double kEpsilonMin = 1e-6;  // l2-laplace epsilon: [1e-6, 1e6] or +inf
inline constexpr double kEpsilonMax = 1e6;
inline constexpr double kNScaleMax = 9007199254740992.0;  // n_scale (> 0): [1, 2^53]

inline bool in_range(double v, double lo, double hi) { return v >= lo && v <= hi; }

// Clipped per-example coefficient: the contribution c x_i is replaced by
// sign(c) min(|c|, C / ||x_i||) x_i, whose norm is min(|c| ||x_i||, C) <= C for every finite
// x_i, even when the derivative c overflowed to +-inf. C / ||x_i|| is formed as
// (C / scale) / root (rows.hpp, ScaledNorm), so it neither overflows nor vanishes for rows with
// entries up to DBL_MAX. A contribution that is undefined or cannot be represented is 0: a NaN
// derivative (e.g. a margin inf - inf), a zero row, or an infinite c on a row so short that
// C / ||x_i|| overflows as well. Any contribution of norm <= C keeps the privacy proof (it only
// needs the bound on each example's contribution).
template <class Norm>
inline double clip_coefficient(double c, const Norm& norm, double clip) {
  if (std::isnan(c) || !(norm.root > 0.0)) return 0.0;
  const double limit = (clip / norm.scale) / norm.root;
  const double a = std::fabs(c);
  const double m = a <= limit ? a : limit;
  if (!std::isfinite(m)) return 0.0;
  return std::copysign(m, c);
}

}  // namespace privlearn::linear
