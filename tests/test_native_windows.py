"""The native kernel for fixed-count windows (``jaxsubset_sliding_stats``): no range arrays,
``min_periods`` finished inside. Equal to the reference road (bit for bit what is read, a few
ulps for the moments), to bottleneck and pandas; jit, vmap as one call, grad the block road's.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from jaxsubset import window_statistic
from references import FLOAT, X64, fitted_capacity, window_capacity


pytestmark = pytest.mark.skipif(
    not jaxsubset._native.available(), reason=f"native road: {jaxsubset._native.status()}"
)
RNG = np.random.default_rng(2727)
EPS = np.finfo(FLOAT).eps
N = 300
READ = ("count", "min", "max", "first", "last", "median")
MOMENTS = ("sum", "mean", "var", "std", "sem", "skew", "kurt")
TARGET = "jaxsubset_sliding_stats"


def _data() -> np.ndarray:
    y = RNG.normal(2.0, 3.0, (N, 2))
    y[[5, 90, 91], 0] = np.nan
    y[150, 1] = np.inf
    y[151, 0] = -np.inf
    y[200:230, 0] = 0.0
    return y.astype(FLOAT)


Y = _data()


def _lowered(f, *args) -> str:
    return jax.jit(f).lower(*args).as_text()


# each window shape once per NaN policy would compile 12 reference programs (the suite's
# budget): the policies alternate over the shapes, every shape and policy still covered
@pytest.mark.parametrize(("w", "center", "mp", "policy"),
                         [(1, False, 1, "propagate"), (7, False, 1, "omit"),
                          (7, True, 4, "propagate"), (40, False, 40, "omit"),
                          (40, True, 0, "propagate"), (N + 5, False, 3, "omit"),
                          (7, False, 1, "propagate"), (40, True, 0, "omit")])  # fmt: skip
def test_equals_the_reference_road(w, center, mp, policy):
    stats = (*READ, *MOMENTS)
    kw = dict(min_periods=mp, nan_policy=policy, center=center, ddof=1, q=0.3)
    cap = fitted_capacity([w])  # (every window holds at most w rows)
    nat = window_statistic(Y, w, (*stats, "quantile"), method="native", **kw)
    ref = window_statistic(Y, w, (*stats, "quantile"), method="reference", capacity=cap, **kw)
    for s in (*READ, "quantile"):
        np.testing.assert_array_equal(np.asarray(nat[s]), np.asarray(ref[s]), err_msg=s)
        assert nat[s].dtype == ref[s].dtype, s
    for s in MOMENTS:
        a, b = np.asarray(nat[s], float), np.asarray(ref[s], float)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=s)
        ok = np.isfinite(b)
        if not ok.any():  # (w=1 with ddof=1: every variance NaN, checked above)
            continue
        scale = 1.0 if s in ("skew", "kurt") else np.abs(b[ok]).max() + 1
        np.testing.assert_allclose(a[ok], b[ok], rtol=64 * EPS, atol=64 * EPS * scale, err_msg=s)
    alone = window_statistic(Y, w, "quantile", method="native", **kw)  # (the order kernel alone)
    np.testing.assert_array_equal(np.asarray(alone), np.asarray(ref["quantile"]))


def test_the_kernel_walks_the_windows_itself():
    def f(y):
        return window_statistic(y, 25, ("mean", "std", "max"), min_periods=10)

    text = _lowered(f, Y)
    assert text.count(TARGET) == 1
    assert "jaxsubset_range_stats" not in text


@pytest.mark.parametrize("dtype", ["int32", "float32", "float16"])
def test_other_dtypes_follow_the_reference(dtype):
    y = RNG.integers(-50, 50, (N, 1)) if dtype == "int32" else RNG.normal(0, 2, (N, 1))
    y = y.astype(dtype)
    stats = ("count", "sum", "mean", "std", "max", "median")
    nat = window_statistic(y, 9, stats, method="native", min_periods=3)
    ref = window_statistic(y, 9, stats, method="reference", capacity=16, min_periods=3)
    for s in stats:
        assert nat[s].dtype == ref[s].dtype, s
        if s in ("count", "max", "median") or dtype == "int32" and s == "sum":
            np.testing.assert_array_equal(np.asarray(nat[s]), np.asarray(ref[s]), err_msg=s)
        else:
            e = np.finfo(np.float32 if dtype != "int32" else FLOAT).eps
            np.testing.assert_allclose(np.asarray(nat[s], float), np.asarray(ref[s], float),
                                       rtol=64 * e, atol=64 * e, err_msg=s)  # fmt: skip


def test_equals_bottleneck_and_pandas():
    bn = pytest.importorskip("bottleneck")
    pd = pytest.importorskip("pandas")
    y = RNG.normal(5.0, 1.0, 2000)
    y[::13] = np.nan
    y = y.astype(FLOAT)
    for w, mp in ((3, 1), (50, 20), (700, 700)):
        got = window_statistic(y, w, ("mean", "std", "min", "max", "count"), min_periods=mp,
                               method="native")  # fmt: skip
        for s in ("mean", "std", "min", "max"):
            want = getattr(bn, f"move_{s}")(y.astype(np.float64), w, min_count=mp)
            tol = 0.0 if s in ("min", "max") else (1e-11 if X64 else 64 * EPS * 5)
            a = np.asarray(got[s], float)
            if s == "std":  # bottleneck's running sums: an absolute error in the variance
                a, want = a * a, want * want
            np.testing.assert_allclose(a, want, rtol=tol, atol=tol, err_msg=f"w={w} {s}")
        want = pd.Series(y.astype(np.float64)).rolling(w, min_periods=mp).count().to_numpy()
        np.testing.assert_array_equal(np.asarray(got["count"], float), want)
    cen = window_statistic(y, 7, "mean", center=True, method="native")
    want = pd.Series(y.astype(np.float64)).rolling(7, center=True, min_periods=1).mean()
    tol = 1e-12 if X64 else 64 * EPS * 5
    np.testing.assert_allclose(np.asarray(cen, float), want.to_numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("bad", [1e30, np.inf, np.nan])
def test_a_value_outside_a_window_never_changes_it(bad):
    y = RNG.normal(1.0, 1.0, (N, 1)).astype(FLOAT)
    y2 = y.copy()
    y2[123] = bad
    stats = (*READ, *MOMENTS)
    a = window_statistic(y, 10, stats, method="native", ddof=1)
    b = window_statistic(y2, 10, stats, method="native", ddof=1)
    outside = (np.arange(N) < 123) | (np.arange(N) >= 133)
    for s in stats:
        np.testing.assert_array_equal(np.asarray(a[s])[outside], np.asarray(b[s])[outside],
                                      err_msg=s)  # fmt: skip
    z = np.r_[1e30 if X64 else 1e18, -3.0, np.zeros(60)].astype(FLOAT)
    out = window_statistic(z, 4, ("sum", "mean", "var", "std"), method="native")
    for s in out:
        assert (np.asarray(out[s])[5:] == 0.0).all(), s


def test_vmap_is_one_call_and_grad_is_the_block_roads():
    ys = np.stack([Y, Y[::-1] * 3, Y + 1]).astype(FLOAT)

    def f(y):
        return window_statistic(y, 12, ("mean", "std", "max", "median"), nan_policy="omit",
                                min_periods=5, center=True)  # fmt: skip

    assert _lowered(jax.vmap(f), ys).count(TARGET) == 1
    got = jax.jit(jax.vmap(f))(ys)
    for i in range(3):
        one = f(ys[i])
        for s in one:
            np.testing.assert_array_equal(np.asarray(got[s][i]), np.asarray(one[s]), err_msg=s)
    y = RNG.normal(size=(120, 1)).astype(FLOAT)

    def total(v, method):
        out = window_statistic(v, 10, ("sum", "mean", "std", "max"), method=method)
        return sum(jnp.nansum(out[s]) for s in out)

    g_nat = jax.jit(jax.grad(total), static_argnums=(1,))(y, "native")
    g_blk = jax.jit(jax.grad(total), static_argnums=(1,))(y, "blocks")
    np.testing.assert_allclose(np.asarray(g_nat), np.asarray(g_blk), rtol=1e-5, atol=1e-5)
    vg = jax.vmap(jax.grad(lambda v: total(v, "native")))(np.stack([y, 2 * y]))
    np.testing.assert_allclose(np.asarray(vg[0]), np.asarray(g_blk), rtol=1e-5, atol=1e-5)


BLOCK_STATS = ("count", "sum", "mean", "var", "std", "sem", "min", "max")


@pytest.mark.parametrize("policy", ["propagate", "omit"])
@pytest.mark.parametrize(("w", "center"), [(5, False), (64, True), (700, False)])
def test_the_block_loop_at_block_and_group_edges(w, center, policy):
    # the kernel cuts the rows into blocks of w points, four at a time where all are finite:
    # NaN/inf on block and group edges, windows cut at both ends; eager (bucketed) and jit
    n = 3000
    y = RNG.normal(-1.0, 2.0, (n, 1))
    for at in (w - 1, w, 4 * w - 1, 4 * w + 1, 9 * w, n - 2):
        if at < n:
            y[at, 0] = np.nan if at % 2 else np.inf
    y = y.astype(FLOAT)
    kw = dict(min_periods=3, nan_policy=policy, center=center, ddof=1)
    ref = window_statistic(y, w, BLOCK_STATS, method="tree", **kw)
    eager = window_statistic(y, w, BLOCK_STATS, method="native", **kw)
    jitted = jax.jit(lambda v: window_statistic(v, w, BLOCK_STATS, method="native", **kw))(y)
    for got in (eager, jitted):
        for s in BLOCK_STATS:
            a, b = np.asarray(got[s], float), np.asarray(ref[s], float)
            if s in ("count", "min", "max"):
                np.testing.assert_array_equal(a, b, err_msg=s)
                continue
            np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=s)
            ok = np.isfinite(b)
            scale = np.abs(b[ok]).max() + 1
            np.testing.assert_allclose(a[ok], b[ok], rtol=64 * EPS, atol=64 * EPS * scale,
                                       err_msg=s)  # fmt: skip
    # locality across groups: a 1e30 changes no window without it, bit for bit
    y2 = y.copy()
    bad = min(5 * w + 3, n - 300)
    y2[bad] = 1e30 if X64 else 1e18
    far = window_statistic(y2, w, BLOCK_STATS, method="native", **kw)
    lead = (w - 1) // 2 if center else 0
    rows = np.arange(n)
    outside = (rows + lead < bad) | (rows + lead - w + 1 > bad)
    for s in BLOCK_STATS:
        np.testing.assert_array_equal(np.asarray(far[s])[outside], np.asarray(eager[s])[outside],
                                      err_msg=s)  # fmt: skip


@pytest.mark.parametrize(("w", "dtype"), [(3, np.float64), (64, np.float32), (257, np.float64)])
def test_the_portable_and_avx2_block_loops_give_the_same_bits(w, dtype, monkeypatch):
    # the four-block group loop is compiled twice on x86-64 (any CPU, and AVX2 chosen at run
    # time); JAXSUBSET_NATIVE_AVX2=off makes the kernel take the portable one here too, so the
    # two are compared on this machine: the same IEEE operations, the same bits
    if not X64 and dtype == np.float64:
        dtype = np.float32
    y = RNG.normal(5.0, 2.0, (20 * w + 7, 2)).astype(dtype)
    y[11 * w + 1, 1] = np.nan  # a group that falls back to single blocks
    kw = dict(min_periods=2, ddof=1)

    def run():
        f = jax.jit(lambda v: window_statistic(v, w, BLOCK_STATS, method="native", **kw))
        return {s: np.asarray(v) for s, v in f(y).items()}

    monkeypatch.delenv("JAXSUBSET_NATIVE_AVX2", raising=False)
    fast = run()
    monkeypatch.setenv("JAXSUBSET_NATIVE_AVX2", "off")
    portable = run()
    for s in BLOCK_STATS:
        np.testing.assert_array_equal(fast[s], portable[s], err_msg=s)
    # and both are the windows: the tree road's within a few ulps
    ref = window_statistic(y, w, ("mean", "std"), method="tree", **kw)
    eps = np.finfo(dtype).eps
    for s in ("mean", "std"):
        np.testing.assert_allclose(portable[s], np.asarray(ref[s]), rtol=64 * eps, atol=64 * eps)


# --- x-width windows resolved by the kernel (jaxsubset_xwidth_stats) -----------------------

XW_TARGET = "jaxsubset_xwidth_stats"
XW_READ = ("count", "min", "max", "first", "last", "median")
XW_STATS = (*XW_READ, *MOMENTS)


def _irregular(n: int = N) -> np.ndarray:
    """Sorted x with ties, gaps and points exactly at ``x[i] - width`` (integer steps)."""
    x = np.cumsum(RNG.integers(0, 4, n)).astype(float)  # ties (steps of 0) and exact bounds
    x[n // 2 :] += RNG.exponential(0.7, n - n // 2).cumsum()  # irregular floats after that
    return x


XW_X = _irregular().astype(FLOAT)  # (float64 x in 32-bit mode takes the host's exact road)
XW_Y = _data()


def _xw(x, y, width, stats, method, **kw):
    """One jitted rolling_statistic (x and the width closed over, y traced)."""
    return jax.jit(lambda v: jaxsubset.rolling_statistic(x, v, width, stats, method=method,
                                                         **kw))(y)  # fmt: skip


def _both_roads(x, v, width, stats, **kw):
    """The native and the reference road of the same windows (jitted together: one
    compilation instead of two, the suite is compile-bound)."""
    return tuple(jaxsubset.rolling_statistic(x, v, width, stats, method=m, **kw)
                 for m in ("native", "reference"))  # fmt: skip


def _xw_roads(x, y, width, stats, **kw):
    """:func:`_both_roads` in ONE jitted program, x and the width closed over as in :func:`_xw`."""
    return jax.jit(lambda v: _both_roads(x, v, width, stats, **kw))(y)


def _assert_road_equal(nat, ref, stats, scale_rows=None):
    for s in stats:
        a, b = np.asarray(nat[s], float), np.asarray(ref[s], float)
        assert nat[s].dtype == ref[s].dtype, s
        if s in XW_READ or s.startswith("quantile"):
            np.testing.assert_array_equal(a, b, err_msg=s)
            continue
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=s)
        ok = np.isfinite(b)
        if not ok.any():
            continue
        k = 4096 if s in ("skew", "kurt") else 64  # (ratios of 3rd/4th moments: more ulps)
        scale = 1.0 if s in ("skew", "kurt") else np.abs(b[ok]).max() + 1
        np.testing.assert_allclose(a[ok], b[ok], rtol=k * EPS, atol=k * EPS * scale, err_msg=s)


CLOSED = ("right", "left", "both", "neither")
# every width with two `closed` rules and both NaN policies, each rule with three widths
# (not the full 4 x 2 x 5 product: each case compiles two programs for 13 statistics)
XW_CASES = [(CLOSED[(i + k) % 4], ("propagate", "omit")[k], width, mp)
            for i, (width, mp) in enumerate([(0.0, 0), (3.0, 1), (7.5, 4), (40.0, 0), (1e9, 2)])
            for k in (0, 1)]  # fmt: skip


@pytest.mark.parametrize(("closed", "policy", "width", "mp"), XW_CASES)
def test_xwidth_kernel_equals_the_reference_road(closed, policy, width, mp):
    cap = window_capacity(XW_X, width)
    kw = dict(closed=closed, nan_policy=policy, min_periods=mp, ddof=1, capacity=cap)
    stats = (*XW_STATS, "quantile")
    nat, ref = _xw_roads(XW_X, XW_Y, width, stats, q=0.3, **kw)
    _assert_road_equal(nat, ref, stats)
    alone = _xw(XW_X, XW_Y, width, "quantile", "native", q=0.3, **kw)  # (the order kernel alone)
    np.testing.assert_array_equal(np.asarray(alone), np.asarray(ref["quantile"]))
    g = lambda v: jaxsubset.rolling_statistic(XW_X, v, width, XW_STATS, **kw)  # noqa: E731
    assert _lowered(g, XW_Y).count(XW_TARGET) == 1


def test_xwidth_auto_under_jit_is_one_kernel_call():
    def f(x, y):
        return jaxsubset.rolling_statistic(x, y, 5.0, ("mean", "std", "max", "count"),
                                           min_periods=3)  # fmt: skip

    text = _lowered(f, XW_X, XW_Y)
    assert text.count(XW_TARGET) == 1
    assert "jaxsubset_range_stats" not in text
    # centred windows too (the kernel's upper bound), one call and no XLA search
    g = lambda x, y: jaxsubset.rolling_statistic(x, y, 5.0, "mean", center=True)  # noqa: E731
    text = _lowered(g, XW_X, XW_Y)
    assert text.count(XW_TARGET) == 1 and "jaxsubset_range_stats" not in text
    # before/after windows: one call (a concrete `after` decides how windows end on the
    # host); a traced `after` holds both calls under a cond (0 ends each window at its row)
    h = lambda x, y: jaxsubset.rolling_statistic(x, y, before=2.0, after=3.0, statistic="mean")  # noqa: E731
    text = _lowered(h, XW_X, XW_Y)
    assert text.count(XW_TARGET) == 1 and "jaxsubset_range_stats" not in text
    t = lambda x, y, a: jaxsubset.rolling_statistic(x, y, before=2.0, after=a, statistic="mean")  # noqa: E731
    text = _lowered(t, XW_X, XW_Y, 3.0)
    assert text.count(XW_TARGET) == 2 and "jaxsubset_range_stats" not in text
    # what is not covered keeps the resolver's road: anchors
    k = lambda x, y: jaxsubset.rolling_statistic(x, y, 2.0, "mean", at=x[::7])  # noqa: E731
    assert XW_TARGET not in _lowered(k, XW_X, XW_Y)


def _tied_axes() -> list[np.ndarray]:
    """x with ties on every axis the kernel takes: float64, float32, int32, int64 (64-bit
    mode; far from 0, so bounds saturate nowhere near it)."""
    xi = np.cumsum(RNG.integers(0, 3, N)).astype(np.int32)
    axes = [XW_X, (xi * 0.1).astype(np.float32), xi]
    if X64:
        axes.append(xi.astype(np.int64) - 2**40)
    return axes


@pytest.mark.parametrize("closed", CLOSED)
def test_xwidth_kernel_centred_windows_equal_the_reference_road(closed):
    # pandas' centred windows (center=True): the start as a trailing window's of width / 2,
    # the end by value (x <= x[i] + width / 2; every row tied with the end in or out
    # together), on float64, float32 and integer axes with ties (an odd integer width is
    # halved exactly: the two sides round apart), widths from 0 past the whole span; the
    # eager call (a bucket: padding rows never inside a window) equals the jitted one
    axes = _tied_axes()
    stats = ("count", "sum", "mean", "std", "max", "first", "median")
    widths = {"right": (0, 2.5), "left": (3, 1e12), "both": (7, 2.5), "neither": (3, 0.0)}
    for x in axes:  # (two widths per rule: the suite's compile budget)
        for w in widths[closed]:
            if x.dtype.kind == "i" and w > 2**30:
                continue
            kw = dict(closed=closed, center=True, min_periods=0, capacity=N)
            nat, ref = _xw_roads(x, XW_Y, w, stats, **kw)
            _assert_road_equal(nat, ref, stats)
            eager = jaxsubset.rolling_statistic(x, XW_Y, w, stats, **kw)
            _assert_road_equal(eager, ref, stats)
    # pandas: a centred "5s" window on a float axis read as seconds (finite values: pandas'
    # running sum turns a window after an inf into NaN)
    pd = pytest.importorskip("pandas")
    t, v = XW_X - XW_X[0], RNG.normal(size=N).astype(FLOAT)
    got = jaxsubset.rolling_statistic(t, v, 5.0, "sum", center=True, closed=closed)
    ser = pd.Series(v, index=pd.to_datetime(t.astype(np.float64), unit="s"))
    want = ser.rolling("5s", center=True, closed=closed, min_periods=1).sum().to_numpy()
    np.testing.assert_allclose(np.asarray(got, float), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("closed", CLOSED)
def test_xwidth_kernel_before_after_windows_equal_the_reference_road(closed):
    # before/after windows: the start as a trailing window's of `before`, the end by value
    # (x <= x[i] + after) when `after` > 0, at the row itself when it is 0 (pandas' rule for
    # ties: later rows tied with x[i] are out); axes with ties, integer ones with fractional
    # widths (each side rounds its own way); eager, jitted with the widths closed over, and
    # with them traced (the run-time choice on `after == 0`) all equal the reference road
    axes = _tied_axes()
    stats = ("count", "sum", "mean", "std", "max", "last", "median")
    pairs = {"right": ((2.5, 0), (0, 1.5)), "left": ((3, 2), (1e12, 0.0)),
             "both": ((None, 4), (7, 2.5)), "neither": ((2, 0), (0.0, 1e12))}  # fmt: skip
    kw = dict(statistic=stats, closed=closed, min_periods=0, capacity=N)
    for x in axes:
        traced = jax.jit(lambda v, b, a, x=x: jaxsubset.rolling_statistic(
            x, v, before=b, after=a, method="native", **kw))  # fmt: skip
        for b, a in pairs[closed]:
            if x.dtype.kind == "i" and max(b or 0, a or 0) > 2**30:
                continue
            nat, ref = jax.jit(lambda v, x=x, b=b, a=a: _both_roads_ba(x, v, b, a, **kw))(XW_Y)
            _assert_road_equal(nat, ref, stats)
            eager = jaxsubset.rolling_statistic(x, XW_Y, before=b, after=a, **kw)
            _assert_road_equal(eager, ref, stats)
            frac = isinstance(b, float) or isinstance(a, float)  # (the traced widths' dtype)
            wdt = x.dtype if x.dtype.kind == "i" and not frac else FLOAT
            nat_t = traced(XW_Y, np.asarray(b or 0, wdt), np.asarray(a or 0, wdt))
            _assert_road_equal(nat_t, ref, stats)  # (the reference's own traced widths:
            # test_windows; here its program once per case, the suite's compile budget)


def _both_roads_ba(x, v, before, after, **kw):
    return tuple(jaxsubset.rolling_statistic(x, v, before=before, after=after, method=m, **kw)
                 for m in ("native", "reference"))  # fmt: skip


def test_xwidth_kernel_before_after_equals_polars_and_maps_over_widths():
    # polars' rolling groups (t + offset, t + offset + period] are before/after windows on
    # an integer axis (after > 0: ties with the end in or out together, as ours)
    pl = pytest.importorskip("polars")
    t = np.cumsum(RNG.integers(0, 4, N)).astype(np.int64 if X64 else np.int32)
    v = RNG.normal(size=N).astype(FLOAT)
    for b, a, closed in ((5, 3, "right"), (0, 2, "both"), (4, 1, "left"), (6, 6, "neither")):
        got = jaxsubset.rolling_statistic(t, v, statistic=("sum", "max"), before=b, after=a,
                                          closed=closed, min_periods=1)  # fmt: skip
        df = pl.DataFrame({"t": t.astype(np.int64), "v": v})
        want = df.rolling("t", period=f"{a + b}i", offset=f"-{b}i",
                          closed=closed.replace("neither", "none")).agg(
            pl.col("v").sum().alias("sum"), pl.col("v").max().alias("max"))  # fmt: skip
        empty = want["max"].is_null().to_numpy()
        np.testing.assert_allclose(np.asarray(got["sum"])[~empty], want["sum"].to_numpy()[~empty],
                                   rtol=1e-5, atol=1e-5)  # fmt: skip
        np.testing.assert_array_equal(np.asarray(got["max"])[~empty],
                                      want["max"].to_numpy()[~empty])  # fmt: skip
        assert np.isnan(np.asarray(got["max"])[empty]).all()
    # vmap over `after` with x and y closed over (concrete): one program, each row of the
    # batch its own windows (an eager bucket would have tried to cut a traced batch)
    afters = jnp.asarray([0, 1, 3], t.dtype)
    f = jax.vmap(lambda a: jaxsubset.rolling_statistic(t, v, statistic="sum", before=2, after=a))
    got = np.asarray(f(afters))
    for k, a in enumerate([0, 1, 3]):
        want = jaxsubset.rolling_statistic(t, v, statistic="sum", before=2, after=a,
                                           method="reference")  # fmt: skip
        np.testing.assert_allclose(got[k], np.asarray(want), rtol=1e-5, atol=1e-5)

    # the derivative along y: the pure-JAX road's, the widths traced (the cond's branches)
    def loss(u, a, m):
        return jnp.sum(jaxsubset.rolling_statistic(t, u, statistic="mean", before=2, after=a,
                                                   method=m) ** 2)  # fmt: skip

    for a in afters[:2]:
        np.testing.assert_allclose(np.asarray(jax.grad(loss)(v, a, "auto")),
                                   np.asarray(jax.grad(loss)(v, a, "reference")),
                                   rtol=1e-5, atol=1e-6)  # fmt: skip
    g = jax.vmap(lambda w: jaxsubset.rolling_statistic(t, v, w, "sum"))  # trailing widths too
    np.testing.assert_allclose(
        np.asarray(g(afters))[2],
        np.asarray(jaxsubset.rolling_statistic(t, v, 3, "sum", method="reference")),
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize(
    ("closed", "width"),
    [(CLOSED[i], w) for i in range(4) for w in ([0, 3, 2.5, 50] * 2)[i : i + 2]],
)
def test_xwidth_kernel_on_integer_and_float32_axes(closed, width):
    # integer x (exact, saturating bounds; a fractional width rounds per side) and float32 x
    # (x[i] - width resolved exactly in 32-bit mode, rounded in float64 otherwise)
    xi = np.cumsum(RNG.integers(0, 3, 300)).astype(np.int32)
    y = RNG.normal(size=(300, 1)).astype(FLOAT)
    stats = ("count", "sum", "mean", "std", "max", "median")
    programs = {}  # x traced: xi and xi - 10**6 share one program per width (same capacity)
    for x in (xi, xi.astype(np.float32) * np.float32(0.1), xi - 10**6):
        for w in (width, np.float32(width) * np.float32(0.1)):
            kw = dict(closed=closed, capacity=window_capacity(x, w))
            key = (x.dtype, np.asarray(w).dtype, float(w), kw["capacity"])
            if key not in programs:
                programs[key] = jax.jit(functools.partial(_both_roads, width=w, stats=stats, **kw))
            _assert_road_equal(*programs[key](x, y), stats)
    assert len(programs) == 4  # (the int32 axes shared theirs)


@pytest.mark.skipif(not X64, reason="needs JAX's 64-bit mode (int64 nanoseconds)")
def test_xwidth_kernel_on_a_time_axis_equals_pandas():
    pd = pytest.importorskip("pandas")
    t = np.datetime64("2026-01-01") + np.cumsum(RNG.integers(0, 3000, 500)).astype("m8[ms]")
    y = RNG.normal(size=500)
    y[::17] = np.nan
    got = jax.jit(lambda v: jaxsubset.rolling_statistic(
        t, v, "5s", ("count", "mean", "std", "max"), ddof=1, min_periods=2))(y)  # fmt: skip
    assert XW_TARGET in _lowered(lambda v: jaxsubset.rolling_statistic(t, v, "5s", "mean"), y)
    # (eager: the kernel in a bucketed program, t padded with its last time)
    eager = jaxsubset.rolling_statistic(t, y, "5s", ("count", "mean", "std", "max"), ddof=1,
                                        min_periods=2)  # fmt: skip
    roll = pd.Series(y, index=t).rolling("5s", min_periods=2)
    for s in ("count", "mean", "std", "max"):
        for res in (got, eager):
            np.testing.assert_allclose(np.asarray(res[s]), getattr(roll, s)().to_numpy(),
                                       rtol=1e-10, atol=1e-10, err_msg=s)  # fmt: skip
    # before/after durations: after "0s" is the trailing window (pandas' again), "2s" ends
    # each window by value; one kernel call under jit
    ba = {a: jax.jit(lambda v, a=a: jaxsubset.rolling_statistic(
        t, v, statistic=("count", "mean"), before="5s", after=a, min_periods=2))(y)
        for a in ("0s", "2s")}  # fmt: skip
    np.testing.assert_allclose(np.asarray(ba["0s"]["mean"]), roll.mean().to_numpy(), rtol=1e-10,
                               atol=1e-10)  # fmt: skip
    ref = jaxsubset.rolling_statistic(t, y, statistic=("count", "mean"), before="5s", after="2s",
                                      min_periods=2, method="reference")  # fmt: skip
    _assert_road_equal(ba["2s"], ref, ("count", "mean"))
    h = lambda v: jaxsubset.rolling_statistic(t, v, statistic="mean", before="5s", after="2s")  # noqa: E731
    assert _lowered(h, y).count(XW_TARGET) == 1
    with pytest.raises(ValueError, match="width"):
        jaxsubset.rolling_statistic(t, y, np.timedelta64(-5, "s"), "mean")
    huge = jax.jit(lambda v: jaxsubset.rolling_statistic(t, v, np.timedelta64(10**5, "D"),
                                                         "count"))(y)  # fmt: skip
    np.testing.assert_array_equal(np.asarray(huge), np.cumsum(~np.isnan(y)))


def test_xwidth_kernel_equals_pandas():
    pd = pytest.importorskip("pandas")
    x = np.cumsum(RNG.exponential(1.0, 3000)).astype(FLOAT).astype(float)
    y = RNG.normal(5.0, 1.0, 3000)
    y[::13] = np.nan
    stats = ("count", "sum", "mean", "std", "min", "max", "median")
    kw = dict(ddof=1, min_periods=3, capacity=256)
    got = _xw(x.astype(FLOAT), y.astype(FLOAT), 20.0, stats, "auto", **kw)
    roll = pd.Series(y, index=pd.to_datetime(x, unit="s")).rolling("20s", min_periods=3)
    tol = 1e-9 if X64 else 2e-4
    for s in stats:
        want = getattr(roll, s)().to_numpy()
        np.testing.assert_allclose(np.asarray(got[s], float), want, rtol=tol, atol=tol,
                                   err_msg=s)  # fmt: skip


@pytest.mark.parametrize("bad", [1e30, np.inf, np.nan])
def test_xwidth_a_value_outside_a_window_never_changes_it(bad):
    x = np.cumsum(RNG.exponential(1.0, N)).astype(FLOAT)
    y = RNG.normal(1.0, 1.0, (N, 1)).astype(FLOAT)
    y2 = y.copy()
    y2[123] = bad
    kw = dict(ddof=1, capacity=64)
    a = _xw(x, y, 8.0, XW_STATS, "native", **kw)
    b = _xw(x, y2, 8.0, XW_STATS, "native", **kw)
    r = jaxsubset.ranges.rolling(x, 8.0)
    st, ct = np.asarray(r.start), np.asarray(r.count)
    outside = (st > 123) | (st + ct <= 123)
    assert outside.sum() > N // 2
    for s in XW_STATS:
        np.testing.assert_array_equal(np.asarray(a[s])[outside], np.asarray(b[s])[outside],
                                      err_msg=s)  # fmt: skip
    z = np.r_[1e30 if X64 else 1e18, -3.0, np.zeros(60)].astype(FLOAT)
    out = _xw(np.arange(62.0, dtype=FLOAT), z, 3.0, ("sum", "mean", "var", "std"), "native")
    for s in out:
        assert (np.asarray(out[s])[4:] == 0.0).all(), s


def test_xwidth_traced_width_vmap_and_grad():
    x, y = XW_X, XW_Y
    stats = ("mean", "std", "max", "median")

    def f(v, w):
        return jaxsubset.rolling_statistic(x, v, w, stats, min_periods=2, capacity=512)

    traced = jax.jit(f)(y, 6.0)
    concrete = _xw(x, y, 6.0, stats, "auto", min_periods=2, capacity=512)
    for s in stats:
        np.testing.assert_array_equal(np.asarray(traced[s]), np.asarray(concrete[s]), err_msg=s)
    ys = np.stack([y, y[::-1] * 3, y + 1]).astype(FLOAT)
    assert _lowered(jax.vmap(lambda v: f(v, 6.0)), ys).count(XW_TARGET) == 1
    ws = np.array([1.0, 6.0, 30.0], FLOAT)
    got = jax.jit(jax.vmap(f))(ys, ws)
    for i in range(3):
        one = jax.jit(f)(ys[i], ws[i])
        for s in stats:
            np.testing.assert_array_equal(np.asarray(got[s][i]), np.asarray(one[s]), err_msg=s)
    v = RNG.normal(size=(len(x), 1)).astype(FLOAT)

    def total(u, method):
        out = jaxsubset.rolling_statistic(x, u, 6.0, ("sum", "mean", "std", "max"),
                                          method=method)  # fmt: skip
        return sum(jnp.nansum(out[s]) for s in out)

    g_nat = jax.jit(jax.grad(total), static_argnums=(1,))(v, "native")
    g_tree = jax.jit(jax.grad(total), static_argnums=(1,))(v, "tree")
    np.testing.assert_allclose(np.asarray(g_nat), np.asarray(g_tree), rtol=1e-5, atol=1e-5)
    bad = jax.jit(f)
    with pytest.raises(Exception, match="width"):
        jax.block_until_ready(bad(y, -1.0))


@pytest.mark.parametrize("policy", ["propagate", "omit"])
@pytest.mark.parametrize(("width", "mp"), [(1.0, 1), (7.0, 4), (64.0, 0), (2.5, 1), (N + 9.0, 3)])
def test_xwidth_kernel_on_an_evenly_spaced_axis(width, mp, policy):
    # windows of a fixed number of rows, found so from x in the kernel: the block loop
    # (sliding.cc) computes them; the same results as the reference road, locality kept
    x = np.arange(N, dtype=FLOAT) * FLOAT(0.5) - 7
    cap = window_capacity(x, width / 2)
    kw = dict(nan_policy=policy, min_periods=mp, ddof=1, capacity=cap)
    stats = ("count", "sum", "mean", "var", "std", "sem", "min", "max", "median")
    nat, ref = _xw_roads(x, XW_Y, width / 2, stats, **kw)
    _assert_road_equal(nat, ref, stats)
    y2 = XW_Y.copy()
    y2[150, 1] = 1e30 if X64 else 1e18
    far = _xw(x, y2, width / 2, stats, "native", **kw)
    r = jaxsubset.ranges.rolling(x, FLOAT(width / 2))
    st, ct = np.asarray(r.start), np.asarray(r.count)
    outside = (st > 150) | (st + ct <= 150)
    for s in stats:
        np.testing.assert_array_equal(np.asarray(far[s])[outside], np.asarray(nat[s])[outside],
                                      err_msg=s)  # fmt: skip


@pytest.mark.parametrize(("head", "width"), [(3, 5.0), (1, 5.0), (6, 25.0)])
def test_xwidth_kernel_axis_fixed_only_after_a_gap(head, width):
    # evenly spaced after a gap: every window past the gap holds the same rows, the ones
    # before it hold more (all the head's rows): not windows of a fixed number of rows, so
    # the block loop must not take them (it did: the head's windows were cut to w rows)
    pd = pytest.importorskip("pandas")
    x = np.concatenate([0.1 * np.arange(head), 10.0 * np.arange(1, 60)]).astype(FLOAT)
    y = (np.arange(len(x)) + 1.0).astype(FLOAT)[:, None]
    stats = ("count", "sum", "mean", "max", "median", "first")
    nat, ref = _xw_roads(x, y, width, stats, capacity=64)
    _assert_road_equal(nat, ref, stats)
    want = pd.Series(y[:, 0], index=pd.to_datetime(x.astype(float), unit="s"))
    np.testing.assert_allclose(np.asarray(nat["sum"], float)[:, 0],
                               want.rolling(f"{width}s").sum().to_numpy())  # fmt: skip


@pytest.mark.parametrize("where", ["first", "late"])
def test_xwidth_kernel_evenly_spaced_but_one_gap_in_any_piece_of_the_check(where):
    # the evenly-spaced check reads x in pieces of 2^18 rows over the thread pool: a gap of
    # one more step in any piece (here the first or the third) makes the windows after it hold
    # fewer rows, so the call must leave the fixed-count loop (counts from NumPy's searchsorted)
    piece = 1 << 18
    n = 2 * piece + 1000
    x = np.arange(n, dtype=FLOAT)
    k = 100 if where == "first" else 2 * piece + 500
    x[k:] += FLOAT(1.0)
    y = np.cos(np.arange(n, dtype=FLOAT))[:, None]
    stats = ("count", "sum", "max")
    nat = _xw(x, y, 4.0, stats, "native")
    lo = np.searchsorted(x, x - FLOAT(4.0), side="right")
    np.testing.assert_array_equal(np.asarray(nat["count"])[:, 0], np.arange(1, n + 1) - lo)
    assert int(np.asarray(nat["count"])[k + 1, 0]) == 3  # (the window past the gap)
    ref = _xw(x, y, 4.0, stats, "reference", capacity=8)
    _assert_road_equal(nat, ref, stats)


@pytest.mark.parametrize("closed", CLOSED)
def test_xwidth_eager_calls_on_axes_either_mode_holds(closed):
    # int32 and float32 axes (no 64-bit positions: the call is not moved to 64-bit mode):
    # eager calls run the kernel in one program per bucket in BOTH modes, with the width in
    # the mode's dtype as under jit (an int width 2**24 + 1 on an integer axis stays exact;
    # a float one is float32's in 32-bit mode); equal to the jitted call of the unpadded rows
    from compilations import compilations

    xi = np.cumsum(RNG.integers(1, 3, N)).astype(np.int32) * 2**16  # (no ties: the count by hand)
    xf = (np.cumsum(RNG.uniform(0.5, 1.5, N)) * 0.25).astype(np.float32)
    stats = ("count", "sum", "mean", "max")
    kw = dict(closed=closed, min_periods=0)
    for x, widths in (
        (xi, (2**24 + 1, 2**24 + 1.0, 3 * 2**16 + 0.5, 1e10)),
        (xf, (2.5, 0.0, 1e300)),
    ):
        for w in widths:
            jax.clear_caches()
            with compilations() as seen:
                eager = {n: jaxsubset.rolling_statistic(x[:n], XW_Y[:n], w, stats, **kw)
                         for n in (N, N - 43)}  # fmt: skip
            assert seen.of("_xwidth_program") == 1, (x.dtype, w)
            for n, got in eager.items():  # (a window reaching every earlier row is one
                # the jitted call may sum by the fixed-count loop: the moments to a few ulps)
                _assert_road_equal(got, _xw(x[:n], XW_Y[:n], w, stats, "auto", **kw), stats)
            if isinstance(w, int):  # an int width is exact in both modes: counted by hand
                left_open, right_closed = sides_of(closed)
                xs = x.astype(np.int64)
                below = np.searchsorted(xs, xs - 2**24 - 1, side="right" if left_open else "left")
                upto = np.arange(N) + right_closed
                got = np.asarray(eager[N]["count"])[:, 1]  # (channel 1 holds no NaN)
                np.testing.assert_array_equal(got, upto - below)


def sides_of(closed):
    """(whether the left end is open, whether the right end is closed) of pandas' ``closed``."""
    return closed in ("right", "neither"), closed in ("right", "both")


