"""The differential road registry: every (statistic, subset kind, road, dtype) against the
reference road and against NumPy slicing, eager, under ``jit`` and under ``vmap``, in the JAX
mode the suite runs in (the suite runs once per mode).

The model is jax's own ``_CheckAgainstNumpy`` / ``_CompileAndCheck``: one table of cases, one
checker, tolerances by dtype.
"""

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from checks import compile_once, vmap_and_check
from jaxsubset import Ranges, range_statistic, rolling_statistic
from references import FLOAT, X64, fitted_capacity, quantile_oracle, range_oracle


# The matrix covers every public statistic: a new one in ``jaxsubset.STATISTICS`` joins it by
# itself (and fails until ``references.range_oracle`` knows it and the tree road computes it or
# is listed as unable to). The quantile takes ``q=``: its own tests are below. A fold of
# partials (the tree road) cannot compute the order statistics.
ORDER_STATISTICS = ("median", "quantile")
STATS = tuple(s for s in jaxsubset.STATISTICS if s != "quantile")
ROADS = {"tree": tuple(s for s in STATS if s not in ORDER_STATISTICS), "reference": STATS}
if jaxsubset._native.available():  # the C++ kernels where built (tests/test_native.py)
    ROADS["native"] = STATS
EPS = np.finfo(FLOAT).eps
RNG = np.random.default_rng(20261201)
N = 300


def _data() -> np.ndarray:
    """``(N, 2)`` values with NaN, +-inf, a huge value, constant runs and one-point islands."""
    y = RNG.normal(3.0, 2.0, (N, 2))
    y[17, 0] = np.nan
    y[[60, 61], 1] = np.nan
    y[140, 0] = np.inf
    y[141, 1] = -np.inf
    y[200, 0] = -9e30 if X64 else -9e15  # never allowed to spoil a range without it
    y[220:260, 1] = 4.0  # a constant run: std exactly 0
    return y.astype(FLOAT)


Y = _data()
X = np.sort(RNG.choice(np.arange(0, 400, 1.0), N))  # sorted, with ties
X = np.where(np.arange(N) % 7 == 0, np.roll(X, 1), X)
X = np.sort(X).astype(FLOAT)


def _kinds() -> dict[str, Ranges]:
    r = jaxsubset.ranges
    starts = RNG.integers(-5, N, 120)
    counts = RNG.integers(0, 90, 120)
    starts[:6] = [220, 225, 17, 140, 0, N - 1]  # constant, one-point NaN, one-point inf, ...
    counts[:6] = [40, 10, 1, 1, 0, 5]
    return {
        "chunks": r.chunks(X, 13),
        "sliding": r.sliding(X, 33, step=5),
        "rolling": r.rolling(X, 12.0),
        "select": r.select(
            X, np.array([0.0, 35.5, 100.0, 399.0]), np.array([3.0, 90.0, 100.0, 9e9])
        ),
        "bins": r.bins(X, np.linspace(-10.0, 420.0, 17)),
        "arbitrary": Ranges(jnp.asarray(starts), jnp.asarray(counts)),
    }


KINDS = _kinds()


def _tol(statistic: str, y: np.ndarray, start, count) -> tuple[float, np.ndarray]:
    """(rtol, atol per range): a few ulps per term of each range, scaled by its magnitude."""
    raw = np.asarray(start)
    start = np.clip(raw, 0, len(y))
    stop = np.clip(raw + np.maximum(np.asarray(count), 0), start, len(y))
    finite = np.where(np.isfinite(y), np.abs(y.astype(np.float64)), 0)
    p = np.concatenate([np.zeros((1, y.shape[1])), np.cumsum(finite, 0)])
    n = np.maximum(stop - start, 1)[:, None]
    scale = (p[stop] - p[start]) / n
    eps = np.finfo(y.dtype if y.dtype.kind == "f" else FLOAT).eps
    if statistic == "count":
        return 0.0, np.zeros_like(scale)
    if statistic in ("first", "last"):  # read, never computed
        return 0.0, np.zeros_like(scale)
    if statistic in ("skew", "kurt"):  # dimensionless: a few ulps per term of the moments
        return 64 * eps * n.max(), 64 * eps * n * np.ones_like(scale)
    if statistic in ("var", "std", "sem"):
        # relative to the spread itself, never to the offset; a two-pass oracle's rounded mean
        # adds (eps * |mean|)**2 per point to the squared deviations
        if statistic == "var":
            return 16 * eps * n.max(), 4 * (eps * scale) ** 2
        return 16 * eps * n.max(), 2 * eps * scale
    return 8 * eps * n.max(), 8 * eps * n * scale


