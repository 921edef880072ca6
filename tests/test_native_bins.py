"""Binned statistics on the native CPU road (``jaxsubset_bin_stats``, csrc/bins.cc).

The kernel resolves every point's bin from ``x`` and the edges itself (the library's rule:
``_binned.binnumber``) or reads labels; here: what is read is bit for bit the reference road's
(counts, extremes, first/last, medians, quantiles), the moments within a few ulps, SciPy's
``binned_statistic`` and pandas' groupby agree, points on edges and outside the range go where
``binnumber`` puts them, eager = ``jit`` = ``vmap`` (one kernel call), derivatives are the
pure-JAX road's, and a GPU lowering names no CPU kernel.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings, strategies as st

import jaxsubset
from jaxsubset import binned_statistic
from jaxsubset._bin_edges import binned_edges
from jaxsubset._bin_numbers import binnumber
from jaxsubset._statistics._labels import reduce_labels
from jaxsubset.reduce import Request
from references import FLOAT, X64, bin_capacity


pytestmark = pytest.mark.skipif(
    not jaxsubset._native.available(), reason=f"native road: {jaxsubset._native.status()}"
)
RNG = np.random.default_rng(29)
EPS = np.finfo(FLOAT).eps
N = 600
NB = 12
READ = ("count", "min", "max", "first", "last", "median", "quantile")
MOMENTS = ("sum", "mean", "std", "sem", "skew", "kurt")
TARGET = "jaxsubset_bin_stats"
AVX2 = "JAXSUBSET_NATIVE_AVX2"


def _xy(order: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x over [-1, 11] with points on edges, on the last edge, outside, and an empty bin."""
    edges = np.linspace(0.0, 10.0, NB + 1).astype(FLOAT)
    x = RNG.uniform(-1.0, 11.0, N).astype(FLOAT)
    x[(x > 5.0) & (x < 5.0 + 10.0 / NB)] = 4.5  # bin 6 empty
    x[:8] = edges[[0, 1, 2, 3, NB, NB, NB - 1, 0]]  # on edges, the last (closed) one
    x[8:10] = [-0.0, np.nextafter(edges[-1], FLOAT(20))]  # -0.0; just above the last edge
    y = RNG.normal(1.0, 2.0, (2, N)).astype(FLOAT)
    y[0, [11, 40, 41]] = np.nan
    y[1, 50] = np.inf
    y[1, 60:70] = 0.0
    if order == "sorted":
        i = np.argsort(x, kind="stable")
        x, y = x[i], y[:, i]
    return x, y, edges


def _stat(x, y, s, edges, **kw):
    q = {"q": 0.3} if s == "quantile" else {}
    return binned_statistic(x, y, s, edges, **q, **kw).statistic


def _every(x, y, edges, stats=READ + MOMENTS, **kw) -> dict:
    """Every statistic, one ``binned_statistic`` call each, in ONE jitted program (one
    compilation for all of them: the suite is compile-bound)."""
    f = jax.jit(lambda x, y: {s: _stat(x, y, s, edges, **kw) for s in stats})
    return {s: np.asarray(v) for s, v in f(jnp.asarray(x), jnp.asarray(y)).items()}


@pytest.mark.parametrize("policy", ["propagate", "omit"])
@pytest.mark.parametrize("order", ["sorted", "unsorted"])
def test_native_equals_the_reference_road(order, policy):
    x, y, edges = _xy(order)
    # (the eager call's capacity: the largest bin, rounded up to a power of two)
    cap = bin_capacity(x, edges)
    refs = _every(x, y, edges, nan_policy=policy, method="reference", capacity=cap)
    jits = _every(x, y, edges, nan_policy=policy, x_sorted=order == "sorted")
    for stat in READ + MOMENTS:
        ref, jitted = refs[stat], jits[stat]
        nat = np.asarray(_stat(x, y, stat, edges, nan_policy=policy, method="native"))
        assert nat.dtype == ref.dtype == jitted.dtype, stat
        if stat in READ:
            np.testing.assert_array_equal(nat, ref, err_msg=stat)
            np.testing.assert_array_equal(jitted, ref, err_msg=stat)
        else:
            t = 64 * EPS
            np.testing.assert_allclose(nat, ref, rtol=t, atol=t, err_msg=stat)
            np.testing.assert_allclose(jitted, ref, rtol=t, atol=t, err_msg=stat)
            # the same kernel in both: the eager call's labels and jit's bins resolved from x
            np.testing.assert_array_equal(nat, jitted, err_msg=stat)


