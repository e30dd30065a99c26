"""Flows page: the trainer's speed against a plain PyTorch loop doing the same work, one live
frame's snapshot (exact density on the grid, samples, warped grid), the Coupling tab's
computation of one slider setting, one Adam step of each flow family on the comparison tab,
and the digits tab's samples at one temperature and its bits per pixel."""
from __future__ import annotations

import statistics

import torch

from benchmarks import Measurement, alternating_times, median_time, sized, torch_threads
from engine import flows
from engine.flows.reads import build_trainer

ROUND_STEPS = 30
ROUNDS = 7


def one_thread(fn):
    """With one torch thread, as the server runs (docs/ARCHITECTURE.md)."""
    def wrapped() -> Measurement:
        with torch_threads(1):
            return fn()
    return wrapped


def _plain_loop():
    """The same work as FlowTrainer.step without the trainer: run(steps)."""
    d = flows.flow_data("moons")
    torch.manual_seed(0)
    model = flows.RealNVP(8, 64)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    x = torch.as_tensor(d.train)
    g = torch.Generator().manual_seed(0)

    def run(steps: int) -> None:
        for _ in range(steps):
            idx = torch.randint(0, len(x), (256,), generator=g)
            loss = -model.log_prob(x[idx]).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            opt.step()
    return run


def training_ratio() -> Measurement:
    """Trainer and plain loop in alternating rounds; the median of the per-round speed ratios
    (the trainer also logs the NLL of all training and held-out points once per call)."""
    tr = build_trainer("moons", 8, 64, 2e-3, 0, "cpu")
    plain = _plain_loop()
    times = alternating_times({"plain": lambda: plain(ROUND_STEPS),
                               "trainer": lambda: tr.step(ROUND_STEPS)}, rounds=ROUNDS)
    ratios = [p[0] / t[0] for p, t in zip(times["plain"], times["trainer"])]
    rate = lambda name: ROUND_STEPS / statistics.median(w for w, _ in times[name])  # noqa: E731
    return Measurement(statistics.median(ratios), "x plain loop",
                       f"FlowTrainer {rate('trainer'):,.0f} it/s vs plain loop "
                       f"{rate('plain'):,.0f} it/s (8 layers of 64, batch 256), median of "
                       f"{ROUNDS} alternating rounds; target >= 0.85")


def snapshot_time() -> Measurement:
    tr = build_trainer("moons", 8, 64, 2e-3, 0, "cpu")
    tr.step(5)
    t = median_time(lambda: (tr.forget_cached(), tr.snapshot()))
    return Measurement(1e3 * t, "ms", "one live frame's snapshot: density on 100 x 100 cells, "
                                      "500 samples, 18 warped grid lines; target < 200 ms "
                                      "(frames every 0.5 s)")


def coupling_time() -> Measurement:
    from topics.flows.compute import _coupling, COUPLING_KEYS
    s = {"fl_keep": "keep x₁, transform x₂", "fl_a": 0.0, "fl_b": 0.5, "fl_c": 0.8,
         "fl_w": 1.5}
    fn = getattr(_coupling, "__wrapped__", _coupling)
    t = median_time(lambda: fn(tuple((k, s[k]) for k in COUPLING_KEYS)))
    return Measurement(1e3 * t, "ms", "the Coupling tab's layer on its grid, autograd check and "
                                      "image density (400 x 400 cells), uncached; target < 150 ms")


FAMILY_STEPS = sized(20, 2)


def family_step_times() -> Measurement:
    """Milliseconds per Adam step of each family as the comparison tab fits it (FAMILY_STEPS
    steps each)."""
    from engine.flows.compare import fit_flow
    from topics.flows.families import CMP_LR, ODE_STEPS, family_args
    d = flows.flow_data("moons")
    ms = {}
    for family in ("planar", "radial", "coupling", "ode"):
        layers, hidden = family_args(family, 8)
        r = fit_flow(family, layers, d.train, d.held_out, FAMILY_STEPS, hidden=hidden or 64,
                     lr=CMP_LR, res=10, ode_steps=ODE_STEPS)
        ms[family] = 1e3 * r.seconds_per_step
    detail = ", ".join(f"{k} {v:.1f} ms" for k, v in ms.items())
    return Measurement(ms["ode"], "ms", f"one neural-ODE step ({ODE_STEPS} RK4 steps, exact "
                                        f"trace); per step: {detail}; the comparison tab "
                                        "fits 300 steps of each")


def digits_samples_time() -> Measurement:
    """The digits tab's move of the temperature slider: 32 samples through the inverse."""
    from engine.flows import digits as fd
    model, _ = fd.load_digits_flow()
    t = median_time(lambda: fd.sample_digits(model, 32, 0.7))
    return Measurement(1e3 * t, "ms", "32 digit samples at one temperature (uncached); "
                                      "target < 50 ms")


def digits_bits_time() -> Measurement:
    from engine.flows import digits as fd
    model, _ = fd.load_digits_flow()
    test = fd.digit_levels()[1]
    t = median_time(lambda: fd.bits_per_pixel(model, test), repeat=3)
    return Measurement(1e3 * t, "ms", "the shipped flow's test bits per pixel (359 digits, 4 "
                                      "dequantisations each), uncached; target < 500 ms")


BENCHMARKS = {
    "flows: training speed": one_thread(training_ratio),
    "flows: live frame snapshot": one_thread(snapshot_time),
    "flows: coupling tab, one setting": one_thread(coupling_time),
    "flows: one step of each family": one_thread(family_step_times),
    "flows: digits samples, one temperature": one_thread(digits_samples_time),
    "flows: digits bits per pixel": one_thread(digits_bits_time),
}
