"""Attention page, Real model tab: loading the packaged all-MiniLM-L6-v2, one sentence's
attention maps after load (target ≤ 150 ms for ≤ 32 tokens), and the head-masking effects
(72 embeddings with one head silenced, each pass starting at the silenced layer)."""
from __future__ import annotations

import subprocess
import sys
import time

from benchmarks import Measurement, median_time
from engine.attention import language_model as LM
from ui.topics import ROOT

SENTENCE = "A student opened the book and started to read the first chapter."


def load_time() -> Measurement:
    """A fresh process: import the engine module and load the vocabulary and weights into the
    project's own encoder (what the first visit of the tab costs a server once)."""
    # the child imports the module this file imports (LM.__name__), so a move of it is followed
    code = ("import importlib, time; t = time.perf_counter(); "
            f"LM = importlib.import_module({LM.__name__!r}); "
            "LM.load(); print(time.perf_counter() - t, time.process_time())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"the child process failed: {out.stderr.strip().splitlines()[-1:]}")
    wall, cpu = map(float, out.stdout.strip().splitlines()[-1].split())
    return Measurement(wall, "s", f"fresh process: import + vocabulary + 6x12 model "
                                  f"from model.safetensors, once; CPU {cpu:.1f} s")


def per_sentence() -> Measurement:
    LM.load()
    n = len(LM.attention_maps(SENTENCE).tokens)
    cpu0 = time.process_time()
    t = median_time(lambda: LM.attention_maps(SENTENCE), repeat=20, warmup=3)
    cpu = (time.process_time() - cpu0) / 23
    return Measurement(t * 1e3, "ms", f"attention_maps, {n} tokens, 6 layers x 12 heads, "
                                      f"after load; CPU {cpu * 1e3:.1f} ms/call; "
                                      "target ≤ 150 ms")


def masking() -> Measurement:
    LM.load()
    cpu0 = time.process_time()
    t = median_time(lambda: LM.masking_effects(SENTENCE), repeat=5, warmup=1)
    cpu = (time.process_time() - cpu0) / 6
    return Measurement(t * 1e3, "ms", "masking_effects: 72 heads masked one at a time; the "
                                      "unmasked pass, then per layer one batch of 12 from "
                                      f"that layer's input; CPU {cpu * 1e3:.0f} ms/call")


def builtin_scores() -> Measurement:
    LM.load()
    t = median_time(lambda: LM.mean_scores(), repeat=3, warmup=1)
    return Measurement(t * 1e3, "ms", f"head-type scores on the {len(LM.SENTENCES)} built-in "
                                      "sentences")


BENCHMARKS = {"language model: load (fresh process)": load_time,
              "language model: attention maps of one sentence": per_sentence,
              "language model: head-masking effects": masking,
              "language model: scores on the built-in sentences": builtin_scores}
