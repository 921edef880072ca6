"""shard over two processes: ``jax.distributed`` on this machine equals the single-process result.

The test starts two Python processes (``sys.executable``), each with two CPU devices; they meet
at a coordinator on ``127.0.0.1`` (``jax.distributed.initialize``), exchange data through JAX's
CPU collectives (gloo) and run :func:`jaxsubset.shard` on one mesh over all four devices, so
halos cross from one process to the other. Each process reads the same files, as documented
for several hosts, and must place only its own shards: every row of ``y`` it reads is
recorded and checked against the rows its devices hold.
"""

import os
import socket
import subprocess
import sys
import textwrap

import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from references import FLOAT, X64


TIMEOUT = 300  # seconds for both processes together (each compiles three kernels)
N = 1003  # not divisible by the 4 devices: the last shard is padded
LOCAL_DEVICES = 2

WORKER = textwrap.dedent(
    """
    import sys

    import jax

    pid, port, folder = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}",
        num_processes=2,
        process_id=pid,
        initialization_timeout=120,
    )
    import jax.numpy as jnp
    import numpy as np

    import jaxsubset

    assert jax.process_count() == 2 and jax.process_index() == pid
    assert len(jax.devices()) == 2 * len(jax.local_devices()), jax.devices()


    class Rows(np.ndarray):
        # y as the documented shared storage, recording every row range read from it
        read = []

        def __getitem__(self, key):
            if isinstance(key, slice):
                Rows.read.append(key.indices(self.shape[0])[:2])
            return super().__getitem__(key)


    x = np.load(f"{folder}/x.npy", mmap_mode="r")
    y = np.load(f"{folder}/y.npy", mmap_mode="r").view(Rows)
    y2 = np.load(f"{folder}/y2.npy")
    lo, hi = np.load(f"{folder}/lo.npy"), np.load(f"{folder}/hi.npy")
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("shards",))
    fn = lambda xs, ys, m: jnp.sum(jnp.where(m[:, None], ys * xs[:, None], 0.0), axis=0)

    out = {}
    stats = ("sum", "median", "argmax")
    r = jaxsubset.shard(x, y, "sliding", size=400, step=7, statistic=stats, mesh=mesh)
    out.update({f"sliding.{k}": v for k, v in r.items()})
    rows = sorted(set(Rows.read))  # y is read only here: by the statistics of this call
    r = jaxsubset.shard(x, y2, "rolling", width=3.0, capacity=16, fn=fn, statistic="mean",
                        mesh=mesh)
    out.update({f"rolling.{k}": v for k, v in r.items() if k != "result"})
    out["rolling.result"] = r["result"]
    r = jaxsubset.shard(x, y, "select", lo=lo, hi=hi, capacity=512, statistic="std", mesh=mesh)
    out.update({f"select.{k}": v for k, v in r.items()})
    out["rows_read"] = np.array(rows, np.int64).reshape(-1, 2)
    out["own_devices"] = np.array([d.id for d in jax.local_devices()])
    out["mesh_devices"] = np.array([d.id for d in mesh.devices])
    np.savez(f"{folder}/out{pid}.npz", **out)
    jax.distributed.shutdown()
    print("WORKER-OK", pid)
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_two_processes(folder) -> list[dict]:
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        JAX_NUM_CPU_DEVICES=str(LOCAL_DEVICES),
        JAX_ENABLE_X64="1" if X64 else "0",  # the mode of this run
    )
    env.pop("XLA_FLAGS", None)
    port = str(_free_port())
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(pid), port, str(folder)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for pid in (0, 1)
    ]
    logs = []
    try:
        for proc in procs:
            logs.append(proc.communicate(timeout=TIMEOUT))
    except subprocess.TimeoutExpired:
        for proc in procs:
            proc.kill()
        pytest.fail(f"the two jax.distributed processes did not finish in {TIMEOUT} s")
    for pid, (proc, (out, err)) in enumerate(zip(procs, logs, strict=True)):
        assert proc.returncode == 0, f"process {pid}:\n{err[-4000:]}"
        assert f"WORKER-OK {pid}" in out
    return [dict(np.load(folder / f"out{pid}.npz")) for pid in (0, 1)]


def test_shard_over_two_processes_equals_one_process(tmp_path):
    rng = np.random.default_rng(17)
    x = np.sort(np.round(rng.uniform(0.0, 100.0, N), 1)).astype(FLOAT)  # ties on purpose
    y = rng.normal(3.0, 2.0, N).astype(FLOAT)  # JAX's dtype: the NumPy references agree
    y2 = np.stack([y, -2.0 * y], axis=1)
    lo = rng.uniform(-10.0, 100.0, (3, 5))
    hi = lo + rng.uniform(0.0, 40.0, (3, 5))
    for name, a in dict(x=x, y=y, y2=y2, lo=lo, hi=hi).items():
        np.save(tmp_path / f"{name}.npy", a)

    results = _run_two_processes(tmp_path)

    # the mesh spanned both processes: each owns half of its devices
    own0, own1 = results[0]["own_devices"], results[1]["own_devices"]
    mesh = results[0]["mesh_devices"]
    assert len(own0) == len(own1) == LOCAL_DEVICES and not set(own0) & set(own1)
    assert sorted(mesh.tolist()) == sorted([*own0, *own1])
    # each process read only the rows of y its own devices hold (ceil(N / 4) rows each)
    shard = -(-N // (2 * LOCAL_DEVICES))
    for pid, res in enumerate(results):
        mine = [i for i, d in enumerate(mesh) if d in res["own_devices"]]
        allowed = [(i * shard, min((i + 1) * shard, N)) for i in mine]
        assert res["rows_read"].size, "y was never read"
        for a, b in res["rows_read"]:
            assert any(lo_ <= a and b <= hi_ for lo_, hi_ in allowed), (pid, a, b, allowed)

    # both processes receive the full results, equal to the single-process run here
    fn = lambda xs, ys, m: jnp.sum(jnp.where(m[:, None], ys * xs[:, None], 0.0), axis=0)
    single = {
        "sliding": jaxsubset.shard(
            x, y, "sliding", size=400, step=7, statistic=("sum", "median", "argmax"), devices=1
        ),
        "rolling": jaxsubset.shard(
            x, y2, "rolling", width=3.0, capacity=16, fn=fn, statistic="mean", devices=1
        ),
        "select": jaxsubset.shard(
            x, y, "select", lo=lo, hi=hi, capacity=512, statistic="std", devices=1
        ),
    }
    close = dict(rtol=1e-12, atol=1e-12) if X64 else dict(rtol=1e-5, atol=1e-5)
    for res in results:
        for kind, want in single.items():
            for name, value in want.items():
                got = res[f"{kind}.{name}"]
                assert got.shape == np.shape(value), (kind, name)
                if name in ("sum", "mean", "std", "result"):
                    np.testing.assert_allclose(got, value, **close, err_msg=f"{kind} {name}")
                else:  # ranges, selections and indices are exact
                    np.testing.assert_array_equal(got, value, err_msg=f"{kind} {name}")

    # and both equal independent references: NumPy windows, the in-memory constructors
    win = np.lib.stride_tricks.sliding_window_view(y, 400)[::7]
    sl = results[0]
    np.testing.assert_allclose(sl["sliding.sum"], win.sum(axis=1), **close)
    np.testing.assert_allclose(sl["sliding.median"], np.median(win, axis=1), **close)
    np.testing.assert_array_equal(sl["sliding.argmax"], np.arange(0, N - 399, 7) + win.argmax(1))
    # windows starting on process 0's devices and ending on process 1's: the halo crossed over
    half = LOCAL_DEVICES * shard
    assert np.sum((sl["sliding.start"] < half) & (sl["sliding.start"] + 400 > half)) > 10
    ref = jaxsubset.rolling(jnp.asarray(x), jnp.asarray(y2), 3.0, capacity=16)
    assert sl["rolling.overflow"].any()  # overflowing windows keep their first 16 points
    np.testing.assert_array_equal(sl["rolling.count"], ref.count)
    np.testing.assert_allclose(sl["rolling.mean"], ref.mean(), **close)
    np.testing.assert_allclose(sl["rolling.result"], ref.apply(fn), **close)
    sel = jaxsubset.select(jnp.asarray(x), jnp.asarray(y), lo, hi, capacity=512)
    np.testing.assert_array_equal(sl["select.count"], sel.count)
    np.testing.assert_allclose(sl["select.std"], sel.std(), **close)
