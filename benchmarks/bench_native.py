"""The native CPU road (issue 27) side by side with bottleneck, numbagg, pandas, polars, NumPy.

Workloads (``N`` points, float64 and float32, interleaved rounds in one process, steady state
under ``jit``; ratio = jaxsubset's time / the best peer's, < 1 is faster):

1. ``fixed``: windows of ``w`` points (w = 100, 10^4), mean/std/min/max/median:
   ``rolling_statistic(None, y, window=w)`` against bottleneck ``move_*``, numbagg ``move_*``
   and polars ``rolling_*`` (``min_count``/``min_samples`` 1).
2. ``xwidth``: x-width windows of 100 s and 10^4 s on an irregular axis (exponential gaps,
   mean 1 s: ~100 and ~10^4 points a window), mean/std/max/median against pandas
   ``rolling("100s")`` and polars ``rolling_*_by`` (centred windows of the first width, mean
   and std, against pandas ``rolling("100s", center=True)``; ``before=100, after=50``
   windows, mean and std, against polars ``rolling(period="150s", offset="-100s")``,
   pandas having no such window); ``xeven``: x-width windows of w on an
   evenly spaced axis (x = 0, 1, 2, ...: the last w points) under ``jit`` against bottleneck
   ``move_*``.
3. ``bins``: 1000 bins of x, sorted and unsorted, mean/std/max/median: ``binned_statistic``
   against NumPy (``reduceat`` on sorted x, ``bincount`` on unsorted), numbagg's
   ``group_nan*`` and polars ``group_by``, the peers handed their labels ready-made; also
   ``numbagg_x``: numbagg with the labels a user starting from x computes first (arithmetic).
   ``eager``: the same bins called outside ``jit`` on NumPy float64 data (x and y), in JAX's
   64-bit mode and in its default 32-bit mode (``jax.enable_x64(False)``: SciPy's float64
   bins all the same), mean/std, against ``scipy.stats.binned_statistic`` (what the call
   replaces) and the peers given only x: ``numbagg_x`` as above, ``numpy_x``
   (``searchsorted`` labels, then ``bincount``). ``eagerw``: windows called outside ``jit``
   on NumPy float64 data in both modes, mean/std: fixed-count (the first ``--widths``)
   against bottleneck, numbagg and polars; x-width (as many seconds, the irregular axis)
   against pandas and polars; 1000 equal chunks' mean and std (``range_statistic`` over
   ``ranges.chunks``, and the ``chunks(...)`` Subsets' reductions as ``jax_subsets``)
   against a NumPy reshape.
4. ``chunks``: 1000 equal chunks, mean + std + max together, against a NumPy reshape.
5. ``ewm``: ``ewm_statistic`` (time-based, halflife 50 s) on an irregular axis (exponential
   gaps, mean 1 s), mean/var/std: the native kernel (one serial pass) beside the pure-JAX
   scan (``jax_scan``, ``JAXSUBSET_NATIVE=off``) against pandas ``ewm(halflife=..., times=...)``
   (mean only: pandas has no var/std with times) and, as alpha-based peers on regular steps
   (less work: one fixed decay, no ``exp`` per point), pandas ``ewm(halflife=50)`` and numbagg
   ``move_exp_nan*`` (``alpha`` of a 50-step halflife).
6. ``first``: the first call (trace + compile + run) of each statistic in a fresh ``jit`` at
   ``N / 10`` points, after import.

Run ``python benchmarks/bench_native.py [--quick] [--n N] [--only fixed ...] [--widths W ...]
[--stats S ...] [--x-widths W ...] [--xstats S ...] [--rounds R] [--no-blocks] [--json PATH]``,
once with ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1`` and once without (the header says which).
"""

# ruff: noqa: B023 - every closure below runs within its own loop iteration (time_interleaved)

import argparse
import importlib
import os
import time
from typing import Any

import jax


jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _harness import block, print_header, print_table, time_interleaved, write_json  # noqa: E402

