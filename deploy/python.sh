# The interpreter of the project's launchers (sourced by host.sh and run_replicas.sh): $PYTHON
# when set, else the checkout's .venv, else the first python3 on PATH (a container's venv);
# one that cannot find the app's dependencies is refused with a message, before any start.
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
if ! "$PY" -c "import importlib.util as u, sys
sys.exit(any(u.find_spec(m) is None for m in ('streamlit', 'torch')))" 2>/dev/null; then
  echo "$PY has no streamlit or no torch: activate the environment you installed the" \
       "playground into, or set PYTHON=/path/to/its/python" >&2
  exit 1
fi
