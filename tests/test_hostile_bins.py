"""Hostile differential tests: binned and range statistics and the subset constructors.

Every test draws adversarial inputs (ties, points exactly on edges and bounds, bounds outside
the data or reversed, NaN readings, integers beyond int64) and compares with an independent
reference: ``scipy.stats.binned_statistic``, NumPy slicing (``array_split``,
``searchsorted``, ``sliding_window_view``) or exact Python arithmetic. Shapes are fixed (a
few lengths at most), so each test compiles a handful of programs; the module runs in
seconds per JAX mode.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import numpy.testing as npt
import pytest
import scipy.stats
from hypothesis import given, settings, strategies as st

import jaxsubset
from checks import compile_once
from references import FLOAT, QUICK_BUILD, X64, needs_x64, tol


N = 24  # the data length of every drawn dataset: one compiled program per configuration
GRID = st.integers(-6, 6)  # x on a grid of halves: many ties and many points on edges


def _x(ints, sort):
    x = np.asarray(ints, float) / 2.0
    return np.sort(x) if sort else x


def _values(seed, nan_at=()):
    v = np.cos(np.arange(N) * 1.7 + seed).astype(FLOAT)
    v[list(nan_at)] = np.nan
    return v


def _scipy(x, v, statistic, bins, rng=None):
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # SciPy's mean of empty slices
        # x as given: its positions are binned exactly in either mode (float64 x with
        # SciPy's float64 edges, also in JAX's 32-bit mode)
        return scipy.stats.binned_statistic(np.asarray(x), v, statistic, bins=bins, range=rng)


def _same_result(got, want, err_msg=""):
    npt.assert_array_equal(got.binnumber, want.binnumber, err_msg=f"binnumber {err_msg}")
    npt.assert_allclose(got.bin_edges, want.bin_edges, rtol=0, atol=0, err_msg=err_msg)
    npt.assert_allclose(got.statistic, want.statistic, equal_nan=True, err_msg=err_msg, **tol())


# ---------------------------------------------------------------------------- binned_statistic
SCIPY_STATS = ("mean", "std", "median", "count", "sum", "min", "max")


@settings(max_examples=30)
@given(
    xs=st.lists(GRID, min_size=N, max_size=N),
    sort=st.booleans(),
    statistic=st.sampled_from(SCIPY_STATS),
    bins=st.sampled_from([3, 5, (-2.0, -0.5, 0.0, 1.0, 2.5), (-1.0, 0.5, 1.0)]),
    rng=st.sampled_from([None, (-1.0, 1.5), (0.5, 0.5), (4.0, 9.0)]),
    nans=st.lists(st.integers(0, N - 1), max_size=4),
)
def test_binned_matches_scipy(xs, sort, statistic, bins, rng, nans):
    # ties, points exactly on edges (the last one closed), points outside the range, empty
    # bins, a one-point range widened by SciPy's +-0.5, NaN readings with SciPy's own NaN rules
    x = _x(xs, sort)
    v = _values(len(nans), nans)
    if not isinstance(bins, int):
        bins = np.asarray(bins)
        rng = None
    got = jaxsubset.binned_statistic(x, v, statistic, bins=bins, range=rng)
    _same_result(got, _scipy(x, v, statistic, bins, rng), f"{statistic} {bins} {rng}")


@settings(max_examples=12)
@given(
    xs=st.lists(GRID, min_size=N, max_size=N),
    statistic=st.sampled_from(("mean", "std", "median", "count", "min", "max")),
    nans=st.lists(st.integers(0, N - 1), min_size=1, max_size=6),
)
def test_binned_omit_is_scipy_without_the_nan_readings(xs, statistic, nans):
    x = _x(xs, False)
    v = _values(1, nans)
    keep = ~np.isnan(v)
    got = jaxsubset.binned_statistic(x, v, statistic, bins=4, range=(-3, 3), nan_policy="omit")
    want = _scipy(x[keep], v[keep], statistic, 4, (-3, 3))
    npt.assert_allclose(got.statistic, want.statistic, equal_nan=True, **tol())
    npt.assert_array_equal(got.binnumber[keep], want.binnumber)


@settings(max_examples=3)
@given(
    xs=st.lists(GRID, min_size=N, max_size=N),
    statistic=st.sampled_from(("std", "median", "max")),
    method=st.sampled_from(("reference", "tree", "scatter", "sort")),
    promise=st.booleans(),
)
def test_binned_roads_agree_eagerly_and_under_jit(xs, statistic, method, promise):
    # every road (forced), eager and under jit with traced edges, equals SciPy
    if method == "tree" and statistic == "median":
        method = "wavelet"
    x = _x(xs, True)
    v = _values(2, [3])
    edges = np.array([-2.5, -1.0, 0.0, 0.5, 3.0])
    want = _scipy(x, v, statistic, edges)

    def run(x, v, e):
        return jaxsubset.binned_statistic(
            x, v, statistic, bins=e, method=method, x_sorted=promise or None, capacity=N
        )

    _same_result(run(x, v, edges), want, method)
    _same_result(jax.jit(run)(x, v, edges), want, f"{method} jit")


@pytest.mark.parametrize("method", ["reference", "tree"])
def test_binned_false_sorted_promise_on_concrete_x_is_an_error(method):
    # the range roads trust the promise: descending x gave [nan, 0] / [90, 0] for sums whose
    # truth is [70, 20]; concrete x is now checked, as `None` checks it
    x = np.arange(10.0)[::-1].copy()
    y = 2 * np.arange(10.0)
    with pytest.raises(ValueError, match=r"`x_sorted=True`.*x\[0\]=9.0 > x\[1\]=8.0"):
        jaxsubset.binned_statistic(x, y, "sum", bins=2, x_sorted=True, method=method)
    got = jaxsubset.binned_statistic(x[::-1], y, "sum", bins=2, x_sorted=True, method=method)
    npt.assert_array_equal(got.statistic, [20.0, 70.0])


def test_binned_channels_lead_and_huge_offsets():
    # values (C, N) with a 1e8 offset and x at 1e9 + micro-steps: no digit lost to the offset
    x = 1e9 + np.arange(N) * 1e-6 if X64 else np.arange(N, dtype=float)
    v = np.stack([1e8 + np.sin(np.arange(N)), -np.cos(np.arange(N)) * 1e-3]).astype(FLOAT)
    for statistic in ("mean", "std"):
        got = jaxsubset.binned_statistic(x, v, statistic, bins=5)
        want = _scipy(x, v, statistic, 5)
        assert got.statistic.shape == (2, 5)
        npt.assert_array_equal(got.binnumber, want.binnumber)
        # the std of values near 1e8 in float32 keeps float32's relative accuracy of 1e8
        atol = 0.0 if X64 else 16.0
        npt.assert_allclose(got.statistic, want.statistic, atol=atol, **dict(rtol=tol()["rtol"]))


@pytest.mark.parametrize("jit", [False, True])
def test_binned_float32_last_edge_rounding_is_scipys(jit):
    # SciPy rounds the last edge to int(-log10(smallest gap)) + 6 decimals, the log10 taken in
    # the edges' dtype: float32 edges 0.1 apart give 7 decimals (float64 would give 6), so
    # 0.2 + 3e-7 is above the closed last edge. The eager road took the log in float64.
    f = np.float32
    edges = np.array([0.0, 0.1, 0.2], f)
    x = np.array([0.05, 0.15, 0.2, 0.2 + 1e-7, 0.2 + 3e-7, 0.2 + 6e-7, 0.2 + 2e-6], f)
    v = np.ones(x.size, f)
    fn = (
        jax.jit(jaxsubset.binned_statistic, static_argnums=2) if jit else jaxsubset.binned_statistic
    )
    want = scipy.stats.binned_statistic(x, v, "count", bins=edges)
    got = fn(x, v, "count", edges)
    npt.assert_array_equal(got.binnumber, want.binnumber)
    npt.assert_array_equal(got.statistic, want.statistic)
    got = jaxsubset.binned_statistic(x, v, "count", bins=2, range=(f(0.0), f(0.2)))
    npt.assert_array_equal(got.binnumber, want.binnumber)


def test_binned_equal_bins_whose_span_overflows_the_dtype():
    # float32 x over +-3e38: hi - lo is inf in float32, and the arithmetic guess of the bin
    # (floor((x - lo) * nbins / (hi - lo))) was 0 for every point: bins 3 to 8 came out empty
    x = np.linspace(-3e38, 3e38, N + 1).astype(np.float32)
    v = np.ones(x.size, np.float32)
    want = scipy.stats.binned_statistic(x, v, "count", bins=10)
    got = jaxsubset.binned_statistic(x, v, "count", bins=10)
    npt.assert_array_equal(got.binnumber, want.binnumber)
    npt.assert_array_equal(got.statistic, want.statistic)


def _same_edges(got, want, err_msg=""):
    """Bit for bit under the suite's XLA build; with users' full optimisation XLA may fuse an
    edge's multiply-add (``k * step + lo``), a residue below two ulps of the largest edge."""
    if QUICK_BUILD:
        npt.assert_array_equal(got, want, err_msg=err_msg)
    else:
        atol = 2 * np.spacing(np.abs(want).max())
        npt.assert_allclose(got, want, rtol=0, atol=atol, err_msg=err_msg)


