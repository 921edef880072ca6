"""A native call's first trace (issue 27: a first call costs the kernel, not the pure road).

In a process with only CPU backends every native call is emitted alone: the pure-JAX road
beside it (``lax.platform_dependent``'s other-platform branch, and the derivative) is not
traced, unless the call is differentiated. ``jaxsubset._native.portable_lowering()`` (and
``JAXSUBSET_NATIVE_PORTABLE=1`` for a whole process) keeps the pure road as the branch of
every other platform, so a program traced here and lowered for a GPU holds no custom call.
Here: which road is traced (counted where a native call's pure road is entered), that the
results are bit for bit the same either way, and the GPU lowering under the switch.
"""

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
import jaxsubset._native
from jaxsubset import _bin_numbers, _binned_roads
from jaxsubset._native import _api
from references import FLOAT


pytestmark = pytest.mark.skipif(
    not jaxsubset._native.available(), reason=f"native road: {jaxsubset._native.status()}"
)
RNG = np.random.default_rng(2727)
N = 500
TARGETS = (
    "jaxsubset_range_stats",
    "jaxsubset_sliding_stats",
    "jaxsubset_xwidth_stats",
    "jaxsubset_bin_stats",
    "jaxsubset_ewm_stats",
)


def _data():
    x = np.cumsum(RNG.exponential(1.0, N)).astype(FLOAT)
    y = RNG.normal(size=N).astype(FLOAT)
    y[[5, 77]] = np.nan
    xu = RNG.uniform(0.0, 1.0, N).astype(FLOAT)
    return jnp.asarray(x), jnp.asarray(y), jnp.asarray(xu)


X, Y, XU = _data()
EDGES = jnp.linspace(0.0, 1.0, 21, dtype=FLOAT)
XS = jnp.sort(XU)


def _workloads():
    """``{name: make}``: ``make()`` returns a NEW function of ``y`` (never traced before)."""
    r = jaxsubset.ranges.chunks(jnp.arange(N, dtype=jnp.float32), 10)
    return {
        "fixed mean": lambda: lambda y: jaxsubset.rolling_statistic(None, y, window=10),
        "fixed median": lambda: lambda y: jaxsubset.window_statistic(y, 10, "median"),
        "fixed std+max": lambda: lambda y: jaxsubset.window_statistic(y, 10, ("std", "max")),
        "x-width std": lambda: lambda y: jaxsubset.rolling_statistic(X, y, 5.0, "std"),
        "x-width median": lambda: (
            lambda y: jaxsubset.rolling_statistic(X, y, 5.0, "median", capacity=64)
        ),
        "bins sorted mean": lambda: (
            lambda y: jaxsubset.binned_statistic(XS, y, "mean", EDGES, x_sorted=True).statistic
        ),
        "bins unsorted std": lambda: (
            lambda y: jaxsubset.binned_statistic(XU, y, "std", EDGES).statistic
        ),
        "bins unsorted median": lambda: (
            lambda y: jaxsubset.binned_statistic(XU, y, "median", EDGES).statistic
        ),
        "chunks mean+std+max": lambda: (
            lambda y: jaxsubset.range_statistic(y, r, ("mean", "std", "max"))
        ),
        "ewm mean": lambda: lambda y: jaxsubset.ewm_statistic(X, y, 3.0, "mean"),
    }


WORKLOADS = _workloads()


@contextlib.contextmanager
def _count_pure(monkeypatch):
    """Counts the native calls whose pure-JAX road is traced (each enters ``_api.bypass``)."""
    seen = []
    real = _api.bypass

    @contextlib.contextmanager
    def counting():
        seen.append(1)
        with real():
            yield

    monkeypatch.setattr(_api, "bypass", counting)
    yield seen


def _targets(text: str) -> int:
    return sum(text.count(t) for t in TARGETS)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_a_cpu_only_first_call_traces_no_pure_road(name, monkeypatch):
    assert not _api.portable()  # this machine has only CPU backends
    f = WORKLOADS[name]()
    with _count_pure(monkeypatch) as seen:
        text = jax.jit(f).trace(Y).lower().as_text()
    assert _targets(text) >= 1
    assert "platform_index" not in str(jax.make_jaxpr(WORKLOADS[name]())(Y))
    assert seen == []


