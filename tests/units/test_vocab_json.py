"""A tokenizer.json's vocabulary read from its bytes (`ubpe_native._tables.vocab_span`,
`ubpe_native._vocab.vocab_from_json`, `ubpe.io.hf_import._read_apart`) against the json
module: the same dict (keys, values, order) or None, never another dict, on vocabularies of
every kind of text and id, in every layout, and on those documents broken at random."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.io.hf_import import _read_apart
from ubpe_native._tables import vocab_span
from ubpe_native._vocab import vocab_from_json

#: texts of any code point (lone surrogates too: the json module writes them as escapes)
ANY_TEXT = st.text(st.characters(), max_size=6)
#: texts a UTF-8 file can hold raw (no lone surrogate)
RAW_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=6)
#: ids, a few of them past what the kernel reads itself (18 digits)
IDS = st.one_of(st.integers(0, 40_000), st.integers(-(10**20), 10**20))
LAYOUTS = st.sampled_from([dict(), dict(indent=2), dict(separators=(",", ":")), dict(indent="\t")])


def _json_dict(data: bytes):
    """What the json module reads from ``data``, or None where it refuses it or it is no dict."""
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if type(value) is dict else None


def _agrees(data: bytes) -> object:
    """`vocab_from_json`'s dict of ``data``, checked to be None or the json module's (with the
    same order); returns it."""
    found = vocab_from_json(data)
    if found is not None:
        want = _json_dict(data)
        assert want is not None and found == want and list(found) == list(want), data
        assert all(type(k) is str for k in found) and all(type(v) is int for v in found.values())
    return found


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.one_of(ANY_TEXT, RAW_TEXT), IDS), max_size=30), st.booleans(), LAYOUTS)
def test_a_vocabulary_reads_as_the_json_module_reads_it(entries, ascii_only, layout):
    pairs = [(k, v) for k, v in entries if ascii_only or k.encode("utf-8", "surrogatepass") == k.encode("utf-8", "replace")]
    # (json.dumps writes duplicate keys as given: the last value wins, in the first one's place)
    text = "{" + ", ".join(f"{json.dumps(k, ensure_ascii=ascii_only)}: {v}" for k, v in pairs) + "}"
    if layout:
        text = json.dumps(dict(pairs), ensure_ascii=ascii_only, **layout)
    data = text.encode("utf-8")
    found = _agrees(data)
    if all(abs(v) < 10**18 for _, v in pairs):  # (ids of more digits: the json module reads them)
        assert found is not None, data


#: bytes that matter to the reader: inserted, replaced or removed at random places
EDITS = st.sampled_from([b'"', b"\\", b"\\u", b"\\ud83d", b"\\udc00", b"{", b"}", b":", b",", b"-", b"0", b"7",
                         b".5", b"e3", b" ", b"\n", b"\x01", b"\xc3", b"\xa9", b"\xed\xa0\x80", b"null", b"[]"])


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(RAW_TEXT, st.integers(-5, 300)), max_size=8), st.booleans(),
       st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 2), EDITS), min_size=1, max_size=4))
def test_a_broken_vocabulary_is_never_read_otherwise(entries, ascii_only, edits):
    """Documents broken at random: `vocab_from_json` gives the json module's dict or None
    (where the json module refuses the bytes, or reads them as something else, None)."""
    data = bytearray(json.dumps(dict(entries), ensure_ascii=ascii_only).encode("utf-8"))
    for place, kind, edit in edits:
        at = place % (len(data) + 1)
        if kind == 0:
            data[at:at] = edit
        elif kind == 1:
            data[at:at + len(edit)] = edit
        else:
            del data[at:at + len(edit)]
    found = _agrees(bytes(data))
    if _json_dict(bytes(data)) is None:
        assert found is None


@pytest.mark.parametrize("data, want", [
    (rb'{"a\/b": 1, "\b\f\n\r\t": 2}', {"a/b": 1, "\b\f\n\r\t": 2}),
    (rb'{"\ud83d\ude00": 1, "\ud800": 2, "\udc00x": 3, "\uD83D\uDE00": 4}', {"😀": 4, "\ud800": 2, "\udc00x": 3}),
    (rb'{"\ud800\u0041": 1}', {"\ud800A": 1}),  # a high surrogate, then an escape that is no low one
    (b'{"\xc3\xa9\\"": 0, "": -7, "z": 0}', {'é"': 0, "": -7, "z": 0}),
    (b' \n{ "a" :\t0 }\r\n', {"a": 0}),
    (b'{"a": 1, "b": 2, "a": 3}', {"a": 3, "b": 2}),
    (b'{"a": -0}', {"a": 0}),
    (b'{"a": 123456789012345678}', {"a": 123456789012345678}),
])
def test_what_it_reads(data, want):
    assert vocab_from_json(data) == want == json.loads(data) and list(vocab_from_json(data)) == list(want)


@pytest.mark.parametrize("data", [
    b'{"a": 1.5}', b'{"a": 1e3}', b'{"a": 1E3}', b'{"a": 1.}', b'{"a": 01}', b'{"a": -}', b'{"a": --1}',
    b'{"a": 1234567890123456789}', b'{"a": null}', b'{"a": "1"}', b'{"a": [1]}', b'{"a": {"b": 1}}',
    b'{"a": NaN}', b'{"a": Infinity}', b'{"a": 1,}', b'{"a" 1}', b'{"a": 1} x', b'{"a": 1}{}', b'["a"]',
    b'{a: 1}', b"{'a': 1}", b'{"a\x01": 1}', b'{"\\x": 1}', b'{"\\u12": 1}', b'{"\\ud800\\uzzzz": 1}',
    b'{"a": 1', b'{"a', b'{', b'', b' ', b'{"\xff": 1}', b'{"\xed\xa0\x80": 1}', b'{"a": 1 2}',
])
def test_what_it_leaves_to_the_json_module(data):
    """Anything but an object of integers, or anything the json module refuses: None."""
    assert vocab_from_json(data) is None


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(RAW_TEXT, st.integers(0, 10**6), max_size=10), st.booleans(), st.booleans(), LAYOUTS)
def test_a_document_read_apart_is_the_json_modules(vocab, ascii_only, with_merges, layout):
    """`_read_apart`: the vocabulary (and merges) read apart, the rest by the json module: the
    document the json module reads, the vocabulary's dict the same object for object."""
    model = {"type": "WordPiece", "unk_token": "[UNK]", "vocab": vocab}
    if with_merges:
        model = {"type": "BPE", "vocab": vocab, "merges": []}
    doc = {"version": "1.0", "added_tokens": [], "model": model, "decoder": {"prefix": "##"}}
    data = json.dumps(doc, ensure_ascii=ascii_only, **layout).encode("utf-8")
    read = _read_apart(data, "x.json")
    span = vocab_span(data)
    assert span is not None and json.loads(data[span[0]:span[1]]) == vocab
    assert read["model"]["vocab"] == vocab and list(read["model"]["vocab"]) == list(vocab)
    assert {k: v for k, v in read.items() if k != "model"} == {k: v for k, v in doc.items() if k != "model"}
    assert {k: v for k, v in read["model"].items() if k != "merges"} == {k: v for k, v in model.items() if k != "merges"}


@pytest.mark.parametrize("data", [
    b'{"model": {"vocab": [["a", 0.0]]}}',  # a unigram model's
    b'{"model": {"vocab": {}, "vocab": {"a": 0}}}',  # twice: the json module keeps the last
    b'{"model": {"voc\\u0061b": {"a": 0}}}',  # an escape in a key might spell the name
    b'{"models": {"vocab": {"a": 0}}}', b'[{"model": {"vocab": {}}}]', b'{"model": {"vocab": {"a": 0}}',
])
def test_where_no_vocabulary_is_found(data):
    assert vocab_span(data) is None


def test_ids_the_kernel_does_not_read_take_the_json_module():
    data = json.dumps({"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1.0}, "unk_token": "a"}}).encode()
    assert vocab_from_json(data[vocab_span(data)[0]:vocab_span(data)[1]]) is None
    assert _read_apart(data, "x.json") == json.loads(data)  # (then the loader names the float)
