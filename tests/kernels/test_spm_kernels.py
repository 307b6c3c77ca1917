"""The kernels behind sentencepiece models and vocabulary loading (``ubpe_native._spm``,
``ubpe_native._tables``): their ``def`` boundaries refuse bad arguments with ValueError or
TypeError, and the string table finds what a dict finds."""

from __future__ import annotations

import struct
from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._spm import SpmBPE, SpmNormalizer
from ubpe_native._spm_pipeline import SpmPipeline
from ubpe_native._tables import StringIds, length_prefixed, pair_ids_in

I32, I64 = np.int32, np.int64
NO_FALLBACK = np.full(256, -1, I32)


def _bpe(**changes):
    return SpmBPE(*_bpe_arguments(**changes).values())


def _bpe_arguments(**changes) -> dict:
    """`_bpe`'s arguments: pieces 0 unknown, 1 ``a``, 2 ``b``, 3 ``ab`` (unused), 4 ``abb``."""
    args = dict(n_ids=5, left=np.array([1, 3], I32), right=np.array([2, 2], I32), result=np.array([3, 4], I32),
                rank=np.array([0, 1], I64), unused=np.array([0, 0, 0, 1, 0], np.uint8), unit_blob=b"ab",
                unit_offsets=np.array([0, 1, 2], I64), unit_ids=np.array([1, 2], I32),
                unit_frozen=np.zeros(2, np.uint8), expand_ids=np.array([], I32), expand_offsets=np.array([0], I64),
                unk_id=0, byte_fallback=NO_FALLBACK, collapse_unk=True)
    args.update(changes)
    return args


def _normalizer(**changes):
    args = dict(units=np.zeros(0, np.uint32), replacements=b"", dummy=True, extra=True, escape=True, suffix=False,
                blob=b"", offsets=np.array([0], I64), ids=np.zeros(0, I32))
    args.update(changes)
    return SpmNormalizer(*args.values())


def test_hf_unknowns_are_written_as_merge_word_writes_them():
    """``hf_unknowns``: a character whose bytes all have ids becomes them (here é: C3 A9; 中 lacks
    E4's), any other the unknown id, written when the next piece or the end comes (after bytes
    met on the way), fused with ``collapse_unk``; no unknown id (-1) drops it, its neighbours merge."""
    fallback = NO_FALLBACK.copy()
    fallback[0xC3], fallback[0xA9], fallback[0xB8], fallback[0xAD] = 5, 6, 7, 8
    ids = lambda model, text: model.encode(np.frombuffer(text.encode(), np.uint8)).tolist()  # noqa: E731
    hf = dict(n_ids=9, unused=np.zeros(9, np.uint8), byte_fallback=fallback, split_words=False, hf_unknowns=True)
    fused = _bpe(**hf)
    assert ids(fused, "a中é中中b") == [1, 5, 6, 0, 2]
    assert ids(_bpe(**{**hf, "collapse_unk": False}), "a中é中中b") == [1, 5, 6, 0, 0, 0, 2]
    assert ids(_bpe(**{**hf, "unk_id": -1}), "a中bé中") == [3, 5, 6]  # a and b meet: ab
    assert ids(fused, "中") == [0] and ids(_bpe(**{**hf, "unk_id": -1}), "中中") == []
    with pytest.raises(ValueError, match="unk_id"):
        _bpe(**{**hf, "hf_unknowns": False, "unk_id": -1})


def test_spm_bpe_encodes_and_resegments_unused():
    assert _bpe().encode(np.frombuffer(b"abbabx", np.uint8)).tolist() == [4, 1, 2, 0]


@pytest.mark.parametrize("changes", [
    dict(n_ids=0), dict(right=np.array([2], I32)), dict(unused=np.zeros(3, np.uint8)),
    dict(unit_offsets=np.array([0, 2, 1], I64)), dict(unit_ids=np.array([1, 9], I32)),
    dict(result=np.array([3, 7], I32)), dict(rank=np.array([0, -1], I64)), dict(unk_id=5),
    dict(byte_fallback=np.full(255, -1, I32)), dict(unit_blob="ab".encode("utf-16-le")[:2] + b"\xc3\xa9",
                                                  unit_offsets=np.array([0, 1, 4], I64)),
    dict(left=np.array([1, -2], I32)), dict(expand_offsets=np.array([0, 3], I64))])
def test_spm_bpe_checks_its_arguments(changes):
    with pytest.raises((ValueError, TypeError)):
        _bpe(**changes)


@pytest.mark.parametrize("changes", [dict(offsets=np.array([0, 1], I64)), dict(blob=b"ab", offsets=np.array([0, 2], I64),
                                                                              ids=np.zeros(2, I32)),
                                     dict(units=None)])
def test_normalizer_checks_its_arguments(changes):
    with pytest.raises((ValueError, TypeError)):
        _normalizer(**changes)


