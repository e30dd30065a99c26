#!/usr/bin/env bash
# N Streamlit replicas of the playground behind a sticky nginx (see deploy/replicas.py).
#   deploy/run_replicas.sh [REPLICAS] [PORT]   # nginx on 0.0.0.0:PORT; DLPLAY_ADDRESS overrides
# The same as `dlplay serve --replicas N --address 0.0.0.0 --port PORT` (deploy/cli.py).
set -euo pipefail
cd "$(dirname "$0")/.."
set -a; . deploy/hosting.env; set +a      # the hosting profile for every replica
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] \
  || { echo "install nginx first: apt-get install -y nginx" >&2; exit 1; }
. deploy/python.sh
exec "$PY" -m deploy.cli serve --replicas "${1:-2}" --address "${DLPLAY_ADDRESS:-0.0.0.0}" \
  --port "${2:-8080}"
