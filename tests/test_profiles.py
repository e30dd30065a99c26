"""The local and hosting profiles: .streamlit/config.toml is for a laptop, deploy/hosting.env
switches a server to headless, no file watcher, no external-IP lookup, process trainers and a
frame budget; every launcher of the hosting profile reads that one file."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOSTING = ROOT / "deploy" / "hosting.env"


def hosting_env() -> dict[str, str]:
    env = {}
    for line in HOSTING.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            assert re.fullmatch(r"[A-Z][A-Z0-9_]*=[^\s#'\"]+", line), f"not KEY=value: {line!r}"
            key, value = line.split("=", 1)
            env[key] = value
    return env


def test_local_profile_opens_a_browser_and_reloads_on_edit():
    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]
    assert server.get("headless", False) is False
    assert server.get("runOnSave") is True
    assert server.get("fileWatcherType", "auto") != "none"


def test_local_profile_trains_inline():
    from live import workers
    assert workers.MODE_ENV_VAR == "DLPLAY_TRAINERS"
    assert "DLPLAY_TRAINERS" not in (ROOT / ".streamlit" / "config.toml").read_text()


def test_hosting_env_names_real_streamlit_options():
    from streamlit import config
    known = {opt.env_var: key for key, opt in config._config_options_template.items()}
    env = hosting_env()
    streamlit_keys = [k for k in env if k.startswith("STREAMLIT_")]
    assert streamlit_keys and all(k in known for k in streamlit_keys), \
        [k for k in streamlit_keys if k not in known]
    assert env["STREAMLIT_SERVER_HEADLESS"] == "true"
    assert env["STREAMLIT_SERVER_FILE_WATCHER_TYPE"] == "none"
    assert env["DLPLAY_TRAINERS"] == "process"
    assert int(env["DLPLAY_FRAME_BUDGET"]) > 0


def test_hosting_env_values_reach_the_app():
    from live import budget as frame_budget
    env = hosting_env()
    assert frame_budget.ENV_VAR in env


_PROBE = r"""
import os
from streamlit import config, net_util
from streamlit.web import bootstrap
calls = []
net_util.get_external_ip = lambda: calls.append(1)
def typed(v):
    return {"true": True, "false": False}.get(v, v)
flags = {key: typed(os.environ[opt.env_var])
         for key, opt in config._config_options_template.items() if opt.env_var in os.environ}
bootstrap.load_config_options(flag_options=flags)
bootstrap._print_url(False)
print("LOOKUPS", len(calls))
"""


def _lookups(env: dict[str, str]) -> int:
    base = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True,
                         text=True, env={**base, **env}, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(re.search(r"LOOKUPS (\d+)", out.stdout).group(1))


def test_hosting_profile_never_looks_up_the_external_ip():
    """Streamlit's start banner of a headless server asks an outside host for the external IP;
    the hosting profile must not (the probe replaces the lookup and counts its calls)."""
    assert _lookups({"STREAMLIT_SERVER_HEADLESS": "true"}) == 1   # the probe sees the lookup
    assert _lookups(hosting_env()) == 0


@pytest.mark.parametrize("launcher", ["deploy/host.sh", "deploy/run_replicas.sh"])
def test_launchers_read_the_hosting_profile(launcher):
    text = (ROOT / launcher).read_text()
    assert ". deploy/hosting.env" in text and "set -a" in text


@pytest.mark.parametrize("launcher", ["deploy/host.sh", "deploy/run_replicas.sh"])
def test_launchers_run_dlplay_serve_on_an_interpreter_that_has_the_app(launcher):
    """Not whatever python3 comes first on PATH: deploy/python.sh picks $PYTHON or the
    checkout's .venv and refuses one without the app's dependencies; `dlplay serve` then
    starts every server on that same interpreter (sys.executable)."""
    text = (ROOT / launcher).read_text()
    assert ". deploy/python.sh" in text and '"$PY" -m deploy.cli serve' in text
    assert "python3 " not in text.replace("$PY", "")
    check = subprocess.run(["bash", "-c", ". deploy/python.sh"], cwd=ROOT, capture_output=True,
                           text=True, env={**os.environ, "PYTHON": "/bin/false"}, timeout=30)
    assert check.returncode == 1 and "/bin/false has no streamlit" in check.stderr


def test_dlplay_serve_gives_every_server_the_hosting_profile(monkeypatch):
    from deploy import cli
    from deploy.hosting import hosting_profile
    assert hosting_profile() == hosting_env()
    seen = {}

    class Recorder:
        def __init__(self, port, replicas, address, profile):
            seen.update(port=port, replicas=replicas, address=address, profile=profile)

        def start(self):
            raise cli.StartFailed("recorded")

        def stop(self):
            seen["stopped"] = True

    monkeypatch.setattr(cli, "Deployment", Recorder)
    monkeypatch.setattr(cli, "_stop_on_signals", lambda: None)
    assert cli.main(["serve", "--port", "9100", "--replicas", "3"]) == 1
    assert seen == {"port": 9100, "replicas": 3, "address": "0.0.0.0",
                    "profile": hosting_env(), "stopped": True}
