"""``encode_batch_to_numpy`` on every imported family (issue 25, "every family on every core").

The arrays' ids are ``encode_batch``'s exactly, and those are the real peers': llama.cpp's
expected ids for its GGUF vocabularies, tiktoken's for a ``.tiktoken`` file, HF
``tokenizers``' for ``tokenizer.json`` files, sentencepiece's for ``.model`` files,
mistral-common's for tekken. Hypothesis draws batches (special tokens, lone characters of
every plane, empty texts) on 1 to 4 threads; a unigram model's scores are its
log-probabilities; bad input raises what ``encode_batch`` raises.
"""

from __future__ import annotations

import functools
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe
from ubpe.encoders.encoding import EncodedBatch
from ubpe.errors import UBPEError
from ubpe.io import gguf as gguf_io

from vocab_corpora import GPT2_VOCABS, LLAMA_VOCABS, MISTRAL_PACKAGE, shipped_file, text_lines, vocab_path, \
    whisper_file

# a few more GGUF families: llama.cpp's WordPiece (BERT) and gemma 4's character BPE
OTHER_GGUF = ("bert-bge", "gemma-4")
#: the files every run checks; the rest run with the long tests (``-m long``, as CI does)
CORE_FILES = ("gpt-2", "llama-bpe", "llama-spm", "gpt2", "llama3", "llama2", "clip", "trained-words")
SPECIAL_BITS = ["<s>", "</s>", "<unk>", "<|endoftext|>", "<|im_start|>", "[CLS]", "<mask>", "[INST]", "▁", " "]


