"""Statistics benchmarks (issue 3): binned/rolling statistics against SciPy, NumPy and pandas.

Workloads (float64, side by side in one process; steady state and compile time apart):

1. ``binned``: ``N`` = 1e7 points, 1000 equal bins on ``[0, 1)``, every statistic, for sorted
   and for shuffled ``x``: ``jaxsubset.binned_statistic`` under ``jit`` (the statistic only, so
   XLA drops the unused ``binnumber``; one row also returns it) against
   ``scipy.stats.binned_statistic``, NumPy (``digitize`` + ``bincount``; ``reduceat`` for
   min/max) and pandas ``groupby`` on the bin codes. The floor is one ``np.sum(y)`` pass, timed
   in rounds interleaved with jaxsubset's.
2. ``rolling``: ``N`` = 1e7 points one second apart, a 100 s (= 100 samples) offset window:
   ``jaxsubset.rolling_statistic`` under ``jit`` against ``pandas.Series.rolling("100s")``,
   in interleaved rounds.

Targets (issue 3): sorted x, count/sum/mean/std/min/max within 3x of the floor; shuffled x,
>= 10x faster than SciPy for every statistic; median >= 10x faster than SciPy; rolling >= 2x
faster than pandas. Each is printed MET or MISSED.

Run ``python benchmarks/bench_stats.py [--quick] [--json PATH] [--markdown PATH]`` or
``python benchmarks/run.py``; ``--from-json PATH`` prints the Markdown tables of a saved run.
The header names glibc's huge-page setting, which moves these timings up to 2x on Linux.
"""

import argparse
import time
from typing import Any

import jax


jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
from _harness import (  # noqa: E402
    block,
    print_header,
    print_table,
    time_first,
    time_interleaved,
    time_steady,
    write_json,
)

import jaxsubset  # noqa: E402


STATS = ("count", "sum", "mean", "std", "min", "max", "median")
ROLL_STATS = ("count", "sum", "mean", "std", "min", "max")
FULL = dict(
    n=10**7, bins=1000, repeats=3, rounds=7, budget_s=8.0, slow_repeats=1, roll_n=10**7, width=100
)
QUICK = dict(
    n=20_000, bins=50, repeats=2, rounds=2, budget_s=1.0, slow_repeats=1, roll_n=20_000, width=20
)


def _numpy_binned(x: np.ndarray, y: np.ndarray, stat: str, nb: int, x_sorted: bool) -> Any:
    edges = np.linspace(0.0, 1.0, nb + 1)
    ids = np.clip(np.digitize(x, edges), 1, nb) - 1
    if stat == "count":
        return np.bincount(ids, minlength=nb)
    s = np.bincount(ids, y, minlength=nb)
    if stat == "sum":
        return s
    c = np.bincount(ids, minlength=nb)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = s / c
        if stat == "mean":
            return m
        if stat == "std":
            d = y - m[ids]
            return np.sqrt(np.bincount(ids, d * d, minlength=nb) / c)
    if stat in ("min", "max"):
        if not x_sorted:
            order = np.argsort(ids, kind="stable")
            ids, y = ids[order], y[order]
        starts = np.searchsorted(ids, np.arange(nb))
        ufunc = np.minimum if stat == "min" else np.maximum
        return ufunc.reduceat(y, np.minimum(starts, len(y) - 1))
    return None  # NumPy has no grouped median short of a sort + split loop: see scipy/pandas


def _pandas_binned(x: np.ndarray, y: np.ndarray, stat: str, nb: int) -> Any:
    import pandas as pd

    ids = np.clip((x * nb).astype(np.int64), 0, nb - 1)
    g = pd.Series(y).groupby(ids)
    return getattr(g, "size" if stat == "count" else stat)(**({"ddof": 0} if stat == "std" else {}))


