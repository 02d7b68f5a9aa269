"""The label set is a public input (issue 19, item 2): declared with ``classes=``, or read from
``y`` and then stated as such (a PrivacyLeakWarning and a line in ``privacy_``); plus the
label-related bad inputs (foreign labels refused before any charge, a failed ImpactEncoder refit
leaving the encoder as it was, subnormal smoothing, one-vs-rest probabilities that underflow).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privlearn._labels import LabelSet, declared_classes, label_codes
from privlearn.accounting import PrivacyLedger
from privlearn.encoding import ImpactEncoder
from privlearn.exceptions import BudgetExceededError, PrivacyLeakWarning
from privlearn.linear import DPSCDClassifier, DPSGDClassifier

CLASSIFIERS = {
    "sgd": lambda **kw: DPSGDClassifier(batch_size=50, epochs=1, **kw),
    "scd": lambda **kw: DPSCDClassifier(batch_size=50, epochs=1, **kw),
}


def _rows(n: int = 200, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).normal(size=(n, 3))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _labels(X: np.ndarray, k: int) -> np.ndarray:
    return np.digitize(X[:, 0], np.linspace(-1, 1, k + 1)[1:-1])


def _no_leak_warning(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        return fit()


# ---- the helpers --------------------------------------------------------------------------
def test_declared_classes_sorted_and_checked():
    assert declared_classes(None) is None
    assert declared_classes(["b", "a", "c"]).tolist() == ["a", "b", "c"]
    assert declared_classes((2, 0, 1)).tolist() == [0, 1, 2]
    for bad, match in [
        (1, "array-like"),
        ("ab", "array-like"),
        ([1], "at least 2"),
        ([0, 1, 1], "repeated"),
        ([[0, 1]], "1-D"),
        ([0.0, np.nan], "missing"),
        ([0, "a"], "cannot be sorted"),
        ([0.5, 1.5], "Unknown label type"),
    ]:
        with pytest.raises(ValueError, match=match):
            declared_classes(bad)


def test_label_codes_name_the_foreign_label():
    assert label_codes(np.array(["b", "a", "b"]), np.array(["a", "b"])).tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match=r"a label outside the declared classes=\{'a', 'b'\}"):
        label_codes(np.array(["a", "z", "z"]), np.array(["a", "b"]))


def test_label_set_statement_line():
    read = LabelSet((0, 1), False)
    assert read.read_from_y
    assert "the label set {0, 1} (read from y: not protected" in read.statement_line()
    declared = LabelSet(("a", "b"), True)
    assert not declared.read_from_y
    assert "{'a', 'b'} (declared with classes=)" in declared.statement_line()
    auto = LabelSet((0, 1, 2), True, "multiclass", False)
    assert auto.read_from_y and "the target type 'multiclass' (read from y" in auto.statement_line()
    assert LabelSet(None, False, "continuous", True).statement_line() == ""


# ---- linear classifiers -------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_declared_classes_fix_the_released_shape(name):
    """classes_ and coef_'s shape come from the declaration: the same whether or not y holds
    every declared class (a class absent from y still gets its model)."""
    X = _rows()
    y2 = _labels(X, 2)  # {0, 1}
    y3 = np.where(np.arange(len(y2)) == 0, 2, y2)  # one row with a unique label 2
    shapes = []
    for y in (y2, y3):
        clf = CLASSIFIERS[name](classes=[2, 0, 1], seed=0)
        _no_leak_warning(lambda clf=clf, y=y: clf.fit(X, y))
        assert clf.classes_.tolist() == [0, 1, 2]
        shapes.append((clf.coef_.shape, clf.intercept_.shape, clf.predict_proba(X).shape))
        assert "declared with classes=" in str(clf.privacy_)
        assert clf.privacy_.labels == LabelSet((0, 1, 2), True)
        assert set(clf.predict(X)) <= {0, 1, 2}
    assert shapes[0] == shapes[1] == ((3, 3), (3,), (len(X), 3))


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_binary_declared_with_one_class_present_trains(name):
    X = _rows()
    clf = CLASSIFIERS[name](classes=["no", "yes"], seed=0).fit(X, np.full(len(X), "no"))
    assert clf.classes_.tolist() == ["no", "yes"] and clf.coef_.shape == (1, 3)
    assert np.isfinite(clf.coef_).all()


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_labels_read_from_y_warn_and_are_stated(name):
    X = _rows()
    with pytest.warns(PrivacyLeakWarning, match=r"read the label set from the priv"):
        clf = CLASSIFIERS[name](seed=0).fit(X, _labels(X, 3))
    text = str(clf.privacy_)
    assert "the label set {0, 1, 2} (read from y: not protected; pass classes=" in text
    assert clf.privacy_.labels == LabelSet((0, 1, 2), False)
    # a non-private fit has no guarantee to stay outside of: no warning
    _no_leak_warning(lambda: CLASSIFIERS[name](epsilon=float("inf"), seed=0).fit(X, _labels(X, 3)))


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_foreign_label_refused_before_any_charge(name):
    X = _rows()
    y = _labels(X, 3)
    ledger = PrivacyLedger(10.0, 0.5)
    clf = CLASSIFIERS[name](classes=[0, 1], ledger=ledger, seed=0)
    with pytest.raises(ValueError, match=r"a label outside the declared classes=\{0, 1\}"):
        clf.fit(X, y)
    assert ledger.spent.epsilon == 0.0
    assert not hasattr(clf, "classes_")
    with pytest.raises(ValueError, match="repeated"):
        CLASSIFIERS[name](classes=[0, 1, 1], ledger=ledger).fit(X, y)
    assert ledger.spent.epsilon == 0.0


def test_binary_only_mechanism_refuses_three_declared_classes():
    X = _rows()
    ledger = PrivacyLedger(10.0, 0.5)
    clf = DPSGDClassifier(mechanism="l2-laplace", classes=[0, 1, 2], ledger=ledger)
    with pytest.raises(ValueError, match="more than 2 classes need the multinomial model"):
        clf.fit(X, _labels(X, 2))
    assert ledger.spent.epsilon == 0.0


def test_one_vs_rest_tasks_follow_the_declared_classes():
    """The number of one-vs-rest problems (hence the noise) is K of the declaration."""
    X = _rows()
    clf = DPSCDClassifier(batch_size=50, epochs=1, classes=[0, 1, 2, 3], seed=0)
    clf.fit(X, _labels(X, 2))
    assert clf.privacy_.tasks == 4 and clf.coef_.shape == (4, 3)


def test_one_vs_rest_predict_proba_is_finite_when_every_score_underflows():
    X = _rows(20)
    clf = DPSCDClassifier(batch_size=10, epochs=1, classes=[0, 1, 2], seed=0).fit(X, _labels(X, 3))
    old_coef = clf.coef_.copy()
    moderate = clf.predict_proba(X)
    scores = clf.decision_function(X)
    p = 1.0 / (1.0 + np.exp(-scores))
    np.testing.assert_allclose(moderate, p / p.sum(axis=1, keepdims=True), rtol=1e-12)
    clf.intercept_ = np.array([-2000.0, -1000.0, -3000.0])  # every sigma(score) is 0.0
    proba = clf.predict_proba(X)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:, 1], 1.0)  # the largest score takes the mass
    clf.coef_, clf.intercept_ = old_coef, np.array([-1000.0, -1000.0, -1000.0])
    tied = clf.predict_proba(X)  # equal intercepts: ordered as the (finite) coefficient part
    assert np.isfinite(tied).all() and np.allclose(tied.sum(axis=1), 1.0)


# ---- ImpactEncoder ------------------------------------------------------------------------
def _cat(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.choice(list("abcd"), size=(n, 2)).astype(object), rng.integers(0, 3, n)


CATS = [list("abcd")] * 2


def test_encoder_declared_classes_fix_the_code_columns():
    X, y = _cat()
    y2 = np.minimum(y, 1)
    for target in (y, y2):  # class 2 absent from y2: still its code columns
        enc = ImpactEncoder(
            mode="laplace", epsilon=1.0, categories=CATS, target_type="auto", classes=[0, 1, 2]
        )
        _no_leak_warning(lambda enc=enc, target=target: enc.fit(X, target))
        assert enc.target_type_ == "multiclass" and enc.classes_.tolist() == [0, 1, 2]
        assert enc.transform(X).shape == (len(X), 6)
        assert np.isfinite(enc.transform(X)).all()
        assert list(enc.get_feature_names_out())[:3] == ["x0_0", "x0_1", "x0_2"]
        assert "declared with classes=" in str(enc.privacy_)
    enc = ImpactEncoder(mode="naive", classes=["n", "y"]).fit(X, np.full(len(X), "n"))
    assert enc.classes_.tolist() == ["n", "y"] and (enc.transform(X) == 0.0).all()


def test_encoder_labels_read_from_y_warn_and_are_stated():
    X, y = _cat()
    read = "the target type and the label set .*target_type= and classes="
    with pytest.warns(PrivacyLeakWarning, match=read):
        enc = ImpactEncoder(mode="laplace", epsilon=1.0, categories=CATS, target_type="auto")
        enc.fit(X, y)
    text = str(enc.privacy_)
    assert "the target type 'multiclass' (read from y: not protected" in text
    assert "the label set {0, 1, 2} (read from y: not protected" in text
    with pytest.warns(PrivacyLeakWarning, match=r"the label set from the private labels y"):
        ImpactEncoder(mode="laplace", epsilon=1.0, categories=CATS).fit(X, np.minimum(y, 1))
    # declared target type and classes: nothing read from y
    enc = ImpactEncoder(
        mode="laplace", epsilon=1.0, categories=CATS, target_type="multiclass", classes=[0, 1, 2]
    )
    _no_leak_warning(lambda: enc.fit(X, y))
    assert not enc.privacy_.labels.read_from_y
    # not private (mode="cross"): no guarantee to warn about
    _no_leak_warning(lambda: ImpactEncoder(target_type="auto").fit(X, y))


def test_encoder_bad_classes_refused_before_any_charge():
    X, y = _cat()
    ledger = PrivacyLedger(10.0, 0.5)
    cases = [
        (dict(classes=[0, 1]), r"a label outside the declared classes=\{0, 1\}"),
        (dict(classes=[0, 1, 2]), "exactly two declared classes"),  # target_type="binary"
        (dict(classes=[0, 1, 2], target_type="continuous"), "continuous outcome has no classes"),
        (dict(classes=[0], target_type="multiclass"), "at least 2"),
        (dict(classes=[0, 1, 3], target_type="multiclass"), r"outside the declared classes"),
    ]
    for params, match in cases:
        enc = ImpactEncoder(mode="laplace", epsilon=1.0, categories=CATS, ledger=ledger, **params)
        with pytest.raises(ValueError, match=match):
            enc.fit(X, y)
        assert ledger.spent.epsilon == 0.0, params


@pytest.mark.parametrize("mode", ["laplace", "cross", "jackknife", "split"])
def test_encoder_failed_refit_leaves_it_unchanged(mode):
    """A refused or failing refit (a foreign label, an exhausted ledger, a bad parameter, a
    continuous y) must leave every fitted attribute and the transform exactly as they were."""
    X, y = _cat()
    ledger = PrivacyLedger(1.5)
    params = dict(mode=mode, categories=CATS, classes=[0, 1, 2], target_type="multiclass", seed=3)
    if mode == "laplace":
        params.update(epsilon=1.0, ledger=ledger)
    enc = ImpactEncoder(**params)
    enc.fit_transform(X, y)
    before = dict(enc.__dict__)
    coded = enc.transform(X)
    X_other = np.random.default_rng(1).choice(list("abcd"), size=(50, 3)).astype(object)
    refits = [
        lambda: enc.fit(X_other, np.r_[np.zeros(49, int), 7]),  # foreign label, 3 columns
        lambda: enc.set_params(smoothing=5e-324).fit(X_other, np.zeros(50, int)),
        lambda: enc.set_params(target_type="continuous", classes=None).fit_transform(
            X_other, np.zeros(50)
        ),
    ]
    if mode == "laplace":
        refits.append(lambda: enc.fit(X, y))  # the ledger has 0.5 left: refused
    for refit in refits:
        with pytest.raises((ValueError, BudgetExceededError)):
            refit()
        enc.set_params(**{k: params.get(k, v) for k, v in enc.get_params().items()})
        enc.set_params(smoothing=1e-3)
        assert enc.__dict__.keys() == before.keys()
        assert all(enc.__dict__[k] is before[k] for k in before if k.endswith("_"))
        np.testing.assert_array_equal(enc.transform(X), coded)


@pytest.mark.parametrize("smoothing", [5e-324, 1e-300, 1e-13, 1e13, float("inf")])
def test_encoder_smoothing_outside_range_refused(smoothing):
    X, y = _cat()
    with pytest.raises(ValueError, match="smoothing must"):
        ImpactEncoder(smoothing=smoothing, target_type="multiclass").fit(X, y)


@pytest.mark.parametrize("mode", ["naive", "cross", "jackknife"])
@pytest.mark.parametrize("code", ["bayes", "counts"])
def test_encoder_smallest_smoothing_gives_finite_codes(mode, code):
    X, y = _cat(60)
    for smoothing in (1e-12, 1e12):
        enc = ImpactEncoder(code=code, mode=mode, smoothing=smoothing, target_type="multiclass")
        assert np.isfinite(enc.fit_transform(X, y)).all()
        assert np.isfinite(enc.transform(X)).all()


# ---- Dask ---------------------------------------------------------------------------------
def test_dask_encoder_declared_classes():
    dd = pytest.importorskip("dask.dataframe")
    X, y = _cat(120)
    frame = pd.DataFrame(X, columns=["u", "v"])
    ddf = dd.from_pandas(frame, npartitions=3)
    dy = dd.from_pandas(pd.Series(np.minimum(y, 1)), npartitions=3)
    params = dict(mode="laplace", epsilon=1.0, categories=CATS, seed=0, classes=[0, 1, 2])
    enc = ImpactEncoder(target_type="auto", **params)
    _no_leak_warning(lambda: enc.fit(ddf, dy))
    local = ImpactEncoder(target_type="auto", **params).fit(frame, np.minimum(y, 1))
    assert enc.classes_.tolist() == [0, 1, 2] and enc.target_type_ == "multiclass"
    for a, b in zip(enc.counts_, local.counts_):
        np.testing.assert_array_equal(a, b)
    ledger = PrivacyLedger(10.0, 0.5)
    bad = dd.from_pandas(pd.Series(np.r_[np.zeros(119, int), 5]), npartitions=3)
    enc2 = ImpactEncoder(target_type="multiclass", ledger=ledger, **params)
    with pytest.raises(ValueError, match=r"a label outside the declared classes"):
        enc2.fit(ddf, bad)
    assert ledger.spent.epsilon == 0.0 and not hasattr(enc2, "classes_")


def test_dask_linear_foreign_label_refused_before_any_charge():
    da = pytest.importorskip("dask.array")
    X = _rows()
    y = _labels(X, 3)
    ledger = PrivacyLedger(10.0, 0.5)
    clf = DPSCDClassifier(classes=[0, 1], ledger=ledger)
    with pytest.raises(ValueError, match=r"a label outside the declared classes"):
        clf.fit(da.from_array(X, chunks=50), da.from_array(y, chunks=50))
    assert ledger.spent.epsilon == 0.0


def test_dask_linear_declared_classes_equal_the_single_machine_fit():
    """A dask y with declared classes: the membership check runs on the workers, classes_ and
    the one-vs-rest problems come from the declaration (class 3 absent from y), and the model
    equals the single-machine fit."""
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    X = _rows()
    y = _labels(X, 3)
    params = dict(batch_size=50, epochs=1, classes=[0, 1, 2, 3], n_samples=len(X), seed=4)
    local = DPSCDClassifier(**params).fit(X, y)
    with (
        distributed.LocalCluster(
            processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster),
    ):
        dist = DPSCDClassifier(**params).fit(da.from_array(X, chunks=(70, 3)), da.from_array(y, 70))
    assert dist.classes_.tolist() == [0, 1, 2, 3] and dist.privacy_.tasks == 4
    np.testing.assert_array_equal(dist.coef_, local.coef_)


def test_private_search_plans_with_the_declared_classes():
    """PrivateHyperparameterSearch plans each candidate on public stand-in rows: their labels
    are the declared classes, so string labels work and a one-vs-rest candidate is planned with
    its K problems (the real fits then match the plan)."""
    from privlearn.model_selection import PrivateHyperparameterSearch

    X = _rows(600)
    y = np.array(["lo", "mid", "hi"])[_labels(X, 3)]
    est = DPSCDClassifier(batch_size=50, epochs=1, classes=["hi", "lo", "mid"])
    search = PrivateHyperparameterSearch(
        est,
        {"alpha": [1e-3, 1e-2]},
        score_epsilon=0.5,
        mean_repetitions=2.0,
        seed=0,
        n_samples=len(y),
    )
    _no_leak_warning(lambda: search.fit(X, y))
    assert search.classes_.tolist() == ["hi", "lo", "mid"]
    assert search.best_estimator_.privacy_.tasks == 3


_TARGETS = {
    "int": np.array([0, 1, 2, 1]),
    "uint8": np.array([3, 3, 7], dtype=np.uint8),
    "bool": np.array([True, False, True]),
    "float-integral": np.array([0.0, 1.0, -4.0, 2.0]),
    "float-big-integral": np.array([0.0, 2.0**60]),
    "float-at-2^53": np.array([1.0, 2.0**53]),
    "float-fraction": np.array([0.0, 0.5, 1.0]),
    "float-nan": np.array([0.0, np.nan]),
    "float-inf": np.array([1.0, np.inf]),
    "float-negative-zero": np.array([-0.0, 1.0]),
    "float32": np.array([1.0, 2.0], dtype=np.float32),
    "empty": np.array([], dtype=np.int64),
    "strings": np.array(["a", "b"]),
    "objects": np.array([1, "a"], dtype=object),
    "column": np.array([[0], [1]]),
    "indicator": np.array([[0, 1], [1, 0]]),
    "list": [0, 1, 1],
}


@pytest.mark.parametrize("name", sorted(_TARGETS))
def test_check_classification_target_agrees_with_scikit_learn(name: str, monkeypatch) -> None:
    """privlearn's target-type check accepts and refuses exactly what scikit-learn's
    check_classification_targets does (same exception type and message), and never calls it on
    the inputs it decides itself (non-empty 1-D integers, booleans, small integral floats)."""
    from sklearn.utils.multiclass import check_classification_targets

    import privlearn._labels as labels

    y = _TARGETS[name]

    def outcome(check):  # type: ignore[no-untyped-def]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check(y)
        except Exception as exc:  # scikit-learn's refusal, to be reproduced exactly
            return type(exc), str(exc)
        return None

    expected = outcome(check_classification_targets)
    calls: list[int] = []

    def counting(v):  # type: ignore[no-untyped-def]
        calls.append(1)
        return check_classification_targets(v)

    monkeypatch.setattr(labels, "check_classification_targets", counting)
    assert outcome(labels.check_classification_target) == expected
    decided_here = name in {
        "int", "uint8", "bool", "float-integral", "float-negative-zero", "float32"
    }  # fmt: skip
    assert (not calls) == decided_here
