"""Tokenizer files as people ship them (issue 26, points 1-5), each checked on the real file
where the bug was seen, against the real system:

1. llama.cpp's "default" and "falcon" pre-tokenizers keep an escaped ``\\$`` a dollar sign
   (aquila, gpt-neox, falcon): the rewrite of ``$`` anchors is checked by a property on any
   pattern, and the files against a reference built in HF ``tokenizers`` from the same regex
   list, vocabulary and merges -- a reference that first reproduces llama.cpp's own expected
   ids on all 11 tested byte-level vocabularies;
2. llama-type vocabularies (llama-spm, phi-3, baichuan) decode without the dummy prefix, by the
   rule sentencepiece's decoder also follows (checked on Mistral's five ``.model`` files);
3. ``add_bos`` follows llama.cpp's rules per pre-tokenizer, read from ``llama-vocab.cpp`` in
   the pinned llama-cpp-python sdist;
4. whisper's ``multilingual.tiktoken`` (its empty token) reads as tiktoken's loader reads it;
5. a ``.tiktoken`` file without ``pattern=`` takes its published encoding's pattern, else the
   default with a warning (one line on the command line).

The corpus (`vocab_corpora.varied_texts`) holds 1,100+ texts: prose, the UDHR in many
scripts, Python source, random code points of every plane, whitespace runs and emoji.
"""

from __future__ import annotations

import functools
import hashlib
import re
import tarfile
import warnings

import pytest

import ubpe
from ubpe.cli import main
from ubpe.errors import IgnoredInputWarning, ModelFormatError
from ubpe.io import gguf as gguf_io
from ubpe.io import tiktoken as tiktoken_io
from ubpe.text.patterns import PATTERNS
from ubpe.text.pretokenizers import ADDS_BOS, PRE_TYPES, REGEXES, Pretokenizer, resolve_pre

from vocab_corpora import (GPT2_VOCABS, LLAMA_CPP_PACKAGE, LLAMA_VOCABS, MISTRAL_PACKAGE, UNTESTED_GPT2_VOCABS,
                           UNTESTED_LLAMA_VOCABS, WHISPER_FILES, shipped_files, varied_texts, vocab_path,
                           whisper_file)

MIN_TEXTS = 1000


@functools.lru_cache(maxsize=None)
def _gguf(name: str):
    return gguf_io.read(vocab_path(name))


@functools.lru_cache(maxsize=1)
def _texts() -> tuple[str, ...]:
    texts = tuple(varied_texts())
    assert len(texts) >= MIN_TEXTS
    return texts


def _llama_cpp_reference(tok):
    pytest.importorskip("tokenizers")
    from hf_builders import llama_cpp_reference

    return llama_cpp_reference(tok)


@pytest.mark.parametrize("name", GPT2_VOCABS)
def test_the_reference_gives_llama_cpps_expected_ids(name):
    """The HF-built reference is llama.cpp's tokenizer on every file llama.cpp tests."""
    reference = _llama_cpp_reference(_gguf(name))
    cases = gguf_io.read_vocab_tests(vocab_path(name))
    differ = [(text, ids) for text, ids in cases if reference.encode(text).ids != ids]
    assert not differ, f"{len(differ)}/{len(cases)} differ, first: {differ[0]!r}"


@pytest.mark.parametrize("name", [*UNTESTED_GPT2_VOCABS, "falcon"])
def test_default_and_falcon_pretokenizers_give_the_references_ids(name):
    """aquila and gpt-neox (no ``tokenizer.ggml.pre``: "default") and falcon: every text of
    the varied corpus, ``Z`` and ``$`` included, as the reference encodes it."""
    tok = _gguf(name)
    assert resolve_pre(tok.pre)[0] in ("default", "falcon")
    reference = _llama_cpp_reference(tok)
    texts = _texts()
    differ = [text for text in texts if tok.encode(text) != reference.encode(text).ids]
    assert not differ, f"{len(differ)}/{len(texts)} differ, first: {differ[0]!r}"
    assert tok.encode_batch(list(texts), threads=2) == [reference.encode(t).ids for t in texts]


