"""ImpactEncoder: cross-fitting and jackknife against explicit loops, no self-leakage, the
Win-Vector overfitting phenomenon, Laplace calibration and a privacy audit, scikit-learn's
common checks, and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import only_warnings
from scipy import sparse, stats
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from privlearn import audit as A
from privlearn.data import make_large_categorical
from privlearn.encoding import ImpactEncoder, bayes_code, count_code, level_pvalues
from privlearn.exceptions import PrivacyLeakWarning

CODES = ["bayes", "counts"]
SIGNIFICANCE = [None, 0.3]


def _small(n: int = 240, seed: int = 0, nan: bool = True) -> tuple[pd.DataFrame, np.ndarray]:
    """A small blog-style problem (3 signal, 3 noise columns of 25 levels), with NaNs."""
    X, y = make_large_categorical(
        n, seed=seed, n_signal=3, n_noise=3, noise_levels=25, design_seed=11
    )
    if nan:
        rng = np.random.default_rng(seed)
        X = X.astype(object)
        X.iloc[rng.choice(n, size=n // 20, replace=False), 1] = np.nan
    return X, y


def _naive(code: str, significance: float | None) -> ImpactEncoder:
    return ImpactEncoder(code, "naive", significance=significance)


# ---- cross-fitting and jackknife against explicit loops --------------------------------------
@pytest.mark.parametrize("significance", SIGNIFICANCE)
@pytest.mark.parametrize("code", CODES)
def test_cross_matches_explicit_kfold_loop(code, significance):
    X, y = _small()
    cv = KFold(5, shuffle=True, random_state=3)
    got = ImpactEncoder(code, "cross", cv=cv, significance=significance).fit_transform(X, y)
    ref = np.empty_like(got)
    for train, test in cv.split(X):
        enc = _naive(code, significance).fit(X.iloc[train], y[train])
        ref[test] = enc.transform(X.iloc[test])
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    # transform (new data) uses the codes fitted on all rows
    full = _naive(code, significance).fit(X, y)
    enc = ImpactEncoder(code, "cross", cv=cv, significance=significance).fit(X, y)
    np.testing.assert_allclose(enc.transform(X), full.transform(X), rtol=0, atol=0)
    assert not np.allclose(got, full.transform(X))  # fit_transform differs, by design


@pytest.mark.parametrize("significance", SIGNIFICANCE)
@pytest.mark.parametrize("code", CODES)
def test_jackknife_matches_explicit_leave_one_out(code, significance):
    X, y = _small(n=70, seed=4)
    got = ImpactEncoder(code, "jackknife", significance=significance).fit_transform(X, y)
    ref = np.empty_like(got)
    for i in range(len(y)):
        rest = np.arange(len(y)) != i
        enc = _naive(code, significance).fit(X[rest], y[rest])
        ref[i] = enc.transform(X.iloc[[i]])[0]
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("code", CODES)
def test_group_jackknife_is_leave_one_group_out(code):
    X, y = _small(n=90, seed=5)
    groups = np.random.default_rng(0).integers(0, 12, size=len(y))
    got = ImpactEncoder(code, "jackknife").fit_transform(X, y, groups=groups)
    ref = np.empty_like(got)
    for g in np.unique(groups):
        out = groups == g
        enc = ImpactEncoder(code, "naive").fit(X[~out], y[~out])
        ref[out] = enc.transform(X[out])
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


def test_cross_with_groups_uses_group_folds():
    X, y = _small(seed=6)
    groups = np.random.default_rng(1).integers(0, 30, size=len(y))
    enc = ImpactEncoder("bayes", "cross", cv=4)
    got = enc.fit_transform(X, y, groups=groups)
    for g in np.unique(groups):  # no group is split across folds
        assert len(np.unique(enc.folds_[groups == g])) == 1
    ref = np.empty_like(got)
    for train, test in GroupKFold(4).split(X, y, groups):
        ref[test] = (
            ImpactEncoder("bayes", "naive").fit(X.iloc[train], y[train]).transform(X.iloc[test])
        )
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["cross", "jackknife"])
@pytest.mark.parametrize("code", CODES)
def test_own_label_never_used(mode, code):
    """Flip one row's label: its own code must not change (other rows' codes may)."""
    X, y = _small(seed=7)
    kwargs = {"cv": KFold(5, shuffle=True, random_state=0)} if mode == "cross" else {}
    before = ImpactEncoder(code, mode, **kwargs).fit_transform(X, y)
    changed_any = False
    for row in (0, 17, 101):
        y2 = y.copy()
        y2[row] = -y2[row]
        after = ImpactEncoder(code, mode, **kwargs).fit_transform(X, y2)
        np.testing.assert_array_equal(after[row], before[row])
        changed_any |= not np.array_equal(np.delete(after, row, 0), np.delete(before, row, 0))
    assert changed_any  # the flip did reach the codes of other rows
    # the naive mode does use the row's own label
    naive0 = ImpactEncoder(code, "naive").fit_transform(X, y)
    y2 = y.copy()
    y2[0] = -y2[0]
    assert not np.array_equal(ImpactEncoder(code, "naive").fit_transform(X, y2)[0], naive0[0])


def test_seeded_cross_is_reproducible_and_folds_partition():
    X, y = _small(seed=8)
    a = ImpactEncoder(mode="cross", cv=5, seed=42)
    b = ImpactEncoder(mode="cross", cv=5, seed=42)
    np.testing.assert_array_equal(a.fit_transform(X, y), b.fit_transform(X, y))
    assert sorted(np.bincount(a.folds_).tolist()) == [48] * 5
    c = ImpactEncoder(mode="cross", cv=5, seed=43).fit_transform(X, y)
    assert not np.array_equal(a.fit_transform(X, y), c)


def test_split_mode_codes_come_from_the_coding_rows_only():
    X, y = _small(seed=9)
    enc = ImpactEncoder("bayes", "split", split_fraction=0.4, seed=3)
    Z = enc.fit_transform(X, y)
    coding = ~enc.model_mask_
    assert coding.sum() == round(0.4 * len(y))
    ref = ImpactEncoder("bayes", "naive").fit(X[coding], y[coding])
    np.testing.assert_allclose(Z, ref.transform(X), rtol=0, atol=1e-15)
    y2 = y.copy()
    y2[enc.model_mask_] = -y2[enc.model_mask_]  # model rows' labels do not enter the codes
    Z2 = ImpactEncoder("bayes", "split", split_fraction=0.4, seed=3).fit_transform(X, y2)
    np.testing.assert_array_equal(Z, Z2)


# ---- the codes themselves ----------------------------------------------------------------
def test_bayes_code_formula_and_limits():
    nt, nf, T, F = np.array([3.0, 0.0, 5.0, 0.0]), np.array([1.0, 4.0, 5.0, 0.0]), 10.0, 30.0
    code = bayes_code(nt, nf, T, F, smoothing=1e-9)
    p = T / (T + F)
    with np.errstate(divide="ignore"):
        expected = np.log(nt[:3] / (nt[:3] + nf[:3]) / p)  # -> empirical log lift as s -> 0
    np.testing.assert_allclose(code[[0, 2]], expected[[0, 2]], rtol=1e-6)
    assert code[1] < -10  # no true among 4 rows: large negative with a tiny pseudo-count
    assert code[3] == 0.0  # an empty level carries no evidence
    s = 1e-3  # the default pseudo-count, by the formula written out
    pt = (3 + p * s) / (T + p * s)
    pf = (1 + (1 - p) * s) / (F + (1 - p) * s)
    assert bayes_code(3, 1, T, F) == pytest.approx(np.log(p * pt / (p * pt + (1 - p) * pf) / p))
    assert bayes_code(3, 1, T, 0) == 0.0  # a single class: no contrast


def test_count_code_and_pvalues():
    out = count_code([0.0, 12.0, 3.0], [5.0, 2.0, 3.0])
    np.testing.assert_allclose(out[:, 0], [1e-3, 12, 3])
    np.testing.assert_allclose(out[:, 2], [np.log(1e-3 / 5), np.log(6.0), 0.0])
    np.testing.assert_array_equal(out[:, 3], [1, 0, 1])
    # the exact test is the doubled one-sided binomial test: scipy's binomtest as the oracle
    for k, n, p in [(3, 10, 0.1), (0, 7, 0.4), (9, 12, 0.5), (1, 2, 0.01)]:
        pv = level_pvalues(k, n - k, p * 1000, (1 - p) * 1000)
        tails = [stats.binomtest(k, n, p, alternative=a).pvalue for a in ("less", "greater")]
        assert pv == pytest.approx(min(1.0, 2 * min(tails)), rel=1e-9)
    # the note's examples: two rows with opposite outcomes are pruned at 50/50 prevalence but
    # significant at rareSig 0.3 when the prevalence is 0.01; one row never is at 50/50
    assert level_pvalues(1, 1, 500, 500) == 1.0
    assert level_pvalues(1, 1, 10, 990) < 0.3
    assert level_pvalues(1, 0, 500, 500) == 1.0


def test_significance_prunes_rare_noise_levels():
    X, y = make_large_categorical(2000, seed=1, design_seed=0)
    enc = ImpactEncoder("bayes", "naive", significance=0.05).fit(X, y)
    noise_nonzero = np.mean([np.mean(t[:-2, 0] != 0) for t in enc.codes_[10:]])
    signal_nonzero = np.mean([np.mean(t[:-2, 0] != 0) for t in enc.codes_[:10]])
    assert noise_nonzero < 0.1 < 0.3 < signal_nonzero
    plain = ImpactEncoder("bayes", "naive").fit(X, y)
    assert np.mean([np.mean(t[:-2, 0] != 0) for t in plain.codes_[10:]]) > 0.9


# ---- the phenomenon of the note (fixed seeds) ---------------------------------------------
def _model_aucs(mode: str, code: str = "bayes") -> tuple[float, float]:
    Xtr, ytr = make_large_categorical(2000, seed=101, design_seed=100)
    Xte, yte = make_large_categorical(10_000, seed=102, design_seed=100)
    enc = ImpactEncoder(code, mode, seed=5)
    Ztr = enc.fit_transform(Xtr, ytr)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1e4, max_iter=2000))
    with only_warnings(ConvergenceWarning):  # lbfgs may stop at max_iter (C = 1e4)
        model.fit(Ztr, ytr)
    train = roc_auc_score(ytr, model.predict_proba(Ztr)[:, 1])
    test = roc_auc_score(yte, model.predict_proba(enc.transform(Xte))[:, 1])
    return train, test


def test_naive_overfits_cross_and_jackknife_do_not():
    train, test = _model_aucs("naive")
    assert train >= 0.95 and test <= 0.75, (train, test)
    for mode in ("cross", "jackknife"):
        train_m, test_m = _model_aucs(mode)
        assert test_m >= 0.85, (mode, train_m, test_m)
        assert abs(train_m - test_m) < 0.1  # training performance is honest


# ---- Laplace mode --------------------------------------------------------------------------
def test_laplace_scale_from_epsilon_matches_sensitivity():
    X, y = _small()
    cats = [sorted(set(X.iloc[:, j].dropna())) for j in range(X.shape[1])]
    enc = ImpactEncoder(mode="laplace", epsilon=1.5, categories=cats, classes=[-1, 1], seed=0).fit(
        X, y
    )
    p = enc.privacy_
    assert p.sensitivity == X.shape[1]  # one level per column, one count each
    assert p.noise_scale == pytest.approx(X.shape[1] / 1.5)
    assert p.epsilon == pytest.approx(1.5) and p.delta == 0.0 and p.private
    assert p.epsilon_per_column == pytest.approx(1.5 / X.shape[1])
    assert p.neighboring == "add_remove" and p.levels_public
    assert p.statement is not None and p.statement.epsilon == pytest.approx(1.5)
    enc2 = ImpactEncoder(
        mode="laplace", noise_scale=4.0, categories=cats, classes=[-1, 1], seed=0
    ).fit(X, y)
    assert enc2.privacy_.epsilon == pytest.approx(X.shape[1] / 4.0)
    assert "DP" in str(enc2.privacy_)
    assert not ImpactEncoder(mode="cross").fit(X, y).privacy_.private


def test_laplace_noise_has_the_stated_scale():
    """Counts of one big level over many seeds: discrete Laplace of scale t (variance
    2 e^{-1/t} / (1 - e^{-1/t})^2), floored at 0 only far from the true count."""
    t = 3.0
    X = np.array([["a"]] * 300 + [["b"]] * 100, dtype=object)
    y = np.r_[np.ones(150), np.zeros(150), np.ones(50), np.zeros(50)]
    noise = []
    for seed in range(300):
        enc = ImpactEncoder(
            mode="laplace", noise_scale=t, categories=[["a", "b"]], classes=[0, 1], seed=seed
        )
        enc.fit(X, y)
        noise.append(enc.counts_[0][:2].ravel() - [150, 150, 50, 50])
    noise = np.concatenate(noise)
    assert np.all(noise == np.round(noise))  # integer noise
    q = np.exp(-1 / t)
    var = 2 * q / (1 - q) ** 2
    assert abs(noise.mean()) < 4 * np.sqrt(var / noise.size)
    assert noise.var() == pytest.approx(var, rel=0.12)


def _released_counts(noise_scale: float, add_row: bool, seed: int, n: int) -> np.ndarray:
    """``n`` independent releases of the noisy n_true of level 'a': one fit on ``n`` identical
    columns (every count gets its own noise draw). D: 5 positives at 'a'; D' = D plus one
    positive row at 'a' (add/remove-one neighbours)."""
    col = np.array(["a"] * 8 + ["b"] * 6, dtype=object)
    y = np.array([1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0])
    if add_row:
        col, y = np.r_[col, ["a"]], np.r_[y, 1]
    X = np.tile(col[:, None], (1, n))
    enc = ImpactEncoder(
        mode="laplace",
        noise_scale=noise_scale,
        categories=[["a", "b"]] * n,
        classes=[0, 1],
        seed=seed,
    ).fit(X, y)
    assert enc.privacy_.epsilon_per_column == pytest.approx(1 / noise_scale)
    return np.array([counts[0, 0] for counts in enc.counts_])


@pytest.mark.parametrize("epsilon", [0.5, 1.0])
def test_laplace_count_privacy_audit(epsilon):
    """Clopper-Pearson audit of one noisy count at its claimed epsilon (the per-column epsilon
    1/noise_scale; a one-column encoder given ``epsilon`` uses exactly that scale), with 2,000
    draws per side; with half the noise the audit must fail."""
    n = 2000
    enc = ImpactEncoder(
        mode="laplace", epsilon=epsilon, categories=[["a", "b"]], classes=[0, 1], seed=0
    )
    enc.fit(np.array([["a"], ["b"]], dtype=object), [0, 1])
    scale = enc.privacy_.noise_scale
    assert scale == pytest.approx(1 / epsilon) and enc.privacy_.epsilon == pytest.approx(epsilon)
    event = A.ThresholdEvent(5.5)  # fixed before any draw: between the two true counts
    d0, d1 = _released_counts(scale, False, 1, n), _released_counts(scale, True, 2, n)
    result = A.audit_pure_dp(d0, d1, event, epsilon, alpha=1e-6)
    assert result.passed, str(result)
    b0, b1 = _released_counts(scale / 2, False, 3, n), _released_counts(scale / 2, True, 4, n)
    broken = A.audit_pure_dp(b0, b1, event, epsilon, alpha=1e-6)
    assert not broken.passed, str(broken)


def test_laplace_seed_and_level_set_warning():
    X, y = _small()
    with pytest.warns(PrivacyLeakWarning, match="categories="):
        a = ImpactEncoder(mode="laplace", noise_scale=2.0, classes=[-1, 1], seed=1).fit_transform(
            X, y
        )
    with pytest.warns(PrivacyLeakWarning, match="categories="):
        b = ImpactEncoder(mode="laplace", noise_scale=2.0, classes=[-1, 1], seed=1).fit_transform(
            X, y
        )
    with pytest.warns(PrivacyLeakWarning, match="categories="):
        c = ImpactEncoder(mode="laplace", noise_scale=2.0, classes=[-1, 1]).fit_transform(X, y)
    with pytest.warns(PrivacyLeakWarning, match="categories="):
        d = ImpactEncoder(mode="laplace", noise_scale=2.0, classes=[-1, 1]).fit_transform(X, y)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(c, d)  # seed=None: fresh entropy


# ---- scikit-learn integration -------------------------------------------------------------
def _expected_failures(estimator: ImpactEncoder) -> dict[str, str]:
    if estimator.mode in ("cross", "jackknife"):
        why = (
            "cross/jackknife: fit_transform codes each training row without its own outcome, "
            "while transform applies codes fitted on all rows (the TargetEncoder convention), "
            "so fit_transform(X, y) != fit(X, y).transform(X) by design"
        )
        return {"check_transformer_general": why, "check_transformer_data_not_an_array": why}
    return {}


# Exemptions needing no entry: the encoder is binary-only, declared with the scikit-learn tag
# classifier_tags.multi_class=False (the checks then draw binary y); it takes categorical
# input, so NaN is a level (allow_nan) and float columns are coded value by value. The Laplace
# and split instances have a fixed seed so that fit is idempotent, as the checks require.
@parametrize_with_checks(
    [
        ImpactEncoder(mode="naive"),
        ImpactEncoder("counts", "naive", significance=0.5),
        ImpactEncoder(mode="cross", seed=0),
        ImpactEncoder("counts", "jackknife"),
        ImpactEncoder(mode="laplace", noise_scale=2.0, seed=0),
        ImpactEncoder(mode="split", seed=0),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


def test_pipeline_column_transformer_and_pandas_output():
    X, y = _small(seed=12)
    X["num"] = np.random.default_rng(0).normal(size=len(y))
    cats = list(X.columns[:-1])
    ct = ColumnTransformer(
        [("impact", ImpactEncoder("counts", "cross", seed=0), cats)], remainder="passthrough"
    )
    pipe = make_pipeline(ct, StandardScaler(), LogisticRegression(max_iter=1000)).fit(X, y)
    assert pipe.predict(X.iloc[:5]).shape == (5,)
    assert ct.transform(X).shape == (len(y), 4 * len(cats) + 1)
    enc = ImpactEncoder(mode="naive").set_output(transform="pandas").fit(X[cats], y)
    out = enc.transform(X[cats])
    assert isinstance(out, pd.DataFrame) and list(out.columns) == cats
    names = ImpactEncoder("counts", "naive").fit(X[cats[:1]], y).get_feature_names_out()
    assert list(names) == [f"{cats[0]}_{s}" for s in ("n_true", "n_false", "log_ratio", "rare")]


def test_strings_ints_and_unseen_levels():
    X = np.array([["a", 1], ["a", 2], ["b", 2], ["b", 3], ["c", 3], ["c", 1]], dtype=object)
    y = np.array(["no", "yes", "no", "no", "yes", "yes"])
    enc = ImpactEncoder(mode="naive").fit(X, y)
    assert list(enc.classes_) == ["no", "yes"]
    assert [list(c) for c in enc.categories_] == [["a", "b", "c"], [1, 2, 3]]
    out = enc.transform(np.array([["zz", 99], ["a", 1]], dtype=object))
    np.testing.assert_array_equal(out[0], [0.0, 0.0])  # unseen: no evidence
    assert out[1, 0] == pytest.approx(enc.transform(X[:1])[0, 0])
    ints = np.array([[1], [1], [2], [2]])
    np.testing.assert_array_equal(
        ImpactEncoder(mode="naive").fit(ints, [0, 1, 0, 0]).transform([[3]]), [[0.0]]
    )


def test_missing_values_as_level_or_error():
    X = pd.DataFrame({"c": ["a", None, "a", np.nan, "b", "b"]})
    y = np.array([1, 1, 0, 1, 0, 0])
    enc = ImpactEncoder(mode="naive").fit(X, y)
    assert list(enc.categories_[0]) == ["a", "b"]
    np.testing.assert_array_equal(enc.counts_[0][2], [2, 0])  # None and NaN: one level
    out = enc.transform(pd.DataFrame({"c": [np.nan, "zz"]}))
    assert out[0, 0] > 0 and out[1, 0] == 0.0
    with pytest.raises(ValueError, match="missing value"):
        ImpactEncoder(mode="naive", handle_missing="error").fit(X, y)
    ok = ImpactEncoder(mode="naive", handle_missing="error").fit(X.fillna("a"), y)
    with pytest.raises(ValueError, match="missing value"):
        ok.transform(X)


def test_level_slots_match_a_per_value_lookup():
    """The vectorised slot lookup (one factorize pass, issue 32) agrees with a plain per-value
    reference: known level -> its sorted position, any missing kind -> K, else K + 1."""
    from privlearn.encoding._input import factorize_column, level_indices

    rng = np.random.default_rng(3)
    pool = np.array(["a", "b", "c", "zz", None, np.nan, pd.NA, pd.NaT], dtype=object)
    col = pool[rng.integers(0, len(pool), 500)]
    levels = np.array(["a", "b", "c", "q"], dtype=object)

    def reference(col, levels):
        pos = {v: i for i, v in enumerate(levels)}
        return np.array([len(levels) if pd.isna(v) else pos.get(v, len(levels) + 1) for v in col])

    got = level_indices(col, levels, "0", "level")
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, reference(col, levels))
    nums = rng.choice([1.0, 2.5, -0.0, np.nan, 7.0], 300)
    np.testing.assert_array_equal(
        level_indices(nums, np.array([0.0, 1.0, 2.5]), "0", "level"),
        reference(nums, np.array([0.0, 1.0, 2.5])),
    )
    fitted, slots = factorize_column(col, "0", "level")
    assert list(fitted) == ["a", "b", "c", "zz"]
    np.testing.assert_array_equal(slots, reference(col, fitted)[: len(slots)])
    with pytest.raises(ValueError, match="missing value"):
        level_indices(col, levels, "0", "error")
    with pytest.raises(ValueError, match="missing value"):
        factorize_column(col, "0", "error")


def test_given_categories_check_agrees_with_the_lookup():
    """A data level the level lookup would not find must fail the given-categories check: a
    bool column with categories=[[0, 1]] passed the old check (``np.setdiff1d`` finds
    ``True == 1``) and then coded every row as an unseen level, silently (issue 32)."""
    X = np.array([[True], [False], [True], [False]])
    y = np.array([1, 0, 1, 0])
    with pytest.raises(ValueError, match="not in the given categories") as err:
        ImpactEncoder(mode="naive", categories=[[0, 1]]).fit(X, y)
    assert "True" not in str(err.value)  # the data's levels are private: not quoted
    enc = ImpactEncoder(mode="naive", categories=[[False, True]]).fit(X, y)
    assert enc.transform(X)[0, 0] > 0 > enc.transform(X)[1, 0]


# ---- bad input ------------------------------------------------------------------------------
def test_bad_targets():
    X = np.array([["a"], ["b"], ["c"], ["a"]], dtype=object)
    with pytest.raises(ValueError, match="exactly two classes"):
        ImpactEncoder().fit(X, [0, 1, 2, 0])
    with pytest.raises(ValueError, match="only 1 class"):
        ImpactEncoder().fit(X, [1, 1, 1, 1])
    with pytest.raises(ValueError, match="NaN"):
        ImpactEncoder().fit(X, [0, 1, np.nan, 0])
    with pytest.raises(ValueError, match="inconsistent"):
        ImpactEncoder().fit(X, [0, 1, 0])
    with pytest.raises(ValueError, match="requires y"):
        ImpactEncoder().fit(X)


def test_mismatched_columns_at_transform():
    X = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": ["u", "u", "v", "v"]})
    enc = ImpactEncoder(mode="naive").fit(X, [0, 1, 1, 0])
    with pytest.raises(ValueError, match="missing:\n- b"):
        enc.transform(X[["a"]])
    with pytest.warns(UserWarning, match="valid feature names"):  # scikit-learn's warning
        with pytest.raises(ValueError, match="has 1 features, but ImpactEncoder is expecting 2"):
            enc.transform(X[["a"]].to_numpy())
    with pytest.raises(ValueError, match="feature names"):
        enc.transform(X.rename(columns={"b": "c"}))
    with pytest.raises(ValueError, match="Reshape"):
        enc.transform(np.array(["x", "y"], dtype=object))


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"code": "woe"}, ValueError, "code must be"),
        ({"mode": "loo"}, ValueError, "mode must be"),
        ({"mode": "laplace"}, ValueError, "exactly one of"),
        ({"mode": "laplace", "epsilon": 1.0, "noise_scale": 1.0}, ValueError, "exactly one"),
        ({"mode": "laplace", "epsilon": -1.0}, ValueError, "epsilon"),
        ({"mode": "cross", "epsilon": 1.0}, ValueError, "mode='laplace' only"),
        ({"mode": "cross", "cv": 1}, ValueError, "cv must be"),
        ({"mode": "cross", "cv": 2.5}, TypeError, "cv must be"),
        ({"mode": "cross", "cv": "five"}, TypeError, "cv must be"),
        ({"mode": "split", "split_fraction": 1.0}, ValueError, "split_fraction"),
        ({"significance": 0.0}, ValueError, "significance"),
        ({"significance": 2.0}, ValueError, "significance"),
        ({"smoothing": 0.0}, ValueError, "smoothing"),
        ({"handle_missing": "ignore"}, ValueError, "handle_missing"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"categories": [["a"]]}, ValueError, "not in the given categories"),
        ({"categories": "sorted"}, ValueError, "categories must be"),
    ],
)
def test_bad_parameters(kwargs, err, match):
    X = np.array([["a"], ["b"], ["a"], ["b"]], dtype=object)
    with pytest.raises(err, match=match):
        ImpactEncoder(**kwargs).fit(X, [0, 1, 1, 0])


def test_bad_inputs():
    y = [0, 1, 1, 0]
    with pytest.raises(TypeError, match="sparse"):
        ImpactEncoder().fit(sparse.csr_matrix(np.eye(4)), y)
    with pytest.raises(TypeError, match="mixes values"):
        ImpactEncoder(mode="naive").fit(np.array([["a"], [1], ["b"], [2]], dtype=object), y)
    with pytest.raises(ValueError, match="Complex"):
        ImpactEncoder().fit(np.ones((4, 1), dtype=complex), y)
    with pytest.raises(ValueError, match="groups"):
        ImpactEncoder().fit_transform(np.array([["a"]] * 4, dtype=object), y, groups=[1, 2])
    with pytest.raises(ValueError, match="0 sample"):
        ImpactEncoder().fit(np.empty((0, 2), dtype=object), [])


# ---- the reproduction (privlearn reproduce impact), on a reduced setting ------------------
def test_reproduction_registered_and_small_run(tmp_path):
    from privlearn import cli
    from privlearn.experiments import REGISTRY
    from privlearn.experiments import impact as exp

    cli._load_reproductions()
    assert "impact" in REGISTRY and REGISTRY["impact"].run is exp.run
    keep = {"bayes naive", "counts naive", "bayes laplace", "bayes cross", "bayes jackknife"}
    methods = [m for m in exp.METHODS if m.name in keep] + [exp.METHODS[-3]]  # + sklearn
    res = exp.simulate(seeds=1, sigmas=(0.0, 4.0, 8.0), methods=methods, progress=False)
    assert [r["method"] for r in res.rows] == [m.name for m in methods]
    lap = next(r for r in res.rows if r["method"] == "bayes laplace")
    assert lap["sigma"] in (0.0, 4.0, 8.0)
    assert lap["epsilon"] == (np.inf if lap["sigma"] == 0 else pytest.approx(40 / lap["sigma"]))
    assert len(res.cal_rows) == 3
    naive = next(r for r in res.rows if r["method"] == "bayes naive")
    cross = next(r for r in res.rows if r["method"] == "bayes cross")
    assert naive["train_auc"] > 0.95 > cross["test_auc"] > naive["test_auc"] + 0.1
    claims = exp.evaluate_claims(res)
    assert [c.verdict for c in claims[:1]] == ["holds"] and len(claims) == 4
    files = exp.write_outputs(res, tmp_path, plots=False)
    names = {f.name for f in files}
    assert {"runs.csv", "summary.csv", "calibration.csv", "summary.md"} <= names
    text = (tmp_path / "summary.md").read_text()
    assert "naive impact coding overfits" in text and "0.497" in text


# ---- target types: binary unchanged, multiclass one-vs-rest, continuous mean code ---------------
def _bit_identity_data() -> tuple[pd.DataFrame, np.ndarray]:
    X, y = make_large_categorical(
        300, seed=3, n_signal=3, n_noise=3, noise_levels=25, design_seed=11
    )
    X = X.astype(object)
    X.iloc[np.random.default_rng(0).choice(300, 15, replace=False), 1] = np.nan
    return X, y


def test_binary_codes_unchanged_by_the_target_type_code_path():
    """The binary path through the generalised code gives exactly the codes of the old binary
    encoder: its noisy counts for a fixed seed (SHA-256 recorded from the binary-only version,
    commit 6a0f55c), and codes equal to the old recipe written out (bincount counts, discrete
    Laplace on the flattened [n_true, n_false] table, bayes_code on it)."""
    import hashlib

    from privlearn.encoding.impact import _sub_seed
    from privlearn.mechanisms import discrete_laplace

    X, y = _bit_identity_data()
    with pytest.warns(PrivacyLeakWarning):
        enc = ImpactEncoder(mode="laplace", noise_scale=2.5, seed=7).fit(X, y)
    counts = np.concatenate(enc.counts_).astype(np.int64)
    digest = hashlib.sha256(counts.tobytes()).hexdigest()
    assert digest == "8b4c13de09715f59912f4cfc8f4ddd3556340111e5fe8cbb80ec1c5b6a896b2f"
    # the old recipe, by hand
    y01 = (y == enc.classes_[1]).astype(np.float64)
    tables = []
    for j, lv in enumerate(enc.categories_):
        col = X.iloc[:, j].to_numpy()
        slot = pd.Index(lv).get_indexer(col)
        slot[pd.isna(col)] = len(lv)
        nt = np.bincount(slot, weights=y01, minlength=len(lv) + 2)
        n_all = np.bincount(slot, minlength=len(lv) + 2).astype(np.float64)
        tables.append(np.stack([nt, n_all - nt], axis=1))
    flat = np.concatenate([t[:-1].ravel() for t in tables]).astype(np.int64)
    noisy = np.maximum(discrete_laplace(flat, 2.5, seed=_sub_seed(7, "laplace")), 0)
    start = 0
    for t, got_counts, got_codes in zip(tables, enc.counts_, enc.codes_):
        size = t[:-1].size
        t[:-1] = noisy[start : start + size].reshape(t[:-1].shape)
        t[-1] = 0
        start += size
        np.testing.assert_array_equal(got_counts, t)
        old = bayes_code(t[:, 0], t[:, 1], t[:, 0].sum(), t[:, 1].sum())[:, None]
        np.testing.assert_array_equal(got_codes, old)
    # target_type="auto" on a binary y and explicit "binary" take the same path
    for mode, kw in [("cross", {"seed": 5}), ("jackknife", {}), ("laplace", {"seed": 7})]:
        kw = {**kw, "noise_scale": 2.5} if mode == "laplace" else kw
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            a = ImpactEncoder("counts", mode, **kw).fit_transform(X, y)
            b = ImpactEncoder("counts", mode, target_type="auto", **kw).fit_transform(X, y)
        np.testing.assert_array_equal(a, b)


def _multiclass(n: int = 240, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """The small problem with a 3-class outcome (string labels) derived from the same design."""
    X, _ = _small(n, seed)
    rng = np.random.default_rng(seed + 100)
    first = X.iloc[:, 0].astype(str).map(hash).to_numpy() % 3
    y = np.where(rng.random(n) < 0.6, first, rng.integers(0, 3, n))
    return X, np.array(["lo", "mid", "hi"], dtype=object)[y]


def _class_columns(Z: np.ndarray, k: int, n_classes: int, width: int) -> np.ndarray:
    """Columns of class k in the feature-major, then class, layout."""
    n_features = Z.shape[1] // (n_classes * width)
    cols = [j * n_classes * width + k * width + w for j in range(n_features) for w in range(width)]
    return Z[:, cols]


@pytest.mark.parametrize("significance", SIGNIFICANCE)
@pytest.mark.parametrize("code", CODES)
def test_multiclass_is_one_vs_rest_binary(code, significance):
    """epsilon = inf: each class's columns equal a binary encoder of y == class, in every mode
    (naive codes, cross-fitting, jackknife with groups, split)."""
    X, y = _multiclass()
    groups = np.random.default_rng(2).integers(0, 40, size=len(y))
    width = 1 if code == "bayes" else 4
    cv = KFold(4, shuffle=True, random_state=1)
    runs = [("naive", {}, None), ("cross", {"cv": cv}, None), ("jackknife", {}, groups)]
    runs.append(("split", {"seed": 3}, None))
    for mode, kw, g in runs:
        enc = ImpactEncoder(code, mode, significance=significance, target_type="multiclass", **kw)
        Z = enc.fit_transform(X, y, groups=g)
        assert list(enc.classes_) == ["hi", "lo", "mid"] and enc.target_type_ == "multiclass"
        assert Z.shape == (len(y), X.shape[1] * 3 * width)
        np.testing.assert_array_equal(enc.transform(X[:7]), enc.fit(X, y).transform(X[:7]))
        for k, cls in enumerate(enc.classes_):
            ovr = ImpactEncoder(code, mode, significance=significance, **kw)
            ref = ovr.fit_transform(X, y == cls, groups=g)
            np.testing.assert_allclose(
                _class_columns(Z, k, 3, width), ref, rtol=1e-12, atol=1e-12, err_msg=mode
            )
            np.testing.assert_allclose(
                _class_columns(enc.transform(X), k, 3, width), ovr.transform(X), rtol=1e-12
            )
    # the class histogram of each level and feature-major, then class, names
    counts = enc.counts_[0]
    assert counts.shape == (len(enc.categories_[0]) + 2, 3)
    names = list(enc.get_feature_names_out())
    expect = [f"{c}_{k}" for c in X.columns for k in enc.classes_]
    if code == "counts":
        expect = [f"{e}_{s}" for e in expect for s in ("n_true", "n_false", "log_ratio", "rare")]
    assert names == expect
    if significance is not None:
        assert enc.pvalues_[0].shape == counts.shape


def test_target_type_auto_and_pandas_output():
    X, y = _multiclass(seed=1)
    enc = ImpactEncoder(mode="naive", target_type="auto").set_output(transform="pandas")
    out = enc.fit(X, y).transform(X)
    assert enc.target_type_ == "multiclass" and isinstance(out, pd.DataFrame)
    assert list(out.columns)[:3] == [f"{X.columns[0]}_{k}" for k in ("hi", "lo", "mid")]
    yc = np.random.default_rng(0).normal(size=len(y))
    cont = ImpactEncoder(mode="naive", target_type="auto").fit(X, yc)
    assert cont.target_type_ == "continuous" and cont.classes_ is None
    assert list(cont.get_feature_names_out()) == list(X.columns)
    assert cont.privacy_.target_type == "continuous" and not cont.privacy_.private


def _continuous(n: int = 240, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    X, y = _small(n, seed)
    rng = np.random.default_rng(seed + 200)
    return X, 2.0 * (y == y.max()) + rng.normal(size=n)


def test_continuous_cross_and_jackknife_match_explicit_loops():
    X, y = _continuous()
    cv = KFold(5, shuffle=True, random_state=3)
    got = ImpactEncoder(mode="cross", cv=cv, target_type="continuous").fit_transform(X, y)
    ref = np.empty_like(got)
    for train, test in cv.split(X):
        enc = ImpactEncoder(mode="naive", target_type="continuous").fit(X.iloc[train], y[train])
        ref[test] = enc.transform(X.iloc[test])
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    Xs, ys = X.iloc[:60], y[:60]
    got = ImpactEncoder(mode="jackknife", target_type="continuous").fit_transform(Xs, ys)
    for i in (0, 13, 59):
        rest = np.arange(60) != i
        enc = ImpactEncoder(mode="naive", target_type="continuous").fit(Xs[rest], ys[rest])
        np.testing.assert_allclose(got[i], enc.transform(Xs.iloc[[i]])[0], rtol=1e-10, atol=1e-12)
    # the code by its formula: (sum - n g) / (n + m), 0 for unseen levels
    enc = ImpactEncoder(mode="naive", target_type="continuous", smoothing=3.0).fit(X, y)
    col = X.iloc[:, 0].to_numpy()
    level = enc.categories_[0][0]
    at = col == level
    expected = (y[at].sum() - at.sum() * y.mean()) / (at.sum() + 3.0)
    assert enc.codes_[0][0, 0] == pytest.approx(expected, rel=1e-12)
    assert enc.transform(pd.DataFrame([["zz"] * X.shape[1]], columns=X.columns)).tolist() == [
        [0.0] * X.shape[1]
    ]
    # target_bounds clip the outcome in every mode
    clipped = ImpactEncoder(mode="naive", target_type="continuous", target_bounds=(-1, 1))
    plain = ImpactEncoder(mode="naive", target_type="continuous")
    np.testing.assert_allclose(
        clipped.fit_transform(X, y), plain.fit_transform(X, np.clip(y, -1, 1)), rtol=1e-12
    )


def _target_encoder(target_type: str, smooth: float, cv):
    """scikit-learn's TargetEncoder with the folds of ``cv`` (a shuffled 5-fold splitter with
    random_state=0): passed as a splitter from scikit-learn 1.9, else by the equivalent
    ``cv=5, shuffle=True, random_state=0`` (KFold for continuous, StratifiedKFold for
    multiclass targets)."""
    from sklearn.preprocessing import TargetEncoder

    te = TargetEncoder(target_type=target_type, smooth=smooth, cv=cv)
    try:
        te._validate_params()
        return te
    except Exception:  # older scikit-learn: cv is an int
        return TargetEncoder(
            target_type=target_type, smooth=smooth, cv=5, shuffle=True, random_state=0
        )


def test_matches_sklearn_target_encoder():
    """Continuous: TargetEncoder(smooth=m) is the shrunk level mean, our code minus the grand
    mean of the same (fold's coding) rows: equal after adding it back, fitted and cross-fitted.
    Multiclass: TargetEncoder codes P(y = k | level) (shrunk), our Bayes code is
    log(P(y = k | level) / P(y = k)) with a pseudo-count; the definitions differ, and agree as
    both pseudo-counts go to 0: P(y = k) exp(code) == TargetEncoder's value."""
    from sklearn.model_selection import StratifiedKFold

    X, y = _continuous(seed=4)
    Xs = X.fillna("missing")  # TargetEncoder treats NaN as its own category too; keep it simple
    cv = KFold(5, shuffle=True, random_state=0)
    te = _target_encoder("continuous", 2.5, cv)
    ours = ImpactEncoder(mode="cross", cv=cv, target_type="continuous", smoothing=2.5)
    got, ref = ours.fit_transform(Xs, y), te.fit_transform(Xs, y)
    grand = np.empty(len(y))
    for train, test in cv.split(Xs):
        grand[test] = y[train].mean()
    np.testing.assert_allclose(got + grand[:, None], ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.transform(Xs) + y.mean(), te.transform(Xs), rtol=1e-12)

    Xm, ym = _multiclass(seed=5)
    Xm = Xm.fillna("missing")
    tiny = 1e-9
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    te = _target_encoder("multiclass", tiny, cv)
    ours = ImpactEncoder(mode="cross", cv=cv, target_type="multiclass", smoothing=tiny)
    got, ref = ours.fit_transform(Xm, ym), te.fit_transform(Xm, ym)
    assert list(te.classes_) == list(ours.classes_)
    assert list(te.get_feature_names_out()) == list(ours.get_feature_names_out())
    onehot = (ym[:, None] == ours.classes_[None, :]).astype(float)
    prior = np.empty((len(ym), 3))
    for train, test in cv.split(Xm, ym):
        prior[test] = onehot[train].mean(axis=0)
    back = np.tile(prior, Xm.shape[1]) * np.exp(got)
    np.testing.assert_allclose(back, ref, rtol=1e-6, atol=1e-8)


# ---- multiclass and continuous Laplace modes: accounting and audits ---------------------------
def test_multiclass_and_continuous_laplace_accounting():
    X, y = _multiclass(seed=6)
    cats = [sorted(set(X.iloc[:, j].dropna())) for j in range(X.shape[1])]
    enc = ImpactEncoder(
        mode="laplace",
        epsilon=1.5,
        categories=cats,
        target_type="multiclass",
        classes=["hi", "lo", "mid"],
        seed=0,
    ).fit(X, y)
    p = enc.privacy_
    assert p.noise_scale == pytest.approx(X.shape[1] / 1.5)  # histogram: sensitivity 1/column
    assert p.epsilon == pytest.approx(1.5) and p.sensitivity == X.shape[1]
    assert p.target_type == "multiclass" and p.n_classes == 3 and "3 class counts" in str(p)
    assert all(np.all(c == np.round(c)) and c.shape[1] == 3 for c in enc.counts_)
    assert enc.transform(X).shape == (len(y), 3 * X.shape[1])

    Xc, yc = _continuous(seed=6)
    enc = ImpactEncoder(
        mode="laplace",
        epsilon=3.0,
        categories=cats,
        target_type="continuous",
        target_bounds=(-2.0, 4.0),
        seed=0,
    ).fit(Xc, yc)
    p = enc.privacy_
    n_cols = X.shape[1]
    assert p.epsilon == pytest.approx(3.0) and p.delta == 0.0
    assert p.noise_scale == pytest.approx(2 * n_cols / 3.0)  # counts: half the budget
    assert p.sum_sensitivity == pytest.approx(n_cols * 3.0)  # (hi - lo) / 2 per column
    assert p.statement.epsilon == pytest.approx(3.0) and len(p.statement.events) == 2
    # snapping calibration: lambda = sensitivity / (epsilon / 2), rounded up by < 0.2 %
    assert p.sum_noise_scale / (3.0 / (1 / p.noise_scale)) == pytest.approx(1.0, abs=2e-3)
    assert "clipped to [-2, 4]" in str(p) and p.target_bounds == (-2.0, 4.0)
    codes = np.concatenate([c[:, 0] for c in enc.codes_])
    assert np.all(np.abs(codes) <= 6.0)  # shrunk means clipped into the public bounds
    again = ImpactEncoder(**enc.get_params()).fit(Xc, yc)
    np.testing.assert_array_equal(again.transform(Xc), enc.transform(Xc))


def _multiclass_releases(noise_scale: float, add_row: bool, seed: int, n: int) -> np.ndarray:
    """``n`` independent releases of the noisy count of class 2 at level 'a' (one fit on ``n``
    identical columns). D: 3 rows of class 2 at 'a'; D' = D plus one class-2 row at 'a'."""
    col = np.array(["a"] * 9 + ["b"] * 6, dtype=object)
    y = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 1, 2, 0, 1, 2])
    if add_row:
        col, y = np.r_[col, ["a"]], np.r_[y, 2]
    X = np.tile(col[:, None], (1, n))
    enc = ImpactEncoder(
        mode="laplace",
        noise_scale=noise_scale,
        categories=[["a", "b"]] * n,
        target_type="multiclass",
        classes=[0, 1, 2],
        seed=seed,
    ).fit(X, y)
    assert enc.privacy_.epsilon_per_column == pytest.approx(1 / noise_scale)
    return np.array([counts[0, 2] for counts in enc.counts_])


