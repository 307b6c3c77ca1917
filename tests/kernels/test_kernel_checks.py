"""Every ``def`` of the kernels checks its arguments: bad input raises ValueError/TypeError,
never reads out of bounds or crashes (the shared checks live in ``ubpe_native/_checks.pxd``)."""

from __future__ import annotations

import numpy as np
import pytest

from ubpe_native._classic import PairTable, encode_words
from ubpe_native._combine import walk
from ubpe_native._fit import PairMerger
from ubpe_native._lattice_cache import encode_parts
from ubpe_native._parts import PartCounter
from ubpe_native._paths import kbest_paths, longest_prefix, longest_token
from ubpe_native._radix import RadixTree
from ubpe_native._ranked import MergeTable
from ubpe_native._sampling import SegmentLattice
from ubpe_native._score import part_scores, score_tokens

I32, I64 = np.int32, np.int64
# token 2 = [0 1] over base ids 0, 1
TREE = RadixTree(2, np.array([0, 2]), np.array([0, 1], I32))
TABLE = PairTable(np.array([0], I32), np.array([1], I32), np.array([2], I32))
RANKED = MergeTable(2, np.array([0, 2], I64), np.array([0, 1], I32), np.array([0], I64))
WEIGHTS = np.array([0.0, 0.0, 0.5])
SYMBOLS = np.array([0, 1, 0], I32)

# offsets that do not cut SYMBOLS (3 items) into runs
BAD_OFFSETS = [np.array([], I64), np.array([1, 3], I64), np.array([0, 2], I64), np.array([0, 2, 1, 3], I64)]
# symbols that are not base ids of TREE / TABLE / RANKED
BAD_SYMBOLS = [np.array([0, 5, 0], I32), np.array([0, -1, 0], I32)]

CALLS = {
    "lattice": lambda s, o: encode_parts(TREE, WEIGHTS, s, o, 2),
    "kbest_paths": lambda s, o: kbest_paths(TREE, np.ones(3), s, o, 2),
    "longest_prefix": lambda s, o: longest_prefix(TREE, s, o),
    "longest_token": lambda s, o: longest_token(TREE, s, o),
    "classic": lambda s, o: encode_words(TABLE, WEIGHTS, np.where(s == 5, 7, s).astype(I32), o),
    "ranked": lambda s, o: RANKED.encode(s, o, False, 0.0, 0),
    "score_tokens": lambda s, o: score_tokens(WEIGHTS, np.where(s == 5, 7, s).astype(I32), o),
    "part_scores": lambda s, o: part_scores(WEIGHTS, np.where(s == 5, 7, s).astype(I32), o),
    "fit": lambda s, o: PairMerger(s, o, np.zeros(len(o) - 1 if len(o) else 0, I32), 1, 2),
}


@pytest.mark.parametrize("name", CALLS)
def test_good_arguments_pass(name):
    CALLS[name](SYMBOLS, np.array([0, 3], I64))


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("offsets", BAD_OFFSETS, ids=lambda o: str(o.tolist()))
def test_offsets_are_checked(name, offsets):
    with pytest.raises(ValueError):
        CALLS[name](SYMBOLS, offsets)


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("symbols", BAD_SYMBOLS, ids=lambda s: str(s.tolist()))
def test_ids_are_checked(name, symbols):
    with pytest.raises(ValueError):
        CALLS[name](symbols, np.array([0, 3], I64))


def test_none_is_refused_where_a_structure_or_array_is_expected():
    offsets = np.array([0, 3], I64)
    for call in (
        lambda: encode_parts(None, WEIGHTS, SYMBOLS, offsets),
        lambda: kbest_paths(None, np.ones(3), SYMBOLS, offsets),
        lambda: longest_prefix(None, SYMBOLS, offsets),
        lambda: encode_words(None, WEIGHTS, SYMBOLS, offsets),
        lambda: RANKED.encode(None, offsets, False, 0.0, 0),
        lambda: walk(None, offsets, SYMBOLS, np.zeros(1), 1),
        lambda: PairMerger(None, offsets, np.zeros(1, I32), 1, 2),
        lambda: PartCounter().add(None, offsets, np.zeros(1, I32), 1),
    ):
        with pytest.raises(TypeError):
            call()


def test_walk_checks_its_candidate_lists():
    tokens, scores = np.array([5, 1, 2, 3], I32), np.array([1.0, 0.5, 0.0])
    with pytest.raises(ValueError, match="candidate_offsets"):
        walk(np.array([0, 2, 4], I64), np.array([0, 1, 3, 4], I64), tokens, scores, 2)
    with pytest.raises(ValueError, match="token_offsets"):
        walk(np.array([0, 2, 3], I64), np.array([0, 1, 3, 5], I64), tokens, scores, 2)
    with pytest.raises(ValueError, match="no candidate"):
        walk(np.array([0, 0, 3], I64), np.array([0, 1, 3, 4], I64), tokens, scores, 2)
    with pytest.raises(ValueError, match="top_n"):
        walk(np.array([0, 2, 3], I64), np.array([0, 1, 3, 4], I64), tokens, scores, 0)


