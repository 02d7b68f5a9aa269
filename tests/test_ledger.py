"""Privacy ledgers (issue 19, item 5): one owner (no copy into another process), atomic charges
from threads, exact running totals, RDP spends composed exactly as priced, one neighbouring
relation, and scikit-learn's searches refused before any charge."""

from __future__ import annotations

import copy
import math
import os
import pickle
import threading
import traceback

import numpy as np
import pytest

from privlearn.accounting import (
    GaussianEvent,
    PoissonSampled,
    PrivacyLedger,
    RDPAccountant,
    RDPLedger,
    SampledWithoutReplacement,
    UnsupportedEventError,
    rdp_pure_dp,
    rdp_to_epsilon,
)
from privlearn.accounting.pld import epsilon_of_parts
from privlearn.exceptions import BudgetExceededError
from privlearn.mechanisms._bits import spend as bits_spend

LEDGERS = [lambda: PrivacyLedger(1.0, 1e-5), lambda: RDPLedger(1.0, 1e-5)]


def _data(n: int = 120, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True)) * 1.25
    y = np.where(X @ np.linspace(1.0, -1.0, d) > 0, 1, 0)
    return X, y


def _estimator(ledger, **kw):
    from privlearn.linear import DPSGDClassifier

    base = dict(
        mechanism="gaussian",
        epsilon=0.5,
        delta=1e-6,
        batch_size=20,
        epochs=1,
        seed=0,
        ledger=ledger,
        classes=[0, 1],
    )  # fmt: skip  (the label set of _data, public)
    return DPSGDClassifier(**{**base, **kw})


def _charge(ledger, i):  # module level: joblib's workers could import it
    ledger.spend(0.1, 0.0, label=f"task {i}")
    return i


# ---- one owner ------------------------------------------------------------------------------
@pytest.mark.parametrize("make", LEDGERS)
def test_a_ledger_refuses_to_be_pickled(make):
    ledger = make()
    ledger.spend(0.25, label="before")
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(TypeError, match="has one owner.*n_jobs=1.*threads.*ledger=None"):
            pickle.dumps(ledger, protocol=protocol)
    with pytest.raises(TypeError, match="one owner"):
        pickle.dumps({"budget": [ledger]})  # also inside a container
    assert len(ledger) == 1


@pytest.mark.parametrize("make", LEDGERS)
def test_copies_in_the_same_process_are_the_ledger_itself(make):
    from sklearn.base import clone

    ledger = make()
    assert copy.copy(ledger) is ledger
    assert copy.deepcopy(ledger) is ledger
    assert clone(ledger, safe=False) is ledger
    holder = copy.deepcopy({"a": ledger, "b": [ledger]})
    assert holder["a"] is ledger and holder["b"][0] is ledger
    est = copy.deepcopy(_estimator(ledger))
    assert est.ledger is ledger


def test_a_joblib_process_pool_is_refused_and_the_owner_unchanged():
    from joblib import Parallel, delayed

    ledger = PrivacyLedger(1.0)
    with pytest.raises(Exception) as info:
        Parallel(n_jobs=2, backend="loky")(delayed(_charge)(ledger, i) for i in range(4))
    # loky wraps the pickling error; the ledger's own message reaches the caller
    text = "".join(traceback.format_exception(info.value))
    assert "PrivacyLedger has one owner" in text and "n_jobs=1" in text
    assert len(ledger) == 0 and ledger.spent.epsilon == 0.0


def test_threads_charge_the_one_owner():
    from joblib import Parallel, delayed

    ledger = PrivacyLedger(1.0)
    out = Parallel(n_jobs=4, backend="threading")(delayed(_charge)(ledger, i) for i in range(8))
    assert out == list(range(8))
    assert len(ledger) == 8
    assert ledger.spent.epsilon == math.fsum([0.1] * 8)
    with pytest.raises(BudgetExceededError):
        Parallel(n_jobs=4, backend="threading")(delayed(_charge)(ledger, i) for i in range(3))
    assert len(ledger) == 10 and ledger.spent.epsilon <= 1.0 * (1 + 1e-9)


