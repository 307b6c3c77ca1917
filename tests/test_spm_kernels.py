"""The kernels behind sentencepiece models and vocabulary loading (``ubpe_native._spm``,
``ubpe_native._tables``): their ``def`` boundaries refuse bad arguments with ValueError or
TypeError, and the string table finds what a dict finds."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._spm import SpmBPE, SpmNormalizer, SpmPipeline
from ubpe_native._tables import StringIds, length_prefixed

I32, I64 = np.int32, np.int64
NO_FALLBACK = np.full(256, -1, I32)


def _bpe(**changes):
    args = dict(n_ids=5, left=np.array([1, 3], I32), right=np.array([2, 2], I32), result=np.array([3, 4], I32),
                rank=np.array([0, 1], I64), unused=np.array([0, 0, 0, 1, 0], np.uint8), unit_blob=b"ab",
                unit_offsets=np.array([0, 1, 2], I64), unit_ids=np.array([1, 2], I32),
                unit_frozen=np.zeros(2, np.uint8), expand_ids=np.array([], I32), expand_offsets=np.array([0], I64),
                unk_id=0, byte_fallback=NO_FALLBACK, collapse_unk=True)
    args.update(changes)
    return SpmBPE(*args.values())


def _normalizer(**changes):
    args = dict(units=np.zeros(0, np.uint32), replacements=b"", dummy=True, extra=True, escape=True, suffix=False,
                blob=b"", offsets=np.array([0], I64), ids=np.zeros(0, I32))
    args.update(changes)
    return SpmNormalizer(*args.values())


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
