"""Hostile property tests of hopping/tumbling windows, calendar bins, time-based EWM and the
streamed and sharded roads, against polars, pandas, exact references and the in-memory path.

Every test is cheap: arrays of one or two fixed lengths (JAX compiles per shape), few static
variants, so the module runs in seconds per JAX mode.
"""

import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import example, given, settings, strategies as st

import jaxsubset
from references import FLOAT, X64, needs_x64, tol


CLOSED = {"left": "left", "right": "right", "both": "both", "neither": "none"}
INT = np.int64 if X64 else np.int32
closed_st = st.sampled_from(sorted(CLOSED))


def sorted_ints(n, lo=-40, hi=40):
    return st.lists(st.integers(lo, hi), min_size=n, max_size=n).map(sorted)


def windows_by_numpy(x, lo, hi, closed):
    """``(start, count)`` of the points inside ``lo .. hi`` by ``closed``, with NumPy."""
    left = "left" if closed in ("left", "both") else "right"
    right = "right" if closed in ("right", "both") else "left"
    start = np.searchsorted(x, lo, side=left)
    return start, np.maximum(np.searchsorted(x, hi, side=right) - start, 0)


def polars_windows(t, y, every, period, offset, closed):
    df = pl.DataFrame({"t": t, "y": y})
    return df.group_by_dynamic(
        "t", every=every, period=period, offset=offset, closed=CLOSED[closed],
        include_boundaries=True,
    ).agg(pl.col("y").sum().alias("sum"), pl.len())  # fmt: skip


def check_against_polars(t, y, r, lo, out, closed, as_dt=False):
    """polars keeps the non-empty windows only: ours, in order, are those plus empty ones."""
    count = np.asarray(r.count)
    ks = np.flatnonzero(count > 0)
    assert ks.size == out.height
    np.testing.assert_array_equal(count[ks], out["len"].to_numpy())
    want_lo = out["_lower_boundary"].to_numpy()
    np.testing.assert_array_equal(lo[ks], want_lo.astype("datetime64[ns]") if as_dt else want_lo)
    sums = np.asarray(jaxsubset.range_statistic(jnp.asarray(y, FLOAT), r, "sum"))
    np.testing.assert_allclose(sums[ks], out["sum"].to_numpy(), **tol())


# ---------------------------------------------------------------- hopping/tumbling windows


@given(
    t=sorted_ints(9),
    every=st.integers(1, 8),
    period=st.none() | st.integers(1, 17),
    offset=st.integers(-13, 13),
    closed=closed_st,
)
# the first window, open at its start, moved back exactly ONTO the first point: it was lost
@example(t=[-21, 7, 12, 12, 12, 12, 12, 12, 12], every=1, period=3, offset=9, closed="right")
@example(t=[0] * 9, every=2, period=None, offset=4, closed="neither")
def test_dynamic_integer_axis_matches_polars(t, every, period, offset, closed):
    t = np.asarray(t, np.int64)
    y = np.linspace(-1.0, 1.0, t.size) ** 3
    r = jaxsubset.ranges.dynamic(t.astype(INT), every, period=period, offset=offset, closed=closed)
    lo, hi = jaxsubset.dynamic_bounds(t, every, period=period, offset=offset, closed=closed)
    per = None if period is None else f"{period}i"
    out = polars_windows(t, y, f"{every}i", per, f"{offset}i", closed)
    check_against_polars(t, y, r, lo, out, closed)
    # the bounds are the windows cut: every point lies in the window(s) that its x says
    start, count = windows_by_numpy(t, lo, hi, closed)
    np.testing.assert_array_equal(np.asarray(r.count), count)
    np.testing.assert_array_equal(np.asarray(r.start)[count > 0], start[count > 0])
    # window k starts at s_0 + k * every, at or before the first point (before, for windows
    # open at their start), the last at or before the last point; with period >= every every
    # point is in a window (but on an edge of "neither" windows)
    np.testing.assert_array_equal(np.diff(lo), every)
    assert lo[0] < t[0] if closed in ("right", "neither") else lo[0] <= t[0]
    assert lo[-1] <= t[-1] < lo[-1] + every
    if (period or every) >= every and closed != "neither":
        assert count.sum() >= t.size


