"""engine.workload: "auto" picks the device measured fastest per workload. The selection logic
is tested on CPU with fake devices and fake clocks; one test measures the real CPU probe."""

import pytest

from engine import workload as W
from engine.device import DeviceChoice


class FakeClock:
    """A timer whose time advances only when a fake step runs: cost[device] s per step."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def fake_probe(clock, cost, calls):
    def make_probe(device):
        calls.append(device)
        if cost[device] is None:
            raise RuntimeError(f"{device} cannot run this model")

        def step():
            clock.now += cost[device]
        return step
    return make_probe


def picker(devices, clock, path=None):
    measure = lambda mp, d: W.measure(mp, d, warmup=2, iters=5, timer=clock,
                                      synchronize=lambda d: None)
    return W.DevicePicker(devices=lambda: list(devices), measure_fn=measure, path=path)


def test_measure_excludes_warmup_and_counts_iters():
    clock, synced = FakeClock(), []
    costs = iter([5.0, 5.0] + [0.1] * 4 + [0.3] * 4)  # 2 slow warm-ups, a fast and a slow run

    def make_probe(device):
        def step():
            clock.now += next(costs)
        return step
    rate = W.measure(make_probe, "cuda", warmup=2, iters=4, timer=clock,
                     synchronize=synced.append, repeats=2)
    assert rate == pytest.approx(10.0)               # 4 / 0.4 s: warm-up not counted, best run
    assert synced == ["cuda"] * 4                    # before and after each timed loop


@pytest.mark.parametrize("cost,winner", [({"cuda": 0.004, "cpu": 0.003}, "cpu"),
                                         ({"cuda": 0.001, "cpu": 0.003}, "cuda")])
def test_faster_device_wins(cost, winner):
    clock, calls = FakeClock(), []
    pick = picker(["cuda", "cpu"], clock).pick("gan:2x128", fake_probe(clock, cost, calls))
    assert pick.device == winner and pick.source == "measured"
    assert pick.rates["cpu"] == pytest.approx(1 / cost["cpu"])
    assert sorted(calls) == ["cpu", "cuda"]


def test_second_call_uses_cache_without_measuring():
    clock, calls = FakeClock(), []
    p = picker(["cuda", "cpu"], clock)
    probe = fake_probe(clock, {"cuda": 0.001, "cpu": 0.003}, calls)
    first = p.pick("vae:2x64", probe)
    second = p.pick("vae:2x64", probe)
    assert (first.device, second.device, second.source) == ("cuda", "cuda", "cache")
    assert len(calls) == 2                           # one probe per device, once
    p.pick("transformer:4x64", probe)                # another workload is measured anew
    assert len(calls) == 4


def test_failing_probe_on_one_device_falls_back():
    clock, calls = FakeClock(), []
    pick = picker(["cuda", "cpu"], clock).pick(
        "gan:2x128", fake_probe(clock, {"cuda": None, "cpu": 0.01}, calls))
    assert pick.device == "cpu" and "cuda" in pick.errors and "cannot run" in pick.errors["cuda"]


def test_single_device_measures_nothing():
    clock, calls = FakeClock(), []
    pick = picker(["cpu"], clock).pick("gan:2x128", fake_probe(clock, {"cpu": 1.0}, calls))
    assert pick == W.Pick("cpu", {}, {}, "only device") and calls == []


def test_file_cache_survives_a_new_process(tmp_path):
    path, clock, calls = tmp_path / "c.json", FakeClock(), []
    probe = fake_probe(clock, {"cuda": 0.001, "cpu": 0.003}, calls)
    picker(["cuda", "cpu"], clock, path).pick("gan:2x128", probe)
    fresh = picker(["cuda", "cpu"], clock, path).pick("gan:2x128", probe)  # "restarted server"
    assert fresh.device == "cuda" and fresh.source == "file" and len(calls) == 2
    path.write_text("{not json")                     # a corrupt file is no cache, no crash
    assert picker(["cuda", "cpu"], clock, path).pick("gan:2x128", probe).source == "measured"


def test_cache_path_env(tmp_path):
    assert W.cache_path({"DLPLAY_DEVICE_CACHE": "off"}) is None
    assert W.cache_path({"DLPLAY_DEVICE_CACHE": str(tmp_path / "x.json")}) == tmp_path / "x.json"
    assert W.cache_path({}).name == "dlplay_device_cache.json"


def test_probe_for_keys():
    assert W.probe_for("gan:2x128") is not None
    assert W.probe_for("gan:banana") is None and W.probe_for("gan:99x9") is None
    W.register_probe("mytopic:", lambda key: (lambda d: (lambda: None)))
    try:
        assert W.probe_for("mytopic:big")("cpu")() is None
    finally:
        del W.PROBES["mytopic:"]


def test_unknown_workload_keeps_default_device():
    clock = FakeClock()
    pick = picker(["cuda", "cpu"], clock).pick("mystery:huge")
    assert pick.device == "cuda" and pick.source == "default"


def test_real_mlp_probe_on_cpu_trains():
    *_, step = W.mlp_step("cpu", 2, 32, batch=64)
    first = float(step())
    for _ in range(30):
        last = float(step())
    assert last < first
    assert W.measure(W.mlp_probe(1, 16), "cpu", warmup=1, iters=3) > 0


# --- viz.session.device / viz.sidebar.device_options (the page-facing API) -------------------

@pytest.fixture
def session_state(monkeypatch):
    from viz import session
    state = {}
    monkeypatch.setattr(session.st, "session_state", state)
    monkeypatch.setattr(session, "available_devices", lambda: ["cuda", "cpu"])
    picks = []
    monkeypatch.setattr(session, "pick_device", lambda key, mp=None: picks.append(key) or "cpu")
    return session, state, picks


def test_session_explicit_choice_wins(session_state, monkeypatch):
    session, state, picks = session_state
    monkeypatch.setattr(session, "default_device", lambda: DeviceChoice("cuda", "auto", None))
    state["device"] = "cuda"
    assert session.device(workload="gan:2x128") == "cuda" and picks == []


def test_session_auto_uses_workload_pick(session_state, monkeypatch):
    session, state, picks = session_state
    monkeypatch.setattr(session, "default_device", lambda: DeviceChoice("cuda", "auto", None))
    state["device"] = "auto"
    assert session.device(workload="gan:2x128") == "cpu" and picks == ["gan:2x128"]
    assert session.device() == "cuda"               # no workload: today's default, unmeasured
    assert picks == ["gan:2x128"]


def test_session_env_device_wins_over_auto(session_state, monkeypatch):
    session, state, picks = session_state
    monkeypatch.setattr(session, "default_device",
                        lambda: DeviceChoice("cuda", "DLPLAY_DEVICE=cuda", None))
    assert session.device(workload="gan:2x128") == "cuda" and picks == []


def test_session_pick_failure_falls_back(session_state, monkeypatch):
    session, state, _ = session_state
    monkeypatch.setattr(session, "default_device", lambda: DeviceChoice("cuda", "auto", None))
    monkeypatch.setattr(session, "pick_device", lambda *a: 1 / 0)
    assert session.device(workload="gan:2x128") == "cuda"


def test_sidebar_offers_auto_only_with_a_choice():
    from viz.sidebar import device_options
    auto = DeviceChoice("cpu", "auto", None)
    assert device_options(["cpu"], auto) == (["cpu"], 0)           # CPU-only: unchanged
    assert device_options(["cuda", "cpu"], DeviceChoice("cuda", "auto", None)) == (
        ["auto", "cuda", "cpu"], 0)
    assert device_options(["cuda", "cpu"], DeviceChoice("cpu", "DLPLAY_DEVICE=cpu", None)) == (
        ["auto", "cuda", "cpu"], 2)
