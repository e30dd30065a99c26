#!/usr/bin/env bash
# One server in the hosting profile (deploy/hosting.env): headless, trainers in worker processes.
#   deploy/host.sh [PORT]        # listens on 0.0.0.0:PORT (default 8501); DLPLAY_ADDRESS overrides
set -euo pipefail
cd "$(dirname "$0")/.."
set -a; . deploy/hosting.env; set +a
exec "${PYTHON:-python3}" -m streamlit run app.py \
  --server.address "${DLPLAY_ADDRESS:-0.0.0.0}" --server.port "${1:-8501}"
