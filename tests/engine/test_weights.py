"""engine/weights.py: one versioned format, read with weights_only=True, and a clear error
for every way a file can be unusable."""
import os
import pickle
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from engine import weights
from engine.weights import (FORMAT_VERSION, CorruptWeightsError, MissingWeightsError,
                            StaleWeightsError, WeightsError)

CONFIG = {"name": "mlp", "sizes": [4, 8, 2], "activation": "relu"}
META = {"seed": 3, "accuracy": 0.97, "recipe": {"lr": 1e-3, "epochs": 12}, "note": None}


def _state():
    g = torch.Generator().manual_seed(0)
    return {"0.weight": torch.randn(8, 4, generator=g), "0.bias": torch.zeros(8),
            "2.weight": torch.randn(2, 8, generator=g), "2.bias": torch.ones(2)}


@pytest.fixture
def saved(tmp_path):
    return weights.save(tmp_path / "w.pt", CONFIG, _state(), META)


def test_round_trip_keeps_config_meta_tensors_and_version(saved, device):
    w = weights.load(saved, device)
    assert w.version == FORMAT_VERSION == 1
    assert w.model_config == CONFIG and w.meta == META
    ref = _state()
    assert set(w.state) == set(ref)
    for k, v in ref.items():
        assert w.state[k].device.type == torch.device(device).type
        assert torch.equal(w.state[k].cpu(), v)


def test_file_is_a_plain_dict_readable_with_weights_only(saved):
    raw = torch.load(saved, weights_only=True)
    assert raw["format"] == "dlplay-weights" and raw["version"] == FORMAT_VERSION
    assert set(raw) == {"format", "version", "model_config", "state", "meta"}


def test_nested_state_dicts_round_trip(tmp_path):
    state = {"generator": _state(), "discriminator": {"w": torch.arange(3.0)}}
    w = weights.load(weights.save(tmp_path / "n.pt", CONFIG, state, {}))
    assert torch.equal(w.state["discriminator"]["w"], torch.arange(3.0))
    assert torch.equal(w.state["generator"]["2.bias"], torch.ones(2))


def test_saving_copies_tensors_to_cpu(tmp_path):
    state = _state()
    p = weights.save(tmp_path / "c.pt", CONFIG, state, {})
    state["0.bias"] += 5.0                          # later edits do not reach the file
    assert torch.equal(weights.load(p).state["0.bias"], torch.zeros(8))


def test_missing_file(tmp_path):
    with pytest.raises(MissingWeightsError, match="missing.*scripts.pretrain"):
        weights.load(tmp_path / "nope.pt")
    with pytest.raises(FileNotFoundError):          # also what generic callers catch
        weights.load(tmp_path / "nope.pt")


