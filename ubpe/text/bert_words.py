"""BERT's words: HF ``tokenizers``' ``BertPreTokenizer`` (:func:`bert_words`) and llama.cpp's WPM
preprocessing (:func:`wpm_words`), in Python (the readable rules, and the path of pipelines the
kernel does not take), and as the class and code point tables that ``ubpe_native._wordpiece``
cuts words by without the GIL (:func:`bert_classes`, :func:`bert_lower_map`, :func:`wpm_classes`,
:func:`wpm_maps`).

>>> bert_words("Hello,  world! $5")
['Hello', ',', 'world', '!', '$', '5']
"""

from __future__ import annotations

import bisect
from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from collections.abc import Iterable

from ubpe_native._numpy import np

from .._lazy import re, regex  # (re imported when first used: with enum, ~2 ms of a cold load)


@functools.lru_cache(maxsize=None)
def _bert_words_regex() -> regex.Pattern:
    from . import bert_tables
    from .normalizers import WHITESPACE, char_class

    punctuation = char_class(bert_tables.PUNCTUATION)
    return regex.compile(f"[{punctuation}]|[^{punctuation}{regex.escape(WHITESPACE)}]+")


def bert_words(text: str) -> list[str]:
    """HF ``tokenizers``' ``BertPreTokenizer``: words cut at whitespace (removed) and at every
    punctuation character (a word of its own; ASCII punctuation and Unicode's, by the tables
    of :mod:`ubpe.text.bert_tables`).

    >>> bert_words("Hello,  world! $5")
    ['Hello', ',', 'world', '!', '$', '5']
    """
    if text.isascii():  # ASCII punctuation and whitespace are the tables' (a test checks)
        return _ascii_regexes()[0].findall(text)
    return _bert_words_regex().findall(text)


_ASCII_PUNCTUATION = r"!-/:-@\[-`{-~"


@functools.cache
def _ascii_regexes() -> tuple[re.Pattern, re.Pattern]:
    """The ASCII words of :func:`bert_words` and the control characters llama.cpp drops
    (compiled when first used, not at import: ~0.3 ms of every tokenizer.json's cold load)."""
    return (re.compile(f"[{_ASCII_PUNCTUATION}]|[^{_ASCII_PUNCTUATION}\t\n\x0b\x0c\r ]+"),
            re.compile("[\\x00-\\x08\\x0e-\\x1f\\x7f]+"))


#: the ASCII symbols (``\\p{S}``), which llama.cpp's WPM cuts as punctuation
ASCII_SYMBOLS = "$+<=>^`|~"


@functools.lru_cache(maxsize=None)
def _wpm_regexes() -> tuple[regex.Pattern, regex.Pattern, regex.Pattern]:
    from . import wpm_tables as tables
    from .normalizers import CJK_RANGES, WHITESPACE, char_class

    space = regex.escape(WHITESPACE)
    # llama.cpp's flags: whitespace first, then NUL, U+FFFD and \p{C} are dropped
    dropped = regex.compile(f"[[\\x00\\ufffd{char_class(tables.CONTROL)}]--[{space}]]+", regex.V1)
    alone = f"{char_class(tables.PUNCTUATION)}{regex.escape(ASCII_SYMBOLS)}{char_class(CJK_RANGES)}"
    words = regex.compile(f"[{alone}]|[^{alone}{space}]+", regex.V1)
    return dropped, words, regex.compile(f"[{char_class(tables.MARKS)}]+")


@functools.lru_cache(maxsize=None)
def _nfd_firsts() -> tuple[list[int], tuple[tuple[int, int, int], ...]]:
    from .wpm_tables import NFD_FIRST

    return [first for first, _, _ in NFD_FIRST], NFD_FIRST


@functools.lru_cache(maxsize=4096)
def _first_of_nfd(char: str) -> str:
    """The first code point of ``char``'s NFD by llama.cpp's table (its ranges, bisected)."""
    firsts, ranges = _nfd_firsts()
    k = bisect.bisect_right(firsts, ord(char)) - 1
    return chr(ranges[k][2]) if k >= 0 and ord(char) <= ranges[k][1] else char


@functools.lru_cache(maxsize=4096)
def _simple_lower(char: str) -> str:
    from .wpm_tables import LOWERCASE

    # UnicodeData's simple mapping, by llama.cpp's table
    return LOWERCASE.get(ord(char), char)


# -- the WordPiece kernel's tables (ubpe_native._wordpiece) --------------------------------------

#: A code point's class in the kernel's table: part of a word; whitespace (ends a word, dropped);
#: a word of its own (punctuation); dropped, the word going on (a mark that strip_accents removes)
WORD, SPACE, ALONE, DROPPED = 0, 1, 2, 3
#: U+0000..U+10FFFF: one table entry each
CODE_POINTS = 0x110000


def _class_table(*layers: tuple[int, Iterable[tuple[int, int]]]) -> memoryview:
    """A class per code point (a byte each, as the kernel reads them; built without numpy):
    ``WORD``, then each ``(class, ranges)`` of ``layers`` in order (a later one wins), by
    `ubpe_native._wordpiece.class_table` (in C, on pages no one wrote: 1.1 MB of
    ``bytearray`` cost a cold process ~1 ms)."""
    from ubpe_native._wordpiece import class_table

    return class_table(layers)


def _char_ranges(chars: str) -> list[tuple[int, int]]:
    return [(ord(c), ord(c)) for c in chars]


