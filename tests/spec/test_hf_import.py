"""HF ``tokenizer.json`` files: read by ``ubpe.load`` and tokenized id for id as HF
``tokenizers`` does (it is the oracle), on real vocabularies assembled as the published files
are and on BPE models trained with ``tokenizers`` (see ``hf_builders``)."""

from __future__ import annotations

import functools

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

tokenizers = pytest.importorskip("tokenizers")

import ubpe  # noqa: E402
from ubpe.text.patterns import PATTERNS  # noqa: E402
from ubpe.models.hf import HFByteLevelBPE, HFCharBPE, HFEndOfWordBPE  # noqa: E402
from ubpe.errors import ModelFormatError, UBPEError, UnknownTokenError  # noqa: E402
from ubpe.io import detect  # noqa: E402
from ubpe.io.gguf import read_vocab_tests  # noqa: E402
from ubpe.io.hf_import import from_json  # noqa: E402

from hf_builders import BUILDERS  # noqa: E402
from peer_process import HFPeer  # noqa: E402
from vocab_corpora import text_lines, vocab_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BYTE_LEVEL = ("gpt2", "tekken-split", "roberta", "llama3", "qwen2", "falcon", "starcoder", "deepseek-coder", "trained-bytelevel")
#: builders whose files are neither plain byte-level nor character-level BPE
CLASSES = {"clip": HFEndOfWordBPE}
EDGES = [
    "", " ", "  \r\n  end   ", "\n\n\t x", "'ſ 'S 'Ll \u0378x \ufdd0 a\U0010ffff  \n\n\t x",
    "<s>hi</s> <s> x", "a<|endoftext|>b <|endoftext|>", "x <mask> y<mask>  <mask>",
    "hello world hello world[word] a[word]b @@ x@@y  @@  z", "<|begin_of_text|>hi<|im_start|>user\n",
    "thee and thee, thou", "Ünïcödé ﬁ ① ２ 𝔘𝔫𝔦 ÅÅ", "tab\tand\u00a0nbsp\u3000ideographic",
]
def built(name: str, tmp_path_factory) -> tuple:
    """``(ubpe's tokenizer of the saved file, the path)``; HF's runs in the ``peer`` process."""
    return _built(name, tmp_path_factory.getbasetemp())


# the tests over every file run file by file (their parametrization is module-scoped), so two
# loaded files at a time are enough: the module's memory is about that of its largest two, not of
# all 17 (1.4 GB held to the module's end otherwise); the saved files stay, so a reload is a load
@functools.lru_cache(maxsize=2)
def _built(name: str, base: Path) -> tuple:
    path = _saved(name, base)
    return ubpe.load(path), path


@functools.lru_cache(maxsize=None)
def _saved(name: str, base: Path) -> Path:
    path = Path(tempfile.mkdtemp(prefix="hf", dir=base)) / f"{name}.json"
    BUILDERS[name]().save(str(path))
    return path


@pytest.fixture(scope="module")
def peer():
    """HF ``tokenizers`` over many texts, in a process that ends with the module (what it
    keeps after a tokenizer is dropped goes with it: tests/peer_process.py)."""
    with HFPeer() as running:
        yield running


@pytest.fixture(scope="module")
def heldout() -> list[str]:
    """Real text of every script, prose and code, and llama.cpp's tokenizer test inputs."""
    from experiments.datasets import load

    lines = [line for split in ("train", "heldout") for doc in load("udhr", split).docs
             for line in str(doc).split("\n") if line.strip()]
    lines += text_lines("kjv", limit=600) + text_lines("shakespeare", limit=800) + text_lines("stdlib", limit=1200)
    for name in ("gpt-2", "llama-bpe", "qwen2", "llama-spm"):
        lines += [text for text, _ in read_vocab_tests(vocab_path(name))]
    return lines + EDGES


