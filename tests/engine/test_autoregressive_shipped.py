"""The autoregressive page's WaveNet, gated PixelCNN and shipped weights: the WaveNet's
prediction of sample t reads only samples before t and reaches exactly its field, the vowels
repeat with a seed, generation keeps its prompt, a gated layer is its formula, a trainer
written to a weights file comes back identical and continues, and the shipped files load with
the settings the page asks for."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from engine import weights
from engine.autoregressive import PixelCNNTrainer
from engine.autoregressive.pixelcnn import PixelCNN
from engine.autoregressive.pretrained import (PIXELCNN, WAVENETS, load_trainer, load_wavenet,
                                              pixelcnn_file, save_trainer, save_wavenet,
                                              wavenet_config, wavenet_file)
from engine.autoregressive.wavenet import (DILATED, PERIOD, UNDILATED, WaveNet, field_of,
                                           generate, parameter_count, train_wavenet, vowels)
from ui.topics import ROOT

WEIGHTS = ROOT / "assets" / "weights"


@pytest.mark.parametrize("dilations", [DILATED, UNDILATED, (2, 1, 4)])
def test_the_wavenet_reads_exactly_its_field_of_past_samples(dilations):
    torch.manual_seed(0)
    model = WaveNet(dilations, channels=4).double()
    x = torch.randn(1, 64, dtype=torch.float64, requires_grad=True)
    t = 50
    model(x)[0, t].backward()
    reached = np.flatnonzero(x.grad[0].numpy() != 0)
    assert reached.max() == t - 1                       # never x[t] itself nor later
    assert len(reached) == field_of(dilations) == t - reached.min()


def test_both_schedules_have_the_same_weights_and_fields_32_and_6():
    assert parameter_count(WaveNet(DILATED)) == parameter_count(WaveNet(UNDILATED))
    assert field_of(DILATED) == 32 > PERIOD > field_of(UNDILATED) == 6


def test_vowels_repeat_with_a_seed_and_nearly_repeat_one_period_back():
    a, b = vowels(4, seed=3), vowels(4, seed=3)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4, 256) and a.dtype == np.float32
    lag = ((a[:, PERIOD:] - a[:, :-PERIOD]) ** 2).mean() / a.var()
    assert lag < 0.1                                    # one period back: nearly the same


def test_generation_keeps_the_prompt_and_a_short_fit_lowers_the_error():
    fit = train_wavenet(DILATED, steps=8, channels=4, batch=4)
    assert fit.losses[-1] < fit.losses[0]
    prompt = vowels(1, seed=5)[0, :20]
    out = generate(fit.model, prompt, 40)
    np.testing.assert_array_equal(out[:20], prompt)
    assert out.shape == (40,) and np.isfinite(out).all()
    with pytest.raises(ValueError, match="prompt"):
        generate(fit.model, prompt, 10)


def test_a_gated_layer_is_tanh_times_sigmoid_plus_the_residual():
    torch.manual_seed(0)
    model = PixelCNN(4, hidden=3, layers=1, gated=True)
    x = torch.randint(0, 4, (2, 8, 8))
    h = torch.relu(model.first((x.float() / 3)[:, None]))
    f, g = model.blocks[0](h).chunk(2, 1)
    expected = model.out(torch.tanh(f) * torch.sigmoid(g) + h)
    torch.testing.assert_close(model(x), expected)


def test_a_trainer_in_a_weights_file_comes_back_and_continues():
    a = PixelCNNTrainer(levels=4, hidden=8, layers=1, gated=True, seed=1)
    a.step(2)
    buf = io.BytesIO()
    save_trainer(buf, a)
    b = load_trainer(buf.getvalue())
    assert b.steps == 2 and b.pretrained_steps == 2 and b.config == a.config
    a.step(2)
    b.step(2)
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb)
    with pytest.raises(weights.StaleWeightsError):
        load_trainer(buf.getvalue(), expect={**a.config, "gated": False})


def test_a_wavenet_in_a_weights_file_comes_back():
    model = WaveNet((1, 2), channels=4)
    buf = io.BytesIO()
    save_wavenet(buf, model)
    back = load_wavenet(buf.getvalue())
    x = torch.from_numpy(vowels(1, seed=0))
    torch.testing.assert_close(back(x), model(x))


@pytest.mark.parametrize("name", list(PIXELCNN))
def test_the_shipped_pixelcnns_load_with_the_page_settings(name):
    path = pixelcnn_file(WEIGHTS, name)
    assert path.stat().st_size < 1_000_000
    trainer = load_trainer(path, expect=PIXELCNN[name])
    assert trainer.steps > 0 and trainer.model.gated == PIXELCNN[name]["gated"]


@pytest.mark.parametrize("name", WAVENETS)
def test_the_shipped_wavenets_load_with_their_schedule(name):
    path = wavenet_file(WEIGHTS, name)
    assert path.stat().st_size < 1_000_000
    model = load_wavenet(path, expect=wavenet_config(name))
    assert model.dilations == tuple(wavenet_config(name)["dilations"])
