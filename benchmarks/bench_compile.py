"""Compile time and time to first result (issue 14, items 1 and 3).

Workloads (float64, N = 1e6 points one unit apart, y standard normal):

1. ``compile``: every public function and statistic wrapped in ``jax.jit`` and compiled apart:
   ``jax.jit(f).lower(*args)`` (trace + lowering) and ``.compile()`` timed, the size of the
   compiled program (lines and HLO instructions of ``compiled.as_text()``) and the steady
   run time of the compiled program. ``range_statistic`` over 100 chunk ranges (each of
   count/sum/mean/var/std/min/max/median and all eight together), ``rolling_statistic`` with
   a 100-unit window (mean/std/max/median), ``binned_statistic`` with 100 bins (mean/std/median,
   sorted and shuffled ``x``), ``chunks(x, y, 10).mean()`` and ``select(...).mean()`` over 10
   x-ranges.
2. ``first``: time to first result in a fresh process: a subprocess that builds the data with
   NumPy, imports ``jaxsubset``, makes the first call and ``block_until_ready``-s it; its wall
   time is measured by this process (interpreter start included). Next to it the same
   workload in a fresh process of pandas / SciPy / NumPy, and the ratio.
3. ``cache``: the same fresh processes with ``jaxsubset.enable_compilation_cache(<tmp dir>)``:
   the first process fills the folder, the second loads from it (its wall time is the
   target). Each child counts JAX's ``backend_compile`` events (``programs``: every XLA
   program it needed, eager operations included; a persistent-cache hit records one too) and
   the cache hits, so ``cached_compiled`` = events - hits is what the second process compiled.

4. ``command``: ``jaxsubset stats data.csv --chunks 10 --stat mean,std,min,max,median --out
   out.csv`` on a CSV of N rows (``x,y``) as a fresh process, without the cache
   (``--no-cache``), filling an empty cache and with it; next to it a fresh process of
   ``pandas.read_csv`` + ``groupby`` of the same ten pieces + ``to_csv``.

Targets (issue 14): each first result <= 1 s and <= 3x the peer; with the cache <= 0.3 s;
the command <= 2x pandas.
Each is printed MET or MISSED. The load average (``os.getloadavg()``) before and after is in
the output: on a shared machine it moves every number here.

Run ``python benchmarks/bench_compile.py [--quick] [--json PATH]`` or
``python benchmarks/run.py --only compile``; ``--markdown PATH`` writes the tables.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import jax


jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
from _harness import print_header, print_table, time_steady, write_json  # noqa: E402

import jaxsubset  # noqa: E402


RANGE_STATS = ("count", "sum", "mean", "var", "std", "min", "max", "median")
WIDTH = 100.0  # rolling window, in x units (= points)
N_RANGES, N_BINS, N_CHUNKS, N_SELECT = 100, 100, 10, 10


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return np.arange(n, dtype=np.float64), rng.standard_normal(n)


def _select_bounds(n: int) -> tuple[np.ndarray, np.ndarray, int]:
    lo = np.linspace(0.0, n * 0.9, N_SELECT)
    hi = lo + n * 0.05
    cap = 1 << int(np.ceil(np.log2(n * 0.05 + 1)))
    return lo, hi, cap


# ------------------------------------------------------------------------------ 1. compile
def compile_programs(n: int, quick: bool) -> list[tuple[str, Callable, tuple]]:
    """``(label, function, args)`` for every program compiled apart."""
    x_np, y_np = data(n)
    x, y = jax.numpy.asarray(x_np), jax.numpy.asarray(y_np)
    xs = jax.numpy.asarray(np.random.default_rng(1).permutation(x_np))
    r = jaxsubset.ranges.chunks(x, N_RANGES)
    lo, hi, cap = _select_bounds(n)
    rng_ = (0.0, float(n))
    out: list[tuple[str, Callable, tuple]] = []
    rs = ("mean",) if quick else RANGE_STATS
    for s in rs:
        out.append(
            (f"range_statistic {s}", lambda y, r, s=s: jaxsubset.range_statistic(y, r, s), (y, r))
        )
    out.append(
        ("range_statistic all 8", lambda y, r: jaxsubset.range_statistic(y, r, RANGE_STATS), (y, r))
    )
    for s in ("mean",) if quick else ("mean", "std", "max", "median"):
        cap_w = 128 if s == "median" else None
        out.append(
            (
                f"rolling_statistic {s}",
                lambda x, y, s=s, c=cap_w: jaxsubset.rolling_statistic(x, y, WIDTH, s, capacity=c),
                (x, y),
            )
        )
    for sorted_ in (True,) if quick else (True, False):
        for s in ("mean",) if quick else ("mean", "std", "median"):
            label = f"binned_statistic {s} ({'sorted' if sorted_ else 'unsorted'} x)"
            out.append(
                (
                    label,
                    lambda x, y, s=s, o=sorted_: (
                        jaxsubset.binned_statistic(
                            x, y, s, bins=N_BINS, range=rng_, x_sorted=o
                        ).statistic
                    ),
                    (x if sorted_ else xs, y),
                )
            )
    out.append(
        ("chunks(x, y, 10).mean()", lambda x, y: jaxsubset.chunks(x, y, N_CHUNKS).mean(), (x, y))
    )
    out.append(
        (
            "select(x, y, lo, hi).mean()",
            lambda x, y, lo, hi: jaxsubset.select(x, y, lo, hi, capacity=cap).mean(),
            (x, y, jax.numpy.asarray(lo), jax.numpy.asarray(hi)),
        )
    )
    return out


_HLO_OP = re.compile(r"^\s*(ROOT\s+)?%?[\w.\-]+\s*=\s*\S")


def run_compile(n: int, quick: bool) -> list[dict[str, Any]]:
    rows = []
    for label, fn, args in compile_programs(n, quick):
        f = jax.jit(fn)
        t0 = time.perf_counter()
        lowered = f.lower(*args)
        t1 = time.perf_counter()
        compiled = lowered.compile()
        t2 = time.perf_counter()
        text = compiled.as_text()
        ops = sum(bool(_HLO_OP.match(ln)) for ln in text.splitlines())
        t3 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        run_s = time.perf_counter() - t3
        if run_s < 1.0:  # a slow program is timed once (the full run stays within minutes)
            run_s = time_steady(lambda c=compiled, a=args: c(*a), repeats=3, warmup=0)
        rows.append(
            {
                "program": label,
                "lower_s": t1 - t0,
                "compile_s": t2 - t1,
                "hlo_lines": len(text.splitlines()),
                "hlo_ops": ops,
                "run_ms": run_s * 1e3,
            }
        )
        r = rows[-1]
        print(
            f"   {label:<42} lower {r['lower_s']:6.2f} s  compile {r['compile_s']:6.2f} s  "
            f"{ops:5d} ops  {r['hlo_lines']:5d} lines  run {r['run_ms']:8.2f} ms",
            flush=True,
        )
    return rows


# ------------------------------------------------------------------ 4. compiler options
#: option sets compared by ``--options``: XLA DebugOptions passed per program
#: (``lowered.compile(options)``), none of which changes what is computed beyond the
#: multiply-add contraction tests/test_optimization_level.py allows
OPTION_SETS: dict[str, dict[str, Any]] = {
    "default": {},
    "loop emitters": {"xla_cpu_use_fusion_emitters": False},
    "loop + no expensive LLVM passes": {
        "xla_cpu_use_fusion_emitters": False,
        "xla_llvm_disable_expensive_passes": True,
    },
    "no expensive LLVM passes": {"xla_llvm_disable_expensive_passes": True},
    "loop + backend level 2": {
        "xla_cpu_use_fusion_emitters": False,
        "xla_backend_optimization_level": 2,
    },
}


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def run_options(
    n: int,
    quick: bool,
    names: tuple[str, ...],
    rounds: int,
    calls: int,
    only: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Compile and steady run time of every program under each option set, side by side.

    Per program, ``rounds`` rounds; in each, every option set (in a rotated order) compiles
    the program afresh (``jax.clear_caches()`` first: no in-memory executable is reused), then
    the compiled programs run ``calls`` times interleaved (one call of each per turn, after one
    warm-up call each), so a change of load lands on every set alike. Reported: medians of
    wall and CPU (``time.process_time``: every thread of this process) seconds.
    """
    import statistics

    sets = {k: OPTION_SETS[k] for k in names}
    rows = []
    for label, fn, args in compile_programs(n, quick):
        if only and not any(label.startswith(o) for o in only):
            continue
        comp: dict[str, list[tuple[float, float]]] = {k: [] for k in sets}
        run: dict[str, list[tuple[float, float]]] = {k: [] for k in sets}
        outs: dict[str, Any] = {}
        for r in range(rounds):
            order = list(sets)[r % len(sets) :] + list(sets)[: r % len(sets)]
            exe = {}
            for k in order:
                jax.clear_caches()
                lowered = jax.jit(fn).lower(*args)
                w0, c0 = _clock()
                exe[k] = lowered.compile(sets[k])
                w1, c1 = _clock()
                comp[k].append((w1 - w0, c1 - c0))
            for k in order:
                outs[k] = jax.block_until_ready(exe[k](*args))  # warm-up
            slow = False
            for _ in range(calls):
                for k in order:
                    w0, c0 = _clock()
                    jax.block_until_ready(exe[k](*args))
                    w1, c1 = _clock()
                    run[k].append((w1 - w0, c1 - c0))
                    slow = slow or w1 - w0 > 2.0
                if slow:  # a slow program (seconds a call) is timed fewer times
                    break
        ref = jax.tree_util.tree_leaves(outs["default"]) if "default" in outs else None
        for k in sets:
            row = {
                "program": label,
                "options": k,
                "compile_s": statistics.median(t[0] for t in comp[k]),
                "compile_cpu_s": statistics.median(t[1] for t in comp[k]),
                "run_ms": 1e3 * statistics.median(t[0] for t in run[k]),
                "run_cpu_ms": 1e3 * statistics.median(t[1] for t in run[k]),
            }
            if ref is not None:
                got = jax.tree_util.tree_leaves(outs[k])
                row["same_bits"] = all(
                    np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
                    for a, b in zip(ref, got, strict=True)
                )
            rows.append(row)
            print(
                f"   {label:<38} {k:<34} compile {row['compile_s']:5.2f} s "
                f"(cpu {row['compile_cpu_s']:5.2f})  run {row['run_ms']:8.2f} ms "
                f"(cpu {row['run_cpu_ms']:8.2f})  same bits: {row.get('same_bits')}",
                flush=True,
            )
    return rows


