"""The ONE range resolver (issue 13, item 1): ties, clipping, exact integer/time/float bounds,
nearest past the ends, subnormal x, the last-bin rule, and stream's ranges equal to it.

Every case is checked against NumPy slicing, pandas or hand-computed values, eagerly, under
``jit`` and under ``vmap``, in both JAX modes (``JAX_ENABLE_X64`` 1 and 0).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import jaxsubset
from references import FLOAT, X64, needs_x64, pandas_rows, tol


CLOSED = ("right", "left", "both", "neither")


def ranges_of(r):
    start, count = np.asarray(r.start), np.asarray(r.count)
    return np.where(count > 0, start, 0), count


# ------------------------------------------------------------------------------------ ties
def test_rolling_ties_follow_pandas_row_rule():
    x = np.array([0.0, 1.0, 1.0, 2.0], FLOAT)
    y = np.array([1.0, 2.0, 4.0, 8.0], FLOAT)
    want = [1.0, 1.5, 7 / 3, 14 / 3]
    np.testing.assert_allclose(jaxsubset.rolling(x, y, 1.5, capacity=4).mean(), want, **tol())
    s = pd.Series(y.astype(np.float64), index=pd.to_datetime(x.astype(np.int64), unit="s"))
    np.testing.assert_allclose(s.rolling("1500ms").mean(), want)
    r = jaxsubset.ranges.rolling(x, 1.5)
    assert r.start.tolist() == [0, 0, 0, 1] and r.count.tolist() == [1, 2, 3, 3]
    f = jax.jit(lambda x, w: jaxsubset.ranges.rolling(x, w).count)
    assert f(x, 1.5).tolist() == [1, 2, 3, 3]


@pytest.mark.parametrize("closed", CLOSED)
def test_rolling_rows_equal_pandas_bounds_with_ties(closed):
    # integer x (pandas' own int64 window bounds), many ties and windows exactly one width apart
    rng = np.random.default_rng(1)
    x = np.sort(rng.integers(0, 40, 120)).astype(np.int32)
    for width in (0, 1, 3, 7, 100):
        start, count = pandas_rows(x, width, closed)
        r = jaxsubset.ranges.rolling(x, width, closed=closed)
        got = ranges_of(r)
        np.testing.assert_array_equal(got[1], count)
        np.testing.assert_array_equal(got[0], np.where(count > 0, start, 0))
        # the same ranges under jit (traced width) and for float x holding the same values
        rj = jax.jit(lambda x, w: jaxsubset.ranges.rolling(x, w, closed=closed))(x, width)
        np.testing.assert_array_equal(np.asarray(rj.count), count)
        rf = jaxsubset.ranges.rolling(x.astype(FLOAT), float(width), closed=closed)
        np.testing.assert_array_equal(np.asarray(rf.count), count)


@pytest.mark.parametrize("closed", CLOSED)
def test_rolling_rows_of_long_irregular_float_axes_equal_numpy(closed):
    # long enough for the sorted search of one window per row (anchors and verified guesses):
    # evenly spaced stretches, gaps, ties, and values across many binades and both signs
    rng = np.random.default_rng(7)
    steps = np.concatenate([np.ones(300), rng.integers(0, 6, 300), rng.integers(0, 200, 100)])
    x = ((np.cumsum(rng.permutation(steps)) - 2000) * 0.125).astype(FLOAT)
    lo_side = "right" if closed in ("right", "neither") else "left"
    rows = np.arange(x.size)
    for width in (0.0, 0.5, 3.0, 40.0, 1e4):
        start = np.searchsorted(x, x - FLOAT(width), lo_side)
        end = rows + 1 if closed in ("right", "both") else np.searchsorted(x, x, "left")
        start = np.minimum(np.minimum(start, rows), end)
        for r in (
            jaxsubset.ranges.rolling(x, width, closed=closed),
            jax.jit(lambda x, w: jaxsubset.ranges.rolling(x, w, closed=closed))(x, width),
        ):
            np.testing.assert_array_equal(np.asarray(r.count), end - start, err_msg=str(width))
            got = np.asarray(r.start)[end > start]
            np.testing.assert_array_equal(got, start[end > start], err_msg=str(width))


@pytest.mark.parametrize("closed", CLOSED)
def test_rolling_explicit_anchors_hold_the_closed_interval(closed):
    x = np.array([0, 1, 1, 1, 2, 2, 5], np.int32)
    at = np.array([-1, 1, 2, 5, 9])
    lo_ok = (lambda a: x >= a - 2) if closed in ("left", "both") else (lambda a: x > a - 2)
    hi_ok = (lambda a: x <= a) if closed in ("right", "both") else (lambda a: x < a)
    want = [int((lo_ok(a) & hi_ok(a)).sum()) for a in at]
    r = jaxsubset.ranges.rolling(x, 2, at=at, closed=closed)
    assert r.count.tolist() == want
    rj = jax.jit(lambda a: jaxsubset.ranges.rolling(x, 2, at=a, closed=closed))(at)
    assert rj.count.tolist() == want


def test_rolling_vmap_over_datasets_equals_loop():
    rng = np.random.default_rng(2)
    xs = np.sort(rng.integers(0, 20, (3, 30)), axis=1).astype(FLOAT)
    out = jax.vmap(lambda x: jaxsubset.ranges.rolling(x, 2.0).count)(xs)
    for d in range(3):
        _, count = pandas_rows(xs[d].astype(np.int64), 2, "right")
        np.testing.assert_array_equal(np.asarray(out[d]), count)


# ------------------------------------------------------------------------------------ clipping
def test_from_ranges_clips_never_shifts():
    x = np.arange(6, dtype=FLOAT)
    s = jaxsubset.from_ranges(x, x, -3, 5, capacity=8)
    assert int(s.count) == 2 and np.asarray(s.x)[:2].tolist() == [0.0, 1.0]
    assert not np.asarray(s.mask)[2:].any()
    f = jax.jit(lambda a, b: jaxsubset.from_ranges(x, x, a, b, capacity=8).count)
    assert f(-3, 5).tolist() == 2 and f(4, 10).tolist() == 2 and f(7, 3).tolist() == 0
    # a range past the int32 end does not wrap: start + count would overflow int32
    big = np.iinfo(np.int32).max
    assert f(3, big).tolist() == 3 and f(-big, big).tolist() == 0


def test_gather_clips_user_ranges_past_the_end():
    x = np.arange(5, dtype=FLOAT)
    r = jaxsubset.Ranges(jnp.array([3, -2, 1]), jnp.array([5, 3, 2]))
    s = jaxsubset.gather(x, x, r, capacity=3)
    assert s.count.tolist() == [2, 1, 2]
    assert np.asarray(s.x).tolist() == [[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, 2.0, 0.0]]
    assert s.overflow.tolist() == [False, False, False]
    s2 = jaxsubset.gather(x, x, jaxsubset.Ranges(jnp.array([0]), jnp.array([9])), capacity=3)
    assert s2.count.tolist() == [5] and s2.overflow.tolist() == [True]  # the clipped count
    # int64 / uint64 ranges from users, wider than the index dtype in 32-bit mode: no wrap
    r = jaxsubset.Ranges(np.array([2, -(2**40), 1]), np.array([2**40, 2**40 + 2, 2]))
    assert jaxsubset.gather(x, x, r, capacity=4).count.tolist() == [3, 2, 2]
    r = jaxsubset.Ranges(np.array([2], np.uint64), np.array([2**64 - 1], np.uint64))
    assert jaxsubset.gather(x, x, r, capacity=4).count.tolist() == [3]


# ------------------------------------------------------------------------------------ integers
@pytest.mark.parametrize(
    "start, stop",
    [
        (0, np.int64(2**32)),
        (0, np.uint64(2**64 - 1)),
        (np.int64(-(2**40)), None),
        (2**70, None),
        (-(2**70), 3),
        (np.uint64(3), np.int64(-2)),
    ],
)
def test_isolate_integer_bounds_are_python_slicing_in_both_modes(start, stop):
    x = np.arange(16, dtype=FLOAT)
    ref = x[(None if start is None else int(start)) : (None if stop is None else int(stop))]
    s = jaxsubset.isolate(x, x, start, stop, capacity=16)
    assert int(s.count) == ref.size
    np.testing.assert_array_equal(np.asarray(s.x)[: ref.size], ref)


@needs_x64
def test_uint64_and_huge_int_bounds_on_int64_x():
    x = np.array([-5, 0, 3, 2**62, 2**63 - 1], np.int64)
    r = jaxsubset.ranges.select(x, np.int64(0), np.uint64(2**64 - 1))
    assert (int(r.start), int(r.count)) == (1, 4)
    r = jaxsubset.ranges.select(x, -(2**80), 2**80, closed="both")
    assert (int(r.start), int(r.count)) == (0, 5)
    r = jaxsubset.ranges.select(x, np.uint64(2**63), np.uint64(2**64 - 1))
    assert int(r.count) == 0


@needs_x64
def test_int64_x_beyond_2_53_compared_exactly_with_float_bounds():
    base = 2**53
    x = np.array([base, base + 1, base + 2, base + 3, base + 5], np.int64)
    lo = float(base + 2)  # exactly representable
    for closed in CLOSED:
        r = jaxsubset.ranges.select(x, lo, float("inf"), closed=closed)
        lo_ok = x >= base + 2 if closed in ("left", "both") else x > base + 2
        assert int(r.count) == int(lo_ok.sum())
    # a float bound between two int64 values: ceil/floor by side, never through float64 of x
    x2 = np.array([10, 11, 12], np.int64)
    assert int(jaxsubset.ranges.select(x2, 10.5, 11.5).count) == 1
    assert int(jaxsubset.ranges.select(x2, -np.inf, 11.0, closed="right").count) == 2
    # rolling windows never hold points after their anchor
    xs = np.array([base + 1, base + 2, base + 3], np.int64)
    assert jaxsubset.ranges.rolling(xs, 1.5).count.tolist() == [1, 2, 2]


def test_float_bounds_on_int32_x_and_infinities():
    x = np.array([-3, 0, 0, 2, 7], np.int32)
    r = jaxsubset.ranges.select(x, -0.5, 2.0)
    assert (int(r.start), int(r.count)) == (1, 2)
    r = jaxsubset.ranges.select(x, -np.inf, np.inf)
    assert (int(r.start), int(r.count)) == (0, 5)
    r = jaxsubset.ranges.select(x, 1e30, np.inf)
    assert int(r.count) == 0 and int(r.start) == 5
    f = jax.jit(lambda lo, hi: jaxsubset.ranges.select(x, lo, hi, closed="both").count)
    assert int(f(-1e30, 1e30)) == 5 and int(f(0.5, 2.0)) == 1


@pytest.mark.skipif(X64, reason="32-bit mode only: int64 x does not fit int32")
def test_int64_x_that_does_not_fit_is_an_error_naming_x():
    x = np.array([0, 2**40], np.int64)  # e.g. epoch milliseconds
    with pytest.raises(ValueError, match=r"select: `x` holds 1099511627776.*32-bit mode"):
        jaxsubset.select(x, x, 0, 1, capacity=2)


def test_time_axis_windows_are_exact_in_either_mode():
    # 32-bit mode: the index ranges of a time axis are resolved as in 64-bit mode (issue 30);
    # only Subsets, whose x would be int64 nanoseconds, need 64-bit mode
    t = np.arange("2001-01-01", "2001-01-11", dtype="datetime64[D]")
    r = jaxsubset.ranges.rolling(t, "7D")
    want = pd.Series(np.ones(10), index=pd.DatetimeIndex(t)).rolling("7D").count()
    assert r.count.tolist() == want.astype(int).tolist()
    assert r.count.dtype == jaxsubset._core._validate.index_dtype()
    if not X64:
        with pytest.raises(TypeError, match=r"needs JAX's 64-bit mode"):
            jaxsubset.rolling(t, np.ones(10), "7D", capacity=8)


# ------------------------------------------------------------------------------------ time
@needs_x64
def test_time_window_starts_saturate_instead_of_wrapping():
    t = np.array(["1700-01-01", "1700-01-02", "1700-01-02", "1700-01-05"], "datetime64[ns]")
    y = np.arange(4.0)
    r = jaxsubset.ranges.rolling(t, "10958D")
    assert r.count.tolist() == [1, 2, 3, 4]
    s = pd.Series(y, index=pd.DatetimeIndex(t))
    assert s.rolling("10958D").count().tolist() == [1, 2, 3, 4]
    # a width wider than the int64 range: every window starts at the first point
    r = jaxsubset.ranges.rolling(t, np.timedelta64(2**63 - 1, "ns"))
    assert r.count.tolist() == [1, 2, 3, 4]
    s2 = jaxsubset.rolling(t, y, np.timedelta64(2**63 - 1, "ns"), capacity=4, at=t[-1:])
    assert s2.count.tolist() == [4]


# ------------------------------------------------------------------------------------ nearest
def test_nearest_past_the_ends_snaps_to_the_ends():
    x = np.arange(5, dtype=FLOAT)
    v = np.array([np.inf, 1e18, -np.inf, -1e18, 2.5, 2.6, 0.0, 4.0], FLOAT)
    want = [4, 4, 0, 0, 2, 3, 0, 4]
    assert jaxsubset.nearest(x, v).tolist() == want
    assert jax.jit(jaxsubset.nearest)(x, v).tolist() == want
    xt = np.array([0.0, 1.0, 3.0, 3.0], FLOAT)  # ties: the first of the tied samples
    assert jaxsubset.nearest(xt, np.array([np.inf, 2.9], FLOAT)).tolist() == [2, 2]
    # integer values beyond any dtype snap to the ends in both modes (never wrapped)
    big = np.array([2**70, -(2**70), 2, 3], dtype=object)
    assert jaxsubset.nearest(x, big).tolist() == [4, 0, 2, 3]
    assert int(jaxsubset.nearest(x, np.uint64(2**64 - 1))) == 4
    xi = np.array([0, 10, 20], np.int32)
    assert jaxsubset.nearest(xi, np.array([-(2**31), 14, 16, 2**31 - 1])).tolist() == [0, 1, 2, 2]


# ------------------------------------------------------------------------------------ subnormals
def test_subnormal_x_lands_in_numpy_bins():
    # NumPy's test_gh_23110: XLA on CPU flushes subnormals, the resolver compares bit keys
    tiny = np.finfo(FLOAT).smallest_subnormal
    x = np.array([-9 * tiny * 2**10, -5 * tiny * 2**10, -0.0, 0.0, tiny, 3 * tiny], FLOAT)
    x = np.sort(x)
    edges = np.array([-7 * tiny * 2**10, -tiny, 0.0, 2 * tiny, 1.0], FLOAT)
    want, _ = np.histogram(x, edges)
    assert jaxsubset.ranges.bins(x, edges).count.tolist() == want.tolist()
    f = jax.jit(lambda x, e: jaxsubset.ranges.bins(x, e).count)
    assert f(x, edges).tolist() == want.tolist()
    r = jaxsubset.ranges.select(x, FLOAT(-0.0), FLOAT(0.0), closed="both")
    assert int(r.count) == 2  # -0.0 == 0.0
    # long x, few bounds: the search that converts only the probed points (same answers)
    xl = np.sort(np.concatenate([x, np.linspace(1.0, 2.0, 2000, dtype=FLOAT)]))
    want, _ = np.histogram(xl, edges)
    assert jaxsubset.ranges.bins(xl, edges).count.tolist() == want.tolist()
    assert f(xl, edges).tolist() == want.tolist()


@needs_x64
def test_numpy_gh_23110_float64_subnormal_bins():
    x = np.array([-9e-309, -5.0001e-309])
    edges = np.array([-9e-309, -7e-309, -5e-309])
    want, _ = np.histogram(x, edges)
    assert jaxsubset.ranges.bins(np.sort(x), edges).count.tolist() == want.tolist() == [1, 1]


# ------------------------------------------------------------------------------------ last bin
def test_last_bin_is_closed_as_numpy():
    x = np.array([0.0, 1.0, 1.0, 2.0, 3.0, 3.0], FLOAT)
    edges = np.array([0.0, 1.0, 3.0], FLOAT)
    want, _ = np.histogram(x, edges)
    assert jaxsubset.ranges.bins(x, edges).count.tolist() == want.tolist() == [1, 5]
    xi = np.array([0, 5, 10, 10], np.int32)
    assert jaxsubset.ranges.bins(xi, [0, 5, 10]).count.tolist() == [1, 3]
    assert jaxsubset.ranges.bins(xi, [0.5, 9.5]).count.tolist() == [1]


# ------------------------------------------------------------------------------------ compiles
def test_no_recompilation_when_only_traced_bounds_change():
    x = jnp.asarray(np.linspace(0.0, 10.0, 101), FLOAT)
    traces = []

    @jax.jit
    def f(lo, hi, w, a, i0, c):
        traces.append(1)
        return (
            jaxsubset.ranges.select(x, lo, hi).count,
            jaxsubset.ranges.rolling(x, w).count.sum(),
            jaxsubset.ranges.rolling(x, w, at=a).count,
            jaxsubset.from_ranges(x, x, i0, c, capacity=8).count,
            jaxsubset.nearest(x, lo),
        )

    f(1.0, 2.0, 0.5, jnp.array([3.0, 4.0]), 2, 5)
    out = f(-5.0, 50.0, 2.0, jnp.array([0.0, 9.0]), -3, 5)
    assert len(traces) == 1
    assert int(out[0]) == 101 and out[3].tolist() == 2 and int(out[4]) == 0


# ------------------------------------------------------------------------------------ stream
def _stream_ranges(x, kind, **kw):
    y = np.zeros(x.shape[0])
    out = jaxsubset.stream((x, y), kind, statistic="sum", block_size=7, **kw)
    return out["start"], out["count"]


def _stream_cases(x):
    lo = x[[0, 3, 10]]
    return (
        [
            ("chunks", dict(n=4), jaxsubset.ranges.chunks(x, 4)),
            ("chunks", dict(size=5), jaxsubset.ranges.chunks(x, size=5)),
            ("sliding", dict(size=4, step=3), jaxsubset.ranges.sliding(x, 4, step=3)),
            ("select", dict(lo=lo, hi=lo + 2, capacity=32), jaxsubset.ranges.select(x, lo, lo + 2)),
            (
                "select",
                dict(lo=lo, hi=lo + 2, closed="both", capacity=32),
                jaxsubset.ranges.select(x, lo, lo + 2, closed="both"),
            ),
            (
                "bins",
                dict(edges=x[[0, 5, 9, -1]], capacity=32),
                jaxsubset.ranges.bins(x, x[[0, 5, 9, -1]]),
            ),
        ]
        + [
            (
                "rolling",
                dict(width=w, closed=c, capacity=32),
                jaxsubset.ranges.rolling(x, w, closed=c),
            )
            for c in CLOSED
            for w in (0, 2, 3)
        ]
        + [
            (
                "rolling",
                dict(width=2, at=x[[1, 4, 4, 20]], closed=c, capacity=32),
                jaxsubset.ranges.rolling(x, 2, at=x[[1, 4, 4, 20]], closed=c),
            )
            for c in CLOSED
        ]
    )


@pytest.mark.parametrize("dtype", [np.int32, FLOAT])
def test_stream_ranges_equal_the_resolver(dtype):
    rng = np.random.default_rng(5)
    x = np.sort(rng.integers(0, 12, 23)).astype(dtype)  # ties, blocks of 7 points
    for kind, kw, r in _stream_cases(x):
        start, count = _stream_ranges(x, kind, **kw)
        want_start, want_count = ranges_of(r)
        np.testing.assert_array_equal(count, want_count, err_msg=f"{kind} {kw}")
        np.testing.assert_array_equal(np.where(count > 0, start, 0), want_start, err_msg=kind)


@needs_x64
def test_stream_ranges_equal_the_resolver_on_int64_and_time_axes():
    rng = np.random.default_rng(6)
    x = np.sort(2**55 + rng.integers(0, 12, 23)).astype(np.int64)  # beyond float64's integers
    for kind, kw, r in _stream_cases(x):
        start, count = _stream_ranges(x, kind, **kw)
        np.testing.assert_array_equal(count, ranges_of(r)[1], err_msg=f"{kind} {kw}")
    # dates of 1700 as nanoseconds with a width that wraps int64 if not saturated
    t = np.array(["1700-01-01", "1700-01-02", "1700-01-02", "1700-01-05"], "datetime64[ns]")
    ns = t.view(np.int64)
    width = np.timedelta64(10958, "D").astype("timedelta64[ns]").view(np.int64)
    _, count = _stream_ranges(ns, "rolling", width=width, capacity=8)
    assert count.tolist() == jaxsubset.ranges.rolling(t, "10958D").count.tolist() == [1, 2, 3, 4]


def test_stream_pieces_of_float64_equal_the_resolver_in_either_mode():
    # a list of float64 pieces: x is resolved in the dtype JAX holds it (float32 in 32-bit mode)
    rng = np.random.default_rng(7)
    x = np.sort(np.round(rng.uniform(0.0, 10.0, 40), 1))
    y = np.zeros(40)
    src = [(x[:13], y[:13]), (x[13:], y[13:])]
    lo, hi = np.array([0.1, 2.5, 9.9]), np.array([0.3, 7.0, 20.0])
    out = jaxsubset.stream(src, "select", lo=lo, hi=hi, capacity=64, statistic="sum")
    assert out["count"].tolist() == jaxsubset.ranges.select(x, lo, hi).count.tolist()
    out = jaxsubset.stream(src, "rolling", width=0.5, capacity=64, statistic="sum")
    assert out["count"].tolist() == jaxsubset.ranges.rolling(x, 0.5).count.tolist()


@pytest.mark.parametrize("dtype", [FLOAT, np.int32])
@pytest.mark.parametrize("side", ["left", "right"])
def test_guided_search_equals_numpy_searchsorted(side, dtype):
    """The guided search of sorted bounds (``resolve._search.sorted_search``: what jitted
    windows over ``GUIDED_MIN`` rows or more take) is NumPy's searchsorted: ties, long runs of
    equal points, one huge gap, evenly spaced and clustered points, infinities at both ends,
    bounds past either end, and bounds out of order (clipped ones, a shuffled set)."""
    from jaxsubset.resolve._keys import keys
    from jaxsubset.resolve._search import sorted_search

    rng = np.random.default_rng(17)
    n = 1000  # (more than 2 * ANCHOR bounds: guesses between anchors)
    search = jax.jit(lambda x, b: sorted_search(keys(x), keys(b), side, np.dtype(dtype)))
    steps = {
        "ties": rng.choice([0, 0, 0, 1, 2, 7], n),
        "runs": np.repeat(rng.integers(0, 5, n // 50), 50) * rng.integers(0, 2, n),
        "gap": np.r_[np.ones(n // 2), [10**6], np.ones(n - n // 2 - 1)],
        "even": np.full(n, 3),
        "clustered": np.where(rng.random(n) < 0.05, 1000, rng.integers(0, 2, n)),
    }
    for name, step in steps.items():
        x = np.cumsum(step).astype(dtype) - dtype(500)
        if name == "even" and np.dtype(dtype).kind == "f":
            x[0], x[-1] = -np.inf, np.inf
        for width in (0, 1, 4, 35, 10**7):
            b = (x - dtype(width)) if np.dtype(dtype).kind == "f" else (x - width).astype(dtype)
            cases = [b, np.maximum(b, x[n // 3]), b.copy()]
            cases[2][::37] = x[-1]  # out of order: a long search, never a wrong answer
            if width == 35:
                cases.append(rng.permutation(b))
            for bounds in cases:
                got = np.asarray(search(x, bounds))
                want = np.searchsorted(x, bounds, side=side)
                np.testing.assert_array_equal(got, want, err_msg=f"{name} width={width}")