@needs_x64
@settings(max_examples=25)
@given(
    hours=st.lists(st.integers(-24 * 60, 24 * 60), min_size=7, max_size=7).map(sorted),
    every=st.integers(1, 50),
    period=st.none() | st.integers(1, 80),
    offset=st.integers(-30, 30),
    closed=closed_st,
)
@example(hours=[-48, 0, 0, 1, 5, 5, 70], every=24, period=None, offset=24, closed="right")
def test_dynamic_fixed_durations_before_and_after_1970_match_polars(
    hours, every, period, offset, closed
):
    t = np.datetime64("1970-01-01", "ns") + np.asarray(hours, "timedelta64[h]").astype(
        "timedelta64[ns]"
    )
    y = np.cos(np.arange(t.size, dtype=np.float64))
    per = None if period is None else f"{period}h"
    kw = dict(period=per, offset=f"{offset}h", closed=closed)
    r = jaxsubset.ranges.dynamic(t, f"{every}h", **kw)
    lo, _ = jaxsubset.dynamic_bounds(t, f"{every}h", **kw)
    out = polars_windows(t, y, f"{every}h", per, f"{offset}h", closed)
    check_against_polars(t, y, r, lo, out, closed, as_dt=True)


@needs_x64
@settings(max_examples=25)
@given(
    days=st.lists(st.integers(-700, 700), min_size=7, max_size=7).map(sorted),
    month_start=st.booleans(),
    unit=st.sampled_from(["mo", "q", "y"]),
    every=st.integers(1, 4),
    period=st.none() | st.integers(1, 4),
    offset=st.integers(0, 27),
    closed=closed_st,
)
def test_dynamic_calendar_windows_around_1970_match_polars(
    days, month_start, unit, every, period, offset, closed
):
    t = np.datetime64("1969-11-30", "D") + np.asarray(days, "timedelta64[D]")
    if month_start:  # points on the month starts: ties with window edges
        t = t.astype("datetime64[M]").astype("datetime64[D]")
    t = t.astype("datetime64[ns]")
    y = np.sin(np.arange(t.size, dtype=np.float64))
    per = None if period is None else f"{period}{unit}"
    kw = dict(period=per, offset=f"{offset}D", closed=closed)
    r = jaxsubset.ranges.dynamic(t, f"{every}{unit}", **kw)
    lo, _ = jaxsubset.dynamic_bounds(t, f"{every}{unit}", **kw)
    out = polars_windows(t, y, f"{every}{unit}", per, f"{offset}d", closed)
    check_against_polars(t, y, r, lo, out, closed, as_dt=True)


@jax.jit
def _traced_int_windows(x, every, offset):
    r = jaxsubset.ranges.dynamic(x, every, offset=offset, closed="right", num_windows=40)
    return r.start, r.count


@jax.jit
def _traced_float_windows(x, every, period, offset):
    r = jaxsubset.ranges.dynamic(
        x, every, period=period, offset=offset, closed="neither", num_windows=40
    )
    return r.start, r.count


@settings(max_examples=30)
@given(
    t=sorted_ints(8, -20, 20),
    every=st.integers(2, 6),
    offset=st.integers(-9, 9),
    scale=st.sampled_from([0.25, 0.5, 1.0]),
    period=st.sampled_from([0.25, 1.0, 3.0]),
)
@example(t=[0, 5, 5, 6, 7, 8, 9, 10], every=2, offset=4, scale=1.0, period=1.0)
def test_dynamic_traced_equals_eager(t, every, offset, scale, period):
    """Under jit (traced every/offset, static num_windows) the windows are the eager ones (the
    open-start rule included); float steps are exact binary fractions, so no rounding differs."""
    x = np.asarray(t, INT)
    eager = jaxsubset.ranges.dynamic(x, every, offset=offset, closed="right")
    k = eager.count.shape[0]
    start, count = _traced_int_windows(jnp.asarray(x), INT(every), INT(offset))
    np.testing.assert_array_equal(np.asarray(count)[:k], eager.count)
    np.testing.assert_array_equal(np.asarray(start)[:k], eager.start)
    assert not np.asarray(count)[k:].any()  # windows past the data are empty
    xf = (x * scale).astype(FLOAT)
    ev, off = every * scale, offset * scale
    eager = jaxsubset.ranges.dynamic(xf, ev, period=period, offset=off, closed="neither")
    k = eager.count.shape[0]
    start, count = _traced_float_windows(jnp.asarray(xf), FLOAT(ev), FLOAT(period), FLOAT(off))
    np.testing.assert_array_equal(np.asarray(count)[:k], eager.count)
    np.testing.assert_array_equal(np.asarray(start)[:k], eager.start)


