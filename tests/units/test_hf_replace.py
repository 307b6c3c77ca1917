"""HF's ``Replace`` normalizer writes its content literally: the template ``normalize`` hands
the `regex` module (backslashes escaped) gives what a function returning the content gives,
whatever the content holds (``\\1``, ``\\g<0>``, a lone backslash, ``$``)."""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.text.hf_pipeline import normalize

contents = st.text(alphabet=st.sampled_from("\\g<0>1n$&▁ ab"), max_size=8)
texts = st.text(alphabet=st.sampled_from("ab \t\n1\\▁"), max_size=20)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([r"\s+", r"\d", "▁", r"\\", "a|b"]), contents, texts)
def test_replace_content_is_literal(pattern, content, text):
    compiled = regex.compile(pattern)
    assert normalize([("replace", compiled, content)], text) == compiled.sub(lambda _: content, text)
