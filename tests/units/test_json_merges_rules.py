"""`ubpe.models.hf_base._merge_rules` of a tokenizer.json's merge rules read from its bytes
(`JsonMerges`, `ubpe_native._tables.pair_ids_in_json`) against the same rules decoded by the
json module: the same ids, and the same ranks where pairs repeat (the first place, the last
rank, as HF's map keeps them)."""

from __future__ import annotations

import json
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.errors import ModelFormatError
from ubpe.io.hf_import import _read_apart
from ubpe.models.hf_base import JsonMerges, _merge_rules

TOKENS = ["a", "b", "c", "é", "Ġ", "😀", '"', "\\"]


def _vocab() -> dict[str, int]:
    texts = list(TOKENS)
    texts += [a + b for a in TOKENS for b in TOKENS]
    return {text: 2 * i for i, text in enumerate(dict.fromkeys(texts))}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(TOKENS), st.booleans()), min_size=1, max_size=40),
       st.booleans(), st.sampled_from([None, 2]))
def test_rules_from_the_bytes_are_the_decoded_rules(rules, ascii_only, indent):
    vocab = _vocab()
    merges = [f"{a} {b}" if line else [a, b] for a, b, line in rules]
    doc = {"version": "1.0", "model": {"type": "BPE", "vocab": vocab, "merges": merges}}
    data = json.dumps(doc, ensure_ascii=ascii_only, indent=indent).encode("utf-8")
    read = _read_apart(data, "x.json")
    assert isinstance(read["model"]["merges"], JsonMerges) and len(read["model"]["merges"]) == len(merges)
    assert read["model"]["vocab"] == vocab
    found = _merge_rules(vocab, read["model"]["merges"], "x.json")
    want = _merge_rules(vocab, merges, "x.json")
    for a, b in zip(found, want):
        assert type(a) is type(b) is array and a.typecode == b.typecode and a == b  # (no numpy needed)


def test_a_rule_that_uses_no_token_is_named_from_the_bytes():
    vocab = _vocab()
    data = json.dumps({"model": {"vocab": vocab, "merges": ["a b", "a z"]}}).encode()
    with pytest.raises(ModelFormatError, match="merge 'a' 'z' uses 'z'"):
        _merge_rules(vocab, _read_apart(data, "x.json")["model"]["merges"], "x.json")


DECOYS = st.sampled_from([
    ("x", {"merges": ["a b"]}),  # another object's array named merges
    ("added_tokens", [{"content": '"merges": ["a b"]', "id": 0}]),  # the words inside a string
    ("decoder", {"type": "BPEDecoder", "merges": []}),
    ("post_processor", {"m\u0065rges": ["c c"]}),
])


@settings(max_examples=200, deadline=None)
@given(st.lists(DECOYS, max_size=3, unique_by=lambda d: d[0]), st.integers(0, 3),
       st.sampled_from(["merges", "merg\\u0065s", None]), st.booleans(), st.sampled_from([None, 2]))
def test_a_document_read_apart_is_the_json_modules_whatever_else_is_named_merges(decoys, at, key, ascii_only, indent):
    """`_read_apart` finds the model's merges by the one array named so, or reads the
    document otherwise: either way the document the json module reads (the model's merges the
    same rules), or None where it cannot tell (the caller then reads the file whole)."""
    vocab = _vocab()
    model = {"type": "BPE", "vocab": vocab}
    text = json.dumps(dict(decoys[:at] + [("model", model)] + decoys[at:]), ensure_ascii=ascii_only, indent=indent)
    if key is not None:  # the model's merges, the key spelled plainly or with an escape
        text = text.replace('"vocab":', f'"{key}": ["a b", ["b", "a"]], "vocab":', 1)
    data = text.encode("utf-8")
    want = json.loads(data)
    read = _read_apart(data, "x.json")
    if read is None:
        assert key != "merges"  # (the model's merges spelled plainly are always found)
        return
    merges = read["model"].get("merges")
    if isinstance(merges, JsonMerges):
        read["model"]["merges"] = merges.rules()
    assert read == want
