"""The replicas' defaults (deploy/replicas.py): trainers in worker processes, CPUs shared."""
from deploy.replicas import replica_env


def test_replicas_train_in_worker_processes_and_share_the_cpus():
    assert replica_env(2, cpus=16) == {"DLPLAY_TRAINERS": "process", "DLPLAY_WORKERS": "7"}
    assert replica_env(4, cpus=2)["DLPLAY_WORKERS"] == "1"      # never zero workers
    assert replica_env(1, cpus=1)["DLPLAY_WORKERS"] == "1"


def test_replicas_share_one_checkpoint_directory(tmp_path):
    """Every replica the launcher starts gets the same DLPLAY_CHECKPOINT_DIR (a browser moved
    to another replica resumes there); without one, nothing is written (laptops, tests)."""
    from pathlib import Path
    assert "DLPLAY_CHECKPOINT_DIR" not in replica_env(2, cpus=4)
    env = replica_env(2, cpus=4, checkpoints=tmp_path / "checkpoints")
    assert Path(env["DLPLAY_CHECKPOINT_DIR"]) == tmp_path / "checkpoints"


def test_backoff_doubles_up_to_the_cap():
    from deploy.replicas import Backoff
    b = Backoff(first=1, factor=2, cap=30)
    assert [b.delay(k) for k in (1, 2, 3, 4, 5, 6, 7)] == [1, 2, 4, 8, 16, 30, 30]


def test_a_dead_process_is_restarted_after_its_backoff_and_the_others_left_alone():
    """Two `sleep` processes stand in for replicas: killing one restarts that one only."""
    import io
    import logging
    import subprocess
    import sys
    from deploy.replicas import LOG, Backoff, Supervised
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    spawn = lambda: subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    a, b = Supervised("replica :1", spawn), Supervised("replica :2", spawn)
    backoff = Backoff(first=1, factor=2, cap=30, healthy_s=60)
    try:
        a.start(0.0)
        b.start(0.0)
        first_a, first_b = a.proc, b.proc
        first_a.kill()
        first_a.wait()
        for unit in (a, b):
            unit.step(5.0, backoff)
        assert a.restart_at == 6.0 and a.proc is first_a       # waits its backoff
        for unit in (a, b):
            unit.step(6.0, backoff)
        assert a.proc is not first_a and a.proc.poll() is None and a.restarts == 1
        assert b.proc is first_b and first_b.poll() is None        # untouched
        log = out.getvalue()
        assert "replica :1: pid" in log and "exited with code -9" in log and "restart in 1 s" in log
        assert "(killed by SIGKILL)" in log
        assert "replica :2" not in log
        a.proc.kill()
        a.proc.wait()
        a.step(7.0, backoff)                   # died again within a minute: the wait doubles
        assert a.restart_at == 9.0
    finally:
        LOG.removeHandler(handler)
        for unit in (a, b):
            if unit.proc.poll() is None:
                unit.proc.kill()


def test_nginx_skips_a_dead_replica_and_has_a_health_path():
    from pathlib import Path
    from deploy.replicas import nginx_config
    conf = nginx_config(Path("/tmp/x"), 8080, [8081, 8082])
    assert conf.count("proxy_next_upstream error timeout http_502 http_503 http_504;") == 2
    assert "server 127.0.0.1:8081 max_fails=1 fail_timeout=5s;" in conf
    assert "location = /healthz" in conf


def test_an_exit_is_logged_with_its_cause(tmp_path):
    """A restart's log line says why the process went: the signal that killed it, else the
    line of its own log that names the cause."""
    from deploy.replicas import _why_exited
    log = tmp_path / "replica.log"
    log.write_text("  Local URL: http://127.0.0.1:8809\n2026 ERROR Port 8809 is not available\n")
    assert _why_exited(1, log) == "Port 8809 is not available"
    assert _why_exited(-9, log) == "killed by SIGKILL"
    assert _why_exited(-15, None) == "killed by SIGTERM"