@pytest.mark.skipif(not X64, reason="32-bit mode: eager widths keep the host's exact road")
@pytest.mark.parametrize("closed", CLOSED)
def test_xwidth_eager_calls_take_the_kernel_in_one_program_per_bucket(closed):
    # an eager call pads x (with its last value) and y to a bucket and runs the x-width
    # kernel with the length traced: the same bits as the jitted call of the unpadded rows
    # and as the reference road, two lengths of one bucket compiling one program
    from compilations import compilations

    stats = ("count", "sum", "mean", "std", "max", "first", "median")
    kw = dict(closed=closed, min_periods=2, ddof=1, capacity=window_capacity(XW_X, 7.5))
    jax.clear_caches()
    with compilations() as seen:
        eager = {n: jaxsubset.rolling_statistic(XW_X[:n], XW_Y[:n], 7.5, stats, **kw)
                 for n in (N, N - 43)}  # fmt: skip
    assert seen.of("_xwidth_program") == 1
    for n, got in eager.items():
        jitted = _xw(XW_X[:n], XW_Y[:n], 7.5, stats, "auto", **kw)
        ref = _xw(XW_X[:n], XW_Y[:n], 7.5, stats, "reference", **kw)
        for s in stats:
            assert got[s].shape == (n, 2), s
            np.testing.assert_array_equal(np.asarray(got[s]), np.asarray(jitted[s]), err_msg=s)
        _assert_road_equal(got, ref, stats)
