"""rolling_statistic against pandas offset-window rolling (time index, ties, NaN, closed)."""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

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
