"""The peers' Unicode, by construction (issue 36): a model read from a peer's file classifies code
points with the peer's own table (`ubpe.text.peer_classes`, written by
``tests/golden/make_peer_classes.py``), so its ids are the peer's on every code point, whatever
the installed `regex` module's Unicode.

* the tables: every code point (1,112,064), every bit and every fold letter of tiktoken's and
  ``tokenizers``' tables against the engines themselves, llama.cpp's against the sdist's
  ``unicode-data.cpp``; (the ``long`` lane) the module as the generator writes it today;
* end to end: texts of the code points where the tables differ (each in a few contexts:
  letters, ``'t`` after it, digits, punctuation, ``'ſ``) through whisper's ``.tiktoken`` files
  with each preset against ``tiktoken.Encoding`` on the same ranks, byte-level
  ``tokenizer.json`` files against ``tokenizers``, and (the ``long`` lane) GGUF files against
  llama.cpp itself.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ubpe.io import tiktoken as tiktoken_io
from ubpe.io.hf_import import read as read_tokenizer_json
from ubpe.text.patterns import (CLASS_BITS, FOLD_SHIFT, PATTERNS, UNICODES, code_point_class_buffer, code_point_classes,
                                 table_of_runs)
from ubpe.text.peer_classes import CHANGES, RUNS

from vocab_corpora import vocab_path, whisper_file

GENERATOR = Path(__file__).resolve().parents[1] / "golden" / "make_peer_classes.py"
N_CHECKED = 0x110000 - 0x800  # every code point but the surrogates
#: the bits a peer's split reads (`words`' are ubpe's own split's)
SPLIT_BITS = sum(CLASS_BITS[e] for e in (r"\p{L}", r"\p{N}", r"\s", r"[\r\n]", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
                                         r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]")) | 0x0F << FOLD_SHIFT
#: each code point's contexts: a run of it, ``'t`` after it, between a letter and a digit, before
#: punctuation, after a space and an apostrophe
CONTEXTS = " {c}{c}'t a{c}1 {c}! x'{c} {c}\n"
#: texts that reach the contraction letters' folds, and code points unassigned everywhere
EDGE_TEXTS = ["x'\u017f", "X'S 'T 'RE 'Ve 'M 'LL 'D", "it'\u017f \u212a'd", "'\u0130 'K", " \ufdd0", "x \u0378!",
              "a  \ufdd0\n", "'\u017f \u0378 1", " \ufdd0 7", "'\u017f 'S 'Ll \u0378x \ufdd0 a\U0010ffff  \n\n\t x"]
#: code points unassigned in every table (each in every context too)
UNASSIGNED = [0x378, 0xFDD0, 0xFFFF, 0x2FFFE, 0xE0080, 0x10FFFF]
#: code points per text (a text of all of them at once would name no culprit)
PER_TEXT = 64


@functools.lru_cache(maxsize=1)
def generator():
    spec = importlib.util.spec_from_file_location("make_peer_classes", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=1)
def tiktoken_table() -> bytes:
    pytest.importorskip("tiktoken")
    return generator().probed_table(generator().tiktoken_members).tobytes()


def _differences(table: bytes, expected: str) -> list[str]:
    ours = np.frombuffer(bytes(code_point_class_buffer(expected)), dtype=np.uint16)
    theirs = np.frombuffer(table, dtype=np.uint16)
    return [f"U+{cp:04X}: {int(ours[cp]):#x} here, {int(theirs[cp]):#x} there" for cp in np.flatnonzero(ours != theirs)[:10]]


def test_tiktokens_table_is_tiktokens_engine_on_every_code_point():
    assert not _differences(tiktoken_table(), "tiktoken")


@functools.lru_cache(maxsize=1)
def tokenizers_table() -> bytes:
    pytest.importorskip("tokenizers")
    return generator().probed_table(generator().oniguruma_members).tobytes()


@functools.lru_cache(maxsize=1)
def llama_cpp_table() -> bytes:
    from ubpe.lab.datasets import DataNotInstalledError

    try:
        source = generator().llama_source(None)
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    return generator().llama_cpp_table(source, generator().array("H", tiktoken_table())).tobytes()


def test_tokenizers_table_is_oniguruma_on_every_code_point():
    assert not _differences(tokenizers_table(), "tokenizers")


def test_llama_cpps_table_is_its_unicode_data():
    assert not _differences(llama_cpp_table(), "llama.cpp")


@pytest.mark.long
def test_the_module_is_what_the_generator_writes():
    """``ubpe/text/peer_classes.py`` as the generator writes it today, versions and all (a newer
    tiktoken or tokenizers installed: regenerate it, see its generator's docstring)."""
    array = generator().array
    tables = {"tiktoken": array("H", tiktoken_table()), "tokenizers": array("H", tokenizers_table()),
              "llama.cpp": array("H", llama_cpp_table())}
    written = Path(__file__).resolve().parents[2] / "ubpe" / "text" / "peer_classes.py"
    assert generator().render(tables) == written.read_text(encoding="utf-8")


def test_the_tables_differ_where_the_peers_unicode_is_older():
    """The brief's counts: `regex`'s Unicode (17 and a draft) has letters and numbers that
    tiktoken's engine does not know, llama.cpp's fewer still; an unknown name is an error."""
    regex, tiktoken, llama = (code_point_classes(u) for u in ("regex", "tiktoken", "llama.cpp"))
    letter, number = CLASS_BITS[r"\p{L}"], CLASS_BITS[r"\p{N}"]
    assert not (tiktoken & letter & ~regex).any() and not (llama & letter & ~tiktoken).any()
    assert regex[0x3EE07] & letter or not (regex & letter & ~tiktoken).any()  # (a `regex` older than Unicode 17)
    assert not tiktoken[0x3EE07] & letter and not llama[0x3EE07] & letter
    assert np.count_nonzero(tiktoken & letter & ~llama) == 4302 and np.count_nonzero(tiktoken & number & ~llama) == 80
    s_fold = 1 << FOLD_SHIFT  # `ſ` is an `s` under (?i) for tiktoken and Oniguruma, not for llama.cpp's tolower
    assert tiktoken[0x17F] & 0xF00 == code_point_classes("tokenizers")[0x17F] & 0xF00 == s_fold
    assert llama[0x17F] & 0xF00 == 0 and llama[0x17F] & letter
    with pytest.raises(Exception, match="one of regex, tiktoken, tokenizers, llama.cpp"):
        code_point_class_buffer("unicodedata")
    assert UNICODES[0] == "regex"


@functools.lru_cache(maxsize=None)
def _split_bits(unicode: str) -> np.ndarray:
    """The split bits of ``unicode``'s table, the peers' read off their runs (not through the
    code under test)."""
    table = code_point_classes("regex") if unicode == "regex" else np.frombuffer(
        table_of_runs(RUNS[unicode], CHANGES.get(unicode, "")), np.uint16)
    return table & SPLIT_BITS


@functools.lru_cache(maxsize=None)
def differing(unicode: str) -> list[int]:
    """The code points whose split bits differ between ``unicode``'s table and another's."""
    mine = _split_bits(unicode)
    found = np.zeros(len(mine), dtype=bool)
    for other in UNICODES:
        found |= mine != _split_bits(other)
    found[0xD800:0xE000] = False
    return np.flatnonzero(found).tolist()


def texts_of(code_points: list[int]) -> list[str]:
    """Each code point in every context, ``PER_TEXT`` code points a text, and `EDGE_TEXTS`."""
    code_points = UNASSIGNED + code_points
    return EDGE_TEXTS + ["".join(CONTEXTS.format(c=chr(cp)) for cp in code_points[k : k + PER_TEXT])
                         for k in range(0, len(code_points), PER_TEXT)]


def _first_mismatch(ours, theirs, texts: list[str]) -> str | None:
    for text in texts:
        a, b = ours(text), theirs(text)
        if a != b:
            return _mismatch(text, a, b)
    return None


def _mismatch(text: str, ours: list[int], theirs: list[int]) -> str:
    at = next((k for k, (x, y) in enumerate(zip(ours, theirs)) if x != y), min(len(ours), len(theirs)))
    return f"{text[:30]!r}...: from id {at} on, {ours[at:at + 6]} here, {theirs[at:at + 6]} there"


@pytest.mark.parametrize("name", ["gpt2.tiktoken", "multilingual.tiktoken"])
@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", "llama3"])
def test_tiktoken_files_give_tiktokens_ids_on_every_differing_code_point(name, pattern):
    tiktoken = pytest.importorskip("tiktoken")
    tok = tiktoken_io.read(whisper_file(name), pattern=pattern)
    reference = tiktoken.Encoding("ref", pat_str=PATTERNS[pattern], mergeable_ranks=tok.mergeable_ranks(),
                                  special_tokens={})
    texts = texts_of(differing("tiktoken"))
    assert len(texts) > 200 and tok.unicode == "tiktoken"
    assert _first_mismatch(tok.encode, reference.encode_ordinary, texts) is None
    assert tok.encode_batch(texts) == reference.encode_ordinary_batch(texts)
    fitted_like = type(tok).from_mergeable_ranks(tok.mergeable_ranks(), pattern=pattern)  # ubpe's own: `regex`'s
    assert fitted_like.unicode == "regex"


def test_tekken_files_give_tiktokens_ids_on_every_differing_code_point():
    """A tekken file's own pattern (no preset: the regex VM runs it, by tiktoken's Unicode)
    against ``tiktoken.Encoding`` with that pattern on the same ranks."""
    tiktoken = pytest.importorskip("tiktoken")
    from test_tekken import tekken_path

    import ubpe

    tok = ubpe.load(tekken_path("tekken_240911.json"))
    reference = tiktoken.Encoding("ref", pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks(), special_tokens={})
    texts = texts_of(differing("tiktoken"))
    assert tok.unicode == "tiktoken" and tok.pattern not in PATTERNS.values()
    assert _first_mismatch(tok.encode, reference.encode_ordinary, texts) is None
    assert tok.encode_batch(texts) == reference.encode_ordinary_batch(texts)


#: patterns the regex VM runs (no preset): Whisper's (GPT-2's and a final ``\\s+``) and tekken's
#: (o200k's letter classes)
VM_PATTERNS = {
    "whisper": r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    "tekken": r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
              r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}|"
              r" ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}


@pytest.mark.parametrize("name", VM_PATTERNS)
def test_the_regex_vm_splits_by_the_peers_unicode_where_the_tables_differ(name):
    """`ubpe.text.scanner.pretokenize` of a pattern the regex VM runs, by Oniguruma's Unicode
    against a ``Split`` pre-tokenizer of HF tokenizers, and by the `regex` module's against
    ``regex.findall``, on every code point where the tables differ (tiktoken's: through the
    tekken and ``.tiktoken`` files' ids)."""
    tokenizers = pytest.importorskip("tokenizers")
    import regex

    from ubpe.text.scanner import pretokenize

    pattern = VM_PATTERNS[name]

    def ours(unicode):
        def pieces(text):
            symbols, bounds = pretokenize(text, pattern, unicode)
            data = bytes(symbols.tolist())
            return [data[a:b].decode("utf-8") for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
        return pieces

    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "isolated")
    peers = {"tokenizers": lambda text: [piece for piece, _ in split.pre_tokenize_str(text)],
             "regex": lambda text: regex.findall(pattern, text)}
    for unicode, theirs in peers.items():
        assert _first_mismatch(ours(unicode), theirs, texts_of(differing(unicode))) is None, unicode


@pytest.mark.parametrize("builder", ["gpt2", "llama3", "qwen2", "falcon", "tekken-split", "clip", "deepseek-coder"])
def test_tokenizer_json_files_give_tokenizers_ids_on_every_differing_code_point(builder, tmp_path):
    pytest.importorskip("tokenizers")
    from hf_builders import BUILDERS

    reference = BUILDERS[builder]()
    path = tmp_path / "tokenizer.json"
    reference.save(str(path))
    tok = read_tokenizer_json(path)
    texts = texts_of(differing("tokenizers"))
    assert tok.unicode == "tokenizers"
    mismatch = _first_mismatch(tok.encode, lambda t: reference.encode(t, add_special_tokens=False).ids, texts)
    assert mismatch is None


@pytest.mark.long
@pytest.mark.parametrize("name", ["llama-bpe", "qwen2", "gpt-2", "mpt", "deepseek-coder", "deepseek-llm",
                                  # lists of regexes holding GPT-2's (default: gpt-neox, aquila; falcon;
                                  # starcoder: command-r, refact) and Qwen3.5's one regex: on the regex VM
                                  "gpt-neox", "aquila", "falcon", "starcoder", "command-r", "refact", "qwen35"])
def test_gguf_files_give_llama_cpps_ids_on_every_differing_code_point(name):
    """A GGUF file's ids against llama.cpp's own; one text's encode before a batch (the regex
    path, or the regex VM for a text it would classify apart) and the batch's."""
    from llama_build import llama_ids

    import ubpe

    path = vocab_path(name)
    tok = ubpe.load(str(path))
    texts = texts_of(differing("llama.cpp"))
    expected = llama_ids(path, texts)
    assert [tok.encode(text) for text in texts[:20]] == expected[:20]
    mismatches = [_mismatch(text, got, want) for text, got, want in zip(texts, tok.encode_batch(texts), expected)
                  if got != want]
    assert not mismatches, f"{len(mismatches)} of {len(texts)} texts differ, first: {mismatches[0]}"
    assert [tok.encode(text) for text in texts[:20]] == expected[:20]
