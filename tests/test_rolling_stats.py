"""rolling_statistic against pandas offset-window rolling (time index, ties, NaN, closed)."""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, strategies as hst

from jaxsubset import rolling_statistic


STATS = ["count", "sum", "mean", "var", "std", "min", "max", "median"]
RNG = np.random.default_rng(7)
N = 1500
SEC = 1_000_000_000
# integer-nanosecond times with ties (steps of 0, 1 or 2 s) and a few NaN values
T = np.cumsum(RNG.integers(0, 3, N)).astype(np.int64) * SEC
Y = RNG.normal(2.0, 3.0, N)
Y[RNG.integers(0, N, 25)] = np.nan
SERIES = pd.Series(Y, index=pd.to_datetime(T))


def _pandas(statistic, closed="right", min_periods=1, y=SERIES, window="7s"):
    return getattr(y.rolling(window, closed=closed, min_periods=min_periods), statistic)()


@pytest.mark.parametrize("closed", ["right", "left", "both", "neither"])
@pytest.mark.parametrize("min_periods", [1, 3])
def test_rolling_matches_pandas_time_offset(closed, min_periods):
    got = rolling_statistic(T, Y, 7 * SEC, STATS, closed=closed, min_periods=min_periods)
    for s in STATS:
        want = _pandas(s, closed, min_periods).to_numpy()
        np.testing.assert_allclose(
            np.asarray(got[s]), want, rtol=1e-9, atol=1e-10, equal_nan=True, err_msg=s
        )


def test_rolling_min_periods_zero_and_ddof():
    got = rolling_statistic(T, Y, 3 * SEC, ("sum", "mean"), closed="neither", min_periods=0)
    for s in ("sum", "mean"):
        want = _pandas(s, "neither", 0, window="3s").to_numpy()
        np.testing.assert_allclose(np.asarray(got[s]), want, rtol=1e-9, atol=1e-10, equal_nan=True)
    want = SERIES.rolling("7s").std(ddof=0).to_numpy()
    got = rolling_statistic(T, Y, 7 * SEC, "std", ddof=0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=1e-10, equal_nan=True)


def test_rolling_channels_and_float_x():
    x = T / SEC  # float seconds: same windows
    y2 = np.stack([Y, np.nan_to_num(Y) ** 2], axis=1)
    got = rolling_statistic(x, y2, 7.0, "mean")
    assert got.shape == (N, 2)
    for c in range(2):
        want = _pandas("mean", y=pd.Series(y2[:, c], index=pd.to_datetime(T))).to_numpy()
        np.testing.assert_allclose(np.asarray(got[:, c]), want, rtol=1e-9, atol=1e-10)


def test_rolling_at_anchors_hand_computed():
    x = np.array([0.0, 1.0, 1.0, 2.0, 4.0, 7.0])
    y = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    at = np.array([1.0, 4.0, 10.0, -1.0])
    got = rolling_statistic(x, y, 2.0, ("sum", "count", "max"), at=at)
    # windows (a - 2, a]: {0, 1, 1} -> 6; {4} -> 5; {} -> NaN (min_periods 1); {} -> NaN
    assert np.asarray(got["sum"]).tolist()[:2] == [6.0, 5.0]
    assert np.isnan(np.asarray(got["sum"])[2:]).all()
    assert np.asarray(got["max"]).tolist()[:2] == [3.0, 5.0]


def test_rolling_large_offset_precision():
    y = 1e8 + RNG.normal(0.0, 1.0, N)
    x = T / SEC
    got = np.asarray(rolling_statistic(x, y, 30.0, "var"))
    hi = np.searchsorted(x, x, side="right")
    hi = np.minimum(hi, np.arange(N) + 1)
    lo = np.searchsorted(x, x - 30.0, side="right")
    want = np.array(
        [y[a:b].var(ddof=1) if b - a > 1 else np.nan for a, b in zip(lo, hi, strict=True)]
    )
    np.testing.assert_allclose(got, want, rtol=1e-9, equal_nan=True)


_TRACES = {"n": 0}


@jax.jit
def _rolling_jit(x, y, width):
    _TRACES["n"] += 1
    return rolling_statistic(x, y, width, ("mean", "std", "max"), min_periods=2)


