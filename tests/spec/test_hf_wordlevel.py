"""HF ``WordLevel`` tokenizer.json files, the second family made purely by composition (a model
stage, ``ubpe.models.wordlevel``, and a reader branch): models trained by ``tokenizers``'
``WordLevelTrainer`` on real text, read by ``ubpe.load`` and tokenized id for id as
``tokenizers`` does, with and without an unknown token."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")

import ubpe  # noqa: E402
from ubpe.errors import InvalidParameterError, ModelFormatError  # noqa: E402
from ubpe.io.hf_import import from_json  # noqa: E402
from ubpe.models.composed import ComposedTokenizer  # noqa: E402

from hf_composed_builders import WORDLEVEL_BUILDERS as BUILDERS  # noqa: E402
from tricky_text import TRICKY  # noqa: E402
from vocab_corpora import text_lines, varied_texts  # noqa: E402


@functools.lru_cache(maxsize=None)
def _saved(name: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="hf-wordlevel")) / f"{name}.json"
    BUILDERS[name]().save(str(path))
    return path


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return varied_texts() + text_lines("kjv", limit=300) + [TRICKY, "", " ", "the  the   THE", "</s> [CLS]x"]


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_ids_and_decode_equal_tokenizers(name, lines):
    reference = tokenizers.Tokenizer.from_file(str(_saved(name)))
    tok = ubpe.load(_saved(name))
    assert isinstance(tok, ComposedTokenizer) and tok.variant == "hf:wordlevel"
    want = [e.ids for e in reference.encode_batch(lines, add_special_tokens=False)]
    differ = [(text, ids, tok.encode(text)) for text, ids in zip(lines, want) if tok.encode(text) != ids]
    assert not differ, f"{len(differ)}/{len(lines)} texts differ, first: {differ[0]!r}"
    unknown = tok.token_to_id("[UNK]" if name == "bert-like" else "<unk>")
    assert sum(ids.count(unknown) for ids in want) > 10  # (the texts meet unknown words)
    assert tok.encode_batch(lines, threads=3) == want
    ids, offsets = tok.encode_batch_to_numpy(lines, threads=2).best()
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want
    framed = [e.ids for e in reference.encode_batch(lines[::5], add_special_tokens=True)]
    assert tok.encode_batch(lines[::5], add_special=True) == framed
    assert [tok.decode(ids) for ids in framed] == reference.decode_batch(framed)


def test_without_an_unknown_token_unknown_words_are_refused_as_by_tokenizers(tmp_path):
    doc = json.loads(_saved("metaspace").read_text(encoding="utf-8"))
    doc["model"]["unk_token"] = "<nothing>"
    path = tmp_path / "no-unk.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    reference, tok = tokenizers.Tokenizer.from_file(str(path)), ubpe.load(path)
    assert tok.encode("the lord") == reference.encode("the lord", add_special_tokens=False).ids
    with pytest.raises(Exception):
        reference.encode("the zyzzyva")
    with pytest.raises(InvalidParameterError, match="no unknown token"):
        tok.encode("the zyzzyva")
    with pytest.raises(InvalidParameterError, match="no unknown token"):
        tok.encode_batch(["the", "the zyzzyva"], threads=2)


@pytest.mark.parametrize("model, words", [
    ({"type": "WordLevel", "vocab": {"a": -1}}, ["WordLevel", "vocab"]),
    ({"type": "WordLevel", "vocab": ["a"]}, ["WordLevel", "vocab"]),
    ({"type": "WordLevel", "vocab": {"a": 0}, "unk_token": 5}, ["unk_token"]),
])
def test_bad_wordlevel_models_are_one_clear_error(model, words):
    with pytest.raises(ModelFormatError) as caught:
        from_json(json.dumps({"model": model}))
    assert all(word in str(caught.value) for word in words), caught.value
