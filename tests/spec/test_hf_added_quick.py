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

from hf_builders import BUILDERS, peer_ids  # noqa: E402
from ubpe.io import hf_import  # noqa: E402

PIECES = ["the", " cat", " ", "  ", "hello", " hello", "world", "<", "|", ">", "[", "]", "@", "x", "\n", "é"]
# spaces alone among them: a token of spaces that strips the spaces beside it is cut on the
# general path (`tests/spec/test_hf_added_cut.py` holds that cut to tokenizers')
CONTENTS = st.text(st.sampled_from(list(" helowrd<|>[]@xé")), min_size=1, max_size=6)


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
    expected = [peer_ids(hf, t) for t in texts]  # (None: the peer panics)
    assert [tok.encode(t) for t, e in zip(texts, expected) if e is not None] == [e for e in expected if e is not None]
