"""Every public function with its data closed over as a constant, under every transformation.

The commonest jitted analysis closes over the positions ``x`` and fixed bounds and traces only
the values ``y``. Inside ``jit`` every operation on those constants is staged, so a path that
reads results back to the host (bucketing, derived capacities) must not be taken there
(``jaxsubset._core._trace.eager``): the library's first promise is that such a function compiles.

Each case is a function ``f(x, y)`` of the public API and an independent NumPy/pandas/SciPy
reference. It runs eagerly, under ``jit`` with every array an argument, and with ``x`` (and
the bounds, edges, widths written into ``f``) closed over as a NumPy and as a JAX constant,
only ``y`` traced: under ``jit``, ``vmap``, ``grad`` and ``jit(grad)``. Values equal the eager
call and the reference; gradients equal the eager gradient and, for the linear statistics,
the reference's hand-computed gradient.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
import scipy.stats

import jaxsubset as js
from references import FLOAT, tol


N = 50
XN = np.linspace(0.0, 10.0, N)  # float64: the constant a user closes over
YN = np.sin(XN) + 0.1 * np.arange(N)


def _means(slices):
    return np.array([np.mean(YN[s]) if YN[s].size else np.nan for s in slices])


def _rolling_ref(width):
    return np.array([YN[(XN > a - width) & (XN <= a)].mean() for a in XN])


def _ewm_ref(halflife):
    out = []
    for i, t in enumerate(XN):
        w = 0.5 ** ((t - XN[: i + 1]) / halflife)
        out.append(np.sum(w * YN[: i + 1]) / np.sum(w))
    return np.array(out)


EDGES = np.linspace(0.0, 10.0, 6)

# name -> (f(x, y) returning one array, NumPy reference of YN at XN, differentiable in y)
CASES = {
    "isolate": (
        lambda x, y: js.isolate(x, y, 5, 20, capacity=32).mean(),
        lambda: YN[5:20].mean(),
        True,
    ),
    "select": (
        lambda x, y: js.select(x, y, 2.0, 3.5, capacity=32).mean(),
        lambda: YN[(XN >= 2.0) & (XN < 3.5)].mean(),
        True,
    ),
    "select_many": (
        lambda x, y: js.select(x, y, np.array([1.0, 4.0]), np.array([3.0, 9.0]), capacity=32).sum(),
        lambda: np.array([YN[(XN >= a) & (XN < b)].sum() for a, b in ((1, 3), (4, 9))]),
        True,
    ),
    "subsets_reductions": (
        lambda x, y: jnp.stack(
            [
                getattr(js.select(x, y, 2.0, 6.0, capacity=32), r)()
                for r in ("sum", "var", "std", "min", "max", "median")
            ]
        ),
        lambda: np.array(
            [
                f(YN[(XN >= 2) & (XN < 6)])
                for f in (np.sum, np.var, np.std, np.min, np.max, np.median)
            ]
        ),
        True,
    ),
    "chunks": (
        lambda x, y: js.chunks(x, y, 4).mean(),
        lambda: np.array([c.mean() for c in np.array_split(YN, 4)]),
        True,
    ),
    "sliding": (
        lambda x, y: js.sliding(x, y, 10, step=5).mean(),
        lambda: np.lib.stride_tricks.sliding_window_view(YN, 10)[::5].mean(axis=1),
        True,
    ),
    "rolling": (
        lambda x, y: js.rolling(x, y, 0.5, capacity=8).mean(),
        lambda: _rolling_ref(0.5),
        True,
    ),
    "dynamic": (
        lambda x, y: js.dynamic(x, y, 2.0, capacity=16, num_windows=6).mean(),
        lambda: _means([(XN >= s) & (XN < s + 2.0) for s in np.arange(0.0, 10.1, 2.0)]),
        True,
    ),
    "bins": (
        lambda x, y: js.bins(x, y, EDGES, capacity=16).mean(),
        lambda: scipy.stats.binned_statistic(XN, YN, "mean", bins=EDGES).statistic,
        True,
    ),
    "from_ranges": (
        lambda x, y: js.from_ranges(
            x, y, np.array([0, 30]), np.array([10, 40]), capacity=32
        ).mean(),
        lambda: np.array([YN[0:10].mean(), YN[30:70].mean()]),
        True,
    ),
    "gather": (
        lambda x, y: js.gather(x, y, js.ranges.select(x, 1.0, 3.0), capacity=16).mean(),
        lambda: YN[(XN >= 1.0) & (XN < 3.0)].mean(),
        True,
    ),
    "nearest": (
        lambda x, y: y[js.nearest(x, np.array([3.3, -1.0, 20.0]))],
        lambda: YN[[np.argmin(np.abs(XN - 3.3)), 0, N - 1]],
        True,
    ),
    "range_statistic_select": (
        lambda x, y: js.range_statistic(y, js.ranges.select(x, 1.0, 3.0), "mean"),
        lambda: YN[(XN >= 1.0) & (XN < 3.0)].mean(),
        True,
    ),
    "range_statistic_isolate": (
        lambda x, y: js.range_statistic(y, js.ranges.isolate(x, 3, 30), "median", capacity=32),
        lambda: np.median(YN[3:30]),
        True,
    ),
    "range_statistic_chunks": (
        lambda x, y: js.range_statistic(y, js.ranges.chunks(x, 5), "std"),
        lambda: np.array([c.std() for c in np.array_split(YN, 5)]),
        True,
    ),
    "range_statistic_sliding": (
        lambda x, y: js.range_statistic(y, js.ranges.sliding(x, 10, step=10), "max"),
        lambda: YN.reshape(5, 10).max(axis=1),
        True,
    ),
    "range_statistic_rolling": (
        lambda x, y: js.range_statistic(y, js.ranges.rolling(x, 0.5), "mean"),
        lambda: _rolling_ref(0.5),
        True,
    ),
    "range_statistic_dynamic": (
        lambda x, y: js.range_statistic(y, js.ranges.dynamic(x, 2.0, num_windows=6), "sum"),
        lambda: np.array([YN[(XN >= s) & (XN < s + 2.0)].sum() for s in np.arange(0.0, 10.1, 2.0)]),
        True,
    ),
    "range_statistic_bins": (
        lambda x, y: js.range_statistic(y, js.ranges.bins(x, EDGES), "min"),
        lambda: scipy.stats.binned_statistic(XN, YN, "min", bins=EDGES).statistic,
        True,
    ),
    "rolling_statistic": (
        lambda x, y: js.rolling_statistic(x, y, 0.5, "mean"),
        lambda: _rolling_ref(0.5),
        True,
    ),
    "rolling_statistic_window": (
        lambda x, y: js.rolling_statistic(x, y, statistic="std", window=5),
        lambda: pd.Series(YN).rolling(5, min_periods=1).std(ddof=0).to_numpy(),
        True,
    ),
    "rolling_statistic_median": (
        lambda x, y: js.rolling_statistic(x, y, 1.0, "median", capacity=8),
        lambda: np.array([np.median(YN[(XN > a - 1.0) & (XN <= a)]) for a in XN]),
        True,
    ),
    "binned_statistic": (
        lambda x, y: js.binned_statistic(x, y, "mean", bins=5).statistic,
        lambda: scipy.stats.binned_statistic(XN, YN, "mean", bins=5).statistic,
        True,
    ),
    "binned_statistic_edges": (
        lambda x, y: js.binned_statistic(x, y, "max", bins=EDGES).statistic,
        lambda: scipy.stats.binned_statistic(XN, YN, "max", bins=EDGES).statistic,
        True,
    ),
    "ewm_statistic": (
        lambda x, y: js.ewm_statistic(x, y, 1.0),
        lambda: _ewm_ref(1.0),
        True,
    ),
    "count": (  # integer results: not differentiated
        lambda x, y: js.range_statistic(y, js.ranges.rolling(x, 1.0), "count"),
        lambda: np.array([((XN > a - 1.0) & (XN <= a)).sum() for a in XN]),
        False,
    ),
}

TRANSFORMS = ("eager", "jit_args", "jit", "vmap", "grad", "jit_grad")
# transforms run with one kind of constant only, to keep the compilations few: a NumPy and a
# JAX constant take the same path (`_validate.device_array`), which `jit` and `eager` check
ONE_CLOSURE = {"jit_args": "numpy", "vmap": "jax", "grad": "jax", "jit_grad": "numpy"}


def _loss(f, x):
    return lambda y: jnp.sum(jnp.where(jnp.isnan(f(x, y)), 0.0, f(x, y)))


def _run(transform, f, x, y):
    if transform == "eager":
        return f(x, y)
    if transform == "jit_args":  # every array an argument
        return jax.jit(f)(jnp.asarray(x), y)
    if transform == "jit":
        return jax.jit(lambda v: f(x, v))(y)
    if transform == "vmap":  # two datasets of values at the same positions
        return jax.vmap(lambda v: f(x, v))(jnp.stack([y, 2 * y]))
    if transform == "grad":
        return jax.grad(_loss(f, x))(y)
    return jax.jit(jax.grad(_loss(f, x)))(y)


@pytest.mark.parametrize("closed", ["numpy", "jax"])
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_closed_over_constants(case, transform, closed):
    f, reference, differentiable = CASES[case]
    if transform in ("grad", "jit_grad") and not differentiable:
        pytest.skip("integer results")
    if closed != ONE_CLOSURE.get(transform, closed):
        pytest.skip("covered with the other kind of constant (one compilation each)")
    x = XN if closed == "numpy" else jnp.asarray(XN)
    y = jnp.asarray(YN, FLOAT)
    got = np.asarray(_run(transform, f, x, y))
    if transform in ("grad", "jit_grad"):
        want = np.asarray(jax.grad(_loss(f, jnp.asarray(XN)))(y))  # the eager gradient
        assert np.all(np.isfinite(got))
    else:
        want = np.asarray(f(XN, y))  # the eager call
        ref = np.asarray(reference(), FLOAT)
        np.testing.assert_allclose(want, ref, **tol(), equal_nan=True)
        if transform == "vmap":
            ref2 = np.asarray(f(XN, 2 * y))
            want = np.stack([want, ref2])
    np.testing.assert_allclose(got, want, **tol(), equal_nan=True)


def test_issue_example():
    """The report's own program: closed-over x, traced y, and its gradient under jit."""
    x = jnp.linspace(0, 10, 1000)

    @jax.jit
    def f(y):
        return js.select(x, y, 2.0, 3.5, capacity=256).mean()

    y = jnp.sin(x)
    xs = np.asarray(x)
    inside = (xs >= 2) & (xs < 3.5)
    np.testing.assert_allclose(f(y), np.mean(np.asarray(y)[inside]), **tol())
    g = np.asarray(jax.jit(jax.grad(lambda y: (f(y) - 1.0) ** 2))(y))
    assert np.all(g[~inside] == 0) and np.all(g[inside] != 0)