# ------------------------------------------------------------------- 2./3. fresh processes
_SETUP = """
import time, json, os, sys
T0 = time.perf_counter()
import numpy as np
N = {n}
rng = np.random.default_rng(0)
x = np.arange(N, dtype=np.float64)
y = rng.standard_normal(N)
lo = np.linspace(0.0, N * 0.9, {k_select}); hi = lo + N * 0.05
T1 = time.perf_counter()
"""

_JAX = """
import jax
compiles, hits = [], []
def _listen(event, duration, **kw):
    if event == "/jax/core/compile/backend_compile_duration":
        compiles.append(kw.get("fun_name"))
jax.monitoring.register_event_duration_secs_listener(_listen)
jax.monitoring.register_event_listener(
    lambda event, **kw: hits.append(1) if event == "/jax/compilation_cache/cache_hits" else None
)
import jaxsubset
if {cache!r}:
    jaxsubset.enable_compilation_cache({cache!r})
T2 = time.perf_counter()
out = {call}
jax.block_until_ready(out)
T3 = time.perf_counter()
print(json.dumps(dict(data_s=T1 - T0, import_s=T2 - T1, call_s=T3 - T2,
                      compiles=len(compiles), cache_hits=len(hits))))
"""

_PEER = """
{imports}
T2 = time.perf_counter()
out = {call}
T3 = time.perf_counter()
print(json.dumps(dict(data_s=T1 - T0, import_s=T2 - T1, call_s=T3 - T2)))
"""