def _assert_matches(got, want, statistic, y, ranges, what):
    got = np.asarray(got, float)
    rtol, atol = _tol(statistic, y, ranges.start, ranges.count)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaN pattern")
    ok = ~np.isnan(want)
    with np.errstate(invalid="ignore"):  # equal infinities: got == want below
        err = np.abs(got - want)
        bound = atol + rtol * np.abs(want)
        bad = ok & ~(err <= bound) & ~(got == want)
    assert not bad.any(), (
        f"{what}: {bad.sum()} ranges off, e.g. index {np.argwhere(bad)[0].tolist()}: got "
        f"{got[bad][:3].tolist()} want {want[bad][:3].tolist()}"
    )


def _all_kinds() -> tuple[Ranges, list[str]]:
    """Every kind's ranges in one batch (one compiled program per road), with their labels."""
    starts, counts, labels = [], [], []
    for name, r in KINDS.items():
        st, ct = np.broadcast_arrays(np.asarray(r.start), np.asarray(r.count))
        starts.append(st.reshape(-1))
        counts.append(ct.reshape(-1))
        labels += [name] * st.size
    return Ranges(jnp.asarray(np.concatenate(starts)), jnp.asarray(np.concatenate(counts))), labels


ALL, LABELS = _all_kinds()


@pytest.mark.parametrize("omit", [False, True], ids=["propagate", "omit"])
def test_every_road_equals_numpy_and_the_reference(omit):
    ranges = ALL
    policy = "omit" if omit else "propagate"
    cap = fitted_capacity(ranges.count)  # (every range fits: the padded slots are run time)
    results = {}
    for road, stats in ROADS.items():
        results[road] = range_statistic(
            Y, ranges, stats, ddof=1, nan_policy=policy, method=road, capacity=cap
        )
    kinds = np.asarray(LABELS)
    for road, stats in ROADS.items():
        for s in stats:
            want = range_oracle(Y, ranges.start, ranges.count, s, 1, omit)
            for kind in KINDS:
                sel = kinds == kind
                sub = Ranges(ranges.start[sel], ranges.count[sel])
                got = np.asarray(results[road][s])[sel]
                _assert_matches(got, want[sel], s, Y, sub, f"{kind}/{road}/{s}")
                if road != "reference":
                    ref = np.asarray(results["reference"][s], float)[sel]
                    _assert_matches(got, ref, s, Y, sub, f"{kind}/{road}=reference/{s}")
    assert results["tree"]["count"].dtype == jnp.zeros((), int).dtype


def _cases() -> dict[str, tuple[np.ndarray, Ranges]]:
    """Other value dtypes, a large offset, and an int64 / datetime axis (x64 only)."""
    r = ALL
    cases = {
        "int32": (RNG.integers(-1000, 1000, (N, 2)).astype(np.int32), r),
        "float32": (RNG.normal(3.0, 2.0, (N, 2)).astype(np.float32), r),
        "offset": (((1e9 if X64 else 1e4) + RNG.normal(0.0, 1.0, (N, 2))).astype(FLOAT), r),
    }
    if X64:  # epoch nanoseconds beyond 2**53, with ties: windows by exact integer search
        t = (np.int64(1_700_000_000) * 10**9 + np.cumsum(RNG.integers(0, 3, N)) * 10**9).astype(
            np.int64
        )
        tr = jaxsubset.ranges.rolling(t, 5 * 10**9)
        cases["datetime"] = (RNG.normal(size=(N, 2)), tr)
        dt = t.astype("datetime64[ns]")
        cases["datetime64"] = (RNG.normal(size=(N, 2)), jaxsubset.ranges.rolling(dt, "5s"))
    return cases


