"""The native CPU road (C++ kernels through XLA's FFI, ``jaxsubset._native``).

Its differential matrix is ``test_roads.py`` (the road joins ``ROADS`` where built); here:
what is read is bit for bit the reference road's (counts, integer sums, extremes, first/last,
medians, quantiles), windows equal pandas/bottleneck, a value outside a window never changes
it, ``vmap`` is one kernel call, derivatives are the pure-JAX road's, a GPU lowering names no
CPU target, and the switches: the ABI guard, ``JAXSUBSET_NATIVE=off``, an install without the
kernels.
"""

import os
import pathlib
import re
import subprocess
import sys
import tomllib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from jaxsubset import Ranges, binned_statistic, range_statistic, rolling_statistic
from jaxsubset._native import _load
from references import FLOAT, X64, fitted_capacity


pytestmark = pytest.mark.skipif(
    not jaxsubset._native.available(), reason=f"native road: {jaxsubset._native.status()}"
)
RNG = np.random.default_rng(27)
EPS = np.finfo(FLOAT).eps
N = 400
READ = ("count", "min", "max", "first", "last", "median")  # read, never computed: bit for bit
MOMENTS = ("sum", "mean", "var", "std", "sem", "skew", "kurt")
ROOT = pathlib.Path(__file__).resolve().parents[1]


def _data() -> np.ndarray:
    y = RNG.normal(2.0, 3.0, (N, 2))
    y[[5, 90, 91], 0] = np.nan
    y[150, 1] = np.inf
    y[151, 0] = -np.inf
    y[300:340, 1] = -1.5  # constant: var exactly 0
    y[200:230, 0] = 0.0  # zeros: every moment exactly 0
    return y.astype(FLOAT)


Y = _data()
X = np.sort(RNG.uniform(0.0, 200.0, N)).astype(FLOAT)


def _kinds() -> dict[str, Ranges]:
    r = jaxsubset.ranges
    return {
        # trailing windows of 25 points
        "window": Ranges(jnp.maximum(jnp.arange(N) - 24, 0), jnp.minimum(jnp.arange(N) + 1, 25)),
        "x-width": r.rolling(X, 9.0),
        "chunks": r.chunks(X, 9),
        "bins": r.bins(X, np.linspace(-5.0, 205.0, 12)),
        "arbitrary": Ranges(
            jnp.asarray(RNG.integers(-3, N, 80)), jnp.asarray(RNG.integers(0, 70, 80))
        ),
    }


KINDS = _kinds()


