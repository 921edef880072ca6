"""range_statistic against NumPy loops."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

import jaxsubset
from checks import compile_once
from jaxsubset import binned_statistic, range_statistic
from references import FLOAT, X64, range_oracle


BINNED = ["mean", "std", "median", "count", "sum", "min", "max"]
RANGE_STATS = ["count", "sum", "mean", "var", "std", "min", "max", "median"]
RNG = np.random.default_rng(20261129)
X = RNG.uniform(-3.0, 7.0, 700)
Y = RNG.normal(3.0, 2.0, 700)
EDGES = np.array([-2.0, -0.5, 0.0, 1.0, 1.5, 4.0, 6.5])


def _same(got, want, rtol=1e-12):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    # 32-bit mode computes in float32: a few ulps per term of the sums
    atol = 0 if X64 else 2e-5 * max(float(np.nanmax(np.abs(want), initial=1.0)), 1.0)
    rtol = rtol if X64 else max(rtol, 5e-5)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def _check(x, values, statistic, bins, rng=None, rtol=1e-12, **kw):
    got = binned_statistic(x, values, statistic, bins, rng, **kw)
    want = scipy.stats.binned_statistic(np.asarray(x), np.asarray(values), statistic, bins, rng)
    _same(got.statistic, want.statistic, rtol)
    np.testing.assert_array_equal(np.asarray(got.bin_edges), want.bin_edges)
    np.testing.assert_array_equal(np.asarray(got.binnumber), want.binnumber)
    return got


# ---------------------------------------------------------------------------- range_statistic
N = 3000
XS = np.sort(RNG.uniform(0.0, 1000.0, N))
YS = RNG.normal(3.0, 2.0, (N, 2)).astype(FLOAT)


def _reference(y, start, count, statistic, ddof=0):
    """``references.range_oracle`` in the ranges' batch shape: ``start.shape + y.shape[1:]``."""
    flat = range_oracle(y, np.ravel(start), np.ravel(count), statistic, ddof)
    return flat.reshape(np.shape(start) + y.shape[1:])


RANGE_KINDS = {
    "chunks": lambda: jaxsubset.ranges.chunks(XS, 7),
    "chunks_size": lambda: jaxsubset.ranges.chunks(XS, size=64),
    "sliding": lambda: jaxsubset.ranges.sliding(XS, 50, step=3),
    "rolling": lambda: jaxsubset.ranges.rolling(XS, 20.0),
    "bins": lambda: jaxsubset.ranges.bins(XS, np.linspace(-50.0, 1000.0, 12)),
    "select": lambda: jaxsubset.ranges.select(
        XS, np.array([[5.0, 900.0]]), np.array([[6.0, 990.0]])
    ),
}


@pytest.mark.parametrize("kind", list(RANGE_KINDS))
def test_range_statistic_matches_numpy(kind):
    r = RANGE_KINDS[kind]()
    out = range_statistic(YS, r, tuple(RANGE_STATS))
    for s in RANGE_STATS:
        _same(out[s], _reference(YS, r.start, r.count, s), 1e-12)
    _same(
        range_statistic(YS[:, 0], r, "std", ddof=1),
        _reference(YS[:, :1], r.start, r.count, "std", 1)[..., 0],
    )


@pytest.mark.parametrize("kind", ["chunks", "rolling", "bins"])
def test_range_statistic_large_offset_keeps_digits(kind):
    r = RANGE_KINDS[kind]()
    y = ((1e8 if X64 else 1e3) + RNG.normal(0.0, 1.0, N)).astype(FLOAT)
    for s, rtol in (("mean", 1e-12), ("var", 1e-9), ("std", 1e-9), ("sum", 1e-12)):
        want = _reference(y[:, None], r.start, r.count, s)[..., 0]
        _same(range_statistic(y, r, s), want, rtol)


