"""ewm_statistic: time-based exponentially weighted mean/var/std against pandas' ``ewm``."""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import jaxsubset
from checks import check_against, compile_and_check, vmap_and_check
from references import FLOAT, X64, needs_x64


RNG = np.random.default_rng(11)
N = 150
X = np.cumsum(RNG.exponential(size=N)).astype(FLOAT)
Y = (RNG.normal(size=N) * 3 + 50).astype(FLOAT)
Y[[4, 60, 61]] = np.nan
# pandas computes in float64; float32 results (JAX's default mode) keep ~6 digits of a scan
MEAN_TOL = dict(rtol=1e-9, atol=1e-9) if X64 else dict(rtol=2e-5, atol=1e-4)
VAR_TOL = dict(rtol=1e-8, atol=1e-9) if X64 else dict(rtol=2e-3, atol=1e-3)


def _pandas_mean(x, y, halflife):
    t = pd.to_datetime(np.round(np.asarray(x, np.float64) * 1e9).astype(np.int64))
    ns = np.round(np.float64(halflife) * 1e9)
    s = pd.Series(np.asarray(y, np.float64))
    return s.ewm(halflife=pd.Timedelta(int(ns), "ns"), times=t).mean().to_numpy()


def test_mean_with_times_matches_pandas_irregular_axis_and_nan():
    got = jaxsubset.ewm_statistic(X, Y, 2.5, "mean")
    np.testing.assert_allclose(np.asarray(got), _pandas_mean(X, Y, 2.5), **MEAN_TOL)


@needs_x64
def test_mean_on_a_datetime_axis_with_a_duration_string():
    t = pd.to_datetime(np.round(X.astype(np.float64) * 1e9).astype(np.int64))
    want = pd.Series(Y).ewm(halflife="2500ms", times=t).mean().to_numpy()
    got = jaxsubset.ewm_statistic(t.values, Y, "2500ms", "mean")
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


@pytest.mark.parametrize("bias", [False, True])
def test_var_std_on_an_evenly_spaced_axis_match_pandas(bias):
    x = np.arange(N, dtype=FLOAT)
    s = pd.Series(Y.astype(np.float64)).ewm(halflife=3.0)
    got = jaxsubset.ewm_statistic(x, Y, 3.0, ("mean", "var", "std"), bias=bias)
    np.testing.assert_allclose(np.asarray(got["mean"]), s.mean(), **MEAN_TOL)
    np.testing.assert_allclose(np.asarray(got["var"]), s.var(bias=bias), **VAR_TOL)
    np.testing.assert_allclose(np.asarray(got["std"]), s.std(bias=bias), **VAR_TOL)


def test_constant_series_has_exactly_zero_spread_and_min_periods():
    x = np.arange(6, dtype=FLOAT)
    y = np.full(6, 1e6 + 0.1, FLOAT)
    out = jaxsubset.ewm_statistic(x, y, 2.0, ("mean", "std"), min_periods=3)
    assert np.isnan(np.asarray(out["std"])[:2]).all()
    assert (np.asarray(out["std"])[2:] == 0).all()
    assert (np.asarray(out["mean"])[2:] == FLOAT(1e6 + 0.1)).all()
    # one point: the unbiased variance is undefined (pandas: NaN), the biased one is 0
    one = jaxsubset.ewm_statistic(x[:1], y[:1], 2.0, ("var",), bias=True)["var"]
    assert np.asarray(one).tolist() == [0.0]
    assert np.isnan(np.asarray(jaxsubset.ewm_statistic(x[:1], y[:1], 2.0, "var"))).all()


def test_nan_policies():
    prop = np.asarray(jaxsubset.ewm_statistic(X, Y, 2.0, "mean", nan_policy="propagate"))
    assert not np.isnan(prop[:4]).any() and np.isnan(prop[4:]).all()
    with pytest.raises(ValueError, match="NaN"):
        jaxsubset.ewm_statistic(X, Y, 2.0, "mean", nan_policy="raise")
    # omit: the result at a NaN row is the previous row's (pandas' ignore_na=False)
    om = np.asarray(jaxsubset.ewm_statistic(X, Y, 2.0, "mean"))
    assert om[4] == om[3] and om[61] == om[59]


def test_channels_jit_without_recompiling_vmap_and_grad():
    y2 = np.stack([np.nan_to_num(Y, nan=50.0), np.arange(N, dtype=FLOAT)], axis=1)
    for j in range(2):
        check_against(
            lambda x, y, h: jaxsubset.ewm_statistic(x, y, h, "mean"),
            lambda x, y, h: _pandas_mean(x, y, h),
            (X, y2[:, j], 2.0),
            **MEAN_TOL,
        )

    def f(x, y, h):
        return jaxsubset.ewm_statistic(x, y, h, ("mean", "std"))

    compile_and_check(f, [(X, y2, FLOAT(h)) for h in (1.0, 2.0, 4.0)])
    vmap_and_check(lambda y: jaxsubset.ewm_statistic(X, y, 2.0, "std"), (y2.T,))
    g = jax.jit(jax.grad(lambda y: jaxsubset.ewm_statistic(X, y, 2.0, "std")[-1]))(jnp.asarray(Y))
    g = np.asarray(g)
    assert np.isfinite(g).all() and (g[[4, 60, 61]] == 0).all() and np.abs(g).sum() > 0


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="`halflife` must be > 0"):
        jaxsubset.ewm_statistic(X, Y, 0.0)
    with pytest.raises(ValueError, match="`statistic` must be one of"):
        jaxsubset.ewm_statistic(X, Y, 1.0, "median")
    with pytest.raises(ValueError, match="sorted"):
        jaxsubset.ewm_statistic(X[::-1], Y, 1.0)
    with pytest.raises(ValueError, match="same length"):
        jaxsubset.ewm_statistic(X, Y[:-1], 1.0)
    if X64:
        t = np.arange(3).astype("datetime64[s]")
        with pytest.raises(TypeError, match="duration"):
            jaxsubset.ewm_statistic(t, np.ones(3), 2.0)