CASES = _cases()


@pytest.mark.parametrize("case", list(CASES))
def test_roads_across_dtypes_offsets_and_time_axes(case):
    y, ranges = CASES[case]
    stats = ROADS["tree"]
    cap = fitted_capacity(ranges.count)
    got = {road: range_statistic(y, ranges, stats, method=road, capacity=cap) for road in ROADS}
    for s in stats:
        want = range_oracle(y, ranges.start, ranges.count, s, 0, False)
        for road in ROADS:
            _assert_matches(got[road][s], want, s, y, ranges, f"{case}/{road}/{s}")
    if case == "datetime":  # the same windows from datetime64 x and from its nanoseconds
        _, r64 = CASES["datetime64"]
        np.testing.assert_array_equal(np.asarray(r64.start), np.asarray(ranges.start))
        np.testing.assert_array_equal(np.asarray(r64.count), np.asarray(ranges.count))


@jax.jit
def _all_roads(y, start, count):
    r = Ranges(start, count)
    return {
        road: range_statistic(y, r, stats, method=road, capacity=128, nan_policy="omit")
        for road, stats in ROADS.items()
    }


def test_roads_under_jit_and_vmap_without_recompiling():
    ranges = KINDS["arbitrary"]
    starts = [jnp.asarray(ranges.start) + shift for shift in (0, 7, 31)]
    outs = compile_once(_all_roads, [(Y, start, ranges.count) for start in starts])
    for start, got in zip(starts, outs, strict=True):
        for road, stats in ROADS.items():
            for s in stats:
                want = range_oracle(Y, start, ranges.count, s, 0, True)
                _assert_matches(got[road][s], want, s, Y, Ranges(start, ranges.count), road)
    # vmap over datasets: each batch element equals its own (jitted) call, up to rounding:
    # the batched program may fuse (and contract to FMA) differently, never mix batch
    # elements (skew/kurt: dimensionless, a few ulps of their moments near 0 too)
    ys = np.stack([Y, Y[::-1] * 2]).astype(FLOAT)
    vmap_and_check(_all_roads, (ys, ranges.start, ranges.count), (0, None, None),
                   rtol=8 * EPS, atol=64 * EPS)  # fmt: skip


def test_roads_have_the_same_gradients():
    y = RNG.normal(0.0, 1.0, (N, 1)).astype(FLOAT)  # no ties: one gradient per extreme
    ranges = KINDS["arbitrary"]
    stats = ("sum", "std", "sem", "max", "first", "last", "skew", "kurt")

    def total(y, road):
        out = range_statistic(y, ranges, stats, method=road, capacity=128)
        return sum(jnp.nansum(out[s]) for s in stats)

    # one jitted program per road (an eager grad would dispatch the tree op by op)
    grad = jax.jit(jax.grad(total), static_argnums=1)
    g_tree = grad(y, "tree")
    g_ref = grad(y, "reference")
    assert np.isfinite(np.asarray(g_tree)).all()
    np.testing.assert_allclose(np.asarray(g_tree), np.asarray(g_ref), rtol=1e-4, atol=1e-4)


def test_nan_gradient_never_leaks_into_other_subsets():
    # a constant subset (std 0) and a NaN subset must not put NaN into the gradient of
    # another subset's statistic, on every road (one Jacobian row per statistic)
    y = np.r_[RNG.normal(size=8), np.full(8, 5.0), RNG.normal(size=7), np.nan].astype(FLOAT)
    r = jaxsubset.ranges.chunks(np.arange(32.0), 4)
    names = ("std", "var", "sem", "max", "min", "mean", "first", "last", "skew", "kurt")
    for road in ROADS:

        def first(y, road=road):
            out = range_statistic(y, r, names, method=road)
            return jnp.stack([out[s][0] for s in names])

        jac = np.asarray(jax.jit(jax.jacrev(first))(y))
        assert np.isfinite(jac).all(), (road, jac)
        assert (jac[:, 8:] == 0).all(), road


