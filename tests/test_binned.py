"""binned_statistic against scipy.stats.binned_statistic."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings, strategies as st

from jaxsubset import binned_statistic


BINNED = ["mean", "std", "median", "count", "sum", "min", "max"]
RANGE_STATS = ["count", "sum", "mean", "var", "std", "min", "max", "median"]
RNG = np.random.default_rng(20261129)
X = RNG.uniform(-3.0, 7.0, 700)
Y = RNG.normal(3.0, 2.0, 700)
EDGES = np.array([-2.0, -0.5, 0.0, 1.0, 1.5, 4.0, 6.5])


def _same(got, want, rtol=1e-12):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


def _check(x, values, statistic, bins, rng=None, rtol=1e-12, **kw):
    got = binned_statistic(x, values, statistic, bins, rng, **kw)
    want = scipy.stats.binned_statistic(np.asarray(x), np.asarray(values), statistic, bins, rng)
    _same(got.statistic, want.statistic, rtol)
    np.testing.assert_array_equal(np.asarray(got.bin_edges), want.bin_edges)
    np.testing.assert_array_equal(np.asarray(got.binnumber), want.binnumber)
    return got


# ---------------------------------------------------------------------------- binned_statistic
@pytest.mark.parametrize("statistic", BINNED)
@pytest.mark.parametrize("order", ["shuffled", "sorted"])
def test_binned_matches_scipy_int_and_array_bins(statistic, order):
    x = np.sort(X) if order == "sorted" else X
    _check(x, Y, statistic, 13)
    _check(x, Y, statistic, EDGES)  # points outside the edges: outlier bins
    _check(x, Y, statistic, 5, (-1.0, 2.0))  # explicit range with outliers on both sides


@pytest.mark.parametrize("statistic", ["std", "median", "max"])
def test_binned_channels_lead_as_in_scipy(statistic):
    values = np.stack([Y, -2.0 * Y + 1.0, Y**2])
    got = _check(X, values, statistic, 9)
    assert got.statistic.shape == (3, 9)
    _check(np.sort(X), values, statistic, EDGES)


def test_binned_empty_bins_and_duplicates_on_edges():
    # x on a grid that hits every edge exactly, with repeats; bins 2 and 4 stay empty
    x = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 3.0, 5.0, 5.0, 5.0, 0.5, 3.0])
    v = np.arange(11.0) * 1.5 - 4.0
    for statistic in ("std", "median", "count"):
        got = _check(x, v, statistic, 5)
        _check(np.sort(x), v[np.argsort(x, kind="stable")], statistic, 5)
        _check(x, v, statistic, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    # the last edge is closed: x == 5 lands in bin 5, not in the outlier bin 6
    assert got.binnumber.tolist().count(5) == 3
    counts = binned_statistic(x, v, "count", 5).statistic.tolist()
    assert counts == [3.0, 3.0, 0.0, 2.0, 3.0]
    assert np.isnan(binned_statistic(x, v, "mean", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]).statistic[2])


def test_binned_scipy_rounding_of_the_last_edge():
    # scipy counts points a hair above the last edge (within 1e-6 of a bin width) as inside
    x = np.array([0.0, 0.5, 1.0, 1.0 + 1e-12, 1.0 + 1e-3])
    for order in (x, x[::-1]):
        _check(order, np.arange(5.0), "sum", [0.0, 0.5, 1.0])


def test_binned_single_value_range_widens_like_scipy():
    x = np.full(6, 2.0)
    for statistic in ("count", "mean", "max"):
        _check(x, np.arange(6.0), statistic, 4)


@pytest.mark.parametrize("order", ["shuffled", "sorted"])
def test_binned_large_offset_and_trend_keep_digits(order):
    x = np.sort(X) if order == "sorted" else X
    for v, rtol in ((1e8 + Y, 1e-9), (5.0 * x + 0.01 * Y, 1e-11)):
        for statistic in ("mean", "std", "sum"):
            _check(x, v, statistic, 9, rtol=rtol)


@pytest.mark.parametrize("shape", ["trend", "steps"])
def test_binned_one_pass_std_keeps_digits(shape):
    # trend: block means 1e8 * x are far from the bin means; steps: every bin's mean is 1e8
    # from the next while its spread is 1, so a one-pass sum of squares about one global shift
    # would lose every digit (the unsorted road must detect that and take two passes)
    x = np.sort(RNG.uniform(0.0, 1.0, 20_000))
    noise = RNG.normal(0.0, 1.0, x.size)
    v = (1e8 * x if shape == "trend" else 1e8 * np.floor(7 * x)) + noise
    idx = np.clip(np.digitize(x, np.linspace(0.0, 1.0, 8)), 1, 7) - 1
    exact = np.array([np.sqrt(np.mean((v[idx == k] - v[idx == k].mean()) ** 2)) for k in range(7)])
    got = binned_statistic(x, v, "std", 7, (0.0, 1.0), x_sorted=True).statistic
    np.testing.assert_allclose(np.asarray(got), exact, rtol=1e-12)
    perm = RNG.permutation(x.size)
    got = binned_statistic(x[perm], v[perm], "std", 7, (0.0, 1.0), x_sorted=False).statistic
    np.testing.assert_allclose(np.asarray(got), exact, rtol=1e-12)


@pytest.mark.parametrize("statistic", ["sum", "mean", "std", "min", "max"])
def test_binned_sorted_nonfinite_stays_in_its_bin(statistic):
    x = np.sort(RNG.uniform(0.0, 1.0, 4000))
    v = RNG.normal(0.0, 1.0, x.size)
    v[[100, 1500, 1501, 3900]] = [np.nan, np.inf, -np.inf, np.inf]
    v[(x >= 0.25) & (x < 0.275)] = np.nan  # bin 10: only NaN
    v[(x >= 0.5) & (x < 0.525)] = np.inf  # bin 20: only +inf
    with np.errstate(invalid="ignore"):  # scipy's own inf - inf
        want = scipy.stats.binned_statistic(x, v, statistic, 40, (0.0, 1.0)).statistic
    assert np.isfinite(want).sum() >= 34  # the non-finite values touch at most 5 bins
    for sorted_promise in (True, False):
        got = binned_statistic(x, v, statistic, 40, (0.0, 1.0), x_sorted=sorted_promise)
        _same(got.statistic, want)


@pytest.mark.parametrize("edges_kind", ["random", "clustered", "wide"])
def test_binned_array_edges_binnumber_matches_scipy(edges_kind):
    # explicit edges take a lookup table plus two comparisons, verified, with searchsorted as
    # the fallback (clustered edges share a table cell): binnumber and counts as scipy's, for
    # points on, just above and just below every edge
    rng = np.random.default_rng(7)
    if edges_kind == "random":
        edges = np.sort(rng.uniform(-1.0, 1.0, 40))
    elif edges_kind == "clustered":
        edges = np.concatenate([np.sort(rng.uniform(0.0, 1e-9, 30)), [0.5, 1.0]])
    else:
        edges = np.cumsum(rng.exponential(size=25)) * 1e6
    x = np.concatenate(
        [
            rng.uniform(edges[0] - 1.0, edges[-1] + 1.0, 3000),
            edges,
            np.nextafter(edges, np.inf),
            np.nextafter(edges, -np.inf),
        ]
    )
    x = x[rng.permutation(x.size)]
    v = rng.normal(size=x.size)
    for statistic in ("count", "mean"):
        _check(x, v, statistic, edges)
        got = jax.jit(lambda x, v, s=statistic: binned_statistic(x, v, s, edges))(x, v)
        want = scipy.stats.binned_statistic(x, v, statistic, edges)
        np.testing.assert_array_equal(np.asarray(got.binnumber), want.binnumber)


def test_binned_float32():
    x = X.astype(np.float32)
    v = Y.astype(np.float32)
    for statistic in BINNED:
        got = binned_statistic(x, v, statistic, 11)
        want = scipy.stats.binned_statistic(x, v, statistic, 11)
        assert got.bin_edges.dtype == jnp.float32
        np.testing.assert_array_equal(np.asarray(got.bin_edges), want.bin_edges)
        np.testing.assert_array_equal(np.asarray(got.binnumber), want.binnumber)
        _same(got.statistic, want.statistic, rtol=2e-6)
        if statistic != "count":
            assert got.statistic.dtype == jnp.float32


def test_binned_integer_x_and_values():
    x = RNG.integers(0, 20, 300)
    v = RNG.integers(-50, 50, 300)
    for statistic in BINNED:
        _check(x, v, statistic, 7)


def test_binned_callable_through_padded_subsets():
    def spread(v, m):
        hi = jnp.max(jnp.where(m, v, -jnp.inf))
        lo = jnp.min(jnp.where(m, v, jnp.inf))
        return jnp.where(jnp.any(m), hi - lo, jnp.nan)

    got = binned_statistic(X, Y, spread, 8)
    want = scipy.stats.binned_statistic(X, Y, np.ptp, 8)
    _same(got.statistic, want.statistic)
    f = jax.jit(lambda x, v: binned_statistic(x, v, spread, 8, capacity=256).statistic)
    _same(f(X, Y), want.statistic)
    # too small a capacity: NaN, never the statistic of a truncated bin
    small = binned_statistic(X, Y, spread, 8, capacity=4).statistic
    assert np.isnan(np.asarray(small)).all()
    with pytest.raises(TypeError, match="capacity"):
        jax.jit(lambda x, v: binned_statistic(x, v, spread, 8).statistic)(X, Y)


_TRACES = {"binned": 0}


@jax.jit
def _binned_jit(x, v, edges, lo, hi):
    _TRACES["binned"] += 1
    a = binned_statistic(x, v, "std", edges)
    b = binned_statistic(x, v, "mean", 6, (lo, hi))
    c = binned_statistic(x, v, "max", 6, (lo, hi), x_sorted=False)
    return a.statistic, a.binnumber, b.statistic, b.bin_edges, c.statistic


def test_binned_under_jit_traced_edges_and_range_no_recompile():
    for k in range(3):
        edges = EDGES + 0.1 * k
        lo, hi = -1.0 + 0.5 * k, 3.0 + k
        v = Y * (k + 1)
        std, num, mean, e, mx = _binned_jit(X, v, edges, lo, hi)
        want = scipy.stats.binned_statistic(X, v, "std", edges)
        _same(std, want.statistic, 1e-11)
        np.testing.assert_array_equal(np.asarray(num), want.binnumber)
        want = scipy.stats.binned_statistic(X, v, "mean", 6, (lo, hi))
        np.testing.assert_allclose(np.asarray(e), want.bin_edges, rtol=1e-15)
        _same(mean, want.statistic, 1e-11)
        _same(mx, scipy.stats.binned_statistic(X, v, "max", 6, (lo, hi)).statistic)
    assert _TRACES["binned"] == 1


def test_binned_sorted_promise_under_jit():
    xs = np.sort(X)
    f = jax.jit(lambda x, v: binned_statistic(x, v, "sum", 10, x_sorted=True).statistic)
    _same(f(xs, Y), scipy.stats.binned_statistic(xs, Y, "sum", 10).statistic, 1e-12)


def test_binned_unsorted_chunked_scatters_across_chunks():
    # unsorted x is reduced chunk by chunk (_SCATTER_CHUNK points, then the ragged rest): two
    # channels, outliers on both sides and NaN values
    from jaxsubset._binned import _SCATTER_CHUNK

    rng = np.random.default_rng(31)
    n = 2 * _SCATTER_CHUNK + 777
    x = rng.uniform(-0.1, 1.1, n)
    v = np.stack([rng.normal(3.0, 2.0, n), 1e8 + rng.normal(0.0, 1.0, n)])
    v[1, rng.integers(0, n, 9)] = np.nan
    E7 = np.linspace(0.0, 1.0, 8)  # an edges array: the lookup-table road
    for statistic in ("count", "sum", "mean", "std", "min", "max"):
        f = jax.jit(lambda x, v, s=statistic: binned_statistic(x, v, s, 50, (0.0, 1.0)))
        got = f(x, v)
        want = scipy.stats.binned_statistic(x, v, statistic, 50, (0.0, 1.0))
        rtol = 1e-9 if statistic == "std" else 1e-12
        _same(got.statistic, want.statistic, rtol)
        np.testing.assert_array_equal(np.asarray(got.binnumber), want.binnumber)
        if statistic not in ("count", "std", "min"):
            continue
        # "omit": every channel without its NaN readings
        got = binned_statistic(x, v, statistic, 50, (0.0, 1.0), nan_policy="omit").statistic
        for j in range(2):
            keep = ~np.isnan(v[j])
            w = scipy.stats.binned_statistic(x[keep], v[j, keep], statistic, 50, (0.0, 1.0))
            _same(np.asarray(got)[j], w.statistic, rtol)
    # the two-pass variance (bins 1e8 apart, spread 1) past one chunk
    steps = 1e8 * np.floor(7 * x) + v[0]
    got = binned_statistic(x, steps, "std", E7).statistic
    want = scipy.stats.binned_statistic(x, steps, "std", E7).statistic
    _same(got, want, 1e-9)
    # gradients and vmap through the chunk loop
    inside = (x >= 0.0) & (x <= 1.0)
    g = jax.grad(lambda u: jnp.sum(binned_statistic(x, u, "sum", 50, (0.0, 1.0)).statistic))
    np.testing.assert_array_equal(np.asarray(g(v[0])), inside.astype(float))
    mean = np.asarray(binned_statistic(x, v[0], "mean", 50, (0.0, 1.0)).statistic)
    std = np.asarray(binned_statistic(x, v[0], "std", 50, (0.0, 1.0)).statistic)
    idx = scipy.stats.binned_statistic(x, v[0], "count", 50, (0.0, 1.0)).binnumber
    counts = np.bincount(idx, minlength=52)
    b = np.clip(idx - 1, 0, 49)
    g = jax.grad(lambda u: jnp.sum(binned_statistic(x, u, "std", 50, (0.0, 1.0)).statistic))
    want = np.where(inside, (v[0] - mean[b]) / (counts[idx] * std[b]), 0.0)
    np.testing.assert_allclose(np.asarray(g(v[0])), want, rtol=1e-8, atol=1e-12)
    both = jax.vmap(lambda u: binned_statistic(x, u, "std", 50, (0.0, 1.0)).statistic)(v)
    _same(both, scipy.stats.binned_statistic(x, v, "std", 50, (0.0, 1.0)).statistic, 1e-9)


@settings(deadline=None)
@given(
    cuts=st.lists(st.integers(0, 700), min_size=40, max_size=40),  # one shape: one compile
    gaps=st.lists(st.booleans(), min_size=41, max_size=41),
    block=st.sampled_from([4, 16, 64]),
)
def test_disjoint_windows_block_owners(cuts, gaps, block):
    # the whole blocks of disjoint sorted ranges (empty ones, gaps, ranges shorter than a
    # block): each block's owner, found by marks and a prefix sum, against a direct count
    from jaxsubset._kernels import _disjoint_windows

    n = 700
    edges = np.sort(np.asarray(cuts + [0, n]))
    start, stop = edges[:-1], edges[1:].copy()
    # a gap: the range ends early (the next one still starts at its own edge)
    stop = np.where(np.asarray(gaps[: len(start)]), start + (stop - start) // 2, stop)
    y = jnp.zeros((n, 1))
    _, _, dest, _ = _disjoint_windows(y, jnp.asarray(start), jnp.asarray(stop), block)
    nb, k = n // block, len(start)
    want = np.full(nb, k)
    for b in range(nb):
        for j in range(k):
            if start[j] <= b * block and (b + 1) * block <= stop[j]:
                want[b] = j
    np.testing.assert_array_equal(np.asarray(dest), want)


def test_binned_vmap_over_datasets():
    xs = np.stack([X, X[::-1] + 0.3, X * 0.5])
    vs = np.stack([Y, Y**2, -Y])
    f = jax.vmap(lambda x, v: binned_statistic(x, v, "mean", EDGES).statistic)
    got = f(xs, vs)
    for i in range(3):
        _same(got[i], scipy.stats.binned_statistic(xs[i], vs[i], "mean", EDGES).statistic, 1e-12)


@pytest.mark.parametrize("order", ["shuffled", "sorted"])
def test_binned_grad_sum_mean_std(order):
    x = np.sort(X) if order == "sorted" else X
    idx = scipy.stats.binned_statistic(x, Y, "count", EDGES).binnumber
    inside = (idx >= 1) & (idx <= len(EDGES) - 1)
    counts = np.bincount(idx, minlength=len(EDGES) + 1)

    g = jax.grad(lambda v: jnp.sum(binned_statistic(x, v, "sum", EDGES).statistic))(Y)
    np.testing.assert_array_equal(np.asarray(g), inside.astype(float))
    g = jax.grad(lambda v: jnp.nansum(binned_statistic(x, v, "mean", EDGES).statistic))(Y)
    # outliers: mathematically 0, numerically within rounding of the prefix-sum transpose
    np.testing.assert_allclose(np.asarray(g), np.where(inside, 1.0 / counts[idx], 0.0), atol=1e-15)
    stat = np.asarray(binned_statistic(x, Y, "std", EDGES).statistic)
    mean = np.asarray(binned_statistic(x, Y, "mean", EDGES).statistic)
    g = jax.grad(lambda v: jnp.nansum(binned_statistic(x, v, "std", EDGES).statistic))(Y)
    b = np.clip(idx - 1, 0, len(EDGES) - 2)
    want = np.where(inside, (Y - mean[b]) / (counts[idx] * stat[b]), 0.0)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-9, atol=1e-12)


def test_binned_errors():
    with pytest.raises(ValueError, match="NaN"):
        binned_statistic(np.array([0.0, np.nan]), np.ones(2))
    with pytest.raises(ValueError, match="`statistic`"):
        binned_statistic(X, Y, "mode")
    with pytest.raises(ValueError, match="start must be <= stop"):
        binned_statistic(X, Y, "mean", 4, (2.0, 1.0))
    with pytest.raises(ValueError, match="increase strictly"):
        binned_statistic(X, Y, "mean", [0.0, 1.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="`values` must have shape"):
        binned_statistic(X, Y[:-1])
    with pytest.raises(ValueError, match="`bins` must be a positive int, got 0"):
        binned_statistic(X, Y, "mean", 0)
    with pytest.raises(TypeError, match="static Python int"):
        jax.jit(lambda b: binned_statistic(X, Y, "mean", b))(3)


@settings(max_examples=20)
@given(
    xs=st.lists(st.integers(-5, 5), min_size=24, max_size=24),
    statistic=st.sampled_from(["count", "min", "std"]),
)
def test_binned_property_ties_and_edges(xs, statistic):
    # fixed shapes (one compilation per statistic); many ties, many points exactly on edges
    x = np.asarray(xs, float) / 2.0
    v = np.cos(np.arange(x.size) * 1.7)
    _check(x, v, statistic, 4, rtol=1e-10)
    _check(np.sort(x), v, statistic, 4, rtol=1e-10)
