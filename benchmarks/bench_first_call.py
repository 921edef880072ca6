"""First call of each native-road statistic (issue 27): trace + compile + run, fresh process.

Issue 27's target: the first call of each statistic in a fresh ``jax.jit`` at 1e6 points takes
at most 0.2 s after import. Every workload runs in its OWN Python process (so no JAX cache, no
traced helper and no registered kernel carries over from another workload): the child imports
jax and jaxsubset, builds its data (float64, ``jax_enable_x64``) and one warm-up array op
outside the clock, then times ``jax.jit(f)(...)`` up to ``block_until_ready`` (the native
kernels' registration, the road choice, tracing, lowering, XLA's compile and the run).

Workloads (N points, default 10**6):

- ``fixed``: ``rolling_statistic(None, y, window=100)`` (fixed-count windows) and
  ``window_statistic(y, 100)``;
- ``xwidth``: ``rolling_statistic(x, y, 100.0, capacity=512)`` on an irregular float64 axis
  (exponential gaps of mean 1: ~100 points a window);
- ``bins``: ``binned_statistic(x, y, s, edges)`` over 1000 bins, sorted and unsorted x;
- ``chunks``: ``range_statistic(y, ranges.chunks(x, 1000), ("mean", "std", "max"))``;
- ``ewm``: ``ewm_statistic(t, y, 50.0, "mean")``.

With ``--stages`` each child also reports the stages apart through JAX's ahead-of-time API in
a second fresh process (``trace``, ``lower``, ``compile``, ``run``).

Run ``python benchmarks/bench_first_call.py [--n N] [--only fixed xwidth ...] [--stages]
[--json PATH]``; ``--quick`` runs 10**4 points (a smoke test).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any


TARGET_S = 0.2
STATS4 = ("mean", "std", "max", "median")


def workloads() -> dict[str, tuple[str, str]]:
    """``{name: (group, statistic)}`` of every first-call workload."""
    out: dict[str, tuple[str, str]] = {}
    for s in STATS4:
        out[f"rolling fixed w=100 {s}"] = ("fixed", s)
    for s in ("mean", "median"):
        out[f"window_statistic w=100 {s}"] = ("window", s)
    for s in STATS4:
        out[f"x-width ~100 pts {s}"] = ("xwidth", s)
    for order in ("sorted", "unsorted"):
        for s in STATS4:
            out[f"1000 bins {order} {s}"] = (f"bins-{order}", s)
    out["1000 chunks mean+std+max"] = ("chunks", "mean+std+max")
    out["ewm halflife 50 mean"] = ("ewm", "mean")
    return out


def _make(group: str, stat: str, n: int) -> tuple[Any, tuple[Any, ...]]:
    """The function to ``jit`` and its arguments (built outside the clock)."""
    import jax.numpy as jnp
    import numpy as np

    import jaxsubset

    # the public functions bound here, outside the clock ("after import": the package's
    # modules load lazily, on first access of a name)
    rolling, window, binned = (
        jaxsubset.rolling_statistic,
        jaxsubset.window_statistic,
        jaxsubset.binned_statistic,
    )
    ranged, ewm = jaxsubset.range_statistic, jaxsubset.ewm_statistic
    chunks = jaxsubset.ranges.chunks
    rng = np.random.default_rng(0)
    y = jnp.asarray(rng.normal(size=n))
    if group == "fixed":
        return (lambda y: rolling(None, y, window=100, statistic=stat)), (y,)
    if group == "window":
        return (lambda y: window(y, 100, stat)), (y,)
    if group == "xwidth":
        x = jnp.asarray(np.cumsum(rng.exponential(1.0, n)))
        return (lambda x, y: rolling(x, y, 100.0, stat, capacity=512)), (x, y)
    if group.startswith("bins-"):
        xs = rng.uniform(0.0, 1.0, n)
        srt = group == "bins-sorted"
        if srt:
            xs.sort()
        edges = jnp.asarray(np.linspace(0.0, 1.0, 1001))
        return (lambda x, y: binned(x, y, stat, edges, x_sorted=srt).statistic), (
            jnp.asarray(xs),
            y,
        )
    if group == "chunks":
        r = chunks(jnp.arange(n, dtype=jnp.float32), 1000)
        return (lambda y: ranged(y, r, ("mean", "std", "max"))), (y,)
    if group == "ewm":
        t = jnp.asarray(np.cumsum(rng.exponential(1.0, n)))
        return (lambda t, y: ewm(t, y, 50.0, stat)), (t, y)
    raise ValueError(f"unknown workload group {group!r}")


def child(name: str, n: int, stages: bool) -> dict[str, Any]:
    """Run one workload's first call in this (fresh) process."""
    import jax

    jax.config.update("jax_enable_x64", True)
    group, stat = workloads()[name]
    fn, args = _make(group, stat, n)
    jax.block_until_ready(args)
    import jax.numpy as jnp

    jnp.zeros(3).block_until_ready()  # the backend up, outside the clock
    f = jax.jit(fn)
    out: dict[str, Any] = {"name": name}
    if stages:
        t0 = time.perf_counter()
        traced = f.trace(*args)
        t1 = time.perf_counter()
        lowered = traced.lower()
        t2 = time.perf_counter()
        compiled = lowered.compile()
        t3 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        t4 = time.perf_counter()
        out.update(trace=t1 - t0, lower=t2 - t1, compile=t3 - t2, run=t4 - t3)
        out["first"] = t4 - t0
    else:
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        out["first"] = time.perf_counter() - t0
    return out


