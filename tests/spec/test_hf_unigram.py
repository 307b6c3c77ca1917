"""HF ``Unigram`` tokenizer.json files (T5, ALBERT, XLNet style, and models trained by
``tokenizers``): read by ``ubpe.load`` as a composition (:mod:`ubpe.models.composed`) and
tokenized id for id as HF ``tokenizers`` does, on varied real text, random texts, batches on
several threads; decoded as HF decodes. The files are built by ``hf_composed_builders``."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("sentencepiece")

import ubpe  # noqa: E402
from ubpe.errors import InvalidParameterError, ModelFormatError  # noqa: E402
from ubpe.io.hf_import import from_json  # noqa: E402
from ubpe.models.composed import ComposedTokenizer  # noqa: E402

from hf_composed_builders import BUILDERS  # noqa: E402
from peer_process import HFPeer  # noqa: E402
from tricky_text import O200K_ATOMS, TRICKY  # noqa: E402
from vocab_corpora import text_lines, varied_texts  # noqa: E402

#: texts the pipeline's steps treat specially: spaces (Strip, Replace(" {2,}"), Metaspace), the
#: charsmap's rewrites (full width, ligatures, "\r\n" as one grapheme), accents (NFKD,
#: StripAccents), added tokens, unknown characters, byte fallback
EDGES = ["", " ", "  ", "   a", "a   ", " a  b   c ", "\r\n", "a\r\nb\r\r\n\n", "\t\ttabs\t",
         "ｆｕｌｌ　ｗｉｄｔｈ ①② ﬁ ﬁ\u0301 Å Å", "e\u0301 a\u0308\u0301 ﬀ\u0327", "``quoted'' and \"quoted\"",
         "9, 10,000 1,2,3,", "</s> <pad>x<unk> <extra_id_0> [CLS] a[SEP] <sep><cls>", "qu quqqu",
         "🦙 😀😀 中文字 𝔘𝔫𝔦 \U0010ffff", "\x00nul \x7f", "▁ ▁▁ a▁b", "Ünïcödé ÅÅ İstanbul ß ẞ",
         "x" * 2000 + " " * 30 + "y", TRICKY,
         # marks of a newer Unicode than tokenizers' own tables, which StripAccents keeps (albert's)
         "\U0001cf00 a\U0001cf00b \U00011f00 a\u05c8\u0898b \u1cf2\u1cf3"]


def _lines() -> list[str]:
    return varied_texts() + text_lines("kjv", limit=400) + text_lines("shakespeare", limit=400) + EDGES


@functools.lru_cache(maxsize=None)
def _saved(name: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="hf-unigram")) / f"{name}.json"
    BUILDERS[name]().save(str(path))
    return path


@functools.lru_cache(maxsize=2)
def _loaded(name: str) -> ComposedTokenizer:
    return ubpe.load(_saved(name))


@pytest.fixture(scope="module")
def peer():
    with HFPeer() as running:
        yield running


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return _lines()


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_ids_equal_tokenizers(name, lines, peer):
    tok = _loaded(name)
    assert isinstance(tok, ComposedTokenizer) and tok.variant == "hf:unigram"
    want = peer.ids(_saved(name), lines)
    differ = [(text, ids, tok.encode(text)) for text, ids in zip(lines, want) if tok.encode(text) != ids]
    assert not differ, f"{len(differ)}/{len(lines)} texts differ, first: {differ[0]!r}"
    assert sum(map(len, want)) > 10 * len(lines)  # (texts that encode to something)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_special_tokens_and_decode_equal_tokenizers(name, lines, peer):
    tok = _loaded(name)
    sample = lines[::9] + EDGES
    framed = peer.ids(_saved(name), sample, add_special=True)
    assert [tok.encode(text, add_special=True) for text in sample] == framed
    assert tok.encode_batch(sample, add_special=True) == framed
    assert [tok.decode(ids) for ids in framed] == peer.decode(_saved(name), framed)
    assert [tok.decode(ids, skip_special=False) for ids in framed] == peer.decode(_saved(name), framed, False)


@pytest.mark.parametrize("name", ["t5", "trained-bytes", "xlnet"])
def test_batches_on_threads_equal_one_by_one(name, lines):
    tok = _loaded(name)
    one_by_one = [tok.encode(text) for text in lines]
    for threads in (1, 3):
        assert tok.encode_batch(lines, threads=threads) == one_by_one
    batch = tok.encode_batch_to_numpy(lines, threads=3)
    ids, offsets = batch.best()
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == one_by_one
    # a unigram model's documents score their log-probability
    assert np.allclose(batch.scores[:50], [tok.log_probability(e) for e in one_by_one[:50]])


_ALPHABET = sorted(set(TRICKY + "".join(O200K_ATOMS) + " ▁abcdefghijklmnopqrstuvwxyz ,.'`" + "ﬁﬀ①ｆＡ\r\n\u0301\u0308"))
_PIECES = ["</s>", "<unk>", "<pad>", "[CLS]", "<sep>", "qu", "``", "''", "  ", "the", "The", " and", "9,"]


@pytest.mark.parametrize("name", ["t5", "albert", "trained-some-bytes"])
def test_random_texts_equal_tokenizers(name):
    reference = tokenizers.Tokenizer.from_file(str(_saved(name)))
    tok = _loaded(name)

    @settings(max_examples=300)
    @given(st.lists(st.one_of(st.sampled_from(_ALPHABET), st.sampled_from(_PIECES), st.characters(
        blacklist_categories=("Cs",))), max_size=30).map("".join))
    def check(text):
        assert tok.encode(text) == reference.encode(text, add_special_tokens=False).ids

    check()


def test_without_an_unknown_token_unknown_text_is_refused_as_by_tokenizers(tmp_path):
    path = tmp_path / "no-unk.json"
    BUILDERS["trained"]().save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["model"]["unk_id"] = None
    path.write_text(json.dumps(doc), encoding="utf-8")
    reference = tokenizers.Tokenizer.from_file(str(path))
    tok = ubpe.load(path)
    assert tok.encode("the lord") == reference.encode("the lord", add_special_tokens=False).ids
    with pytest.raises(Exception, match="unk"):
        reference.encode("the 🦙")
    with pytest.raises(InvalidParameterError, match="unknown token"):
        tok.encode("the 🦙")
    with pytest.raises(InvalidParameterError, match="unknown token"):
        tok.encode_batch(["the", "the 🦙"], threads=2)


def test_the_tokenizer_pickles_and_describes_its_stages():
    import pickle

    tok = _loaded("t5")
    again = pickle.loads(pickle.dumps(tok))
    assert again.encode("Hello  world </s>") == tok.encode("Hello  world </s>")
    info = tok.describe()
    assert info["variant"] == "hf:unigram" and info["model"] == "Unigram"
    assert info["normalizer"] == ["precompiled", "strip", "replace"] and info["pre_tokenizer"] == ["metaspace"]
    assert info["post_processor"]["suffix"] == [tok.piece_to_id("</s>")]
    assert tok.score_kind() == "log-prob"


def test_ubpe_encoders_run_on_the_vocabulary():
    tok = _loaded("trained")
    text = "the quick brown fox"
    [(native, _)] = tok.encode_with(text)
    assert native == tok.encode(text)
    [(additive, _)] = tok.encode_with(text, "additive")  # the same objective as the Viterbi
    assert tok.decode(additive) == tok.decode(native)
    fewest = tok.encode_with(text, "fewest")[0][0]
    assert len(fewest) <= len(native) and tok.decode(fewest) == tok.decode(native)


_GOOD = {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]]}


@pytest.mark.parametrize("change, words", [
    ({"vocab": [["a", "x"]]}, ["Unigram", "vocab"]),
    ({"vocab": {"a": 0}}, ["Unigram", "vocab"]),
    ({"vocab": []}, ["empty"]),
    ({"unk_id": 5}, ["unk_id", "not in"]),
    ({"unk_id": -1}, ["unk_id"]),
    ({"vocab": [["a", float("inf")]], "unk_id": None}, ["finite"]),
])
def test_bad_unigram_models_are_one_clear_error(change, words):
    doc = {"model": {**_GOOD, **change}, "added_tokens": [], "normalizer": None, "pre_tokenizer": None}
    with pytest.raises(ModelFormatError) as caught:
        from_json(json.dumps(doc))
    assert all(word in str(caught.value) for word in words), caught.value


@pytest.mark.parametrize("charsmap, words", [("not base64!", ["base64"]), (None, ["base64 string"]),
                                             ("AAAA", ["charsmap"])])
def test_bad_precompiled_normalizers_are_one_clear_error(charsmap, words):
    doc = {"model": _GOOD, "normalizer": {"type": "Precompiled", "precompiled_charsmap": charsmap}}
    with pytest.raises(ModelFormatError) as caught:
        from_json(json.dumps(doc))
    assert all(word in str(caught.value) for word in words), caught.value
