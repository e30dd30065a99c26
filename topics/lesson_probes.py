"""Measurements some lesson slides need that no preset of their page states: each is computed
from the same page functions the view draws from (named in each docstring), on the full
settings s. Each is marked with @lesson_measure (ui/lesson_measures.py) and named
"<page>.<name>" in lesson files."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ui.lesson_measures import lesson_measure

S = Mapping[str, Any]


@lesson_measure(page="relu_regions")
def relu_random_pieces(s: S) -> float:
    """Linear pieces of the sawtooth tab's random 1-D net (relu_regions_compute.net_of with
    input_dim=1, engine.regions.linear_pieces_1d over the box), as its title counts them."""
    from engine import regions as reg
    from topics.relu_regions.compute import box_of, net_of
    box = box_of(s)
    return float(len(reg.linear_pieces_1d(net_of(s, 0, input_dim=1), (box[0], box[1])).kinks())
                 + 1)


@lesson_measure(page="relu_regions")
def relu_random_slope_sign_changes(s: S) -> float:
    """Sign changes of df/dx of the random 1-D net (the Gradient tab, seed 0:
    relu_regions_compute.net_of with input_dim=1, Pieces1D.slope_sign_changes)."""
    from engine import regions as reg
    from topics.relu_regions.compute import box_of, net_of
    box = box_of(s)
    return float(reg.linear_pieces_1d(net_of(s, 0, input_dim=1), (box[0], box[1]))
                 .slope_sign_changes())


@lesson_measure(page="attention")
def attention_mask_share(s: S) -> float:
    """Share of the n² query-key pairs the Masks tab's mask allows (attention_compute.allowed_of)."""
    from topics.attention.compute import allowed_of
    return float(allowed_of(s).mean())


@lesson_measure(page="attention")
def attention_mask_future(s: S) -> float:
    """Number of allowed pairs whose key comes after its query (0 for a causal mask)."""
    from topics.attention.compute import allowed_of
    return float(np.triu(allowed_of(s), 1).sum())


@lesson_measure(page="attention")
def attention_pe_error(s: S, mode: str) -> float:
    """max |out(Px) − P·out(x)| of the Positions tab's test without ("none") or with
    ("add sinusoidal PE") the position code (attention_compute.pe_errors)."""
    from topics.attention.compute import pe_errors
    return float(pe_errors(s)[mode])


@lesson_measure(page="attention")
def attention_pe_range(s: S) -> float:
    """max |PE| of the sinusoidal code the Positions tab draws (sin/cos: at most 1)."""
    from engine import attention
    return float(attention.sinusoidal_encoding(int(s["at_pe_n"]), int(s["at_pe_d"])).abs().max())


@lesson_measure(page="attention")
def attention_pe_period(s: S, dim: int) -> float:
    """Positions per period of PE dimension `dim` (pairs (2i, 2i+1) share the frequency
    1/10000^(2i/d)); the first pair repeats every 2π positions, the last barely moves."""
    d = int(s["at_pe_d"])
    return float(2 * np.pi * 10000 ** ((dim - dim % 2) / d))


@lesson_measure(page="vae")
def vae_posterior_modes(s: S) -> float:
    """Local maxima of the exact posterior p(z | x) of the Why-the-ELBO toy at x = vae_x
    (vae_compute.posterior_modes)."""
    from topics.vae.compute import posterior_modes
    return float(len(posterior_modes(float(s["vae_x"]))))


@lesson_measure(page="diffusion")
def diffusion_alpha_bar(s: S) -> float:
    """ᾱ_t at the Forward tab's t: the share of the data's variance left at step t."""
    from engine import diffusion
    return float(diffusion.SCHEDULES[s["df_sched"]]().alpha_bar(int(s["df_t"])))


@lesson_measure(page="diffusion")
def diffusion_far_over_near_error(s: S, t: int, near: float = 0.25, far: float = 2.0) -> float:
    """How much worse the Reverse tab's denoiser (the shipped network when chosen) matches the
    exact one (diffusion_compute.exact_of; the exact one itself gives nan) far from the data than on it, at step t: the mean
    |ε_θ(x, t) − ε*(x, t)| over a 60 × 60 grid of the plot's square, on the grid points more
    than `far` from every data point over those within `near` of one (the score is
    −ε/√(1 − ᾱ_t), so its error has the same ratio)."""
    import torch
    from topics.diffusion.compute import (LIM, PRETRAINED, data_of, eps_of, exact_of,
                                          pretrained_of)
    data = data_of(s)
    exact = exact_of(data, s["df_sched"])
    shipped = pretrained_of(s["df_data"]) if s["df_den"] == PRETRAINED else None
    model = shipped[0] if shipped is not None else None
    grid = np.linspace(-LIM, LIM, 60)
    x = torch.as_tensor(np.stack(np.meshgrid(grid, grid), -1).reshape(-1, 2),
                        dtype=torch.float32)                                    # (3600, 2)
    gap = (torch.as_tensor(eps_of(s, exact, model)(x, int(t)), dtype=torch.float64)
           - torch.as_tensor(eps_of(s, exact)(x, int(t)), dtype=torch.float64)).norm(dim=1)
    dist = torch.cdist(x.double(), torch.as_tensor(data.points, dtype=torch.float64)).min(1).values
    return float(gap[dist > far].mean() / gap[dist < near].mean())


