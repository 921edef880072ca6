"""shard: the analyses over 4 and 8 CPU devices equal the single-device in-memory path.

Multi-device checks run in one subprocess per device count, with ``JAX_NUM_CPU_DEVICES`` set
before JAX starts.
"""

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from references import tol


TESTS = os.path.dirname(os.path.abspath(__file__))  # the subprocesses import `compilations`

CHECKS = textwrap.dedent(
    """
    import jax, jax.numpy as jnp, numpy as np
    jax.config.update("jax_enable_x64", True)
    import jaxsubset
    from compilations import compilations

    D = int(__import__("os").environ["JAX_NUM_CPU_DEVICES"])
    assert len(jax.devices()) == D
    rng = np.random.default_rng(D)
    N = 1003  # not divisible by 4 or 8
    x = np.sort(np.round(rng.uniform(0.0, 100.0, N), 1))
    y = rng.normal(3.0, 2.0, N)
    X, Y = jnp.asarray(x), jnp.asarray(y)
    at = rng.uniform(-5.0, 105.0, 37)
    lo = rng.uniform(-10.0, 100.0, (3, 5))
    hi = lo + rng.uniform(0.0, 20.0, (3, 5))
    edges = np.array([-5.0, 0.0, 0.0, 3.3, 10.0, 10.05, 50.0, 99.9, 100.0, 120.0])
    S = -(-N // D)
    K = jaxsubset.ranges.dynamic(x, 5.0, period=8.0).start.shape[0]  # the jitted reference's
    STATS = ("mean", "std", "max", "median", "argmin")  # all nine are checked in test_stream

    def reference(make):
        # the in-memory single-device path, compiled once (eager reductions compile per op)
        def f(X, Y):
            s = make(X, Y)
            out = {name: getattr(s, name)() for name in STATS}
            out.update(start=s.start, count=s.count, overflow=s.overflow, capacity=s.capacity)
            return out

        return jax.jit(f)(X, Y)

    cases = [
        ("chunks", None, dict(size=50), lambda X, Y: jaxsubset.chunks(X, Y, size=50)),
        ("chunks", None, dict(n=7), lambda X, Y: jaxsubset.chunks(X, Y, 7)),
        # windows longer than a shard: halos from 2-3 neighbours
        ("sliding", None, dict(size=S + 40, step=7),
         lambda X, Y: jaxsubset.sliding(X, Y, S + 40, step=7)),
        ("rolling", 32, dict(width=2.0), lambda X, Y: jaxsubset.rolling(X, Y, 2.0, capacity=32)),
        ("rolling", 4, dict(width=2.0, closed="both"),
         lambda X, Y: jaxsubset.rolling(X, Y, 2.0, capacity=4, closed="both")),
        ("rolling", 128, dict(width=7.5, at=at, closed="left"),
         lambda X, Y: jaxsubset.rolling(X, Y, 7.5, capacity=128, at=at, closed="left")),
        # windows reaching past their anchor, and hopping windows: the same look-ahead halo
        ("rolling", 32, dict(before=1.0, after=1.5),
         lambda X, Y: jaxsubset.rolling(X, Y, before=1.0, after=1.5, capacity=32)),
        ("dynamic", 128, dict(every=5.0, period=8.0),
         lambda X, Y: jaxsubset.dynamic(X, Y, 5.0, period=8.0, capacity=128, num_windows=K)),
        ("bins", 128, dict(edges=edges), lambda X, Y: jaxsubset.bins(X, Y, edges, capacity=128)),
        ("select", 256, dict(lo=lo, hi=hi, closed="both"),
         lambda X, Y: jaxsubset.select(X, Y, lo, hi, capacity=256, closed="both")),
    ]
    if D == 8:  # the 4-device run covers every kind; 8 devices: the halo-heavy ones (time)
        cases = [c for c in cases if c[0] in ("sliding", "select") or c[1] == 4]
    crossing = 0
    overflowed = 0
    for kind, cap, kw, make in cases:
        ref = reference(make)
        with compilations() as seen:
            out = jaxsubset.shard(x, y, kind, statistic=STATS, capacity=cap, **kw)
        # one compilation per analysis (none when an earlier one had the same shapes)
        assert seen.of("shard_kernel") <= 1, (kind, seen)
        for name in ("start", "count", "overflow"):
            np.testing.assert_array_equal(out[name], ref[name], err_msg=kind + name)
        for name in STATS:
            if name in ("mean", "std"):
                np.testing.assert_allclose(out[name], ref[name], rtol=1e-13, atol=1e-13,
                                           err_msg=kind + name)
            else:
                np.testing.assert_array_equal(out[name], ref[name], err_msg=kind + name)
        st, ct = np.asarray(ref["start"]), np.asarray(ref["count"])
        last = np.maximum(st + np.minimum(ct, cap or ct.max()) - 1, 0)
        crossing += int(np.sum(st // S != last // S))
        overflowed += int(np.sum(ref["overflow"]))
    assert overflowed > 0
    assert crossing > 50, crossing  # many subsets really straddle shard boundaries

    # an explicit mesh over half the devices, fn with channels, a second call without retrace
    mesh = jax.sharding.Mesh(np.array(jax.devices()[: D // 2]), ("data",))
    y2 = np.stack([y, -y], axis=1)
    fn = lambda xs, ys, m: jnp.sum(jnp.where(m[:, None], ys * xs[:, None], 0.0), axis=0)
    with compilations() as seen:
        out = jaxsubset.shard(x, y2, "sliding", size=200, step=50, fn=fn, mesh=mesh)
    assert seen.of("shard_kernel") == 1, seen
    with compilations() as seen:
        out2 = jaxsubset.shard(x, y2 * 2, "sliding", size=200, step=50, fn=fn, mesh=mesh)
    assert seen.of("shard_kernel") == 0, seen
    want = np.stack([(y2[k:k + 200] * x[k:k + 200, None]).sum(0) for k in range(0, N - 199, 50)])
    np.testing.assert_allclose(out["result"], want, rtol=1e-12)
    np.testing.assert_allclose(out2["result"], 2 * want, rtol=1e-12)
    print("SHARD-OK", D)
    """
)


