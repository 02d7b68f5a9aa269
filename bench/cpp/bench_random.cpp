// Throughput of the ChaCha20 random core (privlearn::random): raw words, uniform, normal and
// Laplace draws, for 1 and 2 threads (or --threads), median of --reps repetitions.
//
// Usage: bench_random [--n N] [--reps R] [--threads 1,2,...] [--seed S] [--cold]
//                     [--kernels words,uniform,normal,laplace]
//
// Prints one JSON line per measurement, e.g.
//   {"bench": "random", "kernel": "normal", "threads": 1, "n": 16777216, "reps": 7,
//    "buffer": "warm", "median_s": 0.1, "min_s": 0.1, "rate": 1.6e8, "unit": "normals/s"}
//
// By default ("buffer": "warm") every repetition writes into the same output buffer, allocated
// and touched once before timing, so the numbers measure generation only. With --cold every
// repetition writes into a freshly allocated (never touched) buffer, as a Python call that
// returns a new array does: the time then includes the page faults of the output. Both are
// printed when --cold is given, so the difference is the cost of first touch.
//
// Dependency-free (std::chrono only); built when CMake option PRIVLEARN_BUILD_BENCH=ON.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "privlearn/random.hpp"

namespace {

namespace pb = privlearn::bench;
namespace pr = privlearn::random;
using pb::Timing;

struct Options : pb::CommonOptions {
  std::size_t n = std::size_t{1} << 24;
  bool cold = false;
  std::string kernels = "words,uniform,normal,laplace";
  Options() { reps = 7; }
};

constexpr const char* kUsage =
    " [--n N] [--reps R] [--threads 1,2,...] [--seed S] [--cold]\n"
    "          [--kernels words,uniform,normal,laplace]\n"
    "  --n        draws per measurement (default 2^24)\n"
    "  --reps     repetitions, the median is reported (default 7)\n"
    "  --threads  comma-separated thread counts (default 1,2)\n"
    "  --seed     integer seed of the key (default 1)\n"
    "  --cold     also time writes into a fresh, untouched buffer per repetition\n"
    "  --kernels  comma-separated subset to run (default: all four)\n";

Options parse(int argc, char** argv) {
  const pb::Cli cli{argv[0], kUsage};
  Options o;
  pb::parse_args(cli, argc, argv, o, [&](const std::string& arg, auto&& value) {
    if (arg == "--n") {
      o.n = static_cast<std::size_t>(pb::parse_u64(cli, value()));
      if (o.n == 0) pb::usage(cli, "--n must be positive");
    } else if (arg == "--kernels") {
      o.kernels = value();
      pb::check_subset(cli, o.kernels, {"words", "uniform", "normal", "laplace"},
                       "--kernels: expected a subset of words,uniform,normal,laplace");
    } else if (arg == "--cold") {
      o.cold = true;
    } else {
      return false;
    }
    return true;
  });
  return o;
}

// A kernel writes n elements of T starting at address 0 into out.
template <class T>
using Kernel = std::function<void(T* out, std::size_t n, int n_threads)>;

// Keeps the optimiser from discarding the output.
volatile std::uint64_t g_sink = 0;
template <class T>
void consume(const T* out, std::size_t n) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &out[n / 2], std::min(sizeof(T), sizeof(bits)));
  g_sink = g_sink + bits;
}

template <class T>
Timing time_warm(const Kernel<T>& kernel, std::size_t n, int threads, int reps) {
  std::vector<T> out(n);  // allocated and zero-filled (touched) before timing
  kernel(out.data(), n, threads);  // warm-up: thread pool, caches, page tables
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(reps));
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    kernel(out.data(), n, threads);
    times.push_back(pb::seconds_since(t0));
    consume(out.data(), n);
  }
  return pb::summarize(times);
}

template <class T>
Timing time_cold(const Kernel<T>& kernel, std::size_t n, int threads, int reps) {
  {
    std::unique_ptr<T[]> warm(new T[n]);
    kernel(warm.get(), n, threads);
  }
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(reps));
  for (int r = 0; r < reps; ++r) {
    // new T[n] leaves a large array uninitialised: its pages are first touched by the kernel
    // (glibc serves it with a fresh mmap, as numpy does for a large result array).
    const auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<T[]> out(new T[n]);
    kernel(out.get(), n, threads);
    times.push_back(pb::seconds_since(t0));
    consume(out.get(), n);
  }
  return pb::summarize(times);
}

template <class T>
void run(const char* name, const char* unit, double units_per_element, const Kernel<T>& kernel,
         const Options& o) {
  if (!pb::selected(o.kernels, name)) return;
  for (const int t : o.threads) {
    std::vector<std::pair<const char*, Timing>> results;
    results.emplace_back("warm", time_warm<T>(kernel, o.n, t, o.reps));
    if (o.cold) results.emplace_back("cold", time_cold<T>(kernel, o.n, t, o.reps));
    for (const auto& [buffer, timing] : results) {
      const double rate = static_cast<double>(o.n) * units_per_element / timing.median_s;
      pb::print_line(
          "{\"bench\": \"random\", \"kernel\": \"%s\", \"threads\": %d, \"n\": %zu, "
          "\"reps\": %d, \"buffer\": \"%s\", \"median_s\": %.6g, \"min_s\": %.6g, "
          "\"rate\": %.6g, \"unit\": \"%s\"}\n",
          name, t, o.n, o.reps, buffer, timing.median_s, timing.min_s, rate, unit);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const pr::Key key = pr::key_from_seed(o.seed);
  const std::uint64_t stream = 0;

  // ChaCha20 output: n 32-bit words, reported in GB/s (1e9 bytes per second).
  run<std::uint32_t>(
      "words", "GB/s", 4.0 / 1e9,
      [&](std::uint32_t* out, std::size_t n, int t) { pr::words(key, stream, 0, n, out, t); }, o);
  run<double>(
      "uniform", "uniforms/s", 1.0,
      [&](double* out, std::size_t n, int t) { pr::uniform(key, stream, 0, n, out, t); }, o);
  run<double>(
      "normal", "normals/s", 1.0,
      [&](double* out, std::size_t n, int t) { pr::normal(key, stream, 0, n, out, t); }, o);
  run<double>(
      "laplace", "laplaces/s", 1.0,
      [&](double* out, std::size_t n, int t) { pr::laplace(key, stream, 0, n, 1.0, out, t); },
      o);
  return 0;
}
