"""The radix tree against pygtrie and brute force."""

from __future__ import annotations

import numpy as np
import pygtrie
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ubpe_native._radix import RadixTree

N_BASE = 4
keys = st.lists(st.integers(0, N_BASE + 1), min_size=1, max_size=7).map(tuple)
key_sets = st.lists(keys, max_size=30)


def build(pieces):
    """The tree and the pygtrie oracle holding the base singletons and ``pieces``."""
    oracle = pygtrie.Trie({(b,): b for b in range(N_BASE)})
    tree = RadixTree(N_BASE)
    for token, piece in enumerate(pieces, start=N_BASE):
        tree.insert(piece, token)
        oracle[piece] = token
    return tree, oracle


def brute_force_matches(oracle, sequence, start):
    """``[(length, token)]`` of every key that ``sequence[start:]`` starts with, shortest first."""
    return [
        (length, oracle[tuple(sequence[start : start + length])])
        for length in range(1, len(sequence) - start + 1)
        if tuple(sequence[start : start + length]) in oracle
    ]


@given(key_sets, st.lists(keys, max_size=10))
def test_every_inserted_key_is_found_a_missing_key_is_not(pieces, probes):
    tree, oracle = build(pieces)
    assert len(tree) == len(oracle)
    for key in list(oracle.keys()) + probes:
        assert tree.get(key) == oracle.get(key)
        assert (key in tree) == (key in oracle)


@given(key_sets, st.lists(st.integers(0, N_BASE + 1), max_size=12), st.data())
def test_prefix_matches_equal_a_brute_force_scan(pieces, sequence, data):
    tree, oracle = build(pieces)
    start = data.draw(st.integers(0, len(sequence)))
    lengths, tokens = tree.prefix_matches(np.array(sequence, np.int32), start)
    expected = brute_force_matches(oracle, sequence, start)
    assert list(zip(lengths.tolist(), tokens.tolist())) == expected
    pygtrie_order = [(len(k), v) for k, v in oracle.prefixes(tuple(sequence[start:]))] if start < len(sequence) else []
    assert expected == pygtrie_order


@given(key_sets)
def test_csr_construction_equals_inserting_in_order(pieces):
    pieces = [p for p in pieces if len(p) >= 2]
    offsets = np.cumsum([0] + [len(p) for p in pieces])
    symbols = np.array([s for p in pieces for s in p], np.int32)
    tree = RadixTree(N_BASE, offsets, symbols)
    _, oracle = build(pieces)  # a repeated piece keeps the later token in both
    for key, token in oracle.items():
        assert tree.get(key) == token
    assert tree.max_length == max([1] + [len(p) for p in pieces])


def test_large_alphabet_root_and_deep_keys():
    n_base = 5000
    rng = np.random.default_rng(0)
    pieces = [tuple(rng.integers(0, n_base, size=rng.integers(2, 9)).tolist()) for _ in range(3000)]
    tree = RadixTree(n_base)
    oracle = pygtrie.Trie({(b,): b for b in range(n_base)})
    for token, piece in enumerate(pieces, start=n_base):
        tree.insert(piece, token)
        oracle[piece] = token
    sequence = np.array([s for p in pieces[:200] for s in p], np.int32)
    for start in range(0, len(sequence), 7):
        lengths, tokens = tree.prefix_matches(sequence, start)
        expected = [(len(k), v) for k, v in oracle.prefixes(tuple(sequence[start:].tolist()))]
        assert list(zip(lengths.tolist(), tokens.tolist())) == expected


def test_splitting_an_edge_keeps_both_keys():
    tree = RadixTree(0)
    tree.insert([1, 2, 3, 4], 10)
    tree.insert([1, 2], 11)  # ends inside the edge [1 2 3 4]
    tree.insert([1, 2, 5], 12)  # leaves it
    assert [tree.get(k) for k in ([1, 2, 3, 4], [1, 2], [1, 2, 5], [1], [1, 2, 3])] == [10, 11, 12, None, None]
    lengths, tokens = tree.prefix_matches([1, 2, 3, 4, 9])
    assert (lengths.tolist(), tokens.tolist()) == ([2, 4], [11, 10])


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.insert([], 1),
        lambda t: t.insert([0, -1], 1),
        lambda t: t.insert([0, 1], -3),
        lambda t: t.get([]),
    ],
)
def test_invalid_keys_raise(call):
    with pytest.raises(ValueError):
        call(RadixTree(2))


@pytest.mark.parametrize(
    "offsets, symbols, tokens",
    [
        ([0, 2], [0], None),  # offsets beyond the symbols
        ([1, 2], [0, 1], None),  # not starting at 0
        ([0, 0], [], None),  # an empty piece
        ([0, 2], [0, -1], None),  # a negative id
        ([0, 2], [0, 1], [3, 4]),  # one token too many
    ],
)
def test_invalid_pieces_raise(offsets, symbols, tokens):
    with pytest.raises(ValueError):
        RadixTree(2, np.array(offsets), np.array(symbols, np.int32), tokens)


def test_prefix_matches_start_out_of_range():
    with pytest.raises(IndexError):
        RadixTree(2).prefix_matches([0, 1], 3)
    assert RadixTree(2).prefix_matches([0, 1], 2)[0].tolist() == []


@given(st.lists(keys, max_size=30), st.booleans(), st.lists(st.integers(0, N_BASE + 1), max_size=12),
       st.sampled_from([0, N_BASE, 3 * N_BASE, 1 << 20]), st.sampled_from([0, 40, 1 << 21]), st.lists(keys, max_size=5))
def test_every_lookup_mode_finds_the_same_matches(pieces, base_only, sequence, dense_entries, automaton_entries,
                                                  later):
    """A constructed tree walks its automaton (if ``_automaton_entries`` holds it and every
    key holds base ids only), or dense rows (as many as ``_dense_entries`` holds), then the
    sorted runs of the other nodes; keys inserted afterwards send the walks back to the hash
    map. Whatever the mix, the matches are the brute-force scan's."""
    if base_only:
        pieces = [tuple(s % N_BASE for s in p) for p in pieces]
    offsets = np.cumsum([0] + [len(p) for p in pieces])
    symbols = np.array([s for p in pieces for s in p], np.int32)
    tree = RadixTree(N_BASE, offsets, symbols, _dense_entries=dense_entries, _automaton_entries=automaton_entries)
    _, oracle = build(pieces)
    for round_ in range(2):
        for start in range(len(sequence) + 1):
            lengths, tokens = tree.prefix_matches(np.array(sequence, np.int32), start)
            assert list(zip(lengths.tolist(), tokens.tolist())) == brute_force_matches(oracle, sequence, start)
        for token, piece in enumerate(later, start=N_BASE + len(pieces)):  # round 2: after inserts
            tree.insert(piece, token)
            oracle[piece] = token
