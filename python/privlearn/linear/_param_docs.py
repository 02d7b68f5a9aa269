"""Parameter, attribute and note texts that the DP-SGD and DP-SCD estimators' docstrings share
(composed into them, as :data:`privlearn.linear._target.TARGET_PARAMS_DOC` is).

What belongs here: a numpydoc fragment that reads the same in two or more estimators of
:mod:`privlearn.linear`, indented for a class docstring. A family's own wording (its defaults,
mechanism, sampling) stays in its estimator module.
"""

from __future__ import annotations

__all__ = ["DEFAULTS_NOTE_DOC", "LEDGER_PARAM_DOC", "ROW_PROJECTION_ATTR_DOC", "RUN_PARAMS_DOC"]

#: ``ledger``: charged the planned total before any row is read.
LEDGER_PARAM_DOC = """
    ledger : PrivacyLedger or None, default=None
        A budget shared with other fits (:class:`privlearn.accounting.PrivacyLedger`, or any
        object with ``spend(epsilon, delta, label=...)``). ``fit`` validates every input, then
        charges it exactly the total ``privacy_`` will report (``epochs * epsilon`` for
        l2-laplace with ``epsilon_split="per_pass"``; with ``noise_multiplier``, the count plus
        the worst case over counts) before any row is read (an
        :class:`~privlearn.accounting.RDPLedger` composes the fit's events where they are
        public inputs, a public or replace-one size). A spend the budget cannot cover raises
        :class:`~privlearn.exceptions.BudgetExceededError` and nothing is fitted."""

#: ``verbose``, ``seed`` and ``backend``: how a fit runs, never what it may release.
RUN_PARAMS_DOC = """
    verbose : int, default=1
        Progress of a fit on a ``dask.array``: a tqdm bar of the steps on stderr (0: none; 1:
        when stderr is a terminal; 2: always). It never changes the result. An in-memory fit
        runs in one call of the core and shows none.
    seed : int or None, default=None
        Named ``seed`` rather than ``random_state`` because it is not a numpy RandomState: it
        selects the 256-bit ChaCha20 key of :class:`privlearn.random.Stream`. ``None`` (the
        default, right for a private release) draws the key from the operating system; an int
        makes ``fit`` reproducible (research runs). The seed is SECRET randomness: whoever knows
        it knows the noise (and can refit each neighbour to reproduce the release), so a fit
        with a known seed is no private release; the statement lists it as secret.
    backend : {"core", "reference"}, default="core"
        The C++ core or its numpy twin (identical results up to rounding)."""

#: ``row_projection_``: the per-row map applied at fit and predict time.
ROW_PROJECTION_ATTR_DOC = """
    row_projection_ : float or None
        The radius the training rows were projected onto (``clip_rows``), applied again to the
        rows given to ``predict`` / ``decision_function``; None: rows used as given."""

#: How the classifiers' defaults were chosen (``bench/python/bench_defaults.py``).
DEFAULTS_NOTE_DOC = """
    Defaults were chosen by experiment (``bench/python/bench_defaults.py``, results in
    ``bench/results/README.md``): on adult, phishing, kddcup99 (100k rows) and MNIST 3-vs-8 with
    features scaled into the unit ball (public bounds or a separately budgeted
    ``DPFeatureScaler``), and synthetic msd-like data for the regressors, batch size, epochs,
    clip, learning rate or alpha, ``fit_intercept`` and (DPSGDClassifier) the mechanism were
    varied one at a time and scored by validation ROC AUC (R^2) at epsilon 1, 3 seeds. The mean
    test AUC at epsilon 1 went from 0.647 (DPSGDClassifier) / 0.859 (DPSCDClassifier) with the
    previous defaults to 0.967 / 0.960, against 0.970 for non-private logistic regression."""
