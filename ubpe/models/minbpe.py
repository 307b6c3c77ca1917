"""karpathy/minbpe's ``RegexTokenizer``, id for id.

minbpe splits text with ``regex.findall(pattern, text)`` (text between matches is dropped, as
``findall`` drops it), takes each chunk's UTF-8 bytes and merges adjacent *pairs of ids* by the
lowest id the pair's merge creates - pair-ranked merges, as llama.cpp's ``gpt2`` models do, so
this model is :class:`~ubpe.models.ranked_bpe.ImportedBPE` with minbpe's splitting and ids
``256 + i`` for the i-th merge. Special tokens are cut out only with ``parse_special=True``
(minbpe's ``allowed_special="all"``); otherwise they are text.

>>> tok = MinbpeBPE([(104, 105), (256, 33)], pattern=r"\\S+|\\s+", special_tokens={"<|end|>": 300})
>>> tok.encode("hi! hi"), tok.decode([257, 300]), tok.n_vocab
([257, 32, 256], 'hi!<|end|>', 301)
>>> tok.encode("hi<|end|>", parse_special=True)
[256, 300]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import regex

from ..errors import InvalidParameterError, ModelFormatError
from ..text.patterns import compile_regex
from .ranked_bpe import BYTE_TO_CHAR, CONTROL, NORMAL, UNUSED, ImportedBPE

N_BYTES = 256
#: The most merges and the highest special-token id a minbpe model may have (ids are int32;
#: a file naming id 2**31 - 2 must not make us allocate two billion entries).
MAX_TOKENS = 1 << 24


class MinbpeBPE(ImportedBPE):
    """A minbpe ``.model``: ``merges[i] = (left, right)`` creates id ``256 + i``."""

    variant = "minbpe"
    #: minbpe splits with the `regex` module (`ImportedBPE`'s scanner is not used: `_FindAll`)
    unicode = "regex"

    def __init__(self, merges: Sequence[tuple[int, int]], *, pattern: str,
                 special_tokens: Mapping[str, int] | None = None, where: str = "<minbpe>"):
        merges = [(int(a), int(b)) for a, b in merges]
        if len(merges) > MAX_TOKENS:
            raise ModelFormatError(f"{where}: {len(merges)} merges; at most {MAX_TOKENS} are supported")
        raw: list[bytes] = [bytes([b]) for b in range(N_BYTES)]
        for i, (a, b) in enumerate(merges):
            if not (0 <= a < len(raw) and 0 <= b < len(raw)):
                raise ModelFormatError(f"{where}: merge {i} ({a} {b}) uses an id not created before it")
            raw.append(raw[a] + raw[b])
        if len(set(raw)) != len(raw):
            raise ModelFormatError(f"{where}: two merges spell the same bytes; such a model is not supported")
        specials = dict(special_tokens or {})
        n_vocab = len(raw)
        for text, token in specials.items():
            if not text or not len(raw) <= token < MAX_TOKENS:
                raise ModelFormatError(
                    f"{where}: special token {text!r} has id {token}, not in {len(raw)}..{MAX_TOKENS - 1}")
            n_vocab = max(n_vocab, token + 1)
        if len(set(specials.values())) != len(specials):
            raise ModelFormatError(f"{where}: two special tokens share an id")
        self.pattern = pattern
        self._regex = compile_regex(pattern, f"{where}: the split pattern", ModelFormatError)
        texts = ["".join(BYTE_TO_CHAR[b] for b in piece) for piece in raw] + [""] * (n_vocab - len(raw))
        types = np.full(n_vocab, UNUSED, dtype=np.int32)
        types[: len(raw)] = NORMAL
        for text, token in specials.items():
            texts[token], types[token] = text, CONTROL
        lines = [f"{texts[a]} {texts[b]}" for a, b in merges]
        super().__init__(texts, lines, pre="gpt-2", token_types=types, name="minbpe", where=where)
        self.merges = merges
        self.special_tokens = specials
        self._scanner = None  # ImportedBPE then splits with self.pretokenizer: minbpe's findall
        self.pretokenizer = _FindAll(self._regex)

    def describe(self) -> dict:
        info = super().describe()
        info.update(pattern=self.pattern, n_merges=len(self.merges))
        for key in ("pre", "pretokenizer", "ignore_merges"):
            info.pop(key, None)
        return info


class _FindAll:
    """minbpe's split, in the shape of a llama.cpp pre-tokenizer: ``regex.findall`` (text
    between matches is dropped). An empty pattern is ``BasicTokenizer``'s (it writes one): no
    split, the whole text is one piece.

    >>> _FindAll(regex.compile("")).split("hi there"), _FindAll(regex.compile(r"\\w+")).split("hi there")
    (['hi there'], ['hi', 'there'])
    """

    name = "minbpe"

    def __init__(self, compiled: regex.Pattern):
        self.split = compiled.findall if compiled.pattern else _whole_text


def _whole_text(text: str) -> list[str]:
    return [text] if text else []


def check_writable(tokenizer) -> tuple[list[tuple[int, int]], str, dict[str, int]]:
    """``(merges, pattern, special tokens)`` of a tokenizer minbpe can hold: a minbpe model, or
    a fitted :class:`~ubpe.models.bytelevel.ByteLevelBPE` whose ids are its creation order."""
    if isinstance(tokenizer, MinbpeBPE):
        return tokenizer.merges, tokenizer.pattern, tokenizer.special_tokens
    vocabulary = getattr(tokenizer, "vocabulary", None)
    if getattr(tokenizer, "variant", None) != "bytelevel" or vocabulary is None:
        raise InvalidParameterError(
            f"minbpe files hold byte-level BPE; this is a {getattr(tokenizer, 'variant', type(tokenizer).__name__)} model")
    merges = vocabulary.merges
    ids = np.asarray(tokenizer.token_ids)
    if (merges < 0).any() or not np.array_equal(ids, np.arange(len(ids))) or not np.array_equal(
            vocabulary.ranks, np.arange(vocabulary.n_merged)):
        raise InvalidParameterError(
            "minbpe needs each token's merge in creation order (a fitted ByteLevelBPE); "
            "this vocabulary only records ranks (e.g. read from .tiktoken)")
    return [(int(a), int(b)) for a, b in merges.tolist()], tokenizer.pattern, dict(tokenizer.special_tokens)
