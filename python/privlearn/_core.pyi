"""Type stub of the C++ extension ``privlearn._core`` (kept in step with python/bindings/)."""

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

# A CSR matrix's index arrays: scipy's int32 (taken as they are) or int64 (converted once).
CsrIndex = npt.NDArray[np.int32] | npt.NDArray[np.int64]

__version__: str
has_openmp: bool
reduce_block: int

def default_threads() -> int: ...
def set_default_threads(n: int) -> None: ...
def threads_for(n_threads: int, work_ns: float) -> int: ...
def min_thread_work_ns() -> float: ...

MIN_THREAD_WORK_NS: float
MIN_THREAD_WORK_SPIN_NS: float
INTERRUPT_POLL_INTERVAL_MS: int

def interruptible_wait(seconds: float) -> float: ...
def blocked_column_sum(
    X: npt.NDArray[np.float64], n_threads: int = 0
) -> npt.NDArray[np.float64]: ...

# ---- random.hpp / samplers.hpp ----
def chacha20_block(key: bytes, counter: int, stream: int) -> npt.NDArray[np.uint32]: ...
def key_from_seed(seed: int) -> bytes: ...
def key_from_os() -> bytes: ...
def random_words(
    key: bytes, stream: int, start: int, n: int, n_threads: int = 0
) -> npt.NDArray[np.uint32]: ...
def random_raws(
    key: bytes, stream: int, start: int, n: int, n_threads: int = 0
) -> npt.NDArray[np.uint64]: ...
def random_uniform(
    key: bytes, stream: int, start: int, n: int, n_threads: int = 0
) -> npt.NDArray[np.float64]: ...
def random_normal(
    key: bytes, stream: int, start: int, n: int, n_threads: int = 0
) -> npt.NDArray[np.float64]: ...
def random_normal_at(key: bytes, stream: int, index: npt.ArrayLike) -> npt.NDArray[np.float64]: ...
def random_box_muller(
    a: npt.ArrayLike, b: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def random_discrete_gaussian(
    key: bytes,
    stream: int,
    start: int,
    n: int,
    variance_lo: int,
    variance_hi: int,
    n_threads: int = 0,
) -> npt.NDArray[np.int64]: ...
def random_discrete_gaussian_scripted(
    words: npt.NDArray[np.uint32], variance_lo: int, variance_hi: int, path: int = 0
) -> tuple[int, int]: ...
def noise_lattice(sigma: float, dim: int) -> tuple[int, int, int, int]: ...
def random_exponential(
    key: bytes, stream: int, start: int, n: int, scale: float, n_threads: int = 0
) -> npt.NDArray[np.float64]: ...
def random_laplace(
    key: bytes, stream: int, start: int, n: int, scale: float, n_threads: int = 0
) -> npt.NDArray[np.float64]: ...
def random_gamma(
    key: bytes, stream: int, start: int, n: int, shape: float, scale: float, n_threads: int = 0
) -> npt.NDArray[np.float64]: ...
def random_l2_laplace(
    key: bytes, stream: int, start: int, n: int, dim: int, epsilon: float, n_threads: int = 0
) -> npt.NDArray[np.float64]: ...
def choice_without_replacement(
    key: bytes, stream: int, index: int, population: int, k: int
) -> npt.NDArray[np.int64]: ...
def poisson_sample(
    key: bytes, stream: int, index: int, population: int, q: float, lo: int = 0, hi: int = -1
) -> npt.NDArray[np.int64]: ...

POISSON_BLOCK: int
POISSON_LAYOUT_VERSION: int

def poisson_mask(
    key: bytes, stream: int, index: int, population: int, q: float, n_threads: int = 0
) -> npt.NDArray[np.bool_]: ...

# ---- the step pieces of a distributed run (privlearn.distributed) ----
def sgd_check_distributed(
    n_total: int,
    d: int,
    loss: str,
    mechanism: str,
    sampling: str,
    schedule: str,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    eta0: float,
    clip: float,
    epsilon: float,
    sigma: float,
    radius: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    rate: float = 0.0,
) -> None: ...
def sgd_partial_sum_dense(
    X: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    w: npt.NDArray[np.float64],
    t: int,
    offset: int,
    n_total: int,
    loss: str,
    mechanism: str,
    sampling: str,
    schedule: str,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    eta0: float,
    clip: float,
    epsilon: float,
    sigma: float,
    radius: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    rate: float = 0.0,
) -> npt.NDArray[np.int64]: ...
def sgd_apply_units(
    w: npt.NDArray[np.float64],
    units: npt.NDArray[np.int64],
    t: int,
    loss: str,
    mechanism: str,
    sampling: str,
    schedule: str,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    eta0: float,
    clip: float,
    epsilon: float,
    sigma: float,
    radius: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    rate: float = 0.0,
) -> npt.NDArray[np.float64]: ...
def scd_check_distributed(
    n_total: int,
    m: int,
    loss: str,
    variant: str,
    poisson: bool,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    clip: float,
    noise_std: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    newton_steps: int = 1,
    rate: float = 0.0,
    n_scale: float = 0.0,
    hidden_alpha: bool = False,
    alpha_jitter: float = 0.0,
) -> None: ...
def scd_partial_step_dense(
    X: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    alpha: npt.NDArray[np.float64],
    last: npt.NDArray[np.int64],
    v: npt.NDArray[np.float64],
    t: int,
    offset: int,
    n_total: int,
    loss: str,
    variant: str,
    poisson: bool,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    clip: float,
    noise_std: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    newton_steps: int = 1,
    rate: float = 0.0,
    n_scale: float = 0.0,
    hidden_alpha: bool = False,
    alpha_jitter: float = 0.0,
) -> tuple[npt.NDArray[np.int64], int]: ...
def scd_apply_units(
    v: npt.NDArray[np.float64],
    units: npt.NDArray[np.int64],
    t: int,
    loss: str,
    variant: str,
    poisson: bool,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    clip: float,
    noise_std: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    newton_steps: int = 1,
    rate: float = 0.0,
    n_scale: float = 0.0,
    hidden_alpha: bool = False,
    alpha_jitter: float = 0.0,
) -> npt.NDArray[np.float64]: ...
def scd_finish_alpha(
    alpha: npt.NDArray[np.float64],
    last: npt.NDArray[np.int64],
    total_steps: int,
    offset: int,
    n_total: int,
    loss: str,
    variant: str,
    poisson: bool,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    clip: float,
    noise_std: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    newton_steps: int = 1,
    rate: float = 0.0,
    n_scale: float = 0.0,
    hidden_alpha: bool = False,
    alpha_jitter: float = 0.0,
) -> None: ...
def softmax_check_distributed(
    n_total: int,
    d: int,
    n_classes: int,
    sampling: str,
    schedule: str,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    eta0: float,
    clip: float,
    sigma: float,
    radius: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    rate: float = 0.0,
) -> None: ...
def softmax_partial_sum_dense(
    X: npt.NDArray[np.float64],
    y: npt.NDArray[np.int64],
    w: npt.NDArray[np.float64],
    n_classes: int,
    t: int,
    offset: int,
    n_total: int,
    sampling: str,
    schedule: str,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    eta0: float,
    clip: float,
    sigma: float,
    radius: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    rate: float = 0.0,
) -> npt.NDArray[np.int64]: ...
def softmax_apply_units(
    w: npt.NDArray[np.float64],
    units: npt.NDArray[np.int64],
    d: int,
    n_classes: int,
    t: int,
    sampling: str,
    schedule: str,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    eta0: float,
    clip: float,
    sigma: float,
    radius: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    rate: float = 0.0,
) -> npt.NDArray[np.float64]: ...

# ---- linear/sgd.hpp ----
def finite_row_squares(X: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...
def csr_row_squares(
    data: npt.NDArray[np.float64], indices: CsrIndex, indptr: CsrIndex, n_cols: int
) -> npt.NDArray[np.float64]: ...
def row_kernels_add_units(
    X: npt.NDArray[np.float64],
    m: int,
    a: npt.NDArray[np.float64],
    s: npt.NDArray[np.float64] | None,
    acc: npt.NDArray[np.int64],
    isa: str,
) -> npt.NDArray[np.int64] | None: ...
def sgd_train_dense(
    X: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    w0: npt.NDArray[np.float64],
    loss: str,
    mechanism: str,
    sampling: str,
    schedule: str,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    eta0: float,
    clip: float,
    epsilon: float,
    sigma: float,
    radius: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    rate: float = 0.0,
    row_scale: npt.NDArray[np.float64] | None = None,
    intercept: float | None = None,
    check_finite: bool = True,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], list[int], int]: ...
def sgd_train_csr(
    data: npt.NDArray[np.float64],
    indices: CsrIndex,
    indptr: CsrIndex,
    n_cols: int,
    y: npt.NDArray[np.float64],
    w0: npt.NDArray[np.float64],
    loss: str,
    mechanism: str,
    sampling: str,
    schedule: str,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    eta0: float,
    clip: float,
    epsilon: float,
    sigma: float,
    radius: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    rate: float = 0.0,
    check_structure: bool = True,
    row_scale: npt.NDArray[np.float64] | None = None,
    intercept: float | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], list[int], int]: ...

