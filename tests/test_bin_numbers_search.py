"""The bin numbers by the key search alone (``binnumber(..., search=True)``, what the blocks
road reads for its block ends and cut blocks) against SciPy's, on hostile x: ties on edges,
the last edge and SciPy's rounding rule beside it, values outside the range, NaN, +-inf,
subnormals, uniform and non-uniform edges, and eager bucketing's +inf padding edges."""

import jax.numpy as jnp
import numpy as np
import numpy.testing as npt
import pytest
import scipy.stats
from hypothesis import given, settings, strategies as st

from jaxsubset._bin_numbers import binnumber
from jaxsubset.resolve import keys, unkeys
from references import FLOAT, X64


def _scipy(x, edges):
    return scipy.stats.binned_statistic(x, x, "count", bins=[edges]).binnumber


@settings(max_examples=15, deadline=None)
@given(
    ints=st.lists(st.integers(-8, 8), min_size=24, max_size=24),  # one shape
    uniform=st.booleans(),
    nbins=st.integers(1, 5),
)
def test_search_matches_scipy_and_the_guess(ints, uniform, nbins):
    # x on a grid of quarters over edges on halves: many points exactly on edges
    x = np.asarray(ints, FLOAT) / 4
    if uniform:
        edges = np.linspace(-1.5, 1.0, nbins + 1).astype(FLOAT)
    else:
        edges = np.cumsum(np.r_[-1.5, np.arange(1, nbins + 1) / 4]).astype(FLOAT)
    x = np.r_[x, edges[-1] + np.spacing(edges[-1]), np.nan, np.inf, -np.inf].astype(FLOAT)
    dec = jnp.asarray(int(1 - np.floor(np.log10(np.ptp(edges)))) + 6)
    got = np.asarray(binnumber(jnp.asarray(x), jnp.asarray(edges), dec, uniform, search=True))
    guess = np.asarray(binnumber(jnp.asarray(x), jnp.asarray(edges), dec, uniform))
    npt.assert_array_equal(got, guess)
    if X64:  # SciPy's rounding rule reads float64 edges
        npt.assert_array_equal(got, _scipy(x, edges))


@pytest.mark.parametrize("uniform", [True, False])
def test_search_subnormals_and_padding(uniform):
    """Subnormal x (a float comparison may flush them to zero, the keys never) and edges
    padded with +inf past ``nbins`` (eager bucketing): the same numbers as the guess."""
    tiny = float(np.finfo(FLOAT).smallest_subnormal)
    edges = np.array([-4 * tiny, -2 * tiny, 0.0, 2 * tiny, np.inf, np.inf], FLOAT)
    x = np.array([-5, -4, -3, -2, -1, 0, 1, 2, 3], FLOAT) * tiny
    x = np.r_[x, 1.0, np.nan].astype(FLOAT)  # 1.0: above, or on the last edge to dec
    nb = jnp.asarray(3)
    args = (jnp.asarray(x), jnp.asarray(edges), jnp.asarray(300), uniform, nb)
    got = np.asarray(binnumber(*args, search=True))
    npt.assert_array_equal(got, np.asarray(binnumber(*args)))
    npt.assert_array_equal(got[:7], [0, 1, 1, 2, 2, 3, 3])  # digitize, exact in the keys
    assert got[-1] == 4  # NaN: nbins + 1


@pytest.mark.parametrize("uniform", [True, False])
def test_points_outside_the_range_keep_the_guess(uniform, monkeypatch):
    """Points below the first edge, above the last (or on it to ``dec``), NaN and +-inf are
    verified like any other: the search is the fallback for a wrong guess only, and a point
    above the range is not one (it once sent every call holding one to the search, 3-4x
    slower at 1e7 points). Under ``disable_jit`` a ``lax.cond`` runs only its taken branch."""
    import jax

    from jaxsubset import _bin_numbers

    edges = np.linspace(0.0, 10.0, 11).astype(FLOAT)
    x = np.r_[np.arange(-2.0, 13.0, 0.5), 10.0, np.nan, np.inf, -np.inf].astype(FLOAT)
    want = np.asarray(binnumber(jnp.asarray(x), jnp.asarray(edges), jnp.asarray(8), uniform))

    def no_search(*args):
        raise AssertionError("the fallback search ran")

    monkeypatch.setattr(_bin_numbers, "key_search", no_search)
    with jax.disable_jit():
        got = binnumber(jnp.asarray(x), jnp.asarray(edges), jnp.asarray(8), uniform)
    npt.assert_array_equal(np.asarray(got), want)
    npt.assert_array_equal(want, _scipy(x, edges))