# the subprocesses switch 64-bit mode on themselves: the same check in either run
@pytest.mark.one_mode
def test_shard_equals_single_device_on_4_and_8_devices():
    procs = {}
    for n_devices in (4, 8):  # both subprocesses at once: compilation is mostly one core each
        env = dict(os.environ, JAX_NUM_CPU_DEVICES=str(n_devices), JAX_PLATFORMS="cpu")
        env["PYTHONPATH"] = os.pathsep.join([TESTS, *filter(None, [env.get("PYTHONPATH")])])
        env.pop("XLA_FLAGS", None)
        procs[n_devices] = subprocess.Popen(
            [sys.executable, "-c", CHECKS],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    for n_devices, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-4000:]
        assert f"SHARD-OK {n_devices}" in out


def test_shard_one_device_and_errors():
    x = np.arange(20.0)
    y = x**2
    out = jaxsubset.shard(x, y, "chunks", size=6, statistic=("sum", "max"))
    want = [y[a : a + 6].sum() for a in range(0, 20, 6)]
    np.testing.assert_array_equal(out["sum"], want)
    np.testing.assert_array_equal(out["max"], [25.0, 121.0, 289.0, 361.0])
    np.testing.assert_array_equal(out["count"], [6, 6, 6, 2])
    with pytest.raises(ValueError, match=r"`devices` must be <= the 1 device\(s\) available"):
        jaxsubset.shard(x, y, "chunks", size=6, statistic="sum", devices=2)
    with pytest.raises(TypeError, match="`capacity` is required for rolling"):
        jaxsubset.shard(x, y, "rolling", width=2.0, statistic="sum")
    with pytest.raises(TypeError, match="pass `mesh` or `devices`, not both"):
        jaxsubset.shard(x, y, "chunks", size=6, statistic="sum", devices=1, mesh=object())
    with pytest.raises(ValueError, match="sorted ascending"):
        jaxsubset.shard(x[::-1], y, "rolling", width=2.0, capacity=4, statistic="sum")
    with pytest.raises(ValueError, match="must be 1-D"):
        mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(1, 1), ("a", "b"))
        jaxsubset.shard(x, y, "chunks", size=6, statistic="sum", mesh=mesh)
    ref = jaxsubset.select(jnp.asarray(x), jnp.asarray(y), 2.5, 7.0, capacity=8)
    out = jaxsubset.shard(x, y, "select", lo=2.5, hi=7.0, capacity=8, statistic="mean")
    assert out["mean"].shape == () and out["mean"] == ref.mean()


def test_shard_nan_policy_omit_on_one_device():
    rng = np.random.default_rng(11)
    x = np.arange(300.0)
    y = rng.normal(size=300)
    y[::7] = np.nan
    out = jaxsubset.shard(
        x, y, "sliding", size=20, step=15, statistic=("mean", "valid"), nan_policy="omit", devices=1
    )
    windows = np.lib.stride_tricks.sliding_window_view(y, 20)[::15]
    np.testing.assert_allclose(out["mean"], np.nanmean(windows, axis=1), **tol())
    np.testing.assert_array_equal(out["valid"], (~np.isnan(windows)).sum(1))
