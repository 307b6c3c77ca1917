"""llama.cpp's byte-level BPE (GGUF ``gpt2``), id for id.

:class:`ImportedBPE` is llama.cpp's ``gpt2`` model (what every imported model shares is in
:mod:`ubpe.bytelevel.imported_base`):
the text is cut by the pre-tokenizer that ``tokenizer.ggml.pre`` names
(:mod:`ubpe.bytelevel.pretokenizers`), each piece's bytes are merged by the merges list's
ranks (`ubpe_native._merges`), and tokens are GPT-2's byte-to-unicode strings.

>>> tok = ImportedBPE(["a", "b", "ab", "Ġ", "Ġab"], ["a b", "Ġ ab"], pre="gpt-2")
>>> tok.encode("ab ab b")
[2, 4, 3, 1]
>>> tok.decode([2, 4]), tok.pieces([4]), tok.id_to_piece(4)
('ab ab', [b' ab'], 'Ġab')
>>> tok.encode_with("ab ab", "fewest")
[([2, 4], 0.0)]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import regex

from ubpe_native._merges import PairMerges, pack_units
from ubpe_native._pretokenize import split_text

from ..vocabulary import ID_DTYPE, Vocabulary
from .imported_base import BYTE, CONTROL, NORMAL, UNUSED, ImportedTokenizer

__all__ = ["BYTE_TO_CHAR", "CHAR_TO_BYTE", "ImportedBPE", "bytes_to_unicode",
           "BYTE", "CONTROL", "NORMAL", "UNUSED"]  # the token types, for the models built on this one
from .patterns import NATIVE_PATTERNS, PATTERNS, code_point_classes
from .pretokenizers import Pretokenizer, resolve_pre, scanner_unsafe

# Pre-tokenizer types that the kernel's scanner splits as llama.cpp does (see _words)
_SCANNED = {"gpt2": NATIVE_PATTERNS[PATTERNS["gpt2"]], "llama3": NATIVE_PATTERNS[PATTERNS["llama3"]]}


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (llama.cpp's ``unicode_byte_to_utf8_map``)."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


class ImportedBPE(ImportedTokenizer):
    """llama.cpp's byte-level BPE (GGUF ``tokenizer.ggml.model == "gpt2"``), id for id.

    ``tokens`` are GPT-2 byte-to-unicode strings, ``merges`` the ``"left right"`` lines in rank
    order, ``pre`` the ``tokenizer.ggml.pre`` value.
    """

    variant = "gguf:gpt2"
    symbol_unit = "byte"

    def __init__(self, tokens: list[str], merges: list[str], *, pre: str = "default",
                 token_types: np.ndarray | None = None, specials: dict[str, int | None] | None = None,
                 flags: dict[str, Any] | None = None, name: str = "", where: str = "<tokens>"):
        self._init_common(list(tokens), token_types, specials, flags, name, where)
        pre_type, self.ignore_merges = resolve_pre(pre)
        self.pre = pre
        self.pretokenizer = Pretokenizer.for_type(pre_type)
        self._scanner = _SCANNED.get(pre_type)
        self.n_merges = len(merges)
        self._raw: list[bytes | None] = list(map(_unmapped, self.texts))
        self._kernel = self._build_kernel(merges)

    def _build_kernel(self, merges: list[str]) -> PairMerges:
        text_to_id = {text: i for i, text in enumerate(self.texts)}
        n = len(self.texts)
        extra: dict[str, int] = {}  # merge operands and results that are no token

        def ids_of(texts: list[str]) -> list[int]:
            found = list(map(text_to_id.get, texts))
            for k, token in enumerate(found):
                if token is None:
                    found[k] = extra.setdefault(texts[k], n + len(extra))
            return found

        units = ids_of([BYTE_TO_CHAR[b] for b in range(256)])
        cuts = [line.find(" ", 1) for line in merges]
        pairs = [(line[:cut], line[cut + 1 :]) for line, cut in zip(merges, cuts) if cut > 0]
        firsts = [a for a, _ in pairs]
        seconds = [b for _, b in pairs]
        self._merged_texts = [a + b for a, b in pairs]
        self._merge_pairs = pairs
        left, right, result = ids_of(firsts), ids_of(seconds), ids_of(self._merged_texts)
        # what llama.cpp writes for a symbol that is no token: its single ASCII bytes' tokens
        expansions = [[text_to_id[chr(b)] for b in text.encode("utf-8", "surrogateescape") if b < 0x80 and chr(b) in text_to_id]
                      for text in extra]
        offsets = np.zeros(len(expansions) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in expansions], out=offsets[1:])
        whole_words = [(raw, i) for i, raw in enumerate(self._raw) if raw] if self.ignore_merges else []
        whole_offsets = np.zeros(len(whole_words) + 1, dtype=np.int64)
        np.cumsum([len(raw) for raw, _ in whole_words], out=whole_offsets[1:])
        i32 = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
        return PairMerges(
            n, i32(left), i32(right), i32(result), np.arange(len(left), dtype=np.int64),
            offsets, i32([t for e in expansions for t in e]),
            pack_units([bytes([b]) for b in range(256)]), i32(units), np.full(256, -1, np.int32),
            False, b"".join(raw for raw, _ in whole_words), whole_offsets, i32([i for _, i in whole_words]))

    def _words(self, text: str) -> tuple[bytes, np.ndarray]:
        """The pre-tokens of a text without special tokens: its UTF-8 bytes and their bounds.

        For the GPT-2 and Llama 3 pre-tokenizers the kernel's scanner (written for tiktoken's
        patterns of the same names) splits the text: they cut alike except on unassigned code
        points and on ``'ſ`` (see `pretokenizers.scanner_unsafe`), and texts holding those take
        the regex path.
        """
        if self._scanner is not None and not scanner_unsafe(text):
            data = text.encode("utf-8")
            return data, split_text(np.frombuffer(data, dtype=np.uint8), code_point_classes(), self._scanner)
        return self._words_by_regex(text)

    def _words_by_regex(self, text: str) -> tuple[bytes, np.ndarray]:
        words = [w.encode("utf-8", "surrogatepass") for w in self.pretokenizer.split(text)]
        bounds = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum([len(w) for w in words], out=bounds[1:])
        return b"".join(words), bounds

    def _native(self, text: str) -> list[int]:
        """llama.cpp's ids of a text without special tokens."""
        data, bounds = self._words(text)
        return self._kernel.encode(data, bounds).tolist()

    def _native_by_regex(self, text: str) -> list[int]:
        data, bounds = self._words_by_regex(text)
        return self._kernel.encode(data, bounds).tolist()

    def _parts(self, text: str) -> list[np.ndarray]:
        data, bounds = self._words(text)
        if not data:
            return []
        symbols = np.frombuffer(data, dtype=np.uint8).astype(ID_DTYPE)
        cuts = bounds.tolist()
        return [symbols[a:b] for a, b in zip(cuts, cuts[1:])]

    def _build_vocabulary(self) -> tuple[Vocabulary, np.ndarray, list[list[int]]]:
        rank_of: dict[bytes, int] = {}
        for rank, created in enumerate(self._merged_texts):  # a token's rank: its first merge
            raw = _unmapped(created)
            if raw is not None:
                rank_of.setdefault(raw, rank)
        base_expansion: list[list[int]] = [[] for _ in range(256)]
        pieces, model_ids, ranks = [], [], []
        for i, raw in enumerate(self._raw):
            if raw is None or self.token_types[i] != NORMAL:
                continue
            if len(raw) == 1:
                base_expansion[raw[0]] = [i]
            else:
                pieces.append(list(raw))
                model_ids.append(i)
                ranks.append(rank_of.get(raw, len(rank_of) + len(ranks)))
        order = np.argsort(np.asarray(ranks, dtype=np.int64), kind="stable")
        vocabulary = Vocabulary.from_pieces(256, [pieces[k] for k in order], np.zeros(len(pieces)),
                                            ranks=np.arange(len(pieces), dtype=np.int64))
        return vocabulary, np.asarray(model_ids, dtype=np.int64)[order], base_expansion

    def _recorded_merges(self) -> dict[int, tuple[int, int]]:
        """token -> (left, right) of the first merge line that creates it."""
        text_ids = self._text_index()
        merges: dict[int, tuple[int, int]] = {}
        for (first, second), merged in zip(self._merge_pairs, self._merged_texts):
            token, left, right = text_ids.get(merged), text_ids.get(first), text_ids.get(second)
            if token is not None and left is not None and right is not None:
                merges.setdefault(token, (left, right))
        return merges

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        out = []
        for i in self._check_ids(ids):
            raw = self._raw[i]
            out.append(raw if raw is not None and self.token_types[i] in (NORMAL, BYTE)
                       else self.texts[i].encode("utf-8", "surrogatepass"))
        return b"".join(out)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(pre=self.pre, pretokenizer=self.pretokenizer.name, n_merges=self.n_merges,
                    ignore_merges=self.ignore_merges)
        return info


_TO_LATIN1 = str.maketrans({c: chr(b) for c, b in CHAR_TO_BYTE.items()})
_NOT_MAPPED = regex.compile("[^" + "".join(regex.escape(c) for c in CHAR_TO_BYTE) + "]")


def _unmapped(text: str) -> bytes | None:
    """The bytes a GPT-2 byte-to-unicode string stands for, or None if it is not one."""
    if _NOT_MAPPED.search(text):
        return None
    return text.translate(_TO_LATIN1).encode("latin-1")
