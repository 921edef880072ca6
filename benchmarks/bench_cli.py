"""The command on a CSV against pandas, in fresh processes (issue 30).

A CSV of N rows (default 1e6): an ISO date column every 5 minutes and two value columns, about
1% of their cells empty. Timed, each as a fresh process, in interleaved rounds (one of each per
round, the median of the rounds, so that a change of load lands on all of them alike):

1. ``jaxsubset stats data.csv --x date --y a --y b --width 7D --stat mean --out r.parquet``
   (a rolling 7-day mean of both columns) and ``... --bins 1M --stat mean --out m.parquet``
   (monthly bins), each with the compilation cache warm (filled by an earlier run) and cold
   (an empty cache folder: it compiles and fills it), next to pandas doing the same in a
   fresh process: ``read_csv(parse_dates)``, ``df[["a", "b"]].rolling("7D").mean()`` or
   ``.resample("MS").mean()``, ``to_parquet``. The whole job (both outputs) is the sum of the
   two commands against one pandas process doing both (it reads the CSV once). polars does
   the same beside them (``read_csv(try_parse_dates=True)``, ``rolling_mean_by("date",
   "7d")`` / ``group_by_dynamic("date", every="1mo")``, ``write_parquet``), for reference.
2. A bad column and a width without a unit on a file of about ``--big-mb`` MB (the 1e6-row
   CSV repeated): the wall time of the process, and the time inside ``main`` (the command
   itself, after ``import jaxsubset``), against a bare ``python -c "import jaxsubset"``.
3. ``--profile``: one warm run of each command under cProfile: where the time goes by stage
   (imports, reading, the ranges, the statistics, writing) and the library calls; and
   ``python -X importtime -c "import jax"``: the import's biggest parts (median of 3).

Targets: warm <= 2x pandas, cold <= 3x pandas, a bad column on ~1 GB reported in < 1 s.

    python benchmarks/bench_cli.py                  # 1e6 rows, 3 rounds, a 1 GB bad-column file
    python benchmarks/bench_cli.py --quick          # 1e5 rows, 1 round, 50 MB
    python benchmarks/bench_cli.py --no-polars      # without the polars jobs
    python benchmarks/bench_cli.py --profile --json cli.json
    python benchmarks/bench_cli.py --baseline ../before/src   # also the command before a change
"""

import argparse
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np
from _harness import print_header, print_table, write_json


ROLLING = ["--width", "7D", "--stat", "mean", "--out", "r.parquet"]
BINS = ["--bins", "1M", "--stat", "mean", "--out", "m.parquet"]
PANDAS = """\
import sys
import pandas as pd
df = pd.read_csv(sys.argv[1], parse_dates=["date"], index_col="date")
for kind in sys.argv[2].split(","):
    if kind == "rolling":
        df[["a", "b"]].rolling("7D").mean().to_parquet("pr.parquet")
    else:
        df[["a", "b"]].resample("MS").mean().to_parquet("pm.parquet")
"""
POLARS = """\
import sys
import polars as pl
df = pl.read_csv(sys.argv[1], try_parse_dates=True)
for kind in sys.argv[2].split(","):
    if kind == "rolling":
        mean = pl.col("a", "b").rolling_mean_by("date", window_size="7d")
        df.select("date", mean).write_parquet("plr.parquet")
    else:
        monthly = df.group_by_dynamic("date", every="1mo").agg(pl.col("a", "b").mean())
        monthly.write_parquet("plm.parquet")
"""


def make_csv(path: str, n: int, seed: int = 0) -> None:
    """``date,a,b``: ISO dates every 5 minutes from 2001-01-01, values with 4 decimals, about
    1% of the value cells empty."""
    rng = np.random.default_rng(seed)
    t = np.datetime64("2001-01-01T00:00:00") + np.arange(n) * np.timedelta64(300, "s")
    cols = [np.datetime_as_string(t, unit="s")]
    for scale, offset in ((1.0, 20.0), (3.0, 0.0)):
        v = np.round(offset + scale * rng.normal(size=n), 4).astype(str)
        v[rng.random(n) < 0.01] = ""
        cols.append(v)
    rows = np.char.add(np.char.add(np.char.add(np.char.add(cols[0], ","), cols[1]), ","), cols[2])
    with open(path, "w") as f:
        f.write("date,a,b\n")
        f.write("\n".join(rows.tolist()))
        f.write("\n")


def make_big(small: str, path: str, mb: float) -> int:
    """``small`` repeated (its header once) to about ``mb`` MB; returns the size in bytes."""
    with open(small, "rb") as f:
        header = f.readline()
        body = f.read()
    with open(path, "wb") as f:
        f.write(header)
        for _ in range(max(1, round(mb * 1e6 / len(body)))):
            f.write(body)
    return os.path.getsize(path)