def test_range_statistic_trend_and_float32():
    r = RANGE_KINDS["chunks_size"]()
    y = (np.linspace(0.0, 50.0, N) + RNG.normal(0.0, 0.5, N)).astype(FLOAT)
    for s in ("mean", "var", "min", "max"):
        _same(range_statistic(y, r, s), _reference(y[:, None], r.start, r.count, s)[..., 0], 1e-10)
    y32 = y.astype(np.float32)
    out = range_statistic(y32, r, RANGE_STATS)
    for s in RANGE_STATS:
        got = out[s]
        assert got.dtype == (jnp.zeros((), int).dtype if s == "count" else jnp.float32)
        want = _reference(y32[:, None].astype(float), r.start, r.count, s)[..., 0]
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_range_statistic_nonfinite_stays_in_its_range():
    r = jaxsubset.ranges.chunks(XS, 5)
    y = YS[:, 0].copy()
    y[10], y[700], y[1300], y[1301], y[2500] = np.nan, np.inf, np.inf, -np.inf, -np.inf
    for s in ("sum", "mean", "var", "min", "max", "median"):
        _same(range_statistic(y, r, s), _reference(y[:, None], r.start, r.count, s)[..., 0])


@pytest.mark.parametrize("order", ["sorted", "reversed", "overlapping"])
def test_range_statistic_sorted_reversed_and_overlapping_ranges(order):
    # the same ranges in order, reversed, or overlapping their neighbours, under jit: all
    # equal NumPy, with a NaN and an inf inside, empty ranges and ranges shorter than a block
    y = YS[:, 0].copy()
    y[[17, 1400]] = [np.nan, np.inf]
    bounds = np.array([0, 3, 3, 40, 900, 901, 1500, 2200, 2999, 3000])
    start, stop = bounds[:-1], bounds[1:]
    if order == "reversed":
        start, stop = start[::-1], stop[::-1]
    elif order == "overlapping":
        stop = np.minimum(stop + 50, N)
    names = ("sum", "mean", "var", "std", "min", "max")
    fn = jax.jit(lambda y, a, b: range_statistic(y, jaxsubset.Ranges(a, b - a), names, ddof=1))
    out = fn(y, start, stop)
    for s in names:
        _same(out[s], _reference(y[:, None], start, stop - start, s, ddof=1)[..., 0])


def test_range_statistic_empty_ranges():
    r = jaxsubset.ranges.isolate(XS, np.array([5, 2999, 3000]), np.array([5, 2000, 3000]))
    out = range_statistic(YS[:, 0], r, tuple(RANGE_STATS))
    assert out["count"].tolist() == [0, 0, 0]
    assert out["sum"].tolist() == [0.0, 0.0, 0.0]
    for s in ("mean", "var", "std", "min", "max", "median"):
        assert np.isnan(np.asarray(out[s])).all()


def _range(y, lo, hi):
    r = jaxsubset.ranges.select(XS, lo, hi)
    return range_statistic(y, r, ("mean", "std", "max", "median"), capacity=64)


def test_range_statistic_jit_traced_ranges_no_recompile_and_median_overflow(monkeypatch):
    # the pure-JAX roads' capacity rule (NaN past it; the native road follows it too:
    # test_native.py)
    monkeypatch.setenv("JAXSUBSET_NATIVE", "off")
    cases = []
    for k in range(3):
        lo = np.array([10.0, 300.0, 990.0]) + k
        cases.append((YS * (k + 1), lo, lo + np.array([5.0, 12.0, 3.0]) * (k + 1)))
    for (y, lo, hi), out in zip(cases, compile_once(_range, cases), strict=True):
        r = jaxsubset.ranges.select(XS, lo, hi)
        for s in ("mean", "std", "max", "median"):
            want = _reference(y, r.start, r.count, s)
            if s == "median":
                want[np.asarray(r.count) > 64] = np.nan
            _same(out[s], want, 1e-11)
    with pytest.raises(TypeError, match="capacity"):
        jax.jit(lambda lo: range_statistic(YS, jaxsubset.ranges.select(XS, lo, lo + 5), "median"))(
            1.0
        )


