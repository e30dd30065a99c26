"""The LSTM gating page's presets and tour steps with the claims that check what each one says
(topics/lstm_gating/page.py imports PRESETS and STEPS; the measurements are in
topics/lstm_gating/compute.py)."""
from __future__ import annotations

from engine import recurrent as rec
from ui.claims import PERCENT, Claim, OnRun
from topics.lstm_gating.compute import (
    DELAYS, KINDS, CHECK_DELAYS, RACE_AT, RACE_SEEDS, FLOW_LAG, min_accuracy,
    rnn_max_accuracy, accuracy_at, unit_forget_over_delay, unit_cell_at_query,
    unit_input_gate_jump, unit_output_gate_jump, weakest_storing_unit, max_abs_cell,
    clamped_acc, rnn_fall, orders_lstm_over_rnn, orders_fb2_over_fb0, unclipped_growth,
    clipped_max, f_at_rest, half_life, race_accuracy, chance, flows_of, flow_at)
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- presets
FREE = {"lg_clamp_i": "free", "lg_clamp_f": "free", "lg_clamp_o": "free", "lg_unit": "auto",
        "lg_unit_first": False}
SAMPLE = {**FREE, "lg_input": "task sample", "lg_delay": 40, "lg_t": 0}
UNIT = {**SAMPLE, "lg_unit_first": True}     # the storing unit's lines as the main figure
FROZEN = {**SAMPLE, "lg_clamp_i": "0", "lg_clamp_f": "1"}
ERASED = {**SAMPLE, "lg_clamp_f": "0"}
FLOW = {"lg_rho": 1.0, "lg_T": 150, "lg_clip": "off", "lg_kinds": list(KINDS)}
VANISH = {**FREE, **FLOW, "lg_fb": 2}
FB0 = {**FREE, **FLOW, "lg_fb": 0}
EXPLODE = {**FREE, "lg_rho": 2.5, "lg_fb": 1, "lg_T": 100, "lg_clip": "1",
           "lg_kinds": ["rnn"]}
CELL = {f"lg_s_{g}_{n}": float(v) for g in "ifgo" for n, v in zip("wub", rec.SCALAR_DEFAULTS[g])}
SHORT = {**FREE, **CELL, "lg_s_f_b": 0.0, "lg_s_f_u": 0.0, "lg_s_i_b": -2.0, "lg_s_amp": 1.0}
LONG = {**FREE, **CELL, "lg_s_f_b": 4.0, "lg_s_f_u": 0.0, "lg_s_i_b": -2.0, "lg_s_amp": 1.0}
RACE_SETTINGS = {"lg_tr_delay": 40, "lg_tr_hidden": 16, "lg_tr_lr": 0.01}   # reads.race_accuracy
TRAIN = {**FREE, **RACE_SETTINGS, "lg_tr_curr": False}

C_CHANCE = Claim("chance: a guess among 4 symbols", chance, lo=0.25, hi=0.25, fmt="{:.0%}")
C_ALL_DELAYS = (Claim(f"shipped LSTM: lowest accuracy over delays {CHECK_DELAYS}",
                      min_accuracy, lo=0.95, fmt=PERCENT),
                Claim("shipped RNN: highest accuracy over the same delays", rnn_max_accuracy,
                      hi=0.4, fmt=PERCENT),
                C_CHANCE)
C_REMEMBER = (Claim("accuracy at delay 40 (512 sequences)", accuracy_at, lo=0.95,
                    fmt=PERCENT),
              Claim("storing unit: forget gate over the delay (this sequence)",
                    unit_forget_over_delay, lo=0.9),
              Claim("storing unit: |c| at '?' (tanh(c) saturated)", unit_cell_at_query, lo=3),
              Claim("storing unit: i at the symbol − i over the delay",
                    unit_input_gate_jump, lo=-0.2, hi=0.2),
              Claim("storing unit: o at '?' − o over the delay", unit_output_gate_jump,
                    lo=-0.2, hi=0.2),
              Claim("weakest d′ of the four symbols' storing units", weakest_storing_unit,
                    lo=3))
C_FROZEN = (Claim("largest |c| over units and steps", max_abs_cell, hi=0.0),
            Claim("accuracy with f = 1, i = 0 (64 sequences)", clamped_acc, hi=0.4,
                  fmt=PERCENT),
            C_CHANCE)
C_ERASED = (Claim("accuracy unclamped at delay 40 (512 sequences)", accuracy_at, lo=0.95,
                  fmt=PERCENT),
            Claim("accuracy with f = 0 (64 sequences)", clamped_acc, lo=0.3, hi=0.6,
                  fmt=PERCENT),
            C_CHANCE)
