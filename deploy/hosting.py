"""deploy/hosting.env as a dict: the hosting profile's environment, which `dlplay serve`
gives every server it starts (under the launcher's own environment, which wins)."""
from __future__ import annotations

from pathlib import Path

HOSTING_ENV = Path(__file__).with_name("hosting.env")


def hosting_profile(path: Path = HOSTING_ENV) -> dict[str, str]:
    """KEY=value per line; blank lines and lines starting with # are skipped."""
    env = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, value = line.split("=", 1)
            env[key.strip()] = value.strip()
    return env