import jaxsubset  # noqa: E402
import jaxsubset._native  # noqa: E402 - the package binds public names only
from jaxsubset import _native  # noqa: E402


FULL = dict(n=10**7, widths=(100, 10**4), xwidths=(100, 10**4), rounds=3, budget_s=30.0,
            nbins=1000)  # fmt: skip
QUICK = dict(n=20_000, widths=(20,), xwidths=(20,), rounds=2, budget_s=2.0, nbins=20)
DTYPES = ("float64", "float32")


def _peer(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _row(rows: list[dict], workload: str, dtype: str, stat: str, tt: dict[str, float]) -> None:
    # "jax_*": the library's own pure-JAX roads, shown beside it, never the best peer
    peers = {k: v for k, v in tt.items() if k != "jaxsubset" and not k.startswith("jax_")}
    best = min(peers, key=peers.get) if peers else None
    row = {
        "workload": workload,
        "dtype": dtype,
        "stat": stat,
        "jaxsubset_ms": tt["jaxsubset"] * 1e3,
    }
    for k, v in tt.items():
        if k != "jaxsubset":
            row[f"{k}_ms"] = v * 1e3
    row["best_peer"] = best
    row["ratio"] = tt["jaxsubset"] / peers[best] if best else None
    row["load"] = os.getloadavg()[0]  # a shared machine: the 1-minute load average after it
    rows.append(row)
    print(
        f"   {workload:<22} {dtype:<8} {stat:<7} jaxsubset {tt['jaxsubset'] * 1e3:8.1f} ms  "
        + "  ".join(f"{k} {v * 1e3:8.1f}" for k, v in tt.items() if k != "jaxsubset")
        + (f"  ratio {row['ratio']:.2f} ({best})" if best else "")
        + f"  load {row['load']:.1f}",
        flush=True,
    )


def _one_thread(f: Any) -> Any:
    """f with JAXSUBSET_NATIVE_THREADS=1 (read per call by the kernel: set while it runs)."""

    def run() -> Any:
        old = os.environ.get("JAXSUBSET_NATIVE_THREADS")
        os.environ["JAXSUBSET_NATIVE_THREADS"] = "1"
        try:
            return block(f())
        finally:
            if old is None:
                del os.environ["JAXSUBSET_NATIVE_THREADS"]
            else:
                os.environ["JAXSUBSET_NATIVE_THREADS"] = old

    return run


def fixed(cfg: dict, rows: list[dict]) -> None:
    bn, nb, pl = _peer("bottleneck"), _peer("numbagg"), _peer("polars")
    rng = np.random.default_rng(0)
    for dtype in DTYPES:
        y = rng.normal(size=cfg["n"]).astype(dtype)
        yj = jnp.asarray(y)
        ser = pl.Series(y) if pl else None
        for w in cfg["widths"]:
            for stat in cfg.get("stats") or ("mean", "std", "min", "max", "median"):
                f = jax.jit(lambda y, s=stat, w=w: jaxsubset.rolling_statistic(
                    None, y, window=w, statistic=s))  # fmt: skip
                fns = {"jaxsubset": lambda f=f: f(yj)}
                if cfg.get("one_thread"):  # the same call on the calling thread alone
                    fns["jax_1thread"] = _one_thread(lambda f=f: f(yj))
                if stat != "median" and cfg.get("blocks", True):  # the pure-JAX block road
                    g = jax.jit(lambda y, s=stat, w=w: jaxsubset.rolling_statistic(
                        None, y, window=w, statistic=s, method="blocks"))  # fmt: skip
                    fns["jax_blocks"] = lambda g=g: g(yj)
                if bn:
                    fns["bottleneck"] = lambda w=w, s=stat: getattr(bn, f"move_{s}")(
                        y, w, min_count=1)  # fmt: skip
                if nb and hasattr(nb, f"move_{stat}"):
                    fns["numbagg"] = lambda w=w, s=stat: getattr(nb, f"move_{s}")(
                        y, window=w, min_count=1)  # fmt: skip
                if pl:
                    fns["polars"] = lambda w=w, s=stat: getattr(ser, f"rolling_{s}")(
                        w, min_samples=1)  # fmt: skip
                tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
                _row(rows, f"fixed w={w}", dtype, stat, tt)


def xwidth(cfg: dict, rows: list[dict]) -> None:
    pd, pl = _peer("pandas"), _peer("polars")
    if pd is None:
        return
    rng = np.random.default_rng(1)
    t = np.cumsum(rng.exponential(1.0, cfg["n"]))
    for dtype in DTYPES:
        y = rng.normal(size=cfg["n"]).astype(dtype)
        x, yj = jnp.asarray(t), jnp.asarray(y)
        ts = pd.to_datetime(t, unit="s")
        df = pl.DataFrame({"t": ts, "y": y}) if pl else None
        for width in cfg["xwidths"]:
            roll = pd.Series(y, index=ts).rolling(f"{width}s")
            for stat in cfg.get("xstats") or ("mean", "std", "max", "median"):
                # (the median's pure-JAX branch and derivative need a static capacity)
                cap = 1 << (4 * width).bit_length()
                f = jax.jit(lambda x, y, s=stat, w=width, c=cap: jaxsubset.rolling_statistic(
                    x, y, float(w), s, capacity=c))  # fmt: skip
                fns = {"jaxsubset": lambda f=f: f(x, yj),
                       "pandas": lambda s=stat, roll=roll: getattr(roll, s)()}  # fmt: skip
                if pl:
                    expr = getattr(pl.col("y"), f"rolling_{stat}_by")("t", window_size=f"{width}s")
                    fns["polars"] = lambda expr=expr: df.select(expr)
                tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
                _row(rows, f"x-width ~{width} pts", dtype, stat, tt)
            for stat in ("mean", "std") if width == cfg["xwidths"][0] else ():
                # centred windows (pandas' center=True; polars has no centred `_by` window)
                f = jax.jit(lambda x, y, s=stat, w=width: jaxsubset.rolling_statistic(
                    x, y, float(w), s, center=True))  # fmt: skip
                croll = pd.Series(y, index=ts).rolling(f"{width}s", center=True)
                fns = {"jaxsubset": lambda f=f: f(x, yj),
                       "pandas": lambda s=stat, r=croll: getattr(r, s)()}  # fmt: skip
                tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
                _row(rows, f"x-width ~{width} pts centred", dtype, stat, tt)
            for stat in ("mean", "std") if width == cfg["xwidths"][0] and pl else ():
                # before/after windows, x[i] - w < x <= x[i] + w/2: polars' rolling groups
                # (t + offset, t + offset + period] (pandas has no such offset window)
                a = width // 2
                f = jax.jit(lambda x, y, s=stat, w=width, a=a: jaxsubset.rolling_statistic(
                    x, y, statistic=s, before=float(w), after=float(a)))  # fmt: skip
                agg = getattr(pl.col("y"), stat)()
                fns = {"jaxsubset": lambda f=f: f(x, yj),
                       "polars": lambda w=width, a=a, agg=agg: df.rolling(
                           "t", period=f"{w + a}s", offset=f"-{w}s").agg(agg)}  # fmt: skip
                tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
                _row(rows, f"x-width ~{width} pts before/after", dtype, stat, tt)


def xeven(cfg: dict, rows: list[dict]) -> None:
    """x-width windows on an evenly spaced axis under ``jit`` (x = 0, 1, 2, ...; width w:
    the last w points) against bottleneck's fixed-count ``move_*`` of the same windows."""
    bn = _peer("bottleneck")
    rng = np.random.default_rng(5)
    x = jnp.arange(cfg["n"], dtype=jnp.float64)
    for dtype in DTYPES:
        y = rng.normal(size=cfg["n"]).astype(dtype)
        yj = jnp.asarray(y)
        for w in cfg["widths"]:
            for stat in cfg.get("xstats") or ("mean", "std", "max", "median"):
                cap = 1 << (2 * w).bit_length()
                f = jax.jit(lambda x, y, s=stat, w=w, c=cap: jaxsubset.rolling_statistic(
                    x, y, float(w), s, capacity=c))  # fmt: skip
                fns = {"jaxsubset": lambda f=f: f(x, yj)}
                if cfg.get("one_thread"):
                    fns["jax_1thread"] = _one_thread(lambda f=f: f(x, yj))
                if bn:
                    fns["bottleneck"] = lambda w=w, s=stat: getattr(bn, f"move_{s}")(
                        y, w, min_count=1)  # fmt: skip
                tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
                _row(rows, f"x-width even w={w}", dtype, stat, tt)


def bins(cfg: dict, rows: list[dict]) -> None:
    nb, pl = _peer("numbagg"), _peer("polars")
    rng = np.random.default_rng(2)
    nbins = cfg["nbins"]
    edges = np.linspace(0.0, 1.0, nbins + 1)
    for dtype in DTYPES:
        for order in ("sorted", "unsorted"):
            x = rng.uniform(0.0, 1.0, cfg["n"])
            if order == "sorted":
                x.sort()
            y = rng.normal(size=cfg["n"]).astype(dtype)
            xj, yj = jnp.asarray(x), jnp.asarray(y)
            ids = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, nbins - 1)
            cuts = np.searchsorted(ids, np.arange(nbins)) if order == "sorted" else None
            df = pl.DataFrame({"g": ids, "y": y}) if pl else None
            for stat in ("mean", "std", "max", "median"):
                f = jax.jit(lambda x, y, s=stat, srt=order == "sorted": jaxsubset.binned_statistic(
                    x, y, s, edges, x_sorted=srt).statistic)  # fmt: skip
                fns = {"jaxsubset": lambda f=f: f(xj, yj)}
                if cfg.get("one_thread"):  # the kernel on the calling thread alone (not a peer)
                    fns["jax_1thread"] = _one_thread(lambda f=f: f(xj, yj))
                fns["numpy"] = lambda s=stat, c=cuts: _numpy_bins(y, ids, c, nbins, s)
                if nb and stat != "median":
                    fn = getattr(nb, f"group_nan{stat}")
                    fns["numbagg"] = lambda fn=fn: fn(y, ids, num_labels=nbins)
                    # what a numbagg user starting from x also runs: labels by arithmetic
                    # (floor of the scaled position; not SciPy's edges exactly)
                    fns["numbagg_x"] = lambda fn=fn: fn(
                        y, np.minimum((x * nbins).astype(np.intp), nbins - 1), num_labels=nbins
                    )
                if pl:
                    agg = getattr(pl.col("y"), stat)()
                    fns["polars"] = lambda agg=agg: df.group_by("g").agg(agg)
                tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
                _row(rows, f"{nbins} bins {order}", dtype, stat, tt)


