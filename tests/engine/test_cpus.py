"""usable_cpus: the affinity mask's size, capped by a cgroup v2 or v1 CPU quota (rounded up)."""
from __future__ import annotations

import os

import pytest

from engine.cpus import usable_cpus

AFFINITY = len(os.sched_getaffinity(0))


@pytest.mark.parametrize("files,expected", [
    ({}, AFFINITY),                                                  # no cgroup files
    ({"cpu.max": "max 100000"}, AFFINITY),                           # v2, no quota
    ({"cpu.max": "100000 100000"}, 1),                               # v2, --cpus=1
    ({"cpu.max": "50000 100000"}, 1),                                # half a CPU: at least 1
    ({"cpu.max": "150000 100000"}, min(AFFINITY, 2)),                # 1.5 rounds up
    ({"cpu.max": "6400000 100000"}, AFFINITY),                       # above the host: the host
    ({"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}, AFFINITY),   # v1, none
    ({"cpu/cpu.cfs_quota_us": "100000", "cpu/cpu.cfs_period_us": "100000"}, 1),      # v1
    ({"cpu.max": "garbage here"}, AFFINITY),                          # unreadable: ignored
])
def test_usable_cpus(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text + "\n")
    assert usable_cpus(str(tmp_path)) == expected


def test_the_worker_pool_and_the_replicas_default_to_it(monkeypatch):
    from deploy import replicas
    from live import workers
    monkeypatch.delenv(workers.WORKERS_ENV_VAR, raising=False)
    monkeypatch.setattr(workers, "usable_cpus", lambda: 3)
    monkeypatch.setattr(replicas, "usable_cpus", lambda: 5)
    assert workers.default_workers() == 2
    assert replicas.replica_env(2)["DLPLAY_WORKERS"] == "2"
