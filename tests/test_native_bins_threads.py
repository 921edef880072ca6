"""The bins kernel over XLA's thread pool (csrc/bins.cc, bin_pieces.h): the same bits for any
number of threads.

The kernel cuts a call into pieces by the data alone (points, bins, batch items), so
``JAXSUBSET_NATIVE_THREADS=1`` (every piece on the calling thread) and the default (the pool's
threads) must give identical results, on inputs long enough to be cut (more than 2**18 points:
pieces of points whose boundaries every bin straddles; sorted x: pieces of bins), with empty
bins, NaN and +-inf, both NaN policies, several channels, given labels, vmap batches, and the
order statistics; and the cut results are still the reference road's (the read statistics bit
for bit, the moments within a few ulps).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from jaxsubset import binned_statistic
from jaxsubset._statistics._labels import reduce_labels
from jaxsubset.reduce import Request
from references import FLOAT, X64, bin_capacity, run_fully_optimised


pytestmark = pytest.mark.skipif(
    not jaxsubset._native.available(), reason=f"native road: {jaxsubset._native.status()}"
)
N = 2**19 + 77  # four pieces of points (bin_pieces.h: at least 2**17 points each)
NB = 40
READ = ("count", "min", "max", "first", "last", "median", "quantile")
MOMENTS = ("sum", "mean", "std", "sem", "skew", "kurt")
STATS = READ + MOMENTS
ENV = "JAXSUBSET_NATIVE_THREADS"
RNG_CLUSTER = np.random.default_rng(11)


def _data(dtype, order: str, edges: str = "even", seed: int = 3):
    """x over [-1, 11] (outside points both sides), bin 6 empty, NaN/+-inf/-0.0 in y."""
    rng = np.random.default_rng(seed)
    if edges == "even":
        e = np.linspace(0.0, 10.0, NB + 1)
    else:  # clustered edges: the lookup is not the proven one (labels kept, bin_edges.h)
        e = np.r_[0.0, 1e-7, 2e-7, 3e-7, np.geomspace(1e-3, 10.0, NB - 3)]
    e = e.astype(dtype)
    x = rng.uniform(-1.0, 11.0, N).astype(dtype)
    x[(x >= e[6]) & (x < e[7])] = e[5]  # bin 6 empty
    x[:4] = e[[0, 3, NB, NB]]  # on edges, the last (closed) one
    y = rng.normal(1e3, 2.0, (2, N)).astype(dtype)
    y[0, rng.choice(N, 50, replace=False)] = np.nan
    y[1, rng.choice(N, 9, replace=False)] = np.inf
    y[1, rng.choice(N, 9, replace=False)] = -np.inf
    y[0, 1000:1100] = -0.0
    if order == "sorted":
        i = np.argsort(x, kind="stable")
        x, y = x[i], y[:, i]
    return x, y, e


def _jitted(x, y, edges, policy, order):
    def f(x, y):
        return {
            s: binned_statistic(
                x,
                y,
                s,
                edges,
                nan_policy=policy,
                q=0.3 if s == "quantile" else None,
                x_sorted=order == "sorted",
                method="native",
            ).statistic
            for s in STATS
        }

    return {s: np.asarray(v) for s, v in jax.jit(f)(jnp.asarray(x), jnp.asarray(y)).items()}


def _both(monkeypatch, fn):
    """fn() with the pool's threads, then on the calling thread alone."""
    monkeypatch.delenv(ENV, raising=False)
    pooled = fn()
    monkeypatch.setenv(ENV, "1")
    serial = fn()
    monkeypatch.delenv(ENV, raising=False)
    return pooled, serial


def _same(a: dict, b: dict):
    for s in a:
        np.testing.assert_array_equal(np.asarray(a[s]), np.asarray(b[s]), err_msg=s)


DTYPES = [np.float64, np.float32] if X64 else [np.float32]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["sorted", "unsorted"])
@pytest.mark.parametrize("policy", ["propagate", "omit"])
def test_threads_give_the_bits_of_one_thread(dtype, order, policy, monkeypatch):
    x, y, e = _data(dtype, order)
    pooled, serial = _both(monkeypatch, lambda: _jitted(x, y, e, policy, order))
    _same(pooled, serial)


@pytest.mark.parametrize("order", ["sorted", "unsorted"])
def test_cut_results_are_the_reference_roads(order):
    x, y, e = _data(FLOAT, order, seed=4)
    policy = "omit"
    got = _jitted(x, y, e, policy, order)
    eps = np.finfo(FLOAT).eps
    # the reference road of every statistic in one program, compiled as users compile it
    # (its ~1.3M padded slots a statistic are most of this test's time in the suite's quick
    # build), with the eager call's capacity: the largest bin, rounded up to a power of two
    cap = bin_capacity(x, e)

    def reference(x, y):
        return {
            s: binned_statistic(x, y, s, e, nan_policy=policy, method="reference", capacity=cap,
                                q=0.3 if s == "quantile" else None).statistic
            for s in STATS
        }  # fmt: skip

    refs = run_fully_optimised(reference, jnp.asarray(x), jnp.asarray(y))
    for s in STATS:
        ref = np.asarray(refs[s])
        if s in READ:
            np.testing.assert_array_equal(got[s], ref, err_msg=s)
        else:
            # (sums of ~13000 points a bin in another order: a few ulps times sqrt(n) apart,
            # as the one-thread kernel is; skew/kurt near 0 absolutely)
            t = 64 * eps * np.sqrt(N / NB)
            np.testing.assert_allclose(got[s], ref, rtol=t, atol=t, err_msg=s)


