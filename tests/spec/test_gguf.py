"""GGUF vocabularies: llama.cpp's own tokenizer tests are the peer suite.

Every ``ggml-vocab-*.gguf`` of type gpt2 or llama shipped with llama.cpp's tests must give
exactly llama.cpp's expected ids on every case of its ``.inp`` / ``.out`` files. The files come
from the pinned llama-cpp-python sdist (``experiments/install_data.sh``).
"""

from __future__ import annotations

import functools

import struct

import numpy as np
import pytest

from ubpe.errors import ModelFormatError, UBPEError, UnknownTokenError
from ubpe.io import gguf as gguf_io

from vocab_corpora import GPT2_VOCABS, LLAMA_VOCABS, text_lines, vocab_path

gguf = pytest.importorskip("gguf")

# the tests run vocabulary by vocabulary (their parametrization is module-scoped), so two at a
# time are enough, and the module's memory is about that of its largest two
@functools.lru_cache(maxsize=2)
def _load(name: str):
    return gguf_io.read(vocab_path(name))


@pytest.mark.parametrize("name", GPT2_VOCABS + LLAMA_VOCABS, scope="module")
def test_llama_cpp_expected_ids(name):
    tok = _load(name)
    cases = gguf_io.read_vocab_tests(vocab_path(name))
    assert len(cases) >= 40
    failed = [(text, ids, tok.encode(text)) for text, ids in cases if tok.encode(text) != ids]
    assert not failed, f"{len(failed)}/{len(cases)} cases differ, first: {failed[0]!r}"


@pytest.mark.parametrize("name", GPT2_VOCABS + LLAMA_VOCABS, scope="module")
def test_decode_inverts_encode(name):
    tok = _load(name)
    for text, _ in gguf_io.read_vocab_tests(vocab_path(name)):
        assert tok.decode(tok.encode(text)) == text  # llama-type: the dummy prefix removed (issue 26)


def test_variants_and_description():
    assert _load("gpt-2").variant == "gguf:gpt2"
    assert _load("llama-spm").variant == "gguf:llama"
    info = _load("llama-bpe").describe()
    assert info["pre"] == "llama-bpe" and info["ignore_merges"] and info["n_vocab"] == 128256


def test_add_special_adds_what_llama_cpp_adds():
    spm = _load("llama-spm")
    assert spm.encode("Hello", add_special=True)[0] == 1
    assert spm.encode("Hello", add_special=True)[1:] == spm.encode("Hello")
    gpt2 = _load("gpt-2")
    assert gpt2.encode("Hello", add_special=True) == gpt2.encode("Hello")  # add_bos unset


# one byte-level and one SPM vocabulary every run; the other two byte-level ones with the long tests
@pytest.mark.parametrize("name", ["gpt-2", pytest.param("llama-bpe", marks=pytest.mark.long),
                                  pytest.param("qwen2", marks=pytest.mark.long), "llama-spm"], scope="module")
@pytest.mark.parametrize("encoder", ["fewest", "longest_prefix", "tfidf", "ranked"])
def test_every_encoder_is_lossless_on_imported_vocabularies(name, encoder):
    tok = _load(name)
    for line in text_lines(limit=40):
        (ids, score), = tok.encode_with(line, encoder)
        assert tok.decode(ids).lstrip(" ") == line.lstrip(" ") if tok.variant == "gguf:llama" \
            else tok.decode(ids) == line
        assert np.isfinite(score)


def test_fewest_never_uses_more_tokens_than_native():
    tok = _load("gpt-2")
    for line in text_lines(limit=200):
        native = tok.encode(line)
        (fewest, _), = tok.encode_with(line, "fewest")
        assert len(fewest) <= len(native)


def test_top_n_alternatives_are_distinct_and_decode():
    tok = _load("gpt-2")
    found = tok.encode_with("Hello world, hello there", "tfidf", top_n=3)
    assert len(found) == 3 and len({tuple(ids) for ids, _ in found}) == 3
    assert all(tok.decode(ids) == "Hello world, hello there" for ids, _ in found)


def test_fit_weights_gives_idf_scores():
    tok = gguf_io.read(vocab_path("gpt-2"))
    lines = text_lines(limit=100)
    tok.fit_weights(lines)
    (ids, score), = tok.encode_with(lines[0])
    assert ids == tok.encode(lines[0]) and score > 0


