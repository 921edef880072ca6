"""Hostile axes in both JAX modes (issue 31): positions JAX's 32-bit mode cannot hold, EWM
numerics, bool/tz-aware/infinite/subnormal axes, and the conventions kept.

In JAX's default 32-bit mode float64 positions far from zero (Unix-epoch seconds), int64 beyond
int32 and time axes are resolved as in 64-bit mode (``jaxsubset.resolve._exact``): every test here
checks the right answer against an independent reference (NumPy, pandas, SciPy, polars, exact
Python arithmetic), or a clear error naming the argument. The property test draws the axes;
the regression tests pin every case of the issue (each failed before its fix). Lengths are
fixed and small, so each test compiles a handful of programs.
"""

import datetime as dt
import os
from fractions import Fraction

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import HealthCheck, given, settings, strategies as st

import jaxsubset
from references import X64, pandas_rows


N = 12  # every drawn axis has this many points: one program per configuration


def _exact_ns(t):
    """Dates (naive or a tz-aware pandas index) as exact int64 nanoseconds (UTC)."""
    if getattr(getattr(t, "dtype", None), "tz", None) is not None:
        t = t.tz_convert(None)
    return np.asarray(t).astype("datetime64[ns]").view(np.int64)


def _positions(x):
    """The exact positions of a drawn axis: int64 ns for dates, int for bool, else as given."""
    if getattr(getattr(x, "dtype", None), "kind", None) == "M":
        return _exact_ns(x)
    arr = np.asarray(x)
    return arr.astype(np.int64) if arr.dtype.kind == "b" else arr


# ------------------------------------------------------------------------- the axes drawn
def _float_far(draw):
    base = draw(st.sampled_from([1e9, 1.7e9, 1e15, -1.7e9]))
    steps = draw(st.lists(st.integers(0, 3), min_size=N, max_size=N))
    unit = draw(st.sampled_from([0.5, 0.25, 1.0, 0.125]))
    return base + np.cumsum(steps) * unit, unit


def _int_edge(draw):
    edge = draw(st.sampled_from([2**31 - 20, -(2**31) - 5, 2**31 + 3, 2**40]))
    steps = draw(st.lists(st.integers(0, 3), min_size=N, max_size=N))
    return (edge + np.cumsum(steps)).astype(np.int64), 1


def _bool(draw):
    k = draw(st.integers(0, N))
    return np.arange(N) >= k, 1


def _subnormal(draw):
    steps = draw(st.lists(st.integers(0, 3), min_size=N, max_size=N))
    unit = 5e-324 * draw(st.sampled_from([1, 7, 2**20]))
    return -1e-310 + np.cumsum(steps) * unit, unit


def _dates(draw, tz):
    steps = draw(st.lists(st.integers(0, 3), min_size=N, max_size=N))
    unit = draw(st.sampled_from(["1h", "1D", "1s"]))
    t = pd.Timestamp("2024-03-30") + np.cumsum(steps) * pd.Timedelta(unit)
    idx = pd.DatetimeIndex(t)
    if tz:
        idx = idx.tz_localize("Europe/Berlin", nonexistent="shift_forward", ambiguous=False)
        idx = idx.sort_values()
    return idx, pd.Timedelta(unit)


@st.composite
def axes(draw):
    kind = draw(st.sampled_from(["far", "int", "bool", "subnormal", "dates", "dates_tz"]))
    maker = {
        "far": _float_far, "int": _int_edge, "bool": _bool, "subnormal": _subnormal,
        "dates": lambda d: _dates(d, False), "dates_tz": lambda d: _dates(d, True),
    }[kind]  # fmt: skip
    x, unit = maker(draw)
    return kind, x, unit


def _width(kind, unit, k):
    """A width of ``k`` units in the axis's terms, and the same in exact positions."""
    if kind.startswith("dates"):
        return unit * k, int(unit.value) * k
    if kind == "bool":
        return k, k
    return unit * k, unit * k


