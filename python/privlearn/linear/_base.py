"""The fitting plan shared by the private linear estimators: DP-SGD
(:mod:`privlearn.linear.estimators`) and DP-SCD (:mod:`privlearn.linear.scd_estimators`).

Every fit runs the same steps, in this order (:meth:`PrivateLinearModel._fit`):

1. validate every parameter and input: the parameters, the row precondition of the privacy
   proof (``||x_i|| <= bound``: checked, or enforced by ``clip_rows=True``) and, with a
   ledger, a dry plan from public inputs only (a declared size against the data, the batch
   size against it, the schedule's caps), so that a bad input never costs budget;
2. charge a shared budget (``ledger=``) the PLANNED TOTAL, exactly the ``privacy_.epsilon``
   and ``privacy_.delta`` the statement will report (they are functions of public inputs
   only), before the data are touched;
3. plan the run: the dataset size (declared public, fixed by a replace-one relation, or an exact
   discrete-Laplace noisy count clamped to a public range), the steps, the sampling rate, the
   noise, and the privacy statement (family-specific: :meth:`PrivateLinearModel._plan`),
   checked against the charge;
4. the row projection (``clip_rows``, recorded as ``row_projection_`` and applied again at
   predict time) and the constant intercept column, in at most one copy of X;
5. train (C++ core or numpy twin), refuse a non-finite model, keep only what the guarantee
   covers (``coef_``, ``intercept_``, ``n_steps_``, ``privacy_``) and, only with
   ``diagnostics=True``, the non-private
   :class:`~privlearn.linear._statement.TrainingDiagnostics`.

What belongs here: what a DP-SGD and a DP-SCD estimator do alike (as scikit-learn's
``BaseSGD`` holds the shared fit plan and the leaves stay thin): storing the parameters
(:func:`store_params`, which the clear-text quadratic-gradient estimator uses too), the
public ``fit`` entry points of classifiers (label set, one-vs-rest tasks) and regressors (the
target bound), the shared parameter checks, the dataset size and the a-priori total a plan
states. A family's mechanism, noise calibration and statement stay in its estimator module;
the texts the two families' docstrings share are :mod:`privlearn.linear._param_docs`, what
their ``privacy_`` records share is :mod:`privlearn.linear._privacy_record`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privlearn._checks import as_index, as_threads
from privlearn._design_matrix import RowView
from privlearn._labels import declared_classes, label_set, private_target, warn_labels_read
from privlearn.accounting.size import DatasetSize, check_delta, planned_size_cap
from privlearn.backends import DistributedRows, backend_for
from privlearn.linear._params import (
    BACKENDS,
    PATH_POINTS,
    SIGMA_RANGE,
    _bounded,
    _choice,
    _epsilon,
    _flag,
    _seed,
)
from privlearn.linear._prediction import LinearModelBase
from privlearn.linear._rows import (
    _check_finite_rows,
    _check_fit_data,
    _check_row_norms,
    _class_tasks,
    _training_rows,
)
from privlearn.linear._statement import (
    TrainingDiagnostics,
    _finite_coef,
    _plan_size,
    _worst_case_statement,
)
from privlearn.linear._target import TargetSpec, check_target, scaled_target
from privlearn.mechanisms._bits import spend
from privlearn.progress import as_verbose
from privlearn.random import Stream

__all__ = ["FitSetup", "PrivateLinearModel", "RowRule", "objective_path", "store_params"]


def store_params(estimator: Any, params: dict[str, Any]) -> None:
    """Store the arguments of an estimator's ``__init__`` (``locals()`` there) unchanged under
    their own names: scikit-learn's rule (no check or derivation before ``fit``; ``get_params``
    reads them back). Exactly the names of the signature, so a parameter cannot be forgotten.
    The names are read from the signature once per class (an audit or a search builds
    thousands of estimators)."""
    cls = type(estimator)
    names = _PARAM_NAMES.get(cls)
    if names is None:
        names = _PARAM_NAMES[cls] = tuple(cls._get_param_names())
    for name in names:
        setattr(estimator, name, params[name])


#: ``__init__`` parameter names per estimator class (:func:`store_params`).
_PARAM_NAMES: dict[type, tuple[str, ...]] = {}


@dataclass(frozen=True)
class RowRule:
    """What the rows the trainer sees must satisfy.

    Attributes
    ----------
    bound : float
        Radius of the ball the rows (before the intercept column) must lie in.
    checked : bool
        Whether the privacy proof needs it: a violating row raises (naming it) unless
        ``clip_rows=True`` projects the rows onto the ball.
    reason : str
        Which proof needs it (for the error message).
    """

    bound: float = 1.0
    checked: bool = False
    reason: str = ""


@dataclass(frozen=True)
class FitSetup:
    """The validated parameters of one fit: the privacy target, the intercept column, the row
    rule, and the family's own parameters (``extra``)."""

    epsilon: float | None  # None: the noise is given as noise_multiplier
    noise_multiplier: float | None
    delta: float
    scaling: float  # value of the intercept column (used with fit_intercept)
    rows: RowRule
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def private(self) -> bool:
        """Whether the fit adds noise (a finite epsilon target or a noise multiplier)."""
        return self.noise_multiplier is not None or math.isfinite(self.epsilon)  # type: ignore[arg-type]


