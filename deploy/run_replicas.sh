#!/usr/bin/env bash
# N Streamlit replicas of the playground behind a sticky nginx (see deploy/replicas.py).
#   deploy/run_replicas.sh [REPLICAS] [PORT]
set -euo pipefail
cd "$(dirname "$0")/.."
set -a; . deploy/hosting.env; set +a      # the hosting profile for every replica
command -v nginx >/dev/null || { echo "install nginx first: apt-get install -y nginx" >&2; exit 1; }
exec python3 deploy/replicas.py --replicas "${1:-2}" --port "${2:-8080}"
