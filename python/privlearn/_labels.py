"""The label set of a private classifier or encoder: declared public, or read from ``y``.

``classes_``, the number of classes ``K``, the shape of ``coef_`` (and, one-vs-rest, the number
of composed problems, hence the noise) and an encoder's ``classes_`` are exact functions of the
label set. A privacy guarantee covers them only when the set is a public input, fixed without
looking at the private labels: declared with ``classes=`` (scikit-learn's
``partial_fit(classes=...)`` convention). A label set read from ``y`` is not protected (one row
with a unique label is in ``classes_`` with probability 1 on one data set and 0 on its
neighbour), so it is treated as public and stated as such: a
:class:`~privlearn.exceptions.PrivacyLeakWarning` at ``fit`` and a line in the statement
(:class:`LabelSet`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import check_classification_targets

from privlearn.exceptions import PrivacyLeakWarning

__all__ = [
    "LabelSet",
    "check_classification_target",
    "declared_classes",
    "label_codes",
    "label_set",
    "private_target",
    "warn_labels_read",
]

#: Integral floats below this magnitude convert to int64 exactly (scikit-learn's test for a
#: continuous target compares ``y`` with ``y.astype(int)``).
_EXACT_INT = 2.0**53


def check_classification_target(y: Any) -> None:
    """scikit-learn's :func:`~sklearn.utils.multiclass.check_classification_targets`, without
    its cost where its answer is known: a non-empty 1-D array of integers or booleans, or of
    floats that are all integral and below ``2**53`` in magnitude, is a binary or multiclass
    target, which it accepts (it would sort all of ``y`` to tell the two apart: ~0.3 ms of a
    small fit, tens of ms at 1e6 labels; issue 32, item 2). Everything else, including every
    input it refuses, goes to scikit-learn, so the errors are its own."""
    if isinstance(y, np.ndarray) and y.ndim == 1 and y.size > 0:
        kind = y.dtype.kind
        if kind in "biu":
            return
        if kind == "f":
            with np.errstate(invalid="ignore"):
                if bool(np.all(np.abs(y) < _EXACT_INT)) and bool(np.all(y == np.trunc(y))):
                    return
    check_classification_targets(y)


#: Labels shown in a statement or message (the rest are counted).
_SHOWN = 20


def _show(values: Any, limit: int = _SHOWN) -> str:
    items = list(np.asarray(values, dtype=object).tolist())
    text = ", ".join(repr(v) for v in items[:limit])
    if len(items) > limit:
        text += f", ... ({len(items)} labels)"
    return "{" + text + "}"


@dataclass(frozen=True)
class LabelSet:
    """How the label set (and, for an encoder, the target type) entered a fit.

    Attributes
    ----------
    classes : tuple or None
        The labels (``classes_``, sorted); None for a continuous outcome.
    declared : bool
        Whether ``classes`` was declared with ``classes=`` (a public input). False: read from
        the private ``y``, not covered by the guarantee and treated as public.
    target_type : str or None
        Encoders: the target type of the fit.
    target_type_declared : bool
        Encoders: False when ``target_type="auto"`` inferred it from ``y`` (not protected).
    """

    classes: tuple[Any, ...] | None
    declared: bool
    target_type: str | None = None
    target_type_declared: bool = True

    @property
    def read_from_y(self) -> bool:
        """Whether anything here was read from the private labels (outside the guarantee)."""
        return (self.classes is not None and not self.declared) or not self.target_type_declared

    def public_inputs(self) -> list[str]:
        """The statement's words for these public inputs."""
        out = []
        if not self.target_type_declared:
            out.append(
                f"the target type {self.target_type!r} (read from y: not protected; pass "
                "target_type= to declare it)"
            )
        if self.classes is not None:
            shown = _show(self.classes)
            if self.declared:
                out.append(f"the label set {shown} (declared with classes=)")
            else:
                out.append(
                    f"the label set {shown} (read from y: not protected; pass classes= to "
                    "declare it)"
                )
        return out

    def statement_line(self) -> str:
        """One indented line for a printed privacy statement (empty when nothing to say)."""
        items = self.public_inputs()
        return "  public label inputs: " + "; ".join(items) if items else ""