@pytest.mark.parametrize("pre_type", ["default", "falcon"])
@pytest.mark.parametrize("text", ["ZeroDivisionError", "IZ", "\n\n    $ echo", "a$b \\$ Z$"])
def test_issue_texts_are_cut_as_the_reference_cuts_them(pre_type, text):
    hf = pytest.importorskip("tokenizers")
    reference = hf.pre_tokenizers.Sequence(
        [hf.pre_tokenizers.Split(hf.Regex(e), behavior="isolated") for e in REGEXES[pre_type]])
    assert Pretokenizer.for_type(pre_type).split(text) == [piece for piece, _ in reference.pre_tokenize_str(text)]


# -- 2. llama-type vocabularies decode without the dummy prefix --------------------------------

@pytest.mark.parametrize("name", [*LLAMA_VOCABS, *UNTESTED_LLAMA_VOCABS])
def test_llama_type_vocabularies_round_trip(name):
    """llama.cpp's detokenizer removes the space its tokenizer put in front (``remove_space =
    add_space_prefix``): ``decode(encode(text)) == text`` on every text it can encode without
    the unknown token (where llama.cpp round-trips too)."""
    tok = _gguf(name)
    unk = tok.special_ids.get("unk")
    encodable = [text for text in _texts() if unk not in tok.encode(text)]
    assert len(encodable) >= MIN_TEXTS
    differ = [text for text in encodable if tok.decode(tok.encode(text)) != text]
    assert not differ, f"{len(differ)}/{len(encodable)} differ, first: {differ[0]!r}"
    assert tok.decode(tok.encode("hello")) == "hello" and tok.decode(tok.encode(" hello")) == " hello"


@pytest.mark.long  # two Mistral vocabularies loaded twice over (~2.3 s)
def test_the_same_rule_is_sentencepieces_on_mistral_models():
    """One rule for both systems: on Mistral's sentencepiece models, ``decode`` of
    sentencepiece's ids is sentencepiece's text, and so are the ids."""
    spm = pytest.importorskip("sentencepiece")
    paths = shipped_files(MISTRAL_PACKAGE, "*/src/mistral_common/data/*.model.*")
    assert len(paths) == 5
    texts = [t for t in _texts() if len(t) < 2000]
    for path in paths:
        tok = ubpe.load(path)
        reference = spm.SentencePieceProcessor(model_file=str(path))
        differ = [t for t in texts if tok.encode(t) != reference.encode(t)
                  or tok.decode(reference.encode(t)) != reference.decode(reference.encode(t))]
        assert not differ, f"{path.name}: {len(differ)}/{len(texts)} differ, first: {differ[0]!r}"


# -- 3. add_bos as llama.cpp sets it ---------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _llama_vocab_cpp() -> str:
    """llama.cpp's ``src/llama-vocab.cpp``, read from the pinned llama-cpp-python sdist."""
    from ubpe.lab.datasets import DataNotInstalledError
    from experiments.datasets.sources import archive_path

    try:
        path = archive_path(LLAMA_CPP_PACKAGE)
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            if member.name.endswith("/vendor/llama.cpp/src/llama-vocab.cpp"):
                return tar.extractfile(member).read().decode("utf-8")
    raise AssertionError(f"no llama-vocab.cpp in {path}")


def _llama_cpp_pre_settings() -> dict[str, str]:
    """``tokenizer.ggml.pre`` -> the statements of its branch in llama_vocab::impl::load."""
    source = _llama_vocab_cpp()
    section = source[source.index('tokenizer_pre == "default"'):source.index("type == LLAMA_VOCAB_TYPE_SPM")]
    settings: dict[str, str] = {}
    for branch in section.split("} else if (")[1:]:
        condition, _, body = branch.partition(") {")
        for name in re.findall(r'tokenizer_pre == "([^"]+)"', condition):
            settings[name] = body
    return settings


def test_adds_bos_and_ignore_merges_are_llama_cpps():
    """For every pre-tokenizer ubpe reads: a BOS exactly where llama.cpp sets ``add_bos =
    true``, and ``ignore_merges`` exactly where llama.cpp sets it."""
    settings = _llama_cpp_pre_settings()
    assert set(PRE_TYPES) - {"default"} <= set(settings)
    for pre, (_, ignore_merges) in PRE_TYPES.items():
        body = settings.get(pre, "")
        assert (pre in ADDS_BOS) == ("add_bos = true;" in body), pre
        assert ignore_merges == ("ignore_merges = true;" in body), pre