def _spawn(name: str, n: int, stages: bool) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", name, "--n", str(n)] + (["--stages"] * stages)
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        return {"name": name, "error": res.stderr.strip().splitlines()[-1:]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10**4 points (smoke test)")
    parser.add_argument("--n", type=int, help="points (default 10**6)")
    parser.add_argument("--only", nargs="*", default=None,
                        help="workload groups: fixed window xwidth bins chunks ewm")  # fmt: skip
    parser.add_argument("--stages", action="store_true",
                        help="also the stages apart (a second fresh process)")  # fmt: skip
    parser.add_argument("--json", help="write the rows (and the header) to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    n = args.n or (10**4 if args.quick else 10**6)
    if args.child:
        print(json.dumps(child(args.child, n, args.stages)))
        return []

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _harness import print_header, write_json

    import jaxsubset._native

    info = print_header(f"first call per fresh process (issue 27), N={n}")
    print(f"   native: {jaxsubset._native.status()}")
    print(f"   load average: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print(f"   target: first call <= {TARGET_S} s\n")
    rows: list[dict] = []
    head = f"   {'workload':<34} {'first s':>8}  {'ok':<4}"
    if args.stages:
        head += f" {'trace':>7} {'lower':>7} {'compile':>7} {'run':>7}"
    print(head)
    for name, (group, _) in workloads().items():
        if args.only is not None and not any(group.startswith(g) for g in args.only):
            continue
        row = _spawn(name, n, False)
        if args.stages and "error" not in row:
            st = _spawn(name, n, True)
            row.update({k: st.get(k) for k in ("trace", "lower", "compile", "run")})
        rows.append(row)
        if "error" in row:
            print(f"   {name:<34} error: {row['error']}", flush=True)
            continue
        ok = "yes" if row["first"] <= TARGET_S else "NO"
        line = f"   {name:<34} {row['first']:8.3f}  {ok:<4}"
        if args.stages:
            line += "".join(f" {row[k]:7.3f}" for k in ("trace", "lower", "compile", "run"))
        print(line, flush=True)
    print(f"\n   load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    if args.json:
        write_json(args.json, {"header": info, "rows": rows})
    return rows


if __name__ == "__main__":
    main()
