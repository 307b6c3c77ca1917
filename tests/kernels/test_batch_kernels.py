"""The batch kernels' entry points check their arguments, and their outputs (``id_lists``, the
per-document status) are what the public calls build on."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.io import gguf as gguf_io
from ubpe.models.bytelevel import ByteLevelBPE
from ubpe.text.patterns import NATIVE_PATTERNS, PATTERNS, code_point_classes
from ubpe_native._merges import id_lists

from vocab_corpora import text_lines, vocab_path


@pytest.fixture(scope="module")
def fitted() -> ByteLevelBPE:
    return ByteLevelBPE().fit(text_lines(limit=2000), n_tokens=600, pattern="cl100k", quiet=True)


@functools.cache
def gguf_model(name: str):
    return gguf_io.read(vocab_path(name))


def _kernel():
    return gguf_model("gpt-2")._kernel


GPT2 = NATIVE_PATTERNS[PATTERNS["gpt2"]]


@pytest.mark.parametrize("call, error, match", [
    (lambda k, c: k.encode_texts(b"abc", [2], c, GPT2), ValueError, "add up"),
    (lambda k, c: k.encode_texts(b"abc", [4, -1], c, GPT2), ValueError, "negative"),
    (lambda k, c: k.encode_texts(b"abc", [1.5, 1.5], c, GPT2), TypeError, "integers"),
    (lambda k, c: k.encode_texts(b"\xff", [1], c, GPT2), ValueError, "UTF-8"),
    (lambda k, c: k.encode_texts(b"ab", [1, 1], c, 2**31 - 1), ValueError, "pattern"),  # ids from 64: compiled
    (lambda k, c: k.encode_texts(b"ab", [1, 1], c[:10], GPT2), ValueError, "code point"),
    (lambda k, c: k.encode_texts(b"ab", [1, 1], c, GPT2, skip=[0]), ValueError, "one entry per document"),
    (lambda k, c: k.encode_texts(b"ab", [1, 1], c, GPT2, flagged=np.zeros(5, np.uint8)), ValueError, "0x110000"),
    (lambda k, c: k.encode_texts(b"ab", [1, 1], c, GPT2, flagged=np.ones(0x110000, np.uint8)), ValueError, "ASCII"),
    (lambda k, c: id_lists(np.array([1, 2], np.int32), np.array([0, 3])), ValueError, "end at 2"),
    (lambda k, c: id_lists(np.array([2**40]), np.array([0, 1])), ValueError, "outside"),
])
def test_kernels_check_their_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call(_kernel(), code_point_classes())


def test_ranked_kernel_checks_its_arguments(fitted):
    table = fitted._encoder._table
    with pytest.raises(ValueError, match="add up"):
        table.encode_texts(b"abc", [1], code_point_classes(), GPT2)
    with pytest.raises(ValueError, match="one entry per document"):
        table.encode_texts(b"abc", [3], code_point_classes(), GPT2, [0, 0])
    tokens, offsets = table.encode_texts(b"", [0, 0], code_point_classes(), GPT2)
    assert tokens.tolist() == [] and offsets.tolist() == [0, 0, 0]


def test_kernel_status_says_which_documents_it_left_out():
    tok = gguf_model("gpt-2")
    docs = ["ab", "x\u0378", "cd", "", "ef"]
    data = "".join(docs).encode()
    flagged = np.zeros(0x110000, dtype=np.uint8)  # (a caller's table of code points to encode another way)
    flagged[0x378] = 1
    ids, offsets, status = tok._kernel.encode_texts(data, [len(d) for d in docs], code_point_classes(), GPT2,
                                                    flagged=flagged, skip=[0, 0, 1, 0, 0])
    assert status.tolist() == [0, 2, 1, 0, 0]
    lists = id_lists(ids, offsets)
    assert lists[0] == tok.encode("ab") and lists[1] == lists[2] == lists[3] == [] and lists[4] == tok.encode("ef")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**31 - 1) | st.integers(0, 70_000), max_size=20), max_size=8))
def test_id_lists_are_what_tolist_gives(docs):
    # ids below the shared table (2**16) take its ints, larger ones new ints: same values
    flat = np.array([t for doc in docs for t in doc], dtype=np.int32)
    offsets = np.cumsum([0] + [len(doc) for doc in docs]).astype(np.int64)
    lists = id_lists(flat, offsets)
    assert lists == docs
    assert all(type(t) is int for doc in lists for t in doc)