def test_default_special_ids_are_llama_cpps():
    source = _llama_vocab_cpp()
    for model, ids in gguf_io.DEFAULT_SPECIAL_IDS.items():
        branch = source[source.index(f'tokenizer_model == "{model}"'):][:3000]
        for name, token in ids.items():
            assert re.search(rf"special_{name}_id\s*=\s*{token};", branch), (model, name)


@pytest.mark.parametrize("name", GPT2_VOCABS + UNTESTED_GPT2_VOCABS)
def test_bos_on_every_byte_level_vocabulary(name):
    """``encode(text, add_special=True)``: the file's ``add_bos_token`` where it has one, else
    llama.cpp's rule for its pre-tokenizer (Llama 3 gets its BOS)."""
    metadata = gguf_io.read_metadata(vocab_path(name))
    pre = metadata.get("tokenizer.ggml.pre", "default")
    flag = metadata.get("tokenizer.ggml.add_bos_token")
    expected = flag if flag is not None else "add_bos = true;" in _llama_cpp_pre_settings().get(pre, "")
    tok = _gguf(name)
    bos = int(metadata["tokenizer.ggml.bos_token_id"])
    assert tok.encode("Hi", add_special=True) == ([bos] if expected else []) + tok.encode("Hi")
    if name == "llama-bpe":  # issue 26: Llama 3 gets its <|begin_of_text|>
        assert expected and tok.id_to_piece(bos) == "<|begin_of_text|>"


def _metadata(pre: str | None, **keys):
    metadata = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": [chr(c) for c in range(33, 60)],
                "tokenizer.ggml.merges": []}
    if pre is not None:
        metadata["tokenizer.ggml.pre"] = pre
    metadata.update({f"tokenizer.ggml.{k}": v for k, v in keys.items()})
    return metadata


@pytest.mark.parametrize(("pre", "keys", "first"), [
    ("llama-bpe", {}, 11),                                    # llama.cpp's default BOS id
    ("llama-bpe", {"bos_token_id": 3}, 3),
    ("llama-bpe", {"bos_token_id": 3, "add_bos_token": False}, None),  # the file decides
    ("gpt-2", {"bos_token_id": 3}, None),
    ("gpt-2", {"bos_token_id": 3, "add_bos_token": True}, 3),
    (None, {"bos_token_id": 3}, None),                        # no pre: "default"
    ("falcon3", {"bos_token_id": 3}, 3),
    ("dbrx", {"bos_token_id": 3}, None),                      # Llama 3's regex, not its BOS
])
def test_bos_rules(pre, keys, first):
    tok = gguf_io.from_metadata(_metadata(pre, **keys))
    ids = tok.encode("!", add_special=True)
    assert ids == ([first] if first is not None else []) + tok.encode("!")


# -- 4. whisper's .tiktoken files, the empty token included ---------------------------------------

# whisper/tokenizer.py's get_encoding: GPT-2's pattern, special tokens after the ranks
WHISPER_PAT_STR = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
WHISPER_SPECIALS = ("<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>")


@pytest.mark.parametrize("name", WHISPER_FILES)
def test_whisper_files_parse_as_tiktokens_loader_reads_them(name, monkeypatch):
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the file, cache nothing
    path = whisper_file(name)
    expected = tiktoken.load.load_tiktoken_bpe(str(path))
    assert tiktoken_io.parse_tiktoken(path.read_text(encoding="ascii")) == expected
    if name == "multilingual.tiktoken":
        assert expected[b""] == 50256


