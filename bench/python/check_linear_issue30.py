# ruff: noqa: E501, E701, E702
"""Issue 30 (linear part): the before/after measurements of the closing report.

    python bench/python/check_linear_issue30.py finite   # item 4: coef_ finiteness, 300 cases
    python bench/python/check_linear_issue30.py memory   # item 6: diagnostics peak, 76 MB X
    python bench/python/check_linear_issue30.py tiny     # item 8: epsilon 1e-5 on 41 rows
    python bench/python/check_linear_issue30.py twin     # item 8: core vs numpy twin near 1e308

Run with ``PYTHONPATH`` pointing at the tree to measure (the "before" numbers came from the
tree at 0d6165c, its ``_core`` included).
"""

import sys


def finite() -> None:
    """Item 4 measurement: 300 random examples over wide target bounds / clip / eta0 on unit-ball rows;
    counts released-finite, released-non-finite, refused (ValueError), other exceptions."""
    import collections
    import warnings

    import numpy as np

    warnings.simplefilter("ignore")
    from privlearn.linear import DPSCDClassifier, DPSCDRegressor, DPSGDClassifier, DPSGDRegressor

    rng = np.random.default_rng(2026)
    X = rng.normal(size=(40, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.01
    yr = rng.normal(size=40)
    yc = (yr > 0).astype(int)
    out = collections.Counter()
    for i in range(300):
        kind = i % 4
        mag = 10.0 ** rng.uniform(0, 308)
        lo = -mag * rng.uniform(0, 1)
        hi = mag
        clip = 10.0 ** rng.uniform(-12, 12)
        eta0 = 10.0 ** rng.uniform(-3, 6)
        eps = float(10.0 ** rng.uniform(-1, 2))
        common = dict(epsilon=eps, seed=i, verbose=0, n_samples=40)
        try:
            if kind == 0:
                m = DPSGDRegressor(
                    target_bounds=(lo, hi), clip=clip, eta0=eta0, batch_size=8, epochs=2, **common
                )
                m.fit(X, yr)
            elif kind == 1:
                m = DPSCDRegressor(
                    target_bounds=(lo, hi), clip=clip, batch_size=8, epochs=2, **common
                )
                m.fit(X, yr)
            elif kind == 2:
                m = DPSGDClassifier(
                    classes=[0, 1], clip=clip, eta0=eta0, batch_size=8, epochs=2, **common
                )
                m.fit(X, yc)
            else:
                m = DPSCDClassifier(classes=[0, 1], clip=clip, batch_size=8, epochs=2, **common)
                m.fit(X, yc)
            fin = np.isfinite(m.coef_).all() and np.isfinite(m.intercept_).all()
            out["released finite" if fin else "RELEASED NON-FINITE"] += 1
        except ValueError:
            out["refused (ValueError)"] += 1
        except Exception as e:
            out[f"other {type(e).__name__}"] += 1
    print(
        dict(out),
        "finite rate among releases:",
        out["released finite"] / max(1, out["released finite"] + out["RELEASED NON-FINITE"]),
    )


def memory() -> None:
    """Item 6 at the issue's size: a 76 MB X (950,000 x 10), DPSGDRegressor, tracemalloc peak with
    diagnostics off and on (after a warm-up fit)."""
    import tracemalloc
    import warnings

    import numpy as np

    warnings.simplefilter("ignore")
    from privlearn.linear import DPSGDRegressor

    rng = np.random.default_rng(0)
    n, d = 950_000, 10
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.01
    y = X @ rng.normal(size=d)
    kw = dict(target_bounds=(-3, 3), epochs=1, batch_size=4096, n_samples=n, seed=0, verbose=0)
    DPSGDRegressor(**kw).fit(X[:1000], y[:1000]) if False else None
    DPSGDRegressor(**{**kw, "n_samples": 20000}).fit(X[:20000], y[:20000])
    peaks = []
    for diag in (False, True):
        tracemalloc.start()
        DPSGDRegressor(diagnostics=diag, **kw).fit(X, y)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    print(
        f"X {X.nbytes / 1e6:.0f} MB: peak off {peaks[0] / 1e6:.0f} MB, on {peaks[1] / 1e6:.0f} MB, diagnostics add {(peaks[1] - peaks[0]) / 1e6:.0f} MB = {(peaks[1] - peaks[0]) / X.nbytes:.2f} x X"
    )


def tiny() -> None:
    """Item 8 measurement: epsilon 1e-5 on 41 rows, 20 seeds per estimator: planned steps / refusals."""
    import warnings

    import numpy as np

    warnings.simplefilter("ignore")
    from privlearn.linear import DPSCDClassifier, DPSCDRegressor, DPSGDClassifier, DPSGDRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(41, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.01
    y = rng.normal(size=41)
    yc = (y > 0).astype(int)
    for name, make, t in [
        (
            "DPSGDClassifier",
            lambda s: DPSGDClassifier(classes=[0, 1], epsilon=1e-5, seed=s, verbose=0),
            yc,
        ),
        (
            "DPSGDRegressor",
            lambda s: DPSGDRegressor(target_bounds=(-3, 3), epsilon=1e-5, seed=s, verbose=0),
            y,
        ),
        (
            "DPSCDClassifier",
            lambda s: DPSCDClassifier(classes=[0, 1], epsilon=1e-5, seed=s, verbose=0),
            yc,
        ),
        (
            "DPSCDRegressor",
            lambda s: DPSCDRegressor(target_bounds=(-3, 3), epsilon=1e-5, seed=s, verbose=0),
            y,
        ),
    ]:
        steps, refused = [], 0
        for s in range(20):
            try:
                steps.append(make(s).fit(X, t).n_steps_)
            except ValueError:
                refused += 1
        print(
            f"{name}: steps over 20 seeds {sorted(set(steps))} (min {min(steps) if steps else None}, max {max(steps) if steps else None}), refused {refused}/20",
            flush=True,
        )


def twin() -> None:
    """Item 8b: DPSGDRegressor core vs numpy twin on entries near 1e308 (X and y), 200 random cases."""
    import collections
    import warnings

    import numpy as np

    warnings.simplefilter("ignore")
    from privlearn.linear import DPSGDRegressor

    rng = np.random.default_rng(7)
    out = collections.Counter()
    ex = {}
    for i in range(200):
        n, d = 24, 3
        X = rng.uniform(-1, 1, size=(n, d)) * 10.0 ** rng.choice(
            [0, 150, 300, 307, 308], size=(n, d)
        )
        X = np.clip(X, -1.7e308, 1.7e308)
        y = rng.uniform(-1, 1, size=n) * 10.0 ** rng.choice([0, 150, 300, 308], size=n)
        kw = dict(seed=i, verbose=0, n_samples=n, batch_size=4, epochs=2)
        c = rng.integers(6)
        if c == 0:
            kw.update(epsilon=np.inf, clip=0.0)
        elif c == 1:
            kw.update(epsilon=np.inf, clip=1.0)
        elif c == 2:
            kw.update(target_bounds=(-1e150, 1e150))
        elif c == 3:
            kw.update(target_bounds=(-1e150, 1e150), target_scale=False)
        elif c == 4:
            kw.update(epsilon=np.inf, target_bounds=(-1.0, 1e150), clip=0.0)
        else:
            kw.update(target_bounds=(-2, 2), clip=1e12, eta0=1e6)
        res = []
        for b in ("core", "reference"):
            try:
                m = DPSGDRegressor(backend=b, **kw).fit(X, y)
                res.append(np.r_[m.coef_, m.intercept_])
            except Exception as e:
                res.append(f"{type(e).__name__}: {e}")
        a, r = res
        if isinstance(a, str) or isinstance(r, str):
            k = "both refuse alike" if a == r else "DIFFERENT OUTCOME"
            if k != "both refuse alike":
                ex.setdefault(k, []).append(
                    (
                        c,
                        a[:120] if isinstance(a, str) else "released",
                        r[:120] if isinstance(r, str) else "released",
                    )
                )
        else:
            ok = np.allclose(a, r, rtol=1e-10, atol=0) and np.array_equal(
                np.isfinite(a), np.isfinite(r)
            )
            k = "agree rtol 1e-10" if ok else "DISAGREE"
            if not ok:
                ex.setdefault(k, []).append((c, float(np.max(np.abs(a - r) / np.abs(r)))))
        out[k] += 1
    print(dict(out))
    for k, v in ex.items():
        print(k, v[:4])


if __name__ == "__main__":
    {"finite": finite, "memory": memory, "tiny": tiny, "twin": twin}[sys.argv[1]]()
