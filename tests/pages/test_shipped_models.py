"""ui/shipped_models.py: the shipped-model loader of the LSTM gating and attention pages
turns every unusable weights file into a message (never an exception), and tells a missing
file (nothing shipped) from a broken one."""
from __future__ import annotations

import pytest

from engine import attention as A
from engine import recurrent as rec
from ui import shipped_models

REAL = shipped_models.WEIGHTS


@pytest.fixture
def weights_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(shipped_models, "WEIGHTS", tmp_path)
    return tmp_path


@pytest.mark.parametrize("name, loader", [("lstm_gating_rnn.pt", rec.load_net),
                                          ("attention_copy.pt", A.load_pretrained)])
def test_missing_broken_and_good_files(weights_dir, name, loader):
    assert shipped_models.shipped(name, loader) == (None, None)          # nothing shipped
    data = (REAL / name).read_bytes()
    (weights_dir / name).write_bytes(data[:100])                         # truncated
    model, problem = shipped_models.shipped(name, loader)
    assert model is None and name in problem and "corrupt" in problem
    assert "scripts.pretrain" in problem
    (weights_dir / name).write_bytes(b"not a torch file at all")         # random bytes
    assert shipped_models.shipped(name, loader)[1]
    (weights_dir / name).write_bytes(data)                               # rebuilt: read again
    model, problem = shipped_models.shipped(name, loader)
    assert problem is None and model is not None