def eager_bins(cfg: dict, rows: list[dict]) -> None:
    nb, sp = _peer("numbagg"), _peer("scipy.stats")
    rng = np.random.default_rng(4)
    nbins = cfg["nbins"]
    edges = np.linspace(0.0, 1.0, nbins + 1)
    for order in ("sorted", "unsorted"):
        x = rng.uniform(0.0, 1.0, cfg["n"])
        if order == "sorted":
            x.sort()
        y = rng.normal(size=cfg["n"])
        for mode in ("x64", "x32"):
            for stat in ("mean", "std"):

                def ours(s=stat, m=mode):
                    with jax.enable_x64(m == "x64"):
                        return jaxsubset.binned_statistic(x, y, s, edges).statistic

                fns = {"jaxsubset": ours}
                if sp:
                    fns["scipy"] = lambda s=stat: sp.binned_statistic(x, y, s, edges).statistic
                if nb:
                    fn = getattr(nb, f"group_nan{stat}")
                    fns["numbagg_x"] = lambda fn=fn: fn(
                        y, np.minimum((x * nbins).astype(np.intp), nbins - 1), num_labels=nbins
                    )
                fns["numpy_x"] = lambda s=stat: _numpy_bins(
                    y, np.clip(np.searchsorted(edges, x, "right") - 1, 0, nbins - 1), None,
                    nbins, s,
                )  # fmt: skip
                tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
                _row(rows, f"{nbins} bins {order} eager {mode}", "float64", stat, tt)


