"""Pretrained nets (assets/weights/lstm_gating_*.pt, built by scripts/pretrain_lstm_gating.py),
written and read through engine/weights.py (model_config = kind, input_size, hidden, n_out)."""
from __future__ import annotations

from pathlib import Path

import torch

from engine import weights
from engine.device import resolve_device
from engine.recurrent.model import RecurrentNet


NET_CONFIG_KEYS = ("kind", "input_size", "hidden", "n_out")


def net_config(net: RecurrentNet) -> dict:
    """The model_config of a RecurrentNet's weights file: enough to rebuild it."""
    return {"kind": net.kind, "input_size": net.rnn.input_size,
            "hidden": net.rnn.hidden_size, "n_out": net.head.out_features}


def save_net(net: RecurrentNet, path, **meta) -> Path:
    """Write the net through engine/weights.py: model_config = net_config(net), meta = how it
    was made (task, delay, delays, accuracy ...; plain values)."""
    return weights.save(path, net_config(net), net.state_dict(), meta)


def net_from_weights(w: weights.Weights, device: str | torch.device | None = "cpu"
                     ) -> tuple[RecurrentNet, dict]:
    """(net in eval mode, meta) from loaded weights; meta also holds the model_config keys
    (kind, input_size, hidden, n_out). A config or state that does not fit the net the code
    builds is stale (weights.StaleWeightsError)."""
    c = w.model_config
    try:
        net = RecurrentNet(c["kind"], int(c["input_size"]), int(c["hidden"]), int(c["n_out"]))
        net.load_state_dict(w.state)
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        raise weights.StaleWeightsError(
            f"weights file {w.path} does not fit a RecurrentNet ({type(err).__name__}: {err}): "
            f"{weights.REBUILD_HINT}") from err
    return net.to(resolve_device(device)).eval(), {**c, **w.meta}


def load_net(path, device: str | torch.device | None = "cpu") -> tuple[RecurrentNet, dict]:
    """(net, meta) from a file written by save_net. Raises weights.MissingWeightsError,
    CorruptWeightsError or StaleWeightsError (all weights.WeightsError) with a message that
    says how to rebuild the file."""
    return net_from_weights(weights.load(path, "cpu"), device)