@needs_x64
def test_binned_traced_range_edges_are_numpy_linspace():
    # under jit the equal edges of a traced range are numpy.linspace's: XLA divided by nbins
    # as a multiplication by its rounded reciprocal, one ulp off (here 3.8e22 for linspace's
    # 0.0, so the point 0.0 fell into the bin below)
    x = np.linspace(-3e38, 3e38, N + 1).astype(np.float32)
    v = np.ones(x.size, np.float32)
    want = scipy.stats.binned_statistic(x, v, "count", bins=10)
    got = jax.jit(lambda x, v: jaxsubset.binned_statistic(x, v, "count", bins=10))(x, v)
    _same_edges(got.bin_edges, want.bin_edges)
    if QUICK_BUILD:
        npt.assert_array_equal(got.binnumber, want.binnumber)
    rng = np.random.default_rng(7)
    for k in range(8):
        x = np.sort(rng.normal(size=N)) * 10.0 ** (3 * k)
        want = scipy.stats.binned_statistic(x, x, "count", bins=7)
        got = jax.jit(lambda x: jaxsubset.binned_statistic(x, x, "count", bins=7))(x)
        _same_edges(got.bin_edges, want.bin_edges, err_msg=str(k))
    # and under vmap over ranges, where XLA's reciprocal took any broadcast divisor
    lo, hi = np.array([-3e38, -2e38], np.float32), np.array([3e38, 3.3e38], np.float32)
    x = np.linspace(-3e38, 3e38, N + 1).astype(np.float32)
    edges = jax.vmap(
        lambda a, b: jaxsubset.binned_statistic(x, x, "count", bins=10, range=(a, b)).bin_edges
    )(lo, hi)
    for i in range(2):
        want = scipy.stats.binned_statistic(x, x, "count", bins=10, range=(lo[i], hi[i]))
        npt.assert_array_equal(edges[i], want.bin_edges, err_msg=f"vmap {i}")