# -- bad input ------------------------------------------------------------------------------

def test_constants_are_the_gguf_packages():
    """The value types, magic and key names the reader spells itself (importing `gguf` costs
    more than reading a file) are the `gguf` package's."""
    gguf = pytest.importorskip("gguf")
    assert gguf_io.MAGIC_NUMBER == gguf.GGUF_MAGIC
    assert {t.name: int(t) for t in gguf.GGUFValueType} == {
        name: value for name, value in vars(gguf_io.ValueType).items() if name.isupper()}
    ours = {name: value for name, value in vars(gguf_io.Keys).items() if name.isupper()}
    assert ours and ours == {name: getattr(gguf.Keys.Tokenizer, name) for name in ours}


def test_detect():
    assert gguf_io.detect(vocab_path("gpt-2").read_bytes()[:16])
    assert not gguf_io.detect(b'{"model": {}}')


@pytest.mark.parametrize("keep", [3, 10, 100, 5000])
def test_truncated_file_is_one_clear_error(tmp_path, keep):
    path = tmp_path / "cut.gguf"
    path.write_bytes(vocab_path("phi-3").read_bytes()[:keep])
    with pytest.raises(ModelFormatError, match="truncated|not a GGUF|too short"):
        gguf_io.read(path)


def test_corrupt_lengths_are_rejected(tmp_path):
    data = bytearray(vocab_path("phi-3").read_bytes()[:4096])
    struct.pack_into("<Q", data, 16, 1 << 40)  # kv count
    path = tmp_path / "bad.gguf"
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFormatError, match="corrupt"):
        gguf_io.read(path)


def test_unsupported_model_type_names_the_supported_ones():
    metadata = {"tokenizer.ggml.model": "rwkv", "tokenizer.ggml.tokens": ["a", "b"]}
    with pytest.raises(ModelFormatError, match=r"v.gguf: GGUF tokenizer model 'rwkv' is not supported; supported: gpt2, llama, bert, t5, gemma4"):
        gguf_io.from_metadata(metadata, where="v.gguf")


def test_unknown_pre_tokenizer_is_named(tmp_path):
    with pytest.raises(ModelFormatError, match="pre-tokenizer 'no-such-pre'"):
        gguf_io.from_metadata({"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": ["a"],
                               "tokenizer.ggml.merges": [], "tokenizer.ggml.pre": "no-such-pre"})


def test_bad_ids_and_read_only():
    tok = _load("gpt-2")
    with pytest.raises(UnknownTokenError):
        tok.decode([10**9])
    with pytest.raises(UBPEError):
        tok.save("x.json")
    with pytest.raises(UBPEError):
        tok.encode(b"bytes")


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe"], scope="module")
def test_scanner_path_equals_regex_path(name):
    """The kernel's scanner (fast path) cuts like llama.cpp's regex list, on every script: on
    the lines whose code points the regex path classifies as llama.cpp does (it classifies by
    the `regex` module's Unicode, the scanner by llama.cpp's: on the others the scanner is
    llama.cpp's, `tests/spec/test_peer_classes.py`, and the regex path is not)."""
    from ubpe.text.pretokenizers import scanner_unsafe

    tok = _load(name)
    lines = text_lines("udhr", limit=5000, split="train") + text_lines("udhr") + text_lines(limit=500)
    lines += ["'S 'Ll x a  \n\n\t x", "  \r\n  end   "]
    checked = 0
    for line in lines:
        if not scanner_unsafe(line):
            checked += 1
            assert tok._native(line) == tok._native_by_regex(line), repr(line)
    assert checked > 500


# the contract on the two largest vocabularies (250k and 262k tokens, ~10 s) runs with the long tests
@pytest.mark.parametrize("name", ["gpt-2", "llama-spm", pytest.param("nomic-bert-moe", marks=pytest.mark.long),
                                  pytest.param("gemma-4", marks=pytest.mark.long)], scope="module")
