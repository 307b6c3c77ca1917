"""Bad input through the Python API: one table row per input, grouped by the kind of input.

Each row is ``Bad(name, call, error, fragment)``: ``call(m)`` gets the models of
``conftest.m`` (u: universal text, i: universal ints, c: classic, b: byte-level, h: HF
tokenizer.json, mb: minbpe, g: GGUF gpt2, s: sentencepiece) and must raise ``error`` (an
``ubpe.errors`` class) with ``fragment`` in its message, the fragment naming the problem. To
add a case, add a row to the group of its kind.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, NamedTuple

import numpy as np
import pytest

import ubpe
from ubpe import UBPE, UBPEClassic
from ubpe.models.bytelevel import ByteLevelBPE
from ubpe.errors import (
    AlreadyFittedError,
    DisallowedSpecialTokenError,
    EmptyCorpusError,
    IgnoredInputWarning,
    InvalidParameterError,
    ModelFormatError,
    NotFittedError,
    SymbolTypeError,
    UBPEError,
    UnknownSymbolError,
    UnknownTokenError,
)

# these tests are about how warnings reach the user: the suite's filters (pyproject.toml) do not apply
pytestmark = [pytest.mark.filterwarnings("default::ubpe.errors.VocabularySizeWarning"),
              pytest.mark.filterwarnings("default::ubpe.errors.IgnoredInputWarning")]


class Bad(NamedTuple):
    name: str
    call: Callable[[Any], Any]
    error: type[UBPEError] | type[Warning]  # a warning: the input is ignored, and the warning says so
    fragment: str


def _u(**kwargs):
    kwargs.setdefault("n_tokens", 10)
    return UBPE(**kwargs)


def _fit(alphabet="ab", corpus=("abab", "abba"), n_tokens=6, cls=UBPE, **options):
    tok = cls(alphabet=alphabet, n_tokens=n_tokens)
    return tok.fit(list(corpus) if isinstance(corpus, tuple) else corpus, quiet=True, **options)


def _bl(texts=("the cat", "the dog"), **options):
    options.setdefault("n_tokens", 260)
    return ByteLevelBPE().fit(list(texts) if isinstance(texts, tuple) else texts, quiet=True, **options)


class _Unhashable:
    __hash__ = None  # type: ignore[assignment]


ALPHABETS = [
    Bad("missing", lambda m: UBPE(n_tokens=10), SymbolTypeError, "`alphabet` must be given"),
    Bad("empty list", lambda m: _u(alphabet=[]), InvalidParameterError, "non-empty"),
    Bad("empty str", lambda m: _u(alphabet=""), InvalidParameterError, "non-empty"),
    Bad("size 0", lambda m: _u(alphabet=0), InvalidParameterError, "alphabet"),
    Bad("negative size", lambda m: _u(alphabet=-3), InvalidParameterError, "alphabet"),
    Bad("size 2**40", lambda m: _u(alphabet=2**40), InvalidParameterError, "alphabet"),
    Bad("float size", lambda m: _u(alphabet=3.0), SymbolTypeError, "alphabet"),
    Bad("bool size", lambda m: _u(alphabet=True), SymbolTypeError, "alphabet"),
    Bad("None symbol mixed", lambda m: _u(alphabet=["a", None]), SymbolTypeError, "one type"),
    Bad("mixed int and str", lambda m: _u(alphabet=["a", 1, "b"]), SymbolTypeError, "one type, got: int, str"),
    Bad("mixed int and float", lambda m: _u(alphabet=[1, 2.5]), SymbolTypeError, "one type"),
    Bad("mixed bool and int", lambda m: _u(alphabet=[True, 2]), SymbolTypeError, "one type"),
    Bad("unhashable symbol", lambda m: _u(alphabet=[[1], [2]]), SymbolTypeError, "hashable"),
    Bad("unhashable object", lambda m: _u(alphabet=[_Unhashable()]), SymbolTypeError, "hashable"),
    Bad("dict with gaps", lambda m: _u(alphabet={"a": 0, "b": 2}), InvalidParameterError, "ids 0..len"),
    Bad("dict with negative id", lambda m: _u(alphabet={"a": -1, "b": 0}), InvalidParameterError, "ids 0..len"),
    Bad("dict with shared id", lambda m: _u(alphabet={"a": 0, "b": 0}), InvalidParameterError, "ids 0..len"),
    Bad("dict with str ids", lambda m: _u(alphabet={"a": "0", "b": "1"}), InvalidParameterError, "ids"),
    Bad("None alone", lambda m: UBPE(alphabet=None, n_tokens=10), SymbolTypeError, "`alphabet` must be given"),
    Bad("2-D array", lambda m: _u(alphabet=np.zeros((2, 2), int)), SymbolTypeError, "alphabet"),
    Bad("an object", lambda m: _u(alphabet=object()), SymbolTypeError, "alphabet"),
    Bad("NaN symbol", lambda m: _u(alphabet=[float("nan"), 1.0]), SymbolTypeError, "NaN cannot be an alphabet symbol"),
    Bad("NaN in a set", lambda m: _u(alphabet={float("nan")}), SymbolTypeError, "NaN cannot be an alphabet symbol"),
    Bad("mixed str and NaN", lambda m: _u(alphabet=["a", float("nan")]),
        SymbolTypeError, "alphabet symbols must all have one type, got: float, str"),
]

SETTINGS = [
    Bad("n_tokens str", lambda m: _u(alphabet="ab", n_tokens="100"), InvalidParameterError, "must be an int"),
    Bad("n_tokens float", lambda m: _u(alphabet="ab", n_tokens=10.0), InvalidParameterError, "must be an int"),
    Bad("n_tokens None", lambda m: _u(alphabet="ab", n_tokens=None), InvalidParameterError, "must be an int"),
    Bad("n_tokens bool", lambda m: _u(alphabet="ab", n_tokens=True), InvalidParameterError, "n_tokens"),
    Bad("n_tokens = alphabet", lambda m: _u(alphabet="ab", n_tokens=2), InvalidParameterError, "must be larger than the alphabet"),
    Bad("n_tokens 0", lambda m: _u(alphabet="ab", n_tokens=0), InvalidParameterError, "must be larger than the alphabet"),
    Bad("n_tokens negative", lambda m: _u(alphabet="ab", n_tokens=-5), InvalidParameterError, "must be larger than the alphabet"),
    Bad("classic n_tokens 1", lambda m: UBPEClassic(alphabet="ab", n_tokens=1), InvalidParameterError, "must be larger"),
    Bad("known words fill n_tokens", lambda m: _u(alphabet="ab", known_words=["aa", "ab"], n_tokens=4), InvalidParameterError, "together (4)"),
    Bad("known word empty", lambda m: _u(alphabet="ab", known_words=[""]), InvalidParameterError, "empty"),
    Bad("known words an int", lambda m: _u(alphabet="ab", known_words=5), SymbolTypeError, "known_words"),
    Bad("known word of wrong type", lambda m: _u(alphabet=3, known_words=["ab"]), SymbolTypeError, "str"),
    Bad("regex invalid", lambda m: _u(alphabet="ab", regex_str="(unclosed"), InvalidParameterError, "not a valid regex"),
    Bad("regex not a str", lambda m: _u(alphabet="ab", regex_str=5), SymbolTypeError, "`regex_str` must be a str"),
    Bad("regex on int alphabet", lambda m: _u(alphabet=3, regex_str=r"\w+"), IgnoredInputWarning, "it is ignored"),
    Bad("break tokens of wrong type", lambda m: _u(alphabet="ab", break_tokens=[1]), IgnoredInputWarning, "break_tokens are not in the alphabet and are ignored: [1]"),
    Bad("break tokens an int", lambda m: _u(alphabet="ab", break_tokens=5), SymbolTypeError, "`break_tokens` must be a list"),
    Bad("stop tokens of wrong type", lambda m: _u(alphabet=3, stop_tokens=["a"]), IgnoredInputWarning, "stop_tokens are not in the alphabet and are ignored: ['a']"),
    Bad("stop tokens an int", lambda m: _u(alphabet="ab", stop_tokens=5), SymbolTypeError, "`stop_tokens` must be a list"),
]

CORPORA = [
    Bad("empty corpus", lambda m: _fit(corpus=[]), EmptyCorpusError, "empty"),
    Bad("single str corpus", lambda m: _fit(corpus="abab"), SymbolTypeError, "not a single str"),
    Bad("unknown symbol", lambda m: _fit(corpus=("abz",)), UnknownSymbolError, "symbol 'z' at position 2 of document 0"),
    Bad("unknown int symbol", lambda m: _fit(alphabet=4, corpus=[[0, 7, 1]]), UnknownSymbolError, "symbol 7 at position 1"),
    Bad("negative int symbol", lambda m: _fit(alphabet=4, corpus=[[0, -1]]), UnknownSymbolError, "symbol -1"),
    Bad("str doc on int alphabet", lambda m: _fit(alphabet=3, corpus=("012",)), SymbolTypeError, "is a str but the alphabet's symbols are int"),
    Bad("int doc on str alphabet", lambda m: _fit(corpus=[[0, 1]]), UnknownSymbolError, "symbol 0 at position 0 of document 0"),
    Bad("document an int", lambda m: _fit(alphabet=3, corpus=[[0, 1], 5]), SymbolTypeError, "document 1 must be a str, list, tuple or 1-D array, not int"),
    Bad("document None", lambda m: _fit(corpus=["ab", None]), SymbolTypeError, "NoneType"),
    Bad("document a dict", lambda m: _fit(corpus=[{"a": 1}]), SymbolTypeError, "dict"),
    Bad("document 2-D array", lambda m: _fit(alphabet=3, corpus=[np.zeros((2, 2), int)]), SymbolTypeError, "1-D"),
    Bad("bytes on str alphabet", lambda m: _fit(corpus=[b"ab"]), SymbolTypeError, "bytes"),
    Bad("float array on int alphabet", lambda m: _fit(alphabet=3, corpus=[np.array([0.0, 1.0])]), SymbolTypeError, "float"),
    Bad("float list on int alphabet", lambda m: _fit(alphabet=3, corpus=[[0.0, 1.0]]), SymbolTypeError, "float"),
    Bad("bools on int alphabet", lambda m: _fit(alphabet=3, corpus=[[True, False]]), SymbolTypeError, "bool"),
    Bad("uint64 max on int alphabet", lambda m: _fit(alphabet=3, corpus=[np.array([2**64 - 1], np.uint64)]), UnknownSymbolError, "18446744073709551615"),
    Bad("int beyond int64 in doc", lambda m: _fit(alphabet=3, corpus=[[2**70]]), UnknownSymbolError, str(2**70)),
    Bad("corpus None", lambda m: _fit(corpus=None), SymbolTypeError, "corpus"),
    Bad("corpus an int", lambda m: _fit(corpus=5), SymbolTypeError, "corpus"),
    Bad("lone str char list", lambda m: _fit(corpus=[["ab"]]), UnknownSymbolError, "'ab'"),
]

FIT_OPTIONS = [
    Bad("n_candidates 0", lambda m: _fit(n_candidates=0), InvalidParameterError, "`n_candidates` must be at least 1"),
    Bad("n_candidates -1", lambda m: _fit(n_candidates=-1), InvalidParameterError, "`n_candidates` must be at least 1"),
    Bad("n_candidates float", lambda m: _fit(n_candidates=2.5), InvalidParameterError, "`n_candidates` must be an int"),
    Bad("n_candidates str", lambda m: _fit(n_candidates="5"), InvalidParameterError, "`n_candidates` must be an int"),
    Bad("n_candidates bool", lambda m: _fit(n_candidates=True), InvalidParameterError, "n_candidates"),
    Bad("n_candidates 2**40", lambda m: _fit(n_candidates=2**40), InvalidParameterError, "n_candidates"),
    Bad("split_mode str", lambda m: _fit(split_mode="full"), SymbolTypeError, "`split_mode` must be a SplitMode"),
    Bad("rearrange_tokens str", lambda m: _fit(rearrange_tokens="no"), InvalidParameterError, "rearrange_tokens"),
    Bad("fit twice", lambda m: _fit().fit(["ab"], quiet=True) if False else _twice(), AlreadyFittedError, "only once"),
    Bad("rearrange unfitted", lambda m: _u(alphabet="ab").rearrange_tokens(), NotFittedError, "fit"),
    Bad("rearrange to 0", lambda m: _fitted().rearrange_tokens(n_tokens=0), InvalidParameterError, "positive int"),
    Bad("rearrange to 1", lambda m: _fitted().rearrange_tokens(n_tokens=1), InvalidParameterError, "must be larger than the base ids"),
    Bad("rearrange to str", lambda m: _fitted().rearrange_tokens(n_tokens="5"), InvalidParameterError, "n_tokens"),
]


def _fitted():
    tok = UBPE(alphabet="abc ", n_tokens=12)
    tok.fit(["abc abc cab", "cab abc"] * 3, quiet=True)
    return tok


def _twice():
    tok = _fitted()
    tok.fit(["abc"], quiet=True)


DOCUMENTS = [
    Bad("unknown symbol", lambda m: m.u.encode("the zebra"), UnknownSymbolError, "'z'"),
    Bad("int doc on text model", lambda m: m.u.encode([1, 2]), UnknownSymbolError, "symbol 1 at position 0"),
    Bad("None", lambda m: m.u.encode(None), SymbolTypeError, "NoneType"),
    Bad("bytes on text model", lambda m: m.u.encode(b"the"), SymbolTypeError, "bytes"),
    Bad("dict", lambda m: m.u.encode({"t": 1}), SymbolTypeError, "dict"),
    Bad("2-D array", lambda m: m.i.encode(np.zeros((2, 2), int)), SymbolTypeError, "1-D"),
    Bad("str on int model", lambda m: m.i.encode("012"), SymbolTypeError, "str"),
    Bad("float list on int model", lambda m: m.i.encode([0.0, 1.0]), SymbolTypeError, "float"),
    Bad("float array on int model", lambda m: m.i.encode(np.array([0.0, 1.0])), SymbolTypeError, "float"),
    Bad("bools on int model", lambda m: m.i.encode([True, False]), SymbolTypeError, "bool"),
    Bad("int out of alphabet", lambda m: m.i.encode([0, 9]), UnknownSymbolError, "9"),
    Bad("negative int", lambda m: m.i.encode([0, -1]), UnknownSymbolError, "-1"),
    Bad("uint64 max", lambda m: m.i.encode(np.array([2**64 - 1], np.uint64)), UnknownSymbolError, "18446744073709551615"),
    Bad("int beyond int64", lambda m: m.i.encode([2**70]), UnknownSymbolError, str(2**70)),
    Bad("classic unknown symbol", lambda m: m.c.encode("zzz"), UnknownSymbolError, "'z'"),
    Bad("classic None", lambda m: m.c.encode(None), SymbolTypeError, "NoneType"),
    Bad("batch of one str", lambda m: m.u.encode_batch("the"), InvalidParameterError, "not one document"),
    Bad("batch None", lambda m: m.u.encode_batch(None), SymbolTypeError, "NoneType"),
    Bad("batch with a bad doc", lambda m: m.u.encode_batch(["the", None]), SymbolTypeError, "NoneType"),
    Bad("bytelevel None", lambda m: m.b.encode(None), SymbolTypeError, "NoneType"),
    Bad("bytelevel bytes", lambda m: m.b.encode(b"the"), SymbolTypeError, "bytes"),
    Bad("bytelevel list", lambda m: m.b.encode(["t"]), SymbolTypeError, "list"),
    Bad("bytelevel int", lambda m: m.b.encode(5), SymbolTypeError, "int"),
    Bad("bytelevel disallowed special", lambda m: m.b.encode("the <|end|>"), DisallowedSpecialTokenError, "<|end|>"),
    Bad("bytelevel allowed special unknown", lambda m: m.b.encode("x", allowed_special={"<|nope|>"}), InvalidParameterError, "<|nope|>"),
    Bad("bytelevel encode_with None", lambda m: m.b.encode_with(None), SymbolTypeError, "NoneType"),
    Bad("hf None", lambda m: m.h.encode(None), SymbolTypeError, "NoneType"),
    Bad("hf bytes", lambda m: m.h.encode(b"x"), SymbolTypeError, "bytes"),
    Bad("minbpe None", lambda m: m.mb.encode(None), SymbolTypeError, "NoneType"),
    Bad("minbpe list", lambda m: m.mb.encode(["a"]), SymbolTypeError, "list"),
    Bad("gguf None", lambda m: m.g.encode(None), SymbolTypeError, "NoneType"),
    Bad("gguf int", lambda m: m.g.encode(3), SymbolTypeError, "int"),
    Bad("spm None", lambda m: m.s.encode(None), SymbolTypeError, "NoneType"),
    Bad("spm bytes", lambda m: m.s.encode(b"x"), SymbolTypeError, "bytes"),
    Bad("spm lone surrogate", lambda m: m.s.encode("a\udc80"), InvalidParameterError, "surrogate"),
    Bad("hf lone surrogate", lambda m: m.h.encode("a\udc80"), InvalidParameterError, "surrogate"),
]

IDS = []
for _family in ("u", "i", "c", "b", "h", "mb", "g", "s"):
    IDS += [
        Bad(f"{_family} [-1]", lambda m, f=_family: getattr(m, f).decode([-1]), UnknownTokenError, "token -1"),
        Bad(f"{_family} [10**9]", lambda m, f=_family: getattr(m, f).decode([10**9]), UnknownTokenError, "1000000000"),
        Bad(f"{_family} [True]", lambda m, f=_family: getattr(m, f).decode([True]), SymbolTypeError, "True"),
        Bad(f"{_family} [0.5]", lambda m, f=_family: getattr(m, f).decode([0.5]), SymbolTypeError, "0.5"),
        Bad(f"{_family} None", lambda m, f=_family: getattr(m, f).decode(None), SymbolTypeError, "NoneType"),
        Bad(f"{_family} a str", lambda m, f=_family: getattr(m, f).decode("12"), SymbolTypeError, "str"),
        Bad(f"{_family} [2**70]", lambda m, f=_family: getattr(m, f).decode([2**70]), UnknownTokenError, str(2**70)),
        Bad(f"{_family} pieces [-1]", lambda m, f=_family: getattr(m, f).pieces([-1]), UnknownTokenError, "-1"),
    ]
IDS += [
    Bad("u decode unfitted", lambda m: _u(alphabet="ab").decode([0]), NotFittedError, "fit"),
    Bad("u decode ['a']", lambda m: m.u.decode(["a"]), SymbolTypeError, "'a'"),
    Bad("u decode float array", lambda m: m.u.decode(np.array([0.0, 1.0])), SymbolTypeError, "must be ints, got 0.0"),
    Bad("u decode 2-D array", lambda m: m.u.decode(np.zeros((2, 2), int)), SymbolTypeError, "1-D"),
    Bad("b decode_bytes [-1]", lambda m: m.b.decode_bytes([-1]), UnknownTokenError, "token -1"),
    Bad("b decode uint64 max", lambda m: m.b.decode(np.array([2**64 - 1], np.uint64)), UnknownTokenError, "18446744073709551615"),
    Bad("u decode_batch one list", lambda m: m.u.decode_batch([1, 2]), SymbolTypeError, "int"),
    Bad("u id_to_piece -1", lambda m: m.u.id_to_piece(-1), UnknownTokenError, "-1"),
    Bad("u piece_to_id unknown", lambda m: m.u.piece_to_id("zzz"), UnknownTokenError, "zzz"),
    Bad("b piece_to_id unknown", lambda m: m.b.piece_to_id("zzzzqq"), UnknownTokenError, "zzzzqq"),
]

ENCODER_OPTIONS = [
    Bad("unknown encoder", lambda m: m.u.encode("the", encoder="nope"), InvalidParameterError, "nope"),
    Bad("encoder an int", lambda m: m.u.encode("the", encoder=3), InvalidParameterError, "encoder"),
    Bad("top_n 0", lambda m: m.u.encode("the", top_n=0), InvalidParameterError, "top_n"),
    Bad("top_n -1", lambda m: m.u.encode("the", top_n=-1), InvalidParameterError, "top_n"),
    Bad("top_n float", lambda m: m.u.encode("the", top_n=2.5), InvalidParameterError, "top_n"),
    Bad("top_n str", lambda m: m.u.encode("the", top_n="3"), InvalidParameterError, "top_n"),
    Bad("top_n bool", lambda m: m.u.encode("the", top_n=True), InvalidParameterError, "top_n"),
    Bad("top_n on a top-1 encoder", lambda m: m.u.encode("the", encoder="classic", top_n=3), InvalidParameterError, "top_n"),
    Bad("top_n 2**40", lambda m: m.u.encode("the", top_n=2**40), InvalidParameterError, "top_n"),
    Bad("unknown option", lambda m: m.u.encode("the", colour=1), InvalidParameterError, "colour"),
    Bad("option of another encoder", lambda m: m.u.encode("the", encoder="fewest", p=0.1), InvalidParameterError, "p"),
    Bad("exact='no'", lambda m: m.u.encode("the", exact="no"), InvalidParameterError, "exact must be True or False"),
    Bad("dropout p 1.5", lambda m: m.u.encode("the", encoder="dropout", p=1.5), InvalidParameterError, "p"),
    Bad("dropout p -0.1", lambda m: m.u.encode("the", encoder="dropout", p=-0.1), InvalidParameterError, "p"),
    Bad("dropout p str", lambda m: m.u.encode("the", encoder="dropout", p="x"), InvalidParameterError, "p"),
    Bad("dropout p nan", lambda m: m.u.encode("the", encoder="dropout", p=float("nan")), InvalidParameterError, "p"),
    Bad("dropout seed -1", lambda m: m.u.encode("the", encoder="dropout", seed=-1), InvalidParameterError, "seed"),
    Bad("dropout seed str", lambda m: m.u.encode("the", encoder="dropout", seed="x"), InvalidParameterError, "seed"),
    Bad("dropout seed float", lambda m: m.u.encode("the", encoder="dropout", seed=1.5), InvalidParameterError, "seed"),
    Bad("sample temperature 0", lambda m: m.u.encode("the", encoder="sample", temperature=0), InvalidParameterError, "temperature"),
    Bad("sample temperature -1", lambda m: m.u.encode("the", encoder="sample", temperature=-1), InvalidParameterError, "temperature"),
    Bad("sample temperature inf", lambda m: m.u.encode("the", encoder="sample", temperature=float("inf")), InvalidParameterError, "temperature"),
    Bad("sample seed -1", lambda m: m.u.encode("the", encoder="sample", seed=-1), InvalidParameterError, "seed"),
    Bad("additive without weights", lambda m: m.u.encode("the", encoder="additive"), InvalidParameterError, "weights"),
    Bad("additive weights too short", lambda m: m.u.encode("the", encoder="additive", weights=np.ones(3)), InvalidParameterError, "one score per id is needed: shape (24,), got (3,)"),
    Bad("additive weights nan", lambda m: m.u.encode("the", encoder="additive", weights=np.full(m.u.n_vocab, np.nan)), InvalidParameterError, "must be finite"),
    Bad("additive weights str", lambda m: m.u.encode("the", encoder="additive", weights="x"), InvalidParameterError, "weights"),
    Bad("additive weights 2-D", lambda m: m.u.encode("the", encoder="additive", weights=np.ones((2, m.u.n_vocab))), InvalidParameterError, "got (2, 24)"),
    Bad("ranked priority unknown", lambda m: m.u.encode("the", encoder="ranked", priority="x"), InvalidParameterError, "priority"),
    Bad("rerank unknown", lambda m: m.u.encode("the", top_n=2, rerank="best"), InvalidParameterError, "rerank"),
    Bad("rerank an int", lambda m: m.u.encode("the", top_n=2, rerank=3), InvalidParameterError, "rerank"),
    Bad("split_mode str", lambda m: m.u.encode("the", split_mode="none"), SymbolTypeError, "`split_mode` must be a SplitMode"),
    Bad("threads 0", lambda m: m.u.encode_batch(["the"], threads=0), InvalidParameterError, "threads must"),
    Bad("threads -1", lambda m: m.u.encode_batch(["the"], threads=-1), InvalidParameterError, "got -1"),
    Bad("threads '2'", lambda m: m.u.encode_batch(["the"], threads="2"), InvalidParameterError, "got '2'"),
    Bad("threads True", lambda m: m.u.encode_batch(["the"], threads=True), InvalidParameterError, "got True"),
    Bad("bytelevel unknown encoder", lambda m: m.b.encode_with("the", encoder="nope"), InvalidParameterError, "nope"),
    Bad("bytelevel top_n 0", lambda m: m.b.encode_with("the", top_n=0), InvalidParameterError, "top_n"),
    Bad("bytelevel top_n on ranked", lambda m: m.b.encode_with("the", encoder="ranked", top_n=2), InvalidParameterError, "top_n"),
    Bad("bytelevel dropout p 2", lambda m: m.b.encode_with("the", encoder="dropout", p=2), InvalidParameterError, "p"),
    Bad("gguf unknown encoder", lambda m: m.g.encode_with("the", encoder="nope"), InvalidParameterError, "nope"),
    Bad("gguf top_n -3", lambda m: m.g.encode_with("the", encoder="fewest", top_n=-3), InvalidParameterError, "top_n"),
    Bad("spm unknown encoder", lambda m: m.s.encode_with("the", encoder="nope"), InvalidParameterError, "nope"),
    Bad("hf unknown option", lambda m: m.h.encode_with("the", encoder="fewest", colour=1), InvalidParameterError, "colour"),
    Bad("minbpe unknown encoder", lambda m: m.mb.encode_with("the", encoder="nope"), InvalidParameterError, "nope"),
    Bad("ambiguity temperature 0", lambda m: m.u.ambiguity("the", temperature=0), InvalidParameterError, "temperature"),
    Bad("ambiguity weights short", lambda m: m.u.ambiguity("the", weights=np.ones(2)), InvalidParameterError, "one score per id"),
]

BYTELEVEL_FIT = [
    Bad("n_tokens 255", lambda m: _bl(n_tokens=255), InvalidParameterError, "n_tokens"),
    Bad("n_tokens 0", lambda m: _bl(n_tokens=0), InvalidParameterError, "n_tokens"),
    Bad("n_tokens str", lambda m: _bl(n_tokens="300"), InvalidParameterError, "n_tokens"),
    Bad("unknown pattern preset", lambda m: _bl(pattern="gpt5"), InvalidParameterError, "'gpt5' is not a preset"),
    Bad("invalid regex pattern", lambda m: _bl(pattern="(unclosed"), InvalidParameterError, "regex"),
    Bad("(?r) pattern", lambda m: _bl(pattern=r"(?r)\w+|\s+"), InvalidParameterError, "must not match in reverse"),
    Bad("pattern an int", lambda m: _bl(pattern=5), SymbolTypeError, "`pattern` must be a str"),
    Bad("texts one str", lambda m: _bl(texts="the cat"), SymbolTypeError, "not one str"),
    Bad("texts with None", lambda m: _bl(texts=["a", None]), SymbolTypeError, "NoneType"),
    Bad("texts with bytes", lambda m: _bl(texts=["a", b"b"]), SymbolTypeError, "bytes"),
    Bad("duplicate special tokens", lambda m: _bl(special_tokens=["<a>", "<b>", "<a>"]), InvalidParameterError, "special tokens given twice"),
    Bad("empty special token", lambda m: _bl(special_tokens=[""]), InvalidParameterError, "empty"),
    Bad("special token not a str", lambda m: _bl(special_tokens=[5]), InvalidParameterError, "special tokens must be non-empty str, got 5"),
    Bad("special token id negative", lambda m: _bl(special_tokens={"<a>": -1}), InvalidParameterError, "-1"),
    Bad("special token id in the merges", lambda m: _bl(special_tokens={"<a>": 3}), InvalidParameterError, "special token ids [3] are mergeable tokens"),
    Bad("special token id 2**40", lambda m: _bl(special_tokens={"<a>": 2**40}), InvalidParameterError, "<a>"),
    Bad("special ids shared", lambda m: _bl(special_tokens={"<a>": 300, "<b>": 300}), InvalidParameterError, "'<a>' and '<b>' are both 300"),
    Bad("n_candidates 0", lambda m: _bl(n_candidates=0), InvalidParameterError, "n_candidates"),
    Bad("mergeable ranks missing a byte", lambda m: ByteLevelBPE.from_mergeable_ranks({b"a": 0}), ModelFormatError, "255 single bytes have no rank"),
    Bad("mergeable ranks negative", lambda m: ByteLevelBPE.from_mergeable_ranks({bytes([i]): i - 1 for i in range(256)}), ModelFormatError, "invalid rank -1"),
    Bad("mergeable ranks shared", lambda m: ByteLevelBPE.from_mergeable_ranks({**{bytes([i]): i for i in range(256)}, b"ab": 5}), ModelFormatError, "rank 5 is given to two tokens"),
    Bad("mergeable ranks str keys", lambda m: ByteLevelBPE.from_mergeable_ranks({chr(i): i for i in range(256)}), ModelFormatError, "must be non-empty bytes"),
    Bad("unfitted encode", lambda m: ByteLevelBPE().encode("the"), NotFittedError, "fit"),
    Bad("unfitted decode", lambda m: ByteLevelBPE().decode([1]), NotFittedError, "fit"),
]

SAVES = [
    Bad("unfitted save tiktoken", lambda m: ByteLevelBPE().save_tiktoken("/nonexistent/x"), NotFittedError, "fit"),
    Bad("universal as tiktoken", lambda m: ubpe.save(m.u, "/tmp/x.tiktoken", format="tiktoken"), InvalidParameterError, "byte-level"),
    Bad("bytelevel as ubpe030", lambda m: ubpe.save(m.b, "/tmp/x.json", format="ubpe030"), InvalidParameterError, "bytelevel"),
    Bad("unknown save format", lambda m: ubpe.save(m.u, "/tmp/x.json", format="yaml"), ModelFormatError, "unknown model format 'yaml'"),
    Bad("gguf save", lambda m: ubpe.save(m.g, "/tmp/x.json"), InvalidParameterError, "cannot hold a gguf:gpt2 model"),
    Bad("read-only format save", lambda m: ubpe.save(m.u, "/tmp/x.gguf", format="gguf"), InvalidParameterError, "cannot hold a universal model"),
    Bad("tuple alphabet as ubpe030", lambda m: ubpe.save(_tuples(), "/tmp/x.json", format="ubpe030"), ModelFormatError, "tuple"),
    Bad("lone surrogate save", lambda m: _surrogate().save("/tmp/ubpe-bad-surrogate.json"), InvalidParameterError, "lone surrogate"),
    # an int is no file descriptor here: reading or writing fd 1 (True) would close stdout
    Bad("load an int", lambda m: ubpe.load(123), InvalidParameterError, "`path` must be a file path"),
    Bad("load True", lambda m: ubpe.load(True), InvalidParameterError, "not bool"),
    Bad("load None", lambda m: ubpe.load(None), InvalidParameterError, "not NoneType"),
    Bad("save to an int", lambda m: ubpe.save(m.u, 1), InvalidParameterError, "`path` must be a file path"),
    Bad("method save to True", lambda m: m.u.save(True), InvalidParameterError, "not bool"),
    Bad("class load of a float", lambda m: UBPE.load(1.5), InvalidParameterError, "not float"),
]


def _tuples():
    tok = UBPE(alphabet=[("a", 1), ("b", 2)], n_tokens=4)
    tok.fit([[("a", 1), ("b", 2), ("a", 1), ("b", 2)]], quiet=True)
    return tok


def _surrogate():
    tok = UBPE(alphabet=["a", "\udcff"], n_tokens=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok.fit([["a", "\udcff", "a", "\udcff"]] * 3, quiet=True)
    return tok


GROUPS = {
    "alphabet": ALPHABETS,
    "settings": SETTINGS,
    "corpus": CORPORA,
    "fit option": FIT_OPTIONS,
    "document": DOCUMENTS,
    "ids": IDS,
    "encoder option": ENCODER_OPTIONS,
    "bytelevel fit": BYTELEVEL_FIT,
    "save": SAVES,
}
ROWS = [pytest.param(row, id=f"{group}: {row.name}") for group, rows in GROUPS.items() for row in rows]


@pytest.mark.parametrize("row", ROWS)
def test_bad_api_input_is_a_clear_error(m, row):
    if issubclass(row.error, Warning):
        with pytest.warns(row.error) as caught:
            row.call(m)
        assert any(row.fragment in str(w.message) for w in caught), [str(w.message) for w in caught]
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(row.error) as caught:
            row.call(m)
    assert row.fragment in str(caught.value), f"{type(caught.value).__name__}: {caught.value}"


def test_bytelevel_replaces_lone_surrogates_as_tiktoken(m):
    """ByteLevelBPE follows tiktoken: a lone surrogate becomes U+FFFD (imported families
    refuse it, as their own systems do: the rows above)."""
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding("t", pat_str=m.b.pattern, mergeable_ranks=m.b.mergeable_ranks(), special_tokens={})
    assert m.b.encode("a\udc80b") == enc.encode("a\udc80b") == m.b.encode("a\ufffdb")