@pytest.mark.parametrize("order", ["sorted", "unsorted"])
@pytest.mark.parametrize("stats", [("max",), ("min",), ("min", "max")])
def test_extremes_alone_of_one_channel(order, stats):
    # one channel: the kernel's own loops for the extremes alone (y's dtype in vector lanes
    # for sorted x, only the asked extremes kept for unsorted x), against the reference road
    # and NumPy; bins long and short (the lanes' tails), NaN, +-inf, -0.0, an empty bin
    rng = np.random.default_rng(5)
    edges = np.array([0.0, 1.0, 1.5, 1.5 + 1e-3, 2.0, 6.0, 6.5, 7.0], FLOAT)
    x = np.r_[rng.uniform(0.0, 7.0, 3001), [1.5, 7.0]].astype(FLOAT)
    x = x[(x < 1.5) | (x >= 1.5 + 1e-3)]  # bin 2 empty
    y = rng.normal(0.0, 3.0, x.size).astype(FLOAT)
    y[rng.choice(x.size, 8, replace=False)] = [
        np.nan,
        np.inf,
        -np.inf,
        -0.0,
        0.0,
        np.inf,
        np.nan,
        -np.inf,
    ]
    if order == "sorted":
        i = np.argsort(x, kind="stable")
        x, y = x[i], y[i]
    for policy in ("propagate", "omit"):
        got = jax.jit(
            lambda x, y, policy=policy: {
                s: binned_statistic(
                    x, y, s, edges, nan_policy=policy, x_sorted=order == "sorted"
                ).statistic
                for s in stats
            }
        )(jnp.asarray(x), jnp.asarray(y))
        for s in stats:
            ref = binned_statistic(x, y, s, edges, nan_policy=policy, method="reference").statistic
            np.testing.assert_array_equal(np.asarray(got[s]), np.asarray(ref), err_msg=s)
            ids = np.searchsorted(edges, x, side="right") - 1
            ids[x == edges[-1]] = len(edges) - 2
            for k in range(len(edges) - 1):
                v = y[ids == k]
                if policy == "omit" or s == "min":
                    v = v[~np.isnan(v)]
                want = np.nan if v.size == 0 else getattr(np, s)(v)
                np.testing.assert_array_equal(np.asarray(got[s])[k], want, err_msg=f"{s} {k}")


@pytest.mark.parametrize("order", ["sorted", "unsorted"])
def test_scipy_and_pandas_agree(order):
    x, y, edges = _xy(order)
    y = np.nan_to_num(y[0], nan=0.5, posinf=3.0)
    for s in ("count", "sum", "mean", "std", "min", "max", "median"):
        want = scipy.stats.binned_statistic(x, y, s, edges).statistic
        got = _stat(jnp.asarray(x), jnp.asarray(y), s, edges, method="native")
        tol = 0 if s in ("count", "min", "max") or (s == "median" and X64) else 64 * EPS
        np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol, err_msg=s)
    num = scipy.stats.binned_statistic(x, y, "count", edges).binnumber
    inside = (num >= 1) & (num <= NB)
    g = pd.Series(y[inside]).groupby(num[inside] - 1)
    for s in ("first", "last", "skew"):
        want = getattr(g, s)().reindex(range(NB)).to_numpy()
        got = np.asarray(_stat(x, y, s, edges, method="native"))
        t = 0 if s != "skew" else (1e-9 if X64 else 1e-4)
        np.testing.assert_allclose(got, want, rtol=t, atol=t, err_msg=s)