_CHUNK_LOOP = "np.array([c.{s}() for c in np.array_split(y, {k})])"
_RANGE_LOOP = (
    "np.array([y[a:a + c].{s}() for a, c in zip(np.arange({k}) * (N // {k}), [N // {k}] * {k})])"
)
_PD = "import pandas as pd"
_PD_ROLL = 'pd.Series(y, index=pd.to_datetime(x, unit="s")).rolling("{w}s").{s}({a})'
_SP_BIN = "scipy.stats.binned_statistic(x, y, {s!r}, bins={b}, range=(0.0, float(N))).statistic"

#: name -> (jaxsubset call, peer imports, peer call, peer name); ``rolling`` widths in x units
WORKLOADS: dict[str, tuple[str, str, str, str]] = {
    "chunks(x, y, 10).mean()": (
        f"jaxsubset.chunks(x, y, {N_CHUNKS}).mean()",
        "",
        _CHUNK_LOOP.format(s="mean", k=N_CHUNKS),
        "NumPy array_split",
    ),
    "select(x, y, lo, hi).mean()": (
        "jaxsubset.select(x, y, lo, hi, capacity=1 << int(np.ceil(np.log2(N * 0.05 + 1)))).mean()",
        "",
        "np.array([y[a:b].mean() for a, b in zip(np.searchsorted(x, lo), np.searchsorted(x, hi))])",
        "NumPy searchsorted",
    ),
    **{
        f"binned_statistic {s}": (
            f"jaxsubset.binned_statistic(x, y, {s!r}, bins={N_BINS}, range=(0.0, float(N)))",
            "import scipy.stats",
            _SP_BIN.format(s=s, b=N_BINS),
            "SciPy binned_statistic",
        )
        for s in ("mean", "std", "median")
    },
    **{
        f"range_statistic {s}": (
            f"jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(x, {N_RANGES}), {s!r})",
            "",
            _RANGE_LOOP.format(s=s, k=N_RANGES),
            "NumPy slices",
        )
        for s in ("mean", "std", "max")
    },
    **{
        f"rolling_statistic {s}": (
            f"jaxsubset.rolling_statistic(x, y, {WIDTH}, {s!r})",
            _PD,
            _PD_ROLL.format(w=int(WIDTH), s=s, a="ddof=0" if s == "std" else ""),
            "pandas rolling",
        )
        for s in ("mean", "std", "max", "median")
    },
}
QUICK_WORKLOADS = ("chunks(x, y, 10).mean()", "rolling_statistic mean")