@needs_x64
@settings(max_examples=15)
@given(
    offsets=st.lists(st.integers(0, 40), min_size=N, max_size=N),
    bins=st.sampled_from([3, 7]),
)
def test_binned_int64_x_beyond_float64_bins_exactly(offsets, bins):
    # int64 x near 2**60 (float64 spacing 256): SciPy cannot bin it (its float64 edges
    # collide); edges from `range` given as exact integers, compared exactly in integers
    base = 2**60
    x = base + np.asarray(offsets, np.int64) * 1000
    lo, hi = base, base + 40_000
    edges = np.linspace(float(lo), float(hi), bins + 1)
    got = jaxsubset.binned_statistic(x, None, "count", bins=edges)
    # exact reference: x >= e  <=>  x >= ceil(e), in Python ints
    thresholds = [int(np.ceil(e)) for e in edges]
    want = np.array([sum(int(xi) >= t for t in thresholds) for xi in x])
    last = thresholds[-1]
    want = np.where(x == last, want - 1, want)  # the closed last edge
    npt.assert_array_equal(got.binnumber, want)
    npt.assert_array_equal(got.statistic, np.bincount(want, minlength=bins + 2)[1:-1])


@needs_x64
def test_binned_datetime_x_is_the_int64_nanoseconds_binning():
    t0 = np.datetime64("2001-01-01T00:00:00", "ns")
    ns = np.array([0, 1, 1, 2, 5, 9, 10, 10], np.int64) * 3_600_000_000_000
    dates = t0 + ns.astype("timedelta64[ns]")
    v = np.arange(ns.size, dtype=float)
    got = jaxsubset.binned_statistic(dates, v, "sum", bins=5)
    want = jaxsubset.binned_statistic(ns, v, "sum", bins=np.linspace(0, ns[-1], 6).astype(int))
    assert got.bin_edges.dtype == np.dtype("datetime64[ns]")
    npt.assert_array_equal(got.binnumber, want.binnumber)
    npt.assert_array_equal(got.statistic, want.statistic)


