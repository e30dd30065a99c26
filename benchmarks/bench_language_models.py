"""Language models page: the next-token distribution for a 128-character prompt (what a
slider or prompt change computes; target <= 30 ms on one core), generating 200 characters
(target <= 2 s), one live frame's snapshot, and the trainer's speed against a plain PyTorch
loop doing the same work (target >= 0.95x); the Char-RNN vs transformer race (each model's
time per step, and a race frame's snapshot); and the Embeddings tab's answer to a typed phrase
(embedding it, PCA and t-SNE)."""
from __future__ import annotations

import statistics

import torch

from benchmarks import Measurement, alternating_times, median_time, torch_threads
from engine import language_models as lmx
from engine.language_models.pretrained import SHIPPED, load_shipped
from engine.language_models.reads import build_race, build_trainer

ROUND_STEPS = 10
ROUNDS = 5
PROMPT = ("The for statement is used to iterate over the elements of a sequence (such as a "
          "string, tuple or list) or other iterable object. ")[:128]


def one_thread(fn):
    """With one torch thread, as the server runs (docs/ARCHITECTURE.md)."""
    def wrapped() -> Measurement:
        with torch_threads(1):
            return fn()
    return wrapped


def _model() -> lmx.GPT:
    return load_shipped(SHIPPED) if SHIPPED.is_file() else lmx.GPT().eval()


def next_token_time() -> Measurement:
    model = _model()
    ids = lmx.encode(PROMPT).ids
    t = median_time(lambda: lmx.shape(lmx.next_logits(model, ids), 0.8, 40, 0.9))
    return Measurement(1e3 * t, "ms", f"logits of a {len(ids)}-character prompt, then "
                                      "temperature, top-k and top-p; target <= 30 ms")


def generate_time() -> Measurement:
    model = _model()
    ids = lmx.encode(PROMPT).ids
    t = median_time(lambda: lmx.generate(model, ids, 200, 0.8, 0, 0.95, seed=0), repeat=3,
                    warmup=1)
    return Measurement(t, "s", "200 characters sampled after a 128-character prompt "
                               "(a full forward per character); target <= 2 s")


def _plain_loop(text: str):
    """GPTTrainer.step's work without the trainer: run(steps)."""
    s = lmx.split_text(text)
    torch.manual_seed(0)
    model = lmx.GPT()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    train = torch.as_tensor(s.train)
    offsets = torch.arange(129)
    g = torch.Generator().manual_seed(0)

    def run(steps: int) -> None:
        for _ in range(steps):
            x = train[torch.randint(0, len(train) - 128, (16, 1), generator=g) + offsets]
            loss = model.loss(x[:, :-1], x[:, 1:])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    return run


def training_ratio() -> Measurement:
    """Trainer and plain loop in alternating rounds; the median of the per-round ratios (the
    trainer also scores 16 held-out windows every 20 iterations)."""
    text = lmx.shipped_text()[:100_000]
    tr = build_trainer(text, 3e-3, 16, 0, "cpu")
    plain = _plain_loop(text)
    times = alternating_times({"plain": lambda: plain(ROUND_STEPS),
                               "trainer": lambda: tr.step(ROUND_STEPS)}, rounds=ROUNDS)
    ratios = [p[0] / t[0] for p, t in zip(times["plain"], times["trainer"])]
    rate = lambda name: ROUND_STEPS / statistics.median(w for w, _ in times[name])  # noqa: E731
    return Measurement(statistics.median(ratios), "x plain loop",
                       f"GPTTrainer {rate('trainer'):,.1f} it/s vs plain loop "
                       f"{rate('plain'):,.1f} it/s (batch 16 x 128), median of {ROUNDS} "
                       "alternating rounds; target >= 0.95")


def snapshot_time() -> Measurement:
    tr = build_trainer(lmx.shipped_text()[:50_000], 3e-3, 16, 0, "cpu")
    tr.step(1)
    t = median_time(lambda: (tr.forget_cached(), tr.snapshot()), repeat=3, warmup=1)
    return Measurement(1e3 * t, "ms", "one live frame's snapshot: held-out score and two "
                                      "60-character samples")


def race_step_times() -> Measurement:
    """Each model's median time per training step inside the race (the LSTM's first)."""
    tr = build_race(lmx.shipped_text()[:100_000], 3e-3, 16, 0, "cpu", "lstm")
    tr.step(1 + ROUNDS * ROUND_STEPS)
    return Measurement(tr.step_ms("rnn"), "ms", f"LSTM step (batch 16 x 128); the GPT's "
                                                 f"{tr.step_ms('gpt'):.0f} ms, "
                                                 f"{tr.step_ms('gpt') / tr.step_ms('rnn'):.2f}x")


def race_snapshot_time() -> Measurement:
    tr = build_race(lmx.shipped_text()[:50_000], 3e-3, 16, 0, "cpu", "lstm")
    tr.step(1)
    t = median_time(lambda: (tr.forget_cached(), tr.snapshot()), repeat=3, warmup=1)
    return Measurement(1e3 * t, "ms", "one race frame's snapshot: both held-out scores and a "
                                      "60-character sample from each model")


def phrase_time() -> Measurement:
    """A typed phrase: its embedding, then PCA and t-SNE with the shipped phrases."""
    from engine.language_models import embeddings as emb
    from engine.language_models.phrases import labelled
    e = emb.embed(labelled()[0])
    t = median_time(lambda: emb.project(e, emb.embed(("what a lovely evening",))), repeat=3,
                    warmup=1)
    return Measurement(1e3 * t, "ms", f"embed one phrase, PCA and t-SNE of {len(e) + 1} "
                                      "points (the Embeddings tab's answer to typing)")


BENCHMARKS = {
    "language_models: next-token distribution": one_thread(next_token_time),
    "language_models: generate 200 characters": one_thread(generate_time),
    "language_models: training speed": one_thread(training_ratio),
    "language_models: live frame snapshot": one_thread(snapshot_time),
    "language_models: race step times": one_thread(race_step_times),
    "language_models: race frame snapshot": one_thread(race_snapshot_time),
    "language_models: typed phrase on the map": one_thread(phrase_time),
}
