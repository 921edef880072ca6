"""Missing values in y: nan_policy "propagate", "omit" and "raise" on reductions and apply."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from references import NAN_FUNCS


def _rt(r: float) -> float:
    """The relative tolerance for float64 results, loosened for float32 (32-bit mode)."""
    return r if jax.config.jax_enable_x64 else max(r, 5e-5)


def _at(a: float) -> float:
    """The absolute tolerance for float64 results, loosened for float32 (32-bit mode)."""
    return a if jax.config.jax_enable_x64 else max(a, 2e-5)


def data_with_nan():
    rng = np.random.default_rng(0)
    x = np.arange(60.0)
    y = rng.normal(size=(60, 2))
    y[rng.random((60, 2)) < 0.2] = np.nan
    y[20:30, 1] = np.nan  # a whole subset of NaN in one channel
    return x, y


@pytest.mark.parametrize("use_jit", [False, True])
def test_omit_matches_numpy_nan_functions(use_jit):
    x, y = data_with_nan()
    s = jaxsubset.chunks(x, y, 6)  # chunk 2 is [20:30]: all NaN in channel 1

    def reduce(s):
        return {k: getattr(s, k)(nan_policy="omit") for k in NAN_FUNCS} | {
            "argmin": s.argmin(nan_policy="omit"),
            "valid": s.valid_count(),
        }

    got = jax.jit(reduce)(s) if use_jit else reduce(s)
    got = jax.tree.map(np.asarray, got)  # host copies for the element-wise checks
    for k, piece in enumerate(np.array_split(np.arange(60), 6)):
        seg = y[piece]
        for name, fn in NAN_FUNCS.items():
            for c in range(2):
                col = seg[:, c]
                if np.isnan(col).all():
                    expected = 0.0 if name == "sum" else np.nan
                else:
                    expected = fn(col)
                np.testing.assert_allclose(
                    float(got[name][k, c]),
                    expected,
                    rtol=_rt(1e-12),
                    err_msg=f"{name} chunk {k} channel {c}",
                )
            assert got["valid"][k].tolist() == (~np.isnan(seg)).sum(0).tolist()
        for c in range(2):
            col = seg[:, c]
            expected = -1 if np.isnan(col).all() else piece[0] + np.nanargmin(col)
            assert int(got["argmin"][k, c]) == expected


def test_propagate_gives_nan_where_numpy_does():
    x, y = data_with_nan()
    s = jaxsubset.chunks(x, y, 6)
    for name in ("sum", "mean", "var", "std", "min", "max", "median"):
        got = np.asarray(getattr(s, name)())
        ref = np.array([getattr(np, name)(y[p], axis=0) for p in np.array_split(np.arange(60), 6)])
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=name)


def test_propagate_keeps_nan_in_large_min_max_reductions():
    # XLA's CPU min/max reductions over a long axis drop NaN under jit (elementwise max and
    # scatter-max keep it): every min/max of the library must still give NaN as NumPy does
    rng = np.random.default_rng(1)
    x = np.arange(100_000.0)
    y = rng.normal(size=x.size)
    y[[1234, 50_000, 99_999]] = np.nan
    want = np.isnan(y.reshape(100, 1000)).any(1)
    s = jaxsubset.chunks(x, y, 100)
    r = jaxsubset.ranges.chunks(x, 100)
    for which in ("min", "max"):
        got = jax.jit(lambda s, w=which: getattr(s, w)())(s)
        np.testing.assert_array_equal(np.isnan(np.asarray(got)), want, err_msg=which)
        got = jax.jit(lambda y, r, w=which: jaxsubset.range_statistic(y, r, w))(y, r)
        np.testing.assert_array_equal(np.isnan(np.asarray(got)), want, err_msg=which)
    for x_sorted in (True, False):  # scipy: "max" propagates NaN ("min" skips it)
        got = jaxsubset.binned_statistic(x, y, "max", 100, x_sorted=x_sorted).statistic
        np.testing.assert_array_equal(np.isnan(np.asarray(got)), want)


def test_min_max_of_long_chunks_with_inf_and_nan_match_numpy_under_jit():
    # the extreme is one NaN-keeping reduction of its own: +-inf held without a NaN give the
    # infinite extreme (both signs: no NaN, unlike the sum), a NaN gives NaN, each chunk alone
    x = np.arange(20_000.0)
    y = np.random.default_rng(3).normal(size=x.size)
    y[[10, 2_050]] = np.inf, -np.inf  # chunk 0: +inf; chunk 1: -inf
    y[[4_100, 4_200]] = np.inf, -np.inf  # chunk 2: both
    y[[6_100, 6_300]] = np.nan, np.inf  # chunk 3: NaN and +inf
    y = np.asarray(jnp.asarray(y))  # the values as the JAX mode holds them (float32 or 64)
    s = jaxsubset.chunks(x, y, 10)
    for which in ("min", "max"):
        want = getattr(np, which)(y.reshape(10, -1), axis=1)
        got = np.asarray(jax.jit(lambda s, w=which: getattr(s, w)())(s))
        np.testing.assert_array_equal(got, want, err_msg=which)
    # the gradient of the max reaches the point at it, and no NaN leaks into other chunks
    finite = np.where(np.isfinite(y), y, 0)
    finite[[6_100]] = np.nan
    g = jax.grad(lambda v: jnp.nansum(jaxsubset.chunks(x, v, 10).max()))(jnp.asarray(finite))
    g = np.asarray(g).reshape(10, -1)
    top = finite.reshape(10, -1).argmax(axis=1)
    for k in range(10):
        want = np.zeros(2_000)
        if k != 3:  # chunk 3 holds the NaN: its max is NaN, its gradient 0
            want[top[k]] = 1.0
        np.testing.assert_array_equal(g[k], want, err_msg=str(k))


def test_raise_eager_and_under_jit():
    x, y = data_with_nan()
    s = jaxsubset.chunks(x, y, 6)
    msg = "Subsets.mean: the subsets hold"
    with pytest.raises(ValueError, match=re.escape(msg)):
        s.mean(nan_policy="raise")
    clean = jaxsubset.chunks(x, np.nan_to_num(y), 6)
    np.testing.assert_allclose(np.asarray(clean.mean(nan_policy="raise")), np.asarray(clean.mean()))
    f = jax.jit(lambda s: s.mean(nan_policy="raise"))
    jax.block_until_ready(f(clean))
    with pytest.raises(Exception, match=re.escape(msg)):
        jax.block_until_ready(f(s))
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Subsets.sum: `nan_policy` must be one of 'propagate', 'omit', 'raise', got 'skip'"
        ),
    ):
        s.sum(nan_policy="skip")


def test_apply_omit_passes_a_mask_without_missing_readings():
    x, y = data_with_nan()
    s = jaxsubset.chunks(x, y[:, 0], 4)
    got = s.apply(lambda x, y, m: jnp.sum(jnp.where(m, y, 0)) / jnp.sum(m), nan_policy="omit")
    ref = [np.nanmean(y[p, 0]) for p in np.array_split(np.arange(60), 4)]
    np.testing.assert_allclose(np.asarray(got), ref, rtol=_rt(1e-12))
    with pytest.raises(ValueError, match="Subsets.apply: the subsets hold"):
        s.apply(lambda x, y, m: y, nan_policy="raise")


def test_grad_with_omit_is_finite_and_zero_at_missing_readings():
    x, y = data_with_nan()
    y0 = y[:, 0]

    def loss(y):
        return jnp.sum(jaxsubset.chunks(x, y, 3).mean(nan_policy="omit"))

    g = np.asarray(jax.grad(loss)(y0))
    assert np.isfinite(g).all()
    assert (g[np.isnan(y0)] == 0).all()
    for p in np.array_split(np.arange(60), 3):
        n_real = (~np.isnan(y0[p])).sum()
        np.testing.assert_allclose(g[p][~np.isnan(y0[p])], 1.0 / n_real)
