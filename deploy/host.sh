#!/usr/bin/env bash
# One server in the hosting profile (deploy/hosting.env): headless, trainers in worker processes.
#   deploy/host.sh [PORT]        # listens on 0.0.0.0:PORT (default 8501); DLPLAY_ADDRESS overrides
# The same as `dlplay serve --address 0.0.0.0 --port PORT` (deploy/cli.py), which stops every
# process it started on Ctrl-C or SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."
set -a; . deploy/hosting.env; set +a
. deploy/python.sh
exec "$PY" -m deploy.cli serve --address "${DLPLAY_ADDRESS:-0.0.0.0}" --port "${1:-8501}"
