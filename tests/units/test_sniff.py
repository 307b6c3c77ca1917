"""`ubpe.io.sniff`'s plain bytes tests in front of its patterns turn away only heads the
patterns refuse too: each detector against its pattern alone, on heads made of the pieces the
formats' first bytes are made of."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.io import sniff

PIECES = [b"{", b"}", b" ", b"\n", b"\r\n", b"\t", b'"', b":", b",", b"0", b"12", b"=", b"IQ==", b"Zm9v", b"+/",
          b'"format"', b'"ubpe-model"', b'"n_tokens"', b'"alphabet"', b'"weights"', b'"rank"', b'"token_bytes"',
          b'"token_str"', b'"default_vocab_size"', b'"default_num_special_tokens"', b'"added_tokens"', b'"model"',
          b'"type"', b'"vocab"', b'"truncation"', b"[", b"]", b"x"]
HEADS = st.lists(st.sampled_from(PIECES), max_size=24).map(b"".join) | st.binary(max_size=40)


def _patterns_alone(name: str, head: bytes) -> bool:
    if name == "ubpe":
        return head.lstrip()[:1] == b"{" and re.search(sniff._UBPE_FORMAT_FIELD, head) is not None
    if name == "ubpe030":
        return re.match(sniff._UBPE030_FIRST_FIELD, head) is not None
    if name == "tiktoken":
        return re.match(sniff._TIKTOKEN_LINE, head.lstrip(b"\r\n")) is not None
    if name == "tekken":
        return head.lstrip()[:1] == b"{" and (re.search(sniff._TEKKEN_ENTRY, head) is not None
                                               or all(re.search(size, head) for size in sniff._TEKKEN_SIZES))
    raise AssertionError(name)


@settings(max_examples=2000, deadline=None)
@given(HEADS)
def test_the_bytes_tests_refuse_only_what_the_patterns_refuse(head):
    for name in ("ubpe", "ubpe030", "tiktoken", "tekken"):
        assert sniff.DETECTORS[name](head) == _patterns_alone(name, head), name


def test_the_usual_heads():
    assert sniff.ubpe(b'{\n  "format": "ubpe-model", "format_version": 1')
    assert sniff.ubpe030(b' \n{ "alphabet": {"a": 0}') and not sniff.ubpe030(b'{"format": "ubpe-model"')
    assert sniff.tiktoken(b"\r\nIQ== 0\n") and not sniff.tiktoken(b"{IQ== 0\n")
    assert sniff.tekken(b'{"config": {"default_vocab_size": 131072, "default_num_special_tokens": 1000')
    assert not sniff.tekken(b'{"config": {"default_vocab_size": 131072}')