@pytest.mark.parametrize("name", WHISPER_FILES)
def test_whisper_ids_equal_tiktokens(name, monkeypatch):
    """As whisper builds its tokenizer: the file's ranks, GPT-2's pattern, special tokens after
    the ranks; ``ubpe.load`` without ``pattern=`` (the file is published: no warning)."""
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    path = whisper_file(name)
    ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    specials = {text: len(ranks) + k for k, text in enumerate(WHISPER_SPECIALS)}
    reference = tiktoken.Encoding(name, pat_str=WHISPER_PAT_STR, mergeable_ranks=ranks, special_tokens=specials)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok = ubpe.load(path, special_tokens=specials)
    texts = [*_texts(), "<|endoftext|> x<|en|><|transcribe|>"]
    differ = [t for t in texts if tok.encode(t, allowed_special="all") != reference.encode(t, allowed_special="all")]
    assert not differ, f"{len(differ)}/{len(texts)} differ, first: {differ[0]!r}"
    for text in texts[:300]:
        ids = reference.encode(text, allowed_special="all")
        assert tok.decode(ids) == reference.decode(ids)
    assert tok.n_vocab == reference.n_vocab


@pytest.mark.parametrize("line", ["Y!Q== 1", "A= 1", "YQ 1", "= x"])
def test_only_the_empty_token_is_let_through(line):
    """tiktoken's loader reads ``Y!Q==`` as ``b"a"`` (it drops what is no base64); that stays
    refused here: padding alone is the one field strict base64 refuses that is read."""
    with pytest.raises(ModelFormatError):
        tiktoken_io.parse_tiktoken(f"YQ== 0\n{line}\n")


# -- 5. the pattern of a .tiktoken file read without pattern= --------------------------------------

@functools.lru_cache(maxsize=1)
def _tiktoken_published() -> dict[str, tuple[str, str]]:
    """tiktoken's published encodings: name -> (expected SHA-256 of the file, pat_str), from
    ``tiktoken_ext.openai_public`` with its loader stubbed (nothing is downloaded)."""
    pytest.importorskip("tiktoken")
    import tiktoken_ext.openai_public as public

    out = {}
    for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
        seen: dict[str, str] = {}
        original = public.load_tiktoken_bpe
        public.load_tiktoken_bpe = lambda path, expected_hash=None: seen.update(hash=expected_hash) or {}
        try:
            constructor = public.ENCODING_CONSTRUCTORS[name]()
        finally:
            public.load_tiktoken_bpe = original
        out[name] = (seen["hash"], constructor["pat_str"])
    return out


def test_pinned_files_are_tiktokens_own():
    published = _tiktoken_published()
    for name, (digest, pat_str) in published.items():
        assert PATTERNS[tiktoken_io.PINNED_FILES[digest]] == pat_str, name
    assert hashlib.sha256(whisper_file("gpt2.tiktoken").read_bytes()).hexdigest() == published["r50k_base"][0]
    multilingual = hashlib.sha256(whisper_file("multilingual.tiktoken").read_bytes()).hexdigest()
    assert tiktoken_io.PINNED_FILES[multilingual] == "gpt2"


def _unpublished(tmp_path):
    """whisper's GPT-2 ranks without their last line: a file no one published."""
    lines = whisper_file("gpt2.tiktoken").read_text(encoding="ascii").splitlines()
    path = tmp_path / "ranks.tiktoken"
    path.write_text("\n".join(lines[:-1]) + "\n", encoding="ascii")
    return path


def test_an_unpublished_file_warns_naming_the_default(tmp_path):
    path = _unpublished(tmp_path)
    with pytest.warns(IgnoredInputWarning, match=r"default 'cl100k'.*pattern='gpt2'.*--pattern gpt2"):
        tok = ubpe.load(path)
    assert tok.pattern == PATTERNS["cl100k"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ubpe.load(path, pattern="gpt2").pattern == PATTERNS["gpt2"]
        assert ubpe.load(whisper_file("gpt2.tiktoken")).pattern == PATTERNS["gpt2"]


@pytest.mark.filterwarnings("default::ubpe.errors.IgnoredInputWarning")  # the warning is what it tests
def test_the_command_line_says_it_in_one_line(tmp_path, capsys):
    path = _unpublished(tmp_path)
    assert main(["encode", str(path), "--text", "it's 2024"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ubpe: warning: ") and "'cl100k'" in err[0] and "--pattern" in err[0]
    assert main(["convert", str(path), str(tmp_path / "m.json"), "--pattern", "gpt2", "-q"]) == 0
    assert main(["encode", str(whisper_file("gpt2.tiktoken")), "--text", "it's 2024"]) == 0
    assert capsys.readouterr().err == ""
