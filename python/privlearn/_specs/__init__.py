"""The validated run specifications of the trainers: one module per trainer.

What belongs here: for each trainer function (``sgd_train``, ``softmax_sgd_train``,
``scd_train``, ``quadgrad_train``) its defaults, the frozen ``*Spec`` of its validated
arguments (with the core's bounds and error messages) and the ``prepare_*`` function that checks
the data and builds it, its step count, its result record (``*Run``) and the core's error for a
non-finite iterate. The C++ core wrappers (:mod:`privlearn.linear`), their numpy twins
(:mod:`privlearn.reference`) and the Dask driver (:mod:`privlearn.distributed`) validate through
the same spec, so all three accept and refuse the same inputs. Pure numpy: never imports
``privlearn._core`` nor the estimators. Not here: losses and objectives
(:mod:`privlearn._losses`), the design-matrix checks (:mod:`privlearn._design_matrix`), the
estimators' own parameter checks (:mod:`privlearn.linear`).

Modules: :mod:`~privlearn._specs.arguments` (what every spec shares), :mod:`~privlearn._specs.sgd`,
:mod:`~privlearn._specs.softmax`, :mod:`~privlearn._specs.scd`, :mod:`~privlearn._specs.quadgrad`
and :mod:`~privlearn._specs.quadgrad_schedules` (the step-factor schedules of the
quadratic-gradient optimizers).
"""
