"""Every road computes the same results at XLA's lowest and highest backend optimisation.

The suite compiles with JAX's ``jax_disable_most_optimizations`` (``conftest.py``: LLVM without
optimisation, the same HLO passes) because it is compile-bound; users run fully optimised.
This module is what makes that legitimate: one program holding every road of every statistic
on hostile data (ties, NaN, +-inf, a huge value, constant runs, empty and one-point ranges) is
compiled at both levels from the same lowering. Counts, sums, means, extrema, first/last and
order statistics must agree bit for bit. The spread, shape and pair moments (var, std, sem,
skew, kurt, cov, corr) may differ in the last bits: at full optimisation LLVM contracts their
multiply-adds into fused multiply-adds (as a GPU does), so they must agree to a few ulps of the
result's magnitude, with exactly the same zeros, NaN and infinities (the exactness the library
states: 0 for constant windows, NaN where undefined).
"""

import jax
import jax.numpy as jnp
import numpy as np

import jaxsubset
from jaxsubset._statistics._registry import LABEL_ROADS, RANGE_ROADS, SLIDING_ROADS
from references import FLOAT, X64


LOWEST = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}
HIGHEST = {"xla_backend_optimization_level": 3, "xla_llvm_disable_expensive_passes": False}
BINNED = ("count", "sum", "mean", "std", "sem", "min", "max", "first", "last", "skew", "kurt")
BINNED += ("median",)
MOMENTS = ("var", "std", "sem", "skew", "kurt", "cov", "corr")  # multiply-adds: FMA when optimised
N = 240


def _data():
    rng = np.random.default_rng(5)
    x = np.sort(np.round(rng.uniform(0.0, 60.0, N), 0))  # ties on every integer
    y = rng.normal(3.0, 2.0, (N, 2))
    y[11, 0] = np.nan
    y[[50, 51], 1] = np.nan
    y[90, 0] = np.inf
    y[91, 1] = -np.inf
    y[130, 0] = -9e30 if X64 else -9e15  # must not spoil windows without it
    y[150:190, 1] = 4.0  # a constant run: exactly 0 spread
    y[200:215, 0] = 0.0  # zeros: exactly 0 sums
    return x.astype(FLOAT), y.astype(FLOAT)


def _names(statistics):
    return tuple(s for s in statistics if s != "quantile")


def _every_road(x, y, shuffled_x, shuffled_y):
    # the roads that compute (one nan_policy each: the policy masks, it adds no arithmetic);
    # the reference road's padded reductions are jnp's own, covered by JAX
    out = {}
    ranges = jaxsubset.Ranges(jnp.asarray([0, 5, 100, 239, 60]), jnp.asarray([0, 1, 70, 1, 90]))
    got = jaxsubset.range_statistic(y, ranges, _names(RANGE_ROADS["tree"]), method="tree")
    out |= {("range", "tree", s): v for s, v in got.items()}
    got = jaxsubset.rolling_statistic(x, y, 6.0, _names(RANGE_ROADS["tree"]), method="tree")
    out |= {("rolling", "tree", s): v for s, v in got.items()}
    got = jaxsubset.rolling_statistic(None, y, statistic=SLIDING_ROADS["blocks"], window=9)
    out |= {("sliding", "blocks", s): v for s, v in got.items()}
    got = jaxsubset.range_statistic(
        y, ranges, ("median", "quantile"), q=0.3, method="reference", capacity=96
    )
    out |= {("range", "reference", s): v for s, v in got.items()}
    edges = jnp.asarray([0.0, 7.0, 7.5, 20.0, 33.0, 60.0], FLOAT)  # [7, 7.5): empty
    for road in ("scatter", "sort"):
        for s in BINNED:
            if s in LABEL_ROADS[road] and (road == "sort" or s in MOMENTS + ("median",)):
                r = jaxsubset.binned_statistic(shuffled_x, shuffled_y, s, edges, method=road)
                out["binned", road, s] = r.statistic
    return out


def test_every_road_gives_the_same_bits_at_both_optimisation_levels():
    x, y = _data()
    perm = np.random.default_rng(6).permutation(N)
    args = (x, y, x[perm], np.ascontiguousarray(y[perm, 0]))
    lowered = jax.jit(_every_road).lower(*args)
    low = lowered.compile(LOWEST)(*args)
    high = lowered.compile(HIGHEST)(*args)
    assert set(low) == set(high) and len(low) > 40
    eps = np.finfo(FLOAT).eps
    for key in low:
        a, b = np.asarray(low[key]), np.asarray(high[key])
        assert a.dtype == b.dtype and a.shape == b.shape, key
        if key[-1] not in MOMENTS:
            np.testing.assert_array_equal(a, b, err_msg=str(key))  # NaN equal to NaN
            continue
        for special in (np.isnan, np.isposinf, np.isneginf, lambda v: v == 0):
            np.testing.assert_array_equal(special(a), special(b), err_msg=str(key))
        scale = np.max(np.abs(b[np.isfinite(b)]), initial=1.0)
        np.testing.assert_allclose(a, b, rtol=0, atol=16 * eps * scale, err_msg=str(key))
    # and the program computed something: finite, non-trivial values on every road
    assert np.isfinite(np.asarray(low["range", "tree", "std"])).sum() >= 3
    assert np.asarray(low["sliding", "blocks", "sum"])[214, 0] == 0.0  # a window of zeros
