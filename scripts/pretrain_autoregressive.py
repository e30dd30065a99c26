"""Train the shipped models of the autoregressive page and save them.

    python -m scripts.pretrain autoregressive

The PixelCNN at the page's default settings, plain and gated (engine.autoregressive.
PixelCNNTrainer, 600 iterations each, the whole trainer state stored: ~0.5 MB each), and
the WaveNet on the synthetic vowels with dilations 1, 2, 4, 8, 16 and with five undilated
layers (engine.autoregressive.wavenet.train_wavenet, 600 steps each, ~30 KB each)."""
from __future__ import annotations

from pathlib import Path

from engine.autoregressive.pretrained import (PIXELCNN, PIXELCNN_STEPS, WAVENET_CHANNELS,
                                              WAVENET_STEPS, WAVENETS, pixelcnn_file,
                                              save_trainer, save_wavenet, wavenet_file)
from engine.autoregressive.trainer import PixelCNNTrainer
from engine.autoregressive.wavenet import SCHEDULES, held_out_error, train_wavenet

CHUNK = 100


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    paths = []
    for name, config in PIXELCNN.items():
        trainer = PixelCNNTrainer(**config)
        for done in range(CHUNK, PIXELCNN_STEPS + 1, CHUNK):
            trainer.step(CHUNK)
            print(f"autoregressive: PixelCNN {name}, {done} iterations, test bits/pixel "
                  f"{trainer.test_bits():.4f}", flush=True)
        path = pixelcnn_file(out_dir, name)
        save_trainer(path, trainer, {"recipe": "engine.autoregressive.PixelCNNTrainer",
                                     "steps": PIXELCNN_STEPS, "test_bits": trainer.test_bits()})
        paths.append(path)
    for name in WAVENETS:
        fit = train_wavenet(SCHEDULES[name], steps=WAVENET_STEPS, seed=seed,
                            channels=WAVENET_CHANNELS)
        err = held_out_error(fit.model)
        print(f"autoregressive: WaveNet {name}, held-out error {err:.4f}", flush=True)
        path = wavenet_file(out_dir, name)
        save_wavenet(path, fit.model, {"recipe": "engine.autoregressive.wavenet.train_wavenet",
                                       "seed": seed, "steps": WAVENET_STEPS,
                                       "held_out_error": err})
        paths.append(path)
    return paths
