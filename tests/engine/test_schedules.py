"""The learning-rate schedules in closed form equal the PyTorch schedulers they mirror."""
import numpy as np
import pytest
import torch

from engine.optim import schedules


def _torch_lrs(make, n: int, lr: float = 1.0) -> np.ndarray:
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)
    sched = make(opt)
    out = []
    for _ in range(n):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return np.array(out)


def test_transformer_schedule_is_lambda_lr_of_vaswani():
    d, w, n = 512, 40, 300
    ref = _torch_lrs(lambda o: torch.optim.lr_scheduler.LambdaLR(
        o, lambda t: d ** -0.5 * min((t + 1) ** -0.5, (t + 1) * w ** -1.5)), n)
    lrs = schedules.schedule("transformer", n, d_model=d, warmup=w)
    np.testing.assert_allclose(lrs, ref, rtol=1e-12)
    assert int(lrs.argmax()) == w - 1                 # the peak ends the warm-up (s = w)


@pytest.mark.parametrize("period,mult", [(10, 1), (10, 2), (7, 3)])
def test_sgdr_is_cosine_annealing_warm_restarts(period, mult):
    n = 200
    ref = _torch_lrs(lambda o: torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, period, mult), n, lr=0.1)
    lrs = schedules.schedule("sgdr", n, lr=0.1, period=period, mult=mult)
    np.testing.assert_allclose(lrs, ref, atol=1e-12)
    starts = np.cumsum([period * mult ** i for i in range(n)])
    np.testing.assert_array_equal(schedules.restarts(lrs), starts[starts < n])


def test_step_and_constant():
    ref = _torch_lrs(lambda o: torch.optim.lr_scheduler.StepLR(o, 30, 0.1), 100, lr=0.5)
    np.testing.assert_allclose(schedules.schedule("step", 100, lr=0.5, period=30), ref,
                               rtol=1e-12)
    assert schedules.restarts(ref).size == 0
    np.testing.assert_array_equal(schedules.schedule("constant", 5, lr=0.3), [0.3] * 5)
    with pytest.raises(ValueError, match="unknown schedule"):
        schedules.schedule("cyclic", 5)
