"""Centred and asymmetric x-width windows (issue 15, item 3): pandas' ``center=True`` and a
hand oracle for ``before``/``after``, on numeric and time axes, eager, jit, vmap, both modes."""

import re
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import jaxsubset
from checks import compile_and_check
from references import FLOAT, needs_x64, tol


CLOSED = ("right", "left", "both", "neither")
# whole seconds with ties, so the numeric axis and pandas' DatetimeIndex are the same points
T = np.array([0, 1, 1, 2, 4, 4, 4, 5, 8, 9, 9, 13, 14, 14, 15], np.int64)
Y = np.array([1.0, 2.0, np.nan, 4.0, 5.0, -1.0, 3.0, np.nan, 7.0, 2.0, 2.5, 1.0, 0.0, 6.0, 3.0])
SERIES = pd.Series(Y, index=pd.DatetimeIndex(T.astype("datetime64[s]").astype("datetime64[ns]")))
STATS = ("count", "sum", "mean", "std", "min", "max")


def _pandas(stat, window, closed, center=True, min_periods=1):
    r = SERIES.rolling(window, closed=closed, center=center, min_periods=min_periods)
    return (r.std(ddof=1) if stat == "std" else getattr(r, stat)()).to_numpy()


def _close(got, want, err_msg=""):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, err_msg=err_msg, **tol())


@pytest.mark.parametrize("closed", CLOSED)
@pytest.mark.parametrize("width", [0, 1, 2, 3, 5])
def test_center_matches_pandas_numeric_axis(closed, width):
    # pandas' centred offset windows, ties and NaN included (pandas reads T as seconds)
    x = T.astype(FLOAT)
    got = jaxsubset.rolling_statistic(x, Y, width, STATS, center=True, closed=closed, ddof=1)
    for s in STATS:
        _close(got[s], _pandas(s, f"{width}s", closed), err_msg=f"{s} {closed} {width}")


@needs_x64
@pytest.mark.parametrize("closed", CLOSED)
@pytest.mark.parametrize("window", ["2s", "3s", "1500ms", "0s", "2ns"])
def test_center_matches_pandas_time_axis(closed, window):
    # datetime64 x, string durations
    x = SERIES.index.to_numpy()
    got = jaxsubset.rolling_statistic(x, Y, window, STATS, center=True, closed=closed, ddof=1)
    for s in STATS:
        _close(got[s], _pandas(s, window, closed), err_msg=f"{s} {closed} {window}")
    # the Subsets constructor and the Ranges resolver are the same windows (counts of rows)
    want_rows = SERIES.fillna(0).rolling(window, closed=closed, center=True).count()
    sub = jaxsubset.rolling(x, Y, window, center=True, closed=closed, capacity=16)
    np.testing.assert_array_equal(sub.count, np.nan_to_num(want_rows.to_numpy()))
    td = pd.Timedelta(window).to_timedelta64()
    r = jaxsubset.ranges.rolling(x, td, center=True, closed=closed)
    np.testing.assert_array_equal(r.count, sub.count)
    np.testing.assert_array_equal(r.start, sub.start)


@needs_x64
@pytest.mark.parametrize("closed", CLOSED)
def test_center_odd_nanoseconds_is_exact(closed):
    # an odd width in nanoseconds is halved exactly: x > a - 1.5ns keeps x >= a - 1ns, as
    # pandas (whose float arithmetic is exact for these small epochs, not near 2e18 ns)
    ns = np.array([0, 1, 1, 2, 3, 5, 6, 6, 9], np.int64)
    x = ns.astype("datetime64[ns]")
    s = pd.Series(np.ones(ns.size), index=pd.DatetimeIndex(x))
    for w in (1, 2, 3, 5):
        r = jaxsubset.ranges.rolling(x, f"{w}ns", center=True, closed=closed)
        want = _oracle(ns, Fraction(w, 2), Fraction(w, 2), closed)[1]
        np.testing.assert_array_equal(r.count, want, err_msg=f"{w}ns")
        pd_count = s.rolling(f"{w}ns", center=True, closed=closed).count().fillna(0)
        np.testing.assert_array_equal(r.count, pd_count.to_numpy(), err_msg=f"{w}ns")
    # near 2e18 ns too (2**61 + small offsets), where a float64 half-width would round
    x = (ns + 2**61).astype("datetime64[ns]")
    r = jaxsubset.ranges.rolling(x, "3ns", center=True, closed=closed)
    np.testing.assert_array_equal(r.count, _oracle(ns, Fraction(3, 2), Fraction(3, 2), closed)[1])


