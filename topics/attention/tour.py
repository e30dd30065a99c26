"""The attention page's presets and tour steps with the claims that check what each one says
(topics/attention/page.py imports PRESETS and STEPS; the measurements are in
topics/attention/compute.py)."""
from __future__ import annotations

from typing import Any

from topics.attention.compute import (
    SOURCES, EXAMPLES, AUTO, mechanics_of, permutation_error_of, above_diagonal,
    row_sum_error, curve_entropy, pe_errors, shown_mass, shown_layer, example_accuracy,
    copy_layer1_mass, lookup_heads, entries_per_n_sqrt_n, two_hop_coverage,
    sparse_constant_at)
from ui.claims import Claim
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
MECH = {"at_n": 5, "at_dk": 4, "at_scale": True, "at_temp": 1.0, "at_causal": False,
        "at_perm": False}
SCALED = MECH
UNSCALED = {**MECH, "at_dk": 64, "at_scale": False}
COLD = {**MECH, "at_temp": 0.2}
CAUSAL = {**MECH, "at_causal": True}
PERMUTE = {**MECH, "at_perm": True}
POSITIONS = {"at_pe_mode": "add sinusoidal PE"}


def trained(task: str) -> dict[str, Any]:
    return {"at_task": task, "at_seq": EXAMPLES[task], "at_source": SOURCES[0], "at_head": AUTO}


SPARSE = {"at_mask": "local + strided", "at_mask_n": 36, "at_window": 6}

C_SCALED = (Claim("max |row sum − 1|", row_sum_error, hi=1e-6),
            Claim("mean row entropy (nats; uniform log 5 = 1.61)",
                  lambda s: mechanics_of(s).mean_entropy, lo=0.9, hi=1.2))
C_UNSCALED = (Claim("mean row entropy, unscaled d_k = 64 (nats)",
                    lambda s: mechanics_of(s).mean_entropy, lo=0.3, hi=0.6),
              Claim("largest weight", lambda s: float(mechanics_of(s).weights.max()), lo=0.999),
              Claim("entropy curve, 16 keys, d_k = 256 unscaled (nats)",
                    lambda s: curve_entropy(256, False), hi=0.3),
              Claim("entropy curve, 16 keys, d_k = 256 scaled (nats)",
                    lambda s: curve_entropy(256, True), lo=2.2))
C_COLD = (Claim("mean row entropy at τ = 0.2 (nats)", lambda s: mechanics_of(s).mean_entropy,
                hi=0.4),
          Claim("entropy at τ = 0.2 / at τ = 1", lambda s: mechanics_of(s).mean_entropy /
                mechanics_of({**s, "at_temp": 1.0}).mean_entropy, hi=0.5))
C_CAUSAL = (Claim("largest weight on a later key", above_diagonal, lo=0, hi=0),)
C_PERMUTE = (Claim("max |out(Px) − P·out(x)|", permutation_error_of, hi=1e-5),)


def offset_only_error(s: Any) -> float:
    """max over p, q of |PE[p]·PE[q] − PE[0]·PE[|p − q|]| for the tab's positions and
    d_model: 0 up to float round-off when the similarity depends on the offset only."""
    import torch
    from engine import attention
    sim = attention.position_similarity(
        attention.sinusoidal_encoding(int(s["at_pe_n"]), int(s["at_pe_d"])))
    idx = torch.arange(sim.shape[0])
    return float((sim - sim[0][(idx[:, None] - idx[None, :]).abs()]).abs().max())


C_POSITIONS = (Claim("max |out(Px) − P·out(x)| without positions",
                     lambda s: pe_errors(s)["none"], hi=1e-5),
               Claim("max |out(Px) − P·out(x)| with sinusoidal PE",
                     lambda s: pe_errors(s)["add sinusoidal PE"], lo=0.5),
               Claim("max |PE[p]·PE[q] − PE[0]·PE[|p − q|]| (the offset alone decides)",
                     offset_only_error, hi=1e-4))
C_REVERSE = (Claim("example answered right (share of tokens)", example_accuracy, lo=1.0),
             Claim("layer of the enlarged head", shown_layer, lo=1, hi=1),
             Claim("enlarged head's weight on the mirror position", shown_mass, lo=0.95))
C_COPY = (Claim("example answered right (share of tokens)", example_accuracy, lo=1.0),
          Claim("layer of the enlarged head", shown_layer, lo=1, hi=1),
          Claim("weaker layer-1 head's weight on input position j", copy_layer1_mass, lo=0.95))
C_SORT = (Claim("example answered right (share of tokens)", example_accuracy, lo=1.0),
          Claim("layer of the enlarged head", shown_layer, lo=2, hi=2),
          Claim("enlarged head's weight on the digit to write next", shown_mass, lo=0.6))
C_LOOKUP = (Claim("example answered right (share of tokens)", example_accuracy, lo=1.0),
            Claim("layer of the enlarged head", shown_layer, lo=2, hi=2),
            Claim("layer 1: value rows' weight on the key before them",
                  lambda s: lookup_heads(s)[0], lo=0.9),
            Claim("layer 2: echoed key's weight on the matching value",
                  lambda s: lookup_heads(s)[1], lo=0.9))
C_SPARSE = (Claim("allowed pairs / (n√n) at n = 36, window = stride = 6",
                  entries_per_n_sqrt_n, lo=1.3, hi=1.4),
            Claim("allowed pairs at n = 36 (of 1,296)",
                  lambda s: round(entries_per_n_sqrt_n(s) * 36 ** 1.5), lo=291, hi=291),
            Claim("allowed pairs / (n√n) at n = 512 (window = stride = 23)",
                  lambda s: sparse_constant_at(512), lo=1.45, hi=1.5),
            Claim("share of earlier positions reachable in ≤ 2 hops", two_hop_coverage, lo=1.0))