def _constructed(make, counts, sums=None):
    """A constructor's Subsets have the exact counts (and sums of ``arange`` values), or, in
    32-bit mode only, it refuses with a clear error naming ``x`` (``Subsets.x`` of int64
    beyond int32 or of dates would be int64)."""
    try:
        s = make()
    except (TypeError, ValueError) as e:
        assert not X64 and "`x`" in str(e), e
        return
    np.testing.assert_array_equal(np.asarray(s.count).reshape(-1), counts)
    if sums is not None:
        np.testing.assert_array_equal(np.asarray(s.sum()).reshape(-1), sums)


# ------------------------------------------------------------------ the property, both modes
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ax=axes(), k=st.integers(1, 3), a=st.integers(0, N - 1), b=st.integers(0, N - 1))
def test_hostile_axes_right_answer_or_clear_error(ax, k, a, b):
    kind, x, unit = ax
    p = _positions(x)
    xs = np.asarray(x) if not kind.startswith("dates") else x
    lo_i, hi_i = sorted((a, b))
    lo, hi = (x[lo_i], x[hi_i])
    y = np.cos(np.arange(N)).astype(np.float32)
    # ranges.select: NumPy's searchsorted on the exact positions
    r = jaxsubset.ranges.select(xs, lo, hi)
    want = np.searchsorted(p, p[hi_i], "left") - np.searchsorted(p, p[lo_i], "left")
    assert int(r.count) == want
    # the constructor: the same subsets, or (32-bit mode) a clear error naming x
    _constructed(
        lambda: jaxsubset.select(xs, np.arange(N, dtype=np.float32), lo, hi, capacity=N),
        [want],
        [float(np.arange(N)[np.searchsorted(p, p[lo_i]) :][:want].sum())],
    )
    # the index constructors carry x into Subsets.x as JAX holds it (or refuse it by name)
    _constructed(lambda: jaxsubset.chunks(xs, y, 3), [4, 4, 4])
    _constructed(lambda: jaxsubset.sliding(xs, y, 5, step=5), [5, 5])
    _constructed(lambda: jaxsubset.isolate(xs, y, a, b, capacity=N), [max(b - a, 0)])
    # binned_statistic: NumPy's digitize on the exact positions (SciPy's bins)
    edges = x[[0, lo_i, max(hi_i, lo_i + 1) if lo_i + 1 < N else lo_i, N - 1]]
    if kind.startswith("dates") or kind == "bool":
        e_exact = _positions(edges if not kind.startswith("dates") else pd.DatetimeIndex(edges))
    else:
        e_exact = np.asarray(edges)
    if np.all(np.diff(e_exact) > 0):
        res = jaxsubset.binned_statistic(xs, y, "count", bins=np.asarray(edges))
        d = np.searchsorted(e_exact, p, "right")
        d[p == e_exact[-1]] -= 1  # the last edge closed, as SciPy
        np.testing.assert_array_equal(res.binnumber, d)
        np.testing.assert_array_equal(res.statistic, np.bincount(d, minlength=5)[1:4])
        _constructed(
            lambda: jaxsubset.bins(xs, y, np.asarray(edges), capacity=N),
            np.bincount(d, minlength=5)[1:4],
        )
        if kind in ("far", "int", "bool"):  # (SciPy's last-edge rounding fails on subnormals)
            ref = scipy.stats.binned_statistic(p, y, "count", bins=e_exact)
            np.testing.assert_array_equal(res.statistic, ref.statistic)
    if kind == "subnormal":  # arithmetic on subnormals is flushed: refused by name
        with pytest.raises(ValueError, match=r"rolling_statistic: `x` holds the subnormal"):
            jaxsubset.rolling_statistic(xs, y, unit, "count")
        return
    # x-width windows: pandas' row rule on exact integer positions (scaled to integers)
    width, w_exact = _width(kind, unit, k)
    scale = 1 if kind in ("int", "bool") or kind.startswith("dates") else 1 / unit
    ints = np.round((p - p[0]) * scale).astype(np.int64) if kind != "int" else p - p[0]
    start, count = pandas_rows(ints, int(round(w_exact * scale)), "right")
    got = jaxsubset.ranges.rolling(xs, width)
    np.testing.assert_array_equal(np.asarray(got.count), count)
    np.testing.assert_array_equal(np.asarray(got.start), start)
    _constructed(lambda: jaxsubset.rolling(xs, y, width, capacity=N), count)
    rs = jaxsubset.rolling_statistic(xs, y, width, ("count", "sum"))
    np.testing.assert_array_equal(rs["count"], count)
    sums = [y[s0 : s0 + c].sum(dtype=np.float64) for s0, c in zip(start, count, strict=True)]
    np.testing.assert_allclose(rs["sum"], sums, rtol=1e-5, atol=1e-5)
    # nearest: the first sample of the smallest exact distance
    v = x[a]
    want_i = int(np.searchsorted(p, p[a], "left"))
    assert int(jaxsubset.nearest(xs, [v])[0]) == want_i
    # ranges.dynamic: windows of `k` units from the epoch (exact in the positions' integers)
    every, e_ex = _width(kind, unit, k)
    dyn = jaxsubset.ranges.dynamic(xs, every)
    lo_w, _ = jaxsubset.dynamic_bounds(xs, every)
    lo_p = _positions(pd.DatetimeIndex(lo_w)) if kind.startswith("dates") else lo_w
    first = (p[0] // e_ex) * e_ex
    assert lo_p[0] == first
    want_c = [
        np.sum((p >= first + j * e_ex) & (p < first + (j + 1) * e_ex)) for j in range(len(lo_w))
    ]
    np.testing.assert_array_equal(np.asarray(dyn.count), want_c)
    _constructed(lambda: jaxsubset.dynamic(xs, y, every, capacity=N), want_c)
    # ewm_statistic: pandas' weights, from the exact time differences
    h, h_ex = _width(kind, unit, 2)
    m = np.asarray(jaxsubset.ewm_statistic(xs, y, h, "mean"), np.float64)
    rel = (p - p[0]).astype(np.float64)
    wts = [0.5 ** ((rel[i] - rel[: i + 1]) / h_ex) for i in range(N)]
    ref_m = [np.sum(w * y[: i + 1]) / np.sum(w) for i, w in enumerate(wts)]
    np.testing.assert_allclose(m, ref_m, rtol=2e-5, atol=2e-5)


# ------------------------------------------- 1. positions JAX's 32-bit mode cannot hold
def test_epoch_seconds_rolling_select_nearest_are_exact():
    x = 1.7e9 + np.arange(20) * 0.5
    got = jaxsubset.rolling_statistic(x, np.ones(20), 2.0, "count")
    np.testing.assert_array_equal(got, [1, 2, 3, 4] + [4] * 16)  # pandas' offset windows
    x2 = 1.7e9 + np.arange(40) * 5.0
    assert int(jaxsubset.ranges.select(x2, 1.7e9 + 50, 1.7e9 + 100).count) == 10
    assert int(jaxsubset.nearest(x2, 1.7e9 + 52.0)) == 10
    assert jaxsubset.ranges.dynamic(1e9 + np.arange(20) * 0.5, 2.0).count.tolist() == [4] * 5
    s = jaxsubset.select(x2, np.arange(40.0), 1.7e9 + 50, 1.7e9 + 100, capacity=16)
    assert int(s.count) == 10 and float(s.sum()) == float(np.arange(10, 20).sum())


def test_epoch_seconds_binned_and_ewm():
    x = 1.7e9 + np.arange(40) * 5.0
    edges = [1.7e9, 1.7e9 + 0.5, 1.7e9 + 100]  # strictly increasing in float64
    res = jaxsubset.binned_statistic(x, np.ones(40), "count", bins=edges)
    np.testing.assert_array_equal(res.statistic, [1, 20])
    np.testing.assert_array_equal(res.bin_edges, edges)
    y = np.sin(np.arange(40)).astype(np.float32)
    got = np.asarray(jaxsubset.ewm_statistic(x, y, 7.0, "mean"), np.float64)
    t = pd.to_datetime((x - 1.7e9) * 1e9)
    want = pd.Series(y.astype(np.float64)).ewm(halflife=pd.Timedelta("7s"), times=t).mean()
    np.testing.assert_allclose(got, want.to_numpy(), rtol=1e-5, atol=1e-6)  # was 0.34 off


def test_nearest_query_between_samples_is_not_rounded():
    assert jaxsubset.nearest(np.array([0, 1, 1, 2, 4, 4, 4, 7]), [3.0000001]).tolist() == [4]


_X4 = np.arange(4.0)
_INT64_ROADS = {  # every road that takes y: (call, the exact total of its first result)
    "chunks": lambda y: jaxsubset.chunks(_X4, y, 1).sum()[0],
    "select": lambda y: jaxsubset.select(_X4, y, 0.0, 9.0, capacity=4).sum(),
    "rolling": lambda y: jaxsubset.rolling(_X4, y, 9.0, capacity=4).sum()[-1],
    "sliding": lambda y: jaxsubset.sliding(_X4, y, 4).sum()[0],
    "isolate": lambda y: jaxsubset.isolate(_X4, y, 0, 4, capacity=4).sum(),
    "bins": lambda y: jaxsubset.bins(_X4, y, [0.0, 9.0], capacity=4).sum()[0],
    "dynamic": lambda y: jaxsubset.dynamic(_X4, y, 9.0, capacity=4).sum()[0],
    "rolling_statistic": lambda y: jaxsubset.rolling_statistic(_X4, y, 9.0, "sum")[-1],
    "range_statistic": lambda y: jaxsubset.range_statistic(
        y, jaxsubset.ranges.chunks(_X4, 1), "sum"
    )[0],
    "binned_statistic": lambda y: jaxsubset.binned_statistic(_X4, y, "sum", 1).statistic[0],
    "ewm_statistic": lambda y: jaxsubset.ewm_statistic(_X4, y, 1e-9, "mean")[0],
}


@pytest.mark.parametrize("road", sorted(_INT64_ROADS))
def test_int64_y_is_refused_or_exact_on_every_road(road):
    y = np.array([2**40, 1, 2, 3], np.int64)
    want = 2**40 if road == "ewm_statistic" else 2**40 + 6
    if X64:
        assert float(_INT64_ROADS[road](y)) == want
    else:  # it wrapped (chunks(...).sum() was 6)
        with pytest.raises(ValueError, match=r"`(y|values)` holds 1099511627776"):
            _INT64_ROADS[road](y)


def test_traced_bound_next_to_an_unheld_x_is_resolved_as_in_64_bit_mode():
    # 32-bit mode: the resolution is traced in a scoped 64-bit mode (float64 arithmetic on
    # the closed-over x, the traced width as JAX holds it); it gave all 1s (x rounded)
    x = 1.7e9 + np.arange(8) * 0.5
    want = [1, 2, 2, 2, 2, 2, 2, 2]
    f = jax.jit(lambda w: jaxsubset.rolling_statistic(x, np.ones(8), w, "count"))
    np.testing.assert_array_equal(f(1.0), want)
    g = jax.jit(lambda w: jaxsubset.ranges.rolling(x, w).count)
    assert g(1.0).tolist() == want and g(1.0).dtype == jaxsubset._core._validate.index_dtype()
    h = jax.jit(lambda lo: jaxsubset.select(x, np.arange(8.0), lo, x[-1], capacity=8).sum())
    assert float(h(1.7e9)) == 0 + 1 + 2 + 3 + 4 + 5 + 6  # (a bound float32 holds exactly)
    k = jax.jit(lambda e: jaxsubset.ranges.dynamic(x, e, num_windows=4).count)
    assert k(1.0).tolist() == [2, 2, 2, 2]
    m = jax.jit(lambda hl: jaxsubset.ewm_statistic(x, np.arange(8.0), hl, "mean"))
    want_m = jaxsubset.ewm_statistic(x, np.arange(8.0), 1.0, "mean")
    np.testing.assert_allclose(m(1.0), want_m, rtol=1e-6)
    # binned_statistic finds bins on the host: traced edges next to such x are refused
    b = jax.jit(lambda e: jaxsubset.binned_statistic(x, np.ones(8), "count", e).statistic)
    if X64:
        assert b(jnp.asarray([1.7e9, 1.7e9 + 1, 1.7e9 + 4])).tolist() == [2, 6]
    else:
        with pytest.raises(TypeError, match=r"`x` holds 1700000000.5.*`bins` is traced"):
            b(jnp.asarray([0.0, 1.0]))


def test_float32_window_bounds_are_exact_sums():
    # 1e7 + 2 - 2.5 is 1e7 - 0.5, which float32 rounds to 1e7: the point at 1e7 was dropped
    x = np.float32(1e7) + np.arange(5, dtype=np.float32)
    want = [1, 2, 3, 3, 3]
    assert jaxsubset.ranges.rolling(x, 2.5).count.tolist() == want
    f = jax.jit(lambda x: jaxsubset.ranges.rolling(x, 2.5).count)
    assert f(jnp.asarray(x)).tolist() == want
    assert jaxsubset.ranges.rolling(x, 2.5, at=x).count.tolist() == want
    out = jaxsubset.stream([(x, np.ones(5))], "rolling", width=2.5, capacity=8, statistic="sum")
    assert out["count"].tolist() == want


def test_time_axes_in_32_bit_mode_equal_64_bit_mode():
    t = np.array(
        ["2024-01-01T00:00", "2024-01-01T06:00", "2024-01-02", "2024-01-05", "2024-01-09"],
        "datetime64[ns]",
    )
    y = np.array([1.0, 2.0, 4.0, 8.0, 16.0], np.float32)

    def run():
        return (
            np.asarray(jaxsubset.rolling_statistic(t, y, "2D", "sum"), np.float64),
            np.asarray(jaxsubset.binned_statistic(t, y, "sum", bins="1D").statistic, np.float64),
            np.asarray(jaxsubset.ranges.dynamic(t, "1D").count).astype(np.int64),
            np.asarray(jaxsubset.ranges.select(t, "2024-01-01T03:00", "2024-01-06").count),
            int(jaxsubset.nearest(t, np.datetime64("2024-01-04"))),
            np.asarray(jaxsubset.ewm_statistic(t, y, "1D", "mean"), np.float64),
        )

    mine = run()
    with jax.enable_x64(True):  # the same calls in JAX's 64-bit mode
        ref = run()
    for a, b in zip(mine[:5], ref[:5], strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(mine[5], ref[5], rtol=1e-6)
    np.testing.assert_array_equal(mine[0], [1, 3, 7, 8, 16])  # pandas' 2D windows


# ----------------------------------------------------------------------- 2. EWM numerics
def _ewm_reference(x, y, h):
    """Weighted mean and unbiased variance in float64, no cancellation (pairs summed)."""
    means, vars_ = [], []
    for i in range(len(x)):
        w = 0.5 ** ((x[i] - x[: i + 1]) / h)
        yy = y[: i + 1].astype(np.float64)
        W = w.sum()
        m = (w * yy).sum() / W
        V = (w * (yy - m) ** 2).sum() / W
        E = sum(w[j] * (W - w[j]) for j in range(len(w))) / W**2
        means.append(m)
        vars_.append(V / E if E > 0 else np.nan)
    return np.array(means), np.array(vars_)


def test_ewm_var_of_float32_far_from_zero_keeps_its_digits():
    x = np.arange(64.0)
    for base, noise in ((1e4, 1e-3 * (np.arange(64) % 2)), (1e7, np.cos(np.arange(64)))):
        y = (base + noise).astype(np.float32)
        _, want = _ewm_reference(x, y, 5.0)
        got = np.asarray(jaxsubset.ewm_statistic(x, y, 5.0, "var"), np.float64)
        np.testing.assert_allclose(got[1:], want[1:], rtol=2e-5, atol=1e-12)  # was 40-185 %


def test_ewm_infinities_are_values():
    got = jaxsubset.ewm_statistic(np.arange(6.0), [1, 2, np.inf, 3, 4, 5], 1.0, ("mean", "std"))
    np.testing.assert_allclose(got["mean"], [1, 5 / 3, np.inf, np.inf, np.inf, np.inf], 1e-6)
    assert np.isnan(np.asarray(got["std"])[2:]).all()
    both = jaxsubset.ewm_statistic(np.arange(4.0), [1, np.inf, 2, -np.inf], 1.0)
    assert np.asarray(both)[1:3].tolist() == [np.inf, np.inf] and np.isnan(np.asarray(both)[3])


def test_ewm_traced_halflife_is_checked_like_traced_widths():
    f = jaxsubset.checked(
        jax.jit(lambda h: jaxsubset.ewm_statistic(jnp.arange(6.0), jnp.arange(6.0), h))
    )
    for h in (-1.0, 0.0, np.nan):
        with pytest.raises(ValueError, match=r"ewm_statistic: `halflife` must be > 0"):
            f(h)
    assert np.isfinite(np.asarray(f(2.0))).all()


def test_ewm_long_gap_variance_is_the_exact_limit_not_nan():
    x = np.array([0.0, 1.0, 2.0, 152.0])
    y = np.array([1.0, 2.0, 4.0, 3.0], np.float32)
    w = [Fraction(1, 2**152), Fraction(1, 2**151), Fraction(1, 2**150), Fraction(1)]
    W = sum(w)
    m = sum(a * int(b) for a, b in zip(w, y, strict=True)) / W
    q = sum(a * (int(b) - m) ** 2 for a, b in zip(w, y, strict=True))
    exact = float(q * W / (W * W - sum(a * a for a in w)))
    got = np.asarray(jaxsubset.ewm_statistic(x, y, 1.0, "var"))
    np.testing.assert_allclose(got[-1], exact, rtol=1e-5)


# --------------------------------------------------------------------------- 3. axis dtypes
def test_bool_x_is_zero_and_one():
    x = np.array([False, True, True])
    assert int(jaxsubset.ranges.select(x, 1, 2).count) == 2
    assert jaxsubset.ranges.dynamic(x, 1).count.tolist() == [1, 2]
    np.testing.assert_array_equal(jaxsubset.rolling_statistic(x, np.ones(3), 1, "count"), [1, 1, 2])
    res = jaxsubset.binned_statistic(x, np.ones(3), "count", bins=2)
    np.testing.assert_array_equal(res.statistic, np.histogram(x.astype(int), bins=2)[0])
    assert int(jaxsubset.nearest(x, 0.9)) == 1


def test_tz_aware_dates_are_their_utc_instants():
    d = pd.date_range("2024-01-01", periods=5, freq="D", tz="Europe/Berlin")
    naive = d.tz_convert(None)
    res = jaxsubset.binned_statistic(d, np.ones(5), "count", bins=2)
    ref = jaxsubset.binned_statistic(naive.values, np.ones(5), "count", bins=2)
    np.testing.assert_array_equal(res.statistic, ref.statistic)
    np.testing.assert_array_equal(res.bin_edges, ref.bin_edges)
    assert int(jaxsubset.ranges.select(d, d[1], d[3]).count) == 2
    assert int(jaxsubset.ranges.select(pd.Series(d), d[1], d[3]).count) == 2
    utc = dt.datetime(2024, 1, 2, 0, 0, tzinfo=dt.UTC)
    assert int(jaxsubset.nearest(d, utc)) == 1  # 2024-01-02T00:00+01:00 is 23:00 UTC


def test_infinite_x_in_hopping_windows_is_a_clear_error():
    for f in (jaxsubset.ranges.dynamic, jaxsubset.dynamic_bounds):
        with pytest.raises(ValueError, match=r"`x` holds inf: hopping windows need finite"):
            f(np.array([0.0, 1.0, np.inf]), 1.0)


def test_subnormal_x_binned_as_numpy():
    x = np.array([-0.9e-308])
    res = jaxsubset.binned_statistic(x, None, "count", bins=2, range=(-1e-308, -2e-313))
    np.testing.assert_array_equal(res.statistic, np.histogram(x, 2, (-1e-308, -2e-313))[0])


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32])
def test_small_int_x_with_a_range_beyond_its_dtype(dtype):
    x = np.array([1, 2, 3, 100], dtype)
    res = jaxsubset.binned_statistic(x, None, "count", bins=2, range=(0, 1000))
    np.testing.assert_array_equal(res.statistic, np.histogram(x, bins=2, range=(0, 1000))[0])