@lesson_measure(page="generalization")
def generalization_linear_accuracy(s: S, seed: int = 0) -> float:
    """Training accuracy of the best straight boundary on the Overfitting tab's training points
    (engine.generalization.make_split with the tab's TrainConfig and the trainer's seed): a
    logistic regression with almost no penalty, fitted to those points."""
    from sklearn.linear_model import LogisticRegression

    from engine import generalization
    from topics.generalization.compute import overfit_config
    c = overfit_config(s)
    data = generalization.make_split(c.dataset, c.n_train, c.n_val, c.noise, c.label_noise,
                                     seed=int(seed))
    fit = LogisticRegression(C=1e6, max_iter=10_000).fit(data.x_train, data.y_train)
    return float(fit.score(data.x_train, data.y_train))


@lesson_measure(page="vae", trains=True)
def vae_denoised_share(s: S, which: str = "nonlinear autoencoder", seed: int = 0) -> float:
    """How far the Autoencoder-vs-PCA tab's reconstructions (vae_compute.autoencoders, or PCA's
    with which="PCA") lie from the clean arc the noisy points were drawn around
    (engine.vae.curved_manifold: (2t, 1.5 (t² − 1/3)), t in [−1, 1]), as a share of how far the
    noisy points themselves lie: mean distance to the arc of the reconstructions / of the inputs."""
    from engine.vae import curved_manifold, pca_reconstruct
    from topics.vae.compute import autoencoders
    noise = float(s["vae_mnoise"])
    pts = curved_manifold(300, seed, noise)
    recon = (pca_reconstruct(pts, 1) if which == "PCA"
             else autoencoders(noise, int(s["vae_mhidden"]), seed)[which]).recon
    t = np.linspace(-1.0, 1.0, 4001)
    arc = np.stack([2 * t, 1.5 * (t ** 2 - 1 / 3)], 1)                     # (4001, 2)

    def to_arc(x: np.ndarray) -> float:
        return float(np.sqrt(((x[:, None, :] - arc[None]) ** 2).sum(-1)).min(1).mean())
    return to_arc(np.asarray(recon, dtype=np.float64)) / to_arc(pts.astype(np.float64))


@lesson_measure(page="initialization")
def initialization_last_rank(s: S) -> float:
    """Effective rank of the last layer's activations over the first inputs, as the Signal
    tab's rank panel draws it (initialization_compute.propagation_of(...).eff_rank)."""
    from topics.initialization.compute import propagation_of
    return float(np.asarray(propagation_of(s).eff_rank)[-1])


@lesson_measure(page="initialization")
def initialization_rank_at(s: S, layer: int) -> float:
    """Effective rank of h_layer (layer 0: the input) on the Signal tab's rank panel."""
    from topics.initialization.compute import propagation_of
    return float(np.asarray(propagation_of(s).eff_rank)[int(layer)])


@lesson_measure(page="convolution")
def convolution_equivariance_error(s: S) -> float:
    """max |conv(Tx) − T conv(x)| of the Equivariance tab (convolution_compute.equivariance_of)."""
    from topics.convolution.compute import equivariance_of
    return float(equivariance_of(s).equivariance_error)


@lesson_measure(page="convolution")
def convolution_slide_kept_share(s: S) -> float:
    """Output values over input values (the image without its padding) of the Sliding window
    tab (convolution_compute.frames_of): 0.25 for a 2x2 pool with stride 2."""
    from topics.convolution.compute import frames_of
    frames = frames_of(s)
    p = frames.padding
    inside = frames.padded[p:frames.padded.shape[0] - p, p:frames.padded.shape[1] - p]
    return float(frames.sums.size / inside.size)


@lesson_measure(page="convolution")
def convolution_slide_out_side(s: S, axis: int = 1) -> float:
    """Output width (axis 1) or height (axis 0) of the Sliding window tab
    (convolution_compute.frames_of)."""
    from topics.convolution.compute import frames_of
    return float(frames_of(s).output.shape[axis])