def test_pipeline_checks_model_and_docs():
    with pytest.raises(TypeError):
        SpmPipeline(_normalizer(), object())
    pipeline = SpmPipeline(_normalizer(), _bpe())
    assert pipeline.encode_batch(["ab b", ""]) == [[3], []] or pipeline.encode_batch(["ab b", ""])[1] == []
    with pytest.raises(TypeError):
        pipeline.encode_batch(["a", 1])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=4), min_size=1, max_size=30),
       st.lists(st.tuples(st.text(alphabet="ab\0é\ud800", max_size=3), st.text(alphabet="ab\0é", max_size=3)),
                max_size=30))
def test_string_table_finds_what_a_dict_finds(texts, pairs):
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    offsets = np.concatenate([[0], np.cumsum([len(e) for e in encoded])]).astype(I64)
    table = StringIds(b"".join(encoded), offsets)
    by_text = dict(zip(encoded, range(len(encoded))))
    pairs = [(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")) for a, b in pairs]
    lines = [a + b" " + b for a, b in pairs]
    text = b"\n".join(lines)
    starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]]).astype(I64) if lines else np.zeros(0, I64)
    cuts = starts + np.array([len(a) for a, _ in pairs], I64)
    ends = starts + np.array([len(line) for line in lines], I64)
    left, right, result = table.pair_ids(text, starts, cuts, ends)
    assert left.tolist() == [by_text.get(a, -1) for a, _ in pairs]
    assert right.tolist() == [by_text.get(b, -1) for _, b in pairs]
    assert result.tolist() == [by_text.get(a + b, -1) for a, b in pairs]
    assert [table.find(e) for e in encoded] == [by_text[e] for e in encoded]


def test_string_table_checks_its_arguments():
    with pytest.raises(ValueError):
        StringIds(b"ab", np.array([0, 3], I64))
    table = StringIds(b"ab", np.array([0, 1, 2], I64))
    with pytest.raises(ValueError):
        table.pair_ids(b"a b", np.array([0], I64), np.array([5], I64), np.array([3], I64))
    with pytest.raises(ValueError):
        table.pair_ids(b"a b", np.array([0], I64), np.array([1], I64), np.array([9], I64))
    with pytest.raises(ValueError):
        table.pair_ids(b"a b", np.array([0, 0], I64), np.array([1], I64), np.array([3], I64))


@given(st.lists(st.text(alphabet="ab é\0", max_size=3), max_size=12),
       st.lists(st.tuples(st.text(alphabet="ab é\0", max_size=3), st.text(alphabet="ab é\0", max_size=3),
                          st.sampled_from(["line", "list", "tuple"])), max_size=30))
def test_pair_ids_in_finds_what_the_dict_finds(texts, rules):
    vocab = {text: i for i, text in enumerate(texts)}
    made = [f"{a} {b}" if kind == "line" else [a, b] if kind == "list" else (a, b) for a, b, kind in rules]
    found = pair_ids_in(vocab, made)
    if any(kind == "line" and (" " in a or " " in b) for a, b, kind in rules):
        assert found is None  # a line with two spaces: the caller names it
        return
    left, right, result, repeated = found
    assert all(type(a) is array and a.typecode == "i" for a in (left, right, result))  # no numpy needed
    assert left.tolist() == [vocab.get(a, -1) for a, _, _ in rules]
    assert right.tolist() == [vocab.get(b, -1) for _, b, _ in rules]
    assert result.tolist() == [vocab.get(a + b, -1) for a, b, _ in rules]
    pairs = list(zip(left.tolist(), right.tolist()))
    assert repeated == (len(set(pairs)) < len(pairs))


def test_pair_ids_in_refuses_what_it_cannot_read():
    assert pair_ids_in({"a": 0}, ["a"]) is None  # no space
    assert pair_ids_in({"a": 0}, [["a", "b", "c"]]) is None
    assert pair_ids_in({"a": 0}, [("a", 1)]) is None
    assert pair_ids_in({"a": 0}, [b"a b"]) is None
    for value in (-1, 2**31, "0", 1.0, True):
        with pytest.raises(ValueError, match="no non-negative int32"):
            pair_ids_in({"a": value}, ["a a"])
    with pytest.raises(TypeError):
        pair_ids_in(None, [])
    with pytest.raises(TypeError):
        pair_ids_in({}, ("a b",))


def _array(*strings: bytes) -> bytes:
    return b"".join(struct.pack("<Q", len(s)) + s for s in strings)


def test_length_prefixed_reads_and_refuses_bad_arrays():
    data = b"xx" + _array(b"ab", b"", "é".encode(), b"a\0b")
    blob, end, nul_inside = length_prefixed(np.frombuffer(data, np.uint8), 2, 4, 100)
    assert (blob, end, nul_inside) == (b"ab\0\0\xc3\xa9\0a\0b", len(data), True)
    assert length_prefixed(np.frombuffer(data, np.uint8), 2, 0, 100) == (b"", 2, False)
    for cut in (5, 12, len(data) - 1):
        with pytest.raises(ValueError, match="offset"):
            length_prefixed(np.frombuffer(data[:cut], np.uint8), 2, 4, 100)
    with pytest.raises(ValueError, match="corrupt string length"):
        length_prefixed(np.frombuffer(data, np.uint8), 2, 4, 1)
    with pytest.raises(ValueError):
        length_prefixed(np.frombuffer(data, np.uint8), -1, 1, 100)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=12),
       st.lists(st.text(alphabet="ab▁c", max_size=12), min_size=1, max_size=8), st.booleans())
