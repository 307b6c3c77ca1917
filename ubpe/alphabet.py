"""The alphabet: a bijection between symbols of any hashable type and base ids ``0..A-1``.

>>> a = Alphabet.from_spec("cab")          # a string: one symbol per character, in order
>>> a.ids_of("abba").tolist()
[1, 2, 2, 1]
>>> Alphabet.from_spec({"b", "a"}).symbols  # a set is sorted, so ids never depend on hashing
('a', 'b')
>>> Alphabet.from_spec(4).symbols           # a size: the integers 0..3
(0, 1, 2, 3)
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence

from ubpe_native._numpy import ID_DTYPE, np, numpy_types

from .errors import InvalidParameterError, SymbolTypeError, UnknownSymbolError

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

# A dense lookup table (value -> id) is used for code points / integer symbols when its span
# is at most this many entries (4 bytes each); wider, sparse alphabets use a binary search.
MAX_DENSE_TABLE = 1 << 22
# Texts are mapped to ids this many characters at a time (bounds the temporary arrays).
TEXT_CHUNK = 1 << 20
# For an error message, how many characters of a symbol's repr to show.
REPR_LIMIT = 40
# The most symbols an alphabet may have: ids are int32, and every symbol is held in Python
# objects (a tuple and a dict), ~100 bytes each, so 2**24 symbols already take ~2 GB.
MAX_ALPHABET_SIZE = 1 << 24
# Integer symbols beyond this magnitude get no dense table (its offsets would overflow int64).
MAX_TABLE_MAGNITUDE = 1 << 62


def normalize_symbol(symbol: Any) -> Any:
    """Turn numpy scalars into the equivalent Python objects (``np.int64(3) -> 3``)."""
    if isinstance(symbol, numpy_types("generic")):
        return symbol.item()
    return symbol


def short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= REPR_LIMIT else text[: REPR_LIMIT - 3] + "..."


def _sorted_deterministically(symbols: Iterable[Any]) -> list[Any]:
    """Sort symbols by value, or by a canonical ``repr`` where values do not compare (never
    by hash). Sets compare as subsets - a partial order that ``sorted`` would follow in hash
    order - so symbols holding sets are always sorted by the canonical form.

    >>> [sorted(s) for s in _sorted_deterministically([{"c"}, {"b", "a"}, set()])]
    [['a', 'b'], ['c'], []]
    """
    items = list(symbols)
    if not any(_holds_set(s) for s in items):
        try:
            return sorted(items)
        except TypeError:
            pass
    return sorted(items, key=_canonical)


def _holds_set(value: Any) -> bool:
    if isinstance(value, (set, frozenset)):
        return True
    return isinstance(value, tuple) and any(_holds_set(v) for v in value)


def _canonical(value: Any) -> str:
    """``repr`` with the elements of sets in sorted order, so it never depends on hashing."""
    if isinstance(value, (set, frozenset)):
        return f"{type(value).__name__}({{{', '.join(sorted(_canonical(v) for v in value))}}})"
    if isinstance(value, tuple):
        return f"({', '.join(_canonical(v) for v in value)}{',' if len(value) == 1 else ''})"
    return repr(value)


class Alphabet:
    """Symbols of one hashable type, each with a base id in ``0..len-1``.

    Build it with :meth:`from_spec` from a dict (symbol -> id), a list/tuple (ids in order;
    repeats keep their first id), a set (sorted), a string (its characters) or an int ``A``
    (the integers ``0..A-1``).

    >>> alphabet = Alphabet.from_spec({"G", "A", "T", "C"})
    >>> alphabet.symbols, alphabet.ids_of("GATTACA").tolist()
    (('A', 'C', 'G', 'T'), [2, 0, 3, 3, 0, 1, 0])
    """

    __slots__ = ("symbols", "symbol_type", "_index", "_table", "_table_offset")

    def __init__(self, symbols: Sequence[Any]):
        generic = numpy_types("generic")  # (numpy scalars exist only once numpy is imported)
        symbols = tuple(s.item() if isinstance(s, generic) else s for s in symbols)
        if len(symbols) == 0:
            raise InvalidParameterError("`alphabet` must be non-empty")
        if len(symbols) > MAX_ALPHABET_SIZE:
            raise InvalidParameterError(
                f"`alphabet` has {len(symbols)} symbols; at most {MAX_ALPHABET_SIZE} are supported"
            )
        types = {type(s) for s in symbols}
        if len(types) > 1:
            names = ", ".join(sorted(t.__name__ for t in types))
            raise SymbolTypeError(f"alphabet symbols must all have one type, got: {names}")
        for symbol in symbols:
            if isinstance(symbol, (float, complex)) and symbol != symbol:
                raise SymbolTypeError("NaN cannot be an alphabet symbol: it is not equal to itself, "
                                      "so no symbol of a document could ever be it")
        index: dict[Any, int] = {}
        for i, symbol in enumerate(symbols):
            try:
                if symbol in index:
                    raise InvalidParameterError(f"alphabet symbol {short_repr(symbol)} appears twice")
            except TypeError as exc:
                raise SymbolTypeError(f"alphabet symbols must be hashable: {exc}") from None
            index[symbol] = i
        self.symbols: tuple[Any, ...] = symbols
        self.symbol_type: type = types.pop()
        self._index = index
        self._table: array | None = None
        self._table_offset = 0
        self._build_table()

    def __getstate__(self) -> tuple[Any, ...]:
        """Pickled as its symbols (every pickle protocol; the lookup tables are built again)."""
        return (self.symbols,)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        (symbols,) = state
        type(self).__init__(self, symbols)

    @classmethod
    def from_spec(cls, spec: Any) -> Alphabet:
        if isinstance(spec, Alphabet):
            return spec
        if isinstance(spec, bool):
            raise SymbolTypeError("`alphabet` must be a dict, list, set, str or int, not bool")
        if isinstance(spec, (int, *numpy_types("integer"))):
            size = int(spec)
            if not 1 <= size <= MAX_ALPHABET_SIZE:
                raise InvalidParameterError(
                    f"`alphabet` size must be in 1..{MAX_ALPHABET_SIZE}, got {size}"
                )
            return cls(range(size))
        if isinstance(spec, Mapping):
            return cls._from_mapping(spec)
        if isinstance(spec, (set, frozenset)):
            return cls(_sorted_deterministically(spec))
        if isinstance(spec, str):
            return cls(list(dict.fromkeys(spec)))
        if isinstance(spec, (list, tuple, range, *numpy_types("ndarray"))):
            try:
                return cls(list(dict.fromkeys(normalize_symbol(s) for s in spec)))
            except SymbolTypeError:
                raise
            except TypeError as exc:
                raise SymbolTypeError(f"alphabet symbols must be hashable: {exc}") from None
        raise SymbolTypeError(
            f"`alphabet` must be a dict, list, set, str or int, not {type(spec).__name__}"
        )

    @classmethod
    def _from_mapping(cls, mapping: Mapping[Any, Any]) -> Alphabet:
        ids = list(mapping.values())
        integer = (int, *numpy_types("integer"))
        if not all(isinstance(i, integer) and not isinstance(i, bool) for i in ids):
            raise InvalidParameterError("values in `alphabet` must be integer ids")
        if sorted(int(i) for i in ids) != list(range(len(ids))):
            raise InvalidParameterError(
                "values in `alphabet` must be the ids 0..len(alphabet)-1, each once"
            )
        symbols: list[Any] = [None] * len(ids)
        for symbol, i in mapping.items():
            symbols[int(i)] = symbol
        return cls(symbols)

    # -- lookups ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.symbols)

    def __contains__(self, symbol: Any) -> bool:
        try:
            return normalize_symbol(symbol) in self._index
        except TypeError:
            return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Alphabet) and self.symbols == other.symbols

    def __hash__(self) -> int:
        return hash(self.symbols)

    def __repr__(self) -> str:
        return f"Alphabet({len(self)} symbols of type {self.symbol_type.__name__})"

    def id_of(self, symbol: Any) -> int:
        try:
            return self._index[normalize_symbol(symbol)]
        except (KeyError, TypeError):
            raise UnknownSymbolError(f"symbol {short_repr(symbol)} is not in the alphabet") from None

    def as_dict(self) -> dict[Any, int]:
        """The reference's representation: symbol -> id."""
        return dict(self._index)

    @property
    def char_table(self) -> array | None:
        """For an alphabet of str symbols: the int32 ``array.array`` code point -> id (-1 where no
        symbol; code points past its end have none either), if it is small enough; else None.

        >>> Alphabet.from_spec("ab").char_table[97:].tolist()
        [0, 1, -1]
        """
        return self._table if self.symbol_type is str else None

    @property
    def int_table(self) -> tuple[array, int] | None:
        """For an alphabet of int symbols: ``(table, low)``, the int32 ``array.array`` with the
        id of symbol ``v`` at ``v - low`` (-1 where no symbol, and at the end), if it is small
        enough; else None.

        >>> Alphabet.from_spec([5, 7]).int_table
        (array('i', [0, -1, 1, -1]), 5)
        """
        return (self._table, self._table_offset) if self.symbol_type is int and self._table is not None else None

    def _build_table(self) -> None:
        """A dense value -> id array for single characters or integers, when it is small."""
        if self.symbol_type is str:
            keys = [ord(s) for s in self.symbols if len(s) == 1]
            values = [i for i, s in enumerate(self.symbols) if len(s) == 1]
        elif self.symbol_type is int:
            keys, values = list(self.symbols), list(range(len(self.symbols)))
        else:
            return
        if not keys:
            return
        low, high = min(keys), max(keys)
        if low < -MAX_TABLE_MAGNITUDE or high > MAX_TABLE_MAGNITUDE:
            return
        if self.symbol_type is str:
            low = 0
        if high - low + 1 > MAX_DENSE_TABLE:
            return
        # one entry more than needed: a -1 at the end, where out-of-range values are clipped to
        table = array("i", [-1]) * (high - low + 2)
        for key, value in zip(keys, values):
            table[key - low] = value
        self._table, self._table_offset = table, low

    # -- documents -> ids -------------------------------------------------------------------

    def ids_of(self, doc: Any, *, where: str = "the document", allow_unknown: bool = False) -> np.ndarray:
        """Base ids of every symbol of ``doc`` as an int32 array.

        ``doc`` is a str (its characters), bytes (its byte values), or a sequence / 1-D array
        of symbols. An unknown symbol raises :class:`UnknownSymbolError` naming it and its
        position (``where`` names the document in that message); with ``allow_unknown`` it
        gets the id -1 instead, for callers that resolve it otherwise (known words).
        """
        ids, symbol_at = self._lookup(doc, where)
        if not allow_unknown:
            bad = np.flatnonzero(ids < 0)
            if len(bad):
                position = int(bad[0])
                raise UnknownSymbolError(
                    f"symbol {short_repr(symbol_at(position))} at position {position} of "
                    f"{where} is not in the alphabet"
                )
        return ids

    def _lookup(self, doc: Any, where: str):
        """``(ids with -1 for unknown symbols, position -> original symbol)``."""
        if isinstance(doc, str):
            if self.symbol_type is not str:
                raise SymbolTypeError(
                    f"{where} is a str but the alphabet's symbols are {self.symbol_type.__name__}"
                )
            if self._table is None:
                return self._lookup_generic(doc, where), doc.__getitem__
            # chunk by chunk, so that the code points of a long text never exist all at once
            ids = np.empty(len(doc), dtype=ID_DTYPE)
            for start in range(0, len(doc), TEXT_CHUNK):
                chunk = doc[start : start + TEXT_CHUNK].encode("utf-32-le", "surrogatepass")
                ids[start : start + TEXT_CHUNK] = self._lookup_table(np.frombuffer(chunk, dtype="<u4"))
            return ids, doc.__getitem__
        if isinstance(doc, (bytes, bytearray, memoryview)):
            if self.symbol_type is str:
                raise SymbolTypeError(
                    f"{where} is bytes but the alphabet's symbols are str: decode it first "
                    "(e.g. `doc.decode('utf-8')`)"
                )
            raw = np.frombuffer(bytes(doc), dtype=np.uint8)
            if self.symbol_type is bytes:
                symbols = [bytes((b,)) for b in raw.tolist()]
                return self._lookup_generic(symbols, where), symbols.__getitem__
            return self._lookup_ints(raw.astype(np.int64)), lambda k: int(raw[k])
        if isinstance(doc, np.ndarray):
            if doc.ndim != 1:
                raise SymbolTypeError(f"{where} must be a 1-D array, got {doc.ndim} dimensions")
            if self.symbol_type is int and doc.dtype.kind not in "iuO":
                raise SymbolTypeError(
                    f"{where} is an array of {doc.dtype} but the alphabet's symbols are int"
                )
            if doc.dtype.kind in "iu" and self.symbol_type is int and not _beyond_int64(doc):
                return self._lookup_ints(doc.astype(np.int64, copy=False)), lambda k: int(doc[k])
            symbols = doc.tolist()
            return self._lookup_generic(symbols, where), symbols.__getitem__
        if isinstance(doc, (list, tuple, range)):
            if self.symbol_type is int and self._table is not None and len(doc) > 0:
                values = _int_array_or_none(doc)
                if values is not None:
                    return self._lookup_ints(values), doc.__getitem__
            return self._lookup_generic(doc, where), doc.__getitem__
        raise SymbolTypeError(
            f"{where} must be a str, bytes, list, tuple or 1-D numpy array, "
            f"not {type(doc).__name__}"
        )

    def _lookup_ints(self, values: np.ndarray) -> np.ndarray:
        if self._table is None:
            return self._lookup_generic(values.tolist())
        return self._lookup_table(values)

    def _lookup_table(self, values: np.ndarray) -> np.ndarray:
        shifted = values - self._table_offset if self._table_offset else values
        if len(shifted) and shifted.min() < 0:  # below the table: unknown, like the sentinel
            shifted = np.where(shifted < 0, len(self._table) - 1, shifted)
        # values past the table clip to its last entry, the -1 sentinel
        return np.take(np.frombuffer(self._table, dtype=ID_DTYPE), shifted, mode="clip")

    def _lookup_generic(self, symbols: Iterable[Any], where: str = "the document") -> np.ndarray:
        """Ids by dict lookup; -1 for unknown symbols. A symbol of another type than the
        alphabet's is an error even where it compares equal (``1.0 == True == 1``)."""
        index, symbol_type = self._index, self.symbol_type
        out = []
        for position, symbol in enumerate(symbols):
            if type(symbol) is not symbol_type:
                # numpy scalars (np.str_, np.int64) normalise to the Python value.
                symbol = normalize_symbol(symbol)
                if type(symbol) is not symbol_type and (
                    isinstance(symbol, (bool, float, complex)) or symbol_type in (bool, float, int)
                ):
                    raise SymbolTypeError(
                        f"symbol {short_repr(symbol)} at position {position} of {where} is "
                        f"{type(symbol).__name__}, but the alphabet's symbols are {symbol_type.__name__}"
                    )
            try:
                out.append(index[symbol])
            except (KeyError, TypeError):
                out.append(-1)
        return np.asarray(out, dtype=ID_DTYPE)

    # -- ids -> symbols ---------------------------------------------------------------------

    def symbols_of(self, ids: Iterable[int]) -> list[Any]:
        symbols = self.symbols
        return [symbols[i] for i in ids]


def _int_array_or_none(values: Sequence[Any]) -> np.ndarray | None:
    """A list of plain integers as an int64 array, or None if it holds anything else."""
    if set(map(type, values)) != {int}:  # (a C loop: per symbol, not per Python step)
        return None
    try:
        return np.asarray(values, dtype=np.int64)
    except OverflowError:
        return None


def _beyond_int64(values: np.ndarray) -> bool:
    """Whether an unsigned array holds values that int64 would wrap to negatives."""
    return values.dtype == np.uint64 and len(values) > 0 and int(values.max()) > np.iinfo(np.int64).max
