"""WordPiece (BERT): greedy longest-match-first over the words of a normalized text.

A word is cut from its start: the longest piece that is a token is taken, then the longest
*continuation* token from where it ended, and so on; a word that cannot be cut to its end
(or, in HF, longer than ``max_input_chars_per_word``) is one unknown token, whole. The
two systems spell the pieces differently and are read as they are:

* HF ``tokenizers`` (``tokenizer.json``, ``WordPiece`` model): a word-initial token is the
  plain text (``play``), a continuation carries ``continuing_subword_prefix`` (``##ing``);
  the text goes through HF's pipeline (``BertNormalizer``, ``BertPreTokenizer``, added tokens,
  ``BertProcessing`` / ``TemplateProcessing``, the ``WordPiece`` decoder);
* llama.cpp (GGUF ``tokenizer.ggml.model = "bert"``, its WPM tokenizer): a word-initial token
  starts with ``▁`` (``▁play``), a continuation is plain (``ing``): the word matched is ``▁`` +
  word. Its own preprocessing (:func:`~ubpe.text.bert_words.wpm_words`) and
  ``[CLS] ... [SEP]`` with ``add_special``; decoding writes ``▁`` as a space and cleans the
  spaces before punctuation as ``llama_detokenize`` does.

Both become one table of word-initial pieces and one of continuation pieces, keyed by the
text they cover (:class:`WordPiece`). ``encode`` and ``encode_batch`` run in the kernel
`ubpe_native._wordpiece` (words cut by a class per code point, the greedy match in a byte
trie; ``encode_batch`` a chunk of documents per call on every core, without the GIL); the
Python path (:meth:`WordPiece._reference_encode`) takes a text holding a special token, and is
what the kernel is tested against. ubpe's encoders run on a vocabulary over *two* base
symbols per character, its word-initial and its continuation form, so that every
segmentation they choose is a WordPiece one (a token ``play`` is the initial ``p`` then the
continuation ``l a y``).

>>> tok = WordPiece(["[UNK]", "▁play", "ing", "▁a", "▁", "[CLS]", "[SEP]"], token_types=[3, 1, 1, 1, 1, 3, 3],
...                 specials={"unk": 0, "bos": 5, "sep": 6})
>>> tok.encode("Playing A x"), tok.encode("a", add_special=True)
([1, 2, 3, 0], [5, 3, 6])
>>> tok.decode([5, 1, 2, 3, 6])
'[CLS] playing a[SEP]'
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from collections.abc import Callable, Sequence

from ubpe_native._numpy import ID_DTYPE, np
from ubpe_native._wordpiece import WordPieceKernel, utf8_pieces

from .._lazy import regex
from ..errors import ModelFormatError
from ..text.bert_words import bert_classes, bert_lower_map, wpm_classes, wpm_maps, wpm_words
from ..text.specials import special_regex
from .chunks import FlatIds, cuttable_unless, docs_matching, encode_chunk, text_lengths
from .hf_base import HFPipeline, HFPipelineMixin, _Segment, _texts_and_types
from .imported import NORMAL, USER_DEFINED, BatchRuns, ImportedTokenizer

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
    from ..vocabulary import Vocabulary

SPACE = "▁"
#: HF's defaults (``models/wordpiece/mod.rs``)
DEFAULT_PREFIX, DEFAULT_MAX_CHARS = "##", 100
#: llama.cpp's default special ids for the ``bert`` type (``llama_vocab::impl::load``)
LLAMA_CPP_SPECIALS = {"bos": 101, "unk": 100, "sep": 102, "pad": 0, "mask": 103}
_CACHED_WORDS = 1 << 16
#: Joins the documents of a chunk for one normalizer call: no step of a ``BertNormalizer``
#: touches it (a noncharacter: no class, no decomposition, no case)
_JOIN = "\uffff"


class WordPiece(ImportedTokenizer):
    """A WordPiece model as llama.cpp reads a GGUF ``bert`` vocabulary (see the module
    docstring): ``tokens`` in llama.cpp's spelling (``▁`` before word-initial pieces),
    ``lowercase`` and ``strip_accents`` its ``BertNormalizer`` options, ``specials`` the ids of
    ``unk``, ``bos`` (``[CLS]``) and ``sep`` (``[SEP]``); ``add_special`` puts BOS and SEP
    around a text, as ``llama_tokenize`` does for this type."""

    variant = "gguf:bert"
    symbol_unit = "char"

    def __init__(self, tokens: Sequence[str], *, token_types: Sequence[int] | np.ndarray | None = None,
                 specials: dict[str, int | None] | None = None, lowercase: bool = True,
                 strip_accents: bool | None = None, name: str = "", where: str = "<tokens>"):
        specials = {**LLAMA_CPP_SPECIALS, **{k: v for k, v in (specials or {}).items() if v is not None}}
        specials = {k: v for k, v in specials.items() if 0 <= v < len(tokens)}
        self._init_common(list(tokens), None if token_types is None else np.asarray(token_types), specials,
                          None, name, where)
        self.lowercase = lowercase
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        # llama.cpp's token_to_id: the last of equal texts; a word-initial piece is spelled "▁" +
        # its text, a continuation piece is any token's text
        self._setup_matching({text: i for i, text in enumerate(self.texts)}, SPACE, "", None, where)

    # -- the model --------------------------------------------------------------------------

    def _setup_matching(self, source: dict[str, int], initial_prefix: str, continuation_prefix: str,
                        max_chars: int | None, where: str) -> None:
        """The model's pieces: ``source``, every token by its text (one id each), is read as
        word-initial pieces (the tokens spelled ``initial_prefix`` + text; ``""``: every token)
        and continuation pieces (likewise ``continuation_prefix``); both tables are made when
        first needed (:attr:`_initial`, :attr:`_continuation`: the Python path), the kernel splits
        ``source`` itself. ``max_chars``: longer words are unknown (HF), ``None``: no limit
        (llama.cpp). The prefix alone (llama.cpp's ``▁``) is the empty initial piece, taken only
        where no longer one matches."""
        if not self.texts:
            raise ModelFormatError(f"{where}: the vocabulary is empty")
        unk = self.special_ids.get("unk")
        if unk is None:
            raise ModelFormatError(f"{where}: the vocabulary has no unknown token, which WordPiece needs "
                                   "for a word it cannot cut")
        self._unk = unk
        self._source = source
        self._initial_prefix, self._continuation_prefix = initial_prefix, continuation_prefix
        self._empty_initial = source.get(initial_prefix)
        self.max_input_chars_per_word = max_chars
        self._word_cache: dict[str, tuple[int, ...]] = {}

    @functools.cached_property
    def _initial(self) -> dict[str, int]:
        """The word-initial pieces by the text they cover (no empty one)."""
        return _pieces_after(self._source, self._initial_prefix)

    @functools.cached_property
    def _continuation(self) -> dict[str, int]:
        """The continuation pieces by the text they cover (no empty one)."""
        return _pieces_after(self._source, self._continuation_prefix)

    @functools.cached_property
    def _longest_initial(self) -> int:
        return max(map(len, self._initial), default=0)

    @functools.cached_property
    def _longest_continuation(self) -> int:
        return max(map(len, self._continuation), default=0)

    def _word_ids(self, word: str) -> tuple[int, ...]:
        """The ids of one word: greedy longest-match-first, or the unknown token, whole.

        >>> tok = WordPiece(["[UNK]", "▁ba", "na", "n"], specials={"unk": 0})
        >>> tok._word_ids("banana"), tok._word_ids("nab")
        ((1, 2, 2), (0,))
        """
        found = self._word_cache.get(word)
        if found is not None:
            return found
        if self.max_input_chars_per_word is not None and len(word) > self.max_input_chars_per_word:
            return (self._unk,)
        out: list[int] = []
        table, longest, start, n = self._initial, self._longest_initial, 0, len(word)
        while start < n:
            end = min(n, start + longest)
            while end > start:
                token = table.get(word[start:end])
                if token is not None:
                    break
                end -= 1
            else:
                if start or self._empty_initial is None or table is not self._initial:
                    out = [self._unk]
                    break
                token, end = self._empty_initial, 0
            out.append(token)
            start = end
            table, longest = self._continuation, self._longest_continuation
        found = tuple(out)
        if len(self._word_cache) < _CACHED_WORDS:
            self._word_cache[word] = found
        return found

    def _words(self, text: str) -> list[str]:
        return wpm_words(text, self.lowercase, self.strip_accents)

    def _native(self, text: str) -> list[int]:
        return [token for word in self._words(text) for token in self._word_ids(word)]

    def _special_ends(self, add_special: bool) -> tuple[list[int], list[int]]:
        """llama.cpp's WPM: ``[CLS]`` (BOS) before and ``[SEP]`` after, whatever ``add_bos`` says."""
        if not add_special:
            return [], []
        return ([self.special_ids["bos"]] if "bos" in self.special_ids else [],
                [self.special_ids["sep"]] if "sep" in self.special_ids else [])

    # -- the kernel: encode, encode_batch (without the GIL) ---------------------------------

    def encode(self, doc: str, *, add_special: bool = False, parse_special: bool = False) -> list[int]:
        """The model's own ids for ``doc`` (llama.cpp's ``tokenize``, HF's ``encode``): by the
        kernel where it runs this model's pipeline and ``doc`` holds no special token, else
        by :meth:`_reference_encode` (the same ids)."""
        ids = self._kernel_ids(doc, parse_special)
        if ids is None:
            return self._reference_encode(doc, add_special=add_special, parse_special=parse_special)
        prefix, suffix = self._special_ends(add_special)
        return [*prefix, *ids, *suffix] if prefix or suffix else ids

    def _reference_encode(self, doc: str, **options: Any) -> list[int]:
        """``encode`` in Python (:func:`~ubpe.text.bert_words.wpm_words` and
        :meth:`_word_ids`): what the kernel is tested against, and the way of a text holding
        a special token."""
        return ImportedTokenizer.encode(self, doc, **options)

    def _kernel_ids(self, doc: Any, parse_special: bool) -> list[int] | None:
        """``doc``'s ids from the kernel; None where the reference must encode it (no kernel
        for this pipeline, a special token in ``doc``, or a ``doc`` that is no text)."""
        kernel = self._kernel()
        if kernel is None or type(doc) is not str:
            return None
        specials = self._batch_specials(parse_special)
        if specials is not None and specials.search(doc) is not None:
            return None
        rewrite = self._rewriter()
        text = doc if rewrite is None else rewrite(doc)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: the reference says what is wrong
            return None
        return kernel.text_ids(data)

    def _batch_runs(self, options: dict[str, Any]) -> BatchRuns | None:
        """The batch template's run encoder (`ImportedTokenizer._flat_batch`): a run of
        documents is cut into words and encoded by `ubpe_native._wordpiece` in one call,
        without the GIL (:mod:`ubpe.models.chunks`); a document holding a special token goes
        through `encode`.

        >>> tok = WordPiece(["[UNK]", "▁play", "ing", "▁a"], specials={"unk": 0})
        >>> tok.encode_batch(["Playing a", "", "x"])
        [[1, 2, 3], [], [0]]
        """
        kernel = self._kernel()
        if kernel is None or not set(options) <= {"add_special", "parse_special"}:
            return None
        parse_special = bool(options.get("parse_special", False))
        specials = self._batch_specials(parse_special)

        def prepare(chunk: list[str], sizes: np.ndarray) -> tuple[str, np.ndarray, np.ndarray | None]:
            raw = "".join(chunk)
            skip = docs_matching(specials, raw, sizes)
            return (*self._batch_text(chunk, raw, sizes), skip)

        def encode(data: bytes, sizes: np.ndarray, skip: np.ndarray | None) -> tuple[np.ndarray, ...]:
            return (*kernel.encode_texts(data, sizes, skip), skip)

        def encode_run(docs: list, lengths: np.ndarray) -> FlatIds:
            return encode_chunk(docs, lengths, prepare, encode, lambda doc: self.encode(doc, parse_special=parse_special))

        return encode_run, cuttable_unless(specials)

    def _kernel(self) -> WordPieceKernel | None:
        """The kernel that cuts and encodes this model's texts (built on first use), or None if
        its text pipeline is not one the kernel runs."""
        kernel = self.__dict__.get("_wordpiece_kernel", False)
        if kernel is False:
            kernel = self._build_kernel()
            self._wordpiece_kernel = kernel
        return kernel

    def _build_kernel(self) -> WordPieceKernel | None:
        """llama.cpp's WPM: its classes, the first of every NFD (``strip_accents``), the simple
        lowercase (``lowercase``)."""
        return self._kernel_on(wpm_classes(self.strip_accents), *wpm_maps(self.lowercase, self.strip_accents))

    def _kernel_on(self, classes: np.ndarray, fold: np.ndarray | None = None,
                   lower: np.ndarray | None = None) -> WordPieceKernel:
        limit = -1 if self.max_input_chars_per_word is None else self.max_input_chars_per_word
        empty = -1 if self._empty_initial is None else self._empty_initial
        source, prefixes = self._source, (self._initial_prefix, self._continuation_prefix)
        if not any("\0" in prefix for prefix in prefixes):
            # the pieces' UTF-8 joined by NULs in one pass over the dict, which the kernel splits
            # (None: a piece holding a NUL or a lone surrogate, or an id that is no int32 >= 0)
            pieces = utf8_pieces(source)  # (`_setup_matching` keeps a dict)
            if pieces is not None:
                return WordPieceKernel.from_vocabulary(
                    *pieces, *(prefix.encode("utf-8", "surrogatepass") for prefix in prefixes),
                    self._unk, limit, empty, classes, fold, lower)

        def utf8(table: dict[str, int]) -> tuple[list[bytes], list[int]]:
            return [t.encode("utf-8", "surrogatepass") for t in table], list(table.values())

        return WordPieceKernel(*utf8(self._initial), *utf8(self._continuation), self._unk, limit, empty,
                               classes, fold, lower)

    def _batch_specials(self, parse_special: bool) -> regex.Pattern | None:
        """The tokens that send a document to :meth:`_reference_encode` (it cuts them out), as
        one pattern (None: none)."""
        found = self.__dict__.setdefault("_kernel_specials", {})
        if parse_special not in found:
            table = self._special_table(parse_special)
            found[parse_special] = special_regex(frozenset(entry[0] for entry in table)) if table else None
        return found[parse_special]

    def _rewriter(self) -> Callable[[str], str] | None:
        """What changes a text's characters before the kernel reads it (None: nothing;
        llama.cpp's WPM normalizes in the kernel)."""
        return None

    def _batch_text(self, docs: list[str], raw: str, lengths: np.ndarray) -> tuple[str, np.ndarray]:
        """What the kernel reads for ``docs`` (``raw``: them joined) and its documents' lengths:
        the texts after :meth:`_rewriter`, in one call on them joined by :data:`_JOIN` (one by
        one if a document holds it)."""
        rewrite = self._rewriter()
        if rewrite is None:
            return raw, lengths
        texts = rewrite(_JOIN.join(docs)).split(_JOIN)
        if len(texts) != len(docs):
            texts = list(map(rewrite, docs))
        return "".join(texts), text_lengths(texts)

    # -- ubpe's encoders --------------------------------------------------------------------

    def _pieces_by_text(self) -> tuple[dict[str, int], dict[str, int]]:
        """Word-initial and continuation pieces that ubpe's encoders may use (normal ones)."""
        usable = {i for i in range(len(self.texts)) if self.token_types[i] in (NORMAL, USER_DEFINED)}
        return ({t: i for t, i in self._initial.items() if i in usable},
                {t: i for t, i in self._continuation.items() if i in usable and not t.startswith(SPACE)})

    def _build_vocabulary(self) -> tuple[Vocabulary, np.ndarray, list[list[int]]]:
        """Base symbols: each character twice, word-initial (even ids) and continuation (odd
        ids), expanding to its one-character token or the unknown token, then the unknown token
        (a word no piece covers); pieces: the tokens of two characters or more, over those symbols."""
        initial, continuation = self._pieces_by_text()
        chars = sorted({c for t in (*initial, *continuation) for c in t})
        self._base_of = {c: k for k, c in enumerate(chars)}
        base_expansion: list[list[int]] = []
        for c in chars:
            base_expansion.append([initial.get(c, self._unk)])
            base_expansion.append([continuation.get(c, self._unk)])
        self._unknown_base = len(base_expansion)
        base_expansion.append([self._unk])
        pieces, model_ids = [], []
        for table, first in ((initial, 0), (continuation, 1)):
            for text, token in table.items():
                if len(text) >= 2:
                    pieces.append([2 * self._base_of[text[0]] + first] + [2 * self._base_of[c] + 1 for c in text[1:]])
                    model_ids.append(token)
        order = np.argsort([len(p) for p in pieces], kind="stable")
        from ..vocabulary import Vocabulary  # (not at import: it imports dataclasses)
        vocabulary = Vocabulary.from_pieces(len(base_expansion), [pieces[k] for k in order], np.zeros(len(pieces)),
                                            ranks=np.arange(len(pieces), dtype=np.int64))
        return vocabulary, np.asarray(model_ids, dtype=np.int64)[order], base_expansion

    def _parts(self, text: Any) -> list[np.ndarray]:
        """One part per word: its characters' base symbols (the first one word-initial); a word
        with a character no piece has, or too long, is the unknown token's base symbol."""
        self._vocabulary_parts()
        out = []
        limit = self.max_input_chars_per_word
        for word in self._words_of(text):
            bases = [self._base_of.get(c) for c in word]
            if None in bases or (limit is not None and len(word) > limit):
                out.append(np.asarray([self._unknown_base], dtype=ID_DTYPE))
            else:
                out.append(np.asarray([2 * bases[0]] + [2 * b + 1 for b in bases[1:]], dtype=ID_DTYPE))
        return out

    def _words_of(self, text: Any) -> list[str]:
        return self._words(text)

    # -- decoding ---------------------------------------------------------------------------

    def decode_bytes(self, ids) -> bytes:
        """The tokens' texts, ``▁`` written as a space in normal ones (llama.cpp's ``token_to_piece``)."""
        out = []
        for i in self._check_ids(ids):
            text = self.texts[i]
            out.append((text.replace(SPACE, " ") if self.token_types[i] == NORMAL else text).encode("utf-8", "surrogatepass"))
        return b"".join(out)

    def decode(self, ids, errors: str = "replace") -> str:
        """``llama_detokenize(ids, remove_special=false, unparse_special=true)``: every token's
        text (``▁`` as a space: a decoded text starts with one), then llama.cpp's
        ``clean_spaces`` passes (:func:`clean_spaces`)."""
        return clean_spaces(self.decode_bytes(ids)).decode("utf-8", errors=errors)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(lowercase=self.lowercase, strip_accents=self.strip_accents,
                    max_input_chars_per_word=self.max_input_chars_per_word)
        return info


def _pieces_after(source: dict[str, int], prefix: str) -> dict[str, int]:
    """The tokens of ``source`` spelled ``prefix`` + text, by that text (``""``: all of them),
    the empty text left out."""
    if prefix:
        n = len(prefix)
        table = {text[n:]: i for text, i in source.items() if text.startswith(prefix)}
    else:
        table = dict(source)
    table.pop("", None)
    return table


def clean_spaces(text: bytes) -> bytes:
    """llama.cpp's ``clean_spaces`` (``llama_vocab::impl::detokenize``), its three passes over
    the bytes: no space before ``? ! . ,``; `` ' `` becomes ``'``; no space before ``'s``,
    ``'m``, ``'re``, ``'ve`` (``'t``, ``'d``, ``'ll`` keep theirs).

    >>> clean_spaces(b" hello , world ' s it 's they 've we 'll")
    b" hello, world's it's they've we 'll"
    """
    buf = bytearray(text)
    for clean in (_first_pass, _second_pass, _third_pass):
        buf = clean(buf)
    return bytes(buf)


def _first_pass(text: bytearray) -> bytearray:
    out = bytearray(text[:1])
    for i in range(1, len(text)):
        if text[i - 1] == 0x20 and text[i] in b"?!.,":
            out.pop()
        out.append(text[i])
    return out


def _second_pass(text: bytearray) -> bytearray:
    out = bytearray(text[:1])
    i = 1
    while i < len(text):
        x = text[i]
        if x == 0x27 and i + 1 < len(text) and text[i - 1] == 0x20 and text[i + 1] == 0x20:
            out.pop()
            out.append(x)
            i += 2  # the space after is dropped too
            continue
        out.append(x)
        i += 1
    return out


def _third_pass(text: bytearray) -> bytearray:
    out = bytearray(text[:1])
    n = len(text)
    for i in range(1, n):
        x = text[i]
        if text[i - 1] == 0x20 and x == 0x27 and i + 1 < n:
            after = text[i + 1]
            if after in b"sm" or (i + 2 < n and text[i + 1 : i + 3] in (b"re", b"ve")):
                out.pop()
        out.append(x)
    return out


class HFWordPiece(HFPipelineMixin, WordPiece):
    """An HF ``tokenizer.json`` with a ``WordPiece`` model (see the module docstring):
    ``vocab`` in HF's spelling, ``unk_token``, ``continuing_subword_prefix`` and
    ``max_input_chars_per_word`` as the model's fields."""

    variant = "hf:wordpiece"

    def __init__(self, vocab: dict[str, int], pipeline: HFPipeline, *, unk: str = "[UNK]",
                 prefix: str = DEFAULT_PREFIX, max_input_chars_per_word: int = DEFAULT_MAX_CHARS,
                 name: str = "", where: str = "<tokenizer.json>"):
        if not vocab:
            raise ModelFormatError(f"{where}: the WordPiece model's vocabulary is empty")
        if unk not in vocab:
            raise ModelFormatError(f"{where}: the WordPiece model's unk_token {unk!r} is not in its vocabulary")
        texts, types, _ = _texts_and_types(vocab, pipeline, unk, False)
        self._init_common(texts, types, {"unk": vocab[unk]}, None, name, where)
        self._setup_pipeline(pipeline)
        self.prefix = prefix
        self.lowercase = self.strip_accents = None
        self._setup_matching(dict(vocab), "", prefix, max_input_chars_per_word, where)
        self._empty_initial = None  # HF's first piece covers a character at least

    def _build_kernel(self) -> WordPieceKernel | None:
        """The kernel for the usual BERT pipeline: a ``BertNormalizer`` (or none) and the
        ``BertPreTokenizer``, no added token matched in the normalized text (the kernel's
        text is not normalized all the way: :meth:`BertNormalizer.rewrite`). None otherwise."""
        steps, pre = self.pipeline.normalizer, self.pipeline.pre.steps
        if pre != [("bert",)] or any(t.normalized for t in self.pipeline.added.tokens) \
                or not (steps == [] or (len(steps) == 1 and steps[0][0] == "bert")):
            return None
        normalizer = steps[0][1] if steps else None
        return self._kernel_on(bert_classes(bool(normalizer and normalizer.handle_chinese_chars),
                                            bool(normalizer and normalizer.strip_accents)),
                               lower=bert_lower_map() if normalizer and normalizer.lowercase else None)

    def _batch_specials(self, parse_special: bool) -> regex.Pattern | None:
        return self.pipeline.added.raw_pattern  # HF cuts added tokens out whatever parse_special says

    def _rewriter(self) -> Callable[[str], str] | None:
        """:meth:`BertNormalizer.rewrite` (the kernel does the rest of the normalizer)."""
        return self.pipeline.normalizer[0][1].rewrite if self.pipeline.normalizer else None

    encode = WordPiece.encode

    def _reference_encode(self, doc: str, **options: Any) -> list[int]:
        """``encode`` in Python, HF's pipeline step by step (:class:`~ubpe.models.hf.HFPipelineMixin`)."""
        return HFPipelineMixin.encode(self, doc, **options)

    def _encode_segment(self, segment: _Segment) -> list[int]:
        return [token for word in self._hf_words(segment) for token in self._word_ids(word)]

    def _hf_words(self, segment: _Segment) -> list[str]:
        return self.pipeline.pre.words(segment.text, segment.first)

    def _words_of(self, segment: Any) -> list[str]:
        return self._hf_words(segment if isinstance(segment, _Segment) else _Segment(segment, True))

    def _special_ends(self, add_special: bool) -> tuple[list[int], list[int]]:
        return HFPipelineMixin._special_ends(self, add_special)

    def _pieces_by_text(self) -> tuple[dict[str, int], dict[str, int]]:
        usable = {i for i in range(len(self.texts)) if self.token_types[i] in (NORMAL, USER_DEFINED)}
        prefix = self.prefix
        return ({t: i for t, i in self._initial.items() if i in usable and not (prefix and t.startswith(prefix))},
                {t: i for t, i in self._continuation.items() if i in usable})

    def decode_bytes(self, ids) -> bytes:
        """The tokens' texts as HF spells them (``##ing``)."""
        return "".join(self.texts[i] for i in self._check_ids(ids)).encode("utf-8", "surrogatepass")

    def decode(self, ids, errors: str = "replace", *, skip_special: bool = True) -> str:
        """HF's ``Tokenizer.decode(ids, skip_special_tokens=skip_special)``."""
        return HFPipelineMixin.decode(self, ids, errors, skip_special=skip_special)

    def unit_pieces(self, ids) -> list[Any]:
        """What every id stands for, as llama.cpp's spelling says it: a continuation its text
        without the prefix (``##ing`` -> ``ing``), a word-initial token its text after a space
        (``play`` -> `` play``), a special token its text."""
        prefix = self.prefix
        out = []
        for i in self._check_ids(ids):
            text = self.texts[i]
            if self.token_types[i] != NORMAL:
                out.append(text)
            elif prefix and text.startswith(prefix):
                out.append(text[len(prefix):])
            else:
                out.append(" " + text)
        return out

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(self._hf_description(), continuing_subword_prefix=self.prefix)
        for key in ("lowercase", "strip_accents"):
            info.pop(key, None)
        return info


__all__ = ["HFWordPiece", "WordPiece", "clean_spaces"]
