"""What every tokenizer imported from another system shares.

:class:`ImportedTokenizer`: special tokens cut out of the text first (as llama.cpp's
``tokenizer_st_partition`` does), the *native* encoder (the model's own algorithm, exactly),
decoding and inspection; :class:`EncoderBridge`: every ubpe encoder run on the same vocabulary
(:meth:`EncoderBridge.encode_with`), and idf weights fitted on a corpus. The models are in
:mod:`ubpe.models.ranked_bpe` (byte-level BPE) and :mod:`ubpe.models.sentencepiece`
(sentencepiece-style). The module is nearly 700 lines because the special-token cut, the
native batch template and the encoder bridge are one contract every imported family keeps
(:class:`ubpe.models.contract.ImportedContract`); split, they would import each other.

>>> combine_kbest([[([1], -1.0), ([2, 3], -2.0)], [([4], 0.0)]], 2, [[], [9], []])
[([1, 9, 4], -1.0), ([2, 3, 9, 4], -2.0)]
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from array import array
from collections.abc import Callable, Iterable, Sequence

from ubpe_native._numpy import ID_DTYPE, np

from ..errors import InvalidParameterError, ModelFormatError, NotFittedError, SymbolTypeError, UnknownTokenError
from .._lazy import re  # (imported when first used: with enum, ~2 ms of a cold load)
from ..pieces import Inventory, checked_ids
from ..text.literals import literal_finder
from ..text.specials import special_options
from ..threads import default_threads
from .chunks import FlatIds, flat_ids, framed, id_lists, run_chunks, run_flat_chunks, text_lengths
from .base import LOG_PROB, Tokenizer
from .contract import ImportedContract

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
    from ..vocabulary import Vocabulary
    from ..encoders.ambiguity import Ambiguity


_SURROGATE_CHUNK = 1 << 16  # code points encoded at a time by `_lone_surrogate`
#: a family's ``_batch_runs``: its encoder of a run of documents and which long ones it may cut
BatchRuns = tuple[Callable[[list, "np.ndarray"], FlatIds], Callable[[str], bool] | None]


def _holds_kernel(value: Any, depth: int = 2) -> bool:
    """Whether ``value`` is (or, a level or two down, holds) a compiled kernel object, which
    the constructor builds again and pickle cannot copy."""
    if type(value).__module__.startswith("ubpe_native"):
        return True
    if depth and hasattr(value, "__dict__") and not isinstance(value, type):
        return any(_holds_kernel(v, depth - 1) for v in vars(value).values())
    if depth and isinstance(value, tuple):  # a named tuple of settings holding one (Scan's program)
        return any(_holds_kernel(v, depth - 1) for v in value)
    return False


def indexes_of(values: array, wanted: Iterable[int], *, first: bool = False) -> list[int]:
    """The indexes, in order, of the items of ``values`` (an ``array.array``) equal to one of
    ``wanted`` (only the first one with ``first``): its bytes searched in C, not one Python int
    per item (a vocabulary's 128k token types: a few rare kinds, at no numpy import).

    >>> indexes_of(array("i", [1, 3, 256, 3, 0]), (3, 0)), indexes_of(array("i", [768, 3]), (3,), first=True)
    ([1, 3, 4], [1])
    """
    data, size, found = values.tobytes(), values.itemsize, []
    for value in set(wanted):  # (a value named twice is one)
        needle = array(values.typecode, [value]).tobytes()
        at = data.find(needle)
        while at >= 0:  # a match across two items is no item: searched on from the next byte
            if at % size:
                at = data.find(needle, at + 1)
                continue
            found.append(at // size)
            if first:
                break
            at = data.find(needle, at + size)
    found.sort()
    return found[:1] if first else found


class _TokenTypes:
    """``token_types``, the numpy array (int32), of a model whose loader gave an
    ``array.array('i')`` (``_types``): made on first use (numpy is imported then), then an
    attribute of the instance like any other."""

    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        if "_types" not in instance.__dict__:  # (a subclass may make it: its __getattr__ runs next)
            raise AttributeError("token_types")
        value = np.frombuffer(instance._types, dtype=np.int32)
        instance.__dict__["token_types"] = value
        return value


def _rebuilt(cls: type, args: tuple, options: dict) -> Any:
    """An imported model built again from its constructor's arguments (unpickling)."""
    return cls(*args, **options)


def check_doc(text: Any) -> str:
    """``text`` if it is a str that UTF-8 can encode: an imported model's systems
    (sentencepiece, HF tokenizers, llama.cpp, minbpe) all refuse lone surrogates, so do we
    (:class:`~ubpe.models.bytelevel.ByteLevelBPE` replaces them by U+FFFD, as tiktoken does).

    >>> check_doc("a\\udc80")
    Traceback (most recent call last):
    ...
    ubpe.errors.InvalidParameterError: `doc` holds a lone surrogate U+DC80 at index 1, which UTF-8 cannot encode
    """
    if not isinstance(text, str):
        raise SymbolTypeError(f"`doc` must be a str, not {type(text).__name__}")
    if not text.isascii():
        at = _lone_surrogate(text)
        if at is not None:
            raise InvalidParameterError(
                f"`doc` holds a lone surrogate U+{ord(text[at]):04X} at index {at}, which UTF-8 cannot encode"
            )
    return text


def _lone_surrogate(text: str) -> int | None:
    """The index of ``text``'s first lone surrogate, or None: where UTF-8 encoding stops, a
    slice of ``_SURROGATE_CHUNK`` code points at a time (a bounded copy, not a long text's; a
    str holds code points, so no surrogate pair spans two slices). UTF-8's own encoder, not a
    regex: `re`'s import was ~2-4 ms of a process's first encode of a text that is not ASCII.

    >>> _lone_surrogate("a\\ud800b"), _lone_surrogate("naïve")
    (1, None)
    """
    for start in range(0, len(text), _SURROGATE_CHUNK):
        try:
            text[start:start + _SURROGATE_CHUNK].encode("utf-8")
        except UnicodeEncodeError as exc:
            return start + exc.start
    return None

# llama.cpp token types (gguf.TokenType; 0 is "undefined"); sentencepiece's piece types agree
UNDEFINED, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 0, 1, 2, 3, 4, 5, 6
#: the types whose tokens llama.cpp's ``token_to_piece`` writes nothing for ("we accept all
#: unsupported token types, suppressing them like CONTROL tokens")
SILENT_TYPES = (UNDEFINED, UNUSED)
NATIVE = "native"
#: encoders whose objective or distribution is per-token weights (``weights=``)
SAMPLE = "sample"
WEIGHTED_ENCODERS = (SAMPLE, "additive")
#: how to give a model without weights some (the message of every refusal that needs them)
NO_WEIGHTS_HINT = ("its file holds no weights; give it idf weights from a corpus with "
                   "tok.fit_weights(texts) (command line: --fit-weights FILE)")


def token_bytes(text: str) -> bytes:
    """The bytes a token's text stands for when decoded: UTF-8, a byte that is no UTF-8 (read
    from a GGUF file as a surrogate, ``surrogateescape``) given back as that byte, and any other
    lone surrogate (a JSON file's ``"\\ud83d"``) as its three bytes.

    >>> token_bytes("a\\udc80"), token_bytes("\\ud83d")
    (b'a\\x80', b'\\xed\\xa0\\xbd')
    """
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


_ASCII_SPACES = " \t\n\v\f\r"


def partition_specials(text: str, specials: Sequence[tuple[str, int, bool, bool]]) -> list[str | int]:
    """Cut ``text`` at special tokens: ``[fragment or token id]`` (llama.cpp's
    ``tokenizer_st_partition``). ``specials`` are ``(text, id, lstrip, rstrip)``, longest first;
    each one is searched in the fragments the earlier ones left. ``lstrip`` / ``rstrip`` remove
    ASCII whitespace before / after the token.

    >>> partition_specials("a<s> b", [("<s>", 1, False, True)])
    ['a', 1, 'b']
    """
    pieces: list[str | int] = [text] if text else []
    for special, token, lstrip, rstrip in specials:
        out: list[str | int] = []
        for piece in pieces:
            if isinstance(piece, int) or special not in piece:
                out.append(piece)
                continue
            start = 0
            while True:
                found = piece.find(special, start)
                if found < 0:
                    break
                left = piece[start:found]
                if lstrip:
                    left = left.rstrip(_ASCII_SPACES)
                if left:
                    out.append(left)
                out.append(token)
                start = found + len(special)
                if rstrip:
                    while start < len(piece) and piece[start] in _ASCII_SPACES:
                        start += 1
            if start < len(piece):
                out.append(piece[start:])
        pieces = out
    return pieces


def _doc_lengths(docs: list) -> np.ndarray:
    """What a chunk (:func:`.chunks.run_chunks`) counts per document: its characters (1 for one
    that is no str, which `encode` then explains)."""
    return np.fromiter((len(d) if isinstance(d, str) else 1 for d in docs), dtype=np.int64, count=len(docs))


def batch_workers(threads: int | None) -> int:
    """How many threads ``encode_batch(..., threads=threads)`` uses (None: as many as
    :func:`ubpe.threads.default_threads` says: ``UBPE_NUM_THREADS``, else one per core).

    >>> batch_workers(3)
    3
    """
    workers = default_threads() if threads is None else threads
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidParameterError(f"`threads` must be a positive int, got {threads!r}")
    return workers


def combine_kbest(lists: Sequence[Sequence[tuple[list[int], float]]], top_n: int,
                  joints: Sequence[list[int]]) -> list[tuple[list[int], float]]:
    """The ``top_n`` best concatenations of one alternative per list (scores add), with
    ``joints[k]`` (e.g. a special token) placed before the alternative of list ``k``."""
    if not lists:
        return [([t for joint in joints for t in joint], 0.0)]
    import heapq  # (a top-n search's: not on a load's path)

    best: list[tuple[list[int], float]] = []
    start = tuple(0 for _ in lists)
    heap = [(-sum(alts[0][1] for alts in lists), start)]
    seen = {start}
    while heap and len(best) < top_n:
        negative, choice = heapq.heappop(heap)
        ids = [t for k, c in enumerate(choice) for t in (*joints[k], *lists[k][c][0])]
        ids.extend(t for joint in joints[len(lists):] for t in joint)
        best.append((ids, -negative))
        for k, c in enumerate(choice):
            if c + 1 < len(lists[k]):
                nxt = choice[:k] + (c + 1,) + choice[k + 1 :]
                if nxt not in seen:
                    seen.add(nxt)
                    score = -negative - lists[k][c][1] + lists[k][c + 1][1]
                    heapq.heappush(heap, (-score, nxt))
    return best


class EncoderBridge:
    """ubpe's encoders on an imported vocabulary. The host class provides ``_fragments``,
    ``_prepare``, ``_parts`` (a text's pre-tokens as base-id arrays), ``_build_vocabulary``
    (the ubpe `Vocabulary`, vocabulary id -> model id, base id -> model ids) and ``encode``."""

    _vocab: tuple[Vocabulary, np.ndarray, list[list[int]]] | None
    _id_table: np.ndarray | None
    default_encoder = NATIVE

    @property
    def vocabulary(self) -> Vocabulary:
        """The ubpe vocabulary that ubpe's encoders run on (built on first use)."""
        return self._vocabulary_parts()[0]

    def _vocabulary_parts(self) -> tuple[Vocabulary, np.ndarray, list[list[int]]]:
        if self._vocab is None:
            self._vocab = self._build_vocabulary()
        return self._vocab

    def encode_with(self, doc: str, encoder: str | None = None, top_n: int = 1,
                    **options: Any) -> list[tuple[list[int], float]]:
        """``top_n`` encodings of ``doc`` by ``encoder`` as ``[(ids, score)]``, best first.

        ``"native"`` (the default) is the model's own algorithm (one encoding); any other name
        is a ubpe encoder (``fewest``, ``longest_prefix``, ``tfidf``, ``additive``, ``dropout``
        ...) run on :attr:`vocabulary`, per pre-token, with the special tokens in place
        (``parse_special``: control tokens too). The score is ubpe's tf-idf score (0 until
        weights are fitted, see :meth:`fit_weights`).
        """
        parse_special = options.pop("parse_special", False)
        if (encoder or self.default_encoder) == NATIVE:  # (encode cuts the text itself)
            return self._own_encodings(doc, top_n, options)
        fragments = self._prepare(self._fragments(doc, parse_special))
        return self._fragment_encodings(self.encoder(encoder, **options), fragments, top_n)

    def _own_encodings(self, doc: str, top_n: int, options: dict[str, Any]) -> list[tuple[list[int], float]]:
        if top_n != 1:
            raise InvalidParameterError("the native encoder gives one encoding: top_n must be 1")
        if options:
            raise InvalidParameterError(f"the native encoder takes no options, got {sorted(options)}")
        ids = self.encode(doc)
        return [(ids, self._score(ids, doc))]

    def _encodings_by(self, encoder: Any, doc: str, top_n: int) -> list[tuple[list[int], float]]:
        return self._fragment_encodings(encoder, self._prepare(self._fragments(doc, False)), top_n)

    def _fragment_encodings(self, coder: Any, fragments: list[str | int], top_n: int) -> list[tuple[list[int], float]]:
        """The ``top_n`` best encodings of the text fragments by ``coder``, the special
        tokens between them in place."""
        lists, joints, pending = [], [], []
        for fragment in fragments:
            if isinstance(fragment, int):
                pending.append(fragment)
                continue
            parts = self._parts(fragment)
            found = coder.encode(parts, top_n) if parts else [([], 0.0)]
            lists.append([(self._to_model_ids(tokens), score) for tokens, score in found])
            joints.append(pending)
            pending = []
        joints.append(pending)
        return combine_kbest(lists, top_n, joints)

    def _to_model_ids(self, tokens: Sequence[int]) -> list[int]:
        vocabulary, vocab_to_model, base_expansion = self._vocabulary_parts()
        if self._id_table is None:
            single = [e[0] if len(e) == 1 else -1 for e in base_expansion]
            self._id_table = np.concatenate([np.asarray(single, dtype=np.int64), vocab_to_model])
        mapped = self._id_table[np.asarray(tokens, dtype=np.int64)]
        if len(mapped) == 0 or mapped.min() >= 0:
            return mapped.tolist()
        n_base = vocabulary.n_base
        out: list[int] = []
        for token in tokens:
            if token < n_base:
                out.extend(base_expansion[token])
            else:
                out.append(int(vocab_to_model[token - n_base]))
        return out

    def _score(self, ids: list[int], doc: str) -> float:
        """ubpe's tf-idf score of the native encoding of ``doc``: 0 unless weights were
        fitted; per pre-token, as the other encoders score theirs (so the same tokens score
        the same)."""
        if self._vocab is None:  # not built, so no weights fitted (built, it may hold them)
            return 0.0
        vocabulary = self.vocabulary
        if not np.any(vocabulary.weights):
            return 0.0
        model_to_vocab = self._model_to_vocab()
        tokens = np.array([model_to_vocab.get(i, -1) for i in ids], dtype=ID_DTYPE)
        tokens = tokens[tokens >= 0]
        lengths = [len(part) for fragment in self._prepare(self._fragments(doc, False))
                   if not isinstance(fragment, int) for part in self._parts(fragment)]
        bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=bounds[1:])
        from ..encoders import TfidfScorer  # (the encoders: imported by what uses them, not by a load)

        return TfidfScorer(vocabulary).score(tokens, bounds)

    def _model_to_vocab(self) -> dict[int, int]:
        vocabulary, vocab_to_model, base_expansion = self._vocabulary_parts()
        table = {int(m): vocabulary.n_base + t for t, m in enumerate(vocab_to_model.tolist())}
        for base, expansion in enumerate(base_expansion):
            if len(expansion) == 1:
                table.setdefault(expansion[0], base)
        return table

    def _vocabulary_ids(self, ids: Sequence[int]) -> list[int] | None:
        """Model ids as vocabulary ids, or ``None`` if one has no vocabulary id (e.g. unknown)."""
        table = self._model_to_vocab()
        mapped = [table.get(i) for i in ids]
        return None if None in mapped else mapped

    def ambiguity(self, doc: str, *, weights: Any = None, temperature: float = 1.0,
                  encoding: Sequence[int] | str | None = "best") -> Ambiguity:
        """How ambiguous ``doc`` is on :attr:`vocabulary` (see :class:`ubpe.encoders.ambiguity.Ambiguity`):
        segmentations of its pre-tokens, special tokens fixed; ``weights`` one per vocabulary id
        (default: unigram models' log-probabilities, else the idf weights, all 0 - uniform -
        until :meth:`fit_weights`). ``encoding``:
        model ids, ``"best"`` for the native encoding, ``None``; its probability is ``None``
        if it holds an id outside the vocabulary (an unknown token)."""
        weights = self._default_weights() if weights is None else weights
        fragments = self._prepare(self._fragments(doc, False))
        parts = [part for fragment in fragments if not isinstance(fragment, int) for part in self._parts(fragment)]
        if isinstance(encoding, str) and encoding == "best":
            encoding = self.encode(doc)
        if encoding is not None:
            fixed = {fragment for fragment in fragments if isinstance(fragment, int)}
            encoding = self._vocabulary_ids([i for i in encoding if i not in fixed])
        from ..encoders.ambiguity import DocumentLattice

        return DocumentLattice(self.vocabulary, parts, weights, temperature).ambiguity(encoding)

    def _default_weights(self) -> np.ndarray | None:
        """Per vocabulary id, the weights of a model that has its own (a unigram model's
        log-probabilities), else ``None``."""
        return None

    def _batch_scores(self, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """``encode_batch_to_numpy``'s scores: a unigram model's log-probability of each
        document's encoding (:meth:`log_probability`, summed in float64), else NaN."""
        log_probs = self.token_log_probs()
        if log_probs is None:
            return super()._batch_scores(ids, offsets)  # type: ignore[misc]
        n_docs = len(offsets) - 1
        owners = np.repeat(np.arange(n_docs), np.diff(offsets))
        return np.bincount(owners, weights=log_probs[ids].astype(np.float64), minlength=n_docs)

    def token_log_probs(self) -> np.ndarray | None:
        """Per model id, a unigram model's log-probability of the token (what its Viterbi
        adds up), else ``None``: a BPE file holds merge ranks, not probabilities."""
        return None

    # -- what a score means: log-probabilities, fitted idf weights, or none ------------------

    def score_kind(self) -> str | None:
        """``"log-prob"`` for a unigram model, else ``"tf-idf"`` once :meth:`fit_weights` gave
        the vocabulary idf weights, else ``None`` (see :meth:`Tokenizer.score_kind`)."""
        return LOG_PROB if self._default_weights() is not None else super().score_kind()  # type: ignore[misc]

    def scored(self, encodings: Sequence[tuple[list[int], float]]) -> list[tuple[list[int], float | None]]:
        """``encodings`` with a unigram model's log-probabilities, or as the base says."""
        if self._default_weights() is None:
            return super().scored(encodings)  # type: ignore[misc]
        return [(list(ids), self.log_probability(ids)) for ids, _ in encodings]

    def log_probability(self, ids: Sequence[int]) -> float:
        """A unigram model's log-probability of the encoding ``ids``: the sum of its tokens'
        (control tokens such as BOS count 0). :class:`InvalidParameterError` for a model
        without probabilities."""
        log_probs = self.token_log_probs()
        if log_probs is None:
            raise InvalidParameterError(f"a {self.variant} model has no log-probabilities: {NO_WEIGHTS_HINT}")  # type: ignore[attr-defined]
        ids = self._check_ids(ids)  # type: ignore[attr-defined]
        return float(log_probs[np.asarray(ids, dtype=np.int64)].sum()) if ids else 0.0

    def encoder(self, name: str | None = None, **options: Any) -> Any:
        """The encoder ``name`` on :attr:`vocabulary` (:meth:`Tokenizer.encoder`). ``sample``
        and ``additive`` without ``weights``/``score`` take a unigram model's
        log-probabilities (its subword regularization, its Viterbi); ``sample`` on a model
        without weights (every segmentation would be drawn alike) is refused, naming the
        ways to give it some."""
        name = name or self.default_encoder
        if name in WEIGHTED_ENCODERS and "weights" not in options and "score" not in options:
            weights = self._default_weights()
            if weights is not None:
                options["weights"] = weights
            elif name == SAMPLE and self.score_kind() is None:
                raise InvalidParameterError(
                    f"`sample` draws segmentations by their tokens' weights, and this {self.variant} model "  # type: ignore[attr-defined]
                    f"has none (all would be drawn alike): {NO_WEIGHTS_HINT}; or pass weights=..., or draw "
                    "with `dropout` (BPE-dropout, BPE's own subword regularization)")
        return super().encoder(name, **options)  # type: ignore[misc]

    def token_frequencies(self) -> np.ndarray:
        """Per model id, the smoothed share of documents holding it, from the weights of
        :meth:`fit_weights` (ids outside the vocabulary: 1), for ``mean_frequency`` reranking."""
        vocabulary = self.vocabulary
        if not np.any(vocabulary.weights):
            raise NotFittedError("no token frequencies before fit_weights(corpus)")
        out = np.ones(self.n_vocab)
        from ..encoders.rerank import document_frequencies

        vocab_frequencies = document_frequencies(vocabulary)
        for model_id, vocab_id in self._model_to_vocab().items():
            out[model_id] = vocab_frequencies[vocab_id]
        return out

    def fit_weights(self, corpus: Iterable[str]) -> ImportedTokenizer:
        """Give the vocabulary ubpe's idf weights: the document frequency of every token in
        the native encodings of ``corpus`` (one document per text). Returns ``self``."""
        docs = list(corpus)
        vocabulary, vocab_to_model, base_expansion = self._vocabulary_parts()
        position = {int(m): t for t, m in enumerate(vocab_to_model.tolist())}
        counts = np.zeros(vocabulary.n_merged, dtype=np.int64)
        for doc in docs:
            seen = {position[i] for i in self.encode(doc) if i in position}
            counts[list(seen)] += 1
        weights = np.log((1 + len(docs)) / (1 + counts))
        from ..vocabulary import Vocabulary  # (not at import: it imports dataclasses)
        fitted = Vocabulary(vocabulary.n_base, vocabulary.merges, vocabulary.piece_offsets,
                            vocabulary.piece_symbols, weights, vocabulary.ranks)
        self._vocab = (fitted, vocab_to_model, base_expansion)
        self._forget_encoders()
        return self


class ImportedTokenizer(ImportedContract, EncoderBridge, Tokenizer):
    """What every imported model shares (see the module docstring). Subclasses define
    ``_native(text)``, ``_parts(text)``, ``_build_vocabulary()`` and ``_prepare(fragments)``."""

    variant = "imported"
    default_encoder = NATIVE
    symbol_unit = "byte"
    can_save = False  # read-only: the source file is the model
    has_ambiguity = True
    has_token_frequencies = True

    # Pickling (and deepcopy): an imported model holds compiled kernels, which do not pickle;
    # it is rebuilt from its constructor's arguments (recorded below), which builds them, and
    # gets back the rest of its state (e.g. the vocabulary with the weights of ``fit_weights``).
    _KERNELS = ("_kernel", "_pipeline", "_encoders", "_init_args")
    token_types = _TokenTypes()
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def recording_init(self, *args: Any, **options: Any) -> None:
            self.__dict__.setdefault("_init_args", (args, options))  # the outermost call's
            init(self, *args, **options)

        cls.__init__ = recording_init  # type: ignore[method-assign]

    def __reduce__(self) -> tuple:
        args, options = self.__dict__["_init_args"]
        state = {k: v for k, v in self.__dict__.items() if k not in self._KERNELS and not _holds_kernel(v)}
        return (_rebuilt, (type(self), args, options), state)

    def _init_common(self, texts: list[str], token_types: np.ndarray | None,
                     specials: dict[str, int | None] | None, flags: dict[str, Any] | None,
                     name: str, where: str) -> None:
        self.name = name
        self.where = where
        self.texts = texts
        n = len(texts)
        if token_types is None:
            token_types = array("i", [NORMAL]) * n
        if isinstance(token_types, array) and token_types.typecode == "i":  # numpy's array when asked
            self.__dict__.pop("token_types", None)  # (a view of an earlier call's array)
            self._types = token_types
        else:
            self.__dict__.pop("_types", None)
            self.token_types = np.asarray(token_types, dtype=np.int32)
        if len(token_types) != n:
            raise ModelFormatError(f"{where}: {len(token_types)} token types for {n} tokens")
        self.special_ids = {k: v for k, v in (specials or {}).items() if v is not None}
        flags = flags or {}
        self.add_bos = bool(flags.get("add_bos") or False)
        self.add_eos = bool(flags.get("add_eos") or False)
        self._special_tables: dict[bool, list[tuple[str, int, bool, bool]]] = {}
        self._special_finders: dict[bool, re.Pattern] = {}
        self._vocab: tuple[Vocabulary, np.ndarray, list[list[int]]] | None = None
        self._id_table: np.ndarray | None = None  # vocabulary id -> model id, -1: expand

    # -- the special tokens ------------------------------------------------------------------

    def _special_table(self, parse_special: bool) -> list[tuple[str, int, bool, bool]]:
        """Tokens cut out before encoding: user-defined ones always, control and unknown ones
        with ``parse_special`` (llama.cpp's cache_special_tokens), longest (in bytes) first."""
        cached = self._special_tables.get(parse_special)
        if cached is not None:
            return cached
        kinds = (USER_DEFINED, CONTROL, UNKNOWN) if parse_special else (USER_DEFINED,)
        ids = self._ids_of_types(kinds)
        table = [(self.texts[i], i, *self._strip_flags(i)) for i in ids if self.texts[i]]
        table.sort(key=lambda entry: -len(entry[0].encode("utf-8")))
        if table:  # finds whether any of them is in a text at all (Qwen2 has 293: 97 -> 13 µs a short text)
            self._special_finders[parse_special] = literal_finder(entry[0] for entry in table)
        self._special_tables[parse_special] = table
        return table

    def _ids_of_types(self, kinds: tuple[int, ...], *, first: bool = False) -> list[int]:
        """The ids whose type is one of ``kinds``, in order (the first only with ``first``):
        from the loader's ``array('i')`` while no one has asked for numpy's ``token_types``."""
        if "_types" in self.__dict__ and "token_types" not in self.__dict__:
            return indexes_of(self._types, kinds, first=first)
        found = np.flatnonzero(np.isin(self.token_types, kinds)).tolist()
        return found[:1] if first else found

    def _type_of(self, token: int) -> int:
        """``token_types[token]``, without making numpy's array of a loader's ``array('i')``."""
        types = self.__dict__.get("_types") if "token_types" not in self.__dict__ else None
        return types[token] if types is not None else int(self.token_types[token])

    def _strip_flags(self, token: int) -> tuple[bool, bool]:
        return False, False

    def _fragments(self, text: str, parse_special: bool) -> list[str | int]:
        text = check_doc(text)
        table = self._special_table(parse_special)
        if table and self._special_finders[parse_special].search(text) is None:
            return [text] if text else []  # no special token in the text (one search, not one per token)
        return partition_specials(text, table)

    def _prepare(self, fragments: list[str | int]) -> list[str | int]:
        return fragments

    # -- encoding ----------------------------------------------------------------------------

    def encode(self, doc: str, *, add_special: bool = False, parse_special: bool = False) -> list[int]:
        """The model's own ids for ``doc`` (llama.cpp's ``tokenize``): without BOS/EOS unless
        ``add_special``; control tokens in the text are plain text unless ``parse_special``."""
        prefix, suffix = self._special_ends(add_special)
        ids: list[int] = list(prefix)
        for fragment in self._prepare(self._fragments(doc, parse_special)):
            if isinstance(fragment, int):
                ids.append(fragment)
            else:
                ids.extend(self._native(fragment))
        ids.extend(suffix)
        return ids

    def _special_ends(self, add_special: bool) -> tuple[list[int], list[int]]:
        """The ids `encode` puts before and after a text's with ``add_special`` (BOS, EOS)."""
        if not add_special:
            return [], []
        return ([self.special_ids["bos"]] if self.add_bos and "bos" in self.special_ids else [],
                [self.special_ids["eos"]] if self.add_eos and "eos" in self.special_ids else [])

    def encode_batch(self, docs: Iterable[str], *, threads: int | None = None, add_special: bool = False,
                     parse_special: bool = False, **options: Any) -> list[list[int]]:
        """`encode` of every doc, on ``threads`` threads (default: ``UBPE_NUM_THREADS``, else
        one per core; the kernels release the GIL): the batch template's ids (`_flat_batch`)
        as lists. Same ids as one by one."""
        return id_lists(*self._flat_batch(docs, threads, **special_options(add_special, parse_special), **options))

    def _flat_batch(self, docs: Iterable[str], threads: int | None, **options: Any) -> FlatIds:
        """The one batch template of the imported families, ``encode_batch``'s ids as flat
        arrays (``encode_batch_to_numpy``'s): runs of consecutive documents on ``threads``
        threads (:func:`.chunks.run_flat_chunks`), each encoded by the family's run encoder
        (`_batch_runs`: a kernel call without the GIL, the documents it leaves out encoded by
        `encode` and spliced in), the ids ``add_special`` asks for around every document;
        without a run encoder for these options, or for a document that is no str (`encode`
        says what is wrong with it), one document at a time."""
        docs = list(docs)
        workers = batch_workers(threads)
        runs = self._batch_runs(options)
        try:
            lengths = None if runs is None else text_lengths(docs)
        except TypeError:
            lengths = None
        if runs is None or lengths is None:
            return flat_ids(run_chunks(docs, _doc_lengths(docs), workers,
                                       lambda chunk, _: [self.encode(doc, **options) for doc in chunk]))
        encode_run, cuttable = runs
        ids, offsets = run_flat_chunks(docs, lengths, workers, encode_run, cuttable)
        return framed(ids, offsets, *self._special_ends(bool(options.get("add_special", False))))

    def _batch_runs(self, options: dict[str, Any]) -> BatchRuns | None:
        """``(encode_run, cuttable)``: the family's ``(docs, lengths) -> FlatIds`` for ``options``
        (without the ``add_special`` ids) and which long documents it may cut (None: none);
        None: one document at a time."""
        return None

    # -- decoding and inspection ---------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        return len(self.texts)

    def _check_ids(self, ids: Iterable[int]) -> list[int]:
        out = checked_ids(ids)
        for token in out:
            if not 0 <= token < len(self.texts):
                raise UnknownTokenError(f"token {token!r} is not in the vocabulary (ids 0..{len(self.texts) - 1})")
        return out

    def pieces(self, ids: Iterable[int]) -> list[Any]:
        """What every id stands for, in ``symbol_unit`` (see :mod:`ubpe.models.contract`)."""
        return self.unit_pieces(ids)

    def id_to_piece(self, token: int) -> str:
        """The model's own string of ``token`` (``Ġworld``, ``▁the``, ``<0x0A>``)."""
        return self.texts[self._check_ids([token])[0]]

    def get_vocab(self) -> dict[str, int]:
        """Every id by the model's own spelling of it (the lowest id of a text two ids share)."""
        return dict(self._text_index())

    def inventory(self) -> Inventory:
        """The contract's inventory, with the merges the model records (``inspect --tree``)."""
        inventory = super().inventory()  # (a new one)
        inventory.merges = self._recorded_merges()
        return inventory

    def _recorded_merges(self) -> dict[int, tuple[int, int]]:
        return {}

    def describe(self) -> dict[str, Any]:
        counts = np.bincount(self.token_types, minlength=BYTE + 1)
        return {
            "variant": self.variant,
            "name": self.name,
            "n_vocab": self.n_vocab,
            "symbol_unit": self.symbol_unit,
            "default_encoder": self.default_encoder,
            "token_types": {kind: int(counts[value]) for kind, value in (
                ("normal", NORMAL), ("unknown", UNKNOWN), ("control", CONTROL),
                ("user_defined", USER_DEFINED), ("unused", UNUSED), ("byte", BYTE)) if counts[value]},
            "special_ids": dict(self.special_ids),
            "add_bos": self.add_bos,
            "add_eos": self.add_eos,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.variant}, n_vocab={self.n_vocab}, name={self.name!r})"
