"""A byte-level ``tokenizer.json``'s ``encode`` takes the kernel in one call when the text holds
none of the added tokens (`HFByteLevelBPE.encode`): looked for by their first characters, then,
where one of those occurs, by their texts. Against ``tokenizers`` on random added tokens (some
starting with a space, as a trained file's ``" hello world"``; normalized or not, stripping
or not, single words or not) and random texts built from their pieces."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, Tokenizer  # noqa: E402

from hf_builders import BUILDERS  # noqa: E402
from ubpe.io import hf_import  # noqa: E402

PIECES = ["the", " cat", " ", "  ", "hello", " hello", "world", "<", "|", ">", "[", "]", "@", "x", "\n", "é"]
# (at least one character that is not a space: an added token of spaces alone that strips the
# spaces beside it is cut otherwise than `tokenizers` cuts it - ``" "`` with ``rstrip`` in
# ``"  "``: ours one token, theirs two - on the general path, which this test is not about)
CONTENTS = st.text(st.sampled_from(list(" helowrd<|>[]@xé")), min_size=1, max_size=6).filter(lambda t: t.strip())


@functools.lru_cache(maxsize=1)
def _base() -> str:
    return BUILDERS["trained-bytelevel"]().to_str()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(CONTENTS, st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.booleans()),
                min_size=1, max_size=20, unique_by=lambda t: t[0]),
       st.lists(st.lists(st.sampled_from(PIECES), max_size=8).map("".join), min_size=1, max_size=20))
def test_encode_with_added_tokens_is_tokenizers(added, texts):
    hf = Tokenizer.from_str(_base())
    for content, special, normalized, lstrip, rstrip, single_word in added:
        token = AddedToken(content, normalized=normalized, lstrip=lstrip, rstrip=rstrip, single_word=single_word)
        (hf.add_special_tokens if special else hf.add_tokens)([token])
    tok = hf_import.from_json(hf.to_str())
    assert [tok.encode(t) for t in texts] == [hf.encode(t, add_special_tokens=False).ids for t in texts]
