"""Hopping/tumbling windows (issue 15, item 3) against polars ``group_by_dynamic``."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import polars as pl
import pytest

import jaxsubset
from checks import compile_and_check
from references import FLOAT, needs_x64, tol


CLOSED = {"left": "left", "right": "right", "both": "both", "neither": "none"}
RNG = np.random.default_rng(15)
T = np.sort(RNG.integers(-40, 60, 80))  # ties and negative positions
Y = RNG.normal(size=T.size)
CASES = [  # every, period, offset
    (5, None, 0),
    (5, None, 2),
    (5, None, 7),
    (5, None, -2),
    (3, 7, 0),
    (7, 3, -9),
    (10, 25, 4),
    (1, None, 0),
]


def _polars(t, y, every, period, offset, closed, unit="i"):
    df = pl.DataFrame({"t": t, "y": y})
    out = df.group_by_dynamic(
        "t",
        every=f"{every}{unit}",
        period=None if period is None else f"{period}{unit}",
        offset=f"{offset}{unit}",
        closed=CLOSED[closed],
        include_boundaries=True,
    ).agg(pl.col("y").sum().alias("sum"), pl.col("y").mean().alias("mean"), pl.len())
    return out


def _check(got_r, out, y, every):
    stats = jaxsubset.range_statistic(jnp.asarray(y, FLOAT), got_r, ("sum", "mean", "count"))
    count = np.asarray(got_r.count)
    ks = np.flatnonzero(count > 0)  # polars keeps only the windows that hold points
    assert ks.size == out.height
    if not ks.size:
        return
    np.testing.assert_array_equal(count[ks], out["len"].to_numpy())
    np.testing.assert_allclose(np.asarray(stats["sum"])[ks], out["sum"].to_numpy(), **tol())
    np.testing.assert_allclose(np.asarray(stats["mean"])[ks], out["mean"].to_numpy(), **tol())
    lower = out["_lower_boundary"].to_numpy().astype(np.int64)
    # window k starts at s_0 + k * every: polars' windows are ours, in order
    np.testing.assert_array_equal(lower - lower[0], (ks - ks[0]) * every)


def _check_bounds(t, r, out, closed, every, **kw):
    """``dynamic_bounds`` are polars' window boundaries, and counting ``t`` inside them by
    their ``closed`` rule (NumPy) gives the ranges' counts."""
    lo, hi = jaxsubset.dynamic_bounds(t, every, closed=closed, **kw)
    count = np.asarray(r.count)
    assert lo.shape == hi.shape == count.shape
    ks = np.flatnonzero(count > 0)
    want_lo, want_hi = out["_lower_boundary"].to_numpy(), out["_upper_boundary"].to_numpy()
    if t.dtype.kind == "M":
        assert lo.dtype == hi.dtype == np.dtype("datetime64[ns]")
        want_lo, want_hi = want_lo.astype("datetime64[ns]"), want_hi.astype("datetime64[ns]")
    np.testing.assert_array_equal(lo[ks], want_lo)
    np.testing.assert_array_equal(hi[ks], want_hi)
    left = "left" if closed in ("left", "both") else "right"
    right = "right" if closed in ("right", "both") else "left"
    n = np.searchsorted(t, hi, side=right) - np.searchsorted(t, lo, side=left)
    np.testing.assert_array_equal(np.maximum(n, 0), count)


@pytest.mark.parametrize("closed", list(CLOSED))
@pytest.mark.parametrize("every,period,offset", CASES)
def test_dynamic_matches_polars_integer_axis(closed, every, period, offset):
    out = _polars(T, Y, every, period, offset, closed)
    r = jaxsubset.ranges.dynamic(T, every, period=period, offset=offset, closed=closed)
    _check(r, out, Y, every)
    _check_bounds(T, r, out, closed, every, period=period, offset=offset)
    # polars' integer strings are accepted too, and the Subsets are the same windows
    s = jaxsubset.dynamic(
        T, Y, f"{every}i", period=period, offset=f"{offset}i", closed=closed, capacity=64
    )
    np.testing.assert_array_equal(s.count, r.count)
    np.testing.assert_allclose(s.sum(), jaxsubset.range_statistic(Y, r, "sum"), **tol())


