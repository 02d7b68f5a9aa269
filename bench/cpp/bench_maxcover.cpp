// Time of the private greedy max cover (privlearn::cluster::maxcover_candidates, Chaturvedi,
// Nguyen & Xu 2021, Algorithm 3 over all radii) on the projected synthetic mixture of the paper
// (64 Gaussians in R^100: centres 10 u, u uniform on the sphere, each point its centre plus a
// uniform unit vector), for several n and thread counts. Repetitions are interleaved over the
// configurations of one n and the median is reported.
//
// Usage: bench_maxcover [--n 50000,200000,1000000] [--k K] [--p P] [--reps R]
//                       [--threads 1,2] [--seed S]
//
// The data are projected as DPKMeans does: a Gaussian (d, p) map with N(0, 1/p) entries,
// divided by Lambda = 11, rows projected into the unit ball. The parameters are DPKMeans'
// defaults for epsilon = 1, delta = 1e-6: radii 1, 1/2, ..., 2^-(L-1) with
// L = ceil(log2(n)/4) + 1, picks = k ceil(log2(n)/2), eps_pick from the Gupta et al. bound
// with 0.3 epsilon and delta/2 for the cover.
//
// Prints one JSON line per measurement, e.g.
//   {"bench": "maxcover", "impl": "core-cpp", "n": 50000, "p": 4, "k": 64, "threads": 1,
//    "radii": 5, "picks": 512, "incidences": 19700000, "reps": 3, "median_s": 1.2, "min_s": 1.1,
//    "ns_per_incidence": 60}

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "privlearn/cluster/maxcover.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/random.hpp"

using namespace privlearn;

namespace {

const bench::Cli kCli{"bench_maxcover",
                      " [--n 50000,200000,1000000] [--k K] [--p P] [--reps R] [--threads 1,2]"
                      " [--seed S]\n"};

struct Options : bench::CommonOptions {
  std::vector<std::uint64_t> ns = {50000, 200000, 1000000};
  Index k = 64;
  Index p = 4;
  Options() { reps = 3; }
};

std::vector<std::uint64_t> parse_list(const char* text) {
  std::vector<std::uint64_t> out;
  std::string s(text);
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t next = s.find(',', pos);
    const std::string item = s.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    out.push_back(bench::parse_u64_in(kCli, item.c_str(), 100, 100000000, "--n out of range"));
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return out;
}

// The projected mixture (n, p) in the unit ball.
RowMatrixXd make_data(std::uint64_t n, Index p, std::uint64_t seed) {
  const Index d = 100, k = 64;
  const random::Key key = random::key_from_seed(seed);
  std::vector<double> buf(static_cast<std::size_t>(k * d));
  random::normal(key, 1, 0, buf.size(), buf.data(), 0);
  RowMatrixXd centres = Eigen::Map<RowMatrixXd>(buf.data(), k, d);
  centres.rowwise().normalize();
  centres *= 10.0;
  std::vector<double> g(static_cast<std::size_t>(d * p));
  random::normal(key, 2, 0, g.size(), g.data(), 0);
  RowMatrixXd G = Eigen::Map<RowMatrixXd>(g.data(), d, p) / std::sqrt(static_cast<double>(p));
  std::vector<std::uint64_t> lab(n);
  random::raws(key, 3, 0, n, lab.data(), 0);
  RowMatrixXd Y(static_cast<Index>(n), p);
  const std::uint64_t chunk = 65536;
  std::vector<double> z(chunk * d);
  for (std::uint64_t lo = 0; lo < n; lo += chunk) {
    const std::uint64_t m = std::min(chunk, n - lo);
    random::normal(key, 4, lo * d, m * d, z.data(), 0);
    RowMatrixXd X = Eigen::Map<RowMatrixXd>(z.data(), static_cast<Index>(m), d);
    X.rowwise().normalize();
    for (std::uint64_t i = 0; i < m; ++i) X.row(static_cast<Index>(i)) += centres.row(static_cast<Index>(lab[lo + i] % k));
    Y.middleRows(static_cast<Index>(lo), static_cast<Index>(m)) = X * G / 11.0;
  }
  for (Index i = 0; i < Y.rows(); ++i) {
    const double nrm = Y.row(i).norm();
    if (nrm > 1.0) Y.row(i) *= (1.0 - 1e-12) / nrm;
  }
  return Y;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  bench::parse_args(kCli, argc, argv, opt, [&](const std::string& arg, auto value) {
    if (arg == "--n") {
      opt.ns = parse_list(value());
    } else if (arg == "--k") {
      opt.k = static_cast<Index>(bench::parse_u64_in(kCli, value(), 1, 100000, "--k out of range"));
    } else if (arg == "--p") {
      opt.p = static_cast<Index>(bench::parse_u64_in(kCli, value(), 1, 8, "--p must be in [1, 8]"));
    } else {
      return false;
    }
    return true;
  });
  for (std::uint64_t n : opt.ns) {
    const RowMatrixXd Y = make_data(n, opt.p, opt.seed);
    const double lg = std::log2(static_cast<double>(n));
    const auto n_radii = static_cast<Index>(std::ceil(lg / 4.0)) + 1;
    cluster::MaxCoverParams params;
    for (Index l = 0; l < n_radii; ++l) params.radii.push_back(std::pow(2.0, -static_cast<double>(l)));
    params.picks = opt.k * static_cast<Index>(std::ceil(lg / 2.0));
    const double eps = 0.3, delta = 0.5e-6;
    const double d_l = delta / static_cast<double>(n_radii);
    params.eps_pick = (eps / static_cast<double>(n_radii)) / (2.0 * (1.0 + std::log(1.0 / d_l)));
    params.key = random::key_from_seed(opt.seed + 7);
    params.stream = 2;
    std::vector<std::vector<double>> times(opt.threads.size());
    std::int64_t incidences = 0;
    for (int r = 0; r < opt.reps; ++r) {
      for (std::size_t t = 0; t < opt.threads.size(); ++t) {
        params.n_threads = opt.threads[t];
        const auto t0 = std::chrono::steady_clock::now();
        const cluster::MaxCoverResult res = cluster::maxcover_candidates(Y, params);
        times[t].push_back(bench::seconds_since(t0));
        if (incidences == 0) {
          for (std::size_t l = 0; l < res.n_offsets.size(); ++l) incidences += res.n_grid[l];
        }
      }
    }
    for (std::size_t t = 0; t < opt.threads.size(); ++t) {
      const bench::Timing tm = bench::summarize(times[t]);
      bench::print_line(
          "{\"bench\": \"maxcover\", \"impl\": \"core-cpp\", \"n\": %llu, \"p\": %lld, \"k\": %lld, "
          "\"threads\": %d, \"radii\": %lld, \"picks\": %lld, \"grid_points\": %lld, \"reps\": %d, "
          "\"median_s\": %.6g, \"min_s\": %.6g, \"us_per_point\": %.4g}\n",
          static_cast<unsigned long long>(n), static_cast<long long>(opt.p),
          static_cast<long long>(opt.k), opt.threads[t], static_cast<long long>(n_radii),
          static_cast<long long>(params.picks), static_cast<long long>(incidences), opt.reps,
          tm.median_s, tm.min_s, 1e6 * tm.median_s / static_cast<double>(n));
    }
  }
  return 0;
}