C_VANISH = (Claim("orders of magnitude the RNN's gradient falls over 149 steps", rnn_fall,
                  lo=9.5, hi=11.5),
            Claim(f"log₁₀ of LSTM / RNN gradient at lag {FLOW_LAG}", orders_lstm_over_rnn,
                  lo=5, hi=6.5),
            Claim("RNN gradient at the longest lag (149)",
                  lambda s: flows_of(s)["rnn"].norms[-1], lo=1e-11, hi=1e-10),
            Claim(f"LSTM gradient at lag {FLOW_LAG}, forget bias 2",
                  lambda s: flow_at(s, "lstm"), lo=0.02, hi=0.06),
            Claim(f"RNN gradient at lag {FLOW_LAG}", lambda s: flow_at(s, "rnn"),
                  lo=5e-8, hi=1e-7))
C_FB0 = (Claim(f"log₁₀ of LSTM / RNN gradient at lag {FLOW_LAG}, forget bias 0",
               orders_lstm_over_rnn, lo=-10.5, hi=-8),
         Claim(f"log₁₀ of LSTM gradient at lag {FLOW_LAG}: forget bias 2 / 0",
               orders_fb2_over_fb0, lo=14, hi=16),
         Claim(f"LSTM gradient at lag {FLOW_LAG}, forget bias 0", lambda s: flow_at(s, "lstm"),
               lo=1e-17, hi=1e-16),
         Claim(f"RNN gradient at lag {FLOW_LAG}", lambda s: flow_at(s, "rnn"),
               lo=5e-8, hi=1e-7))
C_EXPLODE = (Claim("unclipped RNN gradient: lag 99 / lag 1", unclipped_growth, lo=1e3),
             Claim("largest clipped RNN gradient", clipped_max, hi=1.0 + 1e-9))
C_SHORT = (Claim("f at rest = σ(0)", f_at_rest, lo=0.499, hi=0.501),
           Claim("memory half-life (steps)", half_life, lo=0.99, hi=1.01))
C_LONG = (Claim("f at rest = σ(4)", f_at_rest, lo=0.981, hi=0.983),
          Claim("memory half-life (steps)", half_life, lo=37, hi=39))


def race_run(kind: str, seed: int | None = None, curriculum: bool = False) -> OnRun:
    """The claim read on the Train tab's live race: the held-out accuracy at delay 40 (256
    sequences) it logs at iteration RACE_AT ("<kind>/heldout", engine RaceTrainer), on the
    claim's seed and settings only."""
    return OnRun(RACE_AT, (f"{kind}/heldout",), seed=seed,
                 when={**RACE_SETTINGS, "lg_tr_curr": curriculum},
                 when_text="the curriculum on" if curriculum else
                 "delay 40, 16 units, η = 0.01, no curriculum")


C_TRAIN = (
    Claim(f"LSTM, seed 0: accuracy at delay 40 after {RACE_AT} iterations",
          lambda s: race_accuracy("lstm", 0), lo=0.9, slow=True, fmt=PERCENT,
          run=race_run("lstm", 0)),
    Claim(f"LSTM, seed 1: accuracy at delay 40 after {RACE_AT} iterations",
          lambda s: race_accuracy("lstm", 1), hi=0.4, slow=True, fmt=PERCENT,
          run=race_run("lstm", 1)),
    Claim(f"best RNN accuracy at delay 40 after {RACE_AT} iterations, seeds 0 and 1",
          lambda s: max(race_accuracy("rnn", k) for k in RACE_SEEDS), hi=0.4, slow=True,
          fmt=PERCENT, run=race_run("rnn")),
    Claim(f"worst LSTM accuracy at delay 40 after {RACE_AT} iterations with the "
          "curriculum, seeds 0 and 1",
          lambda s: min(race_accuracy("lstm", k, True) for k in RACE_SEEDS), lo=0.95,
          slow=True, fmt=PERCENT, run=race_run("lstm", curriculum=True)))

