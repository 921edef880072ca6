"""Core engine benchmarks (issue 6): jaxsubset against every way users solve this today.

Workloads (float64, ``N`` = 1e5, 1e6, 1e7 points, ``K`` = 5, 100, 1000 subsets):

1. ``chunks``: equal chunks, per-chunk mean/std/max. jaxsubset (``chunks`` + ``Subsets``
   reductions under ``jit``; and ``range_statistic``, the O(N) road, when it exists) against
   (a) the non-jitted Python loop that finds the bounds with ``isclose``/``where`` and slices,
   (b) ``jit`` with the bounds as static arguments (one compilation per chunk), (c) full-length
   masking under ``jit``, (d) NumPy ``reshape`` and ``reduceat``, and (e) the floor: one
   ``np.sum`` pass over ``y`` in the same run. A hand-written ``reshape`` under ``jit`` is
   shown as a reference, and the general ``ranges.chunks`` + ``gather`` road beside
   ``chunks``' own reshape path.
2. ``xrange``: K x-range subsets of capacity L = 1024 at random positions (``select``) against
   full-length masking and NumPy ``searchsorted`` + slicing in a Python loop; the floor is one
   ``np.sum`` over K*L contiguous elements.
3. ``sliding``: windows of 256 points every 64 with a linear fit per window: ``apply`` with
   ``vmap`` and with ``lax.map(batch_size=)`` against NumPy ``sliding_window_view`` (and the
   general ``ranges.sliding`` + ``gather`` road beside ``sliding``'s full-window path).
4. ``compile``: a sweep over 1000 different bounds of one capacity: number of compilations
   (must be exactly 1) and time to first result, against static bounds.

Baselines whose cost grows with K compilations or with N*K work are timed on the first few
subsets and extrapolated linearly to all K; the table marks those rows ``extrapolated from m/K``.

The methods compared in one table are timed in interleaved rounds (:func:`side_by_side`), so
that the load of a shared machine falls on all of them alike.

Run ``python benchmarks/bench_core.py [--quick] [--only WORKLOAD] [--json PATH] [--markdown
PATH] [--bandwidth-gbs B]`` or, with every other benchmark, ``python benchmarks/run.py``.
"""

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax


jax.config.update("jax_enable_x64", True)  # the workloads are float64, as users' data is

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _harness import (  # noqa: E402
    block,
    print_header,
    print_table,
    time_first,
    time_steady,
    write_json,
)

import jaxsubset  # noqa: E402


FULL = dict(
    ns=(10**5, 10**6, 10**7),
    ks=(5, 100, 1000),
    repeats=5,
    sweep=1000,
    budget_s=1.5,
    range_statistic=True,
)
# --quick: seconds, for the smoke test; range_statistic's compile time is left to full runs.
QUICK = dict(ns=(10**5,), ks=(5, 100), repeats=3, sweep=100, budget_s=0.2, range_statistic=False)
CAPACITY = 1024  # workload 2's subset capacity
WIDTH = 1000.0  # workload 2's x-width: 1000 +- 1 points of a jittered unit grid, under CAPACITY
WINDOW, STEP, BATCH = 256, 64, 1024  # workload 3
COLUMNS = ["N", "K", "method", "steady_s", "x_floor", "compile_s", "compiles", "GB_s", "note"]


# ------------------------------------------------------------------------------- helpers
class CompileCounter:
    """Counts XLA backend compilations while active (``jax.monitoring`` events)."""

    EVENT = "/jax/core/compile/backend_compile_duration"

    def __init__(self) -> None:
        self.count = 0

    def _listener(self, event: str, duration: float, **kwargs: Any) -> None:
        if event == self.EVENT:
            self.count += 1

    def __enter__(self) -> "CompileCounter":
        jax.monitoring.register_event_duration_secs_listener(self._listener)
        return self

    def __exit__(self, *exc: Any) -> None:
        jax.monitoring.unregister_event_duration_listener(self._listener)