def arrays_ids(batch: EncodedBatch) -> list[list[int]]:
    """The ids of a top-1 batch, from ``best()``, checked against ``tolist()``."""
    assert isinstance(batch, EncodedBatch) and batch.n_encodings.tolist() == [1] * len(batch)
    ids, offsets = batch.best()
    out = [ids[a:b].tolist() for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
    assert [encodings[0][0] for encodings in batch.tolist()] == out
    return out


# two loaded files per kind at a time (the tests over several files run file by file: their
# parametrization is module-scoped): the module's memory is that of its largest few, not of all
@functools.lru_cache(maxsize=2)
def _gguf(name: str):
    pytest.importorskip("gguf")
    return gguf_io.read(vocab_path(name))


@functools.lru_cache(maxsize=1)
def _lines() -> tuple[str, ...]:
    return tuple(text_lines(limit=400) + text_lines("udhr", limit=400) + ["", " ", "  x  ", "\n\n"])


def _core_first(names) -> list:
    """``names`` as parameters, those outside :data:`CORE_FILES` marked long."""
    return [name if name in CORE_FILES else pytest.param(name, marks=pytest.mark.long) for name in names]


def _check_batch(tok, lines, threads=(1, 3), **options):
    want = tok.encode_batch(lines, **options)
    for n in threads:
        batch = tok.encode_batch_to_numpy(lines, threads=n, **options)
        assert arrays_ids(batch) == want
    return want


# -- the peers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", _core_first(GPT2_VOCABS + LLAMA_VOCABS))
def test_gguf_arrays_are_llama_cpps_ids(name):
    tok = _gguf(name)
    cases = gguf_io.read_vocab_tests(vocab_path(name))
    texts = [text for text, _ in cases]
    assert _check_batch(tok, texts) == [ids for _, ids in cases]
    _check_batch(tok, list(_lines()) + texts, threads=(2,))
    _check_batch(tok, texts[:30] + ["<s>x</s>", "<|endoftext|> a"], threads=(2,), add_special=True,
                 parse_special=True)


@pytest.mark.parametrize("name", OTHER_GGUF)
def test_other_gguf_families_arrays_are_encode_batch(name):
    tok = _gguf(name)
    _check_batch(tok, list(_lines()))
    _check_batch(tok, list(_lines())[:50], threads=(2,), add_special=True)


@pytest.mark.parametrize("name", ["gpt2.tiktoken", "multilingual.tiktoken"])
def test_tiktoken_files_arrays_are_tiktokens_ids(name):
    tiktoken = pytest.importorskip("tiktoken")
    tok = ubpe.load(whisper_file(name))
    reference = tiktoken.Encoding(name, pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks(),
                                  special_tokens={})
    lines = list(_lines())
    want = reference.encode_ordinary_batch(lines)
    for threads in (1, 4):
        assert arrays_ids(tok.encode_batch_to_numpy(lines, threads=threads, disallowed_special=())) == want
    assert tok.encode_batch(lines, disallowed_special=()) == want


@pytest.mark.parametrize("name", ["tekken_240718.json", "tekken_240911.json"])
def test_tekken_arrays_are_mistral_commons_ids(name):
    pytest.importorskip("mistral_common")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = shipped_file(MISTRAL_PACKAGE, f"*/src/mistral_common/data/{name}")
    tok, reference = ubpe.load(path), Tekkenizer.from_file(path)
    lines = list(_lines())[:300] + ["<s>[INST] hi [/INST]</s>"]
    for bos, eos in ((False, False), (True, True), (True, False)):
        want = [reference.encode(line, bos=bos, eos=eos) for line in lines]
        assert arrays_ids(tok.encode_batch_to_numpy(lines, threads=2, bos=bos, eos=eos)) == want
        assert tok.encode_batch(lines, bos=bos, eos=eos) == want
    assert len(tok.encode_batch_to_numpy([], bos=True)) == 0


HF_MODELS = ("gpt2", "tekken-split", "roberta", "llama3", "qwen2", "falcon", "llama2", "llama2-metaspace",
             "trained-metaspace", "trained-words", "trained-byte-fallback-partial", "clip")


@functools.lru_cache(maxsize=2)
def _hf(name: str):
    pytest.importorskip("tokenizers")
    from hf_builders import BUILDERS

    from ubpe.io.hf_import import from_json

    reference = BUILDERS[name]()
    return reference, from_json(reference.to_str())


@pytest.mark.parametrize("name", _core_first(HF_MODELS))
def test_hf_arrays_are_tokenizers_ids(name):
    reference, tok = _hf(name)
    lines = list(_lines()) + ["<s>hi</s> <s> x", "a<|endoftext|>b", "x <mask> y", "Ünïcödé ﬁ ①"]
    for add_special in (False, True):
        want = [e.ids for e in reference.encode_batch(lines, add_special_tokens=add_special)]
        assert _check_batch(tok, lines, add_special=add_special) == want


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_sentencepiece_arrays_are_sentencepieces_ids_and_scores(model_type):
    spm = pytest.importorskip("sentencepiece")
    from ubpe.io import sentencepiece as spm_io

    out = io.BytesIO()
    train = text_lines(limit=3000, split="train") + text_lines("udhr", limit=500, split="train")
    spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=out, model_type=model_type,
                                   vocab_size=800, character_coverage=0.995, num_threads=1, minloglevel=2,
                                   user_defined_symbols=["<sep>", "qu"], byte_fallback=True)
    reference = spm.SentencePieceProcessor(model_proto=out.getvalue())
    tok = spm_io.from_bytes(out.getvalue())
    lines = list(_lines()) + ["<sep> qu<sep>", "emoji 🦙"]
    want = reference.encode(lines)
    assert _check_batch(tok, lines) == want
    scores = tok.encode_batch_to_numpy(lines).scores
    if model_type == "unigram":
        assert tok.score_kind() == "log-prob"
        np.testing.assert_allclose(scores, [tok.log_probability(ids) for ids in want], rtol=1e-5, atol=1e-4)
    else:
        assert np.isnan(scores).all()


# -- properties: any batch, any threads ------------------------------------------------------

def _batches():
    bits = st.one_of(st.sampled_from(SPECIAL_BITS), st.characters(codec="utf-8"), st.sampled_from("abc de\n\t1"))
    return st.lists(st.lists(bits, max_size=30).map("".join), max_size=12)


PROPERTY_MODELS = {
    "gguf:gpt-2": lambda: _gguf("gpt-2"),
    "gguf:llama-spm": lambda: _gguf("llama-spm"),
    "gguf:bert-bge": lambda: _gguf("bert-bge"),
    "hf:llama2": lambda: _hf("llama2")[1],
    "hf:clip": lambda: _hf("clip")[1],
    "tiktoken": lambda: ubpe.load(whisper_file("gpt2.tiktoken")),
}