def test_rolling_jit_traced_width_no_recompile_vmap_grad():
    for w in (3, 7, 11):
        got = _rolling_jit(T, Y, w * SEC)
        for s in ("mean", "std", "max"):
            want = _pandas(s, min_periods=2, window=f"{w}s").to_numpy()
            np.testing.assert_allclose(
                np.asarray(got[s]), want, rtol=1e-9, atol=1e-10, equal_nan=True
            )
    assert _TRACES["n"] == 1
    ys = np.stack([np.nan_to_num(Y), np.nan_to_num(Y) * 2.0])
    out = jax.vmap(lambda y: rolling_statistic(T, y, 5 * SEC, "sum"))(ys)
    np.testing.assert_allclose(np.asarray(out[1]), 2.0 * np.asarray(out[0]), rtol=1e-12)
    # d/dy_j of the sum of all window sums = number of windows holding point j
    y0 = np.nan_to_num(Y)
    g = jax.grad(lambda y: jnp.sum(rolling_statistic(T, y, 5 * SEC, "sum")))(y0)
    ones = pd.Series(np.ones(N), index=pd.to_datetime(T)).rolling("5s").sum().to_numpy()
    hits = np.zeros(N)
    x = T
    for i in range(N):
        lo = np.searchsorted(x, x[i] - 5 * SEC, side="right")
        hits[lo : i + 1] += 1
    assert ones.sum() == hits.sum()
    np.testing.assert_allclose(np.asarray(g), hits, rtol=1e-12)
    gm = jax.grad(lambda y: jnp.sum(rolling_statistic(T, y, 5 * SEC, "std", min_periods=2)))
    assert np.isfinite(np.asarray(gm(y0))).all()


def test_rolling_errors():
    with pytest.raises(ValueError, match="`closed` must be one of"):
        rolling_statistic(T, Y, SEC, closed="middle")
    with pytest.raises(ValueError, match="`min_periods` must be a >= 0 int, got -1"):
        rolling_statistic(T, Y, SEC, min_periods=-1)
    with pytest.raises(ValueError, match="`statistic` must be one of"):
        rolling_statistic(T, Y, SEC, "mode")
    with pytest.raises(ValueError, match="sorted"):
        rolling_statistic(T[::-1], Y, SEC)
    with pytest.raises(ValueError, match="same length"):
        rolling_statistic(T, Y[:-1], SEC)
    with pytest.raises(ValueError, match="scalar"):
        rolling_statistic(T, Y, np.array([SEC, SEC]))


# ---------------------------------------------------------------------------- per-point roads
FAST = ["count", "sum", "mean", "std", "min", "max"]


def _check_pandas(t, y, width_s, closed="right", min_periods=1, stats=FAST, atol=1e-10):
    s = pd.Series(y, index=pd.to_datetime(t))
    got = rolling_statistic(t, y, width_s * SEC, stats, closed=closed, min_periods=min_periods)
    for st in stats:
        roll = s.rolling(f"{width_s}s", closed=closed, min_periods=min_periods)
        want = getattr(roll, st)().to_numpy()
        np.testing.assert_allclose(
            np.asarray(got[st]), want, rtol=1e-9, atol=atol, equal_nan=True, err_msg=st
        )


@pytest.mark.parametrize("side", ["left", "right"])
def test_sorted_search_exact_where_the_interpolation_guess_is_wrong(side):
    from jaxsubset._rolling_kernels import _sorted_search

    rng = np.random.default_rng(11)
    cases = [
        np.arange(500.0),  # evenly spaced: every guess right
        np.sort(rng.uniform(0.0, 100.0, 700)),  # irregular: guesses off, bisection fixes
        np.sort(rng.integers(0, 30, 900)).astype(np.float64),  # long runs of ties
        np.cumsum(rng.exponential(1.0, 400) ** 4),  # heavy gaps
        np.array([3.0]),
        np.array([1.0, 1.0, 1.0]),
    ]
    for a in cases:
        for shift in (0.0, 0.5, 7.0, 1e6, -1e6):
            v = a - shift
            got = np.asarray(_sorted_search(jnp.asarray(a), jnp.asarray(v), side))
            np.testing.assert_array_equal(got, np.searchsorted(a, v, side))
        # spacing 1 and 3: anchors everywhere / a ragged last block
        for spacing in (1, 3):
            got = _sorted_search(jnp.asarray(a), jnp.asarray(a - 2.0), side, spacing)
            np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, a - 2.0, side))
    empty = _sorted_search(jnp.arange(3.0), jnp.zeros((0,)), side)
    assert empty.shape == (0,)