def test_truncated_file_is_corrupt(saved, tmp_path):
    data = saved.read_bytes()
    for cut in (len(data) // 2, 100, 1):
        bad = tmp_path / f"trunc{cut}.pt"
        bad.write_bytes(data[:cut])
        with pytest.raises(CorruptWeightsError, match="corrupt"):
            weights.load(bad)


def test_random_bytes_are_corrupt(tmp_path):
    bad = tmp_path / "random.pt"
    bad.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(CorruptWeightsError):
        weights.load(bad)
    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")
    with pytest.raises(CorruptWeightsError):
        weights.load(empty)


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo never-run",))


def test_pickled_code_is_refused_not_run(tmp_path):
    bad = tmp_path / "evil.pt"
    torch.save({"format": "dlplay-weights", "version": 1, "model_config": {}, "state": {},
                "meta": _Evil()}, bad)
    with pytest.raises(CorruptWeightsError):
        weights.load(bad)
    plain = tmp_path / "pickle.pt"
    plain.write_bytes(pickle.dumps({"a": 1}))           # a pickle, not a torch zip file
    with pytest.raises(WeightsError):
        weights.load(plain)


def test_a_bare_state_dict_is_stale(tmp_path):
    old = tmp_path / "old.pt"
    torch.save(_state(), old)                      # the convention before this format
    with pytest.raises(StaleWeightsError, match="older format"):
        weights.load(old)


def test_other_version_is_stale(tmp_path):
    p = tmp_path / "v0.pt"
    torch.save({"format": "dlplay-weights", "version": 0, "model_config": CONFIG,
                "state": _state(), "meta": {}}, p)
    with pytest.raises(StaleWeightsError, match="version 0"):
        weights.load(p)


def test_not_a_dict_is_corrupt(tmp_path):
    p = tmp_path / "t.pt"
    torch.save(torch.zeros(3), p)
    with pytest.raises(CorruptWeightsError, match="Tensor"):
        weights.load(p)


def test_missing_section_is_corrupt(tmp_path):
    p = tmp_path / "m.pt"
    torch.save({"format": "dlplay-weights", "version": 1, "state": _state()}, p)
    with pytest.raises(CorruptWeightsError, match="model_config"):
        weights.load(p)


def test_expected_config_mismatch_is_stale(saved):
    assert weights.load(saved, expect_config={**CONFIG, "sizes": (4, 8, 2)}).model_config == CONFIG
    with pytest.raises(StaleWeightsError, match="model_config"):
        weights.load(saved, expect_config={**CONFIG, "sizes": [4, 16, 2]})


@dataclass
class _Cfg:
    a: int = 1


@pytest.mark.parametrize("meta", [{"arr": np.zeros(2)}, {"cfg": _Cfg()}, {1: "int key"},
                                  {"t": torch.zeros(1)}])
def test_save_refuses_values_weights_only_cannot_read(tmp_path, meta):
    with pytest.raises(TypeError):
        weights.save(tmp_path / "x.pt", CONFIG, _state(), meta)
    assert not (tmp_path / "x.pt").exists()


def test_save_refuses_an_empty_or_non_tensor_state(tmp_path):
    with pytest.raises(TypeError):
        weights.save(tmp_path / "x.pt", CONFIG, {}, {})
    with pytest.raises(TypeError):
        weights.save(tmp_path / "x.pt", CONFIG, {"w": [1.0, 2.0]}, {})


def test_page_loader_caches_per_file_version_and_does_not_cache_errors(tmp_path):
    """ui.weights.cached_weights: one read per file version; a missing file raises each time
    (so the page recovers once the file is rebuilt)."""
    from ui.weights import cached_weights
    p = tmp_path / "c.pt"
    with pytest.raises(MissingWeightsError):
        cached_weights(p)
    weights.save(p, CONFIG, _state(), {"v": 1})
    first = cached_weights(p)
    assert cached_weights(p) is first and first.meta == {"v": 1}
    weights.save(p, CONFIG, _state(), {"v": 2})
    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 10**9))
    assert cached_weights(p).meta == {"v": 2}


def test_a_trainer_state_tree_round_trips_with_int_keys_and_plain_leaves(tmp_path):
    """A whole trainer's state_dict(): an optimizer's state keyed by int, plain numbers, None,
    lists; the loaded optimizer state is a copy (no tensor shared with the saving trainer)."""
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(net.parameters(), lr=0.1)
    net(torch.ones(4, 3)).sum().backward()
    opt.step()
    state = {"net": net.state_dict(), "opt": opt.state_dict(), "steps": 7, "diverged_at": None,
             "history": {"steps": {"loss": [1, 2]}, "values": {"loss": [0.5, 0.25]}}}
    w = weights.load(weights.save(tmp_path / "t.pt", CONFIG, state, {}))
    assert w.state["steps"] == 7 and w.state["diverged_at"] is None
    assert w.state["history"] == state["history"]
    assert set(w.state["opt"]["state"]) == {0, 1}
    moment = w.state["opt"]["state"][0]["exp_avg"]
    assert torch.equal(moment, opt.state_dict()["state"][0]["exp_avg"])
    assert moment.data_ptr() != opt.state[net.weight]["exp_avg"].data_ptr()
    fresh = torch.optim.Adam(torch.nn.Linear(3, 2).parameters(), lr=0.1)
    fresh.load_state_dict(w.state["opt"])                  # loads like the original
    assert fresh.param_groups[0]["lr"] == 0.1