class PrivateLinearModel(LinearModelBase):
    """Base of the private linear estimators: one plan for DP-SGD and DP-SCD.

    Subclasses provide :meth:`_setup` (validate their parameters), :meth:`_plan` (steps,
    noise, privacy statement), :attr:`_trainer` (or :meth:`_trainer_name`) and
    :meth:`_trainer_kwargs` (the trainer and its arguments) and :meth:`_diagnostics`.
    """

    # ---- hooks -----------------------------------------------------------------------------------
    def _setup(self, d: int, fit_intercept: bool) -> FitSetup:  # pragma: no cover - overridden
        raise NotImplementedError

    def _plan(
        self, setup: FitSetup, n: int, d: int, seed: int | None, ledger: Any, dry: bool = False
    ) -> Any:  # pragma: no cover - overridden
        """The run's schedule and privacy (an object with ``.privacy``, whose ``steps``,
        ``private``, ``epsilon``, ``delta`` and ``size`` describe it). ``ledger`` (or None) is
        to be charged for a noisy count, if one is drawn. ``dry=True``: draw nothing (a
        stand-in takes a noisy count's place); the statement's ``epsilon`` and ``delta`` must
        be the same as the real plan's (they depend on public inputs only)."""
        raise NotImplementedError

    #: Name of the trainer (``sgd_train`` / ``scd_train``) in ``privlearn.linear`` (core) and in
    #: ``privlearn.reference.linear`` (numpy twin).
    _trainer: str = ""

    def _trainer_kwargs(
        self, setup: FitSetup, plan: Any
    ) -> dict[str, Any]:  # pragma: no cover - overridden
        """The trainer's keyword arguments other than the data, key, threads and recording."""
        raise NotImplementedError

    def _diagnostics(
        self, X: Any, y: np.ndarray, setup: FitSetup, run: Any
    ) -> TrainingDiagnostics:  # pragma: no cover - overridden
        raise NotImplementedError

    def _clip_rows(self, rows: RowRule) -> bool:
        """``clip_rows``: ``None`` (the default) projects the rows exactly where the privacy
        proof needs a row bound (``rows.checked``: Song et al.'s mechanism, DP-SCD) and leaves
        them as they are where the gradients are clipped instead (Gaussian DP-SGD)."""
        value = getattr(self, "clip_rows", False)
        if value is None:
            return rows.checked
        return _flag(value, "clip_rows")

    # ---- the public fit entry points -------------------------------------------------------------
    def _fit_classifier(self, X: Any, y: Any) -> Any:
        """``fit`` of a classifier: scikit-learn's checks, the label set (declared ``classes=``
        or read from ``y``, warned about when the fit is private), the binary or one-vs-rest
        problems (:meth:`_fit_class_tasks`), then ``classes_`` and the label set in
        ``privacy_``."""
        # X's finiteness is checked by _fit, in its one pass over X (_check_finite_rows)
        X, y = _check_fit_data(X, y, self, y_numeric=False, check_finite=False)
        declared = declared_classes(self.classes)
        classes, tasks = _class_tasks(y, multiclass=True, classes=declared)
        labels = label_set(classes, declared)
        if private_target(self.epsilon):  # stacklevel: the caller of fit
            warn_labels_read(f"{type(self).__name__}.fit", labels, stacklevel=4)
        self._fit_class_tasks(X, y, classes, tasks)
        self.classes_ = classes
        self.privacy_ = dataclasses.replace(self.privacy_, labels=labels)
        return self

    def _fit_class_tasks(self, X: Any, y: Any, classes: np.ndarray, tasks: list[Any]) -> None:
        """Train the {-1, +1} problems of :func:`~privlearn.linear._rows._class_tasks` (one,
        or one-vs-rest over ``K > 2`` classes) on one plan; a family with a multinomial model
        overrides it."""
        self._fit(X, tasks)

    def _fit_regressor(self, X: Any, y: Any) -> Any:
        """``fit`` of a regressor: scikit-learn's checks, the target bound's parameters
        (:func:`~privlearn.linear._target.check_target`), then the plan on float64 ``y``."""
        X, y = _check_fit_data(X, y, self, y_numeric=True, check_finite=False)  # see _fit
        target = check_target(
            self.target_bounds, self.target_range, self.target_fraction, self.target_scale
        )
        self._fit(X, np.ascontiguousarray(y, dtype=np.float64), target=target)
        return self

    # ---- shared parameter checks --------------------------------------------------------------
    def _noise_target(
        self, *, multiplier_allowed: bool = True
    ) -> tuple[float | None, float | None]:
        """``(epsilon, noise_multiplier)``: exactly one of them is given."""
        epsilon = None if self.epsilon is None else _epsilon(self.epsilon)
        noise_multiplier = self.noise_multiplier
        if noise_multiplier is not None:
            if not multiplier_allowed:
                raise ValueError("noise_multiplier is a parameter of the gaussian mechanism")
            if epsilon is not None:
                raise ValueError(
                    "give either epsilon (the noise is calibrated to it) or noise_multiplier "
                    "(epsilon is then reported in privacy_), not both: set epsilon=None"
                )
            noise_multiplier = _bounded(noise_multiplier, "noise_multiplier", SIGMA_RANGE)
        elif epsilon is None:
            hint = " (or, for the gaussian mechanism, noise_multiplier)"
            raise ValueError(
                "epsilon is None: give epsilon"
                + (" or noise_multiplier" if multiplier_allowed else hint)
            )
        return epsilon, noise_multiplier

    def _planned_size(
        self,
        setup: FitSetup,
        n: int,
        seed: int | None,
        ledger: Any,
        *,
        poisson: bool,
        floor: int,
        dry: bool = False,
    ) -> tuple[DatasetSize, float | None]:
        """The size the schedule uses and the epsilon left for training
        (:func:`~privlearn.linear._statement._plan_size`): Poisson sampling is accounted under
        add/remove-one neighbours, where the size is private; the other samplers are replace-one
        (the size is fixed by the relation). A noisy count is clamped to the public range
        ``[floor, planned_size_cap(floor, epochs, batch_size)]``."""
        e = setup.extra
        cap = planned_size_cap(floor, e["epochs"], e["batch_size"])
        return _plan_size(
            n,
            self.n_samples,
            setup.epsilon,
            add_remove=poisson,
            seed=seed,
            floor=floor,
            cap=cap,
            ledger=ledger,
            dry=dry,
        )

    @staticmethod
    def _stated_total(
        setup: FitSetup,
        statement: Any,
        size: DatasetSize,
        *,
        sigma: float,
        batch_size: int,
        epochs: int,
        tasks: int,
        lattice: tuple[float, int] | None,
    ) -> tuple[Any, float, bool]:
        """``(statement, epsilon, worst_case)`` that the fit states, a priori.

        A public or replace-one size: the training statement plus the size's epsilon. A noisy
        count with ``epsilon=`` given: the target (the noise is calibrated for the planned
        count, so the training part is within its share whatever the count). A noisy count with
        ``noise_multiplier=`` given (``sigma``, the accounted event's multiplier): the steps
        and the rate depend on the count, so the statement is the worst case over the count's
        public range, with the lattice slack of the longest schedule in that range (``lattice``
        is the lattice noise's ``(scale, coordinates per step)``, or None for no lattice).
        """
        if size.source != "noisy_count":
            return statement, statement.epsilon + size.epsilon, False
        if setup.noise_multiplier is None:
            assert setup.epsilon is not None
            return statement, setup.epsilon, False
        assert size.bounds is not None
        longest = None
        if lattice is not None:
            most = -(-(epochs * size.bounds[1]) // batch_size) * lattice[1]
            longest = (lattice[0], most)
        statement, total = _worst_case_statement(
            sigma, batch_size, epochs, tasks, size, setup.delta, lattice=longest
        )
        return statement, total, True

    # ---- the plan ------------------------------------------------------------------------------
    def _trainer_name(self, setup: FitSetup) -> str:
        """The trainer this fit calls (:attr:`_trainer` unless the family has several)."""
        return self._trainer

    def _fit(self, X: Any, y_internal: np.ndarray | list[np.ndarray], **extra: Any) -> None:
        """Fit one problem (``y_internal`` an array) or several binary problems on the same
        rows (a list: one-vs-rest), planned and accounted together (``setup.extra["tasks"]``,
        the number of problems, is composed by :meth:`_plan`)."""
        tasks = y_internal if isinstance(y_internal, list) else [y_internal]
        target: TargetSpec | None = extra.pop("target", None)
        n, d = X.shape
        backend = _choice(self.backend, "backend", BACKENDS)
        seed = _seed(self.seed)
        as_threads(self.n_threads)
        verbose = as_verbose(self.verbose)
        fit_intercept = _flag(self.fit_intercept, "fit_intercept")
        diagnostics = _flag(self.diagnostics, "diagnostics")
        record_every = None
        if self.record_every is not None:
            record_every = as_index(self.record_every, "record_every", lower=1, upper=1 << 62)
        # rows held by a distributed back-end (privlearn.backends; a dask.array: Dask)
        dist = backend_for(X) if isinstance(X, DistributedRows) else None
        distributed = dist is not None
        if distributed:
            _check_distributed(backend, diagnostics, extra)
        setup = self._setup(d, fit_intercept)
        setup.extra.update(extra, tasks=len(tasks))
        # Regressors: the target bound's share of the budget (0 when declared or not private)
        # comes off the training part (basic composition, stated in privacy_.target).
        target_eps = 0.0
        if target is not None:
            target_eps = target.epsilon(setup.epsilon)
            if target_eps > 0.0 and setup.epsilon is not None:
                setup = dataclasses.replace(setup, epsilon=setup.epsilon - target_eps)
        clip_rows = self._clip_rows(setup.rows)

        # Every input is validated before anything is charged: the row precondition of the
        # proof (or its projection) and a dry plan (public inputs only: a public size is checked
        # against the data, batch_size against it, the schedule's caps; no count is drawn).
        # The one pass of checks over a dense X (issue 32, item 2): its finiteness (left here by
        # _check_fit_data), fused with the row norms where the proof needs a row bound.
        rows = setup.rows
        scaling = setup.scaling if fit_intercept else None
        norms = _check_finite_rows(X, rows.checked)
        if rows.checked and not clip_rows:
            _check_row_norms(X, rows.bound, scaling, rows.reason, norms)
        ledger = self.ledger
        label = f"{type(self).__name__}.fit"
        dry = self._plan(setup, n, d, seed, None, dry=True) if ledger is not None else None
        # A shared budget is charged the PLANNED TOTAL before any row is read: the statement's
        # epsilon and delta are functions of public inputs only (a noisy count enters as its
        # epsilon and the worst case over counts, see _plan), so the dry plan prices the fit
        # exactly. An RDP ledger (spend_events) composes the fit's events where they are public
        # (a public or replace-one size); a plan from a noisy count is charged as (eps, delta).
        charged = None
        if dry is not None and dry.privacy.private:
            charged = (float(dry.privacy.epsilon), float(dry.privacy.delta))
            # the relation the statement holds under goes with the charge (a ledger refuses a
            # spend under another relation than its own, and shows this one by name)
            relation = getattr(dry.privacy, "neighboring", None)
            stmt = dry.privacy.statement
            events_public = dry.privacy.size is None or dry.privacy.size.public
            if (
                hasattr(ledger, "spend_events")
                and charged[1] > 0.0
                and stmt is not None
                and stmt.events
                and events_public
            ):
                lattice = getattr(stmt, "lattice", None)  # noise on a lattice: its slack too
                extra = {} if lattice is None else {"slack": lattice}
                ledger.spend_events(stmt.events, label=label, **extra)
                if target_eps > 0.0:  # the target bound's pure-DP share, its own entry
                    spend(ledger, target_eps, 0.0, f"{label} target bound", relation)
            else:  # one charge: the statement's total, the target bound's share included
                spend(ledger, charged[0] + target_eps, charged[1], label, relation)
        plan = self._plan(setup, n, d, seed, None)
        privacy = plan.privacy
        if charged is not None and charged != (float(privacy.epsilon), float(privacy.delta)):
            raise RuntimeError(  # a bug: the statement must be a function of public inputs
                f"the ledger was charged {charged} but the statement reports "
                f"({privacy.epsilon}, {privacy.delta})"
            )
        check_delta(privacy.delta, privacy.size, f"{type(self).__name__}: ")

        bound = None
        if target is not None:  # the target bound (private draws after the charge), then y'
            bound = target.resolve(
                tasks[0],
                target_eps,
                neighboring=privacy.neighboring,
                seed=seed,
                fit_intercept=fit_intercept,
                size=privacy.size,
            )
            if bound.source != "not_private":  # not private: the plain objective on y
                tasks = [scaled_target(tasks[0], bound)]

        name = self._trainer_name(setup)
        kwargs = self._trainer_kwargs(setup, plan)
        # the core's SGD and dual DP-SCD trainers read a view of the rows (projection factors,
        # intercept column) in place of a copy of X (issue 32, item 2), the softmax trainer too
        # (dense or CSR rows); the diagnostics of SGD and softmax
        # read it block by block (materialised per block); DP-SCD's (objectives computed by the
        # core) and the other trainers get the rows themselves
        view = (
            backend == "core"
            and not distributed
            and (
                name in ("sgd_train", "softmax_sgd_train")
                or (name == "scd_train" and not diagnostics)
            )
            and kwargs.get("variant") != "primal"
        )
        X = _training_rows(X, rows.bound if clip_rows else None, scaling, view=view, norms=norms)

        if not diagnostics:
            record_every = 0
        elif record_every is None:
            record_every = max(1, privacy.steps // PATH_POINTS)
        if dist is not None:  # the same trainers where the rows are (a Dask cluster)
            train = getattr(dist, name)
        elif backend == "core":
            from privlearn.linear import scd, sgd, softmax

            core = (sgd.sgd_train, scd.scd_train, softmax.softmax_sgd_train)
            train = {f.__name__: f for f in core}[name]
        else:
            import privlearn.reference.linear as reference

            train = getattr(reference, name)
        if distributed:
            kwargs["verbose"] = verbose  # a Dask fit shows a progress bar of its steps
        key = Stream(seed).key
        runs, coefs, intercepts = [], [], []
        for k, y_task in enumerate(tasks):
            # problem k > 0 draws from its own streams (1 + 4k, 2 + 4k; the trainers use up to
            # noise_stream + 2); problem 0 uses the defaults, so a binary fit is unchanged
            streams = {} if k == 0 else {"batch_stream": 1 + 4 * k, "noise_stream": 2 + 4 * k}
            run = train(
                X,
                y_task,
                key=key,
                n_threads=self.n_threads,
                record_every=record_every,
                **kwargs,
                **streams,
            )
            if run.n_steps != privacy.steps:  # the accountant must see every step
                raise RuntimeError(
                    f"the trainer ran {run.n_steps} steps but {privacy.steps} were accounted"
                )
            _check_trainer_output(run, X.shape[1], setup.extra.get("n_classes", 2), dist, name)
            w = _finite_coef(run.coef, privacy.private)
            runs.append(run)
            if w.ndim == 2:  # a multinomial model, (d (+ 1), K): one row of coef_ per class
                coefs.append(w[:d].T)
                intercepts.append(w[d] * setup.scaling if fit_intercept else np.zeros(w.shape[1]))
                continue
            coefs.append(w[:d])
            intercepts.append(float(w[d] * setup.scaling) if fit_intercept else 0.0)
        if bound is not None:  # back to the scale of y: y = scale * y' + center
            with np.errstate(over="ignore", invalid="ignore"):  # checked just below
                coefs[0] = coefs[0] * bound.scale
                intercepts[0] = float(intercepts[0] * bound.scale + bound.center)
        # Nothing non-finite is released (issue 30, item 4): the final model, after the
        # rescaling, is checked (a function of the private model alone: post-processing).
        for w_k, b_k in zip(coefs, intercepts):
            _released_finite(w_k, b_k, privacy.private, bound)
        if bound is not None:
            privacy = dataclasses.replace(
                privacy, epsilon=privacy.epsilon + bound.epsilon, target=bound
            )
        if len(tasks) == 1:
            self._set_coef(coefs[0], intercepts[0])
        else:
            self._set_coef(np.vstack(coefs), np.array(intercepts))
        self.n_features_in_ = d
        # the per-row map applied to the training rows, applied again at predict time
        self.row_projection_ = float(rows.bound) if clip_rows else None
        self.privacy_ = privacy
        self.n_steps_ = int(runs[0].n_steps)
        if diagnostics:
            per_task = [self._diagnostics(X, yk, setup, r) for yk, r in zip(tasks, runs)]
            self.diagnostics_ = per_task[0] if len(tasks) == 1 else tuple(per_task)
        elif hasattr(self, "diagnostics_"):
            del self.diagnostics_


#: Memory of the row blocks :func:`objective_path` works in, as a fraction of X's own bytes
#: (the margins of a block and the loss's temporaries, about six arrays of its size).
DIAGNOSTICS_MEMORY_FRACTION = 0.25
#: Fewest rows of a block (so that a tiny X is not evaluated row by row).
DIAGNOSTICS_MIN_ROWS = 256


def _rows_per_block(X: Any, width: int) -> int:
    """Rows per block such that ``rows x width`` doubles, six times over, stay within
    :data:`DIAGNOSTICS_MEMORY_FRACTION` of X's bytes (at least :data:`DIAGNOSTICS_MIN_ROWS`)."""
    if hasattr(X, "data") and hasattr(X, "indices"):  # CSR: its stored arrays
        nbytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    elif isinstance(X, RowView):  # the rows it stands for, not materialised here
        nbytes = X.nbytes
    else:
        nbytes = np.asarray(X).nbytes
    rows = int(DIAGNOSTICS_MEMORY_FRACTION * nbytes) // (6 * 8 * max(1, width))
    return max(DIAGNOSTICS_MIN_ROWS, rows)


def objective_path(
    X: Any, y: np.ndarray, path: np.ndarray, loss: str, alpha: float, n_classes: int = 0
) -> np.ndarray:
    """The training objective ``(alpha/2)||w||^2 + mean_i loss(x_i^T w, y_i)`` at each
    recorded iterate (a row of ``path``), streamed over blocks of rows (issue 30, item 6): the
    margins of all iterates at once were an ``(n, k)`` array, about 24 times X for 150 points;
    a block's margins and the loss's temporaries stay within a quarter of X's bytes.
    ``n_classes > 2``: the softmax objective (labels in ``[0, K)``, ``path`` rows of ``d K``)."""
    from scipy.special import logsumexp

    from privlearn._losses import loss_value

    n, d = X.shape
    path = np.asarray(path, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if n_classes > 2:
        W = path.reshape(-1, d, n_classes)
        total = np.zeros(W.shape[0])
        rows = _rows_per_block(X, n_classes)
        labels = y.astype(np.int64)
        for a in range(0, n, rows):
            Xb, yb = X[a : a + rows], labels[a : a + rows]
            for i, Wi in enumerate(W):
                Z = np.asarray(Xb @ Wi)
                total[i] += float(np.sum(logsumexp(Z, axis=1) - Z[np.arange(Z.shape[0]), yb]))
        return 0.5 * alpha * np.einsum("kij,kij->k", W, W) + total / n
    W = np.atleast_2d(path)
    total = np.zeros(W.shape[0])
    rows = _rows_per_block(X, W.shape[0])
    for a in range(0, n, rows):
        Z = np.asarray(X[a : a + rows] @ W.T)  # (rows, k)
        total += loss_value(loss, Z, y[a : a + rows, None]).sum(axis=0)
    return 0.5 * alpha * np.einsum("ij,ij->i", W, W) + total / n


def _check_trainer_output(run: Any, columns: int, classes: int, dist: Any, name: str) -> None:
    """The back-end contract on a trainer's result (:mod:`privlearn.backends`): ``coef`` has
    one entry per column of the training rows (the intercept column included), or a
    ``(columns, K)`` matrix for the multinomial model. A back-end that breaks it gets a
    ValueError naming the contract (instead of an IndexError deep in the release); only
    shapes, public, are quoted."""
    coef = getattr(run, "coef", None)
    shape = None if coef is None else np.shape(coef)
    expected = (columns, classes) if classes > 2 else (columns,)
    if shape == expected:
        return
    who = f"the back-end {type(dist).__name__!r}" if dist is not None else "the trainer"
    raise ValueError(
        f"{who} broke the back-end contract: {name} must return a run whose coef has shape "
        f"{expected} (one entry per column of the training rows, the intercept column "
        f"included), got {'no coef' if shape is None else f'shape {shape}'}; see "
        "privlearn.backends (DistributedBackend) for what a back-end's trainers return"
    )


def _released_finite(coef: np.ndarray, intercept: Any, private: bool, bound: Any) -> None:
    """Refuse (ValueError) a model whose ``coef_`` or ``intercept_`` is not finite, after every
    step of the release (the intercept column's scaling, the target's rescaling): nothing
    non-finite is ever released. The check reads the model only (post-processing of what the
    guarantee covers) and quotes public parameters only."""
    if np.isfinite(coef).all() and np.isfinite(np.asarray(intercept, dtype=np.float64)).all():
        return
    if bound is not None and bound.scale != 1.0:
        why = (
            f"the model mapped back to the target's scale (times {bound.scale:g}, from the "
            "target bound) overflows float64; declare a narrower target_bounds (or "
            "target_range), or lower clip or eta0"
        )
    else:
        why = (
            "the model overflows float64 once the intercept column's scaling is applied; lower "
            "intercept_scaling, clip or eta0"
        )
    lead = "a private fit" if private else "the fit"
    raise ValueError(f"{lead} produced non-finite coefficients: {why}; nothing is released")


def _check_distributed(backend: str, diagnostics: bool, extra: dict[str, Any]) -> None:
    """What a fit on a distributed back-end's rows (a ``dask.array``: :mod:`privlearn.backends`)
    cannot do, refused before
    anything is charged or read."""
    if backend != "core":
        raise ValueError("a fit on a dask array runs the C++ core: backend must be 'core'")
    if diagnostics:
        raise ValueError(
            "diagnostics=True is not available for a fit on a dask array (the diagnostics are "
            "computed on the raw rows, on one machine)"
        )
