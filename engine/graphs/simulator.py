"""The live trainer of the learned simulator: an interaction network (engine.graphs.physics)
fitted by Adam to the exact accelerations of spring systems of `balls` balls,

    L(theta) = mean_{states, i} |phi(x)_i - a_i|^2 / mean |a|^2

(the squared error relative to the accelerations' mean square), on minibatches of states
taken from seeded exact trajectories. snapshot(): the network's weights (numpy), which a
frame loads to roll the learned simulator out beside the exact one (`learned_rollout`)."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from engine.graphs.physics import (InteractionNetwork, rollout, simulate,
                                   spring_acceleration, spring_system)
from engine.training import SingleModelTrainer

SYSTEMS = 24           # training systems, each simulated for TRAJECTORY steps
TRAJECTORY = 200
BATCH = 64             # states per minibatch
TEST_SEED = 10_000     # the seed of the systems rolled out on the page (never trained on)


def training_states(balls: int, seed: int) -> tuple[torch.Tensor, ...]:
    """Seeded exact trajectories of SYSTEMS systems of `balls` balls: positions x (S, n, 2),
    springs (S, n, n) and accelerations a (S, n, 2) of every state, S = SYSTEMS (TRAJECTORY
    + 1)."""
    systems = [spring_system(balls, seed * SYSTEMS + k) for k in range(SYSTEMS)]
    springs = torch.as_tensor(np.stack([sy[0] for sy in systems]))   # (M, n, n) float64
    x0 = torch.as_tensor(np.stack([sy[1] for sy in systems]))        # (M, n, 2)
    v0 = torch.as_tensor(np.stack([sy[2] for sy in systems]))        # (M, n, 2)
    xs, _ = rollout(lambda x: spring_acceleration(x, springs), x0, v0, TRAJECTORY)
    x = xs.flatten(0, 1)                                              # (S, n, 2), (T + 1) M
    s = springs.repeat(TRAJECTORY + 1, 1, 1)                          # (S, n, n)
    a = spring_acceleration(x, s)                                     # (S, n, 2)
    return x.float(), s.float(), a.float()


class SimulatorTrainer(SingleModelTrainer):
    """Adam on the relative squared error of the predicted accelerations; one iteration, one
    minibatch of BATCH states."""

    log_every = 5

    def __init__(self, balls: int = 5, hidden: int = 64, lr: float = 1e-3, seed: int = 0,
                 device: str = "cpu"):
        super().__init__()
        if balls < 2:
            raise ValueError("a spring joins two balls: train on at least 2")
        self.x, self.springs, self.a = (t.to(device) for t in training_states(balls, seed))
        self.scale = float((self.a ** 2).mean())                      # mean |a|^2 / 2
        self.gen = torch.Generator().manual_seed(int(seed))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.model = InteractionNetwork(hidden).to(device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.hidden = int(hidden)

    def _iteration(self) -> dict[str, float]:
        idx = torch.randint(len(self.x), (BATCH,), generator=self.gen).to(self.x.device)
        pred = self.model(self.x[idx], self.springs[idx])             # (B, n, 2)
        loss = ((pred - self.a[idx]) ** 2).mean() / self.scale
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return {"loss": float(loss.detach())}

    def snapshot(self) -> dict:
        return {"hidden": self.hidden,
                "weights": {k: v.detach().cpu().numpy().copy()
                            for k, v in self.model.state_dict().items()}}



def network_of(snapshot: dict) -> InteractionNetwork:
    """The interaction network whose weights a SimulatorTrainer snapshot holds (float32)."""
    net = InteractionNetwork(int(snapshot["hidden"]))
    net.load_state_dict({k: torch.as_tensor(v) for k, v in snapshot["weights"].items()})
    return net.eval()


@dataclass(frozen=True)
class Rollouts:
    springs: np.ndarray     # (n, n)
    truth: np.ndarray       # (T + 1, n, 2) the exact positions
    learned: np.ndarray     # (T + 1, n, 2) the learned simulator's, from the same start
    error: np.ndarray       # (T + 1,) mean_i |learned_i - truth_i| at each step


@functools.lru_cache(maxsize=16)
def exact_rollout(balls: int, steps: int, seed: int = TEST_SEED) -> tuple[np.ndarray, ...]:
    """The seeded system of `balls` balls (not among the training systems) simulated exactly:
    springs (n, n), positions x (T + 1, n, 2), and its start x0, v0 (n, 2). Read-only."""
    springs, x0, v0 = spring_system(balls, seed)
    truth, _ = simulate(springs, x0, v0, steps)                       # (T + 1, n, 2)
    for arr in (springs, truth, x0, v0):
        arr.setflags(write=False)
    return springs, truth, x0, v0


def learned_rollout(net: InteractionNetwork, balls: int, steps: int,
                    seed: int = TEST_SEED) -> Rollouts:
    """The exact system of `balls` balls (exact_rollout) and the learned simulator's rollout
    from the same state, both by velocity Verlet with step DT."""
    springs, truth, x0, v0 = exact_rollout(int(balls), int(steps), int(seed))
    s = torch.tensor(springs, dtype=torch.float32)                    # (n, n), copies
    with torch.no_grad():
        xs, _ = rollout(lambda x: net(x, s), torch.tensor(x0, dtype=torch.float32),
                        torch.tensor(v0, dtype=torch.float32), steps)
    learned = xs.numpy().astype(np.float64)                           # (T + 1, n, 2)
    error = np.linalg.norm(learned - truth, axis=-1).mean(-1)         # (T + 1,)
    return Rollouts(springs, truth, learned, error)