def eager_windows(cfg: dict, rows: list[dict]) -> None:
    """Windows called outside ``jit`` on NumPy float64 data, in JAX's 64-bit mode and its
    default 32-bit mode: fixed-count (w = 100) against bottleneck, numbagg and polars;
    x-width (100 s on the irregular axis of ``xwidth``) against pandas and polars; the
    jitted call of the same windows on JAX arrays beside them (``jax_jit``, not a peer)."""
    bn, nb, pd, pl = _peer("bottleneck"), _peer("numbagg"), _peer("pandas"), _peer("polars")
    rng = np.random.default_rng(6)
    w = cfg["widths"][0]
    t = np.cumsum(rng.exponential(1.0, cfg["n"]))
    y = rng.normal(size=cfg["n"])
    ts = pd.to_datetime(t, unit="s") if pd else None
    df = pl.DataFrame({"t": ts, "y": y}) if pl and pd else None
    for mode in ("x64", "x32"):
        for stat in ("mean", "std"):

            def fixed_call(s=stat, m=mode):
                with jax.enable_x64(m == "x64"):
                    return jaxsubset.rolling_statistic(None, y, window=w, statistic=s)

            with jax.enable_x64(mode == "x64"):
                yj = jnp.asarray(y)
                f = jax.jit(lambda y, s=stat: jaxsubset.rolling_statistic(
                    None, y, window=w, statistic=s))  # fmt: skip

            def jitted(f=f, yj=yj, m=mode):
                with jax.enable_x64(m == "x64"):
                    return f(yj)

            fns = {"jaxsubset": fixed_call, "jax_jit": jitted}
            if bn:
                fns["bottleneck"] = lambda s=stat: getattr(bn, f"move_{s}")(y, w, min_count=1)
            if nb:
                fns["numbagg"] = lambda s=stat: getattr(nb, f"move_{s}")(y, window=w, min_count=1)
            if pl:
                ser = pl.Series(y)
                fns["polars"] = lambda s=stat: getattr(ser, f"rolling_{s}")(w, min_samples=1)
            tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
            _row(rows, f"fixed w={w} eager {mode}", "float64", stat, tt)
            if pd is None:
                continue

            def xwidth_call(s=stat, m=mode):
                with jax.enable_x64(m == "x64"):
                    return jaxsubset.rolling_statistic(t, y, float(w), s)

            roll = pd.Series(y, index=ts).rolling(f"{w}s")
            fns = {"jaxsubset": xwidth_call, "pandas": lambda s=stat: getattr(roll, s)()}
            if df is not None:
                expr = getattr(pl.col("y"), f"rolling_{stat}_by")("t", window_size=f"{w}s")
                fns["polars"] = lambda expr=expr: df.select(expr)
            tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
            _row(rows, f"x-width ~{w} pts eager {mode}", "float64", stat, tt)
        # equal chunks, eagerly: range_statistic over ranges.chunks and the Subsets road
        k = cfg["nbins"]
        m = cfg["n"] // k * k
        r = jaxsubset.ranges.chunks(t[:m], k)

        def chunk_stats(m=m, r=r, mode=mode):
            with jax.enable_x64(mode == "x64"):
                return jaxsubset.range_statistic(y[:m], r, ("mean", "std"))

        def subsets(m=m, mode=mode):
            with jax.enable_x64(mode == "x64"):
                s = jaxsubset.chunks(t[:m], y[:m], k)
                return s.mean(), s.std()

        def numpy_chunks(m=m):
            b = y[:m].reshape(k, -1)
            return b.mean(axis=1), b.std(axis=1)

        fns = {"jaxsubset": chunk_stats, "jax_subsets": subsets, "numpy": numpy_chunks}
        tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
        _row(rows, f"{k} chunks eager {mode}", "float64", "mean+std", tt)


