"""Every road computes the same results as the suite compiles it and as users do.

The suite compiles for compile speed (``conftest.py``: JAX's ``jax_disable_most_optimizations``,
LLVM without optimisation, and XLA's CPU loop emitters instead of its MLIR fusion emitters;
the same HLO passes) because it is compile-bound; users compile fully optimised with the
fusion emitters. This module is what makes that legitimate: one program holding every road
of every statistic on hostile data (ties, NaN, +-inf, a huge value, constant runs, empty and
one-point ranges) is compiled both ways from the same lowering. Counts, sums, means, extrema,
first/last and order statistics must agree bit for bit. The spread, shape and pair moments
(var, std, sem, skew, kurt, cov, corr) may differ in the last bits: fully optimised, LLVM
contracts their multiply-adds into fused multiply-adds (as a GPU does), so they must agree to
a few ulps of the result's magnitude, with exactly the same zeros, NaN and infinities (the
exactness the library states: 0 for constant windows, NaN where undefined).
"""

import jax
import jax.numpy as jnp
import numpy as np

import jaxsubset
from jaxsubset.reduce._registry import LABEL_ROADS, RANGE_ROADS, SLIDING_ROADS
from references import FLOAT, FULLY_OPTIMISED as HIGHEST, X64  # HIGHEST: users' settings


# the suite's settings (conftest.py)
LOWEST = {
    "xla_backend_optimization_level": 0,
    "xla_llvm_disable_expensive_passes": True,
    "xla_cpu_use_fusion_emitters": False,
}
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
    # the roads that compute, each once (one nan_policy: the policy masks, it adds no
    # arithmetic; the label sort road's moments are the tree's; the padded reference
    # reductions are jnp's own): the tree over hand-picked ranges (empty, one point, long)
    # and every x-width window of 6, the fixed-count block road, the padded order statistics
    # and the label scatters
    out = {}
    windows = jaxsubset.ranges.rolling(x, 6.0)
    start = jnp.concatenate([jnp.asarray([0, 5, 100, 239, 60]), windows.start])
    count = jnp.concatenate([jnp.asarray([0, 1, 70, 1, 90]), windows.count])
    ranges = jaxsubset.Ranges(start, count)
    got = jaxsubset.range_statistic(y, ranges, _names(RANGE_ROADS["tree"]), method="tree")
    out |= {("range", "tree", s): v for s, v in got.items()}
    got = jaxsubset.rolling_statistic(None, y, statistic=SLIDING_ROADS["blocks"], window=9)
    out |= {("sliding", "blocks", s): v for s, v in got.items()}
    got = jaxsubset.range_statistic(
        y, ranges, ("median", "quantile"), q=0.3, method="reference", capacity=96
    )
    out |= {("range", "reference", s): v for s, v in got.items()}
    edges = jnp.asarray([0.0, 7.0, 7.5, 20.0, 33.0, 60.0], FLOAT)  # [7, 7.5): empty
    for s in (s for s in LABEL_ROADS["scatter"] if s != "var"):  # SciPy's names: std, no var
        r = jaxsubset.binned_statistic(shuffled_x, shuffled_y, s, edges, method="scatter")
        out["binned", "scatter", s] = r.statistic
    r = jaxsubset.binned_statistic(shuffled_x, shuffled_y, "median", edges, method="sort")
    out["binned", "sort", "median"] = r.statistic
    return out


def test_every_road_gives_the_same_bits_at_both_optimisation_levels():
    x, y = _data()
    perm = np.random.default_rng(6).permutation(N)
    args = (x, y, x[perm], np.ascontiguousarray(y[perm, 0]))
    lowered = jax.jit(_every_road).lower(*args)
    low = lowered.compile(LOWEST)(*args)
    high = lowered.compile(HIGHEST)(*args)
    assert set(low) == set(high) and len(low) > 25
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
