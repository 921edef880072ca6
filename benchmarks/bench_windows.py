"""Window benchmarks (issue 15): rolling statistics against bottleneck, numbagg, pandas, polars.

Workloads (float64, side by side in one process, interleaved rounds, steady state):

1. ``regular``: ``N`` points one second apart, windows of ``w`` samples (``w`` = 100 and
   10^4) as an x-width: ``jaxsubset.rolling_statistic`` under ``jit`` against bottleneck
   ``move_*``, numbagg ``move_*``, pandas ``rolling("<w>s")`` and polars ``rolling_*_by``.
2. ``fixed``: the same windows as a fixed count of points,
   ``rolling_statistic(None, y, statistic=..., window=w)`` under ``jit`` (the block road, O(N))
   against bottleneck ``move_*``, numbagg ``move_*`` and pandas ``rolling(w)`` (all with
   ``min_count``/``min_periods`` 1).
3. ``irregular``: ``N`` points with exponential spacing (mean 1 s), a 100 s window (~100
   points): jaxsubset against pandas and polars, mean/std/min/max.
4. ``median``: rolling medians and 0.9-quantiles on the wavelet road, both kinds of window:
   the irregular axis's 100 s windows (``capacity=256``) against pandas ``rolling("100s")``
   and polars ``rolling_median_by``/``rolling_quantile_by``, and fixed windows of ``w``
   points against bottleneck ``move_median``, pandas ``rolling(w)`` and polars
   ``rolling_median``/``rolling_quantile`` (``min_samples=1``).
5. ``ranges``: 1000 x-ranges (``select``) of capacity 1024 in ``N`` points, ``Subsets.mean``
   under ``jit``, against the floor of reading the K*L values (a NumPy fancy-index sum).

Targets (issue 15): regular (x-width) and fixed-count mean/std/min/max within 1.5x of
bottleneck and faster than numbagg; irregular mean/std/min/max >= 3x faster than pandas
and polars, the irregular median >= 2x; the ranges within 3x of the floor. Each is printed
MET or MISSED.

Run ``python benchmarks/bench_windows.py [--quick] [--n N] [--json PATH]`` or
``python benchmarks/run.py --only windows``. Peers missing from the environment are skipped
(``pip install bottleneck numbagg polars``).
"""

import argparse
import importlib
import os
from typing import Any

import jax


jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
from _harness import block, print_header, print_table, time_interleaved, write_json  # noqa: E402

import jaxsubset  # noqa: E402


FULL = dict(n=10**7, widths=(100, 10**4), rounds=5, budget_s=30.0, ranges=1000, capacity=1024)
QUICK = dict(n=20_000, widths=(20,), rounds=2, budget_s=2.0, ranges=20, capacity=64)
STATS = ("mean", "std", "min", "max")


