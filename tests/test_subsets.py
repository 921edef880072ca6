"""Reductions, apply, scatter, grad, vmap, pack and recompilation of the Subsets pytree."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import jaxsubset
from checks import compile_once
from compilations import compilations
from references import FLOAT, tol


def _rt(r: float) -> float:
    """The relative tolerance for float64 results, loosened for float32 (32-bit mode)."""
    return r if jax.config.jax_enable_x64 else max(r, 5e-5)


def _at(a: float) -> float:
    """The absolute tolerance for float64 results, loosened for float32 (32-bit mode)."""
    return a if jax.config.jax_enable_x64 else max(a, 2e-5)


def reference_stats(y, bounds):
    """NumPy reductions over ``y[i0:i1]`` for each bound, with the library's empty conventions."""
    out = {k: [] for k in ("sum", "mean", "var", "std", "min", "max", "median", "argmin", "argmax")}
    for i0, i1 in bounds:
        seg = y[i0:i1]
        if seg.shape[0] == 0:
            nan = np.full(y.shape[1:], np.nan)
            for k in ("mean", "var", "std", "min", "max", "median"):
                out[k].append(nan)
            out["sum"].append(np.zeros(y.shape[1:]))
            out["argmin"].append(np.full(y.shape[1:], -1))
            out["argmax"].append(np.full(y.shape[1:], -1))
            continue
        out["sum"].append(seg.sum(0))
        out["mean"].append(seg.mean(0))
        out["var"].append(seg.var(0))
        out["std"].append(seg.std(0))
        out["min"].append(seg.min(0))
        out["max"].append(seg.max(0))
        out["median"].append(np.median(seg, 0))
        out["argmin"].append(i0 + seg.argmin(0))
        out["argmax"].append(i0 + seg.argmax(0))
    return {k: np.array(v) for k, v in out.items()}


REDUCTIONS = ("sum", "mean", "var", "std", "min", "max", "median", "argmin", "argmax")


@jax.jit
def _all_reductions(s):
    return {k: getattr(s, k)() for k in REDUCTIONS}


