"""Rebuild the small pretrained weights in assets/ (offline; never run at app start).

    python -m scripts.pretrain            # every topic
    python -m scripts.pretrain lstm vae   # only these

Each topic that ships weights adds scripts/pretrain_<topic>.py with a function
`pretrain(out_dir: pathlib.Path, seed: int = 0) -> list[pathlib.Path]` that trains with
the engine's own trainer and writes files through engine/weights.py (`weights.save`, each
< 2 MB); they are read back with `weights.load` (torch.load(..., weights_only=True)).
Every topic trains under scripts/reproducible.deterministic() (one thread, deterministic
kernels) and prints its progress per model and epoch (or step chunk).
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    import scripts
    names = sorted(m.name[len("pretrain_"):] for m in pkgutil.iter_modules(scripts.__path__)
                   if m.name.startswith("pretrain_"))
    wanted = argv[1:] or names
    unknown = set(wanted) - set(names)
    if unknown:
        print(f"unknown topics {sorted(unknown)}; available: {names}")
        return 2
    out = ROOT / "assets" / "weights"
    out.mkdir(parents=True, exist_ok=True)
    from scripts.reproducible import deterministic
    for k, name in enumerate(wanted, 1):
        print(f"[{k}/{len(wanted)}] {name}: training...", flush=True)
        t0 = time.perf_counter()
        deterministic()
        module = importlib.import_module(f"scripts.pretrain_{name}")
        paths = module.pretrain(out)
        print(f"[{k}/{len(wanted)}] {name}: done in {time.perf_counter() - t0:.0f} s", flush=True)
        for path in paths:
            size = path.stat().st_size / 1e6
            print(f"{name}: wrote {path.relative_to(ROOT)} ({size:.2f} MB)")
            if size >= 2.0:
                print("  too large: assets must stay under 2 MB each")
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
