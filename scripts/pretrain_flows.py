"""Train the flow page's Real NVP on the 8 x 8 digits and save its weights.

    python -m scripts.pretrain flows

Adam for STEPS steps on the dequantised 17-level digits (engine.flows.digits.
train_digits_flow, the autoregressive page's seeded split); writes
assets/weights/flows_digits.pt (~0.7 MB) through engine/weights.py. Longer training
overfits the 1,438 training digits: the test bits per pixel rise after about 500 steps."""
from __future__ import annotations

from pathlib import Path

from engine.flows.digits import save_digits_flow, train_digits_flow
from scripts.reproducible import Progress

STEPS = 500


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    model, report = train_digits_flow(STEPS, seed=seed,
                                      progress=Progress("flows_digits.pt", STEPS))
    print(f"flows: digits Real NVP, train {report['train_bits']:.3f} bits per pixel, "
          f"test {report['test_bits']:.3f}")
    path = Path(out_dir) / "flows_digits.pt"
    return [save_digits_flow(path, model, recipe="engine.flows.digits.train_digits_flow",
                             seed=seed, steps=STEPS, **report)]
