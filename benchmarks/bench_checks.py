"""Run-time checks (issue 14, item 4): what ``check_overflow`` costs when nothing fails.

Workloads (float64, N = 1e6 points, K = 400 subsets of capacity 256, per-subset mean):

1. ``vmap``: ``jax.vmap`` over K subsets of a function that builds one subset with
   ``isolate`` (traced bounds) and takes its mean, under ``jit``; with ``check_overflow``, with
   the check as it was before this issue (an unconditional ``jax.debug.callback`` of the
   predicate, batched by JAX's own rule), and without any check.
2. ``batched``: the same K subsets from ``(K,)`` bounds in one ``isolate`` call (no ``vmap``).

For each variant: the compile time (``compile()`` of a freshly traced and lowered program,
median of a few, the variants interleaved; tracing and lowering are not included) and the
per-call time (median and best of interleaved rounds of 20 calls). Targets: compile within
1.5x and per call (median) within 1.2x of the same function without the check.

3. ``--widths``: the run-time check of a traced window width (``jax.jit`` of
   ``rolling_statistic(t, y, w, stat)`` with ``w`` an argument, N points on an irregular axis,
   100-unit windows): the program traced with the checks on and with ``JAXSUBSET_CHECKS=off``
   (read at trace time), side by side in one process; trace + compile and per-call times, and
   whether both programs give the same bits.

Run ``python benchmarks/bench_checks.py [--quick] [--widths] [--json PATH]`` or through
``python benchmarks/run.py --only checks``.
"""

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax


jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _harness import print_header, print_table, write_json  # noqa: E402

import jaxsubset  # noqa: E402


def legacy_check_overflow(s: jaxsubset.Subsets) -> jaxsubset.Subsets:
    """The check as it was: a ``jax.debug.callback`` of the predicate on every call."""

    def check(over: np.ndarray) -> None:
        if np.any(over):
            raise ValueError("overflow")

    jax.debug.callback(check, jnp.any(s.overflow))
    return s


CHECKS: dict[str, Callable[[jaxsubset.Subsets], jaxsubset.Subsets]] = {
    "no check": lambda s: s,
    "check_overflow": jaxsubset.check_overflow,
    "before (debug.callback)": legacy_check_overflow,
}


def programs(x: jax.Array, y: jax.Array, capacity: int) -> dict[str, dict[str, Callable]]:
    """``{workload: {variant: function of (lo, hi)}}``, not yet jitted."""

    def per_subset(check: Callable) -> Callable:
        def one(lo: jax.Array, hi: jax.Array) -> jax.Array:
            return check(jaxsubset.isolate(x, y, lo, hi, capacity=capacity)).mean()

        return jax.vmap(one)

    def batched(check: Callable) -> Callable:
        def all_at_once(lo: jax.Array, hi: jax.Array) -> jax.Array:
            return check(jaxsubset.isolate(x, y, lo, hi, capacity=capacity)).mean()

        return all_at_once

    return {
        "vmap": {name: per_subset(c) for name, c in CHECKS.items()},
        "batched": {name: batched(c) for name, c in CHECKS.items()},
    }


def compile_times(
    make: Callable[[], dict[str, Callable]], args: tuple, repeats: int
) -> dict[str, float]:
    """Median ``lower().compile()`` time per variant, interleaved.

    ``make()`` builds new functions each repeat: JAX keeps compiled programs in memory by
    function, so compiling the same function object twice would time a cache hit.
    """
    times: dict[str, list[float]] = {}
    for _ in range(repeats):
        for name, fn in make().items():
            lowered = jax.jit(fn).lower(*args)
            t0 = time.perf_counter()
            lowered.compile()
            times.setdefault(name, []).append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def per_call(
    jitted: dict[str, Callable], args: tuple, rounds: int, calls: int = 20
) -> tuple[dict[str, float], dict[str, float]]:
    """Median and best time (s) per call, in interleaved rounds of ``calls`` calls each.

    A round of one variant issues ``calls`` calls and waits for the last: sub-millisecond
    calls are timed over many, and a change of load lands on every variant of the round.
    """
    for f in jitted.values():
        f(*args).block_until_ready()
    times: dict[str, list[float]] = {name: [] for name in jitted}
    for _ in range(rounds):
        for name, f in jitted.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                out = f(*args)
            out.block_until_ready()
            times[name].append((time.perf_counter() - t0) / calls)
    return (
        {name: statistics.median(t) for name, t in times.items()},
        {name: min(t) for name, t in times.items()},
    )


