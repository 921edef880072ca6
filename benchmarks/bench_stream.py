"""Scale benchmarks (issue 5): streaming a file larger than a block, and sharding over devices.

1. ``stream``: a float64 ``(N, 2)`` ``.npy`` file (N = 2e8: 3.2 GB; ``--quick``: 2e6) is
   written, then, each in a FRESH subprocess (so peak memory is that run's own):
   (a) the floor: ``np.load(path, mmap_mode="r").sum()``, a plain pass over the same file,
       run before and after every streamed run (the median is the floor: the machine is shared;
       one untimed pass first, so that no run pays for the write-back of the new file);
   (b) ``jaxsubset.stream(path, "chunks", size=1000, statistic=(mean, std, min, max))``;
   (c) the same with ``statistic="mean"``;
   (d) ``stream(path, "sliding", size=1000, step=500, statistic=("mean", "max"))``: windows of
       two 500-point pieces (``--sliding-step 501``: the general gather road, with a halo).
   All of it ``--rounds`` times (default 3); each row is the median over the rounds, and
   ``vs_floor`` = median floor / median wall (``ratio_lo``/``ratio_hi``: the same per round,
   against that round's floors). Throughput is file bytes / wall time. The load average
   before and after goes into the output: other jobs on the machine move every number.
   Peak memory is the subprocess's own peak resident size (``VmHWM``; includes the
   interpreter, JAX and XLA, and memory-mapped file pages while they are mapped).
   Compilation happens in a warm-up call on the first blocks (same shapes, so the timed call
   compiles nothing) and is reported apart.
2. ``shard``: in a subprocess with ``JAX_NUM_CPU_DEVICES=4``, ``jaxsubset.shard`` on 1, 2 and 4
   CPU devices (N = 1e7; ``--quick``: 2e5), checking equality with 1 device.

Run ``python benchmarks/bench_stream.py [--quick] [--rounds R] [--json PATH] [--dir DIR]
[--keep]``.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np


HERE = os.path.dirname(os.path.abspath(__file__))
STATS4 = ("mean", "std", "min", "max")


def write_file(path: str, n: int) -> float:
    """Write sorted x and a noisy signal y as an ``(n, 2)`` float64 ``.npy``; return seconds."""
    t0 = time.perf_counter()
    a = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, 2))
    rng = np.random.default_rng(0)
    step = 1 << 22
    for i in range(0, n, step):
        j = min(n, i + step)
        t = np.arange(i, j, dtype=np.float64)
        a[i:j, 0] = t * 1e-3
        a[i:j, 1] = np.sin(t * 1e-4) + rng.normal(0.0, 0.1, j - i)
    a.flush()
    del a
    return time.perf_counter() - t0


# ---------------------------------------------------------------------------- workers
def _worker(argv: list[str]) -> dict[str, Any]:
    """Run one measurement in this (fresh) process and return its numbers."""
    import resource

    mode, path = argv[0], argv[1]
    if mode == "sum":
        t0 = time.perf_counter()
        total = float(np.load(path, mmap_mode="r").sum())
        wall = time.perf_counter() - t0
        return {"wall_s": wall, "checksum": total, "peak_rss_mb": _rss(resource)}

    import jax

    jax.config.update("jax_enable_x64", True)
    import jaxsubset

    kind = mode
    block = int(argv[2])
    stats = tuple(argv[3].split(","))
    kw: dict[str, Any] = {"size": 1000}
    if kind == "sliding":
        kw["step"] = int(argv[4]) if len(argv) > 4 else 500
    m = np.load(path, mmap_mode="r")
    head = np.array(m[: 3 * block])  # warm-up on the first blocks: the same shapes, compiled
    t0 = time.perf_counter()
    jaxsubset.stream((head[:, 0], head[:, 1]), kind, statistic=stats, block_size=block, **kw)
    compile_s = time.perf_counter() - t0
    del head
    t0 = time.perf_counter()
    out = jaxsubset.stream(path, kind, statistic=stats, block_size=block, **kw)
    wall = time.perf_counter() - t0
    # spot check against NumPy on the first and last subsets
    y = m[:, 1]
    step = kw.get("step", 1000)
    k_last = out["start"].shape[0] - 1
    for k in (0, k_last):
        a = int(out["start"][k])
        seg = np.asarray(y[a : a + 1000])
        np.testing.assert_allclose(out["mean"][k], seg.mean(), rtol=1e-10)
    assert out["start"][1] == step
    return {
        "wall_s": wall,
        "compile_s": compile_s,
        "subsets": int(out["start"].shape[0]),
        "peak_rss_mb": _rss(resource),
    }


def _rss(resource: Any) -> float:
    """Peak resident memory of THIS process in MB.

    ``VmHWM`` from ``/proc/self/status`` where available: ``ru_maxrss`` would also count the
    parent's memory before ``exec`` (Linux carries it over), i.e. the file-writing parent's.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _shard_worker(argv: list[str]) -> dict[str, Any]:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jaxsubset

    sys.path.insert(0, HERE)
    from _harness import time_steady

    n = int(float(argv[0]))
    rng = np.random.default_rng(1)
    x = np.sort(rng.uniform(0.0, n / 1000.0, n))
    y = np.sin(x) + rng.normal(0.0, 0.1, n)
    cases = {
        "chunks(size=1000) mean/std/min/max": dict(kind="chunks", size=1000, statistic=STATS4),
        "sliding(size=1000, step=500) mean/max": dict(
            kind="sliding", size=1000, step=500, statistic=("mean", "max")
        ),
        "rolling(width=0.02, capacity=64) mean": dict(
            kind="rolling", width=0.02, capacity=64, statistic="mean"
        ),
    }
    rows = []
    for name, kw in cases.items():
        ref = None
        for d in (1, 2, 4):
            if d > len(jax.devices()):
                continue
            t0 = time.perf_counter()
            out = jaxsubset.shard(x, y, devices=d, **kw)
            first = time.perf_counter() - t0
            steady = time_steady(
                lambda d=d, kw=kw: jaxsubset.shard(x, y, devices=d, **kw), repeats=3
            )
            if ref is None:
                ref = out
            same = all(
                np.allclose(out[k], ref[k], rtol=1e-12, equal_nan=True) for k in ref if k != "start"
            )
            rows.append(
                {
                    "case": name,
                    "devices": d,
                    "first_s": first,
                    "steady_s": steady,
                    "speedup": 1.0,
                    "equal_to_1_device": bool(same),
                }
            )
            if d > 1:
                rows[-1]["speedup"] = (
                    next(r["steady_s"] for r in rows if r["case"] == name and r["devices"] == 1)
                    / steady
                )
    return {"n": n, "cores": os.cpu_count(), "rows": rows}