# ---------------------------------------------------------------------------- range_statistic
RANGE_STATS = ("count", "sum", "mean", "std", "sem", "min", "max", "first", "last")


def _numpy_stat(name, seg, ddof, omit):
    a = seg[~np.isnan(seg)] if omit else seg
    n = a.size
    if name == "count":
        return n
    if name == "sum":
        return a.sum()
    if n == 0 or (name in ("var", "std", "sem") and n - ddof <= 0):
        return np.nan
    if name in ("var", "std", "sem"):
        var = a.var(ddof=ddof)
        return {"var": var, "std": np.sqrt(var), "sem": np.sqrt(var / n)}[name]
    return {
        "mean": np.mean,
        "min": np.min,
        "max": np.max,
        "first": lambda b: b[0],
        "last": lambda b: b[-1],
        "median": np.median,
    }[name](a)


K = 8  # ranges per draw


@settings(max_examples=20)
@given(
    start=st.lists(st.integers(-2 * N, 2 * N), min_size=K, max_size=K),
    count=st.lists(st.integers(-3, 2 * N), min_size=K, max_size=K),
    omit=st.booleans(),
    nans=st.lists(st.integers(0, N - 1), max_size=3),
)
def test_range_statistic_is_numpy_on_the_clipped_slice(start, count, omit, nans):
    # ranges starting before 0 or past N, negative counts, running past the end: clipped,
    # never shifted; NaN readings propagate or are omitted (one program per policy: ddof 1
    # with "omit", 0 without)
    ddof = int(omit)
    y = _values(3, nans)
    r = jaxsubset.Ranges(jnp.asarray(start), jnp.asarray(count))
    stats = (*RANGE_STATS, "median")
    policy = "omit" if omit else "propagate"
    # capacity N: no range holds more (clipped), and one median program for every draw
    out = jaxsubset.range_statistic(y, r, stats, ddof=ddof, nan_policy=policy, capacity=N)
    for name in stats:
        want = []
        for s0, c in zip(start, count, strict=True):
            lo = min(max(s0, 0), N)
            hi = min(max(s0 + max(c, 0), lo), N)
            want.append(_numpy_stat(name, y[lo:hi], ddof, omit))
        npt.assert_allclose(
            out[name], np.asarray(want, float), equal_nan=True, err_msg=name, **tol()
        )


@settings(max_examples=5)
@given(
    start=st.lists(st.integers(0, N - 1), min_size=K, max_size=K),
    count=st.lists(st.integers(0, N), min_size=K, max_size=K),
    nans=st.lists(st.integers(0, N - 1), max_size=2),
)
def test_range_statistic_roads_agree_under_jit(start, count, nans):
    # the tree and the wavelet road, forced, under jit: NumPy on every slice
    y = _values(4, nans)
    r = jaxsubset.Ranges(jnp.asarray(start), jnp.asarray(count))

    @jax.jit
    def fast(y, r):
        out = jaxsubset.range_statistic(y, r, ("mean", "std", "max"), method="tree")
        out["median"] = jaxsubset.range_statistic(y, r, "median", method="wavelet", capacity=N)
        return out

    got = fast(y, r)
    for name, value in got.items():
        want = [
            _numpy_stat(name, y[s0 : min(s0 + c, N)], 0, False)
            for s0, c in zip(start, count, strict=True)
        ]
        npt.assert_allclose(value, np.asarray(want, float), equal_nan=True, err_msg=name, **tol())


