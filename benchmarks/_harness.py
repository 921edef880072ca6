"""Shared timing helpers for the benchmarks: warm-up, repeats, medians, compile time apart.

Every benchmark module ``benchmarks/bench_<name>.py`` exposes ``main(argv=None)`` (runnable
standalone) and uses these helpers so that all numbers in BENCHMARKS.md are measured the same way.
"""

import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np


def block(out: Any) -> Any:
    """Wait for every JAX array in ``out`` (timings must include the device work)."""
    return jax.block_until_ready(out)


def time_steady(
    fn: Callable[[], Any], *, repeats: int = 5, warmup: int = 1, budget_s: float = 30.0
) -> float:
    """Median wall time (s) of ``fn()`` after ``warmup`` calls; stops early past ``budget_s``."""
    for _ in range(warmup):
        block(fn())
    times = []
    t_all = time.perf_counter()
    for _ in range(repeats):
        t0 = time.perf_counter()
        block(fn())
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - t_all > budget_s:
            break
    return statistics.median(times)


def time_interleaved(
    fns: dict[str, Callable[[], Any]], *, rounds: int = 7, warmup: int = 1, budget_s: float = 60.0
) -> dict[str, float]:
    """Median wall time (s) of each ``fns[name]()`` over rounds of one call of each.

    On a shared machine a change of load then lands on every method of the round alike, so
    their ratio stays fair; timing one method after another lets it land on one of them.
    """
    for fn in fns.values():
        for _ in range(warmup):
            block(fn())
    times: dict[str, list[float]] = {name: [] for name in fns}
    t_all = time.perf_counter()
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            block(fn())
            times[name].append(time.perf_counter() - t0)
        if time.perf_counter() - t_all > budget_s:
            break
    return {name: statistics.median(t) for name, t in times.items()}


def time_first(fn: Callable[[], Any]) -> float:
    """Wall time (s) of the first call: compilation plus one run."""
    t0 = time.perf_counter()
    block(fn())
    return time.perf_counter() - t0


def malloc_setting() -> str:
    """How glibc's malloc backs large buffers in this process (it moves CPU timings 2x).

    XLA's CPU buffers above 32 MB are fresh ``mmap`` pages on every call; with 4 KB pages
    the page faults cost ~20 ms per 80 MB buffer here. ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1``
    (read at process start) asks for transparent huge pages instead, when the kernel's
    ``transparent_hugepage/enabled`` is ``madvise`` or ``always``.
    """
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            thp = f.read().split("[", 1)[1].split("]", 1)[0]
    except (OSError, IndexError):
        thp = "n/a"
    hugetlb = next(
        (t.split("=", 1)[1] for t in tunables.split(":") if t.startswith("glibc.malloc.hugetlb=")),
        "0",
    )
    return f"glibc.malloc.hugetlb={hugetlb} (THP {thp})"


def machine_header() -> dict[str, Any]:
    """Machine and versions the numbers come from."""
    try:
        cpu = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=5).stdout
        model = next(
            (ln.split(":", 1)[1].strip() for ln in cpu.splitlines() if ln.startswith("Model name")),
            platform.processor(),
        )
    except Exception:  # noqa: BLE001 - informational only
        model = platform.processor()
    info = {
        "cpu": model,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "jax": jax.__version__,
        "numpy": np.__version__,
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "malloc": malloc_setting(),
    }
    for mod in ("scipy", "pandas"):
        try:
            info[mod] = __import__(mod).__version__
        except ImportError:
            pass
    return info


def print_header(title: str) -> dict[str, Any]:
    """Print a short machine/version header and return it."""
    info = machine_header()
    print(f"== {title}")
    print("   " + ", ".join(f"{k}={v}" for k, v in info.items() if k != "devices"))
    return info


def print_table(rows: list[dict[str, Any]], columns: list[str]) -> None:
    """Print ``rows`` as an aligned table of ``columns`` (floats to 4 significant digits)."""

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return "" if v is None else str(v)

    cells = [[fmt(r.get(c)) for c in columns] for r in rows]
    widths = [
        max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
        for i, c in enumerate(columns)
    ]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)))
    for row in cells:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)))


def write_json(path: str, payload: dict[str, Any]) -> None:
    """Write ``payload`` as JSON (atomically: a temporary file renamed into place)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(payload, f, indent=2, default=str)
    os.replace(tmp, path)