def test_sorted_search_int64_nanoseconds_exact():
    from jaxsubset._rolling_kernels import _sorted_search

    rng = np.random.default_rng(12)
    base = np.int64(1_700_000_000) * SEC  # ~1.7e18 ns: beyond float64's exact integers
    a = base + np.cumsum(rng.integers(0, 5, 3000)).astype(np.int64) * SEC
    for w in (0, 1, 3 * SEC, 3 * SEC + 1, 10**12):
        for side in ("left", "right"):
            got = np.asarray(_sorted_search(jnp.asarray(a), jnp.asarray(a - w), side))
            np.testing.assert_array_equal(got, np.searchsorted(a, a - w, side))


@pytest.mark.parametrize("closed", ["right", "left", "both", "neither"])
def test_rolling_regular_grid_closed_form_matches_pandas(closed):
    # an exactly regular int64 grid takes the closed-form bounds; one gap takes the search
    rng = np.random.default_rng(13)
    n = 700
    y = rng.normal(5.0, 2.0, n)
    regular = (np.arange(n, dtype=np.int64) * 3 + 11) * SEC
    gap = regular.copy()
    gap[400:] += 50 * SEC
    for t in (regular, gap):
        for width in (1, 3, 4, 100, 2000):
            _check_pandas(t, y, width, closed, min_periods=2)


def test_rolling_regular_grid_same_as_general_road():
    # the same windows from both roads: a regular grid, and the same grid as float seconds
    rng = np.random.default_rng(14)
    n = 1000
    t = np.arange(n, dtype=np.int64) * SEC
    y = rng.normal(0.0, 1.0, (n, 2))
    y[17, 0] = np.nan
    for closed in ("right", "left", "both", "neither"):
        a = rolling_statistic(t, y, 25 * SEC, FAST, closed=closed)
        b = rolling_statistic(t / SEC, y, 25.0, FAST, closed=closed)
        for s in FAST:
            np.testing.assert_allclose(
                np.asarray(a[s]), np.asarray(b[s]), rtol=1e-12, atol=1e-12, equal_nan=True
            )


@pytest.mark.parametrize("closed", ["right", "neither"])
def test_rolling_evenly_spaced_one_pass_road_across_chunks(closed):
    # evenly spaced int64 times take the one-pass chunked road (windows ending at their point,
    # "right", or before it, "neither"); the series spans two chunks of 8192 points and a
    # ragged rest, and the widths reach inside one chunk, exactly one chunk, across chunks and
    # past the whole series. One compiled program per road (the width is traced).
    from jaxsubset._rolling_kernels import _CHUNK

    rng = np.random.default_rng(21)
    n = 2 * _CHUNK + 1234
    t = np.arange(n, dtype=np.int64) * SEC
    y = rng.normal(5.0, 2.0, (n, 2))
    y[[3, 9000, 16383, 16384], 0] = np.nan
    y[[100, 12000], 1] = np.inf
    y[12001, 1] = -np.inf
    stats = ("count", "sum", "mean", "var", "std")
    even = jax.jit(lambda t, y, w: rolling_statistic(t, y, w, stats, closed=closed, min_periods=2))
    general = jax.jit(
        lambda t, y, w: rolling_statistic(t, y, w, stats, closed=closed, min_periods=2)
    )
    clean = np.where(np.isfinite(y), y, 1.0)
    for width in (1, 2, 50, _CHUNK - 1, _CHUNK, _CHUNK + 1, 12345, 3 * n):
        for data in (clean, y):
            got = even(t, data, width * SEC)
            other = general(t / SEC, data, float(width))
            for j in range(2):
                roll = pd.Series(data[:, j], index=pd.to_datetime(t)).rolling(
                    f"{width}s", closed=closed, min_periods=2
                )
                for st in stats:
                    g = np.asarray(got[st])[:, j]
                    if np.isfinite(data[:, j]).all() or np.isnan(data[:, j]).any():
                        want = getattr(roll, st)().to_numpy()
                    else:
                        # NumPy's conventions for +-inf (a sum holding inf is inf; pandas
                        # gives NaN): the general road, itself tested against NumPy
                        want = np.asarray(other[st])[:, j]
                    if st == "std":  # compare variances: a std of ~1e-5 has few digits left
                        g, want = g**2, want**2
                    np.testing.assert_allclose(
                        g,
                        want,
                        rtol=1e-10,
                        atol=1e-9,
                        equal_nan=True,
                        err_msg=f"{st} width={width} channel={j}",
                    )
    assert even._cache_size() == 1 and general._cache_size() == 1