def test_cross_val_score_in_processes_is_refused_in_this_process_it_charges():
    from sklearn.model_selection import cross_val_score

    X, y = _data()
    ledger = PrivacyLedger(10.0, 1e-4)
    with pytest.raises(Exception) as info:
        cross_val_score(_estimator(ledger), X, y, cv=3, n_jobs=2, error_score="raise")
    assert "has one owner" in "".join(traceback.format_exception(info.value))
    assert len(ledger) == 0
    scores = cross_val_score(_estimator(ledger), X, y, cv=3, n_jobs=1, error_score="raise")
    assert np.isfinite(scores).all()
    assert len(ledger) == 3 and ledger.spent.epsilon == pytest.approx(1.5)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_cannot_charge_the_owners_ledger():
    ledger = PrivacyLedger(1.0)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report what a charge did, then leave at once
        try:
            ledger.spend(0.5, label="child")
            msg = b"charged"
        except TypeError as exc:
            msg = b"refused" if b"one owner" in str(exc).encode() else b"other"
        except BaseException:
            msg = b"other"
        os.write(write, msg)
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as f:
        assert f.read() == b"refused"
    ledger.spend(0.5, label="owner")
    assert [e.label for e in ledger.entries] == ["owner"]


# ---- atomic charges -------------------------------------------------------------------------
def _sequential_fits(make, eps):
    ledger, n = make(), 0
    while True:
        try:
            ledger.spend(eps)
        except BudgetExceededError:
            return n
        n += 1