def test_bounds_traced_data_closed():
    """The other way round: data closed over, bounds traced (one program for every bound)."""
    x, y = jnp.asarray(XN), jnp.asarray(YN, FLOAT)
    f = jax.jit(lambda lo, hi: js.select(x, y, lo, hi, capacity=32).mean())
    for lo, hi in ((1.0, 3.0), (4.0, 9.5)):
        np.testing.assert_allclose(f(lo, hi), YN[(XN >= lo) & (XN < hi)].mean(), **tol())
    g = jax.jit(lambda w: js.rolling_statistic(XN, y, w, "mean"))
    np.testing.assert_allclose(g(0.5), _rolling_ref(0.5), **tol())


def test_in_trace_rule():
    """The one helper: eager outside traces and under vmap/grad alone, traced inside jit."""
    from jaxsubset._core._trace import eager, in_trace

    x = jnp.arange(3.0)
    assert eager(x) and not in_trace()
    seen = {}

    def probe(v):
        seen["jit"] = (in_trace(), eager(x))
        return v

    jax.jit(probe)(1.0)
    assert seen["jit"] == (True, False)
    jax.vmap(lambda v: (seen.__setitem__("vmap", in_trace()), v)[1])(x)
    assert seen["vmap"] is False
    jax.lax.scan(lambda c, v: (seen.__setitem__("scan", in_trace()) or c, v), 0.0, x)
    assert seen["scan"] is True


@pytest.mark.parametrize("driver", ["stream", "shard"])
def test_host_drivers_refuse_traces(driver):
    """``stream``/``shard`` run outside jit; inside one they say so (no NumPy conversion error)."""
    x = jnp.asarray(XN)

    def call(v):
        if driver == "shard":
            return js.shard(x, v, "chunks", statistic="mean", n=5, devices=1)["mean"]
        return js.stream((x, v), "chunks", statistic="mean", n=5)["mean"]

    eager_out = call(jnp.asarray(YN, FLOAT))
    np.testing.assert_allclose(eager_out, [c.mean() for c in np.array_split(YN, 5)], **tol())
    with pytest.raises(TypeError, match=rf"{driver}\('chunks'\): runs outside `jax.jit`"):
        jax.jit(call)(jnp.asarray(YN, FLOAT))
