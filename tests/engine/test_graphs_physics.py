"""The learned simulator's engine: the exact spring system conserves energy under velocity
Verlet, its accelerations are minus the energy's gradient, the interaction network relabels
its output with its input and accepts any number of balls, and training lowers its loss."""
from __future__ import annotations

import numpy as np
import torch

from engine.graphs.physics import DT
from engine.graphs import (InteractionNetwork, SimulatorTrainer, learned_rollout, network_of,
                           simulate, spring_acceleration, spring_energy, spring_system)


def _energy_error(springs, x0, v0, steps, dt):
    x, v = simulate(springs, x0, v0, steps, dt)
    energy = spring_energy(torch.as_tensor(x), torch.as_tensor(v),
                           torch.as_tensor(springs)).numpy()               # (T + 1,)
    return np.abs(energy - energy[0]).max() / energy[0], x


def test_velocity_verlet_conserves_the_energy():
    springs, x0, v0 = spring_system(6, seed=1)    # no spring squeezed near length 0
    error, x = _energy_error(springs, x0, v0, 2000, DT)      # 40 time units, many periods
    finer, _ = _energy_error(springs, x0, v0, 4000, DT / 2)
    assert error < 5e-3 and np.abs(x[-1] - x[0]).max() > 0.1
    assert 3 < error / finer < 5                             # bounded, second order in dt


def test_the_acceleration_is_minus_the_energy_gradient():
    springs, x0, _ = spring_system(5, seed=1)
    x = torch.tensor(x0, requires_grad=True)
    s = torch.as_tensor(springs)
    spring_energy(x, torch.zeros_like(x), s).backward()
    torch.testing.assert_close(spring_acceleration(x.detach(), s), -x.grad, rtol=0,
                               atol=1e-12)


def test_a_relabelled_graph_gives_relabelled_accelerations():
    torch.manual_seed(0)
    net = InteractionNetwork(16)
    springs, x0, _ = spring_system(7, seed=2)
    x = torch.as_tensor(x0, dtype=torch.float32)
    s = torch.as_tensor(springs, dtype=torch.float32)
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        out, out_p = net(x, s), net(x[perm], s[perm][:, perm])
    torch.testing.assert_close(out_p, out[perm], rtol=1e-5, atol=1e-6)
    assert not torch.allclose(out_p, out, atol=1e-3)        # the relabelling did change it


def test_training_lowers_the_loss_and_any_size_rolls_out():
    trainer = SimulatorTrainer(balls=4, seed=1)
    first = float(trainer.step(1)["loss"])
    trainer.step(40)
    assert trainer.history.last("loss") < first
    net = network_of(trainer.snapshot())
    for balls in (2, 9):
        r = learned_rollout(net, balls, 10)
        assert r.learned.shape == r.truth.shape == (11, balls, 2)
        assert r.error[0] < 1e-6 and np.isfinite(r.error).all()
