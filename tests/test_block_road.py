"""The tree road's sums, means and variance family on blocks (``_tree.block_ranges``):
ranges over several blocks, ranges inside one block (few of them: gathered alone; many: the
dense pass), NaN/inf, ``omit``, constants and an outlier next to the ranges, against NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsubset import Ranges, range_statistic
from references import FLOAT, X64


STATS = ("sum", "mean", "var", "std", "sem")
TOL = 1e-11 if X64 else 3e-5


def numpy_stats(y: np.ndarray, start: np.ndarray, count: np.ndarray, omit: bool, ddof: int):
    out = {s: np.full((start.size, y.shape[1]), np.nan) for s in STATS}
    with np.errstate(all="ignore"):
        for k, (a, c) in enumerate(zip(start, count, strict=True)):
            seg = y[a : a + c].astype(np.float64)
            if omit:
                n = (~np.isnan(seg)).sum(0)
                out["sum"][k] = np.nansum(seg, 0)
                if c:
                    out["mean"][k] = np.where(n > 0, np.nansum(seg, 0) / np.maximum(n, 1), np.nan)
                    var = np.array(
                        [
                            np.var(col[~np.isnan(col)], ddof=ddof)
                            if (~np.isnan(col)).sum() > ddof
                            else np.nan
                            for col in seg.T
                        ]
                    )
                    out["var"][k] = var
                    out["std"][k] = np.sqrt(var)
                    out["sem"][k] = np.sqrt(var) / np.sqrt(np.maximum(n, 1))
            else:
                out["sum"][k] = seg.sum(0)
                if c:
                    out["mean"][k] = seg.mean(0)
                if c > ddof:
                    var = seg.var(0, ddof=ddof)
                    out["var"][k] = var
                    out["std"][k] = np.sqrt(var)
                    out["sem"][k] = np.sqrt(var) / np.sqrt(c)
    return out


def hostile(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = rng.normal(5.0, 2.0, (n, 2))
    y[n // 3, 0] = np.inf
    y[n // 3 + 40, 0] = -np.inf
    y[n // 2, 1] = np.nan
    y[n // 2 + 3 : n // 2 + 70, 1] = 0.25  # a constant run, over block edges
    return y.astype(FLOAT)


@pytest.mark.parametrize("omit", [False, True])
@pytest.mark.parametrize("layout", ["long", "short"])
def test_block_road_matches_numpy(omit, layout):
    n = 3000
    y = hostile(n, 1)
    rng = np.random.default_rng(2)
    k = 2000
    if layout == "long":  # mostly over several blocks: the few inside one block gathered alone
        count = rng.integers(40, 300, k)
        count[:25] = rng.integers(0, 20, 25)
    else:  # mostly inside one block: the dense pass
        count = rng.integers(0, 33, k)
    start = rng.integers(0, n + 1, k)
    count = np.minimum(count, n - start)
    r = Ranges(jnp.asarray(start), jnp.asarray(count))
    policy = "omit" if omit else "propagate"
    got = jax.jit(lambda v: range_statistic(v, r, STATS, method="tree", nan_policy=policy, ddof=1))(
        y
    )
    want = numpy_stats(np.asarray(y), start, count, omit, 1)
    for s in STATS:
        np.testing.assert_allclose(
            np.asarray(got[s], np.float64), want[s], rtol=TOL, atol=TOL, err_msg=s
        )
    # the sums and means alone take the same blocks without the moments: the same bits
    alone = jax.jit(
        lambda v: range_statistic(v, r, ("sum", "mean"), method="tree", nan_policy=policy)
    )(y)
    for s in ("sum", "mean"):
        np.testing.assert_array_equal(np.asarray(alone[s]), np.asarray(got[s]), err_msg=s)


def test_constant_runs_are_exactly_zero_and_an_outlier_stays_out():
    n = 1000
    y = np.full(n, 0.1, FLOAT)
    y[500] = 1e30 if X64 else 1e18
    start = np.arange(n) - np.minimum(np.arange(n), 77)  # trailing windows of 78 points
    count = np.arange(n) + 1 - start
    out = range_statistic(
        y, Ranges(jnp.asarray(start), jnp.asarray(count)), ("mean", "std"), method="tree"
    )
    std = np.asarray(out["std"])
    clean = (start > 500) | (start + count <= 500)
    assert (std[clean] == 0.0).all()
    eps = np.finfo(FLOAT).eps  # the mean is the sum over n: within its rounding of 0.1
    np.testing.assert_allclose(np.asarray(out["mean"])[clean], y[0], rtol=4 * eps)
    assert (std[~clean] > 0).all()


def test_gradient_of_the_std_matches_the_reference_road():
    y = np.random.default_rng(4).normal(size=400).astype(FLOAT)
    start = np.arange(0, 380, 7)
    count = np.random.default_rng(5).integers(1, 90, start.size).clip(max=400 - start)
    r = Ranges(jnp.asarray(start), jnp.asarray(count))

    def total(v, road):
        return jnp.nansum(range_statistic(v, r, "std", method=road))

    g_tree = jax.grad(total)(jnp.asarray(y), "tree")
    g_ref = jax.grad(total)(jnp.asarray(y), "reference")
    np.testing.assert_allclose(np.asarray(g_tree), np.asarray(g_ref), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("road", ["tree", "reference"])
def test_an_empty_series_on_the_pure_roads(road):
    # no points: every range empty (the counts' prefix sums have no row to read)
    r = Ranges(jnp.asarray([0, 0]), jnp.asarray([0, 0]))
    y = jnp.zeros((0,), FLOAT)
    stats = ("count", "sum", "mean", "std")
    for got in (
        range_statistic(y, r, stats, method=road),
        jax.jit(lambda v: range_statistic(v, r, stats, method=road))(y),
    ):
        np.testing.assert_array_equal(np.asarray(got["count"]), [0, 0])
        np.testing.assert_array_equal(np.asarray(got["sum"]), [0.0, 0.0])
        assert np.isnan(np.asarray(got["mean"])).all() and np.isnan(np.asarray(got["std"])).all()