class Runner:
    """Fresh processes in ``folder`` with a cache folder of our own."""

    def __init__(self, folder: str, baseline: str | None = None) -> None:
        self.folder = folder
        self.baseline = baseline
        self.env = dict(os.environ)
        for var in ("JAX_ENABLE_X64", "JAX_COMPILATION_CACHE_DIR", "JAXSUBSET_NO_CACHE"):
            self.env.pop(var, None)
        self.env.setdefault("JAX_PLATFORMS", "cpu")
        self.warm_cache = tempfile.mkdtemp(prefix="cache-warm-", dir=folder)

    def wall(
        self, argv: list[str], cache: str | None = None, status: int = 0, src: str | None = None
    ) -> float:
        env = dict(self.env)
        env["JAXSUBSET_CACHE_DIR"] = cache or self.warm_cache
        if src is not None:  # another jaxsubset: the baseline's source tree
            env["PYTHONPATH"] = src
        t0 = time.perf_counter()
        p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=self.folder)
        took = time.perf_counter() - t0
        if p.returncode != status:
            raise RuntimeError(f"{argv[:6]} exited {p.returncode}:\n{p.stderr[-3000:]}")
        return took

    def command(self, options: list[str], cold: bool, base: bool = False) -> float:
        cache = tempfile.mkdtemp(prefix="cache-cold-", dir=self.folder) if cold else None
        argv = [sys.executable, "-m", "jaxsubset", "stats", "data.csv", "--x", "date"]
        argv += ["--y", "a", "--y", "b", *options, "--quiet"]
        try:
            return self.wall(argv, cache, src=self.baseline if base else None)
        finally:
            if cache:
                shutil.rmtree(cache, ignore_errors=True)

    def pandas(self, kinds: str) -> float:
        return self.wall([sys.executable, "-c", PANDAS, "data.csv", kinds])

    def polars(self, kinds: str) -> float:
        return self.wall([sys.executable, "-c", POLARS, "data.csv", kinds])


def run_jobs(runner: Runner, rounds: int, polars: bool = True) -> list[dict[str, Any]]:
    """Interleaved rounds of every command, pandas and polars job; the median of each."""
    jobs = {
        "rolling warm": lambda: runner.command(ROLLING, cold=False),
        "rolling cold": lambda: runner.command(ROLLING, cold=True),
        "rolling pandas": lambda: runner.pandas("rolling"),
        "bins warm": lambda: runner.command(BINS, cold=False),
        "bins cold": lambda: runner.command(BINS, cold=True),
        "bins pandas": lambda: runner.pandas("bins"),
        "both pandas": lambda: runner.pandas("rolling,bins"),
    }
    if polars:
        jobs["rolling polars"] = lambda: runner.polars("rolling")
        jobs["bins polars"] = lambda: runner.polars("bins")
        jobs["both polars"] = lambda: runner.polars("rolling,bins")
    if runner.baseline:
        jobs["rolling baseline"] = lambda: runner.command(ROLLING, cold=False, base=True)
        jobs["bins baseline"] = lambda: runner.command(BINS, cold=False, base=True)
        runner.command(ROLLING, cold=False, base=True)
        runner.command(BINS, cold=False, base=True)
    runner.command(ROLLING, cold=False)  # fill the warm cache (and the page cache)
    runner.command(BINS, cold=False)
    times: dict[str, list[float]] = {k: [] for k in jobs}
    for r in range(rounds):
        for name, job in jobs.items():
            times[name].append(job())
        print(f"   round {r + 1}/{rounds}: load {os.getloadavg()[0]:.1f}", flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = []
    for job, what in (("rolling", "--width 7D"), ("bins", "--bins 1M")):
        rows.append(
            {
                "job": f"{what} --stat mean, 2 y, parquet",
                "warm_s": med[f"{job} warm"],
                "cold_s": med[f"{job} cold"],
                "pandas_s": med[f"{job} pandas"],
                "warm_x": med[f"{job} warm"] / med[f"{job} pandas"],
                "cold_x": med[f"{job} cold"] / med[f"{job} pandas"],
                "rounds": times[f"{job} warm"] + times[f"{job} cold"] + times[f"{job} pandas"],
            }
        )
        if runner.baseline:
            rows[-1]["baseline_warm_s"] = med[f"{job} baseline"]
        if polars:
            rows[-1]["polars_s"] = med[f"{job} polars"]
            rows[-1]["warm_x_polars"] = med[f"{job} warm"] / med[f"{job} polars"]
    warm = med["rolling warm"] + med["bins warm"]
    cold = med["rolling cold"] + med["bins cold"]
    rows.append(
        {
            "job": "both outputs (2 commands; pandas: 1 process)",
            "warm_s": warm,
            "cold_s": cold,
            "pandas_s": med["both pandas"],
            "warm_x": warm / med["both pandas"],
            "cold_x": cold / med["both pandas"],
        }
    )
    if polars:
        rows[-1]["polars_s"] = med["both polars"]
        rows[-1]["warm_x_polars"] = warm / med["both polars"]
    return rows


BAD = """\
import sys, time
t0 = time.perf_counter()
from jaxsubset.cli import main
t1 = time.perf_counter()
status = main(sys.argv[1:])
t2 = time.perf_counter()
print(f"{t1 - t0} {t2 - t1} {status}")
"""


def run_bad(runner: Runner, big: str, rounds: int) -> list[dict[str, Any]]:
    """A bad column and a width without a unit on the big file: process and ``main`` times."""
    cases = {
        "misspelled --y": ["--x", "date", "--y", "aa", "--width", "7D"],
        "--width 7 (no unit)": ["--x", "date", "--y", "a", "--width", "7"],
    }
    rows = []
    floor = [runner.wall([sys.executable, "-c", "import jaxsubset"]) for _ in range(rounds)]
    for name, options in cases.items():
        walls, mains = [], []
        for _ in range(rounds):
            argv = [sys.executable, "-c", BAD, "stats", big, *options, "--quiet"]
            env = dict(runner.env, JAXSUBSET_CACHE_DIR=runner.warm_cache)
            t0 = time.perf_counter()
            p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=runner.folder)
            walls.append(time.perf_counter() - t0)
            _, in_main, status = p.stdout.split()
            if status != "2":
                raise RuntimeError(f"{name}: exit status {status}, expected 2:\n{p.stderr}")
            mains.append(float(in_main))
        base = None
        if runner.baseline:  # once: the old reader reads the whole file first
            argv = [sys.executable, "-m", "jaxsubset", "stats", big, *options, "--quiet"]
            base = runner.wall(argv, status=2, src=runner.baseline)
        rows.append(
            {
                "baseline_process_s": base,
                "case": name,
                "file_mb": os.path.getsize(big) / 1e6,
                "process_s": statistics.median(walls),
                "main_s": statistics.median(mains),
                "import_jaxsubset_s": statistics.median(floor),
                "message": p.stderr.strip(),
            }
        )
    return rows


