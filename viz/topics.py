"""The topics of the playground, one entry per page, in gallery order.

`ready` is False while a page is not built: its page file then shows an honest
"coming soon" card and the gallery marks it so. A topic page flips its own flag when done.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Topic:
    slug: str        # url path, page file topic_pages/<slug>.py, thumbnail assets/thumbnails/<slug>.png
    title: str
    section: str     # navigation group
    sentence: str    # one sentence for the gallery card
    icon: str        # material icon for the navigation
    issue: int       # the issue that builds the page
    ready: bool = False

    @property
    def page_file(self) -> str:
        return f"topic_pages/{self.slug}.py"

    @property
    def thumbnail(self) -> Path:
        return ROOT / "assets" / "thumbnails" / f"{self.slug}.png"


SECTIONS = ("Foundations", "Optimization", "Architectures", "Generative models", "Robustness")

TOPICS: tuple[Topic, ...] = (
    Topic("backpropagation", "Backpropagation on a graph", "Foundations",
          "Type an expression, see its graph, and step through the backward pass node by node.",
          ":material/account_tree:", 18, ready=True),
    Topic("initialization", "Initialization & batch norm", "Foundations",
          "Watch the signal die or explode through 50 layers, and see what He init and batch "
          "norm change.",
          ":material/stacked_line_chart:", 19, ready=True),
    Topic("gradient_descent", "Gradient descent & the optimizer race", "Optimization",
          "Why gradient descent zigzags, when it diverges, and what momentum and Adam change.",
          ":material/trending_down:", 3, ready=True),
    Topic("generalization", "Generalization & regularization", "Optimization",
          "Watch train and validation curves split, memorize random labels, and see double "
          "descent.",
          ":material/call_split:", 20, ready=True),
    Topic("relu_regions", "ReLU linear regions", "Architectures",
          "A ReLU network cuts the plane into polygons: watch them move as it trains; depth "
          "can multiply them (sawtooth), random nets do not.",
          ":material/change_history:", 4, ready=True),
    Topic("convolution", "Convolution & receptive fields", "Architectures",
          "Slide a kernel over a real photo and see which input pixels each output sees.",
          ":material/grid_on:", 5, ready=True),
    Topic("lstm_gating", "LSTM gating", "Architectures",
          "Watch input, forget and output gates work on a sequence, and why gradients survive.",
          ":material/memory:", 6, ready=True),
    Topic("attention", "Attention maps", "Architectures",
          "From one softmax to the heads of small transformers trained to copy, reverse, sort "
          "and look up.",
          ":material/visibility:", 7, ready=True),
    Topic("gan", "GAN mode collapse", "Generative models",
          "Train a GAN on many modes, count the modes it covers, and cure the collapse.",
          ":material/scatter_plot:", 8, ready=True),
    Topic("vae", "VAE latent grids", "Generative models",
          "Decode a grid of the 2-D latent space of a VAE while it trains on digits.",
          ":material/blur_on:", 9, ready=True),
    Topic("diffusion", "Diffusion sampling", "Generative models",
          "Noise 2-D data, then sample it back with DDPM, DDIM and Langevin dynamics.",
          ":material/grain:", 10, ready=True),
    Topic("adversarial", "Adversarial examples", "Robustness",
          "Flip a digit classifier with an invisible perturbation, and train one that resists.",
          ":material/gpp_maybe:", 21, ready=True),
)

TOPICS_BY_SLUG = {t.slug: t for t in TOPICS}