def test_bins_resolved_in_the_kernel_are_binnumbers():
    # clustered edges (the kernel's lookup table then walks or searches), points on every
    # edge, subnormals, -0.0, inf, and SciPy's rounding at the last edge
    edges = np.array([-3.0, -1e-300, 0.0, 1e-300, 2.0, 2.0000001, 2.0000002, 9.0], FLOAT)
    edges = np.unique(edges)
    tiny = np.finfo(FLOAT).smallest_subnormal
    x = np.r_[edges, -edges, [-0.0, tiny, -tiny, np.inf, -np.inf, 9.0 + 1e-9, 9.5, -3.5]]
    x = np.r_[x, RNG.uniform(-4.0, 10.0, 300), RNG.uniform(1.99, 2.01, 100)].astype(FLOAT)
    x = RNG.permutation(x)
    y = np.ones_like(x)
    res = binned_statistic(x, y, "count", edges)  # eager: the binnumber of XLA's rule
    want = np.bincount(res.binnumber, minlength=len(edges) + 1)[1:-1]
    for order in ("unsorted", "sorted"):
        xs = np.sort(x) if order == "sorted" else x
        srt = order == "sorted"

        def f(x, y, srt=srt):
            return binned_statistic(x, y, "count", edges, x_sorted=srt, method="native").statistic

        np.testing.assert_array_equal(np.asarray(jax.jit(f)(xs, y)), want, err_msg=order)
        assert TARGET in jax.jit(f).lower(xs, y).as_text()
    sp = scipy.stats.binned_statistic(x, y, "count", edges.astype(np.float64))
    np.testing.assert_array_equal(want, sp.statistic)


@pytest.mark.parametrize("dtype", ["int32", "float32", "float16"])
@pytest.mark.parametrize("order", ["sorted", "unsorted"])
def test_other_dtypes_follow_the_reference(dtype, order):
    x, y, edges = _xy(order)
    y = np.nan_to_num(y, nan=1.0, posinf=2.0) * (50 if dtype == "int32" else 1)
    y = y.astype(dtype)
    stats = ("count", "max", "first", "median", "mean", "std")
    cap = bin_capacity(x, edges)
    refs = _every(x, y, edges, stats, method="reference", capacity=cap)
    nats = _every(x, y, edges, stats, method="native")
    for s in stats:
        ref, nat = refs[s], nats[s]
        assert nat.dtype == ref.dtype, s
        if s in READ:
            np.testing.assert_array_equal(nat, ref, err_msg=s)
        else:
            t = 4 * np.finfo(ref.dtype).eps * (16 if ref.dtype != np.float16 else 1)
            np.testing.assert_allclose(nat, ref, rtol=t, atol=t, err_msg=s)


def _request(stats, **kw) -> Request:
    """What ``reduce_labels`` is asked (its old keywords' defaults)."""
    return Request("reduce_labels", "bins", tuple(stats), **kw)


def _calls(f, *args) -> int:
    return jax.jit(f).lower(*args).as_text().count(TARGET)


def test_vmap_is_one_kernel_call_and_equals_each_call():
    x, y, edges = _xy("unsorted")
    ys = np.stack([y[0], y[1] * 3, -y[0]])

    xj = jnp.asarray(x)

    def f(y):
        return binned_statistic(xj, y, "median", edges, nan_policy="omit").statistic

    assert _calls(jax.vmap(f), ys) == 1
    got = jax.jit(jax.vmap(f))(ys)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(got[i]), np.asarray(f(ys[i])))
    # x batched too, sorted x
    xs = np.stack([np.sort(x), np.sort(x) + 0.5])

    y1 = jnp.asarray(y[1])

    def g(x):
        return binned_statistic(x, y1, "max", edges, x_sorted=True).statistic

    assert _calls(jax.vmap(g), xs) == 1
    out = jax.jit(jax.vmap(g))(xs)
    for i in range(2):
        want = binned_statistic(xs[i], y[1], "max", edges, method="reference").statistic
        np.testing.assert_array_equal(np.asarray(out[i]), np.asarray(want))


def test_derivatives_are_the_pure_roads():
    x, y, edges = _xy("unsorted")
    y = np.nan_to_num(y[0], nan=0.0)

    def total(v, method):
        return sum(
            jnp.nansum(binned_statistic(x, v, s, edges, method=method).statistic)
            for s in ("sum", "mean", "std", "max", "median")
        )

    g_nat = jax.jit(jax.grad(total), static_argnums=(1,))(jnp.asarray(y), "native")
    g_pure = jax.jit(jax.grad(total), static_argnums=(1,))(jnp.asarray(y), "scatter")
    np.testing.assert_allclose(np.asarray(g_nat), np.asarray(g_pure), rtol=1e-5, atol=1e-6)
    vg = jax.vmap(jax.grad(lambda v: total(v, "native")))(jnp.stack([y, 2 * y]))
    np.testing.assert_allclose(np.asarray(vg[0]), np.asarray(g_pure), rtol=1e-5, atol=1e-6)