STAGES = {  # stage -> (the end of the file's path, the function): cProfile's cumulative time
    "import jaxsubset": ("jaxsubset/__init__.py", "<module>"),
    "import jax": ("jax/__init__.py", "<module>"),
    "read_xy": ("cli/_reader.py", "read_xy"),
    "pyarrow": ("cli/_text.py", "read_direct"),
    "ranges": ("cli/_options.py", "build_ranges"),
    "missing": ("cli/_stats.py", "missing_readings"),
    "statistics": ("cli/_stats.py", "compute_statistics"),
    "table": ("cli/_stats.py", "result_columns"),
    "write": ("cli/_writer.py", "write_table"),
    "main": ("cli/_main.py", "main"),
}


def run_profile(runner: Runner) -> list[dict[str, Any]]:
    """One warm run of each command under cProfile: seconds by stage (cumulative; pyarrow is
    the direct road's part of read_xy, ranges the jaxsubset.ranges calls, statistics
    jaxsubset.range_statistic)."""
    rows = []
    for job, options in (("--width 7D", ROLLING), ("--bins 1M", BINS)):
        out = os.path.join(runner.folder, "cli.prof")
        argv = [sys.executable, "-m", "cProfile", "-o", out, "-m", "jaxsubset", "stats"]
        argv += ["data.csv", "--x", "date", "--y", "a", "--y", "b", *options, "--quiet"]
        total = runner.wall(argv)
        stats = pstats.Stats(out).stats  # type: ignore[attr-defined]
        row: dict[str, Any] = {"job": job, "process_s": total}
        for stage, (file, fn) in STAGES.items():
            row[stage] = sum(
                v[3] for (f, _, name), v in stats.items() if f.endswith(file) and name == fn
            )
        rows.append(row)
    return rows


