"""How far models trained in one batch (engine/<topic>/batched.py) drift from the same models
stepped alone, step by step, and what the drift is: the batch's rounding amplified by the
training dynamics, or a difference in what is computed.

    python -m scripts.batched_divergence                        # GANs, float32: batch vs alone
    python -m scripts.batched_divergence --dtype float64        # the same in float64
    python -m scripts.batched_divergence --ulp                  # alone vs alone, one weight
                                                                # moved by one ulp
    python -m scripts.batched_divergence --gates 3 239 --lr 2.5e-4
                                      # the gates of GAN member 3 and its one-ulp twin that
                                      # differ on iteration 239, where they part
    options: --kind gan|regions|diffusion|vae --members 4 --steps 200 --lr (member k gets
    lr·(k+1); default per kind) --every 10

Members (seed k+1): gan: GANTrainer(ring of 8, LIVE_DEFAULTS, batch 64) as in
tests/test_worker_batching.py (float64 possible: GANTrainer's dtype); regions: a 2-8-8-1 MLP on
the ridge task, 200 points; diffusion: the 16-unit eps-network, two moons, batch 64; vae: the
32-16 VAE, batch 64 (as the tests/engine/test_*_batched.py members). Printed per member: the
largest |Δ| over all its weights at every `--every` steps, and the first step where it passes
1e-12, 1e-5 and 1e-3. One torch thread: a run repeats bit for bit on one machine.
"""
from __future__ import annotations

import argparse

import torch


def gan(seed: int, lr: float, dtype: torch.dtype):
    from engine.gan import LIVE_DEFAULTS, GANTrainer, make_target
    return GANTrainer(make_target("ring of 8", 0.05, seed=0), seed=seed, eval_n=400,
                      dtype=dtype, **{**LIVE_DEFAULTS, "batch_size": 64, "lr_g": lr, "lr_d": lr})


def regions(seed: int, lr: float, dtype: torch.dtype):
    from engine.regions import RegionTrainer
    return RegionTrainer([8, 8], task="ridge (regression)", seed=seed, lr=lr, n=200,
                         count_every=10)


def diffusion(seed: int, lr: float, dtype: torch.dtype):
    from engine.diffusion import SCHEDULES, DiffusionTrainer
    from engine.diffusion.data import DIFFUSION_DATA
    d = DIFFUSION_DATA["two_moons"](n=300, seed=seed)
    return DiffusionTrainer(d.points, None, SCHEDULES["linear"](), hidden=16, lr=lr, batch=64,
                            seed=seed)


def vae(seed: int, lr: float, dtype: torch.dtype):
    from engine.vae import VAETrainer
    return VAETrainer(hidden=(32, 16), batch_size=64, seed=seed, lr=lr)


def batch_of(kind: str, members: list):
    if kind == "gan":
        from engine.gan.batched import BatchedGAN
        return BatchedGAN(members, static=False)
    from live.batching import batch_of as build
    return build(members)


KINDS = {"gan": (gan, 1e-3), "regions": (regions, 5e-3), "diffusion": (diffusion, 1e-3),
         "vae": (vae, 5e-4)}


def weights(t) -> list[torch.Tensor]:
    if hasattr(t, "G"):
        nets = (*t.G.parameters(), *t.D.parameters())
    elif hasattr(t, "model"):
        nets = t.model.parameters()
    else:
        nets = t.params
    return [p.detach().clone() for p in nets]


def nudged(t) -> torch.Tensor:
    """The weight tensor whose first entry a one-ulp twin moves: one that gets a gradient at
    every step (GAN: G's first layer, on the latent codes; ReLU regions: the first layer, on
    the 2-D points; diffusion: the first layer; VAE: the decoder's output bias, as an input
    weight of a digit's blank corner pixel never moves)."""
    if hasattr(t, "G"):
        return next(iter(t.G.parameters()))
    if hasattr(t, "params"):
        return t.params[0]
    params = list(t.model.parameters())
    return params[-1] if hasattr(t.model, "decoder") else params[0]