@lesson_measure(page="convolution")
def convolution_slide_torch_error(s: S) -> float:
    """max |output − torch's own layer| of the Sliding window tab (convolution_compute.frames_of
    against F.conv2d, F.max_pool2d, F.avg_pool2d or F.conv_transpose2d on the same small input
    and geometry)."""
    import torch
    import torch.nn.functional as F
    from topics.convolution.compute import (frames_of, slide_input, slide_kernel,
                                            gray_of, image_of)
    frames = frames_of(s)
    kernel = slide_kernel(s)
    if frames.op == "transposed":
        ref = F.conv_transpose2d(torch.as_tensor(frames.input)[None, None],
                                 torch.as_tensor(kernel)[None, None], stride=frames.stride,
                                 padding=frames.padding, dilation=frames.dilation)
        return float(np.abs(frames.output - ref[0, 0].numpy()).max())
    small, stride, pad, dil, _ = slide_input(s, gray_of(image_of(s)), kernel)
    x = torch.as_tensor(small)[None, None]
    if frames.op == "max":
        ref = F.max_pool2d(x, len(kernel), stride, pad, dil)
    elif frames.op == "avg":
        ref = F.avg_pool2d(x, len(kernel), stride, pad)
    else:
        ref = F.conv2d(x, torch.as_tensor(kernel)[None, None], stride=stride, padding=pad,
                       dilation=dil)
    return float(np.abs(frames.output - ref[0, 0].numpy()).max())


@lesson_measure(page="convolution")
def convolution_transposed_backprop_error(s: S) -> float:
    """max |transposed convolution of the Sliding window tab − ∂L/∂x of a convolution|: the
    tab's small input taken as the upstream gradient ∂L/∂y of F.conv2d with the same kernel and
    geometry, the input gradient by autograd (convolution_compute.frames_of)."""
    import torch
    import torch.nn.functional as F
    from topics.convolution.compute import frames_of, slide_kernel
    frames = frames_of(s)
    kernel = torch.as_tensor(slide_kernel(s))[None, None]
    x = torch.zeros((1, 1, *frames.output.shape), requires_grad=True)
    y = F.conv2d(x, kernel, stride=frames.stride, padding=frames.padding,
                 dilation=frames.dilation)
    if y.shape[-2:] != frames.input.shape:
        return float("inf")
    (dx,) = torch.autograd.grad(y, x, grad_outputs=torch.as_tensor(frames.input)[None, None])
    return float(np.abs(frames.output - dx[0, 0].numpy()).max())


@lesson_measure(page="attention")
def attention_pe_crossings(s: S, dim: int) -> float:
    """Sign changes of dimension `dim` of the sinusoidal code along the positions the
    Positions tab draws (engine.attention.sinusoidal_encoding): fast dimensions oscillate,
    slow ones barely move."""
    from engine import attention
    column = attention.sinusoidal_encoding(int(s["at_pe_n"]), int(s["at_pe_d"]))[:, dim].numpy()
    signs = np.sign(column[np.abs(column) > 1e-9])
    return float((signs[1:] != signs[:-1]).sum())


@lesson_measure(page="gan")
def gan_lines_distance(s: S, which: str) -> float:
    """"jsd" or "w1" between the two parallel lines of the Why-Wasserstein tab at its θ
    (engine.gan.parallel_lines, what the tab plots)."""
    from engine.gan import parallel_lines
    lines = parallel_lines(np.array([float(s["gan_theta"])]))
    return float(getattr(lines, which)[0])


@lesson_measure(page="vae")
def vae_pca_residual_share(s: S) -> float:
    """Share of the variance of the Autoencoder-vs-PCA tab's points (engine.vae.curved_manifold,
    seed 0) that PCA's top direction leaves out: its reconstruction error over the total."""
    from engine.vae import curved_manifold, pca_reconstruct
    pts = curved_manifold(300, 0, float(s["vae_mnoise"]))
    total = float(((pts - pts.mean(0)) ** 2).sum(1).mean())
    return float(pca_reconstruct(pts, 1).mse) / total


@lesson_measure(page="initialization")
def initialization_max_slope(s: S, name: str) -> float:
    """max φ′(z) of activation `name` on the Activations tab's range (autograd,
    engine.signal.activations), as its caption prints it."""
    from engine.signal.activations import activation_curves
    return float(activation_curves([name], float(s["in_zmax"]))[1][name][1].max())


@lesson_measure(page="initialization")
def initialization_slope_at(s: S, name: str, z: float) -> float:
    """φ′(z) of activation `name` at the grid point nearest z."""
    from engine.signal.activations import activation_curves
    grid, curves = activation_curves([name], float(s["in_zmax"]))
    return float(curves[name][1][np.abs(grid - z).argmin()])
