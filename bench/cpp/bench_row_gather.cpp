// The memory floor of an epoch that visits rows in Poisson batch order (issue 32, item 1): the
// DP-SGD and DP-SCD epochs read each sampled row from a random place, where the floor
// X^T (X w) streams X. Times, interleaved, by this thread's CPU time, on --n x --d dense rows:
//   stream:       one sequential pass over X (a sum of one entry per 64-byte line);
//   gather_plain: every row of every Poisson batch (rate 64 / n, the core's sampler, one
//                 epoch of n / 64 batches) copied into a buffer of 16 rows, no prefetch;
//   gather_l2:    the same, the next batch's rows requested into L2 line by line first;
//   gather_l1:    the same, each row's lines requested into L1 eight rows ahead.
// Prints one JSON line per kernel: median and min ns per row (stream: per row of X).
//
// Usage: bench_row_gather [--n N] [--d D] [--reps R] [--seed S]
// Dependency-free; built when CMake option PRIVLEARN_BUILD_BENCH=ON.

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench_common.hpp"
#include "privlearn/random.hpp"
#include "privlearn/samplers.hpp"

namespace {

namespace pb = privlearn::bench;
namespace pr = privlearn::random;

struct Options : pb::CommonOptions {
  std::size_t n = 1000000;
  std::size_t d = 101;
  Options() { reps = 5; }
};

constexpr const char* kUsage =
    " [--n N] [--d D] [--reps R] [--seed S]\n"
    "  --n     rows (default 1000000)\n"
    "  --d     columns (default 101: 100 and the intercept)\n"
    "  --reps  repetitions, interleaved; median and min reported (default 5)\n"
    "  --seed  integer seed of the key (default 1)\n";

inline void prefetch(const void* p, bool l1) {
#if defined(__GNUC__) || defined(__clang__)
  if (l1)
    __builtin_prefetch(p, 0, 3);
  else
    __builtin_prefetch(p, 0, 2);
#else
  (void)p;
  (void)l1;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const pb::Cli cli{argv[0], kUsage};
  Options o;
  pb::parse_args(cli, argc, argv, o, [&](const std::string& arg, auto&& value) {
    if (arg == "--n") {
      o.n = static_cast<std::size_t>(
          pb::parse_u64_in(cli, value(), 1024, 1u << 26, "--n must be in [1024, 2^26]"));
    } else if (arg == "--d") {
      o.d = static_cast<std::size_t>(
          pb::parse_u64_in(cli, value(), 1, 4096, "--d must be in [1, 4096]"));
    } else {
      return false;
    }
    return true;
  });
  const std::size_t n = o.n, d = o.d, bytes = d * sizeof(double);
  std::vector<double> X(n * d);
  for (std::size_t i = 0; i < X.size(); ++i) X[i] = static_cast<double>(i % 977) * 1e-3;
  const pr::Key key = pr::key_from_seed(o.seed);
  const std::size_t steps = n / 64;
  std::vector<std::vector<std::int64_t>> batches(steps);
  std::size_t visits = 0;
  for (std::size_t t = 0; t < steps; ++t) {
    batches[t] = privlearn::samplers::poisson_sample(key, 3, t, static_cast<std::int64_t>(n),
                                                     64.0 / static_cast<double>(n));
    visits += batches[t].size();
  }
  std::vector<double> buffer(16 * d);
  double sink = 0.0;
  auto row = [&](std::int64_t i) { return X.data() + static_cast<std::size_t>(i) * d; };
  auto gather = [&](int mode) {  // 0 plain, 1 next batch into L2, 2 eight rows ahead into L1
    std::size_t k = 0;
    for (std::size_t t = 0; t < steps; ++t) {
      const auto& b = batches[t];
      if (mode == 1 && t + 1 < steps)
        for (std::int64_t r : batches[t + 1])
          for (std::size_t l = 0; l < bytes; l += 64)
            prefetch(reinterpret_cast<const char*>(row(r)) + l, false);
      for (std::size_t a = 0; a < b.size(); ++a, ++k) {
        if (mode == 2) {
          const std::int64_t* ahead = nullptr;
          if (a + 8 < b.size())
            ahead = &b[a + 8];
          else if (t + 1 < steps && a + 8 - b.size() < batches[t + 1].size())
            ahead = &batches[t + 1][a + 8 - b.size()];
          if (ahead != nullptr)
            for (std::size_t l = 0; l < bytes; l += 64)
              prefetch(reinterpret_cast<const char*>(row(*ahead)) + l, true);
        }
        double* slot = buffer.data() + (k % 16) * d;
        std::memcpy(slot, row(b[a]), bytes);
        sink += slot[k % d];
      }
    }
  };
  const std::vector<std::pair<std::string, std::function<void()>>> kernels = {
      {"stream",
       [&] {
         double s = 0.0;
         for (std::size_t i = 0; i < X.size(); i += 8) s += X[i];
         sink += s;
       }},
      {"gather_plain", [&] { gather(0); }},
      {"gather_l2", [&] { gather(1); }},
      {"gather_l1", [&] { gather(2); }},
  };
  std::vector<std::vector<double>> times(kernels.size());
  for (auto& [name, fn] : kernels) fn();  // warm-up
  for (int r = 0; r < o.reps; ++r)
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const double t0 = pb::thread_cpu_s();
      kernels[i].second();
      times[i].push_back(pb::thread_cpu_s() - t0);
    }
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const pb::Timing t = pb::summarize(times[i]);
    const double per = static_cast<double>(kernels[i].first == "stream" ? n : visits);
    pb::print_line(
        "{\"bench\": \"row_gather\", \"kernel\": \"%s\", \"n\": %zu, \"d\": %zu, \"rows\": %.0f, "
        "\"reps\": %d, \"clock\": \"thread CPU\", \"median_ns_per_row\": %.4g, "
        "\"min_ns_per_row\": %.4g}\n",
        kernels[i].first.c_str(), n, d, per, o.reps, t.median_s / per * 1e9,
        t.min_s / per * 1e9);
  }
  pb::print_line("{\"bench\": \"row_gather\", \"sink\": %.6g}\n", sink);
  return 0;
}
