"""Splitting documents into parts before fitting and encoding.

A document is cut, in this order (as in ubpe 0.3.0), by

1. **known words**: the longest known word starting at each position, scanning left to right,
   becomes a part of its own, represented by the known word's single id;
2. **break tokens**: every break symbol becomes a one-symbol part;
3. **a regex** (str documents only): each regex match is a part;
4. **stop tokens**: like break tokens, but applied after the regex.

Pairs never cross part boundaries. While fitting, separators (known words, break and stop
symbols) are dropped; while encoding they stay as one-symbol parts. Unlike the reference,
characters that the regex does not match are kept (each as a one-symbol separator part), so
no data is ever lost and ``decode(encode(x)) == x`` holds for every regex.

The module is over 500 lines because it is the one home of the split stage: the four steps
above, each on numpy arrays, plus the native paths that do the same split in a kernel call
(``text_splitter`` for encoding, ``native_fit_tables`` for fitting, ``_split_text_natively``).
What would split it: those native paths into a module of their own beside this one.

>>> from ubpe.alphabet import Alphabet
>>> pipeline = SplitPipeline(Alphabet.from_spec("ab ."), break_tokens=" ")
>>> batch = pipeline.split_batch(["ab a.b"], mode=SplitMode.FULL)
>>> [batch.tokens[s:e].tolist() for s, e in batch.part_bounds(0)]
[[0, 1], [2], [0, 3, 1]]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import Flag, auto
from array import array
from itertools import accumulate
import warnings

from ubpe_native._numpy import np, numpy_types

from ._lazy import regex  # (the `regex` module, imported when a pattern is compiled: ~20 ms of a cold load)
from .alphabet import ID_DTYPE, Alphabet, normalize_symbol, short_repr
from .known_words import KnownWords, normalize_known_words
from .errors import IgnoredInputWarning, InvalidParameterError, SymbolTypeError, UnknownSymbolError

TYPE_CHECKING = False  # (typing's, without importing typing: see ubpe.files)
if TYPE_CHECKING:
    from typing import Any


#: GPT-2's split *shape* (contractions, letter runs, digit runs, other symbols, each led by
#: an optional blank; whitespace) in classes Python's `re` also reads, so ubpe 0.3.0 can run it
#: too: the experiments' and benchmarks' pattern (``experiments.patterns.WORDS``).
WORDS = r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+"""
#: The id of WORDS in the kernel's scanner (``_pretokenize.pxd``); the byte-level presets
#: (``ubpe.text.patterns.PATTERNS``) have theirs, any other ``regex_str`` whose pieces tile the
#: text is compiled for the kernel's regex VM; all agree with ``regex.findall``.
_WORDS_PATTERN_ID = 5


def native_pattern(regex_str: str | None) -> int | None:
    r"""The scanner's id for ``regex_str`` if the kernel splits it natively, else None (the
    `regex` module splits it: a pattern that can leave text unmatched, or one the kernel's
    compiler does not take, see ``ubpe.text.regex_program``).

    >>> native_pattern(WORDS), native_pattern(r"\S+|\s") >= 64, native_pattern(r"\w+")
    (5, True, None)
    """
    if not regex_str:
        return None
    if regex_str == WORDS:
        return _WORDS_PATTERN_ID
    from .text.patterns import native_pattern_id  # when first needed: the tables cost ~0.1 s

    return native_pattern_id(regex_str)


def split_classes(symbols: Iterable[Any] | None = None) -> Any:
    """The scanner's code point class table: for every code point (built once with the
    `regex` module, ~0.1-0.5 s), or only for the one-character str ``symbols`` (fast)."""
    from .text.patterns import classes_of, code_point_classes  # when first needed: the tables cost ~0.1 s

    if symbols is None:
        return code_point_classes()
    chars = [s for s in symbols if isinstance(s, str) and len(s) == 1 and not 0xD800 <= ord(s) < 0xE000]
    return classes_of(array("I", [ord(c) for c in chars]))