def _numpy_bins(y, ids, cuts, nbins, stat):
    """NumPy's fastest hand-written way: reduceat on sorted x, bincount (or a sort) else."""
    if cuts is not None and stat in ("mean", "std", "max"):
        n = np.diff(np.r_[cuts, len(y)])
        s = np.add.reduceat(y, cuts)
        if stat == "max":
            return np.maximum.reduceat(y, cuts)
        mean = s / n
        if stat == "mean":
            return mean
        return np.sqrt(np.add.reduceat(y * y, cuts) / n - mean**2)
    if stat in ("mean", "std"):
        n = np.bincount(ids, minlength=nbins)
        mean = np.bincount(ids, y, nbins) / n
        if stat == "mean":
            return mean
        return np.sqrt(np.bincount(ids, y * y, nbins) / n - mean**2)
    order = np.argsort(ids, kind="stable")
    ys, starts = y[order], np.searchsorted(ids[order], np.arange(nbins))
    if stat == "max":
        return np.maximum.reduceat(ys, starts)
    return [np.median(p) for p in np.split(ys, starts[1:])]


def chunks(cfg: dict, rows: list[dict]) -> None:
    rng = np.random.default_rng(3)
    k = cfg["nbins"]
    n = cfg["n"] // k * k
    for dtype in DTYPES:
        y = rng.normal(size=n).astype(dtype)
        x, yj = jnp.arange(n, dtype=jnp.float32), jnp.asarray(y)
        r = jaxsubset.ranges.chunks(x, k)
        f = jax.jit(lambda y: jaxsubset.range_statistic(y, r, ("mean", "std", "max")))

        def numpy_call():
            p = y.reshape(k, -1)
            return p.mean(1), p.std(1), p.max(1)

        tt = time_interleaved({"jaxsubset": lambda: f(yj), "numpy reshape": numpy_call},
                              rounds=cfg["rounds"], budget_s=cfg["budget_s"])  # fmt: skip
        _row(rows, f"{k} chunks", dtype, "mean+std+max", tt)


