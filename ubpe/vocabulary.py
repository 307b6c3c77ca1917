"""The fitted vocabulary: both the recursive and the flattened view of every token.

Ids ``0..n_base-1`` are the base ids (alphabet symbols, then known words). Token
``n_base + t`` (``t = 0..n_merged-1``) has

* ``merges[t] = (left, right)`` - the pair it replaces (the *classic*, recursive view);
* ``piece(n_base + t)``         - the run of base ids it stands for (the *universal* view);
* ``weights[t]``                - its idf, ``ln((1 + D) / (1 + documents with the pair))``;
* ``ranks[t]``                  - the order in which fitting created it (0 = first merge),
  kept when rearrangement renumbers the ids; -1 when unknown (a model loaded from ubpe 0.3.0
  JSON does not record it).

The arrays are kept as ``array.array`` (:class:`~ubpe._lazy.BufferField`): a fit builds,
rearranges and saves a vocabulary without importing numpy; reading a field (``merges``...)
gives it as a numpy array, made on first read.

>>> v = Vocabulary.from_merges(2, [0, 2], [1, 0], documents=[1, 1], n_docs=1)
>>> v.piece(3).tolist(), v.merges.tolist()
([0, 1, 0], [[0, 1], [2, 0]])
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from itertools import accumulate, chain

from ubpe_native._numpy import ID_DTYPE, np, numpy_types

from ._lazy import BufferField, drop_views
from .errors import ModelFormatError, UnknownTokenError

TYPE_CHECKING = False  # (typing's, without importing typing: see ubpe.files)
if TYPE_CHECKING:
    from typing import Any

#: numpy's dtype of ids (a name: numpy is imported when first used)
NO_TOKEN = -1


def idf_weight(n_docs: int, documents: int) -> float:
    """The reference's weight, computed the same way so that ties stay exact ties."""
    return math.log((1 + n_docs) / (1 + documents))


