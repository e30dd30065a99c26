"""The pretraining scripts are reproducible and say how far they are: a seeded run of
scripts/pretrain_vae.py (shortened to a few epochs) writes the same weights bit for bit twice,
training in progress chunks equals one call, and the run prints progress per model."""
from __future__ import annotations

import pytest
import torch

from engine.vae import SHIPPED, SHIPPED_HIDDEN, VAETrainer, load_shipped
from scripts import pretrain_vae
from scripts.reproducible import Progress, deterministic, step_with_progress


@pytest.fixture(autouse=True)
def restore_torch_settings():
    """deterministic() changes process-wide settings: put them back for the other tests."""
    det, threads = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    yield
    torch.use_deterministic_algorithms(det)
    torch.set_num_threads(threads)


def _tensors(state, prefix=""):
    if isinstance(state, torch.Tensor):
        yield prefix, state
    elif isinstance(state, dict):
        for k, v in state.items():
            yield from _tensors(v, f"{prefix}/{k}")
    elif isinstance(state, (list, tuple)):
        for i, v in enumerate(state):
            yield from _tensors(v, f"{prefix}/{i}")


def test_a_seeded_pretrain_run_repeats_bit_for_bit(tmp_path, monkeypatch, capsys):
    name = next(iter(SHIPPED))
    monkeypatch.setattr(pretrain_vae, "SHIPPED", {name: SHIPPED[name]})
    monkeypatch.setattr(pretrain_vae, "EPOCHS", 3)
    runs = []
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        [path] = pretrain_vae.pretrain(tmp_path / run)
        runs.append(dict(_tensors(load_shipped(path))))
    assert torch.are_deterministic_algorithms_enabled() and torch.get_num_threads() == 1
    assert runs[0].keys() == runs[1].keys() and len(runs[0]) > 4
    for key, a in runs[0].items():
        assert torch.equal(a, runs[1][key]), key          # same bits, not merely close
    out = capsys.readouterr().out
    assert f"{name} (1/1, 3 epochs): step" in out and "~" in out and "left" in out


def test_progress_chunks_train_exactly_like_one_call():
    deterministic()
    kw = SHIPPED[next(iter(SHIPPED))]
    one, chunked = (VAETrainer(seed=3, device="cpu", hidden=SHIPPED_HIDDEN, **kw)
                    for _ in range(2))
    one.step(23)
    step_with_progress(chunked, 23, "test", per=5, unit="chunk")
    assert chunked.steps == one.steps == 23
    for p, q in zip(one.model.parameters(), chunked.model.parameters()):
        assert torch.equal(p, q)


def test_progress_prints_about_twenty_lines_and_the_last(capsys):
    bar = Progress("model", 1000, "step")
    for i in range(1, 1001):
        bar(i)
    lines = capsys.readouterr().out.splitlines()
    assert 19 <= len(lines) <= 21
    assert lines[-1].startswith("  model: step 1,000/1,000 (100%)")