# ---- linear/softmax.hpp ----
def softmax_sgd_train_dense(
    X: npt.NDArray[np.float64],
    y: npt.NDArray[np.int64],
    W0: npt.NDArray[np.float64],
    sampling: str,
    schedule: str,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    eta0: float,
    clip: float,
    sigma: float,
    radius: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    rate: float = 0.0,
    row_scale: npt.NDArray[np.float64] | None = None,
    intercept: float | None = None,
    check_finite: bool = True,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], list[int], int]: ...
def softmax_sgd_train_csr(
    data: npt.NDArray[np.float64],
    indices: CsrIndex,
    indptr: CsrIndex,
    n_cols: int,
    y: npt.NDArray[np.int64],
    W0: npt.NDArray[np.float64],
    sampling: str,
    schedule: str,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    eta0: float,
    clip: float,
    sigma: float,
    radius: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    rate: float = 0.0,
    check_structure: bool = True,
    row_scale: npt.NDArray[np.float64] | None = None,
    intercept: float | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], list[int], int]: ...

# ---- linear/scd.hpp ----
def scd_train_dense(
    X: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    loss: str,
    variant: str,
    poisson: bool,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    clip: float,
    noise_std: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    newton_steps: int = 1,
    rate: float = 0.0,
    n_scale: float = 0.0,
    hidden_alpha: bool = False,
    alpha_jitter: float = 0.0,
    row_scale: npt.NDArray[np.float64] | None = None,
    intercept: float | None = None,
    check_finite: bool = True,
) -> tuple[
    npt.NDArray[np.float64], npt.NDArray[np.float64], list[int], list[float], list[float], int
]: ...
def scd_train_csr(
    data: npt.NDArray[np.float64],
    indices: CsrIndex,
    indptr: CsrIndex,
    n_cols: int,
    y: npt.NDArray[np.float64],
    loss: str,
    variant: str,
    poisson: bool,
    lam: float,
    batch_size: int,
    epochs: int,
    steps: int,
    clip: float,
    noise_std: float,
    key: bytes,
    batch_stream: int,
    noise_stream: int,
    record_every: int,
    n_threads: int,
    newton_steps: int = 1,
    rate: float = 0.0,
    n_scale: float = 0.0,
    hidden_alpha: bool = False,
    alpha_jitter: float = 0.0,
    check_structure: bool = True,
    row_scale: npt.NDArray[np.float64] | None = None,
    intercept: float | None = None,
) -> tuple[
    npt.NDArray[np.float64], npt.NDArray[np.float64], list[int], list[float], list[float], int
]: ...

