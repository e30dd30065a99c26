"""Variational autoencoders on the 8x8 digits, the 1-D toy of the variational principle, and
the autoencoder-vs-PCA toy.

The VAE (Kingma & Welling 2014). Encoder q(z|x) = N(mu, diag(exp(logvar))), prior
p(z) = N(0, I), decoder p(x|z) (Bernoulli or Gaussian, mean `decode(z)`). Per example

    ELBO(x) = E_q[log p(x|z)] - KL(q(z|x) || p(z))  <=  log p(x)
    loss    = recon + beta * kl,   recon = -E_q[log p(x|z)],  kl = KL(q || p)

so loss = -ELBO when beta = 1. The gap log p(x) - ELBO = KL(q(z|x) || p(z|x)).
Reparameterisation: z = mu + exp(logvar / 2) * eps, eps ~ N(0, I): a sample that is a
differentiable function of (mu, logvar). The encoder outputs logvar = log sigma^2 (not log sigma).

Everything is pure torch/numpy; results for plotting are numpy arrays in frozen dataclasses.

The package, by job (every name stays importable as `from engine.vae import ...`):

    data.py      load_digit_data, DigitData, upsample, tile       the 8x8 digits
    model.py     VAE, Loss, LIKELIHOODS, kl_standard_normal, reparameterize
    measures.py  latent_grid, decode_point, interpolate, encode_dataset, reconstruction_mse
    trainer.py   VAETrainer, VAESnapshot                          live training
    shipped.py   SHIPPED, shipped_name, load_shipped, save_trainer, load_model
                 (engine.weights files in assets/weights/)
    toy.py       the 1-D toy: toy_elbo, true_posterior, fit_q, ...
    manifold.py  autoencoder vs PCA: curved_manifold, pca_reconstruct, fit_autoencoder_2d
"""
from __future__ import annotations

from engine.vae.data import DATA_SEED, DigitData, load_digit_data, tile, upsample
from engine.vae.manifold import (Reconstruction, curved_manifold, fit_autoencoder_2d,
                                 pca_reconstruct)
from engine.vae.measures import (SPANS, LatentCodes, LatentGrid, decode_point, encode_dataset,
                                 grid_values, interpolate, latent_grid, reconstruction_mse)
from engine.vae.model import (GAUSSIAN_SIGMA, LIKELIHOODS, LOG_2PI, VAE, Loss, bernoulli_nll,
                              gaussian_nll, kl_standard_normal, reparameterize)
from engine.vae.shipped import (PRETRAIN_EPOCHS, SHIPPED, SHIPPED_HIDDEN, WEIGHTS_DIR, load_model,
                                load_shipped, save_trainer, shipped_config, shipped_name)
from engine.vae.toy import (TOY_NOISE, ToyELBO, elbo_gaussian_q, fit_q, kl_q_posterior, toy_elbo,
                            toy_g, toy_log_joint, toy_log_px, toy_z_grid, true_posterior)
from engine.vae.trainer import VAESnapshot, VAETrainer

__all__ = [
    "DATA_SEED", "GAUSSIAN_SIGMA", "LIKELIHOODS", "LOG_2PI", "PRETRAIN_EPOCHS", "SHIPPED",
    "SHIPPED_HIDDEN", "SPANS", "TOY_NOISE", "VAE", "WEIGHTS_DIR", "DigitData", "LatentCodes",
    "LatentGrid", "Loss", "Reconstruction", "ToyELBO", "VAESnapshot", "VAETrainer",
    "bernoulli_nll", "curved_manifold", "decode_point", "elbo_gaussian_q", "encode_dataset",
    "fit_autoencoder_2d", "fit_q", "gaussian_nll", "grid_values", "interpolate", "kl_q_posterior",
    "kl_standard_normal", "latent_grid", "load_digit_data", "load_model", "load_shipped",
    "pca_reconstruct", "reconstruction_mse", "reparameterize", "save_trainer", "shipped_config",
    "shipped_name", "tile", "toy_elbo", "toy_g", "toy_log_joint", "toy_log_px", "toy_z_grid",
    "true_posterior", "upsample",
]
