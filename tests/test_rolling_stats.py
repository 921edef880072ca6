"""rolling_statistic against pandas offset-window rolling (ties, NaN, closed), in both JAX modes."""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, strategies as hst

from checks import compile_once
from jaxsubset import rolling_statistic


X64 = jax.config.jax_enable_x64
RTOL, ATOL = (1e-9, 1e-10) if X64 else (2e-5, 2e-5)
STATS = ["count", "sum", "mean", "var", "std", "min", "max", "median"]
RNG = np.random.default_rng(7)
N = 1500
# integer seconds with ties (steps of 0, 1 or 2 s) and a few NaN values; int32-safe, so the
# same axis serves both JAX modes (pandas reads it as seconds)
T = np.cumsum(RNG.integers(0, 3, N)).astype(np.int32)
Y = RNG.normal(2.0, 3.0, N)
Y[RNG.integers(0, N, 25)] = np.nan
SERIES = pd.Series(Y, index=pd.to_datetime(T.astype(np.int64), unit="s"))


def _pandas(statistic, closed="right", min_periods=1, y=SERIES, window="7s"):
    roll = y.rolling(window, closed=closed, min_periods=min_periods)
    if statistic in ("var", "std"):
        return getattr(roll, statistic)(ddof=0)  # the library's ddof (NumPy/SciPy's 0)
    return getattr(roll, statistic)()


def _close(got, want, err_msg=""):
    np.testing.assert_allclose(
        np.asarray(got, float), want, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=err_msg
    )


@pytest.mark.parametrize("closed", ["right", "left", "both", "neither"])
@pytest.mark.parametrize("min_periods", [1, 3])
def test_rolling_matches_pandas_time_offset(closed, min_periods):
    got = rolling_statistic(T, Y, 7, STATS, closed=closed, min_periods=min_periods)
    for s in STATS:
        _close(got[s], _pandas(s, closed, min_periods).to_numpy(), err_msg=s)


def test_rolling_ddof_default_is_numpys_and_ddof_1_is_pandas():
    # one default everywhere (ddof=0, NumPy/SciPy); pandas' rolling std is ddof=1
    got = rolling_statistic(T, Y, 7, "std")
    _close(got, SERIES.rolling("7s").std(ddof=0).to_numpy())
    got1 = rolling_statistic(T, Y, 7, "std", ddof=1)
    _close(got1, SERIES.rolling("7s").std().to_numpy())
    # a one-point window: 0 with ddof=0, NaN with ddof=1 (pandas)
    one = rolling_statistic(np.array([0.0]), np.array([3.0]), 1.0, "std")
    assert np.asarray(one).tolist() == [0.0]
    assert np.isnan(
        np.asarray(rolling_statistic(np.array([0.0]), np.array([3.0]), 1.0, "std", ddof=1))
    ).all()


def test_rolling_min_periods_zero():
    got = rolling_statistic(T, Y, 3, ("sum", "mean"), closed="neither", min_periods=0)
    for s in ("sum", "mean"):
        _close(got[s], _pandas(s, "neither", 0, window="3s").to_numpy())


def test_rolling_ties_end_at_the_row_as_pandas():
    # pandas: the window of row i ends at row i, also when later rows share its x
    x = np.array([0.0, 1.0, 1.0, 2.0])
    y = np.array([1.0, 2.0, 4.0, 8.0])
    got = np.asarray(rolling_statistic(x, y, 1.5, "mean"))
    s = pd.Series(y, index=pd.to_datetime(np.array([0, 1, 1, 2]), unit="s"))
    want = s.rolling("1500ms").mean().to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got, [1.0, 1.5, 7 / 3, 14 / 3], rtol=1e-6)


