"""``UBPE`` and ``UBPEClassic``: drop-in replacements for ubpe 0.3.0's tokenizers.

Same constructor, ``fit``, ``rearrange_tokens``, ``dumps``/``loads`` and attributes
(``alphabet``, ``tokens_mapper``, ``tokens_weights``...) as the reference, producing the same
vocabularies; on top, ``vocabulary`` (both views of every token plus creation ranks) and
``save``/``load`` in a versioned format.

>>> tok = UBPE(alphabet="ab", n_tokens=4)
>>> tok.fit(["abab", "abba"], quiet=True)
>>> tok.tokens_mapper["backward"]
{2: (0, 1, 1), 3: (0, 1, 0, 1)}
>>> tok.decode([3, 1]), tok.decode([])
('ababb', '')
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import numpy as np

from .alphabet import Alphabet
from .errors import (
    AlreadyFittedError,
    InvalidParameterError,
    ModelFormatError,
    NotFittedError,
    SymbolTypeError,
    UnknownTokenError,
)
from .encoders import Encoder, make_encoder
from .fit import check_n_candidates, corpus_parts, fit_vocabulary
from .io.files import (
    decode_symbol,
    encode_symbol,
    infer_symbol_type,
    parse_json,
    read_text,
    unwrap_body,
    vocabulary_from_json,
    vocabulary_to_json,
    wrap_body,
    write_atomically,
)
from .splitting import SplitMode, SplitPipeline, normalize_known_words
from .vocabulary import Vocabulary

DEFAULT_N_TOKENS = 2**10
UNIVERSAL, CLASSIC = "universal", "classic"
# encode_batch: documents per task handed to a thread (amortises the pool's overhead)
BATCH_CHUNK = 64


class UBPEBase:
    """What both tokenizers share: configuration, fitting, encoding, decoding, model files."""

    variant: ClassVar[str]
    default_encoder: ClassVar[str]

    def __init__(
        self,
        *,
        alphabet: Any = None,
        n_tokens: int = DEFAULT_N_TOKENS,
        known_words: Any = None,
        break_tokens: Iterable[Any] | None = None,
        regex_str: str | None = None,
        stop_tokens: Iterable[Any] | None = None,
    ):
        if alphabet is None:
            raise SymbolTypeError("`alphabet` must be given (or load a fitted model with `loads`)")
        self._configure(Alphabet.from_spec(alphabet), known_words, break_tokens, regex_str, stop_tokens)
        self.n_tokens = self._check_n_tokens(n_tokens)
        self._vocabulary: Vocabulary | None = None
        self._views: dict[str, Any] = {}

    def _configure(self, alphabet, known_words, break_tokens, regex_str, stop_tokens) -> None:
        self._alphabet = alphabet
        self._known_words = normalize_known_words(known_words, alphabet)
        self.split_pipeline = SplitPipeline(
            alphabet,
            known_words=self._known_words,
            break_tokens=break_tokens,
            regex_str=regex_str,
            stop_tokens=stop_tokens,
        )

    def _check_n_tokens(self, n_tokens: Any) -> int:
        if isinstance(n_tokens, bool) or not isinstance(n_tokens, (int, np.integer)):
            raise InvalidParameterError(f"`n_tokens` must be an int, not {type(n_tokens).__name__}")
        n_tokens = int(n_tokens)
        if n_tokens <= self.n_base:
            raise InvalidParameterError(
                f"`n_tokens` ({n_tokens}) must be larger than the alphabet and known words "
                f"together ({self.n_base})"
            )
        return n_tokens

    # -- the reference's attributes ---------------------------------------------------------

    @property
    def n_base(self) -> int:
        """Ids below this are alphabet symbols and known words."""
        return len(self._alphabet) + (len(self._known_words) if self._known_words else 0)

    @property
    def alphabet(self) -> dict[Any, int]:
        return self._alphabet.as_dict()

    @property
    def inverse_alphabet(self) -> dict[int, Any]:
        return dict(enumerate(self._alphabet.symbols))

    @property
    def known_words(self) -> dict[Any, int] | None:
        return dict(self._known_words) if self._known_words else None

    @property
    def inverse_known_words(self) -> dict[int, Any] | None:
        return {i: w for w, i in self._known_words.items()} if self._known_words else None

    @property
    def break_tokens(self) -> set[Any] | None:
        tokens = self.split_pipeline.break_tokens
        return set(tokens) if tokens else None

    @property
    def stop_tokens(self) -> set[Any] | None:
        tokens = self.split_pipeline.stop_tokens
        return set(tokens) if tokens else None

    @property
    def regex_str(self) -> str | None:
        return self.split_pipeline.regex_str

    @property
    def vocabulary(self) -> Vocabulary:
        """The fitted vocabulary (raises :class:`NotFittedError` before ``fit``)."""
        if self._vocabulary is None:
            raise NotFittedError("the tokenizer is not fitted: call `fit` or load a model")
        return self._vocabulary

    @property
    def is_fitted(self) -> bool:
        return self._vocabulary is not None

    def _mapping(self) -> dict[int, tuple[int, ...]]:
        raise NotImplementedError

    @property
    def tokens_mapper(self) -> dict[str, dict]:
        """``{"backward": token -> tuple, "forward": tuple -> token}`` as in the reference."""
        if self._vocabulary is None:
            return {"backward": {}, "forward": {}}
        if "mapper" not in self._views:
            backward = self._mapping()
            self._views["mapper"] = {
                "backward": backward,
                "forward": {seq: token for token, seq in backward.items()},
            }
        return self._views["mapper"]

    @property
    def tokens_weights(self) -> dict[int, float]:
        if self._vocabulary is None:
            return {}
        return self._vocabulary.weight_of()

    def _set_vocabulary(self, vocabulary: Vocabulary) -> None:
        self._vocabulary = vocabulary
        self._views = {}
        self.n_tokens = len(vocabulary)

    # -- fitting ----------------------------------------------------------------------------

    def fit(
        self,
        corpus: Sequence[Any],
        *,
        n_candidates: int = 50,
        rearrange_tokens: bool = True,
        quiet: bool = False,
        split_mode: SplitMode = SplitMode.FULL,
    ) -> None:
        """Fit the vocabulary on ``corpus`` (a list of documents), as ubpe 0.3.0 does.

        ``corpus`` may also be any iterable of documents (streamed chunk by chunk: memory
        stays bounded by the distinct parts) or a Dask bag or series (counted on its cluster,
        see :mod:`ubpe.dask`); the vocabulary is the same as for the list of those documents.

        Each round takes up to ``n_candidates`` of the most frequent pairs that can be merged
        together; with ``rearrange_tokens`` the result is sorted by weight and trimmed to
        ``n_tokens``. A progress bar shows on stderr unless ``quiet``.
        """
        if self._vocabulary is not None:
            raise AlreadyFittedError("the tokenizer can be fitted only once")
        check_n_candidates(n_candidates)
        split = functools.partial(self.split_pipeline.split_batch, mode=split_mode)
        vocabulary = fit_vocabulary(
            corpus_parts(corpus, split),
            n_base=self.n_base,
            n_tokens=self.n_tokens,
            n_candidates=n_candidates,
            quiet=quiet,
            description=f"{type(self).__name__}.fit",
        )
        if rearrange_tokens and vocabulary.n_merged:
            vocabulary = vocabulary.rearranged(self.n_tokens, classic=self.variant == CLASSIC)
        self._set_vocabulary(vocabulary)

    def rearrange_tokens(self, *, n_tokens: int | None = None, quiet: bool = False) -> None:
        """Sort tokens by weight and trim the vocabulary to ``n_tokens`` ids (default: all)."""
        vocabulary = self.vocabulary
        if n_tokens is None:
            n_tokens = self.n_tokens
        elif isinstance(n_tokens, bool) or not isinstance(n_tokens, (int, np.integer)) or n_tokens < 1:
            raise InvalidParameterError(f"`n_tokens` must be a positive int, got {n_tokens!r}")
        self._set_vocabulary(vocabulary.rearranged(int(n_tokens), classic=self.variant == CLASSIC))

    # -- encoding ---------------------------------------------------------------------------

    def encoder(self, name: str | None = None, **options: Any) -> Encoder:
        """The encoder ``name`` (default: this tokenizer's own) on the fitted vocabulary.

        Encoders are built once per name and options and then reused."""
        name = name or self.default_encoder
        try:
            key = ("encoder", name, tuple(sorted(options.items())))
            hash(key)
        except TypeError:  # an unhashable option (an array of weights): build, don't cache
            return make_encoder(name, self.vocabulary, **options)
        if key not in self._views:
            self._views[key] = make_encoder(name, self.vocabulary, **options)
        return self._views[key]

    def encode(
        self,
        doc: Any,
        *,
        split_mode: SplitMode = SplitMode.FULL,
        top_n: int = 1,
        encoder: str | None = None,
        **options: Any,
    ) -> list[tuple[list[int], float]]:
        """``[(tokens, score)]`` for ``doc``, best first (``top_n`` of them where supported).

        ``doc`` is a str, list, tuple or 1-D numpy array of symbols; ``encoder`` picks an
        encoder by name (see :func:`ubpe.encoders.available_encoders`), ``options`` go to it.
        """
        chosen = self.encoder(encoder, **options)
        return chosen.encode(self.split_pipeline.split(doc, mode=split_mode).parts(0), top_n)

    def encode_batch(
        self,
        docs: Sequence[Any],
        *,
        split_mode: SplitMode = SplitMode.FULL,
        top_n: int = 1,
        encoder: str | None = None,
        n_threads: int | None = None,
        **options: Any,
    ) -> list[list[tuple[list[int], float]]]:
        """:meth:`encode` for many documents; the kernels run without the GIL on threads."""
        from concurrent.futures import ThreadPoolExecutor

        chosen = self.encoder(encoder, **options)
        batch = self.split_pipeline.split_batch(list(docs), mode=split_mode)

        def run(first: int) -> list[list[tuple[list[int], float]]]:
            last = min(first + BATCH_CHUNK, batch.n_docs)
            return [chosen.encode(batch.parts(d), top_n) for d in range(first, last)]

        starts = range(0, batch.n_docs, BATCH_CHUNK)
        workers = n_threads or min(len(starts), os.cpu_count() or 1) or 1
        if not chosen.deterministic:  # a sampling encoder's stream must not depend on threads
            workers = 1
        if workers == 1:
            return [e for first in starts for e in run(first)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return [e for chunk in pool.map(run, starts) for e in chunk]

    def encode_to_numpy(self, doc: Any, **options: Any) -> np.ndarray:
        """The best encoding of ``doc`` as an int32 array (``encode(doc, **options)[0][0]``)."""
        return np.asarray(self.encode(doc, **options)[0][0], dtype=np.int32)

    # -- vocabulary lookups -----------------------------------------------------------------

    def __len__(self) -> int:
        """How many ids the vocabulary has (alphabet, known words and merged tokens)."""
        return len(self.vocabulary)

    @property
    def n_vocab(self) -> int:
        return len(self.vocabulary)

    def id_to_piece(self, token: int) -> Any:
        """What ``token`` stands for: a str for text alphabets, else a list of symbols."""
        return self.decode([token])

    def piece_to_id(self, piece: Any) -> int:
        """The id whose piece is ``piece`` (a str, or a sequence of symbols); the lowest id
        when several tokens share it. Raises :class:`UnknownTokenError` if none does."""
        if "piece_ids" not in self._views:
            index: dict[Any, int] = {}
            for token, value in enumerate(self._decode_table()):
                index.setdefault(value if isinstance(value, str) else tuple(value), token)
            self._views["piece_ids"] = index
        key = piece if isinstance(piece, str) else tuple(piece)
        try:
            return self._views["piece_ids"][key]
        except (KeyError, TypeError):
            raise UnknownTokenError(f"no token stands for {piece!r}") from None

    # -- decoding ---------------------------------------------------------------------------

    def _decode_table(self) -> list[Any]:
        """For every id, what it decodes to: a str for text alphabets, else a list."""
        if "decode" not in self._views:
            vocabulary = self.vocabulary
            symbols = self._alphabet.symbols
            text = self._alphabet.symbol_type is str
            table: list[Any] = list(symbols) if text else [[s] for s in symbols]
            for word, _ in sorted(self._known_words.items(), key=lambda item: item[1]) if self._known_words else []:
                table.append(word if text and isinstance(word, str) else list(word))
            bounds = vocabulary.piece_offsets.tolist()
            flat = vocabulary.piece_symbols.tolist()
            for t in range(vocabulary.n_merged):
                piece = [symbols[i] for i in flat[bounds[t] : bounds[t + 1]]]
                table.append("".join(piece) if text else piece)
            self._views["decode"] = table
        return self._views["decode"]

    def decode(self, tokens: Iterable[int]) -> Any:
        """The document that ``tokens`` encode: a str for text alphabets, else a list.

        ``decode([])`` is the empty document; an id outside the vocabulary raises
        :class:`UnknownTokenError`.
        """
        table = self._decode_table()
        if isinstance(tokens, np.ndarray):
            tokens = tokens.tolist()
        elif isinstance(tokens, (str, bytes)) or not isinstance(tokens, Iterable):
            raise SymbolTypeError(f"tokens must be a sequence of ints, not {type(tokens).__name__}")
        pieces = []
        size = len(table)
        for token in tokens:
            if isinstance(token, bool) or not isinstance(token, (int, np.integer)):
                raise SymbolTypeError(f"token ids must be ints, got {token!r}")
            if not 0 <= token < size:
                raise UnknownTokenError(f"token {token} is not in the vocabulary (ids 0..{size - 1})")
            pieces.append(table[token])
        if self._alphabet.symbol_type is str:
            return "".join(pieces)
        return [s for piece in pieces for s in piece]

    def decode_batch(self, batch: Iterable[Iterable[int]]) -> list[Any]:
        """:meth:`decode` of every token list in ``batch``."""
        return [self.decode(tokens) for tokens in batch]

    # -- reference JSON ---------------------------------------------------------------------

    def dumps(self) -> str:
        """The model as ubpe 0.3.0's JSON (loadable by the reference's ``loads``)."""
        import json

        bad = [s for s in self._alphabet.symbols[:1] if not isinstance(s, (str, int, float))]
        if bad:
            raise ModelFormatError(
                f"ubpe 0.3.0's JSON cannot hold {type(bad[0]).__name__} symbols; use `save` instead"
            )
        model: dict[str, Any] = {"n_tokens": self.n_tokens, "alphabet": self.alphabet}
        if self._known_words:
            model["known_words"] = {
                i: (w if isinstance(w, str) else list(w)) for w, i in self._known_words.items()
            }
        if self.split_pipeline.break_tokens:
            model["break_tokens"] = sorted(self.split_pipeline.break_tokens)
        if self.regex_str:
            model["regex_str"] = self.regex_str
        if self.split_pipeline.stop_tokens:
            model["stop_tokens"] = sorted(self.split_pipeline.stop_tokens)
        model["mapper"] = self.tokens_mapper["backward"]
        model["weights"] = self.tokens_weights
        return json.dumps(model)

    @classmethod
    def loads(cls, dump: str, token_type: type | None = None):
        """A tokenizer from ubpe 0.3.0's JSON; ``token_type`` is inferred when not given."""
        model = parse_json(dump, "the model")
        if not isinstance(model, dict) or not isinstance(model.get("alphabet"), dict):
            raise ModelFormatError("the model has no `alphabet` object")
        for field in ("mapper", "weights"):
            if not isinstance(model.get(field), dict):
                raise ModelFormatError(f"the model has no `{field}` object")
        if token_type is None:
            token_type = infer_symbol_type(model)
        try:
            alphabet = Alphabet.from_spec({token_type(k): v for k, v in model["alphabet"].items()})
        except (ValueError, TypeError) as exc:
            raise ModelFormatError(f"the model's alphabet does not fit token_type {token_type.__name__}: {exc}") from None
        known_words = None
        if model.get("known_words"):
            try:
                known_words = {
                    (w if isinstance(w, str) else tuple(w)): int(i) for i, w in model["known_words"].items()
                }
            except (TypeError, ValueError) as exc:
                raise ModelFormatError(f"the model's known_words are malformed: {exc}") from None
        inst = cls.__new__(cls)
        inst._configure(
            alphabet,
            known_words,
            _typed_tokens(model.get("break_tokens"), token_type),
            model.get("regex_str"),
            _typed_tokens(model.get("stop_tokens"), token_type),
        )
        inst._vocabulary = None
        inst._views = {}
        inst._set_vocabulary(inst._vocabulary_from_reference(model["mapper"], model["weights"]))
        return inst

    def _vocabulary_from_reference(self, mapper: dict, weights: dict) -> Vocabulary:
        n_base = self.n_base
        try:
            entries = sorted((int(k), tuple(int(x) for x in v)) for k, v in mapper.items())
            weight_of = {int(k): float(v) for k, v in weights.items()}
        except (TypeError, ValueError) as exc:
            raise ModelFormatError(f"the model's mapper or weights are malformed: {exc}") from None
        ids = [token for token, _ in entries]
        if ids != list(range(n_base, n_base + len(ids))):
            raise ModelFormatError(
                f"the model's tokens must be the ids {n_base}..{n_base + len(ids) - 1}, each once"
            )
        if set(weight_of) != set(ids):
            raise ModelFormatError("the model's weights and mapper name different tokens")
        seqs = [seq for _, seq in entries]
        token_weights = [weight_of[t] for t in ids]
        if self.variant == CLASSIC:
            if any(len(s) != 2 for s in seqs):
                raise ModelFormatError("a classic model maps every token to a pair")
            return Vocabulary.from_pairs(n_base, np.asarray(seqs, dtype=np.int64), token_weights)
        return Vocabulary.from_pieces(n_base, seqs, token_weights)

    # -- our format -------------------------------------------------------------------------

    def to_json(self) -> str:
        """The model in our versioned, checksummed format (what :meth:`save` writes)."""
        body = {
            "variant": self.variant,
            "alphabet": [encode_symbol(s) for s in self._alphabet.symbols],
            "known_words": (
                [[i, w if isinstance(w, str) else [encode_symbol(s) for s in w]] for w, i in self._known_words.items()]
                if self._known_words
                else None
            ),
            "break_tokens": _sorted_symbols(self.split_pipeline.break_tokens),
            "regex_str": self.regex_str,
            "stop_tokens": _sorted_symbols(self.split_pipeline.stop_tokens),
            "n_tokens": self.n_tokens,
            "vocabulary": vocabulary_to_json(self._vocabulary) if self._vocabulary is not None else None,
        }
        return wrap_body(body)

    def save(self, path: str | os.PathLike) -> None:
        """Write the model to ``path`` atomically (a crash leaves the old file or the new)."""
        write_atomically(path, self.to_json())

    @classmethod
    def from_json(cls, text: str, *, what: str = "the model"):
        body = unwrap_body(parse_json(text, what), what)
        if body.get("variant") != cls.variant:
            raise ModelFormatError(f"{what} holds a {body.get('variant')} model, not a {cls.variant} one")
        try:
            alphabet = Alphabet.from_spec([decode_symbol(s) for s in body["alphabet"]])
            known_words = (
                {(w if isinstance(w, str) else tuple(decode_symbol(s) for s in w)): int(i) for i, w in body["known_words"]}
                if body.get("known_words")
                else None
            )
            break_tokens = _decoded_symbols(body.get("break_tokens"))
            stop_tokens = _decoded_symbols(body.get("stop_tokens"))
            n_tokens = int(body["n_tokens"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"{what} is malformed: {exc}") from None
        inst = cls.__new__(cls)
        inst._configure(alphabet, known_words, break_tokens, body.get("regex_str"), stop_tokens)
        inst._vocabulary = None
        inst._views = {}
        inst.n_tokens = n_tokens
        if body.get("vocabulary") is not None:
            vocabulary = vocabulary_from_json(body["vocabulary"])
            if vocabulary.n_base != inst.n_base:
                raise ModelFormatError(f"{what}: the vocabulary's base size does not match the alphabet")
            inst._set_vocabulary(vocabulary)
        return inst

    @classmethod
    def load(cls, path: str | os.PathLike):
        """A tokenizer from a file written by :meth:`save` (or a ubpe 0.3.0 JSON dump)."""
        text = read_text(path)
        document = parse_json(text, str(path))
        if isinstance(document, dict) and "format" not in document and "mapper" in document:
            return cls.loads(text)
        return cls.from_json(text, what=str(path))

    def __repr__(self) -> str:
        state = f"{self.n_tokens} tokens" if self.is_fitted else f"not fitted, n_tokens={self.n_tokens}"
        return f"{type(self).__name__}(alphabet of {len(self._alphabet)} {self._alphabet.symbol_type.__name__}, {state})"


class UBPE(UBPEBase):
    """The universal tokenizer: tokens map to runs of alphabet ids; ranked top-n encodings.

    >>> tok = UBPE(alphabet="ab", n_tokens=5)
    >>> tok.fit(["abab", "abba", "baab"], quiet=True)
    >>> [(tokens, round(score, 3)) for tokens, score in tok.encode("abab", top_n=2)]
    [([0, 4, 1], 0.288), ([0, 1, 0, 1], 0.0)]
    >>> tok.decode([0, 4, 1])
    'abab'
    """

    variant = UNIVERSAL
    default_encoder = "tfidf"

    def _mapping(self) -> dict[int, tuple[int, ...]]:
        return self.vocabulary.pieces()


class UBPEClassic(UBPEBase):
    """The classic tokenizer: tokens map to pairs of tokens; greedy pair substitution.

    >>> tok = UBPEClassic(alphabet=[0, 1, 2], n_tokens=5)
    >>> tok.fit([[0, 1, 0, 1, 2], [0, 1, 2]], rearrange_tokens=False, quiet=True)
    >>> tok.tokens_mapper["backward"]
    {3: (0, 1), 4: (3, 2), 5: (3, 4)}
    >>> tok.encode([0, 1, 2, 0, 1])
    [([4, 3], 0.0)]
    """

    variant = CLASSIC
    default_encoder = "classic"

    def _mapping(self) -> dict[int, tuple[int, ...]]:
        return self.vocabulary.pairs()


def load(path: str | os.PathLike) -> Any:
    """Load a model saved by ``save``, whichever variant it holds (``UBPE``, ``UBPEClassic``
    or ``ByteLevelBPE``).

    >>> import os, tempfile
    >>> tok = UBPEClassic(alphabet="ab", n_tokens=3)
    >>> tok.fit(["abab"], quiet=True)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
    >>> tok.save(path)
    >>> load(path).tokens_mapper == tok.tokens_mapper
    True
    """
    from .bytelevel import ByteLevelBPE

    text = read_text(path)
    document = parse_json(text, str(path))
    body = unwrap_body(document, str(path))
    variant = body.get("variant")
    for cls in (UBPE, UBPEClassic, ByteLevelBPE):
        if cls.variant == variant:
            return cls.from_json(text, what=str(path))
    raise ModelFormatError(f"{path} holds an unknown model variant {variant!r}")


def _typed_tokens(values: Any, token_type: type) -> list[Any] | None:
    if values is None:
        return None
    if not isinstance(values, list):
        raise ModelFormatError("break/stop tokens must be a list")
    try:
        return [token_type(v) for v in values]
    except (TypeError, ValueError) as exc:
        raise ModelFormatError(f"break/stop tokens do not fit token_type: {exc}") from None


def _sorted_symbols(symbols: frozenset | None) -> list[Any] | None:
    if not symbols:
        return None
    return [encode_symbol(s) for s in sorted(symbols, key=repr)]


def _decoded_symbols(values: Any) -> list[Any] | None:
    if values is None:
        return None
    return [decode_symbol(v) for v in values]