def test_auto_takes_it_on_the_cpu_and_a_gpu_lowering_names_no_kernel():
    x, y, edges = _xy("unsorted")
    for srt, xs in ((False, x), (True, np.sort(x))):
        e = jaxsubset.explain(binned_statistic, xs, y[0], "mean", edges)
        assert e.choices[0].layout == "labels", srt
        assert e.choices[0].roads == (("mean", "native"),), srt

    def f(y):
        return binned_statistic(x, y, "std", edges).statistic

    assert _calls(f, jnp.asarray(y[0])) == 1
    # a lowering for a GPU: the kernel's pure-JAX branch only (binned_statistic's own
    # run-time checks are host callbacks, which lower for the CPU only: its kernel call alone)
    label = jnp.asarray(np.searchsorted(edges, x, side="right") - 1)

    def g(v):
        return reduce_labels(v, label, NB, _request(("std", "median"), method="native"))

    def h(v):
        return jaxsubset._native.native_bins(
            v, label, NB, ("mean",), omit=False, ddof=0, x=jnp.asarray(x),
            edges=jnp.asarray(edges), dec=jnp.asarray(9, jnp.int32),
            fallback=lambda w, lab: reduce_labels(w, lab, NB, _request(("mean",))),
        )  # fmt: skip

    v = jnp.asarray(y.T)
    for fn in (g, h):
        assert _calls(fn, v) == 1
        # (traced on this CPU-only machine: the pure-JAX branch only under the switch)
        with jaxsubset._native.portable_lowering():
            cuda = jax.jit(fn).trace(v).lower(lowering_platforms=("cuda",)).as_text()
        assert TARGET not in cuda and "custom_call" not in cuda


def test_labels_given_to_the_kernel():
    y = RNG.normal(size=(300, 2)).astype(FLOAT)
    y[7, 1] = np.nan
    label = RNG.integers(-2, 9, 300)  # -2, -1, 7, 8 in no bin of 7
    stats = ("count", "mean", "std", "min", "last", "median", "quantile(0.75)")
    for omit in (False, True):
        nat = reduce_labels(y, label, 7, _request(stats, omit=omit, method="native"))
        ref = reduce_labels(y, label, 7, _request(stats, omit=omit, method="reference"))
        for s in stats:
            if s in ("mean", "std"):
                np.testing.assert_allclose(
                    np.asarray(nat[s]), np.asarray(ref[s]), rtol=64 * EPS, atol=64 * EPS
                )
            else:
                np.testing.assert_array_equal(np.asarray(nat[s]), np.asarray(ref[s]), s)
    native = _request(stats, method="native")
    assert _calls(lambda v: reduce_labels(v, label, 7, native), y) == 1


def _near_edges(edges: np.ndarray) -> np.ndarray:
    """Every edge, its neighbours one and two ulps away, -0.0, the smallest subnormals,
    infinities and NaN."""
    tiny = np.finfo(FLOAT).smallest_subnormal
    out = [edges]
    for to in (-np.inf, np.inf):
        a = np.nextafter(edges, FLOAT(to))
        out += [a, np.nextafter(a, FLOAT(to))]
    out.append(np.array([-0.0, 0.0, tiny, -tiny, 2 * tiny, np.inf, -np.inf, np.nan], FLOAT))
    return np.concatenate(out).astype(FLOAT)