@pytest.mark.parametrize("name", sorted(BUILDERS), scope="module")
def test_ids_equal_tokenizers(name, heldout, tmp_path_factory, peer):
    tok, path = built(name, tmp_path_factory)
    assert detect(path) == "hf"
    assert isinstance(tok, CLASSES.get(name, HFByteLevelBPE if name in BYTE_LEVEL else HFCharBPE))
    assert len(heldout) > 4000
    want = peer.ids(path, heldout)
    differ = [(text, ids) for text, ids in zip(heldout, want) if tok.encode(text) != ids]
    assert not differ, f"{len(differ)}/{len(heldout)} texts differ, first: {differ[0]!r}"


@pytest.mark.parametrize("name", sorted(BUILDERS), scope="module")
def test_decode_and_special_tokens_equal_tokenizers(name, heldout, tmp_path_factory, peer):
    tok, path = built(name, tmp_path_factory)
    sample = heldout[::7] + EDGES
    framed = peer.ids(path, sample, add_special=True)
    decoded, kept = peer.decode(path, framed), peer.decode(path, framed, skip_special=False)
    for text, with_specials, plain, raw in zip(sample, framed, decoded, kept, strict=True):
        assert tok.encode(text, add_special=True) == with_specials, repr(text)
        assert tok.decode(with_specials) == plain, repr(text)
        assert tok.decode(with_specials, skip_special=False) == raw


def test_merges_as_strings_read_alike(heldout, tmp_path_factory, tmp_path):
    """Older files write merges as "a b" strings, newer ones as [a, b] lists."""
    tok, path = built("gpt2", tmp_path_factory)
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    assert isinstance(doc["model"]["merges"][0], list)
    doc["model"]["merges"] = [" ".join(pair) for pair in doc["model"]["merges"]]
    old = tmp_path / "tokenizer.json"
    old.write_text(json.dumps(doc), encoding="utf-8")
    legacy = ubpe.load(old)
    assert all(legacy.encode(text) == tok.encode(text) for text in heldout[::5])


@pytest.mark.parametrize("name", ["gpt2", "llama2", "clip"])
def test_a_file_s_merges_are_read_from_its_bytes_as_from_its_text(name, heldout, tmp_path_factory, tmp_path):
    """``ubpe.load`` of a file reads its merge rules from the bytes (`JsonMerges`, in C) where
    ``from_json`` of its text decodes them: the same rules, ranks and ids; and the file's
    document, kept as bytes, is what the writer writes back. A file whose merges repeat a pair,
    with CRLF newlines and its keys in another order, too (the rules' ids and ranks:
    tests/units/test_json_merges_rules.py)."""
    _, path = built(name, tmp_path_factory)
    text = Path(path).read_text(encoding="utf-8")
    doc = json.loads(text)
    model = doc["model"]
    merges = model["merges"]
    model["merges"] = merges[:50] + merges[:3] + merges[50:]  # three pairs again, later
    moved = {"model": {"merges": model.pop("merges"), **model}, **{k: v for k, v in doc.items() if k != "model"}}
    again = tmp_path / "moved.json"
    again.write_bytes(json.dumps(moved, indent=1).replace("\n", "\r\n").encode("utf-8"))
    for source in (Path(path), again):
        fast = ubpe.load(source, "hf")
        slow = from_json(source.read_text(encoding="utf-8"), str(source))
        assert isinstance(fast.source_json, bytes) and isinstance(slow.source_json, str)
        assert fast.n_merges == slow.n_merges
        assert [fast.encode(line) for line in heldout[::9]] == [slow.encode(line) for line in heldout[::9]]
        written = tmp_path / "written.json"
        fast.save(written, "hf")
        assert written.read_text(encoding="utf-8") == source.read_text(encoding="utf-8")


