"""``encode_batch`` of the byte-level models (issue 9): one kernel call per chunk of documents.

Whatever the threads and the chunk sizes, ``encode_batch`` gives the ids of ``encode`` one by
one: on GGUF vocabularies (llama.cpp's expected ids are ``encode``'s, see test_gguf), on HF
``tokenizer.json`` files (HF ``tokenizers`` is the oracle) and on tiktoken-style
``ByteLevelBPE`` (tiktoken is the oracle), with documents that hold special tokens, code points
the scanner leaves to the regex path, numbers (Qwen2 cuts single digits), lone surrogates and
empty documents, which take the per-document path in the middle of a chunk.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ubpe
from ubpe.models.bytelevel import ByteLevelBPE
from ubpe.text.patterns import PATTERNS
from ubpe.models import chunks as batch
from ubpe.models.imported import batch_workers
from ubpe.errors import DisallowedSpecialTokenError, InvalidParameterError, SymbolTypeError, UBPEError
from ubpe.io import gguf as gguf_io

from vocab_corpora import text_lines, vocab_path

FRAGMENTS = ["Hello", " world", "123456", "7", "  ", "\n\n", "\r\n", " \n ", "'s", "'S", "'ſ", "ſ", "é",
             "e\u0301", "日本語", "١٢٣", "٣", "Ⅻ", "²", "\u0378", "\ufdd0", "\U000e0080", "😀", "\t", "\u00a0",
             "<|endoftext|>", "<|begin_of_text|>", "<s>", "[PAD151700]", "   ", "<mask>", "Ünïcödé ﬁ", " \ufdd0"]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
DOCS = st.lists(st.lists(st.one_of(st.sampled_from(FRAGMENTS), TEXT), max_size=8).map("".join), max_size=24)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@functools.lru_cache(maxsize=None)  # dropped when the module ends (tests/conftest.py)
def gguf_model(name: str):
    return gguf_io.read(vocab_path(name))


def hf_model(name: str, tmp_path_factory):
    return _hf_model(name, tmp_path_factory.getbasetemp())


@functools.lru_cache(maxsize=None)  # dropped when the module ends (tests/conftest.py)
def _hf_model(name: str, base: Path):
    tokenizers = pytest.importorskip("tokenizers")
    from hf_builders import BUILDERS

    path = Path(tempfile.mkdtemp(prefix="hf", dir=base)) / f"{name}.json"
    BUILDERS[name]().save(str(path))
    return tokenizers.Tokenizer.from_file(str(path)), ubpe.load(path)


def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of a few documents, so that a short list makes many kernel calls on threads."""
    monkeypatch.setattr(batch, "CHUNK_CHARS", 40)
    monkeypatch.setattr(batch, "MIN_CHUNK_CHARS", 8)


def assert_batch_equals_one_by_one(tok, docs: list[str], **options) -> None:
    want = [tok.encode(doc, **options) for doc in docs]
    with pytest.MonkeyPatch.context() as patch:
        small_chunks(patch)
        for threads in (1, 3):
            assert tok.encode_batch(docs, threads=threads, **options) == want, (threads, docs)
    assert tok.encode_batch(docs, threads=2, **options) == want  # the usual chunk sizes


# -- GGUF (llama.cpp's byte-level BPE) ---------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "qwen2", "mpt", "starcoder"])
@SETTINGS
@given(docs=DOCS, parse_special=st.booleans(), add_special=st.booleans())
def test_gguf_batch_equals_one_by_one(name, docs, parse_special, add_special):
    """mpt's space runs are user-defined tokens (cut out first); starcoder has no scanner."""
    assert_batch_equals_one_by_one(gguf_model(name), docs, parse_special=parse_special, add_special=add_special)


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "qwen2"])
def test_gguf_batch_on_real_text_and_llama_cpp_cases(name, monkeypatch):
    tok = gguf_io.read(vocab_path(name))  # a fresh word cache, filled by the threads at once
    cases = gguf_io.read_vocab_tests(vocab_path(name))
    small_chunks(monkeypatch)
    assert tok.encode_batch([text for text, _ in cases], threads=3) == [ids for _, ids in cases]
    lines = text_lines("udhr", limit=3000) + text_lines("stdlib", limit=500) + text_lines(limit=500)
    # unassigned code points and 'ſ: the regex path classifies them by the `regex` module's Unicode,
    # the scanner by llama.cpp's (its ids: tests/spec/test_peer_classes.py)
    unsafe = [" \ufdd0", "x \u0378!", "'ſ 'S", "a  \ufdd0\n"]
    assert tok.encode_batch(lines + unsafe, threads=3) == [tok._native_by_regex(line) for line in lines] + [
        tok._native(line) for line in unsafe]