def declared_classes(
    classes: Any, *, what: str = "classes", classification: bool = True
) -> np.ndarray | None:
    """The declared label set as np.unique would sort it (``None`` stays ``None``).

    ``classification``: also scikit-learn's check that the labels are class labels
    (:func:`~sklearn.utils.multiclass.check_classification_targets`: no non-integral floats).

    Raises
    ------
    ValueError
        When ``classes`` is not a 1-D array-like of at least two distinct, sortable, non-missing
        labels.
    """
    if classes is None:
        return None
    if isinstance(classes, (str, bytes)) or np.isscalar(classes):
        raise ValueError(
            f"{what} must be an array-like of at least 2 distinct labels (the public label "
            f"set), got {classes!r}"
        )
    arr = np.asarray(classes)
    if arr.dtype.kind in "US" and arr.ndim == 1:  # numpy turns [0, "a"] into ["0", "a"]
        items = list(classes)
        if not all(isinstance(v, (str, bytes)) for v in items):
            arr = np.asarray(items, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D (a list of labels), got shape {arr.shape}")
    if arr.size and np.asarray(pd.isna(arr)).any():
        raise ValueError(f"{what} holds a missing value (NaN/None); labels must be defined")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{what} holds an infinite value")
    if arr.dtype.kind == "c":
        raise ValueError(f"{what}: complex labels are not supported")
    try:
        unique = np.unique(arr)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in arr.tolist()})
        raise ValueError(
            f"{what} mixes labels of types {', '.join(kinds)} that cannot be sorted; use labels "
            "of one type"
        ) from None
    if unique.size != arr.size:
        raise ValueError(f"{what} has repeated labels: {_show(arr)}")
    if unique.size < 2:
        raise ValueError(f"{what} must hold at least 2 distinct labels, got {_show(arr)}")
    if classification:
        check_classification_target(unique)
    return unique


def label_set(classes: np.ndarray, declared: np.ndarray | None) -> LabelSet:
    """The :class:`LabelSet` of a classifier's fit (``declared``: the checked ``classes=``)."""
    return LabelSet(tuple(np.asarray(classes, dtype=object).tolist()), declared is not None)


def private_target(epsilon: Any) -> bool:
    """Whether a fit with this ``epsilon`` parameter adds noise (``None``: a noise multiplier;
    anything unparsable is refused later, by the parameter checks)."""
    try:
        return epsilon is None or not math.isinf(float(epsilon))
    except (TypeError, ValueError):
        return True


def label_codes(y: np.ndarray, classes: np.ndarray, *, what: str = "classes") -> np.ndarray:
    """The index of each label of ``y`` in the declared (sorted) ``classes`` (int64).

    Every label must belong to the declared set (an input precondition, checked before anything
    is charged).

    Raises
    ------
    ValueError
        When a label of ``y`` lies outside ``classes`` (quoting the declared, public set only:
        never the foreign labels or their count, values of the private ``y``).
    """
    codes = np.asarray(pd.Index(classes).get_indexer(np.asarray(y).ravel()), dtype=np.int64)
    bad = codes < 0
    if bad.any():
        raise ValueError(
            f"y holds a label outside the declared {what}={_show(classes)}: {what} is a public "
            "input and every label of y must belong to it (the foreign labels and the number of "
            "their rows are not quoted: they are private data)"
        )
    return codes


def warn_labels_read(owner: str, labels: LabelSet, stacklevel: int = 3) -> None:
    """The :class:`~privlearn.exceptions.PrivacyLeakWarning` of a private fit whose label set
    (or target type) was read from ``y``."""
    if not labels.read_from_y:
        return
    # what was read and the parameters that declare it: only those the owner takes (an
    # encoder's target_type=, a classifier's classes=); no label is quoted (issue 30, item 5)
    read, fix = [], []
    if not labels.target_type_declared:
        read.append("the target type")
        fix.append("target_type=")
    if labels.classes is not None and not labels.declared:
        read.append("the label set")
        fix.append("classes=")
    warnings.warn(
        f"{owner} read {' and '.join(read)} from the private labels y: released exactly "
        "(classes_, the number of classes and the shape of the model depend on it), NOT "
        "covered by the privacy guarantee and treated as a PUBLIC input (stated in privacy_). "
        f"Declare {'it' if len(read) == 1 else 'them'} with {' and '.join(fix)} to make "
        f"{'it' if len(read) == 1 else 'them'} public by choice",
        PrivacyLeakWarning,
        stacklevel=stacklevel,
    )


#: The ``classes`` parameter of the private classifiers' docstrings (one text for all).
CLASSES_PARAM_DOC = """    classes : array-like of shape (n_classes,) or None, default=None
        The label set, declared PUBLIC (scikit-learn's ``partial_fit(classes=...)``
        convention): ``classes_`` (sorted as by ``np.unique``), the number of classes and the
        shape of ``coef_`` come from it, never from ``y``. Every label of ``y`` must belong to
        it (a label outside raises ValueError naming it, before any budget is charged: an input
        precondition, like the row norms); a declared class absent from ``y`` is fine (it still
        gets its model). ``None``: the label set is read from ``y``. That is outside the
        guarantee (one row with a unique label adds it to ``classes_`` with certainty), so a
        private fit then emits a :class:`~privlearn.exceptions.PrivacyLeakWarning` and
        ``privacy_`` lists the label set as a public input read from ``y``."""
