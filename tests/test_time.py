"""Time axes: datetime64 x, date bounds and duration widths as exact int64 nanoseconds."""

import re

import jax
import numpy as np
import pandas as pd
import pytest

import jaxsubset
from references import needs_x64


# Time axes are int64 nanoseconds: JAX's 64-bit mode. In 32-bit mode only the clear error is
# tested (tests/test_resolver.py).
pytestmark = needs_x64


def weekly_with_gaps(seed=0):
    """Weekly readings 1950-2020 with multi-year gaps and some duplicate timestamps."""
    t = pd.date_range("1950-01-01", "2020-12-31", freq="7D").values
    keep = ~((t >= np.datetime64("1961-03-01")) & (t < np.datetime64("1983-07-01")))
    t = np.sort(np.concatenate([t[keep], t[keep][::50]]))  # duplicates, kept in order
    y = np.random.default_rng(seed).normal(size=t.size)
    return t, y


def test_select_with_date_bounds_matches_pandas_mask():
    t, y = weekly_with_gaps()
    lo = np.array(["1960-01-01", "1970-01-01", "1999-02-03"], "datetime64[D]")
    hi = np.array(["1990-06-30", "1980-01-01", "2000-01-01"], "datetime64[D]")
    s = jaxsubset.select(t, y, lo, hi, capacity=2048)
    series = pd.Series(y, index=t)
    for k in range(3):
        ref = series[(series.index >= lo[k]) & (series.index < hi[k])]
        assert int(s.count[k]) == ref.size
        np.testing.assert_allclose(float(s.mean()[k]), ref.mean())
    # x positions come back as dates
    first = jaxsubset.to_datetime64(s.x[0, :1])
    assert first[0] == series[series.index >= lo[0]].index[0]
    # strings and pandas Timestamps are dates too
    s2 = jaxsubset.select(t, y, "1960-01-01", pd.Timestamp("1990-06-30"), capacity=2048)
    assert int(s2.count) == int(s.count[0])


@pytest.mark.parametrize("closed", ["right", "left", "both", "neither"])
def test_rolling_7d_matches_pandas(closed):
    t, y = weekly_with_gaps(1)
    t = t + (np.arange(t.size) % 3).astype("timedelta64[D]")  # irregular spacing
    t = np.sort(t)
    s = jaxsubset.rolling(t, y, "7D", capacity=16, closed=closed)
    ref = pd.Series(y, index=t).rolling("7D", closed=closed)
    np.testing.assert_array_equal(np.asarray(s.count), ref.count().fillna(0).to_numpy())
    got = np.asarray(s.sum())
    np.testing.assert_allclose(got, ref.sum().fillna(0).to_numpy(), atol=1e-12)
    s2 = jaxsubset.rolling(t, y, np.timedelta64(7, "D"), capacity=16, closed=closed)
    np.testing.assert_array_equal(np.asarray(s2.count), np.asarray(s.count))


def test_yearly_bins_match_pandas_groupby_year():
    t, y = weekly_with_gaps(2)
    years = np.arange(1950, 2022).astype(str).astype("datetime64[Y]")
    s = jaxsubset.bins(t, y, years, capacity=64)
    ref = pd.Series(y, index=t).groupby(pd.DatetimeIndex(t).year)
    counts = dict(zip(ref.size().index, ref.size().to_numpy(), strict=True))
    means = dict(zip(ref.mean().index, ref.mean().to_numpy(), strict=True))
    for k, year in enumerate(range(1950, 2021)):
        assert int(s.count[k]) == counts.get(year, 0)
        if year in means:
            np.testing.assert_allclose(float(s.mean()[k]), means[year])


def test_hourly_nearest_and_exactness_near_epoch_values():
    base = np.datetime64("2001-12-29T06:00:00", "ns")
    t = base + np.arange(10).astype("timedelta64[ns]")  # 1 ns apart, near 1e18 ns
    assert np.unique(t.astype(np.int64).astype(float) / 1e9).size < 10  # float seconds collide
    s = jaxsubset.select(
        t,
        np.arange(10.0),
        base + np.timedelta64(3, "ns"),
        base + np.timedelta64(7, "ns"),
        capacity=8,
    )
    assert int(s.count) == 4 and s.y[:4].tolist() == [3.0, 4.0, 5.0, 6.0]
    hourly = pd.date_range("2001-01-01", periods=100, freq="h").values
    i = jaxsubset.nearest(
        hourly, np.array(["2001-01-02T05:31", "2001-01-01T00:29"], "datetime64[m]")
    )
    assert i.tolist() == [30, 0]