@pytest.mark.parametrize(
    "name", ["fixed mean", "x-width std", "bins unsorted std", "chunks mean+std+max"]
)
def test_the_derivative_traces_the_pure_road_and_equals_the_portable_form(name, monkeypatch):
    def total(f):
        return lambda y: sum(jnp.nansum(a) for a in jax.tree.leaves(f(y)))

    with _count_pure(monkeypatch) as seen:
        g = jax.jit(jax.grad(total(WORKLOADS[name]())))(Y)
    assert len(seen) >= 1
    with jaxsubset._native.portable_lowering():
        g2 = jax.jit(jax.grad(total(WORKLOADS[name]())))(Y)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(g2))


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_portable_lowering_keeps_the_pure_road_for_a_gpu_and_the_same_results(name, monkeypatch):
    direct = jax.jit(WORKLOADS[name]())(Y)
    eager = WORKLOADS[name]()(Y)
    with jaxsubset._native.portable_lowering(), _count_pure(monkeypatch) as seen:
        assert _api.portable()
        f = WORKLOADS[name]()
        # (the run-time checks are host callbacks, which lower for a backend of the process)
        with _checks_off(monkeypatch):
            cuda = jax.jit(f).trace(Y).lower(lowering_platforms=("cuda",)).as_text()
        assert "custom_call" not in cuda and _targets(cuda) == 0
        assert len(seen) >= 1
        both = jax.jit(WORKLOADS[name]())(Y)
        both_eager = WORKLOADS[name]()(Y)
    assert not _api.portable()
    for a, b in ((direct, both), (eager, both_eager)):
        for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
            np.testing.assert_array_equal(np.asarray(u), np.asarray(v))


@contextlib.contextmanager
def _checks_off(monkeypatch):
    with monkeypatch.context() as m:
        m.setenv("JAXSUBSET_CHECKS", "off")
        yield


@pytest.mark.parametrize("name", ["bins sorted mean", "bins unsorted std", "bins unsorted median"])
def test_bins_trace_no_xla_bin_numbers(name, monkeypatch):
    # the result's binnumber comes from a kernel call of its own (dropped where unread)
    calls = []
    real = _bin_numbers.binnumber
    monkeypatch.setattr(
        _binned_roads, "binnumber", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    jax.clear_caches()
    text = jax.jit(WORKLOADS[name]()).trace(Y).lower().as_text()
    assert calls == [] and "jaxsubset_bin_stats" in text


@pytest.mark.parametrize("order", ["sorted", "unsorted"])
def test_native_bin_numbers_equal_binnumber(order):
    edges = np.linspace(0.0, 10.0, 13).astype(FLOAT)
    x = RNG.uniform(-1.0, 11.0, 300).astype(FLOAT)
    x[:8] = edges[[0, 1, 2, 3, 12, 12, 11, 0]]  # on edges, the last (closed) one
    x[8:14] = [-0.0, np.nextafter(edges[-1], FLOAT(20)), np.nan, -np.nan, np.inf, -np.inf]
    x[14] = np.finfo(FLOAT).smallest_subnormal
    x[15] = edges[-1] + FLOAT(1e-4)  # above the last edge, on it to 3 decimals
    if order == "sorted":
        x = np.sort(x)
    xj, ej = jnp.asarray(x), jnp.asarray(edges)
    for dec in (0, 3, 9):
        dj = jnp.asarray(dec, jnp.int32)
        want = np.asarray(_bin_numbers.binnumber(xj, ej, dj, False))
        assert np.array_equal(np.asarray(_bin_numbers.binnumber(xj, ej, dj, True)), want)
        got = jaxsubset._native.native_binnumber(
            xj, ej, dj, lambda dj=dj: _bin_numbers.binnumber(xj, ej, dj, False)
        )
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
        xs = jnp.stack([xj, xj[::-1]])
        both = jax.vmap(lambda p, dj=dj: jaxsubset._native.native_binnumber(p, ej, dj, lambda: p))(
            xs
        )  # one call for the batch
        np.testing.assert_array_equal(np.asarray(both[1]), want[::-1])
    # the public result's bin numbers: eager, under jit, and the portable form
    y = jnp.asarray(RNG.normal(size=x.shape[0]).astype(FLOAT))
    xf = jnp.asarray(np.where(np.isnan(x), 0.5, x))

    def f(x, y):
        return jaxsubset.binned_statistic(x, y, "mean", ej).binnumber

    ref = np.asarray(_bin_numbers.binnumber(xf, ej, jnp.asarray(9, jnp.int32), False))
    eager = jaxsubset.binned_statistic(xf, y, "mean", edges).binnumber
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(xf, y)), np.asarray(eager))
    with jaxsubset._native.portable_lowering():
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(xf, y)), np.asarray(eager))
    assert ref.shape == np.asarray(eager).shape