def _peer(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _target(rows: list[dict], name: str, value: float, limit: float, higher: bool) -> None:
    ok = value >= limit if higher else value <= limit
    rows.append(dict(target=name, value=value, limit=limit, status="MET" if ok else "MISSED"))


def _ours(stat: str, **kw: Any) -> Any:
    return jax.jit(
        lambda t, y, w: jaxsubset.rolling_statistic(t, y, w, stat, **kw), static_argnums=()
    )


def workload_regular(cfg: dict, targets: list[dict]) -> list[dict]:
    import pandas as pd

    bn, nb, pl = _peer("bottleneck"), _peer("numbagg"), _peer("polars")
    n = cfg["n"]
    rng = np.random.default_rng(1)
    t = np.arange(n, dtype=np.int64) * 10**9
    y = rng.normal(3.0, 2.0, n)
    s = pd.Series(y, index=pd.to_datetime(t))
    tj, yj = jax.device_put(t), jax.device_put(y)
    df = pl.DataFrame({"t": pd.to_datetime(t), "y": y}) if pl else None
    rows = []
    for w in cfg["widths"]:
        for stat in STATS:
            f = _ours(stat)
            fns = {
                "jaxsubset": lambda f=f, w=w: f(tj, yj, w * 10**9),
                "pandas": lambda w=w, st=stat: getattr(s.rolling(f"{w}s"), st)(),
            }
            move = f"move_{stat}"
            if bn:
                bn_fn = getattr(bn, move)
                fns["bottleneck"] = lambda w=w, fn=bn_fn: fn(y, w, min_count=1)
            if nb and hasattr(nb, move):
                nb_fn = getattr(nb, move)
                fns["numbagg"] = lambda w=w, fn=nb_fn: fn(y, window=w, min_count=1)
            if pl:
                expr = getattr(pl.col("y"), f"rolling_{stat}_by")

                def polars_call(w=w, expr=expr):
                    return df.select(expr("t", window_size=f"{w}s"))

                fns["polars"] = polars_call
            tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
            ref = getattr(s.rolling(f"{w}s"), stat)().to_numpy()
            got = np.asarray(fns["jaxsubset"]())
            if stat == "std":  # pandas' rolling std has ddof=1, the library's default is 0
                cnt = s.rolling(f"{w}s").count().to_numpy()
                ref = ref * np.sqrt(np.where(cnt > 1, (cnt - 1) / cnt, np.nan))
            err = float(np.nanmax(np.abs(got - ref) / (1 + np.abs(ref))))
            row = dict(window=w, stat=stat, max_rel_err=err)
            row.update({k + "_s": v for k, v in tt.items()})
            if "bottleneck" in tt:
                row["ours_over_bottleneck"] = tt["jaxsubset"] / tt["bottleneck"]
                _target(
                    targets,
                    f"regular w={w} {stat} within 1.5x of bottleneck",
                    row["ours_over_bottleneck"],
                    1.5,
                    higher=False,
                )
            if "numbagg" in tt:
                _target(
                    targets,
                    f"regular w={w} {stat} faster than numbagg",
                    tt["numbagg"] / tt["jaxsubset"],
                    1.0,
                    higher=True,
                )
            rows.append(row)
    return rows


def workload_fixed(cfg: dict, targets: list[dict]) -> list[dict]:
    import pandas as pd

    bn, nb = _peer("bottleneck"), _peer("numbagg")
    n = cfg["n"]
    y = np.random.default_rng(1).normal(3.0, 2.0, n)
    s = pd.Series(y)
    yj = jax.device_put(y)
    rows = []
    for w in cfg["widths"]:
        for stat in STATS:
            f = jax.jit(
                lambda y, w=w, st=stat: jaxsubset.rolling_statistic(None, y, statistic=st, window=w)
            )
            fns = {
                "jaxsubset": lambda f=f: f(yj),
                "pandas": lambda w=w, st=stat: getattr(s.rolling(w, min_periods=1), st)(),
            }
            move = f"move_{stat}"
            if bn:
                bn_fn = getattr(bn, move)
                fns["bottleneck"] = lambda w=w, fn=bn_fn: fn(y, w, min_count=1)
            if nb and hasattr(nb, move):
                nb_fn = getattr(nb, move)
                fns["numbagg"] = lambda w=w, fn=nb_fn: fn(y, window=w, min_count=1)
            tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
            ref = getattr(s.rolling(w, min_periods=1), stat)().to_numpy()
            if stat == "std":  # pandas' ddof=1, the library's default 0
                cnt = np.minimum(np.arange(n) + 1, w)
                ref = ref * np.sqrt(np.where(cnt > 1, (cnt - 1) / cnt, np.nan))
            got = np.asarray(fns["jaxsubset"]())
            err = float(np.nanmax(np.abs(got - ref) / (1 + np.abs(ref))))
            row = dict(window=w, stat=stat, max_rel_err=err)
            row.update({k + "_s": v for k, v in tt.items()})
            for peer in ("bottleneck", "numbagg", "pandas"):
                if peer in tt:
                    row[f"ours_over_{peer}"] = tt["jaxsubset"] / tt[peer]
            if "bottleneck" in tt:
                _target(
                    targets,
                    f"fixed w={w} {stat} within 1.5x of bottleneck",
                    row["ours_over_bottleneck"],
                    1.5,
                    higher=False,
                )
            if "numbagg" in tt:
                _target(
                    targets,
                    f"fixed w={w} {stat} faster than numbagg",
                    tt["numbagg"] / tt["jaxsubset"],
                    1.0,
                    higher=True,
                )
            rows.append(row)
    return rows


def workload_irregular(cfg: dict, targets: list[dict]) -> list[dict]:
    import pandas as pd

    pl = _peer("polars")
    n = cfg["n"]
    rng = np.random.default_rng(2)
    t = np.cumsum(rng.exponential(1.0, n) * 1e9).astype(np.int64)
    y = rng.normal(3.0, 2.0, n)
    s = pd.Series(y, index=pd.to_datetime(t))
    tj, yj = jax.device_put(t), jax.device_put(y)
    df = pl.DataFrame({"t": pd.to_datetime(t), "y": y}) if pl else None
    w = 100
    rows = []
    for stat in STATS:
        f = _ours(stat)
        fns = {
            "jaxsubset": lambda f=f: f(tj, yj, w * 10**9),
            "pandas": lambda st=stat: getattr(s.rolling(f"{w}s"), st)(),
        }
        if pl:
            expr = getattr(pl.col("y"), f"rolling_{stat}_by")
            fns["polars"] = lambda expr=expr: df.select(expr("t", window_size=f"{w}s"))
        try:
            tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
        except Exception as e:  # e.g. memory at large N: report, go on
            rows.append(dict(stat=stat, error=f"{type(e).__name__}: {str(e)[:80]}"))
            continue
        row = dict(stat=stat)
        row.update({k + "_s": v for k, v in tt.items()})
        limit = 3.0
        for peer in ("pandas", "polars"):
            if peer in tt:
                row[f"{peer}_over_ours"] = tt[peer] / tt["jaxsubset"]
                _target(
                    targets,
                    f"irregular {stat} >= {limit:g}x faster than {peer}",
                    row[f"{peer}_over_ours"],
                    limit,
                    higher=True,
                )
        rows.append(row)
    return rows


def workload_median(cfg: dict, targets: list[dict]) -> list[dict]:
    import pandas as pd

    pl, bn = _peer("polars"), _peer("bottleneck")
    n = cfg["n"]
    rng = np.random.default_rng(4)
    t = np.cumsum(rng.exponential(1.0, n) * 1e9).astype(np.int64)
    y = rng.normal(3.0, 2.0, n)
    tj, yj = jax.device_put(t), jax.device_put(y)
    s, si = pd.Series(y), pd.Series(y, index=pd.to_datetime(t))
    df = pl.DataFrame({"t": pd.to_datetime(t), "y": y}) if pl else None
    rows = []
    for stat, q in (("median", None), ("quantile", 0.9)):
        # the irregular axis: 100 s windows (~100 points, at most 256)
        f = _ours(stat, capacity=256, q=q)
        fns = {
            "jaxsubset": lambda f=f: f(tj, yj, 100 * 10**9),
            "pandas": lambda st=stat, q=q: getattr(si.rolling("100s"), st)(*([q] if q else [])),
        }
        if pl:
            if q is None:
                expr = pl.col("y").rolling_median_by("t", window_size="100s")
            else:
                expr = pl.col("y").rolling_quantile_by(
                    "t", window_size="100s", quantile=q, interpolation="linear"
                )
            fns["polars"] = lambda expr=expr: df.select(expr)
        tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
        ref = np.asarray(fns["pandas"]())
        err = float(np.nanmax(np.abs(np.asarray(fns["jaxsubset"]()) - ref)))
        row = dict(window="100 s", stat=stat, max_abs_err=err)
        row.update({k + "_s": v for k, v in tt.items()})
        for peer in ("pandas", "polars"):
            if peer in tt:
                row[f"{peer}_over_ours"] = tt[peer] / tt["jaxsubset"]
                if stat == "median":
                    _target(
                        targets,
                        f"irregular median >= 2x faster than {peer}",
                        row[f"{peer}_over_ours"],
                        2.0,
                        higher=True,
                    )
        rows.append(row)
        # fixed windows of w points
        for w in cfg["widths"]:
            g = jax.jit(
                lambda y, w=w, st=stat, q=q: jaxsubset.rolling_statistic(
                    None, y, statistic=st, q=q, window=w
                )
            )
            fns = {
                "jaxsubset": lambda g=g: g(yj),
                "pandas": lambda w=w, st=stat, q=q: getattr(s.rolling(w, min_periods=1), st)(
                    *([q] if q else [])
                ),
            }
            if bn and q is None:
                fns["bottleneck"] = lambda w=w: bn.move_median(y, w, min_count=1)
            if pl:
                col = pl.col("y")
                if q is None:
                    expr = col.rolling_median(window_size=w, min_samples=1)
                else:
                    expr = col.rolling_quantile(
                        window_size=w, quantile=q, interpolation="linear", min_samples=1
                    )
                fns["polars"] = lambda expr=expr: df.select(expr)
            tt = time_interleaved(fns, rounds=cfg["rounds"], budget_s=cfg["budget_s"])
            ref = np.asarray(fns["pandas"]())
            err = float(np.nanmax(np.abs(np.asarray(fns["jaxsubset"]()) - ref)))
            row = dict(window=w, stat=stat, max_abs_err=err)
            row.update({k + "_s": v for k, v in tt.items()})
            for peer in ("bottleneck", "pandas", "polars"):
                if peer in tt:
                    row[f"ours_over_{peer}"] = tt["jaxsubset"] / tt[peer]
            rows.append(row)
    return rows


def workload_ranges(cfg: dict, targets: list[dict]) -> list[dict]:
    n, k, cap = cfg["n"], cfg["ranges"], cfg["capacity"]
    rng = np.random.default_rng(3)
    x = np.arange(n, dtype=np.float64)
    y = rng.normal(size=n)
    lo = np.sort(rng.uniform(0, n - cap, k))
    hi = lo + rng.uniform(0.5, 1.0, k) * cap
    xj, yj = jax.device_put(x), jax.device_put(y)
    f = jax.jit(lambda x, y, a, b: jaxsubset.select(x, y, a, b, capacity=cap).mean())
    idx = (np.floor(lo).astype(np.int64)[:, None] + np.arange(cap)[None, :]).ravel()
    idx = np.minimum(idx, n - 1)
    tt = time_interleaved(
        {"jaxsubset": lambda: f(xj, yj, lo, hi), "floor": lambda: y[idx].sum()},
        rounds=cfg["rounds"],
        budget_s=cfg["budget_s"],
    )
    ratio = tt["jaxsubset"] / tt["floor"]
    _target(targets, f"{k} x-ranges of capacity {cap}: within 3x of reading K*L", ratio, 3.0, False)
    row = dict(ranges=k, capacity=cap, ours_s=tt["jaxsubset"], floor_s=tt["floor"], x_floor=ratio)
    return [row]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small N (seconds), for the smoke test")
    p.add_argument("--n", type=int, help="points (default 1e7; --quick 2e4)")
    p.add_argument("--json", metavar="PATH", help="write every result to PATH as JSON")
    p.add_argument(
        "--only", choices=("regular", "fixed", "irregular", "median", "ranges"), action="append"
    )
    args = p.parse_args(argv)
    cfg: dict[str, Any] = dict(QUICK if args.quick else FULL)
    if args.n:
        cfg["n"] = args.n
    info = print_header("jaxsubset windows (issue 15)" + (" --quick" if args.quick else ""))
    info["loadavg"] = os.getloadavg()
    print(f"load average {info['loadavg']}")
    only = set(args.only or ("regular", "fixed", "irregular", "median", "ranges"))
    results: dict[str, list[dict]] = {}
    targets: list[dict] = []
    if "regular" in only:
        print(f"\n-- regular: N={cfg['n']:.0e}, windows {cfg['widths']} samples")
        results["regular"] = workload_regular(cfg, targets)
        print_table(results["regular"], sorted({k for r in results["regular"] for k in r}))
    if "fixed" in only:
        print(f"\n-- fixed-count windows: N={cfg['n']:.0e}, window={cfg['widths']} points")
        results["fixed"] = workload_fixed(cfg, targets)
        print_table(results["fixed"], sorted({k for r in results["fixed"] for k in r}))
    if "irregular" in only:
        print(f"\n-- irregular: N={cfg['n']:.0e}, 100 s windows (~100 points)")
        results["irregular"] = workload_irregular(cfg, targets)
        print_table(results["irregular"], sorted({k for r in results["irregular"] for k in r}))
    if "median" in only:
        print(f"\n-- median/quantile: N={cfg['n']:.0e}, 100 s and {cfg['widths']}-point windows")
        results["median"] = workload_median(cfg, targets)
        print_table(results["median"], sorted({k for r in results["median"] for k in r}))
    if "ranges" in only:
        print(f"\n-- ranges: {cfg['ranges']} select ranges of capacity {cfg['capacity']}")
        results["ranges"] = workload_ranges(cfg, targets)
        print_table(results["ranges"], list(results["ranges"][0]))
    print("\n-- targets")
    print_table(targets, ["target", "value", "limit", "status"])
    payload = dict(machine=info, config=cfg, results=results, targets=targets)
    if args.json:
        write_json(args.json, payload)
    block(None)
    return payload


if __name__ == "__main__":
    main()
