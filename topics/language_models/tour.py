"""Presets and the guided tour of the language models page. Every fact a text states is a
Claim: measured by the function the page draws from, with the bound the text states
(ui/claims.py); a text states bounds, the card prints the measured value beside them."""
from __future__ import annotations

from topics.language_models.compute import (TRAIN_STEPS, entropy_drop, inside_measure, greedy_loop, held_measure,
                                            same_text_for_seeds, shaped_measure,
                                            trained_measure)
from topics.language_models.embed_compute import neighbours_labelled, separation_measure
from topics.language_models.race_compute import (RACE_STEPS, params_gap, race_measure)
from ui.claims import PERCENT, YES_NO, Claim, OnRun
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- settings
PROMPT = "The return statement leaves the current function call with "
BASE = {"lm_prompt": PROMPT, "lm_t": 1.0, "lm_k": 0, "lm_p": 1.0, "lm_n": 120, "lm_seed": 0}
GREEDY = {**BASE, "lm_prompt": "An object ", "lm_t": 0.0, "lm_n": 50}
COLD = {**BASE, "lm_t": 0.5}
HOT = {**BASE, "lm_t": 2.0}
NUCLEUS = {**BASE, "lm_p": 0.9}
TOP1 = {**BASE, "lm_prompt": "An object ", "lm_k": 1, "lm_n": 50}
EMPTY = {**BASE, "lm_prompt": ""}
TRAIN = {"lm_corpus": "Python reference (pydoc topics)", "lm_lr": 3e-3}
SOURCE = {"lm_corpus": "Python source: textwrap.py", "lm_lr": 3e-3}

# ----------------------------------------------------------------------------- claims
HELD_MARGIN = Claim("shipped model's held-out cross-entropy below the bigram's (nats/char)",
                    held_measure("margin"), lo=0.5)
HELD_CE = Claim("shipped model's held-out cross-entropy (nats/char)", held_measure("model_ce"),
                hi=1.6)
FULL_MASS = Claim("mass kept", shaped_measure("kept_mass"), lo=1.0, fmt=PERCENT)
SAME_TEXT = Claim("seeds 0 and 1 write the same text", same_text_for_seeds, lo=1.0,
                  fmt=YES_NO)
LOOP = Claim("the continuation ends in a repetition loop", greedy_loop, lo=1.0, fmt=YES_NO)
ZERO_H = Claim("entropy at T = 0 (bits)", shaped_measure("entropy_final"), hi=0.0)
COLD_DROP = Claim("entropy at T = 1 minus at T = 0.5 (bits)", entropy_drop(0.5), lo=1.0)
HOT_RISE = Claim("entropy at T = 2 minus at T = 1 (bits)", lambda s: -entropy_drop(2.0)(s),
                 lo=1.0)
NUCLEUS_MASS = Claim("mass kept by top-p 0.9", shaped_measure("kept_mass"), lo=0.9,
                     fmt=PERCENT)
NUCLEUS_KEPT = Claim("characters kept by top-p 0.9", shaped_measure("kept"), hi=20)
TOP1_PROB = Claim("probability of the one kept character", shaped_measure("top_prob"),
                  lo=1.0, fmt=PERCENT)
EMPTY_H = Claim("entropy of the first character (bits)", shaped_measure("entropy_final"),
                lo=2.0)
TRAINED = Claim(f"held-out cross-entropy minus the bigram's after {TRAIN_STEPS} steps "
                "(nats/char)", lambda s: -trained_measure("bigram_margin")(s), lo=0.0,
                slow=True)
TRAINED_UNI = Claim(f"held-out cross-entropy below the unigram's after {TRAIN_STEPS} steps "
                    "(nats/char)", trained_measure("unigram_margin"), lo=0.5, slow=True)

LENS_EXACT = Claim("largest |last layer's lens − the model's output|",
                   inside_measure("output_gap"), hi=1e-6)
LENS_EMBED = Claim("probability of the output's top character read at the embeddings",
                   inside_measure("top_at_embedding"), hi=0.01, fmt=PERCENT)
LENS_ECHO = Claim("the embeddings' top guess is the character just read",
                  inside_measure("embedding_reads_last"), lo=1.0, fmt=YES_NO)
INSIDE = {**BASE, "lm_prompt": "An object "}

RACE = {**TRAIN, "lm_cell": "LSTM"}
RACE_GRU = {**TRAIN, "lm_cell": "GRU"}
RACE_PARAMS = Claim("RNN's parameter count off the GPT's by", params_gap, hi=0.01,
                    fmt=PERCENT)
RACE_GAP = Claim(f"transformer − LSTM held-out cross-entropy at {RACE_STEPS} steps",
                 race_measure("gap"), lo=0.5, slow=True,
                 run=OnRun(RACE_STEPS, ("held_out", "rnn_held_out"),
                           combine=lambda gpt, rnn: gpt - rnn))
