"""GANs on 2-D targets, made measurable: losses, remedies against mode collapse, mode
coverage, the Dirac-GAN and the parallel-lines example. Pure torch/numpy (no drawing).

Notation used in the code: D(x) is the discriminator's / critic's raw output (a logit for the
classifier losses), G(z) the generator, `r = D(x_real)`, `f = D(G(z))`.

    min_G max_D  E log σ(r) + E log(1 − σ(f))                      ("minimax")

With the optimal D*(x) = p_data / (p_data + p_g) the generator minimises 2·JSD(p_data‖p_g) − log 4.

The package, by job (every name stays importable as `from engine.gan import ...`):

    targets.py     TARGETS, make_target, data_box            the 2-D point sets
    losses.py      LOSSES, gradient_penalty, r1_penalty      the objectives (a registry)
    nets.py        mlp, Discriminator, OPTIMIZERS, UNROLL_UPDATES
    trainer.py     GANTrainer, GANSnapshot, CriticGrid       training and what the page draws
    measures.py    mode_coverage, Coverage                   modes covered, reverse KL
    theory.py      optimal_discriminator, dirac_gan, parallel_lines
    pretrained.py  TRAINER_DEFAULTS, LIVE_*, PRETRAINED, save_trainer / load_trainer
                   (engine.weights files)
"""
from __future__ import annotations

from engine.gan.losses import LOSSES, GANLoss, gradient_penalty, r1_penalty
from engine.gan.measures import MIN_SHARE, Coverage, mode_coverage
from engine.gan.nets import OPTIMIZERS, UNROLL_UPDATES, Discriminator, mlp
from engine.gan.pretrained import (LIVE_DEFAULTS, LIVE_TARGET, PRETRAINED, TRAINER_DEFAULTS,
                                   PretrainSpec, load_trainer, save_trainer, trainer_config)
from engine.gan.targets import POOL_SIZE, TARGETS, bimodal_1d, data_box, make_target
from engine.gan.theory import (DIRAC_DERIVATIVES, G_LOSS_CURVES, DiracTrajectory,
                               DiscriminatorVsCritic, GeneratorLossCurves, ParallelLines,
                               dirac_gan, dirac_gan_field, dirac_gradients,
                               discriminator_vs_critic, fit_discriminator,
                               generator_loss_curves, optimal_discriminator, parallel_lines)
from engine.gan.trainer import CriticGrid, GANSnapshot, GANTrainer

__all__ = [
    "DIRAC_DERIVATIVES", "G_LOSS_CURVES", "GeneratorLossCurves", "generator_loss_curves",
    "DiscriminatorVsCritic", "discriminator_vs_critic",
    "LIVE_DEFAULTS", "LIVE_TARGET", "LOSSES", "MIN_SHARE", "OPTIMIZERS",
    "POOL_SIZE", "PRETRAINED", "TARGETS", "TRAINER_DEFAULTS", "UNROLL_UPDATES", "Coverage",
    "CriticGrid", "DiracTrajectory", "Discriminator", "GANLoss", "GANSnapshot", "GANTrainer",
    "ParallelLines", "PretrainSpec", "bimodal_1d", "data_box", "dirac_gan", "dirac_gan_field",
    "dirac_gradients", "fit_discriminator", "gradient_penalty", "load_trainer", "make_target",
    "mlp", "mode_coverage", "optimal_discriminator", "parallel_lines", "r1_penalty",
    "save_trainer", "trainer_config",
]
