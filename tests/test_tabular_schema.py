"""privlearn.tabular.Schema: the public description of a table (issue 31, item 1)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from privlearn.exceptions import PrivacyLeakWarning
from privlearn.tabular import Schema, SchemaError, adult_schema, budget_split, draft_schema

# the issue's format, exactly as written there (comments removed)
ISSUE_SCHEMA = {
    "columns": {
        "age": {"type": "numeric", "range": [0, 120]},
        "sex": {"type": "categorical", "levels": ["F", "M"]},
        "smoker": {"type": "binary"},
        "id": {"type": "ignore"},
    },
    "target": {"name": "y", "classes": [0, 1]},
}


def test_issue_format_reads_as_written():
    s = Schema.from_dict(ISSUE_SCHEMA)
    assert s.names == ("age", "sex", "smoker", "id")
    assert s.feature_names == ("age", "sex", "smoker")
    assert s["age"].range == (0.0, 120.0) and s["age"].bounds == "private"
    assert s["sex"].levels == ("F", "M") and not s["sex"].impact
    assert s["smoker"].levels == (0, 1)
    assert s.target.task == "classification" and s.target.classes == (0, 1)
    reg = Schema.from_dict({**ISSUE_SCHEMA, "target": {"name": "y", "range": [10, 60]}})
    assert reg.target.task == "regression" and reg.target.range == (10.0, 60.0)


def test_round_trip_dict_json_toml(tmp_path):
    s = adult_schema()
    assert Schema.from_dict(s.to_dict()) == s
    for suffix in (".json", ".toml"):
        path = tmp_path / f"schema{suffix}"
        s.save(path)
        assert Schema.load(path) == s
    # the issue's dict through a JSON file
    path = tmp_path / "issue.json"
    path.write_text(json.dumps(ISSUE_SCHEMA))
    assert Schema.load(path) == Schema.from_dict(ISSUE_SCHEMA)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda d: d["columns"]["age"].update(rnage=[0, 1]), "'rnage'"),
        (lambda d: d["columns"]["age"].update(type="numerc"), "'numerc'"),
        (lambda d: d["columns"]["age"].pop("range"), "'range'"),
        (lambda d: d["columns"]["age"].update(range=[5, 5]), "lo < hi"),
        (lambda d: d["columns"]["age"].update(range=[0, float("inf")]), "finite"),
        (lambda d: d["columns"]["age"].update(bounds="exact"), "bounds='exact'"),
        (lambda d: d["columns"]["sex"].pop("levels"), "'levels'"),
        (lambda d: d["columns"]["sex"].update(levels=["F", "F"]), "same level"),
        (lambda d: d["columns"]["smoker"].update(levels=["a", "b", "c"]), "exactly 2"),
        (lambda d: d["target"].update(range=[0, 1]), "exactly one of"),
        (lambda d: d["target"].pop("classes"), "exactly one of"),
        (lambda d: d["target"].update(classes=[1]), "at least two"),
        (lambda d: d.update(colums={}), "'colums'"),
        (lambda d: d["columns"].update(y={"type": "binary"}), "also listed"),
    ],
)
def test_bad_schema_names_the_problem(change, needle):
    d = json.loads(json.dumps(ISSUE_SCHEMA))
    change(d)
    with pytest.raises(SchemaError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        Schema.from_dict(d)


def test_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        Schema.load(tmp_path / "nope.json")
    (tmp_path / "s.yaml").write_text("{}")
    with pytest.raises(SchemaError, match=r"\.json or \.toml"):
        Schema.load(tmp_path / "s.yaml")
    (tmp_path / "s.json").write_text("{not json")
    with pytest.raises(SchemaError, match="not valid JSON"):
        Schema.load(tmp_path / "s.json")


def test_levels_match_across_types():
    from privlearn.tabular.schema import level_key

    assert level_key(1) == level_key(1.0) == level_key("1") == level_key(" 1.0 ")
    assert level_key(" F ") == "F"
    assert level_key(np.nan) is None and level_key("") is None and level_key(None) is None


def test_draft_schema_says_it_read_the_data():
    frame = pd.DataFrame({"a": [1.0, 5.0, 3.0], "b": ["x", "y", "x"], "y": [0, 1, 0]})
    with pytest.warns(PrivacyLeakWarning, match="READ THE PRIVATE DATA"):
        s = draft_schema(frame, "y")
    assert s.source == "data"
    assert s["a"].range == (1.0, 5.0) and s["b"].levels == ("x", "y")
    assert Schema.from_dict(s.to_dict()).source == "data"


def test_budget_rule_public_quantities_only():
    s = adult_schema()
    shares = budget_split(s)
    assert shares == budget_split(s, epsilon=3.0)  # the rule does not read data or epsilon
    assert shares["bounds"] == pytest.approx(0.04)  # two private-bound columns
    assert shares["codes"] == pytest.approx(0.05)  # one impact-coded column
    assert sum(shares.values()) == pytest.approx(1.0)
    six = Schema.from_dict(
        {
            "columns": {f"x{j}": {"type": "numeric", "range": [0, 100]} for j in range(6)},
            "target": {"name": "y", "classes": [0, 1]},
        }
    )
    assert budget_split(six)["bounds"] == pytest.approx(0.12)
    assert budget_split(six)["codes"] == 0.0
    # a declared large public size shrinks the preprocessing shares
    assert budget_split(six, n_samples=40_000)["bounds"] == pytest.approx(0.06)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        budget_split(six.to_dict())