def workload_binned(cfg: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    import scipy.stats

    n, nb = cfg["n"], cfg["bins"]
    rng = np.random.default_rng(0)
    xs = rng.uniform(0.0, 1.0, n)
    y = rng.normal(3.0, 2.0, n)
    rows, targets = [], []
    floor = time_steady(lambda: np.sum(y), repeats=cfg["repeats"] * 3)
    rows.append(dict(order="-", stat="-", method="floor: np.sum(y)", steady_s=floor))
    for order in ("sorted", "shuffled"):
        x = np.sort(xs) if order == "sorted" else xs
        x_sorted = order == "sorted"
        xj, yj = jax.device_put(x), jax.device_put(y)
        for stat in cfg["stats"]:

            def ours(x, y, stat=stat, x_sorted=x_sorted):
                r = jaxsubset.binned_statistic(x, y, stat, nb, (0.0, 1.0), x_sorted=x_sorted)
                return r.statistic

            f = jax.jit(ours)
            first = time_first(lambda f=f, a=xj, b=yj: f(a, b))
            # in rounds with the floor: the x_floor ratio is measured side by side
            tt = time_interleaved(
                {"ours": lambda f=f, a=xj, b=yj: f(a, b), "floor": lambda: np.sum(y)},
                rounds=cfg["rounds"],
                budget_s=cfg["budget_s"],
            )
            t_ours, floor_here = tt["ours"], tt["floor"]
            ref = scipy.stats.binned_statistic(x, y, stat, nb, (0.0, 1.0))
            t0 = time.perf_counter()
            for _ in range(cfg["slow_repeats"]):
                scipy.stats.binned_statistic(x, y, stat, nb, (0.0, 1.0))
            t_scipy = (time.perf_counter() - t0) / cfg["slow_repeats"]
            err = float(
                np.nanmax(
                    np.abs(np.asarray(f(xj, yj)) - ref.statistic) / (1 + np.abs(ref.statistic))
                )
            )
            base = dict(order=order, stat=stat)
            rows.append(
                dict(
                    base,
                    method="jaxsubset binned_statistic (jit)",
                    steady_s=t_ours,
                    compile_s=first - t_ours,
                    x_floor=t_ours / floor_here,
                    scipy_over_ours=t_scipy / t_ours,
                    max_rel_err=err,
                )
            )
            rows.append(dict(base, method="scipy.stats.binned_statistic", steady_s=t_scipy))
            if _numpy_binned(x[:10], y[:10], stat, nb, x_sorted) is not None:
                t_np = time_steady(
                    lambda s=stat, a=x, o=x_sorted: _numpy_binned(a, y, s, nb, o),
                    repeats=cfg["slow_repeats"],
                    warmup=0,
                )
                rows.append(dict(base, method="numpy digitize+bincount/reduceat", steady_s=t_np))
            t_pd = time_steady(
                lambda s=stat, a=x: _pandas_binned(a, y, s, nb),
                repeats=cfg["slow_repeats"],
                warmup=0,
            )
            rows.append(dict(base, method="pandas groupby(codes)", steady_s=t_pd))
            if order == "sorted" and stat != "median":
                ratio = t_ours / floor_here
                goal = dict(target=f"sorted {stat} <= 3x np.sum", value=ratio, limit=3.0)
                goal["status"] = "MET" if ratio <= 3 else "MISSED"
            else:
                goal = dict(
                    target=f"{order} {stat} >= 10x faster than scipy",
                    value=t_scipy / t_ours,
                    limit=10.0,
                )
                goal["status"] = "MET" if t_scipy >= 10 * t_ours else "MISSED"
            targets.append(goal)
        # what returning scipy's binnumber too costs
        g = jax.jit(
            lambda x, y, s=x_sorted: jaxsubset.binned_statistic(
                x, y, "mean", nb, (0.0, 1.0), x_sorted=s
            )[::2]
        )
        first = time_first(lambda g=g, a=xj, b=yj: g(a, b))
        t = time_steady(
            lambda g=g, a=xj, b=yj: g(a, b), repeats=cfg["repeats"], budget_s=cfg["budget_s"]
        )
        rows.append(
            dict(
                order=order,
                stat="mean",
                method="jaxsubset, statistic + binnumber",
                steady_s=t,
                compile_s=first - t,
                x_floor=t / floor,
            )
        )
    return rows, targets


def workload_rolling(cfg: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    import pandas as pd

    n, w = cfg["roll_n"], cfg["width"]
    rng = np.random.default_rng(1)
    t = np.arange(n, dtype=np.int64) * 1_000_000_000
    y = rng.normal(3.0, 2.0, n)
    s = pd.Series(y, index=pd.to_datetime(t))
    tj, yj = jax.device_put(t), jax.device_put(y)
    width = w * 1_000_000_000
    rows, targets = [], []
    floor = time_steady(lambda: np.sum(y), repeats=cfg["repeats"] * 3)
    rows.append(dict(stat="-", method="floor: np.sum(y)", steady_s=floor))
    for stat in (s for s in ROLL_STATS if s in cfg["stats"]):
        f = jax.jit(lambda t, y, wd, stat=stat: jaxsubset.rolling_statistic(t, y, wd, stat))
        first = time_first(lambda f=f: f(tj, yj, width))
        roll = s.rolling(f"{w}s")
        # pandas takes ~0.2 s here: both after a warm-up, in interleaved rounds (one cold
        # pandas call measured up to 2x slower and flattered the ratio; one method timed after
        # the other let a change of load land on one of them)
        tt = time_interleaved(
            {
                "ours": lambda f=f: f(tj, yj, width),
                "pandas": lambda st=stat, r=roll: getattr(r, st)(),
                "floor": lambda: np.sum(y),
            },
            rounds=cfg["rounds"],
            budget_s=cfg["budget_s"] * 4,
        )
        t_ours, t_pd = tt["ours"], tt["pandas"]
        ref = getattr(roll, stat)().to_numpy()
        got = np.asarray(f(tj, yj, width))
        err = float(np.nanmax(np.abs(got - ref) / (1 + np.abs(ref))))
        rows.append(
            dict(
                stat=stat,
                method="jaxsubset rolling_statistic (jit)",
                steady_s=t_ours,
                compile_s=first - t_ours,
                x_floor=t_ours / tt["floor"],
                pandas_over_ours=t_pd / t_ours,
                max_rel_err=err,
            )
        )
        rows.append(dict(stat=stat, method=f"pandas rolling('{w}s')", steady_s=t_pd))
        targets.append(
            dict(
                target=f"rolling {stat} >= 2x faster than pandas",
                value=t_pd / t_ours,
                limit=2.0,
                status="MET" if t_pd >= 2 * t_ours else "MISSED",
            )
        )
    return rows, targets


def markdown(payload: dict[str, Any]) -> str:
    """The binned and rolling tables of one run as Markdown (the form BENCHMARKS.md uses)."""

    def ms(v: float | None) -> str:
        return "" if v is None else f"{1e3 * v:.3g}"

    def by(rows: list[dict], key: tuple, method: str) -> dict | None:
        return next(
            (r for r in rows if (r.get("order"), r["stat"]) == key and method in r["method"]), None
        )

    out = [f"malloc: {payload['machine'].get('malloc', '?')}", ""]
    binned = payload["results"].get("binned", [])
    if binned:
        floor = binned[0]["steady_s"]
        out += [
            f"binned_statistic (floor: np.sum {ms(floor)} ms; x floor: against the floor timed in"
            " the same rounds)",
            "",
            "| x | statistic | jaxsubset ms | x floor | compile s | scipy ms | scipy / jaxsubset "
            "| numpy ms | pandas groupby ms |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in binned:
            if r["method"] != "jaxsubset binned_statistic (jit)":
                continue
            key = (r["order"], r["stat"])
            sc, npy, pd_ = (by(binned, key, m) for m in ("scipy", "numpy", "pandas"))
            out.append(
                f"| {r['order']} | {r['stat']} | {ms(r['steady_s'])} | {r['x_floor']:.2f} "
                f"| {r['compile_s']:.2f} | {ms(sc and sc['steady_s'])} "
                f"| **{r['scipy_over_ours']:.3g}** | {ms(npy and npy['steady_s'])} "
                f"| {ms(pd_ and pd_['steady_s'])} |"
            )
        out.append("")
    rolling = payload["results"].get("rolling", [])
    if rolling:
        out += [
            "rolling_statistic (interleaved rounds with pandas)",
            "",
            "| statistic | jaxsubset ms | compile s | pandas ms | pandas / jaxsubset "
            "| max rel. err. vs pandas |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for r in rolling:
            if not r["method"].startswith("jaxsubset"):
                continue
            pd_ = by(rolling, (None, r["stat"]), "pandas")
            out.append(
                f"| {r['stat']} | {ms(r['steady_s'])} | {r['compile_s']:.2f} "
                f"| {ms(pd_ and pd_['steady_s'])} | **{r['pandas_over_ours']:.3g}** "
                f"| {r['max_rel_err']:.1e} |"
            )
        out.append("")
    out += ["| target | value | status |", "|---|---:|---|"]
    out += [f"| {t['target']} | {t['value']:.3g} | {t['status']} |" for t in payload["targets"]]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small N (seconds), for the smoke test")
    p.add_argument("--n", type=int, help="points of both workloads (default 1e7; --quick 2e4)")
    p.add_argument("--json", metavar="PATH", help="write every result to PATH as JSON")
    p.add_argument("--only", choices=("binned", "rolling"), action="append")
    p.add_argument("--stats", help="comma-separated statistics to run (default: all)")
    p.add_argument("--markdown", metavar="PATH", help="write the tables as Markdown to PATH")
    p.add_argument(
        "--from-json", metavar="PATH", help="no run: print the Markdown of a saved --json run"
    )
    args = p.parse_args(argv)
    if args.from_json:
        import json

        with open(args.from_json) as f:
            text = markdown(json.load(f))
        print(text, end="")
        return {}
    cfg = dict(QUICK if args.quick else FULL)
    if args.n:
        cfg["n"] = cfg["roll_n"] = args.n
    cfg["stats"] = tuple(args.stats.split(",")) if args.stats else STATS
    unknown = set(cfg["stats"]) - set(STATS)
    if unknown:
        p.error(f"unknown statistics {sorted(unknown)}; choose from {', '.join(STATS)}")
    only = set(args.only or ("binned", "rolling"))
    info = print_header("jaxsubset statistics (issue 3)" + (" --quick" if args.quick else ""))
    results: dict[str, list[dict]] = {}
    targets: list[dict] = []
    cols = ["order", "stat", "method", "steady_s", "compile_s", "x_floor"]
    if "binned" in only:
        print(f"\n-- binned_statistic: N={cfg['n']:.0e}, {cfg['bins']} bins (x_floor: vs np.sum)")
        rows, tg = workload_binned(cfg)
        results["binned"], targets = rows, targets + tg
        print_table(rows, cols + ["scipy_over_ours", "max_rel_err"])
    if "rolling" in only:
        print(f"\n-- rolling_statistic: N={cfg['roll_n']:.0e}, window {cfg['width']} samples")
        rows, tg = workload_rolling(cfg)
        results["rolling"], targets = rows, targets + tg
        print_table(rows, cols[1:] + ["pandas_over_ours", "max_rel_err"])
    print("\n-- targets")
    print_table(targets, ["target", "value", "limit", "status"])
    payload = dict(machine=info, config=cfg, results=results, targets=targets)
    if args.json:
        write_json(args.json, payload)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(payload))
    block(None)
    return payload


if __name__ == "__main__":
    main()