def test_rolling_evenly_spaced_grad_vmap_and_large_offset():
    from jaxsubset._rolling_kernels import _CHUNK

    rng = np.random.default_rng(22)
    n = _CHUNK + 300
    t = np.arange(n, dtype=np.int64) * SEC
    y = jnp.asarray(rng.normal(0.0, 1.0, n))

    def loss(y, tt, w):
        return jnp.sum(rolling_statistic(tt, y, w, "std", min_periods=2) ** 2)

    # the gradient through the chunked road equals the general road's (float seconds)
    g_even = jax.grad(loss)(y, t, 40 * SEC)
    g_general = jax.grad(loss)(y, t / SEC, 40.0)
    np.testing.assert_allclose(np.asarray(g_even), np.asarray(g_general), rtol=1e-9, atol=1e-12)
    # vmap over series
    ys = jnp.stack([y, 2 * y + 1])
    got = jax.vmap(lambda v: rolling_statistic(t, v, 40 * SEC, "mean"))(ys)
    for k in range(2):
        want = pd.Series(np.asarray(ys[k]), index=pd.to_datetime(t)).rolling("40s").mean()
        np.testing.assert_allclose(np.asarray(got[k]), want.to_numpy(), rtol=1e-12, atol=1e-13)
    # 1e8 + noise with a slow drift: the running window sums keep their digits
    big = 1e8 + np.asarray(y) + np.linspace(0.0, 1e3, n)
    got = rolling_statistic(t, big, 100 * SEC, ("mean", "std"), min_periods=2)
    s = pd.Series(big, index=pd.to_datetime(t)).rolling("100s", min_periods=2)
    # an exact reference: each window's std from its own values, two-pass
    idx = np.arange(n)
    exact = np.array([np.std(big[max(i - 99, 0) : i + 1], ddof=1) if i else np.nan for i in idx])
    np.testing.assert_allclose(np.asarray(got["std"]), exact, rtol=1e-9, equal_nan=True)
    np.testing.assert_allclose(np.asarray(got["mean"]), s.mean().to_numpy(), rtol=1e-14)


def test_rolling_evenly_spaced_extremes_chunk_by_chunk():
    # min/max on an evenly spaced axis, chunks of 8192 points: the first chunks reach before
    # the series (history of identities), the ragged rest is padded; widths from one row to
    # the longest the streamed table covers (then a fallback), every table depth, and
    # min_periods above a row (the first windows masked). "both"/"left"/"neither" bounds:
    # test_rolling_regular_grid_same_as_general_road
    from jaxsubset._rolling_kernels import _CHUNK

    rng = np.random.default_rng(23)
    n = 2 * _CHUNK + 1000
    t = np.arange(n, dtype=np.int64) * SEC
    y = rng.normal(0.0, 1.0, (n, 2))
    f = jax.jit(lambda t, y, w: rolling_statistic(t, y, w, ("min", "max"), min_periods=12))
    for width in (6, 7, 8, 9, 50, 100, 257, 258, 1000, 4105, 8193, _CHUNK + 3):
        got = f(t, y, width * SEC)
        for j in range(2):
            roll = pd.Series(y[:, j], index=pd.to_datetime(t)).rolling(f"{width}s", min_periods=12)
            for st in ("min", "max"):
                np.testing.assert_array_equal(
                    np.asarray(got[st])[:, j],
                    getattr(roll, st)().to_numpy(),
                    err_msg=f"{st} width={width} channel={j}",
                )
    assert f._cache_size() == 1
    # NaN propagated ("propagate"): a window holding one gives NaN, the others their extreme
    y[[5, 9000, 16390], 0] = np.nan
    got = rolling_statistic(t, y, 300 * SEC, ("min", "max"), nan_policy="propagate")
    for st in ("min", "max"):
        want = (
            pd.Series(y[:, 0], index=pd.to_datetime(t))
            .rolling("300s")
            .apply(lambda a, st=st: getattr(np, st)(a), raw=True)
            .to_numpy()
        )
        np.testing.assert_array_equal(np.asarray(got[st])[:, 0], want, err_msg=st)