def _fresh(code: str, env: dict[str, str]) -> dict[str, Any]:
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"fresh process failed:\n{p.stderr[-3000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["wall_s"] = wall
    return out


def run_first(n: int, names: tuple[str, ...], tmp: str) -> list[dict[str, Any]]:
    env = dict(os.environ, JAX_ENABLE_X64="1")
    for var in ("JAX_COMPILATION_CACHE_DIR", "JAXSUBSET_CACHE_DIR"):
        env.pop(var, None)
    setup = _SETUP.format(n=n, k_select=N_SELECT)
    rows = []
    for name in names:
        call, imports, peer_call, peer = WORKLOADS[name]
        ours = _fresh(setup + _JAX.format(cache="", call=call), env)
        theirs = _fresh(setup + _PEER.format(imports=imports, call=peer_call), env)
        folder = tempfile.mkdtemp(prefix="cache-", dir=tmp)
        cold = _fresh(setup + _JAX.format(cache=folder, call=call), env)
        warm = _fresh(setup + _JAX.format(cache=folder, call=call), env)
        row = {
            "workload": name,
            "first_s": ours["wall_s"],
            "import_s": ours["import_s"],
            "call_s": ours["call_s"],
            "programs": ours["compiles"],
            "peer": peer,
            "peer_s": theirs["wall_s"],
            "x_peer": ours["wall_s"] / theirs["wall_s"],
            "cache_fill_s": cold["wall_s"],
            "cached_s": warm["wall_s"],
            "cached_call_s": warm["call_s"],
            "cached_compiled": warm["compiles"] - warm["cache_hits"],
            "cache_hits": warm["cache_hits"],
        }
        rows.append(row)
        print(
            f"   {name:<30} first {row['first_s']:5.2f} s ({row['programs']} programs; import "
            f"{row['import_s']:.2f}, call "
            f"{row['call_s']:.2f})  {peer} {row['peer_s']:5.2f} s  x{row['x_peer']:.1f}  "
            f"cache: fill {row['cache_fill_s']:.2f} s, second {row['cached_s']:.2f} s "
            f"({row['cached_compiled']} compiled, {row['cache_hits']} loaded)",
            flush=True,
        )
    return rows


