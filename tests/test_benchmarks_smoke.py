"""The core benchmark runs end to end (``--quick``), and its sweep compiles exactly once.

This checks correctness of the benchmark, not speed: no timing is asserted here.
"""

import os
import sys
from pathlib import Path

import pytest


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def quick_run():
    sys.path.insert(0, str(BENCH))
    try:
        import bench_core

        yield bench_core.main(["--quick"])
    finally:
        sys.path.remove(str(BENCH))


def test_sweep_over_bounds_compiles_once(quick_run):
    (row,) = [r for r in quick_run["results"]["compile"] if r["method"].startswith("jaxsubset")]
    assert row["compiles"] == 1
    assert row["traces"] == 1


def test_every_workload_reports(quick_run):
    assert set(quick_run["results"]) == {"chunks", "xrange", "sliding", "compile"}
    chunks = quick_run["results"]["chunks"]
    assert {r["method"] for r in chunks} >= {
        "floor: np.sum(y)",
        "jaxsubset chunks+mean/std/max",
        "(a) python loop isclose/where",
        "(b) jit static bounds",
        "(c) jit full-length masking",
        "(d) numpy reshape",
    }
    ours = [r for r in chunks if r["method"].startswith("jaxsubset chunks")]
    assert all(r["compiles"] == 1 for r in ours)
    assert any(t["status"] in ("MET", "MISSED") for t in quick_run["targets"])


def test_stream_benchmark_runs_quick_into_a_new_folder(tmp_path):
    # bench_stream end to end at 2e6 points, with --dir naming a folder that does not exist
    # yet (it failed with FileNotFoundError): every run reports, the peak memory is measured
    sys.path.insert(0, str(BENCH))
    try:
        import bench_stream

        folder = tmp_path / "not-made-yet"
        out = bench_stream.main(["--quick", "--no-shard", "--rounds", "1", "--dir", str(folder)])
    finally:
        sys.path.remove(str(BENCH))
    runs = {r["run"] for r in out["stream"]}
    assert "np.load(mmap).sum() [floor]" in runs
    assert sum(r.startswith("stream ") for r in runs) == 3
    assert all(r["peak_rss_mb"] > 0 and r["wall_s"] > 0 for r in out["stream"])


def test_compile_benchmark_reports_every_program():
    # bench_compile's compile table (no fresh processes: those take tens of seconds)
    sys.path.insert(0, str(BENCH))
    try:
        import bench_compile

        out = bench_compile.main(["--quick", "--no-fresh"])
    finally:
        sys.path.remove(str(BENCH))
    rows = out["results"]["compile"]
    names = {r["program"].split(" ")[0] for r in rows}
    assert names >= {"range_statistic", "rolling_statistic", "binned_statistic"}
    assert all(r["hlo_ops"] > 0 and r["compile_s"] > 0 for r in rows)
    assert out["results"]["first"] == [] and out["targets"] == []
    assert len(out["machine"]["load_avg_before"]) == 3


def test_rawjax_benchmark_reports_every_pair(monkeypatch):
    # bench_rawjax end to end on a few points: every pair compiles, runs and agrees with the
    # hand-written program (no timing is asserted); the native road is off only inside it
    import jax

    monkeypatch.setenv("JAXSUBSET_NATIVE", "auto")
    x64 = jax.config.jax_enable_x64
    sys.path.insert(0, str(BENCH))
    try:
        import bench_rawjax

        seen = []
        real = bench_rawjax.run

        def spy(args):  # the setting the workloads run under
            seen.append(os.environ.get("JAXSUBSET_NATIVE"))
            return real(args)

        monkeypatch.setattr(bench_rawjax, "run", spy)
        argv = ["--n", "8000", "--rounds", "1", "--dtype", "float64"]
        out = bench_rawjax.main([*argv, "--only", "chunks", "--only", "bins"])
    finally:
        sys.path.remove(str(BENCH))
    assert seen == ["off"]
    assert os.environ["JAXSUBSET_NATIVE"] == "auto" and jax.config.jax_enable_x64 == x64
    rows = out["results"]
    assert [r["workload"] for r in rows] == [
        "chunks: chunks().mean/std/max",
        "chunks: range_statistic",
        "bins: sorted x std",
        "bins: unsorted x std",
    ]
    assert all(r["err_ours"] < 1e-12 and r["status"] in ("MET", "MISSED") for r in rows)