def extrapolate(step: Callable[[int], Any], k: int, budget_s: float) -> tuple[float, int]:
    """Run ``step(0), step(1), ...`` until ``budget_s`` is spent or all ``k`` ran.

    Returns the time extrapolated linearly to all ``k`` steps and how many steps ran.
    """
    t0 = time.perf_counter()
    m = 0
    while m < k:
        block(step(m))
        m += 1
        if time.perf_counter() - t0 > budget_s:
            break
    return (time.perf_counter() - t0) * k / m, m


def stats3(s: jaxsubset.Subsets) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Per-subset mean, std and max, through the public Subsets reductions."""
    return s.mean(), s.std(), s.max()


def range_statistic_fn(ranges: Callable[..., Any]) -> Callable[..., Any] | None:
    """``jit(range_statistic(y, ranges(x, *bounds), (mean, std, max)))``, the O(N) road.

    ``None`` when this jaxsubset has no ``range_statistic`` (it came with the statistics).
    """
    range_statistic = getattr(jaxsubset, "range_statistic", None)
    if range_statistic is None:
        return None

    @jax.jit
    def f(x: jax.Array, y: jax.Array, *bounds: jax.Array) -> Any:
        out = range_statistic(y, ranges(x, *bounds), ("mean", "std", "max"))
        return out["mean"], out["std"], out["max"]

    return f


def seg_stats(seg: Any) -> tuple[Any, Any, Any]:
    """mean, std and max of one slice (NumPy or JAX, eager or traced), as users write it."""
    return seg.mean(), seg.std(), seg.max()


def side_by_side(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, dict[str, Any]]:
    """Time several methods in interleaved rounds; the median of each.

    The machine may be shared: timing method after method lets a change of load land on one of
    them, while rounds of one call each put every method under the same conditions. The first
    call of each is timed apart (compilation + one run) and its XLA compilations counted.
    """
    first, compiles, times = {}, {}, {name: [] for name in fns}
    for name, fn in fns.items():
        with CompileCounter() as cc:
            first[name] = time_first(fn)
        compiles[name] = cc.count
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            block(fn())
            times[name].append(time.perf_counter() - t0)
    out = {}
    for name in fns:
        steady = statistics.median(times[name])
        out[name] = dict(steady_s=steady, best_s=min(times[name]))
        if compiles[name]:  # a jitted method: compile time and count
            out[name].update(compile_s=max(first[name] - steady, 0.0), compiles=compiles[name])
    return out


def jit_timed(fn: Callable[[], Any], repeats: int) -> dict[str, Any]:
    """Compile time (first call minus a steady call), steady time and compilation count."""
    with CompileCounter() as cc:
        first = time_first(fn)
    steady = time_steady(fn, repeats=repeats, warmup=0)
    return dict(steady_s=steady, compile_s=max(first - steady, 0.0), compiles=cc.count)


def masked_stats(v: jax.Array, inside: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """mean/std/max of ``v`` where ``inside``: the full-length masking users write under jit."""
    n = jnp.sum(inside)
    mu = jnp.sum(jnp.where(inside, v, 0.0)) / n
    var = jnp.sum(jnp.where(inside, (v - mu) ** 2, 0.0)) / n
    return mu, jnp.sqrt(var), jnp.max(jnp.where(inside, v, -jnp.inf))


def finish(rows: list[dict[str, Any]], floor_s: float, bandwidth: float | None, nbytes: int):
    """Fill the ratio to the floor and the throughput of every row."""
    best_floor = rows[0].get("best_s", floor_s)
    for r in rows:
        r["x_floor"] = r["steady_s"] / floor_s
        if "best_s" in r:  # the least-disturbed round of each, for a loaded machine
            r["x_floor_best"] = r["best_s"] / best_floor
        gbs = nbytes / r["steady_s"] / 1e9
        r["GB_s"] = gbs
        if bandwidth:
            r["pct_peak"] = 100 * gbs / bandwidth


# ------------------------------------------------------------------------------- workload 1
def workload_chunks(n: int, k: int, cfg: dict[str, Any], bandwidth: float | None) -> list[dict]:
    rng = np.random.default_rng(0)
    dx = 1e-3
    x_np = np.arange(n) * dx
    y_np = rng.standard_normal(n)
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)
    size = n // k
    rep, budget = cfg["repeats"], cfg["budget_s"]
    rows: list[dict[str, Any]] = []

    def row(method: str, **kw: Any) -> None:
        rows.append(dict(workload="chunks", N=n, K=k, method=method, **kw))

    f = jax.jit(lambda x, y: stats3(jaxsubset.chunks(x, y, k)))
    # The general path (what chunks did before its reshape path): ranges + one gather.
    fg = jax.jit(lambda x, y: stats3(jaxsubset.gather(x, y, jaxsubset.ranges.chunks(x, k))))
    g = range_statistic_fn(lambda x, *_: jaxsubset.ranges.chunks(x, k))
    h = jax.jit(lambda y: (lambda r: (r.mean(1), r.std(1), r.max(1)))(y.reshape(k, size)))
    bounds = np.arange(0, n, size)
    counts = np.full(k, size)

    def reduceat() -> Any:
        mu = np.add.reduceat(y_np, bounds) / counts
        dev = y_np - np.repeat(mu, counts)
        sd = np.sqrt(np.add.reduceat(dev * dev, bounds) / counts)
        return mu, sd, np.maximum.reduceat(y_np, bounds)

    fns = {
        "floor: np.sum(y)": lambda: np.sum(y_np),
        "jaxsubset chunks+mean/std/max": lambda: f(x, y),
        "jaxsubset ranges.chunks+gather": lambda: fg(x, y),
        "jaxsubset range_statistic (O(N))": lambda: g(x, y),
        "ref: jit reshape by hand": lambda: h(y),
        "(d) numpy reshape": lambda: np_stats_rows(y_np.reshape(k, size)),
        "(d) numpy reduceat": reduceat,
    }
    if g is None or not cfg["range_statistic"]:
        del fns["jaxsubset range_statistic (O(N))"]
    for name, res in side_by_side(fns, max(rep, 9)).items():
        row(name, **res)
    floor = rows[0]["steady_s"]

    # (a) the non-jitted Python loop: bounds by isclose/where on the grid, then slices.
    lo_x, hi_x = x_np[::size], x_np[size - 1 :: size]

    def loop_step(i: int) -> Any:
        i0 = int(jnp.where(jnp.isclose(x, lo_x[i], rtol=0, atol=dx / 2))[0][0])
        i1 = int(jnp.where(jnp.isclose(x, hi_x[i], rtol=0, atol=dx / 2))[0][-1]) + 1
        seg = y[i0:i1]
        return seg_stats(seg)

    block(loop_step(0))  # eager ops compile once per shape; not part of the loop's cost
    t, m = extrapolate(loop_step, k, budget)
    row("(a) python loop isclose/where", steady_s=t, note=f"extrapolated from {m}/{k}")

    # (b) jit with static bounds: one compilation per distinct chunk.
    traces = [0]

    @functools.partial(jax.jit, static_argnums=(1, 2))
    def static_seg(y: jax.Array, i0: int, i1: int) -> Any:
        traces[0] += 1
        seg = y[i0:i1]
        return seg_stats(seg)

    with CompileCounter() as cc:
        t_first, m = extrapolate(lambda i: static_seg(y, i * size, (i + 1) * size), k, budget)
    t_steady = time_steady(
        lambda: [static_seg(y, i * size, (i + 1) * size) for i in range(m)], repeats=rep
    )
    row(
        "(b) jit static bounds",
        steady_s=t_steady * k / m,
        compile_s=max(t_first - t_steady * k / m, 0.0),
        compiles=k,
        note=f"extrapolated from {m}/{k} ({cc.count} compiles, {traces[0]} traces counted)",
    )

    # (c) full-length masking under jit: O(N*K) work; lax.map keeps memory O(N).
    idx = jnp.arange(n)
    starts = jnp.arange(k) * size
    m = max(1, min(k, int(cfg["mask_elems"] // n)))

    @jax.jit
    def masked(y: jax.Array, starts: jax.Array) -> Any:
        return jax.lax.map(lambda s: masked_stats(y, (idx >= s) & (idx < s + size)), starts)

    some = starts[:m]
    res = jit_timed(lambda: masked(y, some), rep)
    res["steady_s"] *= k / m
    note = f"extrapolated from {m}/{k}" if m < k else ""
    row("(c) jit full-length masking", **res, note=note)
    finish(rows, floor, bandwidth, n * 8)
    return rows


def np_stats_rows(r: np.ndarray) -> tuple[Any, Any, Any]:
    return r.mean(1), r.std(1), r.max(1)


# ------------------------------------------------------------------------------- workload 2
def xrange_data(n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A jittered unit grid (sorted), values, and K random lower bounds of width-WIDTH ranges."""
    rng = np.random.default_rng(seed)
    x = np.arange(n) + rng.uniform(0.0, 0.5, n)
    y = rng.standard_normal(n)
    lo = rng.uniform(0.0, n - WIDTH - 2.0, k)
    return x, y, lo


