"""HF ``tokenizers``' Unicode normalization (NFC, NFD, NFKC, NFKD) and ``Lowercase``, with its
tables, whatever Python runs them.

``tokenizers`` normalizes with the tables of the Rust crate it was built with, and Python's
``unicodedata`` is of another Unicode version (one per Python release), so the two disagree on
a few hundred code points (``"㋿"`` stays whole under ``tokenizers``' NFKC, Python 3.11 writes
``令和``; ``tokenizers`` gives U+1AC1 no combining class, so ``"a\\u1ac1\\u0323"`` is NFC
already). :mod:`ubpe.text.unicode_tables` holds ``tokenizers``' data (generated from it by
``tests/golden/make_unicode_tables.py``) and :func:`normalize` runs the normalization
algorithm (UAX #15) on it: decompose, order the marks by class, compose.

That algorithm in Python is slow, and on almost every text it gives what ``unicodedata`` does:
the tables also list, per Python Unicode version, the code points where that version's data is
not ``tokenizers``' (``DIFFER_NORMALIZE``, ``DIFFER_LOWER``, and every code point that
decomposes to one of them). A text holding none of them normalizes alike with either data, so
``unicodedata`` (C) does it; any other text runs the algorithm here. A Python whose version the
tables do not list has the set computed once, on the first text that is not ASCII
(:func:`differing`, about a second). Either way the result is ``tokenizers``', by construction.

>>> normalize("NFKC", "\\u32ff"), normalize("NFC", "a\\u1ac1\\u0323") == "a\\u1ac1\\u0323"
('㋿', True)
>>> normalize("NFC", "e\\u0301"), lowercase("ΑΣ")
('é', 'ασ')
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import unicodedata
from .._fntools import namedtuple  # (collections.namedtuple without exec: ubpe._fntools)

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    import re

FORMS = ("NFC", "NFD", "NFKC", "NFKD")
_SIGMA, _SMALL_SIGMA = "\u03a3", "\u03c3"
# Hangul syllables: decomposed and composed by arithmetic (Unicode's section 3.12)
_S_BASE, _L_BASE, _V_BASE, _T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
_L_COUNT, _V_COUNT, _T_COUNT = 19, 21, 28
_N_COUNT = _V_COUNT * _T_COUNT
_S_COUNT = _L_COUNT * _N_COUNT
_SURROGATES = (0xD800, 0xDFFF)
_LAST_BMP = 0xFFFF


class Tables(namedtuple("Tables", "nfd nfkd ccc compose lower")):
    """``tokenizers``' data as the algorithm reads it: code points as one-character strings."""

    __slots__ = ()

    nfd: dict[str, str]  # code point -> its full canonical decomposition
    nfkd: dict[str, str]  # code point -> its full compatibility decomposition (or canonical)
    ccc: dict[str, int]  # the combining classes that are not 0
    compose: dict[tuple[str, str], str]  # (first, second) -> primary composite
    lower: dict[int, str]  # code point -> what Lowercase writes (a str.translate table)


def _entries(packed: str) -> list[list[int]]:
    return [[int(field, 16) for field in entry.split()] for entry in packed.split(";") if entry]


def parsed(tables) -> Tables:
    """The strings of a module like :mod:`ubpe.text.unicode_tables` as :class:`Tables`.

    >>> from ubpe.text import unicode_tables
    >>> parsed(unicode_tables).nfd["\u00e9"] == "e\u0301"
    True
    """
    nfd = {chr(cp): "".join(map(chr, out)) for cp, *out in _entries(tables.NFD)}
    nfkd = {**nfd, **{chr(cp): "".join(map(chr, out)) for cp, *out in _entries(tables.NFKD)}}
    ccc: dict[str, int] = {}
    for entry in filter(None, tables.CCC.split(";")):
        value, *spans = entry.split()
        for span in spans:
            first, _, last = span.partition("-")
            for cp in range(int(first, 16), int(last or first, 16) + 1):
                ccc[chr(cp)] = int(value)
    compose = {(chr(a), chr(b)): chr(c) for a, b, c in _entries(tables.COMPOSE)}
    lower = {cp: "".join(map(chr, out)) for cp, *out in _entries(tables.LOWER)}
    return Tables(nfd, nfkd, ccc, compose, lower)


@functools.lru_cache(maxsize=None)
def _tables() -> Tables:
    """The generated tables (read on first use)."""
    from . import unicode_tables

    return parsed(unicode_tables)


