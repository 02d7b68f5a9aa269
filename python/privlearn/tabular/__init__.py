"""The practitioner's layer: from a raw table and a PUBLIC schema to a defended model in one
call.

- :class:`Schema`: the public description of a table (JSON or TOML), written from a codebook;
- :class:`PrivateTabularClassifier`, :class:`PrivateTabularRegressor`: one pipeline of
  privlearn's estimators (private bounds, impact codes, unit-ball rows, DP-SGD or DP-SCD)
  under ONE budget, with one statement (``privacy_``) of every release;
- :func:`budget_split`: the documented rule that splits the total epsilon;
- :func:`adult_schema`: the public schema of the UCI Adult table (from ``adult.names``).

Nothing here draws noise: every release is made by an estimator of :mod:`privlearn.linear`,
:mod:`privlearn.encoding` or :mod:`privlearn.preprocessing`.
"""

from __future__ import annotations

from typing import Any

from privlearn.tabular._statement import Release, TabularPrivacy
from privlearn.tabular.estimators import (
    PrivateTabularClassifier,
    PrivateTabularRegressor,
    budget_split,
)
from privlearn.tabular.schema import (
    ONEHOT_MAX_LEVELS,
    ColumnSpec,
    Schema,
    SchemaError,
    TargetSpec,
    draft_schema,
)

__all__ = [
    "ONEHOT_MAX_LEVELS",
    "ColumnSpec",
    "PrivateTabularClassifier",
    "PrivateTabularRegressor",
    "Release",
    "Schema",
    "SchemaError",
    "TabularPrivacy",
    "TargetSpec",
    "adult_schema",
    "budget_split",
    "draft_schema",
]


def adult_schema() -> Schema:
    """The public schema of UCI Adult (:func:`privlearn.data.load_adult_frame`), from
    ``adult.names`` and public knowledge: ``age`` in [0, 120] and ``hours-per-week`` in
    [0, 168] get private bounds; ``education-num`` has the exact public range 1-16; the
    capital amounts get the public log map over [0, 99,999]; ``fnlwgt`` (a sampling weight,
    not a property of the person) and ``education`` (the same as ``education-num``) are
    ignored; the categoricals have the level lists of ``adult.names`` (``native-country``, 41
    levels, is impact coded); the target ``income`` is 0/1."""
    from privlearn.data import ADULT_CATEGORIES

    cols: dict[str, Any] = {
        "age": {"type": "numeric", "range": [0, 120]},
        "workclass": {"type": "categorical", "levels": list(ADULT_CATEGORIES["workclass"])},
        "fnlwgt": {"type": "ignore"},
        "education": {"type": "ignore"},
        "education-num": {"type": "numeric", "range": [1, 16], "bounds": "public"},
    }
    for name in ("marital-status", "occupation", "relationship", "race", "sex"):
        cols[name] = {"type": "categorical", "levels": list(ADULT_CATEGORIES[name])}
    for name in ("capital-gain", "capital-loss"):
        cols[name] = {
            "type": "numeric", "range": [0, 99_999], "transform": "log", "bounds": "public"
        }  # fmt: skip
    cols["hours-per-week"] = {"type": "numeric", "range": [0, 168]}
    cols["native-country"] = {
        "type": "categorical", "levels": list(ADULT_CATEGORIES["native-country"])
    }  # fmt: skip
    return Schema.from_dict({"columns": cols, "target": {"name": "income", "classes": [0, 1]}})