def test_rolling_channels_and_float_x():
    x = T.astype(float)
    y2 = np.stack([Y, np.nan_to_num(Y) ** 2], axis=1)
    got = rolling_statistic(x, y2, 7.0, "mean")
    assert got.shape == (N, 2)
    for c in range(2):
        want = _pandas("mean", y=pd.Series(y2[:, c], index=SERIES.index)).to_numpy()
        _close(got[:, c], want)


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
    off = 1e8 if X64 else 1e4
    y = off + RNG.normal(0.0, 1.0, N)
    x = T.astype(float)
    got = np.asarray(rolling_statistic(x, y, 30.0, "var", ddof=1))
    hi = np.arange(N) + 1
    lo = np.searchsorted(x, x - 30.0, side="right")
    want = np.array(
        [y[a:b].var(ddof=1) if b - a > 1 else np.nan for a, b in zip(lo, hi, strict=True)]
    )
    np.testing.assert_allclose(got, want, rtol=1e-9 if X64 else 2e-3, equal_nan=True)


def test_rolling_huge_value_never_spoils_other_windows():
    # a prefix-sum road leaks a -9e33 into every later window; pandas gives [5, 6, 7]
    y = np.arange(10.0)
    y[2] = -9e33
    got = rolling_statistic(np.arange(10.0), y, 5.0, "mean", min_periods=5)
    np.testing.assert_array_equal(np.asarray(got)[7:], [5.0, 6.0, 7.0])
    # one 1e10 in 16 points: windows without it keep their std; windows of zeros are 0
    z = np.r_[RNG.normal(0.0, 1.5, 8), 1e10, RNG.normal(0.0, 1.5, 7)]
    std = np.asarray(rolling_statistic(np.arange(16.0), z, 4.0, "std", ddof=1))
    want = pd.Series(z).rolling(4).std().to_numpy()
    clean = np.arange(16) < 8
    np.testing.assert_allclose(std[clean][3:], want[clean][3:], rtol=1e-5 if not X64 else 1e-12)
    zeros = np.r_[1e10, 3.0, np.zeros(14)]
    out = rolling_statistic(np.arange(16.0), zeros, 3.0, ("mean", "std", "sum"))
    for s in ("mean", "std", "sum"):
        assert (np.asarray(out[s])[4:] == 0.0).all(), s


def _rolling(x, y, width):
    return rolling_statistic(x, y, width, ("mean", "std", "max"), min_periods=2)


def test_rolling_jit_traced_width_no_recompile_vmap_grad():
    widths = (3, 7, 11)
    for w, got in zip(widths, compile_once(_rolling, [(T, Y, w) for w in widths]), strict=True):
        for s in ("mean", "std", "max"):
            _close(got[s], _pandas(s, min_periods=2, window=f"{w}s").to_numpy(), err_msg=s)
    ys = np.stack([np.nan_to_num(Y), np.nan_to_num(Y) * 2.0])
    out = jax.jit(jax.vmap(lambda y: rolling_statistic(T, y, 5, "sum")))(ys)
    np.testing.assert_allclose(np.asarray(out[1]), 2.0 * np.asarray(out[0]), rtol=1e-6)
    # d/dy_j of the sum of all window sums = number of windows holding point j
    y0 = np.nan_to_num(Y)
    g = jax.jit(jax.grad(lambda y: jnp.sum(rolling_statistic(T, y, 5, "sum"))))(y0)
    hits = np.zeros(N)
    for i in range(N):
        lo = np.searchsorted(T, T[i] - 5, side="right")
        hits[lo : i + 1] += 1
    np.testing.assert_allclose(np.asarray(g), hits, rtol=1e-6)
    gm = jax.jit(jax.grad(lambda y: jnp.sum(rolling_statistic(T, y, 5, "std", min_periods=2))))
    assert np.isfinite(np.asarray(gm(y0))).all()


@pytest.mark.parametrize("statistic", ["min", "max"])
def test_propagate_keeps_nan_in_long_windows(statistic):
    # XLA's CPU max/min reductions drop NaN over long axes: with nan_policy="propagate" a
    # window holding a NaN must still give NaN (NumPy's rule)
    n = 5000
    x = np.arange(n, dtype=float)
    y = np.random.default_rng(3).normal(size=n)
    y[[500, 3210]] = np.nan
    want = np.array([np.isnan(y[max(0, i - 999) : i + 1]).any() for i in range(n)])
    fn = jax.jit(lambda x, y: rolling_statistic(x, y, 1000.0, statistic, nan_policy="propagate"))
    got = np.asarray(fn(x, y))
    np.testing.assert_array_equal(np.isnan(got), want)
    ref = np.array([getattr(np, statistic)(y[max(0, i - 999) : i + 1]) for i in range(0, n, 37)])
    np.testing.assert_allclose(got[::37], ref, rtol=1e-6)