PRESETS = {
    "Trained LSTM remembers a symbol": Preset(
        UNIT, "Gates tab, unit 'auto' (the unit whose cell state at '?' best tells this "
                "symbol from the others): its forget gate stays above 0.9 over the 40 "
                "distractors and its cell state c keeps growing in one direction, so "
                "h = o·tanh(c) is saturated at '?'. The input and output gates are not "
                "on/off switches in this net: they move by less than 0.2 at the symbol and "
                "at '?'. It answers right on over 95% of sequences.", "gates", C_REMEMBER,
        shows=("lg_fig_unit",)),
    "Freeze the memory (f = 1, i = 0)": Preset(
        FROZEN, "Gates tab: nothing is written and nothing forgotten, so every c row stays at "
                "its start value 0 and the answer is a guess (accuracy ≤ 40% on 64 "
                "sequences; chance is 25%).", "gates", C_FROZEN),
    "Erase every step (f = 0)": Preset(
        ERASED, "Gates tab: c_t = i ⊙ g only: the symbol is overwritten by the next input. "
                "Accuracy drops from 100% to about 47% (chance 25%): only the little that h "
                "carries from step to step survives.", "gates", C_ERASED),
    "Vanishing: RNN vs GRU vs LSTM": Preset(
        VANISH, "Gradient-flow tab: over 149 steps the tanh RNN's gradient falls by about ten "
                f"orders of magnitude (3e-11 at the longest lag); at lag {FLOW_LAG} the LSTM's, "
                "with forget bias 2, is still about 4e-2: some 5.7 orders above the RNN's "
                "7.5e-8.", "flow", C_VANISH),
    "Exploding RNN, clipped": Preset(
        EXPLODE, "Gradient-flow tab: with ρ = 2.5 the unclipped RNN's gradient grows over "
                 "1000× from lag 1 to lag 99; clipping each step's gradient at 1 keeps it at "
                 "or below 1 (set clipping to off to see the explosion).", "flow", C_EXPLODE),
    "One cell: short memory (forget bias 0)": Preset(
        SHORT, "Single-cell tab: f = σ(0) = ½, so c halves every step after the pulse "
               "(half-life 1 step).", "cell", C_SHORT),
    "One cell: long memory (forget bias 4)": Preset(
        LONG, "Single-cell tab: f = σ(4) ≈ 0.982: half of the pulse is still there after "
              "~38 steps.", "cell", C_LONG),
}

STEPS = [
    Step("The task",
         "The network sees a symbol (A–D), then D random distractor symbols, then '?', and "
         "must answer the first symbol. The shipped LSTM (16 units) was trained on every "
         f"delay from {DELAYS[0]} to {DELAYS[1]} and is right on at least 95% of sequences "
         "at each; the same-size RNN, trained the same way, stays near chance (25%).",
         SAMPLE, "gates", C_ALL_DELAYS),
    Step("Read the gates",
         "Unit 'auto' is the unit whose cell state at '?' best tells this symbol from the "
         "others. Its forget gate stays above 0.9 through the delay and c drifts further "
         "in the symbol's direction, while i and o change little: this net keeps the "
         "symbol in the sign of c (h = o·tanh(c) saturates), not by switching gates on and "
         "off. Change the delay: the answer stays right.", UNIT, "gates", C_REMEMBER,
         shows=("lg_fig_unit",)),
    Step("Break a gate",
         "Clamp f = 0: the memory is erased each step and accuracy drops from 100% to "
         "about 47% (chance 25%). (The preset *Freeze the memory* clamps f = 1, i = 0: "
         "nothing is ever written and the answer is a guess.)",
         ERASED, "gates", C_ERASED),
    Step("Why gradients vanish",
         "Through k steps a tanh RNN multiplies the gradient by diag(1−h²)W k times; the "
         "LSTM's cell path multiplies by f only. Over 149 steps the RNN's gradient falls by "
         "about 10 orders of magnitude; at lag 100 the LSTM (forget bias 2) keeps some 10^5.7 "
         "times more than the RNN.", VANISH, "flow", C_VANISH),
    Step("The forget bias sets the memory",
         "With forget bias 0 the LSTM loses its advantage: f ≈ σ(0) = ½ multiplies the cell "
         "path by about ½ per step, and at lag 100 its gradient (3e-17) is some 9 orders "
         "below the RNN's (7.5e-8), and 15 orders below its own with forget bias 2. Try "
         "biases 1, 2, 3.", FB0, "flow", C_FB0),
    Step("Train them yourself",
         "Train tab: press Play. From scratch at delay 40 the RNN stays near chance (25%); "
         f"the LSTM finds the signal on seed 0 (over 90% by iteration {RACE_AT}) but not "
         "on seed 1 (still near chance): whether the gradient through 40 steps is strong "
         "enough to start from depends on the initialisation. Turn the curriculum on "
         f"(delays grow from 2): the LSTM then reaches delay 40 by iteration {RACE_AT} on "
         "both seeds. The seed is in the sidebar.", TRAIN, "train", C_TRAIN),
]