@needs_x64
@pytest.mark.parametrize("closed", list(CLOSED))
@pytest.mark.parametrize(
    "every,period,offset",
    [("1d", None, "0h"), ("6h", "1d", "2h"), ("7d", None, "0d"), ("1d", "2h", "-3h")],
)
def test_dynamic_matches_polars_time_axis(closed, every, period, offset):
    minutes = np.sort(RNG.integers(0, 60 * 24 * 20, 300))
    t = (np.datetime64("2021-03-04T05:00", "ns") + minutes.astype("timedelta64[m]")).astype(
        "datetime64[ns]"
    )
    y = RNG.normal(size=t.size)
    out = _polars(t, y, every, period, offset, closed, unit="")
    kw = dict(period=None if period is None else period.upper(), offset=offset.upper())
    r = jaxsubset.ranges.dynamic(t, every.upper(), closed=closed, **kw)
    _check_bounds(t, r, out, closed, every.upper(), **kw)
    step = np.timedelta64(int(every[:-1]), every[-1].upper() if every[-1] == "d" else every[-1])
    stats = jaxsubset.range_statistic(y, r, ("sum", "count"))
    count = np.asarray(r.count)
    ks = np.flatnonzero(count > 0)
    np.testing.assert_array_equal(count[ks], out["len"].to_numpy())
    np.testing.assert_allclose(np.asarray(stats["sum"])[ks], out["sum"].to_numpy(), **tol())
    lower = out["_lower_boundary"].to_numpy().astype("datetime64[ns]")
    np.testing.assert_array_equal(lower - lower[0], (ks - ks[0]) * step)


def test_dynamic_under_jit_needs_num_windows_and_compiles_once():
    x = jnp.asarray(T)
    k = int(jaxsubset.ranges.dynamic(T, 5).count.shape[0])

    def f(x, every, offset):
        r = jaxsubset.ranges.dynamic(x, every, offset=offset, num_windows=k)
        return r.start, r.count

    # traced every/offset: one compilation, the eager (concrete) windows
    cases = [
        (x, jnp.asarray(every), jnp.asarray(offset)) for every, offset in [(5, 0), (5, 2), (5, -2)]
    ]
    compile_and_check(f, cases, rtol=0, atol=0)
    # the eager count of windows is polars' span (with the empty windows kept)
    out = _polars(T, Y, 5, None, 0, "left")
    assert k == (out["_lower_boundary"][-1] - out["_lower_boundary"][0]) // 5 + 1
    with pytest.raises(TypeError, match=re.escape("pass `num_windows`")):
        jax.jit(lambda x: jaxsubset.ranges.dynamic(x, 5).count)(x)


def test_dynamic_float_axis_and_empty_windows():
    x = jnp.asarray([0.25, 0.5, 2.75, 3.0], FLOAT)
    s = jaxsubset.dynamic(x, x, 1.0, capacity=4)  # [0, 1), [1, 2), [2, 3), [3, 4)
    assert s.count.tolist() == [2, 0, 1, 1]
    assert np.isnan(np.asarray(s.mean())[1])
    r = jaxsubset.ranges.dynamic(x, 1.0, period=0.5, offset=0.25, closed="both")
    assert r.count.tolist() == [2, 0, 1]  # [0.25, 0.75], [1.25, 1.75], [2.25, 2.75]
    assert jaxsubset.ranges.dynamic(jnp.zeros(0, FLOAT), 1.0).count.shape == (0,)


def test_dynamic_argument_errors():
    with pytest.raises(ValueError, match=re.escape("ranges.dynamic: `every` must be > 0, got 0")):
        jaxsubset.ranges.dynamic(T, 0)
    with pytest.raises(ValueError, match=re.escape("dynamic: `period` must be > 0, got -1")):
        jaxsubset.dynamic(T, Y, 5, period=-1, capacity=4)
    with pytest.raises(ValueError, match=re.escape("`closed` must be one of")):
        jaxsubset.ranges.dynamic(T, 5, closed="none")
    with pytest.raises(ValueError, match=re.escape("`num_windows` must be a >= 0 int, got -1")):
        jaxsubset.ranges.dynamic(T, 5, num_windows=-1)


