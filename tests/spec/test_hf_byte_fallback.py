"""Character BPE ``tokenizer.json`` models and the characters that are no token: byte
fallback over some or all ``<0xXX>`` tokens, the unknown token (fused or not) or none, as HF
``tokenizers``' ``BPE::merge_word`` writes them - in C (`HFCharBPE._build_native_pipeline`,
``SpmBPE(hf_unknowns=True)``), checked against ``tokenizers`` itself and against ubpe's Python
path on hypothesis text of every kind of character, on 1..4 threads."""

from __future__ import annotations

import functools
import json

import pytest

tokenizers = pytest.importorskip("tokenizers")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ubpe.io.hf_import import from_json  # noqa: E402
from ubpe.models.hf import HFCharBPE, HFPipelineMixin  # noqa: E402

from hf_builders import trained_byte_fallback, trained_metaspace  # noqa: E402

#: byte tokens a vocabulary gets: none, ASCII's and é's (the builder's partial file), those
#: and 中's first byte only (its other two missing), every byte
BYTE_SETS = {"none": [], "ascii-e": [*range(128), 0xC3, 0xA9], "some-cjk": [*range(0x20, 0x7F), 0xC3, 0xA9, 0xE4],
             "all": list(range(256))}
#: (base file, unknown token, fuse_unk, byte tokens); a base's own file is one of them
VARIANTS = [
    ("legacy", "<unk>", True, "ascii-e"),
    ("legacy", "<unk>", False, "ascii-e"),
    ("legacy", None, False, "ascii-e"),
    ("legacy", "<unk>", True, "some-cjk"),
    ("legacy", None, False, "none"),
    ("metaspace", "<unk>", True, "ascii-e"),
    ("metaspace", "<unk>", False, "some-cjk"),
    ("metaspace", None, False, "none"),
    ("metaspace", None, False, "some-cjk"),
    ("metaspace", "<unk>", True, "all"),
    ("replace", "<unk>", True, "all"),
    ("replace-split", "<unk>", True, "ascii-e"),
    ("replace-split", None, False, "some-cjk"),
]
#: pieces of text: known and unknown characters side by side (Latin-1 beyond é, CJK, emoji,
#: a character no script has), spaces and ``▁``, words the models merge
PARTS = st.sampled_from([" ", "  ", "▁", "a", "the", "thee", "ing", "é", "è", "ÿ", "Ω", "中", "文", "🦙", "\u0378",
                         "\n", "x y", "<unk>", "e\u0301"])
TEXTS = st.lists(st.lists(PARTS, max_size=12).map("".join), min_size=1, max_size=5)


@functools.lru_cache(maxsize=None)
def _trained(kind: str) -> str:
    return (trained_metaspace() if kind == "metaspace" else trained_byte_fallback(every_byte=False)).to_str()


def _base(kind: str) -> dict:
    """The trained file without byte tokens (they were appended after training, at the end);
    ``replace``: Gemma's normalizer, ``Replace(" ", "▁")`` without the legacy ``Prepend``, and
    ``replace-split`` with its ``Split(" ")`` pre-tokenizer too (which then finds no space)."""
    doc = json.loads(_trained(kind))
    if kind.startswith("replace"):
        doc["normalizer"] = {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}
    if kind == "replace-split":
        doc["pre_tokenizer"] = {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
                                "invert": False}
    vocab = doc["model"]["vocab"]
    doc["model"]["vocab"] = {t: i for t, i in vocab.items() if not (len(t) == 6 and t.startswith("<0x"))}
    return doc


@functools.lru_cache(maxsize=None)
def _variant(kind: str, unk: str | None, fuse: bool, bytes_name: str) -> tuple:
    doc = _base(kind)
    model = doc["model"]
    model.update(unk_token=unk, fuse_unk=fuse, byte_fallback=bytes_name != "none")
    for b in BYTE_SETS[bytes_name]:
        model["vocab"].setdefault(f"<0x{b:02X}>", len(model["vocab"]))
    text = json.dumps(doc)
    return tokenizers.Tokenizer.from_str(text), from_json(text)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(map(str, v)))
def test_characters_that_are_no_token_as_tokenizers(variant):
    hf, tok = _variant(*variant)
    assert isinstance(tok, HFCharBPE) and tok._pipeline is not None  # the whole pipeline in C

    @settings(max_examples=60, deadline=None)
    @given(TEXTS, st.integers(1, 4))
    def check(texts, threads):
        want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
        assert [HFPipelineMixin.encode(tok, text) for text in texts] == want  # the Python path
        assert [tok.encode(text) for text in texts] == want
        assert tok.encode_batch(texts, threads=threads) == want
        ids, offsets = tok.encode_batch_to_numpy(texts, threads=threads).best()
        assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want

    check()


@pytest.mark.parametrize("variant", [VARIANTS[0], VARIANTS[2], VARIANTS[8]], ids=lambda v: "-".join(map(str, v)))
def test_long_runs_of_unknown_characters(variant):
    """Runs of unknown and byte-fallback characters longer than a cached word, inside words
    and whole texts, on many threads."""
    hf, tok = _variant(*variant)
    texts = ["中" * 300, "x中🦙é" * 100, "the 中文 ÿ " * 50, "\u0378" * 70 + "a", "ΩΩ▁" * 40, "é" * 200]
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert [tok.encode(text) for text in texts] == want
    assert tok.encode_batch(texts * 3, threads=4) == want * 3
