"""``UBPE`` / ``UBPEClassic``: drop-in replacements for ubpe 0.3.0's tokenizers.

Both keep the reference's constructor, ``fit``, ``rearrange_tokens``, ``dumps``/``loads`` and
attributes (``alphabet``, ``tokens_mapper``, ``tokens_weights``...), producing the same
vocabularies; on top, ``vocabulary`` (both views of every token plus creation ranks), the
:class:`~ubpe.models.base.Tokenizer` contract (``encode_with`` by any encoder, ``pieces``,
``describe``...; ``save``/``load`` in our versioned format) and the alternatives
(``ambiguity``, ``rerank=``).

The reference's attributes and its JSON methods are a thin layer of their own
(:mod:`ubpe.models.compat`); the contract's plumbing is :class:`~ubpe.models.base.Tokenizer`'s.

>>> tok = UBPE(alphabet="ab", n_tokens=4)
>>> tok.fit(["abab", "abba"], quiet=True)
>>> tok.tokens_mapper["backward"]
{2: (0, 1, 1), 3: (0, 1, 0, 1)}
>>> tok.decode([3, 1]), tok.decode([])
('ababb', '')
>>> isinstance(tok, Tokenizer), tok.pieces([3, 1]), tok.n_symbols("abab")
(True, ['abab', 'b'], 4)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

from ubpe_native._numpy import np, numpy_types

from ..alphabet import Alphabet
from ..errors import AlreadyFittedError, InvalidParameterError, NotFittedError, SymbolTypeError, VocabularySizeWarning
from ..pieces import Inventory, PieceTable
from ..splitting import SplitMode, SplitPipeline, make_pipeline
from ..threads import check_n_threads, default_threads, threads_argument
from ..vocabulary import Vocabulary
from . import split_batch
from .base import Tokenizer
from .compat import Ubpe030Surface

TYPE_CHECKING = False  # (typing's, without importing typing: see ubpe.files)
if TYPE_CHECKING:  # the encoders (and their kernels) are imported by the methods that use them
    from typing import Any, ClassVar

    from ..encoders import Encoder, Encoding
    from ..encoders.ambiguity import Ambiguity, Weights
    from ..encoders.encoding import EncodedBatch

DEFAULT_N_TOKENS = 2**10
UNIVERSAL, CLASSIC = "universal", "classic"
class UBPEBase(Ubpe030Surface, Tokenizer):
    """What both UBPE tokenizers share: configuration, fitting, encoding, decoding.

    The configuration is a :class:`~ubpe.splitting.SplitPipeline` (alphabet, known words,
    break tokens, regex, stop tokens) plus ``n_tokens``; the decode table is a
    :class:`~ubpe.pieces.PieceTable`; model files are read and written by :mod:`ubpe.io`, which
    builds instances through :meth:`restore`; the reference's attributes and JSON methods are
    :class:`~ubpe.models.compat.Ubpe030Surface`'s, the contract's shared plumbing
    :class:`~ubpe.models.base.Tokenizer`'s. The class is over 300 lines because its public
    methods are the reference's signatures (``fit``, ``encode`` with ``split_mode``/``top_n``,
    ``encode_batch``, ``decode``...) plus ours (``encode_batch_to_numpy``, ``ambiguity``,
    ``rerank=``), each a few lines over the module that does the work (``fit``, ``encoders``,
    ``pieces``, :mod:`~ubpe.models.split_batch` for the batches on threads).
    """

    variant: ClassVar[str]
    default_encoder: ClassVar[str]
    symbol_unit: ClassVar[str] = "symbol"
    has_ambiguity = True
    has_token_frequencies = True

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
        pipeline = make_pipeline(
            Alphabet.from_spec(alphabet),
            known_words=known_words,
            break_tokens=break_tokens,
            regex_str=regex_str,
            stop_tokens=stop_tokens,
        )
        self._setup(pipeline)
        self.n_tokens = self._check_n_tokens(n_tokens)

    @classmethod
    def restore(cls, pipeline: SplitPipeline, *, n_tokens: int, vocabulary: Vocabulary | None = None):
        """A tokenizer from its configuration and (if fitted) vocabulary, unchecked against
        ``n_tokens``: how model files are loaded (see :mod:`ubpe.io`).

        >>> from ubpe.splitting import make_pipeline
        >>> tok = UBPE.restore(make_pipeline(Alphabet.from_spec("ab")), n_tokens=2)
        >>> tok.is_fitted, tok.n_tokens
        (False, 2)
        """
        inst = cls.__new__(cls)
        inst._setup(pipeline)
        inst.n_tokens = int(n_tokens)
        if vocabulary is not None:
            inst._set_vocabulary(vocabulary)
        return inst

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (and deep-copied) without the encoders and tables built so far: they hold
        compiled kernels, and are rebuilt on first use."""
        return {**super().__getstate__(), "_views": {}}

    def _setup(self, pipeline: SplitPipeline) -> None:
        self.split_pipeline = pipeline
        self._alphabet = pipeline.alphabet
        self._known_words = pipeline.known_words
        self._vocabulary: Vocabulary | None = None
        self._views: dict[Any, Any] = {}

    def _check_n_tokens(self, n_tokens: Any) -> int:
        if isinstance(n_tokens, bool) or not isinstance(n_tokens, (int, *numpy_types("integer"))):
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
    def vocabulary(self) -> Vocabulary:
        """The fitted vocabulary (raises :class:`NotFittedError` before ``fit``)."""
        if self._vocabulary is None:
            raise NotFittedError("the tokenizer is not fitted: call `fit` or load a model")
        return self._vocabulary

    @property
    def is_fitted(self) -> bool:
        return self._vocabulary is not None

    def _set_vocabulary(self, vocabulary: Vocabulary) -> None:
        self._vocabulary = vocabulary
        self._views = {}
        self._forget_encoders()
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
        threads: int | None = None,
        n_threads: int | None = None,
    ) -> None:
        """Fit the vocabulary on ``corpus`` (a list of documents), as ubpe 0.3.0 does.

        ``corpus`` may also be any iterable of documents (streamed chunk by chunk: memory
        stays bounded by the distinct parts) or a Dask bag or series (counted on its cluster,
        see :mod:`ubpe.distributed.dask`); the vocabulary is the same as for the list of those documents.

        Each round takes up to ``n_candidates`` of the most frequent pairs that can be merged
        together; with ``rearrange_tokens`` the result is sorted by weight and trimmed to
        ``n_tokens``. A progress bar shows on stderr unless ``quiet``. A list is split and
        counted on ``threads`` threads (default :func:`default_threads`; ``n_threads``, the
        old name, is deprecated); the merge rounds
        run on one, which the others help count documents in large rounds. The vocabulary is
        the same whatever the number of threads.
        """
        n_threads = threads_argument(threads, n_threads=n_threads)
        check_n_threads(n_threads, "threads")
        if self._vocabulary is not None:
            raise AlreadyFittedError("the tokenizer can be fitted only once")
        if not isinstance(rearrange_tokens, (bool, *numpy_types("bool_"))):
            raise InvalidParameterError(f"`rearrange_tokens` must be True or False, got {rearrange_tokens!r}")
        from ..fit import fit_corpus  # (the fit's modules and kernels: a loaded model does not need them)

        vocabulary = fit_corpus(
            self.split_pipeline, corpus, n_tokens=self.n_tokens, n_candidates=n_candidates, quiet=quiet,
            split_mode=split_mode, description=f"{type(self).__name__}.fit", n_threads=n_threads or default_threads(),
        )
        if rearrange_tokens and vocabulary.n_merged:
            vocabulary = vocabulary.rearranged(self.n_tokens, classic=self.variant == CLASSIC)
        if len(vocabulary) < self.n_tokens:  # the reference's n_tokens becomes the final size: say so
            warnings.warn(
                f"n_tokens={self.n_tokens} was asked for, the fit ended with {len(vocabulary)} ids "
                f"({vocabulary.n_merged} merged tokens); n_tokens and n_vocab are now {len(vocabulary)}",
                VocabularySizeWarning,
                stacklevel=2,
            )
        self._set_vocabulary(vocabulary)

    def rearrange_tokens(self, *, n_tokens: int | None = None, quiet: bool = False) -> None:
        """Sort tokens by weight and trim the vocabulary to ``n_tokens`` ids (default: all)."""
        vocabulary = self.vocabulary
        if n_tokens is None:
            n_tokens = self.n_tokens
        elif isinstance(n_tokens, bool) or not isinstance(n_tokens, (int, *numpy_types("integer"))) or n_tokens < 1:
            raise InvalidParameterError(f"`n_tokens` must be a positive int, got {n_tokens!r}")
        elif n_tokens <= self.n_base:
            raise InvalidParameterError(
                f"`n_tokens` ({n_tokens}) must be larger than the base ids ({self.n_base}): fewer would drop every merge"
            )
        self._set_vocabulary(vocabulary.rearranged(int(n_tokens), classic=self.variant == CLASSIC))

    # -- encoding ---------------------------------------------------------------------------

    def encode(
        self,
        doc: Any,
        *,
        split_mode: SplitMode = SplitMode.FULL,
        top_n: int = 1,
        encoder: str | None = None,
        rerank: Any = None,
        add_special: bool = False,
        parse_special: bool = False,
        **options: Any,
    ) -> list[Encoding]:
        """``[(tokens, score)]`` for ``doc``, best first (``top_n`` of them where supported).

        ``doc`` is a str, list, tuple or 1-D numpy array of symbols; ``encoder`` picks an
        encoder by name (see :func:`ubpe.encoders.available_encoders`), ``options`` go to it.
        ``rerank`` (``"fewest"``, ``"mean_frequency"`` or a callable ``tokens -> number``,
        higher first) re-orders the alternatives, each then ``(tokens, key value, score)``
        (:class:`ubpe.encoders.rerank.Reranked`). ``add_special`` and ``parse_special`` are
        the one special-token vocabulary of every family (:mod:`ubpe.text.specials`): a ubpe
        vocabulary has no special tokens, so they change nothing.

        >>> tok = UBPE(alphabet="ab", n_tokens=5)
        >>> tok.fit(["abab", "abba", "baab"], quiet=True)
        >>> tok.encode("abab", top_n=2, rerank="fewest")[0]
        Reranked(tokens=[0, 4, 1], score=-3.0, original=0.28768207245178085)
        """
        if type(doc) is str and rerank is None and not options and encoder is None:
            # the common call: one kernel call splits and encodes (see _text_path)
            text_path = self._text_path()
            if text_path and split_mode is SplitMode.FULL:
                encodings = text_path.encode_texts(text_path.splitter, (doc,), top_n)
                if encodings is not None:
                    return encodings[0]
        from ..encoders._base import encode_documents

        chosen = self.encoder(encoder, **options)
        encodings = encode_documents(chosen, self.split_pipeline.split(doc, mode=split_mode), top_n)[0]
        if rerank is None:
            return encodings
        from ..encoders.rerank import rerank as reorder

        return reorder(encodings, rerank, vocabulary=self.vocabulary)

    def _text_path(self, encoder: str | None = None, **options: Any) -> Any:
        """The :class:`~ubpe.models.split_batch.TextPath` of the encoder ``encoder`` (built once
        per encoder), or False if this tokenizer has none."""
        slot = ("text", encoder, tuple(sorted(options.items()))) if encoder or options else "text"
        if slot not in self._views:
            self._views[slot] = split_batch.text_path(self.split_pipeline, self.encoder(encoder, **options))
        return self._views[slot]

    def ambiguity(self, doc: Any, *, weights: Weights = None, temperature: float = 1.0,
                  encoding: Sequence[int] | str | None = "best", split_mode: SplitMode = SplitMode.FULL) -> Ambiguity:
        """How ambiguous ``doc`` is: the exact number of its segmentations, their entropy under
        ``p ∝ exp(sum of token weights / temperature)`` (default weights: idf), and the
        probability of ``encoding`` (``"best"``: this tokenizer's own top-1; ``None``: none).
        See :class:`ubpe.encoders.ambiguity.Ambiguity`.

        >>> tok = UBPE(alphabet="ab", n_tokens=5)
        >>> tok.fit(["abab", "abba", "baab"], quiet=True)
        >>> a = tok.ambiguity("abab")
        >>> a.n_segmentations, round(a.entropy, 4), round(a.encoding_probability, 4)
        (2, 0.6829, 0.5714)
        """
        if isinstance(encoding, str) and encoding == "best":
            encoding = self.encode(doc, split_mode=split_mode)[0][0]
        from ..encoders.ambiguity import DocumentLattice

        parts = self.split_pipeline.split(doc, mode=split_mode).parts(0)
        return DocumentLattice(self.vocabulary, parts, weights, temperature).ambiguity(encoding)

    def token_frequencies(self) -> np.ndarray:
        """Per id, the smoothed share of training documents holding it (from the idf weights;
        base ids: 1): what ``rerank="mean_frequency"`` averages."""
        from ..encoders.rerank import document_frequencies

        return document_frequencies(self.vocabulary)

    def encode_batch(
        self,
        docs: Sequence[Any],
        *,
        split_mode: SplitMode = SplitMode.FULL,
        top_n: int = 1,
        encoder: str | None = None,
        threads: int | None = None,
        n_threads: int | None = None,
        add_special: bool = False,
        parse_special: bool = False,
        **options: Any,
    ) -> list[list[Encoding]]:
        """:meth:`encode` for many documents, on ``threads`` threads (default:
        :func:`default_threads`, i.e. ``UBPE_NUM_THREADS`` or one per core). Each thread
        splits and encodes its own chunks of documents; the scanner and the kernels run
        without the GIL. The result is the same whatever the number of threads.

        The lists are built with the GIL held, which limits how far threads help (top-n
        builds ``top_n`` lists per document): :meth:`encode_batch_to_numpy` gives the same
        encodings as arrays, built without it."""
        return self._batch(docs, split_mode, top_n, encoder, threads_argument(threads, n_threads=n_threads), options,
                           arrays=False)

    def encode_batch_to_numpy(
        self,
        docs: Sequence[Any],
        *,
        split_mode: SplitMode = SplitMode.FULL,
        top_n: int = 1,
        encoder: str | None = None,
        threads: int | None = None,
        n_threads: int | None = None,
        add_special: bool = False,
        parse_special: bool = False,
        **options: Any,
    ) -> EncodedBatch:
        """:meth:`encode_batch` as an :class:`~ubpe.encoders.encoding.EncodedBatch`: the same
        encodings in four flat arrays, which the kernels fill without the GIL (tf-idf,
        classic and ranked; other encoders' lists are copied into them). ``.tolist()``
        gives exactly what ``encode_batch`` returns; ``.best()`` each document's best
        encoding as ``(ids, offsets)``.

        >>> tok = UBPE(alphabet="ab", n_tokens=5)
        >>> tok.fit(["abab", "abba", "baab"], quiet=True)
        >>> batch = tok.encode_batch_to_numpy(["abab", "ba"])
        >>> batch.tolist() == tok.encode_batch(["abab", "ba"])
        True
        >>> ids, offsets = batch.best()
        >>> ids.tolist(), offsets.tolist()
        ([0, 4, 1, 4], [0, 3, 4])
        """
        return self._batch(docs, split_mode, top_n, encoder, threads_argument(threads, n_threads=n_threads), options,
                           arrays=True)

    def _batch(self, docs: Sequence[Any], split_mode: SplitMode, top_n: int, encoder: str | None,
               n_threads: int | None, options: dict[str, Any], arrays: bool) -> Any:
        docs = split_batch.check_documents(docs, n_threads, arrays)
        chosen = self.encoder(encoder, **options)
        try:
            path = self._text_path(encoder, **options)
        except TypeError:  # an unhashable option: no cached path
            path = False
        return split_batch.encode_batch(self.split_pipeline, chosen, path, docs, split_mode=split_mode, top_n=top_n,
                                        n_threads=n_threads, arrays=arrays)

    def encode_with(self, doc: Any, encoder: str | None = None, top_n: int = 1, **options: Any) -> list[Encoding]:
        """The contract's call: :meth:`encode` with the encoder ``encoder`` (default: own)."""
        return self.encode(doc, encoder=encoder, top_n=top_n, **options)

    def _encodings_by(self, encoder: Encoder, doc: Any, top_n: int) -> list[Encoding]:
        from ..encoders._base import encode_documents

        return encode_documents(encoder, self.split_pipeline.split(doc), top_n)[0]

    def encode_batch_with(
        self, docs: Sequence[Any], encoder: str | None = None, top_n: int = 1, **options: Any
    ) -> list[list[Encoding]]:
        """The contract's call: :meth:`encode_batch` with the encoder ``encoder``."""
        return self.encode_batch(docs, encoder=encoder, top_n=top_n, **options)

    def encode_to_numpy(self, doc: Any, **options: Any) -> np.ndarray:
        """The best encoding of ``doc`` as an int32 array (``encode(doc, **options)[0][0]``)."""
        return np.asarray(self.encode(doc, **options)[0][0], dtype=np.int32)

    # -- vocabulary lookups and decoding ----------------------------------------------------

    def __len__(self) -> int:
        """How many ids the vocabulary has (alphabet, known words and merged tokens)."""
        return len(self.vocabulary)

    @property
    def n_vocab(self) -> int:
        return len(self.vocabulary)

    @property
    def symbol_type(self) -> type:
        """The type of the alphabet's symbols (``str`` for text)."""
        return self._alphabet.symbol_type

    def _table(self) -> PieceTable:
        if "pieces" not in self._views:
            self._views["pieces"] = PieceTable(self._alphabet, self._known_words, self.vocabulary)
        return self._views["pieces"]

    def id_to_piece(self, token: int) -> Any:
        """What ``token`` stands for: a str for text alphabets, else a list of symbols."""
        return self.decode([token])

    def piece_to_id(self, piece: Any) -> int:
        """The id whose piece is ``piece`` (a str, or a sequence of symbols); the lowest id
        when several tokens share it. Raises :class:`UnknownTokenError` if none does."""
        return self._table().id_of(piece)

    def pieces(self, ids: Sequence[int]) -> list[Any]:
        """What each of ``ids`` stands for (see :meth:`id_to_piece`)."""
        return [self.id_to_piece(int(t)) for t in ids]

    def decode(self, tokens: Iterable[int]) -> Any:
        """The document that ``tokens`` encode: a str for text alphabets, else a list.

        ``decode([])`` is the empty document; an id outside the vocabulary raises
        :class:`UnknownTokenError`.
        """
        return self._table().decode(tokens)

    # -- the rest of the contract -----------------------------------------------------------

    def covers(self, doc: Any) -> bool:
        """Whether every symbol of ``doc`` is in the alphabet."""
        symbols = doc.tolist() if isinstance(doc, numpy_types("ndarray")) else doc
        alphabet = self._alphabet
        return all(s in alphabet for s in symbols)

    def describe(self) -> dict[str, Any]:
        """Sizes and settings, one line each (what ``ubpe inspect`` prints)."""
        vocab = self.vocabulary
        info: dict[str, Any] = {
            "alphabet": f"{len(self._alphabet)} symbols ({self.symbol_type.__name__})",
            "known words": str(len(self._known_words or {})),
            "vocabulary": f"{len(vocab)} ids: {vocab.n_base} base + {vocab.n_merged} merged tokens",
        }
        for name, values in (("break tokens", self.break_tokens), ("stop tokens", self.stop_tokens)):
            if values:
                info[name] = " ".join(repr(v) for v in sorted(values, key=repr))
        if self.regex_str:
            info["regex"] = self.regex_str
        return info

    def inventory(self) -> Inventory:
        """Every id with its piece, idf weight and recorded merge (see :class:`Inventory`)."""
        return self._table().inventory(self.vocabulary)

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
