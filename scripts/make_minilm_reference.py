"""The reference outputs of all-MiniLM-L6-v2 that tests/engine/test_language_model.py compares
the project's own encoder (engine/attention/bert.py) and tokenizer (engine/attention/wordpiece.py)
with, computed by the Hugging Face `transformers` library from the same packaged files:

    tests/engine/data/minilm_tokens.json     token ids of tricky texts (no truncation)
    tests/engine/data/minilm_reference.npz   attention weights (eager kernel), hidden states,
                                             and sentence embeddings under seeded head masks

The app never imports `transformers`; only this script does. Run it after installing it by
hand into a scratch environment (`pip install "transformers>=5,<6"`):

    python -m scripts.make_minilm_reference

Deterministic: the pretrained weights, no dropout (eval mode); the head masks are drawn from
a seeded generator.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import torch

from engine.attention.language_model import model_path
from engine.device import configure_threads

OUT = Path(__file__).resolve().parent.parent / "tests" / "engine" / "data"
SEED = 0
# Texts whose tokens test the normalizer and the WordPiece split: case, accents, CJK
# ideographs and other scripts, emoji, control and odd whitespace characters, punctuation and
# symbols, special tokens typed as text, a word over 100 characters, numbers.
TOKEN_TEXTS = [
    "The cat sat on the mat.",
    "Attention is all you need, said the paper in 2017!",
    "The quick brown fox jumps over the lazy dog.",
    "A student opened the book and started to read the first chapter.",
    "Yesterday the old bridge over the river was closed for repairs.",
    "She said that the results of the experiment were surprising.",
    "Neural networks learn patterns from many examples of data.",
    "The children played football in the park until it got dark.",
    "My brother bought a new bicycle because his old one was stolen.",
    "After the concert we walked home through the quiet streets.",
    "Students love attention maps",
    "😀 🎉",
    "...!?",
    "日本語のテキスト",
    "naïve café, Ångström, résumé, ÉCOLE, straße",
    "Ça va? Où est la bibliothèque? ¿Qué tal? ¡Hola!",
    "中文分词测试：我爱自然语言处理。",
    "한국어 텍스트와 Ελληνικά και русский текст",
    "مرحبا بالعالم",
    "tab\tnewline\nreturn\r\nvertical\x0bformfeed\x0cnull\x00end",
    "zero\u200bwidth\u200d joiner\ufeffbom \ufffdreplacement \u00a0nbsp\u2003em\u2028line",
    "soft\u00adhyphen and combining e\u0301 and \u2126 ohm and \ufb01 ligature",
    "$100 + 20% = <price> ^ `code` | ~tilde & @user #tag {brace} [bracket] \\ / _ -",
    "“quotes” ‘single’ «guillemets» — dash – en … ellipsis • bullet",
    "I don't think it's U.S.A.-made; e.g. 3.14159 and 1,000,000 or 10^9.",
    "[CLS] typed as text, then [SEP] and [MASK] and [UNK] and [PAD], [cls] lower",
    "antidisestablishmentarianism supercalifragilisticexpialidocious",
    "a" * 101 + " short " + "b" * 100,
    "x" + "é" * 99 + " ok",
    "UPPER lower MiXeD İstanbul ΣΊΣΥΦΟΣ",
    "word " * 30,
    "   leading and trailing spaces   ",
    "emoji👍in🚀words and 🇫🇷 flag and 👨‍👩‍👧 family",
    "math: ∑ x² ≤ ∞, α+β=γ, √2 ≈ 1.414, ½ ⅓",
]
MAP_TEXTS = ["The cat sat on the mat.",
             "Attention is all you need, said the paper in 2017!"]
MASKED_TEXT = "The cat sat on the mat."
N_MASKS = 6                      # seeded masks, each head kept with probability 0.8


def head_masks() -> torch.Tensor:
    """(1 + N_MASKS, 6, 12): row 0 keeps every head, then one head alone (layer 6 head 12),
    then seeded random masks."""
    g = torch.Generator().manual_seed(SEED)
    random = (torch.rand(N_MASKS - 1, 6, 12, generator=g) < 0.8).float()
    one = torch.ones(1, 6, 12)
    one[0, 5, 11] = 0.0
    return torch.cat([torch.ones(1, 6, 12), one, random])


def main() -> None:
    configure_threads()                  # one torch thread, as the app
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer, BertModel
    path = str(model_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = BertModel.from_pretrained(path, attn_implementation="eager",
                                      add_pooling_layer=False).eval()

    ids = {t: tok(t, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
           for t in TOKEN_TEXTS}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "minilm_tokens.json").write_text(json.dumps(ids, ensure_ascii=False, indent=0) + "\n")

    arrays: dict[str, np.ndarray] = {}
    with torch.inference_mode():
        for i, text in enumerate(MAP_TEXTS):
            enc = tok(text, return_tensors="pt")
            out = model(**enc, output_attentions=True, output_hidden_states=True)
            arrays[f"ids_{i}"] = enc["input_ids"][0].numpy()
            arrays[f"attentions_{i}"] = torch.cat(out.attentions).float().numpy()   # (L, H, T, T)
            arrays[f"hidden_{i}"] = torch.cat(out.hidden_states).float().numpy()    # (L+1, T, d)

        # head masking: zero head h's columns of the self-attention output (the context, before
        # the output projection), one batch row per mask
        masks = head_masks()
        d_head = model.config.hidden_size // model.config.num_attention_heads

        def zero_heads(layer: int):
            def hook(module, args, output):
                keep = masks[:, layer].repeat_interleave(d_head, dim=-1)     # (B, d)
                return (output[0] * keep[:, None, :], *output[1:])
            return hook

        hooks = [layer.attention.self.register_forward_hook(zero_heads(i))
                 for i, layer in enumerate(model.encoder.layer)]
        enc = tok(MASKED_TEXT, return_tensors="pt")
        batch = {k: v.expand(len(masks), -1) for k, v in enc.items()}
        last = model(**batch).last_hidden_state
        for h in hooks:
            h.remove()
        arrays["masks"] = masks.numpy()
        arrays["masked_embeddings"] = last.mean(1).float().numpy()                 # (B, d)
    np.savez_compressed(OUT / "minilm_reference.npz", **arrays)
    for f in ("minilm_tokens.json", "minilm_reference.npz"):
        print(f"wrote {OUT / f} ({(OUT / f).stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