class _Differ:
    """Where this Python's data is not ``tokenizers``' (``ranges`` of code points, sorted):
    :meth:`search` says whether a text holds one. A text whose code points are all below the
    first of them (all of Latin-1 on every Python the tables list) says no without a regex;
    any other text goes through ``quick``, which finds the first code point that may be one
    (a bitmap for the Basic Multilingual Plane, any code point above it), then ``exact`` from
    there. Both are compiled when first needed (``re``: a first text of Latin-1 imports none,
    nor does a short one whose code points are all below the first range).

    >>> finder = _Differ([(0x7FD, 0x7FD), (0x1D000, 0x1D001)])
    >>> finder.search("naïve café"), finder.search("a\u07fdb"), finder.search("中\U0001d001"), finder.search("中😀")
    (False, True, True, False)
    """

    __slots__ = ("ranges", "_latin1_clear", "_first", "_quick", "_exact")

    def __init__(self, ranges: list[tuple[int, int]]):
        self.ranges = ranges
        self._latin1_clear = ranges[0][0] > 0xFF
        self._first = chr(ranges[0][0])
        self._quick: re.Pattern | None = None
        self._exact: re.Pattern | None = None

    def search(self, text: str) -> bool:
        start = 0
        if self._latin1_clear:
            try:
                text.encode("latin-1")  # (a copy, for a text of one byte per code point)
                return False
            except UnicodeEncodeError as error:
                start = error.start  # the first code point past Latin-1
        if self._quick is None:
            # a short text below the first range (accents after NFD, Greek, Cyrillic...): no
            # regex yet (`max` makes a string per character: once compiled, the regex is faster)
            if len(text) <= _SHORT_TEXT and max(text, default="") < self._first:
                return False
            self._compile()
        found = self._quick.search(text, start)
        return found is not None and self._exact.search(text, found.start()) is not None

    def _compile(self) -> None:
        import re  # (here, once: a load that normalizes no text imports no `re`; the module runs alone too)

        def body(spans) -> str:
            return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in spans)

        # a class of BMP code points alone compiles to a bitmap (one look per character); one
        # with others is a list of ranges, tried one by one
        plane = [(a, min(b, _LAST_BMP)) for a, b in self.ranges if a <= _LAST_BMP]
        self._exact = re.compile(f"[{body(self.ranges)}]")
        self._quick = re.compile(f"[{body(plane)}\\U{_LAST_BMP + 1:08x}-\\U0010ffff]")


_SHORT_TEXT = 2048  # code points: what `_Differ` scans by `max` before it compiles its regexes


@functools.lru_cache(maxsize=None)
def _differ(lower: bool) -> _Differ | None:
    """Where this Python's ``unicodedata`` (normalization; ``lower``: ``str.lower``) is not
    ``tokenizers``' (module docstring); None: nowhere."""
    from . import unicode_tables as t

    version = unicodedata.unidata_version
    if version in t.DIFFER_NORMALIZE:
        ranges = (t.DIFFER_LOWER if lower else t.DIFFER_NORMALIZE)[version]
    else:
        ranges = _computed(t)[lower]
    return _Differ(sorted(ranges)) if ranges else None


@functools.lru_cache(maxsize=None)
def _computed(tables) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    return differing(tables)  # (once for both kinds: about a second)


def normalize(form: str, text: str) -> str:
    """``text`` in Unicode normalization ``form`` (NFC, NFD, NFKC or NFKD) as ``tokenizers``'
    normalizer of that name writes it (module docstring).

    >>> normalize("NFD", "\\u00e9") == "e\\u0301", normalize("NFKD", "\\ufb01")
    (True, 'fi')
    """
    if text.isascii():
        return text
    differ = _differ(False)
    if differ is None or not differ.search(text):
        return unicodedata.normalize(form, text)
    return _normalize_tables(form, text)


def lowercase(text: str) -> str:
    """``text`` lowercased as ``tokenizers``' ``Lowercase`` does: code point by code point
    (a final capital sigma is ``σ``, not ``ς``), with Rust's lowercase table.

    >>> lowercase("ὈΔΥΣΣΕΎΣ")
    'ὀδυσσεύσ'
    """
    if text.isascii():
        return text.lower()
    differ = _differ(True)
    if differ is None or not differ.search(text):
        return text.replace(_SIGMA, _SMALL_SIGMA).lower()
    return text.translate(_tables().lower)


def _normalize_tables(form: str, text: str) -> str:
    """UAX #15 on the tables: decompose, order each run of marks by class (a stable sort),
    and for NFC/NFKC compose each mark with the last starter unless a mark between them has a
    class as high or is a starter."""
    nfd, nfkd, ccc, compose, _ = _tables()
    table = nfkd if form in ("NFKC", "NFKD") else nfd
    chars: list[str] = []
    for ch in text:
        cp = ord(ch)
        if _S_BASE <= cp < _S_BASE + _S_COUNT:
            chars += _hangul_parts(cp)
        else:
            chars += table.get(ch, ch)
    chars = _ordered(chars, ccc)
    if form in ("NFD", "NFKD"):
        return "".join(chars)
    return "".join(_composed(chars, ccc, compose))


