// Bindings of privlearn/cluster/*.hpp (thin: argument conversion only).

#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <cmath>
#include <vector>

#include "bindings.hpp"
#include "privlearn/checks.hpp"
#include "privlearn/cluster/coreset.hpp"
#include "privlearn/cluster/grid.hpp"
#include "privlearn/cluster/maxcover.hpp"

namespace privlearn::bindings {

namespace {

template <class T>
py::array_t<T> to_array(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

}  // namespace

void bind_cluster(py::module_& m) {
  m.def(
      "grid_offsets",
      [](Index p, double rho, Index max_offsets) {
        std::vector<std::int32_t> off;
        {
          py::gil_scoped_release release;
          off = cluster::grid_offsets(p, rho, max_offsets);
        }
        py::array_t<std::int32_t> out({static_cast<py::ssize_t>(off.size() / p),
                                       static_cast<py::ssize_t>(p)});
        std::copy(off.begin(), off.end(), out.mutable_data());
        return out;
      },
      py::arg("p"), py::arg("rho"), py::arg("max_offsets") = 50'000'000,
      "Offset set {z in Z^p : sum_j dist(z_j, [0, 1])^2 <= rho^2}, lexicographic, (m, p) int32.");
  m.def(
      "grid_cover",
      [](const MatRef& Y, double radius, double unit, Index max_offsets, int n_threads) {
        cluster::GridCover gc;
        {
          py::gil_scoped_release release;
          checks::positive(radius, "radius");
          checks::positive(unit, "unit");
          const auto off = cluster::grid_offsets(Y.cols(), radius / unit, max_offsets);
          gc = cluster::grid_cover(Y, radius, unit, off, n_threads, /*with_reverse=*/false);
        }
        const auto ng = static_cast<py::ssize_t>(gc.n_grid());
        py::array_t<std::int32_t> coords({ng, static_cast<py::ssize_t>(gc.dim)});
        std::copy(gc.coords.begin(), gc.coords.end(), coords.mutable_data());
        return py::make_tuple(coords, to_array(gc.point_ptr), to_array(gc.point_grid));
      },
      py::arg("Y").noconvert(), py::arg("radius"), py::arg("unit"),
      py::arg("max_offsets") = 50'000'000, py::arg("n_threads") = 0,
      "Grid points (coords, CSR point_ptr, point_grid ids) within radius of each row of Y.");
  m.def(
      "maxcover_candidates",
      [](const MatRef& Y, const std::vector<double>& radii, double grid_factor, Index picks,
         double eps_pick, const py::bytes& key, std::uint64_t stream, Index max_offsets,
         int n_threads, py::object select) {
        cluster::MaxCoverParams p;
        if (!select.is_none()) {
          p.select = [select](std::int64_t level, std::uint64_t row, std::int64_t m,
                              const std::vector<std::int64_t>& sizes) -> std::int64_t {
            py::gil_scoped_acquire acquire;
            return select(level, row, m, sizes).cast<std::int64_t>();
          };
        }
        p.radii = radii;
        p.grid_factor = grid_factor;
        p.picks = picks;
        p.eps_pick = eps_pick;
        p.key = key_from_py(key);
        p.stream = stream;
        p.max_offsets = max_offsets;
        p.n_threads = n_threads;
        cluster::MaxCoverResult r;
        {
          py::gil_scoped_release release;
          r = cluster::maxcover_candidates(Y, p);
        }
        return py::make_tuple(std::move(r.centers), to_array(r.level), to_array(r.covered),
                              to_array(r.remainder), to_array(r.n_grid), to_array(r.n_offsets));
      },
      py::arg("Y").noconvert(), py::arg("radii"), py::arg("grid_factor"), py::arg("picks"),
      py::arg("eps_pick"), py::arg("key"), py::arg("stream"), py::arg("max_offsets") = 50'000'000,
      py::arg("n_threads") = 0, py::arg("select") = py::none(),
      "Private greedy max cover over grids of the given radii (Chaturvedi, Nguyen & Xu 2021, "
      "Algorithm 3 with Claim 4.2): (centers, level, covered, remainder, n_grid, n_offsets). "
      "select(level, row, m, sizes) -> class draws the cover class of each pick (required "
      "for a finite eps_pick).");
  m.def(
      "lsh_codes",
      [](const MatRef& X, const VecRef& centre, const MatRef& H, const VecRef& thresholds,
         int n_threads) {
        std::vector<std::uint64_t> codes;
        {
          py::gil_scoped_release release;
          codes = cluster::lsh_codes(X, centre, H, thresholds, n_threads);
        }
        return to_array(codes);
      },
      py::arg("X").noconvert(), py::arg("centre"), py::arg("H").noconvert(),
      py::arg("thresholds"), py::arg("n_threads") = 0,
      "Hash codes of the rows: bit (depth-1-j) = [<x - centre, H[j]> > thresholds[j]] (uint64).");
  m.def(
      "nearest_centres",
      [](const MatRef& X, const MatRef& C, int n_threads) {
        std::vector<std::int64_t> labels;
        {
          py::gil_scoped_release release;
          labels = cluster::nearest_centres(X, C, n_threads);
        }
        return to_array(labels);
      },
      py::arg("X").noconvert(), py::arg("C").noconvert(), py::arg("n_threads") = 0,
      "Index of the nearest row of C for every row of X (ties: lowest index), int64.");
  m.def(
      "clipped_cluster_sums",
      [](const MatRef& X, const py::array_t<std::int64_t, py::array::c_style>& labels,
         Index n_cells, const VecRef& centre, double radius, int exponent, int n_threads) {
        if (labels.ndim() != 1 || labels.shape(0) != X.rows())
          throw std::invalid_argument("labels must be 1-D with one entry per row of X");
        cluster::CellSums s;
        {
          py::gil_scoped_release release;
          s = cluster::clipped_cluster_sums(X, labels.data(), n_cells, centre, radius, exponent,
                                            n_threads);
        }
        const auto k = static_cast<py::ssize_t>(s.n_cells), d = static_cast<py::ssize_t>(s.dim);
        py::array_t<std::int64_t> hi({k, d}), lo({k, d});
        std::copy(s.hi.begin(), s.hi.end(), hi.mutable_data());
        std::copy(s.lo.begin(), s.lo.end(), lo.mutable_data());
        return py::make_tuple(to_array(s.counts), hi, lo);
      },
      py::arg("X").noconvert(), py::arg("labels"), py::arg("n_cells"), py::arg("centre"),
      py::arg("radius"), py::arg("exponent"), py::arg("n_threads") = 0,
      "Per-cell (counts, hi, lo): exact fixed-point sums of the rows moved to the centre and "
      "projected onto B(0, radius) (label -1: row skipped).");
}

}  // namespace privlearn::bindings