PRESETS = {
    "Scaled attention, d_k = 4": Preset(
        SCALED, "Weights are spread over several tokens (mean row entropy 1.03 nats; uniform "
                "would be log 5 = 1.61); each row sums to 1.", "mechanics", C_SCALED),
    "No scaling at d_k = 64: the softmax sharpens": Preset(
        UNSCALED, "Scores grow like √d_k, so rows get much sharper (mean entropy 0.45 nats, "
                  "one weight ≥ 0.999). With 16 keys the trend goes on (the card's last two "
                  "lines): unscaled, the entropy falls to 0.2 nats at d_k = 256; scaled, it "
                  "stays near 2.4.", "mechanics", C_UNSCALED),
    "Cold temperature τ = 0.2": Preset(
        COLD, "Dividing by a small τ sharpens every row towards its largest score (mean "
              "entropy 0.34 nats, a third of τ = 1's).", "mechanics", C_COLD),
    "Causal mask": Preset(
        CAUSAL, "Keys after the query get −∞, hence weight exactly 0.", "mechanics", C_CAUSAL),
    "Permute the tokens: outputs permute too": Preset(
        PERMUTE, "Without positions, attention(P x) = P attention(x): the output rows move "
                 "with the tokens (the difference is float round-off, under 1e-5).",
        "mechanics", C_PERMUTE),
    "Positions break the symmetry": Preset(
        POSITIONS, "With sinusoidal PE added, permuting the tokens gives them new position "
                   "vectors, so the output is no longer the permuted original: "
                   "max |out(Px) − P·out(x)| is 0.94, against float round-off (under 1e-5) "
                   "without positions.",
        "positions", C_POSITIONS),
    "Reverse: the anti-diagonal head": Preset(
        trained("reverse"), "Below the dotted line each answer query looks at the "
                            "mirror-image input position: an anti-diagonal (layer 1 · head 1 "
                            "puts 0.99 of its weight there).", "trained", C_REVERSE),
    "Copy: a shifted diagonal": Preset(
        trained("copy"), "Answer query j looks at input position j: a diagonal line 8 places "
                         "left of the main one (both layer-1 heads: ≥ 0.98).", "trained",
        C_COPY),
    "Sort: attend to the next digit to write": Preset(
        trained("sort"), "The enlarged head (layer 2) puts 0.64 of the answer rows' weight on "
                         "the input positions holding the digit each row must write next (the "
                         "next-larger or equal digit).", "trained", C_SORT),
    "Lookup: previous-token and induction heads": Preset(
        trained("lookup"), "Layer 1: each value attends to its key just before it (0.94). "
                           "Layer 2 (enlarged): the echoed query key attends to the value "
                           "whose key matches it (0.93), and copies that value.", "trained",
        C_LOOKUP),
    "Sparse patterns: about 1.5 n√n": Preset(
        SPARSE, "Causal window and stride √n = 6 at n = 36: 291 of 1,296 pairs, 1.35 n√n "
                "(the window gives about n√n, the stride about n√n/2: 1.46 n√n at n = 512), "
                "and every earlier position is reachable in two hops.", "masks", C_SPARSE),
}

STEPS = [
    Step("One head, five tokens", "Each token's query is compared with every key (q·k); the "
         "scores are divided by √d_k, a softmax over the **keys** turns each row into weights "
         "that sum to 1, and the output is the weighted mix of values.", SCALED, "mechanics",
         C_SCALED),
    Step("Why divide by √d_k", "For random unit-variance q and k, q·k has variance d_k. Without "
         "scaling, large d_k makes the softmax close to one-hot (the entropy curve: 0.2 nats "
         "at d_k = 256 against 2.4 scaled) and its gradients vanish.", UNSCALED, "mechanics",
         C_UNSCALED),
    Step("Attention does not know order", "Shuffle the tokens: the outputs are shuffled the "
         "same way (permutation equivariance). A set, not a sequence.", PERMUTE, "mechanics",
         C_PERMUTE),
    Step("Positions", "Adding sinusoidal position vectors makes the result depend on order "
         "(the permuted output differs by 0.94); their dot product depends only on the "
         "distance between positions (the card's last line: any two positions at the same "
         "distance agree to float round-off).", POSITIONS, "positions", C_POSITIONS),
    Step("A trained transformer copies", "A 2-layer, 2-head model trained to copy 8 digits "
         "has layer-1 heads whose answer rows form a diagonal: output j reads input j.",
         trained("copy"), "trained", C_COPY),
    Step("... reverses", "A 2-layer, 2-head model trained to reverse 8 digits "
         "has a head whose answer rows form an anti-diagonal: output j copies input 7 − j.",
         trained("reverse"), "trained", C_REVERSE),
    Step("... and sorts", "For sorting, a layer-2 head lets the query that writes the next "
         "digit attend to where that digit sits in the input.", trained("sort"), "trained",
         C_SORT),
    Step("... and looks up", "Key-value lookup needs two hops: in layer 1 each value reads "
         "the key before it; in layer 2 the query key finds the value tagged with the same key.",
         trained("lookup"), "trained", C_LOOKUP),
    Step("Cost and sparse masks", "Full attention costs n² pairs, causal n(n+1)/2; the causal "
         "local + strided pattern (Sparse Transformer) costs about 1.5 n√n.", SPARSE, "masks",
         C_SPARSE),
]