def test_range_statistic_vmap_and_grad_match_subsets():
    r = jaxsubset.ranges.rolling(XS, 15.0)
    ys = np.stack([YS[:, 0], YS[:, 1] ** 2])
    got = jax.jit(jax.vmap(lambda y: range_statistic(y, r, "var")))(ys)
    for i in range(2):
        _same(got[i], _reference(ys[i][:, None], r.start, r.count, "var")[..., 0], 1e-11)
    cap = jaxsubset.required_capacity(r.count)
    for s in ("mean", "std"):

        def ours(y, s=s):
            return jnp.sum(range_statistic(y, r, s))

        def padded(y, s=s):
            return jnp.sum(getattr(jaxsubset.gather(XS, y, r, capacity=cap), s)())

        want = np.asarray(jax.jit(jax.grad(padded))(YS[:, 0]))
        got = np.asarray(jax.jit(jax.grad(ours))(YS[:, 0]))
        ok = np.isfinite(want)  # sqrt at a one-point window: the padded road gives NaN there
        assert ok.mean() > 0.9
        np.testing.assert_allclose(
            got[ok], want[ok], rtol=1e-8 if X64 else 1e-4, atol=1e-12 if X64 else 1e-5
        )


def test_range_statistic_errors():
    r = jaxsubset.ranges.chunks(XS, 3)
    with pytest.raises(ValueError, match="`statistic` must be one of"):
        range_statistic(YS, r, "mode")
    with pytest.raises(TypeError, match="Ranges"):
        range_statistic(YS, (0, 3), "mean")
    with pytest.raises(ValueError, match="`ddof` must be a >= 0 int, got -1"):
        range_statistic(YS, r, "var", ddof=-1)
    with pytest.raises(TypeError, match="real numeric"):
        range_statistic(np.array(["a", "b"]), r, "mean")


def test_benchmark_runs_quick_and_reports_targets():
    """bench_stats.py end to end at a small N (correctness of the benchmark, not speed)."""
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        import bench_stats

        out = bench_stats.main(["--quick", "--stats", "mean,median"])
        md = bench_stats.markdown(out)
    finally:
        sys.path.remove(str(bench))
    # one Markdown row per jaxsubset cell (4 binned, 1 rolling: no rolling median), per target
    rows = [ln for ln in md.splitlines() if ln.startswith("| ") and "---" not in ln]
    assert len(rows) == 3 + 4 + 1 + len(out["targets"])
    assert md.startswith("malloc: glibc.malloc.hugetlb=")
    assert set(out["results"]) == {"binned", "rolling"}
    ours = [r for r in out["results"]["binned"] if r["method"].startswith("jaxsubset binned")]
    assert {(r["order"], r["stat"]) for r in ours} == {
        (o, s) for o in ("sorted", "shuffled") for s in ("mean", "median")
    }
    assert all(r["max_rel_err"] < 1e-12 for r in ours)
    assert all(t["status"] in ("MET", "MISSED") for t in out["targets"])


def test_empty_data_everywhere():
    e = np.zeros(0)
    for statistic in ("mean", "count", "median"):
        got = binned_statistic(e, e, statistic, 3, (0.0, 1.0)).statistic
        want = {"count": [0.0] * 3}.get(statistic, [np.nan] * 3)
        np.testing.assert_array_equal(np.asarray(got), want)
    out = range_statistic(e, jaxsubset.ranges.chunks(e, 2), ("sum", "max", "median"))
    assert out["sum"].tolist() == [0.0, 0.0]
    assert np.isnan(np.asarray(out["max"])).all() and np.isnan(np.asarray(out["median"])).all()
    assert jaxsubset.rolling_statistic(e, e, 1.0, "mean").shape == (0,)
