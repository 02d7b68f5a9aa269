// Bindings of privlearn/he/slots.hpp (thin: argument conversion only).

#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "privlearn/he/slots.hpp"

namespace privlearn::bindings {

namespace {

using Batch = py::array_t<double, py::array::c_style | py::array::forcecast>;

struct Shape {
  Index n_ct;
  Index slots;
};

Shape batch_shape(const Batch& a, const char* name) {
  if (a.ndim() != 2)
    throw std::invalid_argument(std::string(name) + " must be a 2-d (n_ct, slots) array, got " +
                                std::to_string(a.ndim()) + " dimensions");
  return {static_cast<Index>(a.shape(0)), static_cast<Index>(a.shape(1))};
}

he::Noise make_noise(const py::bytes& key, std::uint64_t stream, std::uint64_t op_id,
                     double scale) {
  he::Noise noise;
  noise.key = key_from_py(key);
  noise.stream = stream;
  noise.op_id = op_id;
  noise.scale = scale;
  return noise;
}

he::BinaryOp op_from_string(const std::string& op) {
  if (op == "add") return he::BinaryOp::add;
  if (op == "sub") return he::BinaryOp::sub;
  if (op == "mul") return he::BinaryOp::mul;
  throw std::invalid_argument("op must be 'add', 'sub' or 'mul', got '" + op + "'");
}

Batch empty_like(const Shape& s) { return Batch({s.n_ct, s.slots}); }

#define PRIVLEARN_NOISE_ARGS \
  py::arg("key"), py::arg("stream"), py::arg("op_id"), py::arg("scale"), py::arg("n_threads") = 0

}  // namespace

void bind_he(py::module_& m) {
  m.attr("he_op_stride") = he::kOpStride;
  m.attr("he_ct_stride") = he::kCtStride;
  m.def(
      "he_noise",
      [](const Batch& a, const py::bytes& key, std::uint64_t stream, std::uint64_t op_id,
         double scale, int n_threads) {
        const Shape s = batch_shape(a, "a");
        const he::Noise noise = make_noise(key, stream, op_id, scale);
        Batch out = empty_like(s);
        double* o = out.mutable_data();
        const double* in = a.data();
        {
          py::gil_scoped_release release;
          std::copy(in, in + s.n_ct * s.slots, o);
          he::add_noise(o, s.n_ct, s.slots, noise, n_threads);
        }
        return out;
      },
      py::arg("a"), PRIVLEARN_NOISE_ARGS, "a + z * scale (the seeded error of one operation).");
  m.def(
      "he_binary",
      [](const Batch& a, const Batch& b, const std::string& op, double factor,
         const py::bytes& key, std::uint64_t stream, std::uint64_t op_id, double scale,
         int n_threads) {
        const Shape s = batch_shape(a, "a");
        const Shape t = batch_shape(b, "b");
        if (t.slots != s.slots) throw std::invalid_argument("a and b have different slot counts");
        const he::BinaryOp bop = op_from_string(op);
        const he::Noise noise = make_noise(key, stream, op_id, scale);
        Batch out = empty_like(s);
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          he::binary(a.data(), s.n_ct, b.data(), t.n_ct, s.slots, bop, factor, noise, o,
                     n_threads);
        }
        return out;
      },
      py::arg("a"), py::arg("b"), py::arg("op"), py::arg("factor"), PRIVLEARN_NOISE_ARGS,
      "((a op b) * factor) + z * scale; b has 1 or n_ct rows.");
  m.def(
      "he_scalar",
      [](const Batch& a, const std::string& op, double c, double factor, const py::bytes& key,
         std::uint64_t stream, std::uint64_t op_id, double scale, int n_threads) {
        const Shape s = batch_shape(a, "a");
        const he::BinaryOp bop = op_from_string(op);
        const he::Noise noise = make_noise(key, stream, op_id, scale);
        Batch out = empty_like(s);
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          he::scalar(a.data(), s.n_ct, s.slots, bop, c, factor, noise, o, n_threads);
        }
        return out;
      },
      py::arg("a"), py::arg("op"), py::arg("c"), py::arg("factor"), PRIVLEARN_NOISE_ARGS,
      "((a op c) * factor) + z * scale with a scalar c (op 'add' or 'mul').");
  m.def(
      "he_rotate",
      [](const Batch& a, Index k, const py::bytes& key, std::uint64_t stream,
         std::uint64_t op_id, double scale, int n_threads) {
        const Shape s = batch_shape(a, "a");
        const he::Noise noise = make_noise(key, stream, op_id, scale);
        Batch out = empty_like(s);
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          he::rotate(a.data(), s.n_ct, s.slots, k, noise, o, n_threads);
        }
        return out;
      },
      py::arg("a"), py::arg("k"), PRIVLEARN_NOISE_ARGS,
      "Left rotation of every ciphertext's slots by k, plus z * scale.");
  m.def(
      "he_rotate_sum",
      [](const Batch& a, const std::vector<Index>& steps, const py::bytes& key,
         std::uint64_t stream, std::uint64_t op_id, double scale, int n_threads) {
        const Shape s = batch_shape(a, "a");
        const he::Noise noise = make_noise(key, stream, op_id, scale);
        Batch out = empty_like(s);
        double* o = out.mutable_data();
        const double* in = a.data();
        {
          py::gil_scoped_release release;
          std::copy(in, in + s.n_ct * s.slots, o);
          he::rotate_sum(o, s.n_ct, s.slots, steps, noise, n_threads);
        }
        return out;
      },
      py::arg("a"), py::arg("steps"), PRIVLEARN_NOISE_ARGS,
      "For each step s (operation op_id + i): a <- a + (rotate(a, s) + z * scale).");
  m.def(
      "he_sum_rows",
      [](const Batch& a, int n_threads) {
        const Shape s = batch_shape(a, "a");
        Batch out({Index{1}, s.slots});
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          he::sum_rows(a.data(), s.n_ct, s.slots, o, n_threads);
        }
        return out;
      },
      py::arg("a"), py::arg("n_threads") = 0,
      "Sum of the ciphertexts of a batch, added in order: a (1, slots) array.");
  m.def(
      "he_bound_mul",
      [](const Batch& a, const Batch& ea, const Batch& b, const Batch& eb, double factor,
         double fixed, int n_threads) {
        const Shape s = batch_shape(a, "a");
        const Shape t = batch_shape(b, "b");
        const Shape se = batch_shape(ea, "ea");
        const Shape te = batch_shape(eb, "eb");
        if (se.n_ct != s.n_ct || se.slots != s.slots || te.n_ct != t.n_ct ||
            te.slots != t.slots || t.slots != s.slots)
          throw std::invalid_argument("he_bound_mul: operand and bound shapes differ");
        Batch out = empty_like(s);
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          he::bound_mul(a.data(), ea.data(), s.n_ct, b.data(), eb.data(), t.n_ct, s.slots, factor,
                        fixed, o, n_threads);
        }
        return out;
      },
      py::arg("a"), py::arg("ea"), py::arg("b"), py::arg("eb"), py::arg("factor"),
      py::arg("fixed"), py::arg("n_threads") = 0,
      "Per-slot error bound of a product: (|a| eb + (|b| + eb) ea) * factor + |factor - 1| "
      "(|a| + ea)(|b| + eb) + fixed.");
  m.def(
      "he_max_abs",
      [](const Batch& a, int n_threads) {
        const double* in = a.data();
        const Index size = static_cast<Index>(a.size());
        py::gil_scoped_release release;
        return he::max_abs(in, size, n_threads);
      },
      py::arg("a"), py::arg("n_threads") = 0, "max |a| over all entries.");
}

}  // namespace privlearn::bindings