def test_windows_of_zeros_are_exactly_zero_after_huge_values():
    y = np.r_[1e30 if X64 else 1e18, -3.0, 7.5, np.zeros(61)].astype(FLOAT)
    r = jaxsubset.ranges.sliding(np.arange(64.0), 4)
    out = range_statistic(y, r, ("sum", "mean", "var", "std"), method="tree")
    for s in out:
        assert (np.asarray(out[s])[3:] == 0.0).all(), s
    # appending zeros after a window never changes it
    short = range_statistic(y[:20], jaxsubset.ranges.sliding(np.arange(20.0), 4), "std")
    # (up to the rounding of a differently vectorised loop: the same points, the same order)
    np.testing.assert_allclose(np.asarray(out["std"])[:17], np.asarray(short), rtol=4 * EPS)


def test_float32_keeps_the_accuracy_of_a_direct_sum():
    # float32 data with a large offset, long ranges: within a few ulps per term of a float64
    # reference on the same float32 values
    n = 1 << 14
    y = (1e4 + RNG.normal(0.0, 1.0, n)).astype(np.float32)
    r = jaxsubset.ranges.sliding(np.arange(n, dtype=np.float32), 4096, step=1021)
    got = range_statistic(y, r, ("mean", "std"), method="tree")
    y64 = y.astype(np.float64)
    for k, a in enumerate(np.asarray(r.start)):
        seg = y64[a : a + 4096]
        assert abs(float(got["mean"][k]) - seg.mean()) <= 4 * 4096 * 2**-24 * np.abs(seg).mean()
        assert abs(float(got["std"][k]) - seg.std()) <= 1e-3 * seg.std()


def _primitives(jaxpr) -> set[str]:
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            names |= _primitives(sub)
    return names


@pytest.mark.parametrize("fn", ["range", "rolling", "binned_sorted", "binned_unsorted", "subsets"])
def test_no_result_depends_on_f32_dot_precision(fn):
    # GPUs run float32 dots as TF32 by default: no statistic may be computed by a dot
    y = jnp.asarray(Y[:, 0])
    x = jnp.asarray(X)
    calls = {
        "range": lambda y: range_statistic(y, jaxsubset.ranges.chunks(x, 7), ROADS["tree"]),
        "rolling": lambda y: rolling_statistic(x, y, 5.0, ROADS["tree"]),
        "binned_sorted": lambda y: [
            jaxsubset.binned_statistic(x, y, s, 8, x_sorted=True).statistic
            for s in ("sum", "mean", "std", "min", "max", "count")
        ],
        "binned_unsorted": lambda y: [
            jaxsubset.binned_statistic(x, y, s, 8, x_sorted=False).statistic
            for s in ("sum", "mean", "std", "min", "max", "count")
        ],
        "subsets": lambda y: jaxsubset.chunks(x, y, 7).std(),
    }
    jaxpr = jax.make_jaxpr(calls[fn])(y)
    prims = _primitives(jaxpr.jaxpr)
    assert not prims & {"dot_general", "conv_general_dilated"}, sorted(prims)


def test_method_errors_name_the_road():
    r = KINDS["chunks"]
    with pytest.raises(ValueError, match="`method` must be one of 'auto', 'reference', 'tree'"):
        range_statistic(Y, r, "mean", method="prefix")
    with pytest.raises(ValueError, match="method='tree' cannot compute 'median'"):
        range_statistic(Y, r, "median", method="tree")