def test_qwen2_runs_on_the_scanner_as_llama_cpp_splits():
    """GGUF qwen2: Llama 3's scanner with every number cut out alone, the regex list's cuts (on
    text without code points that the `regex` module's Unicode and llama.cpp's classify apart)."""
    tok = gguf_model("qwen2")
    assert tok._scanner is not None and tok._scanner.single_digits
    lines = text_lines("udhr", limit=3000) + ["x 12345 ١٢٣٤ ²³ Ⅻ 3.14"]
    assert [tok._native(line) for line in lines] == [tok._native_by_regex(line) for line in lines]
    for line in lines + ["'ſ \u0378 1", " \ufdd0 7"]:  # the pre-tokens ubpe's other encoders run on: the same cuts
        data, bounds = tok._words(line)
        want_data, want_bounds = tok._words_by_regex(line) if line in lines else (line.encode(), None)
        assert data == want_data and (want_bounds is None or bounds.tolist() == want_bounds.tolist()), repr(line)
        assert tok._kernel.encode(data, bounds).tolist() == tok._native(line)


def test_gguf_bad_documents_raise_as_encode_does():
    tok = gguf_model("gpt-2")
    with pytest.raises(SymbolTypeError):
        tok.encode_batch(["ok", 5, "ok"])
    with pytest.raises(SymbolTypeError):
        tok.encode_batch(["ok", ["a"]])
    with pytest.raises(InvalidParameterError, match="lone surrogate"):
        tok.encode_batch(["ok", "a\udc80"])
    with pytest.raises(UBPEError):
        tok.encode_batch(["ok"], threads=0)


# -- HF tokenizer.json ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt2", "llama3", "qwen2", "trained-bytelevel", "falcon"])
@SETTINGS
@given(docs=DOCS, add_special=st.booleans())
def test_hf_batch_equals_one_by_one(name, docs, add_special, tmp_path_factory):
    """qwen2: NFC first; trained-bytelevel: a blank in front, added tokens of every kind;
    falcon: no scanner."""
    _, tok = hf_model(name, tmp_path_factory)
    assert_batch_equals_one_by_one(tok, docs, add_special=add_special)


@pytest.mark.parametrize("name", ["gpt2", "llama3", "qwen2", "trained-bytelevel"])
def test_hf_batch_equals_tokenizers(name, tmp_path_factory, monkeypatch):
    hf, tok = hf_model(name, tmp_path_factory)
    lines = text_lines("udhr", limit=3000) + text_lines("stdlib", limit=500) + text_lines(limit=500)
    lines += ["", "a<|endoftext|>b", "<|begin_of_text|>hi", "x <mask> y", "e\u0301 Å", "12345 ١٢٣"]
    small_chunks(monkeypatch)
    want = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    assert tok.encode_batch(lines, threads=3) == want
    want = [e.ids for e in hf.encode_batch(lines)]
    assert tok.encode_batch(lines, threads=3, add_special=True) == want


# -- tiktoken-style ByteLevelBPE -----------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted() -> ByteLevelBPE:
    texts = text_lines(limit=2000) + text_lines("udhr", limit=500)
    return ByteLevelBPE().fit(texts, n_tokens=600, pattern="cl100k", special_tokens=["<|endoftext|>", "<|x|>"],
                              quiet=True)