def test_words_merge_apart_as_the_whole_text(picks, texts, fallback):
    """Rules that never join a symbol to one starting with ``▁``: ``split_words`` (words
    merged apart, cached) gives the ids of merging the whole text; the pipeline's batch is the
    texts one by one, a trigger or a None gives None in its place."""
    spelled = ["<unk>", "a", "b", "▁"]
    left, right, result = [], [], []
    for i, j in picks:
        a, b = spelled[i % len(spelled)], spelled[j % len(spelled)]
        if b.startswith("▁") or a == "<unk>" or b == "<unk>":
            continue
        if a + b not in spelled:
            spelled.append(a + b)
        left.append(spelled.index(a))
        right.append(spelled.index(b))
        result.append(spelled.index(a + b))
    n = len(spelled)
    units = "ab▁".encode()
    byte_fallback = np.full(256, 1 if fallback else -1, I32)

    def model(split):
        return SpmBPE(n, np.array(left, I32), np.array(right, I32), np.array(result, I32),
                      np.arange(len(left), dtype=I64), np.zeros(n, np.uint8), units, np.array([0, 1, 2, 5], I64),
                      np.array([1, 2, 3], I32), np.zeros(3, np.uint8), np.array([], I32), np.array([0], I64),
                      0, byte_fallback, not fallback, split)

    whole, split = model(False), model(True)
    for text in texts:
        data = np.frombuffer(text.encode(), np.uint8)
        assert split.encode(data).tolist() == whole.encode(data).tolist()
    identity = _normalizer(dummy=False, extra=False, escape=False)
    pipeline = SpmPipeline(identity, split, False, b"cc", np.array([0, 2], I64))
    want = [None if "cc" in t else whole.encode(np.frombuffer(t.encode(), np.uint8)).tolist() for t in texts]
    assert pipeline.encode_batch(texts + [None]) == want + [None]
    assert [pipeline.encode_batch([t])[0] for t in texts] == want


def test_pipeline_prefix_unless_space_and_bad_triggers():
    pipeline = SpmPipeline(_normalizer(dummy=False, extra=False), _bpe(), True)
    assert pipeline.encode_batch(["ab", " ab", "▁ab", ""]) == [pipeline.encode_batch(["▁ab"])[0]] * 3 + [[]]
    with pytest.raises(ValueError):
        SpmPipeline(_normalizer(), _bpe(), False, b"ab", np.array([0, 3], I64))
    with pytest.raises(ValueError):
        SpmPipeline(_normalizer(), _bpe(), False, b"ab")
    with pytest.raises(UnicodeEncodeError):
        pipeline.encode_batch(["a\ud800"])


def test_pipeline_cuts_triggers_leftmost_longest():
    """Triggers with an id are cut out leftmost-longest and written as that id, the stretches
    between encoded apart (a prefix after a cut only with ``prefix_after_cut``); a text holding
    a hand-back trigger (-1) anywhere, even inside a cut one, is None."""
    identity = _normalizer(dummy=False, extra=False, escape=False)
    blob, offsets = b"abbbaxx", np.array([0, 2, 3, 5, 7], I64)  # "ab" "b" "ba" "xx"
    pipeline = SpmPipeline(identity, _bpe(n_ids=12, unused=np.zeros(12, np.uint8)), False, blob, offsets,
                           np.array([7, 8, 10, -1], I32))
    # triggers: "ab" 7, "b" 8, "ba" 10, "xx" hand back
    assert pipeline.encode_batch(["aab", "bab", "a", "abxx", ""]) == [[1, 7], [10, 8], [1], None, []]
    prefixed = SpmPipeline(_normalizer(dummy=False, extra=False), _bpe(n_ids=12, unused=np.zeros(12, np.uint8)),
                           True, b"b", np.array([0, 1], I64), np.array([8], I32), True)
    plain = SpmPipeline(_normalizer(dummy=False, extra=False), _bpe(n_ids=12, unused=np.zeros(12, np.uint8)), True)
    assert prefixed.encode_batch(["aba"]) == [plain.encode_batch(["a"])[0] + [8] + plain.encode_batch(["a"])[0]]
    for ids in (np.array([7, 8], I32), np.array([7, 8, 10, -2], I32), np.array([7, 8, 10, 12], I32)):
        with pytest.raises(ValueError):
            SpmPipeline(identity, _bpe(n_ids=12, unused=np.zeros(12, np.uint8)), False, blob, offsets, ids)