def _oracle(x, before, after, closed, at=None):
    """Brute force with exact Fractions: the window ``a - before < x <= a + after``
    (``closed``), with the documented row rules for one window per row."""
    lo_in = closed in ("left", "both")
    hi_in = closed in ("right", "both")
    xs = [Fraction(int(v)) if float(v).is_integer() else Fraction(float(v)) for v in x]
    b, f = Fraction(before), Fraction(after)
    anchors = xs if at is None else [Fraction(float(v)) for v in at]
    starts, counts = [], []
    for i, a in enumerate(anchors):
        inside = [
            j
            for j, v in enumerate(xs)
            if (v > a - b or (lo_in and v == a - b)) and (v < a + f or (hi_in and v == a + f))
        ]
        if at is None and f == 0:  # trailing: the window ends at its own row
            inside = [j for j in inside if j <= i]
        if at is None:  # and never starts past its own row: [min(start, i), end)
            upper = [j for j, v in enumerate(xs) if v < a + f or (hi_in and v == a + f)]
            if f == 0:
                upper = [j for j in upper if j <= i]
            inside = sorted(set(inside) | {j for j in upper if j >= i})
        starts.append(inside[0] if inside else None)
        counts.append(len(inside))
    return starts, np.array(counts)


@pytest.mark.parametrize("closed", CLOSED)
@pytest.mark.parametrize("before,after", [(2, 1), (0.5, 3), (3, 0), (1.5, 1.5), (0, 2), (7, 20)])
def test_before_after_match_the_oracle(closed, before, after):
    x = T.astype(FLOAT)
    _, want = _oracle(T, before, after, closed)
    r = jaxsubset.ranges.rolling(x, before=before, after=after, closed=closed)
    np.testing.assert_array_equal(r.count, want)
    # the statistics over the same windows: NaN skipped, as the NumPy reduction of each window
    got = jaxsubset.rolling_statistic(
        x, Y, before=before, after=after, closed=closed, statistic=("sum", "count", "mean")
    )
    st, ct = np.asarray(r.start), np.asarray(r.count)
    sums = np.array([np.nansum(Y[s : s + c]) for s, c in zip(st, ct, strict=True)])
    valid = np.array([np.sum(~np.isnan(Y[s : s + c])) for s, c in zip(st, ct, strict=True)])
    _close(got["sum"], np.where(valid > 0, sums, np.nan))
    _close(got["count"], np.where(ct > 0, valid, np.nan))
    with np.errstate(invalid="ignore", divide="ignore"):
        _close(got["mean"], np.where(valid > 0, sums / valid, np.nan))


@pytest.mark.parametrize("closed", CLOSED)
def test_before_width_after_zero_is_the_trailing_window(closed):
    x = T.astype(FLOAT)
    a = jaxsubset.ranges.rolling(x, 3.0, closed=closed)
    b = jaxsubset.ranges.rolling(x, before=3.0, after=0.0, closed=closed)
    np.testing.assert_array_equal(a.start, b.start)
    np.testing.assert_array_equal(a.count, b.count)
    # and a centred window is before = after = width / 2
    c = jaxsubset.ranges.rolling(x, 3.0, closed=closed, center=True)
    d = jaxsubset.ranges.rolling(x, before=1.5, after=1.5, closed=closed)
    np.testing.assert_array_equal(c.count, d.count)


def test_ties_and_zero_before_by_hand():
    # x = [0, 1, 1, 2]: before=0, after=1 (closed right: x[i] < x <= x[i] + 1); the window of a
    # row starts at the row itself (pandas), ends by value past every tie of x[i] + 1
    x = jnp.array([0.0, 1.0, 1.0, 2.0])
    r = jaxsubset.ranges.rolling(x, before=0.0, after=1.0)
    assert r.start.tolist() == [0, 1, 2, 3]
    assert r.count.tolist() == [3, 3, 2, 1]
    # a centred window holds every row tied with its own x (the trailing one only those up to it)
    assert jaxsubset.ranges.rolling(x, 1.0, center=True).count.tolist() == [1, 2, 2, 1]
    assert jaxsubset.ranges.rolling(x, 1.0).count.tolist() == [1, 1, 2, 1]


