"""The one tokenizer base: the contract every family meets, implemented once over a few hooks.

Every tokenizer - our own (:class:`~ubpe.models.ubpe.UBPE`, ``UBPEClassic``), byte-level BPE
(:class:`~ubpe.models.bytelevel.ByteLevelBPE`) and every model read from another system's file
(:class:`~ubpe.models.imported.ImportedTokenizer`) - is a :class:`Tokenizer`, so the command
line and the views need no type switches. A family declares what it is and what it can do:

* ``variant`` names the family (``"universal"``, ``"classic"``, ``"bytelevel"``, ``"spm:bpe"``...),
  ``default_encoder`` its own encoder, ``symbol_unit`` what a document is counted in
  (``"symbol"``, ``"byte"``, ``"char"``), ``symbol_type`` a document's symbol type;
* capabilities, instead of callers probing for methods: ``can_save`` (our model format
  holds it), ``has_ambiguity`` (:meth:`ambiguity`), ``has_token_frequencies``
  (:meth:`token_frequencies`, for ``rerank="mean_frequency"``); :meth:`score_kind` says what
  the scores shown for its encodings measure (:meth:`scored` gives them);

and fills in the hooks: ``vocabulary`` and ``n_vocab``; ``encode`` (the family's own call);
``_own_encodings`` (its default encoder, for :meth:`encode_with`) and ``_encodings_by`` (any
ubpe encoder on its vocabulary); ``decode_bytes`` or ``decode``; ``pieces``, ``piece_to_id``,
``describe`` and ``inventory``. The base gives the rest once: :meth:`encoder` (built once per
name and options; a seeded one anew each call, so that the seed repeats), :meth:`encode_with`,
:meth:`encode_batch_with`, :meth:`encode_batch_to_numpy` (over the hook ``_flat_batch``),
:meth:`decode`, :meth:`decode_batch`, :meth:`n_symbols`, :meth:`covers`, the vocabulary under the
peers' names (:meth:`id_to_piece`, :attr:`vocab_size`, :meth:`get_vocab`, :meth:`token_to_id`,
:meth:`id_to_token`), and the file methods (``save``, ``load``, ``to_json``, ``from_json``), which
reach :mod:`ubpe.io` through :func:`ubpe._hooks.file_formats` (the formats sit above the models).

>>> from ubpe import UBPE, ByteLevelBPE
>>> issubclass(UBPE, Tokenizer) and issubclass(ByteLevelBPE, Tokenizer)
True
>>> UBPE.has_ambiguity, ByteLevelBPE.has_ambiguity, ByteLevelBPE.symbol_unit
(True, False, 'byte')
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from .._hooks import file_formats
from ..errors import InvalidParameterError, NotFittedError, UnknownTokenError
from ..files import check_path

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:  # (numpy and the kernels load when a batch first needs them: `import ubpe` stays light)
    from typing import Any, ClassVar
    import numpy as np

    from .chunks import FlatIds
    from ..encoders import Encoder, Encoding
    from ..encoders.encoding import EncodedBatch
    from ..pieces import Inventory
    from ..vocabulary import Vocabulary


#: :meth:`Tokenizer.score_kind` values: ubpe's tf-idf score, a unigram model's log-probability
TFIDF, LOG_PROB = "tf-idf", "log-prob"
#: How many encoders a tokenizer keeps built (:meth:`Tokenizer.encoder`), the most recently used
KEPT_ENCODERS = 4


class Tokenizer:
    """The base of every tokenizer family (see the module docstring for the hooks)."""

    variant: ClassVar[str]
    default_encoder: ClassVar[str]
    symbol_unit: ClassVar[str] = "symbol"
    symbol_type: Any = str
    can_save: ClassVar[bool] = True
    has_ambiguity: ClassVar[bool] = False
    has_token_frequencies: ClassVar[bool] = False

    #: the ubpe vocabulary that ubpe's encoders run on (an attribute or a property; None
    #: before a fit)
    vocabulary: Vocabulary | None

    # -- hooks ----------------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        raise NotImplementedError

    def encode(self, doc: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def _own_encodings(self, doc: Any, top_n: int, options: dict[str, Any]) -> list[Encoding]:
        """``doc``'s encodings by the family's own encoder (``encode_with``'s default)."""
        return self._encodings_by(self.encoder(self.default_encoder, **options), doc, top_n)

    def _encodings_by(self, encoder: Encoder, doc: Any, top_n: int) -> list[Encoding]:
        """``doc``'s ``top_n`` encodings by a ubpe ``encoder`` on :attr:`vocabulary`, in this
        family's ids."""
        raise NotImplementedError

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        raise NotImplementedError

    def pieces(self, ids: Sequence[int]) -> list[Any]:
        raise NotImplementedError

    def piece_to_id(self, piece: Any) -> int:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        raise NotImplementedError

    def inventory(self) -> Inventory:
        raise NotImplementedError

    # -- the vocabulary, under the names the peers give it ------------------------------------

    def id_to_piece(self, token: int) -> Any:
        """``token``'s piece in the model's own spelling (sentencepiece's name): here what it
        stands for (:meth:`pieces`); imported models spell it as their file does (``Ġworld``,
        ``▁the``). :class:`~ubpe.errors.UnknownTokenError` for an id outside the vocabulary."""
        return self.pieces([token])[0]

    @property
    def vocab_size(self) -> int:
        """:attr:`n_vocab`, under ``transformers``' name."""
        return self.n_vocab

    def get_vocab(self) -> dict[Any, int]:
        """Every id by its piece (:meth:`id_to_piece`), as HF's ``get_vocab``; of ids with one
        piece, the lowest; a piece of non-text symbols (a list) as a tuple."""
        vocab: dict[Any, int] = {}
        for token in range(self.n_vocab):
            piece = self.id_to_piece(token)
            vocab.setdefault(tuple(piece) if isinstance(piece, list) else piece, token)
        return vocab

    def token_to_id(self, token: Any) -> int | None:
        """HF's ``token_to_id``: :meth:`piece_to_id`, or None where no id has that piece."""
        try:
            return self.piece_to_id(token)
        except UnknownTokenError:
            return None

    def id_to_token(self, token: int) -> Any | None:
        """HF's ``id_to_token``: :meth:`id_to_piece`, or None for an id outside the vocabulary."""
        try:
            return self.id_to_piece(token)
        except UnknownTokenError:
            return None

    # -- encoding -------------------------------------------------------------------------

    def encoder(self, name: str | None = None, **options: Any) -> Encoder:
        """The encoder ``name`` (default: this tokenizer's own) on :attr:`vocabulary`.

        Encoders are built once per name and options and then reused, the
        :data:`KEPT_ENCODERS` most recently used of them (each holds tables the size of the
        vocabulary: ~40 MB on a 262k-token one); one with a ``seed`` is built anew for each
        call, so that a seeded call gives the same result every time (a reused one would go on
        from where its random stream stopped)."""
        from ..encoders import make_encoder

        name = name or self.default_encoder
        vocabulary = self.vocabulary
        if vocabulary is None:
            raise NotFittedError("the tokenizer has no vocabulary yet: fit or load one first")
        key = (name, tuple(sorted(options.items())))
        try:
            hash(key)
        except TypeError:  # an unhashable option (an array of weights): build, don't cache
            return make_encoder(name, vocabulary, **options)
        if options.get("seed") is not None:
            return make_encoder(name, vocabulary, **options)
        cache = self.__dict__.setdefault("_encoders", {})
        built = cache.pop(key, None)  # popped and put back: the dict's order is the order of use
        if built is None:
            built = make_encoder(name, vocabulary, **options)
            while len(cache) >= KEPT_ENCODERS:
                del cache[next(iter(cache))]
        cache[key] = built
        return built

    def _forget_encoders(self) -> None:
        """Drop the encoders built so far (the vocabulary or its weights changed)."""
        self.__dict__.pop("_encoders", None)

    def encode_with(self, doc: Any, encoder: str | None = None, top_n: int = 1, **options: Any) -> list[Encoding]:
        """``top_n`` encodings of ``doc`` as ``[(ids, score)]``, best first, by the encoder
        ``encoder`` (default: the family's own); ``options`` go to the encoder."""
        name = encoder or self.default_encoder
        if name == self.default_encoder:
            return self._own_encodings(doc, top_n, options)
        return self._encodings_by(self.encoder(name, **options), doc, top_n)

    def encode_batch_with(
        self, docs: Iterable[Any], encoder: str | None = None, top_n: int = 1, **options: Any
    ) -> list[list[Encoding]]:
        """:meth:`encode_with` for every document of ``docs``."""
        return [self.encode_with(doc, encoder, top_n, **options) for doc in docs]

    # -- a batch as arrays -----------------------------------------------------------------

    def encode_batch_to_numpy(self, docs: Iterable[Any], *, threads: int | None = None,
                              **options: Any) -> EncodedBatch:
        """``encode_batch(docs, threads=threads, **options)`` as an
        :class:`~ubpe.encoders.encoding.EncodedBatch` (one encoding per document): the same ids,
        in flat arrays that the family's kernels fill without the GIL, no list per document
        (documents the kernels leave out, holding a special token say, are encoded one by one
        and spliced in). ``.best()`` gives ``(ids, offsets)``; a document's score is its
        log-probability for a unigram model (:meth:`_batch_scores`), else NaN (a BPE model's
        ids have none). Bad documents and options raise what ``encode_batch`` raises.

        >>> from ubpe import ByteLevelBPE
        >>> tok = ByteLevelBPE().fit(["ab ab ab"], n_tokens=258, pattern="gpt2", quiet=True)
        >>> ids, offsets = tok.encode_batch_to_numpy(["ab ab", "", "b"]).best()
        >>> [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == tok.encode_batch(["ab ab", "", "b"])
        True
        """
        import numpy as np

        from ..encoders.encoding import EncodedBatch

        ids, offsets = self._flat_batch(docs, threads, **options)
        n_docs = len(offsets) - 1
        return EncodedBatch.from_arrays((ids, offsets, self._batch_scores(ids, offsets),
                                         np.arange(n_docs + 1, dtype=np.int64)))

    def _flat_batch(self, docs: Iterable[Any], threads: int | None, **options: Any) -> FlatIds:
        """``encode_batch``'s ids as :data:`~ubpe.models.chunks.FlatIds`. This default flattens
        its lists; a family whose kernels give flat ids returns them (and its ``encode_batch``
        cuts them into lists)."""
        from .chunks import flat_ids

        return flat_ids(self.encode_batch(docs, threads=threads, **options))  # type: ignore[attr-defined]

    def _batch_scores(self, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Per document of :meth:`encode_batch_to_numpy`, its encoding's score: NaN here."""
        import numpy as np

        return np.full(len(offsets) - 1, np.nan)

    # -- what a score means ---------------------------------------------------------------

    def score_kind(self) -> str | None:
        """What the scores shown for this tokenizer's encodings (``ubpe compare``, ``view``)
        measure: ``"tf-idf"`` (ubpe's score, :meth:`encode_with`'s, from the vocabulary's idf
        weights), ``"log-prob"`` (a unigram model's log-probability of the encoding), or
        ``None``: the vocabulary has no weights, so every tf-idf score is 0 (a file of merge
        ranks, such as a BPE model read from another system: see ``fit_weights``)."""
        vocabulary = self.vocabulary
        return TFIDF if vocabulary is not None and bool(vocabulary.weights.any()) else None

    def scored(self, encodings: Sequence[Encoding]) -> list[tuple[list[int], float | None]]:
        """``encodings`` (``[(ids, score)]`` of :meth:`encode_with`) with the score that
        :meth:`score_kind` names: the tf-idf score as reported, or ``None`` without weights."""
        kind = self.score_kind()
        return [(list(ids), float(score) if kind == TFIDF else None) for ids, score in encodings]

    # -- decoding -------------------------------------------------------------------------

    def decode(self, ids: Iterable[int], errors: str = "replace") -> Any:
        """The text of ``ids``; bytes that are not valid UTF-8 follow ``errors``."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_batch(self, batch: Iterable[Iterable[int]]) -> list[Any]:
        """:meth:`decode` of every id list in ``batch``."""
        return [self.decode(ids) for ids in batch]

    # -- documents ------------------------------------------------------------------------

    def n_symbols(self, doc: Any) -> int:
        """How many ``symbol_unit``s ``doc`` has (UTF-8 bytes for byte-level families)."""
        if self.symbol_unit == "byte":
            return len(doc.encode("utf-8", errors="surrogatepass"))
        return len(doc)

    def covers(self, doc: Any) -> bool:
        """Whether every symbol of ``doc`` has an id (always, where unknown text becomes
        bytes or the unknown token)."""
        return True

    # -- model files (our format; other formats: ubpe.save / ubpe.load) --------------------

    def _check_savable(self) -> None:
        if not self.can_save:
            raise InvalidParameterError(f"a {self.variant} tokenizer is read-only: it cannot be saved "
                                        "in ubpe's format (keep the source file)")

    def to_json(self) -> str:
        """The tokenizer in our versioned, checksummed format (what :meth:`save` writes)."""
        self._check_savable()
        return file_formats().format_module("ours").to_json(self)

    @classmethod
    def from_json(cls, text: str, *, what: str = "the model") -> Tokenizer:
        """A tokenizer from :meth:`to_json`'s text (it must hold this class's variant)."""
        return file_formats().format_module("ours").from_json(text, what=what, variant=cls.variant)

    def save(self, path: str | os.PathLike, format: str | None = None) -> None:
        """Write the tokenizer to ``path`` atomically (a crash leaves the old file or the new)
        in ``format`` (``"hf"``, ``"sentencepiece"``, ``"gguf"``, ``"tiktoken"``, ``"ubpe"``...);
        without one, by the file's name: ``tokenizer.json``, ``.model``, ``.gguf``,
        ``.tiktoken``, else our format. A format that cannot hold this family raises
        :class:`InvalidParameterError` saying why (the table: :func:`ubpe.io.write.why_not`)."""
        io = file_formats()
        check_path(path)
        if format is None:
            format = io.format_module("write").format_for(path, self.variant)
        if format == "ubpe":
            self._check_savable()
        io.save(self, path, format)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Tokenizer:
        """A tokenizer of this family from a file (our format, or another this family reads)."""
        return file_formats().load(path, variant=cls.variant)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (and deep-copied) without the encoders built so far: they hold compiled
        kernels, and are built again on first use."""
        state = dict(self.__dict__)
        state.pop("_encoders", None)
        return state