def test_dynamic_traced_fractional_offset_and_period_on_an_integer_axis():
    # regression: under jit the bounds took x's integer dtype, truncating offset 0.5 to 0 and
    # period 1.5 to 1 (other windows than the eager ones, silently)
    x = np.arange(6, dtype=INT)
    eager = jaxsubset.ranges.dynamic(x, 2, offset=0.5, period=1.5)  # [-1.5, 0), [0.5, 2), ...
    assert eager.count.tolist() == [0, 1, 1, 1]
    f = jax.jit(
        lambda x, o, p: jaxsubset.ranges.dynamic(x, 2, offset=o, period=p, num_windows=4).count
    )
    np.testing.assert_array_equal(f(jnp.asarray(x), 0.5, 1.5), eager.count)


def test_dynamic_open_start_keeps_the_first_point():
    # regression: offset a whole `every` past the first point with closed "right"/"neither"
    x = np.array([0.0, 5.0], FLOAT)
    r = jaxsubset.ranges.dynamic(x, 1.0, offset=2.0, closed="right")
    assert r.count.tolist() == [1, 0, 0, 0, 0, 1, 0]  # (-1, 0], (0, 1], ..., (4, 5], (5, 6]
    lo, hi = jaxsubset.dynamic_bounds(x, 1.0, offset=2.0, closed="right")
    assert lo[0] == -1.0 and hi[0] == 0.0
    s = jaxsubset.dynamic(x, x + 1, 1.0, offset=2.0, closed="neither", period=2.0, capacity=2)
    assert np.asarray(s.count)[0] == 1 and np.asarray(s.sum())[0] == 1.0


def test_dynamic_bad_steps_are_clear_errors():
    x = np.array([0.0, 1.0, 2.5, 4.0], FLOAT)
    with pytest.raises(ValueError, match=r"ranges.dynamic: `every` must be finite, got inf"):
        jaxsubset.ranges.dynamic(x, np.inf)
    with pytest.raises(ValueError, match=r"dynamic: `offset` must be finite, got -inf"):
        jaxsubset.dynamic(x, x, 1.0, offset=-np.inf, capacity=2)
    # float32 x (32-bit mode): the windows' bounds are float32, eagerly as under jit
    tiny = r"`every` gives \d+ windows" if X64 else r"`every` must be > 0 in float32"
    with pytest.raises(ValueError, match=rf"ranges.dynamic: {tiny}"):
        jaxsubset.ranges.dynamic(x, 1e-300)
    with pytest.raises(ValueError, match=r"dynamic_bounds: `every` gives \d+ windows"):
        jaxsubset.dynamic_bounds(np.array([0, 2**40]), 1)
    with pytest.raises(ValueError, match=r"stream\('dynamic'\): `every` must be finite"):
        jaxsubset.stream((x, x), "dynamic", every=np.inf, capacity=2, statistic="sum")
    # an infinite period is an expanding window from every start
    r = jaxsubset.ranges.dynamic(x, 1.0, period=np.inf)
    assert r.count.tolist() == [4, 3, 2, 1, 1]


# ------------------------------------------------------------------------- calendar bins

PANDAS_RULE = {
    "1M": "MS", "2M": "2MS", "5M": "5MS", "1Q": "QS", "3M": "QS", "2Q": "2QS", "1Y": "YS",
    "2Y": "2YS", "7D": "7D", "1D": "D", "3D": "3D", "12h": "12h", "90min": "90min",
}  # fmt: skip