def test_multiclass_laplace_privacy_audit():
    """Clopper-Pearson audit of the class histogram (the changed entry) at the per-column
    epsilon 1/noise_scale, 2,000 draws per side; with half the noise the audit must fail."""
    n, epsilon = 2000, 1.0
    event = A.ThresholdEvent(3.5)  # between the two true counts, fixed before any draw
    d0 = _multiclass_releases(1 / epsilon, False, 1, n)
    d1 = _multiclass_releases(1 / epsilon, True, 2, n)
    result = A.audit_pure_dp(d0, d1, event, epsilon, alpha=1e-6)
    assert result.passed and result.epsilon_lower <= epsilon, str(result)
    b0 = _multiclass_releases(0.5 / epsilon, False, 3, n)
    b1 = _multiclass_releases(0.5 / epsilon, True, 4, n)
    broken = A.audit_pure_dp(b0, b1, event, epsilon, alpha=1e-6)
    assert not broken.passed, str(broken)


class _UnclippedEncoder(ImpactEncoder):
    """A deliberately broken encoder: the continuous outcome enters the sums unclipped, while
    the noise is still calibrated to the bounds."""

    def _contributions(self, target, p):
        return np.stack([np.ones(target.shape[0]), target.astype(np.float64)], axis=1)


def _continuous_releases(add_row: bool, seed: int, n: int, clip: bool = True) -> np.ndarray:
    """``n`` releases of level 'a''s noisy outcome sum (bounds (-1, 1): centred at 0, so the
    stored sum is the released one). D: 8 rows at 'a' summing to 0; D' = D plus a row at 'a'
    with y = 20, which the bounds clip to 1 (``clip=False``: the broken encoder)."""
    col = np.array(["a"] * 8 + ["b"] * 6, dtype=object)
    y = np.array([0.5, -0.5, 1.0, -1.0, 0.25, -0.25, 0.0, 0.0, 1, 1, 0, 0, -1, 0.5])
    if add_row:
        col, y = np.r_[col, ["a"]], np.r_[y, 20.0]
    X = np.tile(col[:, None], (1, n))
    cls = ImpactEncoder if clip else _UnclippedEncoder
    enc = cls(
        mode="laplace",
        noise_scale=1.0,
        categories=[["a", "b"]] * n,
        target_type="continuous",
        target_bounds=(-1.0, 1.0),
        seed=seed,
    ).fit(X, y)
    return np.array([counts[0, 1] for counts in enc.counts_])


