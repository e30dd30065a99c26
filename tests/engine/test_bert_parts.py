"""The parts under engine/attention/language_model.py, on small inputs with known answers: the
WordPiece split (longest match first, [UNK], special tokens, truncation), the .safetensors
reader (a file written here by hand: dtypes, shapes, bad files), the checkpoint names, and a
small random BERT encoder (the explicit and the fused attention agree; head masking; shapes)."""
from __future__ import annotations

import json
import struct

import pytest
import torch

from engine.attention.bert import BertConfig, BertEncoder, checkpoint_to_own
from engine.attention.tensor_file import TensorFileError, read_safetensors
from engine.attention.wordpiece import WordPiece, normalize, pre_tokenize

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "aff",
         "play", "##ing", "!", "the", "σ", "##ι", "##σ", "中"]


def test_wordpiece_takes_the_longest_piece_first():
    wp = WordPiece(VOCAB)
    assert wp.convert_ids_to_tokens(wp.word_ids("unaffable")) == ["un", "##aff", "##able"]
    assert wp.convert_ids_to_tokens(wp.word_ids("playing")) == ["play", "##ing"]
    assert wp.word_ids("unknown") == [wp.unk]           # one part without a piece: all [UNK]
    assert wp.word_ids("un" * 51) == [wp.unk]           # over 100 characters


def test_normalize_and_pre_tokenize():
    assert normalize("Héllo\tWORLD\x00\u200b") == "hello world"
    assert normalize("ΣΙΣ") == "σισ"                      # no final-sigma rule
    assert normalize("a中b") == "a 中 b"
    assert pre_tokenize("the, play!ing  ok") == ["the", ",", "play", "!", "ing", "ok"]


def test_encode_adds_special_tokens_keeps_typed_ones_and_truncates():
    wp = WordPiece(VOCAB)
    assert wp.convert_ids_to_tokens(wp.encode("The unaffable [SEP] play!")) == \
        ["[CLS]", "the", "un", "##aff", "##able", "[SEP]", "play", "!", "[SEP]"]
    assert wp.convert_ids_to_tokens(wp.encode("the the the", max_length=4)) == \
        ["[CLS]", "the", "the", "[SEP]"]
    with pytest.raises(ValueError, match="lacks"):
        WordPiece(["[PAD]", "a"])


def _write(path, tensors, header_extra=None, cut=0):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        raw = t.contiguous().view(torch.uint8).numpy().tobytes() if t.numel() else b""
        dtype = {torch.float32: "F32", torch.bfloat16: "BF16", torch.int64: "I64"}[t.dtype]
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header.update(header_extra or {})
    text = json.dumps(header).encode()
    data = struct.pack("<Q", len(text)) + text + b"".join(blobs)
    path.write_bytes(data[:len(data) - cut])


def test_safetensors_reader_gives_back_what_was_written(tmp_path):
    g = torch.Generator().manual_seed(0)
    tensors = {"a.weight": torch.randn(3, 4, generator=g),
               "b": torch.arange(5, dtype=torch.int64),
               "c": torch.randn(2, 2, generator=g).to(torch.bfloat16),
               "empty": torch.zeros(0, 3)}
    _write(tmp_path / "m.safetensors", tensors)
    back = read_safetensors(tmp_path / "m.safetensors")
    assert set(back) == set(tensors)
    for k, t in tensors.items():
        assert back[k].dtype == t.dtype and back[k].shape == t.shape
        assert torch.equal(back[k], t)


def test_safetensors_reader_refuses_bad_files(tmp_path):
    (tmp_path / "short").write_bytes(b"abc")
    with pytest.raises(TensorFileError, match="too short"):
        read_safetensors(tmp_path / "short")
    _write(tmp_path / "cut", {"a": torch.ones(4)}, cut=4)
    with pytest.raises(TensorFileError, match="outside"):
        read_safetensors(tmp_path / "cut")
    _write(tmp_path / "odd", {"a": torch.ones(4)},
           {"b": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}})
    with pytest.raises(TensorFileError, match="unknown dtype"):
        read_safetensors(tmp_path / "odd")


def test_checkpoint_names_map_to_the_encoders_parameters():
    assert checkpoint_to_own("embeddings.word_embeddings.weight") == "word.weight"
    assert checkpoint_to_own("bert.embeddings.LayerNorm.gamma") == "embed_norm.weight"
    assert checkpoint_to_own("encoder.layer.3.attention.self.key.bias") == "layers.3.key.bias"
    assert checkpoint_to_own("encoder.layer.0.output.LayerNorm.beta") == "layers.0.ff_norm.bias"
    assert checkpoint_to_own("pooler.dense.weight") is None
    assert checkpoint_to_own("embeddings.position_ids") is None
    model = BertEncoder(BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=2,
                                   num_attention_heads=2, intermediate_size=16,
                                   max_position_embeddings=10))
    # every parameter of the encoder has a checkpoint name that maps to it
    hf = {"word": "embeddings.word_embeddings", "position": "embeddings.position_embeddings",
          "token_type": "embeddings.token_type_embeddings", "embed_norm": "embeddings.LayerNorm",
          "query": "attention.self.query", "key": "attention.self.key",
          "value": "attention.self.value", "attn_out": "attention.output.dense",
          "attn_norm": "attention.output.LayerNorm", "ff_in": "intermediate.dense",
          "ff_out": "output.dense", "ff_norm": "output.LayerNorm"}
    for name, _ in model.named_parameters():
        parts = name.split(".")
        if parts[0] == "layers":
            ckpt = f"encoder.layer.{parts[1]}.{hf[parts[2]]}.{parts[3]}"
        else:
            ckpt = f"{hf[parts[0]]}.{parts[1]}"
        assert checkpoint_to_own(ckpt) == name


def test_small_encoder_explicit_and_fused_attention_agree_and_masks_heads():
    torch.manual_seed(0)
    c = BertConfig(vocab_size=30, hidden_size=12, num_hidden_layers=3, num_attention_heads=3,
                   intermediate_size=24, max_position_embeddings=16)
    model = BertEncoder(c).eval()
    ids = torch.randint(0, 30, (2, 7))
    with torch.no_grad():
        explicit = model(ids, attentions=True)
        fused = model(ids)
        assert len(explicit.hidden_states) == 4 and explicit.last_hidden_state.shape == (2, 7, 12)
        assert len(explicit.attentions) == 3 and explicit.attentions[0].shape == (2, 3, 7, 7)
        torch.testing.assert_close(explicit.attentions[1].sum(-1), torch.ones(2, 3, 7))
        torch.testing.assert_close(fused.last_hidden_state, explicit.last_hidden_state)
        keep = torch.ones(2, 3, 3)
        keep[1, 2, 0] = 0.0                               # last layer, head 0, row 1 only
        masked = model(ids, head_mask=keep).last_hidden_state
        torch.testing.assert_close(masked[0], fused.last_hidden_state[0])
        assert (masked[1] - fused.last_hidden_state[1]).abs().max() > 1e-3
        with pytest.raises(ValueError, match="head_mask"):
            model(ids, head_mask=torch.ones(2, 3))
        with pytest.raises(ValueError, match="ids must be"):
            model(torch.zeros(1, 17, dtype=torch.int64))