@pytest.mark.parametrize("channels", [(), (2,)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reductions_match_numpy(channels, dtype):
    rng = np.random.default_rng(1)
    n = 97
    x = np.arange(n, dtype=dtype)
    y = rng.normal(size=(n, *channels)).astype(dtype)
    i0 = np.array([0, 10, 50, 96, 40, 3])
    i1 = np.array([10, 11, 80, 97, 40, 9])  # includes a single point and an empty subset
    s = jaxsubset.isolate(x, y, i0, i1, capacity=32)
    ref = reference_stats(y, zip(i0, i1, strict=True))
    tol = 1e-5 if dtype == np.float32 or not jax.config.jax_enable_x64 else 1e-12
    for got_all in (_all_reductions(s), {k: getattr(s, k)() for k in REDUCTIONS}):
        for k in REDUCTIONS:
            got = np.asarray(got_all[k])
            assert got.shape == (6, *channels), k
            np.testing.assert_allclose(got, ref[k], rtol=tol, atol=tol, err_msg=k)


def test_var_ddof_and_large_offset_precision():
    rng = np.random.default_rng(2)
    # float32 (32-bit mode) holds a 1e3 offset with the digits of the noise, float64 1e8
    off = 1e8 if jax.config.jax_enable_x64 else 1e3
    y = (off + rng.normal(size=1000)).astype(np.float64 if off > 1e3 else np.float32)
    x = np.arange(1000.0)
    s = jaxsubset.chunks(x, y, 4)
    pieces = np.array_split(y, 4)
    np.testing.assert_allclose(
        np.asarray(s.var(ddof=1)), [p.var(ddof=1) for p in pieces], rtol=_rt(1e-9)
    )
    np.testing.assert_allclose(np.asarray(s.std()), [p.std() for p in pieces], rtol=_rt(1e-9))
    single = jaxsubset.isolate(x, y, 0, 1, capacity=2)
    assert np.isnan(float(single.var(ddof=1)))


def test_median_propagates_nan_and_handles_inf():
    x = np.arange(6.0)
    y = np.array([1.0, np.nan, 3.0, np.inf, 2.0, 5.0])
    s = jaxsubset.isolate(x, y, np.array([0, 2, 3]), np.array([3, 5, 4]), capacity=4)
    med = np.asarray(s.median())
    assert np.isnan(med[0])
    assert med[1] == 3.0 and med[2] == np.inf


def test_overflowed_subset_reduces_held_points_and_flags():
    x = np.arange(20.0)
    s = jaxsubset.isolate(x, x, 0, 20, capacity=5)
    assert bool(s.overflow) and s.count.tolist() == 20
    assert s.sum().tolist() == 10.0  # 0 + 1 + 2 + 3 + 4
    assert s.max().tolist() == 4.0


def test_grad_of_masked_reductions_matches_analytic():
    x = np.arange(10.0)
    y = np.random.default_rng(3).normal(size=10)

    def loss(y, stat):
        s = jaxsubset.isolate(x, y, 2, 6, capacity=8)
        return getattr(s, stat)()

    g = jax.grad(loss)(y, "sum")
    np.testing.assert_array_equal(np.asarray(g), (np.arange(10) >= 2) & (np.arange(10) < 6))
    g = jax.grad(loss)(y, "mean")
    np.testing.assert_allclose(
        np.asarray(g), np.where((np.arange(10) >= 2) & (np.arange(10) < 6), 0.25, 0.0)
    )
    g = jax.jit(jax.grad(loss, argnums=0), static_argnums=1)(y, "var")
    seg = y[2:6]
    expected = np.zeros(10)
    expected[2:6] = 2 * (seg - seg.mean()) / 4
    np.testing.assert_allclose(np.asarray(g), expected, rtol=_rt(1e-12), atol=_at(1e-12))
    g = jax.grad(loss)(y, "max")
    assert np.asarray(g).tolist() == list(np.eye(10)[2 + int(np.argmax(seg))])
    # An empty subset's NaN mean must not poison the gradient of the other subsets.
    g = jax.grad(
        lambda y: jnp.nansum(
            jaxsubset.isolate(x, y, np.array([0, 5]), np.array([2, 5]), capacity=4).mean()
        )
    )(y)
    assert np.isfinite(np.asarray(g)).all()


def test_apply_vmap_and_lax_map_agree_with_numpy_fit():
    rng = np.random.default_rng(4)
    x = np.linspace(0, 10, 103)
    y = 3 * x + 1 + rng.normal(scale=0.1, size=x.size)

    def fit(x, y, m):
        w = m.astype(x.dtype)
        n = w.sum()
        mx, my = (w * x).sum() / n, (w * y).sum() / n
        slope = (w * (x - mx) * (y - my)).sum() / (w * (x - mx) ** 2).sum()
        return {"slope": slope, "intercept": my - slope * mx}

    s = jaxsubset.chunks(x, y, 4)
    a = s.apply(fit)
    b = s.apply(fit, batch_size=3)
    c = jax.jit(lambda s: s.apply(fit, batch_size=2))(s)
    for k, idx in enumerate(np.array_split(np.arange(x.size), 4)):
        slope, intercept = np.polyfit(x[idx], y[idx], 1)
        for out in (a, b, c):
            np.testing.assert_allclose(float(out["slope"][k]), slope, rtol=_rt(1e-10))
            np.testing.assert_allclose(float(out["intercept"][k]), intercept, rtol=_rt(1e-9))


def test_apply_single_subset_and_2d_batch():
    x = np.arange(12.0)
    s = jaxsubset.isolate(x, x, 2, 5, capacity=4)
    assert s.apply(lambda x, y, m: jnp.sum(y * m)).tolist() == 9.0
    s2 = jaxsubset.isolate(
        x, x, np.array([[0, 2], [4, 6]]), np.array([[1, 4], [6, 12]]), capacity=8
    )
    out = s2.apply(lambda x, y, m: jnp.sum(y * m), batch_size=3)
    assert out.tolist() == [[0.0, 5.0], [9.0, 51.0]]


def test_scatter_mean_and_sum_against_numpy():
    x = np.arange(10.0)
    s = jaxsubset.sliding(x, x, 4, step=3)  # windows [0:4], [3:7], [6:10]
    ones = jnp.ones(s.y.shape)
    hits = np.zeros(10)
    for k in range(3):
        hits[3 * k : 3 * k + 4] += 1
    np.testing.assert_array_equal(np.asarray(s.scatter(ones, size=10, reduce="sum")), hits)
    np.testing.assert_array_equal(np.asarray(s.scatter(s.y * 2, size=10)), 2 * x)
    sparse = jaxsubset.isolate(x, x, np.array([1, 5]), np.array([3, 6]), capacity=4)
    out = np.asarray(jax.jit(lambda s: s.scatter(s.y, size=10))(sparse))
    expected = np.full(10, np.nan)
    expected[[1, 2, 5]] = [1.0, 2.0, 5.0]
    np.testing.assert_array_equal(out, expected)


def test_no_recompilation_when_only_traced_values_change():
    x = np.linspace(0, 10, 1000)
    y = np.sin(x)

    def analysis(x, y, lo, hi, i0, i1, width, edges, capacity=128):
        a = jaxsubset.select(x, y, lo, hi, capacity=capacity).mean()
        b = jaxsubset.isolate(x, y, i0, i1, capacity=capacity).std()
        c = jaxsubset.rolling(x, y, width, capacity=capacity).max()
        d = jaxsubset.bins(x, y, edges, capacity=capacity).sum()
        return a, b, c, d, jaxsubset.nearest(x, lo)

    rng = np.random.default_rng(5)
    cases = []
    for _ in range(5):
        lo = rng.uniform(0, 5, 3)
        i0 = rng.integers(-50, 500, 3)
        edges = np.sort(rng.uniform(0, 10, 6))
        cases.append((x, y, lo, lo + 1.0, i0, i0 + 40, rng.uniform(0.1, 1), edges))
    # data of another value (same shape) reuses the compilation too
    cases.append((x + 1.0, y * 2, lo, lo + 1.0, i0, i0 + 40, 0.5, edges))
    compile_once(analysis, cases)


def test_vmap_over_datasets_equals_loop():
    rng = np.random.default_rng(6)
    xs = np.sort(rng.uniform(0, 10, (3, 200)), axis=1)
    ys = rng.normal(size=(3, 200))
    lo = np.array([1.0, 2.0, 3.0])

    def per_dataset(x, y, lo):
        return jaxsubset.select(x, y, lo, lo + 2.5, capacity=128).mean()

    batched = jax.jit(jax.vmap(per_dataset))(xs, ys, lo)
    for d in range(3):
        m = (xs[d] >= lo[d]) & (xs[d] < lo[d] + 2.5)
        np.testing.assert_allclose(float(batched[d]), ys[d][m].mean(), **tol())


def test_pack_serves_datasets_of_different_lengths_with_one_compilation():
    rng = np.random.default_rng(7)
    lengths = [50, 173, 9]
    data = [(np.sort(rng.uniform(0, 10, n)), rng.normal(size=(n, 2))) for n in lengths]
    x, y, n = jaxsubset.pack(data, length=256)
    assert x.shape == (3, 256) and y.shape == (3, 256, 2) and n.tolist() == lengths
    traces = []

    @jax.jit
    def analysis(x, y, n):
        traces.append(1)
        return {
            "chunks": jaxsubset.chunks(x, y, 4, length=n).mean(),
            "sel": jaxsubset.select(x, y, 2.0, 1e9, capacity=256, length=n).count,
            "iso": jaxsubset.isolate(x, y, -5, None, capacity=8, length=n).sum(),
            "near": jaxsubset.nearest(x, 1e9, length=n),
            "slide": jaxsubset.sliding(x, y, 8, step=4, length=n).count,
            "size": jaxsubset.chunks(x, y, size=60, length=n).count,
        }

    out = jax.vmap(analysis)(x, y, n)
    assert len(traces) == 1
    for d, (xd, yd) in enumerate(data):
        pieces = np.array_split(yd, 4)
        np.testing.assert_allclose(
            np.asarray(out["chunks"][d]), [p.mean(0) for p in pieces], **tol()
        )
        assert int(out["sel"][d]) == int((xd >= 2.0).sum())
        np.testing.assert_allclose(np.asarray(out["iso"][d]), yd[-5:].sum(0), **tol())
        assert int(out["near"][d]) == lengths[d] - 1
        n_windows = (lengths[d] - 8) // 4 + 1
        assert int((np.asarray(out["slide"][d]) == 8).sum()) == n_windows
        sizes = np.asarray(out["size"][d])
        assert sizes.sum() == lengths[d] and (sizes[sizes > 0][:-1] == 60).all()


# ------------------------------------------------------------------------------------ properties
_iso = jax.jit(lambda x, i0, i1: jaxsubset.isolate(x, x, i0, i1, capacity=16))
_sel = jax.jit(lambda x, lo, hi: jaxsubset.select(x, x, lo, hi, capacity=16))


@given(
    n=st.integers(1, 60),
    i0=st.integers(-80, 80) | st.none(),
    i1=st.integers(-80, 80) | st.none(),
)
def test_isolate_property_equals_slicing(n, i0, i1):
    x = np.arange(1, n + 1, dtype=np.float64)
    s = jaxsubset.isolate(x, x, i0, i1, capacity=16)
    ref = x[i0:i1]
    assert int(s.count) == ref.size
    held = min(ref.size, 16)
    np.testing.assert_array_equal(np.asarray(s.x)[:held], ref[:held])
    assert bool(s.overflow) == (ref.size > 16)
    if i0 is not None and i1 is not None:
        t = _iso(x, i0, i1)
        np.testing.assert_array_equal(np.asarray(t.x), np.asarray(s.x))


@given(
    n=st.integers(0, 60),
    lo=st.floats(-5, 70, allow_nan=False),
    span=st.floats(-5, 40, allow_nan=False),
    seed=st.integers(0, 3),
)
def test_select_property_equals_boolean_mask(n, lo, span, seed):
    x = np.sort(np.random.default_rng(seed).integers(0, 60, n)).astype(FLOAT)
    # traced Python floats are float32 in 32-bit mode: the reference compares the same values
    lo, hi = FLOAT(lo), FLOAT(lo + span)
    s = _sel(x, lo, hi)
    ref = x[(x >= lo) & (x < hi)]
    assert int(s.count) == ref.size
    held = min(ref.size, 16)
    np.testing.assert_array_equal(np.asarray(s.x)[:held], ref[:held])
    np.testing.assert_array_equal(np.asarray(s.mask), np.arange(16) < held)


def test_eager_reductions_are_one_program_each_and_equal_the_traced_ones():
    x = np.arange(40.0, dtype=FLOAT)
    y = np.stack([x**2, np.where(x % 7 == 3, np.nan, x)], axis=1).astype(FLOAT)
    s = jaxsubset.chunks(x, y, 5)
    with compilations() as seen:
        got = s.std(ddof=1, nan_policy="omit")
    assert seen == ["jit(_eager_reduction)"], seen  # one program, not one per operation
    with compilations() as seen:
        again = s.std(ddof=1, nan_policy="omit")
        q = s.quantile(0.25)
    assert seen.of("_eager_reduction") == 1, seen  # only the quantile's program is new
    want = np.stack([np.nanstd(c, axis=0, ddof=1) for c in np.split(y, 5)])
    np.testing.assert_allclose(np.asarray(got), want, **tol())
    np.testing.assert_array_equal(np.asarray(again), np.asarray(got))
    np.testing.assert_allclose(
        np.asarray(q)[:, 0], np.quantile(np.split(y[:, 0], 5), 0.25, axis=1), **tol()
    )
    # the same methods inside jit (traced fields: no nested program of their own)
    traced = jax.jit(lambda s: (s.std(ddof=1, nan_policy="omit"), s.quantile(0.25)))(s)
    np.testing.assert_allclose(np.asarray(traced[0]), np.asarray(got), **tol())
    np.testing.assert_allclose(np.asarray(traced[1]), np.asarray(q), **tol())
    with pytest.raises(ValueError, match="nan_policy"):
        s.mean(nan_policy="bogus")  # argument errors unchanged through the one program
    with pytest.raises(ValueError, match="NaN"):
        s.mean(nan_policy="raise")  # still checked eagerly


def test_sums_agree_across_programs_and_stay_within_rounding_of_an_exact_sum():
    """``Subsets`` sums are XLA's own reductions (a fixed pairwise order cost 1.3-22x
    ``jnp.sum``: BENCHMARKS.md, issue 29). "The same bits" now means the same subset in the
    same program; in programs of other shapes (7 or 64 subsets, eager or under ``jit``, beside
    other reductions) the results agree within the rounding of a sum, each within a few ulps
    per term of an exact sum; a constant subset's variance is exactly 0 in every program."""
    import math

    rng = np.random.default_rng(17)
    n = 3000
    x = np.arange(n, dtype=np.float64)
    y = (1e3 + rng.standard_normal(n) * np.exp(rng.uniform(-8, 8, n))).astype(FLOAT)
    y[2000:2300] = FLOAT(0.1)  # a constant subset
    lo = np.concatenate([np.array([0.0, 2000.0, 17.0]), rng.uniform(0, n - 300, 61)])

    def stats(lo):
        s = jaxsubset.select(x, y, lo, lo + 300.0, capacity=512)
        return s.sum(), s.mean(), s.var()

    few = jax.jit(stats)(lo[:7])
    many = jax.jit(stats)(lo)
    beside = jax.jit(
        lambda lo: (stats(lo), jaxsubset.select(x, y, lo, lo + 9.0, capacity=16).std())
    )
    eager = stats(lo[:7])
    eps = np.finfo(FLOAT).eps
    for got in (few, many, beside(lo)[0], eager):
        assert float(got[2][1]) == 0.0  # the constant subset, in every program
        for a, b in zip(few, got, strict=True):
            np.testing.assert_allclose(np.asarray(b)[:7], np.asarray(a), rtol=64 * eps, atol=0)
    for k in range(7):  # against an exactly rounded sum of the same float values
        part = y[int(np.ceil(lo[k])) : int(np.ceil(lo[k] + 300.0))].astype(np.float64)
        exact = math.fsum(part)
        bound = 16 * eps * np.abs(part).sum()
        for got in (few, many, eager):
            assert abs(float(got[0][k]) - exact) <= bound, k
    # chunks under jit (a view of the data) take the mean about a value of each subset: a
    # constant one's mean is exactly its value there
    mean = jax.jit(lambda x, y: jaxsubset.chunks(x, y, 30).mean())(x, y)
    assert float(mean[21]) == FLOAT(0.1)  # y[2100:2200]
    # empty and integer subsets: 0, and integer sums in the float dtype (never wrapped)
    s = jaxsubset.isolate(np.arange(4.0), np.array([1, 2, 3, 4]), 1, 1, capacity=2)
    assert float(s.sum()) == 0.0 and np.isnan(float(s.mean()))
    big = np.full(4, np.iinfo(np.int32).max, np.int32)
    s = jaxsubset.chunks(np.arange(4.0), big, 1)
    assert float(s.sum()[0]) == pytest.approx(4.0 * np.iinfo(np.int32).max, rel=1e-6)
