#pragma once
// Shared helpers of the binding files (the only C++ that knows Python).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "privlearn/random.hpp"

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