def _hangul_parts(cp: int) -> list[str]:
    index = cp - _S_BASE
    parts = [chr(_L_BASE + index // _N_COUNT), chr(_V_BASE + index % _N_COUNT // _T_COUNT)]
    if index % _T_COUNT:
        parts.append(chr(_T_BASE + index % _T_COUNT))
    return parts


def _ordered(chars: list[str], ccc: dict[str, int]) -> list[str]:
    out: list[str] = []
    run: list[str] = []
    for ch in chars:
        if ccc.get(ch, 0):
            run.append(ch)
            continue
        if run:
            out += sorted(run, key=ccc.__getitem__) if len(run) > 1 else run
            run = []
        out.append(ch)
    if run:
        out += sorted(run, key=ccc.__getitem__) if len(run) > 1 else run
    return out


def _composed(chars: list[str], ccc: dict[str, int], compose: dict[tuple[str, str], str]) -> list[str]:
    out: list[str] = []
    starter = -1  # index in out of the last starter, -1 before the first
    for ch in chars:
        value = ccc.get(ch, 0)
        if starter >= 0 and (starter == len(out) - 1 or 0 < ccc.get(out[-1], 0) < value):
            joined = _hangul_joined(out[starter], ch) or compose.get((out[starter], ch))
            if joined is not None:
                out[starter] = joined
                continue
        if value == 0:
            starter = len(out)
        out.append(ch)
    return out


def _hangul_joined(first: str, second: str) -> str | None:
    a, b = ord(first), ord(second)
    if _L_BASE <= a < _L_BASE + _L_COUNT and _V_BASE <= b < _V_BASE + _V_COUNT:
        return chr(_S_BASE + ((a - _L_BASE) * _V_COUNT + b - _V_BASE) * _T_COUNT)
    if (_S_BASE <= a < _S_BASE + _S_COUNT and not (a - _S_BASE) % _T_COUNT
            and _T_BASE < b < _T_BASE + _T_COUNT):
        return chr(a + b - _T_BASE)
    return None


def differing(tables) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``(normalization ranges, lowercase ranges)``: the code points where this Python's
    ``unicodedata`` / ``str.lower`` are not ``tables``' (a module like
    :mod:`ubpe.text.unicode_tables`): another decomposition, combining class, or composition
    it takes part in, or a code point that decomposes to such a one; another lowercase.
    ``tests/golden/make_unicode_tables.py`` stores them per Python version."""
    data = parsed(tables)
    ccc = {ord(c): value for c, value in data.ccc.items()}
    nfd = {ord(c): out for c, out in data.nfd.items()}
    nfkd = {ord(c): out for c, out in data.nfkd.items()}
    peer_pairs = {(ord(a), ord(b)): ord(c) for (a, b), c in data.compose.items()}
    marked: set[int] = set()
    lower: list[int] = []
    pairs: dict[tuple[int, int], int] = {}
    decomposing: list[tuple[int, str]] = []
    for cp in range(0x110000):
        if _SURROGATES[0] <= cp <= _SURROGATES[1] or _S_BASE <= cp < _S_BASE + _S_COUNT:
            continue
        ch = chr(cp)
        if ch.lower() != data.lower.get(cp, ch) and cp != ord(_SIGMA):
            lower.append(cp)
        canonical = unicodedata.normalize("NFD", ch)
        compat = unicodedata.normalize("NFKD", ch)
        peer_canonical = nfd.get(cp, ch)
        peer_compat = nfkd.get(cp, peer_canonical)
        if canonical != peer_canonical or compat != peer_compat:
            marked.add(cp)
        if canonical == ch and cp not in nfd and unicodedata.combining(ch) != ccc.get(cp, 0):
            marked.add(cp)
        if canonical != ch or compat != ch or peer_compat != ch:
            decomposing.append((cp, canonical + compat + peer_canonical + peer_compat))
        parts = unicodedata.decomposition(ch).split()
        if len(parts) == 2 and not parts[0].startswith("<") and unicodedata.normalize("NFC", ch) == ch:
            pairs[(int(parts[0], 16), int(parts[1], 16))] = cp
    for pair in pairs.keys() ^ peer_pairs.keys():
        marked.update((*pair, pairs.get(pair, peer_pairs.get(pair))))
    for pair in pairs.keys() & peer_pairs.keys():
        if pairs[pair] != peer_pairs[pair]:
            marked.update((*pair, pairs[pair], peer_pairs[pair]))
    closed = set(marked)
    for cp, parts in decomposing:
        if any(ord(p) in marked for p in parts):
            closed.add(cp)
    return _ranges(sorted(closed)), _ranges(lower)


def _ranges(points: list[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for cp in points:
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [(a, b) for a, b in out]