def test_rolling_extremes_fast_road_and_fallbacks():
    # row road: windows crossing rows; fallbacks: short windows starting mid-row (irregular
    # spacing), windows spanning more than 2**8 rows of 16 points
    rng = np.random.default_rng(15)
    n = 6000
    y = rng.normal(0.0, 1.0, n)
    regular = np.arange(n, dtype=np.int64) * SEC
    irregular = np.cumsum(rng.integers(1, 9, n)).astype(np.int64) * SEC
    # widths 100 / 500 / 4100 take row tables of 4 / 7 / 10 levels (lax.switch by the longest
    # window), 5000 the fallback; irregular spacing queries the table per point
    for t, widths in (
        (regular, (1, 5, 16, 17, 100, 129, 500, 4100, 5000)),
        (irregular, (3, 40, 300, 9000)),
    ):
        for width in widths:
            _check_pandas(t, y, width, stats=["min", "max"])
    # ties: pandas ends each window at the point itself
    _check_pandas(T, Y, 20, stats=["min", "max", "count"])


def test_rolling_min_max_nan_and_inf():
    n = 300
    t = np.arange(n, dtype=np.int64) * SEC
    y = np.sin(np.arange(n) * 0.37)
    y[[5, 6, 7, 100]] = np.nan
    for stats in (["min", "max", "count"], ["sum", "mean", "min", "max"]):
        _check_pandas(t, y, 10, stats=stats, min_periods=3)
    # pandas skips -inf in rolling min (as it did before these roads): NumPy is the reference
    y[50] = np.inf
    y[200] = -np.inf
    got = rolling_statistic(t, y, 10 * SEC, ("min", "max", "sum"), min_periods=3)
    for s, ref in (("min", np.nanmin), ("max", np.nanmax), ("sum", np.nansum)):
        want = np.array([ref(y[max(i - 9, 0) : i + 1]) for i in range(n)])
        cnt = np.array([np.sum(~np.isnan(y[max(i - 9, 0) : i + 1])) for i in range(n)])
        want = np.where(cnt >= 3, want, np.nan)
        np.testing.assert_allclose(np.asarray(got[s]), want, rtol=1e-12, equal_nan=True)
    got = rolling_statistic(t, y, 10 * SEC, ("max", "sum"), nan_policy="propagate")
    assert np.isnan(np.asarray(got["max"])[[5, 10, 16, 100, 109]]).all()
    assert np.asarray(got["max"])[20] == np.max(y[11:21])
    assert np.isinf(np.asarray(got["sum"])[55])


def test_rolling_blocked_prefix_sums_precision_large_offset():
    from jaxsubset._rolling_kernels import _prefix_1d

    rng = np.random.default_rng(16)
    for n in (1, 63, 64, 65, 1000, 4097, 70_000):
        z = rng.normal(0.0, 1.0, n)
        np.testing.assert_allclose(np.asarray(_prefix_1d(jnp.asarray(z))), np.cumsum(z), atol=1e-9)
    # 1e8 + noise: sums and means to ~1e-12 relative, std to 1e-9 (the shift keeps the digits)
    n = 20_000
    t = np.arange(n, dtype=np.int64) * SEC
    y = 1e8 + rng.normal(0.0, 1.0, n)
    got = rolling_statistic(t, y, 100 * SEC, ("sum", "mean", "std"))
    csum = np.concatenate([[0.0], np.cumsum(y - 1e8)])
    lo = np.maximum(np.arange(n) - 99, 0)
    hi = np.arange(n) + 1
    cnt = hi - lo
    want_sum = (csum[hi] - csum[lo]) + cnt * 1e8
    np.testing.assert_allclose(np.asarray(got["sum"]), want_sum, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(got["mean"]), want_sum / cnt, rtol=1e-13)
    want_std = np.array(
        [y[a:b].std(ddof=1) if b - a > 1 else np.nan for a, b in zip(lo, hi, strict=True)]
    )
    np.testing.assert_allclose(np.asarray(got["std"]), want_std, rtol=1e-9, equal_nan=True)


_ROAD_TRACES = {"n": 0}


@jax.jit
def _rolling_roads_jit(t, y, width):
    _ROAD_TRACES["n"] += 1
    return rolling_statistic(t, y, width, ("sum", "std", "max"), min_periods=2)


