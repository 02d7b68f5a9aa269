// Per-call cost of the exact lattice noise (issue 32, item 1): DP-SGD adds one step's noise per
// call (d draws, random::add_lattice_noise), so a call's fixed cost is paid every step. Times,
// interleaved in one process and by this thread's CPU time (robust to a busy machine):
//   lattice_calls: --n draws as --n / --per-call calls of add_lattice_noise (sigma 1, dim 100);
//   lattice_one:   the same draws in one call;
//   dgauss_one:    discrete_gaussian(variance 2^60) in one call (the draws alone);
//   normal_one:    --n Box-Muller normals in one call (the float noise it replaced).
// Prints one JSON line per kernel: median and min ns per draw over --reps repetitions, and the
// per-call overhead (lattice_calls - lattice_one) * per_call in ns.
//
// Usage: bench_lattice_calls [--n 300000] [--per-call 100] [--reps 11] [--seed 1]
// Dependency-free; built when CMake option PRIVLEARN_BUILD_BENCH=ON.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "privlearn/random.hpp"

namespace {

namespace pb = privlearn::bench;
namespace pr = privlearn::random;

struct Options : pb::CommonOptions {
  std::size_t n = 300000;
  std::size_t per_call = 100;
  Options() { reps = 11; }
};

constexpr const char* kUsage =
    " [--n N] [--per-call K] [--reps R] [--seed S]\n"
    "  --n         draws per measurement (default 300000)\n"
    "  --per-call  draws per add_lattice_noise call in lattice_calls (default 100)\n"
    "  --reps      repetitions, interleaved; median and min reported (default 11)\n"
    "  --seed      integer seed of the key (default 1)\n";

}  // namespace

int main(int argc, char** argv) {
  const pb::Cli cli{argv[0], kUsage};
  Options o;
  pb::parse_args(cli, argc, argv, o, [&](const std::string& arg, auto&& value) {
    if (arg == "--n") {
      o.n = static_cast<std::size_t>(pb::parse_u64_in(cli, value(), 1, 1u << 30,
                                                      "--n must be in [1, 2^30]"));
    } else if (arg == "--per-call") {
      o.per_call = static_cast<std::size_t>(
          pb::parse_u64_in(cli, value(), 1, 1u << 20, "--per-call must be in [1, 2^20]"));
    } else {
      return false;
    }
    return true;
  });
  const pr::Key key = pr::key_from_seed(o.seed);
  const pr::NoiseLattice lattice = pr::noise_lattice(1.0, 100);
  std::vector<std::int64_t> units(o.n, 0);
  std::vector<double> normals(o.n);
  const std::vector<std::pair<std::string, std::function<void()>>> kernels = {
      {"lattice_calls",
       [&] {
         for (std::size_t k = 0; k < o.n; k += o.per_call)
           pr::add_lattice_noise(key, 5, k, std::min(o.per_call, o.n - k), lattice,
                                 units.data() + k, 1);
       }},
      {"lattice_one", [&] { pr::add_lattice_noise(key, 5, 0, o.n, lattice, units.data(), 1); }},
      {"dgauss_one",
       [&] { pr::discrete_gaussian(key, 5, 0, o.n, pr::Uint128{1} << 60, units.data(), 1); }},
      {"normal_one", [&] { pr::normal(key, 5, 0, o.n, normals.data(), 1); }},
  };
  std::vector<std::vector<double>> times(kernels.size());
  for (auto& [name, fn] : kernels) fn();  // warm-up
  for (int r = 0; r < o.reps; ++r) {
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const double t0 = pb::thread_cpu_s();
      kernels[i].second();
      times[i].push_back(pb::thread_cpu_s() - t0);
    }
  }
  double ns_calls = 0.0, ns_one = 0.0;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const pb::Timing t = pb::summarize(times[i]);
    const double ns = t.median_s / static_cast<double>(o.n) * 1e9;
    if (kernels[i].first == "lattice_calls") ns_calls = ns;
    if (kernels[i].first == "lattice_one") ns_one = ns;
    pb::print_line(
        "{\"bench\": \"lattice_calls\", \"kernel\": \"%s\", \"n\": %zu, \"per_call\": %zu, "
        "\"reps\": %d, \"clock\": \"thread CPU\", \"median_ns_per_draw\": %.4g, "
        "\"min_ns_per_draw\": %.4g}\n",
        kernels[i].first.c_str(), o.n, o.per_call, o.reps, ns,
        t.min_s / static_cast<double>(o.n) * 1e9);
  }
  pb::print_line("{\"bench\": \"lattice_calls\", \"per_call_overhead_ns\": %.4g}\n",
                 (ns_calls - ns_one) * static_cast<double>(o.per_call));
  return 0;
}
