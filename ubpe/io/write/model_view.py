"""What a tokenizer holds, as the writers need it: one small record per kind of model.

Every writer of :mod:`ubpe.io.write` reads a tokenizer through :func:`view_of`, never through
a family's private fields, and gets one record per kind of model:

* :class:`ByteRanks` - byte-level BPE by tiktoken's rule (any adjacent pair whose concatenation
  is a token merges, lowest rank first): :class:`~ubpe.models.bytelevel.ByteLevelBPE` and
  tekken;
* :class:`ByteMerges` - byte-level BPE by listed merges (llama.cpp's ``gpt2`` GGUF model);
* :class:`Pieces` - sentencepiece's models (BPE: the pair whose concatenation has the highest
  score merges; unigram: the Viterbi path), from a ``.model`` file or a GGUF ``llama`` model;
* :class:`SymbolMerges` - a fitted classic vocabulary over any alphabet: pieces are runs of
  alphabet ids, ranked by id (ubpe's ``ranked`` encoder with ``priority="id"``);
* :class:`CharMerges` - llama.cpp's ``gemma4`` model: character-level BPE by listed merges,
  spaces as ``▁``, text cut at line ends, byte fallback;
* :class:`WordPieces` - llama.cpp's ``bert`` model (WPM): greedy longest match over its own
  normalization;
* :class:`SourceDocument` - a model read from an HF ``tokenizer.json`` (BPE, byte-level,
  WordPiece, Unigram, WordLevel): the document it was read from, which the reader took only
  because ubpe runs all of it exactly.

A tokenizer none of these describes raises :class:`CannotWrite` with the reason, which is what
``ubpe convert`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import InvalidParameterError, NotFittedError
from ...files import decoded_text
from . import CannotWrite  # noqa: F401  (defined in the package: saving imports no numpy)

#: sentencepiece's piece types (the GGUF token types use the same numbers)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


@dataclass
class ByteRanks:
    """``ranks``: token bytes -> id; ``specials``: special token text -> id."""

    ranks: dict[bytes, int]
    pattern: str
    specials: dict[str, int]


@dataclass
class ByteMerges:
    """llama.cpp ``gpt2``: ``tokens`` in GPT-2's byte alphabet, ``merges`` ``"left right"``."""

    tokens: list[str]
    merges: list[str]
    pre: str
    expressions: tuple[str, ...]
    ignore_merges: bool
    token_types: np.ndarray
    special_ids: dict[str, int]


@dataclass
class Pieces:
    """sentencepiece's model: ``kind`` ``"bpe"`` or ``"unigram"``; ``charsmap`` the
    precompiled normalization (``b""``: none); ``llama_text``: text handled as llama.cpp does
    (a GGUF ``llama`` model: no normalizer, ``▁`` prefix)."""

    kind: str
    pieces: list[str]
    scores: np.ndarray
    types: np.ndarray
    charsmap: bytes
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    llama_text: bool
    special_ids: dict[str, int]
    add_bos: bool = False
    add_eos: bool = False

    @property
    def byte_fallback(self) -> bool:
        return bool(np.any(self.types == BYTE))


@dataclass
class SymbolMerges:
    """A classic vocabulary: ``alphabet`` (the symbols, by alphabet id), ``pieces[i]`` the
    alphabet ids of token ``i`` (the first ``len(alphabet)`` are the symbols), ``text``: the
    alphabet is single characters and documents are strings."""

    alphabet: list[Any]
    pieces: list[tuple[int, ...]]
    text: bool
    model_json: str = field(repr=False, default="")


@dataclass
class CharMerges:
    """llama.cpp ``gemma4``: ``tokens`` and ``merges`` (``"left right"``) as the GGUF holds them."""

    tokens: list[str]
    merges: list[str]
    token_types: np.ndarray
    special_ids: dict[str, int]
    scores: np.ndarray
    add_space_prefix: bool


@dataclass
class WordPieces:
    """llama.cpp ``bert`` (WPM): ``tokens`` in its spelling (``▁`` before a word-initial piece)."""

    tokens: list[str]
    token_types: np.ndarray
    special_ids: dict[str, int]
    lowercase: bool
    strip_accents: bool


@dataclass
class SourceDocument:
    """The text of the ``tokenizer.json`` an HF model was read from."""

    text: str = field(repr=False)


#: the families read from tokenizer.json (their document is their model)
HF_FAMILIES = ("hf:bytelevel", "hf:bytelevel-suffix", "hf:bpe", "hf:wordpiece", "hf:unigram", "hf:wordlevel")


