"""binned_statistic against scipy.stats.binned_statistic, on every road of the dispatcher.

Runs in both JAX modes: SciPy is given the data as JAX holds it (float64 inputs become float32
in the 32-bit mode) and results are compared with the tolerance of the mode's float.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import numpy.testing as npt
import pytest
import scipy.stats
from hypothesis import given, settings, strategies as st

import jaxsubset
from checks import compile_once
from jaxsubset import binned_statistic
from references import FLOAT, X64, needs_x64


BINNED = ["mean", "std", "median", "count", "sum", "min", "max"]
POLICIES = ("propagate", "omit")
METHODS = ("auto", "reference", "tree", "scatter", "sort")
RNG = np.random.default_rng(20261129)
X = RNG.uniform(-3.0, 7.0, 700)
Y = RNG.normal(3.0, 2.0, 700)
EDGES = np.array([-2.0, -0.5, 0.0, 1.0, 1.5, 4.0, 6.5])


def _tol(dtype=FLOAT, scale=1.0):
    """rtol/atol for results computed in ``dtype`` from values of magnitude ``scale``."""
    if np.dtype(dtype) == np.float64:
        return dict(rtol=1e-10, atol=1e-12 * scale)
    if np.dtype(dtype) in (np.float16, jnp.bfloat16):
        return dict(rtol=1e-2, atol=1e-2 * scale)
    return dict(rtol=2e-5, atol=2e-5 * scale)


def _as_jax(a):
    """The data as JAX holds it in this mode (float64 -> float32 without x64)."""
    a = np.asarray(a)
    return a.astype(FLOAT) if a.dtype == np.float64 else a


def _same(got, want, **tol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    npt.assert_allclose(got, want, equal_nan=True, **(tol or _tol()))


def _scipy(x, values, statistic, bins, rng=None):
    # positions are binned exactly in either mode (float64 x as SciPy bins it), the values
    # are those JAX holds
    with np.errstate(invalid="ignore"):  # SciPy's own inf - inf
        return scipy.stats.binned_statistic(np.asarray(x), _as_jax(values), statistic, bins, rng)


def _check(x, values, statistic, bins, rng=None, scale=1.0, **kw):
    got = binned_statistic(x, values, statistic, bins, rng, **kw)
    want = _scipy(x, values, statistic, bins, rng)
    _same(got.statistic, want.statistic, **_tol(scale=scale))
    if want.bin_edges.dtype == got.bin_edges.dtype:
        npt.assert_array_equal(got.bin_edges, want.bin_edges)
    else:  # integer x in the 32-bit mode: float32 edges, SciPy's float64
        npt.assert_allclose(got.bin_edges, want.bin_edges, rtol=1e-7)
    npt.assert_array_equal(got.binnumber, want.binnumber)
    return got


# ------------------------------------------------------- every road, eager / jit / vmap
# 9 bins with ties on every edge, an empty bin, a one-point bin and outliers on both sides;
# channels: plain, NaN (10% and a whole bin), +-inf and a constant bin, a large offset
R_EDGES = np.array([0.0, 1.0, 2.0, 2.5, 3.0, 4.0, 4.05, 6.0, 8.0, 10.0])


def _road_data():
    rng = np.random.default_rng(13)
    x = np.round(rng.uniform(-0.5, 10.5, 400), 1)
    x = x[((x < 2.5) | (x >= 3.0)) & (x != 4.0)]  # bin [2.5, 3) empty
    x = np.concatenate([x, [4.0]])  # bin [4, 4.05): exactly one point
    v = np.stack([rng.normal(3.0, 2.0, x.size) for _ in range(4)])
    v[1, rng.random(x.size) < 0.1] = np.nan
    v[1, (x >= 6.0) & (x < 8.0)] = np.nan
    v[2, (x >= 0.0) & (x < 1.0)] = 0.7  # constant: std exactly 0
    v[2, np.flatnonzero((x >= 1.0) & (x < 2.0))[:2]] = np.inf
    v[2, np.flatnonzero(x >= 8.0)[:1]] = -np.inf
    v[3] = 1e9 + v[3]
    perm = rng.permutation(x.size)
    return x[perm], v[:, perm]


RX, RV = _road_data()
RORDER = np.argsort(RX, kind="stable")
RXS, RVS = RX[RORDER], RV[:, RORDER]
SCALE = np.array([1.0, 1.0, 1.0, 1e9])[:, None]  # per channel: the values' magnitude


@functools.partial(jax.jit, static_argnames=("method", "x_sorted"))
def _every_statistic(x, v, edges, method, x_sorted):
    out = {}
    for s in BINNED:
        if method == "tree" and s == "median":
            continue  # the tree computes no median (asked for, it is an error: test_method_errors)
        for p in POLICIES:
            r = binned_statistic(x, v, s, edges, method=method, x_sorted=x_sorted, nan_policy=p)
            out[s, p] = r.statistic
    return out, r.binnumber


def _scipy_every(x, v):
    want = {}
    for s in BINNED:
        want[s, "propagate"] = _scipy(x, v, s, R_EDGES).statistic
        rows = []
        for c in range(v.shape[0]):
            real = ~np.isnan(v[c])
            rows.append(_scipy(x[real], v[c, real], s, R_EDGES).statistic)
        want[s, "omit"] = np.stack(rows)
    return want


_REFERENCE = {}


@pytest.mark.parametrize(
    "method, order",
    [
        ("reference", "sorted"),
        ("reference", "shuffled"),
        ("tree", "sorted"),  # the bins are index ranges
        ("tree", "shuffled"),  # one sort by bin, then the tree
        ("scatter", "shuffled"),
        ("sort", "shuffled"),
        ("auto", "sorted"),  # the tree, and the median on the label road
    ],
)
def test_every_road_matches_scipy_and_the_reference_under_jit(method, order):
    x, v = (RXS, RVS) if order == "sorted" else (RX, RV)
    sorted_ = order == "sorted"
    got, binnumber = _every_statistic(x, v, R_EDGES, method, sorted_)
    if order not in _REFERENCE:
        _REFERENCE[order] = _every_statistic(x, v, R_EDGES, "reference", sorted_)[0]
    ref = _REFERENCE[order]
    want = _scipy_every(x, v)
    npt.assert_array_equal(binnumber, _scipy(x, v[0], "count", R_EDGES).binnumber)
    for key in got:
        g = np.asarray(got[key])
        assert g.dtype == (np.float64 if X64 else np.float32), (key, g.dtype)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(want[key]), err_msg=str(key))
        for c in range(4):
            t = _tol(scale=SCALE[c, 0])
            npt.assert_allclose(g[c], want[key][c], equal_nan=True, err_msg=f"{key} {c}", **t)
            npt.assert_allclose(g[c], ref[key][c], equal_nan=True, err_msg=f"{key} {c}", **t)
    # the regression cases: an empty bin, a one-point bin, a constant bin
    assert (np.asarray(got["count", "propagate"])[:, 3] == 0).all()
    assert np.isnan(np.asarray(got["mean", "propagate"])[:, 3]).all()
    assert (np.asarray(got["std", "propagate"])[[0, 3], 5] == 0).all()  # one point: exactly 0
    assert np.asarray(got["std", "propagate"])[2, 0] == 0  # constant bin: exactly 0


def test_roads_under_vmap_and_eagerly():
    # two datasets batched: the shuffled and the sorted order of the same points (every road
    # must give the same statistics for both, as SciPy does)
    xs = np.stack([RX, RXS])
    vs = np.stack([RV, RVS])

    @jax.jit
    def batched(x, v):
        def one(x, v):
            return {
                (m, s): binned_statistic(x, v, s, R_EDGES, method=m, nan_policy="omit").statistic
                for m, s in (("scatter", "std"), ("sort", "median"), ("tree", "min"))
            }

        return jax.vmap(one)(x, v)

    got = batched(xs, vs)
    want = _scipy_every(RX, RV)
    for (_, s), g in got.items():
        for b in range(2):
            for c in range(4):
                _same(g[b, c], want[s, "omit"][c], **_tol(scale=SCALE[c, 0]))
    # eagerly (a concrete x is checked for sortedness, the result is NumPy's as SciPy's)
    for m in ("scatter", "sort"):
        r = binned_statistic(RX, RV, "median", R_EDGES, method=m)
        assert isinstance(r.statistic, np.ndarray)
        _same(r.statistic, want["median", "propagate"], **_tol(scale=1e9))


def test_method_errors():
    with pytest.raises(ValueError, match="`method` must be one of"):
        binned_statistic(X, Y, "mean", 4, method="fast")
    with pytest.raises(ValueError, match="method='tree' cannot compute 'median'"):
        binned_statistic(X, Y, "median", 4, method="tree")
    with pytest.raises(ValueError, match="callable"):
        binned_statistic(X, Y, np.ptp, 4, method="scatter")


# ---------------------------------------------------------------------------- SciPy's suite
def _scipy_suite_data():
    rng = np.random.RandomState(9865)  # SciPy's TestBinnedStatistic.setup_class
    x = rng.uniform(size=100)
    rng.uniform(size=100)
    v = rng.uniform(size=100)
    rng.uniform(size=(100, 3))
    rng.uniform(size=100)
    u = rng.uniform(size=100) + 1e6
    return x, v, u


def test_scipy_1d_result_attributes():
    # scipy/stats/tests/test_binned_statistic.py::test_1d_result_attributes
    x, v, _ = _scipy_suite_data()
    res = binned_statistic(x, v, "count", bins=10)
    attributes = ("statistic", "bin_edges", "binnumber")
    assert res._fields == attributes
    for i, attr in enumerate(attributes):  # SciPy's check_named_results
        npt.assert_equal(res[i], getattr(res, attr))
    statistic, edges, binnumber = res
    npt.assert_equal(statistic, scipy.stats.binned_statistic(x, v, "count", bins=10)[0])


def test_scipy_empty_bins_std_and_one_point_bins_exactly_zero():
    # test_empty_bins_std: 1000 bins of 100 points near 1e6, so most bins are empty or hold
    # one point, whose std is exactly 0 on every road
    x, _, u = _scipy_suite_data()
    x, u = _as_jax(x), _as_jax(u)  # float32 in the 32-bit mode: u quantised to 1/16
    want = scipy.stats.binned_statistic(x, u, np.std, bins=1000).statistic
    count = scipy.stats.binned_statistic(x, u, "count", bins=1000).statistic

    @jax.jit
    def every(x, u):
        return {m: binned_statistic(x, u, "std", 1000, method=m).statistic for m in METHODS}

    xs = np.sort(x)
    got = every(x, u)
    got_sorted = jax.jit(
        lambda x, u: {
            m: binned_statistic(x, u, "std", 1000, method=m, x_sorted=True).statistic
            for m in METHODS
        }
    )(xs, u[np.argsort(x)])
    one = count == 1
    assert one.sum() > 20
    for m in METHODS:
        for g, road in ((got[m], m), (got_sorted[m], "tree" if m == "auto" else m)):
            g = np.asarray(g)
            npt.assert_array_equal(np.isnan(g), np.isnan(want), err_msg=m)
            assert (g[one] == 0).all(), m
            # float32 (values 1e6 + multiples of 1/16): the fast roads' deviations about one
            # of the bin's own values are exact; the padded reference (Subsets.std, about the
            # float32 mean) loses ~2% here
            rtol = 1e-7 if X64 or road != "reference" else 5e-2
            npt.assert_allclose(g, want, rtol=rtol, equal_nan=True, err_msg=m)
    npt.assert_allclose(binned_statistic(x, u, "std", bins=1000).statistic, want, rtol=1e-7)


def test_scipy_float32_and_values_none_for_count():
    # test_binned_statistic_float32
    X32 = np.array([0, 0.42358226], dtype=np.float32)
    stat, edges, _ = binned_statistic(X32, None, "count", bins=5)
    npt.assert_allclose(stat, np.array([1, 0, 0, 0, 1], dtype=np.float64))
    assert edges.dtype == np.float32
    got = jax.jit(lambda x: binned_statistic(x, None, "count", bins=5).statistic)(X32)
    npt.assert_array_equal(got, [1, 0, 0, 0, 1])
    with pytest.raises(ValueError, match="`values` may be None only with statistic='count'"):
        binned_statistic(X32, None, "mean", bins=5)


# ---------------------------------------------------------------------------- median gradient
@pytest.mark.parametrize("order", ["shuffled", "sorted"])
def test_median_gradient_is_the_middle_points(order):
    # without ties: d median / d v is 1 at the middle point (odd count) or 1/2 at each of
    # the two middle points (even count); it was exactly 0 everywhere
    x = np.sort(X) if order == "sorted" else X
    y = _as_jax(Y)
    idx = _scipy(x, y, "count", EDGES).binnumber
    want = np.zeros(x.size)
    for b in range(1, len(EDGES)):
        pts = np.flatnonzero(idx == b)
        ranked = pts[np.argsort(y[pts])]
        n = ranked.size
        want[ranked[(n - 1) // 2]] += 0.5
        want[ranked[n // 2]] += 0.5

    def median(x, u, m):
        return binned_statistic(x, u, "median", EDGES, method=m).statistic

    @jax.jit
    def grads(v):
        return {
            m: jax.grad(lambda u, m=m: jnp.sum(median(x, u, m)))(v)
            for m in ("auto", "scatter", "sort", "reference")
        }

    for m, g in grads(y).items():
        npt.assert_array_equal(np.asarray(g), want, err_msg=m)
    if order == "sorted":  # Subsets.median, the model, agrees
        g_sub = jax.grad(lambda u: jnp.sum(jaxsubset.bins(x, u, EDGES, capacity=512).median()))(
            jnp.asarray(y)
        )
        npt.assert_array_equal(np.asarray(g_sub), want)


def test_no_nan_gradient_leaks_into_finite_bins():
    # channel of NaN, inf and a constant bin: the gradient of the finite results is finite
    x, v = RX, RV[2]

    @jax.jit
    def grads(u):
        out = {}
        for m, s in (
            ("scatter", "std"),
            ("scatter", "median"),
            ("sort", "median"),
            ("tree", "std"),
            ("tree", "max"),
        ):

            def f(u, m=m, s=s):
                r = binned_statistic(x, u, s, R_EDGES, method=m).statistic
                return jnp.sum(jnp.where(jnp.isfinite(r), r, 0.0))

            out[m, s] = jax.grad(f)(u)
        return out

    for key, g in grads(v).items():
        assert np.isfinite(np.asarray(g)).all(), key


# ---------------------------------------------------------------------------- dtypes
@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16])
def test_half_float_values_are_computed_in_float32(dtype):
    v = jnp.asarray(Y[:200], dtype)
    x = X[:200]

    @jax.jit
    def every(v):
        return [binned_statistic(x, v, s, 6).statistic for s in BINNED]

    want = [_scipy(x, np.asarray(v, np.float32), s, 6).statistic for s in BINNED]
    for s, g, w in zip(BINNED, every(v), want, strict=True):
        assert g.dtype == (jnp.float32 if s == "count" else dtype), (s, g.dtype)
        _same(np.asarray(g, np.float32), w, **_tol(np.float16))


@needs_x64
def test_int64_epoch_milliseconds_bin_exactly_in_integers():
    rng = np.random.default_rng(3)
    ms = 1_700_000_000_000 + rng.integers(0, 30 * 86_400_000, 3000)
    ms[:30] = 1_700_000_000_000 + 86_400_000 * np.arange(30)  # points on edges
    v = rng.normal(size=ms.size)
    edges = 1_700_000_000_000.0 + 86_400_000.0 * np.arange(31)
    for stat in ("count", "mean"):
        _check(ms, v, stat, edges)
        _check(np.sort(ms), v, stat, edges)
    _check(ms, v, "sum", 24)
    # beyond 2**53 float64 rounds x (SciPy compares through it); here the bins are exact
    big = 2**60 + np.arange(2048, dtype=np.int64)
    e = float(2**60) + 256.0 * np.arange(9)
    got = binned_statistic(big, np.ones(big.size), "count", e)
    want = np.clip((big - 2**60) // 256 + 1, 0, 9)
    want[big == 2**60 + 2048] = 8
    npt.assert_array_equal(got.binnumber, want)
    npt.assert_array_equal(got.statistic, np.bincount(want, minlength=10)[1:-1])


def test_int64_x_beyond_int32_is_binned_exactly_in_either_mode():
    # 32-bit mode: positions int32 cannot hold are binned as in 64-bit mode (was an error)
    ms = np.array([1_700_000_000_000, 1_700_000_000_001], np.int64)
    res = binned_statistic(ms, np.ones(2), "count", 2)
    assert res.statistic.tolist() == [1.0, 1.0]
    assert res.binnumber.tolist() == [1, 2]


@pytest.mark.parametrize("order", ["shuffled", "sorted"])
@pytest.mark.parametrize("statistic", ["mean", "std", "median", "count"])
def test_float64_x_is_binned_exactly_with_concrete_or_traced_values(statistic, order):
    # float32 rounds these positions to 1/16: in 32-bit mode the bins are found as in 64-bit
    # mode, in one call for concrete float values (resolve._exact.binned_once), in two (the
    # bins, then int32 stand-in positions) for traced values, with the same results
    rng = np.random.default_rng(5)
    x = 1e6 + rng.random(3000)
    x = np.sort(x) if order == "sorted" else x
    v = rng.standard_normal(3000)
    eager = _check(x, v, statistic, 17)
    assert eager.statistic.dtype == jnp.result_type(float)
    assert eager.binnumber.dtype == np.asarray(jnp.arange(2)).dtype
    traced = jax.jit(lambda v: binned_statistic(x, v, statistic, 17))(v)
    npt.assert_array_equal(np.asarray(traced.binnumber), eager.binnumber)
    _same(traced.statistic, eager.statistic)
    if statistic == "count":  # values=None (SciPy's count without values): one call too
        none = binned_statistic(x, None, "count", 17)
        assert none.statistic.dtype == eager.statistic.dtype
        npt.assert_array_equal(none.statistic, eager.statistic)
        npt.assert_array_equal(none.binnumber, eager.binnumber)


def test_float32():
    x = X.astype(np.float32)
    v = Y.astype(np.float32)

    @jax.jit
    def every(x, v):
        return [binned_statistic(x, v, s, 11, method="sort") for s in BINNED]

    for statistic, traced in zip(BINNED, every(x, v), strict=True):
        eager = [binned_statistic(x, v, statistic, 11)] if statistic in ("median", "std") else []
        for got in (*eager, traced):
            want = scipy.stats.binned_statistic(x, v, statistic, 11)
            assert got.bin_edges.dtype == jnp.float32
            npt.assert_allclose(np.asarray(got.bin_edges), want.bin_edges, rtol=1e-6)
            npt.assert_array_equal(np.asarray(got.binnumber), want.binnumber)
            _same(got.statistic, want.statistic, **_tol(np.float32))
            if statistic != "count":
                assert got.statistic.dtype == jnp.float32


def test_integer_x_and_values():
    x = RNG.integers(0, 20, 300)
    v = RNG.integers(-50, 50, 300)
    for statistic in ("mean", "median", "min"):
        _check(x, v, statistic, 7)
    _check(np.sort(x), v, "std", 7)
    _check(x, v, "count", [0.5, 3.0, 3.5, 19.0])  # integer points on and off float edges


# ---------------------------------------------------------------------------- SciPy's binning
@pytest.mark.parametrize("statistic", BINNED)
@pytest.mark.parametrize("order", ["shuffled", "sorted"])
def test_matches_scipy_int_and_array_bins(statistic, order):
    x = np.sort(X) if order == "sorted" else X
    _check(x, Y, statistic, 13)
    if order == "shuffled":
        _check(x, Y, statistic, EDGES)  # points outside the edges: outlier bins
        _check(x, Y, statistic, 5, (-1.0, 2.0))  # explicit range with outliers on both sides


@pytest.mark.parametrize("statistic", ["std", "median"])
def test_channels_lead_as_in_scipy(statistic):
    values = np.stack([Y, -2.0 * Y + 1.0, Y**2])
    got = _check(X, values, statistic, 9, scale=10.0)
    assert got.statistic.shape == (3, 9)
    _check(np.sort(X), values[:, np.argsort(X)], statistic, EDGES, scale=10.0)


def test_empty_bins_and_duplicates_on_edges():
    # x on a grid that hits every edge exactly, with repeats; bins 2 and 4 stay empty
    x = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 3.0, 5.0, 5.0, 5.0, 0.5, 3.0])
    v = np.arange(11.0) * 1.5 - 4.0
    for statistic in ("std", "median"):
        got = _check(x, v, statistic, 5)
        _check(np.sort(x), v[np.argsort(x, kind="stable")], statistic, 5)
        _check(x, v, statistic, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    # the last edge is closed: x == 5 lands in bin 5, not in the outlier bin 6
    assert got.binnumber.tolist().count(5) == 3
    counts = binned_statistic(x, v, "count", 5).statistic.tolist()
    assert counts == [3.0, 3.0, 0.0, 2.0, 3.0]
    assert np.isnan(binned_statistic(x, v, "mean", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]).statistic[2])


def test_scipy_rounding_of_the_last_edge_and_a_single_value_range():
    # scipy counts points a hair above the last edge (within 1e-6 of a bin width) as inside
    x = np.array([0.0, 0.5, 1.0, 1.0 + 1e-12, 1.0 + 1e-3])
    for order in (x, x[::-1]):
        _check(order, np.arange(5.0), "sum", [0.0, 0.5, 1.0])
    # integer x: the last edge's rounding in integers (wide bins round to tens)
    xi = np.array([0, 10_000_000, 20_000_000, 20_000_004, 20_000_006])
    _check(xi, np.arange(5.0), "count", 2)
    _check(xi, np.arange(5.0), "count", [0.0, 1e7, 2e7])
    # one value: scipy widens the range by 1/2 on each side
    _check(np.full(6, 2.0), np.arange(6.0), "count", 4)


@pytest.mark.parametrize("order", ["shuffled", "sorted"])
def test_large_offset_and_trend_keep_digits(order):
    x = np.sort(X) if order == "sorted" else X
    for v, scale in ((1e8 + Y, 1e8), (5.0 * x + 0.01 * Y, 30.0)):
        for statistic in ("mean", "std", "sum"):
            _check(x, v, statistic, 9, scale=scale)


def test_two_pass_std_keeps_digits():
    # trend: block means 1e8 * x far from the bin means; steps: every bin's mean 1e8 from the
    # next while its spread is 1 (a sum of squares about one global shift loses every digit)
    x = np.sort(RNG.uniform(0.0, 1.0, 20_000))
    noise = RNG.normal(0.0, 1.0, x.size)
    for shape in ("trend", "steps"):
        v = _as_jax((1e8 * x if shape == "trend" else 1e8 * np.floor(7 * x)) + noise)
        _check_two_pass(x, v)


@jax.jit
def _every_std(x, v):
    return {
        m: binned_statistic(x, v, "std", 7, (0.0, 1.0), method=m, x_sorted=s).statistic
        for m, s in (("scatter", False), ("sort", False), ("tree", True), ("auto", True))
    }


def _check_two_pass(x, v):
    idx = np.clip(np.digitize(x, np.linspace(0.0, 1.0, 8)), 1, 7) - 1
    exact = np.array([np.std(v[idx == k].astype(np.float64)) for k in range(7)])
    perm = RNG.permutation(x.size)

    got = _every_std(x, v)
    got["scatter perm"] = _every_std(x[perm], v[perm])["scatter"]
    for m, g in got.items():
        # the scatter road: two passes about one of each bin's values; the tree (sorted x,
        # and the sort road's ranges): block moments about one of each block's own points
        rtol = 1e-12 if X64 else 1e-3
        npt.assert_allclose(np.asarray(g), exact, rtol=rtol, err_msg=m)


@pytest.mark.parametrize("statistic", ["sum", "mean", "std", "min", "max"])
def test_sorted_nonfinite_stays_in_its_bin(statistic):
    x = np.sort(RNG.uniform(0.0, 1.0, 4000))
    v = RNG.normal(0.0, 1.0, x.size)
    v[[100, 1500, 1501, 3900]] = [np.nan, np.inf, -np.inf, np.inf]
    v[(x >= 0.25) & (x < 0.275)] = np.nan  # bin 10: only NaN
    v[(x >= 0.5) & (x < 0.525)] = np.inf  # bin 20: only +inf
    want = _scipy(x, v, statistic, 40, (0.0, 1.0)).statistic
    assert np.isfinite(want).sum() >= 34  # the non-finite values touch at most 5 bins
    for sorted_promise in (True, False):
        got = binned_statistic(x, v, statistic, 40, (0.0, 1.0), x_sorted=sorted_promise)
        _same(got.statistic, want, **_tol(scale=100.0))


@pytest.mark.parametrize("edges_kind", ["random", "clustered", "wide"])
def test_array_edges_binnumber_matches_scipy(edges_kind):
    # explicit edges take a lookup table plus two comparisons, verified, with searchsorted as
    # the fallback (clustered edges share a table cell): binnumber and counts as scipy's, for
    # points on, just above and just below every edge
    rng = np.random.default_rng(7)
    if edges_kind == "random":
        edges = np.sort(rng.uniform(-1.0, 1.0, 40))
    elif edges_kind == "clustered":
        edges = np.concatenate([np.sort(rng.uniform(0.0, 1e-6, 30)), [0.5, 1.0]])
    else:
        edges = np.cumsum(rng.exponential(size=25)) * 1e6
    edges = np.unique(_as_jax(edges))
    x = np.concatenate(
        [
            rng.uniform(edges[0] - 1.0, edges[-1] + 1.0, 3000).astype(edges.dtype),
            edges,
            np.nextafter(edges, np.inf),
            np.nextafter(edges, -np.inf),
        ]
    )
    x = x[rng.permutation(x.size)]
    v = rng.normal(size=x.size)
    _check(x, v, "count", edges)
    got = jax.jit(lambda x, v: binned_statistic(x, v, "mean", edges))(x, v)
    want = _scipy(x, v, "mean", edges)
    npt.assert_array_equal(np.asarray(got.binnumber), want.binnumber)
    _same(got.statistic, want.statistic)


def test_callable_through_padded_subsets():
    def spread(v, m):
        hi = jnp.max(jnp.where(m, v, -jnp.inf))
        lo = jnp.min(jnp.where(m, v, jnp.inf))
        return jnp.where(jnp.any(m), hi - lo, jnp.nan)

    want = _scipy(X, Y, np.ptp, 8)
    _same(binned_statistic(X, Y, spread, 8).statistic, want.statistic)
    f = jax.jit(lambda x, v: binned_statistic(x, v, spread, 8, capacity=256).statistic)
    _same(f(X, Y), want.statistic)
    # too small a capacity: NaN, never the statistic of a truncated bin
    small = binned_statistic(X, Y, spread, 8, capacity=4).statistic
    assert np.isnan(np.asarray(small)).all()
    with pytest.raises(TypeError, match="capacity"):
        jax.jit(lambda x, v: binned_statistic(x, v, spread, 8).statistic)(X, Y)


def _binned(x, v, edges, lo, hi):
    a = binned_statistic(x, v, "std", edges)
    b = binned_statistic(x, v, "mean", 6, (lo, hi))
    c = binned_statistic(x, v, "max", 6, (lo, hi), x_sorted=False, method="sort")
    return a.statistic, a.binnumber, b.statistic, b.bin_edges, c.statistic


def test_under_jit_traced_edges_and_range_no_recompile():
    cases = [(X, Y * (k + 1), EDGES + 0.1 * k, -1.0 + 0.5 * k, 3.0 + k) for k in range(3)]
    for (_, v, edges, lo, hi), out in zip(cases, compile_once(_binned, cases), strict=True):
        std, num, mean, e, mx = out
        want = _scipy(X, v, "std", edges)
        _same(std, want.statistic, **_tol(scale=10.0))
        npt.assert_array_equal(np.asarray(num), want.binnumber)
        want = _scipy(X, v, "mean", 6, (lo, hi))
        npt.assert_allclose(np.asarray(e), want.bin_edges, rtol=1e-6 if not X64 else 1e-15)
        _same(mean, want.statistic, **_tol(scale=10.0))
        _same(mx, _scipy(X, v, "max", 6, (lo, hi)).statistic)


def test_sorted_promise_under_jit_and_vmap_over_datasets():
    xs = np.sort(X)
    f = jax.jit(lambda x, v: binned_statistic(x, v, "sum", 10, x_sorted=True).statistic)
    _same(f(xs, Y), _scipy(xs, Y, "sum", 10).statistic, **_tol(scale=100.0))
    xb = np.stack([X, X[::-1] + 0.3, X * 0.5])
    vb = np.stack([Y, Y**2, -Y])
    got = jax.vmap(lambda x, v: binned_statistic(x, v, "mean", EDGES).statistic)(xb, vb)
    for i in range(3):
        _same(got[i], _scipy(xb[i], vb[i], "mean", EDGES).statistic, **_tol(scale=10.0))


@pytest.mark.parametrize("order", ["shuffled", "sorted"])
def test_grad_sum_mean_std(order):
    x = np.sort(X) if order == "sorted" else X
    y = _as_jax(Y)
    idx = _scipy(x, y, "count", EDGES).binnumber
    inside = (idx >= 1) & (idx <= len(EDGES) - 1)
    counts = np.bincount(idx, minlength=len(EDGES) + 1)

    @jax.jit
    def grads(v):
        return [
            jax.grad(lambda u, s=s: jnp.nansum(binned_statistic(x, u, s, EDGES).statistic))(v)
            for s in ("sum", "mean", "std")
        ]

    g_sum, g_mean, g_std = (np.asarray(g) for g in grads(y))
    npt.assert_allclose(g_sum, inside.astype(float), atol=1e-6)
    npt.assert_allclose(g_mean, np.where(inside, 1.0 / counts[idx], 0.0), **_tol())
    stat = np.asarray(binned_statistic(x, y, "std", EDGES).statistic)
    mean = np.asarray(binned_statistic(x, y, "mean", EDGES).statistic)
    b = np.clip(idx - 1, 0, len(EDGES) - 2)
    want = np.where(inside, (y - mean[b]) / (counts[idx] * stat[b]), 0.0)
    npt.assert_allclose(g_std, want, **_tol(scale=0.1))


def test_errors():
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
    statistic=st.sampled_from(["count", "min", "std", "median"]),
)
def test_property_ties_and_edges(xs, statistic):
    # fixed shapes (one compilation per statistic); many ties, many points exactly on edges
    x = np.asarray(xs, float) / 2.0
    v = np.cos(np.arange(x.size) * 1.7)
    _check(x, v, statistic, 4)
    _check(np.sort(x), v, statistic, 4)


@needs_x64
def test_datetime_x_on_every_road():
    # hourly points over decades (int64 ns near 1e18, beyond float64's integers), shuffled:
    # every road bins them exactly and agrees with the others
    import pandas as pd

    hours = pd.date_range("1970-01-01", "2030-01-01", freq="97h").values
    perm = np.random.default_rng(0).permutation(hours.size)
    vals = np.sin(np.arange(hours.size) / 7.0)
    years = np.arange(1970, 2031).astype(str).astype("datetime64[Y]")
    want = None
    for m in ("auto", "reference", "tree", "scatter", "sort"):
        r = binned_statistic(hours[perm], vals[perm], "mean", years, method=m)
        assert r.bin_edges.dtype == np.dtype("datetime64[ns]")
        if want is None:
            want = r
            yr = pd.DatetimeIndex(hours[perm]).year.to_numpy()
            npt.assert_array_equal(r.binnumber, yr - 1970 + 1)
            by_year = pd.Series(vals[perm]).groupby(yr).mean()
            npt.assert_allclose(r.statistic, by_year.reindex(range(1970, 2030)), **_tol())
        npt.assert_array_equal(r.binnumber, want.binnumber, err_msg=m)
        npt.assert_allclose(r.statistic, want.statistic, err_msg=m, **_tol())


@pytest.mark.parametrize("bins, rng", [(10, (-3.0, 7.0)), (np.linspace(-3.0, 7.0, 11), None)])
def test_edges_known_on_the_host_are_proven_there(bins, rng):
    # under jit, bins=int over a concrete range (or given evenly spaced edges): the proof
    # that the arithmetic bin guess is within one bin runs on the host, so the pure-JAX
    # program holds one lookup and no run-time choice (lax.cond) of the checked one; a
    # traced range keeps the choice. Both are SciPy's bins.
    from jaxsubset._native import _api

    x, y = jnp.asarray(X.astype(FLOAT)), jnp.asarray(Y.astype(FLOAT))
    want = scipy.stats.binned_statistic(X, Y, "mean", bins, range=rng).statistic

    def static(x, y):
        return binned_statistic(x, y, "mean", bins, range=rng).statistic

    def traced(x, y, r):
        return binned_statistic(x, y, "mean", 10, range=r).statistic

    r = jnp.asarray([-3.0, 7.0], FLOAT)
    with _api.bypass():  # the pure-JAX roads (the native one resolves bins in its kernel)
        assert "cond[" not in str(jax.make_jaxpr(static)(x, y))
        assert "cond[" in str(jax.make_jaxpr(traced)(x, y, r))
        got = jax.jit(static)(x, y), jax.jit(traced)(x, y, r)
    for g in got:
        npt.assert_allclose(np.asarray(g), want, rtol=1e-5 if FLOAT == np.float32 else 1e-12)