def _spawn(args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--worker", *args],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"worker {args[:1]} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> dict[str, Any]:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        res = _shard_worker(argv[2:]) if argv[1] == "shard" else _worker(argv[1:])
        print(json.dumps(res))
        return res
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="2e6 points instead of 2e8")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    p.add_argument("--dir", default=None, help="where to write the .npy (default: a temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the .npy file afterwards")
    p.add_argument("--n", type=float, default=None, help="points in the file")
    p.add_argument("--block", type=int, default=1 << 20, help="stream block size (points)")
    p.add_argument("--rounds", type=int, default=3, help="repeat every run; medians reported")
    p.add_argument("--sliding-step", type=int, default=500, help="step of the sliding windows")
    p.add_argument("--no-shard", action="store_true", help="skip the sharding table")
    args = p.parse_args(argv)
    sys.path.insert(0, HERE)
    from _harness import print_header, print_table, write_json

    info = print_header("bench_stream: streaming a .npy file, sharding over CPU devices")
    n = int(args.n or (2e6 if args.quick else 2e8))
    n_shard = int(2e5 if args.quick else 1e7)
    folder = args.dir or tempfile.mkdtemp(prefix="jaxsubset-bench-")
    os.makedirs(folder, exist_ok=True)  # --dir may name a folder not made yet
    path = os.path.join(folder, f"xy_{n}.npy")
    need = n * 16 + 4096
    free = shutil.disk_usage(folder).free
    if not os.path.exists(path) and free < 2 * need:
        raise SystemExit(
            f"bench_stream: {need / 1e9:.1f} GB needed in {folder}, {free / 1e9:.1f} free"
        )
    results: dict[str, Any] = {"machine": info, "n": n, "file_gb": need / 1e9, "block": args.block}
    try:
        if not os.path.exists(path):
            results["write_s"] = write_file(path, n)
        size = os.path.getsize(path)
        floor_name = "np.load(mmap).sum() [floor]"
        floor_run = (floor_name, ["sum", path])
        blk, st = str(args.block), str(args.sliding_step)
        runs = [
            ("stream chunks(1000) mean/std/min/max", ["chunks", path, blk, ",".join(STATS4)]),
            ("stream chunks(1000) mean", ["chunks", path, blk, "mean"]),
            (f"stream sliding(1000, step {st}) mean/max", ["sliding", path, blk, "mean,max", st]),
        ]
        results["load_avg_before"] = os.getloadavg()
        _spawn(floor_run[1])  # untimed: the file's pages settle in the page cache
        raw: list[dict[str, Any]] = []
        for rnd in range(args.rounds):
            before = _spawn(floor_run[1])
            raw.append(dict(before, run=floor_name, round=rnd))
            for name, wargs in runs:
                r = _spawn(wargs)
                after = _spawn(floor_run[1])
                near = (before["wall_s"] + after["wall_s"]) / 2  # this run's own floor
                raw.append(dict(r, run=name, round=rnd, ratio=near / r["wall_s"]))
                raw.append(dict(after, run=floor_name, round=rnd))
                before = after
        results["load_avg_after"] = os.getloadavg()
        floor = float(np.median([r["wall_s"] for r in raw if r["run"] == floor_name]))
        rows = []
        for name in [floor_name] + [r[0] for r in runs]:
            mine = [r for r in raw if r["run"] == name]
            row: dict[str, Any] = {"run": name, "n": len(mine)}
            row["wall_s"] = float(np.median([r["wall_s"] for r in mine]))
            if name != floor_name:
                row["compile_s"] = float(np.median([r["compile_s"] for r in mine]))
            row["gb_per_s"] = size / row["wall_s"] / 1e9
            row["vs_floor"] = floor / row["wall_s"]
            if name != floor_name:
                row["ratio_lo"] = min(r["ratio"] for r in mine)
                row["ratio_hi"] = max(r["ratio"] for r in mine)
            row["peak_rss_mb"] = max(r["peak_rss_mb"] for r in mine)
            rows.append(row)
        print(
            f"\n-- stream: {n:.3g} points, {size / 1e9:.2f} GB, block {args.block} points, "
            f"{args.rounds} round(s); load average {results['load_avg_before'][0]:.1f} before, "
            f"{results['load_avg_after'][0]:.1f} after"
        )
        cols = ["run", "n", "wall_s", "compile_s", "gb_per_s", "vs_floor", "ratio_lo", "ratio_hi"]
        print_table(rows, cols + ["peak_rss_mb"])
        results["stream"] = rows
        results["stream_runs"] = raw
    finally:
        if not args.keep and os.path.exists(path):
            os.remove(path)
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    if args.no_shard:
        if args.json:
            write_json(args.json, results)
        return results
    env = dict(os.environ, JAX_NUM_CPU_DEVICES="4", JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    sh = _spawn(["shard", str(n_shard)], env=env)
    print(f"\n-- shard: {n_shard:.3g} points in memory, CPU devices on {sh['cores']} cores")
    print_table(
        sh["rows"], ["case", "devices", "first_s", "steady_s", "speedup", "equal_to_1_device"]
    )
    results["shard"] = sh
    if args.json:
        write_json(args.json, results)
    return results


if __name__ == "__main__":
    main()
