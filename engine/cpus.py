"""How many CPUs this process may use (no torch import: the launcher reads it too)."""
from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP = "/sys/fs/cgroup"


def _cgroup_quota(root: str) -> float | None:
    """CPUs a cgroup quota allows: v2 `cpu.max` ("quota period" or "max period"), else v1
    `cpu/cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1: none); None when no quota is set."""
    def read(name: str) -> str | None:
        try:
            return (Path(root) / name).read_text().strip()
        except OSError:
            return None
    v2 = read("cpu.max")
    if v2:
        quota, _, period = v2.partition(" ")
        if quota != "max" and period:
            return float(quota) / float(period)
        return None
    quota_us, period_us = read("cpu/cpu.cfs_quota_us"), read("cpu/cpu.cfs_period_us")
    if quota_us and period_us and float(quota_us) > 0:
        return float(quota_us) / float(period_us)
    return None


def usable_cpus(cgroup_root: str = CGROUP) -> int:
    """CPUs this process may use: the scheduler affinity's size (os.cpu_count() counts the
    host's), capped by the cgroup's CPU quota rounded up (a container run with --cpus=1.5
    gets 2), at least 1."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:             # not on Linux
        n = os.cpu_count() or 1
    try:
        quota = _cgroup_quota(cgroup_root)
    except ValueError:                 # a quota file this code cannot read
        quota = None
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(1, n)
