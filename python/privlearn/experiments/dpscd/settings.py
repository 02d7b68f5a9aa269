"""The settings of the DP-SCD reproduction (Damaskinos et al. 2021, Section 5).

Belongs here: the paper's constants (lambda, delta, epsilons, epochs, runs, methods), the tasks
of Fig. 1 (:class:`Task`, :data:`TASKS`), the hyper-parameter grids (:class:`Grid`,
:data:`GRIDS`, :data:`QUICK_GRIDS`) and the other ``--quick`` settings (``QUICK_*``), one
configuration (:class:`Config`) and the colours and markers of the methods in every figure.
Not here: loading data (:mod:`.data`), running (:mod:`.training`, :mod:`.simulation`).
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER = "Damaskinos, Mendler-Duenner, Guerraoui, Papandreou, Parnell 2021"
_TAG = "dpscd"

#: Regularisation lambda, delta and the epsilon values of Fig. 1 (Section 5).
LAMBDA = 1e-4
DELTA = 1e-3
EPSILONS: tuple[float, ...] = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
#: Epochs over the (75%) training set; the authors' code uses 50 for Fig. 1.
EPOCHS = 50
#: Runs per reported point (Fig. 1: mean ± std over 10 runs).
RUNS = 10
#: Runs per point of the Fig. 3 sweep.
FIG3_RUNS = 2
#: Methods of Section 5, in plotting order.
METHODS: tuple[str, ...] = ("SCD", "SGD", "DP-SCD", "DP-SGD", "SeqDP-SCD")
_PRIVATE = ("DP-SCD", "DP-SGD", "SeqDP-SCD")
#: Fraction of the training set held out for validation (the authors' ``valid_size``).
VALID_FRACTION = 0.25
#: Fig. 2 is drawn at these epsilon values (Section 5.1, "Convergence").
FIG2_EPSILONS: tuple[float, ...] = (0.1, 1.0)
#: Fig. 3 sweeps DP-SCD at this epsilon (Section 5.1, "Mini-batch size and scaling factor").
FIG3_EPSILON = 1.0

# Sizes of the real data sets (rows of the training / test parts).
_MSD_TRAIN, _MSD_TEST = 463_715, 51_630
_PHISHING_TEST_FRACTION = 0.25


@dataclass(frozen=True)
class Task:
    """One panel of Fig. 1: a data set, a loss and the metric reported on the test set."""

    name: str
    dataset: str
    loss: str  # "squared", "log_loss" or "hinge" (the names of the C++ core)
    model: str
    metric: str  # "mse" (lower is better) or "accuracy" (higher is better)


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task("msd-ridge", "msd", "squared", "ridge regression", "mse"),
        Task("phishing-logistic", "phishing", "log_loss", "logistic regression", "accuracy"),
        Task("phishing-svm", "phishing", "hinge", "SVM", "accuracy"),
        Task("adult-logistic", "adult", "log_loss", "logistic regression", "accuracy"),
        Task("adult-svm", "adult", "hinge", "SVM", "accuracy"),
        # Not in the paper: a small synthetic classification set for tests and smoke runs.
        Task("synthetic-logistic", "synthetic", "log_loss", "logistic regression", "accuracy"),
        Task("synthetic-svm", "synthetic", "hinge", "SVM", "accuracy"),
    )
}
#: The five panels of the paper's Fig. 1.
PAPER_TASKS: tuple[str, ...] = (
    "msd-ridge",
    "phishing-logistic",
    "phishing-svm",
    "adult-logistic",
    "adult-svm",
)
_DATA_LABELS = {
    "msd": "YearPredictionMSD",
    "phishing": "Phishing",
    "adult": "Adult",
    "synthetic": "synthetic",
}
#: Title of the YearPredictionMSD panels when the synthetic stand-in ran instead.
_MSD_STAND_IN = "YearPredictionMSD-like (synthetic)"


@dataclass(frozen=True)
class Grid:
    """Hyper-parameter grid of one data set (Section 5.1, "Tuning cost").

    DP-SCD and SeqDP-SCD try ``batch_sizes x scd_clips``; SGD tries
    ``learning_rates x batch_sizes``; DP-SGD tries ``learning_rates x batch_sizes x sgd_clips``.
    ``scd_clips`` bound the coordinate updates (Algorithm 1, step 8); ``sgd_clips`` bound the
    per-example gradients.
    """

    batch_sizes: tuple[int, ...]
    scd_clips: tuple[float, ...]
    sgd_clips: tuple[float, ...]
    learning_rates: tuple[float, ...]
    #: Fig. 3 sweep (DP-SCD at epsilon = 1): batch sizes and scaling factors.
    fig3_batch_sizes: tuple[int, ...] = ()
    fig3_clips: tuple[float, ...] = ()

    def configs(self, method: str, n: int) -> list[Config]:
        """The configurations ``method`` tries on ``n`` training rows (``L <= n`` only)."""
        bs = [int(b) for b in self.batch_sizes if int(b) <= n]
        if method == "SCD":
            return [Config()]
        if method == "SGD":
            return [Config(L=b, eta=float(e)) for e in self.learning_rates for b in bs]
        if method == "DP-SGD":
            return [
                Config(L=b, C=float(c), eta=float(e))
                for e in self.learning_rates
                for b in bs
                for c in self.sgd_clips
            ]
        if method in ("DP-SCD", "SeqDP-SCD"):
            return [Config(L=b, C=float(c)) for b in bs for c in self.scd_clips]
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")


#: Full-run grids. The paper tried 156 configurations for DP-SCD and 2,028 for DP-SGD in total
#: (13 x more); these are smaller (DP-SGD: 2 x more per setting) to keep the full run near 25
#: minutes on two cores. YearPredictionMSD dominates (about 4.5 s per 50-epoch run on 347,786
#: rows whatever L), hence its 2-value L grid.
GRIDS: dict[str, Grid] = {
    "msd": Grid(
        batch_sizes=(300, 3000),
        scd_clips=(0.02, 0.1, 0.5),
        sgd_clips=(1.0, 10.0),
        learning_rates=(0.03, 0.3, 3.0),
        fig3_batch_sizes=(30, 100, 300, 1000, 3000, 10_000),
        fig3_clips=(0.1, 0.5, 2.0),
    ),
    "phishing": Grid(
        batch_sizes=(10, 100, 1000),
        scd_clips=(3e-4, 2e-3, 1e-2),
        sgd_clips=(0.1, 1.0),
        learning_rates=(0.1, 1.0, 10.0),
    ),
    "adult": Grid(
        batch_sizes=(30, 300, 3000),
        scd_clips=(1e-3, 3e-3, 1e-2),
        sgd_clips=(0.1, 1.0),
        learning_rates=(0.1, 1.0, 10.0),
    ),
    "synthetic": Grid(
        batch_sizes=(10, 100, 1000),
        scd_clips=(1e-3, 1e-2, 0.1),
        sgd_clips=(0.1, 1.0),
        learning_rates=(0.1, 1.0, 10.0),
    ),
}
#: ``--quick`` (issue 32: ``privlearn reproduce all --quick`` within two CPU-minutes): the
#: finite epsilons (those of Fig. 2 and the largest), epochs, final runs per point, Fig. 3 runs
#: per point and training rows per data set (seeded subsamples; Phishing is small enough whole).
QUICK_EPSILONS: tuple[float, ...] = (0.1, 1.0, 10.0)
QUICK_EPOCHS = 10
QUICK_RUNS = 3
QUICK_FIG3_RUNS = 1
QUICK_SIZES: dict[str, int] = {"msd": 20_000, "adult": 8_000}
#: ``--quick`` grids: 2 values per hyper-parameter, except DP-SGD's clipping bound (1 value:
#: the one DP-SGD's tuning picked in every setting of a 2-value grid), so that DP-SGD and
#: DP-SCD try 4 configurations each per setting.
QUICK_GRIDS: dict[str, Grid] = {
    "msd": Grid(
        batch_sizes=(100, 1000),
        scd_clips=(0.05, 0.5),
        sgd_clips=(10.0,),
        learning_rates=(0.01, 0.1),
        fig3_batch_sizes=(30, 100, 300, 1000, 3000),
        fig3_clips=(0.1, 0.5, 2.0),
    ),
    "phishing": Grid(
        batch_sizes=(10, 100),
        scd_clips=(5e-4, 5e-3),
        sgd_clips=(1.0,),
        learning_rates=(0.1, 1.0),
    ),
    "adult": Grid(
        batch_sizes=(30, 300),
        scd_clips=(1e-3, 5e-3),
        sgd_clips=(1.0,),
        learning_rates=(0.1, 1.0),
    ),
    "synthetic": Grid(
        batch_sizes=(10, 100),
        scd_clips=(1e-3, 1e-2),
        sgd_clips=(1.0,),
        learning_rates=(0.1, 1.0),
    ),
}


@dataclass(frozen=True)
class Config:
    """One hyper-parameter configuration (0 = not used by the method)."""

    L: int = 0
    C: float = 0.0
    eta: float = 0.0

    @property
    def label(self) -> str:
        parts = []
        if self.eta:
            parts.append(f"eta={self.eta:g}")
        if self.L:
            parts.append(f"L={self.L}")
        if self.C:
            parts.append(f"C={self.C:g}")
        return " ".join(parts) or "default"


#: Colours and markers of the methods in Figs. 1 and 2.
_COLORS = {
    "SCD": "tab:blue",
    "SGD": "tab:orange",
    "DP-SCD": "tab:green",
    "DP-SGD": "tab:red",
    "SeqDP-SCD": "tab:purple",
}
_MARKERS = {"DP-SCD": "o", "DP-SGD": "s", "SeqDP-SCD": "^"}