RACE_BIGRAM = Claim(f"bigram − LSTM held-out cross-entropy at {RACE_STEPS} steps",
                    race_measure("rnn_below_bigram"), lo=0.3, slow=True,
                    run=OnRun(RACE_STEPS, ("rnn_below_bigram",)))
RACE_TIME = Claim("transformer / LSTM time per step", race_measure("time_ratio"), lo=1.5,
                  slow=True, run=OnRun(RACE_STEPS, ("time_ratio",)))

EMBED = {"lm_map": "PCA", "lm_phrase": ""}
EMBED_TSNE = {"lm_map": "t-SNE", "lm_phrase": ""}
LOVELY = {"lm_map": "PCA", "lm_phrase": "what a lovely evening"}
FILM = {"lm_map": "t-SNE", "lm_phrase": "I loved the film"}
MUSEUM = {"lm_map": "PCA", "lm_phrase": "the museum closes at six"}
PROBE = Claim("logistic probe's 4-fold cross-validated accuracy on the 384-d embeddings",
              separation_measure("probe"), lo=0.85, fmt=PERCENT)
SHUFFLED = Claim("the same probe with the labels shuffled", separation_measure("shuffled"),
                 hi=0.5, fmt=PERCENT)
PCA_SHARE = Claim("variance kept by the two PCA axes", separation_measure("pca_share"),
                  hi=0.25, fmt=PERCENT)
PCA_DROP = Claim("probe accuracy lost on the two PCA coordinates",
                 separation_measure("probe_drop"), lo=0.25, fmt=PERCENT)
SILHOUETTE = Claim("silhouette of the sentiment labels (cosine, 384-d)",
                   separation_measure("silhouette"), lo=0.0, hi=0.2)
NEAR_POSITIVE = Claim("positive phrases among the 5 nearest", neighbours_labelled("positive"),
                      lo=4)
NEAR_NEUTRAL = Claim("neutral phrases among the 5 nearest", neighbours_labelled("neutral"),
                     lo=3)
NEAR_OTHER = Claim("negative phrases among the 5 nearest", neighbours_labelled("negative"),
                   lo=1)

PRESETS = {
    "Next character at T = 1": Preset(
        BASE, "The bars are the shipped model's probabilities for the next character, all of "
              "them kept. On held-out Python reference text the model scores under 1.6 nats "
              "per character, at least 0.5 below the bigram baseline.", "next",
        (FULL_MASS, HELD_CE, HELD_MARGIN)),
    "Greedy: T = 0": Preset(
        GREEDY, "At T = 0 the most probable character is taken every time: the entropy is 0, "
                "any seed writes the same text, and the text falls into a repetition loop.",
        "next", (ZERO_H, SAME_TEXT, LOOP)),
    "Cold: T = 0.5": Preset(
        COLD, "Halving the temperature squares the odds between characters: the entropy "
              "falls by at least 1 bit against T = 1.", "next", (COLD_DROP,)),
    "Hot: T = 2": Preset(
        HOT, "Doubling the temperature flattens the bars: the entropy rises by at least 1 bit "
             "and the continuation loses its words.", "next", (HOT_RISE,)),
    "Nucleus: top-p 0.9": Preset(
        NUCLEUS, "Top-p 0.9 keeps the fewest characters whose mass reaches 90% (at most 20 "
                 "here), cuts the long tail and renormalises.", "next",
        (NUCLEUS_MASS, NUCLEUS_KEPT)),
    "Top-k = 1 is greedy": Preset(
        TOP1, "Keeping one character gives it probability 1: the same text for every seed, "
              "as at T = 0.", "next", (TOP1_PROB, SAME_TEXT)),
    "Empty prompt: the first character": Preset(
        EMPTY, "With nothing typed the model reads its start symbol: its guess for a text's "
               "first character is spread out, above 2 bits of entropy.", "next", (EMPTY_H,)),
    "Train on the Python reference": Preset(
        TRAIN, f"Press Play: a fresh model starts at chance; within {TRAIN_STEPS} steps its "
               "held-out cross-entropy is at least 0.5 below the unigram baseline, but not "
               "yet below the bigram one. The shipped model, trained longer, ends at least "
               "0.5 below the bigram.", "train", (TRAINED_UNI, TRAINED, HELD_MARGIN)),
    "Train on Python source code": Preset(
        SOURCE, "The same model on a module's source: the samples take up indentation, "
                "def and self as it trains.", "train", ()),
    "Inside: the logit lens": Preset(
        INSIDE, "Read at the embeddings, the output's favourite has a probability under 1%: "
                "the tied embedding guesses the character just read. The blocks move the "
                "guess to the output's, and the last row is the output itself.", "inside",
        (LENS_EMBED, LENS_ECHO, LENS_EXACT)),
    "Char-RNN vs transformer": Preset(
        RACE, "Press Play: an LSTM and the GPT (sizes within 1%) learn on the same batches. "
              f"After {RACE_STEPS} steps the LSTM is at least 0.5 nats/char below the "
              "transformer and 0.3 below the bigram line; on a CPU the transformer's step "
              "takes at least 1.5 times as long.", "race",
        (RACE_PARAMS, RACE_GAP, RACE_BIGRAM, RACE_TIME)),
    "Char-RNN vs transformer: a GRU": Preset(
        RACE_GRU, "The same race with a GRU, its width chosen for the same parameter count "
                  "(within 1%).", "race", (RACE_PARAMS,)),
    "Embeddings: sentiment, PCA": Preset(
        EMBED, "48 phrases written positive, negative or neutral, embedded by MiniLM. A "
               "linear probe reads their sentiment with a cross-validated accuracy above "
               "85% (shuffled labels: under 50%), but the two PCA axes keep under 25% of the "
               "variance and the probe's accuracy on them drops by at least 25%.", "embed",
        (PROBE, SHUFFLED, PCA_SHARE, PCA_DROP)),
    "Embeddings: t-SNE": Preset(
        EMBED_TSNE, "t-SNE keeps close neighbours close. As clusters the sentiments overlap: "
                    "their silhouette in 384-d is between 0 and 0.2.", "embed",
        (SILHOUETTE,)),
    "Your phrase: a positive one": Preset(
        LOVELY, "A typed phrase lands among the others; at least 4 of its 5 nearest phrases "
                "are positive ones.", "embed", (NEAR_POSITIVE,)),
    "Your phrase: topic beats sentiment": Preset(
        FILM, "A positive phrase about a film: the negative film review is among its 5 "
              "nearest, since the encoder matches what a sentence is about.", "embed",
        (NEAR_OTHER,)),
    "Your phrase: a neutral one": Preset(
        MUSEUM, "A phrase that states a fact: at least 3 of its 5 nearest are neutral.",
        "embed", (NEAR_NEUTRAL,)),
}