@needs_x64
@settings(max_examples=30)
@given(
    period=st.sampled_from(sorted(PANDAS_RULE)),
    base=st.sampled_from(["1969-12-31T18:00", "1900-02-28", "2000-02-29", "2024-01-31T23:59"]),
    secs=st.lists(st.integers(-86400 * 400, 86400 * 400), min_size=1, max_size=6),
    snap=st.booleans(),
    statistic=st.sampled_from(["mean", "sum", "count", "max"]),
)
@example(period="1M", base="2000-02-29", secs=[0], snap=False, statistic="mean")
def test_calendar_bins_match_pandas_resample(period, base, secs, snap, statistic):
    t = np.datetime64(base, "ns") + np.asarray(secs, "timedelta64[s]").astype("timedelta64[ns]")
    if snap:  # every other point on its month start: ties with the bin edges
        t[::2] = t[::2].astype("datetime64[M]").astype("datetime64[ns]")
    t = np.sort(t)
    y = np.arange(1.0, t.size + 1) ** 2
    want = getattr(
        pd.Series(y, index=pd.DatetimeIndex(t)).resample(PANDAS_RULE[period]), statistic
    )()
    res = jaxsubset.binned_statistic(t[::-1], y[::-1], statistic, bins=period)  # unsorted too
    np.testing.assert_array_equal(res.bin_edges[:-1], want.index.values.astype("datetime64[ns]"))
    assert res.bin_edges[-1] > t[-1]
    np.testing.assert_allclose(res.statistic, want.to_numpy(), **tol(np.float64))


@needs_x64
def test_calendar_edges_before_1677_never_wrap_around():
    # regression: the month start of a date in 1677-09 lies before int64 nanoseconds begin;
    # datetime64[ns] wrapped it to 2262 (silently wrong windows, a garbage first bin edge)
    t = np.array(["1677-09-25", "1677-12-03"], "datetime64[ns]")
    r = jaxsubset.ranges.dynamic(t, "1mo")  # Sep, Oct, Nov, Dec: the exact windows
    assert r.count.tolist() == [1, 0, 0, 1] and r.start.tolist()[-1] == 1
    with pytest.raises(ValueError, match="beyond the int64 nanoseconds"):
        jaxsubset.dynamic_bounds(t, "1mo")  # a bound it cannot represent: a clear error
    with pytest.raises(ValueError, match="the first bin starts before 1677-09-22"):
        jaxsubset.bin_edges(t, "1M")
    with pytest.raises(ValueError, match="the first bin starts before 1677-09-22"):
        jaxsubset.binned_statistic(t, np.ones(2), "mean", bins="1Y")
    edges = jaxsubset.bin_edges(t[1:], "1M")  # from 1677-12: representable
    assert edges.astype("datetime64[D]").astype(str).tolist() == ["1677-12-01", "1678-01-01"]


# -------------------------------------------------------------------------------- EWM


def ewm_exact(x, y, h, bias):
    """Mean and variance of every prefix from the weights themselves (float64, NaN skipped);
    ``W**2 - sum(w**2)`` summed as ``2 sum_{j<i} w_i w_j`` (no cancellation)."""
    mean, var = np.full(x.size, np.nan), np.full(x.size, np.nan)
    for i in range(x.size):
        ok = ~np.isnan(y[: i + 1])
        if not ok.any():
            continue
        w = 0.5 ** ((x[i] - x[: i + 1][ok]) / h)
        v = y[: i + 1][ok]
        m = (w * v).sum() / w.sum()
        q = (w * (v - m) ** 2).sum()
        den = w.sum() if bias else 2 * (w * (np.cumsum(w) - w)).sum()
        mean[i], var[i] = m, (q * (1 if bias else w.sum()) / den if den > 0 else np.nan)
    return mean, var