def test_fit_checks_documents_and_ids():
    offsets = np.array([0, 3], I64)
    with pytest.raises(ValueError, match="doc_of_part"):
        PairMerger(SYMBOLS, offsets, np.array([1], I32), 1, 2)
    with pytest.raises(ValueError, match="doc_of_part"):
        PairMerger(SYMBOLS, offsets, np.array([0, 0], I32), 1, 2)
    with pytest.raises(ValueError, match="non-negative"):
        PairMerger(SYMBOLS, offsets, np.array([0], I32), -1, 2)


def test_fit_never_wraps_token_ids():
    # once: the id after 2**31 - 1 was -2**31, and merges went on with negative tokens
    merger = PairMerger(np.array([0, 1] * 4, I32), np.array([0, 8], I64), np.zeros(1, I32), 1, 2**31 - 2)
    assert merger.step(1) == 1 and merger.next_token == 2**31 - 1
    with pytest.raises(ValueError, match="below 2\\*\\*31 - 1"):
        merger.step(1)
    assert merger.next_token == 2**31 - 1


def test_tables_check_their_pieces():
    with pytest.raises(ValueError, match="piece_offsets"):
        RadixTree(2, np.array([0, 0, 2]), np.array([0, 1], I32))  # an empty piece
    with pytest.raises(ValueError, match="pieces"):
        RadixTree(2, np.array([0, 2]), np.array([0, -1], I32))
    with pytest.raises(ValueError, match="piece_offsets"):
        MergeTable(2, np.array([0, 1], I64), np.array([0], I32), np.array([0], I64))  # one symbol
    with pytest.raises(ValueError, match="pieces"):
        MergeTable(2, np.array([0, 2], I64), np.array([0, 2], I32), np.array([0], I64))
    with pytest.raises(ValueError, match="same length"):
        PairTable(np.array([0], I32), np.array([1, 1], I32), np.array([2], I32))


@pytest.mark.parametrize("name", ["tfidf", "classic", "ranked", "dropout", "fewest", "additive",
                                  "longest_prefix", "longest_suffix", "longest_token"])
def test_every_encoder_checks_its_parts_the_same_way(name):
    # one checked flattening (ubpe.encoders.flatten_parts) in front of every kernel
    from ubpe.encoders import make_encoder
    from ubpe.errors import SymbolTypeError, UnknownSymbolError
    from ubpe.vocabulary import Vocabulary

    vocabulary = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    options = {"weights": np.zeros(3)} if name == "additive" else {}
    encoder = make_encoder(name, vocabulary, **options)
    assert encoder.encode([np.array([0, 1]), np.array([], I32), [1, 0]])[0][0] in ([2, 1, 0], [0, 1, 1, 0])
    for bad in ([np.array([0, 2])], [np.array([-1])], [np.array([2**32])]):
        with pytest.raises(UnknownSymbolError):
            encoder.encode(bad)
    for bad in ([np.array([0.5])], [np.array([[0, 1]])], [np.array([0]), np.array([[0, 1]])]):
        with pytest.raises(SymbolTypeError):
            encoder.encode(bad)


@pytest.mark.parametrize("offsets", BAD_OFFSETS, ids=lambda o: str(o.tolist()))
def test_part_counter_checks_offsets(offsets):
    with pytest.raises(ValueError):
        PartCounter().add(SYMBOLS, offsets, np.zeros(max(len(offsets) - 1, 0), I32), 1)
    counter = PartCounter()
    counter.add(SYMBOLS, np.array([0, 3], I64), np.zeros(1, I32), 1)
    assert counter.n_parts == 1


# -- every array-like argument is converted with checks (ubpe_native._checks.as_array) -----

# symbols that are no int32 ids: once cast silently (2**32 -> 0, 0.5 -> 0, True -> 1)
UNCASTABLE = [
    (np.array([0, 2**32], I64), ValueError, "outside"),
    (np.array([0.5, 1.0]), TypeError, "integers"),
    (np.array([True, False]), TypeError, "integers"),
    ([0, 2**70], TypeError, "integers"),
]
ARRAY_CALLS = {
    "lattice": lambda s: encode_parts(TREE, WEIGHTS, s, np.array([0, len(s)]), 2),
    "kbest_paths": lambda s: kbest_paths(TREE, np.ones(3), s, np.array([0, len(s)])),
    "longest_prefix": lambda s: longest_prefix(TREE, s, np.array([0, len(s)])),
    "longest_token": lambda s: longest_token(TREE, s, np.array([0, len(s)])),
    "classic": lambda s: encode_words(TABLE, WEIGHTS, s, np.array([0, len(s)])),
    "pair_table": lambda s: PairTable(s, np.array([1, 1], I32), np.array([2, 3], I32)),
    "part_scores": lambda s: part_scores(WEIGHTS, s, np.array([0, len(s)])),
    "radix_pieces": lambda s: RadixTree(2, np.array([0, len(s)]), s),
    "radix_insert": lambda s: RadixTree(2).insert(s, 5),
    "radix_get": lambda s: TREE.get(s),
    "prefix_matches": lambda s: TREE.prefix_matches(s),
    "segment_lattice": lambda s: SegmentLattice(TREE, s, np.array([0, len(s)])),
}


