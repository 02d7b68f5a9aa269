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

}  // namespace privlearn::linear