@settings(max_examples=30)
@given(
    gaps=st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 3.0]), min_size=11, max_size=11),
    y=st.lists(st.floats(-100, 100, allow_nan=False) | st.just(np.nan), min_size=12, max_size=12),
    halflife=st.sampled_from([0.5, 1.0, 2.5]),
    min_periods=st.sampled_from([0, 3]),
    bias=st.booleans(),
)
@example(gaps=[0.0] * 11, y=[5.0] * 12, halflife=1.0, min_periods=0, bias=False)
def test_ewm_matches_pandas_and_exact_weights(gaps, y, halflife, min_periods, bias):
    x = np.concatenate([[0.0], np.cumsum(gaps)])  # ties, irregular gaps
    y = np.asarray(y)
    got = jaxsubset.ewm_statistic(
        x.astype(FLOAT), y.astype(FLOAT), halflife, ("mean", "var", "std"),
        min_periods=min_periods, bias=bias,
    )  # fmt: skip
    times = pd.to_datetime((x * 1e9).astype(np.int64))
    want = (
        pd.Series(y)
        .ewm(halflife=pd.Timedelta(halflife, "s"), times=times, min_periods=min_periods)
        .mean()
        .to_numpy()
    )
    mean, var = ewm_exact(x, y, halflife, bias)
    seen = np.cumsum(~np.isnan(y)) >= max(min_periods, 1)
    mean, var = np.where(seen, mean, np.nan), np.where(seen, var, np.nan)
    scale = np.nanmax(np.abs(y), initial=1.0)
    rtol = 1e-9 if X64 else 2e-4
    np.testing.assert_allclose(got["mean"], want, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(got["mean"], mean, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(got["var"], var, rtol=10 * rtol, atol=10 * rtol * scale**2)
    np.testing.assert_allclose(got["std"], np.sqrt(var), rtol=10 * rtol, atol=rtol * scale)


def test_ewm_long_gaps_and_empty_input():
    # float32 (JAX's default): W**2 - sum(w**2) cancelled to 0 after a gap of 25 halflives
    x, y = np.array([0.0, 25.0, 26.0], FLOAT), np.array([0.0, 1.0, 2.0], FLOAT)
    w = [Fraction(1, 2**26), Fraction(1, 2), Fraction(1)]
    W = sum(w)
    m = sum(a * b for a, b in zip(w, (0, 1, 2), strict=True)) / W
    q = sum(a * (b - m) ** 2 for a, b in zip(w, (0, 1, 2), strict=True))
    exact = float(q * W / (W * W - sum(a * a for a in w)))
    var = jaxsubset.ewm_statistic(x, y, 1.0, "var")
    np.testing.assert_allclose(var, [np.nan, 0.5, exact], **tol())
    # a NaN row after a gap that underflows every weight repeats the previous result (pandas)
    x = np.array([0.0, 1.0, 2.0, 3000.0, 3001.0], FLOAT)
    y = np.array([1.0, 2.0, 4.0, np.nan, 8.0], FLOAT)
    got = jaxsubset.ewm_statistic(x, y, 1.0, ("mean", "var"))
    times = pd.to_datetime(x.astype(np.int64) * 10**9)
    want = pd.Series(y).ewm(halflife=pd.Timedelta("1s"), times=times).mean().to_numpy()
    np.testing.assert_allclose(got["mean"], want, **tol())
    assert got["mean"][3] == got["mean"][2] and got["var"][3] == got["var"][2] > 0
    # the last point follows a gap of 2998 halflives: its own value, and the variance of
    # exact arithmetic (weights 2**-2998 underflow in either mode; it was NaN)
    w = [Fraction(1, 2**3001), Fraction(1, 2**3000), Fraction(1, 2**2999), Fraction(1)]
    vals = (1, 2, 4, 8)
    W = sum(w)
    m = sum(a * b for a, b in zip(w, vals, strict=True)) / W
    q = sum(a * (b - m) ** 2 for a, b in zip(w, vals, strict=True))
    exact = float(q * W / (W * W - sum(a * a for a in w)))
    assert got["mean"][4] == 8.0
    np.testing.assert_allclose(got["var"][4], exact, **tol())
    # empty input: empty output (was ZeroDivisionError from reshape(0, -1))
    out = jaxsubset.ewm_statistic(np.zeros(0, FLOAT), np.zeros((0, 2), FLOAT), 1.0, "std")
    assert out.shape == (0, 2)


def test_ewm_integer_times_spanning_more_than_the_int_range():
    # regression: x - x[0] wrapped (int32 epoch seconds from 1950 to 2030 in 32-bit mode)
    big = np.iinfo(INT)
    x = np.array([big.min + 1, big.min + 1, big.max], INT)  # one step of 2**32 - 2 (2**64 - 2)
    h = big.max // 2 + 1  # 2**30 (2**62): the first points weigh 1/16 at the last
    got = jaxsubset.ewm_statistic(x, np.array([0.0, 0.0, 1.0], FLOAT), h, "mean")
    w = 0.5 ** (np.array([big.max - big.min - 1] * 2 + [0], np.float64) / h)
    np.testing.assert_allclose(got[-1], w[-1] / w.sum(), **tol())


def test_ewm_jit_vmap_and_nan_policies():
    x = jnp.asarray([0.0, 0.5, 0.5, 2.0, 7.0, 7.5], FLOAT)
    y = jnp.asarray([[1.0, 3.0, np.nan, 2.0, 5.0, 4.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0]], FLOAT)
    hs = jnp.asarray([0.5, 2.0], FLOAT)
    f = jax.jit(jax.vmap(lambda y, h: jaxsubset.ewm_statistic(x, y, h, ("mean", "std"))))
    out = f(y, hs)
    for i in range(2):
        eager = jaxsubset.ewm_statistic(x, y[i], float(hs[i]), ("mean", "std"))
        for k in ("mean", "std"):
            np.testing.assert_allclose(out[k][i], eager[k], **tol())
    assert (np.asarray(out["std"][1][1:]) == 0).all()  # a constant series: exactly 0
    prop = jaxsubset.ewm_statistic(x, y[0], 1.0, nan_policy="propagate")
    assert np.isfinite(prop[:2]).all() and np.isnan(prop[2:]).all()
    with pytest.raises(ValueError, match="nan_policy='raise'"):
        jaxsubset.ewm_statistic(x, y[0], 1.0, nan_policy="raise")


# ------------------------------------------------------------------ stream and shard

STREAM_STATS = ("sum", "mean", "std", "max", "first", "median")


def numpy_stats(y, start, count, policy, ddof):
    """The statistics of every window with NumPy (NaN skipped with "omit")."""
    out = {s: np.full(start.size, np.nan) for s in STREAM_STATS}
    for k, (a, c) in enumerate(zip(start, count, strict=True)):
        v = y[a : a + c]
        if policy == "omit":
            v = v[~np.isnan(v)]
        out["sum"][k] = v.sum()
        if v.size == 0:
            continue
        out["mean"][k], out["median"][k] = v.mean(), np.median(v)
        out["std"][k] = v.std(ddof=ddof) if v.size > ddof else np.nan
        out["max"][k], out["first"][k] = v.max(), v[0]
    return out


def dynamic_case(draw):
    if draw(st.booleans()):
        x = np.asarray(draw(sorted_ints(13, -30, 30)), INT)
        every, offset = draw(st.integers(1, 7)), draw(st.integers(-9, 9))
        period = draw(st.none() | st.integers(1, 12))
    else:
        x = (np.asarray(draw(sorted_ints(13, -20, 20))) * 0.25).astype(FLOAT)
        every, offset = draw(st.sampled_from([0.5, 1.0, 2.25])), draw(st.sampled_from([0, -0.75]))
        period = draw(st.none() | st.sampled_from([0.25, 3.0]))
    return x, dict(every=every, period=period, offset=offset, closed=draw(closed_st))


@settings(max_examples=10)
@given(data=st.data(), policy=st.sampled_from(["propagate", "omit"]))
def test_stream_dynamic_equals_in_memory(data, policy):
    x, kw = dynamic_case(data.draw)
    nan = np.asarray(data.draw(st.lists(st.booleans(), min_size=13, max_size=13)))
    y = np.cos(np.arange(13.0)).astype(FLOAT)
    y[nan & (np.arange(13) % 3 == 0)] = np.nan
    r = jaxsubset.ranges.dynamic(x, **kw)
    lo, hi = jaxsubset.dynamic_bounds(x, **kw)
    start, count = windows_by_numpy(x, lo, hi, kw["closed"])
    np.testing.assert_array_equal(r.count, count)
    blocks = [(x[i : i + 4], y[i : i + 4]) for i in range(0, 13, 4)]  # pieces of 4, blocks of 3
    got = jaxsubset.stream(
        blocks, "dynamic", statistic=STREAM_STATS, capacity=16, block_size=3,
        nan_policy=policy, ddof=1, **kw,
    )  # fmt: skip
    np.testing.assert_array_equal(got["count"], count)
    np.testing.assert_array_equal(got["start"][count > 0], start[count > 0])
    # (a static capacity: one compiled program for every example)
    mem = jaxsubset.range_statistic(y, r, STREAM_STATS, nan_policy=policy, ddof=1, capacity=16)
    want = numpy_stats(y.astype(np.float64), start, count, policy, 1)
    for s in STREAM_STATS:
        np.testing.assert_allclose(got[s], want[s], err_msg=s, **tol())
        np.testing.assert_allclose(got[s], mem[s], err_msg=s, **tol())


def test_stream_and_shard_raise_only_for_nan_inside_a_window():
    x = np.arange(10.0, dtype=FLOAT)
    y = np.ones(10, FLOAT)
    y[2] = np.nan  # between the windows [0, 1), [3, 4), [6, 7), [9, 10)
    kw = dict(every=3.0, period=1.0, capacity=2, statistic="mean", nan_policy="raise")
    mem = jaxsubset.dynamic(x, y, 3.0, period=1.0, capacity=2).mean(nan_policy="raise")
    np.testing.assert_array_equal(mem, [1.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(
        jaxsubset.stream((x, y), "dynamic", block_size=3, **kw)["mean"], mem
    )
    np.testing.assert_array_equal(jaxsubset.shard(x, y, "dynamic", devices=1, **kw)["mean"], mem)
    y[3] = np.nan  # inside the second window
    with pytest.raises(ValueError, match="nan_policy='raise'"):
        jaxsubset.stream((x, y), "dynamic", block_size=3, **kw)
    with pytest.raises(ValueError, match="nan_policy='raise'"):
        jaxsubset.shard(x, y, "dynamic", devices=1, **kw)


@pytest.mark.skipif(X64, reason="int64 fits in 64-bit mode: nothing can wrap")
def test_int64_beyond_int32_is_refused_not_wrapped_in_32_bit_mode():
    # regression: stream/shard cast int64 x and y to int32 silently (x: a misleading "must be
    # sorted" error; y: wrapped sums), and so did range_statistic & co. for y
    big = np.array([0, 2**31 + 5, 2**32], np.int64)
    xs, ys = np.arange(3.0, dtype=FLOAT), np.ones(3, FLOAT)
    msg = "outside the int32 range"
    with pytest.raises(ValueError, match=r"stream\('dynamic'\): `x` holds 2147483653.*" + msg):
        jaxsubset.stream((big, ys), "dynamic", every=2**30, capacity=4, statistic="sum")
    with pytest.raises(ValueError, match=r"stream\('chunks'\): `y` holds 2147483653"):
        jaxsubset.stream([(xs, big)], "chunks", size=2, statistic="sum")
    with pytest.raises(ValueError, match=r"shard\('chunks'\): `y` holds 2147483653"):
        jaxsubset.shard(xs, big, "chunks", size=2, statistic="sum", devices=1)
    with pytest.raises(ValueError, match=r"range_statistic: `y` holds 2147483653"):
        jaxsubset.range_statistic(big, jaxsubset.ranges.chunks(xs, 2), "sum")
    with pytest.raises(ValueError, match=r"ewm_statistic: `y` holds 2147483653"):
        jaxsubset.ewm_statistic(xs, big, 1.0)
    with pytest.raises(ValueError, match=r"binned_statistic: `values` holds 2147483653"):
        jaxsubset.binned_statistic(xs, big, "sum", bins=1)
    # int64 values that fit are fine (and exact in float32 here)
    got = jaxsubset.stream([(xs, big // 2**10)], "chunks", size=2, statistic="sum")["sum"]
    np.testing.assert_array_equal(got, [2**21, 2**22])


SHARD_CHECKS = textwrap.dedent(
    """
    import jax, numpy as np
    jax.config.update("jax_enable_x64", True)
    import jaxsubset
    assert len(jax.devices()) == 3
    rng = np.random.default_rng(7)
    stats = ("mean", "std", "median", "first")
    for case in range(3):
        x = np.sort(rng.integers(-20, 20, 13))
        y = rng.normal(size=13)
        y[rng.random(13) < 0.2] = np.nan
        kw = dict(every=int(rng.integers(1, 6)), period=int(rng.integers(1, 12)),
                  offset=int(rng.integers(-7, 7)),
                  closed=str(rng.choice(["left", "right", "both", "neither"])))
        pol = ("omit", "propagate")[case % 2]
        got = jaxsubset.shard(x, y, "dynamic", statistic=stats, capacity=16, nan_policy=pol,
                              ddof=1, **kw)
        r = jaxsubset.ranges.dynamic(x, **kw)
        want = jaxsubset.range_statistic(y, r, stats, nan_policy=pol, ddof=1, capacity=16)
        assert (got["count"] == np.asarray(r.count)).all(), (kw, got["count"], r.count)
        for s in stats:
            np.testing.assert_allclose(got[s], want[s], rtol=1e-12, atol=1e-12, err_msg=s)
    print("SHARD-HOP-OK")
    """
)


@pytest.mark.one_mode  # the subprocess switches 64-bit mode on itself
def test_shard_dynamic_on_3_devices_equals_in_memory():
    tests = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, JAX_NUM_CPU_DEVICES="3", JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join([tests, *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.run(
        [sys.executable, "-c", SHARD_CHECKS], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "SHARD-HOP-OK" in proc.stdout