@pytest.mark.parametrize("closed", CLOSED)
def test_explicit_anchors_are_the_value_interval(closed):
    x = T.astype(FLOAT)
    at = np.array([-1.0, 0.0, 1.0, 3.5, 4.0, 9.0, 20.0])
    for before, after in [(2, 1), (0, 0), (0.5, 4), (30, 30)]:
        starts, want = _oracle(T, before, after, closed, at=at)
        r = jaxsubset.ranges.rolling(x, before=before, after=after, at=at, closed=closed)
        np.testing.assert_array_equal(r.count, want)
        np.testing.assert_array_equal(
            np.asarray(r.start)[want > 0], [s for s in starts if s is not None]
        )
    c = jaxsubset.ranges.rolling(x, 3.0, at=at, center=True, closed=closed)
    np.testing.assert_array_equal(c.count, _oracle(T, 1.5, 1.5, closed, at=at)[1])


def test_traced_before_after_compile_once_and_vmap():
    x = jnp.asarray(T.astype(FLOAT))
    y = jnp.asarray(np.nan_to_num(Y).astype(FLOAT))

    def f(b, a):
        return jaxsubset.rolling_statistic(x, y, before=b, after=a, statistic="sum")

    def g(w):
        return jaxsubset.rolling(x, y, w, center=True, capacity=16).count

    # traced extents: one compilation each, equal to the eager calls
    compile_and_check(f, [(2.0, 1.0), (0.5, 3.0), (3.0, 0.0), (0.0, 2.0)], **tol())
    compile_and_check(g, [(0.0,), (1.0,), (3.0,)], rtol=0, atol=0)
    afters = jnp.asarray([0.0, 1.0, 2.5], FLOAT)
    counts = jax.vmap(lambda a: jaxsubset.ranges.rolling(x, before=1.0, after=a).count)(afters)
    for k, a in enumerate([0.0, 1.0, 2.5]):
        np.testing.assert_array_equal(counts[k], _oracle(T, 1, a, "right")[1])


@pytest.mark.parametrize("closed", CLOSED)
def test_integer_axis_saturates_instead_of_wrapping(closed):
    # int32 x at the ends of its range: a + after and a - before beyond int32 saturate
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    x = np.array([lo, lo + 1, -5, 0, 7, hi - 1, hi], np.int32)
    for before, after in [(3, 2**31 + 5), (2**32, 1), (0, 10), (2**33, 2**33)]:
        r = jaxsubset.ranges.rolling(x, before=before, after=after, closed=closed)
        np.testing.assert_array_equal(r.count, _oracle(x, before, after, closed)[1])
    # an odd width centred on integers is halved exactly
    r = jaxsubset.ranges.rolling(x, 15, center=True, closed=closed)
    np.testing.assert_array_equal(r.count, _oracle(x, Fraction(15, 2), Fraction(15, 2), closed)[1])


@needs_x64
def test_time_axis_before_after_durations_saturate():
    x = np.array(
        ["1677-09-22", "2000-01-01", "2000-01-01T12", "2000-01-03", "2262-04-10"], "datetime64[ns]"
    )
    r = jaxsubset.ranges.rolling(x, before="1D", after=np.timedelta64(36, "h"))
    assert r.count.tolist() == [1, 2, 3, 1, 1]
    # windows reaching past the ends of int64 nanoseconds saturate (never wrap around)
    big = 2**63 - 1
    r = jaxsubset.ranges.rolling(
        x, before=np.timedelta64(big, "ns"), after=np.timedelta64(big, "ns")
    )
    assert r.count.tolist() == _oracle(x.view(np.int64), big, big, "right")[1].tolist()
    assert r.count.tolist() == [1, 4, 4, 4, 4]  # 1677 + 292 years ends in 1970; 2000 - 292 > 1677
    # explicit anchors: [a, a + big] saturates at the last nanosecond (a wrap would count 0)
    at = np.array(["2262-04-10", "2000-01-01"], "datetime64[ns]")
    r = jaxsubset.ranges.rolling(x, at=at, after=np.timedelta64(big, "ns"), closed="both")
    assert r.count.tolist() == [1, 4]
    f = jax.jit(lambda a, w: jaxsubset.ranges.rolling(x, at=a, after=w, closed="both").count)
    assert f(jnp.asarray(at.view(np.int64)), jnp.asarray(big)).tolist() == [1, 4]
    got = jaxsubset.rolling_statistic(x, np.arange(5.0), before="1D", after="36h", statistic="sum")
    assert got.tolist() == [0.0, 3.0, 6.0, 3.0, 4.0]
    with pytest.raises(TypeError, match=re.escape("`after` must be a duration on a time axis")):
        jaxsubset.rolling_statistic(x, np.arange(5.0), before="1D", after=5)
    with pytest.raises(TypeError, match="`before`"):
        jaxsubset.ranges.rolling(x, before=3)