def _numpy_binnumber(x, edges, dec):
    """SciPy's rule in NumPy: digitize, a point at or above the last edge that rounds to
    ``dec`` decimals as the edge does in the last bin, NaN above every bin."""
    d = np.digitize(x, edges)
    on = (x >= edges[-1]) & (np.around(x, dec) == np.around(edges[-1], dec))
    return np.where(np.isnan(x), len(edges), np.where(on, d - 1, d))


def test_the_last_edge_rule_rounds_as_numpy():
    """Points on and just above the last edge, rounded as ``numpy.around`` rounds (a true
    division: XLA would divide by a broadcast power of ten as a product with its reciprocal,
    which put 1e6 itself, rounded to 9 decimals, above 1e6), eagerly, under ``jit`` and under
    ``vmap`` over the edges with one ``dec``."""
    import jax

    edges = np.logspace(-6, 6, 41).astype(FLOAT)
    last = edges[-1]
    up = [np.nextafter(last, FLOAT(np.inf)), last * FLOAT(1 + 1e-6), last * FLOAT(1.01)]
    x = np.r_[last, up, edges[-2], np.inf, np.nan].astype(FLOAT)
    scipy_dec = int(-np.log10(np.diff(edges.astype(np.float64)).min())) + 6
    for dec in (scipy_dec, 9, 2, 0, -3):
        want = _numpy_binnumber(x, edges, dec)
        args = (jnp.asarray(x), jnp.asarray(edges), jnp.asarray(dec, jnp.int32))
        npt.assert_array_equal(np.asarray(binnumber(*args, False)), want, err_msg=str(dec))
        jitted = jax.jit(binnumber, static_argnums=3)(*args, False)
        npt.assert_array_equal(np.asarray(jitted), want, err_msg=str(dec))
    if X64:
        npt.assert_array_equal(_numpy_binnumber(x, edges, scipy_dec)[:-1], _scipy(x[:-1], edges))
    both = np.stack([edges, edges * FLOAT(2)])
    got = jax.vmap(lambda e: binnumber(jnp.asarray(x), e, jnp.asarray(9, jnp.int32), False))(
        jnp.asarray(both)
    )
    for row, e in zip(np.asarray(got), both, strict=True):
        npt.assert_array_equal(row, _numpy_binnumber(x, e, 9))


