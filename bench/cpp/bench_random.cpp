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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "privlearn/random.hpp"

namespace {

namespace pr = privlearn::random;

struct Options {
  std::size_t n = std::size_t{1} << 24;
  int reps = 7;
  std::vector<int> threads = {1, 2};
  std::uint64_t seed = 1;
  bool cold = false;
  std::string kernels = "words,uniform,normal,laplace";
};

[[noreturn]] void usage(const char* prog, const char* error) {
  if (error != nullptr) std::fprintf(stderr, "error: %s\n", error);
  std::fprintf(stderr,
               "usage: %s [--n N] [--reps R] [--threads 1,2,...] [--seed S] [--cold]\n"
               "          [--kernels words,uniform,normal,laplace]\n"
               "  --n        draws per measurement (default 2^24)\n"
               "  --reps     repetitions, the median is reported (default 7)\n"
               "  --threads  comma-separated thread counts (default 1,2)\n"
               "  --seed     integer seed of the key (default 1)\n"
               "  --cold     also time writes into a fresh, untouched buffer per repetition\n"
               "  --kernels  comma-separated subset to run (default: all four)\n",
               prog);
  std::exit(error != nullptr ? 2 : 0);
}

std::uint64_t parse_u64(const char* prog, const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if (end == text || *end != '\0') usage(prog, "expected a non-negative integer");
  return static_cast<std::uint64_t>(v);
}

std::vector<int> parse_threads(const char* prog, const std::string& text) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    const std::uint64_t t = parse_u64(prog, item.c_str());
    if (t < 1 || t > 4096) usage(prog, "thread counts must be in [1, 4096]");
    out.push_back(static_cast<int>(t));
    pos = comma + 1;
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(argv[0], "missing value");
      return argv[++i];
    };
    if (arg == "--n") {
      o.n = static_cast<std::size_t>(parse_u64(argv[0], value()));
      if (o.n == 0) usage(argv[0], "--n must be positive");
    } else if (arg == "--reps") {
      const std::uint64_t r = parse_u64(argv[0], value());
      if (r < 1 || r > 100000) usage(argv[0], "--reps must be in [1, 100000]");
      o.reps = static_cast<int>(r);
    } else if (arg == "--threads") {
      o.threads = parse_threads(argv[0], value());
    } else if (arg == "--seed") {
      o.seed = parse_u64(argv[0], value());
    } else if (arg == "--kernels") {
      o.kernels = value();
      const std::string list = "," + o.kernels + ",";
      for (std::size_t pos = 0; pos + 1 < list.size();) {
        const std::size_t next = list.find(',', pos + 1);
        const std::string item = list.substr(pos + 1, next - pos - 1);
        if (item != "words" && item != "uniform" && item != "normal" && item != "laplace") {
          usage(argv[0], "--kernels: expected a subset of words,uniform,normal,laplace");
        }
        pos = next;
      }
    } else if (arg == "--cold") {
      o.cold = true;
    } else if (arg == "--help" || arg == "-h") {
      usage(argv[0], nullptr);
    } else {
      usage(argv[0], "unknown argument");
    }
  }
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Timing {
  double median_s;
  double min_s;
};

Timing summarize(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  const std::size_t m = times.size();
  const double median = (m % 2 == 1) ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
  return {median, times.front()};
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
    times.push_back(seconds_since(t0));
    consume(out.data(), n);
  }
  return summarize(std::move(times));
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
    times.push_back(seconds_since(t0));
    consume(out.get(), n);
  }
  return summarize(std::move(times));
}

bool selected(const Options& o, const std::string& name) {
  const std::string list = "," + o.kernels + ",";
  return list.find("," + name + ",") != std::string::npos;
}

template <class T>
void run(const char* name, const char* unit, double units_per_element, const Kernel<T>& kernel,
         const Options& o) {
  if (!selected(o, name)) return;
  for (const int t : o.threads) {
    std::vector<std::pair<const char*, Timing>> results;
    results.emplace_back("warm", time_warm<T>(kernel, o.n, t, o.reps));
    if (o.cold) results.emplace_back("cold", time_cold<T>(kernel, o.n, t, o.reps));
    for (const auto& [buffer, timing] : results) {
      const double rate = static_cast<double>(o.n) * units_per_element / timing.median_s;
      std::printf(
          "{\"bench\": \"random\", \"kernel\": \"%s\", \"threads\": %d, \"n\": %zu, "
          "\"reps\": %d, \"buffer\": \"%s\", \"median_s\": %.6g, \"min_s\": %.6g, "
          "\"rate\": %.6g, \"unit\": \"%s\"}\n",
          name, t, o.n, o.reps, buffer, timing.median_s, timing.min_s, rate, unit);
      std::fflush(stdout);
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