@functools.lru_cache(maxsize=None)
def bert_classes(handle_chinese_chars: bool, strip_accents: bool) -> memoryview:
    """The kernel's classes for HF's ``BertPreTokenizer`` behind a ``BertNormalizer`` whose
    character rewriting (``BertNormalizer.rewrite``) ran first: whitespace splits, punctuation
    stands alone, and so do CJK ideographs (``handle_chinese_chars`` pads them with spaces);
    nonspacing marks are dropped (``strip_accents``, after the NFD of ``rewrite``).

    >>> table = bert_classes(True, True)
    >>> [int(table[ord(c)]) for c in "a ,中\\u0301"] == [WORD, SPACE, ALONE, ALONE, DROPPED]
    True
    """
    from . import bert_tables as tables
    from .normalizers import CJK_RANGES, WHITESPACE

    return _class_table((ALONE, tables.PUNCTUATION), (ALONE, CJK_RANGES if handle_chinese_chars else ()),
                        (SPACE, _char_ranges(WHITESPACE)), (DROPPED, tables.NONSPACING_MARKS if strip_accents else ()))


@functools.lru_cache(maxsize=None)
def bert_lower_map() -> dict[int, int]:
    """The kernel's ``lower`` map behind ``BertNormalizer.rewrite`` with ``lowercase``, as the
    code points it changes (the kernel builds the table, every other code point itself): the
    letters that HF lowercases and Python's older Unicode does not
    (:data:`~ubpe.text.bert_tables.LOWERCASE`).

    >>> chr(bert_lower_map()[0x1C89]), ord("A") in bert_lower_map()
    ('\u1c8a', False)
    """
    from .bert_tables import LOWERCASE

    return {cp: ord(text) for cp, text in LOWERCASE.items()}


@functools.lru_cache(maxsize=None)
def wpm_classes(strip_accents: bool) -> memoryview:
    """The kernel's classes for llama.cpp's WPM preprocessing (:func:`wpm_words`), read on a
    code point after its ``fold`` (:func:`wpm_maps`): punctuation, ASCII symbols and CJK
    ideographs stand alone; NUL, U+FFFD and ``\\p{C}`` are dropped; whitespace splits (it
    wins over ``\\p{C}``); marks are dropped with ``strip_accents``.

    >>> table = wpm_classes(True)
    >>> [int(table[ord(c)]) for c in "a $中\\x00\\u0301"] == [WORD, SPACE, ALONE, ALONE, DROPPED, DROPPED]
    True
    """
    from . import wpm_tables as tables
    from .normalizers import CJK_RANGES, WHITESPACE

    return _class_table((ALONE, (*tables.PUNCTUATION, *_char_ranges(ASCII_SYMBOLS), *CJK_RANGES)),
                        (DROPPED, (*tables.CONTROL, (0, 0), (0xFFFD, 0xFFFD))), (SPACE, _char_ranges(WHITESPACE)),
                        (DROPPED, tables.MARKS if strip_accents else ()))


@functools.lru_cache(maxsize=None)
def wpm_maps(lowercase: bool, strip_accents: bool) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(fold, lower)``, the kernel's maps for llama.cpp's WPM: with ``strip_accents`` every
    code point becomes the first of its NFD (before it is classified), with ``lowercase`` a
    kept one its simple lowercase (after); None where the option is off.

    >>> fold, lower = wpm_maps(True, True)
    >>> chr(fold[ord("é")]), chr(lower[ord("Σ")]), chr(lower[ord("A")])
    ('e', 'σ', 'a')
    """
    from .wpm_tables import LOWERCASE, NFD_FIRST

    fold = lower = None
    if strip_accents:
        fold = np.arange(CODE_POINTS, dtype=np.int32)
        for first, last, value in NFD_FIRST:
            fold[first : last + 1] = value
    if lowercase:
        lower = np.arange(CODE_POINTS, dtype=np.int32)
        lower[list(LOWERCASE)] = [ord(c) for c in LOWERCASE.values()]
    return fold, lower


def wpm_words(text: str, lowercase: bool = True, strip_accents: bool = True) -> list[str]:
    """llama.cpp's WPM (BERT) preprocessing (``llm_tokenizer_wpm_session::preprocess``), which
    normalizes and cuts in one pass, code point by code point, by llama.cpp's own Unicode
    tables (:mod:`ubpe.text.wpm_tables`): with ``strip_accents`` every code point becomes the
    first of its NFD and marks (``\\p{M}``) are dropped; whitespace ends a word; NUL, U+FFFD
    and ``\\p{C}`` are dropped; punctuation, ASCII symbols and CJK ideographs are words of
    their own; ``lowercase`` lowercases by Unicode's simple mapping.

    >>> wpm_words("Héllo,  WORLD!\\x00 $5 中文")
    ['hello', ',', 'world', '!', '$', '5', '中', '文']
    """
    if text.isascii():  # ASCII's control characters, punctuation and symbols are the tables' (a test checks)
        words, control = _ascii_regexes()
        out = words.findall(control.sub("", text))
        return [w.lower() for w in out] if lowercase else out
    dropped, words, marks = _wpm_regexes()
    if strip_accents:
        text = marks.sub("", "".join(c if c < "\x80" else _first_of_nfd(c) for c in text))
    text = dropped.sub("", text)
    out = words.findall(text)
    if lowercase:
        out = [w.lower() if w.isascii() else "".join(map(_simple_lower, w)) for w in out]
    return out