def test_range_statistic_over_capacity_is_nan_never_truncated():
    y = np.arange(N, dtype=FLOAT)
    r = jaxsubset.ranges.chunks(y, 3)  # 8 points each
    for method in ("reference", "wavelet"):
        med = jaxsubset.range_statistic(y, r, "median", capacity=4, method=method)
        assert np.isnan(np.asarray(med)).all(), method
    mean = jaxsubset.range_statistic(y, r, "mean", capacity=4, method="reference")
    assert np.isnan(np.asarray(mean)).all()


# ---------------------------------------------------------------------------- constructors
CLOSED = ("left", "right", "both", "neither")
BOUND = st.one_of(
    st.integers(-8, 8).map(lambda i: i / 2.0),  # on the grid: ties at the bounds
    st.sampled_from([-np.inf, np.inf, -1e300, 1e300, -0.0, 0.25, 10**400, -(10**400), 2**64]),
)


def _exact_range(x, lo, hi, closed):
    """``(start, count)`` of the points in the interval, by exact Python comparisons."""
    lo_in = (lambda v: v >= lo) if closed in ("left", "both") else (lambda v: v > lo)
    hi_in = (lambda v: v <= hi) if closed in ("right", "both") else (lambda v: v < hi)
    idx = [i for i, v in enumerate(x.tolist()) if lo_in(v) and hi_in(v)]
    return (idx[0] if idx else 0), len(idx)


@settings(max_examples=40)
@given(
    xs=st.lists(GRID, min_size=N, max_size=N),
    lo=BOUND,
    hi=BOUND,
    closed=st.sampled_from(CLOSED),
    capacity=st.sampled_from([4, N]),
)
def test_select_is_searchsorted_and_overflow_is_flagged(xs, lo, hi, closed, capacity):
    # bounds on ties, outside the data, lo > hi (empty), +-inf, -0.0, float64 bounds beyond
    # float32 x (1e300: an overflow warning, an error in this suite), Python ints beyond
    # float64 (10**400: an OverflowError)
    x = _x(xs, True).astype(FLOAT)
    y = np.arange(N, dtype=FLOAT)
    want = _exact_range(x, lo, hi, closed)
    r = jaxsubset.ranges.select(x, lo, hi, closed=closed)
    s = jaxsubset.select(x, y, lo, hi, capacity=capacity, closed=closed)
    start, count = want
    if count == 0:
        assert int(r.count) == 0 and int(s.count) == 0
    else:
        assert (int(r.start), int(r.count)) == want
        assert (int(s.start), int(s.count)) == want
    assert bool(s.overflow) == (count > capacity)
    held = min(count, capacity)
    npt.assert_array_equal(np.asarray(s.y)[:held], y[start : start + held])
    npt.assert_array_equal(np.asarray(s.mask), np.arange(capacity) < held)


@settings(max_examples=6)
@given(
    n=st.integers(1, 2 * N),
    length=st.sampled_from([N, 13]),
    use_size=st.booleans(),
)
def test_chunks_are_array_split(n, length, use_size):
    x = np.arange(length, dtype=FLOAT)
    if use_size:
        s = jaxsubset.chunks(x, x, size=n)
        want = [x[i : i + n] for i in range(0, length, n)]
    else:
        s = jaxsubset.chunks(x, x, n)
        want = np.array_split(x, n)
    assert s.batch_shape == (len(want),)
    assert not np.asarray(s.overflow).any()
    npt.assert_array_equal(s.count, [w.size for w in want])
    for k, w in enumerate(want):
        npt.assert_array_equal(np.asarray(s.y[k])[np.asarray(s.mask[k])], w)
    npt.assert_array_equal(s.sum(), [w.sum() for w in want])


