// Helpers shared by the benchmark binaries in bench/cpp: command-line parsing that ends in the
// binary's usage message, wall-clock and thread CPU timing and medians, and line-buffered JSON
// output.
//
// Header-only and dependency-free (std::chrono and POSIX clock_gettime only). Not a .cpp file,
// so CMake's one executable per bench/cpp/*.cpp does not pick it up.

#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <initializer_list>
#include <string>
#include <vector>

namespace privlearn::bench {

// ---- command line ------------------------------------------------------------------------

// A binary's command line: its name (argv[0]) and the rest of its usage message, the text
// printed after "usage: <prog>" (options on the first line, then one line per option).
struct Cli {
  const char* prog;
  const char* usage_text;
};

// Prints "error: <error>" (when error is not null) and the usage message to stderr, then exits
// with status 2 on error and 0 otherwise (--help).
[[noreturn]] inline void usage(const Cli& cli, const char* error) {
  if (error != nullptr) std::fprintf(stderr, "error: %s\n", error);
  std::fprintf(stderr, "usage: %s%s", cli.prog, cli.usage_text);
  std::exit(error != nullptr ? 2 : 0);
}

// The value after argv[i] (advancing i), or the usage message if there is none.
inline const char* next_value(const Cli& cli, int argc, char** argv, int& i) {
  if (i + 1 >= argc) usage(cli, "missing value");
  return argv[++i];
}

inline std::uint64_t parse_u64(const Cli& cli, const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if (end == text || *end != '\0') usage(cli, "expected a non-negative integer");
  return static_cast<std::uint64_t>(v);
}

// parse_u64, then the usage message with `error` unless the value lies in [lo, hi].
inline std::uint64_t parse_u64_in(const Cli& cli, const char* text, std::uint64_t lo,
                                  std::uint64_t hi, const char* error) {
  const std::uint64_t v = parse_u64(cli, text);
  if (v < lo || v > hi) usage(cli, error);
  return v;
}

inline double parse_positive_double(const Cli& cli, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0.0) || !std::isfinite(v))
    usage(cli, "expected a positive finite number");
  return v;
}

// --reps: a repetition count in [1, 100000].
inline int parse_reps(const Cli& cli, const char* text) {
  return static_cast<int>(parse_u64_in(cli, text, 1, 100000, "--reps must be in [1, 100000]"));
}

// --threads: comma-separated thread counts, each in [1, 4096].
inline std::vector<int> parse_threads(const Cli& cli, const std::string& text) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    out.push_back(static_cast<int>(
        parse_u64_in(cli, item.c_str(), 1, 4096, "thread counts must be in [1, 4096]")));
    pos = comma + 1;
  }
  return out;
}

// Whether the comma-separated `list` names `name`.
inline bool selected(const std::string& list, const std::string& name) {
  return ("," + list + ",").find("," + name + ",") != std::string::npos;
}

// The usage message with `error` unless every item of the comma-separated `list` is one of
// `allowed` (an empty item, as in "" or "a,,b", is not).
inline void check_subset(const Cli& cli, const std::string& list,
                         std::initializer_list<const char*> allowed, const char* error) {
  const std::string padded = "," + list + ",";
  for (std::size_t pos = 0; pos + 1 < padded.size();) {
    const std::size_t next = padded.find(',', pos + 1);
    const std::string item = padded.substr(pos + 1, next - pos - 1);
    if (std::none_of(allowed.begin(), allowed.end(),
                     [&](const char* a) { return item == a; }))
      usage(cli, error);
    pos = next;
  }
}

// The options every benchmark takes; a binary's Options derive from it and set their defaults.
struct CommonOptions {
  int reps = 5;                      // --reps: repetitions, the median is reported
  std::vector<int> threads = {1, 2};  // --threads: thread counts to measure
  std::uint64_t seed = 1;            // --seed
};

// Walks argv[1..]: --help / -h print the usage message and exit 0; --reps, --threads and --seed
// set `common`; every other argument goes to handle(arg, value), where value() takes the
// argument's value (the usage message if there is none), and handle returns false for an
// argument it does not know (the usage message with "unknown argument").
template <class Handler>
void parse_args(const Cli& cli, int argc, char** argv, CommonOptions& common, Handler&& handle) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&] { return next_value(cli, argc, argv, i); };
    if (arg == "--reps") {
      common.reps = parse_reps(cli, value());
    } else if (arg == "--threads") {
      common.threads = parse_threads(cli, value());
    } else if (arg == "--seed") {
      common.seed = parse_u64(cli, value());
    } else if (arg == "--help" || arg == "-h") {
      usage(cli, nullptr);
    } else if (!handle(arg, value)) {
      usage(cli, "unknown argument");
    }
  }
}

// ---- timing ------------------------------------------------------------------------------

// This thread's CPU time in seconds (robust to a busy machine where wall time is not).
inline double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median of a non-empty sample (the mean of the two middle values for an even size).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  return (m % 2 == 1) ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

struct Timing {
  double median_s;
  double min_s;
};

// Median and minimum of non-empty repetition times, in seconds.
inline Timing summarize(const std::vector<double>& times) {
  return {median(times), *std::min_element(times.begin(), times.end())};
}

// ---- output ------------------------------------------------------------------------------

// printf to stdout, then flush, so that each (JSON) line is out as soon as it is measured.
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
inline void print_line(const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
  std::fflush(stdout);
}

}  // namespace privlearn::bench
