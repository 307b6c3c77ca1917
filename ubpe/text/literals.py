"""Finding a few literal strings in a text, leftmost first and then longest, as ``re`` finds
an alternation of them written longest first, without importing ``re``.

A tokenizer's added tokens (``<s>``, ``[CLS]``...) are cut out of a text before anything else
runs; a model file names a handful of them, and an alternation compiled by ``re`` cost a
small file's cold load ``re``'s import (with ``enum``'s: ~2 ms) and a compile. For up to
:data:`MAX_LITERALS` of them, :class:`Literals` searches with ``str.find`` (one scan of the
text per literal, in C); for more, :func:`literal_finder` compiles the alternation (``re``
skips positions by the literals' first characters, which wins over many scans).

>>> finder = literal_finder(["<s>", "</s>", "<s>x"])
>>> [m.span() for m in finder.finditer("a<s>x</s><s>")]
[(1, 5), (5, 9), (9, 12)]
>>> finder.search("no token") is None, finder.search("a</s>").group()
(True, '</s>')
>>> escape("a.b c")
'a\\\\.b\\\\ c'
"""

from __future__ import annotations

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Iterator

#: the most literals searched by ``str.find`` (more: ``re``'s compiled alternation)
MAX_LITERALS = 16

# the characters `re.escape` escapes (Python 3.7 on), escaped as it escapes them
_ESCAPES = {c: "\\" + chr(c) for c in b"()[]{}?*+-|^$\\.&~# \t\n\r\v\f"}


def escape(text: str) -> str:
    """``re.escape(text)``, without importing ``re`` (the same characters, escaped the same
    way: the result reads the same in ``re`` and in the ``regex`` module).

    >>> import re
    >>> all(escape(chr(c)) == re.escape(chr(c)) for c in range(0x3000))
    True
    """
    return text.translate(_ESCAPES)


class Found:
    """One occurrence (what a ``re.Match`` says of it: ``span``, ``start``, ``end``, ``group``)."""

    __slots__ = ("string", "_start", "_end")

    def __init__(self, string: str, start: int, end: int):
        self.string, self._start, self._end = string, start, end

    def span(self) -> tuple[int, int]:
        return self._start, self._end

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._end

    def group(self) -> str:
        return self.string[self._start : self._end]

    def __repr__(self) -> str:
        return f"<Found span={self.span()} {self.group()!r}>"


class Literals:
    """A search for any of ``literals`` (non-empty, distinct), as the ``re`` pattern
    ``"|".join(map(re.escape, literals sorted longest first))`` searches: the leftmost
    occurrence, the longest literal there; occurrences do not overlap (the next search
    starts where one ends). ``pattern`` is that alternation's text.

    >>> Literals(["ab", "abc", "b"]).pattern
    'abc|ab|b'
    >>> [m.span() for m in Literals(["ab", "abc", "b"]).finditer("abcab b")]
    [(0, 3), (3, 5), (6, 7)]
    """

    __slots__ = ("literals", "pattern")

    def __init__(self, literals: Iterable[str]):
        self.literals = tuple(sorted(set(literals), key=len, reverse=True))
        if not all(self.literals):
            raise ValueError("a literal to find must not be empty")
        self.pattern = "|".join(map(escape, self.literals))

    def __reduce__(self) -> tuple:  # (pickle protocols 0 and 1 copy no __slots__ by themselves)
        return Literals, (self.literals,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literals) and other.literals == self.literals

    def __hash__(self) -> int:
        return hash(self.literals)

    def search(self, text: str) -> Found | None:
        """The first occurrence in ``text``, or None."""
        best = end = -1
        for literal in self.literals:  # (longest first: at one position the first found stays)
            at = text.find(literal)
            if at >= 0 and (best < 0 or at < best):
                best, end = at, at + len(literal)
        return None if best < 0 else Found(text, best, end)

    def finditer(self, text: str) -> Iterator[Found]:
        """Every occurrence in ``text``, left to right."""
        literals = self.literals
        ahead = [text.find(literal) for literal in literals]  # each literal's next occurrence
        while True:
            best = -1
            for k, at in enumerate(ahead):
                if at >= 0 and (best < 0 or at < ahead[best]):
                    best = k
            if best < 0:
                return
            start = ahead[best]
            end = start + len(literals[best])
            yield Found(text, start, end)
            for k, at in enumerate(ahead):
                if 0 <= at < end:  # overlapped by this one: search again after it
                    ahead[k] = text.find(literals[k], end)


def literal_finder(literals: Iterable[str]) -> Literals | re.Pattern:
    """A finder of ``literals`` (non-empty): :class:`Literals` for up to :data:`MAX_LITERALS`,
    else ``re``'s compiled alternation (which finds the same: a test checks both)."""
    found = Literals(literals)
    if len(found.literals) <= MAX_LITERALS:
        return found
    import re

    return re.compile(found.pattern)
