"""``ewm_statistic`` on the native CPU road (``csrc/ewm.cc``, one serial pass).

Equal to the pure-JAX scan (``JAXSUBSET_NATIVE=off``) within a few ulps and to independent
oracles (pandas' ``ewm``, a direct O(N^2) weighted sum) on irregular times, NaN gaps, long
gaps whose weights underflow, float32 far from zero, constant series (exactly 0), infinite
readings, ``min_periods``, ``bias``, channels, integer/float16 input and datetime axes;
eager, under ``jit``, ``vmap`` (one kernel call) and ``grad`` (the pure road's); a GPU
lowering names no custom call.
"""

import contextlib
import os

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import jaxsubset
import jaxsubset._native
from references import FLOAT, X64, needs_x64


pytestmark = pytest.mark.skipif(
    not jaxsubset._native.available(), reason=f"native road: {jaxsubset._native.status()}"
)
TARGET = "jaxsubset_ewm_stats"
STATS = ("mean", "var", "std")
EPS = float(np.finfo(FLOAT).eps)
RNG = np.random.default_rng(2715)
N = 300


@contextlib.contextmanager
def pure_road():
    """Inside: the native road is off (``JAXSUBSET_NATIVE=off`` is read at every call)."""
    old = os.environ.get("JAXSUBSET_NATIVE")
    os.environ["JAXSUBSET_NATIVE"] = "off"
    try:
        yield
    finally:
        if old is None:
            del os.environ["JAXSUBSET_NATIVE"]
        else:
            os.environ["JAXSUBSET_NATIVE"] = old


def both(x, y, h, stats=STATS, **kw):
    """The native road's results and the pure road's, as NumPy arrays."""
    nat = jaxsubset.ewm_statistic(x, y, h, stats, **kw)
    with pure_road():
        ref = jaxsubset.ewm_statistic(x, y, h, stats, **kw)
    return {s: np.asarray(nat[s]) for s in stats}, {s: np.asarray(ref[s]) for s in stats}


def assert_same(nat, ref, **tol):
    """Equal NaN, equal infinities, and values within a few ulps of the statistic's scale
    (its largest finite value: a mean near zero of values near 50 has 50's ulps)."""
    for s in nat:
        assert nat[s].dtype == ref[s].dtype, s
        np.testing.assert_array_equal(np.isnan(nat[s]), np.isnan(ref[s]), err_msg=s)
        r = np.asarray(ref[s], np.float64)
        fin = np.isfinite(r)
        scale = np.abs(r[fin]).max() if fin.any() else 1.0
        eps = float(np.finfo(nat[s].dtype).eps)
        close = tol or dict(rtol=64 * eps, atol=16 * eps * scale)
        np.testing.assert_allclose(nat[s], ref[s], err_msg=s, **close)


