"""Exit 0 when a Streamlit server (or the proxy in front of it) answers its health route:
the HEALTHCHECK of the Dockerfile and compose.yaml.   python3 deploy/healthcheck.py [PORT]"""
import sys
import urllib.request

port = sys.argv[1] if len(sys.argv) > 1 else "8501"
try:
    ok = urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=4).read()
except OSError:
    sys.exit(1)
sys.exit(0 if ok == b"ok" else 1)
