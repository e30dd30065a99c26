"""The language models page's engine: the vocabulary, the GPT's causal mask and loss, the
sampling transforms against PyTorch references (softmax with temperature, top-k, top-p as
Hugging Face's warper computes it), the baselines against their closed forms, seeded
generation, and the trainer (seeded, resumable, refusing a too short text)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.language_models import (GPT, UNK, V, GPTConfig, GPTTrainer, bigram_ce, decode,
                                    encode, entropy_bits, generate, next_logits,
                                    repeated_tail, shape, split_text, top_k_mask, top_p_mask,
                                    unigram_ce, with_temperature)
from engine.language_models.sampling import draw

TINY = GPTConfig(context=16, width=16, heads=2, layers=1)
TEXT = ("the cat sat on the mat. the dog sat on the log. " * 20)


def _logits(seed: int = 0, scale: float = 3.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, scale, V)


def _model(seed: int = 0, cfg: GPTConfig = TINY) -> GPT:
    torch.manual_seed(seed)
    return GPT(cfg).eval()


# ----------------------------------------------------------------------------- vocabulary
def test_encode_decode_round_trip_and_unknown_characters():
    enc = encode("Hi\tthere \u2019x\u2019 \u00e9t\u00e9")
    assert decode(enc.ids) == "Hi    there 'x' \u00bft\u00bf"
    assert enc.unknown == 2 and enc.unknown_chars == "\u00e9"
    assert enc.ids.max() < V and (enc.ids == UNK).sum() == 2


# ----------------------------------------------------------------------------- sampling
@pytest.mark.parametrize("t", [0.05, 0.5, 1.0, 2.0, 10.0])
def test_temperature_is_torch_softmax_of_scaled_logits(t):
    z = _logits(1)
    ref = torch.softmax(torch.as_tensor(z) / t, 0).numpy()
    np.testing.assert_allclose(with_temperature(z, t), ref, rtol=1e-12, atol=1e-15)


def test_temperature_zero_is_greedy_and_never_divides_by_zero():
    z = _logits(2)
    p = with_temperature(z, 0.0)
    assert p[np.argmax(z)] == 1.0 and p.sum() == 1.0
    with pytest.raises(ValueError):
        with_temperature(z, -1.0)


def test_top_k_keeps_torch_topk():
    z = _logits(3)
    p = with_temperature(z, 1.0)
    for k in (1, 5, 20):
        ref = np.zeros(V, dtype=bool)
        ref[torch.topk(torch.as_tensor(p), k).indices.numpy()] = True
        np.testing.assert_array_equal(top_k_mask(p, k), ref)
    assert top_k_mask(p, 0).all() and top_k_mask(p, V + 5).all()


def _hf_top_p(logits: torch.Tensor, top_p: float) -> np.ndarray:
    """Hugging Face's TopPLogitsWarper: sort ascending, drop the tokens whose cumulative
    probability stays <= 1 - top_p, always keep the last (most probable) one."""
    sorted_logits, sorted_idx = torch.sort(logits, descending=False)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum <= (1 - top_p)
    remove[-1] = False
    keep = torch.ones_like(logits, dtype=torch.bool)
    keep[sorted_idx[remove]] = False
    return keep.numpy()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("top_p", [0.1, 0.5, 0.9, 0.99])
def test_top_p_matches_the_hugging_face_warper_and_is_minimal(seed, top_p):
    z = _logits(seed)
    p = with_temperature(z, 1.0)
    keep = top_p_mask(p, top_p)
    np.testing.assert_array_equal(keep, _hf_top_p(torch.as_tensor(z), top_p))
    assert p[keep].sum() >= top_p - 1e-12                          # reaches p
    assert p[keep].sum() - p[keep].min() < top_p                    # dropping one falls short


def test_top_p_edges_and_the_shaped_distribution():
    z = _logits(4)
    assert top_p_mask(with_temperature(z, 1.0), 0.0).sum() == 1     # greedy
    assert top_p_mask(with_temperature(z, 1.0), 1.0).all()
    s = shape(z, 0.7, top_k=10, top_p=0.8)
    np.testing.assert_allclose(s.final.sum(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(s.final[s.keep], s.tempered[s.keep] / s.kept_mass, rtol=1e-12)
    assert s.kept <= 10 and (s.final[~s.keep] == 0).all()


def test_entropy_falls_with_temperature_and_is_log_v_when_uniform():
    z = _logits(5)
    hs = [shape(z, t).entropy_final for t in (0.0, 0.3, 0.7, 1.0, 1.5, 3.0)]
    assert hs[0] == 0.0 and all(a < b for a, b in zip(hs, hs[1:]))
    np.testing.assert_allclose(entropy_bits(np.full(V, 1 / V)), math.log2(V), rtol=1e-12)
    ref = torch.distributions.Categorical(probs=torch.as_tensor(shape(z, 1.0).final)).entropy()
    np.testing.assert_allclose(hs[3], float(ref) / math.log(2), rtol=1e-10)


def test_draw_is_the_inverse_cdf():
    q = np.array([0.2, 0.0, 0.5, 0.3])
    assert [draw(q, u) for u in (0.0, 0.19, 0.2, 0.69, 0.7, 0.999)] == [0, 0, 2, 2, 3, 3]


# ----------------------------------------------------------------------------- the model
def test_output_at_t_ignores_tokens_after_t():
    m = _model(1)
    x = torch.as_tensor(encode("abcdefghijklmnop").ids)[None]
    y = x.clone()
    y[0, 9:] = torch.as_tensor(encode("ZZZZZZZ").ids)
    with torch.no_grad():
        a, b = m(x), m(y)
    torch.testing.assert_close(a[0, :9], b[0, :9])
    assert not torch.allclose(a[0, 9:], b[0, 9:])


def test_attention_is_torch_scaled_dot_product_with_a_causal_mask():
    m = _model(2)
    block = m.blocks[0]
    h = torch.randn(2, 10, TINY.width)
    out, w = block.attention(h)
    q, k, v = block.qkv(h).split(TINY.width, 2)
    q, k, v = (z.view(2, 10, 2, 8).transpose(1, 2) for z in (q, k, v))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, block.proj(ref.transpose(1, 2).reshape(2, 10, 16)))
    assert torch.all(w.triu(1) == 0)


def test_loss_is_the_mean_negative_log_likelihood():
    m = _model(3)
    x = torch.as_tensor(encode("hello world, ok").ids)[None]
    with torch.no_grad():
        logp = m(x[:, :-1]).log_softmax(-1)[0]                         # (t, V)
        ref = -logp[torch.arange(x.shape[1] - 1), x[0, 1:]].mean()
        torch.testing.assert_close(m.loss(x[:, :-1], x[:, 1:]), ref)


# ----------------------------------------------------------------------------- baselines
def test_baselines_are_their_closed_forms():
    train, held = encode("aab").ids, encode("ba").ids
    p_a, p_b = 3 / (3 + V), 2 / (3 + V)
    np.testing.assert_allclose(unigram_ce(train, held), -(math.log(p_b) + math.log(p_a)) / 2)
    # one pair b -> a in held; train has a->a, a->b; count(b) as a predecessor is 0
    np.testing.assert_allclose(bigram_ce(train, held), -math.log(1 / V))
    s = split_text(TEXT)
    assert bigram_ce(s.train, s.held) < unigram_ce(s.train, s.held)


# ----------------------------------------------------------------------------- generation
def test_generation_repeats_with_a_seed_and_t0_is_greedy():
    m = _model(4)
    prompt = encode("the ").ids
    a, b = (generate(m, prompt, 12, 1.0, seed=7) for _ in range(2))
    assert a.text == b.text and len(a.text) == 12
    greedy = generate(m, prompt, 12, 0.0, seed=1)
    ids = list(prompt)
    for _ in range(12):
        ids.append(int(np.argmax(next_logits(m, np.asarray(ids)))))
    assert decode(ids[4:]) == greedy.text
    assert generate(m, prompt, 12, 1.0, top_k=1, seed=3).text == greedy.text
    assert (greedy.probs == 1.0).all() and generate(m, prompt, 0, 1.0).text == ""


def test_long_and_empty_prompts_read_the_context_or_the_start_symbol():
    m = _model(5)
    long = encode("x" * 100).ids
    np.testing.assert_allclose(next_logits(m, long), next_logits(m, long[-TINY.context:]))
    np.testing.assert_allclose(next_logits(m, np.array([], dtype=np.int64)),
                               next_logits(m, encode("\n").ids))


def test_repeated_tail_finds_a_loop():
    assert repeated_tail("so the the the the ") == " the"
    assert repeated_tail("no loop here") is None


# ----------------------------------------------------------------------------- trainer
def _trainer(seed: int = 0) -> GPTTrainer:
    s = split_text(TEXT * 2)
    return GPTTrainer(s.train, s.held, TINY, lr=1e-2, batch=8, seed=seed, prompts=("the",))


def test_training_beats_its_start_and_repeats_with_a_seed():
    a, b = _trainer(1), _trainer(1)
    first = a.held_ce()
    a.step(30)
    b.step(30)
    assert a.held_ce() < first - 0.5
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)
    snap = a.snapshot()
    assert snap.step == 30 and len(snap.samples[0]) == 60 and snap.bigram_ce < snap.unigram_ce


def test_a_saved_state_resumes_the_same_run():
    a = _trainer(2)
    a.step(5)
    saved = a.state_dict()
    a.step(5)
    b = _trainer(2)
    b.load_state_dict(saved)
    b.step(5)
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(pa, pb)


def test_a_too_short_text_is_refused_in_words():
    s = split_text("tiny text")
    with pytest.raises(ValueError, match="too short"):
        GPTTrainer(s.train, s.held, TINY)


# ----------------------------------------------------------------------------- pretraining
def test_the_pretrain_script_repeats_bit_for_bit_and_loads(tmp_path):
    from engine.language_models.pretrained import load_shipped
    from scripts import pretrain_language_models as pre
    det, threads = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    try:
        paths = [pre.pretrain(tmp_path / run, steps=3)[0]
                 for run in ("a", "b") if (tmp_path / run).mkdir() is None]
        a, b = (load_shipped(p) for p in paths)
    finally:
        torch.use_deterministic_algorithms(det)
        torch.set_num_threads(threads)
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.equal(pa, pb)
    assert pre.lr_at(0) == pre.LR_MAX and abs(pre.lr_at(pre.STEPS) - pre.LR_MIN) < 1e-12


def test_temperature_zero_keeps_one_character():
    s = shape(_logits(6), 0.0)
    assert s.kept == 1 and s.keep[np.argmax(_logits(6))] and s.kept_mass == 1.0


def test_the_last_lens_is_the_output_and_attention_rows_are_causal_distributions():
    from engine.language_models.inside import inside
    m = _model(7)
    ids = encode("lens test").ids
    r = inside(m, ids)
    ref = torch.softmax(torch.as_tensor(next_logits(m, ids)), 0).numpy()
    np.testing.assert_allclose(r.lens[-1], ref, atol=1e-6)
    assert r.attention.shape == (TINY.layers, TINY.heads, len(ids))
    np.testing.assert_allclose(r.attention.sum(-1), 1.0, atol=1e-6)
