"""Train the small digits CNN of the convolution page and save its weights.

    python -m scripts.pretrain convolution

Adam, 12 epochs over the seeded 80/20 split of scikit-learn's 8x8 digits (engine.conv.
train_digits_cnn); writes assets/weights/convolution_digits.pt (~40 KB) through
engine/weights.py."""
from __future__ import annotations

from pathlib import Path

from engine.conv import save_digits_cnn, train_digits_cnn

EPOCHS = 12


def pretrain(out_dir: Path, seed: int = 0) -> list[Path]:
    model, report = train_digits_cnn(seed=seed, epochs=EPOCHS)
    print(f"convolution: digits CNN, train accuracy {report.train_accuracy:.3f}, "
          f"test accuracy {report.test_accuracy:.3f}")
    path = Path(out_dir) / "convolution_digits.pt"
    return [save_digits_cnn(path, model, recipe="engine.conv.train_digits_cnn", seed=seed,
                            epochs=EPOCHS, train_accuracy=report.train_accuracy,
                            test_accuracy=report.test_accuracy)]