@pytest.mark.parametrize("kind", ["log", "log, both signs"])
def test_spread_edges_are_found_without_the_search(kind, monkeypatch):
    """Edges over many orders of magnitude (which crowd into the lowest of equal cells of
    their values) are looked up in cells of their keys' span: SciPy's bin numbers with no
    fallback search (the search ran for every point of such a call before). Points on every
    edge and one ulp below it; edges spanning the whole float range (infinite ends) are too
    sparse in the keys' cells and keep the search (``test_native_first``'s spread edges)."""
    import jax

    from jaxsubset import _bin_numbers

    edges = {
        "log": np.logspace(-6, 6, 41),
        "log, both signs": np.r_[-np.logspace(3, -3, 20), 0.0, np.logspace(-3, 3, 20)],
    }[kind].astype(FLOAT)
    rng = np.random.default_rng(3)
    fin = edges[np.isfinite(edges)]
    x = np.r_[
        edges[np.isfinite(edges)],
        np.nextafter(fin, FLOAT(-np.inf)),
        10.0 ** rng.uniform(-7, 7, 200) * rng.choice([-1.0, 1.0], 200),
        np.nan,
    ].astype(FLOAT)
    # and the values one and two keys either side of every boundary of 64 cells a bin of
    # the keys' span (where a rounded distance could put a point in the next cell)
    k = np.asarray(keys(jnp.asarray(edges)))
    span = int(k[-1]) - int(k[0])
    cells = 64 * len(edges)
    at = [int(k[0]) + span * j // cells + o for j in range(cells) for o in (-2, -1, 0, 1)]
    kdt = k.dtype
    near = np.asarray(unkeys(jnp.asarray(np.clip(at, k[0], k[-1]).astype(kdt)), FLOAT))
    x = np.r_[x, near].astype(FLOAT)
    # (no subnormal: a float comparison may flush it, the keys' search then settles it)
    x = x[(x == 0) | ~(np.abs(x) < np.finfo(FLOAT).tiny)]
    want = _numpy_binnumber(x, edges, 9)

    def no_search(*args):
        raise AssertionError("the fallback search ran")

    monkeypatch.setattr(_bin_numbers, "value_search", no_search)
    monkeypatch.setattr(_bin_numbers, "key_search", no_search)
    with jax.disable_jit():
        got = binnumber(jnp.asarray(x), jnp.asarray(edges), jnp.asarray(9), False)
    npt.assert_array_equal(np.asarray(got), want)


@settings(max_examples=15, deadline=None)
@given(
    gaps=st.lists(st.integers(0, 3), min_size=6, max_size=6),  # ties where a gap is 0
    scale=st.sampled_from([1, 1000, 10**9]),
    last=st.integers(1, 5),
)
def test_integer_lookup_equals_numpy_searchsorted(gaps, scale, last):
    """``int_bucketize`` (integer and time axes): NumPy's ``searchsorted(side="right")``
    capped at ``last + 1`` (the thresholds past ``last`` are padding), on every threshold,
    one either side, far outside, the dtype's extremes; ties and a zero span too."""
    import jax

    from jaxsubset._bin_numbers import int_bucketize

    idt = np.int64 if X64 else np.int32
    info = np.iinfo(idt)
    base = -(10**12) if X64 else -(10**6)
    t = base + np.cumsum(np.asarray(gaps, np.int64)) * (scale if X64 else min(scale, 1000))
    t = t.astype(idt)
    t[last + 1 :] = info.max  # padding, as eager bucketing pads
    x = np.r_[t, t - 1, t + 1, t[0] - 10**6, t[last] + 10**6, info.min, info.max]
    x = np.clip(x, info.min, info.max).astype(idt)
    want = np.minimum(np.searchsorted(t, x, side="right"), last + 1)
    got = jax.jit(int_bucketize)(jnp.asarray(x), jnp.asarray(t), jnp.asarray(last))
    npt.assert_array_equal(np.asarray(got), want)
    npt.assert_array_equal(
        np.asarray(int_bucketize(jnp.asarray(x), jnp.asarray(t))),
        np.searchsorted(t, x, side="right"),
    )


def test_a_time_axis_is_found_without_the_search(monkeypatch):
    """Daily edges in int64 nanoseconds padded as eager bucketing pads (the dtype's largest
    value past the last real edge): every point's bin from the lookup, no binary search."""
    import jax

    from jaxsubset import _bin_numbers

    if not X64:
        pytest.skip("int64 nanoseconds need JAX's 64-bit mode")
    day = 86_400 * 10**9
    t = np.r_[1_600_000_000 * 10**9 + day * np.arange(366), [np.iinfo(np.int64).max] * 15]
    rng = np.random.default_rng(4)
    x = np.r_[t[:366], t[:366] - 1, rng.integers(t[0] - day, t[365] + day, 3000)]
    want = np.minimum(np.searchsorted(t, x, side="right"), 366)

    def no_search(*args):
        raise AssertionError("the fallback search ran")

    monkeypatch.setattr(_bin_numbers, "value_search", no_search)
    with jax.disable_jit():
        got = _bin_numbers.int_bucketize(jnp.asarray(x), jnp.asarray(t), jnp.asarray(365))
    npt.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize(
    "lo, hi, nbins, dec",
    [
        (1e7, 1e7 + 1, 100, 9),  # float32: edges 1 apart and many equal (one ulp is 1.0)
        (-1.0, 1.0, 3, 9),  # ordinary: the proof holds, no check
        (0.0, 1e-37, 100, 30),  # float32: a reciprocal of the span beyond the dtype
        (1e300, 1e300 * (1 + 1e-12), 1000, 0),  # float64: edges a few ulps apart, uneven
    ],
)
@pytest.mark.parametrize("uniform", [True, False])
def test_uniform_guesses_are_trusted_only_where_proven(lo, hi, nbins, dec, uniform, monkeypatch):
    """Evenly meant edges (``bins=int``, or given as an array, ``uniform=False``) whose
    rounding moves them by a bin or more (or whose span's reciprocal is not a float) must
    not take the unchecked road: the bin numbers are NumPy's ``searchsorted`` with SciPy's
    last-edge rule at every edge, one ulp either side and between. Ordinary edges take it,
    given as an array too: the checked road (``settle``) does not run."""
    import jax

    from jaxsubset import _bin_numbers

    with np.errstate(over="ignore"):
        edges = np.linspace(lo, hi, nbins + 1).astype(FLOAT)
    if not np.isfinite(edges).all():
        pytest.skip("edges beyond float32")
    fin = edges
    mid = (fin[:-1] / 2 + fin[1:] / 2).astype(FLOAT)
    x = np.r_[
        fin, np.nextafter(fin, FLOAT(-np.inf)), np.nextafter(fin, FLOAT(np.inf)), mid, np.nan
    ].astype(FLOAT)
    want = _numpy_binnumber(x, edges, dec)
    settled = []
    monkeypatch.setattr(_bin_numbers, "settle", lambda *a: settled.append(1) or SETTLE(*a))
    with jax.disable_jit():  # a lax.cond runs its taken branch only
        got = binnumber(jnp.asarray(x), jnp.asarray(edges), jnp.asarray(dec), uniform)
    npt.assert_array_equal(np.asarray(got), want)
    if (lo, hi) == (-1.0, 1.0):
        assert not settled  # proven: no check
    elif FLOAT == np.float32 and hi < 1e30:
        assert settled  # rounded edges or span: checked
    jitted = jax.jit(binnumber, static_argnums=3)(
        jnp.asarray(x), jnp.asarray(edges), jnp.asarray(dec), uniform
    )
    npt.assert_array_equal(np.asarray(jitted), want)
    # edges known on the host (binned_edges, also under jit) are proven there: the same
    # answer as the run-time proof, and the one road it leaves is exact (the proven one
    # holds no lax.cond; the checked one keeps its own check's)
    proven = _bin_numbers.host_proven(edges)
    assert proven == bool(_bin_numbers.guess_proven(jnp.asarray(edges), nbins, jnp))
    one_road = jax.jit(lambda *a: binnumber(*a, uniform, proven=proven))
    args = (jnp.asarray(x), jnp.asarray(edges), jnp.asarray(dec))
    assert proven == ("cond[" not in str(jax.make_jaxpr(one_road)(*args)))
    npt.assert_array_equal(np.asarray(one_road(*args)), want)


SETTLE = __import__("jaxsubset._bin_numbers", fromlist=["settle"]).settle


def test_around_is_numpys_at_every_decimal():
    """``numpy.around`` scales by its own powers of ten (1e9 times 10 per further digit: an
    ulp off the correctly rounded ``10.0**n`` from n = 23 on): ``around`` equals it for every
    decimal up to the largest power the dtype holds (308, float32 38), over the dtype's
    range of magnitudes, zeros and infinities, under ``jit`` (one program: ``dec`` is traced)
    and eagerly for a few. Past it NumPy's power is inf (every rounding NaN): ``around``
    holds the power at the largest finite one."""
    import jax

    from jaxsubset._bin_numbers import around

    rng = np.random.default_rng(11)
    info = np.finfo(FLOAT)
    top = int(np.log10(info.max))
    mag = rng.integers(int(np.log10(info.tiny)), top, 300)
    v = rng.uniform(1, 9, 300) * 10.0 ** mag.astype(np.float64)
    v = np.r_[v, -v, 0.0, np.inf, -np.inf].astype(FLOAT)
    jitted = jax.jit(around)

    def run(dec):
        return np.asarray(jitted(jnp.asarray(v), jnp.asarray(dec, jnp.int32)))

    with np.errstate(all="ignore"):
        for dec in range(-top, top + 1):
            want = np.around(v, dec)
            npt.assert_array_equal(run(dec), want, err_msg=str(dec))
            if dec % 97 == 0:
                eager = around(jnp.asarray(v), jnp.asarray(dec, jnp.int32))
                npt.assert_array_equal(np.asarray(eager), want, err_msg=str(dec))
    for dec in (top + 1, top + 50):
        npt.assert_array_equal(run(dec), run(top))
        npt.assert_array_equal(run(-dec), run(-top))


@pytest.mark.skipif(not X64, reason="SciPy's rule reads float64 edges")
@pytest.mark.parametrize("width", [1e-20, 1e-303])
def test_the_last_edge_rule_at_scipys_extreme_decimals(width):
    """Bins a ``width`` wide: SciPy's decimals are 26 (NumPy's 1e26 is not the correctly
    rounded one) and 309 (NumPy's power of ten is inf, every rounding NaN, and SciPy leaves
    even a point on the last edge out of every bin; here the power is held at 1e308 and the
    edge stays closed): SciPy's bin numbers on, just above and below the last edge, with
    ``binned_statistic`` (either road) and ``binnumber``."""
    import scipy.stats

    import jaxsubset

    edges = np.linspace(0.0, 1000 * width, 1001)
    last = edges[-1]
    x = np.r_[last, np.nextafter(last, np.inf), last * (1 + 1e-15), edges[-2], edges[500]]
    with np.errstate(invalid="ignore"):  # SciPy's own rounding: NaN at 309 decimals
        want = scipy.stats.binned_statistic(x, x, "count", bins=edges).binnumber
    if width < 1e-300:  # SciPy's NaN rounding leaves the last edge open; at 308 decimals
        # (the power held) the edge and the two points just above it round alike
        assert (want[:3] == 1001).all()
        want[:3] = 1000
    dec = int(-np.log10(np.diff(edges).min())) + 6
    for uniform in (True, False):
        got = binnumber(jnp.asarray(x), jnp.asarray(edges), jnp.asarray(dec), uniform)
        npt.assert_array_equal(np.asarray(got), want)
    res = jaxsubset.binned_statistic(x, x, "count", bins=edges)
    npt.assert_array_equal(np.asarray(res.binnumber), want)
