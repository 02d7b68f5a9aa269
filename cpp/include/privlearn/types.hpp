#pragma once
// Common Eigen aliases. Examples are rows: X is (n_samples, n_features), row-major, float64,
// so a NumPy C-contiguous array arrives zero-copy as MatRef.

#include <Eigen/Core>
#include <cstdint>

namespace privlearn {

using Index = Eigen::Index;
using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using VectorXd = Eigen::VectorXd;

using MatRef = Eigen::Ref<const RowMatrixXd>;
using MatMut = Eigen::Ref<RowMatrixXd>;
using VecRef = Eigen::Ref<const VectorXd>;
using VecMut = Eigen::Ref<VectorXd>;

}  // namespace privlearn
