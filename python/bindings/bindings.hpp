#pragma once
// Shared helpers of the binding files (the only C++ that knows Python).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "privlearn/random.hpp"
#include "privlearn/rows.hpp"

namespace privlearn::bindings {

namespace py = pybind11;

// A 32-byte key from Python bytes; anything else raises ValueError.
inline random::Key key_from_py(const py::bytes& key) {
  const std::string raw = key;
  if (raw.size() != 32)
    throw std::invalid_argument("key must be exactly 32 bytes, got " + std::to_string(raw.size()));
  return random::key_from_bytes(reinterpret_cast<const std::uint8_t*>(raw.data()));
}

inline py::bytes key_to_py(const random::Key& key) {
  std::string raw(32, '\0');
  for (int w = 0; w < 8; ++w)
    for (int b = 0; b < 4; ++b) raw[4 * w + b] = static_cast<char>((key[w] >> (8 * b)) & 0xFFu);
  return py::bytes(raw);
}

// A CSR matrix's arrays from Python (scipy.sparse.csr_matrix's data, indices, indptr) as the
// core's CsrRows: float64 values, int32 column indices and int64 row extents. scipy's arrays
// below 2^31 stored entries (int32 indices and indptr) cost one copy of indptr (n + 1 entries),
// never one of the O(nnz) indices; int64 indices (scipy's dtype for larger matrices) are
// converted once, each checked to lie in [0, 2^31) first. Any other integer dtype that casts
// safely to one of the two is taken; anything else raises TypeError naming the dtype. Holds the
// arrays (and any converted copy) for as long as the rows are used; structure and values are
// checked by CsrRows::validate (the caller, without the GIL).
using CsrData = py::array_t<double, py::array::c_style | py::array::forcecast>;
class CsrArrays {
 public:
  CsrArrays(CsrData data, const py::array& indices, const py::array& indptr, Index n_cols)
      : data_(std::move(data)) {
    if (n_cols < 0 || n_cols > std::numeric_limits<std::int32_t>::max())
      throw std::invalid_argument("CSR matrix: the number of columns must lie in [0, 2^31 - 1]");
    const std::int32_t* idx = nullptr;
    std::size_t n_idx = 0;
    if (auto i32 = py::array_t<std::int32_t, py::array::c_style>::ensure(indices)) {
      indices32_ = i32;
      idx = indices32_.data();
      n_idx = static_cast<std::size_t>(indices32_.size());
    } else if (auto i64 = py::array_t<std::int64_t, py::array::c_style>::ensure(indices)) {
      n_idx = static_cast<std::size_t>(i64.size());
      const std::int64_t* src = i64.data();
      indices_copy_.resize(n_idx);
      for (std::size_t k = 0; k < n_idx; ++k) {
        if (src[k] < 0 || src[k] >= n_cols)
          throw std::invalid_argument("CSR column index out of range at position " +
                                      std::to_string(k));
        indices_copy_[k] = static_cast<std::int32_t>(src[k]);
      }
      idx = indices_copy_.data();
    } else {
      throw py::type_error("CSR indices must be an int32 or int64 array, got " +
                           kind_of(indices));
    }
    const std::int64_t* ptr = nullptr;
    std::size_t n_ptr = 0;
    if (auto p64 = py::array_t<std::int64_t, py::array::c_style>::ensure(indptr)) {
      indptr64_ = p64;
      ptr = indptr64_.data();
      n_ptr = static_cast<std::size_t>(indptr64_.size());
    } else {
      throw py::type_error("CSR indptr must be an int32 or int64 array, got " + kind_of(indptr));
    }
    if (data_.ndim() != 1 || indices.ndim() != 1 || indptr.ndim() != 1)
      throw std::invalid_argument("CSR data, indices and indptr must be 1-D arrays");
    if (n_ptr < 1) throw std::invalid_argument("CSR indptr is empty");
    if (static_cast<std::size_t>(data_.size()) != n_idx)
      throw std::invalid_argument("CSR data and indices differ in length");
    rows_ = CsrRows{data_.data(), idx, ptr, static_cast<Index>(n_ptr - 1), n_cols};
  }
  const CsrRows& rows() const noexcept { return rows_; }
  std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(data_.size()); }

 private:
  static std::string kind_of(const py::handle& h) {
    const py::array a = py::array::ensure(h);
    if (a) return "dtype " + py::str(a.dtype()).cast<std::string>();
    return py::str(py::type::of(h).attr("__name__")).cast<std::string>();
  }
  CsrData data_;
  py::array_t<std::int32_t> indices32_;
  py::array_t<std::int64_t> indptr64_;  // indptr itself, or its int64 copy (safe cast)
  std::vector<std::int32_t> indices_copy_;
  CsrRows rows_{};
};

void bind_random(py::module_& m);
void bind_linear(py::module_& m);
void bind_quadgrad(py::module_& m);
void bind_cluster(py::module_& m);
void bind_he(py::module_& m);

// A new 1-D array of n values of T written by fill(data) without the GIL.
template <class T, class Fill>
py::array_t<T> filled(std::size_t n, Fill&& fill) {
  py::array_t<T> out(static_cast<py::ssize_t>(n));
  T* data = out.mutable_data();
  {
    py::gil_scoped_release release;
    fill(data);
  }
  return out;
}

}  // namespace privlearn::bindings