def max_diff(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    return max(float((p - q).abs().max()) for p, q in zip(a, b))


def run(kind: str, members: int, steps: int, lr: float, dtype: torch.dtype,
        ulp: bool) -> dict[int, list[float]]:
    """Per member the max |Δ| of its weights after every step (1..steps)."""
    make = KINDS[kind][0]
    lrs = [lr * (k + 1) for k in range(members)]
    alone = [make(k + 1, lrs[k], dtype) for k in range(members)]
    if ulp:       # the twin: the same models stepped alone, the first weight one ulp up
        twins = [make(k + 1, lrs[k], dtype) for k in range(members)]
        for t in twins:
            w = nudged(t)
            with torch.no_grad():
                w.view(-1)[0] = torch.nextafter(w.view(-1)[0], torch.tensor(float("inf"),
                                                                              dtype=dtype))
    else:
        batch = batch_of(kind, [make(k + 1, lrs[k], dtype) for k in range(members)])
    diffs: dict[int, list[float]] = {k: [] for k in range(members)}
    for _ in range(steps):
        for t in alone:
            t.step(1)
        if ulp:
            for t in twins:
                t.step(1)
            others = twins
        else:
            batch.step(1)
            others = [batch.unstack(k) for k in range(members)]
        for k in range(members):
            diffs[k].append(max_diff(weights(alone[k]), weights(others[k])))
    return diffs


def gates(member: int, lr: float, step: int) -> None:
    """GAN member `member` alone and its one-ulp twin (float32), stepped to just before
    iteration `step`: print the ReLU (G) and LeakyReLU (D) gates whose sign differs between
    the two on that iteration's batches (the D update's real and fake points, the G update's
    fakes), with the two pre-activations."""
    a, b = (gan(member + 1, lr * (member + 1), torch.float32) for _ in range(2))
    w = next(b.G.parameters())
    with torch.no_grad():
        w.view(-1)[0] = torch.nextafter(w.view(-1)[0], torch.tensor(float("inf")))
    for _ in range(step - 1):
        a.step(1)
        b.step(1)
    state = a.gen.get_state()             # the draws of iteration `step`, in the trainer's order
    real, z_d, z_g = a._real_batch(), a._z(), a._z()
    a.gen.set_state(state)

    def pre_activations(net: torch.nn.Module, x: torch.Tensor) -> list[torch.Tensor]:
        out = []
        for m in net.modules():
            if isinstance(m, torch.nn.Linear):
                x = m(x)
                out.append(x)
            elif isinstance(m, (torch.nn.ReLU, torch.nn.LeakyReLU)):
                x = m(x)
        return out[:-1]                    # the gated layers

    with torch.no_grad():
        for update, z in (("D update", z_d), ("G update", z_g)):
            seen = {}
            for name, t in (("alone", a), ("twin", b)):
                g_pre = pre_activations(t.G, z)
                fake = t.G(z)
                x = torch.cat([real, fake]) if update == "D update" else fake
                seen[name] = [("G", i, h) for i, h in enumerate(g_pre)] + \
                    [("D", i, h) for i, h in enumerate(pre_activations(t.D, x))]
            for (net, i, p), (_, _, q) in zip(seen["alone"], seen["twin"]):
                flips = ((p > 0) != (q > 0)).nonzero().tolist()
                print(f"{update}, {net} hidden layer {i}: {len(flips)} gates differ" + "".join(
                    f"; row {r} unit {u}: {float(p[r, u]):.1e} vs {float(q[r, u]):.1e}"
                    for r, u in flips[:3]) + f" (smallest |pre-activation| {float(p.abs().min()):.1e})")


def first_over(d: list[float], level: float) -> str:
    return next((str(i + 1) for i, x in enumerate(d) if x > level), "-")


def main() -> None:
    from engine.device import configure_threads
    configure_threads()          # one thread, as the app: the reduction order it measures
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=4)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--kind", choices=list(KINDS), default="gan")
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--ulp", action="store_true")
    ap.add_argument("--gates", type=int, nargs=2, metavar=("MEMBER", "STEP"),
                    help="GANs: the gates that differ between a member and its one-ulp twin "
                         "on iteration STEP")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.gates:
        gates(a.gates[0], a.lr if a.lr is not None else KINDS["gan"][1], a.gates[1])
        return
    if a.dtype == "float64" and a.kind != "gan":
        ap.error("--dtype float64: GANs only (GANTrainer's dtype)")
    lr = a.lr if a.lr is not None else KINDS[a.kind][1]
    a.lr = lr
    diffs = run(a.kind, a.members, a.steps, lr, getattr(torch, a.dtype), a.ulp)
    what = "alone vs alone with one ulp in one weight" if a.ulp else "batched vs alone"
    print(f"{a.kind}: {what}, {a.dtype}, {a.members} members, lr {lr:g}·(k+1), {a.steps} steps")
    print("max |Δ weight| per member at steps " + ", ".join(
        str(s) for s in range(a.every, a.steps + 1, a.every)))
    for k, d in diffs.items():
        row = " ".join(f"{d[s - 1]:.1e}" for s in range(a.every, a.steps + 1, a.every))
        print(f"member {k} lr {a.lr * (k + 1):.0e}: {row}")
        print(f"   first step > 1e-12: {first_over(d, 1e-12)}, > 1e-5: {first_over(d, 1e-5)}, "
              f"> 1e-3: {first_over(d, 1e-3)}, max {max(d):.1e}")


if __name__ == "__main__":
    main()