def workload_xrange(n: int, k: int, cfg: dict[str, Any], bandwidth: float | None) -> list[dict]:
    x_np, y_np, lo_np = xrange_data(n, k)
    hi_np = lo_np + WIDTH
    x, y, lo, hi = map(jnp.asarray, (x_np, y_np, lo_np, hi_np))
    rep = cfg["repeats"]
    rows: list[dict[str, Any]] = []

    def row(method: str, **kw: Any) -> None:
        rows.append(dict(workload="xrange", N=n, K=k, method=method, **kw))

    flat = np.random.default_rng(1).standard_normal(k * CAPACITY)
    f = jax.jit(lambda x, y, lo, hi: stats3(jaxsubset.select(x, y, lo, hi, capacity=CAPACITY)))
    g = range_statistic_fn(jaxsubset.ranges.select)

    def np_loop() -> list[Any]:
        out = []
        for a, b in zip(lo_np, hi_np, strict=True):
            i0, i1 = np.searchsorted(x_np, a, "left"), np.searchsorted(x_np, b, "left")
            out.append(seg_stats(y_np[i0:i1]))
        return out

    fns = {
        "floor: np.sum(K*L)": lambda: np.sum(flat),
        "jaxsubset select+mean/std/max": lambda: f(x, y, lo, hi),
        "jaxsubset range_statistic (O(N))": lambda: g(x, y, lo, hi),
        "numpy searchsorted+slice loop": np_loop,
    }
    if g is None or not cfg["range_statistic"]:
        del fns["jaxsubset range_statistic (O(N))"]
    for name, res in side_by_side(fns, max(rep, 9)).items():
        row(name, **res)
    floor = rows[0]["steady_s"]

    m = max(1, min(k, int(cfg["mask_elems"] // n)))

    @jax.jit
    def masked(x: jax.Array, y: jax.Array, lo: jax.Array, hi: jax.Array) -> Any:
        return jax.lax.map(lambda b: masked_stats(y, (x >= b[0]) & (x < b[1])), (lo, hi))

    lo_m, hi_m = lo[:m], hi[:m]
    res = jit_timed(lambda: masked(x, y, lo_m, hi_m), rep)
    res["steady_s"] *= k / m
    row("jit full-length masking", **res, note=f"extrapolated from {m}/{k}" if m < k else "")
    finish(rows, floor, bandwidth, k * CAPACITY * 8)
    return rows


# ------------------------------------------------------------------------------- workload 3
def linear_fit(x: jax.Array, y: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Least-squares slope and intercept of one window, ignoring padding."""
    n = jnp.sum(mask)
    xm = jnp.sum(jnp.where(mask, x, 0.0)) / n
    ym = jnp.sum(jnp.where(mask, y, 0.0)) / n
    dx = jnp.where(mask, x - xm, 0.0)
    slope = jnp.sum(dx * (y - ym)) / jnp.sum(dx * dx)
    return slope, ym - slope * xm


def workload_sliding(n: int, cfg: dict[str, Any], bandwidth: float | None) -> list[dict]:
    rng = np.random.default_rng(0)
    x_np = np.arange(n) * 1e-3
    y_np = 2.0 * x_np + rng.standard_normal(n)
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)
    k = (n - WINDOW) // STEP + 1
    rep = cfg["repeats"]
    rows: list[dict[str, Any]] = []

    def row(method: str, **kw: Any) -> None:
        rows.append(dict(workload="sliding", N=n, K=k, method=method, **kw))

    def np_fit() -> tuple[np.ndarray, np.ndarray]:
        wx = np.lib.stride_tricks.sliding_window_view(x_np, WINDOW)[::STEP]
        wy = np.lib.stride_tricks.sliding_window_view(y_np, WINDOW)[::STEP]
        xm, ym = wx.mean(1), wy.mean(1)
        dx = wx - xm[:, None]
        slope = (dx * (wy - ym[:, None])).sum(1) / (dx * dx).sum(1)
        return slope, ym - slope * xm

    f_v = jax.jit(lambda x, y: jaxsubset.sliding(x, y, WINDOW, step=STEP).apply(linear_fit))
    f_m = jax.jit(
        lambda x, y: jaxsubset.sliding(x, y, WINDOW, step=STEP).apply(linear_fit, batch_size=BATCH)
    )
    # The general path (what sliding did before its full-window path): ranges + one gather.
    f_g = jax.jit(
        lambda x, y: jaxsubset.gather(x, y, jaxsubset.ranges.sliding(x, WINDOW, step=STEP)).apply(
            linear_fit
        )
    )
    fns = {
        "floor: np.sum(y)": lambda: np.sum(y_np),
        "numpy sliding_window_view": np_fit,
        "jaxsubset sliding+apply (vmap)": lambda: f_v(x, y),
        "jaxsubset ranges.sliding+gather+apply (vmap)": lambda: f_g(x, y),
        f"jaxsubset sliding+apply (lax.map {BATCH})": lambda: f_m(x, y),
    }
    for name, res in side_by_side(fns, rep).items():
        row(name, **res)
    for f in (f_v, f_m, f_g):
        if not np.allclose(np.asarray(f(x, y)[0]), np_fit()[0]):
            raise AssertionError("workload 3: jaxsubset and NumPy slopes differ")
    floor, base = rows[0]["steady_s"], rows[1]["steady_s"]
    finish(rows, floor, bandwidth, n * 16)
    for r in rows:
        r["x_numpy"] = r["steady_s"] / base
    return rows


# ------------------------------------------------------------------------------- workload 4
def workload_compile(n: int, cfg: dict[str, Any]) -> list[dict]:
    x_np, y_np, lo_np = xrange_data(n, cfg["sweep"], seed=4)
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)
    bounds = [(float(a), float(a) + WIDTH) for a in lo_np]
    rows: list[dict[str, Any]] = []
    traces = [0]

    def analysis(x: jax.Array, y: jax.Array, lo: Any, hi: Any) -> Any:
        traces[0] += 1
        return stats3(jaxsubset.select(x, y, lo, hi, capacity=CAPACITY))

    f = jax.jit(analysis)
    with CompileCounter() as cc:
        t0 = time.perf_counter()
        block(f(x, y, *bounds[0]))
        first = time.perf_counter() - t0
        for b in bounds[1:]:
            out = f(x, y, *b)
        block(out)
        total = time.perf_counter() - t0
    rows.append(
        dict(
            workload="compile",
            N=n,
            K=len(bounds),
            method="jaxsubset select (traced bounds)",
            first_result_s=first,
            sweep_s=total,
            compiles=cc.count,
            traces=traces[0],
        )
    )

    static_traces = [0]

    @functools.partial(jax.jit, static_argnums=(2, 3))
    def static_analysis(x: jax.Array, y: jax.Array, lo: float, hi: float) -> Any:
        static_traces[0] += 1
        i0, i1 = np.searchsorted(x_np, lo), np.searchsorted(x_np, hi)
        seg = y[i0:i1]
        return seg_stats(seg)

    with CompileCounter() as cc:
        t0 = time.perf_counter()
        block(static_analysis(x, y, *bounds[0]))
        first_s = time.perf_counter() - t0
        t, m = extrapolate(
            lambda i: static_analysis(x, y, *bounds[i]), len(bounds), cfg["budget_s"]
        )
    rows.append(
        dict(
            workload="compile",
            N=n,
            K=len(bounds),
            method="jit static bounds",
            first_result_s=first_s,
            sweep_s=t,
            compiles=len(bounds),
            traces=static_traces[0],
            note=f"sweep extrapolated from {m}/{len(bounds)} ({cc.count} compiles counted)",
        )
    )
    return rows


# ------------------------------------------------------------------------------- targets
def check_targets(results: dict[str, list[dict]], n_big: int, k_big: int) -> list[dict]:
    """The issue's targets, each MET or MISSED with the measured numbers."""

    def pick(wl: str, method: str, n: int, k: int | None = None) -> dict | None:
        for r in results.get(wl, []):
            if r["method"].startswith(method) and r["N"] == n and (k is None or r["K"] == k):
                return r
        return None

    out = []

    def target(name: str, ok: bool | None, detail: str) -> None:
        status = "n/a" if ok is None else ("MET" if ok else "MISSED")
        out.append(dict(target=name, status=status, detail=detail))

    js = pick("chunks", "jaxsubset chunks", n_big, k_big)
    npr = pick("chunks", "(d) numpy reshape", n_big, k_big)
    if js and npr:
        target(
            f"W1 N={n_big:.0e} K={k_big}: within 3x of np.sum floor",
            js["x_floor"] <= 3,
            f"{js['x_floor']:.2f}x the floor (best round vs best round: "
            f"{js.get('x_floor_best', float('nan')):.2f}x)",
        )
        target(
            f"W1 N={n_big:.0e} K={k_big}: faster than NumPy",
            js["steady_s"] < npr["steady_s"],
            f"{npr['steady_s'] / js['steady_s']:.2f}x faster than numpy reshape",
        )
        target(
            f"W1 N={n_big:.0e} K={k_big}: exactly one compilation (static bounds: K)",
            js["compiles"] == 1,
            f"{js['compiles']} compilation(s)",
        )
    w2 = pick("xrange", "jaxsubset select", n_big, k_big)
    mk = pick("xrange", "jit full-length masking", n_big, k_big)
    if w2 and mk:
        target(
            f"W2 N={n_big:.0e} K={k_big}: within 3x of the K*L floor",
            w2["x_floor"] <= 3,
            f"{w2['x_floor']:.2f}x the floor (best round vs best round: "
            f"{w2.get('x_floor_best', float('nan')):.2f}x)",
        )
        speedup = mk["steady_s"] / w2["steady_s"]
        target(
            f"W2 N={n_big:.0e} K={k_big}: >= 100x faster than full-length masking",
            speedup >= 100,
            f"{speedup:.0f}x faster",
        )
    for r in results.get("compile", []):
        if r["method"].startswith("jaxsubset"):
            target(
                f"W4 N={r['N']:.0e}: exactly one compilation",
                r["compiles"] == 1,
                f"{r['compiles']} compilation(s), {r['traces']} trace(s)",
            )
            target(
                f"W4 N={r['N']:.0e}: first result under 1 s",
                r["first_result_s"] < 1.0,
                f"{r['first_result_s']:.3f} s",
            )
    return out


# ------------------------------------------------------------------------------- markdown
def _ratio(rows: list[dict], n: int, k: int, prefix: str, key: str = "x_floor") -> str:
    for r in rows:
        if r["N"] == n and r["K"] == k and r["method"].startswith(prefix):
            star = "*" if "extrapolated" in r.get("note", "") else ""
            return f"{r[key]:.3g}x{star}"
    return ""


def _md_table(header: list[str], body: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(row) + " |" for row in body]


def markdown(payload: dict[str, Any]) -> str:
    """The results as the Markdown tables of BENCHMARKS.md (ratios to the same run's floor)."""
    res, lines = payload["results"], []
    m = payload["machine"]
    lines.append(
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['platform']}; Python {m['python']}, "
        f"jax {m['jax']}, numpy {m['numpy']}, backend {m['backend']}."
    )
    if "chunks" in res:
        rows = res["chunks"]
        methods = [
            ("jaxsubset", "jaxsubset chunks"),
            ("gather path", "jaxsubset ranges.chunks+gather"),
            ("range_statistic", "jaxsubset range_statistic"),
            ("jit reshape (ref)", "ref: jit reshape"),
            ("numpy reshape", "(d) numpy reshape"),
            ("numpy reduceat", "(d) numpy reduceat"),
            ("(a) loop isclose", "(a) python loop"),
            ("(b) static-bounds jit", "(b) jit static"),
            ("(c) masking jit", "(c) jit full-length"),
        ]
        keys = sorted({(r["N"], r["K"]) for r in rows})
        body = []
        for n, k in keys:
            floor = next(r for r in rows if r["N"] == n and r["K"] == k and "floor" in r["method"])
            static = next(r for r in rows if r["N"] == n and r["K"] == k and "(b)" in r["method"])
            body.append(
                [f"{n:.0e}", str(k), f"{floor['steady_s'] * 1e3:.3g}"]
                + [_ratio(rows, n, k, pre) for _, pre in methods]
                + [f"{static['compile_s']:.3g}"]
            )
        lines += [
            "",
            "**Workload 1** (time / one `np.sum` pass in the same run; * extrapolated)",
            "",
        ]
        lines += _md_table(
            ["N", "K", "floor ms"] + [m for m, _ in methods] + ["(b) compile s*"], body
        )
    if "xrange" in res:
        rows = res["xrange"]
        methods = [
            ("jaxsubset", "jaxsubset select"),
            ("range_statistic", "jaxsubset range_statistic"),
            ("numpy searchsorted loop", "numpy searchsorted"),
            ("masking jit", "jit full-length"),
        ]
        body = []
        for n, k in sorted({(r["N"], r["K"]) for r in rows}):
            floor = next(r for r in rows if r["N"] == n and r["K"] == k and "floor" in r["method"])
            js = next(r for r in rows if r["N"] == n and r["K"] == k and "select" in r["method"])
            mk = next(r for r in rows if r["N"] == n and r["K"] == k and "masking" in r["method"])
            body.append(
                [f"{n:.0e}", str(k), f"{floor['steady_s'] * 1e3:.3g}"]
                + [_ratio(rows, n, k, pre) for _, pre in methods]
                + [f"{mk['steady_s'] / js['steady_s']:.3g}x"]
            )
        lines += ["", "**Workload 2** (time / `np.sum` of K*L elements; * extrapolated)", ""]
        lines += _md_table(
            ["N", "K", "floor ms"] + [m for m, _ in methods] + ["masking / jaxsubset"], body
        )
    if "sliding" in res:
        rows, body = res["sliding"], []
        for n, k in sorted({(r["N"], r["K"]) for r in rows}):
            base = next(r for r in rows if r["N"] == n and "numpy" in r["method"])
            body.append(
                [f"{n:.0e}", str(k), f"{base['steady_s'] * 1e3:.3g}"]
                + [
                    _ratio(rows, n, k, p, "x_numpy")
                    for p in (
                        "jaxsubset sliding+apply (v",
                        "jaxsubset sliding+apply (l",
                        "jaxsubset ranges.sliding+gather",
                    )
                ]
            )
        lines += ["", "**Workload 3** (time / NumPy `sliding_window_view` in the same run)", ""]
        lines += _md_table(
            ["N", "windows", "numpy ms", "apply vmap", "apply lax.map", "gather path vmap"], body
        )
    if "compile" in res:
        body = [
            [
                r["method"],
                f"{r['N']:.0e}",
                str(r["K"]),
                str(r["compiles"]),
                f"{r['first_result_s']:.3g}",
                f"{r['sweep_s']:.3g}",
                r.get("note", ""),
            ]
            for r in res["compile"]
        ]
        lines += ["", "**Workload 4** (a sweep over K different bounds of one capacity)", ""]
        lines += _md_table(
            ["method", "N", "K", "compilations", "first result s", "sweep s", "note"], body
        )
    lines += ["", "**Targets**", ""]
    lines += [f"- {t['status']}: {t['target']}: {t['detail']}" for t in payload["targets"]]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------- main
WORKLOADS = ("chunks", "xrange", "sliding", "compile")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="N=1e5 and K=5,100 only (seconds)")
    p.add_argument("--json", metavar="PATH", help="write every result to PATH as JSON")
    p.add_argument("--markdown", metavar="PATH", help="write the tables for BENCHMARKS.md")
    p.add_argument("--only", choices=WORKLOADS, action="append", help="run only this workload")
    p.add_argument(
        "--bandwidth-gbs",
        type=float,
        default=None,
        help="the device's memory bandwidth (GB/s): report throughput as a percentage of it",
    )
    args = p.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    # Full-length masking is O(N*K): run that many elements per measurement, extrapolate.
    cfg["mask_elems"] = 2e7 if args.quick else 1e8
    only = set(args.only or WORKLOADS)
    info = print_header("jaxsubset core engine (issue 6)" + (" --quick" if args.quick else ""))
    bw = args.bandwidth_gbs
    results: dict[str, list[dict]] = {}

    if "chunks" in only:
        print("\n-- workload 1: equal chunks, per-chunk mean/std/max (x_floor: vs one np.sum)")
        rows = [r for n in cfg["ns"] for k in cfg["ks"] for r in workload_chunks(n, k, cfg, bw)]
        results["chunks"] = rows
        print_table(rows, COLUMNS + (["pct_peak"] if bw else []))
    if "xrange" in only:
        print(f"\n-- workload 2: K x-ranges of capacity {CAPACITY} (x_floor: vs np.sum of K*L)")
        rows = [r for n in cfg["ns"] for k in cfg["ks"] for r in workload_xrange(n, k, cfg, bw)]
        results["xrange"] = rows
        print_table(rows, COLUMNS + (["pct_peak"] if bw else []))
    if "sliding" in only:
        print(f"\n-- workload 3: sliding windows {WINDOW}/{STEP}, linear fit per window")
        rows = [r for n in cfg["ns"] for r in workload_sliding(n, cfg, bw)]
        results["sliding"] = rows
        print_table(rows, ["N", "K", "method", "steady_s", "x_numpy", "x_floor", "compile_s"])
    if "compile" in only:
        print(f"\n-- workload 4: compilations for a sweep over {cfg['sweep']} bounds")
        rows = [r for n in cfg["ns"] for r in workload_compile(n, cfg)]
        results["compile"] = rows
        print_table(
            rows,
            ["N", "K", "method", "first_result_s", "sweep_s", "compiles", "traces", "note"],
        )

    n_big, k_big = max(cfg["ns"]), max(cfg["ks"])
    targets = check_targets(results, n_big, k_big)
    print("\n-- targets" + (" (quick run: not the issue's sizes)" if args.quick else ""))
    for t in targets:
        print(f"   {t['status']:>6}  {t['target']}: {t['detail']}")
    payload = dict(
        benchmark="core",
        quick=args.quick,
        machine=info,
        bandwidth_gbs=bw,
        config=cfg,
        results=results,
        targets=targets,
    )
    if args.json:
        write_json(args.json, payload)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(payload))
    return payload


if __name__ == "__main__":
    main()
