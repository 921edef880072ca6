"""Every constructor against an independent NumPy reference, plain and under jit."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import jaxsubset
from references import X64, needs_x64, pandas_rows, tol  # noqa: F401


DTYPES = [np.float32, np.float64]
CHANNELS = [(), (3,)]


def make_data(n, dtype=np.float64, channels=(), seed=0, duplicates=False):
    # in the dtype JAX holds (float64 is float32 in 32-bit mode), so values compare exactly
    dtype = np.dtype(jax.dtypes.canonicalize_dtype(dtype))
    rng = np.random.default_rng(seed)
    steps = rng.uniform(0.1, 1.0, n)
    if duplicates:
        steps[rng.random(n) < 0.3] = 0.0
    x = np.cumsum(steps).astype(dtype)
    y = rng.normal(size=(n, *channels)).astype(dtype)
    return x, y


def expect_subset(s, k, x, y, i0, i1):
    """Subset ``k`` of ``s`` must hold exactly ``x[i0:i1]`` (first L points), padded with 0."""
    cap = s.capacity
    k = np.index_exp[k] if not isinstance(k, tuple) else k
    count = max(i1 - i0, 0)
    assert int(np.asarray(s.count)[k]) == count
    if count:
        assert int(np.asarray(s.start)[k]) == i0
    held = min(count, cap)
    mask = np.asarray(s.mask)[k]
    np.testing.assert_array_equal(mask, np.arange(cap) < held)
    np.testing.assert_array_equal(np.asarray(s.x)[k][:held], x[i0 : i0 + held])
    np.testing.assert_array_equal(np.asarray(s.y)[k][:held], y[i0 : i0 + held])
    assert not np.asarray(s.x)[k][held:].any()
    assert not np.asarray(s.y)[k][held:].any()
    assert bool(np.asarray(s.overflow)[k]) == (count > cap)


# ------------------------------------------------------------------------------------ isolate
ISOLATE_BOUNDS = [
    (0, 5),
    (3, 9),
    (-4, None),
    (None, 3),
    (95, 120),
    (-200, 2),
    (7, 3),
    (50, 50),
    (10, 60),
    (-1, -1),
    (100, 101),
]


@functools.partial(jax.jit, static_argnames="capacity")
def _isolate_jit(x, y, i0, i1, capacity):
    return jaxsubset.isolate(x, y, i0, i1, capacity=capacity)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("use_jit", [False, True])
def test_isolate_matches_python_slicing(dtype, channels, use_jit):
    x, y = make_data(100, dtype, channels)
    for i0, i1 in ISOLATE_BOUNDS:
        if use_jit and (i0 is None or i1 is None):
            s = jax.jit(lambda x, y, a=i0, b=i1: jaxsubset.isolate(x, y, a, b, capacity=16))(x, y)
        elif use_jit:
            s = _isolate_jit(x, y, i0, i1, 16)
        else:
            s = jaxsubset.isolate(x, y, i0, i1, capacity=16)
        sl = slice(i0, i1).indices(100)
        expect_subset(s, (), x, y, sl[0], max(sl[1], sl[0]))
        assert s.x.dtype == x.dtype and s.y.dtype == y.dtype  # the mode's dtype


def test_isolate_batched_bounds_and_never_shifted():
    x, y = make_data(20)
    i0 = np.array([0, 15, 18, -3])
    i1 = np.array([4, 25, 19, 20])
    s = _isolate_jit(x, y, i0, i1, 4)
    assert s.batch_shape == (4,)
    for k in range(4):
        a, b, _ = slice(int(i0[k]), int(i1[k])).indices(20)
        expect_subset(s, k, x, y, a, b)
    # lax.dynamic_slice would return x[16:20] for start 18; we return x[18:20] + padding.
    np.testing.assert_array_equal(np.asarray(s.x[2][:1]), x[18:19])


def test_isolate_overflow_holds_first_points():
    x, y = make_data(50)
    s = jaxsubset.isolate(x, y, 5, 40, capacity=8)
    assert bool(s.overflow) and int(s.count) == 35
    np.testing.assert_array_equal(np.asarray(s.y), y[5:13])
    assert bool(s.mask.all())


# ------------------------------------------------------------------------------------ select
@functools.partial(jax.jit, static_argnames=("capacity", "closed"))
def _select_jit(x, y, lo, hi, capacity, closed):
    return jaxsubset.select(x, y, lo, hi, capacity=capacity, closed=closed)


@pytest.mark.parametrize("closed", ["left", "right", "both", "neither"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("use_jit", [False, True])
def test_select_matches_boolean_mask(closed, dtype, use_jit):
    x, y = make_data(200, dtype, (2,), duplicates=True)
    # Bounds exactly on sample values (with duplicates), between samples, and past both ends.
    lo = np.array([x[10], x[50] + 0.01, -5.0, x[150], x[-1], x[30]], dtype)
    hi = np.array([x[40], x[120], x[20], 1e9, x[-1], x[30]], dtype)
    s = (
        _select_jit(x, y, lo, hi, 256, closed)
        if use_jit
        else jaxsubset.select(x, y, lo, hi, capacity=256, closed=closed)
    )
    lo_ok = {"left": np.greater_equal, "both": np.greater_equal}.get(closed, np.greater)
    hi_ok = {"right": np.less_equal, "both": np.less_equal}.get(closed, np.less)
    for k in range(len(lo)):
        idx = np.flatnonzero(lo_ok(x, lo[k]) & hi_ok(x, hi[k]))
        i0, i1 = (idx[0], idx[-1] + 1) if idx.size else (0, 0)
        expect_subset(s, k, x, y, i0, i1)


def test_select_scalar_bounds_give_one_subset():
    x, y = make_data(30)
    s = jaxsubset.select(x, y, x[3], x[9], capacity=8)
    assert s.batch_shape == ()
    expect_subset(s, (), x, y, 3, 9)


# ------------------------------------------------------------------------------------ chunks
@pytest.mark.parametrize("n_points, n", [(10, 3), (12, 4), (5, 8), (1000, 7), (1, 1)])
@pytest.mark.parametrize("channels", CHANNELS)
def test_chunks_match_array_split(n_points, n, channels):
    x, y = make_data(n_points, channels=channels)
    for s in (jaxsubset.chunks(x, y, n), jax.jit(lambda x, y: jaxsubset.chunks(x, y, n))(x, y)):
        pieces = np.array_split(np.arange(n_points), n)
        assert s.batch_shape == (n,)
        assert s.capacity == max(len(pieces[0]), 1)
        assert not bool(s.overflow.any())
        for k, p in enumerate(pieces):
            i0 = p[0] if p.size else int(np.asarray(s.start)[k])
            expect_subset(s, k, x, y, i0, i0 + p.size)


@pytest.mark.parametrize("n_points, size", [(10, 3), (12, 4), (5, 8), (7, 1)])
def test_chunks_by_size(n_points, size):
    x, y = make_data(n_points)
    s = jaxsubset.chunks(x, y, size=size)
    starts = list(range(0, n_points, size))
    assert s.batch_shape == (len(starts),) and s.capacity == size
    for k, i0 in enumerate(starts):
        expect_subset(s, k, x, y, i0, min(i0 + size, n_points))


# ------------------------------------------------------------------------------------ sliding
@pytest.mark.parametrize("size, step", [(1, 1), (4, 1), (5, 3), (20, 7), (30, 1), (3, 50)])
@pytest.mark.parametrize("channels", CHANNELS)
def test_sliding_matches_sliding_window_view(size, step, channels):
    x, y = make_data(30, channels=channels)
    ref = sliding_window_view(y, size, axis=0)[::step]  # (K, *channels, size)
    ref = np.moveaxis(ref, -1, 1)  # (K, size, *channels)
    for s in (
        jaxsubset.sliding(x, y, size, step=step),
        jax.jit(lambda x, y: jaxsubset.sliding(x, y, size, step=step))(x, y),
    ):
        np.testing.assert_array_equal(np.asarray(s.y), ref)
        np.testing.assert_array_equal(np.asarray(s.x), sliding_window_view(x, size)[::step])
        assert bool(s.mask.all())


# ------------------------------------------------------------------------------------ rolling
def rolling_reference(x, anchors, width, closed):
    out = []
    for a in anchors:
        lo_ok = x >= a - width if closed in ("left", "both") else x > a - width
        hi_ok = x <= a if closed in ("right", "both") else x < a
        idx = np.flatnonzero(lo_ok & hi_ok)
        out.append((idx[0], idx[-1] + 1) if idx.size else None)
    return out


@functools.partial(jax.jit, static_argnames=("closed",))
def _rolling_jit(x, y, width, at, closed):
    return jaxsubset.rolling(x, y, width, capacity=64, at=at, closed=closed)


@pytest.mark.parametrize("closed", ["left", "right", "both", "neither"])
def test_rolling_matches_brute_force(closed):
    x, y = make_data(120, duplicates=True, seed=3)
    x = np.round(x * 4) / 4  # many points exactly one width apart
    for width in (0.0, 0.5, 2.0, 5.25):
        # one window per row: pandas' row rule for ties (x * 4 are exact integers)
        s = jaxsubset.rolling(x, y, width, capacity=64, closed=closed)
        start, count = pandas_rows(x * 4, width * 4, closed)
        for k in range(x.size):
            expect_subset(s, k, x, y, start[k], start[k] + count[k])
    at = np.array([-3.0, x[10], x[60] + 0.1, 1e6])
    s = _rolling_jit(x, y, 3.0, at, closed)
    for k, r in enumerate(rolling_reference(x, at, 3.0, closed)):
        assert int(s.count[k]) == (0 if r is None else r[1] - r[0])


def test_rolling_traced_width_per_anchor():
    x, y = make_data(60)
    widths = np.linspace(0.5, 10, 60)
    s = _rolling_jit(x, y, widths, None, "right")
    for k in range(60):
        ((i0, i1),) = rolling_reference(x, x[k : k + 1], widths[k], "right")
        expect_subset(s, k, x, y, i0, i1)


# ------------------------------------------------------------------------------------ bins
@pytest.mark.parametrize("dtype", DTYPES)
def test_bins_match_histogram(dtype):
    x, y = make_data(300, dtype, (2,), duplicates=True, seed=5)
    edges = np.array([x[0] - 1, x[10], x[10], x[100], x[200] + 0.3, x[-1]], dtype)
    for s in (
        jaxsubset.bins(x, y, edges, capacity=256),
        jax.jit(lambda x, y, e: jaxsubset.bins(x, y, e, capacity=256))(x, y, edges),
    ):
        counts, _ = np.histogram(x, edges)
        np.testing.assert_array_equal(np.asarray(s.count), counts)
        for k in range(len(edges) - 1):
            last = k == len(edges) - 2
            m = (x >= edges[k]) & ((x <= edges[k + 1]) if last else (x < edges[k + 1]))
            idx = np.flatnonzero(m)
            if idx.size:
                expect_subset(s, k, x, y, idx[0], idx[-1] + 1)


def test_bins_outside_values_ignored_and_last_edge_closed():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    s = jaxsubset.bins(x, x, np.array([1.0, 2.0, 3.0]), capacity=4)
    assert s.count.tolist() == [1, 2]  # [1, 2) holds 1; [2, 3] holds 2 and 3


# ------------------------------------------------------------------------------------ nearest
def test_nearest_matches_brute_force_ties_to_lower():
    x = np.array([0.0, 1.0, 1.0, 2.0, 4.0, 4.0, 7.0])
    values = np.array([-1.0, 0.5, 1.0, 1.5, 3.0, 5.5, 6.0, 100.0, 4.0])
    for got in (jaxsubset.nearest(x, values), jax.jit(jaxsubset.nearest)(x, values)):
        ref = [int(np.argmin(np.abs(x - v))) for v in values]  # argmin: first (lowest) on ties
        assert got.tolist() == ref


def test_nearest_is_exact_where_isclose_idiom_fails():
    n = 1_000_000
    x = np.linspace(0.0, 1e4, n)
    dx = x[1] - x[0]
    v = x[987_654] + 0.3 * dx
    idiom = np.flatnonzero(np.isclose(x, v, atol=dx / 2))  # default rtol widens the match
    assert idiom.size > 1
    assert int(jaxsubset.nearest(x, v)) == 987_654


# ------------------------------------------------------------------------------------ from_ranges
def test_from_ranges_and_gather_clip_to_data():
    x, y = make_data(10)
    # [start, start + count) ∩ [0, N): clipped, never shifted ([-3, -1) is empty, [-3, 2) is 0..1)
    s = jaxsubset.from_ranges(
        x, y, np.array([2, 8, -3, 12, -3]), np.array([3, 5, 2, 1, 5]), capacity=4
    )
    assert s.count.tolist() == [3, 2, 0, 0, 2]
    expect_subset(s, 0, x, y, 2, 5)
    expect_subset(s, 1, x, y, 8, 10)
    expect_subset(s, 4, x, y, 0, 2)
    r = jaxsubset.ranges.chunks(x, 3)
    s2 = jaxsubset.gather(x, y, r)
    np.testing.assert_array_equal(np.asarray(s2.y), np.asarray(jaxsubset.chunks(x, y, 3).y))


def test_ranges_namespace_agrees_with_constructors():
    x, y = make_data(80)
    cases = [
        (jaxsubset.ranges.isolate(x, 3, -5), jaxsubset.isolate(x, y, 3, -5, capacity=8)),
        (jaxsubset.ranges.select(x, x[4], x[20]), jaxsubset.select(x, y, x[4], x[20], capacity=8)),
        (jaxsubset.ranges.chunks(x, 6), jaxsubset.chunks(x, y, 6)),
        (jaxsubset.ranges.sliding(x, 5, step=2), jaxsubset.sliding(x, y, 5, step=2)),
        (jaxsubset.ranges.rolling(x, 2.0), jaxsubset.rolling(x, y, 2.0, capacity=8)),
        (jaxsubset.ranges.bins(x, x[::10]), jaxsubset.bins(x, y, x[::10], capacity=8)),
    ]
    for r, s in cases:
        np.testing.assert_array_equal(np.asarray(r.count), np.asarray(s.count))
        np.testing.assert_array_equal(np.asarray(r.stop - r.count), np.asarray(r.start))


def test_empty_dataset():
    x = np.zeros(0)
    s = jaxsubset.chunks(x, x, 3)
    assert s.count.tolist() == [0, 0, 0]
    assert np.isnan(np.asarray(s.mean())).all()
    s = jaxsubset.select(x, x, 0.0, 1.0, capacity=2)
    assert int(s.count) == 0 and s.sum().tolist() == 0.0


def test_integer_x_and_y():
    x = np.arange(0, 100, 5, dtype=np.int64)
    y = np.arange(20, dtype=np.int32)
    s = jaxsubset.select(x, y, 10, 30, capacity=8)
    assert s.count.tolist() == 4 and s.y.dtype == jnp.int32
    assert s.sum().tolist() == 2 + 3 + 4 + 5
    assert s.mean().tolist() == 3.5


def test_lists_of_traced_scalars_are_arrays():
    # `[lo, hi]` built from traced scalars inside jit: the same as the stacked array, never an
    # AttributeError on the list. One program for every constructor.
    xn = np.arange(10.0)
    x = jnp.asarray(xn)

    @jax.jit
    def f(a, b, i, w0, w1, v0, v1, e0, e1):
        return dict(
            select=jaxsubset.ranges.select(x, [a, b], 7.0).count,
            ranges_bins=jaxsubset.ranges.bins(x, [e0, e1]).count,
            bins=jaxsubset.bins(x, x, [e0, e1], capacity=8).count,
            isolate=jaxsubset.ranges.isolate(x, [i, -3], None).count,
            from_ranges=jaxsubset.from_ranges(x, x, [i, 4], 2, capacity=3).start,
            rolling=jaxsubset.ranges.rolling(x, [w0, w1], at=[a, 7.0]).count,
            centred=jaxsubset.ranges.rolling(x, [w0, w1], at=[a, 7.0], center=True).count,
            nearest=jaxsubset.nearest(x, [v0, v1]),
            binned_edges=jaxsubset.binned_statistic(x, x, "sum", bins=[e0, e1]).statistic,
            binned_values=jaxsubset.binned_statistic(x[:2], [v0, v1], "sum", bins=2).statistic,
        )

    a, i, w, v, e = [1.0, 2.5], 1, [1.5, 3.0], [1.2, 2.7], [0.5, 4.0]
    got = f(a[0], a[1], i, w[0], w[1], v[0], v[1], e[0], e[1])
    at = np.array([a[0], 7.0])
    want = dict(
        select=[np.sum((xn >= lo) & (xn < 7.0)) for lo in a],
        ranges_bins=np.histogram(xn, e)[0],
        bins=np.histogram(xn, e)[0],
        isolate=[len(xn[i:]), len(xn[-3:])],
        from_ranges=[i, 4],
        rolling=[np.sum((xn > t - wk) & (xn <= t)) for t, wk in zip(at, w, strict=True)],
        centred=[
            np.sum((xn > t - wk / 2) & (xn <= t + wk / 2)) for t, wk in zip(at, w, strict=True)
        ],
        nearest=[int(np.argmin(np.abs(xn - vk))) for vk in v],
        binned_edges=[xn[(xn >= e[0]) & (xn <= e[1])].sum()],
        binned_values=v,
    )
    for k, ref in want.items():
        np.testing.assert_allclose(np.asarray(got[k]), np.asarray(ref), rtol=1e-6, err_msg=k)
