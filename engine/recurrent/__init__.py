"""Recurrent cells, opened up: gate traces, gradient flow through time, toy sequence tasks.

Cells (PyTorch's conventions, single layer; W_* = weight_*_l0, b_* = bias_*_l0):

    LSTM  (gate order in PyTorch's stacked weights: i, f, g, o)
        i = σ(W_ii x_t + b_ii + W_hi h_{t-1} + b_hi)      input gate: how much to write
        f = σ(W_if x_t + b_if + W_hf h_{t-1} + b_hf)      forget gate: how much to keep
        g = tanh(W_ig x_t + b_ig + W_hg h_{t-1} + b_hg)   candidate: what to write
        o = σ(W_io x_t + b_io + W_ho h_{t-1} + b_ho)      output gate: how much to reveal
        c_t = f ⊙ c_{t-1} + i ⊙ g
        h_t = o ⊙ tanh(c_t)
    GRU   (PyTorch writes the update the other way round from Cho et al.; r after the product)
        r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
        h_t = (1 - z) ⊙ n + z ⊙ h_{t-1}
    RNN   h_t = tanh(a_t),  a_t = W_ih x_t + b_ih + W_hh h_{t-1} + b_hh
    linear RNN (reference for gradient flow): h_t = a_t  (no tanh)

`lstm_trace`, `gru_trace`, `rnn_trace` unroll a torch module step by step from its own
weights and return every gate and state per time step (equal to what the module returns);
`clamp={"f": 1.0, "i": 0.0}` overrides gates for teaching. `gradient_flow` measures
‖∂h_T/∂h_{T-k}‖ with autograd on the same unrolled cells. TASKS holds seeded toy sequence
tasks, and SequenceTrainer / RaceTrainer follow the trainer protocol of engine/training.py.

The package, by job:

    cells.py      cell_params, the step-by-step unroll, lstm/gru/rnn_trace, the scalar LSTM
    signals.py    pulse / step / noise inputs of the gate explorer (SIGNALS, signal_input)
    gradients.py  gradient_flow ‖∂h_T/∂h_{T-k}‖, spectral radius and forget-bias settings
    tasks.py      TASKS (delayed recall, adding, parity), batches, loss / accuracy, labels
    model.py      RecurrentNet (recurrent layer + linear readout), its init, its answers
    trainer.py    SequenceTrainer, RaceTrainer (engine/training.py protocol)
    pretrained.py the shipped nets through engine/weights.py (save_net, load_net)

Every name is importable from engine.recurrent, as before the split.
"""
from engine.recurrent.cells import (CellParams, GATES, GATE_RANGES, GRUTrace, LSTMTrace,
                                    MODULES, N_BLOCKS, RNNTrace, SCALAR_DEFAULTS, TRACES,
                                    cell_params, gru_trace, lstm_trace, memory_half_life,
                                    rnn_trace, scalar_lstm)
from engine.recurrent.signals import SIGNALS, noise, pulse, signal_input, step
from engine.recurrent.gradients import (GradientFlow, gradient_flow, set_forget_bias,
                                        set_spectral_radius, spectral_radius)
from engine.recurrent.tasks import (RECALL_ALPHABET, SeqBatch, TASKS, TaskSpec, adding,
                                    delayed_recall, encode_recall, make_task_batch, parity,
                                    recall_labels, recall_text, task_accuracy, task_loss,
                                    task_metrics)
from engine.recurrent.model import RecurrentNet, accuracy_by_length, head_probs, predict_probs
from engine.recurrent.model import _init_net  # noqa: F401 (scripts/pretrain_lstm_gating.py)
from engine.recurrent.trainer import (RaceSnapshot, RaceTrainer, SequenceSnapshot,
                                      SequenceTrainer)
from engine.recurrent.pretrained import (NET_CONFIG_KEYS, load_net, net_config,
                                         net_from_weights, save_net)
# helpers the old single module exposed (pages and tests still reach them as R.<name>)
from engine.device import make_generator, resolve_device, to_numpy  # noqa: F401

__all__ = ["CellParams", "GATES", "GATE_RANGES", "GRUTrace", "GradientFlow", "LSTMTrace",
           "MODULES", "NET_CONFIG_KEYS", "N_BLOCKS", "RECALL_ALPHABET", "RNNTrace",
           "RaceSnapshot", "RaceTrainer", "RecurrentNet", "SCALAR_DEFAULTS", "SIGNALS",
           "SeqBatch", "SequenceSnapshot", "SequenceTrainer", "TASKS", "TRACES", "TaskSpec",
           "accuracy_by_length", "adding", "cell_params", "delayed_recall", "encode_recall",
           "gradient_flow", "gru_trace", "head_probs", "load_net", "lstm_trace",
           "make_task_batch", "memory_half_life", "net_config", "net_from_weights", "noise",
           "parity", "predict_probs", "pulse", "recall_labels", "recall_text", "rnn_trace",
           "save_net", "scalar_lstm", "set_forget_bias", "set_spectral_radius", "signal_input",
           "spectral_radius", "step", "task_accuracy", "task_loss", "task_metrics"]
