"""Write the project's list of the course notes' figures (lessons/figures.csv) from the course
material's table of figures (one row per figure: id, notes_file, section, what_it_shows,
app_page, status, new_page_topic, ...).

    python -m scripts.make_figure_list /path/to/course/figures.csv            # writes the list
    python -m scripts.make_figure_list /path/to/course/figures.csv --check    # compares only

The output is a function of the input alone (no clock, no randomness, rows in notes and
figure order), so running it twice gives the same bytes and tests/lessons/test_figure_list.py
can compare the shipped file with a fresh one. Columns of the list:

    id             "004:Fig2.16" (a numbered figure) or "001:L3817" (the notes' line of an
                   uncaptioned slide), as a slide's source = { notes, figure } names it
    notes          000 to 004
    section        the section of the notes the figure is in
    shows          what the figure shows, a short description (never its caption)
    computational  yes: the figure is a computation a page can draw; no: a photo or a diagram
    page           the slug of the page that draws it, or the topic of a page still to write
                   (empty for a figure that is not computational)
"""
from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from pathlib import Path
from typing import Iterable, Mapping

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "lessons" / "figures.csv"
COLUMNS = ("id", "notes", "section", "shows", "computational", "page")
SOURCE_COLUMNS = {"id", "section", "what_it_shows", "app_page", "status", "new_page_topic"}
NOT_COMPUTATIONAL = "not computational"
ID_PATTERN = re.compile(r"^(00\d):(Fig\d+\.\d+|L\d+[a-z]?)$")

# A source description that repeats its figure's caption is replaced by one in other words.
REWORDED = {
    "004:Fig1.10": "chain rule through two layers that pass single numbers",
    "004:Fig1.12": "chain rule through two layers that pass vectors",
    "004:Fig2.13": "how the rank of the top hidden layer falls as layers are added",
    "004:Fig2.17": "the steps Newton's method takes towards the minimum",
    "004:Fig4.10": "dropout read as an average over many thinned networks",
    "004:Fig5.10": "the tanh curve beside its slope",
    "004:Fig5.12": "graph of a linear Gaussian state-space model over time",
    "004:Fig6.14": "a decoder writing an output sequence one token at a time",
    "004:Fig6.16": "attention inside one block of a convolutional seq2seq decoder",
    "004:Fig6.21": "the attention unit with several heads at the core of the encoder",
    "004:Fig7.2": "a molecule drawn as atoms (nodes) joined by bonds (edges)",
    "004:Fig7.3": "text boxes of a scanned document linked into a graph",
    "004:Fig7.5": "graphs of different sizes that one network must accept",
    "004:Fig7.15": "how the effects of its neighbours on one object are computed",
    "004:Fig7.23": "one layer of a graph convolutional network",
    "004:Fig8.2": "principal component analysis written as a linear encoder and decoder",
    "004:Fig9.11": "block diagram of the DALL·E 2 text-to-image system",
    "004:Fig9.17": "changing attributes of a face by moving a diffusion autoencoder's code",
    "004:Fig10.13": "block diagram of the two-level VQ-VAE-2",
    "004:Fig10.14": "sampling VQ-VAE-2: top codes, then bottom codes, then pixels",
    "004:Fig10.15": "VQ-VAE-2 samples, each conditioned on an ImageNet class",
    "004:Fig10.17": "a prompt and the passage GPT-2 writes after it",
    "004:Fig10.21": "images drawn from a trained Sparse Transformer",
    "004:Fig11.1": "a coupling layer that scales and shifts half of its inputs",
    "004:Fig12.17": "the attention module SAGAN inserts between its convolutions",
    "004:Fig13.1": "transfer learning by retraining the top two layers of a pretrained AlexNet",
    "004:Fig13.9": "CPC: an encoder and an autoregressive context that predicts future codes",
    "004:Fig13.14": "a person learning a new concept from a single example",
    "004:Fig13.23": "classifying into classes never trained on, through their descriptions",
    "004:Fig13.25": "CLIP's image-text similarity used to classify unseen classes",
    "001:L3095": "a VAE's MNIST latent codes moving as training goes on",
    "001:L6361": "ReLU beside PReLU, whose negative slope is learned",
    "002:Fig2.3": "the graph of f(x, y, z) = (x + y)·z, one operation per node",
    "002:Fig4.10": "each layer widens an output's receptive field by K−1",
}


# The page that draws a figure whose course row names only the topic of a page to write.
TOPIC_PAGES = {
    "Normalizing flows": "flows",
    "Graph neural networks": "graphs",
    "Language models & embeddings": "language_models",
    "Autoregressive generative models (PixelCNN, WaveNet, VQ-VAE, Sparse Transformer)":
        "autoregressive",
    "Deep clustering": "representations",
    "Self-supervised & contrastive learning": "representations",
    "Transfer & semi-supervised learning": "representations",
    "Few-shot & meta-learning": "representations",
    "Model compression (pruning, lottery tickets, distillation)": "practice",
    "Hyperparameter search": "practice",
    "Bayesian deep learning & uncertainty": "practice",
}


class SourceError(ValueError):
    """The course table lacks a column, or one of its rows names no valid figure."""


def _slug(app_page: str) -> str:
    """'convolution (Convolution & receptive fields)' -> 'convolution'."""
    return app_page.split(" (", 1)[0].strip()


def _order(figure_id: str) -> tuple:
    """Notes, then the figure's numbers (2.5 before 2.16, L849 before L1085), then the id."""
    notes, figure = figure_id.split(":", 1)
    return notes, [int(n) for n in re.findall(r"\d+", figure)], figure_id


def figure_list(rows: Iterable[Mapping[str, str]]) -> list[dict[str, str]]:
    """The list's rows from the course table's rows (SourceError on a bad table)."""
    out, seen = [], set()
    for n, row in enumerate(rows, start=2):        # line 1 is the header
        missing = SOURCE_COLUMNS - set(row)
        if missing:
            raise SourceError(f"the table has no column {', '.join(sorted(missing))}")
        fid = row["id"].strip()
        m = ID_PATTERN.match(fid)
        if not m:
            raise SourceError(f"line {n}: {fid!r} is not a figure id like 004:Fig2.16 or "
                              "001:L3817")
        if fid in seen:
            raise SourceError(f"line {n}: {fid} appears twice")
        seen.add(fid)
        computational = row["status"].strip() != NOT_COMPUTATIONAL
        page = ""
        if computational:
            topic = row["new_page_topic"].strip()
            page = _slug(row["app_page"]) or TOPIC_PAGES.get(topic, topic)
        out.append({"id": fid, "notes": m.group(1), "section": row["section"].strip(),
                    "shows": REWORDED.get(fid, row["what_it_shows"].strip()),
                    "computational": "yes" if computational else "no", "page": page})
    out.sort(key=lambda r: _order(r["id"]))
    return out


def render(rows: list[dict[str, str]]) -> str:
    """The CSV text of the list (UTF-8, '\\n' line ends, quoted only where needed)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def make(source: Path) -> str:
    """The list's text made from the course table at `source`."""
    with open(source, newline="", encoding="utf-8") as f:
        return render(figure_list(csv.DictReader(f)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the course material's figures.csv")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default: {OUT}")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when --out differs from a fresh list")
    args = parser.parse_args(argv)
    try:
        text = make(args.source)
    except (OSError, SourceError) as exc:
        print(f"cannot make the figure list: {exc}", file=sys.stderr)
        return 2
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'up to date' if same else 'differs from a fresh list'}")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8", newline="")
    rows = text.count("\n") - 1
    print(f"wrote {args.out} ({rows} figures, {len(text.encode()):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
