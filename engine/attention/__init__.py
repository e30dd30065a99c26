"""Attention: scaled dot-product attention, masks, sinusoidal positions, and a tiny
transformer trained on toy tasks whose correct attention pattern is known.

Symbols used in the code (one head):

    scores  = q k^T                                  (.., T_q, T_k)
    logits  = scores / (sqrt(d_k) * temperature) + mask     (scale=True)
            = scores / temperature + mask                   (scale=False)
    weights = softmax(logits, over the keys: last axis)     rows sum to 1
    out     = weights v                              (.., T_q, d_v)

Masks are additive: 0 where a query may look, -inf where it may not (weight exactly 0).
Self-attention without positions is permutation-equivariant: attention(P x) = P attention(x).
Pure torch/numpy: no Streamlit, no plotting.

The package, by job:

    dot_product.py scaled dot-product attention, masks (MASKS), sinusoidal positions, and
                   why scale: softmax entropy against d_k
    one_head.py    a few word tokens through one head step by step (mechanics), and the
                   permutation-equivariance check
    tasks.py       the toy tasks (reverse, sort, copy, lookup): TASKS, batches, parsing
    model.py       TinyTransformer (decoder-only, pre-LayerNorm), greedy decoding, evaluate
    measures.py    where the attention of a trained model goes (anti-diagonal, source mass)
    trainer.py     TransformerTrainer (engine/training.py protocol)
    pretrained.py  the shipped models through engine/weights.py (save/load_pretrained)
    language_model.py  a real pretrained encoder's attention (all-MiniLM-L6-v2): maps, head
                   types, head masking; built on
    bert.py        a BERT encoder in plain PyTorch that loads a Hugging Face checkpoint folder
    wordpiece.py   BERT's uncased WordPiece tokenizer over a vocabulary file
    tensor_file.py reading .safetensors files

Every name is importable from engine.attention, as before the split.
"""
from engine.attention.dot_product import (MASKS, NEG_INF, attention, causal_mask,
                                          default_window, full_mask, local_mask, mask_nonzeros,
                                          position_similarity, sinusoidal_encoding,
                                          softmax_entropy, softmax_entropy_vs_dim, sparse_mask,
                                          strided_mask)
from engine.attention.one_head import (Mechanics, WORDS, mechanics, permutation_error,
                                       projections, seeded_permutation, token_embeddings)
from engine.attention.tasks import (MAX_SEQ_LEN, N_DIGITS, N_PAIRS, SEP, SEQ_LEN, TASKS,
                                    TOKEN_NAMES, Task, VOCAB, make_batch, parse_sequence)
from engine.attention.model import (Block, ModelConfig, Prediction, TinyTransformer, evaluate,
                                    greedy_answer, init_model, predict)
from engine.attention.measures import (answer_rows, anti_diagonal_mass, expected_source_mass,
                                       position_mass, source_mass)
from engine.attention.trainer import TransformerSnapshot, TransformerTrainer
from engine.attention.pretrained import (MODEL_CONFIG_KEYS, load_pretrained, model_config_of,
                                         model_from_weights, save_pretrained, weights_payload)
from engine.attention.tasks import _lookup_match  # noqa: F401 (topics/attention/page.py)
# helpers the old single module exposed (pages and tests still reach them as A.<name>)
from engine.device import make_generator, resolve_device, to_numpy  # noqa: F401

__all__ = ["Block", "MASKS", "MAX_SEQ_LEN", "MODEL_CONFIG_KEYS", "Mechanics", "ModelConfig",
           "NEG_INF", "N_DIGITS", "N_PAIRS", "Prediction", "SEP", "SEQ_LEN", "TASKS",
           "TOKEN_NAMES", "Task", "TinyTransformer", "TransformerSnapshot",
           "TransformerTrainer", "VOCAB", "WORDS", "answer_rows", "anti_diagonal_mass",
           "attention", "causal_mask", "default_window", "evaluate", "expected_source_mass",
           "full_mask", "greedy_answer", "init_model", "load_pretrained", "local_mask",
           "make_batch", "mask_nonzeros", "mechanics", "model_config_of", "model_from_weights",
           "parse_sequence", "permutation_error", "position_mass", "position_similarity",
           "predict", "projections", "save_pretrained", "seeded_permutation",
           "sinusoidal_encoding", "softmax_entropy", "softmax_entropy_vs_dim", "source_mass",
           "sparse_mask", "strided_mask", "token_embeddings", "weights_payload"]