def test_a_file_s_bad_merges_are_named_as_before(tmp_path):
    """A rule the C reader does not read (no JSON, no single space, a lone surrogate's escape)
    sends the file to the decoded rules, which name what is wrong, or read it as before."""
    base = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "\ud800": 3, "a\ud800": 4}, "merges": ["a b"]},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}}
    path = tmp_path / "tokenizer.json"

    def loaded(merges_text: str):
        text = json.dumps(base).replace('["a b"]', merges_text)
        path.write_text(text, encoding="utf-8")
        return ubpe.load(path)

    with pytest.raises(ModelFormatError, match="not two tokens separated by one space"):
        loaded('["a b", "a b b"]')
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        loaded('["a b",]')
    with pytest.raises(ModelFormatError, match="which is not in the vocabulary"):
        loaded('["a b", "b a"]')
    with pytest.raises(ModelFormatError, match="too deep"):  # (found by the fuzz lane: a RecursionError)
        loaded("[" * 5000 + "]" * 5000)
    tok = loaded('["a b", "a \\ud800"]')  # a lone surrogate (no UTF-8): the json module's reading
    assert tok.n_merges == 2 and tok.encode("ab") == [2]


# a byte-level and a character file every run; the other two with the long tests
@pytest.mark.parametrize("name", ["gpt2", pytest.param("qwen2", marks=pytest.mark.long), "llama2",
                                  pytest.param("trained-metaspace", marks=pytest.mark.long)], scope="module")
@pytest.mark.parametrize("encoder", ["fewest", "longest_prefix", "tfidf", "ranked"])
def test_every_encoder_runs_on_imported_vocabularies(name, encoder, heldout, tmp_path_factory):
    tok, _ = built(name, tmp_path_factory)
    for text in heldout[:: 40]:
        [(ids, score)] = tok.encode_with(text, encoder)
        native = tok.encode(text)
        if "<unk>" not in {tok.texts[i] for i in native}:
            assert tok.decode(ids) == tok.decode(native), repr(text)
        if encoder == "fewest":
            assert len(ids) <= len(native)
        assert np.isfinite(score)


def test_top_n_and_fitted_weights(heldout, tmp_path_factory):
    tok, _ = built("llama3", tmp_path_factory)
    found = tok.encode_with("Hello world, hello there", "tfidf", top_n=3)
    assert len({tuple(ids) for ids, _ in found}) == 3
    assert all(tok.decode(ids) == "Hello world, hello there" for ids, _ in found)
    fitted, path = built("trained-bytelevel", tmp_path_factory)
    fitted = ubpe.load(path).fit_weights(heldout[:200])
    (ids, score), = fitted.encode_with(heldout[0])
    assert ids == fitted.encode(heldout[0]) and score > 0


def test_description_and_contract(tmp_path_factory):
    tok, _ = built("llama3", tmp_path_factory)
    info = tok.describe()
    assert info["variant"] == "hf:bytelevel" and info["n_vocab"] == 128256 and info["ignore_merges"]
    assert info["post_processor"] == {"prefix": [128000], "suffix": []}
    assert tok.id_to_piece(tok.encode(" world")[0]) == "Ġworld"
    assert tok.pieces(tok.encode(" world")) == [b" world"]
    spm, _ = built("llama2", tmp_path_factory)
    assert spm.describe()["byte_fallback"] and spm.pieces(spm.encode("hi")) == [" hi"]
    with pytest.raises(UnknownTokenError):
        tok.decode([10**6])
    with pytest.raises(UBPEError):
        tok.encode(b"bytes")


