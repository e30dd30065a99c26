"""The topics of the playground, one entry per page, in gallery order.

`engine` names the topic's own engine modules (what the page computes with; shared ones such as
engine.datasets, engine.nets, engine.training are not listed): from a page's name a newcomer
finds its code in topics/<slug>/page.py, topics/<slug>/figures.py and these modules
(tests/test_topics.py checks that each one imports and that the page imports it).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Topic:
    slug: str        # url path, page file topics/<slug>/page.py, thumbnail assets/thumbnails/<slug>.png
    title: str
    section: str     # navigation group
    sentence: str    # one sentence for the gallery card
    icon: str        # material icon for the navigation
    engine: tuple[str, ...] = ()   # the topic's engine modules, e.g. ("engine.gan",)

    @property
    def page_file(self) -> str:
        return f"topics/{self.slug}/page.py"

    @property
    def engine_files(self) -> tuple[str, ...]:
        """Where each engine module lives, relative to the repository: engine/<name>.py, or
        engine/<name>/ for a package."""
        out = []
        for module in self.engine:
            rel = "/".join(module.split("."))
            out.append(f"{rel}/" if (ROOT / rel / "__init__.py").exists() else f"{rel}.py")
        return tuple(out)

    @property
    def code_files(self) -> tuple[str, ...]:
        """The topic's folder, then its engine package: where to read how the page works."""
        return (f"topics/{self.slug}/", *self.engine_files)

    @property
    def thumbnail(self) -> Path:
        return ROOT / "assets" / "thumbnails" / f"{self.slug}.png"


SECTIONS = ("Foundations", "Optimization", "Architectures", "Generative models", "Robustness")

TOPICS: tuple[Topic, ...] = (
    Topic("backpropagation", "Backpropagation on a graph", "Foundations",
          "Type an expression, see its graph, and step through the backward pass node by node.",
          ":material/account_tree:",
          engine=("engine.autodiff",)),
    Topic("initialization", "Initialization & batch norm", "Foundations",
          "Watch the signal die or explode through 50 layers, and see what He init and batch "
          "norm change.",
          ":material/stacked_line_chart:",
          engine=("engine.signal",)),
    Topic("gradient_descent", "Gradient descent & the optimizer race", "Optimization",
          "Why gradient descent zigzags, when it diverges, and what momentum and Adam change.",
          ":material/trending_down:",
          engine=("engine.optim",)),
    Topic("generalization", "Generalization & regularization", "Optimization",
          "Watch train and validation curves split, memorize random labels, and see double "
          "descent.",
          ":material/call_split:",
          engine=("engine.generalization",)),
    Topic("relu_regions", "ReLU linear regions", "Architectures",
          "A ReLU network cuts the plane into polygons: watch them move as it trains; depth "
          "can multiply them (sawtooth), random nets do not.",
          ":material/change_history:",
          engine=("engine.regions",)),
    Topic("convolution", "Convolution & receptive fields", "Architectures",
          "Slide a kernel over a real photo and see which input pixels each output sees.",
          ":material/grid_on:",
          engine=("engine.conv",)),
    Topic("lstm_gating", "LSTM gating", "Architectures",
          "Watch input, forget and output gates work on a sequence, and why gradients survive.",
          ":material/memory:",
          engine=("engine.recurrent",)),
    Topic("attention", "Attention maps", "Architectures",
          "From one softmax to the heads of small transformers trained to copy, reverse, sort "
          "and look up.",
          ":material/visibility:",
          engine=("engine.attention",)),
    Topic("gan", "GAN mode collapse", "Generative models",
          "Train a GAN on many modes, count the modes it covers, and cure the collapse.",
          ":material/scatter_plot:",
          engine=("engine.gan",)),
    Topic("vae", "VAE latent grids", "Generative models",
          "Decode a grid of the 2-D latent space of a VAE while it trains on digits.",
          ":material/blur_on:",
          engine=("engine.vae",)),
    Topic("diffusion", "Diffusion sampling", "Generative models",
          "Noise 2-D data, then sample it back with DDPM, DDIM and Langevin dynamics.",
          ":material/grain:",
          engine=("engine.diffusion",)),
    Topic("flows", "Normalizing flows", "Generative models",
          "Warp a Gaussian into 2-D data with coupling layers: an exact density that "
          "integrates to one.",
          ":material/water:",
          engine=("engine.flows",)),
    Topic("adversarial", "Adversarial examples", "Robustness",
          "Flip a digit classifier with an invisible perturbation, and train one that resists.",
          ":material/gpp_maybe:",
          engine=("engine.adversarial",)),
    Topic('graphs', 'Graph neural networks', 'Architectures',
          "Pass messages along a graph's edges, watch features smooth out with depth, train a GCN to label the karate club from a few nodes, train a simulator of balls and springs, and watch a network solve Sudoku.",
          ':material/hub:',
          engine=("engine.graphs",)),
    Topic('autoregressive', 'Autoregressive models', 'Generative models',
          'Generate an image one pixel at a time: masked convolutions, their receptive field and blind spot, causal dilated convolutions, a PixelCNN trained on digits and a VQ-VAE with a PixelCNN prior over its codes.',
          ':material/grid_view:',
          engine=("engine.autoregressive",)),
    Topic('language_models', 'Language models', 'Generative models',
          'A small GPT predicts the next character: see its distribution, reshape it with temperature, top-k and top-p, and train it live on your own text.',
          ':material/text_fields:',
          engine=("engine.language_models",)),
    Topic('practice', 'Training in practice', 'Robustness',
          'What practitioners do around a trained net: measure its uncertainty, search its hyperparameters, prune it to a lottery ticket, distil it into a smaller one.',
          ':material/tune:',
          engine=("engine.practice",)),
    Topic('representations', 'Representation learning', 'Generative models',
          'Clustering toy shapes, deep embedded clustering of digits, and how learned features help when labels are few.',
          ':material/scatter_plot:',
          engine=("engine.representations",)),
    Topic('network', 'A network you build', 'Foundations',
          "Build a small network on a 2-D dataset and watch every neuron's output, the weights and the losses as it trains.",
          ':material/lan:',
          engine=("engine.network",)),
)

TOPICS_BY_SLUG = {t.slug: t for t in TOPICS}