# ---- linear/quadgrad.hpp ----
def quadgrad_train_dense(
    X: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    beta0: npt.NDArray[np.float64],
    optimizer: str,
    enhanced: bool,
    max_iter: int,
    schedule_kind: str,
    base: float,
    scale: float,
    decay: float,
    epsilon: float,
    nag_alpha0: float,
    adam_beta1: float,
    adam_beta2: float,
    adaptive_eps: float,
    bbar: npt.NDArray[np.float64],
    n_threads: int,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], int]: ...
def quadgrad_train_csr(
    data: npt.NDArray[np.float64],
    indices: CsrIndex,
    indptr: CsrIndex,
    n_cols: int,
    y: npt.NDArray[np.float64],
    beta0: npt.NDArray[np.float64],
    optimizer: str,
    enhanced: bool,
    max_iter: int,
    schedule_kind: str,
    base: float,
    scale: float,
    decay: float,
    epsilon: float,
    nag_alpha0: float,
    adam_beta1: float,
    adam_beta2: float,
    adaptive_eps: float,
    bbar: npt.NDArray[np.float64],
    n_threads: int,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], int]: ...
def quadgrad_bbar_dense(
    X: npt.NDArray[np.float64], epsilon: float, n_threads: int
) -> npt.NDArray[np.float64]: ...
def quadgrad_bbar_csr(
    data: npt.NDArray[np.float64],
    indices: CsrIndex,
    indptr: CsrIndex,
    n_cols: int,
    epsilon: float,
    n_threads: int,
) -> npt.NDArray[np.float64]: ...
def logistic_loglik_gradient_dense(
    X: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    beta: npt.NDArray[np.float64],
    n_threads: int,
) -> tuple[float, npt.NDArray[np.float64]]: ...
def logistic_loglik_gradient_csr(
    data: npt.NDArray[np.float64],
    indices: CsrIndex,
    indptr: CsrIndex,
    n_cols: int,
    y: npt.NDArray[np.float64],
    beta: npt.NDArray[np.float64],
    n_threads: int,
) -> tuple[float, npt.NDArray[np.float64]]: ...
def fixed_hessian_diagonal(
    A: npt.NDArray[np.float64], epsilon: float
) -> npt.NDArray[np.float64]: ...