@pytest.mark.parametrize("policy", ["propagate", "omit"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_what_is_read_is_bit_for_bit_the_reference(kind, policy):
    r = KINDS[kind]
    stats = (*READ, *MOMENTS)
    cap = fitted_capacity(r.count)
    nat = range_statistic(Y, r, stats, nan_policy=policy, method="native", ddof=1)
    ref = range_statistic(Y, r, stats, nan_policy=policy, method="reference", capacity=cap, ddof=1)
    for s in READ:
        np.testing.assert_array_equal(np.asarray(nat[s]), np.asarray(ref[s]), err_msg=s)
        assert nat[s].dtype == ref[s].dtype, s
    for s in MOMENTS:  # a few ulps of the range's magnitude (another summation order)
        a, b = np.asarray(nat[s], float), np.asarray(ref[s], float)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=s)
        ok = np.isfinite(b)
        scale = 1.0 if s in ("skew", "kurt") else np.abs(b[ok]).max() + 1
        # skew/kurt: ratios of third/fourth central moments, a few more ulps
        k = 256 if s in ("skew", "kurt") else 64
        np.testing.assert_allclose(a[ok], b[ok], rtol=k * EPS, atol=k * EPS * scale, err_msg=s)
    q = range_statistic(Y, r, "quantile", q=0.3, nan_policy=policy, method="native")
    qr = range_statistic(Y, r, "quantile", q=0.3, nan_policy=policy, method="reference",
                         capacity=cap)  # fmt: skip
    np.testing.assert_array_equal(np.asarray(q), np.asarray(qr))


@pytest.mark.parametrize("dtype", ["int32", "float32", "float16"])
def test_other_dtypes_follow_the_reference(dtype):
    y = RNG.integers(-50, 50, (N, 1)) if dtype == "int32" else RNG.normal(0, 2, (N, 1))
    y = y.astype(dtype)
    r = KINDS["x-width"]
    stats = ("count", "sum", "mean", "std", "max", "median")
    nat = range_statistic(y, r, stats, method="native")
    ref = range_statistic(y, r, stats, method="reference", capacity=fitted_capacity(r.count))
    for s in stats:
        assert nat[s].dtype == ref[s].dtype, s
        if s in ("count", "max", "median") or dtype == "int32" and s == "sum":
            np.testing.assert_array_equal(np.asarray(nat[s]), np.asarray(ref[s]), err_msg=s)
        else:
            e = np.finfo(np.float32 if dtype != "int32" else FLOAT).eps
            np.testing.assert_allclose(np.asarray(nat[s], float), np.asarray(ref[s], float),
                                       rtol=64 * e, atol=64 * e, err_msg=s)  # fmt: skip


def test_windows_equal_bottleneck_and_pandas():
    bn = pytest.importorskip("bottleneck")
    pd = pytest.importorskip("pandas")
    y = RNG.normal(5.0, 1.0, 3000).astype(FLOAT)
    for w in (3, 50, 700):
        got = rolling_statistic(None, y, window=w, statistic=("mean", "std", "min", "max",
                                "median"), method="native")  # fmt: skip
        for s in got:
            want = getattr(bn, f"move_{s}")(y.astype(np.float64), w, min_count=1)
            # bottleneck's running sums lose ~1e-13 of the values' scale (5) to cancellation
            tol = 0.0 if s in ("min", "max") else (1e-11 if X64 else 64 * EPS * 5)
            tol = EPS * 5 if s == "median" and not X64 else tol  # (a + b) / 2 in float32
            np.testing.assert_allclose(np.asarray(got[s], float), want, rtol=tol, atol=tol,
                                       err_msg=f"w={w} {s}")  # fmt: skip
    # x-width windows on an irregular axis, NaN skipped (pandas' offset windows)
    y[::17] = np.nan
    x = np.cumsum(RNG.exponential(1.0, 3000)).astype(FLOAT)
    got = rolling_statistic(x, y, 12.0, ("mean", "std", "max", "median", "count"),
                            method="native", ddof=1)  # fmt: skip
    ser = pd.Series(y.astype(np.float64), index=pd.to_datetime(x.astype(np.float64), unit="s"))
    roll = ser.rolling("12s")
    for s in ("mean", "std", "max", "median", "count"):
        want = getattr(roll, s)().to_numpy()
        np.testing.assert_allclose(np.asarray(got[s], float), want, rtol=1e-5 if not X64 else 1e-9,
                                   atol=1e-5 if not X64 else 1e-9, err_msg=s)  # fmt: skip


def test_bins_and_chunks_equal_numpy():
    x = np.sort(RNG.uniform(0, 10, 5000)).astype(FLOAT)
    y = RNG.normal(size=5000).astype(FLOAT)
    edges = np.linspace(0, 10, 41)
    for s, fn in (("mean", np.mean), ("std", np.std), ("max", np.max), ("median", np.median)):
        got = binned_statistic(x, y, s, edges, method="native").statistic
        idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, 39)
        want = [fn(y[idx == b].astype(np.float64)) for b in range(40)]
        tol = 0 if s == "max" or s == "median" and X64 else 64 * EPS
        np.testing.assert_allclose(np.asarray(got, float), want, rtol=tol, atol=tol, err_msg=s)
    out = range_statistic(y, jaxsubset.ranges.chunks(x, 50), ("mean", "std", "max"),
                          method="native")  # fmt: skip
    parts = y.astype(np.float64).reshape(50, 100)
    np.testing.assert_allclose(np.asarray(out["mean"]), parts.mean(1), rtol=16 * EPS, atol=16 * EPS)
    np.testing.assert_allclose(np.asarray(out["std"]), parts.std(1), rtol=64 * EPS, atol=64 * EPS)
    np.testing.assert_array_equal(np.asarray(out["max"]), parts.max(1).astype(FLOAT))


