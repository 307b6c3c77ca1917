"""The imported models' kernels (`_merges.PairMerges`, `_unigram.UnigramLattice`) check every
argument at their ``def`` boundary: bad arrays are a ValueError, never a crash; the unigram
lattice is a short reference Viterbi's, in float32 (sentencepiece) and double (llama.cpp) sums."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._merges import DROPPED, FUSED, PairMerges, pack_units
from ubpe_native._unigram import UnigramLattice

i32 = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
i64 = lambda values: np.asarray(values, dtype=np.int64)  # noqa: E731


def merges(**changes):
    """A byte-level kernel: ids 0..255 the bytes, 256 = 'ab' (rank 0), 257 = 'abc' (rank 1)."""
    args = dict(n_ids=258, left=i32([97, 256]), right=i32([98, 99]), result=i32([256, 257]),
                rank=i64([0, 1]), expand_offsets=i64([0]), expand_ids=i32([]),
                unit_keys=pack_units([bytes([b]) for b in range(256)]), unit_id_values=i32(range(256)),
                byte_fallback=np.full(256, -1, np.int32), utf8_units=False,
                whole_blob=np.zeros(0, np.uint8), whole_offsets=i64([0]), whole_ids=i32([]))
    args.update(changes)
    return PairMerges(*args.values())


def test_a_good_kernel_merges_by_rank():
    data = np.frombuffer(b"abcab", dtype=np.uint8)
    assert merges().encode(data, i64([0, 3, 5])).tolist() == [257, 256]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=12), max_size=8))
def test_ids_as_a_list_are_the_arrays(words):
    """``encode(..., as_list=True)`` (a model's first texts, without numpy) gives the array's ids,
    from buffers that are no numpy arrays."""
    from array import array
    from itertools import accumulate

    kernel = merges()
    bounds = array("q", accumulate(map(len, words), initial=0))
    listed = kernel.encode(b"".join(words), bounds, as_list=True)
    assert type(listed) is list and listed == kernel.encode(b"".join(words), bounds).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text("abcx", min_size=1, max_size=5).map(str.encode), st.integers(0, 257)), max_size=30),
       st.lists(st.text("abcx", min_size=1, max_size=5).map(str.encode), max_size=10))
def test_whole_words_become_their_token_the_last_id_winning(table, words):
    """llama.cpp's ``ignore_merges``: a word in the whole-word table is its (last) id, any other
    word is merged; the table is read by every thread at once, so a miss must not change it."""
    from array import array
    from itertools import accumulate

    blob = b"".join(word for word, _ in table)
    kernel = merges(whole_blob=np.frombuffer(blob, np.uint8) if blob else np.zeros(0, np.uint8),
                    whole_offsets=i64(list(accumulate((len(w) for w, _ in table), initial=0))),
                    whole_ids=i32([token for _, token in table]))
    plain, last = merges(), dict(table)
    for word in words + [word for word, _ in table]:
        bounds = array("q", [0, len(word)])
        expected = [last[word]] if word in last else plain.encode(word, bounds, as_list=True)
        assert kernel.encode(word, bounds, as_list=True) == expected


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(left=i32([97, 999])), "left may hold ids"),
        (dict(result=i32([256, -3])), "result may hold ids"),
        (dict(rank=i64([0, -1])), "rank -1 of rule 1"),
        (dict(right=i32([98])), "one length"),
        (dict(expand_offsets=i64([0, 2]), expand_ids=i32([1])), "expand_offsets must start at 0 and end at 1"),
        (dict(whole_blob=np.frombuffer(b"ab", np.uint8), whole_offsets=i64([0, 3]), whole_ids=i32([256])),
         "whole_offsets must start at 0 and end at 2"),
        (dict(whole_blob=np.frombuffer(b"ab", np.uint8), whole_offsets=i64([0, 2]), whole_ids=i32([999])),
         "whole_ids may hold ids"),
        (dict(byte_fallback=np.full(255, -1, np.int32)), "256 ids"),
        (dict(unit_id_values=i32(range(1, 257)) + 300), "unit 0 has an id"),
    ],
)
def test_bad_merge_tables_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        merges(**changes)


@pytest.mark.parametrize("bounds", [[0, 9], [3, 1], [-1, 2], []])
def test_bad_bounds_are_refused(bounds):
    with pytest.raises(ValueError, match="bounds"):
        merges().encode(np.frombuffer(b"abc", np.uint8), i64(bounds))


def lattice(**changes):
    blob = np.frombuffer(b"aab", dtype=np.uint8)
    args = dict(blob=blob, offsets=i64([0, 1, 2, 3]), ids=i32([0, 1, 2]),
                scores=np.asarray([-1.0, -2.0, -1.5], np.float32), user_defined=np.zeros(3, np.uint8),
                unk_id=3, unk_score=-10.0, byte_fallback=np.full(256, -1, np.int32))
    args.update(changes)
    return UnigramLattice(*args.values())


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(offsets=i64([0, 1, 1, 3])), "offsets must grow by at least 1"),
        (dict(offsets=i64([0, 1, 2, 4])), "offsets must start at 0 and end at 3"),
        (dict(scores=np.asarray([-1.0, np.nan, 0.0], np.float32)), "not finite"),
        (dict(ids=i32([0, -5, 2])), "negative id"),
        (dict(unk_id=-1), "unk_id"),
        (dict(byte_fallback=np.full(256, -2, np.int32)), ">= -1"),
    ],
)
def test_bad_unigram_tables_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        lattice(**changes)


def viterbi_reference(pieces: dict[bytes, tuple[int, float]], unk_id: int, unk_score: float, data: bytes,
                      in_float32: bool) -> list[int]:
    """llama.cpp's ``llm_tokenizer_ugm::tokenize`` on ASCII ``data`` (one byte, one character):
    from each position every piece that matches offers ``best + score`` to its end, shortest
    first, replacing the best only when strictly greater; an unknown node where no piece covers
    the character; runs of unknown ids collapse. ``in_float32``: every sum rounded to float32
    (sentencepiece's arithmetic, short texts: no renormalisation)."""
    add = (lambda x, y: float(np.float32(np.float32(x) + np.float32(y)))) if in_float32 else (lambda x, y: x + y)
    best: list[tuple[float, int, int] | None] = [None] * (len(data) + 1)
    best[0] = (0.0, 0, -1)
    for start in range(len(data)):
        till = best[start][0]
        for end in range(start + 1, len(data) + 1):
            found = pieces.get(data[start:end])
            if found is not None:
                candidate = add(till, found[1])
                if best[end] is None or candidate > best[end][0]:
                    best[end] = (candidate, start, found[0])
        if data[start : start + 1] not in pieces:
            candidate = add(till, unk_score)
            if best[start + 1] is None or candidate > best[start + 1][0]:
                best[start + 1] = (candidate, start, unk_id)
    out, end = [], len(data)
    while end > 0:
        _, start, token = best[end]
        if not (out and token == unk_id and out[-1] == unk_id):
            out.append(token)
        end = start
    return out[::-1]


@settings(max_examples=150, deadline=None)
@given(pieces=st.dictionaries(st.text("abc", min_size=1, max_size=3).map(str.encode),
                              st.floats(-4, 0, width=32), min_size=1, max_size=10),
       text=st.text("abcd", max_size=12).map(str.encode), double_sums=st.booleans())
def test_unigram_lattice_is_the_reference_viterbi(pieces, text, double_sums):
    """``double_sums``: llama.cpp's sums; else sentencepiece's float32 ones (their near ties
    resolve differently: `tests/spec/test_llama_vocabs.py` shows one against both systems)."""
    keys = sorted(pieces)
    table = {key: (k + 1, pieces[key]) for k, key in enumerate(keys)}
    unk_score = float(np.float32(min(pieces.values())) - np.float32(10.0))
    kernel = UnigramLattice(np.frombuffer(b"".join(keys), np.uint8), i64(np.cumsum([0] + [len(k) for k in keys])),
                            i32(range(1, len(keys) + 1)), np.asarray([pieces[k] for k in keys], np.float32),
                            np.zeros(len(keys), np.uint8), 0, unk_score, np.full(256, -1, np.int32),
                            double_sums=double_sums)
    want = viterbi_reference(table, 0, unk_score, text, not double_sums)
    assert kernel.encode(np.frombuffer(text, np.uint8)).tolist() == want
    assert kernel.double_sums == double_sums


def test_the_kernel_refuses_hf_units_it_cannot_write():
    """`PairMerges` takes DROPPED and FUSED units only as it can write them: a FUSED unit with
    an unknown token (``fuse_id``), neither with byte fallback; and drops or fuses as HF."""
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
    units = pack_units([b"a", b"b", b"c"])

    def table(unit_ids, fallback=-1, **options):
        return PairMerges(3, i32(0), i32(0), i32(1), np.array([0]), np.array([0], np.int64), i32(), units,
                          i32(*unit_ids), np.full(256, fallback, np.int32), False, b"", np.array([0], np.int64),
                          i32(), **options)

    with pytest.raises(ValueError, match="fuse_id"):
        table([0, FUSED, FUSED])
    with pytest.raises(ValueError, match="byte fallback"):
        table([0, DROPPED, 2], fallback=2)
    words = np.frombuffer(b"abba", np.uint8), np.array([0, 4])
    assert table([0, DROPPED, 2]).encode(*words).tolist() == [1]  # a a merge once the b's are gone
    assert table([0, FUSED, 2], fuse_id=2).encode(*words).tolist() == [0, 2, 0]  # one unknown for "bb"