class SplitMode(Flag):
    """Which splitting steps apply (the same values as ubpe 0.3.0's ``SplitMode``).

    >>> SplitMode.REGEX in SplitMode.FULL, SplitMode.REGEX in SplitMode.KNOWN_WORDS
    (True, False)
    """

    NONE = auto()
    KNOWN_WORDS = auto()
    BREAK_TOKENS = auto()
    REGEX = auto()
    STOP_TOKENS = auto()
    FULL = KNOWN_WORDS | BREAK_TOKENS | REGEX | STOP_TOKENS


class SplitBatch:
    """Documents split into parts, all in flat arrays (immutable).

    ``tokens`` holds every document's ids back to back, with each known word collapsed to its
    single id. Part ``k`` is ``tokens[part_offsets[k]:part_offsets[k + 1]]``;
    ``part_is_separator[k]`` says whether it is a separator (a known word, a break or stop
    symbol, a character no regex match covered). The parts of document ``d`` are
    ``doc_part_offsets[d]:doc_part_offsets[d + 1]``.
    """

    # (a plain class, not a frozen dataclass: `dataclasses` imports `inspect`, ~5 ms of a
    # fitted model's cold load)
    tokens: np.ndarray
    part_offsets: np.ndarray
    part_is_separator: np.ndarray
    doc_part_offsets: np.ndarray

    def __init__(self, tokens: Any, part_offsets: Any, part_is_separator: Any, doc_part_offsets: Any):
        state = self.__dict__
        state["tokens"], state["part_offsets"] = tokens, part_offsets
        state["part_is_separator"], state["doc_part_offsets"] = part_is_separator, doc_part_offsets

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a SplitBatch is immutable: {name} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a SplitBatch is immutable: {name} cannot be deleted")

    def __repr__(self) -> str:
        return f"SplitBatch(n_docs={self.n_docs}, parts={len(self.part_offsets) - 1}, tokens={len(self.tokens)})"

    @property
    def n_docs(self) -> int:
        return len(self.doc_part_offsets) - 1

    def part_bounds(self, doc: int) -> list[tuple[int, int]]:
        first, last = self.doc_part_offsets[doc], self.doc_part_offsets[doc + 1]
        bounds = self.part_offsets[first : last + 1].tolist()
        return list(zip(bounds[:-1], bounds[1:]))

    def parts(self, doc: int) -> list[np.ndarray]:
        return [self.tokens[s:e] for s, e in self.part_bounds(doc)]

    def fit_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The parts that fitting sees: separators dropped, one-symbol parts too (no pairs).

        Returns ``(tokens, offsets, doc_of_part)`` with part ``k`` at
        ``tokens[offsets[k]:offsets[k+1]]``.
        """
        lengths = np.diff(self.part_offsets)
        keep = (~self.part_is_separator) & (lengths >= 2)
        kept_lengths = lengths[keep]
        offsets = np.zeros(len(kept_lengths) + 1, dtype=np.int64)
        np.cumsum(kept_lengths, out=offsets[1:])
        doc_of_part = np.repeat(
            np.arange(self.n_docs, dtype=np.int32), np.diff(self.doc_part_offsets)
        )[keep]
        # parts cover the tokens back to back, so a per-token mask selects the kept ones
        return self.tokens[np.repeat(keep, lengths)], offsets, doc_of_part


def _symbol_set(tokens: Any, alphabet: Alphabet, what: str = "break/stop tokens") -> frozenset | None:
    """Break / stop tokens: as in the reference, symbols outside the alphabet are ignored (with an
    :class:`~ubpe.errors.IgnoredInputWarning`)."""
    if tokens is None:
        return None
    if not isinstance(tokens, (list, tuple, set, frozenset, str)):
        raise SymbolTypeError(
            f"`{what}` must be a list, set, tuple or str, not {type(tokens).__name__}"
        )
    kept = frozenset(normalize_symbol(t) for t in tokens if t in alphabet)
    ignored = [t for t in tokens if t not in alphabet]
    if ignored:
        warnings.warn(
            f"{len(ignored)} {what} are not in the alphabet and are ignored: {ignored[:3]!r}",
            IgnoredInputWarning,
            stacklevel=4,
        )
    return kept or None


class SplitPipeline:
    r"""Cuts documents into parts (see the module docstring for the order of the steps).

    Over 300 lines because each step marks cuts on one shared set of arrays (``cut``,
    ``separator``, ``inside_known``) that the next step reads, so the steps are methods of
    one object rather than functions passing five arrays around; the native paths (the
    scanner for the regex step, ``text_splitter`` for encoding, ``native_fit_tables`` for the
    fit) must give exactly the arrays those methods give, and are kept beside them.

    >>> pipeline = SplitPipeline(Alphabet.from_spec("ab c"), regex_str=r"\w+")
    >>> [p.tolist() for p in pipeline.split("ab c").parts(0)]
    [[0, 1], [2], [3]]
    """

    def __init__(
        self,
        alphabet: Alphabet,
        *,
        known_words: Mapping[Any, int] | None = None,
        break_tokens: Iterable[Any] | None = None,
        regex_str: str | None = None,
        stop_tokens: Iterable[Any] | None = None,
    ):
        self.alphabet = alphabet
        self.known_words = dict(known_words) if known_words else None
        self.break_tokens = _symbol_set(break_tokens, alphabet, "break_tokens")
        self.stop_tokens = _symbol_set(stop_tokens, alphabet, "stop_tokens")
        if regex_str is not None and not isinstance(regex_str, str):
            raise SymbolTypeError(f"`regex_str` must be a str, not {type(regex_str).__name__}")
        self.regex_str = regex_str or None
        try:
            self._regex = regex.compile(self.regex_str) if self.regex_str else None
        except regex.error as exc:
            raise InvalidParameterError(f"`regex_str` is not a valid regex: {exc}") from None
        if self._regex is not None and alphabet.symbol_type is not str:
            warnings.warn(
                f"`regex_str` splits text, but the alphabet's symbols are {alphabet.symbol_type.__name__}: "
                "it is ignored (as by the reference)",
                IgnoredInputWarning,
                stacklevel=3,
            )
        self._native = native_pattern(self.regex_str)
        self._classes: memoryview | None = None  # the scanner's table for the alphabet, built when first used
        self._known = KnownWords(self.known_words) if self.known_words else None
        self._break_ids = self._ids_array(self.break_tokens)
        self._stop_ids = self._ids_array(self.stop_tokens)

    def _ids_array(self, symbols: frozenset | None) -> list[int] | None:
        """The sorted alphabet ids of ``symbols`` (a list: a load needs no numpy for it)."""
        if symbols is None:
            return None
        return sorted(self.alphabet.id_of(s) for s in symbols)

    # -- splitting ---------------------------------------------------------------------------

    def split(self, doc: Any, *, mode: SplitMode = SplitMode.FULL) -> SplitBatch:
        """Split one document (errors call it "the document")."""
        return self._split([doc], mode, single=True)

    def split_batch(
        self, docs: Sequence[Any], *, mode: SplitMode = SplitMode.FULL, first_doc: int = 0
    ) -> SplitBatch:
        """Split every document of ``docs`` (errors name the document by its index, counted
        from ``first_doc``: ``docs`` may be one chunk of a larger corpus)."""
        return self._split(docs, mode, single=False, first_doc=first_doc)

    def _split(self, docs: Sequence[Any], mode: SplitMode, single: bool, first_doc: int = 0) -> SplitBatch:
        if not isinstance(mode, SplitMode):
            raise SymbolTypeError(f"`split_mode` must be a SplitMode, not {type(mode).__name__}")
        fast = self._split_text_natively(docs, mode, single, first_doc)
        if fast is None and single:
            fast = self._split_whole(docs[0], mode)
        if fast is not None:
            return fast
        raw_ids, doc_starts, text, is_text = self._base_ids(docs, single, first_doc)
        n = len(raw_ids)
        cut = np.zeros(n + 1, dtype=bool)  # cut[p]: a part boundary lies just before position p
        cut[doc_starts] = True
        separator = np.zeros(n, dtype=bool)
        inside_known = np.zeros(n, dtype=bool)  # a known word's positions after its first

        # A known word's first position takes the word's id (and is a separator, which every
        # later step leaves alone); its other positions are dropped when collapsing.
        if SplitMode.KNOWN_WORDS in mode and self._known is not None:
            self._mark_known_words(docs, doc_starts, cut, separator, raw_ids, inside_known)
        self._raise_on_unknown(docs, raw_ids, doc_starts, inside_known, single, first_doc)
        in_known = inside_known

        if SplitMode.BREAK_TOKENS in mode and self._break_ids is not None:
            self._mark_symbols(raw_ids, self._break_ids, in_known, cut, separator)
        if SplitMode.REGEX in mode and self._regex is not None and is_text.any():
            self._mark_regex(docs, text, doc_starts, is_text, in_known, cut, separator)
        if SplitMode.STOP_TOKENS in mode and self._stop_ids is not None:
            self._mark_symbols(raw_ids, self._stop_ids, in_known, cut, separator)

        # Collapse every known word to its single id.
        keep = ~inside_known
        tokens = raw_ids[keep].astype(ID_DTYPE, copy=False)
        kept_cut = cut[:-1][keep]
        kept_separator = separator[keep]
        part_starts = np.flatnonzero(kept_cut)
        part_offsets = np.append(part_starts, len(tokens)).astype(np.int64)
        if inside_known.any():  # document starts move back by the positions collapsed before them
            removed = np.concatenate(([0], np.cumsum(inside_known, dtype=np.int64)))
            collapsed_doc_starts = doc_starts - removed[doc_starts]
        else:
            collapsed_doc_starts = doc_starts
        doc_part_offsets = np.searchsorted(part_starts, collapsed_doc_starts, side="left")
        return SplitBatch(
            tokens=tokens,
            part_offsets=part_offsets,
            part_is_separator=kept_separator[part_starts] if len(part_starts) else np.zeros(0, bool),
            doc_part_offsets=doc_part_offsets.astype(np.int64),
        )

    def _base_ids(self, docs: Sequence[Any], single: bool, first_doc: int = 0):
        """Alphabet ids of all documents back to back (-1 for symbols outside the alphabet)."""
        if isinstance(docs, (str, bytes)) or not isinstance(docs, (Sequence, *numpy_types("ndarray"))):
            raise SymbolTypeError(f"expected a list of documents, got {type(docs).__name__}")
        lengths = np.zeros(len(docs) + 1, dtype=np.int64)
        is_text = np.zeros(len(docs), dtype=bool)
        for d, doc in enumerate(docs):
            is_text[d] = isinstance(doc, str)
            try:
                lengths[d + 1] = len(doc)
            except TypeError:
                what = "the document" if single else f"document {first_doc + d}"
                raise SymbolTypeError(
                    f"{what} must be a str, list, tuple or 1-D array, not {type(doc).__name__}"
                ) from None
        doc_starts = np.cumsum(lengths)
        text = None
        if len(docs) and is_text.all() and self.alphabet.symbol_type is str:
            text = "".join(docs)  # (texts for another alphabet: the error names the first one below)
            ids = self.alphabet.ids_of(text, where="the corpus", allow_unknown=True)
        elif (flat := self._flat_integers(docs)) is not None:
            ids = self.alphabet.ids_of(flat, allow_unknown=True)
        else:
            chunks = [
                self.alphabet.ids_of(
                    doc, where="the document" if single else f"document {first_doc + d}", allow_unknown=True
                )
                for d, doc in enumerate(docs)
            ]
            ids = np.concatenate(chunks) if chunks else np.zeros(0, dtype=ID_DTYPE)
        return ids, doc_starts, text, is_text

    def _flat_integers(self, docs: Sequence[Any]) -> np.ndarray | None:
        """All documents as one int64 array when they are all integer sequences (one lookup
        for the corpus instead of one per document), else None."""
        if self.alphabet.symbol_type is not int or len(docs) < 2:
            return None
        try:
            arrays = [doc if isinstance(doc, np.ndarray) else np.asarray(doc) for doc in docs]
        except (ValueError, TypeError, OverflowError):
            return None
        if not all(a.ndim == 1 and (a.dtype.kind in "iu" or a.size == 0) for a in arrays):
            return None
        return np.concatenate([a.astype(np.int64, copy=False) for a in arrays])

    def _mark_known_words(self, docs, doc_starts, cut, separator, raw_ids, inside_known) -> None:
        for d, doc in enumerate(docs):
            offset = doc_starts[d]
            for start, end, token in self._known.find(doc):
                raw_ids[offset + start] = token
                inside_known[offset + start + 1 : offset + end] = True
                separator[offset + start] = True
                cut[offset + start] = True
                cut[offset + end] = True

    def _raise_on_unknown(self, docs, raw_ids, doc_starts, inside_known, single, first_doc=0) -> None:
        unknown = np.flatnonzero((raw_ids < 0) & ~inside_known)
        if len(unknown) == 0:
            return
        position = int(unknown[0])
        d = int(np.searchsorted(doc_starts, position, side="right")) - 1
        local = position - int(doc_starts[d])
        symbol = docs[d][local]
        where = "the document" if single else f"document {first_doc + d}"
        raise UnknownSymbolError(
            f"symbol {short_repr(symbol)} at position {local} of {where} is not in the alphabet"
        )

    @staticmethod
    def _mark_symbols(raw_ids, symbol_ids, in_known, cut, separator) -> None:
        hits = np.flatnonzero(np.isin(raw_ids, symbol_ids) & ~in_known & ~separator)
        separator[hits] = True
        cut[hits] = True
        cut[hits + 1] = True

    def _mark_regex(self, docs, text, doc_starts, is_text, in_known, cut, separator) -> None:
        """Regex matches become parts; characters outside every match become separators.

        As in the reference, the regex runs separately on each piece left between known
        words, break symbols and document ends.
        """
        n = len(separator)
        blocked = in_known | separator
        if not is_text.all():
            blocked = blocked.copy()
            for d in np.flatnonzero(~is_text):
                blocked[doc_starts[d] : doc_starts[d + 1]] = True
        open_ = ~blocked
        # Pieces: maximal runs of open positions with no cut inside.
        starts_mask = open_ & (cut[:-1] | np.concatenate(([True], ~open_[:-1])))
        piece_starts = np.flatnonzero(starts_mask)
        ends_mask = open_ & (cut[1:] | np.concatenate((~open_[1:], [True])))
        piece_ends = np.flatnonzero(ends_mask) + 1
        if self._native is not None and text is not None and self._mark_native(text, piece_starts, piece_ends, cut, separator):
            return
        # Boundaries are collected in compact int64 arrays: there is one per word of text.
        tiling_bounds = array("q")  # every match boundary, in pieces the matches tile
        match_bounds = array("q")  # start, end of each match, in pieces the regex leaves gaps in
        gapped_pieces = array("q")  # start, end of those pieces
        if text is None:  # some documents are not str: slice each piece from its own document
            piece_docs = np.searchsorted(doc_starts, piece_starts, side="right") - 1
            pieces = (
                docs[d][s - doc_starts[d] : e - doc_starts[d]]
                for d, s, e in zip(piece_docs.tolist(), piece_starts.tolist(), piece_ends.tolist())
            )
        else:
            pieces = (text[s:e] for s, e in zip(piece_starts.tolist(), piece_ends.tolist()))
        # Fast path: matches that tile the whole piece (the usual pre-tokenisation regex) are
        # located from their lengths alone; only pieces with gaps need match objects.
        findall = self._regex.findall if self._regex.groups == 0 else None
        finditer = self._regex.finditer
        for start, piece in zip(piece_starts.tolist(), pieces):
            if findall is not None:
                lengths = list(map(len, findall(piece)))
                if sum(lengths) == len(piece):
                    tiling_bounds.extend(accumulate(lengths, initial=start))
                    continue
            gapped_pieces.append(start)
            gapped_pieces.append(start + len(piece))
            for m in finditer(piece):
                s, e = m.span()
                if s != e:
                    match_bounds.append(start + s)
                    match_bounds.append(start + e)
        if tiling_bounds:
            cut[np.frombuffer(tiling_bounds, dtype=np.int64)] = True
        if not gapped_pieces:
            return
        in_gapped = _coverage(np.frombuffer(gapped_pieces, dtype=np.int64), n)
        bounds = np.frombuffer(match_bounds, dtype=np.int64)
        cut[bounds] = True
        gaps = np.flatnonzero(in_gapped & ~_coverage(bounds, n))
        separator[gaps] = True
        cut[gaps] = True
        cut[gaps + 1] = True

    def _mark_native(self, text: str, piece_starts, piece_ends, cut, separator) -> bool:
        """The regex step by the kernel's scanner (without the GIL), for a ``regex_str`` it
        knows; False (nothing marked) if ``text`` cannot be UTF-8 (lone surrogates)."""
        found = self._native_bounds(text, piece_starts, piece_ends)
        if found is None:
            return False
        bounds, gaps = found
        cut[bounds] = True
        separator[gaps] = True
        cut[gaps + 1] = True
        return True

    def _native_bounds(self, text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The scanner's ``(bounds, gaps)`` (see ``split_ranges``) of the character ranges
        ``text[starts[k]:ends[k]]``, in characters; None if ``text`` has lone surrogates."""
        from ubpe_native._pretokenize import split_ranges

        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        raw = np.frombuffer(data, dtype=np.uint8)
        classes = self._scanner_classes()  # the text holds alphabet symbols only (unknown ones raised before)
        if len(data) == len(text):  # ASCII: byte offsets are character offsets
            return split_ranges(raw, starts, ends, classes, self._native)
        lead = (raw & 0xC0) != 0x80
        byte_of_char = np.append(np.flatnonzero(lead), len(data))
        char_of_byte = np.append(np.cumsum(lead, dtype=np.int64) - 1, len(text))
        bounds, gaps = split_ranges(raw, byte_of_char[starts], byte_of_char[ends], classes, self._native)
        return char_of_byte[bounds], char_of_byte[gaps]

    def _split_whole(self, doc: Any, mode: SplitMode) -> SplitBatch | None:
        """One sequence that no step cuts (not text, so no regex; no known words, break or
        stop symbols in ``mode``) as its one part, in an alphabet lookup and no more: what
        ``_split`` gives for it, at a per-document cost that does not dwarf the lattice's
        (DNA as ids, quantized signals, music). None where that does not hold, or for an
        unknown symbol (the general path names it)."""
        if (isinstance(doc, str) or (SplitMode.KNOWN_WORDS in mode and self._known is not None)
                or (SplitMode.BREAK_TOKENS in mode and self._break_ids is not None)
                or (SplitMode.STOP_TOKENS in mode and self._stop_ids is not None)):
            return None
        try:
            ids = self.alphabet.ids_of(doc, allow_unknown=True)
        except (SymbolTypeError, TypeError):
            return None  # the general path raises its own error for it
        if len(ids) and ids.min() < 0:
            return None
        n_parts = 1 if len(ids) else 0
        return SplitBatch(tokens=ids.astype(ID_DTYPE, copy=False),
                          part_offsets=np.array([0, len(ids)][1 - n_parts :], dtype=np.int64),
                          part_is_separator=np.zeros(n_parts, dtype=bool),
                          doc_part_offsets=np.array([0, n_parts], dtype=np.int64))

    def _regex_alone(self, mode: SplitMode) -> bool:
        """Whether the native scanner's regex is the only step that applies in ``mode`` (no
        known words, break or stop symbols): then the native paths below split as ``_split``."""
        return (self._native is not None and SplitMode.REGEX in mode and self._known is None
                and self._break_ids is None and self._stop_ids is None)

    def _scanner_classes(self) -> np.ndarray:
        """The scanner's class table for this alphabet (built once)."""
        if self._classes is None:
            self._classes = split_classes(self.alphabet.symbols)
        return self._classes

    def native_fit_tables(self, mode: SplitMode) -> tuple[Any, int, array, int] | None:
        """``(classes, pattern, table, low)`` with which the kernel counts documents as a fit
        under ``mode`` sees them, when only the native regex step applies or no step does;
        else None. For str documents (``PartCounter.add_text``): the scanner's class table, its
        pattern id (``WHOLE_DOCUMENTS``: no split), code point -> id, 0; for int documents
        (``PartCounter.add_values``, which splits nothing): None, ``WHOLE_DOCUMENTS``, the
        ids of values from ``low`` on, ``low``.

        >>> SplitPipeline(Alphabet.from_spec("ab "), regex_str=WORDS).native_fit_tables(SplitMode.FULL)[1]
        5
        >>> SplitPipeline(Alphabet.from_spec("ab "), break_tokens=" ").native_fit_tables(SplitMode.FULL) is None
        True
        >>> SplitPipeline(Alphabet.from_spec([3, 4])).native_fit_tables(SplitMode.FULL)
        (None, -1, array('i', [0, 1, -1]), 3)
        """
        from ubpe_native._parts import WHOLE_DOCUMENTS

        if not isinstance(mode, SplitMode):
            return None  # (the split names the error)
        unsplit = self._known is None and self._break_ids is None and self._stop_ids is None
        if self.alphabet.symbol_type is int:  # (a regex splits text only)
            ints = self.alphabet.int_table
            return (None, WHOLE_DOCUMENTS, *ints) if ints is not None and unsplit else None
        table = self.alphabet.char_table
        if table is None:
            return None
        if self._regex_alone(mode):
            return self._scanner_classes(), self._native, table, 0
        if unsplit and self._regex is None:
            return array("H"), WHOLE_DOCUMENTS, table, 0
        return None

    def text_splitter(self, mode: SplitMode = SplitMode.FULL):
        """The native splitter of str documents (``_textsplit.TextSplitter``: ids, break
        symbols, scanner, stop symbols and offsets in one call without the GIL) when it splits
        them as this pipeline does in ``mode``: no known words apply, the regex (if it applies)
        is one the scanner knows, the alphabet has a code point table. Else None. Built once
        per set of steps that apply."""
        if type(mode) is not SplitMode:
            return None
        steps = self._native_steps(mode)
        if steps is None:
            return None
        splitters = self.__dict__.setdefault("_splitters", {})
        if steps not in splitters:
            splitters[steps] = self._make_text_splitter(*steps)
        return splitters[steps]

    def _native_steps(self, mode: SplitMode) -> tuple[bool, bool, bool] | None:
        """``(break, regex, stop)``: the steps that apply to str documents in ``mode``, or None
        if the native splitter cannot take them (known words, or a regex the scanner does not
        know)."""
        if SplitMode.KNOWN_WORDS in mode and self._known is not None:
            return None
        regex_step = SplitMode.REGEX in mode and self._regex is not None
        if regex_step and self._native is None:
            return None
        return (SplitMode.BREAK_TOKENS in mode and self._break_ids is not None, regex_step,
                SplitMode.STOP_TOKENS in mode and self._stop_ids is not None)

    def _make_text_splitter(self, breaks: bool, regex_step: bool, stops: bool):
        table = self.alphabet.char_table
        if table is None:
            return None
        from ubpe_native._textsplit import BREAK_SYMBOL, NO_PATTERN, STOP_SYMBOL, TextSplitter

        kinds = None
        if breaks or stops:
            kinds = array("B", bytes(len(self.alphabet)))
            for i in self._break_ids if breaks else ():
                kinds[i] |= BREAK_SYMBOL
            for i in self._stop_ids if stops else ():
                kinds[i] |= STOP_SYMBOL
        if regex_step:
            return TextSplitter(table, self._scanner_classes(), self._native, kinds)
        return TextSplitter(table, array("H"), NO_PATTERN, kinds)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (and deep-copied) without the native splitter and the scanner's class table,
        rebuilt on first use."""
        state = {k: v for k, v in self.__dict__.items() if k != "_splitters"}
        state["_classes"] = None
        return state

    def _split_text_natively(self, docs: Sequence[Any], mode: SplitMode, single: bool, first_doc: int) -> SplitBatch | None:
        """The whole split of str documents in a few array operations when the regex is the
        only step that applies and the scanner knows it (what ``_split`` would give); None
        where that does not hold."""
        if not isinstance(docs, (list, tuple)) or not all(type(doc) is str for doc in docs):
            return None
        splitter = self.text_splitter(mode)
        found = splitter.split(docs) if splitter is not None else None
        if found is not None:  # (None: an unknown symbol or a surrogate, which the code below handles)
            tokens, part_offsets, separator, doc_part_offsets = found
            return SplitBatch(tokens=tokens, part_offsets=part_offsets, part_is_separator=separator,
                              doc_part_offsets=doc_part_offsets)
        if not self._regex_alone(mode):
            return None  # (break or stop symbols: the general path)
        text = "".join(docs)
        if len(docs) == 1:
            doc_starts = np.array([0, len(text)], dtype=np.int64)
        else:
            doc_starts = np.fromiter(accumulate(map(len, docs), initial=0), dtype=np.int64, count=len(docs) + 1)
        ids = self.alphabet.ids_of(text, where="the corpus", allow_unknown=True)
        if len(ids) and ids.min() < 0:
            self._raise_on_unknown(docs, ids, doc_starts, np.zeros(len(ids), dtype=bool), single, first_doc)
        found = self._native_bounds(text, doc_starts[:-1], doc_starts[1:])
        if found is None:
            return None
        bounds, gaps = found
        part_offsets = np.empty(len(bounds) // 2 + 1, dtype=np.int64)
        part_offsets[:-1] = bounds[0::2]
        part_offsets[-1] = len(ids)
        part_starts = part_offsets[:-1]
        separator = np.zeros(len(part_starts), dtype=bool)
        if len(gaps):
            separator[part_starts.searchsorted(gaps)] = True
        return SplitBatch(
            tokens=ids.astype(ID_DTYPE, copy=False),
            part_offsets=part_offsets,
            part_is_separator=separator,
            doc_part_offsets=part_starts.searchsorted(doc_starts, side="left").astype(np.int64, copy=False),
        )


def _coverage(bounds: np.ndarray, n: int) -> np.ndarray:
    """Positions ``0..n-1`` inside any of the spans ``bounds[0::2] : bounds[1::2]``."""
    delta = np.zeros(n + 1, dtype=np.int32)
    np.add.at(delta, bounds[0::2], 1)
    np.add.at(delta, bounds[1::2], -1)
    return np.cumsum(delta[:-1]) > 0


def make_pipeline(
    alphabet: Alphabet,
    *,
    known_words: Any = None,
    break_tokens: Any = None,
    regex_str: str | None = None,
    stop_tokens: Any = None,
) -> SplitPipeline:
    """A :class:`SplitPipeline` with ``known_words`` normalized first (a list gets the ids
    after the alphabet, see :func:`normalize_known_words`): a tokenizer's whole configuration.

    >>> pipeline = make_pipeline(Alphabet.from_spec("ab "), known_words=["ab"], break_tokens=" ")
    >>> pipeline.known_words, sorted(pipeline.break_tokens)
    ({'ab': 3}, [' '])
    """
    return SplitPipeline(
        alphabet,
        known_words=normalize_known_words(known_words, alphabet),
        break_tokens=break_tokens,
        regex_str=regex_str,
        stop_tokens=stop_tokens,
    )