def test_tokenizer_contract(name):
    from ubpe.models.ubpe import Tokenizer

    tok = _load(name)
    assert isinstance(tok, Tokenizer)
    ids = tok.encode("Hello world")
    assert tok.piece_to_id(tok.id_to_piece(ids[0])) == ids[0]
    assert tok.piece_to_id(tok.pieces([ids[-1]])[0]) == ids[-1]
    inventory = tok.inventory()
    assert len(inventory.ids) == tok.n_vocab and inventory.lengths[ids[0]] >= 1
    assert tok.covers("Hello") and tok.n_symbols("héllo") in (5, 6)
    assert tok.describe()["n_vocab"] == tok.n_vocab
    if name in ("gpt-2", "gemma-4"):
        assert inventory.merges and all(tok.pieces([t])[0] == tok.pieces([a])[0] + tok.pieces([b])[0]
                                        for t, (a, b) in list(inventory.merges.items())[:100])


@pytest.mark.parametrize(("name", "pattern"), [("gpt-2", "gpt2"), ("llama-bpe", "llama3")])
def test_byte_level_vocabularies_agree_with_tiktoken(name, pattern):
    """tiktoken on the same vocabulary (token bytes -> id as ranks): the same ids on held-out
    prose and every script of the UDHR."""
    tiktoken = pytest.importorskip("tiktoken")
    from ubpe.text.patterns import PATTERNS

    tok = _load(name)
    ranks = {raw: i for i, raw in enumerate(tok._raw) if raw is not None and tok.token_types[i] == 1}
    enc = tiktoken.Encoding(name, pat_str=PATTERNS[pattern], mergeable_ranks=ranks, special_tokens={})
    lines = text_lines("udhr", limit=5000, split="train") + text_lines("udhr") + text_lines(limit=3000)
    assert len(lines) > 5000
    differ = [line for line in lines if tok.encode(line) != enc.encode_ordinary(line)]
    assert not differ, f"{len(differ)} lines differ, first: {differ[0]!r}"


@pytest.mark.parametrize("name", ["gpt-2", "qwen2", "phi-3"], scope="module")
def test_encode_batch_on_threads_equals_one_by_one(name):
    tok = gguf_io.read(vocab_path(name))  # a fresh word cache, filled by the threads at once
    lines = text_lines(limit=3000) + text_lines("udhr")
    assert tok.encode_batch(lines, threads=4) == [tok.encode(line) for line in lines]
    with pytest.raises(UBPEError):
        tok.encode_batch(lines, threads=0)


@pytest.mark.parametrize("name", LLAMA_VOCABS, scope="module")
def test_llama_type_c_pipeline_is_the_general_path(name):
    """llama-type vocabularies encode in C (`SentencePieceBPE._build_llama_pipeline`): the ids
    of the general path (special tokens cut out in Python, `PairMerges`), one by one and in
    batches on any number of threads, with user-defined tokens and ``parse_special``."""
    from ubpe.models.imported import ImportedTokenizer

    tok = _load(name)
    assert tok._pipeline is not None
    lines = [text for text, _ in gguf_io.read_vocab_tests(vocab_path(name))]
    lines += text_lines(limit=300) + text_lines("udhr", limit=300) + [
        "", " ", "<s>x</s> <unk>", "<|endoftext|> a<|user|>\n b", "  two  spaces ", "▁x"]
    want = [ImportedTokenizer.encode(tok, line) for line in lines]
    assert [tok.encode(line) for line in lines] == want
    assert tok.encode_batch(lines, threads=1) == want
    assert tok.encode_batch(lines * 2, threads=3) == want * 2
    for line in lines[-4:]:
        assert tok.encode(line, parse_special=True, add_special=True) == \
            ImportedTokenizer.encode(tok, line, parse_special=True, add_special=True)
    assert tok.encode_batch(lines[:40], add_special=True) == \
        [ImportedTokenizer.encode(tok, line, add_special=True) for line in lines[:40]]


def test_every_vocabulary_llama_cpp_tests_is_tested_here():
    """Each ``ggml-vocab-*.gguf`` that llama.cpp ships with ``.inp/.out`` tests is run against
    them: the gpt2 and llama types above, bert-bge in test_wordpiece.py, gemma-4 in
    test_llama_vocabs.py (a vocabulary added to the sdist fails here until it is)."""
    folder = vocab_path("gpt-2").parent
    shipped = {path.name[len("ggml-vocab-"):-len(".gguf.inp")] for path in folder.glob("ggml-vocab-*.gguf.inp")}
    assert len(shipped) >= 15
    assert shipped <= set(GPT2_VOCABS + LLAMA_VOCABS) | {"bert-bge", "gemma-4"}
