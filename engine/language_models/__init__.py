"""A small character-level GPT: its vocabulary, the model, sampling (temperature, top-k,
top-p), the baselines, its trainer and the shipped weights (notes 004, Sec. 10.2; 001 L3817).

    vocab.py      VOCAB, V, UNK, encode, decode             the characters
    gpt.py        GPT, GPTConfig, n_parameters              the causal transformer
    sampling.py   shape, with_temperature, top_k_mask,      logits -> the sampled distribution
                  top_p_mask, entropy_bits, draw
    generate.py   next_logits, generate, repeated_tail      reading the model
    corpus.py     shipped_text, split_text, unigram_ce,     texts and baselines
                  bigram_ce
    trainer.py    GPTTrainer, LMSnapshot                    next-character training
    reads.py      build_trainer                             the live factory
    pretrained.py load_shipped, SHIPPED                     the shipped model
    rnn.py        CharRNN, RNNConfig, matched_hidden        the LSTM / GRU beside it
    race.py       RaceTrainer, RaceSnapshot                 both trained on the same batches
    phrases.py    labelled, LABELS                          sentiment phrases
    embeddings.py embed, project, probe_accuracy,           MiniLM sentence embeddings
                  silhouette, neighbours
"""
from __future__ import annotations

from engine.language_models.corpus import bigram_ce, shipped_text, split_text, unigram_ce
from engine.language_models.generate import Generated, generate, next_logits, repeated_tail
from engine.language_models.gpt import GPT, GPTConfig, n_parameters
from engine.language_models.sampling import (Shaped, draw, entropy_bits, shape, softmax,
                                             top_k_mask, top_p_mask, with_temperature)
from engine.language_models.trainer import GPTTrainer, LMSnapshot
from engine.language_models.vocab import UNK, VOCAB, V, decode, encode

__all__ = ["bigram_ce", "shipped_text", "split_text", "unigram_ce", "Generated", "generate",
           "next_logits", "repeated_tail", "GPT", "GPTConfig", "n_parameters", "Shaped",
           "draw", "entropy_bits", "shape", "softmax", "top_k_mask", "top_p_mask",
           "with_temperature", "GPTTrainer", "LMSnapshot", "UNK", "VOCAB", "V", "decode",
           "encode"]
