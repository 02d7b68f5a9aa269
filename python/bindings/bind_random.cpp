// Bindings of privlearn/random.hpp and privlearn/samplers.hpp.

#include <cstdint>
#include <vector>

#include "bindings.hpp"
#include "privlearn/checks.hpp"
#include "privlearn/samplers.hpp"

namespace privlearn::bindings {


void bind_random(py::module_& m) {
  m.def(
      "chacha20_block",
      [](const py::bytes& key, std::uint64_t counter, std::uint64_t stream) {
        const random::Key k = key_from_py(key);
        return filled<std::uint32_t>(16, [&](std::uint32_t* out) {
          random::chacha20_block(k, counter, stream, out);
        });
      },
      py::arg("key"), py::arg("counter"), py::arg("stream"),
      "RFC 8439 ChaCha20 block (64-bit counter in words 12-13, 64-bit stream in words 14-15).");
  m.def(
      "key_from_seed", [](std::uint64_t seed) { return key_to_py(random::key_from_seed(seed)); },
      py::arg("seed"), "Deterministic 256-bit key from a 64-bit seed.");
  m.def(
      "key_from_os", []() { return key_to_py(random::key_from_os()); },
      "256-bit key from the operating system's entropy.");

  m.def(
      "random_words",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
         int n_threads) {
        const random::Key k = key_from_py(key);
        return filled<std::uint32_t>(n, [&](std::uint32_t* out) {
          random::words(k, stream, start, n, out, n_threads);
        });
      },
      py::arg("key"), py::arg("stream"), py::arg("start"), py::arg("n"), py::arg("n_threads") = 0);
  m.def(
      "random_raws",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
         int n_threads) {
        const random::Key k = key_from_py(key);
        return filled<std::uint64_t>(n, [&](std::uint64_t* out) {
          random::raws(k, stream, start, n, out, n_threads);
        });
      },
      py::arg("key"), py::arg("stream"), py::arg("start"), py::arg("n"), py::arg("n_threads") = 0);
  m.def(
      "random_uniform",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
         int n_threads) {
        const random::Key k = key_from_py(key);
        return filled<double>(
            n, [&](double* out) { random::uniform(k, stream, start, n, out, n_threads); });
      },
      py::arg("key"), py::arg("stream"), py::arg("start"), py::arg("n"), py::arg("n_threads") = 0);
  m.def(
      "random_normal",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
         int n_threads) {
        const random::Key k = key_from_py(key);
        return filled<double>(
            n, [&](double* out) { random::normal(k, stream, start, n, out, n_threads); });
      },
      py::arg("key"), py::arg("stream"), py::arg("start"), py::arg("n"), py::arg("n_threads") = 0);
  m.def(
      "random_normal_at",
      [](const py::bytes& key, std::uint64_t stream,
         const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& index) {
        const random::Key k = key_from_py(key);
        const std::size_t n = static_cast<std::size_t>(index.size());
        const std::uint64_t* i = index.data();
        return filled<double>(n, [&](double* out) { random::normals_at(k, stream, i, n, out); });
      },
      py::arg("key"), py::arg("stream"), py::arg("index"),
      "normal(index[k]) for scattered addresses (the kernels' normals_at: DP-SCD's per-row "
      "noise and jitter), bit for bit the values random_normal gives at those addresses.");
  m.def(
      "random_box_muller",
      [](const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& a,
         const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& b) {
        checks::require(a.size() == b.size(), "random_box_muller: a and b differ in length");
        const std::size_t n = static_cast<std::size_t>(a.size());
        std::vector<std::uint32_t> words(4 * n);
        for (std::size_t j = 0; j < n; ++j) {
          words[4 * j] = static_cast<std::uint32_t>(a.data()[j]);
          words[4 * j + 1] = static_cast<std::uint32_t>(a.data()[j] >> 32);
          words[4 * j + 2] = static_cast<std::uint32_t>(b.data()[j]);
          words[4 * j + 3] = static_cast<std::uint32_t>(b.data()[j] >> 32);
        }
        py::array_t<double> c(n), s(n);
        random::box_muller_pairs(words.data(), n, c.mutable_data(), s.mutable_data());
        return py::make_tuple(c, s);
      },
      py::arg("a"), py::arg("b"),
      "The Box-Muller transform of raw pairs (a[j], b[j]): (r cos t, r sin t), r = sqrt(-2 "
      "log(1 - uniform(a))), t = 2 pi uniform(b) (the kernel behind every normal draw).");
  m.def(
      "random_discrete_gaussian",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
         std::uint64_t variance_lo, std::uint64_t variance_hi, int n_threads) {
        const random::Key k = key_from_py(key);
        const random::Uint128 s2 =
            (static_cast<random::Uint128>(variance_hi) << 64) | variance_lo;
        return filled<std::int64_t>(n, [&](std::int64_t* out) {
          random::discrete_gaussian(k, stream, start, n, s2, out, n_threads);
        });
      },
      py::arg("key"), py::arg("stream"), py::arg("start"), py::arg("n"), py::arg("variance_lo"),
      py::arg("variance_hi"), py::arg("n_threads") = 0);
  m.def(
      "random_discrete_gaussian_scripted",
      [](py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast> words,
         std::uint64_t variance_lo, std::uint64_t variance_hi, int path) {
        const random::Uint128 s2 =
            (static_cast<random::Uint128>(variance_hi) << 64) | variance_lo;
        std::size_t used = 0;
        const std::int64_t v = random::discrete_gaussian_scripted(
            words.data(), static_cast<std::size_t>(words.size()), s2, &used, path);
        return py::make_tuple(v, used);
      },
      py::arg("words"), py::arg("variance_lo"), py::arg("variance_hi"), py::arg("path") = 0);
  m.def(
      "noise_lattice",
      [](double sigma, std::uint64_t dim) {
        const random::NoiseLattice L = random::noise_lattice(sigma, dim);
        return py::make_tuple(L.frac_bits, L.shift, static_cast<std::uint64_t>(L.variance),
                              static_cast<std::uint64_t>(L.variance >> 64));
      },
      py::arg("sigma"), py::arg("dim"));
  m.def(
      "random_exponential",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
         double scale, int n_threads) {
        const random::Key k = key_from_py(key);
        return filled<double>(n, [&](double* out) {
          random::exponential(k, stream, start, n, scale, out, n_threads);
        });
      },
      py::arg("key"), py::arg("stream"), py::arg("start"), py::arg("n"), py::arg("scale"),
      py::arg("n_threads") = 0);
  m.def(
      "random_laplace",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
         double scale, int n_threads) {
        const random::Key k = key_from_py(key);
        return filled<double>(n, [&](double* out) {
          random::laplace(k, stream, start, n, scale, out, n_threads);
        });
      },
      py::arg("key"), py::arg("stream"), py::arg("start"), py::arg("n"), py::arg("scale"),
      py::arg("n_threads") = 0);
  m.def(
      "random_gamma",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
         double shape, double scale, int n_threads) {
        const random::Key k = key_from_py(key);
        return filled<double>(n, [&](double* out) {
          random::gamma(k, stream, start, n, shape, scale, out, n_threads);
        });
      },
      py::arg("key"), py::arg("stream"), py::arg("start"), py::arg("n"), py::arg("shape"),
      py::arg("scale"), py::arg("n_threads") = 0);
  m.def(
      "random_l2_laplace",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
         std::size_t dim, double epsilon, int n_threads) {
        const random::Key k = key_from_py(key);
        py::array_t<double> out({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(dim)});
        double* data = out.mutable_data();
        {
          py::gil_scoped_release release;
          random::l2_laplace(k, stream, start, n, dim, epsilon, data, n_threads);
        }
        return out;
      },
      py::arg("key"), py::arg("stream"), py::arg("start"), py::arg("n"), py::arg("dim"),
      py::arg("epsilon"), py::arg("n_threads") = 0);
  m.def(
      "choice_without_replacement",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t index, std::int64_t population,
         std::int64_t k) {
        const random::Key kk = key_from_py(key);
        std::vector<std::int64_t> result;
        {
          py::gil_scoped_release release;
          result = samplers::choice_without_replacement(kk, stream, index, population, k);
        }
        py::array_t<std::int64_t> out(static_cast<py::ssize_t>(result.size()));
        std::copy(result.begin(), result.end(), out.mutable_data());
        return out;
      },
      py::arg("key"), py::arg("stream"), py::arg("index"), py::arg("population"), py::arg("k"));
  m.def(
      "poisson_sample",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t index, std::int64_t population,
         double q, std::int64_t lo, std::int64_t hi) {
        const random::Key k = key_from_py(key);
        std::vector<std::int64_t> result;
        {
          py::gil_scoped_release release;
          result = samplers::poisson_sample_range(k, stream, index, population, q, lo,
                                                  hi < 0 ? population : hi);
        }
        py::array_t<std::int64_t> out(static_cast<py::ssize_t>(result.size()));
        std::copy(result.begin(), result.end(), out.mutable_data());
        return out;
      },
      py::arg("key"), py::arg("stream"), py::arg("index"), py::arg("population"), py::arg("q"),
      py::arg("lo") = 0, py::arg("hi") = -1);
  m.attr("POISSON_BLOCK") = samplers::kPoissonBlock;
  m.attr("POISSON_LAYOUT_VERSION") = samplers::kPoissonLayoutVersion;
  m.def(
      "poisson_mask",
      [](const py::bytes& key, std::uint64_t stream, std::uint64_t index, std::int64_t population,
         double q, int n_threads) {
        const random::Key k = key_from_py(key);
        if (population < 0) throw std::invalid_argument("population must be >= 0");
        return filled<bool>(static_cast<std::size_t>(population), [&](bool* out) {
          samplers::poisson_mask(k, stream, index, population, q, out, n_threads);
        });
      },
      py::arg("key"), py::arg("stream"), py::arg("index"), py::arg("population"), py::arg("q"),
      py::arg("n_threads") = 0);
}

}  // namespace privlearn::bindings
