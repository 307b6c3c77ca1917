"""Byte-level BPE on text, token for token identical to tiktoken on the same vocabulary.

Text is cut into pieces by a regex (the *pattern*), each piece becomes its UTF-8 bytes, and
the bytes are merged by :mod:`ubpe.encoders.ranked` - standard BPE inference, lowest rank first. Ids
0..255 of the vocabulary are the single bytes; a token is its byte string, so pieces are
unique, and its id is its rank (its place in training order). That is exactly tiktoken's
model, so a fitted tokenizer can be handed to tiktoken and a ``.tiktoken`` file read here:

>>> tok = ByteLevelBPE().fit(["hello hello world", "hello there"], n_tokens=262, quiet=True)
>>> tok.decode(tok.encode("hello world"))
'hello world'
>>> import tiktoken
>>> enc = tiktoken.Encoding("demo", pat_str=tok.pattern,
...                         mergeable_ranks=tok.mergeable_ranks(), special_tokens={})
>>> enc.encode("hello there") == tok.encode("hello there")
True

Ids returned by :meth:`ByteLevelBPE.encode` are tiktoken ranks. For a fitted tokenizer they
equal the ids of :attr:`ByteLevelBPE.vocabulary`; a loaded ``.tiktoken`` file may rank single
bytes anywhere (cl100k_base ranks ``b"!"`` first), so its vocabulary keeps byte ``b`` at id
``b`` and :attr:`ByteLevelBPE.token_ids` maps vocabulary ids to ranks.

Fitting is in :mod:`~ubpe.models.bytelevel_trainer`, the special-token policy in
:mod:`~ubpe.text.specials`, the file formats in :mod:`ubpe.io`. The class implements
the :class:`~ubpe.models.ubpe.Tokenizer` contract: any of ubpe's encoders runs on its
pre-tokenized pieces (``encode_with(text, encoder="fewest")``).

The module is just over 600 lines because the one class is tiktoken's whole ``Encoding``
surface (ranks, special tokens, the ordinary and batch calls, pickling, ``.tiktoken`` files)
beside ubpe's contract; what it delegates (fitting, the special-token policy, the formats)
already lives elsewhere, and a split would cut the class, not a job.
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import os
from collections.abc import Collection, Iterable, Mapping, Sequence

from ubpe_native._numpy import ID_DTYPE, np

from ..encoders import Encoding
from ..encoders.ranked import MergeTable, RankedEncoder, TextEncoder
from ..errors import InvalidParameterError, NotFittedError, SymbolTypeError, UnknownTokenError
from ..pieces import Inventory, checked_ids
from ..text.patterns import (
    DEFAULT_PATTERN,
    PATTERNS,
    checked_unicode,
    code_point_class_buffer,
    code_point_classes,
    native_pattern_id,
    resolve_pattern,
    without_surrogates,
)
from .chunks import CUTTABLE_PATTERNS, FlatIds, cuttable_unless, docs_matching, encode_chunk, flat_ids, id_lists, run_flat_chunks, text_lengths
from .imported import batch_workers
from ..threads import threads_argument
from ..text.scanner import pretokenize
from ..text.specials import SpecialTokens, special_regex, tiktoken_allowed
from .._hooks import file_formats
from .base import Tokenizer
from .deferred import Deferred
from .bytelevel_trainer import N_BYTES, arrays_vocabulary, fit_bytelevel, ranks_vocabulary

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import AbstractSet, Any, Literal
    from ..vocabulary import Vocabulary

_NONE_ALLOWED: frozenset[str] = frozenset()  # encode's default allowed_special


def _refuse_mergeable_specials(special_ids: list[int], lowest: int, highest: int, token_ids: Iterable[int]) -> None:
    """InvalidParameterError when a special token's id is the rank of a mergeable token
    (``token_ids``, whose ranks run from ``lowest`` to ``highest``). Special ids usually come
    all before the ranks (tekken) or all after (tiktoken): then the ranks are not read."""
    if not special_ids or max(special_ids) < lowest or min(special_ids) > highest:
        return
    clash = sorted(set(special_ids).intersection(map(int, token_ids)))
    if clash:
        raise InvalidParameterError(f"special token ids {clash[:5]} are mergeable tokens")

#: what a tokenizer made by `ByteLevelBPE._from_tables` builds when first asked for
_MATERIALIZED = ("vocabulary", "token_ids", "_encoder")


class ByteLevelBPE(Deferred, Tokenizer):
    """A byte-level BPE text tokenizer (tiktoken's model) fitted with ubpe's fit kernel.

    Build one with :meth:`fit`, :meth:`from_mergeable_ranks` or ``ubpe.load`` (our files
    and ``.tiktoken`` files; a ``.tiktoken`` file's load builds the merge table and the
    one-text encoder only, without numpy, and the vocabulary, token ids and encoder when first
    asked for: :meth:`_from_tables`). Over 250 lines because it is two public surfaces on one model:
    tiktoken's (``encode``, ``encode_ordinary``, ``decode_bytes``, ``mergeable_ranks``...) and
    ubpe's :class:`~ubpe.models.ubpe.Tokenizer` contract.

    >>> tok = ByteLevelBPE().fit(["hello hello hello"], n_tokens=260, quiet=True)
    >>> ids = tok.encode("hello")
    >>> tok.decode(ids), len(ids) < len("hello")
    ('hello', True)
    >>> tok.pieces(ids), tok.n_symbols("hé")
    ([b'h', b'ello'], 3)
    """

    variant = "bytelevel"
    default_encoder = "ranked"
    symbol_unit = "byte"
    symbol_type = str
    #: the kernel's str -> ids call, for calls where no special token is allowed or refused
    #: (see _plain_text_encoder; None: not built yet, False: none)
    _plain: Any = None
    #: whose Unicode classifies code points for the kernel's scanner and regex VM
    #: (`ubpe.text.patterns.code_point_classes`, `ubpe.text.regex_program`): the `regex`
    #: module's for a fitted model (it encodes as its fit split), tiktoken's for one read
    #: from a ``.tiktoken`` or tekken file
    unicode: str = "regex"

    def __init__(self) -> None:
        self.vocabulary: Vocabulary | None = None
        self.pattern: str = PATTERNS[DEFAULT_PATTERN]
        self._specials = SpecialTokens()
        # vocabulary id -> tiktoken rank (the id encode returns), and its inverse
        self.token_ids: np.ndarray = np.arange(N_BYTES, dtype=np.int64)
        self._encoder: RankedEncoder | None = None
        # rank -> bytes and bytes -> rank, made on first use (see _decoding_maps)
        self._decoding: tuple[dict[int, bytes], dict[bytes, int]] | None = None

    # -- construction ----------------------------------------------------------------------

    def fit(
        self,
        texts: Iterable[str],
        *,
        n_tokens: int,
        n_candidates: int = 50,
        pattern: str = DEFAULT_PATTERN,
        special_tokens: Iterable[str] | Mapping[str, int] = (),
        quiet: bool = False,
    ) -> ByteLevelBPE:
        """Learn ``n_tokens`` mergeable tokens (the 256 bytes included) from ``texts``.

        ``texts`` may be any iterable (streamed in chunks) or a Dask bag (see
        :mod:`ubpe.distributed.dask`). Each text is a document; its pre-tokenized pieces are the parts that pairs never
        cross. Special tokens are cut out of the texts before fitting and get ids after the
        mergeable tokens (in the order given) unless a mapping fixes their ids. Token ids are
        the creation order, cut at ``n_tokens`` (fitting may overshoot within its last round);
        no idf rearrangement happens. Returns ``self``.
        """
        vocabulary, specials = fit_bytelevel(
            texts, n_tokens=n_tokens, n_candidates=n_candidates, pattern=pattern,
            special_tokens=special_tokens, quiet=quiet,
        )
        self._install(vocabulary, np.arange(len(vocabulary), dtype=np.int64), resolve_pattern(pattern), specials,
                      "regex")
        return self

    @classmethod
    def from_mergeable_ranks(
        cls,
        mergeable_ranks: Mapping[bytes, int],
        *,
        pattern: str = DEFAULT_PATTERN,
        special_tokens: Mapping[str, int] | None = None,
        unicode: str | None = None,
    ) -> ByteLevelBPE:
        """A tokenizer from tiktoken's ``mergeable_ranks`` (``bytes -> rank``).

        Every single byte must have a rank. Merge priority is the rank; ranks need not be
        contiguous nor start at 0, and they are the ids that ``encode`` returns. ``unicode``:
        whose code point classes the pattern splits by (`ubpe.text.patterns.UNICODES`;
        default the class's :attr:`unicode`): ``"tiktoken"`` gives tiktoken's ids on every
        code point, ``"regex"`` splits as ``regex.findall``.
        """
        vocabulary, token_ids = ranks_vocabulary(mergeable_ranks)
        tok = cls()
        tok._install(vocabulary, token_ids, resolve_pattern(pattern), dict(special_tokens or {}), unicode or cls.unicode)
        return tok

    @classmethod
    def from_token_arrays(
        cls,
        pieces: np.ndarray,
        offsets: np.ndarray,
        ranks: np.ndarray,
        *,
        pattern: str = DEFAULT_PATTERN,
        special_tokens: Mapping[str, int] | None = None,
        unicode: str | None = None,
    ) -> ByteLevelBPE:
        """:meth:`from_mergeable_ranks` of the mergeable tokens as arrays, as a file reader
        has them (no Python object per token): token ``k`` is the bytes
        ``pieces[offsets[k]:offsets[k + 1]]`` of rank ``ranks[k]``.

        >>> pieces = np.frombuffer(bytes(range(256)) + b"ab", np.uint8)
        >>> tok = ByteLevelBPE.from_token_arrays(pieces, np.r_[0:257, 258], np.r_[0:256, 300])
        >>> tok.encode("abc"), tok.decode_bytes([300])
        ([300, 99], b'ab')
        """
        vocabulary, token_ids = arrays_vocabulary(
            np.asarray(pieces, dtype=np.uint8), np.asarray(offsets, dtype=np.int64), np.asarray(ranks, dtype=np.int64)
        )
        tok = cls()
        tok._install(vocabulary, token_ids, resolve_pattern(pattern), dict(special_tokens or {}), unicode or cls.unicode)
        return tok

    @classmethod
    def _from_tables(cls, tables: tuple, *, pattern: str, special_tokens: Mapping[str, int] | None,
                     unicode: str | None = None) -> ByteLevelBPE:
        """A tokenizer from a file's tables as `ubpe_native._base64_lines.ranked_tables`
        gives them, built without numpy: the merge table and the one-text encoder now (a load
        and its first ``encode`` import no numpy), the vocabulary, token ids and encoder when
        first asked for (:meth:`_materialize`)."""
        symbols, offsets, token_ids, priorities, identity = tables
        pattern = resolve_pattern(pattern)
        specials = SpecialTokens(dict(special_tokens or {}))
        # the byte ids hold any ranks; the merged ones come in rank order: their first and last
        ends = token_ids[:N_BYTES].tolist() + ([token_ids[N_BYTES], token_ids[-1]] if len(token_ids) > N_BYTES else [])
        _refuse_mergeable_specials(list(specials.ids.values()), min(ends), max(ends), token_ids)
        tok = cls.__new__(cls)
        unicode = checked_unicode(unicode or cls.unicode)
        native = native_pattern_id(pattern, unicode)
        classes = None if native is None else code_point_class_buffer(unicode)
        table = MergeTable(N_BYTES, offsets, symbols, priorities)
        tok.__dict__.update(
            pattern=pattern, unicode=unicode, _specials=specials, _decoding=None, _identity_ids=identity,
            _plain=False if native is None else TextEncoder(table, classes, native, None if identity else token_ids))
        tok._defer(functools.partial(ByteLevelBPE._materialize, tables=(symbols, offsets, token_ids, priorities, table)),
                   *_MATERIALIZED)
        return tok

    def _materialize(self, tables: tuple) -> None:
        """The vocabulary, token ids (as numpy arrays) and encoder of `_from_tables`' tables,
        the merge table reused (:data:`_MATERIALIZED`)."""
        symbols, offsets, token_ids, priorities, table = tables
        from ..vocabulary import Vocabulary  # (not at import: it imports dataclasses)
        vocabulary = Vocabulary.from_arrays(N_BYTES, np.frombuffer(offsets, np.int64), np.frombuffer(symbols, ID_DTYPE),
                                            ranks=np.frombuffer(priorities, np.int64))
        self.vocabulary = vocabulary
        self.token_ids = np.asarray(token_ids, dtype=np.int64)
        self._encoder = RankedEncoder(vocabulary, priority="rank", table=table)

    def with_pattern(self, pattern: str) -> ByteLevelBPE:
        """The same tokens and special tokens, pre-tokenized by ``pattern`` (a preset or regex).

        >>> tok = ByteLevelBPE().fit(["ab ab"], n_tokens=257, pattern="gpt2", quiet=True)
        >>> other = tok.with_pattern("cl100k")
        >>> other.mergeable_ranks() == tok.mergeable_ranks(), other.pattern == PATTERNS["cl100k"]
        (True, True)
        """
        return type(self).from_mergeable_ranks(self.mergeable_ranks(), pattern=pattern, special_tokens=self.special_tokens,
                                               unicode=self.unicode)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (and deep-copied) without the compiled merge table, rebuilt on load."""
        self._build_deferred(*_MATERIALIZED)
        state = {**super().__getstate__(), "_encoder": None, "_plain": None}
        state.pop("_later", None)  # (empty: built above)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.vocabulary is not None:
            self._encoder = RankedEncoder(self.vocabulary, priority="rank")

    def _install(
        self, vocabulary: Vocabulary, token_ids: np.ndarray, pattern: str, special_tokens: Mapping[str, int],
        unicode: str,
    ) -> None:
        checked_unicode(unicode)  # (before anything changes)
        specials = SpecialTokens(special_tokens)
        token_ids = np.asarray(token_ids, dtype=np.int64)
        _refuse_mergeable_specials(list(specials.ids.values()), int(token_ids.min()), int(token_ids.max()), token_ids)
        self._cancel_deferred()  # (a loaded file's tables, not built yet: this model replaces them)
        self.token_ids = token_ids
        self.vocabulary = vocabulary
        self.pattern = pattern
        self.unicode = unicode
        self._specials = specials
        self._encoder = RankedEncoder(vocabulary, priority="rank")
        self._identity_ids = bool(np.array_equal(self.token_ids, np.arange(len(vocabulary))))
        self._decoding = None  # made on first use: encoding needs neither map
        self._plain = None

    def _decoding_maps(self) -> tuple[dict[int, bytes], dict[bytes, int]]:
        """rank -> bytes (special tokens as their UTF-8 text) for decoding, and bytes ->
        rank of the mergeable tokens; sparse dicts: ids may be as large as MAX_RANK in a
        small file."""
        if self._decoding is None:
            pieces = self.vocabulary.pieces()  # type: ignore[union-attr]
            bytes_of: dict[int, bytes] = {}
            for token, rank in enumerate(self.token_ids.tolist()):
                bytes_of[rank] = bytes([token]) if token < N_BYTES else bytes(pieces[token])
            rank_of = {piece: rank for rank, piece in bytes_of.items()}
            for text, token in self._specials.ids.items():
                bytes_of[token] = text.encode("utf-8")
            self._decoding = bytes_of, rank_of
        return self._decoding

    @property
    def _bytes_of(self) -> dict[int, bytes]:
        return self._decoding_maps()[0]

    @property
    def _rank_of(self) -> dict[bytes, int]:
        return self._decoding_maps()[1]

    # -- properties ------------------------------------------------------------------------

    @property
    def special_tokens(self) -> dict[str, int]:
        """``text -> id`` of the special tokens."""
        return self._specials.ids

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (tiktoken's ``n_vocab``)."""
        largest = max(int(self.token_ids.max()), max(self.special_tokens.values(), default=0))
        return largest + 1

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    def _check_fitted(self) -> RankedEncoder:
        if self._encoder is None:
            raise NotFittedError("the tokenizer has no vocabulary yet: fit or load one first")
        return self._encoder

    def mergeable_ranks(self) -> dict[bytes, int]:
        """``bytes -> rank`` of every mergeable token, as ``tiktoken.Encoding`` takes it."""
        self._check_fitted()
        return {self._bytes_of[rank]: rank for rank in self.token_ids.tolist()}  # type: ignore[misc]

    # -- encoding --------------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with special tokens treated as plain text."""
        return self.encode(text, disallowed_special=())

    def encode(
        self,
        text: str,
        *,
        add_special: bool = False,
        parse_special: bool = False,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Ids of ``text`` (tiktoken's ``Encoding.encode``).

        Special tokens in ``allowed_special`` become their ids; by default (``"all"``) any
        other special token in the text raises :class:`DisallowedSpecialTokenError`; those
        in neither set are encoded as plain text. Among allowed specials that start at the
        same place the longest wins. In the one vocabulary (:mod:`ubpe.text.specials`)
        ``parse_special=True`` is ``allowed_special="all"``; ``add_special`` adds nothing
        (tiktoken frames no text).
        """
        plain = self._plain
        if plain is None:
            plain = self._plain = self._plain_text_encoder()
        if (plain and type(text) is str and not parse_special and allowed_special == _NONE_ALLOWED
                and (disallowed_special == () or (disallowed_special == "all" and not self._specials.ids))):
            # no special token to allow or refuse: one kernel call (a short text's cost is the call's)
            try:
                ids = plain(text)
            except ValueError:  # the general path below raises it as ours
                ids = None
            if ids is not None:
                return ids
        self._check_text(text)
        if parse_special:  # (no call on the common path)
            allowed_special = tiktoken_allowed(parse_special, allowed_special)
        allowed = self._specials.allowed(allowed_special)
        self._specials.check(text, self._specials.disallowed(allowed, disallowed_special))
        try:
            return self._encode_segments(text, allowed)
        except UnicodeEncodeError:  # lone surrogates, as tiktoken: replaced
            return self._encode_segments(without_surrogates(text), allowed)

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        threads: int | None = None,
        num_threads: int | None = None,
        add_special: bool = False,
        parse_special: bool = False,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        """:meth:`encode` of every text (tiktoken's ``encode_batch``), on ``threads`` threads
        (``num_threads``, tiktoken's name, is deprecated; default: ``UBPE_NUM_THREADS``, else
        one per core). With a preset pattern each chunk of texts is split and merged in one kernel
        call without the GIL (:mod:`ubpe.models.chunks`); texts holding special tokens or lone
        surrogates go through :meth:`encode`. Same ids as one by one.

        >>> tok = ByteLevelBPE().fit(["ab ab ab"], n_tokens=258, pattern="gpt2", quiet=True)
        >>> tok.encode_batch(["ab ab", "", "b"]) == [tok.encode(t) for t in ["ab ab", "", "b"]]
        True
        """
        return id_lists(*self._flat_batch(text, threads, num_threads=num_threads, parse_special=parse_special,
                                          allowed_special=allowed_special, disallowed_special=disallowed_special))

    def _flat_batch(self, text: Iterable[str], threads: int | None, *, num_threads: int | None = None,
                    add_special: bool = False, parse_special: bool = False,
                    allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
                    disallowed_special: Literal["all"] | Collection[str] = "all") -> FlatIds:
        """:meth:`encode_batch`'s ids as flat arrays (``encode_batch_to_numpy``'s)."""
        encoder = self._check_fitted()
        allowed_special = tiktoken_allowed(parse_special, allowed_special)
        allowed = self._specials.allowed(allowed_special)
        watched = allowed | self._specials.disallowed(allowed, disallowed_special)
        specials = special_regex(frozenset(watched)) if watched else None
        native = native_pattern_id(self.pattern, self.unicode)
        docs = list(text)

        def one(doc: str) -> list[int]:
            return self.encode(doc, allowed_special=allowed_special, disallowed_special=disallowed_special)

        def prepare(chunk: list[str], lengths: np.ndarray) -> tuple[str, np.ndarray, np.ndarray | None]:
            joined = "".join(chunk)
            return joined, lengths, docs_matching(specials, joined, lengths)

        def kernel(data: bytes, lengths: np.ndarray, skip: np.ndarray | None) -> tuple:
            tokens, offsets = encoder.encode_text_batch(data, lengths, code_point_classes(self.unicode), native, skip)
            return self._ids(tokens), offsets, skip

        workers = batch_workers(threads_argument(threads, num_threads=num_threads))
        try:
            lengths = text_lengths(docs)
        except TypeError:  # a text that is no str: encode says so
            return flat_ids([one(doc) for doc in docs])
        if native is None:  # the regex engine splits: per text
            return run_flat_chunks(docs, lengths, workers, lambda chunk, _: flat_ids(list(map(one, chunk))))
        cuttable = cuttable_unless(specials) if self.pattern in CUTTABLE_PATTERNS else None
        return run_flat_chunks(docs, lengths, workers,
                               lambda chunk, sizes: encode_chunk(chunk, sizes, prepare, kernel, one), cuttable)

    def encode_ordinary_batch(self, text: Sequence[str], *, threads: int | None = None,
                              num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode_ordinary` of every text (tiktoken's ``encode_ordinary_batch``), as
        :meth:`encode_batch` runs it."""
        return self.encode_batch(text, threads=threads, num_threads=num_threads, disallowed_special=())

    def _encode_segments(self, text: str, allowed: set[str]) -> list[int]:
        if not allowed:
            return self._chunk_ids(text)
        ids: list[int] = []
        for piece, special in self._specials.segments(text, allowed):
            if special:
                ids.append(self.special_tokens[piece])
            else:
                ids.extend(self._chunk_ids(piece))
        return ids

    def _chunk_ids(self, text: str) -> list[int]:
        """The ids of ``text`` holding no special token: the one-call kernel's where there is
        one (a text it refuses goes the encoder's way; lone surrogates raise UnicodeEncodeError)."""
        plain = self._plain
        if plain is None:
            plain = self._plain = self._plain_text_encoder()
        if plain:
            try:
                ids = plain(text)
            except ValueError:  # the encoder's way raises it as ours
                ids = None
            if ids is not None:
                return ids
            text.encode("utf-8")  # lone surrogates: UnicodeEncodeError, which encode handles as tiktoken does
        return self._ids(self._encode_chunk(text)).tolist()

    def _plain_text_encoder(self) -> Any:
        """The kernel's str -> ids call (``_ranked.TextEncoder``: special tokens as plain text)
        of a fitted tokenizer whose pattern the scanner splits; False where there is none."""
        native = native_pattern_id(self.pattern, self.unicode)
        if self._encoder is None or native is None:
            return False
        return self._encoder.text_encoder(code_point_classes(self.unicode), native,
                                          None if self._identity_ids else self.token_ids)

    def _check_text(self, text: Any) -> None:
        if not self._is_deferred("vocabulary"):  # (a file's tables are a fitted model: no encoder built to say so)
            self._check_fitted()
        if not isinstance(text, str):
            raise SymbolTypeError(f"`text` must be a str, not {type(text).__name__}")

    def _ids(self, tokens: np.ndarray) -> np.ndarray:
        return tokens if self._identity_ids else self.token_ids[tokens]

    def _encode_chunk(self, text: str) -> np.ndarray:
        """Vocabulary ids of text without special tokens, in one kernel call (the gpt2,
        cl100k, llama3 and o200k presets skip the regex engine: the kernel splits the UTF-8
        bytes itself)."""
        if not text:
            return np.empty(0, dtype=ID_DTYPE)
        native = native_pattern_id(self.pattern, self.unicode)
        if native is not None:
            return self._encoder.encode_text(text.encode("utf-8"), code_point_classes(self.unicode), native)  # type: ignore[union-attr]
        symbols, bounds = pretokenize(text, self.pattern, self.unicode)
        return self._encoder.encode_flat(symbols, bounds, whole_piece_shortcut=True)  # type: ignore[union-attr]

    def pretokenize(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The UTF-8 bytes of ``text`` (as ids) and the byte offsets of its pattern pieces
        (see :func:`~ubpe.text.scanner.pretokenize`); lone surrogates are replaced
        as in :meth:`encode`.

        >>> tok = ByteLevelBPE().fit(["ab ab"], n_tokens=257, pattern="gpt2", quiet=True)
        >>> symbols, bounds = tok.pretokenize("ab cd")
        >>> bytes(symbols.tolist()), bounds.tolist()
        (b'ab cd', [0, 2, 5])
        """
        self._check_text(text)
        try:
            return pretokenize(text, self.pattern, self.unicode)
        except UnicodeEncodeError:
            return pretokenize(without_surrogates(text), self.pattern, self.unicode)

    def _own_encodings(self, doc: str, top_n: int, options: dict[str, Any]) -> list[Encoding]:
        """The contract's default (``ranked``, no options): :meth:`encode` with every special
        token allowed, score 0. With options, ``ranked`` runs as any other encoder: on the
        text's pre-tokenized pieces over the byte-level vocabulary (special tokens are plain
        text there; scores are 0 for vocabularies without weights).

        >>> tok = ByteLevelBPE().fit(["ab ab ab"], n_tokens=258, pattern="gpt2", quiet=True)
        >>> tok.encode_with("ab ab"), tok.encode_with("ab ab", encoder="longest_prefix")
        ([([256, 257], 0.0)], [([256, 257], 0.0)])
        """
        if options:
            return super()._own_encodings(doc, top_n, options)
        if top_n != 1:
            raise InvalidParameterError("the byte-level encoder gives one encoding: top_n must be 1")
        return [(self.encode(doc, allowed_special="all"), 0.0)]

    def _encodings_by(self, encoder: Any, doc: str, top_n: int) -> list[Encoding]:
        symbols, bounds = self.pretokenize(doc)
        parts = [symbols[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
        return [(self.token_ids[tokens].tolist(), score) for tokens, score in encoder.encode(parts, top_n)]

    # -- decoding and lookups --------------------------------------------------------------

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of ``ids`` (special tokens as their UTF-8 text)."""
        self._check_fitted()
        ids = checked_ids(ids)
        for i in ids:  # no negative indexing: ids are ints that have bytes
            if i not in self._bytes_of:
                raise UnknownTokenError(f"token {i!r} is not in the vocabulary (ids 0..{self.n_vocab - 1})")
        return b"".join([self._bytes_of[i] for i in ids])

    def pieces(self, ids: Sequence[int]) -> list[bytes]:
        """The bytes of every id (special tokens as their UTF-8 text)."""
        return [self.decode_bytes([int(t)]) for t in ids]

    def piece_to_id(self, piece: str | bytes) -> int:
        """The id of a token by its bytes (a str is UTF-8 encoded): a mergeable token's rank,
        else a special token's id. Raises :class:`UnknownTokenError` if none has them."""
        self._check_fitted()
        data = piece.encode("utf-8") if isinstance(piece, str) else piece
        if data in self._rank_of:
            return self._rank_of[data]
        for text, token in sorted(self.special_tokens.items(), key=lambda item: item[1]):
            if text.encode("utf-8") == data:
                return token
        raise UnknownTokenError(f"no token stands for {piece!r}")

    def describe(self) -> dict[str, Any]:
        """Sizes, pattern and special tokens, one line each (what ``ubpe inspect`` prints)."""
        self._check_fitted()
        return {
            "vocabulary": f"{self.n_vocab} ids: 256 bytes + {self.vocabulary.n_merged} merged tokens "  # type: ignore[union-attr]
                          f"+ {len(self.special_tokens)} special",
            "pattern": self.pattern,
            "special tokens": ", ".join(sorted(self.special_tokens)) or "none",
        }

    def inventory(self) -> Inventory:
        """Every rank and special id with its bytes and recorded merge, in rank ids."""
        ranks = self.mergeable_ranks()
        ids = sorted(ranks.values()) + sorted(self.special_tokens.values())
        pieces = {rank: piece for piece, rank in ranks.items()}
        pieces.update({t: text.encode("utf-8") for text, t in self.special_tokens.items()})
        vocab = self.vocabulary
        return Inventory(
            ids, pieces,
            merges=vocab.recorded_merges(self.token_ids),  # type: ignore[union-attr]
            base={int(self.token_ids[b]) for b in range(N_BYTES)},
            lengths={t: len(pieces[t]) for t in ids},
        )

    # -- files (see ubpe.io) ---------------------------------------------------------------

    def save_tiktoken(self, path: str | os.PathLike) -> None:
        """Write the mergeable tokens as a ``.tiktoken`` file: ``base64(bytes) rank`` per
        line, by rank. The pattern and the special tokens are not part of the format."""
        file_formats().save(self, path, format="tiktoken")

    @classmethod
    def load_tiktoken(
        cls,
        path: str | os.PathLike,
        *,
        pattern: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
    ) -> ByteLevelBPE:
        """Read a ``.tiktoken`` file (e.g. ``cl100k_base.tiktoken``) with the pattern and
        special tokens that go with it (the file holds neither). Without ``pattern``, a
        published file takes its encoding's pattern and any other cl100k, with a warning
        (see :mod:`ubpe.io.tiktoken`)."""
        return file_formats().load(path, format="tiktoken", pattern=pattern, special_tokens=special_tokens)

    def __repr__(self) -> str:
        if self.vocabulary is None:
            return "ByteLevelBPE(unfitted)"
        return f"ByteLevelBPE(n_vocab={self.n_vocab}, special_tokens={len(self.special_tokens)})"