def test_rolling_errors():
    with pytest.raises(ValueError, match="`closed` must be one of"):
        rolling_statistic(T, Y, 1, closed="middle")
    with pytest.raises(ValueError, match="`min_periods` must be a >= 0 int, got -1"):
        rolling_statistic(T, Y, 1, min_periods=-1)
    with pytest.raises(ValueError, match="`statistic` must be one of"):
        rolling_statistic(T, Y, 1, "mode")
    with pytest.raises(ValueError, match="`method` must be one of"):
        rolling_statistic(T, Y, 1, method="fast")
    with pytest.raises(ValueError, match="cannot compute 'median'"):
        rolling_statistic(T, Y, 1, "median", method="tree")
    with pytest.raises(ValueError, match="sorted"):
        rolling_statistic(T[::-1], Y, 1)
    with pytest.raises(ValueError, match="same length"):
        rolling_statistic(T, Y[:-1], 1)
    with pytest.raises(ValueError, match="scalar"):
        rolling_statistic(T, Y, np.array([1, 1]))


_PROP_N = 400
_PROP_STATS = ("min", "max", "sum", "std")


@jax.jit
def _rolling_prop(t, y, width):
    return rolling_statistic(t, y, width, _PROP_STATS, min_periods=1, ddof=1)


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
    # one compiled program (fixed N) for every example: regular, tied and irregular axes,
    # windows inside one block of the tree, across blocks and across the whole series
    rng = np.random.default_rng(seed)
    t = np.arange(_PROP_N) * step if regular else np.cumsum(steps)
    t = t.astype(np.int32)
    y = rng.normal(0.0, 1.0, _PROP_N)
    y[nan_at] = np.nan
    got = _rolling_prop(t, y, width)
    index = pd.to_datetime(t.astype(np.int64), unit="s")
    roll = pd.Series(y, index=index).rolling(f"{width}s", min_periods=1)
    for s in _PROP_STATS:
        want = getattr(roll, s)().to_numpy()
        np.testing.assert_allclose(
            np.asarray(got[s]),
            want,
            rtol=RTOL,
            atol=1e-9 if X64 else 1e-5,
            equal_nan=True,
            err_msg=s,
        )


@pytest.mark.parametrize("stat", ["mean", "std", "max", "count", "median"])
def test_float64_x_windows_with_concrete_or_traced_values(stat):
    # positions float32 rounds (1e6 + gaps of ~0.03): windows of the float64 x in either
    # mode; in 32-bit mode one call as in 64-bit mode for concrete y (resolve._exact.once64),
    # two (the windows, then the reduction) for traced y: the same results and dtypes
    rng = np.random.default_rng(7)
    x = 1e6 + np.cumsum(rng.exponential(0.03, 400))
    y = rng.standard_normal(400)
    kw = dict(capacity=64) if stat == "median" else {}
    eager = rolling_statistic(x, y, 0.5, stat, **kw)
    traced = jax.jit(lambda v: rolling_statistic(x, v, 0.5, stat, **kw))(y)
    y_mode = np.asarray(jnp.asarray(y), np.float64)  # the values this mode holds
    start = np.searchsorted(x, x - 0.5, side="right")  # x[i] - 0.5 < x[j] <= x[i]
    ref = {"mean": np.mean, "std": np.std, "max": np.max, "count": len, "median": np.median}
    want = [ref[stat](y_mode[s : i + 1]) for i, s in enumerate(start)]
    np.testing.assert_allclose(np.asarray(eager, np.float64), want, rtol=RTOL, atol=ATOL)
    assert eager.dtype == traced.dtype
    np.testing.assert_allclose(np.asarray(eager), np.asarray(traced), rtol=RTOL, atol=ATOL)