def test_integer_sums_never_wrap_and_inf_variance_is_nan():
    # 8 x 2**30 overflows int32 (JAX's 32-bit mode): every road sums integers in the float dtype
    y = np.full(8, 2**30, np.int32)
    r = jaxsubset.ranges.chunks(np.arange(8.0), 1)
    for road in ROADS:
        assert float(range_statistic(y, r, "sum", method=road)[0]) == 8 * 2**30, road
    assert float(jaxsubset.chunks(np.arange(8.0), y, 1).sum()[0]) == 8 * 2**30
    # var of [inf, -inf] is NaN (inf - inf), as NumPy; var of [inf, 1] too
    y = np.array([np.inf, -np.inf, np.inf, 1.0], FLOAT)
    r = Ranges(jnp.array([0, 2]), jnp.array([2, 2]))
    for road in ROADS:
        assert np.isnan(np.asarray(range_statistic(y, r, "var", method=road, capacity=2))).all()
    assert np.isnan(
        np.asarray(jaxsubset.from_ranges(y, y, r.start, r.count, capacity=2).var())
    ).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_floats_compute_in_float32_and_come_back_in_their_dtype(dtype):
    import ml_dtypes

    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(np.float16)
    y = (RNG.normal(3.0, 2.0, 64)).astype(dt)
    r = jaxsubset.ranges.sliding(np.arange(64.0), 16, step=8)
    want = {
        s: range_oracle(y.astype(np.float32)[:, None], r.start, r.count, s, 0, False)[:, 0]
        for s in ("sum", "mean", "std", "max")
    }
    for road in ROADS:
        out = range_statistic(y, r, ("sum", "mean", "std", "max"), method=road)
        for s, v in out.items():
            assert v.dtype == dt, (road, s)
            np.testing.assert_allclose(np.asarray(v, np.float64), want[s], rtol=1e-2, err_msg=s)
    np.testing.assert_allclose(
        np.asarray(jaxsubset.sliding(np.arange(64.0), y, 16, step=8).std()), want["std"], rtol=1e-5
    )


def test_new_statistics_equal_pandas_rolling_and_groupby():
    import pandas as pd

    rng = np.random.default_rng(7)  # its own draws: the same data whatever ran before
    y = rng.normal(3.0, 2.0, N).astype(FLOAT)
    y[[5, 6, 7, 90, 91, 150]] = np.nan  # windows that start and end on NaN
    y[100:130] = 2.5  # constant: sem exactly 0, skew/kurt NaN (pandas 3)
    s = pd.Series(y.astype(np.float64), index=pd.to_datetime(X.astype(np.float64), unit="s"))
    roll = s.rolling("12s")
    names = ("sem", "first", "last", "skew", "kurt")
    want = {name: getattr(roll, name)() for name in names}
    # pandas' running (add/remove) sums in float64 against moments of the window's own points
    # (float32 in 32-bit mode): first/last exact, the moments to pandas' accuracy
    tol = {s: (1e-3 if not X64 else 1e-9) for s in ("skew", "kurt")}
    tol["sem"] = 1e-5 if not X64 else 1e-11
    for road in ROADS:
        got = rolling_statistic(X, y, 12.0, names, ddof=1, method=road)
        for name, w in want.items():
            t = tol.get(name, 0.0)
            np.testing.assert_allclose(
                np.asarray(got[name], float), w.to_numpy(), rtol=t, atol=t, err_msg=name
            )
    # bins: pandas' groupby first()/last() (input order, NaN skipped) and sem, on every
    # label road; x unsorted and sorted. One jitted program per road holds every statistic
    # (the auto road is one of these, chosen by the registry)
    edges = np.linspace(-10.0, 420.0, 9)
    perm = rng.permutation(N)
    with pytest.raises(ValueError, match="method='scatter' cannot compute 'first'"):
        jaxsubset.binned_statistic(X, y, "first", edges, method="scatter")
    for xs, ys, x_sorted in ((X[perm], y[perm], False), (X, y, True)):
        g = pd.Series(ys.astype(np.float64)).groupby(np.digitize(xs, edges) - 1)
        want = {"sem": g.sem(ddof=0), "first": g.first(), "last": g.last()}
        want |= {"skew": g.skew(), "kurt": g.kurt()}
        # the label roads (scatter, sort) never look at the order: unsorted x only; the
        # ranges road (tree) needs sorted x; the reference takes both
        for road in ("reference", "tree") if x_sorted else ("reference", "scatter", "sort"):
            stats = ("sem",) if road == "scatter" else tuple(want)

            def every(xs, ys, road=road, stats=stats, x_sorted=x_sorted):
                return {
                    name: jaxsubset.binned_statistic(
                        xs, ys, name, edges, nan_policy="omit", method=road, x_sorted=x_sorted
                    ).statistic
                    for name in stats
                }

            got = jax.jit(every)(xs, ys)
            for name in stats:
                t = tol.get(name, 0.0)
                np.testing.assert_allclose(
                    np.asarray(got[name], float)[want[name].index],
                    want[name].to_numpy(),
                    rtol=t,
                    atol=t,
                    err_msg=f"{road}/{name}",
                )


