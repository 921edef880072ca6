"""``window_statistic``: fixed-count windows against pandas ``rolling(w)`` and bottleneck's
``move_*``, plain and under jit/vmap/grad, and equal to ``rolling_statistic(window=)``."""

import bottleneck as bn
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import jaxsubset
from references import FLOAT, tol


RNG = np.random.default_rng(2028)
N = 157
Y = RNG.normal(2.0, 3.0, N).astype(FLOAT)
Y[[11, 40, 41]] = np.nan
Y[90:110] = 1.5  # a constant run: var exactly 0


@pytest.mark.parametrize("w", [1, 4, 13, N + 5])
@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize(
    "statistic", ["count", "sum", "mean", "var", "std", "min", "max", "median", "skew"]
)
def test_against_pandas(w, center, statistic):
    mp = min(w, 3)
    got = jaxsubset.window_statistic(Y, w, statistic, min_periods=mp, ddof=1, center=center)
    roll = pd.Series(Y.astype(np.float64)).rolling(w, min_periods=mp, center=center)
    kw = {"ddof": 1} if statistic in ("var", "std") else {}
    want = getattr(roll, statistic)(**kw).to_numpy()
    rtol = {"skew": 1e-4 if FLOAT == np.float32 else 1e-8}.get(statistic)
    kw = tol() if rtol is None else dict(rtol=rtol, atol=rtol)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, err_msg=statistic, **kw)
    if statistic in ("var", "std") and 1 < w <= 20 and not center:
        assert np.asarray(got)[109] == 0  # a window of the constant run: exactly 0


@pytest.mark.parametrize(
    ("statistic", "move"),
    [("mean", bn.move_mean), ("std", bn.move_std), ("min", bn.move_min),
     ("max", bn.move_max), ("median", bn.move_median), ("sum", bn.move_sum)],
)  # fmt: skip
def test_against_bottleneck(statistic, move):
    w = 7
    want = move(Y.astype(np.float64), w, min_count=2)
    got = jaxsubset.window_statistic(Y, w, statistic, min_periods=2)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, **tol())


def test_equals_rolling_statistic_window_and_quantile():
    names = ("mean", "max", "quantile")
    got = jaxsubset.window_statistic(Y, 6, names, q=0.25, min_periods=2)
    old = jaxsubset.rolling_statistic(None, Y, statistic=names, window=6, q=0.25, min_periods=2)
    for s in names:
        np.testing.assert_array_equal(np.asarray(got[s]), np.asarray(old[s]), err_msg=s)
    want = pd.Series(Y.astype(np.float64)).rolling(6, min_periods=2).quantile(0.25)
    np.testing.assert_allclose(np.asarray(got["quantile"], np.float64), want, **tol())


def test_jit_vmap_grad():
    y2 = np.stack([Y, np.nan_to_num(Y[::-1])]).astype(FLOAT)
    f = jax.jit(lambda y: jaxsubset.window_statistic(y, 5, "mean"))
    np.testing.assert_allclose(f(Y), jaxsubset.window_statistic(Y, 5, "mean"), **tol())
    batched = jax.vmap(lambda y: jaxsubset.window_statistic(y, 5, "sum"))(y2)
    for row, y in zip(batched, y2, strict=True):
        want = pd.Series(y.astype(np.float64)).rolling(5, min_periods=1).sum()
        np.testing.assert_allclose(np.asarray(row, np.float64), want, **tol())
    # d/dy_j of sum_i mean_i = sum over the windows holding j of 1 / (their size)
    clean = np.nan_to_num(Y)
    g = jax.grad(lambda y: jaxsubset.window_statistic(y, 3, "mean").sum())(jnp.asarray(clean))
    size = np.minimum(np.arange(N) + 1, 3)
    want = np.array([sum(1 / size[i] for i in range(j, min(j + 3, N))) for j in range(N)])
    np.testing.assert_allclose(np.asarray(g, np.float64), want, **tol())


def test_bad_arguments_name_the_function():
    with pytest.raises(ValueError, match=r"^window_statistic: `window`"):
        jaxsubset.window_statistic(Y, 0, "mean")
    with pytest.raises(ValueError, match=r"^window_statistic: `method` must be one of"):
        jaxsubset.window_statistic(Y, 3, "mean", method="scatter")
    with pytest.raises(TypeError, match=r"^window_statistic: statistic 'quantile' needs `q=`"):
        jaxsubset.window_statistic(Y, 3, "quantile")
