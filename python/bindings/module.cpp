// privlearn._core: module definition, build facts and thread control.

#include <pybind11/eigen.h>

#include <chrono>
#include <thread>

#include "bindings.hpp"
#include "privlearn/interrupt.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/types.hpp"

#ifndef PRIVLEARN_VERSION
#define PRIVLEARN_VERSION "0+unknown"
#endif

namespace py = pybind11;
using namespace privlearn;

namespace {

// ---- Ctrl-C during core calls (privlearn/interrupt.hpp) ----
// The thread Python runs signal handlers on (threading.main_thread()), set at import.
unsigned long g_main_thread = 0;
// The Python error PyErr_CheckSignals raised (KeyboardInterrupt for Ctrl-C), kept from the
// checker to the translator; only the main thread writes or reads it.
PyObject* g_pending_type = nullptr;
PyObject* g_pending_value = nullptr;
PyObject* g_pending_traceback = nullptr;

// The core's checker: on the main thread, take the GIL and run the pending signal handlers;
// true when one raised (its exception is kept for the translator). Other threads (dask
// workers, user threads) cannot receive Python signals: false at once, without the GIL.
bool python_signal_checker() {
  if (PyThread_get_thread_ident() != g_main_thread) return false;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return false;
  Py_XDECREF(g_pending_type);
  Py_XDECREF(g_pending_value);
  Py_XDECREF(g_pending_traceback);
  PyErr_Fetch(&g_pending_type, &g_pending_value, &g_pending_traceback);
  return true;
}

void register_interrupts(py::module_& m) {
  g_main_thread =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  interrupt::set_checker(&python_signal_checker);
  // Interrupted -> the exception the signal handler raised (KeyboardInterrupt for SIGINT with
  // Python's default handler), restored as the current Python error: the call returns nothing.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const interrupt::Interrupted&) {
      if (g_pending_type != nullptr) {
        PyErr_Restore(g_pending_type, g_pending_value, g_pending_traceback);
        g_pending_type = g_pending_value = g_pending_traceback = nullptr;
      } else {
        PyErr_SetNone(PyExc_KeyboardInterrupt);
      }
    }
  });
  m.def(
      "interruptible_wait",
      [](double seconds) {
        if (!(seconds >= 0.0) || seconds > 3600.0)
          throw std::invalid_argument("seconds must lie in [0, 3600], got " +
                                      std::to_string(seconds));
        const auto start = std::chrono::steady_clock::now();
        const auto end = start + std::chrono::duration<double>(seconds);
        {
          py::gil_scoped_release release;
          while (std::chrono::steady_clock::now() < end) {
            interrupt::poll();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        }
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      },
      py::arg("seconds"),
      "Wait `seconds` without the GIL, polling the core's interrupt hook as a step loop does "
      "(a test of Ctrl-C handling: raises KeyboardInterrupt on SIGINT). Returns the seconds "
      "waited.");
  m.attr("INTERRUPT_POLL_INTERVAL_MS") = interrupt::kPollIntervalMs;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "privlearn C++ core (Eigen + OpenMP). Use the public modules, not this one.";
  m.attr("__version__") = PRIVLEARN_VERSION;
  m.attr("has_openmp") = parallel::has_openmp();
  m.def("default_threads", &parallel::default_threads,
        "Threads used when a kernel gets n_threads <= 0.");
  m.def("set_default_threads", &parallel::set_default_threads, py::arg("n"),
        "Set the default thread count (n <= 0 restores the OpenMP default).");
  m.def("threads_for", &parallel::threads_for, py::arg("n_threads"), py::arg("work_ns"),
        "The team size the thread policy gives a region of work_ns nanoseconds of one thread "
        "(parallel.hpp).");
  m.def("min_thread_work_ns", &parallel::min_thread_work_ns,
        "The minimum work per thread (ns) in effect (read from the environment once).");
  m.attr("MIN_THREAD_WORK_NS") = parallel::kMinThreadWorkNs;
  m.attr("MIN_THREAD_WORK_SPIN_NS") = parallel::kMinThreadWorkSpinNs;
  m.def(
      "blocked_column_sum",
      [](const MatRef& X, int n_threads) {
        VectorXd out(X.cols());
        {
          py::gil_scoped_release release;
          parallel::blocked_column_sum(X, n_threads, out);
        }
        return out;
      },
      py::arg("X").noconvert(), py::arg("n_threads") = 0,
      "Column sums of X by the deterministic blocked reduction (bit-identical for any thread "
      "count).");
  m.attr("reduce_block") = static_cast<std::int64_t>(parallel::kReduceBlock);
  bindings::bind_random(m);
  bindings::bind_linear(m);
  bindings::bind_quadgrad(m);
  bindings::bind_cluster(m);
  bindings::bind_he(m);
  register_interrupts(m);
}