@pytest.mark.parametrize("name", ARRAY_CALLS)
@pytest.mark.parametrize(("symbols", "error", "message"), UNCASTABLE, ids=["2**32", "float", "bool", "2**70"])
def test_ids_are_never_cast_silently(name, symbols, error, message):
    with pytest.raises(error, match=message):
        ARRAY_CALLS[name](symbols)


def test_offsets_are_never_cast_silently():
    with pytest.raises(ValueError, match="outside"):  # 2**64 - 1 as int64 was -1
        longest_prefix(TREE, SYMBOLS, np.array([0, 3, 2**64 - 1], np.uint64))
    with pytest.raises(TypeError, match="integers"):
        longest_prefix(TREE, SYMBOLS, np.array([0.0, 3.5]))


def test_empty_lists_and_other_integer_types_still_pass():
    assert longest_prefix(TREE, [], [0]).tolist() == []
    assert longest_prefix(TREE, np.array([0, 1], np.uint8), np.array([0, 2], np.int32)).tolist() == [2]
    assert TREE.get(np.array([0, 1], np.int64)) == 2


def test_none_is_refused_by_the_byte_kernels():
    from ubpe_native._merges import PairMerges
    from ubpe_native._unigram import UnigramLattice

    i32 = lambda *v: np.array(v, I32)  # noqa: E731
    merges = [4, i32(0), i32(1), i32(2), np.array([0]), np.array([0], I64), i32(), np.zeros(0, np.uint64),
              i32(), np.full(256, -1, I32), False, b"", np.array([0], I64), i32()]
    table = PairMerges(*merges)
    unigram = [b"a", np.array([0, 1]), i32(3), np.array([-1.0], np.float32), np.zeros(1, np.uint8),
               0, -11.0, np.full(256, -1, I32)]
    lattice = UnigramLattice(*unigram)
    calls = [lambda: table.encode(None, np.array([0])), lambda: table.encode(b"a", None),
             lambda: lattice.encode(None), lambda: SegmentLattice(None, SYMBOLS, np.array([0, 3]))]
    for k in (1, 5, 7, 9, 11, 12, 13):
        calls.append(lambda k=k: PairMerges(*merges[:k], None, *merges[k + 1:]))
    for k in (0, 1, 2, 3, 4, 7):
        calls.append(lambda k=k: UnigramLattice(*unigram[:k], None, *unigram[k + 1:]))
    for call in calls:
        with pytest.raises(TypeError):
            call()


def test_kernels_reject_inconsistent_counts():
    tokens, offsets = np.array([0, 1, 1, 0], np.int32), np.array([0, 2, 4])
    counter = PartCounter()
    for args in (
        (tokens, offsets, np.array([1, 0], np.int32), 2),  # documents out of order
        (tokens, offsets, np.array([0, 2], np.int32), 2),  # a document past n_docs
        (tokens, offsets, np.array([0], np.int32), 1),  # one document for two parts
        (tokens, np.array([0, 2, 5]), np.array([0, 0], np.int32), 1),  # offsets past the tokens
        (tokens, offsets, np.array([0, 0], np.int32), 1, np.array([1, 1])),  # weights alone
        (tokens, offsets, np.array([0, 0], np.int32), 1, np.array([1, 0]), np.array([0, 1, 2])),
    ):
        with pytest.raises(ValueError):
            counter.add(*args)
    assert counter.n_docs == 0 and counter.n_parts == 0
    docs = np.array([0, 0], np.int32)
    with pytest.raises(ValueError):
        PairMerger(tokens, offsets, docs, 1, 2, False, np.array([1, 1]))
    with pytest.raises(ValueError):
        PairMerger(tokens, offsets, docs, 1, 2, False, np.array([1, 1]), np.array([0, 1, 3]))
    with pytest.raises(ValueError):
        PairMerger(tokens, offsets, np.array([0, 3], np.int32), 2, 2)
    with pytest.raises(ValueError):  # documents of a counted part out of order
        PairMerger(tokens, offsets, np.array([1, 0, 0], np.int32), 2, 2, False, np.array([2, 1]), np.array([0, 2, 3]))
