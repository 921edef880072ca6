#!/usr/bin/env bash
# The check of a lent GPU, prepared on the CPU and run once per lease (../shared/references/gpu.md):
#   1. the core of the suite on the GPU, in JAX's 64-bit and default 32-bit modes (the
#      differential registry of the statistics, the constructors, the closed-over matrix);
#   2. the pure-JAX benchmarks against hand-written JAX (bench_rawjax) and the core benchmark.
# It runs from the repository root with no network: the package from src/ (PYTHONPATH), the
# native CPU road off (it is never chosen on a GPU anyway). Logs go to $OUT (the device tool's
# folder) or /tmp/gpu_check. Each step has its own time limit so the whole stays under ~9 min.
#
#   bash benchmarks/gpu_check.sh            # on the device machine
#   GPU_CHECK_QUICK=1 bash benchmarks/gpu_check.sh   # a dry run anywhere (small sizes)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu_check}
mkdir -p "$out"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 JAXSUBSET_NATIVE=off
# several test processes share the GPU: no process takes 75% of its memory up front
export XLA_PYTHON_CLIENT_PREALLOCATE=false
py=$(command -v python3)
quick=${GPU_CHECK_QUICK:-}
n=10000000
[ -n "$quick" ] && n=100000

{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null
  "$py" -c "import sys, jax, numpy; print('python', sys.version.split()[0], 'jax', jax.__version__, 'numpy', numpy.__version__, jax.devices())"
} 2>&1 | tee "$out/env.txt"

core="tests/test_roads.py tests/test_closed_over.py tests/test_subsets.py tests/test_constructors.py tests/test_stats.py tests/test_rolling_stats.py tests/test_binned.py"
status=0
for x64 in 1 0; do
  echo "== core tests on $(cat "$out/env.txt" | tail -1 | cut -c1-60), JAX_ENABLE_X64=$x64"
  JAX_ENABLE_X64=$x64 timeout ${GPU_CHECK_TEST_S:-120} "$py" -m pytest $core -q -p no:cacheprovider \
    -o addopts="" -n 6 --dist worksteal -W ignore::DeprecationWarning 2>&1 |
    tee "$out/tests_x64_$x64.log" | tail -25 || status=1
done

for bench in ${GPU_CHECK_BENCHES:-rawjax core}; do
  f=benchmarks/bench_$bench.py
  [ -f "$f" ] || { echo "== $f missing: skipped"; continue; }
  echo "== $f --n $n (float64 and float32 as the script runs them)"
  args="--json $out/bench_$bench.json"
  [ "$bench" = rawjax ] && args="$args --n $n --rounds 5 --markdown $out/bench_rawjax.md"
  [ "$bench" = core ] && args="$args --bandwidth-gbs 4800"
  [ -n "$quick" ] && args="$args --quick"
  JAX_ENABLE_X64=1 timeout ${GPU_CHECK_BENCH_S:-150} "$py" "$f" $args 2>&1 |
    tee "$out/bench_$bench.log" | tail -60 || status=1
done
exit $status