def oracle(x, y, h, bias=False, min_periods=0):
    """Direct weighted sums in float64 (finite readings only; NaN and inf are missing)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    out = {s: np.full(len(y), np.nan) for s in STATS}
    for i in range(len(y)):
        ok = np.isfinite(y[: i + 1])
        if ok.sum() < max(min_periods, 1):
            continue
        w = 0.5 ** ((x[i] - x[: i + 1][ok]) / h)
        v = y[: i + 1][ok]
        mean = np.sum(w * v) / np.sum(w)
        var = np.sum(w * (v - mean) ** 2) / np.sum(w)
        if not bias:
            big = np.sum(w) ** 2
            with np.errstate(invalid="ignore", divide="ignore"):  # (undefined after underflow)
                var = var * big / (big - np.sum(w * w)) if ok.sum() > 1 else np.nan
        out["mean"][i], out["var"][i], out["std"][i] = mean, var, np.sqrt(var)
    return out


def _case(name):
    x = np.cumsum(RNG.exponential(1.0, N))
    y = RNG.normal(2.0, 3.0, N)
    if name == "nan gaps":
        y[[0, 1, 40, 41, 42, 200]] = np.nan
    elif name == "long gaps":  # 0.5 ** (gap / h) underflows in both dtypes after these
        x[100:] += 5000.0
        x[200:] += 1e5
        y[99] = np.nan
    elif name == "far from zero":
        y = 1e4 + 1e-3 * RNG.normal(size=N)
    elif name == "constant":
        y = np.full(N, 1e6 + 0.1)
        y[[10, 11]] = np.nan
    elif name == "inf":
        y[50], y[120], y[121] = np.inf, -np.inf, np.nan
    return x.astype(FLOAT), y.astype(FLOAT)


CASES = ("irregular", "nan gaps", "long gaps", "far from zero", "constant", "inf")


@pytest.mark.parametrize("policy", ["omit", "propagate"])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", CASES)
def test_equals_the_pure_road(case, bias, policy):
    x, y = _case(case)
    for mp in (0, 5):
        nat, ref = both(x, y, 3.0, bias=bias, nan_policy=policy, min_periods=mp)
        assert_same(nat, ref)
        if mp:
            assert np.isnan(nat["mean"][:4]).all()


@pytest.mark.parametrize("case", CASES)
def test_equals_direct_weighted_sums_and_pandas(case):
    x, y = _case(case)
    x64 = x.astype(np.float64)
    for bias in (False, True):
        got = jaxsubset.ewm_statistic(x, y, 3.0, STATS, bias=bias)
        want = oracle(x64, np.where(np.isinf(y), np.nan, y), 3.0, bias=bias)
        bad = np.maximum.accumulate(np.isinf(y))  # from an infinity on: inf mean, NaN var
        for s in STATS:
            g = np.asarray(got[s], np.float64)
            if s == "mean":
                assert np.isinf(g[bad]).all() if not (y == -np.inf).any() else True
            else:
                assert np.isnan(g[bad]).all()
            tol = dict(rtol=1e-9, atol=1e-9) if X64 else dict(rtol=3e-4, atol=3e-4)
            if case == "far from zero" and s != "mean":
                tol = dict(rtol=1e-6, atol=1e-12) if X64 else dict(rtol=2e-2, atol=1e-9)
            known = ~bad & np.isfinite(want[s])  # (float64 sums cannot take the long gaps)
            np.testing.assert_allclose(g[known], want[s][known], err_msg=s, **tol)
    # pandas: the mean with times (infinities as NaN)
    t = pd.to_datetime(np.round(x64 * 1e9).astype(np.int64))
    yp = pd.Series(np.where(np.isinf(y), np.nan, y).astype(np.float64))
    pdm = yp.ewm(halflife=pd.Timedelta(3, "s"), times=t).mean().to_numpy()
    got = np.asarray(jaxsubset.ewm_statistic(x, y, 3.0, "mean"), np.float64)
    ok = ~np.maximum.accumulate(np.isinf(y))
    tol = dict(rtol=1e-9, atol=1e-9) if X64 else dict(rtol=3e-5, atol=3e-4)
    np.testing.assert_allclose(got[ok], pdm[ok], **tol)


def test_var_and_std_on_an_evenly_spaced_axis_equal_pandas():
    y = RNG.normal(5.0, 2.0, N).astype(FLOAT)
    y[[3, 70]] = np.nan
    for bias in (False, True):
        got = jaxsubset.ewm_statistic(np.arange(N, dtype=FLOAT), y, 4.0, STATS, bias=bias)
        s = pd.Series(y.astype(np.float64)).ewm(halflife=4.0)
        tol = dict(rtol=1e-9, atol=1e-10) if X64 else dict(rtol=2e-3, atol=1e-4)
        np.testing.assert_allclose(np.asarray(got["var"]), s.var(bias=bias), **tol)
        np.testing.assert_allclose(np.asarray(got["std"]), s.std(bias=bias), **tol)


@pytest.mark.parametrize("gap", [77, 211])
def test_the_roads_agree_right_after_a_long_gap(gap):
    """The first readings after a gap of 3e4 halflives (their unbiased variance the limit of
    a ratio of underflowed weights): both roads merge each reading onto the prefix before it,
    so they agree to a few ulps wherever the gap falls (a tree scan, merging two partials
    that each held part of the scale, was 4e-5 to 7e-5 off in float32 after these gaps)."""
    rng = np.random.default_rng(5)
    x = np.cumsum(rng.exponential(1.0, 300))
    x[gap:] += 1e5
    y = rng.normal(2.0, 3.0, 300)
    nat, ref = both(x.astype(FLOAT), y.astype(FLOAT), 3.0, bias=False)
    assert_same(nat, ref)


def test_numerics_constant_long_gaps_far_from_zero():
    x, y = _case("constant")
    out = jaxsubset.ewm_statistic(x, y, 2.0, STATS)
    assert (np.asarray(out["var"])[2:] == 0).all() and (np.asarray(out["std"])[2:] == 0).all()
    assert (np.asarray(out["mean"]) == FLOAT(1e6 + 0.1)).all()
    # after a gap of 1e5 halflives: a number (the limit), never NaN
    x, y = _case("long gaps")
    var = np.asarray(jaxsubset.ewm_statistic(x, y, 3.0, "var"))
    assert np.isfinite(var[1:]).all()
    # float32 values far from zero keep the digits of their spread
    x, y = _case("far from zero")
    got = np.asarray(jaxsubset.ewm_statistic(x, y, 3.0, "std"), np.float64)
    want = oracle(x.astype(np.float64), y.astype(np.float64), 3.0)["std"]
    np.testing.assert_allclose(got[5:], want[5:], rtol=1e-6 if X64 else 2e-2)


@pytest.mark.parametrize("dtype", ["int32", "float16", "bfloat16", "float32"])
def test_other_dtypes_and_channels_follow_the_pure_road(dtype):
    x = np.cumsum(RNG.exponential(1.0, N)).astype(FLOAT)
    y = RNG.integers(-50, 50, (N, 2, 3)).astype(np.float64)
    yy = jnp.asarray(y, dtype)
    nat, ref = both(x, yy, 2.0)
    for s in STATS:
        assert nat[s].shape == (N, 2, 3) and nat[s].dtype == jnp.asarray(ref[s]).dtype
    if jnp.finfo(nat["mean"].dtype).bits >= 32:
        assert_same(nat, ref)
    else:  # rounded to 8 (bfloat16) or 11 (float16) bits at the end
        assert_same(nat, ref, rtol=1e-2, atol=0.5)
    # each channel is its own series
    one = jaxsubset.ewm_statistic(x, yy[:, 1, 2], 2.0, STATS)
    for s in STATS:
        np.testing.assert_array_equal(np.asarray(one[s]), nat[s][:, 1, 2])


@pytest.mark.parametrize("xkind", ["int", "datetime", "far float"])
def test_time_axes(xkind):
    y = RNG.normal(size=N).astype(FLOAT)
    steps = RNG.integers(1, 5000, N)
    if xkind == "int":
        x, h = np.cumsum(steps).astype(np.int32), 2000
    elif xkind == "datetime":
        x = np.datetime64("2020-01-01") + np.cumsum(steps).astype("timedelta64[ms]")
        h = "2s"
    else:  # float64 positions far from zero: differenced on the host in 32-bit mode
        x, h = 1.7e9 + np.cumsum(steps) * 1e-3, 2.0
    nat, ref = both(x, y, h)
    assert_same(nat, ref)
    if xkind == "datetime":
        t = pd.to_datetime(x)
        pdm = pd.Series(y.astype(np.float64)).ewm(halflife="2s", times=t).mean().to_numpy()
        np.testing.assert_allclose(nat["mean"], pdm, rtol=1e-9 if X64 else 3e-5, atol=1e-6)


def _calls(f, *args) -> int:
    return jax.jit(f).lower(*args).as_text().count(TARGET)


def test_jit_traced_halflife_vmap_one_call():
    x, y = _case("nan gaps")

    def f(y, h):
        return jaxsubset.ewm_statistic(x, y, h, STATS)

    assert _calls(f, y, FLOAT(2.0)) == 1
    jf = jax.jit(f)
    for h in (1.0, 2.5):
        got = jf(y, FLOAT(h))
        with pure_road():
            want = jaxsubset.ewm_statistic(x, y, FLOAT(h), STATS)
        assert_same({s: np.asarray(got[s]) for s in STATS},
                    {s: np.asarray(want[s]) for s in STATS})  # fmt: skip
    ys = np.stack([y, y[::-1] * 3, y + 100]).astype(FLOAT)
    hs = np.asarray([1.0, 2.0, 7.0], FLOAT)
    assert _calls(jax.vmap(f), ys, hs) == 1
    out = jax.jit(jax.vmap(f))(ys, hs)
    for i in range(3):
        one = f(ys[i], hs[i])
        for s in STATS:
            np.testing.assert_allclose(np.asarray(out[s][i]), np.asarray(one[s]),
                                       rtol=4 * EPS, atol=4 * EPS, err_msg=s)  # fmt: skip
    # x batched too (times as an operand of the one call)
    xs = np.stack([x, x * 2]).astype(FLOAT)
    g = lambda x: jaxsubset.ewm_statistic(x, y, 2.0, "std")  # noqa: E731
    assert _calls(jax.vmap(g), xs) == 1
    got = jax.jit(jax.vmap(g))(xs)
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(g(xs[1])), rtol=4 * EPS)


def test_derivatives_are_the_pure_roads():
    # (200 points, its NaN at 0, 1 and 40-42 among them: four rows of the blocked scan)
    x, y = (a[:200] for a in _case("nan gaps"))

    def total(y, h):
        out = jaxsubset.ewm_statistic(x, y, h, STATS, bias=False)
        return sum(jnp.nansum(out[s]) for s in STATS)

    g_nat = jax.jit(jax.grad(total, argnums=(0, 1)))(y, FLOAT(2.0))
    with pure_road():
        g_ref = jax.jit(jax.grad(lambda y, h: total(y, h), argnums=(0, 1)))(y, FLOAT(2.0))
    for a, b in zip(g_nat, g_ref, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)
    assert np.isfinite(np.asarray(g_nat[0])).all()
    t = jnp.ones_like(jnp.asarray(y))
    _, jn = jax.jvp(lambda v: total(v, 2.0), (jnp.asarray(y),), (t,))
    with pure_road():
        _, jr = jax.jvp(lambda v: total(v, 2.0) * 1, (jnp.asarray(y),), (t,))
    np.testing.assert_allclose(float(jn), float(jr), rtol=1e-5)


def test_a_gpu_lowering_names_no_custom_call_and_the_switch():
    x, y = _case("irregular")

    def f(y):
        return jaxsubset.ewm_statistic(x, y, 2.0, STATS)

    assert jax.jit(f).trace(y).lower().as_text().count(TARGET) == 1
    # (the halflife's run-time check is a host callback, which only lowers with a backend)
    os.environ["JAXSUBSET_CHECKS"] = "off"
    try:
        g = lambda y: f(y)  # noqa: E731  (a new function: traced anew, without the check)
        # (traced on this CPU-only machine: the pure-JAX branch only under the switch)
        with jaxsubset._native.portable_lowering():
            cuda = jax.jit(g).trace(y).lower(lowering_platforms=("cuda",)).as_text()
    finally:
        del os.environ["JAXSUBSET_CHECKS"]
    assert "custom_call" not in cuda and TARGET not in cuda
    with pure_road():
        assert _calls(lambda y: jaxsubset.ewm_statistic(x, y, 2.0, STATS), y) == 0


@needs_x64
def test_int64_nanosecond_axis_far_from_zero():
    x = np.datetime64("2024-05-01T12:00", "ns").astype(np.int64) + np.cumsum(
        RNG.integers(1, 10**9, N)
    )
    y = RNG.normal(size=N)
    nat, ref = both(x, y, 5 * 10**8)
    assert_same(nat, ref)