def test_dynamic_under_jit_near_the_int32_maximum():
    x = np.array([2**31 - 10, 2**31 - 5, 2**31 - 2], np.int32)
    eager = jaxsubset.ranges.dynamic(x, 4)
    f = jax.jit(lambda x: jaxsubset.ranges.dynamic(x, 4, num_windows=eager.count.shape[0]))
    traced = f(jnp.asarray(x))
    assert traced.count.tolist() == eager.count.tolist() == [1, 1, 1]
    assert traced.start.tolist() == eager.start.tolist()


def test_hopping_windows_eager_equal_jit_for_steps_that_are_not_binary_fractions():
    x = np.round(np.arange(0, 3, 0.1), 1).astype(np.float32)  # points on the edges
    eager = jaxsubset.ranges.dynamic(x, 0.1)
    k = eager.count.shape[0]
    traced = jax.jit(lambda x: jaxsubset.ranges.dynamic(x, 0.1, num_windows=k))(jnp.asarray(x))
    assert traced.count.tolist() == eager.count.tolist()
    assert traced.start.tolist() == eager.start.tolist()


def test_half_float_values_everywhere_and_bfloat16_x_refused_by_name():
    x = np.arange(8.0)
    for dtype in (np.float16, ml_dtypes.bfloat16):
        y = np.arange(8.0).astype(dtype)
        res = jaxsubset.binned_statistic(x, y, "mean", bins=2)
        np.testing.assert_allclose(res.statistic, [1.5, 5.5])
        np.testing.assert_allclose(jaxsubset.ewm_statistic(x, y, 2.0, "mean")[:1], [0.0])
    with pytest.raises(TypeError, match=r"`x` must be numeric, got dtype bfloat16 \(bfloat16"):
        jaxsubset.ranges.select(x.astype(ml_dtypes.bfloat16), 1.0, 4.0)


