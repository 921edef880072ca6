"""The pure-JAX roads made as fast as hand-written JAX (issue 29), checked for behaviour only.

- every constructor's gather reads contiguous rows: the rows equal NumPy slicing at the edges
  (ranges past either end, empty ranges, more points than the capacity holds), eagerly,
  under ``jit`` and under ``vmap``;
- ``ranges.chunks`` pieces reduced as reshaped blocks by ``range_statistic`` equal NumPy
  (equal pieces, ``array_split`` remainders, a ragged last piece, NaN and inf), and the same
  ranges gathered (the layout lost through a ``jit`` boundary) give the same values;
- the ``Subsets`` reductions that tell NaN and inf from their own sums give NumPy's results
  for every mix of NaN, +-inf and constants, and no NaN in another subset's gradient;
- bins of sorted ``x`` by whole blocks equal the per-point scatter road (and SciPy) at the
  block edges: tails, bins that fill fewer blocks than an edge could cut, points outside
  every bin, NaN, inf and constant bins;
- the number of compiled programs per call is unchanged.

No timing is asserted here: the speed is measured by ``benchmarks/bench_rawjax.py``.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

import jaxsubset
from compilations import compilations
from references import FLOAT, X64


EPS = np.finfo(FLOAT).eps
RNG = np.random.default_rng(29)


# ----------------------------------------------------------------------------- the gather
def _slices(x, y, start, count, cap):
    """NumPy: each range clipped to ``[0, N)`` (never shifted), padded with zeros to ``cap``."""
    n = len(x)
    xs = np.zeros((len(start), cap), x.dtype)
    ys = np.zeros((len(start), cap) + y.shape[1:], y.dtype)
    held = []
    for k, (s, c) in enumerate(zip(start, count, strict=True)):
        a = min(max(s, 0), n)
        b = min(max(s + max(c, 0), a), n)
        m = min(b - a, cap)
        xs[k, :m], ys[k, :m] = x[a : a + m], y[a : a + m]
        held.append((a, b - a, m))
    return xs, ys, np.array(held)


@pytest.mark.parametrize("channels", [(), (2,)])
def test_gathered_rows_equal_numpy_slicing_at_the_edges(channels):
    n, cap = 50, 8
    x = np.arange(n, dtype=FLOAT) * 0.5
    y = RNG.normal(size=(n, *channels)).astype(FLOAT)
    # before the start, past the end, empty, negative counts, more than the capacity, the
    # last point alone, starting exactly at N, a huge count (no overflow of start + count)
    start = np.array([-5, -20, 0, 3, 10, n - 1, n, n + 7, 45, 20, 30, 2], np.int64)
    count = np.array([7, 5, 0, -3, 8, 1, 4, 2, 10, 100, 2**31 - 40, 8], np.int64)
    if not jax.config.jax_enable_x64:
        count = np.minimum(count, 2**31 - 40)
    want_x, want_y, held = _slices(x, y, start, count, cap)

    def check(s):
        np.testing.assert_array_equal(np.asarray(s.x), want_x)
        np.testing.assert_array_equal(np.asarray(s.y), want_y)
        np.testing.assert_array_equal(np.asarray(s.start), held[:, 0])
        np.testing.assert_array_equal(np.asarray(s.count), held[:, 1])
        np.testing.assert_array_equal(np.asarray(s.mask), np.arange(cap) < held[:, 2:3])
        np.testing.assert_array_equal(np.asarray(s.overflow), held[:, 1] > cap)

    check(jaxsubset.from_ranges(x, y, start, count, capacity=cap))
    check(jax.jit(lambda s, c: jaxsubset.from_ranges(x, y, s, c, capacity=cap))(start, count))
    r = jaxsubset.Ranges(jnp.asarray(start), jnp.asarray(count))
    check(jax.jit(lambda r: jaxsubset.gather(x, y, r, capacity=cap))(r))
    # isolate: Python's slice rules, one range at a time under vmap
    lo, hi = np.array([-60, -3, 0, 48, 10, 7]), np.array([3, 100, 0, 60, 7, 15])
    got = jax.vmap(lambda a, b: jaxsubset.isolate(x, y, a, b, capacity=cap))(lo, hi)
    for k, (a, b) in enumerate(zip(lo, hi, strict=True)):
        part = y[slice(a, b)][:cap]
        np.testing.assert_array_equal(np.asarray(got.y[k, : len(part)]), part)
        assert not np.asarray(got.y[k, len(part) :]).any()
        assert int(got.count[k]) == len(y[slice(a, b)])


def test_full_windows_are_numpy_sliding_window_views():
    n = 40
    x = np.arange(n, dtype=FLOAT)
    y = RNG.normal(size=(n, 3)).astype(FLOAT)
    for size, step in ((1, 1), (7, 3), (40, 1), (9, 9)):
        want = np.lib.stride_tricks.sliding_window_view(y, size, axis=0)[::step]
        want = np.moveaxis(want, -1, 1)  # (K, size, C)
        for s in (
            jaxsubset.sliding(x, y, size, step=step),
            jax.jit(lambda x, y, size=size, step=step: jaxsubset.sliding(x, y, size, step=step))(
                x, y
            ),
        ):
            np.testing.assert_array_equal(np.asarray(s.y), want)
            assert np.asarray(s.mask).all()


# ----------------------------------------------------------------------------- chunk pieces
PIECES = [dict(n=10), dict(n=7), dict(size=100), dict(size=1003), dict(n=1003), dict(size=1)]
STATS = ("count", "sum", "mean", "std", "var", "min", "max", "median", "first", "last")
NUMPY = {
    "count": len,
    "sum": np.sum,
    "mean": np.mean,
    "std": np.std,
    "var": np.var,
    "min": np.min,
    "max": np.max,
    "median": np.median,
    "first": lambda a: a[0],
    "last": lambda a: a[-1],
}


def _chunk_values(n):
    y = RNG.normal(size=n).astype(FLOAT) + FLOAT(3.0)
    y[17] = np.nan
    y[555] = np.inf
    y[700:800] = FLOAT(0.1)  # a constant piece for size=100: spread exactly 0
    return y


@pytest.mark.parametrize("kw", PIECES, ids=str)
def test_chunk_pieces_reduced_as_blocks_equal_numpy(kw):
    n = 1003
    x = np.arange(n, dtype=FLOAT)
    y = _chunk_values(n)
    r = jaxsubset.ranges.chunks(x, **kw)
    parts = np.split(y, np.cumsum(np.asarray(r.count))[:-1])

    def stats(x, y):  # ranges.chunks inside the program: the pieces' layout is known
        return jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(x, **kw), STATS)

    def gathered(r, y):  # the Ranges passed in: rebuilt by jit without the layout
        return jaxsubset.range_statistic(y, r, STATS)

    got = jax.jit(stats)(x, y)
    other = jax.jit(gathered)(r, y)
    for s in STATS:
        with np.errstate(all="ignore"):
            want = np.array([NUMPY[s](p.astype(np.float64)) for p in parts])
        rtol = 8 * EPS * (np.sqrt(max(len(p) for p in parts)) if s in ("sum", "var") else 1)
        atol = 16 * EPS if s in ("std", "var") else 0  # NumPy's spread of a constant: ~eps
        np.testing.assert_allclose(
            np.asarray(got[s], np.float64), want, rtol=rtol, atol=atol, err_msg=s
        )
        np.testing.assert_allclose(np.asarray(other[s]), np.asarray(got[s]), rtol=rtol, err_msg=s)
    if kw == dict(size=100):
        assert float(got["std"][7]) == 0.0


@pytest.mark.parametrize("kw", PIECES, ids=str)
def test_gathered_chunk_pieces_are_the_reshaped_subsets(kw):
    # gather of ranges.chunks inside the program reshapes; the same Subsets as the gather of
    # the ranges passed in (no layout) and as the chunks constructor, and their reductions
    n = 1003
    x = np.arange(n, dtype=FLOAT)
    y = np.stack([_chunk_values(n), RNG.normal(size=n).astype(FLOAT)], axis=1)
    inside = jax.jit(lambda x, y: jaxsubset.gather(x, y, jaxsubset.ranges.chunks(x, **kw)))(x, y)
    passed = jax.jit(lambda r, x, y: jaxsubset.gather(x, y, r))(
        jaxsubset.ranges.chunks(x, **kw), x, y
    )
    built = jax.jit(lambda x, y: jaxsubset.chunks(x, y, kw.get("n"), size=kw.get("size")))(x, y)
    for a, b, c in zip(*map(jax.tree_util.tree_leaves, (inside, passed, built)), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        np.testing.assert_array_equal(np.asarray(a), np.asarray(c))
    with np.errstate(invalid="ignore"):
        want = np.asarray(jax.jit(lambda s: s.std())(passed))
    np.testing.assert_allclose(np.asarray(jax.jit(lambda s: s.std())(inside)), want, rtol=64 * EPS)


def test_chunk_pieces_with_channels_and_omit():
    n = 600
    x = np.arange(n, dtype=FLOAT)
    y = np.stack([_chunk_values(n), RNG.normal(size=n).astype(FLOAT)], axis=1)
    f = jax.jit(
        lambda x, y: jaxsubset.range_statistic(
            y, jaxsubset.ranges.chunks(x, size=64), ("mean", "std", "max", "cov"), nan_policy="omit"
        )
    )
    got = f(x, y)
    for k, a in enumerate(range(0, n, 64)):
        part = y[a : a + 64].astype(np.float64)
        for c in range(2):
            col = part[:, c][~np.isnan(part[:, c])]
            scale = 64 * EPS * np.max(np.abs(col[np.isfinite(col)]))  # a mean near 0
            np.testing.assert_allclose(float(got["mean"][k, c]), col.mean(), atol=scale)
            np.testing.assert_allclose(float(got["max"][k, c]), col.max(), rtol=0)
            with np.errstate(invalid="ignore"):  # the inf's chunk: NaN, as NumPy
                want = col.std()
            np.testing.assert_allclose(float(got["std"][k, c]), want, rtol=64 * EPS)
    assert got["cov"].shape == (-(-n // 64), 2, 2)


def test_chunk_pieces_of_data_of_another_length_are_clipped_ranges():
    # ranges of a longer x applied to a shorter y: clipped as any ranges, never reshaped
    x = np.arange(32, dtype=FLOAT)
    y = RNG.normal(size=24).astype(FLOAT)
    got = jax.jit(lambda y: jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(x, 4), "sum"))(y)
    want = [y[0:8].sum(), y[8:16].sum(), y[16:24].sum(), 0.0]
    np.testing.assert_allclose(np.asarray(got), want, rtol=8 * EPS)


def test_chunk_sums_keep_every_digit_after_a_huge_first_value():
    # a sum about the first value would round n * 1e15 (an error of thousands)
    n = 20_000
    big = 1e15 if X64 else 1e7
    y = np.full(n, 0.25, FLOAT)
    y[0], y[1] = big, -big
    x = np.arange(n, dtype=FLOAT)
    want = np.add.reduce(np.r_[y[2 : n // 2]].astype(np.float64))
    got = jax.jit(lambda y: jaxsubset.chunks(x, y, 2).sum())(y)
    np.testing.assert_allclose(float(got[0]), want, rtol=n * EPS)
    got = jax.jit(lambda y: jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(x, 2), "sum"))(y)
    np.testing.assert_allclose(float(got[0]), want, rtol=n * EPS)


# ----------------------------------------------------------------------------- reductions
def _numpy(stat, seg):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if len(seg) == 0:
            return 0.0 if stat == "sum" else np.nan
        return float(getattr(np, stat)(seg.astype(np.float64)))


SPECIAL = [
    [np.inf, -np.inf, 1.0],  # inf - inf: NaN sum/mean/var, inf max, -inf min
    [np.nan, 2.0, 3.0],  # NaN: NaN everywhere
    [np.inf, 1.0, 2.0],  # the first value infinite: inf mean, NaN var
    [1.0, 2.0, -np.inf],
    [0.1] * 5,  # constant: var exactly 0
    [],  # empty: NaN (0 for the sum)
    [-0.0, 0.0],
    [3.5],
]


def _special_subsets():
    y = np.concatenate([np.asarray(v, FLOAT) for v in SPECIAL])
    lens = [len(v) for v in SPECIAL]
    start = np.concatenate([[0], np.cumsum(lens)[:-1]])
    return y, start, np.array(lens)


@pytest.mark.parametrize("stat", ["sum", "mean", "var", "std", "min", "max"])
def test_reductions_keep_numpy_results_for_nan_inf_and_constants(stat):
    y, start, count = _special_subsets()
    x = np.arange(len(y), dtype=FLOAT)

    def red(y, start):
        return getattr(jaxsubset.from_ranges(x, y, start, count, capacity=8), stat)()

    want = [_numpy(stat, y[a : a + c]) for a, c in zip(start, count, strict=True)]
    for got in (red(y, start), jax.jit(red)(y, start)):
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=4 * EPS, atol=0)
    # chunks under jit (reshaped views): the same conventions, a constant's spread exactly 0
    flat = np.concatenate([v for v in SPECIAL if len(v) == 3]).astype(FLOAT)
    k = len(flat) // 3
    got = jax.jit(lambda y: getattr(jaxsubset.chunks(np.arange(3.0 * k), y, k), stat)())(flat)
    want = [_numpy(stat, p) for p in np.array_split(flat, k)]
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=4 * EPS, atol=0)
    const = jax.jit(lambda y: jaxsubset.chunks(np.arange(10.0), y, 2).var())(
        np.full(10, 0.1, FLOAT)
    )
    assert np.asarray(const).tolist() == [0.0, 0.0]


def test_no_nan_reaches_another_subsets_gradient_eagerly_jit_or_vmap():
    y = np.r_[RNG.normal(size=8), np.nan, np.inf, RNG.normal(size=6)].astype(FLOAT)
    x = np.arange(16.0)

    def first(y, view):
        if view:
            s = jaxsubset.chunks(x, y, 2)
        else:
            s = jaxsubset.from_ranges(x, y, np.array([0, 8]), 8, capacity=8)
        out = [s.mean(), s.std(), s.var(), s.max(), s.min(), s.sum()]
        return jnp.stack([o[0] for o in out])

    for view in (False, True):
        for jac in (jax.jacrev(first), jax.jit(jax.jacrev(first), static_argnums=1)):
            j = np.asarray(jac(y, view))
            assert np.isfinite(j).all(), (view, j)
            assert (j[:, 8:] == 0).all(), view
    # batched over datasets: the second one holds the NaN in the first subset
    ys = np.stack([y, np.roll(y, -8)])
    j = np.asarray(jax.vmap(jax.jacrev(first), in_axes=(0, None))(ys, True))
    assert np.isfinite(j[0]).all() and (j[0][:, 8:] == 0).all()


# ----------------------------------------------------------------------------- sorted bins
def _bins_case(n, nbins, seed):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-10.0, 110.0, n)).astype(FLOAT)  # points below and above
    v = rng.normal(size=(2, n)).astype(FLOAT)
    edges = np.linspace(0.0, 100.0, nbins + 1).astype(FLOAT)
    k = int(np.digitize(30.0, edges)) - 1
    a, b = np.searchsorted(x, [edges[k], edges[k + 1]])
    v[0, a:b] = FLOAT(0.1)  # a constant bin (std exactly 0)
    v[1, np.searchsorted(x, 70.0)] = np.nan
    v[0, np.searchsorted(x, 95.0)] = np.inf
    return x, v


# tails (N not a multiple of the block), fewer cut blocks than slots, one bin, many bins
@pytest.mark.parametrize("n, nbins", [(20_000, 7), (4_099, 2), (50_001, 1), (65_536, 300)])
@pytest.mark.parametrize("policy", ["propagate", "omit"])
def test_sorted_bins_by_blocks_equal_the_scatter_road(n, nbins, policy):
    x, v = _bins_case(n, nbins, n)
    stats = ("count", "sum", "mean", "std", "min", "max")

    def run(x, v, sorted_x, method):
        return {
            s: jaxsubset.binned_statistic(
                x, v, s, nbins, (0.0, 100.0), x_sorted=sorted_x, nan_policy=policy, method=method
            ).statistic
            for s in stats
        }

    blocks = jax.jit(lambda x, v: run(x, v, True, "auto"))(x, v)
    # (eagerly with one policy: an eager call is one program per statistic and case)
    roads = [blocks, run(x, v, True, "auto")] if policy == "omit" else [blocks]
    scatter = jax.jit(lambda x, v: run(x, v, False, "scatter"))(x, v)
    for s in stats:
        for got in (r[s] for r in roads):
            np.testing.assert_allclose(
                np.asarray(got), np.asarray(scatter[s]), rtol=64 * EPS * np.sqrt(n), atol=0,
                err_msg=s,
            )  # fmt: skip
    edges = np.linspace(0.0, 100.0, nbins + 1)
    k = int(np.digitize(30.0, edges)) - 1
    if edges[k + 1] < 95.0:  # the constant bin (not the one holding the inf)
        assert float(blocks["std"][0, k]) == 0.0
    if policy == "propagate":  # SciPy's own results (its std of a NaN bin is NaN too)
        for s in ("count", "sum", "mean", "max"):
            want = scipy.stats.binned_statistic(x, v, s, nbins, (0.0, 100.0)).statistic
            np.testing.assert_allclose(np.asarray(blocks[s]), want, rtol=64 * EPS * np.sqrt(n))


def test_sorted_bins_gradient_stays_in_each_bin():
    x, v = _bins_case(6_000, 4, 1)
    v = v[1]  # its NaN in one bin (x = 70)

    def std(v):
        r = jaxsubset.binned_statistic(x, v, "std", 4, (0.0, 100.0), x_sorted=True)
        return jnp.nansum(r.statistic)

    g = np.asarray(jax.jit(jax.grad(std))(v))
    assert np.isfinite(g).all()
    in_nan_bin = (x >= 50.0) & (x < 75.0)
    assert (g[in_nan_bin] == 0).all() and (g[~in_nan_bin & (x >= 0) & (x <= 100)] != 0).any()


# ----------------------------------------------------------------------------- programs
def test_compiled_programs_per_call_are_unchanged():
    n = 3_000
    x = np.sort(RNG.uniform(0.0, 100.0, n)).astype(FLOAT)
    y = RNG.normal(size=n).astype(FLOAT)
    s = jaxsubset.chunks(x, y, 10)
    for name in ("mean", "std", "max"):
        with compilations() as seen:
            getattr(s, name)()
            getattr(s, name)()
        assert seen.of("_eager_reduction") <= 1, name  # one program per reduction, once
    with compilations() as seen:
        for m in (n, n - 7, n - 100):  # lengths in one bucket: one program
            jaxsubset.binned_statistic(x[:m], y[:m], "std", 20, (0.0, 100.0), x_sorted=True)
    assert seen.of("_binned_core") == 1
    f = jax.jit(lambda lo: jaxsubset.select(x, y, lo, lo + 5.0, capacity=256).mean())
    with compilations() as seen:
        for lo in (np.arange(10.0), np.arange(10.0) + 3, np.arange(10.0) * 2):
            f(lo)
    assert len(seen) == 1
    # the pieces' layout is no part of the pytree: Ranges with and without it share a program
    g = jax.jit(lambda r, y: jaxsubset.range_statistic(y, r, ("mean", "max")))
    r = jaxsubset.ranges.chunks(x, 10)
    plain = jaxsubset.Ranges(r.start, r.count, r.max_count)
    assert r._pieces is not None and plain._pieces is None
    with compilations() as seen:
        g(r, y)
        g(plain, y)
    assert len(seen) == 1


# ------------------------------------------------------------------------ the scatter road
@pytest.mark.parametrize("ydt", ["float32", "float"])
@pytest.mark.parametrize("omit", [False, True])
@pytest.mark.parametrize("offset", [0, 1])
def test_the_scatter_road_reads_labels_as_they_are(offset, omit, ydt):
    """The scatter road takes the labels without a cleaning pass (XLA's scatter drops what
    is out of range): labels below ``offset`` (negative ones too), at and past
    ``offset + nbins`` and far past it put a point in no bin, never in a wrapped or clipped
    one; every statistic of the road equals NumPy's per bin, eagerly and under ``jit``, with
    NaN readings held or omitted, for float32 values too (their extremes and the variance's
    shift taken in float32, the sums in the work dtype)."""
    from jaxsubset._statistics._labels import reduce_labels
    from jaxsubset.reduce import Request

    ydt = FLOAT if ydt == "float" else np.dtype(ydt)
    eps = np.finfo(ydt).eps
    nb = 5
    rng = np.random.default_rng(5)
    lab = rng.integers(-3, nb + 4, 400) + offset
    lab[:4] = [-(2**31), 2**31 - 1, offset - 1, offset + nb]
    y = rng.normal(size=(400, 2)).astype(ydt)
    y[lab == offset + 2] = 3.5  # a constant bin: variance exactly 0
    y[np.flatnonzero(lab == offset + 3)[:2], 1] = np.nan
    stats = ("count", "sum", "mean", "std", "min", "max", "median")
    request = Request("reduce_labels", "bins", stats, method="scatter", omit=omit)

    def run(y, lab):
        return reduce_labels(y, lab, nb, request, offset=offset)

    for got in (run(jnp.asarray(y), jnp.asarray(lab, jnp.int32)), jax.jit(run)(y, lab)):
        for k in range(nb):
            v = y[lab == offset + k].astype(np.float64)
            ref = {
                "count": (~np.isnan(v)).sum(0) if omit else np.full(2, len(v)),
                "sum": np.nansum(v, 0) if omit else v.sum(0),
                "mean": np.nanmean(v, 0) if omit else v.mean(0),
                "std": np.nanstd(v, 0) if omit else v.std(0),
                "min": np.nanmin(v, 0) if omit else v.min(0),
                "max": np.nanmax(v, 0) if omit else v.max(0),
                "median": np.nanmedian(v, 0) if omit else np.median(v, 0),
            }
            for s in stats:
                np.testing.assert_allclose(
                    np.asarray(got[s][k], np.float64), ref[s], rtol=8 * eps, atol=8 * eps,
                    err_msg=f"{s} of bin {k}",
                )  # fmt: skip
        assert np.all(np.asarray(got["std"][2]) == 0)