def test_continuous_laplace_privacy_audit():
    """The sums are released at 1/noise_scale per column (the other half of the budget goes to
    the counts, audited like the binary counts): audit the level sum at that epsilon, with a
    neighbour whose extra row lies far outside the bounds; an encoder that does not clip must
    fail the audit."""
    n, epsilon_sums = 2000, 1.0
    event = A.ThresholdEvent(1.0)  # fixed before any draw: between the grid points 0 and 2
    d0, d1 = _continuous_releases(False, 1, n), _continuous_releases(True, 2, n)
    result = A.audit_pure_dp(d0, d1, event, epsilon_sums, alpha=1e-6)
    assert result.passed and result.epsilon_lower <= epsilon_sums, str(result)
    b0 = _continuous_releases(False, 3, n, clip=False)
    b1 = _continuous_releases(True, 4, n, clip=False)
    broken = A.audit_pure_dp(b0, b1, event, epsilon_sums, alpha=1e-6)
    assert not broken.passed, str(broken)


# ---- scikit-learn checks for the other target types, and their bad input ------------------------
@parametrize_with_checks(
    [
        ImpactEncoder(mode="naive", target_type="multiclass"),
        ImpactEncoder("counts", "cross", target_type="auto", seed=0),
        ImpactEncoder(mode="jackknife", target_type="continuous"),
        ImpactEncoder(
            mode="laplace",
            target_type="continuous",
            target_bounds=(-5.0, 5.0),
            noise_scale=2.0,
            seed=0,
        ),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible_other_targets(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


@pytest.mark.parametrize(
    ("kwargs", "y", "match"),
    [
        ({"target_type": "ordinal"}, [0, 1, 1, 0], "target_type must be one of"),
        (
            {"mode": "laplace", "epsilon": 1.0, "target_type": "continuous"},
            [0.5, 1.5, 2.0, 0.1],
            "needs target_bounds",
        ),
        (
            {"target_type": "continuous", "target_bounds": (3.0, 1.0)},
            [0.5, 1.5, 2.0, 0.1],
            "reversed",
        ),
        ({"target_type": "continuous", "target_bounds": (1.0,)}, [0.5, 1.5, 2.0, 0.1], "pair"),
        (
            {"target_type": "continuous", "target_bounds": (0.0, np.inf)},
            [0.5, 1.5, 2.0, 0.1],
            "finite",
        ),
        ({"target_bounds": (0.0, 1.0)}, [0, 1, 1, 0], "continuous outcome only"),
        ({"code": "counts", "target_type": "continuous"}, [0.5, 1.5, 2.0, 0.1], "binary or"),
        ({"significance": 0.1, "target_type": "continuous"}, [0.5, 1.5, 2.0, 0.1], "binomial"),
        ({"target_type": "multiclass"}, [0.5, 1.5, 2.0, 0.1], "non-integral"),
        ({"target_type": "multiclass"}, [1, 1, 1, 1], "at least two classes"),
        ({"target_type": "continuous"}, ["a", "b", "c", "d"], "numeric y"),
        ({"target_type": "auto"}, [[0, 1], [1, 0], [1, 1], [0, 0]], "1-D"),
        ({"target_type": "auto"}, [0.5, np.nan, 2.0, 0.1], "NaN"),
    ],
)
def test_bad_target_types(kwargs, y, match):
    X = np.array([["a"], ["b"], ["a"], ["b"]], dtype=object)
    with pytest.raises(ValueError, match=match):
        ImpactEncoder(**kwargs).fit(X, y)


def test_a_laplace_fit_keeps_nothing_per_row():
    """The private fit's attributes never have one entry per training row (n is private)."""
    import pickle

    rng = np.random.default_rng(0)
    sizes = []
    for n in (1000, 20_000):
        X = rng.integers(0, 30, size=(n, 2))
        y = rng.integers(0, 2, size=n)
        enc = ImpactEncoder(
            mode="laplace", epsilon=1.0, categories=[np.arange(30)] * 2, classes=[0, 1], seed=0
        )
        enc.fit(X, y)
        for key, value in vars(enc).items():
            if key.endswith("_") and hasattr(value, "__len__") and not isinstance(value, str):
                assert len(value) != n, key
        assert not hasattr(enc, "model_mask_")
        sizes.append(len(pickle.dumps(enc)))
    assert abs(sizes[1] - sizes[0]) < 256


# ---- issue 30, items 4-5: outcome ranges the arithmetic carries, errors in public terms --------
_CONT_X = np.array([["a"], ["a"], ["b"], ["b"], ["c"], ["c"]], dtype=object)


@pytest.mark.parametrize("mode", ["naive", "split", "cross", "jackknife"])
def test_huge_continuous_outcome_is_refused_not_coded_inf(mode):
    """y = -1e308 gave infinite level sums and NaN codes; bounds (-1e308, 1e308) a width that
    overflows. Both are refused with the range that works, and at its edge every code is
    finite."""
    y = np.full(6, -1e308)
    kw = dict(mode=mode, target_type="continuous", seed=0)
    if mode == "cross":
        kw["cv"] = 2
    with pytest.raises(ValueError, match=r"beyond \+-1e\+250.*target_bounds"):
        ImpactEncoder(**kw).fit_transform(_CONT_X, y)
    with pytest.raises(ValueError, match=r"-1e\+250 <= lo < hi <= 1e\+250"):
        ImpactEncoder(target_bounds=(-1e308, 1e308), **kw).fit_transform(_CONT_X, y)
    edge = np.array([-1e250, 1e250, -1e250, -1e250, 1e250, 1e250])
    for bounds in (None, (-1e250, 1e250)):
        enc = ImpactEncoder(target_bounds=bounds, **kw)
        out = enc.fit_transform(_CONT_X, edge)
        assert np.isfinite(out).all() and np.isfinite(enc.transform(_CONT_X)).all()
        assert all(np.isfinite(c).all() for c in enc.codes_)


def test_laplace_bounds_the_noise_cannot_carry_are_refused_before_the_charge():
    from privlearn.accounting import PrivacyLedger

    y = np.array([-1e250, 1e250, -1e250, -1e250, 1e250, 1e250])
    cats = [["a", "b", "c"]]
    kw = dict(mode="laplace", target_type="continuous", categories=cats, seed=0)
    # the reproducer: "sensitivity must be a finite number > 0, got inf"
    with pytest.raises(ValueError, match=r"-1e\+250 <= lo < hi <= 1e\+250"):
        ImpactEncoder(target_bounds=(-1e308, 1e308), epsilon=1.0, **kw).fit(_CONT_X, y)
    enc = ImpactEncoder(target_bounds=(-1e250, 1e250), epsilon=1.0, **kw).fit(_CONT_X, y)
    assert np.isfinite(enc.transform(_CONT_X)).all() and enc.privacy_.epsilon == 1.0
    for bounds, extra, match in [
        ((0.0, 1e-290), dict(epsilon=1.0), r"hi - lo must lie in \["),
        ((-1e250, 1e250), dict(noise_scale=1e12), "noise scale 1e\\+12 is too large"),
        ((0.0, 1.0), dict(noise_scale=1e-300), r"hi - lo must lie in \["),
    ]:
        ledger = PrivacyLedger(1e9)
        with pytest.raises(ValueError, match=match):
            ImpactEncoder(target_bounds=bounds, ledger=ledger, **kw, **extra).fit(_CONT_X, y)
        assert len(ledger) == 0


def test_errors_do_not_quote_values_read_from_the_private_rows():
    X = np.array([["a"], ["secretlevel"], [np.nan], ["a"]], dtype=object)
    cases = [
        (dict(categories=[["a"]]), np.array([0, 1, 0, 1]), "secretlevel"),
        (dict(handle_missing="error"), np.array([0, 1, 0, 1]), "1 missing"),
        ({}, np.array(["x7q", "x7q", "x7q", "x7q"]), "x7q"),
        ({}, np.array(["u1", "u2", "u3", "u4"]), "u3"),
        (dict(target_type="multiclass"), np.array(["z9", "z9", "z9", "z9"]), "z9"),
    ]
    for kw, y, secret in cases:
        with pytest.raises(ValueError) as err:
            ImpactEncoder(**kw).fit(X, y)
        assert secret not in str(err.value)
    with pytest.raises(ValueError) as err:
        ImpactEncoder(mode="split").fit(X, np.array([0, 1, 0, 1]), groups=np.arange(3))
    assert "(4)" not in str(err.value)
    with pytest.raises(ValueError, match="use fewer folds") as err:  # scikit-learn's quoted n
        ImpactEncoder(mode="cross", cv=7).fit_transform(X, np.array([0, 1, 0, 1]))
    assert "4" not in str(err.value)