def test_empty_windows_give_nan_and_zero_counts():
    x = jnp.asarray([0.0, 10.0, 20.0], FLOAT)
    y = jnp.asarray([1.0, 2.0, 3.0], FLOAT)
    got = jaxsubset.rolling_statistic(
        x, y, before=0.0, after=1.0, closed="neither", statistic=("mean", "count"), min_periods=1
    )
    # x[i] < x < x[i] + 1 is empty, but the window starts at its own row (pandas' rule)
    _close(got["mean"], [1.0, 2.0, 3.0])
    at = jnp.asarray([5.0, 15.0], FLOAT)
    s = jaxsubset.rolling(x, y, before=1.0, after=1.0, at=at, capacity=2)
    assert s.count.tolist() == [0, 0]
    assert np.isnan(np.asarray(s.mean())).all()


def test_window_argument_errors():
    x = jnp.arange(4.0)
    with pytest.raises(ValueError, match=re.escape("give `width` or `before`/`after`, not both")):
        jaxsubset.ranges.rolling(x, 2.0, after=1.0)
    with pytest.raises(ValueError, match=re.escape("`center=True` centres `width`")):
        jaxsubset.rolling(x, x, before=1.0, center=True, capacity=4)
    with pytest.raises(TypeError, match=re.escape("a window needs `width`")):
        jaxsubset.ranges.rolling(x)
    with pytest.raises(
        ValueError, match=re.escape("rolling_statistic: `after` must be >= 0, got -1.0")
    ):
        jaxsubset.rolling_statistic(x, x, before=1.0, after=-1.0)
    with pytest.raises(
        ValueError, match=re.escape("ranges.rolling: `before` must be >= 0, got -2")
    ):
        jaxsubset.ranges.rolling(x, before=-2)
    with pytest.raises(TypeError, match=re.escape("`center` must be True or False, got 'yes'")):
        jaxsubset.ranges.rolling(x, 1.0, center="yes")
    with pytest.raises(ValueError, match=re.escape("`after` must be a scalar")):
        jaxsubset.rolling_statistic(x, x, after=np.ones(4))


def test_command_center_matches_pandas(tmp_path, run):
    # `jaxsubset stats --width W --center`: pandas' centred windows, numeric and date axes
    y = np.nan_to_num(Y, nan=0.5)
    rows = "\n".join(f"{t},{v!r}" for t, v in zip(T.tolist(), y.tolist(), strict=True))
    (tmp_path / "n.csv").write_text("x,y\n" + rows + "\n")
    rc, _, err = run(
        "n.csv", "--width", 3, "--center", "--stat", "sum,count", "--out", "n_out.csv", "--quiet"
    )
    assert rc == 0, err
    got = pd.read_csv(tmp_path / "n_out.csv")
    want = pd.Series(y, index=SERIES.index).rolling("3s", center=True)
    np.testing.assert_allclose(got["sum"], want.sum().to_numpy(), **tol())
    np.testing.assert_array_equal(got["count"], want.count().to_numpy())
    np.testing.assert_allclose(got["lo"], T - 1.5)
    np.testing.assert_allclose(got["hi"], T + 1.5)
    dates = (np.datetime64("2001-01-01") + T.astype("timedelta64[D]")).astype(str)
    rows = "\n".join(f"{d},{v!r}" for d, v in zip(dates.tolist(), y.tolist(), strict=True))
    (tmp_path / "d.csv").write_text("x,y\n" + rows + "\n")
    rc, _, err = run(
        "d.csv", "--width", "3D", "--center", "--stat", "mean", "--out", "d_out.csv", "--quiet"
    )
    assert rc == 0, err
    got = pd.read_csv(tmp_path / "d_out.csv")
    idx = pd.DatetimeIndex(dates.astype("datetime64[ns]"))
    want = pd.Series(y, index=idx).rolling("3D", center=True).mean()
    np.testing.assert_allclose(got["mean"], want.to_numpy(), **tol())
    # --center goes with --width only (exit status 2, one line)
    assert run("n.csv", "--chunks", "2", "--center", "--quiet")[0] == 2