def run(n: int, k: int, capacity: int, compile_repeats: int, rounds: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    x = jnp.arange(n, dtype=jnp.float64)
    y = jnp.asarray(rng.normal(size=n))
    lo = jnp.asarray(rng.integers(0, n - capacity, k))
    hi = lo + jnp.asarray(rng.integers(capacity // 2, capacity + 1, k))
    args = (lo, hi)
    results: dict[str, Any] = {}
    for workload, fns in programs(x, y, capacity).items():
        comp = compile_times(lambda w=workload: programs(x, y, capacity)[w], args, compile_repeats)
        jitted = {name: jax.jit(fn) for name, fn in fns.items()}
        ref = np.asarray(jitted["no check"](*args))
        for name, f in jitted.items():  # every variant computes the same means
            np.testing.assert_array_equal(np.asarray(f(*args)), ref, err_msg=name)
        calls, best = per_call(jitted, args, rounds)
        rows = []
        for name in fns:
            rows.append(
                {
                    "variant": name,
                    "compile_s": comp[name],
                    "compile_x": comp[name] / comp["no check"],
                    "call_ms": calls[name] * 1e3,
                    "call_x": calls[name] / calls["no check"],
                    "best_ms": best[name] * 1e3,
                    "best_x": best[name] / best["no check"],
                }
            )
        results[workload] = rows
    return results


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for workload, rows in results.items():
        row = next(r for r in rows if r["variant"] == "check_overflow")
        for what, limit in (("compile_x", 1.5), ("call_x", 1.2)):
            out.append(
                {
                    "target": f"{workload}: check_overflow {what} <= {limit}",
                    "value": row[what],
                    "status": "MET" if row[what] <= limit else "MISSED",
                }
            )
    return out


def width_check(n: int, rounds: int) -> list[dict[str, Any]]:
    """Trace + compile and per-call time of ``jit(rolling_statistic)`` with a traced width,
    its run-time check on against ``JAXSUBSET_CHECKS=off``, interleaved in one process."""
    import os

    rng = np.random.default_rng(0)
    t = jnp.asarray(np.cumsum(rng.exponential(1.0, n)))
    y = jnp.asarray(rng.standard_normal(n))
    w = jnp.asarray(100.0)
    before = os.environ.get("JAXSUBSET_CHECKS")
    rows = []
    try:
        for stat in ("mean", "std", "max"):
            progs: dict[str, Any] = {}
            compile_s: dict[str, list[float]] = {"on": [], "off": []}
            for mode in ("off", "on", "off", "on"):
                os.environ["JAXSUBSET_CHECKS"] = mode
                jax.clear_caches()
                f = jax.jit(lambda t, y, w, s=stat: jaxsubset.rolling_statistic(t, y, w, s))
                t0 = time.perf_counter()
                progs[mode] = f.lower(t, y, w).compile()
                compile_s[mode].append(time.perf_counter() - t0)
            calls: dict[str, list[float]] = {"on": [], "off": []}
            for _ in range(rounds):
                for mode in ("off", "on"):
                    jax.block_until_ready(progs[mode](t, y, w))
                    t0 = time.perf_counter()
                    jax.block_until_ready(progs[mode](t, y, w))
                    calls[mode].append(time.perf_counter() - t0)
            same = np.array_equal(
                np.asarray(progs["on"](t, y, w)), np.asarray(progs["off"](t, y, w)), equal_nan=True
            )
            off_c, on_c = statistics.median(compile_s["off"]), statistics.median(compile_s["on"])
            off_r, on_r = statistics.median(calls["off"]), statistics.median(calls["on"])
            rows.append(
                {
                    "statistic": stat,
                    "compile_off_s": round(off_c, 3),
                    "compile_on_s": round(on_c, 3),
                    "compile_x": round(on_c / off_c, 2),
                    "call_off_ms": round(off_r * 1e3, 2),
                    "call_on_ms": round(on_r * 1e3, 2),
                    "call_x": round(on_r / off_r, 2),
                    "same_bits": bool(same),
                }
            )
    finally:
        if before is None:
            os.environ.pop("JAXSUBSET_CHECKS", None)
        else:
            os.environ["JAXSUBSET_CHECKS"] = before
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; print the tables; return ``{"machine", "results", "targets"}``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="N = 1e5, K = 50, fewer repeats")
    p.add_argument("--json", help="also write the results to this JSON file")
    p.add_argument("--widths", action="store_true", help="only the traced-width check")
    a = p.parse_args(argv)
    machine = print_header("bench_checks: check_overflow when nothing fails")
    if a.widths:
        rows = width_check(10**5 if a.quick else 10**6, 3 if a.quick else 7)
        print("\n-- jit(rolling_statistic) with a traced width: its check on / off")
        print_table(rows, list(rows[0]))
        payload = {"machine": machine, "widths": rows}
        if a.json:
            write_json(a.json, payload)
        return payload
    if a.quick:
        results = run(10**5, 50, 256, compile_repeats=1, rounds=3)
    else:
        results = run(10**6, 400, 256, compile_repeats=5, rounds=40)
    for workload, rows in results.items():
        print(f"\n-- {workload} (K subsets, capacity 256)")
        print_table(
            rows, ["variant", "compile_s", "compile_x", "call_ms", "call_x", "best_ms", "best_x"]
        )
    tg = targets(results)
    print()
    print_table(tg, ["target", "value", "status"])
    payload = {"machine": machine, "results": results, "targets": tg}
    if a.json:
        write_json(a.json, payload)
    return payload


if __name__ == "__main__":
    main()