def ewm(cfg: dict, rows: list[dict]) -> None:
    import os

    pd, nb = _peer("pandas"), _peer("numbagg")
    rng = np.random.default_rng(5)
    t = np.cumsum(rng.exponential(1.0, cfg["n"]))
    h = 50.0
    alpha = 1 - 0.5 ** (1 / h)
    for dtype in DTYPES:
        y = rng.normal(size=cfg["n"]).astype(dtype)
        x, yj = jnp.asarray(t), jnp.asarray(y)
        ts = pd.to_datetime(t, unit="s") if pd else None
        for stat in ("mean", "var", "std"):
            f = jax.jit(lambda x, y, s=stat: jaxsubset.ewm_statistic(x, y, h, s))
            g = jax.jit(lambda x, y, s=stat: jaxsubset.ewm_statistic(x, y, h, s))
            old = os.environ.get("JAXSUBSET_NATIVE")
            os.environ["JAXSUBSET_NATIVE"] = "off"  # g traced (compiled) on the pure scan
            try:
                block(g(x, yj))
            finally:
                os.environ.pop("JAXSUBSET_NATIVE")
                if old is not None:
                    os.environ["JAXSUBSET_NATIVE"] = old
            fns = {"jaxsubset": lambda f=f: f(x, yj), "jax_scan": lambda g=g: g(x, yj)}
            if pd:
                ser = pd.Series(y)
                if stat == "mean":
                    fns["pandas times"] = lambda: ser.ewm(halflife=pd.Timedelta(h, "s"),
                                                          times=ts).mean()  # fmt: skip
                fns["pandas alpha"] = lambda s=stat: getattr(ser.ewm(halflife=h), s)()
            if nb:
                fn = getattr(nb, f"move_exp_nan{stat}")
                fns["numbagg alpha"] = lambda fn=fn: fn(y, alpha=alpha)
            tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
            _row(rows, "ewm halflife 50 s", dtype, stat, tt)


