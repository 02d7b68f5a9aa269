#pragma once
// Interrupts (Ctrl-C) of long core calls, without knowing Python.
//
// The core releases the GIL during long calls, so Python's own signal handling cannot run until
// the call returns: a SIGINT arriving during a fit took as long as the fit to act (issue 19:
// 17-45 s). A front end therefore registers a checker, a plain `bool (*)()` that returns true
// when the call should stop (the Python bindings: acquire the GIL, run PyErr_CheckSignals on the
// main thread). Step loops call poll() once per step (SGD / SCD / softmax steps, quadratic-
// gradient iterations, max-cover picks, grid blocks between parallel regions); poll() reads a
// steady clock and calls the checker at most once per kPollIntervalMs of wall clock per thread,
// and never inside an OpenMP region (it would be a no-op there: the loops call it between
// regions, on the calling thread). When the checker returns true poll() throws Interrupted,
// which unwinds the call (nothing is returned, so nothing is released); the bindings translate
// it into the Python exception the checker saw (KeyboardInterrupt for Ctrl-C).
//
// Cost: one clock read per step (~20 ns, vDSO); loops whose steps are cheaper than ~2 us poll
// every few hundred steps instead.

#include <atomic>
#include <exception>

namespace privlearn::interrupt {

// Wall-clock milliseconds between two calls of the checker on one thread.
inline constexpr long kPollIntervalMs = 50;

// The checker: returns true when the running call must stop. Must not throw.
using Checker = bool (*)();

// Registers the checker (nullptr: none, poll() never throws). Thread-safe.
void set_checker(Checker checker) noexcept;
Checker checker() noexcept;

// Thrown by poll() when the checker asks to stop. Not a std::invalid_argument (which the
// bindings turn into ValueError): a distinct type the bindings translate on its own.
class Interrupted : public std::exception {
 public:
  const char* what() const noexcept override { return "interrupted"; }
};

// Calls the checker when kPollIntervalMs have passed since its last call on this thread (the
// first poll of a thread only starts the clock) and throws Interrupted when it returns true.
// A no-op inside an OpenMP parallel region and when no checker is registered.
void poll();

// For a loop INSIDE a parallel region (the grid cover's blocks), which must not throw: the
// region's thread 0 (the calling thread) polls the checker as poll() does and records a stop
// in `flag` (a local of the call); every thread reads `flag` and skips its remaining work when
// it is set. After the region, throw_if(flag) throws Interrupted. Never throws.
bool stop_in_region(std::atomic<bool>& flag) noexcept;
void throw_if(const std::atomic<bool>& flag);

// Calls the checker now (outside the rate limit) and throws Interrupted when it returns true
// (for tests of the translation).
void check_now();

}  // namespace privlearn::interrupt
