"""``ubpe.models.gemma4``: the merge lines looked up in C (``_looked_up_in_c``) give the kernel
what the Python path gives (the dict look-ups it replaced, kept for lines it cannot cut): the
same ids for every text, operands and results that are no token included (their new ids in
the same order), a newline merged, a line that ends with its space, and equal tokens (the
last counts)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.models import gemma4

_CHARS = "ab▁\n"
_TOKENS = ["<0x61>", "<0x62>", "<0xE2>", "<0x96>", "<0x81>", "<0x0A>", "a", "b", "▁", "\n"]


def _both(tokens, merges):
    fast = gemma4.Gemma4BPE(tokens, merges, token_types=np.ones(len(tokens), np.int32))
    assert gemma4._looked_up_in_c(tokens, merges) is not None
    return fast


@settings(max_examples=150, deadline=None)
@given(extra=st.lists(st.text(alphabet=_CHARS, min_size=1, max_size=4), max_size=6),
       pairs=st.lists(st.tuples(st.text(alphabet=_CHARS, min_size=1, max_size=3),
                                st.text(alphabet=_CHARS, max_size=3)), min_size=1, max_size=8),
       texts=st.lists(st.text(alphabet="ab \n", max_size=12), min_size=1, max_size=4))
def test_the_lines_looked_up_in_c_encode_as_the_dicts(extra, pairs, texts):
    tokens = _TOKENS + extra
    merges = [f"{left} {right}" for left, right in pairs]
    fast = _both(tokens, merges)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(gemma4, "_looked_up_in_c", lambda texts, merges: None)
        slow = gemma4.Gemma4BPE(tokens, merges, token_types=np.ones(len(tokens), np.int32))
    assert [fast.encode(t) for t in texts] == [slow.encode(t) for t in texts]


@pytest.mark.parametrize("merges", [["a  b"], [" a b"], ["ab"], ["a b", "a\0 b"]])
def test_lines_it_cannot_cut_go_the_python_way(merges):
    assert gemma4._looked_up_in_c(_TOKENS, merges) is None


def test_a_token_holding_a_nul_is_looked_up_as_any_other():
    """(the tokens' table is then cut per token, not at NUL separators)"""
    columns, missing = gemma4._looked_up_in_c([*_TOKENS, "a\0", "ab"], ["a b", "ab b"])
    assert [c.tolist() for c in columns] == [[6, 11], [7, 7], [11, -1]] and missing == [[], [], [(1, "abb")]]


def test_the_columns_and_what_is_missing():
    columns, missing = gemma4._looked_up_in_c(["a", "b", "ab", "a", "\n"], ["a b", "ab c", "\n \n", "b "])
    assert [c.tolist() for c in columns] == [[3, 2, 4, 1], [1, -1, 4, -1], [2, -1, -1, 1]]
    assert missing == [[], [(1, "c"), (3, "")], [(1, "abc"), (2, "\n\n")]]
