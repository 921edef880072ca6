"""The command's host-side ranges of ``--width``/``--bins`` on a time axis (NumPy's
``searchsorted`` in int64 nanoseconds, no compiled program) equal the library's
``jaxsubset.ranges.rolling``/``ranges.bins`` and pandas' windows."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jaxsubset
from jaxsubset.cli._options import time_bin_ranges, time_rolling_ranges


# the command switches 64-bit mode on itself (int64 nanoseconds): run once, in the 64-bit run
pytestmark = pytest.mark.one_mode

DAY = 86_400 * 10**9


def pair(r):
    return np.asarray(r.start).tolist(), np.asarray(r.count).tolist()


@st.composite
def axes(draw):
    """A sorted int64 axis with ties, gaps and (sometimes) dates near the ends of int64."""
    n = draw(st.integers(1, 40))
    steps = draw(st.lists(st.sampled_from([0, 1, 2, 3, 7, 10**9, DAY]), min_size=n, max_size=n))
    base = draw(st.sampled_from([0, -(2**62), 2**62 - 10**15, 10**18]))
    return base + np.cumsum(np.asarray(steps, dtype=np.int64))


@settings(max_examples=150, deadline=None)
@given(axes(), st.sampled_from([1, 2, 3, 5, 10**9, DAY, 7 * DAY, 2**62]), st.booleans())
def test_rolling_windows_equal_the_library(x, width, center):
    want = jaxsubset.ranges.rolling(x, width, center=center)
    assert pair(time_rolling_ranges(x, width, center)) == pair(want)


@settings(max_examples=150, deadline=None)
@given(axes(), st.integers(1, 6), st.data())
def test_bins_equal_the_library(x, nbins, data):
    lo, hi = int(x[0]), int(x[-1])
    pick = st.integers(lo - 5, hi + 5)
    edges = np.sort(np.asarray(data.draw(st.lists(pick, min_size=nbins + 1, max_size=nbins + 1))))
    got = time_bin_ranges(x, edges)
    want = jaxsubset.ranges.bins(x, edges)
    assert pair(got) == pair(want)


def test_period_bins_and_rolling_equal_pandas():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    t = np.datetime64("2001-01-30T00:00", "ns") + np.cumsum(
        rng.integers(0, 3 * 3600, size=3000)
    ).astype("timedelta64[s]")
    x = t.view(np.int64)
    edges = jaxsubset.bin_edges(x, "1M")
    r = time_bin_ranges(x, edges)
    s = pd.Series(np.ones(len(x)), index=pd.DatetimeIndex(t))
    assert np.asarray(r.count).tolist() == s.resample("MS").count().tolist()
    w = time_rolling_ranges(x, 7 * DAY)
    assert np.asarray(w.count).tolist() == s.rolling("7D").count().astype(int).tolist()


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("policy", ["omit", "propagate"])
def test_fixed_count_windows_give_the_rolling_road_s_numbers(center, policy):
    # an evenly sampled time axis and a width a multiple of its step: every window holds the
    # same number of points (cut at the ends), so the command asks rolling_statistic for
    # window=w instead of the x-width windows: the same numbers
    from jaxsubset.cli._options import STATS
    from jaxsubset.cli._reader import XY
    from jaxsubset.cli._stats import compute_statistics, fixed_window

    rng = np.random.default_rng(1)
    n = 500
    x = np.int64(10**18) + np.arange(n, dtype=np.int64) * 300 * 10**9  # every 5 minutes
    y = rng.normal(size=(n, 2)) + 50
    y[rng.random((n, 2)) < 0.2] = np.nan
    y[100:130, 1] = np.nan
    width = 3600 * 10**9 if not center else 3900 * 10**9  # 12 points; centred: 13
    r = time_rolling_ranges(x, width, center)
    fixed = fixed_window(r)
    assert fixed == ({"window": 13, "center": True} if center else {"window": 12})
    xy = XY(x, y, "date", ["a", "b"], x_time=True)
    stats = (*STATS, "valid", "q0.9")
    for ddof in (0, 1):
        road = compute_statistics(
            xy, r, stats, ddof=ddof, nan_policy=policy, rolling={"width": width, "center": center}
        )
        got = compute_statistics(xy, r, stats, ddof=ddof, nan_policy=policy, rolling=fixed)
        for s in stats:
            np.testing.assert_allclose(got[s], road[s], rtol=1e-11, atol=1e-12, err_msg=s)


def test_other_windows_are_not_fixed_count():
    from jaxsubset.cli._stats import fixed_window

    x = np.array([0, 1, 2, 4, 5, 6, 7], dtype=np.int64)  # a gap
    assert fixed_window(time_rolling_ranges(x, 2)) is None
    assert fixed_window(time_rolling_ranges(np.arange(7, dtype=np.int64), 2)) == {"window": 2}
    tied = np.array([0, 1, 1, 2, 3], dtype=np.int64)
    assert fixed_window(time_rolling_ranges(tied, 2)) is None
    assert fixed_window(jaxsubset.Ranges(np.zeros(0, np.int64), np.zeros(0, np.int64))) is None


def test_count_bound():
    from jaxsubset.cli._stats import count_bound

    assert count_bound(np.zeros(3, np.int64)) is None
    assert count_bound(np.zeros(0, np.int64)) is None
    for m in (1, 2, 7, 8, 9, 17, 100, 8928, 10**6):
        b = count_bound(np.array([0, m, 1]))
        assert m <= b <= 1.25 * m
        assert b >> max(b.bit_length() - 3, 0) << max(b.bit_length() - 3, 0) == b  # 3 bits


@pytest.mark.parametrize("policy", ["omit", "propagate"])
def test_monthly_bins_equal_pandas(policy):
    # few long ranges with a bound: the library's padded road; the numbers are pandas'
    pd = pytest.importorskip("pandas")
    from jaxsubset.cli._reader import XY
    from jaxsubset.cli._stats import compute_statistics

    rng = np.random.default_rng(2)
    n = 20_000
    t = np.datetime64("2001-01-30", "ns") + np.arange(n) * np.timedelta64(1800, "s")
    x = t.view(np.int64)
    y = rng.normal(size=(n, 2)) * 3 + 10
    y[rng.random((n, 2)) < 0.05] = np.nan
    r = time_bin_ranges(x, jaxsubset.bin_edges(x, "1M"))
    stats = ("mean", "std", "min", "max", "sum", "median", "count", "valid")
    got = compute_statistics(XY(x, y, "date", ["a", "b"], x_time=True), r, stats, ddof=1,
                             nan_policy=policy)  # fmt: skip
    skip = policy == "omit"
    for c in range(2):
        g = pd.Series(y[:, c], index=pd.DatetimeIndex(t)).resample("MS")
        want = {
            "mean": g.apply(lambda v: v.mean(skipna=skip)),
            "std": g.apply(lambda v: v.std(ddof=1, skipna=skip)),
            "min": g.apply(lambda v: v.min(skipna=skip)),
            "max": g.apply(lambda v: v.max(skipna=skip)),
            "sum": g.apply(lambda v: v.sum(skipna=skip, min_count=0)),
            "median": g.apply(lambda v: v.median(skipna=skip)),
            "count": g.size(),
            "valid": g.count(),
        }
        for s in stats:
            np.testing.assert_allclose(got[s][:, c], want[s].to_numpy(np.float64), rtol=1e-10,
                                       atol=1e-9, err_msg=f"{s} {policy}")  # fmt: skip