@pytest.mark.parametrize("omit", [False, True], ids=["propagate", "omit"])
def test_quantile_equals_numpy_on_every_kind(omit):
    policy = "omit" if omit else "propagate"
    kinds = np.asarray(LABELS)
    for q in (0.9, 0.37):
        got = range_statistic(Y, ALL, ("quantile", "median"), q=q, nan_policy=policy, capacity=512)
        want = quantile_oracle(Y, ALL.start, ALL.count, q, omit)
        for kind in KINDS:
            sel = kinds == kind
            sub = Ranges(ALL.start[sel], ALL.count[sel])
            g = np.asarray(got["quantile"])[sel]
            _assert_matches(g, want[sel], "quantile", Y, sub, f"{kind}/quantile({q})")
    # q = 0.5 is the median (up to rounding), where no infinite value is read (there NumPy's
    # quantile is NaN, inf - inf, and its median inf)
    med = range_statistic(Y, ALL, ("quantile", "median"), q=0.5, nan_policy=policy, capacity=512)
    mq, mm = np.asarray(med["quantile"]), np.asarray(med["median"])
    fin = np.isfinite(mm)
    np.testing.assert_allclose(mq[fin], mm[fin], rtol=2 * EPS)  # (a + b) / 2 vs a lerp
    assert np.isfinite(mq[fin]).all() and fin.sum() > 100


def test_quantile_rolling_jit_vmap_gradient_and_errors():
    import pandas as pd

    y = np.random.default_rng(3).normal(size=N).astype(FLOAT)
    y[[4, 40, 41]] = np.nan
    s = pd.Series(y.astype(np.float64), index=pd.to_datetime(X.astype(np.float64), unit="s"))
    got = rolling_statistic(X, y, 12.0, "quantile", q=0.9)
    want = s.rolling("12s").quantile(0.9).to_numpy()
    np.testing.assert_allclose(np.asarray(got, float), want, rtol=64 * EPS, atol=64 * EPS)
    # under jit (q static) and vmap over datasets: each element equals its eager call
    r = KINDS["arbitrary"]

    def f(y):
        return range_statistic(y, r, "quantile", q=0.25, capacity=128, nan_policy="omit")

    ys = np.stack([y, y[::-1] * 3]).astype(FLOAT)[..., None]
    vmap_and_check(f, (ys,), rtol=4 * EPS)  # batched under jit against each eager call
    # the gradient: the interpolation weights (1 - t, t) of the two values read, summing to 1
    # per non-empty chunk, and nowhere NaN
    yc = np.random.default_rng(4).normal(size=30).astype(FLOAT)
    rc = jaxsubset.ranges.chunks(np.arange(30.0), 7)
    g = jax.grad(lambda v: jnp.sum(range_statistic(v, rc, "quantile", q=0.3)))(yc)
    assert np.isfinite(np.asarray(g)).all()
    np.testing.assert_allclose(float(jnp.sum(g)), 7.0, rtol=1e-5)
    with pytest.raises(ValueError, match="method='tree' cannot compute 'quantile'"):
        range_statistic(Y, r, "quantile", q=0.5, method="tree")
    with pytest.raises(TypeError, match="needs `q=`"):
        range_statistic(Y, r, "quantile")
    with pytest.raises(ValueError, match=r"`q` must be in \[0, 1\]"):
        rolling_statistic(X, y, 12.0, "quantile", q=1.5)
    with pytest.raises(ValueError, match="`q` is given but statistic 'quantile'"):
        range_statistic(Y, r, "mean", q=0.5)