STEPS = [
    Step("A distribution over the next character",
         "The model reads the prompt and gives every character a probability. Trained on "
         "Python's reference text, it scores under 1.6 nats per character on held-out text, "
         "at least 0.5 below counting character pairs (the bigram baseline).", BASE, "next",
         (HELD_CE, HELD_MARGIN)),
    Step("Temperature sharpens",
         "Dividing the scores by T = 0.5 before the softmax sharpens the bars: the entropy "
         "falls by at least 1 bit.", COLD, "next", (COLD_DROP,)),
    Step("T = 0 is greedy, and greedy loops",
         "At T = 0 the top character is taken every time: any seed writes the same text, and "
         "it ends repeating itself.", GREEDY, "next", (SAME_TEXT, LOOP)),
    Step("Top-p cuts the tail",
         "Top-p 0.9 keeps the fewest characters whose mass reaches 90%; the grey bars are cut "
         "and the kept ones renormalised.", NUCLEUS, "next", (NUCLEUS_MASS,)),
    Step("Train it yourself",
         f"Press Play: within {TRAIN_STEPS} steps the held-out cross-entropy falls at least "
         "0.5 below the unigram line while the samples go from noise to words; the bigram "
         "line takes longer: the model is not yet below it.", TRAIN, "train",
         (TRAINED_UNI, TRAINED)),
    Step("Inside: what each layer would predict",
         "The logit lens reads the residual stream after each layer through the output layer. "
         "At the embeddings the output's favourite has a probability under 1%; the last row "
         "is the output itself.", INSIDE, "inside", (LENS_EMBED, LENS_EXACT)),
    Step("A recurrent model beside it",
         "An LSTM of the same size (within 1%) trains on the same batches. Press Play: after "
         f"{RACE_STEPS} steps it is at least 0.5 nats per character below the transformer "
         "on held-out text, and each of its steps is cheaper on a CPU.", RACE, "race",
         (RACE_PARAMS, RACE_GAP, RACE_TIME)),
    Step("Sentiment in sentence embeddings",
         "MiniLM embeds 48 short phrases. A linear probe reads their sentiment with a "
         "cross-validated accuracy above 85%; the 2-D PCA map keeps under 25% of the variance "
         "and mixes the colours.", EMBED, "embed", (PROBE, PCA_SHARE)),
    Step("Your phrase among them",
         "Type a phrase: it lands on the map and its nearest phrases are listed; for this one "
         "at least 4 of the 5 are positive.", LOVELY, "embed", (NEAR_POSITIVE,)),
]