_PD_CSV = """
import sys, time
T0 = time.perf_counter()
import numpy as np, pandas as pd
d = pd.read_csv(sys.argv[1])
piece = np.repeat(np.arange({k}), [len(a) for a in np.array_split(np.arange(len(d)), {k})])
t = d.groupby(piece)["y"].agg(["mean", lambda v: v.std(ddof=0), "min", "max", "median"])
t.to_csv(sys.argv[2])
"""


def run_command(n: int, tmp: str) -> list[dict[str, Any]]:
    """The command on an N-row CSV in fresh processes, against pandas doing the same."""
    x, y = data(n)
    path = os.path.join(tmp, "data.csv")
    np.savetxt(path, np.column_stack([x, y]), delimiter=",", header="x,y", comments="", fmt="%.17g")
    env = dict(os.environ)
    for var in ("JAX_ENABLE_X64", "JAX_COMPILATION_CACHE_DIR", "JAXSUBSET_NO_CACHE"):
        env.pop(var, None)
    env["JAXSUBSET_CACHE_DIR"] = tempfile.mkdtemp(prefix="cmd-cache-", dir=tmp)
    stats = "mean,std,min,max,median"
    argv = [sys.executable, "-m", "jaxsubset", "stats", path, "--chunks", str(N_CHUNKS)]
    argv += ["--stat", stats, "--quiet", "--out"]

    def wall(cmd: list[str]) -> float:
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"{cmd[:4]} failed:\n{p.stderr[-3000:]}")
        return time.perf_counter() - t0

    out = os.path.join(tmp, "out.csv")
    pandas = [sys.executable, "-c", _PD_CSV.format(k=N_CHUNKS), path, out]
    row = {
        "workload": f"jaxsubset stats --chunks {N_CHUNKS} (CSV, {n} rows)",
        "no_cache_s": wall([*argv, out, "--no-cache"]),
        "pandas_s": wall(pandas),
        "cache_fill_s": wall([*argv, out]),
        "cached_s": wall([*argv, out]),
    }
    row["x_pandas"] = row["no_cache_s"] / row["pandas_s"]
    row["cached_x_pandas"] = row["cached_s"] / row["pandas_s"]
    print(
        f"   {row['workload']}: {row['no_cache_s']:.2f} s without the cache, "
        f"{row['cache_fill_s']:.2f} s filling it, {row['cached_s']:.2f} s with it; pandas "
        f"{row['pandas_s']:.2f} s (x{row['x_pandas']:.1f}, cached x{row['cached_x_pandas']:.1f})",
        flush=True,
    )
    return [row]


