"""The Embeddings tab's computations: the shipped sentiment phrases' MiniLM embeddings
(engine.language_models.embeddings), their 2-D maps, a typed phrase placed among them with its
nearest neighbours, and the separation measures the claims read (each shown on the tab)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine.attention import language_model as encoder
from engine.language_models import embeddings as emb
from engine.language_models.phrases import LABELS, labelled

MAPS = ("PCA", "t-SNE")
PHRASE_MAX = 300         # characters of a typed phrase that are embedded
NEIGHBOURS = 5


@st.cache_data(max_entries=1, show_spinner="Embedding the phrases with MiniLM…")
def shipped_embeddings() -> np.ndarray:
    """(n, 384) unit embeddings of the shipped phrases, in labelled() order."""
    return emb.embed(labelled()[0])


@st.cache_data(max_entries=32, show_spinner=False)
def _typed(text: str) -> np.ndarray:
    return emb.embed((text,))


@st.cache_data(max_entries=32, show_spinner="Computing the map…")
def _project(text: str) -> emb.Projection:
    extra = _typed(text) if text else None
    return emb.project(shipped_embeddings(), extra)


@dataclass(frozen=True)
class Separation:
    probe: float             # 4-fold CV accuracy of a logistic probe on the 384-d embeddings
    shuffled: float          # the same with the labels shuffled (seeded): chance level
    pca_probe: float         # the probe on the two PCA coordinates
    silhouette: float        # cosine silhouette of the labels in 384-d
    pca_share: float         # variance share the two PCA axes keep


@st.cache_data(max_entries=1, show_spinner=False)
def separation() -> Separation:
    e, labels = shipped_embeddings(), labelled()[1]
    p = _project("")
    shuffled = tuple(np.random.default_rng(0).permutation(labels))
    return Separation(emb.probe_accuracy(e, labels), emb.probe_accuracy(e, shuffled),
                      emb.probe_accuracy(p.pca, labels), emb.silhouette(e, labels),
                      sum(p.explained))


@dataclass(frozen=True)
class EmbedView:
    texts: tuple[str, ...]
    labels: tuple[str, ...]
    xy: np.ndarray                   # (n, 2) the shipped phrases on the chosen map
    typed: str                       # the phrase placed ('' when none)
    typed_xy: np.ndarray | None      # (2,) where it lands
    neighbours: tuple[tuple[str, str, float], ...]   # (phrase, label, cosine), closest first
    explained: tuple[float, float]
    problem: str | None              # why the typed phrase could not be placed
    notes: tuple[str, ...]


def embed_view_of(s: Mapping[str, Any]) -> EmbedView:
    """The chosen map with the typed phrase placed; bad input answered in `problem`/`notes`
    (a missing model raises encoder.WeightsMissing)."""
    texts, labels = labelled()
    typed = " ".join(str(s.get("lm_phrase") or "").split())
    notes: list[str] = []
    problem = None
    if len(typed) > PHRASE_MAX:
        notes.append(f"The phrase has {len(typed):,} characters: its first {PHRASE_MAX} are "
                     "embedded.")
        typed = typed[:PHRASE_MAX]
    if typed:
        try:
            _typed(typed)
        except encoder.TextProblem as exc:
            problem, typed = f"The phrase cannot be placed: {exc}.", ""
    p = _project(typed)
    xy = p.pca if s["lm_map"] == "PCA" else p.tsne[:len(texts)]
    typed_xy, near = None, ()
    if typed:
        typed_xy = p.extra_pca[0] if s["lm_map"] == "PCA" else p.tsne[len(texts)]
        idx, sims = emb.neighbours(_typed(typed)[0], shipped_embeddings(), NEIGHBOURS)
        near = tuple((texts[i], labels[i], float(c)) for i, c in zip(idx, sims))
    return EmbedView(texts, labels, xy, typed, typed_xy, near, p.explained, problem,
                     tuple(notes))


def separation_measure(name: str):
    def measure(s: Mapping[str, Any]) -> float:
        sep = separation()
        if name == "probe_drop":
            return sep.probe - sep.pca_probe
        return float(getattr(sep, name))
    return measure


def neighbours_labelled(label: str):
    """A claim's measure: how many of the typed phrase's nearest phrases carry `label`."""
    def measure(s: Mapping[str, Any]) -> float:
        return float(sum(lab == label for _, lab, _ in embed_view_of(s).neighbours))
    return measure


__all__ = ["LABELS", "MAPS", "embed_view_of", "separation", "separation_measure",
           "neighbours_labelled", "shipped_embeddings"]