def first_call(cfg: dict, rows: list[dict]) -> None:
    n = max(cfg["n"] // 10, 1000)
    rng = np.random.default_rng(4)
    y = jnp.asarray(rng.normal(size=n))
    x = jnp.asarray(np.cumsum(rng.exponential(1.0, n)))
    cases = {
        "fixed w=100": lambda s: lambda y: jaxsubset.rolling_statistic(None, y, window=100,
                                                                       statistic=s),
        "x-width": lambda s: lambda y: jaxsubset.rolling_statistic(x, y, 100.0, s, capacity=512),
        "1000 bins": lambda s: lambda y: jaxsubset.binned_statistic(x, y, s, 1000).statistic,
    }  # fmt: skip
    for name, make in cases.items():
        for stat in ("mean", "std", "max", "median"):
            f = jax.jit(make(stat))
            t0 = time.perf_counter()
            block(f(y))
            dt = time.perf_counter() - t0
            rows.append({"workload": f"first call {name} n={n}", "dtype": "float64",
                         "stat": stat, "jaxsubset_ms": dt * 1e3})  # fmt: skip
            print(f"   first call {name:<12} {stat:<7} {dt * 1e3:8.1f} ms", flush=True)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    parser.add_argument("--n", type=int, help="points (default 10**7)")
    parser.add_argument(
        "--only", nargs="*", default=None,
        help="workloads: fixed xwidth xeven bins eager eagerw chunks ewm first",
    )  # fmt: skip
    parser.add_argument("--widths", type=int, nargs="*", help="fixed windows (default 100 10000)")
    parser.add_argument("--stats", nargs="*", help="fixed windows' statistics (default all five)")
    parser.add_argument(
        "--x-widths",
        type=int,
        nargs="*",
        help="x-width windows in s on the irregular axis (default 100 10000)",
    )
    parser.add_argument(
        "--xstats", nargs="*", help="x-width windows' statistics (default mean std max median)"
    )
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3)")
    parser.add_argument("--no-blocks", action="store_true",
                        help="leave out the pure-JAX block road's column (jax_blocks)")  # fmt: skip
    parser.add_argument(
        "--one-thread",
        action="store_true",
        help="a jax_1thread column: the native call with JAXSUBSET_NATIVE_THREADS=1",
    )
    parser.add_argument("--json", help="write the rows (and the header) to this file")
    args = parser.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    if args.n:
        cfg["n"] = args.n
    if args.widths:
        cfg["widths"] = tuple(args.widths)
    cfg["stats"] = tuple(args.stats) if args.stats else None
    if args.x_widths:
        cfg["xwidths"] = tuple(args.x_widths)
    cfg["xstats"] = tuple(args.xstats) if args.xstats else None
    if args.rounds:
        cfg["rounds"] = args.rounds
    cfg["blocks"] = not args.no_blocks
    cfg["one_thread"] = args.one_thread
    info = print_header(f"native road (issue 27), N={cfg['n']}")
    print(f"   native: {_native.status()}")
    rows: list[dict] = []
    work = {
        "fixed": fixed,
        "xwidth": xwidth,
        "xeven": xeven,
        "bins": bins,
        "eager": eager_bins,
        "eagerw": eager_windows,
        "chunks": chunks,
        "ewm": ewm,
        "first": first_call,
    }
    for name, fn in work.items():
        if args.only is None or name in args.only:
            fn(cfg, rows)
    cols = ["workload", "dtype", "stat", "jaxsubset_ms", "best_peer", "ratio", "load"]
    print_table(rows, cols)
    if args.json:
        write_json(args.json, {"header": info, "rows": rows})
    return rows


if __name__ == "__main__":
    main()
