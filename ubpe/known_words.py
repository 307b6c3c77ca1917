"""Known words: whole words (runs of symbols) that get ids of their own, ``A..A+K-1``, and are
never split - the first step of the split pipeline (:class:`ubpe.splitting.SplitPipeline`).

:func:`normalize_known_words` turns the user's words (a list, a set or a ``word -> id``
mapping; str words for text alphabets, sequences of symbols otherwise) into ``word -> id``;
:class:`KnownWords` finds them in documents, leftmost and longest first, as ubpe 0.3.0's
left-to-right scan does.

>>> from ubpe.alphabet import Alphabet
>>> words = normalize_known_words(["ab", "abc"], Alphabet.from_spec("abc"))
>>> words, KnownWords(words).find("xabcab")
({'ab': 3, 'abc': 4}, [(1, 4, 4), (4, 6, 3)])
"""

from __future__ import annotations

from collections.abc import Mapping

from ubpe_native._numpy import numpy_types

from ._lazy import regex  # (imported when known words are compiled)
from .alphabet import Alphabet, normalize_symbol
from .errors import InvalidParameterError, SymbolTypeError

TYPE_CHECKING = False  # (typing's, without importing typing: see ubpe.files)
if TYPE_CHECKING:
    from typing import Any


class KnownWords:
    """Longest-match search of known words in documents of any symbol type."""

    def __init__(self, words: Mapping[Any, int]):
        self.words = dict(words)
        str_words = [w for w in self.words if isinstance(w, str)]
        # For str documents a regex alternation, longest alternative first, finds at the
        # leftmost position the longest word: exactly the reference's left-to-right scan.
        self.pattern = (
            regex.compile("|".join(regex.escape(w) for w in sorted(str_words, key=len, reverse=True)))
            if str_words
            else None
        )
        self.trie: dict[Any, Any] = {}
        for word, token in self.words.items():
            node = self.trie
            for symbol in word:
                node = node.setdefault(normalize_symbol(symbol), {})
            node[KnownWords] = token  # the class itself marks an end: it is no symbol

    def find(self, doc: Any) -> list[tuple[int, int, int]]:
        """``(start, end, token)`` of every known word in ``doc``, left to right."""
        if isinstance(doc, str):
            if self.pattern is None:
                return []
            return [(m.start(), m.end(), self.words[m.group()]) for m in self.pattern.finditer(doc)]
        symbols = [normalize_symbol(s) for s in doc]
        found, start = [], 0
        while start < len(symbols):
            node, best = self.trie, None
            for position in range(start, len(symbols)):
                try:
                    node = node.get(symbols[position])
                except TypeError:
                    node = None
                if node is None:
                    break
                if KnownWords in node:
                    best = (position + 1, node[KnownWords])
            if best is None:
                start += 1
            else:
                found.append((start, best[0], best[1]))
                start = best[0]
        return found


def normalize_known_words(
    known_words: Any, alphabet: Alphabet
) -> dict[Any, int] | None:
    """Known words as ``word -> id`` with ids ``A..A+K-1`` (str words or tuples of symbols)."""
    if known_words is None:
        return None
    if not isinstance(known_words, (Mapping, list, tuple, set, frozenset)):
        raise SymbolTypeError(
            f"`known_words` must be a dict, list or set, not {type(known_words).__name__}"
        )
    if len(known_words) == 0:
        return None
    base = len(alphabet)
    if isinstance(known_words, Mapping):
        words = {_word_key(w): int(i) for w, i in known_words.items()}
        if sorted(words.values()) != list(range(base, base + len(words))):
            raise InvalidParameterError(
                "values in `known_words` must be the ids len(alphabet)..len(alphabet)+len(known_words)-1"
            )
    elif isinstance(known_words, (list, tuple, set, frozenset)):
        ordered = known_words if not isinstance(known_words, (set, frozenset)) else sorted(known_words, key=repr)
        words = {}
        for word in ordered:
            words.setdefault(_word_key(word), base + len(words))
    else:
        raise SymbolTypeError(
            f"`known_words` must be a dict, list or set, not {type(known_words).__name__}"
        )
    if any(len(w) == 0 for w in words):
        raise InvalidParameterError("`known_words` must not contain an empty word")
    if len({type(w) for w in words}) > 1:
        raise SymbolTypeError("`known_words` must be all strings or all sequences of symbols")
    if alphabet.symbol_type is not str and any(isinstance(w, str) for w in words):
        raise SymbolTypeError(
            f"`known_words` are str but the alphabet's symbols are {alphabet.symbol_type.__name__}: "
            "give each word as a list of symbols"
        )
    return words


def _word_key(word: Any) -> str | tuple:
    if isinstance(word, str):
        return word
    if isinstance(word, (list, tuple, *numpy_types("ndarray"))):
        return tuple(normalize_symbol(s) for s in word)
    raise SymbolTypeError(
        f"a known word must be a str or a list/tuple of symbols, not {type(word).__name__}"
    )