def test_rolling_roads_switch_without_recompiling():
    # regular and irregular axes of the same shape share one compiled program
    rng = np.random.default_rng(17)
    n = 900
    y = rng.normal(0.0, 1.0, n)
    regular = np.arange(n, dtype=np.int64) * SEC
    irregular = np.cumsum(rng.integers(0, 3, n)).astype(np.int64) * SEC
    for t in (regular, irregular, regular):
        got = _rolling_roads_jit(t, y, 30 * SEC)
        s = pd.Series(y, index=pd.to_datetime(t)).rolling("30s", min_periods=2)
        for st in ("sum", "std", "max"):
            np.testing.assert_allclose(
                np.asarray(got[st]), getattr(s, st)().to_numpy(), rtol=1e-9, atol=1e-10
            )
    assert _ROAD_TRACES["n"] == 1
    # the gradient of a rolling max reaches each window's maximum once per window
    g = jax.grad(lambda y: jnp.sum(rolling_statistic(regular, y, 30 * SEC, "max")))(y)
    hits = np.zeros(n)
    for i in range(n):
        lo = max(i - 29, 0)
        hits[lo + np.argmax(y[lo : i + 1])] += 1
    np.testing.assert_allclose(np.asarray(g), hits)


@pytest.mark.parametrize("statistic", ["min", "max"])
def test_propagate_keeps_nan_in_long_windows(statistic):
    # XLA's CPU max/min reductions drop NaN over long axes: with nan_policy="propagate" a
    # window holding a NaN must still give NaN (NumPy's rule), on every road
    n = 20_000
    x = np.arange(n, dtype=float)
    y = np.random.default_rng(3).normal(size=n)
    y[[500, 12_345]] = np.nan
    want = np.array([np.isnan(y[max(0, i - 999) : i + 1]).any() for i in range(n)])
    fn = jax.jit(lambda x, y: rolling_statistic(x, y, 1000.0, statistic, nan_policy="propagate"))
    got = np.asarray(fn(x, y))
    np.testing.assert_array_equal(np.isnan(got), want)
    ref = np.array([getattr(np, statistic)(y[max(0, i - 999) : i + 1]) for i in range(0, n, 37)])
    np.testing.assert_array_equal(got[::37], ref)


def test_rolling_outside_jit_compiles_once_per_shape():
    # called op by op, the per-point road must reuse its compiled program: before it was
    # jitted, every call compiled its lax.cond branches again (~3 s a call)
    from jaxsubset._rolling_kernels import _rolling_per_point

    rng = np.random.default_rng(18)
    n = 400
    t = np.arange(n, dtype=np.int64) * SEC
    before = _rolling_per_point._cache_size()
    for width in (5, 9, 30):
        y = rng.normal(0.0, 1.0, n)
        got = rolling_statistic(t, y, width * SEC, ("mean", "max"))
        s = pd.Series(y, index=pd.to_datetime(t)).rolling(f"{width}s")
        np.testing.assert_allclose(np.asarray(got["mean"]), s.mean().to_numpy(), rtol=1e-12)
        np.testing.assert_array_equal(np.asarray(got["max"]), s.max().to_numpy())
    assert _rolling_per_point._cache_size() == before + 1


_PROP_N = 400
_PROP_STATS = ("min", "max", "sum", "std")


@jax.jit
def _rolling_prop(t, y, width):
    return rolling_statistic(t, y, width, _PROP_STATS, min_periods=1)


@given(
    regular=hst.booleans(),
    steps=hst.lists(hst.integers(0, 3), min_size=_PROP_N, max_size=_PROP_N),
    step=hst.integers(1, 5),
    width=hst.integers(1, 3000),
    nan_at=hst.lists(hst.integers(0, _PROP_N - 1), max_size=5),
    seed=hst.integers(0, 2**16),
)
def test_rolling_property_matches_pandas_on_random_axes_and_widths(
    regular, steps, step, width, nan_at, seed
):
    # one compiled program (fixed N) for every example: evenly spaced axes take the closed-form
    # bounds and the per-row table queries, tied/irregular ones the search and per-point
    # queries; short and long widths pick both row-table sizes (4 and all 6 levels at N = 400)
    # and short windows starting mid-row the fallback
    rng = np.random.default_rng(seed)
    t = np.arange(_PROP_N) * step if regular else np.cumsum(steps)
    t = t.astype(np.int64) * SEC
    y = rng.normal(0.0, 1.0, _PROP_N)
    y[nan_at] = np.nan
    got = _rolling_prop(t, y, width * SEC)
    roll = pd.Series(y, index=pd.to_datetime(t)).rolling(f"{width}s", min_periods=1)
    for s in _PROP_STATS:
        want = getattr(roll, s)().to_numpy()
        np.testing.assert_allclose(
            np.asarray(got[s]), want, rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=s
        )