class Vocabulary:
    """Merges, pieces, weights and ranks of a fitted vocabulary (see the module docstring):
    immutable (a field cannot be set; :meth:`replace` makes a changed copy).

    >>> v = Vocabulary.from_merges(2, [0, 1], [1, 1], documents=[2, 1], n_docs=3)
    >>> v.pieces(), [round(w, 3) for w in v.weights.tolist()]
    ({2: (0, 1), 3: (1, 1)}, [0.288, 0.693])
    >>> v.rearranged(3, classic=False).pieces()   # keeps the heavier token, renumbered
    {2: (1, 1)}
    >>> v.replace(ranks=[1, 0]).ranks.tolist(), v.ranks.tolist()
    ([1, 0], [0, 1])
    >>> v.n_base = 3
    Traceback (most recent call last):
    AttributeError: a Vocabulary is immutable: replace(n_base=...) makes a changed copy
    """

    # (a plain class, not a frozen dataclass: `dataclasses` imports `inspect`, ~5 ms of a
    # fitted model's cold load, which needs no other dataclass)
    #: the fields, in the constructor's order
    FIELDS = ("n_base", "merges", "piece_offsets", "piece_symbols", "weights", "ranks")
    n_base: int
    merges: np.ndarray = BufferField("i", columns=2)  # (T, 2) int32, NO_TOKEN where a component is not in the vocabulary
    piece_offsets: np.ndarray = BufferField("q")  # (T + 1,) int64
    piece_symbols: np.ndarray = BufferField("i")  # int32 base ids of all pieces back to back
    weights: np.ndarray = BufferField("d")  # (T,) float64
    ranks: np.ndarray = BufferField("q")  # (T,) int64

    def __init__(self, n_base: int, merges: Any, piece_offsets: Any, piece_symbols: Any, weights: Any, ranks: Any):
        setattr_ = object.__setattr__  # (the buffer fields' descriptors convert what they are given)
        setattr_(self, "n_base", n_base)
        setattr_(self, "merges", merges)
        setattr_(self, "piece_offsets", piece_offsets)
        setattr_(self, "piece_symbols", piece_symbols)
        setattr_(self, "weights", weights)
        setattr_(self, "ranks", ranks)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Vocabulary is immutable: replace({name}=...) makes a changed copy")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Vocabulary is immutable: {name} cannot be deleted")

    def replace(self, **changes: Any) -> Vocabulary:
        """A copy with the fields ``changes`` names changed (what ``dataclasses.replace`` did)."""
        unknown = set(changes) - set(self.FIELDS)
        if unknown:
            raise TypeError(f"Vocabulary has no field {sorted(unknown)[0]!r}")
        state = self.__dict__
        return Vocabulary(*(changes[name] if name in changes else state[name if name == "n_base" else "_" + name]
                            for name in self.FIELDS))

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (and copied) as its buffers, without the numpy views made of them."""
        return drop_views(self.__dict__)

    # -- construction --------------------------------------------------------------------

    @classmethod
    def from_merges(
        cls,
        n_base: int,
        left: Sequence[int],
        right: Sequence[int],
        *,
        documents: Sequence[int],
        n_docs: int,
    ) -> Vocabulary:
        """A vocabulary in creation order: token ``n_base + t`` merges ``left[t], right[t]``."""
        pairs = list(zip(_as_list(left), _as_list(right)))
        weights = array("d", [idf_weight(n_docs, int(d)) for d in _as_list(documents)])
        if len(pairs) != len(weights):
            raise ValueError(f"{len(pairs)} merges but {len(weights)} document counts")
        return cls._of_pairs(n_base, pairs, weights, array("q", range(len(pairs))))

    @classmethod
    def from_pieces(
        cls,
        n_base: int,
        pieces: Sequence[Sequence[int]],
        weights: Sequence[float],
        *,
        merges: np.ndarray | None = None,
        ranks: Sequence[int] | None = None,
    ) -> Vocabulary:
        """A vocabulary from flattened pieces (token ``n_base + t`` is ``pieces[t]``).

        Merges given as a sequence of pairs (or none) take a path without numpy: what a load
        of a fitted model's file does (``loads``, ``ubpe.load``), so its first encode does not
        wait ~60 ms for numpy's import.
        """
        if not isinstance(merges, numpy_types("ndarray")):
            return cls._from_piece_lists(n_base, pieces, weights, merges, ranks)
        lengths = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=len(pieces))
        offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        symbols = _id_array((s for p in pieces for s in p), "a piece", count=int(offsets[-1]))
        if len(symbols) and (symbols.min() < 0 or symbols.max() >= n_base):
            raise ModelFormatError("a piece holds an id that is not a base id")
        if np.any(lengths < 2):
            raise ModelFormatError("every piece must hold at least two base ids")
        if merges is None:
            merges = np.full((len(pieces), 2), NO_TOKEN, dtype=ID_DTYPE)
        merges = _id_array(merges, "a merge").reshape(-1, 2)
        if len(merges) != len(pieces):
            raise ModelFormatError(f"{len(merges)} merges for {len(pieces)} pieces")
        _check_merges_build_pieces(n_base, merges, offsets, symbols)
        return cls._assemble(n_base, merges, offsets, symbols, weights, ranks)

    @classmethod
    def _from_piece_lists(cls, n_base: int, pieces: Sequence[Sequence[int]], weights: Sequence[float],
                          merges: Sequence[Sequence[int]] | None, ranks: Sequence[int] | None) -> Vocabulary:
        """:meth:`from_pieces` of merges given as pairs (or none), as ``array.array``: the same
        checks, the same errors, no numpy unless the model is corrupt (then the error comes
        from the numpy check, which names the first bad token)."""
        offsets, symbols = _offsets_and_symbols(pieces, "a piece")
        _check_id_range(symbols, "a piece")
        if len(symbols) and (min(symbols) < 0 or max(symbols) >= n_base):
            raise ModelFormatError("a piece holds an id that is not a base id")
        if any(map((2).__gt__, map(len, pieces))):
            raise ModelFormatError("every piece must hold at least two base ids")
        if merges is None:
            pairs = [(NO_TOKEN, NO_TOKEN)] * len(pieces)
        else:
            pairs = [tuple(pair) for pair in merges]
            if any(len(pair) != 2 for pair in pairs):
                raise ModelFormatError("a merge must hold two ids")
            _check_id_range(_offsets_and_symbols(pairs, "a merge")[1], "a merge")
        if len(pairs) != len(pieces):
            raise ModelFormatError(f"{len(pairs)} merges for {len(pieces)} pieces")
        from ubpe_native._pieces import first_misspelled

        merge_ids = array("i", chain.from_iterable(pairs))
        if merges is not None and first_misspelled(n_base, merge_ids, offsets, symbols) >= 0:
            _check_merges_build_pieces(n_base, _id_array(pairs, "a merge").reshape(-1, 2),  # (names the token)
                                       np.frombuffer(offsets, dtype=np.int64), np.frombuffer(symbols, dtype=ID_DTYPE))
            raise AssertionError("the C and numpy checks of a model's merges disagree")
        return cls._assemble(n_base, merge_ids, offsets, symbols, weights, ranks)

    @classmethod
    def from_arrays(
        cls, n_base: int, piece_offsets: np.ndarray, piece_symbols: np.ndarray, *, ranks: np.ndarray
    ) -> Vocabulary:
        """:meth:`from_pieces` of pieces already flat (token ``n_base + t`` is
        ``piece_symbols[piece_offsets[t]:piece_offsets[t + 1]]``), weights 0 and no recorded
        merges: a loaded vocabulary of many tokens without a Python object per token.

        >>> Vocabulary.from_arrays(2, np.array([0, 2]), np.array([1, 0]), ranks=np.array([0])).pieces()
        {2: (1, 0)}
        """
        offsets = np.ascontiguousarray(piece_offsets, dtype=np.int64)
        symbols = _id_array(np.asarray(piece_symbols), "a piece")
        n_merged = len(offsets) - 1
        if n_merged < 0 or offsets[0] != 0 or offsets[-1] != len(symbols):
            raise ModelFormatError(f"piece offsets must run from 0 to the {len(symbols)} symbols")
        if n_merged and np.diff(offsets).min() < 2:
            raise ModelFormatError("every piece must hold at least two base ids")
        if len(symbols) and (symbols.min() < 0 or symbols.max() >= n_base):
            raise ModelFormatError("a piece holds an id that is not a base id")
        if len(ranks) != n_merged:
            raise ModelFormatError(f"{len(ranks)} ranks for {n_merged} pieces")
        merges = np.full((n_merged, 2), NO_TOKEN, dtype=ID_DTYPE)
        return cls._assemble(n_base, merges, offsets, symbols, np.zeros(n_merged), np.asarray(ranks, dtype=np.int64))

    @classmethod
    def from_pairs(
        cls,
        n_base: int,
        merges: np.ndarray,
        weights: Sequence[float],
        *,
        ranks: Sequence[int] | None = None,
    ) -> Vocabulary:
        """A vocabulary from the recursive mapping alone (pieces are expanded from it); merges
        given as pairs (a list of 2-tuples: a 0.3.0 model's load) take no numpy."""
        if not isinstance(merges, numpy_types("ndarray")):
            if type(merges) is list and set(map(type, merges)) == {tuple} and set(map(len, merges)) == {2}:
                pairs, all_pairs = merges, True  # (the usual: 2-tuples already, looked at in C loops)
            else:
                pairs = [tuple(pair) if isinstance(pair, (list, tuple)) else pair for pair in merges]
                all_pairs = all(type(pair) is tuple and len(pair) == 2 for pair in pairs)
            if all_pairs:
                try:  # (the pairs' ids back to back, read once: checked here, flattened by _of_pairs)
                    ids = array("i", chain.from_iterable(pairs))
                except (TypeError, OverflowError) as exc:
                    raise ModelFormatError(f"a merge holds an invalid id: {exc}") from None
                _check_id_range(ids, "a merge")
                return cls._of_pairs(n_base, pairs, weights, ranks, ids)
        return cls._of_pairs(n_base, _id_array(merges, "a merge").reshape(-1, 2).tolist(), weights, ranks)

    @classmethod
    def _of_pairs(cls, n_base: int, pairs: list, weights: Any, ranks: Any, ids: array | None = None) -> Vocabulary:
        """The vocabulary of checked ``(left, right)`` pairs, pieces expanded from them
        (``ids``: the pairs' ids back to back, where the caller has them)."""
        offsets, symbols = _flatten(n_base, pairs, ids)
        return cls._assemble(n_base, pairs if ids is None else ids, offsets, symbols, weights, ranks)

    @classmethod
    def _assemble(cls, n_base, merges, offsets, symbols, weights, ranks) -> Vocabulary:
        """The vocabulary of checked arrays; unknown ``ranks`` (None) are -1."""
        ranks = array("q", [-1]) * (len(offsets) - 1) if ranks is None else ranks
        return cls(n_base, merges, offsets, symbols, weights, ranks)

    # -- access -----------------------------------------------------------------------------

    @property
    def n_merged(self) -> int:
        """How many tokens fitting added on top of the base ids."""
        return len(self._weights)

    def __len__(self) -> int:
        return self.n_base + self.n_merged

    def _index(self, token: int) -> int:
        t = int(token) - self.n_base
        if not 0 <= t < self.n_merged:
            raise UnknownTokenError(f"token {token} is not a merged token of this vocabulary")
        return t

    def piece(self, token: int) -> np.ndarray:
        """Base ids that ``token`` stands for (a base id stands for itself)."""
        if 0 <= int(token) < self.n_base:
            return np.array([token], dtype=ID_DTYPE)
        t = self._index(token)
        return self.piece_symbols[self.piece_offsets[t] : self.piece_offsets[t + 1]]

    def pieces(self) -> dict[int, tuple[int, ...]]:
        """``token -> piece`` for every merged token (the reference's universal mapper)."""
        bounds = self._piece_offsets.tolist()
        flat = self._piece_symbols.tolist()
        return {
            self.n_base + t: tuple(flat[bounds[t] : bounds[t + 1]]) for t in range(self.n_merged)
        }

    def pairs(self) -> dict[int, tuple[int, int]]:
        """``token -> (left, right)`` (the reference's classic mapper)."""
        return {self.n_base + t: pair for t, pair in enumerate(self._pairs())}

    def _pairs(self) -> list[tuple[int, int]]:
        """``(left, right)`` of every merged token, as Python ints."""
        flat = self._merges.tolist()
        return list(zip(flat[0::2], flat[1::2]))

    def recorded_merges(self, to_id: np.ndarray | None = None) -> dict[int, tuple[int, int]]:
        """``token -> (left, right)`` of every merge recorded (-1 marks none), through
        ``to_id`` (vocabulary id -> output id, e.g. tiktoken ranks; default: the ids).

        >>> Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=1).recorded_merges()
        {2: (0, 1)}
        """
        out = {}
        for t, (left, right) in enumerate(self._pairs()):
            if left >= 0 and right >= 0:
                token = self.n_base + t
                if to_id is None:
                    out[token] = (int(left), int(right))
                else:
                    out[int(to_id[token])] = (int(to_id[left]), int(to_id[right]))
        return out

    def as_lists(self) -> tuple[list[list[int]], list[list[int]], list[float], list[int]]:
        """``(merges, pieces, weights, ranks)`` of the merged tokens as Python lists (what a
        model file holds; no numpy is imported).

        >>> Vocabulary.from_merges(2, [0, 2], [1, 0], documents=[1, 1], n_docs=1).as_lists()
        ([[0, 1], [2, 0]], [[0, 1], [0, 1, 0]], [0.0, 0.0], [0, 1])
        """
        bounds, flat = self._piece_offsets.tolist(), self._piece_symbols.tolist()
        pieces = [flat[bounds[t] : bounds[t + 1]] for t in range(self.n_merged)]
        return [list(pair) for pair in self._pairs()], pieces, self._weights.tolist(), self._ranks.tolist()

    def weight_of(self) -> dict[int, float]:
        return {self.n_base + t: w for t, w in enumerate(self._weights.tolist())}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocabulary):
            return NotImplemented
        return self.n_base == other.n_base and all(
            getattr(self, name) == getattr(other, name)
            for name in ("_merges", "_piece_offsets", "_piece_symbols", "_weights", "_ranks")
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Vocabulary(n_base={self.n_base}, n_merged={self.n_merged})"

    # -- rearrangement ----------------------------------------------------------------------

    def rearranged(self, n_tokens: int, *, classic: bool) -> Vocabulary:
        """Sort tokens by weight, trim to ``n_tokens`` ids in all, renumber (ubpe 0.3.0).

        Tokens are sorted by ascending weight (ties keep id order), the lowest are dropped
        until ``n_tokens`` ids remain, and the rest get ids from the highest weight down.
        ``classic`` drops, with a token, every token built from it, in the reference's order
        (a depth-first walk that may visit a token twice; when it does, the reference keeps
        as many fewer tokens, and so do we).
        """
        n_base, n_merged = self.n_base, self.n_merged
        quantity = n_merged - n_tokens + n_base
        weights = self._weights.tolist()
        order = sorted(range(n_merged), key=weights.__getitem__)  # ascending; ties in id order
        if classic:
            deleted_walk = self._classic_deletions(order, quantity)
        else:
            deleted_walk = order[: max(0, min(quantity, n_merged))]
        deleted = bytearray(n_merged)
        for t in deleted_walk:
            deleted[t] = 1
        n_keep = max(0, n_merged - len(deleted_walk))
        survivors = [t for t in reversed(order) if not deleted[t]][:n_keep]

        # old id -> new id: base ids keep theirs, and so does NO_TOKEN (-1, the last entry); a
        # dropped token has none - or, classic, keeps its old one, as the reference maps
        # components with ``transformer.get(token, token)``
        renumbered = list(range(n_base + n_merged)) if classic else list(range(n_base)) + [NO_TOKEN] * n_merged
        renumbered.append(NO_TOKEN)
        for i, t in enumerate(survivors):
            renumbered[n_base + t] = n_base + i
        # (maps of bound methods over the survivors: C loops, no Python frame per token)
        flat = self._merges.tolist()
        merges = [0] * (2 * len(survivors))
        merges[0::2] = map(renumbered.__getitem__, map(flat[0::2].__getitem__, survivors))
        merges[1::2] = map(renumbered.__getitem__, map(flat[1::2].__getitem__, survivors))
        new_weights = array("d", map(weights.__getitem__, survivors))
        new_ranks = array("q", map(self._ranks.tolist().__getitem__, survivors))
        if classic:
            return Vocabulary._of_pairs(n_base, list(zip(merges[0::2], merges[1::2])), new_weights, new_ranks)
        bounds, raw, size = self._piece_offsets.tolist(), self._piece_symbols.tobytes(), self._piece_symbols.itemsize
        starts = list(map(bounds.__getitem__, survivors))
        ends = list(map(bounds.__getitem__, map((1).__add__, survivors)))
        pieces = array("i", b"".join([raw[size * start : size * end] for start, end in zip(starts, ends)]))
        offsets = array("q", accumulate(map(int.__sub__, ends, starts), initial=0))
        return Vocabulary(n_base, array("i", merges), offsets, pieces, new_weights, new_ranks)

    def _classic_deletions(self, order: list[int], quantity: int) -> list[int]:
        """Token indices the reference's classic trimming deletes, repeats included."""
        n_merged = self.n_merged
        position = [0] * n_merged
        for i, t in enumerate(order):
            position[t] = i
        # parents[j]: positions (in weight order) of the tokens whose pair holds token order[j]
        parents: list[list[int]] = [[] for _ in range(n_merged)]
        for t, (left, right) in enumerate(self._pairs()):
            for component in {left, right}:
                c = component - self.n_base
                if 0 <= c < n_merged:
                    parents[position[c]].append(position[t])
        for p in parents:
            p.sort()
        walk: list[int] = []
        in_walk = bytearray(n_merged)
        for i in range(n_merged):
            if in_walk[i]:
                continue
            if len(walk) >= quantity:
                break
            stack = [i]
            while stack:
                j = stack.pop()
                walk.append(j)
                in_walk[j] = 1
                stack.extend(k for k in parents[j] if not in_walk[k])
        return [order[j] for j in walk]


def _as_list(values: Any) -> list:
    """``values`` (an array of either kind, or any sequence) as a list of Python numbers."""
    return values.tolist() if hasattr(values, "tolist") else list(values)


def _id_array(values, what: str, count: int = -1) -> np.ndarray:
    """``values`` as int32 ids; a value that is not an integer or exceeds int32 is a corrupt
    model, not an ``OverflowError`` from deep inside numpy."""
    try:
        if isinstance(values, np.ndarray):
            array = values
        else:
            array = np.fromiter(values, dtype=np.int64, count=count) if count >= 0 else np.asarray(values)
        if array.size and array.dtype.kind not in "iu":
            raise TypeError(f"ids of type {array.dtype}")
        if array.size and (array.min() < NO_TOKEN or array.max() > np.iinfo(ID_DTYPE).max):
            raise OverflowError(f"an id outside {NO_TOKEN}..{np.iinfo(ID_DTYPE).max}")
    except (TypeError, ValueError, OverflowError) as exc:
        raise ModelFormatError(f"{what} holds an invalid id: {exc}") from None
    return array.astype(ID_DTYPE, copy=False)


def _check_merges_build_pieces(
    n_base: int, merges: np.ndarray, offsets: np.ndarray, symbols: np.ndarray
) -> None:
    """Every recorded merge ``(left, right)`` of token ``t`` must spell ``t``'s piece:
    ``piece(left) + piece(right) == piece(t)``. Checked for all tokens at once in
    O(total piece length), so a hand-made model cannot load and then encode wrongly.

    >>> offsets, symbols = np.array([0, 2, 5]), np.array([0, 1, 0, 1, 1], dtype=ID_DTYPE)
    >>> _check_merges_build_pieces(2, np.array([[0, 1], [2, 1]]), offsets, symbols)
    >>> _check_merges_build_pieces(2, np.array([[0, 1], [1, 2]]), offsets, symbols)
    Traceback (most recent call last):
    ubpe.errors.ModelFormatError: token 3 merges (1, 2), which spell another piece than its own
    """
    n_merged = len(merges)
    lengths = np.diff(offsets)
    left, right = merges[:, 0].astype(np.int64), merges[:, 1].astype(np.int64)
    recorded = (left != NO_TOKEN) & (right != NO_TOKEN)
    outside = recorded & ((np.minimum(left, right) < 0) | (np.maximum(left, right) >= n_base + n_merged))
    if outside.any():
        t = int(np.flatnonzero(outside)[0])
        raise ModelFormatError(f"token {n_base + t} merges ({left[t]}, {right[t]}), not tokens of this vocabulary")
    rows = np.flatnonzero(recorded)
    if not len(rows):
        return
    token_length = np.concatenate([np.ones(n_base, dtype=np.int64), lengths])
    token_start = np.concatenate([np.zeros(n_base, dtype=np.int64), offsets[:-1]])
    left_len, right_len = token_length[left[rows]], token_length[right[rows]]
    wrong = left_len + right_len != lengths[rows]
    if not wrong.any():
        # position k of token t's piece comes from left at k, or from right at k - len(left)
        size = lengths[rows]
        row_of = np.repeat(np.arange(len(rows)), size)
        k = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
        in_left = k < left_len[row_of]
        source = np.where(in_left, left[rows][row_of], right[rows][row_of])
        source_k = np.where(in_left, k, k - left_len[row_of])
        spelled = np.where(
            source < n_base, source, symbols[np.minimum(token_start[source] + source_k, len(symbols) - 1)]
        )
        mismatch = spelled != symbols[offsets[rows][row_of] + k]
        wrong = np.zeros(len(rows), dtype=bool)
        wrong[row_of[mismatch]] = True
    if wrong.any():
        t = int(rows[np.flatnonzero(wrong)[0]])
        raise ModelFormatError(
            f"token {n_base + t} merges ({left[t]}, {right[t]}), which spell another piece than its own"
        )


def _flatten(n_base: int, pair_list: Sequence[Sequence[int]], ids: array | None = None) -> tuple[array, array]:
    """Pieces of every token from the pair mapping, components expanded recursively:
    ``(offsets, symbols)`` (int64, int32 ``array.array``), in C (``_classic.flatten_pairs``).

    Components may come after the tokens they build (after rearrangement ids follow weight,
    not creation); a cycle or an id outside the vocabulary is a corrupt model (named by
    :func:`_flatten_walk`), and so are pieces past ``MAX_PIECE_SYMBOLS`` symbols in all (a chain
    of merges that each double their component: 2**k symbols from a few bytes of file).
    ``ids``: the pairs' ids back to back (an int32 ``array.array``), where the caller has them.

    >>> [a.tolist() for a in _flatten(2, [(3, 1), (0, 1)])]
    [[0, 3, 5], [0, 1, 1, 0, 1]]
    >>> _flatten(2, [(0, 1)] + [(t, t) for t in range(2, 40)])
    Traceback (most recent call last):
    ubpe.errors.ModelFormatError: the merges spell pieces of more than 268,435,456 symbols in all (each token twice its component?)
    """
    from ubpe_native._pieces import FLATTEN_TOO_LONG, MAX_PIECE_SYMBOLS, flatten_pairs

    try:
        flat = flatten_pairs(n_base, array("i", chain.from_iterable(pair_list)) if ids is None else ids)
    except (TypeError, OverflowError, ValueError) as exc:
        raise ModelFormatError(f"a merge holds an invalid id: {exc}") from None
    if flat == FLATTEN_TOO_LONG:
        raise ModelFormatError(f"the merges spell pieces of more than {MAX_PIECE_SYMBOLS:,} symbols in all "
                               "(each token twice its component?)")
    if isinstance(flat, int):  # corrupt: the walk names the token
        return _flatten_walk(n_base, pair_list)
    return flat


def _flatten_walk(n_base: int, pair_list: Sequence[Sequence[int]]) -> tuple[array, array]:
    """:func:`_flatten` in Python (the test's oracle of the kernel; and what names the token of a
    corrupt model): ``(offsets, symbols)`` (int64, int32 ``array.array``).

    Components may come after the tokens they build (after rearrangement ids follow weight,
    not creation), so tokens are expanded depth first with memoisation; a cycle or an id
    outside the vocabulary is a corrupt model.

    >>> [a.tolist() for a in _flatten_walk(2, [(3, 1), (0, 1)])]
    [[0, 3, 5], [0, 1, 1, 0, 1]]
    """
    n_merged = len(pair_list)
    pieces: list[list[int] | None] = [None] * n_merged
    state = bytearray(n_merged)  # 0 new, 1 in progress, 2 done

    def component_piece(c: int) -> list[int]:
        if 0 <= c < n_base:
            return [c]
        return pieces[c - n_base]  # type: ignore[return-value]

    for root in range(n_merged):
        if state[root]:
            continue
        stack = [root]
        while stack:
            t = stack[-1]
            if state[t] == 0:
                state[t] = 1
                for c in pair_list[t]:
                    if not 0 <= c < n_base + n_merged:
                        raise ModelFormatError(
                            f"token {n_base + t} is built from {c}, which is not in the vocabulary"
                        )
                    if c >= n_base:
                        if state[c - n_base] == 1:
                            raise ModelFormatError(f"token {n_base + t} is built from itself")
                        if state[c - n_base] == 0:
                            stack.append(c - n_base)
            else:
                stack.pop()
                if state[t] == 1:
                    left, right = pair_list[t]
                    pieces[t] = component_piece(left) + component_piece(right)
                    state[t] = 2
    return _offsets_and_symbols(pieces)  # type: ignore[arg-type]


def _offsets_and_symbols(pieces: Sequence[Sequence[int]], what: str = "") -> tuple[array, array]:
    """The pieces back to back: ``(offsets, symbols)`` (int64, int32 ``array.array``); an id
    that is no int32 integer is a corrupt model (``what`` names the piece) when ``what`` is
    given.

    >>> _offsets_and_symbols([[1, 2], [3.5]], "a piece")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ubpe.errors.ModelFormatError: a piece holds an invalid id: ...float...
    """
    try:
        offsets = array("q", [0])
        offsets.extend(accumulate(map(len, pieces)))
        return offsets, array("i", chain.from_iterable(pieces))
    except (TypeError, OverflowError) as exc:
        if not what:
            raise
        raise ModelFormatError(f"{what} holds an invalid id: {exc}") from None


def _check_id_range(ids: array, what: str) -> None:
    """:func:`_id_array`'s range check of int32 ids (``NO_TOKEN`` the least allowed)."""
    if len(ids) and min(ids) < NO_TOKEN:
        raise ModelFormatError(f"{what} holds an invalid id: an id outside {NO_TOKEN}..{2**31 - 1}")
