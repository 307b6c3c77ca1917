"""GGUF files written by ubpe, tokenized by llama.cpp itself (compiled from the pinned sdist:
``tests/llama_build.py``; the ``long`` lane): llama.cpp's ids are ubpe's on held-out text.

ubpe's ids: a fitted ByteLevelBPE's ``encode``; a classic vocabulary's ``ranked`` encoder with
``priority="id"`` (see ``test_writers.py``); an imported model's ``encode``.
"""

from __future__ import annotations

import io
import random

import pytest

import ubpe
from ubpe import ByteLevelBPE, UBPEClassic

from llama_build import llama_ids
from tricky_text import TRICKY
from vocab_corpora import text_lines, varied_texts, vocab_path

pytestmark = pytest.mark.long


def _texts() -> list[str]:
    rng = random.Random(7)
    lines = varied_texts(n_random=60)
    return [*TRICKY, *rng.sample(lines, min(600, len(lines)))]


def _check(path, texts: list[str], expected: list[list[int]]) -> None:
    got = llama_ids(path, texts)
    differ = [(t, want, have) for t, want, have in zip(texts, expected, got) if list(want) != list(have)]
    assert not differ, f"llama.cpp: {len(differ)}/{len(texts)} differ, first {differ[0]!r}"


@pytest.mark.parametrize("pattern", ["gpt2", "llama3"])
def test_fitted_bytelevel_in_llama_cpp(pattern, tmp_path):
    train = text_lines(limit=3000, split="train") + text_lines("udhr", limit=1000, split="train")
    tok = ByteLevelBPE().fit(train, n_tokens=600, pattern=pattern, quiet=True)
    tok.save(tmp_path / "m.gguf")
    texts = _texts()
    _check(tmp_path / "m.gguf", texts, [tok.encode(t) for t in texts])


def test_fitted_classic_text_in_llama_cpp(tmp_path):
    train = text_lines(limit=3000, split="train")
    tok = UBPEClassic(alphabet=sorted({c for line in train for c in line}), n_tokens=500)
    tok.fit(train, quiet=True)
    tok.save(tmp_path / "m.gguf")
    texts = [t for t in text_lines(limit=600) if tok.covers(t)]
    _check(tmp_path / "m.gguf", texts, [tok.encode_with(t, "ranked", priority="id")[0][0] for t in texts])


def test_fitted_classic_dna_in_llama_cpp(tmp_path):
    from experiments.datasets import load

    train = [d[k : k + 400] for d in load("dna", "train", max_symbols=200_000).docs for k in range(0, len(d), 400)]
    tok = UBPEClassic(alphabet=sorted({c for doc in train for c in doc}), n_tokens=300)
    tok.fit(train[:500], quiet=True)
    held = [d[k : k + 300] for d in load("dna", "heldout", max_symbols=60_000).docs for k in range(0, len(d), 300)]
    held = [d for d in held if d and tok.covers(d)][:200]
    tok.save(tmp_path / "m.gguf")
    _check(tmp_path / "m.gguf", held, [tok.encode_with(d, "ranked", priority="id")[0][0] for d in held])


@pytest.mark.parametrize("name", ["llama-spm", "gpt-2", "llama-bpe", "nomic-bert-moe", "bert-bge", "gemma-4"])
def test_gguf_written_again_in_llama_cpp(name, tmp_path):
    tok = ubpe.load(vocab_path(name))
    tok.save(tmp_path / "m.gguf")
    texts = _texts()
    _check(tmp_path / "m.gguf", texts, [tok.encode(t) for t in texts])
    back = ubpe.load(tmp_path / "m.gguf")
    assert back.variant == tok.variant and back.encode_batch(texts) == tok.encode_batch(texts)


@pytest.mark.parametrize("config", [dict(model_type="bpe", vocab_size=1500, normalization_rule_name="identity",
                                         remove_extra_whitespaces=False, byte_fallback=True),
                                    dict(model_type="unigram", vocab_size=1500)])
def test_sentencepiece_model_as_gguf_in_llama_cpp(config, tmp_path):
    spm = pytest.importorskip("sentencepiece")
    lines = text_lines(limit=4000, split="train") + text_lines("udhr", limit=2000, split="train")
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, character_coverage=0.995,
                                   num_threads=1, minloglevel=2, **config)
    processor = spm.SentencePieceProcessor(model_proto=out.getvalue())
    (tmp_path / "m.model").write_bytes(out.getvalue())
    ubpe.load(tmp_path / "m.model").save(tmp_path / "m.gguf")
    texts = [t for t in text_lines(limit=600) + text_lines("udhr", limit=300) if "<" not in t]
    _check(tmp_path / "m.gguf", texts, processor.encode(texts))
