"""The BPE merge core (``ubpe_native/_merge_core.pxd``) that `_ranked`, `_merges` and `_spm` share,
and the kernel findings of issue 28 that live in it: the length guard of int32 node indices,
sentencepiece's re-splitting of unused pieces on a self-referencing rule, the word cache read
by ``cache_size`` while other threads encode."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._classic import PairTable, encode_words
from ubpe_native._merge_core import MergeScratch, ScratchPool, _py_check_chain_length, _py_merge_word
from ubpe_native._merges import PairMerges, pack_units
from ubpe_native._spm import SpmBPE

I32, I64 = np.int32, np.int64
NO_FALLBACK = np.full(256, -1, I32)


def reference_merge(rules, tokens, frozen):
    """The loop in its plainest form: rescan the word, merge the adjacent pair of lowest rank
    (the leftmost on ties) whose nodes are tokens (>= 0) and not frozen; until none has a rule."""
    table = {}
    for left, right, rank, result in rules:
        table.setdefault((left, right), (rank, result))  # the first rule of a pair is kept
    nodes = list(zip(tokens, frozen))
    while True:
        best = None
        for i in range(len(nodes) - 1):
            (a, frozen_a), (b, frozen_b) = nodes[i], nodes[i + 1]
            if a < 0 or b < 0 or frozen_a or frozen_b or (a, b) not in table:
                continue
            rank, result = table[(a, b)]
            if best is None or rank < best[0]:
                best = (rank, i, result)
        if best is None:
            return [token for token, _ in nodes]
        _, i, result = best
        nodes[i : i + 2] = [(result, False)]


N_IDS = 8
rule = st.tuples(st.integers(0, N_IDS - 1), st.integers(0, N_IDS - 1), st.integers(0, 4), st.integers(3, N_IDS - 1))


@settings(max_examples=300, deadline=None)
@given(st.lists(rule, max_size=12), st.lists(st.tuples(st.integers(-2, 2), st.booleans()), max_size=24))
def test_the_core_merges_as_the_plain_loop(rules, word):
    tokens = [token for token, _ in word]
    frozen = [flag for _, flag in word]
    left, right, rank, result = (np.array([r[k] for r in rules], dtype) for k, dtype in
                                 zip(range(4), (I32, I32, I64, I32)))
    ids, _ = _py_merge_word(left, right, rank, result, np.array(tokens, I32), frozen=np.array(frozen, np.uint8))
    assert ids == reference_merge(rules, tokens, frozen)


def test_the_core_records_the_last_pair_proposed_for_an_unused_piece():
    # rules: (0 1) -> 3 and (2 1) -> 3, piece 3 unused; the word 0 1 2 1 proposes both, left first
    ids, proposed = _py_merge_word(np.array([0, 2], I32), np.array([1, 1], I32), np.array([0, 1], I64),
                                   np.array([3, 3], I32), np.array([0, 1, 2, 1], I32),
                                   unused=np.array([0, 0, 0, 1], np.uint8))
    assert ids == [3, 3]
    assert proposed == {3: (2, 1)}


def test_dropout_one_merges_nothing_and_zero_everything():
    args = (np.array([0], I32), np.array([1], I32), np.array([0], I64), np.array([2], I32), np.array([0, 1, 0, 1], I32))
    assert _py_merge_word(*args, dropout=1.0)[0] == [0, 1, 0, 1]
    assert _py_merge_word(*args, dropout=0.0)[0] == [2, 2]


def test_classic_is_not_the_core_loop():
    """The example of ``_classic``'s docstring: a classic step takes ``(0 1)`` and ``(2 3)``
    together; the core merges the pair that ``(0 1)`` formed first."""
    left, right, tokens = np.array([0, 4, 2], I32), np.array([1, 2, 3], I32), np.array([4, 5, 6], I32)
    word = np.array([0, 1, 2, 3], I32)
    out, _, _ = encode_words(PairTable(left, right, tokens), np.zeros(7), word, np.array([0, 4]))
    assert out.tolist() == [4, 6]
    assert _py_merge_word(left, right, np.arange(3, dtype=I64), tokens, word)[0] == [5, 3]


# -- issue 28: one length guard before int32 node indices --------------------------------------

def test_a_word_of_two_to_the_31_units_is_refused_before_any_node_index():
    _py_check_chain_length(0)
    _py_check_chain_length(2**31 - 1)  # node indices 0..2**31 - 2, and -1 for "none"
    for n in (2**31, 2**40):
        with pytest.raises(ValueError, match="too long to merge"):
            _py_check_chain_length(n)


# -- issue 28: sentencepiece's re-splitting never loops ------------------------------------------

def _spm_bpe(left, right, result, unused):
    """Pieces 0 <unk>, 1 'a', 2 'b', 3 and 4 (no units); ``unused`` flags pieces."""
    n = len(left)
    return SpmBPE(5, np.array(left, I32), np.array(right, I32), np.array(result, I32), np.arange(n, dtype=I64),
                  np.array(unused, np.uint8), b"ab", np.array([0, 1, 2], I64), np.array([1, 2], I32),
                  np.zeros(2, np.uint8), np.array([], I32), np.array([0], I64), 0, NO_FALLBACK, True)


@pytest.mark.parametrize("left, right, result", [
    ([1], [2], [1]),  # 'a' 'b' -> 'a', 'a' unused: 'a' splits into 'a' 'b', forever
    ([1, 3, 4], [2, 2, 1], [3, 4, 3]),  # 3 = 1 2 | 4 1, 4 = 3 2: 3 -> 4 -> 3
])
def test_rules_that_make_an_unused_piece_part_of_itself_are_refused(left, right, result):
    unused = [0, 1, 0, 1, 1]
    with pytest.raises(ValueError, match="part of itself"):
        _spm_bpe(left, right, result, unused)


def test_unused_pieces_without_a_cycle_still_split():
    # 3 = 'a' 'b' (unused), 4 = 3 'b': 'abb' is 4, 'ab' is written as 'a' 'b'
    model = _spm_bpe([1, 3], [2, 2], [3, 4], [0, 0, 0, 1, 0])
    assert model.encode(np.frombuffer(b"abbab", np.uint8)).tolist() == [4, 1, 2]
    # a later duplicate rule of a pair is never used, so it cannot make a cycle either
    model = _spm_bpe([1, 1], [2, 2], [3, 1], [0, 1, 0, 1, 0])
    assert model.encode(np.frombuffer(b"ab", np.uint8)).tolist() == [1, 2]


# -- issue 28: the word cache is per scratch, read under the GIL only when idle ------------------

def _letters_table():
    """Units 'a'..'z' (ids 0..25); rule k joins the pair of letters (k, k + 1) into id 26 + k."""
    units = [bytes([c]) for c in range(ord("a"), ord("z") + 1)]
    left = np.arange(25, dtype=I32)
    return PairMerges(51, left, left + 1, left + 26, np.arange(25, dtype=I64), np.array([0], I64), np.array([], I32),
                      pack_units(units), np.arange(26, dtype=I32), NO_FALLBACK, False, b"", np.array([0], I64),
                      np.array([], I32))


def _words(n, seed):
    rng = np.random.default_rng(seed)
    words = [bytes(rng.integers(ord("a"), ord("z") + 1, rng.integers(1, 12)).astype(np.uint8)) for _ in range(n)]
    data = b"".join(words)
    bounds = np.concatenate([[0], np.cumsum([len(w) for w in words])]).astype(I64)
    return np.frombuffer(data, np.uint8), bounds, len(set(words))


def test_cache_size_counts_the_idle_scratches_words():
    table = _letters_table()
    data, bounds, distinct = _words(2000, 1)
    first = table.encode(data, bounds).tolist()
    assert table.cache_size() == distinct
    assert table.encode(data, bounds).tolist() == first  # from the cache now
    table.clear_cache()
    assert table.cache_size() == 0
    assert table.encode(data, bounds).tolist() == first


def test_threads_encode_and_read_the_cache_size_at_once():
    table = _letters_table()
    data, bounds, _ = _words(20000, 2)
    want = table.encode(data, bounds).tolist()
    table.clear_cache()
    results, errors, stop = [], [], threading.Event()

    def encode():
        try:
            for _ in range(5):
                results.append(table.encode(data, bounds).tolist())
                table.clear_cache()
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    def poll():
        while not stop.is_set():
            size = table.cache_size()
            if not 0 <= size <= 3 * len(data):
                errors.append(AssertionError(f"cache_size {size}"))

    workers = [threading.Thread(target=encode) for _ in range(3)]
    poller = threading.Thread(target=poll)
    poller.start()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stop.set()
    poller.join()
    assert not errors
    assert results == [want] * 15


def test_a_scratch_pool_makes_merge_scratches_only():
    assert len(ScratchPool()) == 0
    assert ScratchPool(MergeScratch).cached_words() == 0
    for kind in (int, "MergeScratch", None):
        with pytest.raises(TypeError):
            ScratchPool(kind)
