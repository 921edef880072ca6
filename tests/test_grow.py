"""grow_capacity / auto_capacity: exact answers without choosing a capacity."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset


def _data(biggest: int) -> jax.Array:
    """Sorted x whose rolling(width=1) windows hold at most ``biggest`` points."""
    # a cluster of `biggest` points inside one unit, then isolated points
    cluster = np.linspace(0.0, 0.5, biggest)
    rest = np.arange(10.0, 20.0)
    return jnp.asarray(np.concatenate([cluster, rest]))


def _counting_analysis():
    calls = []
    traces = []

    @functools.partial(jax.jit, static_argnames="capacity")
    def f(x, capacity):
        traces.append(capacity)
        return jaxsubset.rolling(x, x**2, 1.0, capacity=capacity)

    def g(x, *, capacity):
        calls.append(capacity)
        return f(x, capacity=capacity)

    return g, calls, traces


@pytest.mark.parametrize("doublings", [1, 2, 5])
def test_grow_jumps_to_needed_capacity(doublings):
    biggest = 2 ** (doublings - 1) + 1  # needs exactly `doublings` doublings from 1
    x = _data(biggest)
    g, calls, traces = _counting_analysis()
    s, cap = jaxsubset.grow_capacity(g, x, capacity=1)
    assert cap == 2**doublings
    assert calls == [1, cap]  # counts are known: one rerun straight at the right capacity
    ref = jaxsubset.rolling(x, x**2, 1.0, capacity=cap)
    np.testing.assert_array_equal(s.mean(), ref.mean())
    np.testing.assert_array_equal(s.count, ref.count)
    assert not bool(s.overflow.any())
    # reference by NumPy: window (x_i - 1, x_i]
    xn = np.asarray(x)
    want = [np.mean(xn[(xn > v - 1.0) & (xn <= v)] ** 2) for v in xn]
    np.testing.assert_allclose(s.mean(), want, rtol=1e-12)
    # a second run is served from jit's cache: no new trace
    jaxsubset.grow_capacity(g, x, capacity=1)
    assert sorted(set(traces)) == sorted(traces) == [1, cap]


@pytest.mark.parametrize("doublings", [1, 2, 5])
def test_grow_with_flag_only_doubles_each_step(doublings):
    biggest = 2 ** (doublings - 1) + 1
    x = _data(biggest)
    calls = []

    @functools.partial(jax.jit, static_argnames="capacity")
    def f(x, capacity):
        s = jaxsubset.rolling(x, x, 1.0, capacity=capacity)
        return s.max(), jnp.any(s.overflow)

    def g(x, *, capacity):
        calls.append(capacity)
        return f(x, capacity=capacity)

    (mx, over), cap = jaxsubset.grow_capacity(g, x, capacity=1, overflow=lambda out: out[1])
    assert cap == 2**doublings
    assert calls == [2**k for k in range(doublings + 1)]
    assert not bool(over)
    np.testing.assert_array_equal(mx, np.asarray(x))  # max of (x_i - 1, x_i] is x_i


def test_grow_mapping_output_and_jit_function():
    x = _data(9)

    @functools.partial(jax.jit, static_argnames="capacity")
    def f(x, lo, hi, capacity):
        s = jaxsubset.select(x, x, lo, hi, capacity=capacity)
        return {"sum": s.sum(), "count": s.count, "overflow": s.overflow}

    out, cap = jaxsubset.grow_capacity(
        f, x, jnp.array([-1.0, 9.5]), jnp.array([1.0, 30.0]), capacity=2
    )
    assert cap == 16  # 10 points in [9.5, 30): 2 * 2**3
    np.testing.assert_allclose(
        out["sum"], [np.linspace(0, 0.5, 9).sum(), np.arange(10.0, 20).sum()]
    )


def test_auto_capacity_remembers():
    calls = []

    @jaxsubset.auto_capacity(capacity=2)
    def f(x, *, capacity):
        calls.append(capacity)
        return jaxsubset.rolling(x, x, 1.0, capacity=capacity)

    x = _data(5)
    s = f(x)
    assert calls == [2, 8] and f.capacity == 8
    s2 = f(x)
    assert calls == [2, 8, 8]
    np.testing.assert_array_equal(s.mean(), s2.mean())
    with pytest.raises(TypeError, match="capacity"):
        f(x, capacity=4)


def test_grow_errors():
    x = _data(40)
    g, _, _ = _counting_analysis()
    with pytest.raises(ValueError, match="max_capacity=16"):
        jaxsubset.grow_capacity(g, x, capacity=1, max_capacity=16)
    with pytest.raises(ValueError, match="`capacity` must be a positive int, got 0"):
        jaxsubset.grow_capacity(g, x, capacity=0)
    with pytest.raises(TypeError, match="`fn` must be callable"):
        jaxsubset.grow_capacity(3, x)
    with pytest.raises(TypeError, match="overflow"):
        jaxsubset.grow_capacity(lambda x, capacity: x.sum(), x)
    with pytest.raises(TypeError, match="inside `jit`"):
        jax.jit(lambda x: jaxsubset.grow_capacity(g, x)[0].count)(x)
