"""The replicas' defaults (deploy/replicas.py): trainers in worker processes, CPUs shared."""
from deploy.replicas import replica_env


def test_replicas_train_in_worker_processes_and_share_the_cpus():
    assert replica_env(2, cpus=16) == {"DLPLAY_TRAINERS": "process", "DLPLAY_WORKERS": "7"}
    assert replica_env(4, cpus=2)["DLPLAY_WORKERS"] == "1"      # never zero workers
    assert replica_env(1, cpus=1)["DLPLAY_WORKERS"] == "1"