@pytest.mark.parametrize("name", sorted(PROPERTY_MODELS), scope="module")
def test_arrays_are_encode_batch_on_any_batch_and_threads(name):
    tok = PROPERTY_MODELS[name]()
    options = {"disallowed_special": ()} if name == "tiktoken" else {"parse_special": True}

    @settings(max_examples=60, deadline=None)
    @given(_batches(), st.integers(1, 4))
    def check(lines, threads):
        want = [tok.encode(line, **options) for line in lines]
        assert tok.encode_batch(lines, threads=threads, **options) == want
        assert arrays_ids(tok.encode_batch_to_numpy(lines, threads=threads, **options)) == want

    check()


# -- bad input: encode_batch's errors ---------------------------------------------------------

BAD_BATCHES = [(["a", None], {}), (["a", b"b"], {}), (["a", "b\ud800c"], {}), (["a"], {"threads": 0}),
               (["a"], {"no_such_option": 1})]


@pytest.mark.parametrize("name", sorted(PROPERTY_MODELS), scope="module")
@pytest.mark.parametrize("docs, options", BAD_BATCHES)
def test_bad_input_raises_what_encode_batch_raises(name, docs, options):
    tok = PROPERTY_MODELS[name]()

    def outcome(call):
        try:
            return call(docs, **options)
        except Exception as error:  # noqa: BLE001 - compared below
            # an unknown option: Python's TypeError names the method that refused it
            return type(error), str(error).replace("_flat_batch()", "encode_batch()")

    listed, arrays = outcome(tok.encode_batch), outcome(tok.encode_batch_to_numpy)
    if isinstance(listed, list):  # the family takes it (a lone surrogate, replaced as tiktoken does)
        assert arrays_ids(arrays) == listed
    else:
        assert arrays == listed
        assert issubclass(listed[0], (UBPEError, TypeError))


# -- long documents cut among threads -------------------------------------------------------

def _trained(pattern: str):
    from ubpe import ByteLevelBPE

    return ByteLevelBPE().fit(list(_lines()), n_tokens=600, pattern=pattern, quiet=True)


LONG_MODELS = {
    "gguf:gpt-2": lambda: _gguf("gpt-2"),
    "gguf:llama-bpe": lambda: _gguf("llama-bpe"),
    "gguf:qwen2": lambda: _gguf("qwen2"),
    "hf:llama3": lambda: _hf("llama3")[1],
    "bytelevel:cl100k": lambda: _trained("cl100k"),
    "bytelevel:o200k": lambda: _trained("o200k"),
}
#: what long documents are made of: words, spaces and their runs, digits, punctuation, newlines
LONG_BITS = ["the", " the", " cat", "  ", "   ", " ", "\n", "\n\n", " \n", "1", "12345", " 7", "'s", "'ll", ".", ",",
             "!?", " -", "é", " Ünï", "中文", "🦙", "\t", "\u00a0", "A", " B", "x", "’s", " <s>"]


@pytest.mark.parametrize("name", sorted(LONG_MODELS))
def test_long_documents_cut_among_threads_give_the_whole_documents_ids(name):
    """A document longer than a chunk is cut where the preset patterns' pieces break and its
    parts merged on several threads: the ids are the whole document's, on 1, 2 or 4 threads."""
    from ubpe.models.chunks import MIN_CHUNK_CHARS, cut_long_docs, cuttable_unless

    tok = LONG_MODELS[name]()
    options = {"disallowed_special": ()} if name.startswith("bytelevel") else {}

    @settings(max_examples=8, deadline=None)
    @given(st.lists(st.lists(st.sampled_from(LONG_BITS), min_size=1, max_size=400).map("".join), min_size=1,
                    max_size=3), st.integers(20, 60), st.sampled_from([1, 2, 4]))
    def check(fragments, copies, threads):
        long_doc = "".join(fragments * copies)
        while len(long_doc) < 3 * MIN_CHUNK_CHARS:
            long_doc += long_doc
        docs = ["short one", long_doc, "", long_doc[::-1]]
        want = [tok.encode(doc, **options) for doc in docs]
        assert arrays_ids(tok.encode_batch_to_numpy(docs, threads=threads, **options)) == want
        assert tok.encode_batch(docs, threads=threads, **options) == want

    check()
    prose = " ".join(_lines()) * 3
    parts, _, owners = cut_long_docs([prose], np.array([len(prose)]), MIN_CHUNK_CHARS, cuttable_unless(None))
    assert owners is not None and len(parts) > 2 and "".join(parts) == prose