def view_of(tokenizer: Any) -> ByteRanks | ByteMerges | Pieces | SymbolMerges | CharMerges | WordPieces | SourceDocument:
    """The record of ``tokenizer`` (:class:`CannotWrite` for a model none describes)."""
    variant = getattr(tokenizer, "variant", None)
    if variant in HF_FAMILIES:  # (before `vocabulary`, which an imported model builds on first use)
        source = getattr(tokenizer, "source_json", None)
        if source is None:
            raise CannotWrite(f"this {variant} model was built in memory, not read from a tokenizer.json, "
                              "and ubpe writes such a model from its document only")
        return SourceDocument(decoded_text(source) if isinstance(source, bytes) else source)
    if getattr(tokenizer, "vocabulary", True) is None:
        raise NotFittedError("the tokenizer has no vocabulary yet: fit or load one first")
    if variant in ("bytelevel", "tekken"):
        return ByteRanks(tokenizer.mergeable_ranks(), tokenizer.pattern, dict(tokenizer.special_tokens))
    if variant == "gguf:gpt2":
        return ByteMerges(list(tokenizer.texts), tokenizer.merge_lines, tokenizer.pre,
                          tuple(tokenizer.pretokenizer.expressions), bool(tokenizer.ignore_merges),
                          np.asarray(tokenizer.token_types), dict(tokenizer.special_ids))
    if variant == "gguf:gemma4":
        return CharMerges(list(tokenizer.texts), tokenizer.merge_lines, np.asarray(tokenizer.token_types),
                          dict(tokenizer.special_ids), np.asarray(tokenizer.scores, np.float32),
                          bool(tokenizer.add_space_prefix))
    if variant == "gguf:bert":
        return WordPieces(list(tokenizer.texts), np.asarray(tokenizer.token_types), dict(tokenizer.special_ids),
                          bool(tokenizer.lowercase), bool(tokenizer.strip_accents))
    if variant in ("spm:bpe", "spm:unigram", "gguf:llama", "gguf:t5"):
        return _pieces(tokenizer, "unigram" if variant in ("spm:unigram", "gguf:t5") else "bpe")
    if variant == "classic":
        return _symbol_merges(tokenizer)
    if variant == "universal":
        raise CannotWrite("a universal (UBPE) model encodes by tf-idf top-n over all segmentations, "
                          "which no merge list expresses (fit a UBPEClassic for other systems)")
    raise CannotWrite(f"ubpe writes no other format for a {variant} model (it is read-only)")


def _pieces(tokenizer: Any, kind: str) -> Pieces:
    normalizer = tokenizer.normalizer
    if normalizer is None:  # llama.cpp's text handling: a space prefix, spaces as ▁, nothing else
        charsmap, dummy, extra, escape = b"", bool(tokenizer.add_space_prefix), False, True
    else:
        charsmap = normalizer.precompiled_charsmap
        dummy, extra = normalizer.add_dummy_prefix, normalizer.remove_extra_whitespaces
        escape = normalizer.escape_whitespaces
        if normalizer.treat_whitespace_as_suffix:
            raise CannotWrite("a sentencepiece model with treat_whitespace_as_suffix has no tokenizer.json form")
    return Pieces(kind, list(tokenizer.texts), np.asarray(tokenizer.scores, np.float32),
                  np.asarray(tokenizer.token_types, np.int32), charsmap, dummy, extra, escape,
                  normalizer is None, dict(tokenizer.special_ids), bool(tokenizer.add_bos), bool(tokenizer.add_eos))


def _symbol_merges(tokenizer: Any) -> SymbolMerges:
    if tokenizer.break_tokens or tokenizer.stop_tokens or tokenizer.regex_str or getattr(tokenizer, "known_words", None):
        raise CannotWrite("this classic model splits documents (regex, break/stop tokens or known words) "
                          "in ways only ubpe runs; other formats hold a model without them")
    vocabulary = tokenizer.vocabulary
    symbols = tokenizer.inverse_alphabet
    alphabet = [symbols[i] for i in range(len(symbols))]
    if vocabulary.n_base != len(alphabet):
        raise CannotWrite("this classic model has base tokens beyond its alphabet (known words)")
    pieces = [tuple(int(s) for s in vocabulary.piece(token)) for token in range(len(vocabulary))]
    if (vocabulary.merges[:, 0] < 0).any():
        raise CannotWrite("this classic model has tokens without a recorded merge")
    return SymbolMerges(alphabet, pieces, single_characters(tokenizer), tokenizer.to_json())


def single_characters(tokenizer: Any) -> bool:
    """Whether a ubpe model's alphabet is text of one character per symbol (a tokenizer.json
    holds those characters as they are; other alphabets go through code points)."""
    symbols = tokenizer.inverse_alphabet
    return tokenizer.symbol_type is str and all(isinstance(symbols[i], str) and len(symbols[i]) == 1
                                                for i in range(len(symbols)))