@settings(max_examples=5)
@given(size=st.integers(1, N), step=st.integers(1, 7))
def test_sliding_is_sliding_window_view(size, step):
    x = np.arange(N, dtype=FLOAT)
    y = np.sin(x)
    s = jaxsubset.sliding(x, y, size, step=step)
    want = np.lib.stride_tricks.sliding_window_view(y, size)[::step]
    npt.assert_array_equal(np.asarray(s.y), want)
    npt.assert_allclose(s.mean(), want.mean(axis=1), **tol())


SLICE_BOUND = st.one_of(
    st.none(),
    st.integers(-2 * N, 2 * N),
    st.sampled_from([2**63 - 1, -(2**63), 2**70, -(2**70), np.uint64(2**64 - 1)]),
)


@settings(max_examples=40)
@given(start=SLICE_BOUND, stop=SLICE_BOUND)
def test_isolate_is_python_slicing(start, stop):
    # negative bounds from the end, bounds past either end, Python ints beyond int64
    x = np.arange(N, dtype=FLOAT)
    s = jaxsubset.isolate(x, x, start, stop, capacity=N)
    py = lambda b: None if b is None else int(b)  # noqa: E731
    want = x[py(start) : py(stop)]
    assert int(s.count) == want.size
    npt.assert_array_equal(np.asarray(s.y)[: want.size], want)


BIG = st.one_of(
    st.integers(-2 * N, 2 * N),
    st.sampled_from([2**63 - 1, -(2**63), 2**70, -(2**70), 2**64 + 3]),
)


@settings(max_examples=40)
@given(start=BIG, count=BIG, capacity=st.sampled_from([5, N]))
def test_from_ranges_and_gather_clip_python_ints_exactly(start, count, capacity):
    # [start, start + count) clipped to [0, N) in exact integers: a Python int beyond int64
    # (2**70) used to crash with "Python int too large to convert to C long"
    x = np.arange(N, dtype=FLOAT)
    lo = min(max(start, 0), N)
    hi = min(max(start + max(count, 0), lo), N)
    for s in (
        jaxsubset.from_ranges(x, x, start, count, capacity=capacity),
        jaxsubset.gather(
            x, x, jaxsubset.Ranges(np.asarray(start), np.asarray(count)), capacity=capacity
        ),
    ):
        assert (int(s.count), bool(s.overflow)) == (hi - lo, hi - lo > capacity)
        if hi > lo:
            assert int(s.start) == lo
        held = min(hi - lo, capacity)
        npt.assert_array_equal(np.asarray(s.y)[:held], x[lo : lo + held])


@settings(max_examples=25)
@given(
    xs=st.lists(GRID, min_size=N, max_size=N),
    edges=st.lists(st.integers(-8, 8), min_size=2, max_size=5, unique=True).map(sorted),
)
def test_bins_are_numpy_histogram(xs, edges):
    x = _x(xs, True).astype(FLOAT)
    e = np.asarray(edges, float) / 2.0
    s = jaxsubset.bins(x, x, e, capacity=N)
    hist, _ = np.histogram(x, e)
    npt.assert_array_equal(s.count, hist)
    npt.assert_allclose(s.sum(), np.histogram(x, e, weights=x)[0], **tol())


def test_bins_edges_beyond_the_float_range_are_exact():
    # 1e300 on float32 x (32-bit mode) warned of an overflow in a cast (an error here); Python
    # ints beyond float64 raised OverflowError; a decrease between ints beyond int64 that
    # float64 cannot see ([2**70, 2**70 - 1]) passed unnoticed
    x = np.arange(N, dtype=FLOAT)
    for edges, counts in (
        ([0.0, 1e300], [N]),
        ([-(10**400), 2, 10**400], [2, N - 2]),
        ([-(2**70), 2**70], [N]),
    ):
        npt.assert_array_equal(jaxsubset.ranges.bins(x, edges).count, counts)
        npt.assert_array_equal(jaxsubset.bins(x, x, edges, capacity=N).count, counts)
    for call in (
        lambda e: jaxsubset.ranges.bins(x, e),
        lambda e: jaxsubset.bins(x, x, e, capacity=N),
    ):
        with pytest.raises(ValueError, match=r"edges\[1\]=1180591620717411303424 > edges\[2\]"):
            call([3, 2**70, 2**70 - 1])


