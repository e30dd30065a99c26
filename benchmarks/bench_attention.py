"""Attention page: forward pass with attention maps of the shipped model, and training
throughput of the reverse task (engine trainer vs a plain PyTorch loop on the same model)."""
from __future__ import annotations

import statistics
import time

import torch
from torch.nn import functional as F

from benchmarks import Measurement, alternating_times, median_time, sized, torch_threads
from engine import attention as A
from engine.device import make_generator
from ui.topics import ROOT

WEIGHTS = ROOT / "assets" / "weights" / "attention_reverse.pt"
TRAIN_STEPS = sized(30, 2)


def forward_with_maps(threads: int | None = None) -> Measurement:
    """Wall time (median) of one forward pass with maps; the note adds the CPU time per call,
    which shows when a loaded machine, not the work, sets the wall time."""
    model, _ = A.load_pretrained(WEIGHTS)
    task = A.TASKS["reverse"]
    x, _, _ = A.make_batch(task, 1, make_generator(0))

    def run():
        with torch.no_grad():
            model(x, return_attention=True)
    with torch_threads(threads):
        cpu0 = time.process_time()
        t = median_time(run, repeat=50, warmup=5)
        cpu = (time.process_time() - cpu0) / 55
    return Measurement(t * 1e3, "ms", f"one sequence (16 tokens), 2x2 maps, "
                                      f"{torch.get_num_threads() if not threads else threads} "
                                      f"torch thread(s); CPU {cpu * 1e3:.1f} ms/call; "
                                      f"target < 20 ms")


def greedy_predict() -> Measurement:
    model, _ = A.load_pretrained(WEIGHTS)
    task = A.TASKS["reverse"]
    t = median_time(lambda: A.predict(model, task, [3, 1, 4, 1, 5, 9, 2, 6]), repeat=20)
    return Measurement(t * 1e3, "ms", "what the page runs: 8 greedy decoding passes + maps")


def _trainer() -> A.TransformerTrainer:
    return A.TransformerTrainer("reverse", A.ModelConfig(2, 2, 64), lr=3e-3, batch=128,
                                seed=0, device="cpu")


def plain_steps(model, opt, task, g, n: int) -> float:
    """n updates of the page's transformer in a bare loop (no metrics, no history): the
    reference both this benchmark and trainer_overhead time the trainer against. It reads the
    loss every step, as a trainer logging it does."""
    value = float("nan")
    for _ in range(n):
        inp, tgt, mask = A.make_batch(task, 128, g)
        logits, _ = model(inp, return_attention=False)
        loss = F.cross_entropy(logits[mask], tgt[mask])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        value = float(loss.detach())
    return value


def _plain_loop(tr: A.TransformerTrainer):
    """The same model, data and optimiser in a bare loop."""
    return lambda: plain_steps(tr.model, tr.opt, tr.task, tr.gen, TRAIN_STEPS)


_RATES: dict[str, float] = {}


def _rates(rounds: int = 5) -> dict[str, float]:
    """Steps/s of both, measured in alternating rounds so machine-load drift hits both."""
    if not _RATES:
        trainer, plain = _trainer(), _plain_loop(_trainer())
        trainer.step(5)
        plain()
        times = {"plain": [], "trainer": []}
        cpu = {"plain": [], "trainer": []}
        for _ in range(sized(rounds, 1)):
            for name, fn in (("plain", plain), ("trainer", lambda: trainer.step(TRAIN_STEPS))):
                t0, c0 = time.perf_counter(), time.process_time()
                fn()
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(time.process_time() - c0)
        _RATES.update({k: TRAIN_STEPS / statistics.median(v) for k, v in times.items()})
        _RATES["cpu_ratio"] = statistics.median(cpu["plain"]) / statistics.median(cpu["trainer"])
    return _RATES


def explicit_vs_fused(t: int) -> Measurement:
    """Forward + backward of causal attention, 2 heads x d 32, batch 128 * 16 / t rows:
    the explicit softmax (engine.attention.dot_product.attention, what is drawn) against
    torch.nn.functional.scaled_dot_product_attention (what training runs); alternating
    rounds, median per-round CPU-time ratio."""
    b = max(1, 128 * 16 // t)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(b, 2, t, 32, generator=g, requires_grad=True) for _ in range(3))
    mask = A.causal_mask(t)

    def explicit():
        A.attention(q, k, v, mask=mask)[0].sum().backward()

    def fused():
        F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
    times = alternating_times({"explicit": explicit, "fused": fused}, rounds=7)
    ratio = statistics.median(e[1] / f[1] for e, f in zip(times["explicit"], times["fused"]))
    ms = statistics.median(f[1] for f in times["fused"]) * 1e3
    return Measurement(ratio, "x (explicit / fused CPU time)",
                       f"T = {t}, batch {b}: fused {ms:.1f} ms forward + backward")


BENCHMARKS = {
    "attention: forward + maps, shipped reverse model": forward_with_maps,
    "attention: forward + maps, 1 torch thread": lambda: forward_with_maps(threads=1),
    "attention: greedy prediction on the page": greedy_predict,
    "attention: train reverse, plain PyTorch loop": lambda: Measurement(
        _rates()["plain"], "it/s", "2 layers x 2 heads, d 64, batch 128, AdamW"),
    "attention: train reverse, engine trainer": lambda: Measurement(
        _rates()["trainer"], "it/s", "TransformerTrainer.step"),
    "attention: trainer / plain loop": lambda: Measurement(
        _rates()["trainer"] / _rates()["plain"], "x plain loop",
        f"wall-time ratio; CPU-time ratio {_rates()['cpu_ratio']:.2f} (robust to machine "
        f"load); target >= 0.8"),
    "attention: explicit weights / fused kernel, T = 16 (page)": lambda: explicit_vs_fused(16),
    "attention: explicit weights / fused kernel, T = 1024": lambda: explicit_vs_fused(1024),
}
