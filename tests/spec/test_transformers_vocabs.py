"""UBPETokenizer over vocabularies shipped as GGUF files (llama.cpp's test vocabularies):
families ubpe reads but cannot write in its own format (issue 35, point 2)."""

from __future__ import annotations

import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers reads it: a hub request would fail loudly
pytest.importorskip("transformers", reason="the [transformers] extra is not installed")

from ubpe.integrations.transformers import UBPETokenizer  # noqa: E402

from vocab_corpora import varied_texts, vocab_path  # noqa: E402


@pytest.mark.parametrize("name", ["gpt-2", "llama-spm"])
def test_shipped_gguf_vocabularies(name, tmp_path):
    """A file ubpe reads but cannot write in its own format: its ids (special tokens in the text
    parsed, as transformers does), its special tokens, a copy of it by save_pretrained."""
    tok = UBPETokenizer(model_file=vocab_path(name))
    model = tok.ubpe_model
    texts = varied_texts(n_random=50)
    ids = tok(texts, add_special_tokens=False)["input_ids"]
    assert ids == [model.encode(t, parse_special=True) for t in texts]
    assert tok.bos_token_id == model.special_ids["bos"] and tok.eos_token_id == model.special_ids["eos"]
    assert tok(texts[0])["input_ids"] == ([model.special_ids["bos"]] if model.add_bos else []) + ids[0]
    tok.save_pretrained(tmp_path)
    assert UBPETokenizer.from_pretrained(tmp_path)(texts)["input_ids"] == tok(texts)["input_ids"]
    if model.symbol_unit == "byte":  # offsets: exact, tiling each text
        spans = tok(texts[::4], add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        for text, row in zip(texts[::4], spans):
            assert all(a <= b for a, b in row) and (not row or (row[0][0], row[-1][1]) == (0, len(text)))


@pytest.mark.parametrize("name", ["gpt-2", "llama-spm"])
def test_fast_tokenizer_of_a_gguf_vocabulary(name, tmp_path):
    """The GGUF file written as tokenizer.json (ubpe.io.save): transformers' fast tokenizer gives
    the family's ids and special tokens."""
    from ubpe import load
    from ubpe.integrations.transformers import fast_tokenizer

    model = load(vocab_path(name))
    fast = fast_tokenizer(model, tmp_path / "tokenizer.json")
    texts = varied_texts(n_random=20)[::2]
    assert fast(texts, add_special_tokens=False)["input_ids"] == [model.encode(t, parse_special=True) for t in texts]
    assert (fast.bos_token_id, fast.eos_token_id) == (model.special_ids["bos"], model.special_ids["eos"])