# ---------------------------------------------------------------------------- jit and vmap
def test_select_traced_bounds_compile_once_and_vmap():
    x = np.linspace(0.0, 5.0, N).astype(FLOAT)
    y = np.cos(x)

    def mean_in(lo, hi):
        return jaxsubset.select(x, y, lo, hi, capacity=N, closed="both").mean()

    bounds = [(0.0, 1.0), (2.5, 2.5), (4.0, 1.0), (-9.0, 9.0)]
    outs = compile_once(mean_in, [(np.asarray(a, FLOAT), np.asarray(b, FLOAT)) for a, b in bounds])
    for (lo, hi), got in zip(bounds, outs, strict=True):
        sel = y[(x >= FLOAT(lo)) & (x <= FLOAT(hi))]
        want = sel.mean() if sel.size else np.nan
        npt.assert_allclose(got, want, equal_nan=True, **tol())
    lo = np.asarray([a for a, _ in bounds], FLOAT)
    hi = np.asarray([b for _, b in bounds], FLOAT)
    npt.assert_allclose(jax.vmap(mean_in)(lo, hi), outs, equal_nan=True, **tol())


# ---------------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: jaxsubset.binned_statistic(x, x, "mean", bins=0), ValueError, "`bins`"),
        (lambda x: jaxsubset.binned_statistic(x, x, "avg"), ValueError, "'avg'"),
        (lambda x: jaxsubset.binned_statistic(x, x, bins=[2.0, 1.0]), ValueError, "increase"),
        (lambda x: jaxsubset.binned_statistic(x, x[:3]), ValueError, "`values`"),
        (lambda x: jaxsubset.binned_statistic(x, x, range=(0, np.nan)), ValueError, "`range`"),
        (lambda x: jaxsubset.binned_statistic(x, x, nan_policy="skip"), ValueError, "'skip'"),
        (lambda x: jaxsubset.range_statistic(x, (0, 3)), TypeError, "`ranges`"),
        (lambda x: jaxsubset.chunks(x, x, 0), ValueError, "`n`"),
        (lambda x: jaxsubset.sliding(x, x, N + 1), ValueError, "`size`"),
        (lambda x: jaxsubset.select(x, x, 0, 1, capacity=0), ValueError, "`capacity`"),
        (lambda x: jaxsubset.select(x, x, 0, 1, capacity=4, closed="o"), ValueError, "'o'"),
        (lambda x: jaxsubset.select(x, x, np.nan, 1, capacity=4), ValueError, "`lo`"),
        (lambda x: jaxsubset.isolate(x, x, 1.5, 3, capacity=4), TypeError, "`start`"),
        (lambda x: jaxsubset.from_ranges(x, x, 0, 1.0, capacity=4), TypeError, "`count`"),
        (lambda x: jaxsubset.bins(x, x, [3.0, 1.0], capacity=4), ValueError, "`edges`"),
        # these raised NumPy's or JAX's own errors, naming no argument
        (lambda x: jaxsubset.binned_statistic(x, x, bins=3, range="ab"), TypeError, "`range`"),
        (lambda x: jaxsubset.select(x, x, x[:3], x[:2], capacity=4), ValueError, "`lo` and `hi`"),
        (lambda x: jaxsubset.ranges.select(x, x[:3], x[:2]), ValueError, r"\(3,\) and \(2,\)"),
        (
            lambda x: jaxsubset.range_statistic(
                x, jaxsubset.Ranges(jnp.zeros(2, int), jnp.ones(3, int))
            ),
            ValueError,
            "`ranges.start` and `ranges.count`",
        ),
    ],
)
def test_bad_arguments_name_the_argument(call, error, message):
    x = np.arange(N, dtype=FLOAT)
    with pytest.raises(error, match=message):
        call(x)
