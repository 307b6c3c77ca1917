"""Alphabets of any hashable symbol type, with deterministic ids."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe import Alphabet, InvalidParameterError, SymbolTypeError, UnknownSymbolError


@pytest.mark.parametrize(
    "spec, symbols",
    [
        ("cab", ("c", "a", "b")),
        ("abca", ("a", "b", "c")),  # repeats keep their first id
        (["x", "y"], ("x", "y")),
        ({"b", "a", "c"}, ("a", "b", "c")),
        (frozenset({3, 1, 2}), (1, 2, 3)),
        ({"a": 1, "b": 0}, ("b", "a")),
        (3, (0, 1, 2)),
        (np.int64(2), (0, 1)),
        ([np.int64(5), np.int64(7)], (5, 7)),
        ([("C", 4), ("E", 8)], (("C", 4), ("E", 8))),
        ({("b", 1), ("a", 2)}, (("a", 2), ("b", 1))),
        ([b"\x00", b"\xff"], (b"\x00", b"\xff")),
    ],
)
def test_specs(spec, symbols):
    alphabet = Alphabet.from_spec(spec)
    assert alphabet.symbols == symbols
    assert [alphabet.id_of(s) for s in symbols] == list(range(len(symbols)))


def test_unorderable_set_is_sorted_by_repr():
    alphabet = Alphabet.from_spec({(1, "a"), (1, 2)})
    assert alphabet.symbols == tuple(sorted({(1, "a"), (1, 2)}, key=repr))


@pytest.mark.parametrize("spec", [[], "", set(), 0])
def test_empty(spec):
    with pytest.raises(InvalidParameterError):
        Alphabet.from_spec(spec)


@pytest.mark.parametrize("spec", [1.5, None, True, object()])
def test_wrong_spec_type(spec):
    with pytest.raises(SymbolTypeError):
        Alphabet.from_spec(spec)


def test_unhashable_symbols():
    with pytest.raises(SymbolTypeError, match="hashable"):
        Alphabet.from_spec([[1], [2]])


def test_ids_of_every_container():
    alphabet = Alphabet.from_spec(256)
    expected = [104, 105]
    for doc in (b"hi", bytearray(b"hi"), [104, 105], (104, 105), np.array([104, 105], np.uint8), np.array(expected)):
        assert alphabet.ids_of(doc).tolist() == expected


def test_bytes_symbols_from_bytes_documents():
    alphabet = Alphabet.from_spec([b"a", b"b"])
    assert alphabet.ids_of(b"abba").tolist() == [0, 1, 1, 0]


def test_sparse_int_alphabet_uses_no_giant_table():
    alphabet = Alphabet.from_spec([-(10**12), 0, 10**12])
    assert alphabet.ids_of([10**12, -(10**12)]).tolist() == [2, 0]
    with pytest.raises(UnknownSymbolError, match="symbol 5 at position 0"):
        alphabet.ids_of([5])


def test_non_bmp_characters():
    alphabet = Alphabet.from_spec("a😀")
    assert alphabet.ids_of("😀a😀").tolist() == [1, 0, 1]
    with pytest.raises(UnknownSymbolError, match="'🙂' at position 1"):
        alphabet.ids_of("a🙂")


def test_multi_character_string_symbols_in_lists():
    alphabet = Alphabet.from_spec(["ab", "c"])
    assert alphabet.ids_of(["c", "ab"]).tolist() == [1, 0]
    with pytest.raises(UnknownSymbolError):
        alphabet.ids_of("abc")  # a str document is read character by character


def test_allow_unknown():
    alphabet = Alphabet.from_spec("ab")
    assert alphabet.ids_of("azb", allow_unknown=True).tolist() == [0, -1, 1]


@settings(max_examples=200, deadline=None)
@given(st.sets(st.text(min_size=1, max_size=1), min_size=1, max_size=30), st.data())
def test_string_documents_map_like_a_dict(symbols, data):
    alphabet = Alphabet.from_spec(symbols)
    doc = "".join(data.draw(st.lists(st.sampled_from(sorted(symbols)), max_size=30)))
    mapping = alphabet.as_dict()
    assert alphabet.ids_of(doc).tolist() == [mapping[ch] for ch in doc]


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(-(2**40), 2**40), min_size=1, max_size=30), st.data())
def test_int_documents_map_like_a_dict(symbols, data):
    alphabet = Alphabet.from_spec(symbols)
    doc = data.draw(st.lists(st.sampled_from(sorted(symbols)), max_size=30))
    mapping = alphabet.as_dict()
    assert alphabet.ids_of(doc).tolist() == [mapping[s] for s in doc]


@pytest.mark.parametrize("spec, doc", [(3, [-1]), (3, [3]), ([-3, 5], [-4]), ([-3, 5], [0]), ("ab", "😀")])
def test_values_outside_a_dense_table_are_unknown(spec, doc):
    with pytest.raises(UnknownSymbolError):
        Alphabet.from_spec(spec).ids_of(doc)


@pytest.mark.parametrize(
    "doc",
    [[1.0, 2], [True, 1], np.array([1.0, 2.0]), np.array([True, False]), (np.float64(1.0),)],
)
def test_floats_and_bools_are_not_taken_for_ints(doc):
    with pytest.raises(SymbolTypeError, match="alphabet's symbols are int"):
        Alphabet.from_spec(4).ids_of(doc)


def test_bytes_are_not_read_as_latin1_for_a_text_alphabet():
    alphabet = Alphabet.from_spec("éÃ©")
    with pytest.raises(SymbolTypeError, match="decode it first"):
        alphabet.ids_of("é".encode())


def test_uint64_beyond_int64_does_not_wrap():
    alphabet = Alphabet.from_spec([-1, 0, 1])
    with pytest.raises(UnknownSymbolError, match="18446744073709551615"):
        alphabet.ids_of(np.array([2**64 - 1], dtype=np.uint64))
    assert alphabet.ids_of(np.array([1, 0], dtype=np.uint64)).tolist() == [2, 1]


def test_huge_integer_symbols():
    alphabet = Alphabet.from_spec([2**70, 2**70 + 1])
    assert alphabet.ids_of([2**70 + 1, 2**70]).tolist() == [1, 0]
    with pytest.raises(UnknownSymbolError):
        alphabet.ids_of([0])


@pytest.mark.parametrize("spec", [2**40, 1 << 25])
def test_alphabet_size_is_bounded(spec):
    with pytest.raises(InvalidParameterError, match="at most|must be in 1"):
        Alphabet.from_spec(spec)


def test_frozenset_symbols_sort_canonically_whatever_the_hash_seed():
    import os
    import subprocess
    import sys

    code = (
        "from ubpe import Alphabet;"
        "print([sorted(s) for s in Alphabet.from_spec({frozenset({'a','b'}), frozenset({'c'}), frozenset({'b'}),"
        " frozenset({'a'}), frozenset()}).symbols])"
    )
    outputs = set()
    for seed in ("0", "1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outputs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                   text=True, check=True).stdout)
    assert len(outputs) == 1
