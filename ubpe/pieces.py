"""What ids stand for: the decode table of ``UBPE``/``UBPEClassic`` and any tokenizer's inventory.

Ids ``0..A-1`` are the alphabet's symbols, then the known words, then the merged tokens
(their runs of base ids, spelled in symbols). For text alphabets every entry is a str, so a
document decodes by joining strings; for other symbols every entry is a list of symbols.

>>> from ubpe.alphabet import Alphabet
>>> from ubpe.vocabulary import Vocabulary
>>> vocabulary = Vocabulary.from_pieces(2, [[0, 1], [0, 1, 1]], [1.0, 0.5])
>>> table = PieceTable(Alphabet.from_spec("ab"), None, vocabulary)
>>> table.entries
['a', 'b', 'ab', 'abb']
>>> table.decode([3, 0]), table.id_of("ab")
('abba', 2)
>>> PieceTable(Alphabet.from_spec([7, 8]), None, vocabulary).decode([2, 1])
[7, 8, 8]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ubpe_native._numpy import np, numpy_types  # noqa: F401  (np: the examples use it)

from .alphabet import Alphabet
from .errors import SymbolTypeError, UnknownTokenError

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
    from .vocabulary import Vocabulary


class PieceTable:
    """For every id, what it decodes to; and the inverse, piece -> lowest id."""

    def __init__(self, alphabet: Alphabet, known_words: Mapping[Any, int] | None, vocabulary: Vocabulary):
        symbols = alphabet.symbols
        self.text = alphabet.symbol_type is str
        entries: list[Any] = list(symbols) if self.text else [[s] for s in symbols]
        for word, _ in sorted(known_words.items(), key=lambda item: item[1]) if known_words else []:
            entries.append(word if self.text and isinstance(word, str) else list(word))
        bounds = vocabulary._piece_offsets.tolist()  # (the buffers: no numpy for a decode)
        flat = vocabulary._piece_symbols.tolist()
        for t in range(vocabulary.n_merged):
            piece = [symbols[i] for i in flat[bounds[t] : bounds[t + 1]]]
            entries.append("".join(piece) if self.text else piece)
        self.entries = entries
        self._ids: dict[Any, int] | None = None

    def id_of(self, piece: Any) -> int:
        """The lowest id whose piece is ``piece`` (a str, or a sequence of symbols).

        Raises :class:`UnknownTokenError` if no id stands for it."""
        if self._ids is None:
            index: dict[Any, int] = {}
            for token, value in enumerate(self.entries):
                index.setdefault(value if isinstance(value, str) else tuple(value), token)
            self._ids = index
        key = piece if isinstance(piece, str) else tuple(piece)
        try:
            return self._ids[key]
        except (KeyError, TypeError):
            raise UnknownTokenError(f"no token stands for {piece!r}") from None

    def inventory(self, vocabulary: Vocabulary) -> Inventory:
        """Every id with its piece, idf weight and recorded merge; base ids count as one
        symbol (a known word too)."""
        ids = list(range(len(self.entries)))
        base = set(range(vocabulary.n_base))
        pieces = {t: list(p) if not self.text else p for t, p in enumerate(self.entries)}
        lengths = {t: 1 if t in base else len(pieces[t]) for t in ids}
        return Inventory(ids, pieces, vocabulary.recorded_merges(), base, lengths, vocabulary.weight_of())

    def decode(self, tokens: Iterable[int]) -> Any:
        """The document ``tokens`` stand for: a str for text alphabets, else a list."""
        entries = self.entries
        size = len(entries)
        pieces = []
        for token in checked_ids(tokens):
            if not 0 <= token < size:
                raise UnknownTokenError(f"token {token} is not in the vocabulary (ids 0..{size - 1})")
            pieces.append(entries[token])
        if self.text:
            return "".join(pieces)
        return [s for piece in pieces for s in piece]


def checked_ids(ids: Any) -> list[int]:
    """``ids`` as a list of Python ints: a sequence (or 1-D array) of ints, never bools,
    floats, strings or ``None`` (:class:`SymbolTypeError` naming what was given instead).
    Whether each id exists is the caller's check.

    >>> checked_ids(np.array([3, 1])), checked_ids((2,))
    ([3, 1], [2])
    >>> checked_ids([True])
    Traceback (most recent call last):
    ...
    ubpe.errors.SymbolTypeError: token ids must be ints, got True
    """
    if isinstance(ids, numpy_types("ndarray")):
        if ids.ndim != 1:
            raise SymbolTypeError(f"token ids must be a 1-D sequence, got an array of shape {ids.shape}")
        if ids.dtype.kind == "u":
            ids = ids.astype(object)  # no wrap-around of uint64 values above int64
        ids = ids.tolist()
    elif isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise SymbolTypeError(f"token ids must be a sequence of ints, got {type(ids).__name__}")
    out = []
    for token in ids:
        if isinstance(token, (bool, *numpy_types("bool_"))) or not isinstance(token, (int, *numpy_types("integer"))):
            raise SymbolTypeError(f"token ids must be ints, got {token!r}")
        out.append(int(token))
    return out


class Inventory:
    """Every id of a tokenizer with its piece, length, weight and (where recorded) the pair
    it merges, in the ids ``encode`` returns: what ``ubpe inspect`` lists and draws.

    >>> from ubpe import UBPEClassic
    >>> tok = UBPEClassic(alphabet="ab", n_tokens=4)
    >>> tok.fit(["abab", "ab"], rearrange_tokens=False, quiet=True)
    >>> inv = tok.inventory()
    >>> inv.ids, inv.pieces[3], inv.merges, inv.lengths[3], sorted(inv.base)
    ([0, 1, 2, 3], 'abab', {2: (0, 1), 3: (2, 2)}, 4, [0, 1])
    """

    _FIELDS = ("ids", "pieces", "merges", "base", "lengths", "weights")

    # (a plain class, not a dataclass: `dataclasses` imports `inspect`, 4 ms of every load)
    def __init__(self, ids: list[int], pieces: dict[int, Any], merges: dict[int, tuple[int, int]], base: set[int],
                 lengths: dict[int, int], weights: dict[int, float] | None = None):
        self.ids, self.pieces, self.merges, self.base, self.lengths = ids, pieces, merges, base, lengths
        self.weights = {} if weights is None else weights

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # (mutable, as the dataclass was)

    def __repr__(self) -> str:
        return f"Inventory({', '.join(f'{name}={getattr(self, name)!r}' for name in self._FIELDS)})"


class PieceLookups:
    """Default ``inventory``, ``piece_to_id`` and ``covers`` of the tokenizer contract, for
    families that know only ``n_vocab`` and ``pieces(ids)`` (e.g. models read from other
    systems' files): every id is listed, no merge is recorded (``ubpe inspect --tree`` derives
    splits from the pieces), one-symbol pieces are base ids, and every document is covered.

    >>> class Letters(PieceLookups):
    ...     n_vocab = 3
    ...     def pieces(self, ids):
    ...         return [["a", "b", "ab"][i] for i in ids]
    >>> Letters().inventory().base, Letters().piece_to_id("ab"), Letters().covers("zz")
    ({0, 1}, 2, True)
    """

    n_vocab: int

    def pieces(self, ids: list[int]) -> list[Any]:
        raise NotImplementedError

    def inventory(self) -> Inventory:
        ids = list(range(self.n_vocab))
        pieces = dict(zip(ids, self.pieces(ids)))
        lengths = {t: len(p) for t, p in pieces.items()}
        return Inventory(ids, pieces, {}, {t for t, n in lengths.items() if n == 1}, lengths)

    def piece_to_id(self, piece: Any) -> int:
        """The lowest id whose piece is ``piece`` (a str also matches its UTF-8 bytes)."""
        wanted = {piece if isinstance(piece, (str, bytes)) else tuple(piece)}
        if isinstance(piece, str):
            wanted.add(piece.encode("utf-8"))
        for token, value in self.inventory().pieces.items():
            if (value if isinstance(value, (str, bytes)) else tuple(value)) in wanted:
                return token
        raise UnknownTokenError(f"no token stands for {piece!r}")

    def covers(self, doc: Any) -> bool:
        return True