def targets(first: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in first:
        for label, value, ok in (
            ("first <= 1 s", f"{r['first_s']:.2f} s", r["first_s"] <= 1.0),
            ("<= 3x peer", f"{r['x_peer']:.1f}x", r["x_peer"] <= 3.0),
            ("cached <= 0.3 s", f"{r['cached_s']:.2f} s", r["cached_s"] <= 0.3),
        ):
            out.append(
                {
                    "workload": r["workload"],
                    "target": label,
                    "value": value,
                    "status": "MET" if ok else "MISSED",
                }
            )
    return out


def markdown(payload: dict[str, Any]) -> str:
    def table(rows: list[dict[str, Any]], cols: list[str]) -> str:
        def f(v: Any) -> str:
            return f"{v:.3g}" if isinstance(v, float) else str(v)

        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(f(r[c]) for c in cols) + " |" for r in rows]
        return "\n".join(lines)

    res = payload["results"]
    return "\n\n".join(
        [
            table(
                res["compile"],
                ["program", "lower_s", "compile_s", "hlo_ops", "hlo_lines", "run_ms"],
            ),
            table(
                res["first"],
                [
                    "workload",
                    "first_s",
                    "import_s",
                    "call_s",
                    "peer",
                    "peer_s",
                    "x_peer",
                    "cache_fill_s",
                    "cached_s",
                    "programs",
                    "cached_compiled",
                    "cache_hits",
                ],
            ),
            table(
                res.get("command", []),
                [
                    "workload",
                    "no_cache_s",
                    "cache_fill_s",
                    "cached_s",
                    "pandas_s",
                    "x_pandas",
                    "cached_x_pandas",
                ],
            ),
        ]
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; print the tables; return ``{"machine", "results", "targets"}``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="N = 1e5, one program per function")
    p.add_argument("--json", help="also write the results to this JSON file")
    p.add_argument("--markdown", help="also write the tables as Markdown to this file")
    p.add_argument("--no-fresh", action="store_true", help="skip fresh processes (command too)")
    p.add_argument("--no-compile", action="store_true", help="skip the compile-time table")
    p.add_argument("--no-command", action="store_true", help="skip the command on a CSV")
    p.add_argument(
        "--options",
        nargs="*",
        choices=tuple(OPTION_SETS),
        help="instead: compare compile and run time under these compiler option sets "
        "(no names: all of them)",
    )
    p.add_argument("--only", nargs="*", help="--options: only programs starting with these")
    p.add_argument("--rounds", type=int, default=3, help="--options: rounds per program")
    p.add_argument("--calls", type=int, default=5, help="--options: timed calls per round")
    a = p.parse_args(argv)
    if a.options is not None:
        return main_options(a)
    machine = print_header("bench_compile: compile time and time to first result")
    machine["load_avg_before"] = os.getloadavg()
    print(f"   load average before: {machine['load_avg_before']}")
    n = 10**5 if a.quick else 10**6
    print(f"\n-- compile (N = {n}): jax.jit(f).lower(...) and .compile(), program size, run time")
    compiled = [] if a.no_compile else run_compile(n, a.quick)
    results: dict[str, Any] = {"n": n, "compile": compiled, "first": []}
    if not a.no_fresh:
        print(f"\n-- first result in a fresh process (N = {n}); cache: a second process")
        names = QUICK_WORKLOADS if a.quick else tuple(WORKLOADS)
        with tempfile.TemporaryDirectory() as tmp:
            results["first"] = run_first(n, names, tmp)
    results["command"] = []
    if not (a.no_command or a.no_fresh):  # the command runs as fresh processes too
        print(f"\n-- the command on a CSV of N = {n} rows, fresh processes")
        with tempfile.TemporaryDirectory() as tmp:
            results["command"] = run_command(n, tmp)
    machine["load_avg_after"] = os.getloadavg()
    print(f"\n   load average after: {machine['load_avg_after']}")
    tg = targets(results["first"])
    for r in results["command"]:
        ok = r["x_pandas"] <= 2.0
        tg.append(
            {
                "workload": r["workload"],
                "target": "<= 2x pandas",
                "value": f"{r['x_pandas']:.1f}x",
                "status": "MET" if ok else "MISSED",
            }
        )
    if tg:
        print()
        print_table(tg, ["workload", "target", "value", "status"])
    payload = {"machine": machine, "results": results, "targets": tg}
    if a.json:
        write_json(a.json, payload)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(markdown(payload) + "\n")
    return payload


def main_options(a: argparse.Namespace) -> dict[str, Any]:
    machine = print_header("bench_compile --options: compile and run time per option set")
    machine["load_avg_before"] = os.getloadavg()
    print(f"   load average before: {machine['load_avg_before']}")
    n = 10**5 if a.quick else 10**6
    names = tuple(a.options) or tuple(OPTION_SETS)
    rows = run_options(n, a.quick, names, a.rounds, a.calls, a.only)
    machine["load_avg_after"] = os.getloadavg()
    print(f"\n   load average after: {machine['load_avg_after']}")
    payload = {"machine": machine, "results": {"n": n, "options": rows}}
    if a.json:
        write_json(a.json, payload)
    return payload


if __name__ == "__main__":
    main()
