// privlearn._core: module definition, build facts and thread control.

#include <pybind11/eigen.h>

#include "bindings.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/types.hpp"

#ifndef PRIVLEARN_VERSION
#define PRIVLEARN_VERSION "0+unknown"
#endif

namespace py = pybind11;
using namespace privlearn;

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
}