def test_time_axis_under_jit_via_to_ns_compiles_once():
    t, y = weekly_with_gaps(3)
    x = jaxsubset.to_ns(t)
    traces = []

    @jax.jit
    def f(x, y, lo, hi, width):
        traces.append(1)
        return (
            jaxsubset.select(x, y, lo, hi, capacity=1024).count,
            jaxsubset.rolling(x, y, width, capacity=16).count,
        )

    for a, b in [("1960-01-01", "1970-01-01"), ("1990-01-01", "2000-01-01")]:
        count, _ = f(x, y, jaxsubset.to_ns(a), jaxsubset.to_ns(b), jaxsubset.to_ns("14D"))
        ref = ((t >= np.datetime64(a)) & (t < np.datetime64(b))).sum()
        assert int(count) == ref
    assert len(traces) == 1


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (
            lambda t, y: jaxsubset.rolling(t, y, 7.0, capacity=4),
            TypeError,
            "rolling: `width` must be a duration on a time axis",
        ),
        (
            lambda t, y: jaxsubset.rolling(t, y, 7, capacity=4),
            TypeError,
            "rolling: `width` must be a duration on a time axis",
        ),
        (
            lambda t, y: jaxsubset.rolling(t, y, np.timedelta64(7), capacity=4),
            TypeError,
            "rolling: `width` must be a duration on a time axis",
        ),
        (
            lambda t, y: jaxsubset.rolling(t, y, "1M", capacity=4),
            ValueError,
            "rolling: `width`='1M' is not a fixed duration: months and years have no fixed length",
        ),
        (
            lambda t, y: jaxsubset.rolling(t, y, "7", capacity=4),
            ValueError,
            "rolling: `width`='7' is not a fixed duration",
        ),
        (
            lambda t, y: jaxsubset.select(t, y, 0.0, 1e18, capacity=4),
            TypeError,
            "select: `lo` must be dates",
        ),
        (
            lambda t, y: jaxsubset.select(t, y, "not a date", "2001-01-01", capacity=4),
            TypeError,
            "select: `lo` must be dates",
        ),
        (
            lambda t, y: jaxsubset.select(
                np.array(["2001-01-01", "NaT"], "datetime64[D]"),
                y[:2],
                "2001-01-01",
                "2002-01-01",
                capacity=4,
            ),
            ValueError,
            "select: `x` holds NaT at index 1",
        ),
        (
            lambda t, y: jaxsubset.select(
                np.array(["1500-01-01"], "datetime64[D]"),
                y[:1],
                "2001-01-01",
                "2002-01-01",
                capacity=4,
            ),
            ValueError,
            "outside 1677-09-22 .. 2262-04-10",
        ),
    ],
)
def test_time_axis_errors(call, exc, message):
    t, y = weekly_with_gaps()
    with pytest.raises(exc, match=re.escape(message)):
        call(t, y)


def test_time_axis_needs_x64():
    t, y = weekly_with_gaps()
    jax.config.update("jax_enable_x64", False)
    try:
        with pytest.raises(TypeError, match=re.escape("needs JAX's 64-bit mode")):
            jaxsubset.select(t, y, "1960-01-01", "1970-01-01", capacity=4)
    finally:
        jax.config.update("jax_enable_x64", True)


@needs_x64
def test_to_ns_of_every_unit_and_a_fresh_array():
    """``datetime64[ns]`` dates are already int64 nanoseconds (no conversion, no range check:
    every one fits) and come back as a new array, as those of other units do; NaT is an
    error in either."""
    ns = np.array(["1677-09-22T00:00:00.000000001", "2000-02-29T12:00", "2262-04-10"],
                  "datetime64[ns]")  # fmt: skip
    got = jaxsubset.to_ns(ns)
    assert got.dtype == np.int64 and not np.shares_memory(got, ns)
    np.testing.assert_array_equal(got, ns.astype(np.int64))
    ms = ns.astype("datetime64[ms]")
    np.testing.assert_array_equal(jaxsubset.to_ns(ms), ms.astype("datetime64[ns]").astype(np.int64))
    with pytest.raises(ValueError, match="NaT"):
        jaxsubset.to_ns(np.array(["2000-01-01", "NaT"], "datetime64[ns]"))