def test_results_large_enough_for_huge_pages_are_written_whole():
    # results of 8 MiB or more get huge pages advised before the kernels first write them
    # (common.h, advise_huge): every kernel's large result, checked against NumPy, the first
    # and last rows included (the advised range is the buffer's 2 MiB-aligned interior)
    bn = pytest.importorskip("bottleneck")
    n = (2**23 + 2**16) // np.dtype(FLOAT).itemsize  # (8.4 MB of results in either mode)
    y = RNG.normal(size=n).astype(FLOAT)
    x = np.arange(n, dtype=FLOAT)
    fixed = np.asarray(rolling_statistic(None, y, window=7, statistic="sum"))
    xw = np.asarray(rolling_statistic(x, y, 6.5, "max"))
    want = bn.move_sum(y.astype(np.float64), 7, min_count=1)
    np.testing.assert_allclose(fixed, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(xw, bn.move_max(y, 7, min_count=1))
    k = n // 4  # ranges: the 4-point chunks' means
    out = np.asarray(range_statistic(y, Ranges(np.arange(k) * 4, np.full(k, 4)), "mean"))
    np.testing.assert_allclose(out, y[: 4 * k].astype(np.float64).reshape(k, 4).mean(1),
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    # bins: 2^20 bins of x (the kernel's bin numbers and results, 8 MB each in 64-bit mode)
    nb = n // 2
    res = binned_statistic(x, y, "max", bins=nb, range=(0.0, float(n)))
    np.testing.assert_array_equal(np.asarray(res.statistic), y[: 2 * nb].reshape(nb, 2).max(1))
    pd = pytest.importorskip("pandas")  # the EWM kernel: pandas' halflife-weighted mean
    ew = np.asarray(jaxsubset.ewm_statistic(x, y, 3.0, "mean"))
    want = pd.Series(y.astype(np.float64)).ewm(halflife=3.0).mean().to_numpy()
    np.testing.assert_allclose(ew, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("bad", [1e30, np.inf, np.nan])
@pytest.mark.parametrize("kind", ["window", "x-width", "chunks", "arbitrary"])
def test_a_value_outside_a_range_never_changes_it(kind, bad):
    r = KINDS[kind]
    y = RNG.normal(1.0, 1.0, (N, 1)).astype(FLOAT)
    at = 123
    y2 = y.copy()
    y2[at] = bad if X64 or bad != 1e30 else 1e30  # float32 holds 1e30
    stats = (*READ, *MOMENTS)
    a = range_statistic(y, r, stats, method="native", ddof=1)
    b = range_statistic(y2, r, stats, method="native", ddof=1)
    start, count = (np.broadcast_to(np.asarray(v), np.shape(r.count)) for v in (r.start, r.count))
    lo = np.clip(start, 0, N)
    outside = (at < lo) | (at >= np.clip(start + count, lo, N))
    for s in stats:
        np.testing.assert_array_equal(np.asarray(a[s])[outside], np.asarray(b[s])[outside],
                                      err_msg=s)  # fmt: skip
    # windows of zeros are exactly 0, whatever came before them
    z = np.r_[1e30 if X64 else 1e18, -3.0, np.zeros(60)].astype(FLOAT)
    out = rolling_statistic(None, z, window=4, statistic=("sum", "mean", "var", "std"),
                            method="native")  # fmt: skip
    for s in out:
        assert (np.asarray(out[s])[5:] == 0.0).all(), s


def _targets(f, *args, target: str = "jaxsubset_range_stats") -> int:
    return jax.jit(f).lower(*args).as_text().count(target)


def test_vmap_is_one_kernel_call_and_equals_each_call():
    r = KINDS["x-width"]
    ys = np.stack([Y, Y[::-1] * 3, Y + 1]).astype(FLOAT)

    def f(y):
        return range_statistic(y, r, ("mean", "std", "max", "median"), method="native",
                               nan_policy="omit")  # fmt: skip

    assert _targets(jax.vmap(f), ys) == 1
    got = jax.jit(jax.vmap(f))(ys)
    for i in range(3):
        one = f(ys[i])
        for s in one:
            np.testing.assert_array_equal(np.asarray(got[s][i]), np.asarray(one[s]), err_msg=s)
    # windows batched too (widths under vmap): still one call, of the x-width kernel
    widths = jnp.asarray([3.0, 9.0], FLOAT)

    def g(w):
        return rolling_statistic(X, Y, w, ("mean", "max"), method="native", nan_policy="omit")

    assert _targets(jax.vmap(g), widths, target="jaxsubset_xwidth_stats") == 1
    out = jax.jit(jax.vmap(g))(widths)
    for i, w in enumerate(np.asarray(widths)):
        one = rolling_statistic(X, Y, float(w), ("mean", "max"), method="tree", nan_policy="omit")
        np.testing.assert_allclose(np.asarray(out["mean"][i]), np.asarray(one["mean"]),
                                   rtol=64 * EPS, atol=64 * EPS)  # fmt: skip
        np.testing.assert_array_equal(np.asarray(out["max"][i]), np.asarray(one["max"]))


def test_derivatives_are_the_pure_roads():
    y = RNG.normal(size=(120, 1)).astype(FLOAT)
    r = jaxsubset.ranges.rolling(np.arange(120.0), 10.0)

    def total(y, method, stats=("sum", "mean", "std", "max", "first")):
        out = range_statistic(y, r, stats, method=method, capacity=16)
        return sum(jnp.nansum(out[s]) for s in stats)

    g_nat = jax.jit(jax.grad(total), static_argnums=(1,))(y, "native")
    g_tree = jax.jit(jax.grad(total), static_argnums=(1,))(y, "tree")
    np.testing.assert_allclose(np.asarray(g_nat), np.asarray(g_tree), rtol=1e-6, atol=1e-6)
    med = lambda y, m: jnp.sum(range_statistic(y, r, "median", method=m, capacity=16))  # noqa: E731
    # (jitted: an eager grad runs the pure derivative op by op, ~200 one-operation programs;
    # test_closed_over.py differentiates the native median eagerly)
    gmed = jax.jit(jax.grad(med), static_argnums=(1,))
    np.testing.assert_array_equal(np.asarray(gmed(y, "native")), np.asarray(gmed(y, "reference")))
    t = jnp.ones_like(jnp.asarray(y))
    _, jn = jax.jvp(lambda v: total(v, "native"), (jnp.asarray(y),), (t,))
    _, jt = jax.jvp(lambda v: total(v, "tree"), (jnp.asarray(y),), (t,))
    np.testing.assert_allclose(float(jn), float(jt), rtol=1e-5, atol=1e-5)
    jf = jax.jacfwd(lambda v: range_statistic(v, r, "mean", method="native"))(y[:, 0])
    jt2 = jax.jacfwd(lambda v: range_statistic(v, r, "mean", method="tree"))(y[:, 0])
    np.testing.assert_allclose(np.asarray(jf), np.asarray(jt2), rtol=1e-6, atol=1e-7)
    ys = np.stack([y, 2 * y])
    vg = jax.vmap(jax.grad(lambda v: total(v, "native")))(ys)
    np.testing.assert_allclose(np.asarray(vg[0]), np.asarray(g_tree), rtol=1e-5, atol=1e-5)


def test_a_gpu_lowering_names_no_cpu_kernel():
    def f(y):
        a = range_statistic(y, KINDS["x-width"], ("mean", "std", "max", "median"), capacity=32)
        b = rolling_statistic(None, y, window=20, statistic=("sum", "min"))
        return a, b

    y = jnp.asarray(Y[:, 0])
    # a program traced on this CPU-only machine keeps the pure-JAX roads for other platforms
    # only under the switch (JAXSUBSET_NATIVE_PORTABLE=1); test_native_first.py has the rest
    with jaxsubset._native.portable_lowering():
        cpu = jax.jit(f).trace(y).lower().as_text()
        cuda = jax.jit(f).trace(y).lower(lowering_platforms=("cuda",)).as_text()
    # ranges by the range kernel, fixed-count windows by the sliding one
    assert cpu.count("jaxsubset_range_stats") == 1
    assert cpu.count("jaxsubset_sliding_stats") == 1
    assert "jaxsubset_range_stats" not in cuda
    assert "jaxsubset_sliding_stats" not in cuda
    assert "custom_call" not in cuda


def test_auto_takes_the_native_road_on_the_cpu():
    f = lambda y: range_statistic(y, KINDS["chunks"], ("mean", "std", "median"))  # noqa: E731
    assert _targets(f, Y) == 1
    f = lambda y: rolling_statistic(None, y, window=30, statistic="mean")  # noqa: E731
    assert jax.jit(f).lower(Y).as_text().count("jaxsubset_sliding_stats") == 1


def test_the_abi_guard():
    assert _load.guard("0.7.0", "0.10.2") is None
    assert _load.guard("0.10.2", "0.10.2") is None
    why = _load.guard("0.11.0", "0.10.2")
    assert why and "built against jaxlib 0.11.0" in why and "0.10.2" in why
    # a build recorded as newer than the running jaxlib: not registered, one warning, and the
    # statistics still right (on the pure-JAX roads)
    script = """
import warnings, numpy as np
warnings.simplefilter("always")
from jaxsubset._native import _load
real = _load._module()
class Newer:
    def build_info(self):
        return {"jaxlib": "99.0.0", "ffi_api": (9, 9)}
    def registrations(self):
        raise AssertionError("must not register")
_load._module = lambda: Newer()
import jaxsubset
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    y = np.arange(20.0)
    r = jaxsubset.ranges.chunks(y, 4)
    a = jaxsubset.range_statistic(y, r, ("mean", "max"))
    b = jaxsubset.range_statistic(y, r, ("mean", "max"))
    assert not jaxsubset._native.available()
msgs = [str(x.message) for x in w if issubclass(x.category, _load.NativeUnavailableWarning)]
assert len(msgs) == 1, msgs
assert "99.0.0" in msgs[0]
assert a["mean"].tolist() == [2.0, 7.0, 12.0, 17.0] and a["max"].tolist() == [4.0, 9.0, 14.0, 19.0]
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=_env(), timeout=120)  # fmt: skip
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def test_switched_off_and_a_build_without_kernels():
    script = """
import numpy as np, jaxsubset, jaxsubset._native
assert not jaxsubset._native.available(), jaxsubset._native.status()
assert jaxsubset._native.status().startswith("off")
y = np.arange(20.0)
r = jaxsubset.ranges.chunks(y, 4)
assert jaxsubset.range_statistic(y, r, "median").tolist() == [2.0, 7.0, 12.0, 17.0]
try:
    jaxsubset.range_statistic(y, r, "mean", method="native")
except RuntimeError as e:
    assert "method='native' cannot run here" in str(e) and "JAXSUBSET_NATIVE" in str(e), e
else:
    raise AssertionError("no error")
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=_env(JAXSUBSET_NATIVE="off"), timeout=120)  # fmt: skip
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]
    # an install without the compiled module (a pure-Python build): no warning, not available
    script = """
import warnings
warnings.simplefilter("error")
from jaxsubset._native import _load
_load._module = lambda: None
import numpy as np, jaxsubset
assert not jaxsubset._native.available()
assert "pure-Python" in jaxsubset._native.status()
y = np.arange(8.0)
assert jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(y, 2), "sum").tolist() == [6.0, 22.0]
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=_env(), timeout=120)  # fmt: skip
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]


def test_the_build_pins_the_oldest_supported_jaxlib():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    native = meta["tool"]["jaxsubset"]["native"]
    pins = [r for r in meta["build-system"]["requires"] if r.startswith("jaxlib==")]
    assert any(re.match(rf"jaxlib=={re.escape(native['built-against'])}\b", p) for p in pins)
    # the build's jaxlib is the runtime floor of jax (jax and jaxlib share release numbers)
    floor = next(d for d in meta["project"]["dependencies"] if d.startswith("jax>="))
    assert _load._version(native["built-against"]) >= _load._version(floor[len("jax>=") :])
    # the override that builds a pure-Python wheel
    over = meta["tool"]["scikit-build"]["overrides"]
    assert any(o.get("if", {}).get("env", {}).get("JAXSUBSET_NATIVE") and o["wheel"]["cmake"]
               is False for o in over)  # fmt: skip
    # this install's kernels were built against the pinned jaxlib (a pip build) or an older
    # one, and the running jaxlib is one of the tested ones or newer
    built = _load._module().build_info()["jaxlib"]
    assert _load._version(built) <= _load._version(_load.running_jaxlib())


def test_eager_buckets_pad_windows_with_empty_ranges():
    # an eager call pads N and the number of windows (empty ranges after the data): those
    # must neither be read nor change the road of the real windows (a crash before)
    y = RNG.normal(size=(64, 2)).astype(FLOAT)
    stats = ("mean", "std", "max", "count")
    got = rolling_statistic(None, y, statistic=stats, window=9)
    want = rolling_statistic(None, y, statistic=stats, window=9, method="tree")
    for s in stats:
        np.testing.assert_allclose(np.asarray(got[s], float), np.asarray(want[s], float),
                                   rtol=64 * EPS, atol=64 * EPS, err_msg=s)  # fmt: skip


def test_the_capacity_rule_of_the_order_statistics_is_every_roads():
    # a range (or window) of more than `capacity` points: NaN on the native road too, so a
    # result never depends on the platform or road ("auto" on a CPU or elsewhere)
    r = _kinds()["x-width"]
    cap = int(np.percentile(np.asarray(r.count), 60))
    for stat, kw in (("median", {}), ("quantile", {"q": 0.3})):
        for policy in ("omit", "propagate"):
            nat = range_statistic(Y, r, stat, capacity=cap, nan_policy=policy, method="native",
                                  **kw)  # fmt: skip
            ref = range_statistic(Y, r, stat, capacity=cap, nan_policy=policy,
                                  method="reference", **kw)  # fmt: skip
            np.testing.assert_array_equal(np.asarray(nat), np.asarray(ref), err_msg=stat)
            long = np.asarray(r.count) > cap
            assert long.any() and np.isnan(np.asarray(nat)[long]).all()
            assert not np.isnan(np.asarray(nat)[~long & (np.asarray(r.count) > 0), 1]).all()
    # fixed-count windows with a capacity below the window: NaN once a window is longer
    win = rolling_statistic(None, Y, window=9, statistic="median", capacity=6, method="native")
    want = rolling_statistic(None, Y, window=9, statistic="median", capacity=6,
                             method="reference")  # fmt: skip
    np.testing.assert_array_equal(np.asarray(win), np.asarray(want))
    assert np.isnan(np.asarray(win)[6:]).all() and not np.isnan(np.asarray(win)[1:6, 1]).any()
