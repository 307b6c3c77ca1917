"""GGUF vocabularies that llama.cpp reads, read as llama.cpp reads them (issue 28, point 1).

llama.cpp (``llama-vocab.cpp`` and ``gguf.cpp`` of the llama-cpp-python 0.3.36 sdist) takes
every string through ``c_str()`` (a token ends at its first NUL), names an empty token
``[EMPTY_<id>]``, writes nothing when it decodes an unused or undefined token, and writes a
token's bytes as they are (UTF-8 or not). The files that it refuses (a key twice, an array of
arrays, a token twice) are rows of ``test_bad_files.py``; token types outside its enum, which
it would read as undefined, are refused there too. Each test here failed before its fix.
"""

from __future__ import annotations

import numpy as np
import pytest

import ubpe
from ubpe.models.sentencepiece import SentencePieceBPE

from bad_models import gguf_tokens_edited, gguf_type_set, spm_model_bytes, write_gguf_llama

TEXTS = ["Hello world", "the cat sat on the mat", "a dog met 12 cats!\n"]


def _load(tmp_path, data: bytes, name: str = "vocab.gguf"):
    path = tmp_path / name
    path.write_bytes(data)
    return ubpe.load(path)


@pytest.fixture(scope="module")
def llama_gguf(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("llama") / "llama.gguf"
    write_gguf_llama(path, spm_model_bytes())
    return path.read_bytes()


def test_a_token_ends_at_its_nul(m, tmp_path):
    """``tokens[100] += b"\\x00"`` made ``decode(encode("Hello world"))`` return ``' 108 here'``:
    the texts were joined with NUL to map them at once, so every later token was off by one."""
    original = m.files["gguf"].read_bytes()

    def add_nul(tokens):
        tokens[100] += b"\x00"
        tokens[101] = tokens[101][:1] + b"\x00tail" + tokens[101][1:]

    tok = _load(tmp_path, gguf_tokens_edited(original, add_nul))
    assert tok.texts == m.g.texts[:101] + [m.g.texts[101][:1]] + m.g.texts[102:]
    for text in TEXTS:
        assert tok.decode(tok.encode(text)) == text


def test_an_empty_token_is_named_as_llama_cpp_names_it(m, tmp_path):
    tok = _load(tmp_path, gguf_tokens_edited(m.files["gguf"].read_bytes(), lambda t: t.__setitem__(100, b"")))
    assert tok.texts[100] == "[EMPTY_100]"


def test_a_token_that_is_no_utf8_decodes_to_its_bytes(m, tmp_path):
    tok = _load(tmp_path, gguf_tokens_edited(m.files["gguf"].read_bytes(), lambda t: t.__setitem__(100, b"\x80\xfe")))
    assert tok.decode_bytes([100]) == b"\x80\xfe"


@pytest.mark.parametrize("kind", [0, 5], ids=["undefined", "unused"])
def test_unused_and_undefined_tokens_decode_to_nothing(m, tmp_path, llama_gguf, kind):
    """llama.cpp's token_to_piece writes nothing for them ("suppressing them like CONTROL
    tokens"); ubpe wrote their text (gpt2: the GPT-2 alphabet not undone; llama: ``▁``)."""
    gpt2 = _load(tmp_path, gguf_type_set(m.files["gguf"].read_bytes(), 100, kind))
    assert m.g.decode([100]) and gpt2.decode([100]) == ""
    original = _load(tmp_path, llama_gguf, "llama.gguf")
    token = next(i for i, t in enumerate(original.texts) if t.startswith("▁") and len(t) > 2)
    llama = _load(tmp_path, gguf_type_set(llama_gguf, token, kind), "llama-edited.gguf")
    assert original.decode([token]) and llama.decode([token]) == ""


class _CountingDict(dict):
    """A dict that counts its lookups."""

    lookups = 0

    def get(self, key, default=None):
        type(self).lookups += 1
        return super().get(key, default)


def _merge_rule_lookups(size: int) -> int:
    """Token lookups `SentencePieceBPE._merge_rules` makes for a vocabulary with one piece of
    ``size`` characters."""
    tokens = ["<unk>", "a", "b", "ab", "ba", "ab" * (size // 2)]
    tok = SentencePieceBPE(tokens, np.array([0.0, -1.0, -1.0, -2.0, -3.0, -4.0]), specials={"unk": 0})
    _CountingDict.lookups = 0
    tok._text_to_id = _CountingDict(tok._text_to_id)
    tok._merge_rules(np.ones(len(tokens), dtype=bool))
    return _CountingDict.lookups


def test_merge_rules_are_linear_in_a_long_piece():
    """The merge rules of a piece are its cuts into two symbols; every cut of a piece was looked
    up, and each lookup hashes a half: a 256 KiB piece took 21.7 s to load, a 4 MiB one did not
    end. Only cuts whose halves have a token's length are tried now: the lookups do not grow
    with the long piece's length (they grew by one per character)."""
    assert _merge_rule_lookups(1 << 16) == _merge_rule_lookups(1 << 8)
