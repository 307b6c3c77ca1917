"""Byte-level BPE on text, token for token identical to tiktoken on the same vocabulary.

Text is cut into pieces by a regex (the *pattern*), each piece becomes its UTF-8 bytes, and
the bytes are merged by :mod:`ubpe.ranked` - standard BPE inference, lowest rank first. Ids
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
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import AbstractSet, Literal

import numpy as np
import regex

from ..errors import (
    DisallowedSpecialTokenError,
    InvalidParameterError,
    ModelFormatError,
    NotFittedError,
    SymbolTypeError,
    UnknownTokenError,
)
from ..fit import corpus_parts, fit_vocabulary
from ..encoders.ranked import RankedEncoder
from ..io.files import parse_json, read_text, unwrap_body, wrap_body, write_atomically
from ..splitting import SplitBatch
from ..vocabulary import ID_DTYPE, Vocabulary
from .patterns import (
    DEFAULT_PATTERN,
    NATIVE_PATTERNS,
    PATTERNS,
    UTF8_WIDTH_STEPS,
    code_point_classes,
    resolve_pattern,
    without_surrogates,
)

N_BYTES = 256
# tiktoken ranks are u32, our ids 31-bit
MAX_RANK = 2**31 - 2


@functools.lru_cache(maxsize=64)
def _special_regex(tokens: frozenset[str]) -> regex.Pattern:
    # longest first, so that of two specials starting at one place the longer wins
    return regex.compile("|".join(regex.escape(t) for t in sorted(tokens, key=lambda t: (-len(t), t))))


def _check_special_tokens(special_tokens: Mapping[str, int], taken: int) -> dict[str, int]:
    specials = {}
    for text, token in special_tokens.items():
        if not isinstance(text, str) or not text:
            raise InvalidParameterError(f"special tokens must be non-empty str, got {text!r}")
        if isinstance(token, bool) or not isinstance(token, (int, np.integer)) or not 0 <= token <= MAX_RANK:
            raise InvalidParameterError(f"special token {text!r} has an invalid id {token!r}")
        specials[text] = int(token)
    ids = list(specials.values())
    if len(set(ids)) != len(ids):
        raise InvalidParameterError("two special tokens share an id")
    return specials


class ByteLevelBPE:
    """A byte-level BPE text tokenizer (tiktoken's model) fitted with ubpe's fit kernel.

    Build one with :meth:`fit`, :meth:`from_mergeable_ranks` or :meth:`load_tiktoken`.

    >>> tok = ByteLevelBPE().fit(["hello hello hello"], n_tokens=260, quiet=True)
    >>> ids = tok.encode("hello")
    >>> tok.decode(ids), len(ids) < len("hello")
    ('hello', True)
    """

    def __init__(self) -> None:
        self.vocabulary: Vocabulary | None = None
        self.pattern: str = PATTERNS[DEFAULT_PATTERN]
        self.special_tokens: dict[str, int] = {}
        # vocabulary id -> tiktoken rank (the id encode returns), and its inverse
        self.token_ids: np.ndarray = np.arange(N_BYTES, dtype=np.int64)
        self._encoder: RankedEncoder | None = None
        self._regex = regex.compile(self.pattern)
        self._bytes_of: list[bytes | None] = []
        self._special_ids: set[int] = set()

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
        :mod:`ubpe.dask`). Each text is a document; its pre-tokenized pieces are the parts that pairs never
        cross. Special tokens are cut out of the texts before fitting and get ids after the
        mergeable tokens (in the order given) unless a mapping fixes their ids. Token ids are
        the creation order, cut at ``n_tokens`` (fitting may overshoot within its last round);
        no idf rearrangement happens. Returns ``self``.
        """
        if isinstance(n_tokens, bool) or not isinstance(n_tokens, int):
            raise InvalidParameterError(f"`n_tokens` must be an int, not {type(n_tokens).__name__}")
        if not N_BYTES <= n_tokens <= MAX_RANK:
            raise InvalidParameterError(f"`n_tokens` must be in {N_BYTES}..{MAX_RANK}, got {n_tokens}")
        if isinstance(texts, str):
            raise SymbolTypeError("`texts` must be an iterable of str, not one str")
        pat_str = resolve_pattern(pattern)
        if isinstance(special_tokens, str):
            raise SymbolTypeError("`special_tokens` must be a collection of str, not one str")
        names = list(special_tokens)
        splitter = regex.compile(pat_str)
        cut_specials = _special_regex(frozenset(names)) if names else None
        split = functools.partial(_split_texts, splitter=splitter, cut_specials=cut_specials)
        fitted = fit_vocabulary(
            corpus_parts(texts, split, empty_message="fit needs at least one text"),
            n_base=N_BYTES,
            n_tokens=n_tokens - 1,  # the fit loop stops once the largest id reaches this
            n_candidates=n_candidates,
            quiet=quiet,
            description="fit byte-level",
            unique_pieces=True,
        )
        vocabulary = _first_tokens(fitted, n_tokens - N_BYTES)
        if isinstance(special_tokens, Mapping):
            specials = dict(special_tokens)
        else:  # ids right after the mergeable tokens
            specials = {name: len(vocabulary) + i for i, name in enumerate(names)}
        self._install(vocabulary, np.arange(len(vocabulary), dtype=np.int64), pat_str, specials)
        return self

    @classmethod
    def from_mergeable_ranks(
        cls,
        mergeable_ranks: Mapping[bytes, int],
        *,
        pattern: str = DEFAULT_PATTERN,
        special_tokens: Mapping[str, int] | None = None,
    ) -> ByteLevelBPE:
        """A tokenizer from tiktoken's ``mergeable_ranks`` (``bytes -> rank``).

        Every single byte must have a rank. Merge priority is the rank; ranks need not be
        contiguous nor start at 0, and they are the ids that ``encode`` returns.
        """
        byte_ranks = np.full(N_BYTES, -1, dtype=np.int64)
        merged: list[tuple[int, bytes]] = []
        seen_ranks: set[int] = set()
        for piece, rank in mergeable_ranks.items():
            if not isinstance(piece, bytes) or not piece:
                raise ModelFormatError(f"a mergeable token must be non-empty bytes, got {piece!r}")
            if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 0 <= rank <= MAX_RANK:
                raise ModelFormatError(f"token {piece!r} has an invalid rank {rank!r}")
            if rank in seen_ranks:
                raise ModelFormatError(f"rank {rank} is given to two tokens")
            seen_ranks.add(int(rank))
            if len(piece) == 1:
                byte_ranks[piece[0]] = rank
            else:
                merged.append((int(rank), piece))
        missing = np.flatnonzero(byte_ranks < 0)
        if len(missing):
            raise ModelFormatError(
                f"{len(missing)} single bytes have no rank (e.g. {bytes([missing[0]])!r}); "
                "byte-level BPE needs all 256"
            )
        merged.sort()
        pieces = [list(piece) for _, piece in merged]
        vocabulary = Vocabulary.from_pieces(
            N_BYTES,
            pieces,
            np.zeros(len(pieces)),
            ranks=np.arange(len(pieces), dtype=np.int64),  # rank order is creation order
        )
        token_ids = np.concatenate([byte_ranks, np.array([r for r, _ in merged], dtype=np.int64)])
        tok = cls()
        tok._install(vocabulary, token_ids, resolve_pattern(pattern), dict(special_tokens or {}))
        return tok

    def _install(
        self,
        vocabulary: Vocabulary,
        token_ids: np.ndarray,
        pattern: str,
        special_tokens: Mapping[str, int],
    ) -> None:
        specials = _check_special_tokens(special_tokens, len(vocabulary))
        clash = set(specials.values()) & set(token_ids.tolist())
        if clash:
            raise InvalidParameterError(f"special token ids {sorted(clash)[:5]} are mergeable tokens")
        self.vocabulary = vocabulary
        self.token_ids = np.asarray(token_ids, dtype=np.int64)
        self.pattern = pattern
        self._regex = regex.compile(pattern)
        self.special_tokens = specials
        self._special_ids = set(specials.values())
        self._encoder = RankedEncoder(vocabulary, priority="rank")
        self._identity_ids = bool(np.array_equal(self.token_ids, np.arange(len(vocabulary))))
        # rank -> bytes for decoding; None marks ranks no token has
        n_vocab = self.n_vocab
        bytes_of: list[bytes | None] = [None] * n_vocab
        pieces = vocabulary.pieces()
        for token, rank in enumerate(self.token_ids.tolist()):
            bytes_of[rank] = bytes([token]) if token < N_BYTES else bytes(pieces[token])
        for text, token in specials.items():
            bytes_of[token] = text.encode("utf-8")
        self._bytes_of = bytes_of

    # -- properties ------------------------------------------------------------------------

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
        self._check_fitted()
        if not isinstance(text, str):
            raise SymbolTypeError(f"`text` must be a str, not {type(text).__name__}")
        try:
            return self._ids(self._encode_chunk(text)).tolist()
        except UnicodeEncodeError:
            return self._ids(self._encode_chunk(without_surrogates(text))).tolist()

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Ids of ``text`` (tiktoken's ``Encoding.encode``).

        Special tokens in ``allowed_special`` become their ids; by default (``"all"``) any
        other special token in the text raises :class:`DisallowedSpecialTokenError`; those
        in neither set are encoded as plain text. Among allowed specials that start at the
        same place the longest wins.
        """
        self._check_fitted()
        if not isinstance(text, str):
            raise SymbolTypeError(f"`text` must be a str, not {type(text).__name__}")
        allowed = self.special_tokens_set if allowed_special == "all" else set(allowed_special)
        unknown = allowed - self.special_tokens_set
        if unknown:
            raise InvalidParameterError(f"{sorted(unknown)[:3]} are not special tokens of this tokenizer")
        if disallowed_special == "all":
            disallowed = self.special_tokens_set - allowed
        else:
            disallowed = set(disallowed_special)
        if disallowed:
            found = _special_regex(frozenset(disallowed)).search(text)
            if found:
                raise DisallowedSpecialTokenError(
                    f"the text holds the disallowed special token {found.group()!r}; pass it in "
                    "`allowed_special` to encode it as a special token, or exclude it from "
                    "`disallowed_special` (e.g. `disallowed_special=()`) to encode it as text"
                )
        try:
            return self._encode_with_specials(text, allowed)
        except UnicodeEncodeError:
            return self._encode_with_specials(without_surrogates(text), allowed)

    def _encode_with_specials(self, text: str, allowed: set[str]) -> list[int]:
        if not allowed:
            return self._ids(self._encode_chunk(text)).tolist()
        chunks: list[list[int]] = []
        start = 0
        for found in _special_regex(frozenset(allowed)).finditer(text):
            chunks.append(self._ids(self._encode_chunk(text[start : found.start()])).tolist())
            chunks.append([self.special_tokens[found.group()]])
            start = found.end()
        chunks.append(self._ids(self._encode_chunk(text[start:])).tolist())
        return [token for chunk in chunks for token in chunk]

    def _ids(self, tokens: np.ndarray) -> np.ndarray:
        return tokens if self._identity_ids else self.token_ids[tokens]

    def _encode_chunk(self, text: str) -> np.ndarray:
        """Vocabulary ids of text without special tokens, in one kernel call.

        The regex pieces of the presets tile the text, so their byte bounds follow from
        their lengths in characters and the UTF-8 width of every character; the text is
        encoded to UTF-8 once. A pattern that leaves characters unmatched drops them, as
        tiktoken does. The gpt2, cl100k and llama3 presets skip the regex engine: the kernel
        splits the UTF-8 bytes itself. Raises UnicodeEncodeError on lone surrogates.
        """
        if not text:
            return np.empty(0, dtype=ID_DTYPE)
        native = NATIVE_PATTERNS.get(self.pattern)
        if native is not None:
            return self._encoder.encode_text(text.encode("utf-8"), code_point_classes(), native)  # type: ignore[union-attr]
        pieces = self._regex.findall(text)
        char_lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        data = text.encode("utf-8")
        bounds = np.zeros(len(pieces) + 1, dtype=np.int64)
        if int(char_lengths.sum()) == len(text):
            np.cumsum(char_lengths, out=bounds[1:])
            if len(data) != len(text):  # not ASCII: character offsets -> byte offsets
                code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
                widths = 1 + np.searchsorted(UTF8_WIDTH_STEPS, code_points, side="right")
                byte_offsets = np.zeros(len(text) + 1, dtype=np.int64)
                np.cumsum(widths, out=byte_offsets[1:])
                bounds = byte_offsets[bounds]
        else:
            encoded = [piece.encode("utf-8") for piece in pieces]
            data = b"".join(encoded)
            np.cumsum([len(e) for e in encoded], out=bounds[1:])
        symbols = np.frombuffer(data, dtype=np.uint8).astype(ID_DTYPE)
        return self._encoder.encode_flat(symbols, bounds, whole_piece_shortcut=True)  # type: ignore[union-attr]

    # -- decoding --------------------------------------------------------------------------

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of ``ids`` (special tokens as their UTF-8 text)."""
        self._check_fitted()
        try:
            parts = [self._bytes_of[i] for i in ids]
            return b"".join(parts)  # type: ignore[arg-type]
        except (IndexError, TypeError):
            bad = next(
                (i for i in ids if not isinstance(i, (int, np.integer)) or not 0 <= i < len(self._bytes_of)
                 or self._bytes_of[i] is None),
                None,
            )
            raise UnknownTokenError(f"token {bad!r} is not in the vocabulary") from None

    def decode(self, ids: Sequence[int], errors: str = "replace") -> str:
        """The text of ``ids``; bytes that are not valid UTF-8 follow ``errors``."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    # -- our model format -------------------------------------------------------------------

    variant = "bytelevel"

    def to_json(self) -> str:
        """The tokenizer in our versioned, checksummed format: pattern, specials, ranks."""
        ranks = sorted(self.mergeable_ranks().items(), key=lambda item: item[1])
        return wrap_body({
            "variant": self.variant,
            "pattern": self.pattern,
            "special_tokens": dict(self.special_tokens),
            "mergeable_ranks": [[base64.b64encode(piece).decode("ascii"), rank] for piece, rank in ranks],
        })

    def save(self, path: str | os.PathLike) -> None:
        """Write the tokenizer to ``path`` atomically (see :meth:`to_json`)."""
        write_atomically(path, self.to_json())

    @classmethod
    def from_json(cls, text: str, *, what: str = "the model") -> ByteLevelBPE:
        body = unwrap_body(parse_json(text, what), what)
        if body.get("variant") != cls.variant:
            raise ModelFormatError(f"{what} holds a {body.get('variant')} model, not a byte-level one")
        try:
            lines = "\n".join(f"{piece} {rank}" for piece, rank in body["mergeable_ranks"])
            pattern, specials = body["pattern"], body.get("special_tokens") or {}
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"{what} is malformed: {exc}") from None
        return cls.from_mergeable_ranks(parse_tiktoken(lines, what), pattern=pattern, special_tokens=specials)

    @classmethod
    def load(cls, path: str | os.PathLike) -> ByteLevelBPE:
        """A tokenizer from a file written by :meth:`save`."""
        return cls.from_json(read_text(path), what=str(path))

    # -- .tiktoken files -------------------------------------------------------------------

    def save_tiktoken(self, path: str | os.PathLike) -> None:
        """Write the mergeable tokens as a ``.tiktoken`` file: ``base64(bytes) rank`` per
        line, by rank. The pattern and the special tokens are not part of the format."""
        ranks = self.mergeable_ranks()
        lines = [
            f"{base64.b64encode(piece).decode('ascii')} {rank}\n"
            for piece, rank in sorted(ranks.items(), key=lambda item: item[1])
        ]
        write_atomically(path, "".join(lines))

    @classmethod
    def load_tiktoken(
        cls,
        path: str | os.PathLike,
        *,
        pattern: str = DEFAULT_PATTERN,
        special_tokens: Mapping[str, int] | None = None,
    ) -> ByteLevelBPE:
        """Read a ``.tiktoken`` file (e.g. ``cl100k_base.tiktoken``) with the pattern and
        special tokens that go with it (the file holds neither)."""
        try:
            text = Path(path).read_text(encoding="ascii")
        except UnicodeDecodeError as exc:
            raise ModelFormatError(f"{path} is not a .tiktoken file (not ASCII): {exc}") from None
        return cls.from_mergeable_ranks(
            parse_tiktoken(text, str(path)), pattern=pattern, special_tokens=special_tokens
        )

    def __repr__(self) -> str:
        if self.vocabulary is None:
            return "ByteLevelBPE(unfitted)"
        return f"ByteLevelBPE(n_vocab={self.n_vocab}, special_tokens={len(self.special_tokens)})"


def parse_tiktoken(text: str, where: str = "<string>") -> dict[bytes, int]:
    """``bytes -> rank`` from the lines of a ``.tiktoken`` file; blank lines are skipped."""
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ModelFormatError(f"{where}:{number}: expected 'base64 rank', got {line[:80]!r}")
        encoded, rank = fields
        try:
            piece = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ModelFormatError(f"{where}:{number}: {encoded[:40]!r} is not base64") from None
        if not rank.isdigit():
            raise ModelFormatError(f"{where}:{number}: rank {rank[:20]!r} is not a non-negative integer")
        if piece in ranks:
            raise ModelFormatError(f"{where}:{number}: token {piece!r} appears twice")
        ranks[piece] = int(rank)
    return ranks


def _split_texts(
    texts: list[str], first_doc: int = 0, *, splitter: regex.Pattern, cut_specials: regex.Pattern | None
) -> SplitBatch:
    """:func:`_split_corpus` after checking that every text is a str (``texts`` may be one
    chunk of a streamed corpus, ``first_doc`` its first document's index)."""
    for text in texts:
        if not isinstance(text, str):
            raise SymbolTypeError(f"every text must be a str, got {type(text).__name__}")
    return _split_corpus(texts, splitter, cut_specials)


def _split_corpus(
    texts: list[str], splitter: regex.Pattern, cut_specials: regex.Pattern | None
) -> SplitBatch:
    """Every text's pre-tokenized pieces as the parts of one document, in UTF-8 bytes."""
    chunks: list[bytes] = []
    piece_lengths: list[int] = []
    pieces_per_doc = np.zeros(len(texts) + 1, dtype=np.int64)
    for d, text in enumerate(texts):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = without_surrogates(text)
        segments = cut_specials.split(text) if cut_specials is not None else [text]
        count = 0
        for segment in segments:
            encoded = [piece.encode("utf-8") for piece in splitter.findall(segment)]
            chunks.extend(encoded)
            piece_lengths.extend(map(len, encoded))
            count += len(encoded)
        pieces_per_doc[d + 1] = count
    part_offsets = np.zeros(len(piece_lengths) + 1, dtype=np.int64)
    np.cumsum(piece_lengths, out=part_offsets[1:])
    return SplitBatch(
        tokens=np.frombuffer(b"".join(chunks), dtype=np.uint8).astype(ID_DTYPE),
        part_offsets=part_offsets,
        part_is_separator=np.zeros(len(piece_lengths), dtype=bool),
        doc_part_offsets=np.cumsum(pieces_per_doc),
    )


def _first_tokens(vocabulary: Vocabulary, n_merged: int) -> Vocabulary:
    """The first ``n_merged`` tokens in creation order (later ones are built only from
    earlier ones, so the cut is a vocabulary of its own)."""
    n = min(n_merged, vocabulary.n_merged)
    end = int(vocabulary.piece_offsets[n])
    return Vocabulary(
        vocabulary.n_base,
        vocabulary.merges[:n],
        vocabulary.piece_offsets[: n + 1],
        vocabulary.piece_symbols[:end],
        vocabulary.weights[:n],
        vocabulary.ranks[:n],
    )