@SETTINGS
@given(docs=DOCS, which=st.sampled_from(["all", "one", "none"]))
def test_bytelevel_batch_equals_one_by_one(fitted, docs, which):
    allowed = {"all": "all", "one": {"<|x|>"}, "none": frozenset()}[which]
    try:
        want = [fitted.encode(doc, allowed_special=allowed) for doc in docs]
    except DisallowedSpecialTokenError:
        with pytest.raises(DisallowedSpecialTokenError):
            fitted.encode_batch(docs, allowed_special=allowed)
        return
    with pytest.MonkeyPatch.context() as patch:
        small_chunks(patch)
        assert fitted.encode_batch(docs, threads=3, allowed_special=allowed) == want
    assert fitted.encode_ordinary_batch(docs, threads=2) == [fitted.encode_ordinary(doc) for doc in docs]


def test_bytelevel_batch_equals_tiktoken(fitted, monkeypatch):
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding("t", pat_str=fitted.pattern, mergeable_ranks=fitted.mergeable_ranks(),
                            special_tokens=fitted.special_tokens)
    lines = text_lines("udhr", limit=2000) + text_lines("stdlib", limit=500)
    lines += ["a<|endoftext|>b", "", "lone \udc80 surrogate", "<|x|>"]
    small_chunks(monkeypatch)
    assert fitted.encode_batch(lines, threads=3, allowed_special="all") == \
        enc.encode_batch(lines, allowed_special="all")
    assert fitted.encode_ordinary_batch(lines, threads=3) == enc.encode_ordinary_batch(lines)
    with pytest.raises(DisallowedSpecialTokenError):
        fitted.encode_batch(lines, threads=3)
    other = fitted.with_pattern(r"\w+|\s+|[^\w\s]+")  # no native scanner: the regex, per text
    assert other.encode_ordinary_batch(lines[:300], threads=2) == [other.encode_ordinary(t) for t in lines[:300]]


def test_gguf_ranks_as_tiktoken_batch():
    tiktoken = pytest.importorskip("tiktoken")
    tok = gguf_model("llama-bpe")
    ranks = {raw: i for i, raw in enumerate(tok._raw) if raw is not None and tok.token_types[i] == 1}
    ours = ByteLevelBPE.from_mergeable_ranks(ranks, pattern="llama3")
    enc = tiktoken.Encoding("l", pat_str=PATTERNS["llama3"], mergeable_ranks=ranks, special_tokens={})
    lines = text_lines("udhr", limit=2000) + text_lines("stdlib", limit=500)
    assert ours.encode_ordinary_batch(lines) == enc.encode_ordinary_batch(lines)


# -- threads, kernels --------------------------------------------------------------------------


def test_default_threads_follow_ubpe_num_threads(monkeypatch, fitted):
    monkeypatch.setenv("UBPE_NUM_THREADS", "3")
    assert batch_workers(None) == 3 and batch_workers(2) == 2
    for bad in ("0", "x"):
        monkeypatch.setenv("UBPE_NUM_THREADS", bad)
        with pytest.raises(InvalidParameterError, match="UBPE_NUM_THREADS"):
            gguf_model("gpt-2").encode_batch(["a"])
        with pytest.raises(InvalidParameterError, match="UBPE_NUM_THREADS"):
            fitted.encode_batch(["a"])
    monkeypatch.delenv("UBPE_NUM_THREADS")
    assert batch_workers(None) >= 1


def test_chunks_cover_the_documents_in_order():
    lengths = np.array([5, 0, 300_000, 7, 0, 1, 2, 90_000, 3])
    for workers in (1, 2, 8):
        ranges = batch.chunk_ranges(lengths, workers)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(lengths)
        assert all(a < b and b == c for (a, b), (c, _) in zip(ranges, ranges[1:]))
    assert batch.chunk_ranges(np.zeros(0, np.int64), 2) == [(0, 0)]
