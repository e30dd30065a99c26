#!/usr/bin/env bash
# Checks for a lent GPU machine (the workplace's `device` tool), run from the repo root there:
#   bash scripts/device_check.sh OUTDIR
# Engine and page (AppTest) tests with CUDA present (the `device` fixture adds "cuda" and the
# sidebar's "auto" device picks it), then `python -m benchmarks devices` (every trainer and the
# heavy ops on CPU and on CUDA). Python packages the GPU image lacks (streamlit, plotly, ...)
# travel as wheels in .whl/ (see /work/.library/device/README.md).
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
timeout "${TEST_TIMEOUT:-300}" python3 -m pytest tests/engine tests/pages -q -n 8 -p no:cacheprovider \
    -p no:benchmark -rf --tb=short --durations=10 2>&1 | tee "$out/tests.log" | tail -40
timeout "${BENCH_TIMEOUT:-150}" python3 -m benchmarks devices 2>&1 | tee "$out/bench_devices.md"
