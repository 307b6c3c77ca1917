"""`ubpe_native._vocab.vocab_ids` against the Python passes it replaced (``"".join`` of the
keys, ``set(map(type, ...)) == {int}``, ``min``, ``max``, the ids in order), over vocabularies
of every kind of key and value a JSON document (or a caller) gives."""

from __future__ import annotations

import operator

from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._vocab import vocab_ids

LARGEST = 1000


class Text(str):
    pass


def oracle(vocab: dict, largest: int):
    try:
        "".join(vocab)
    except TypeError:
        return None
    values = vocab.values()
    if values and not (set(map(type, values)) == {int} and 0 <= min(values) and max(values) <= largest):
        return None
    return max(values, default=-1), all(map(operator.eq, values, range(len(values))))


_KEYS = st.one_of(st.text(max_size=3), st.text(max_size=2).map(Text), st.integers(0, 3), st.none())
_VALUES = st.one_of(st.integers(-2, 6), st.integers(LARGEST - 1, LARGEST + 1), st.integers(2**62, 2**70),
                    st.booleans(), st.floats(0, 3), st.none(), st.text(max_size=1))


@settings(max_examples=500, deadline=None)
@given(items=st.lists(st.tuples(_KEYS, _VALUES), max_size=8))
def test_one_pass_is_the_seven(items):
    vocab = dict(items)
    assert vocab_ids(vocab, LARGEST) == oracle(vocab, LARGEST)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 50), swap=st.booleans())
def test_ids_in_order(n, swap):
    """The usual file (ids 0..n-1 in order), and the same with two ids swapped."""
    ids = list(range(n))
    if swap and n >= 2:
        ids[0], ids[-1] = ids[-1], ids[0]
    vocab = {f"t{k}": i for k, i in enumerate(ids)}
    assert vocab_ids(vocab, LARGEST) == (n - 1, not (swap and n >= 2)) == oracle(vocab, LARGEST)