# ---------------------------------------------------------------------------- 4. conventions
def test_polars_week_strings_start_on_monday():
    pl = pytest.importorskip("polars")
    d = np.arange(np.datetime64("2024-01-03"), np.datetime64("2024-02-20")).astype("M8[ns]")
    df = pl.DataFrame({"t": d, "y": np.ones(d.size)})
    for every in ("1w", "2w"):
        want = df.group_by_dynamic("t", every=every).agg(pl.len())
        lo, _ = jaxsubset.dynamic_bounds(d, every)
        counts = np.asarray(jaxsubset.ranges.dynamic(d, every).count)
        keep = counts > 0
        assert lo[keep].astype("M8[us]").tolist() == want["t"].to_list()
        assert counts[keep].tolist() == want["len"].to_list()


def test_traced_every_in_dynamic_bounds_is_a_clear_error():
    with pytest.raises(TypeError, match=r"dynamic_bounds: .*`every` is traced"):
        jax.jit(lambda e: jaxsubset.dynamic_bounds(np.arange(4.0), e)[0])(1.0)


def test_bucketed_rolling_quantiles_are_bit_identical(monkeypatch):
    # with XLA's optimisations (users' build), where fused multiply-adds differed by 1-2 ulps
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 100, 120))
    y = rng.normal(size=120).astype(np.float32)
    before = jax.config.read("jax_disable_most_optimizations")
    jax.config.update("jax_disable_most_optimizations", False)
    try:
        out = {}
        for mode in ("on", "off"):
            monkeypatch.setenv("JAXSUBSET_BUCKETS", mode)
            out[mode] = np.asarray(
                jaxsubset.rolling_statistic(x, y, 5.0, "quantile", q=0.3, capacity=16)
            )
    finally:
        jax.config.update("jax_disable_most_optimizations", before)
    np.testing.assert_array_equal(out["on"], out["off"])
    assert os.environ.get("JAXSUBSET_BUCKETS") == "off"


def test_docs_run_time_check_section_holds_for_this_jax():
    # docs/guide/checks-and-cache.md: a fired check under a jit of one's own is JAX's
    # JaxRuntimeError on EVERY call in JAX >= 0.10 (the docs said ValueError on later calls),
    # and `checked` turns it into the plain ValueError
    x = jnp.arange(10.0)

    @jax.jit
    def total(stop):
        return jaxsubset.check_overflow(jaxsubset.isolate(x, x, 0, stop, capacity=4)).sum()

    if tuple(int(p) for p in jax.__version__.split(".")[:2]) >= (0, 10):
        for _ in range(3):
            with pytest.raises(jax.errors.JaxRuntimeError, match="capacity"):
                total(8)
    for _ in range(2):
        with pytest.raises(ValueError, match="capacity"):
            jaxsubset.checked(total)(8)
