"""``ubpe_native._tables``' reading of tokenizer.json's merge rules from the file's bytes
(``merges_span``, ``pair_ids_in_json``): what ``json.loads`` then ``pair_ids_in`` give, on rules
and documents written every way the json module writes them (escapes, surrogate pairs, ASCII
or not, any indentation); or None, and then only where the reader says it refuses."""

from __future__ import annotations

import json
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._tables import merges_span, pair_ids_in, pair_ids_in_json

#: characters that JSON escapes, or writes in two UTF-16 units, or that are no scalar value
ALPHABET = ["a", "b", "é", " ", "\0", '"', "\\", "/", "\n", "\t", "\x7f", "\u2028", "😀", "Ġ", "\ud800"]
texts = st.text(alphabet=st.sampled_from(ALPHABET), max_size=4)


def _dumped(value, ascii_only: bool, indent) -> bytes:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    if not ascii_only and any("\ud800" in part for part in _strings(value)):
        text = json.dumps(value, ensure_ascii=True, indent=indent)  # a lone surrogate is no UTF-8
    return text.encode("utf-8")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)


@settings(max_examples=300, deadline=None)
@given(st.lists(texts, max_size=10, unique=True),
       st.lists(st.tuples(texts, texts, st.booleans()), max_size=25),
       st.booleans(), st.sampled_from([None, 0, 1, 3]))
def test_the_rules_bytes_read_as_the_decoded_rules(keys, rules, ascii_only, indent):
    vocab = {text: 3 * i + 1 for i, text in enumerate(keys)}  # ids with gaps
    made = [f"{a} {b}" if line else [a, b] for a, b, line in rules]
    data = _dumped(made, ascii_only, indent)
    found = pair_ids_in_json(vocab, data)
    want = pair_ids_in(vocab, json.loads(data))
    refused = (any(line and (" " in a or " " in b) for a, b, line in rules)  # not one space
               or any("\ud800" in text for text in [*keys, *(a for a, _, _ in rules), *(b for _, b, _ in rules)])
               or not made)
    if refused:
        assert found is None or want is not None and _same(found, want)
        return
    assert found is not None and want is not None
    assert _same(found, want)


def _same(found, want) -> bool:
    return all(type(a) is array and a.typecode == "i" and a == b for a, b in zip(found[:3], want[:3])) \
        and found[3] == want[3]


def test_a_pair_repeated_is_found_among_rules_of_one_result():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    # three rules make "abc"; the third repeats the second: only a map of pairs tells it
    for rules, repeated in ((["a bc", "ab c"], False), (["a bc", "ab c", "ab c"], True),
                            (["a b", "x y", "x y"], True), (["a b", "b c"], False)):
        assert pair_ids_in_json(vocab, json.dumps(rules).encode())[3] is repeated, rules


def test_ids_far_apart_are_compared_in_a_set():
    """A few tokens with ids near 2**31: no table by id (it would be 8 GB)."""
    vocab = {"a": 2**31 - 2, "b": 2**31 - 3, "ab": 2**31 - 4}
    *ids, repeated = pair_ids_in_json(vocab, b'["a b", "b a", ["a", "b"]]')
    assert [a.tolist() for a in ids] == [[2**31 - 2, 2**31 - 3, 2**31 - 2], [2**31 - 3, 2**31 - 2, 2**31 - 3],
                                         [2**31 - 4, -1, 2**31 - 4]] and repeated


@pytest.mark.parametrize("data", [
    b'["a b",]', b'["a b" "a b"]', b'["a b"', b'[1]', b'[["a"]]', b'[["a", "b", "c"]]', b'["a\x01 b"]',
    b'["a\\x b"]', b'["\\ud800 a"]', b'["\\udc00 a"]', b'["\\ud800\\u0041 a"]', b'["ab"]', b'["a b c"]',
    b'["a b"] ', b'', b'{"a b": 1}', b'["a \\u00"]',
])
def test_what_the_reader_does_not_read_exactly_is_refused(data):
    """A trailing comma, a missing one, a rule that is no string or pair, a control character,
    an unknown escape, a lone surrogate's escape, a line without exactly one space, bytes after
    the array: None (the caller decodes the rules, and names what is wrong)."""
    assert pair_ids_in_json({"a": 0, "b": 1, "ab": 2}, data) is None


def test_a_vocabulary_it_cannot_hold_is_refused():
    rules = b'["a b"]'
    for vocab in ({"a": -1, "b": 1}, {"a": 2**31, "b": 1}, {"a": True, "b": 1}, {"a": 1.0, "b": 1},
                  {"a": 0, "\ud800": 1}, {b"a": 0}):
        assert pair_ids_in_json(vocab, rules) is None, vocab
    assert pair_ids_in_json({"a": 0, "b": 1}, rules)[2].tolist() == [-1]


json_values = st.recursive(st.none() | st.booleans() | st.integers() | texts,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
                           max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["version", "normalizer", "added_tokens", "x"]), json_values, max_size=3),
       st.dictionaries(st.sampled_from(["type", "vocab", "unk_token", "y"]), json_values, max_size=3),
       st.lists(st.one_of(texts, st.lists(texts, min_size=2, max_size=2)), max_size=6),
       st.integers(0, 3), st.integers(0, 3), st.booleans(), st.sampled_from([None, 1, 2]))
def test_the_span_is_model_merges_wherever_it_stands(top, model, merges, at_top, at_model, ascii_only, indent):
    model_items = list(model.items())
    model_items.insert(min(at_model, len(model_items)), ("merges", merges))
    top_items = list(top.items())
    top_items.insert(min(at_top, len(top_items)), ("model", dict(model_items)))
    data = _dumped(dict(top_items), ascii_only, indent)
    found = merges_span(data)
    assert found is not None
    start, end, count = found
    assert json.loads(data[start:end]) == merges and count == len(merges)


@pytest.mark.parametrize("data", [
    b'{"model": {"merges": ["a b"]}, "model": {"merges": []}}',  # two models: json keeps the last
    b'{"model": {"merges": ["a b"], "merges": []}}',
    b'{"model": {"merg\\u0065s": ["a b"]}}',  # (a key spelled with an escape is not looked for)
    b'{"model": {"merges": "a b"}}', b'{"model": ["merges"]}', b'["model"]', b'',
    b'{"model": {"merges": ["a \xff b"]}}',  # not UTF-8
    b'{"model": {"merges": ["a b]}}', b'{"model": {"vocab": {"a": 0}}}',
])
def test_a_document_not_read_so_has_no_span(data):
    assert merges_span(data) is None


@pytest.mark.parametrize("data", [
    b'{"x": {"merges": ["a b"]}, "model": {"merges": []}}',  # two: the model's, as read whole
    b'{"model": {"merges": ["a b"], "y": 1}, "x": [{"merges": []}]}',
])
def test_of_two_arrays_named_merges_the_span_is_the_model_s(data):
    start, end, count = merges_span(data)
    assert json.loads(data[start:end]) == json.loads(data)["model"]["merges"] and count == len(json.loads(data[start:end]))


@pytest.mark.parametrize("data", [
    b'{"m\\u006fdel": {"merges": ["a b"]}}',  # the one array named merges: the caller proves whose
    b'{"model": {"merges": ["a b"]}', b'{"model" {"merges": ["a b"]}}',  # (and the json module refuses these)
])
def test_one_array_named_merges_is_the_span(data):
    start, end, count = merges_span(data)
    assert data[start:end] == b'["a b"]' and count == 1
