import numpy as np
import pytest
import torch

from engine.device import (available_devices, default_device, device_label, make_generator,
                           numpy_rng, resolve_device, seed_everything, to_numpy)


def test_cpu_always_available_and_last():
    devs = available_devices()
    assert devs[-1] == "cpu"
    assert devs == sorted(devs, key=["cuda", "mps", "cpu"].index)


def test_default_device_auto_is_best_available():
    choice = default_device(env={})
    assert choice.name == available_devices()[0]
    assert choice.warning is None


def test_env_override_cpu():
    choice = default_device(env={"DLPLAY_DEVICE": "CPU "})
    assert choice.name == "cpu" and choice.reason == "DLPLAY_DEVICE=cpu" and choice.warning is None


@pytest.mark.parametrize("bad", ["tpu", "gpu0", "cuda:7x"])
def test_env_override_unknown_warns_and_falls_back(bad):
    choice = default_device(env={"DLPLAY_DEVICE": bad})
    assert choice.name == available_devices()[0]
    assert "DLPLAY_DEVICE" in choice.warning


def test_env_override_missing_device_warns():
    missing = [d for d in ("cuda", "mps") if d not in available_devices()]
    if not missing:
        pytest.skip("every device exists here")
    choice = default_device(env={"DLPLAY_DEVICE": missing[0]})
    assert choice.name == available_devices()[0]
    assert f"no {missing[0]} device" in choice.warning


def test_resolve_device_rejects_missing():
    assert resolve_device("cpu") == torch.device("cpu")
    missing = [d for d in ("cuda", "mps") if d not in available_devices()]
    if missing:
        with pytest.raises(ValueError, match="not available"):
            resolve_device(missing[0])


def test_generator_same_seed_same_numbers(device):
    a = torch.randn(5, generator=make_generator(3, device), device=device)
    b = torch.randn(5, generator=make_generator(3, device), device=device)
    c = torch.randn(5, generator=make_generator(4, device), device=device)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_seed_everything_reproduces_global_streams():
    seed_everything(11)
    a = (torch.rand(3), np.random.rand(3))
    seed_everything(11)
    b = (torch.rand(3), np.random.rand(3))
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_numpy_rng_and_to_numpy(device):
    assert np.array_equal(numpy_rng(5).normal(size=4), numpy_rng(5).normal(size=4))
    x = torch.arange(6.0, device=device).reshape(2, 3)
    out = to_numpy(x)
    assert isinstance(out, np.ndarray) and out.shape == (2, 3) and out[1, 2] == 5.0
    assert device_label(device).startswith(torch.device(device).type)


def test_configure_threads_from_env():
    from engine.device import configure_threads
    before = torch.get_num_threads()
    try:
        assert configure_threads(env={}) == 1 and torch.get_num_threads() == 1
        assert configure_threads(env={"DLPLAY_TORCH_THREADS": "2"}) == 2
        assert torch.get_num_threads() == 2
        assert configure_threads(env={"DLPLAY_TORCH_THREADS": "lots"}) == 1
    finally:
        torch.set_num_threads(before)


def test_configure_threads_limits_numpy_blas_too():
    """numpy's BLAS pool (OpenBLAS/MKL) follows the same setting as torch's threads."""
    from threadpoolctl import threadpool_info, threadpool_limits
    from engine.device import configure_threads
    before = torch.get_num_threads()
    try:
        threadpool_limits(limits=2)
        configure_threads(env={})
        blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
        assert blas and all(p["num_threads"] == 1 for p in blas)
    finally:
        torch.set_num_threads(before)
