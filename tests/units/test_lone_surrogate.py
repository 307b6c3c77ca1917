"""`ubpe.models.imported.check_doc` finds a text's first lone surrogate by UTF-8's encoder, a
slice at a time (`_lone_surrogate`): against the definition, a code point in U+D800..U+DFFF,
on texts that cross the slices' edges."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.errors import InvalidParameterError
from ubpe.models import imported
from ubpe.models.imported import _lone_surrogate, check_doc


def _first_surrogate(text: str) -> int | None:
    return next((i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF), None)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", "\U0001F600", "\ud800", "\udfff", "\ud83d", " "]), max_size=40),
       st.integers(1, 8))
def test_the_first_lone_surrogate_is_found_whatever_the_slices(parts, chunk):
    text = "".join(parts)
    original = imported._SURROGATE_CHUNK
    imported._SURROGATE_CHUNK = chunk  # small slices: every edge case of a slice's end
    try:
        assert _lone_surrogate(text) == _first_surrogate(text)
    finally:
        imported._SURROGATE_CHUNK = original


@pytest.mark.parametrize("at", [0, 5, (1 << 16) - 1, 1 << 16, (1 << 16) + 3, 3 * (1 << 16) + 1])
def test_a_long_texts_surrogate_is_named_at_its_index(at):
    text = "ü" * at + "\udc80" + "x" * 10
    with pytest.raises(InvalidParameterError, match=f"U\\+DC80 at index {at},"):
        check_doc(text)
    assert check_doc("ü" * (3 << 16)) == "ü" * (3 << 16)