def _spread_edges():
    """Edge sets whose bins the kernel finds without a per-point search only over the keys'
    span (log-spaced, over 12 orders of magnitude, mixed signs, infinite ends, subnormals),
    and one it cannot prove either way (edges clustered within a cell: the verified walk)."""
    big = 1e30 if FLOAT == np.float64 else 1e18
    tiny = float(np.finfo(FLOAT).smallest_subnormal)
    return {
        "log": np.logspace(-6, 6, 41),
        "log, both signs": np.r_[-np.logspace(3, -3, 20), 0.0, np.logspace(-3, 3, 20)],
        "infinite ends": np.r_[-np.inf, np.logspace(-3, 3, 15), np.inf],
        "subnormal to huge": np.r_[0.0, tiny, 64 * tiny, 1e-30, 1e-10, 1.0, big],
        "clustered": np.r_[0.0, 1.0, 1.0 + 1e-6, 1.0 + 2e-6, 1.0 + 3e-6, 2.0, big],
    }


@pytest.mark.parametrize("name", list(_spread_edges()))
def test_native_bin_numbers_over_spread_edges(name):
    edges = _spread_edges()[name].astype(FLOAT)
    assert (np.diff(edges) > 0).all()
    fin = edges[np.isfinite(edges)]
    below = np.nextafter(edges, FLOAT(-np.inf))
    x = np.r_[edges, below, np.nextafter(edges, FLOAT(np.inf)), -0.0, np.nan, np.inf, -np.inf]
    # a spread of values over the edges' orders of magnitude, both signs
    mag = 10.0 ** RNG.uniform(-8, 8, 400)
    x = np.r_[x, mag * RNG.choice([-1.0, 1.0], 400), RNG.uniform(fin[0], fin[-1], 100)]
    x = x[np.isfinite(x) | np.isnan(x) | np.isin(x, edges)].astype(FLOAT)
    xj, ej, dj = jnp.asarray(x), jnp.asarray(edges), jnp.asarray(9, jnp.int32)
    want = np.asarray(_bin_numbers.binnumber(xj, ej, dj, False))
    got = jaxsubset._native.native_binnumber(
        xj, ej, dj, lambda: _bin_numbers.binnumber(xj, ej, dj, False)
    )
    np.testing.assert_array_equal(np.asarray(got), want)
    # every bin's points: the kernel's counts against NumPy's digitize of the same points
    # (less the points just above the last edge, which SciPy's rounding rule moves into it)
    x = x[(x <= edges[-1]) | (x > edges[-1] + abs(edges[-1]) * 1e-6)]  # (and no NaN)
    xj = jnp.asarray(x)
    inside = (x >= edges[0]) & (x <= edges[-1])
    counts = np.bincount(np.clip(np.digitize(x[inside], edges) - 1, 0, len(edges) - 2),
                         minlength=len(edges) - 1)  # fmt: skip
    res = jaxsubset.binned_statistic(xj, jnp.ones_like(xj), "count", edges)
    np.testing.assert_array_equal(np.asarray(res.statistic), counts)


def test_the_environment_switch(monkeypatch):
    monkeypatch.setenv("JAXSUBSET_NATIVE_PORTABLE", "1")
    assert _api.portable()
    monkeypatch.setenv("JAXSUBSET_NATIVE_PORTABLE", "0")
    assert not _api.portable()
