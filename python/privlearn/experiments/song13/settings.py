"""The settings of the Song et al. (2013) reproduction (Section IV-A/B).

Belongs here: the paper's constants (lambda, the privacy level, the batch sizes, the learning
rates), its data sets with their sizes and reduced dimensions, the two mechanisms every run
compares and how the figures name and colour them. Not here: the thresholds of the claims
(:mod:`.claims`).
"""

from __future__ import annotations

PAPER = "Song, Chaudhuri, Sarwate 2013 (GlobalSIP), DP mini-batch SGD"
_TAG = "song13"

#: Regularisation lambda and privacy alpha (= epsilon per pass) of Section IV-B.
LAMBDA = 1e-4
EPSILON = 1.0
#: Recorded iterates per run (about; the objective is evaluated at each on the whole data set).
PATH_POINTS = 150
#: ``--quick`` (issue 32): permutations per setting and recorded iterates per run.
QUICK_REPEATS = 3
QUICK_PATH_POINTS = 30
#: Batch sizes of Section IV-B.
BATCH_SIZES: tuple[int, ...] = (1, 2, 5, 10, 20, 50)
#: Learning rates of Section IV-D: label -> (sgd_train learning_rate, eta0).
RATES: dict[str, tuple[str, float]] = {
    "1/sqrt(t)": ("inv_sqrt", 1.0),
    "10/sqrt(t)": ("inv_sqrt", 10.0),
    "1/(lambda t)": ("inv_lambda_t", 1.0),
}
#: Data sets of Section IV-A, with their full sizes and reduced dimensions.
DATASETS: tuple[str, ...] = ("mnist", "kddcup99", "synthetic")
_FULL_SIZE = {"synthetic": 10_000, "kddcup99": 50_000, "mnist": 60_000}
_DIM = {"synthetic": 5, "kddcup99": 9, "mnist": 15}
#: Data sets of the paper's Figs. 1 and 2 (the synthetic set appears in Fig. 3 only).
_FIG12_DATASETS = ("mnist", "kddcup99")
_MECHANISMS = {"private": "l2-laplace", "non-private": "none"}
_LABELS = {"mnist": "MNIST (1 vs all)", "kddcup99": "KDDCup99", "synthetic": "synthetic"}
#: Colours of the two mechanisms in every figure.
_COLORS = {"private": "tab:red", "non-private": "tab:blue"}
