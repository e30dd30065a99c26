#!/usr/bin/env bash
# Checks for a lent GPU machine (the workplace's `device` tool), run from the repo root there:
#   bash scripts/device_check.sh OUTDIR            (everything, ~8 min)
#   DEVICE_CHECK=graph bash scripts/device_check.sh OUTDIR   (only the first block, ~1 min)
# First block: the CUDA-graph equality tests (benchmarks/cuda_graph.py), then one line each:
# the 2x128 MLP Adam step eager on CPU, eager on CUDA, and replayed from a CUDA graph;
# K = 1/8/32/128 GANs batched in one CUDA graph against the same K stepped one by one.
# Engine and page (AppTest) tests with CUDA present (the `device` fixture adds "cuda" and the
# sidebar's "auto" device picks it), then `python -m benchmarks devices` (every trainer and the
# heavy ops on CPU and on CUDA). Python packages the GPU image lacks (streamlit, plotly, ...)
# travel as wheels in .whl/, installed before the tests run.
set -o pipefail
out=${1:-/tmp/device_check}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 DLPLAY_TORCH_THREADS=1
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" | tee -a "$out/gpu.txt"
timeout 180 python3 -m pytest tests/test_bench_cuda_graph.py tests/engine/test_gan_batched.py \
    tests/engine/test_device.py -q -p no:cacheprovider -p no:benchmark -rs --tb=short 2>&1 \
    | tee "$out/tests_graph.log" | tail -15
# bench_rows MODULE TEXT: the rows of benchmarks/MODULE.py whose label holds TEXT
bench_rows() {
    python3 - "$1" "$2" <<'PY'
import importlib, sys
from engine.device import configure_threads
configure_threads()
bench = importlib.import_module(f"benchmarks.{sys.argv[1]}")
for label, fn in bench.BENCHMARKS.items():
    if sys.argv[2] in label:
        try:
            m = fn()
            print(f"| {label} | {m.value:,.4g} {m.unit} | {m.note} |", flush=True)
        except Exception as exc:
            print(f"| {label} | FAILED | {type(exc).__name__}: {exc} |", flush=True)
PY
}
timeout 120 bash -c "$(declare -f bench_rows); bench_rows bench_devices '2x128 MLP'" 2>&1 \
    | tee "$out/bench_graph.md"
timeout 240 bash -c "$(declare -f bench_rows); bench_rows bench_batched CUDA" 2>&1 \
    | tee "$out/bench_batched_cuda.md"
[ "${DEVICE_CHECK:-all}" = graph ] && exit 0
timeout "${TEST_TIMEOUT:-300}" python3 -m pytest tests/engine tests/pages -q -n 8 -p no:cacheprovider \
    -p no:benchmark -rf --tb=short --durations=10 2>&1 | tee "$out/tests.log" | tail -40
timeout "${BENCH_TIMEOUT:-150}" python3 -m benchmarks devices 2>&1 | tee "$out/bench_devices.md"