def test_edges_without_the_proven_lookup(monkeypatch):
    # the labels resolved once into an array (in pieces), then every pass reads them
    x, y, e = _data(FLOAT, "unsorted", edges="clustered")
    x[5:2000] = RNG_CLUSTER.uniform(0.0, 4e-7, 1995).astype(FLOAT)  # the clustered bins hold points
    pooled, serial = _both(monkeypatch, lambda: _jitted(x, y, e, "propagate", "unsorted"))
    _same(pooled, serial)
    assert np.asarray(pooled["count"])[:, :3].min() > 0


def test_given_labels(monkeypatch):
    rng = np.random.default_rng(8)
    y = rng.normal(size=(N, 2)).astype(FLOAT)
    y[rng.choice(N, 30, replace=False), 1] = np.nan
    label = rng.integers(-2, 300, N)  # -2, -1 and 257.. in no bin of 257
    label[label == 100] = 101  # an empty bin
    stats = ("count", "mean", "std", "min", "max", "first", "last", "median", "quantile(0.75)")

    def run(omit):
        request = Request("reduce_labels", "bins", stats, omit=omit, method="native")
        out = reduce_labels(jnp.asarray(y), jnp.asarray(label), 257, request)
        return {s: np.asarray(v) for s, v in out.items()}

    for omit in (False, True):
        pooled, serial = _both(monkeypatch, lambda omit=omit: run(omit))
        _same(pooled, serial)
        ref = reduce_labels(
            y, label, 257, Request("reduce_labels", "bins", stats, omit=omit, method="reference")
        )
        for s in ("count", "min", "max", "first", "last", "median", "quantile(0.75)"):
            np.testing.assert_array_equal(pooled[s], np.asarray(ref[s]), err_msg=s)


@pytest.mark.parametrize("n", [N, 5000])
def test_vmap_batches(n, monkeypatch):
    # long items (each cut into pieces of points) and many short ones (pieces of items)
    rng = np.random.default_rng(9)
    b = 3 if n == N else 60
    x = rng.uniform(0.0, 10.0, n).astype(FLOAT)
    ys = rng.normal(size=(b, n)).astype(FLOAT)
    ys[0, :7] = np.nan
    e = np.linspace(0.0, 10.0, NB + 1).astype(FLOAT)
    xj = jnp.asarray(x)

    def run():
        def f(y):
            return {
                s: binned_statistic(xj, y, s, e, nan_policy="omit").statistic
                for s in ("mean", "std", "max", "median")
            }

        return {s: np.asarray(v) for s, v in jax.jit(jax.vmap(f))(jnp.asarray(ys)).items()}

    pooled, serial = _both(monkeypatch, run)
    _same(pooled, serial)
    # each item as a call of its own
    one = jax.jit(lambda y: binned_statistic(xj, y, "median", e, nan_policy="omit").statistic)
    for i in (0, b - 1):
        np.testing.assert_array_equal(pooled["median"][i], np.asarray(one(ys[i])))


@pytest.mark.parametrize("policy", ["propagate", "omit"])
def test_recorded_labels_give_the_bits_of_given_labels(policy):
    # x resolved in the kernel: one channel's moments record every point's label in the
    # first pass (2 bytes, bins.cc) and read the record in the second; two channels and the
    # medians find the labels again from x. Given those labels instead (the kernel's label
    # road, which reads them as given in every pass), each statistic has the same bits
    x, y, e = _data(FLOAT, "unsorted")
    # (the median with NaN kept: binned_statistic ranks NaN last as SciPy, the label road
    # answers NaN; left out, both are the values' median)
    stats = MOMENTS + (("median",) if policy == "omit" else ())

    def by_x(x, v):
        return {s: binned_statistic(x, v, s, e, nan_policy=policy).statistic for s in stats}

    label = binned_statistic(x, None, "count", e).binnumber - 1  # -1, NB: in no bin
    request = Request("reduce_labels", "bins", stats, omit=policy == "omit", method="native")
    for v in (y, y[0]):
        got = jax.jit(by_x)(jnp.asarray(x), jnp.asarray(v))
        vv = jnp.asarray(v.T if v.ndim == 2 else v[:, None])
        given = reduce_labels(vv, jnp.asarray(label), NB, request)
        for s in stats:
            want = np.asarray(given[s]).T.reshape(np.shape(got[s]))
            np.testing.assert_array_equal(np.asarray(got[s]), want, err_msg=s)
