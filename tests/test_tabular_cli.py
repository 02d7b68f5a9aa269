"""``privlearn fit`` and ``privlearn predict`` (issue 31, item 3)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from test_tabular import REG_SCHEMA, SCHEMA, make_table

from privlearn.cli import main
from privlearn.tabular import Schema


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    table = make_table(2000, seed=1)
    train, test = table.iloc[:1500], table.iloc[1500:]
    train.drop(columns="bmi").to_csv(root / "train.csv", index=False)
    test.drop(columns="bmi").to_csv(root / "test.csv", index=False)
    train.drop(columns=["y", "site"]).to_csv(root / "train_reg.csv", index=False)
    test.drop(columns=["y", "site"]).to_csv(root / "test_reg.csv", index=False)
    Schema.from_dict(SCHEMA).save(root / "schema.json")
    Schema.from_dict(REG_SCHEMA).save(root / "schema_reg.toml")
    return root


def test_fit_writes_the_folder_and_predict_reads_it(files, capsys):
    out = files / "model"
    rc = main(
        ["fit", str(files / "train.csv"), "--schema", str(files / "schema.json"),
         "--epsilon", "1", "--seed", "0", "--test", str(files / "test.csv"),
         "--out", str(out), "--no-progress"]
    )  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    names = {p.name for p in out.iterdir()}
    assert {
        "model.joblib", "schema.json", "statement.txt", "statement.json", "report.md",
        "budget.png", "weights.png", "roc.png", "calibration.png", "metrics.json",
    } <= names  # fmt: skip
    statement = json.loads((out / "statement.json").read_text())
    assert statement["epsilon"] <= 1.0 and len(statement["releases"]) == 3
    assert "(1, 1e-06)-DP" in (out / "statement.txt").read_text()
    report = (out / "report.md").read_text()
    assert "![Budget split](budget.png)" in report and "roc_auc" in report
    assert (out / "budget.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    metrics = json.loads((out / "metrics.json").read_text())
    assert 0.5 < metrics["roc_auc"] <= 1.0
    # no temporary folder is left beside it
    assert not [p for p in files.iterdir() if p.name.startswith(".model.tmp")]

    pred = files / "pred.csv"
    assert main(["predict", str(out), str(files / "test.csv"), "--out", str(pred)]) == 0
    frame = pd.read_csv(pred)
    assert list(frame.columns) == ["prediction", "proba_0", "proba_1"]
    assert len(frame) == 500
    np.testing.assert_allclose(frame["proba_0"] + frame["proba_1"], 1.0)


def test_fit_regression_from_toml(files, capsys):
    out = files / "reg"
    rc = main(
        ["fit", str(files / "train_reg.csv"), "--schema", str(files / "schema_reg.toml"),
         "--epsilon", "3", "--seed", "0", "--test", str(files / "test_reg.csv"),
         "--out", str(out), "--no-progress"]
    )  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    assert (out / "residuals.png").is_file()
    assert json.loads((out / "metrics.json").read_text())["r2"] > 0.3
    pred = files / "reg.csv"
    assert main(["predict", str(out), str(files / "test_reg.csv"), "--out", str(pred)]) == 0
    assert list(pd.read_csv(pred).columns) == ["prediction"]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda t: t.drop(columns="sex"), "'sex'"),
        (lambda t: t.assign(extra=1), "'extra'"),
        (lambda t: t.drop(columns="y"), "'y', the schema's target"),
    ],
)
def test_bad_input_clear_error_and_nothing_written(files, capsys, change, needle):
    bad = files / "bad.csv"
    change(pd.read_csv(files / "train.csv")).to_csv(bad, index=False)
    out = files / "never"
    rc = main(
        ["fit", str(bad), "--schema", str(files / "schema.json"), "--epsilon", "1",
         "--out", str(out), "--no-progress"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and "nothing was written" in err
    assert not out.exists()
    assert not [p for p in files.iterdir() if p.name.startswith(".never.tmp")]


def test_bad_arguments(files, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(files / "train.csv"), "--schema", "s.json", "--epsilon", "-1",
              "--out", str(files / "x")])  # fmt: skip
    assert exc.value.code == 2
    rc = main(
        ["fit", str(files / "nope.csv"), "--schema", str(files / "schema.json"),
         "--epsilon", "1", "--out", str(files / "x"), "--no-progress"]
    )  # fmt: skip
    assert rc == 2 and "not found" in capsys.readouterr().err
    rc = main(["predict", str(files), str(files / "test.csv"), "--out", str(files / "p.csv")])
    assert rc == 2 and "model.joblib" in capsys.readouterr().err