@needs_x64
@pytest.mark.parametrize("closed", list(CLOSED))
@pytest.mark.parametrize(
    "every,period,offset",
    [
        ("1mo", None, "0d"),
        ("3mo", None, "0d"),
        ("1mo", "2mo", "5d"),
        ("1y", None, "0d"),
        ("2mo", None, "12h"),
        ("1q", "1mo", "0d"),
    ],
)
def test_dynamic_calendar_windows_match_polars(closed, every, period, offset):
    hours = np.sort(RNG.integers(0, 400 * 24, 500))
    t = (np.datetime64("2021-01-01", "ns") + hours.astype("timedelta64[h]")).astype(
        "datetime64[ns]"
    )
    y = RNG.normal(size=t.size)
    out = _polars(t, y, every, period, offset, closed, unit="")
    r = jaxsubset.ranges.dynamic(t, every, period=period, offset=offset.upper(), closed=closed)
    _check_bounds(t, r, out, closed, every, period=period, offset=offset.upper())
    stats = jaxsubset.range_statistic(y, r, ("sum", "count"))
    count = np.asarray(r.count)
    ks = np.flatnonzero(count > 0)
    np.testing.assert_array_equal(count[ks], out["len"].to_numpy())
    np.testing.assert_allclose(np.asarray(stats["sum"])[ks], out["sum"].to_numpy(), **tol())
    with pytest.raises(ValueError, match=re.escape("`period` must be calendar too")):
        jaxsubset.ranges.dynamic(t, every, period="7D")
    with pytest.raises(ValueError, match=re.escape("`offset` must be in [0, 28D)")):
        jaxsubset.ranges.dynamic(t, every, offset="-3D")


def test_dynamic_bounds_host_only_limits_and_errors():
    # NumPy only (no 64-bit JAX mode needed), from the first and last point alone
    t = np.array(["2001-01-30T06:00", "2001-02-02", "2001-03-02"], "datetime64[m]")
    lo, hi = jaxsubset.dynamic_bounds(t, "1mo", period="2mo", offset="1D")
    assert lo.astype("datetime64[D]").astype(str).tolist() == [
        "2001-01-02", "2001-02-02", "2001-03-02"
    ]  # fmt: skip
    assert hi.astype("datetime64[D]").astype(str).tolist() == [
        "2001-03-02", "2001-04-02", "2001-05-02"
    ]  # fmt: skip
    # the default offset 0 on a time axis (fixed windows from multiples of `every` since 1970)
    lo, hi = jaxsubset.dynamic_bounds(t[[0, -1]], "7D")
    assert (lo.astype("datetime64[D]").view(np.int64) % 7 == 0).all() and (
        hi - lo == np.timedelta64(7, "D")
    ).all()
    lo, hi = jaxsubset.dynamic_bounds(np.array([0.3, 2.9], np.float32), 1.0, period=0.5)
    assert lo.dtype == np.float64 and lo.tolist() == [0.0, 1.0, 2.0] and hi.tolist()[-1] == 2.5
    lo, hi = jaxsubset.dynamic_bounds(np.zeros(0), 1.0)
    assert lo.shape == hi.shape == (0,)
    lo, hi = jaxsubset.dynamic_bounds(np.arange(11), 2**62, period=2**63)  # past int64
    assert lo.dtype == np.int64 and hi.dtype == np.float64 and hi.tolist() == [2.0**63]
    with pytest.raises(ValueError, match="beyond the int64 nanoseconds"):
        jaxsubset.dynamic_bounds(t, "1D", period=np.timedelta64(2**63 - 1, "ns"))
    with pytest.raises(ValueError, match=re.escape("`every` gives 100 windows")) as e:
        jaxsubset.dynamic_bounds(np.arange(100), 1, max_windows=99)
    assert e.value.reason == "gives 100 windows over the data; choose a longer one"
    assert jaxsubset.dynamic_bounds(np.arange(100), 1, max_windows=100)[0].shape == (100,)
    with pytest.raises(TypeError, match="`x` is traced"):
        jax.jit(lambda x: jaxsubset.dynamic_bounds(x, 1)[0])(jnp.arange(3.0))
    with pytest.raises(TypeError, match="not a time axis"):
        jaxsubset.dynamic_bounds(np.arange(3.0), "1D")
    with pytest.raises(ValueError, match=re.escape("dynamic_bounds: `every` must be > 0")):
        jaxsubset.dynamic_bounds(t, "0D")
    with pytest.raises(ValueError, match=re.escape("`offset` must be in [0, 28D)")):
        jaxsubset.dynamic_bounds(t, "1mo", offset="30D")


@needs_x64
def test_dynamic_default_offset_on_a_time_axis():
    # `offset=0` (the default) is no shift on a datetime64 axis too, for fixed and calendar
    t = np.array(["2001-01-30", "2001-02-02", "2001-03-02"], "datetime64[ns]")
    for every in ("7D", "1mo"):
        want = jaxsubset.ranges.dynamic(t, every, offset="0D")
        got = jaxsubset.ranges.dynamic(t, every)
        np.testing.assert_array_equal(got.count, want.count, err_msg=every)
        np.testing.assert_array_equal(got.start, want.start, err_msg=every)
