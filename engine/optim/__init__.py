"""Gradient descent and its relatives on 2-D landscapes: quadratics, Rosenbrock, a saddle,
two minima. Pure NumPy/PyTorch, float64 throughout (log-error plots stay straight to 1e-15).

Quadratic: f(x) = 1/2 (x - x*)^T A (x - x*),  A = R(angle) diag(l1, l2) R(angle)^T.
In eigen-coordinates z = V^T (x - x*) every direction evolves on its own; GD gives
z_i <- (1 - lr l_i) z_i, so GD converges iff 0 < lr < 2 / l_max, with rate
gd_rate = max_i |1 - lr l_i|, best lr = 2 / (l_min + l_max), rate (k - 1)/(k + 1), k = l_max/l_min.

Optimizers (registry OPTIMIZERS). g = grad f(x) + grad_noise * xi, xi ~ N(0, I) seeded.
Seven of them are one update with different coefficients (the "moment" family):

    m <- b1 m + c1 g                 first moment (momentum buffer)
    s <- b2 s + c2 g^2               second moment (per coordinate)
    s_hat <- max(ams * s_hat, s)     AMSGrad keeps the running max (ams = 1), others s_hat = s
    p1 <- r1 p1,  p2 <- r2 p2        bias-correction powers (p = beta^k for Adam, 0 otherwise)
    x <- x - lr (ng g + nm m / (1 - p1)) / (sqrt(s_hat / (1 - p2)) + eps)

    method    b1    c1      b2    c2      r1   r2   ng  nm    eps
    gd        0     1       0     0       0    0    1   0     1  (denominator = 1)
    momentum  beta  1       0     0       0    0    0   1     1  (heavy ball, torch SGD)
    nesterov  beta  1       0     0       0    0    1   beta  1  (torch SGD nesterov=True)
    adagrad   0     1       1     1       0    0    0   1     eps
    rmsprop   0     1       alpha 1-alpha 0    0    0   1     eps
    adam      b1    1-b1    b2    1-b2    b1   b2   0   1     eps
    amsgrad   as adam, ams = 1

Every rule matches torch.optim (SGD, Adagrad, RMSprop, Adam(amsgrad)) step for step, with
eps added after the square root as PyTorch does. Defaults follow the papers, not PyTorch where
they differ: RMSProp alpha = 0.9 (Hinton's lecture; PyTorch uses 0.99), eps = 1e-8.
The other two: Newton x <- x - lr H(x)^{-1} g, and Rprop (PyTorch's rule: per-coordinate step
size x1.2 when the gradient sign repeats, x0.5 when it flips, clipped to [1e-6, 50]; a flipped
coordinate does not move that step).

Divergence is a result: the run stops at the first step where |x| > 1e6 or f(x) is not
finite, and `diverged_at` says which.

Backends: device=None runs on NumPy (fastest for a handful of 2-D runs: a step is a few
microseconds); a torch device name ("cpu", "cuda", "mps") runs the same code on torch tensors
(big batches such as the rate map). Noise comes from one seeded NumPy stream, shared by every
run of a call (common random numbers: a fair race), so both backends see the same noise.

Layout (one job per module; every name is importable from engine.optim as before):
    engine/optim/problems.py    landscapes, LANDSCAPES, make_landscape, landscape_grid
    engine/optim/optimizers.py  OPTIMIZERS (the coefficient table above), resolve_hyper, kernels
    engine/optim/runs.py        optimize, optimize_many, race; Trajectory, BatchTrajectory
    engine/optim/measures.py    closed-form rates, measured_rate, rate_map, eigen_errors, the
                                local quadratic (Taylor) model
"""
from __future__ import annotations

from engine.optim.problems import (DIVERGENCE_RADIUS, DTYPE, Landscape, rotation, Quadratic,
                                   Rosenbrock, QuarticSaddle, TwoMinima, LANDSCAPES, Grid,
                                   landscape_grid, make_landscape)
from engine.optim.optimizers import KERNELS, OPTIMIZERS, Optimizer, resolve_hyper
from engine.optim.runs import (BatchTrajectory, RaceEntry, Trajectory, optimize, optimize_many,
                               race)
from engine.optim.measures import (gd_rate, optimal_gd_lr, optimal_gd_rate, optimal_momentum,
                                   optimal_momentum_rate, heavy_ball_rate, FLOOR,
                                   distance_to_minimizer, measured_rate, RateMap, rate_map,
                                   eigen_errors, steps_to_reach, TaylorModel, taylor_model,
                                   taylor_gap)

__all__ = ['DIVERGENCE_RADIUS', 'DTYPE', 'Landscape', 'rotation', 'Quadratic', 'Rosenbrock',
           'QuarticSaddle', 'TwoMinima', 'LANDSCAPES', 'Grid', 'landscape_grid', 'make_landscape',
           'Optimizer', 'OPTIMIZERS', 'resolve_hyper', 'KERNELS', 'Trajectory', 'BatchTrajectory',
           'optimize_many', 'optimize', 'RaceEntry', 'race', 'gd_rate', 'optimal_gd_lr',
           'optimal_gd_rate', 'optimal_momentum', 'optimal_momentum_rate', 'heavy_ball_rate',
           'FLOOR', 'distance_to_minimizer', 'measured_rate', 'RateMap', 'rate_map',
           'eigen_errors', 'steps_to_reach', 'TaylorModel', 'taylor_model', 'taylor_gap']