def test_save_refuses_a_state_without_tensors_or_with_odd_values(tmp_path):
    with pytest.raises(TypeError):
        weights.save(tmp_path / "x.pt", CONFIG, {"steps": 3, "h": [1.0]}, {})
    with pytest.raises(TypeError):
        weights.save(tmp_path / "x.pt", CONFIG, {"w": torch.zeros(1), "a": np.zeros(2)}, {})
    with pytest.raises(TypeError):
        weights.save(tmp_path / "x.pt", CONFIG, {"w": torch.zeros(1), (1, 2): 3}, {})


def test_bytes_and_buffers_round_trip_and_bad_bytes_are_corrupt(tmp_path):
    import io
    buf = io.BytesIO()
    assert weights.save(buf, CONFIG, _state(), META) is buf
    w = weights.load(buf.getvalue())
    assert w.model_config == CONFIG and torch.equal(w.state["2.bias"], torch.ones(2))
    data = buf.getvalue()
    for bad in (data[: len(data) // 2], data[:1], np.random.default_rng(1).bytes(2048), b""):
        with pytest.raises(CorruptWeightsError, match="<bytes>.*corrupt"):
            weights.load(bad)


# ---- every topic loader reads through this format --------------------------------------

def _topic_loaders():
    from engine import diffusion, gan, vae
    return {"gan.load_trainer": lambda src: gan.load_trainer(src, "cpu"),
            "diffusion.load_model": lambda src: diffusion.load_model(src, "cpu"),
            "vae.load_shipped": lambda src: vae.load_shipped(src)}


SHIPPED_OF = {"gan.load_trainer": "gan_default.pt",
              "diffusion.load_model": "diffusion_mixture.pt",
              "vae.load_shipped": "vae_d2_bernoulli.pt"}
ASSETS = __import__("pathlib").Path(__file__).resolve().parents[2] / "assets" / "weights"


@pytest.mark.parametrize("loader", list(SHIPPED_OF))
def test_topic_loaders_refuse_truncated_random_and_old_files(loader, tmp_path):
    load = _topic_loaders()[loader]
    data = (ASSETS / SHIPPED_OF[loader]).read_bytes()
    assert torch.load(ASSETS / SHIPPED_OF[loader], weights_only=True)["format"] == "dlplay-weights"
    truncated, rand = tmp_path / "truncated.pt", tmp_path / "random.pt"
    truncated.write_bytes(data[: len(data) // 3])
    rand.write_bytes(np.random.default_rng(2).bytes(len(data) // 4))
    for bad in (truncated, rand):
        with pytest.raises(CorruptWeightsError):
            load(bad)
    old = tmp_path / "old.pt"                     # the bare torch.save files they replaced
    torch.save({"config": {}, "state": _state(), "meta": {}}, old)
    with pytest.raises(StaleWeightsError):
        load(old)
    with pytest.raises(MissingWeightsError):
        load(tmp_path / "absent.pt")


def test_vae_shipped_file_of_another_architecture_is_stale(tmp_path):
    from engine import vae
    name = "vae_d2_bernoulli.pt"
    state = vae.load_shipped(name)
    cfg = {**state["config"], "hidden": [64]}               # not what the code builds for it
    weights.save(tmp_path / name, cfg, {k: v for k, v in state.items() if k != "config"}, {})
    with pytest.raises(StaleWeightsError, match="model_config"):
        vae.load_shipped(tmp_path / name)       # a shipped name: its config is checked
