"""The HF importer's two ways to cut a text agree: the kernel's scanner (the fast path) and
the pre-tokenizer steps one by one."""

from __future__ import annotations

import pytest

import ubpe
from ubpe.io.gguf import read_vocab_tests
from ubpe.models.hf_base import _Segment

from hf_builders import BUILDERS
from vocab_corpora import text_lines, vocab_path


def built(name: str, tmp_path):
    path = tmp_path / f"{name}.json"
    BUILDERS[name]().save(str(path))
    return ubpe.load(path)


@pytest.fixture(scope="module")
def heldout() -> list[str]:
    """Prose and code of several scripts, and llama.cpp's tokenizer test inputs."""
    lines = text_lines("kjv", limit=600) + text_lines("udhr", limit=1500) + text_lines("stdlib", limit=1200)
    for name in ("gpt-2", "llama-bpe", "qwen2", "llama-spm"):
        lines += [text for text, _ in read_vocab_tests(vocab_path(name))]
    return lines


@pytest.mark.parametrize("name", ["gpt2", "llama3", "qwen2", "trained-bytelevel"])
def test_scanner_path_equals_pre_tokenizer_path(name, heldout, tmp_path):
    """The kernel's scanner (fast path) cuts as the HF pre-tokenizer steps do, on every script."""
    tok = built(name, tmp_path)
    assert tok.describe()["scanned"]
    for text in heldout:
        segment = _Segment(text, True)
        assert tok._encode_segment(segment) == tok._encode_words(tok._words(segment)), repr(text)


def test_the_loader_defers_the_regexes_the_scanner_splits():
    """`ubpe.models.hf_base.SCANNED_REGEXES` (which the loader leaves uncompiled) are exactly
    the regexes `ubpe.models.hf` sends to the kernel's scanner."""
    from ubpe.models.hf import _SCANNED
    from ubpe.models.hf_base import SCANNED_REGEXES

    assert frozenset(_SCANNED) == SCANNED_REGEXES
