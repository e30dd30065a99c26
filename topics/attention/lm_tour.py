"""The Real model tab's presets and tour step with the claims that check what each says
(the page merges them into its PRESETS and STEPS; the measurements are in
topics/attention/lm_compute.py and are shown on the tab: the head's metrics, the head-type
counts, the masking figure and its caption)."""
from __future__ import annotations

import numpy as np

from topics.attention import lm_compute
from ui.claims import YES_NO, Claim
from ui.widgets import Preset, Step

VIEW = "real"


def _head(layer: int, head: int, mode: str = lm_compute.VIEWS[0]) -> dict:
    return {"at_lm_text": lm_compute.DEFAULT_TEXT, "at_lm_view": mode, "at_lm_layer": layer,
            "at_lm_head": head}


def _is_best(kind: str):
    """1 when the enlarged head is the strongest `kind` head of the 72, else 0."""
    return lambda s: float(lm_compute.best_head(kind)[:2] == (int(s["at_lm_layer"]),
                                                      int(s["at_lm_head"])))


PREVIOUS, NEXT, SINK = _head(1, 3), _head(2, 9), _head(5, 6, lm_compute.VIEWS[1])
MASKING = _head(6, 12, lm_compute.VIEWS[1])

C_PREVIOUS = (
    Claim("layer 1 · head 3 is a previous-token head",
          lambda s: float(lm_compute.head_type_of(s) == "previous"), lo=1, fmt=YES_NO),
    Claim("previous-token score, typed sentence",
          lambda s: lm_compute.selected_score(s, "previous", typed=True), lo=0.95),
    Claim("previous-token score, mean of the 8 built-in sentences",
          lambda s: lm_compute.selected_score(s, "previous"), lo=0.95),
    Claim("previous-token score, lowest built-in sentence",
          lambda s: lm_compute.worst_sentence_score(s, "previous"), lo=0.95),
    Claim("it is the strongest previous-token head of the 72", _is_best("previous"), lo=1,
          fmt=YES_NO),
    Claim("toy lookup transformer's layer-1 previous-token weight",
          lambda s: lm_compute.toy_previous_token(), lo=0.9))
C_NEXT = (
    Claim("layer 2 · head 9 is a next-token head",
          lambda s: float(lm_compute.head_type_of(s) == "next"), lo=1, fmt=YES_NO),
    Claim("next-token score, mean of the 8 built-in sentences",
          lambda s: lm_compute.selected_score(s, "next"), lo=0.6, hi=0.75),
    Claim("next-token score, lowest built-in sentence",
          lambda s: lm_compute.worst_sentence_score(s, "next"), lo=0.55),
    Claim("it is the strongest next-token head of the 72", _is_best("next"), lo=1, fmt=YES_NO))
C_SINK = (
    Claim("heads of type sink (of 72)", lambda s: lm_compute.type_counts()["sink"], lo=30, hi=42),
    Claim("layer 5 · head 6: weight on [CLS]/[SEP], mean of the 8 sentences",
          lambda s: lm_compute.selected_score(s, "sink"), lo=0.85),
    Claim("it is the strongest sink head of the 72", _is_best("sink"), lo=1, fmt=YES_NO))
C_MASKING = (
    Claim("layer of the head whose masking changes the embedding most",
          lambda s: lm_compute.top_masked(s, 1)[0][0], lo=6, hi=6),
    Claim("layer 6 · head 12: 1 − cos when masked", lm_compute.masked_selected, lo=0.05),
    Claim("median 1 − cos over the 72 heads", lambda s: float(np.median(lm_compute.masking_of(s))),
          hi=0.01),
    Claim("the previous-token head (layer 1 · head 3): 1 − cos when masked",
          lambda s: lm_compute.masking_of(s)[0, 2], hi=0.01))

PRESETS = {
    "Real model: a previous-token head": Preset(
        PREVIOUS, "In all-MiniLM-L6-v2, layer 1 · head 3 sends each word's weight to the token "
                  "just before it: 1.00 on this sentence and on the 8 built-in ones (the "
                  "lowest 0.999). The toy lookup transformer learned such a head too.",
        VIEW, C_PREVIOUS),
    "Real model: a next-token head": Preset(
        NEXT, "Layer 2 · head 9 looks one token ahead: 0.66 of each word's weight on the next "
              "token over the 8 built-in sentences (0.59 on the lowest); no other head does "
              "more.", VIEW, C_NEXT),
    "Real model: attention sinks": Preset(
        SINK, "Half the heads (36 of 72) put most of each word's weight on [CLS] and [SEP]: "
              "a 'no-op' place to look when the head has nothing to do. Layer 5 · head 6: "
              "0.89.", VIEW, C_SINK),
    "Real model: which heads matter": Preset(
        MASKING, "Masking one head at a time barely moves the sentence embedding (median "
                 "1 − cos 0.002); the largest changes come from layer 6, head 12 first "
                 "(0.077). The previous-token head alone: 0.007.", VIEW, C_MASKING),
}

STEPS = [
    Step("... and in a real language model", "A pretrained encoder (all-MiniLM-L6-v2, 6 layers "
         "× 12 heads) has heads of the same kinds on any sentence you type: layer 1 · head 3 "
         "attends to the previous token (1.00), as the toy lookup model's layer-1 head does; "
         "about half of its heads rest on [CLS]/[SEP] (the sink count of the head types).",
         PREVIOUS, VIEW, C_PREVIOUS + C_SINK[:1]),
]