def _minimal(**changes) -> str:
    doc = {"version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
           "decoder": {"type": "ByteLevel"},
           "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}
    doc.update(changes)
    return json.dumps(doc)


@pytest.mark.parametrize("changes, words", [
    ({"model": {"type": "Foo", "vocab": {"a": 0}, "unk_token": "a"}}, ["model type 'Foo'", "BPE", "WordLevel"]),
    ({"model": {"type": "WordPiece", "vocab": {"a": 0}}}, ["WordPiece"]),
    ({"model": {"type": "Unigram", "vocab": [["a", "0.0"]]}}, ["Unigram", "vocab"]),
    ({"normalizer": {"type": "Precompiled", "precompiled_charsmap": ""}}, ["Precompiled", "charsmap"]),
    ({"model": {"type": "WordPiece", "vocab": {"a": 0, "[UNK]": 1}}, "decoder": {"type": "CTC"}},
     ["decoder 'CTC'", "WordPiece"]),
    ({"normalizer": {"type": "Nmt"}}, ["normalizer 'Nmt'", "BertNormalizer"]),
    ({"pre_tokenizer": {"type": "UnicodeScripts"}}, ["pre_tokenizer 'UnicodeScripts'", "BertPreTokenizer"]),
    ({"decoder": {"type": "CTC"}}, ["decoder 'CTC'", "ByteFallback"]),
    ({"post_processor": {"type": "Foo"}}, ["post_processor 'Foo'", "TemplateProcessing"]),
    ({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "continuing_subword_prefix": "##"}},
     ["continuing_subword_prefix"]),
    ({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}}, ["'ab'", "not in the vocabulary"]),
    ({"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}}, ["vocab"]),
    ({"model": {"type": "BPE", "vocab": {"a": 2**31 - 2}, "merges": []}}, ["id 2147483646", "supported"]),
    ({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]}}, ["merge 'a'"]),
    ({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated"}}, ["regex"]),
    ({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways"}}, ["Sideways"]),
    ({"added_tokens": [{"content": "x"}]}, ["added token"]),
])
def test_unsupported_or_bad_components_are_one_clear_error(changes, words):
    with pytest.raises(ModelFormatError) as caught:
        from_json(_minimal(**changes))
    message = str(caught.value)
    assert "\n" not in message and all(word in message for word in words), message


def test_not_json_and_not_a_tokenizer(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"added_tokens": [', encoding="utf-8")
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        ubpe.load(path)
    with pytest.raises(ModelFormatError, match="no `model`"):
        from_json('{"added_tokens": []}')


def test_cli_encodes_and_inspects_a_tokenizer_json(tmp_path_factory, peer):
    _, path = built("gpt2", tmp_path_factory)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": ""}
    text = "Hello world, héllo!"
    result = subprocess.run([sys.executable, "-m", "ubpe", "encode", str(path), "--text", text],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert [int(t) for t in result.stdout.split()] == peer.ids(path, [text])[0]
    result = subprocess.run([sys.executable, "-m", "ubpe", "inspect", str(path)],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0 and "hf:bytelevel" in result.stdout, result.stderr


def _pre(*steps):
    return {"type": "Sequence", "pretokenizers": list(steps)}


def _split(pattern, behavior, invert=False, kind="Regex"):
    return {"type": "Split", "pattern": {kind: pattern}, "behavior": behavior, "invert": invert}


def _byte_level(prefix=False, regex=True):
    return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": True, "use_regex": regex}


def _added(content, id, special=False, **flags):
    return {"id": id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special, **flags}


_METASPACE = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}
# (base file, changes to its document): every component option against tokenizers
VARIANTS = {
    "split-merged-previous": ("trained-bytelevel", {"pre_tokenizer": _pre(
        _split(" ", "MergedWithPrevious", kind="String"), _byte_level(prefix=True, regex=False))}),
    "split-merged-next": ("trained-bytelevel", {"pre_tokenizer": _pre(
        _split(r"\p{P}", "MergedWithNext"), _byte_level())}),
    "split-inverted-contiguous": ("trained-bytelevel", {"pre_tokenizer": _pre(
        _split(r"\s+", "Contiguous", invert=True), _byte_level(regex=False))}),
    # tiktoken's patterns: possessive quantifiers, and `{1,3}+`, which Oniguruma reads as a repeat
    "split-cl100k": ("trained-bytelevel", {"pre_tokenizer": _pre(_split(PATTERNS["cl100k"], "Isolated"),
                                                                  _byte_level(regex=False))}),
    "split-o200k": ("trained-bytelevel", {"pre_tokenizer": _pre(_split(PATTERNS["o200k"], "Isolated"),
                                                                 _byte_level(regex=False))}),
    "split-removed": ("trained-bytelevel", {"pre_tokenizer": _pre(_split(r"[aeiou]", "Removed"), _byte_level())}),
    "digits-punctuation": ("trained-bytelevel", {"pre_tokenizer": _pre(
        {"type": "Digits", "individual_digits": False}, {"type": "Punctuation", "behavior": "Isolated"},
        _byte_level(prefix=True))}),
    "split-after-byte-level": ("trained-bytelevel", {"pre_tokenizer": _pre(
        _byte_level(), {"type": "Digits", "individual_digits": True})}),
    "normalizers": ("trained-bytelevel", {"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFKD"}, {"type": "Lowercase"},
        {"type": "Replace", "pattern": {"Regex": r"\d+"}, "content": "0"},
        {"type": "Strip", "strip_left": True, "strip_right": False}]}}),
    "added-tokens-renumbered": ("trained-bytelevel", {"added_tokens": [
        _added("<|endoftext|>", 0, True), _added("ĠThe", 17), _added("zz", 9000, normalized=True),
        _added("[w]", 5, single_word=True), _added("@@", 1, True, lstrip=True, rstrip=True),
        _added(" hello", 3, normalized=False)]}),
    "metaspace-first": ("trained-metaspace", {"pre_tokenizer": _METASPACE, "added_tokens": [
        _added("<unk>", 0, True), _added("<s>", 1, True), _added("</s>", 5000, True)]}),
    "metaspace-never-no-decoder": ("trained-metaspace", {
        "pre_tokenizer": {**_METASPACE, "prepend_scheme": "never"}, "decoder": None}),
    "metaspace-old-format": ("trained-metaspace", {"pre_tokenizer": {
        "type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
        "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": True}}),
    "char-ignore-merges": ("trained-metaspace", {"model": "ignore_merges"}),
    "prepend-normalized-added": ("trained-byte-fallback", {"added_tokens": [
        _added("<unk>", 0, True), _added("the", 1, normalized=True), _added(" and", 2, normalized=True),
        _added("thee", 3, normalized=False, rstrip=True)]}),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_component_options_equal_tokenizers(variant, heldout, tmp_path_factory, peer):
    base, changes = VARIANTS[variant]
    _, path = built(base, tmp_path_factory)
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    for key, value in changes.items():
        if key == "model":
            doc["model"][value] = True
        else:
            doc[key] = value
    text = json.dumps(doc)
    tok = from_json(text)
    sample = heldout[::4] + EDGES + ["x [w] y[w] [w]", "a @@ b  @@  c", "zz hello world 123 4567"]
    want = peer.ids(text, sample)
    differ = [(line, ids, tok.encode(line)) for line, ids in zip(sample, want) if tok.encode(line) != ids]
    assert not differ, f"{len(differ)}/{len(sample)} differ, first: {differ[0]!r}"
    for ids, decoded in zip(want[::10], peer.decode(text, want[::10]), strict=True):
        assert tok.decode(ids) == decoded


def test_a_model_type_ubpe_does_not_know_is_one_clear_line(tmp_path):
    """(Every model ``tokenizers`` saves loads: BPE, WordPiece, Unigram, WordLevel. A file saved
    by it, its model's type renamed.)"""
    path, name = tmp_path / "tokenizer.json", "Foo"
    tokenizers.Tokenizer(tokenizers.models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]")).save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["model"]["type"] = name
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert detect(path) == "hf"
    with pytest.raises(ModelFormatError, match=f"model type '{name}' is not supported; ubpe reads BPE"):
        ubpe.load(path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": ""}
    env.pop("UBPE_TRACEBACK", None)
    result = subprocess.run([sys.executable, "-m", "ubpe", "encode", str(path), "--text", "ab"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode != 0 and result.stderr.count("\n") == 1 and name in result.stderr, result.stderr


# models whose whole pipeline runs in C (`HFCharBPE._build_native_pipeline`), and one that does not
NATIVE_CHAR = ("llama2", "llama2-metaspace", "trained-metaspace", "trained-metaspace-nofuse", "trained-byte-fallback",
               "trained-byte-fallback-partial")


@pytest.mark.parametrize("name", [*NATIVE_CHAR, "trained-words"])
def test_char_models_batches_are_one_by_one(name, heldout, tmp_path_factory, peer):
    """The C pipeline of character BPE models: ``encode_batch`` on any number of threads is
    ``encode`` one by one, and both are HF's; texts it hands back (added tokens, texts that
    NFKC changes) come out in place; bad input is one clear error."""
    tok, path = built(name, tmp_path_factory)
    assert (tok._pipeline is not None) == (name in NATIVE_CHAR)
    lines = heldout[::3] + EDGES + ["<s>", "x<unk>y </s>", "ﬁne ①", "thee"]
    want = peer.ids(path, lines)
    assert [tok.encode(line) for line in lines] == want
    assert tok.encode_batch(lines, threads=1) == want
    assert tok.encode_batch(lines * 2, threads=3) == want * 2
    framed = peer.ids(path, lines[:50], add_special=True)
    assert [tok.encode(line, add_special=True) for line in lines[:50]] == framed
    assert tok.encode_batch(lines[:50], add_special=True) == framed
    with pytest.raises(UBPEError, match="lone surrogate"):
        tok.encode_batch(["a", "b\ud800"])
    with pytest.raises(UBPEError):
        tok.encode_batch(["a", None])


@pytest.mark.parametrize("name", NATIVE_CHAR)
def test_char_models_c_pipeline_is_the_python_one(name, tmp_path_factory):
    """On texts made of pieces that stress it (spaces and ``▁`` at either end, unknown and
    multi-byte characters, NFKC-changing ones, added tokens), the C pipeline gives the ids of
    the general Python pipeline, alone and in one batch."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ubpe.models.hf import HFPipelineMixin

    tok, _ = built(name, tmp_path_factory)
    parts = st.sampled_from([" ", "  ", "▁", "a", "the", "thee", "<s>", "<unk>", "é", "e\u0301", "ﬁ", "Ω",
                             "\u4e2d", "🦙", "\n", "x y", "ing"])

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.lists(parts, max_size=10).map("".join), min_size=1, max_size=6))
    def check(texts):
        want = [HFPipelineMixin.encode(tok, text) for text in texts]
        assert [tok.encode(text) for text in texts] == want
        assert tok.encode_batch(texts, threads=1) == want

    check()


# files whose pre-tokenizer is several steps, run by the kernel's program of HF's steps
PROGRAMMED = ("falcon", "starcoder", "deepseek-coder", "clip", "trained-words")


@pytest.mark.parametrize("name", PROGRAMMED)
def test_multi_step_pre_tokenizers_run_natively(name, heldout, tmp_path_factory, peer):
    """The kernel's program of the steps (`ubpe_native._hf_pretok`) splits these files' text:
    ``encode_batch`` and ``encode_batch_to_numpy`` on 1 to 4 threads give HF's ids, documents
    with added tokens and ``add_special`` included; bad input is one clear error."""
    tok, path = built(name, tmp_path_factory)
    assert tok.describe()["pre_tokenization"] == "native program"
    lines = heldout[::2] + EDGES + ["<|endoftext|>x", "<|startoftext|>a b<|endoftext|>", "１２３４ 12345 ²³"]
    want = peer.ids(path, lines)
    for threads in (1, 2, 3, 4):
        assert tok.encode_batch(lines, threads=threads) == want, threads
    ids, offsets = tok.encode_batch_to_numpy(lines, threads=4).best()
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want
    framed = peer.ids(path, lines[:200], add_special=True)
    assert tok.encode_batch(lines[:200], add_special=True, threads=2) == framed
    with pytest.raises(UBPEError, match="lone surrogate"):
        tok.encode_batch(["a", "b\ud800"])
    with pytest.raises(UBPEError):
        tok.encode_batch(["a", None])


@pytest.mark.parametrize("name", ["gpt2", "llama2"])
def test_ambiguity_of_hf_models(name, tmp_path_factory):
    """``ambiguity`` sees the text of an HF model (its normalized segments, not str fragments):
    the native encoding is one of its segmentations (with uniform weights, as likely as any)."""
    tok, _ = built(name, tmp_path_factory)
    found = tok.ambiguity("Hello world, it's a test")
    assert found.n_segmentations > 1 and found.encoding_probability == pytest.approx(found.best_probability)


_COLD_LOAD = r"""
import json, sys
import ubpe
tok = ubpe.load(sys.argv[1])
loaded = sorted(m for m in sys.modules if m.startswith(("ubpe.models.", "ubpe_native.")))
texts = json.loads(sys.argv[2])
plain = tok.encode(texts[-2])
lean = sorted(m for m in ("numpy", "regex", "dataclasses") if m in sys.modules)
print(json.dumps([tok.encode(text) for text in texts]))
print(json.dumps([lean, sorted(m for m in sys.modules if m == "numpy" or m.startswith("numpy.")),
                  sorted(m for m in sys.modules if m.startswith(("ubpe.models.", "ubpe.io."))), loaded]))
"""


@pytest.mark.parametrize("name", ["gpt2", "llama3", "qwen2", "falcon", "trained-bytelevel", "bert", "bert-cased",
                                  "llama2", "trained-metaspace", "trained-metaspace-nofuse", "trained-byte-fallback",
                                  "trained-byte-fallback-partial"])
def test_a_file_loads_and_encodes_without_numpy(name, tmp_path_factory, tmp_path):
    """A byte-level tokenizer.json (the kernel's scanner, ``ignore_merges``' whole words, a
    regex the VM runs as a program), a BERT WordPiece one (the WordPiece kernel's tables) or
    a character BPE one (the C pipeline; unknown characters as HF's merge_word writes them)
    loads and encodes in a fresh process without importing numpy (~35 ms of a cold start:
    issue 36), and a plain text without the regex module and dataclasses either (12 ms; a
    Split regex's validity read from the machine's cache of its VM program), with HF's ids;
    the first process builds the machine's tables (code-point classes, the regex program),
    the second reads them. A WordPiece file imports no BPE model, a character model no
    byte-level one (`ubpe.models.hf_char`) nor, at load, the word path's kernel, the
    sentencepiece models or the ``.model`` reader, and no file another format's reader
    (`ubpe.models.hf_base`, `ubpe.io.sniff`)."""
    from tokenizers import Tokenizer

    from hf_builders import bert

    if name.startswith("bert"):
        path = tmp_path / f"{name}.json"
        bert(lowercase=name == "bert").save(str(path))
    else:
        path = _saved(name, tmp_path_factory.getbasetemp())
    texts = EDGES + ["The quick brown fox, naïve café 12345 don't 🦙", "a\U0010ffffb 中文 ① x"]
    env = {**os.environ, "UBPE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("UBPE_NO_CACHE", None)
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _COLD_LOAD, str(path), json.dumps(texts)],
                              capture_output=True, text=True, env=env, check=True, cwd=tempfile.gettempdir())
        ids, imported = done.stdout.splitlines()
    lean, after_all, modules, loaded = json.loads(imported)
    assert lean == [] and after_all == []  # a plain text's load and encode: no numpy, regex, dataclasses; any text: no numpy
    bpe = {"ubpe.models.hf", "ubpe.models.ranked_bpe", "ubpe.models.sentencepiece", "ubpe.models.clip"}
    byte_level = {"ubpe.models.hf", "ubpe.models.ranked_bpe", "ubpe.models.clip"}
    character = name.startswith(("llama2", "trained-metaspace", "trained-byte-fallback"))
    assert not set(modules) & (bpe if name.startswith("bert") else set())
    assert not set(loaded) & (byte_level if character else set())  # (a text with added tokens may borrow its calls)
    # a character file's pipeline runs in C: its load builds no word path (the merge kernel, the
    # scanner) and imports neither the sentencepiece models nor the .model reader
    word_path = {"ubpe_native._merges", "ubpe.models.scan", "ubpe.models.sentencepiece", "ubpe_native._spm_proto"}
    assert not set(loaded) & (word_path if character else set()), loaded
    readers = {f"ubpe.io.{m}" for m in ubpe.io.FORMAT_MODULES if m != "hf"}
    assert not set(modules) & readers and "ubpe.io.hf_import" in modules
    reference = Tokenizer.from_file(str(path))
    assert json.loads(ids) == [reference.encode(text, add_special_tokens=False).ids for text in texts]