def run_importtime(runner: Runner, rounds: int) -> list[dict[str, Any]]:
    """``python -X importtime -c "import jax"``: the whole import and its biggest parts
    (cumulative seconds, median of ``rounds`` fresh processes; the module names as Python
    prints them)."""
    parts = ("jax", "jax._src.lib", "jaxlib._jax", "jax._src.core", "jax._src.dtypes",
             "ml_dtypes", "ml_dtypes._ml_dtypes_ext", "jax._src.lax", "jax._src.numpy",
             "jax._src.api", "numpy")  # fmt: skip
    seen: dict[str, list[float]] = {}
    for _ in range(rounds):
        p = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import jax"],
            capture_output=True, text=True, env=runner.env,
        )  # fmt: skip
        got: dict[str, float] = {}
        for line in p.stderr.splitlines():
            if not line.startswith("import time:") or "|" not in line:
                continue
            _, cumulative, name = line.split("|")
            if name.strip() in parts and cumulative.strip().isdigit():
                got[name.strip()] = max(got.get(name.strip(), 0.0), int(cumulative) / 1e6)
        for k, v in got.items():
            seen.setdefault(k, []).append(v)
    return [{"module": k, "cumulative_s": statistics.median(seen[k])} for k in parts if k in seen]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; print the tables; return ``{"machine", "results", "targets"}``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="1e5 rows, one round, a 50 MB file")
    p.add_argument("--n", type=float, default=None, help="rows of the CSV (default 1e6)")
    p.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3)")
    p.add_argument("--big-mb", type=float, default=None, help="bad-column file size (1000)")
    p.add_argument("--profile", action="store_true", help="also profile one run of each")
    p.add_argument("--no-polars", action="store_true", help="leave the polars jobs out")
    p.add_argument("--json", help="also write the results to this JSON file")
    p.add_argument(
        "--baseline",
        metavar="SRC",
        help="also time (warm cache) the command of the jaxsubset in this source folder, e.g. "
        "a checkout of the commit before a change: --baseline ../old/src",
    )
    a = p.parse_args(argv)
    n = int(a.n or (1e5 if a.quick else 1e6))
    rounds = a.rounds or (1 if a.quick else 3)
    big_mb = a.big_mb or (50.0 if a.quick else 1000.0)
    machine = print_header("bench_cli: jaxsubset stats on a CSV against pandas, fresh processes")
    import pyarrow

    machine["pyarrow"] = pyarrow.__version__
    machine["load_avg_before"] = os.getloadavg()
    results: dict[str, Any] = {"n": n}
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as folder:
        runner = Runner(folder, a.baseline and os.path.abspath(a.baseline))
        make_csv(os.path.join(folder, "data.csv"), n)
        mb = os.path.getsize(os.path.join(folder, "data.csv")) / 1e6
        print(f"\n-- jobs on a CSV of {n} rows ({mb:.1f} MB), {rounds} interleaved rounds")
        results["jobs"] = run_jobs(runner, rounds, polars=not a.no_polars)
        columns = ["job", "warm_s", "cold_s", "pandas_s", "warm_x", "cold_x"]
        columns += [] if a.no_polars else ["polars_s", "warm_x_polars"]
        print_table(results["jobs"], columns + (["baseline_warm_s"] if a.baseline else []))
        if a.profile:
            print("\n-- one warm run under cProfile: seconds by stage (cumulative)")
            results["profile"] = run_profile(runner)
            print_table(results["profile"], ["job", "process_s", *STAGES])
            print(f"\n-- python -X importtime -c 'import jax' (median of {rounds})")
            results["importtime"] = run_importtime(runner, rounds)
            print_table(results["importtime"], ["module", "cumulative_s"])
        big = os.path.join(folder, "big.csv")
        size = make_big(os.path.join(folder, "data.csv"), big, big_mb)
        print(f"\n-- a bad option on a {size / 1e6:.0f} MB CSV ({rounds} runs, median)")
        results["bad"] = run_bad(runner, big, rounds)
        columns = ["case", "process_s", "main_s", "import_jaxsubset_s"]
        print_table(results["bad"], columns + (["baseline_process_s"] if a.baseline else []))
    machine["load_avg_after"] = os.getloadavg()
    payload = {"machine": machine, "results": results, "targets": targets(results)}
    for t in payload["targets"]:
        print(f"   {t['status']}: {t['target']} ({t['got']})")
    if a.json:
        write_json(a.json, payload)
    return payload


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for row in results["jobs"][:2]:
        for key, limit in (("warm_x", 2.0), ("cold_x", 3.0)):
            out.append(
                {
                    "target": f"{row['job']}: {key[:4]} cache <= {limit:g}x pandas",
                    "got": f"{row[key]:.2f}x",
                    "status": "MET" if row[key] <= limit else "MISSED",
                }
            )
    for row in results["bad"]:
        out.append(
            {
                "target": f"{row['case']} on {row['file_mb']:.0f} MB reported in < 1 s",
                "got": f"process {row['process_s']:.2f} s, in main {row['main_s']:.3f} s",
                "status": "MET" if row["process_s"] < 1.0 else "MISSED",
            }
        )
    return out


if __name__ == "__main__":
    main()