@settings(max_examples=30, deadline=None)
@given(
    nb=st.integers(1, 40),
    lo=st.floats(-1e6, 1e6, allow_subnormal=True, width=32),
    span=st.sampled_from([1e-40, 1e-30, 1e-6, 1.0, 3.0, 1e5, 1e30]),
    nudge=st.lists(st.integers(-2, 2), min_size=0, max_size=6),
    seed=st.integers(0, 2**31 - 1),
)
def test_bins_of_points_near_edges_are_binnumbers(nb, lo, span, nudge, seed):
    # evenly spaced edges (the kernel's quick road and its proven guess), some nudged by an
    # ulp or two (or clustered: the walk), tiny spans (SciPy's last-edge rule then rounds to
    # more than 39 decimals) and a subnormal first edge; the points on, next to
    # and between the edges, -0.0, subnormals, inf and NaN: the kernel's bin numbers and
    # counts are SciPy's
    edges = np.linspace(lo, lo + span, nb + 1).astype(FLOAT)
    rng = np.random.default_rng(seed)
    for step in nudge:
        k = rng.integers(0, nb + 1)
        edges[k] = np.nextafter(edges[k], FLOAT(np.inf if step > 0 else -np.inf))
        if abs(step) == 2:
            edges[k] = np.nextafter(edges[k], FLOAT(np.inf if step > 0 else -np.inf))
    tiny = np.finfo(FLOAT).tiny
    if not (np.all(np.isfinite(edges)) and np.all(np.diff(edges) > 0)):
        return  # (not bin edges)
    if np.any((np.abs(edges[:-1]) < tiny) & (np.abs(edges[1:]) < tiny)):
        return  # subnormal neighbours: refused under jit (XLA's comparisons flush them)
    width = float(edges[-1]) - float(edges[0])
    inside = rng.uniform(float(edges[0]) - width / 8, float(edges[-1]) + width / 8, 400)
    x = rng.permutation(np.r_[_near_edges(edges), inside.astype(FLOAT)]).astype(FLOAT)
    y = np.ones_like(x)
    # the reference: SciPy's bin numbers (float64 x); float32 x (32-bit mode): the pure-JAX
    # key search under jit, with binned_statistic's own edges and decimals (concrete x
    # holding NaN is refused by binned_statistic itself: NaN reaches the kernel traced)
    if X64:
        want_num = scipy.stats.binned_statistic(x, y, "count", edges).binnumber
    else:
        e, dec, _, _ = binned_edges(jnp.asarray(x), edges, None, "binned_statistic")
        search = jax.jit(lambda x, e, d: binnumber(x, e, d, False, search=True))
        want_num = np.asarray(search(jnp.asarray(x), e, dec))
    want = np.bincount(want_num, minlength=nb + 2)[1:-1]

    def f(x, y):
        res = binned_statistic(x, y, "count", edges, method="native")
        return res.statistic, res.binnumber

    g = jax.jit(f)
    got, num = g(x, y)
    np.testing.assert_array_equal(np.asarray(num), want_num)
    np.testing.assert_array_equal(np.asarray(got), want)
    # the quick road's SSE2 loop where the CPU has AVX2 too (bin_edges.h, read per call)
    os.environ[AVX2] = "0"
    try:
        got, num = g(x, y)
    finally:
        del os.environ[AVX2]
    np.testing.assert_array_equal(np.asarray(num), want_num)
    np.testing.assert_array_equal(np.asarray(got), want)


SELECT_N = 2048
_select_jit = jax.jit(
    lambda x, y, q: {
        s: binned_statistic(
            x, y, s, [0.0, 0.1, 0.5, 0.55, 1.0], nan_policy="omit", method="native", **kw
        ).statistic
        for s, kw in (("median", {}), ("quantile", {"q": q}))
    },
    static_argnums=2,
)


@settings(max_examples=25, deadline=None)
@given(
    distinct=st.sampled_from([1, 2, 3, 40, 10**6]),
    order=st.sampled_from(["random", "sorted", "reversed", "pipe"]),
    q=st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]),  # static: a program each
    nans=st.integers(0, 300),
    seed=st.integers(0, 2**31 - 1),
)
def test_order_statistics_of_large_bins_are_numpys(distinct, order, q, nans, seed):
    # the kernel's selection (select.h: branchless quickselect, equal values split off) on
    # bins of hundreds of values: constant bins, a few distinct values (ties), ascending,
    # descending and organ-pipe orders, NaN left out: NumPy's median and quantile per bin
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 1.0, SELECT_N)).astype(FLOAT)
    y = rng.integers(0, distinct, SELECT_N).astype(FLOAT) * FLOAT(0.25)
    if order != "random":
        y = np.sort(y)
        if order == "reversed":
            y = y[::-1].copy()
        elif order == "pipe":
            y = np.r_[y[::2], y[1::2][::-1]]
    y[rng.choice(SELECT_N, nans, replace=False)] = np.nan
    got = _select_jit(jnp.asarray(x), jnp.asarray(y), q)
    edges = np.array([0.0, 0.1, 0.5, 0.55, 1.0], FLOAT)
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, 3)
    for b in range(4):
        v = y[idx == b]
        v = v[~np.isnan(v)]
        want_med = np.median(v) if v.size else np.nan
        want_q = np.quantile(v, FLOAT(q)) if v.size else np.nan
        np.testing.assert_array_equal(np.asarray(got["median"])[b], FLOAT(want_med))
        np.testing.assert_allclose(np.asarray(got["quantile"])[b], want_q, rtol=4 * EPS)