@pytest.mark.parametrize("make", [lambda: PrivacyLedger(1.0), lambda: RDPLedger(1.0, 1e-5)])
def test_racing_threads_never_exceed_the_cap(make):
    eps, threads, per_thread = 0.3, 8, 4
    expected = _sequential_fits(make, eps)
    if isinstance(make(), PrivacyLedger) and not isinstance(make(), RDPLedger):
        assert expected == math.floor(1.0 / eps)
    for _ in range(20):
        ledger = make()
        barrier = threading.Barrier(threads)
        accepted = []

        def worker(ledger=ledger, barrier=barrier, accepted=accepted):
            barrier.wait()
            for _ in range(per_thread):
                try:
                    ledger.spend(eps, label="race")
                    accepted.append(1)
                except BudgetExceededError:
                    pass

        pool = [threading.Thread(target=worker) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        assert len(accepted) == len(ledger) == expected
        assert ledger.spent.epsilon <= 1.0 * (1 + 1e-9)


def test_racing_threads_with_a_tiny_switch_interval():
    """The check-then-record window is widest when the interpreter switches threads often."""
    import sys

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(20):
            ledger = PrivacyLedger(1.0)
            barrier = threading.Barrier(6)

            def worker(ledger=ledger, barrier=barrier):
                barrier.wait()
                for _ in range(10):
                    try:
                        ledger.spend(0.125)
                    except BudgetExceededError:
                        pass

            pool = [threading.Thread(target=worker) for _ in range(6)]
            for t in pool:
                t.start()
            for t in pool:
                t.join()
            assert len(ledger) == 8 and ledger.spent.epsilon == 1.0
    finally:
        sys.setswitchinterval(old)


# ---- running totals -------------------------------------------------------------------------
def test_twenty_thousand_spends_sum_exactly():
    rng = np.random.default_rng(1)
    values = (rng.random(20_000) * 1e-4).tolist() + [1e-300, 3e-17, 0.0]
    ledger = PrivacyLedger(10.0, 0.5)
    for v in values:
        ledger.spend(v, v * 1e-3)
    assert len(ledger) == len(values)
    assert ledger.spent.epsilon == math.fsum(values)
    assert ledger.spent.delta == math.fsum(v * 1e-3 for v in values)
    # 0.1 ten times fits a cap of 1 (relative tolerance), the eleventh does not
    tenth = PrivacyLedger(1.0)
    for _ in range(10):
        tenth.spend(0.1)
    assert tenth.spent.epsilon == math.fsum([0.1] * 10)
    assert not tenth.can_spend(0.1)


def test_a_spend_too_large_to_add_is_refused_not_overflowed():
    ledger = PrivacyLedger(1.7e308)
    ledger.spend(1.6e308)
    with pytest.raises(BudgetExceededError):
        ledger.spend(1.6e308)
    assert not ledger.can_spend(1.6e308)
    assert ledger.spent.epsilon == 1.6e308


# ---- RDP ledger: events ---------------------------------------------------------------------
def test_a_generator_of_events_is_composed_as_priced():
    step = PoissonSampled(0.01, GaussianEvent(1.5))
    by_list, by_gen = RDPLedger(5.0, 1e-5), RDPLedger(5.0, 1e-5)
    by_list.spend_events([step] * 1000)
    entry = by_gen.spend_events(step for _ in range(1000))
    assert by_gen.spent.epsilon > 0.5
    assert by_gen.spent == by_list.spent
    assert entry.epsilon == pytest.approx(by_gen.spent.epsilon, rel=1e-12)
    # the cap binds: repeated generator spends end in a refusal
    refused = False
    for _ in range(50):
        try:
            by_gen.spend_events(step for _ in range(1000))
        except BudgetExceededError:
            refused = True
            break
    assert refused and by_gen.spent.epsilon <= 5.0 * (1 + 1e-9)


def test_a_pure_spend_then_gaussian_events_compose():
    ledger = RDPLedger(10.0, 1e-5)
    ledger.spend(0.5, label="pure")
    entry = ledger.spend_events([GaussianEvent(3.0)] * 10, label="gaussians")
    acc = RDPAccountant(ledger._orders)
    curve = acc.compose(GaussianEvent(3.0), count=10).rdp
    # the smaller of two sound bounds: RDP, and the loss distributions (the pure spend as
    # randomized response, the ten Gaussians as one exactly)
    alone_rdp = rdp_to_epsilon(ledger._orders, curve, 1e-5)[0]
    alone_pld = epsilon_of_parts({(1.0, 3.0): 10}, {}, 1e-5)
    assert entry.epsilon == pytest.approx(min(alone_rdp, alone_pld))
    by_rdp = rdp_to_epsilon(ledger._orders, curve + rdp_pure_dp(0.5, ledger._orders), 1e-5)[0]
    by_pld = epsilon_of_parts({(1.0, 3.0): 10}, {0.5: 1}, 1e-5)
    assert by_pld < by_rdp
    assert ledger.spent.epsilon == pytest.approx(by_pld, rel=1e-12)
    assert len(ledger) == 2
    # a loop spending until refused ends
    for _ in range(100):
        try:
            ledger.spend_events([GaussianEvent(3.0)] * 10)
        except BudgetExceededError:
            break
    else:
        pytest.fail("the cap never bound")


def test_a_zero_pure_spend_at_order_infinity_is_not_nan():
    """``0 * inf`` at alpha = inf made the RDP curve NaN: read as 0 spent, the cap never bound."""
    ledger = RDPLedger(20.0, 1e-5, orders=[2.0, 8.0, np.inf])
    ledger.spend(0.0, label="nothing")
    assert ledger.spent.epsilon == 0.0
    ledger.spend_events([GaussianEvent(2.0)] * 4)
    # the loss distributions price it (four Gaussians = one of sigma 1, exactly)
    assert ledger.spent.epsilon == pytest.approx(epsilon_of_parts({(1.0, 2.0): 4}, {}, 1e-5))
    assert 4.0 < ledger.spent.epsilon <= 20.0
    only_inf = RDPLedger(5.0, 1e-5, orders=[np.inf])
    only_inf.spend(0.0)
    # a Gaussian has infinite RDP at order inf, but a finite loss distribution
    only_inf.spend_events([GaussianEvent(2.0)])
    assert 0.0 < only_inf.spent.epsilon < 5.0
    assert not np.isnan(only_inf.spent.epsilon)


def test_spend_events_rejects_non_events_before_charging():
    ledger = RDPLedger(5.0, 1e-5)
    with pytest.raises(TypeError, match="iterable"):
        ledger.spend_events(3.0)
    with pytest.raises(TypeError, match="event"):
        ledger.spend_events([GaussianEvent(1.0), "gaussian"])
    with pytest.raises(TypeError, match="label"):
        ledger.spend_events([GaussianEvent(1.0)], label=3)
    assert len(ledger) == 0
    ledger.spend_events(GaussianEvent(4.0))  # one event alone
    assert len(ledger) == 1


# ---- one neighbouring relation ----------------------------------------------------------------
@pytest.mark.parametrize("make", LEDGERS)
def test_a_ledger_refuses_a_second_relation(make):
    ledger = make()
    ledger.spend(0.1, 0.0, label="scaler", neighboring="add_remove")
    assert ledger.neighboring == "add_remove"
    assert not ledger.can_spend(0.1, neighboring="replace_one")
    assert ledger.can_spend(0.1, neighboring="add_remove") and ledger.can_spend(0.1)
    with pytest.raises(UnsupportedEventError, match="replace-one.*add/remove-one.*2 eps"):
        ledger.spend(0.1, 0.0, label="fit", neighboring="replace_one")
    assert len(ledger) == 1
    ledger.spend(0.1, label="legacy")  # unstated: accepted, shown as such
    ledger.spend(0.1, label="same", neighboring="add_remove")
    text = str(ledger)
    assert "add/remove-one neighbours" in text and "unstated" in text
    assert [e.neighboring for e in ledger.entries] == ["add_remove", None, "add_remove"]
    with pytest.raises(ValueError, match="neighboring must be"):
        ledger.spend(0.1, neighboring="add-remove")
    with pytest.raises(ValueError, match="neighboring must be"):
        ledger.spend(0.1, neighboring=["add_remove"])
    assert len(ledger) == 3


def test_a_declared_relation_refuses_the_other_from_the_start():
    ledger = PrivacyLedger(2.0, 1e-5, neighboring="replace_one")
    with pytest.raises(UnsupportedEventError, match="add/remove-one.*replace-one.*converted"):
        ledger.spend(0.5, neighboring="add_remove")
    eps, delta = 0.5, 1e-7  # the stated conversion, charged by the caller
    ledger.spend(2 * eps, (1 + math.exp(eps)) * delta, label="converted", neighboring="replace_one")
    assert ledger.spent == (1.0, (1 + math.exp(eps)) * delta)
    assert "replace-one neighbours" in str(ledger)


def test_an_rdp_ledger_keeps_plain_and_event_spends_on_one_relation():
    poisson = PoissonSampled(0.01, GaussianEvent(2.0))
    wor = SampledWithoutReplacement(1000, 10, GaussianEvent(2.0))
    # events first, then a plain spend of the other relation
    ledger = RDPLedger(5.0, 1e-5)
    ledger.spend_events([poisson] * 10)
    assert ledger.neighboring == "add_remove"
    with pytest.raises(UnsupportedEventError, match="replace-one.*add/remove-one"):
        ledger.spend(0.1, neighboring="replace_one")
    with pytest.raises(UnsupportedEventError, match="replace-one.*add/remove-one"):
        ledger.spend_events([wor] * 10)
    assert len(ledger) == 1
    # a plain spend first, then events of the other relation
    other = RDPLedger(5.0, 1e-5)
    other.spend(0.1, neighboring="replace_one")
    with pytest.raises(UnsupportedEventError, match="add/remove-one.*replace-one"):
        other.spend_events([poisson] * 10)
    other.spend_events([wor] * 10)
    # a stated relation that contradicts the events' samplers
    with pytest.raises(UnsupportedEventError):
        RDPLedger(5.0, 1e-5).spend_events([poisson], neighboring="replace_one")
    assert [e.neighboring for e in other.entries] == ["replace_one", "replace_one"]


def test_the_mechanisms_helper_passes_the_relation_when_the_ledger_takes_it():
    ledger = PrivacyLedger(1.0)
    bits_spend(ledger, 0.25, 0.0, "known", neighboring="add_remove")
    bits_spend(ledger, 0.25, 0.0, "legacy")
    assert [e.neighboring for e in ledger.entries] == ["add_remove", None]
    with pytest.raises(UnsupportedEventError):
        bits_spend(ledger, 0.25, 0.0, "other", neighboring="replace_one")

    class DuckLedger:  # a duck-typed ledger that predates relations keeps working
        def __init__(self):
            self.calls = []

        def spend(self, epsilon, delta=0.0, label=""):
            self.calls.append((epsilon, delta, label))

    duck = DuckLedger()
    bits_spend(duck, 0.5, 0.0, "duck", neighboring="replace_one")
    assert duck.calls == [(0.5, 0.0, "duck")]


# ---- scikit-learn's searches --------------------------------------------------------------------
def _searches():
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import GridSearchCV, HalvingGridSearchCV, RandomizedSearchCV

    grid = {"epsilon": [0.25, 0.5]}
    return {
        "grid": lambda est: GridSearchCV(est, grid, cv=2),
        "randomized": lambda est: RandomizedSearchCV(est, grid, n_iter=2, cv=2, random_state=0),
        "halving": lambda est: HalvingGridSearchCV(est, grid, cv=2, min_resources=40),
    }


@pytest.mark.parametrize("kind", ["grid", "randomized", "halving"])
def test_a_scikit_learn_search_is_refused_before_any_charge(kind):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y = _data()
    for ledger in (PrivacyLedger(1.0, 1e-5), RDPLedger(1.0, 1e-5)):
        search = _searches()[kind](_estimator(ledger))
        with pytest.raises(TypeError, match="PrivateHyperparameterSearch"):
            search.fit(X, y)
        assert len(ledger) == 0 and ledger.spent.epsilon == 0.0
    # also when the estimator sits in a pipeline
    ledger = PrivacyLedger(1.0, 1e-5)
    pipe = make_pipeline(FunctionTransformer(), _estimator(ledger))
    search = _searches()[kind](pipe)
    search.param_grid = search.param_distributions = {"dpsgdclassifier__epsilon": [0.25]}
    with pytest.raises(TypeError, match="non-private validation scores"):
        search.fit(X, y)
    assert len(ledger) == 0


def test_cross_val_score_and_the_private_search_still_clone_the_ledger():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, cross_val_score

    X, y = _data()
    ledger = PrivacyLedger(5.0, 1e-4)
    cross_val_score(_estimator(ledger), X, y, cv=2)
    assert len(ledger) == 2
    assert clone(_estimator(ledger)).ledger is ledger
    # a search over an estimator without a ledger is untouched
    GridSearchCV(_estimator(None), {"epsilon": [0.5]}, cv=2).fit(X, y)
    assert len(ledger) == 2


def test_a_closed_ledger_keeps_its_record_refuses_charges_and_may_be_pickled():
    """A fitted estimator's own record of its spends (``DPKMeans.ledger_``) is closed: it can
    spend nothing, so a pickled fitted model carries no budget a copy could spend."""
    ledger = PrivacyLedger(1.0, 1e-6)
    ledger.spend(0.25, label="a")
    with pytest.raises(TypeError, match="one owner"):
        pickle.dumps(ledger)
    ledger.close()
    assert ledger.closed
    with pytest.raises(TypeError, match="closed"):
        ledger.spend(0.1, label="b")
    copy_ = pickle.loads(pickle.dumps(ledger))
    assert copy_.closed and copy_.spent == ledger.spent and len(copy_) == 1
    with pytest.raises(TypeError, match="closed"):
        copy_.spend(0.1)
    assert ledger.spent.epsilon == 0.25


def test_linear_fits_state_their_relation_to_the_ledger() -> None:
    """A linear fit charges a shared ledger under the relation its statement holds under
    (issue 22: the recipe's ledger showed "unstated"), so a later fit under the other relation
    is refused before anything is charged instead of being summed with it."""
    from privlearn.accounting.events import UnsupportedEventError
    from privlearn.linear import DPSCDClassifier, DPSGDClassifier

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.3, 0.3, size=(400, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    ledger = PrivacyLedger(5.0, 1e-4)
    gauss = DPSGDClassifier(epsilon=1.0, classes=[-1, 1], ledger=ledger, seed=0).fit(X, y)
    DPSCDClassifier(epsilon=1.0, classes=[-1, 1], ledger=ledger, seed=0).fit(X, y)
    entries = ledger.entries
    assert [e.neighboring for e in entries] == [gauss.privacy_.neighboring] * 2
    assert entries[0].neighboring == "add_remove"
    before = ledger.spent
    song = DPSGDClassifier(
        epsilon=1.0, mechanism="l2-laplace", classes=[-1, 1], ledger=ledger, seed=0
    )
    with pytest.raises(UnsupportedEventError, match="replace-one"):
        song.fit(X, y)
    assert ledger.spent == before and len(ledger.entries) == 2