# ---- cluster (bind_cluster.cpp): grid max cover, Chaturvedi, Nguyen & Xu 2021 ----------------
def grid_offsets(p: int, rho: float, max_offsets: int = 50000000) -> npt.NDArray[np.int32]: ...
def grid_cover(
    Y: npt.NDArray[np.float64],
    radius: float,
    unit: float,
    max_offsets: int = 50000000,
    n_threads: int = 0,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64], npt.NDArray[np.int32]]: ...
def maxcover_candidates(
    Y: npt.NDArray[np.float64],
    radii: list[float],
    grid_factor: float,
    picks: int,
    eps_pick: float,
    key: bytes,
    stream: int,
    max_offsets: int = 50000000,
    n_threads: int = 0,
    select: Callable[[int, int, int, list[int]], int] | None = None,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.uint8],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
]: ...
def lsh_codes(
    X: npt.NDArray[np.float64],
    centre: npt.ArrayLike,
    H: npt.NDArray[np.float64],
    thresholds: npt.ArrayLike,
    n_threads: int = 0,
) -> npt.NDArray[np.uint64]: ...
def nearest_centres(
    X: npt.NDArray[np.float64], C: npt.NDArray[np.float64], n_threads: int = 0
) -> npt.NDArray[np.int64]: ...
def clipped_cluster_sums(
    X: npt.NDArray[np.float64],
    labels: npt.NDArray[np.int64],
    n_cells: int,
    centre: npt.ArrayLike,
    radius: float,
    exponent: int,
    n_threads: int = 0,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...

# ---- he: CKKS-like slot-layout simulator kernels (privlearn/he/slots.hpp) ------------------
he_op_stride: int
he_ct_stride: int

def he_noise(
    a: npt.NDArray[np.float64],
    key: bytes,
    stream: int,
    op_id: int,
    scale: float,
    n_threads: int = 0,
) -> npt.NDArray[np.float64]: ...
def he_binary(
    a: npt.NDArray[np.float64],
    b: npt.NDArray[np.float64],
    op: str,
    factor: float,
    key: bytes,
    stream: int,
    op_id: int,
    scale: float,
    n_threads: int = 0,
) -> npt.NDArray[np.float64]: ...
def he_scalar(
    a: npt.NDArray[np.float64],
    op: str,
    c: float,
    factor: float,
    key: bytes,
    stream: int,
    op_id: int,
    scale: float,
    n_threads: int = 0,
) -> npt.NDArray[np.float64]: ...
def he_rotate(
    a: npt.NDArray[np.float64],
    k: int,
    key: bytes,
    stream: int,
    op_id: int,
    scale: float,
    n_threads: int = 0,
) -> npt.NDArray[np.float64]: ...
def he_rotate_sum(
    a: npt.NDArray[np.float64],
    steps: list[int],
    key: bytes,
    stream: int,
    op_id: int,
    scale: float,
    n_threads: int = 0,
) -> npt.NDArray[np.float64]: ...
def he_sum_rows(a: npt.NDArray[np.float64], n_threads: int = 0) -> npt.NDArray[np.float64]: ...
def he_bound_mul(
    a: npt.NDArray[np.float64],
    ea: npt.NDArray[np.float64],
    b: npt.NDArray[np.float64],
    eb: npt.NDArray[np.float64],
    factor: float,
    fixed: float,
    n_threads: int = 0,
) -> npt.NDArray[np.float64]: ...
def he_max_abs(a: npt.NDArray[np.float64], n_threads: int = 0) -> float: ...
