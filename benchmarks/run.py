"""The one entry point: every benchmark of jaxsubset, side by side in one process.

Runs ``bench_core`` (issue 6) and every other ``benchmarks/bench_<name>.py`` module found next to
this file; each exposes ``main(argv=None)`` and accepts ``--quick`` and ``--json PATH``.

Usage::

    python benchmarks/run.py                      # everything, full sizes (minutes)
    python benchmarks/run.py --quick              # small sizes (seconds per module)
    python benchmarks/run.py --only core --only stats
    python benchmarks/run.py --json results.json  # one file: {name: that module's results}
    python benchmarks/run.py --only core --bandwidth-gbs 4800   # GB/s as % of a GPU's peak
"""

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any


HERE = Path(__file__).resolve().parent


def discover() -> list[str]:
    """Benchmark names (``bench_<name>.py``), ``core`` first, then alphabetical."""
    names = (p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    return sorted(names, key=lambda n: (n != "core", n))


def main(argv: list[str] | None = None) -> int:
    names = discover()
    p = argparse.ArgumentParser(description="Run every jaxsubset benchmark in one process.")
    p.add_argument("--quick", action="store_true", help="small sizes, for a fast look")
    p.add_argument(
        "--only",
        action="append",
        choices=names,
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(names)}",
    )
    p.add_argument("--json", metavar="PATH", help="write all results to PATH as one JSON file")
    p.add_argument(
        "--bandwidth-gbs",
        type=float,
        default=None,
        help="memory bandwidth of the device in GB/s (passed to core: throughput as %% of it)",
    )
    args = p.parse_args(argv)
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))

    selected = args.only or names
    combined: dict[str, Any] = {}
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in selected:
            sub = ["--quick"] if args.quick else []
            out = os.path.join(tmp, f"{name}.json")
            sub += ["--json", out]
            if name == "core" and args.bandwidth_gbs:
                sub += ["--bandwidth-gbs", str(args.bandwidth_gbs)]
            shown = " ".join(a for a in sub if a not in ("--json", out))
            print(f"\n######## bench_{name} {shown}".rstrip())
            t0 = time.perf_counter()
            try:
                importlib.import_module(f"bench_{name}").main(sub)
            except (Exception, SystemExit):  # noqa: BLE001 - one broken module hides no other
                traceback.print_exc()
                failed.append(name)
                continue
            finally:
                print(f"######## bench_{name}: {time.perf_counter() - t0:.1f} s")
            if os.path.exists(out):
                with open(out) as f:
                    combined[name] = json.load(f)
    if args.json:
        from _harness import write_json

        write_json(args.json, combined)
    if failed:
        print(f"\nFAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
