"""Sentencepiece-style string models: BPE by piece scores (llama.cpp's ``llama`` GGUF type).

Text becomes one string: a space in front (the *dummy prefix*, at the start and after every
special token), every space replaced by ``▁``. Its characters are the starting symbols; of all
adjacent pairs whose concatenation is a token, the one forming the token of highest score
merges first, the leftmost on ties (llama.cpp's ``llm_tokenizer_spm``). A character that is no
token is written as its UTF-8 bytes' ``<0xXX>`` tokens (byte fallback), or the unknown token.

Speed: ``encode`` and ``encode_batch`` run the whole text pipeline in C
(`ubpe_native._spm_pipeline.SpmPipeline`: normalizer, dummy prefix, merges or Viterbi), a batch
in runs of consecutive documents, one per thread, each a few calls without the GIL; a text the
pipeline cannot take alone (a llama.cpp text holding a user-defined token, ``parse_special``)
goes the general way (`CharModel._general_encode`) in its place.

>>> tok = SentencePieceBPE(["<unk>", "▁", "a", "b", "▁a", "ab", "▁ab", "<0x63>"],
...                        np.array([0, -1, -1, -1, -2, -3, -4, 0], np.float32),
...                        token_types=np.array([2, 1, 1, 1, 1, 1, 1, 6]))
>>> tok.encode("ab c")
[6, 1, 7]
>>> tok.decode([6, 1, 7])
'ab c'

A ``.model`` file's model is built from the tables that `ubpe_native._spm_proto` reads and
derives in C (`SentencePieceBPE._from_tables`, `SentencePieceUnigram._from_tables`): its load
and first encodes import no numpy; the texts, scores and types are made when first asked for.

The module is over 600 lines because `CharModel` (the C pipeline's one-text and batch calls,
shared by the HF character BPE and unigram families, and the tables' lazy attributes) and the
sentencepiece models that first needed it live together; what would split it is `CharModel`
into a module of its own.
"""

from __future__ import annotations

import bisect
import itertools
from _thread import allocate_lock  # threading.Lock without importing threading (~0.4 ms)
from array import array
from collections.abc import Callable

from ubpe_native._numpy import ID_DTYPE, np
from ubpe_native._spm import SpmBPE, SpmNormalizer
from ubpe_native._spm_pipeline import SpmPipeline
from ubpe_native._spm_proto import bpe_tables, piece_texts, unigram_tables, user_defined_table
from ubpe_native._unigram import UnigramLattice

from .._lazy import as_buffer
from ..errors import ModelFormatError
from .chunks import FlatIds, spliced
from .imported import (BYTE, CONTROL, NORMAL, SILENT_TYPES, UNKNOWN, UNUSED, USER_DEFINED, BatchRuns, ImportedTokenizer,
                       check_doc, token_bytes)
from ..text.normalizers import Normalizer

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any, ClassVar
    from ubpe_native._merges import PairMerges

    from ..vocabulary import Vocabulary

SPACE = "▁"
_UNK_SURFACE = " \u2047 "
# llama.cpp gives Phi-3's special tokens rstrip, except these (llama_vocab::impl::load)
_PHI3_NAMES = ("phi-3", "phi3")
_PHI3_NO_RSTRIP = ("<unk>", "<s>", "<|endoftext|>")
_MATERIALIZING = allocate_lock()  # CharModel._materialize: one thread builds, the others wait


class CharModel(ImportedTokenizer):
    """What the sentencepiece-style models share: pieces over characters with ``▁``, byte
    fallback, and either llama.cpp's text handling (dummy prefix after special tokens) or
    sentencepiece's (its `Normalizer`, user-defined pieces kept whole)."""

    symbol_unit = "char"
    #: sentencepiece cuts a text at its user-defined pieces before encoding (BPE: they never
    #: merge); its unigram model instead scores them in the lattice (``0.1 * (bytes - 1)``).
    _cuts_user_defined: ClassVar[bool] = True
    #: what a model read by `_init_from_tables` builds when first asked for (`_materialize`)
    _MATERIALIZED = frozenset({"texts", "scores", "token_types", "_text_to_id", "_user_regex", "_init_args"})

    def _init_char_model(self, tokens: list[str], scores: np.ndarray | None,
                         token_types: np.ndarray | None, specials: dict[str, int | None] | None,
                         flags: dict[str, Any] | None, name: str, variant: str | None, where: str,
                         normalizer: Normalizer | None) -> None:
        self._init_common(list(tokens), token_types, specials, flags, name, where)
        if variant:
            self.variant = variant
        n = len(self.texts)
        if callable(scores):  # the scores made when first asked for (`__getattr__`: an HF file's)
            self._make_scores = scores
        else:
            self.scores = np.zeros(n, dtype=np.float32) if scores is None else np.asarray(scores, np.float32)
            if len(self.scores) != n:
                raise ModelFormatError(f"{where}: {len(self.scores)} scores for {n} tokens")
        flags = flags or {}
        # llama.cpp: add_space_prefix defaults to true for the llama type; add_bos too
        self.add_space_prefix = True if flags.get("add_space_prefix") is None else bool(flags["add_space_prefix"])
        if flags.get("add_bos") is None and normalizer is None:
            self.add_bos = True
        if "unk" not in self.special_ids:
            unknown = self._ids_of_types((UNKNOWN,), first=True)
            self.special_ids["unk"] = unknown[0] if unknown else 0
        self.normalizer = normalizer
        self._pipeline: SpmPipeline | None = None  # the text pipeline in C, where there is one
        self._phi3 = any(key in name.lower() for key in _PHI3_NAMES)
        self._text_to_id = {text: i for i, text in enumerate(self.texts)}
        # sentencepiece without byte fallback writes one unknown id per run of unknown pieces
        self._collapse_unk = normalizer is not None and not np.any(self.token_types == BYTE)
        self._user_regex = self._compiled_user_regex()

    def _compiled_user_regex(self) -> Any:
        """What `_fragments` cuts a sentencepiece text at: its user-defined pieces, longest
        first (None: none, or llama.cpp's text handling, or a model that scores them)."""
        if self.normalizer is None or not self._cuts_user_defined:
            return None
        user = [t for t, _ in self._user_defined()]
        if not user:
            return None
        import regex  # (here: a load and its encodes, in C, never cut a text in Python)

        return regex.compile("|".join(regex.escape(t) for t in sorted(user, key=len, reverse=True)))

    def _init_from_tables(self, tables: tuple, name: str, where: str, variant: str | None) -> tuple:
        """The state `_init_char_model` sets, from a ``.model`` file's tables as
        `ubpe_native._spm_proto.read_model_proto` gives them, without numpy: what encoding
        needs now (the normalizer, the special ids), the pieces' texts, scores and types (numpy
        arrays) and the dict of texts when first asked for (`_materialize`). Returns the
        user-defined pieces' table for the normalizer in C (`_build_pipeline`)."""
        blob, offsets, scores, types, spec = tables
        n = len(offsets) - 1
        user = user_defined_table(blob, offsets, types)
        normalizer = Normalizer(
            spec["precompiled_charsmap"], add_dummy_prefix=spec["add_dummy_prefix"],
            remove_extra_whitespaces=spec["remove_extra_whitespaces"], escape_whitespaces=spec["escape_whitespaces"],
            treat_whitespace_as_suffix=spec["treat_whitespace_as_suffix"], protected=tuple(piece_texts(*user[:2])))
        specials = {kind: spec[kind + "_id"] if 0 <= spec[kind + "_id"] < n else None for kind in ("unk", "bos", "eos")}
        flags = {"add_bos": False, "add_eos": False, "add_space_prefix": spec["add_dummy_prefix"]}
        special_ids = {k: v for k, v in specials.items() if v is not None}
        special_ids.setdefault("unk", types.index(UNKNOWN))  # (the reader made sure there is one)
        self.__dict__.update(
            name=name, where=where, special_ids=special_ids, add_bos=False, add_eos=False, _special_tables={},
            _special_finders={}, _vocab=None, _id_table=None, add_space_prefix=bool(spec["add_dummy_prefix"]),
            normalizer=normalizer, _pipeline=None, _phi3=any(key in name.lower() for key in _PHI3_NAMES),
            _collapse_unk=BYTE not in types, _tables=(blob, offsets, scores, types, specials, flags, variant))
        if variant:
            self.variant = variant
        return user

    def __getattr__(self, name: str) -> Any:
        # (only for an attribute not set: a loaded file's texts, scores, types..., made now, or
        # by another thread since this lookup missed; any other name is missing)
        if name in CharModel._MATERIALIZED:
            self._materialize()
            if name in self.__dict__:
                return self.__dict__[name]
            if name == "scores" and "_make_scores" in self.__dict__:  # (two threads: one result kept)
                return self.__dict__.setdefault("scores", self.__dict__["_make_scores"]())
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _materialize(self) -> None:
        """The attributes `_init_from_tables` left for later, as `_init_char_model` sets them,
        and the constructor's arguments (for pickling); once, whichever thread asks first."""
        with _MATERIALIZING:
            if "_tables" not in self.__dict__:  # made already, or a model built otherwise
                return
            blob, offsets, scores, types, specials, flags, variant = self.__dict__["_tables"]
            texts = piece_texts(blob, offsets)
            self.texts = texts
            self.scores = np.frombuffer(scores, dtype=np.float32)
            self.token_types = np.frombuffer(types, dtype=np.int32)
            self._text_to_id = {text: i for i, text in enumerate(texts)}
            self._user_regex = self._compiled_user_regex()
            options = dict(token_types=self.token_types, specials=specials, flags=flags, name=self.name,
                           variant=variant, where=self.where, normalizer=self.normalizer)
            if variant is None:
                del options["variant"]
            self._init_args = ((list(texts), self.scores), options)
            del self.__dict__["_tables"]  # last: a reader that sees no tables sees the attributes

    def __reduce__(self) -> tuple:
        if "_tables" in self.__dict__:
            self._materialize()
        return super().__reduce__()

    def _user_defined(self) -> list[tuple[str, int]]:
        """``(text, id)`` of the user-defined pieces that are not empty, in id order."""
        return [(self.texts[i], i) for i in np.flatnonzero(self.token_types == USER_DEFINED).tolist() if self.texts[i]]

    @property
    def _llama_text(self) -> bool:
        """Whether text and ids are handled as llama.cpp does (special tokens cut out first, a
        text holding a user-defined token encoded by fragments, every token written by
        `decode`), else as sentencepiece does."""
        return self.normalizer is None

    def _byte_token(self, byte: int) -> int | None:
        token = self._text_to_id.get(f"<0x{byte:02X}>")
        if token is None and byte < 0x80 and self.normalizer is None:  # llama.cpp's second try
            token = self._text_to_id.get(chr(byte))
        return token

    def _byte_fallback(self, char: str) -> list[int]:
        out = []
        for byte in char.encode("utf-8", "surrogatepass"):
            token = self._byte_token(byte)
            if token is None:
                token = self.special_ids.get("unk")
            if token is not None:
                out.append(token)
        return out

    # -- encoding ----------------------------------------------------------------------------

    def _strip_flags(self, token: int) -> tuple[bool, bool]:
        if self._phi3:
            return False, self.texts[token] not in _PHI3_NO_RSTRIP
        return False, False

    def _fragments(self, text: str, parse_special: bool) -> list[str | int]:
        if self.normalizer is None:
            return super()._fragments(text, parse_special)
        normalized = self.normalizer(check_doc(text))
        if self._user_regex is None:
            return [normalized] if normalized else []
        out: list[str | int] = []
        start = 0
        for found in self._user_regex.finditer(normalized):
            if found.start() > start:
                out.append(normalized[start : found.start()])
            out.append(self._text_to_id[found.group()])
            start = found.end()
        if start < len(normalized):
            out.append(normalized[start:])
        return out

    def _prepare(self, fragments: list[str | int]) -> list[str | int]:
        """llama.cpp: the dummy prefix (at the start and after a special token) and ``▁`` for
        spaces; sentencepiece's normalizer did both already."""
        if self.normalizer is not None:
            return fragments
        out: list[str | int] = []
        previous_special = True
        for fragment in fragments:
            if isinstance(fragment, int):
                out.append(fragment)
                previous_special = True
                continue
            text = (" " + fragment) if self.add_space_prefix and previous_special else fragment
            out.append(text.replace(" ", SPACE))
            previous_special = False
        return out

    def _build_pipeline(self, model: SpmBPE | UnigramLattice, user: tuple | None = None) -> SpmPipeline:
        """The normalizer in C (`ubpe_native._spm.SpmNormalizer`) before ``model``; ``user``:
        the user-defined pieces' ``(blob, offsets, ids)`` (default: from the texts)."""
        norm = self.normalizer
        if user is None:
            pieces = [(t.encode("utf-8", "surrogatepass"), i) for t, i in self._user_defined()]
            user = (b"".join(p for p, _ in pieces), array("q", [0, *itertools.accumulate(len(p) for p, _ in pieces)]),
                    array("i", [i for _, i in pieces]))
        native = SpmNormalizer(
            as_buffer(norm._array or (), "I"), norm._replacements, norm.add_dummy_prefix,
            norm.remove_extra_whitespaces, norm.escape_whitespaces, norm.treat_whitespace_as_suffix, *user)
        return SpmPipeline(native, model)

    def encode(self, doc: str, *, add_special: bool = False, parse_special: bool = False) -> list[int]:
        if self._pipeline is None or (parse_special and self._llama_text):
            return self._general_encode(doc, add_special=add_special, parse_special=parse_special)
        # `_run` of one text, its ids as a list from the kernel (no arrays: a short text's cost is the call)
        ids = self._pipeline_call(self._pipeline.encode_batch, [doc])[0]
        return self._with_specials(self._general_encode(doc) if ids is None else ids, add_special)

    def _batch_runs(self, options: dict[str, Any]) -> BatchRuns | None:
        """The batch template's run encoder (`ImportedTokenizer._flat_batch`): with the text
        pipeline in C (`ubpe_native._spm_pipeline`), a run of documents is one call without
        the GIL (`_run`); else one by one."""
        if self._pipeline is None or not set(options) <= {"add_special"}:
            return None
        return (lambda docs, _: self._run(docs)), None

    def _run(self, docs: list) -> FlatIds:
        """The ids of ``docs`` from the C pipeline; a text it hands back (one holding a
        special token, say) goes through `_general_encode`, spliced in its place."""
        ids, offsets, skipped = self._pipeline_call(self._pipeline.encode_flat, docs)
        return spliced(ids, offsets, {k: self._general_encode(docs[k]) for k in np.flatnonzero(skipped).tolist()})

    def _pipeline_call(self, call: Callable[[list], Any], docs: list) -> Any:
        """``call`` (a C pipeline method) on `_sendable` ``docs``; what it refuses (a text
        that is no str, a lone surrogate) is named as `check_doc` names it."""
        try:
            return call(self._sendable(docs))
        except (TypeError, UnicodeEncodeError):
            for doc in docs:
                check_doc(doc)
            raise

    def _sendable(self, docs: list) -> list:
        """``docs`` with None for a text the C pipeline must not see."""
        return docs

    def _general_encode(self, doc: str, **options: Any) -> list[int]:
        """`encode` without the C pipeline."""
        return ImportedTokenizer.encode(self, doc, **options)

    def _with_specials(self, ids: list[int], add_special: bool) -> list[int]:
        """``ids`` with BOS and EOS as `encode` adds them when ``add_special``."""
        prefix, suffix = self._special_ends(add_special)
        if prefix:
            ids[:0] = prefix
        ids.extend(suffix)
        return ids

    def _collapsed(self, ids: np.ndarray) -> list[int]:
        out = ids.tolist()
        unk = self.special_ids["unk"]
        if self._collapse_unk and unk in out:
            out = [t for k, t in enumerate(out) if t != unk or k == 0 or out[k - 1] != unk]
        return out

    def _parts(self, text: str) -> list[np.ndarray]:
        vocabulary, _, _ = self._vocabulary_parts()
        symbols: list[int] = []
        for char in text:
            base = self._base_of.get(char)
            if base is not None:
                symbols.append(base)
            else:  # byte fallback: the byte tokens' base ids
                symbols.extend(self._base_of_token[t] for t in self._byte_fallback(char)
                               if t in self._base_of_token)
        return [np.asarray(symbols, dtype=ID_DTYPE)] if symbols else []

    def _build_vocabulary(self) -> tuple[Vocabulary, np.ndarray, list[list[int]]]:
        """Base symbols: every character of a normal piece, then every byte token; pieces: the
        normal tokens of two characters or more, over those characters."""
        normal = [i for i in range(len(self.texts))
                  if self.token_types[i] in (NORMAL, USER_DEFINED) and self.texts[i]]
        chars = sorted({c for i in normal for c in self.texts[i]})
        self._base_of = {c: k for k, c in enumerate(chars)}
        base_expansion = [[self._text_to_id[c]] if c in self._text_to_id else self._byte_fallback(c)
                          for c in chars]
        byte_tokens = [i for i in range(len(self.texts)) if self.token_types[i] == BYTE]
        self._base_of_token = {t: len(chars) + k for k, t in enumerate(byte_tokens)}
        for t in byte_tokens:
            base_expansion.append([t])
        for c in chars:  # a one-character piece is its base symbol
            token = self._text_to_id.get(c)
            if token is not None:
                self._base_of_token.setdefault(token, self._base_of[c])
        pieces, model_ids = [], []
        for i in normal:
            if len(self.texts[i]) >= 2:
                pieces.append([self._base_of[c] for c in self.texts[i]])
                model_ids.append(i)
        order = self._piece_order(model_ids)
        from ..vocabulary import Vocabulary  # (not at import: it imports dataclasses)
        vocabulary = Vocabulary.from_pieces(
            len(base_expansion), [pieces[k] for k in order], np.zeros(len(pieces)),
            ranks=np.arange(len(pieces), dtype=np.int64))
        return vocabulary, np.asarray(model_ids, dtype=np.int64)[order], base_expansion

    def _piece_order(self, model_ids: list[int]) -> np.ndarray:
        """The order of the pieces (given by model id) in the ubpe vocabulary: by score,
        highest first."""
        return np.argsort(-self.scores[model_ids], kind="stable")

    # -- decoding ---------------------------------------------------------------------------

    def covers(self, doc: str) -> bool:
        """Whether every character is a piece's or has byte pieces (no unknown token needed)."""
        self._vocabulary_parts()
        return all(c in self._base_of or all(t in self._base_of_token for t in self._byte_fallback(c))
                   for fragment in self._prepare(self._fragments(doc, False)) if isinstance(fragment, str)
                   for c in fragment)

    def _adds_dummy_prefix(self) -> bool:
        """Whether `encode` puts a space in front of the text (the *dummy prefix*), which
        `decode` then takes away: llama.cpp's ``add_space_prefix`` (its detokenizer's
        ``remove_space``), sentencepiece's ``add_dummy_prefix`` (unless whitespace is a suffix)."""
        if self._llama_text:
            return self.add_space_prefix
        return self.normalizer.add_dummy_prefix and not self.normalizer.treat_whitespace_as_suffix

    def decode(self, ids, errors: str = "replace") -> str:
        """The text of ``ids`` without the dummy prefix: when the model adds one
        (`_adds_dummy_prefix`), one space is removed from the start of the first piece written,
        unless that piece is the unknown token -- the one rule of llama.cpp's detokenizer and
        sentencepiece's decoder, so that ``decode(encode(text)) == text``. What is written:
        for llama.cpp models every token's text (control tokens too, as
        ``llama_detokenize(..., unparse_special=true)``; nothing for unused and undefined ones,
        as there); for sentencepiece models what
        ``SentencePieceProcessor.decode`` writes (control tokens dropped, ``" ⁇ "`` for the
        unknown token)."""
        ids = self._check_ids(ids)
        unk = self.special_ids.get("unk")
        if self._llama_text:  # the first token loses a leading space even if it writes nothing
            pieces = [b"" if self.token_types[i] == UNUSED else self.decode_bytes([i]) for i in ids]
            if pieces and self._adds_dummy_prefix() and pieces[0].startswith(b" "):
                pieces[0] = pieces[0][1:]
            return b"".join(pieces).decode("utf-8", errors=errors)
        written = [i for i in ids if self.token_types[i] not in (CONTROL, UNUSED)]
        data = b"".join(_UNK_SURFACE.encode("utf-8") if i == unk else self.decode_bytes([i]) for i in written)
        if written and written[0] != unk and self._adds_dummy_prefix() and data.startswith(b" "):
            data = data[1:]
        return data.decode("utf-8", errors=errors)

    def decode_bytes(self, ids) -> bytes:
        out = []
        for i in self._check_ids(ids):
            kind = self.token_types[i]
            text = self.texts[i]
            if kind in SILENT_TYPES and self._llama_text:  # llama.cpp's token_to_piece: nothing
                continue
            if kind == BYTE and len(text) == 6 and text.startswith("<0x"):
                out.append(bytes([int(text[3:5], 16)]))
            elif kind in (NORMAL, UNKNOWN) or kind == USER_DEFINED and not self._llama_text:
                out.append(token_bytes(text.replace(SPACE, " ")))
            else:
                out.append(token_bytes(text))
        return b"".join(out)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(add_space_prefix=self.add_space_prefix)
        return info


class SentencePieceBPE(CharModel):
    """Score-ordered BPE over characters with ``▁`` and byte fallback (see the module docstring).

    ``tokens`` are the pieces, ``scores`` their scores (higher merges first), ``token_types``
    llama.cpp's token types (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte).
    With a ``normalizer`` the model is a sentencepiece ``.model`` BPE: the text is normalized
    as sentencepiece does and encoded by `ubpe_native._spm.SpmBPE` (sentencepiece's own loop:
    user-defined pieces never merge, unused pieces merge and are split again, a run of unknown
    characters is one unknown id when there are no byte pieces).
    """

    variant = "gguf:llama"

    def __init__(self, tokens: list[str], scores: np.ndarray | None, *,
                 token_types: np.ndarray | None = None, specials: dict[str, int | None] | None = None,
                 flags: dict[str, Any] | None = None, name: str = "", variant: str | None = None,
                 where: str = "<tokens>", normalizer: Normalizer | None = None):
        self._init_char_model(tokens, scores, token_types, specials, flags, name, variant, where,
                              normalizer)
        if normalizer is None:  # llama.cpp's: the same rules for the general path and the C pipeline
            rules = self._merge_rules(np.ones(len(self.texts), dtype=bool))
            self._kernel = self._build_kernel(rules)
            self._pipeline = self._build_llama_pipeline(rules)
        else:
            self._kernel = self._build_kernel()
            self._pipeline = self._build_pipeline(self._kernel)

    @classmethod
    def _from_tables(cls, tables: tuple, *, name: str, where: str) -> SentencePieceBPE:
        """A ``.model`` file's BPE model from `ubpe_native._spm_proto.read_model_proto`'s
        tables, built without numpy: the merge rules derived in C
        (`ubpe_native._spm_proto.bpe_tables`, what `_build_spm_kernel` derives in Python),
        the rest when first asked for (`CharModel._init_from_tables`)."""
        tok = cls.__new__(cls)
        user = tok._init_from_tables(tables, name, where, "spm:bpe")
        blob, offsets, scores, types, _ = tables
        *rules, fallback, collapse_unk, split_words = bpe_tables(blob, offsets, types, scores, tok.special_ids["unk"])
        tok._kernel = SpmBPE(len(types), *rules, tok.special_ids["unk"], fallback, collapse_unk, split_words)
        tok._pipeline = tok._build_pipeline(tok._kernel, user)
        return tok

    def _merge_rules(self, mergeable: np.ndarray) -> dict[str, Any]:
        """Every way to cut a mergeable piece in two known symbols, as a pair rule (rank: the
        piece's place among the distinct scores, highest first; equal scores share a rank, so
        the leftmost pair wins the tie); characters that are no token get ids ``n + j``.

        Derived once per machine and file content (0.3-1.5 s of Python for a 32k vocabulary,
        against sentencepiece's 0.04 s load), then read from the machine's cache
        (`ubpe.tables_cache`), keyed by everything the rules depend on."""
        from ..tables_cache import cached_arrays, hasher  # (llama.cpp's models: a .model file's rules are derived in C)

        n = len(self.texts)
        key = hasher("\0".join(self.texts).encode("utf-8", "surrogatepass"))
        for part in (np.fromiter(map(len, self.texts), dtype=np.int64, count=n), np.asarray(self.scores, np.float64),
                     np.asarray(mergeable, dtype=bool)):
            key.update(np.ascontiguousarray(part).tobytes())
        key.update(repr((self.normalizer is None, self.special_ids.get("unk"))).encode())
        packed = cached_arrays("spm-rules", key.hexdigest(), lambda: _pack_rules(self._derive_merge_rules(mergeable)))
        extra = {chr(c): n + j for j, c in enumerate(packed["extra"].tolist())}
        return dict(left=packed["left"], right=packed["right"], result=packed["result"], extra=extra,
                    rank=packed["rank"], units=list(map(chr, packed["units"].tolist())),
                    unit_ids=packed["unit_ids"].tolist(), expand_offsets=packed["expand_offsets"],
                    expand_ids=packed["expand_ids"], fallback=packed["fallback"].tolist())

    def _derive_merge_rules(self, mergeable: np.ndarray) -> dict[str, Any]:
        """`_merge_rules`, derived from the pieces."""
        text_to_id = self._text_to_id
        n = len(self.texts)
        extra: dict[str, int] = {}  # characters that are no token, as merge operands

        def symbol(text: str) -> int | None:
            token = text_to_id.get(text)
            if token is None and len(text) == 1:
                token = extra.setdefault(text, n + len(extra))
            return token

        distinct, rank_of_token = np.unique(-self.scores.astype(np.float64), return_inverse=True)
        # Both halves of a cut are shorter than the piece and are tokens or single characters:
        # only cuts at such lengths are tried, so a piece far longer than the others costs one
        # pass, not a lookup of every one of its cuts (quadratic in its length: a 256 KiB piece
        # took 21 s).
        lengths = sorted({len(text) for text in self.texts} | {1})
        has_length = set(lengths)
        left, right, result, rank = [], [], [], []
        for token, text in enumerate(self.texts):
            if not mergeable[token]:
                continue
            size = len(text)
            if size > 1:
                symbol(text[:1])  # its id as a character that is no token, numbered in the same order
            longest = lengths[bisect.bisect_left(lengths, size) - 1] if size > 1 else 0
            for cut in range(max(1, size - longest), min(size - 1, longest) + 1):
                if cut not in has_length or size - cut not in has_length:
                    continue
                a = symbol(text[:cut])
                if a is None:
                    continue
                b = symbol(text[cut:])
                if b is None:
                    continue
                left.append(a)
                right.append(b)
                result.append(token)
                rank.append(int(rank_of_token[token]))
        units = sorted({c for text in self.texts for c in text} | set(extra))
        unit_ids = [symbol(c) for c in units]
        expansions = [self._byte_fallback(c) for c in extra]
        offsets = np.zeros(len(expansions) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in expansions], out=offsets[1:])
        unk = self.special_ids.get("unk")
        fallback = [self._byte_token(b) for b in range(256)]
        return dict(left=_i32(left), right=_i32(right), result=_i32(result), extra=extra,
                    rank=np.asarray(rank, dtype=np.int64), units=units,
                    unit_ids=unit_ids, expand_offsets=offsets,
                    expand_ids=_i32([t for e in expansions for t in e]),
                    fallback=[(-1 if unk is None else unk) if t is None else t for t in fallback])

    def _build_kernel(self, rules: dict[str, Any] | None = None) -> PairMerges | SpmBPE:
        if self.normalizer is not None:
            return self._build_spm_kernel()
        from ubpe_native._merges import PairMerges, pack_units  # (llama.cpp's; a .model file's load needs it not)

        if rules is None:
            rules = self._merge_rules(np.ones(len(self.texts), dtype=bool))
        encoded_units = [c.encode("utf-8", "surrogatepass") for c in rules["units"]]
        keep = [k for k, e in enumerate(encoded_units) if 1 <= len(e) <= 4]
        return PairMerges(
            len(self.texts), rules["left"], rules["right"], rules["result"], rules["rank"],
            rules["expand_offsets"], rules["expand_ids"],
            pack_units([encoded_units[k] for k in keep]), _i32([rules["unit_ids"][k] for k in keep]),
            _i32(rules["fallback"]), True, b"", np.zeros(1, dtype=np.int64), _i32([]))

    def _build_llama_pipeline(self, rules: dict[str, Any]) -> SpmPipeline:
        """llama.cpp's text handling in C: the dummy prefix and ``▁`` for spaces, then the
        merges (`SpmBPE` with the rules of the `PairMerges` kernel); a text holding a
        user-defined token (cut out first, the dummy prefix after it) is handed back."""
        units = [c.encode("utf-8", "surrogatepass") for c in rules["units"]]
        model = SpmBPE(
            len(self.texts), rules["left"], rules["right"], rules["result"], rules["rank"],
            np.zeros(len(self.texts), np.uint8), b"".join(units), blob_offsets(units), _i32(rules["unit_ids"]),
            np.zeros(len(units), np.uint8), rules["expand_ids"], rules["expand_offsets"],
            int(self.special_ids["unk"]), _i32(rules["fallback"]), False, not self._joins_space(rules))
        normalizer = SpmNormalizer(np.zeros(0, np.uint32), b"", self.add_space_prefix, False, True, False, b"",
                                   np.zeros(1, np.int64), _i32([]))
        user = [t.encode("utf-8", "surrogatepass") for t, _, _, _ in self._special_table(False)]
        return SpmPipeline(normalizer, model, False, b"".join(user), blob_offsets(user))

    def _build_spm_kernel(self) -> SpmBPE:
        """sentencepiece's own loop: unused pieces merge and are split again, user-defined
        pieces are frozen symbols, without byte pieces a run of unknown symbols is one id."""
        rules = self._merge_rules(np.isin(self.token_types, (NORMAL, USER_DEFINED, UNUSED)))
        units = [(c.encode("utf-8", "surrogatepass"), i, 0)
                 for c, i in zip(rules["units"], rules["unit_ids"])]
        units += [(t.encode("utf-8", "surrogatepass"), i, 1) for t, i in self._user_defined()]
        offsets = np.zeros(len(units) + 1, dtype=np.int64)
        np.cumsum([len(u[0]) for u in units], out=offsets[1:])
        unused = self.token_types == UNUSED
        return SpmBPE(
            len(self.texts), rules["left"], rules["right"], rules["result"], rules["rank"],
            unused.astype(np.uint8), b"".join(u[0] for u in units), offsets,
            _i32([u[1] for u in units]), np.array([u[2] for u in units], dtype=np.uint8),
            rules["expand_ids"], rules["expand_offsets"], int(self.special_ids["unk"]),
            _i32(rules["fallback"]), bool(self._collapse_unk),
            not unused[rules["result"]].any() and not self._joins_space(rules))

    def _joins_space(self, rules: dict[str, Any]) -> bool:
        """Whether a rule joins a symbol to one that starts with ``▁`` (else the words that
        ``▁`` starts merge apart, and `SpmBPE` may encode and cache them one by one)."""
        text_of = {i: c for c, i in rules["extra"].items()}
        n = len(self.texts)
        return any((self.texts[i] if i < n else text_of[i]).startswith(SPACE)
                   for i in set(rules["right"].tolist()))  # (np.unique imports numpy.ma)

    def _native(self, text: str) -> list[int]:
        data = text.encode("utf-8", "surrogatepass")
        if self.normalizer is not None:
            return self._kernel.encode(data).tolist()
        return self._collapsed(self._kernel.encode(data, np.array([0, len(data)], dtype=np.int64)))


def _i32(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int32)


def blob_offsets(parts: list[bytes]) -> array:
    """Where each of ``parts`` starts in their concatenation, and the end (a kernel's
    ``blob`` / ``offsets`` pair).

    >>> blob_offsets([b"ab", b"", b"c"]).tolist()
    [0, 2, 2, 3]
    """
    return array("q", itertools.accumulate(map(len, parts), initial=0))  # (no numpy needed)


# unigram weights: a base symbol that is no piece (only byte tokens spell it)
UNSPELT_WEIGHT = -1e6
#: the unknown piece scores this much below the lowest normal piece (sentencepiece's
#: ``kUnkPenalty``, llama.cpp's ``unknown_token_score_penalty``)
UNK_PENALTY = 10.0


class SentencePieceUnigram(CharModel):
    """A sentencepiece unigram model: the Viterbi best path over piece scores (log-probabilities),
    computed exactly as sentencepiece does (`ubpe_native._unigram`). ``additive`` with the
    scores as weights is the same objective in ubpe's path kernel."""

    variant = "spm:unigram"
    _cuts_user_defined = False

    def __init__(self, tokens: list[str], scores: np.ndarray, *, token_types: np.ndarray,
                 specials: dict[str, int | None] | None = None, flags: dict[str, Any] | None = None,
                 name: str = "", where: str = "<tokens>", normalizer: Normalizer):
        self._init_char_model(tokens, scores, token_types, specials, flags, name, None, where,
                              normalizer)
        self._kernel = self._build_lattice()
        self._pipeline = self._build_pipeline(self._kernel)

    @classmethod
    def _from_tables(cls, tables: tuple, *, name: str, where: str) -> SentencePieceUnigram:
        """A ``.model`` file's unigram model from `ubpe_native._spm_proto.read_model_proto`'s
        tables: the lattice's tables made in C (`ubpe_native._spm_proto.unigram_tables`,
        what `_build_lattice` makes), the rest when first asked for
        (`CharModel._init_from_tables`)."""
        tok = cls.__new__(cls)
        user = tok._init_from_tables(tables, name, where, None)
        blob, offsets, scores, types, _ = tables
        *lattice, unk_score, fallback = unigram_tables(blob, offsets, types, scores)
        if unk_score is None:
            raise ModelFormatError(f"{where}: a unigram model needs normal pieces (their scores set the "
                                   "unknown piece's)")
        tok._kernel = UnigramLattice(*lattice, tok.special_ids["unk"], unk_score, fallback, double_sums=False)
        tok._pipeline = tok._build_pipeline(tok._kernel, user)
        return tok

    def _build_lattice(self, *, llama: bool = False) -> UnigramLattice:
        """The Viterbi kernel over the normal, user-defined and unused pieces: sentencepiece's
        (unused pieces never chosen, user-defined ones scored by length, byte fallback, float32
        sums) or, with ``llama``, llama.cpp's ``llm_tokenizer_ugm`` (unused pieces chosen like
        normal ones, user-defined ones scored 0, no byte fallback, double sums)."""
        in_trie = np.isin(self.token_types, (NORMAL, USER_DEFINED, UNUSED))
        chosen = [i for i in np.flatnonzero(in_trie).tolist() if self.texts[i]]
        encoded = [self.texts[i].encode("utf-8", "surrogatepass") for i in chosen]
        normal = self.token_types == NORMAL
        if not normal.any():
            raise ModelFormatError(f"{self.where}: a unigram model needs normal pieces (their scores set the "
                                   "unknown piece's)")
        min_score = float(self.scores[normal].min())
        user_defined = self.token_types[chosen] == USER_DEFINED
        scores = self.scores[chosen].astype(np.float32)
        if llama:
            scores[user_defined] = 0.0
        fallback = [-1] * 256 if llama else [self._byte_token(b) for b in range(256)]
        return UnigramLattice(
            b"".join(encoded), blob_offsets(encoded),
            _i32([i if llama or self.token_types[i] != UNUSED else -1 for i in chosen]), scores,
            (user_defined & (not llama)).astype(np.uint8),
            int(self.special_ids["unk"]), np.float32(min_score) - np.float32(UNK_PENALTY),
            _i32([-1 if t is None else t for t in fallback]), double_sums=llama)

    def _native(self, text: str) -> list[int]:
        return self._kernel.encode(text.encode("utf-8", "surrogatepass")).tolist()

    @staticmethod
    def _user_defined_score(text: str) -> float:
        """A user-defined piece's score in the lattice (sentencepiece: ``0.1 * (bytes - 1)``)."""
        return float(np.float32(0.1 * (len(text.encode("utf-8", "surrogatepass")) - 1)))

    def unigram_weights(self) -> np.ndarray:
        """One weight per id of :attr:`vocabulary`: its piece's log-probability (a user-defined
        piece: its lattice score ``0.1 * (bytes - 1)``; a base symbol spelt only by byte tokens:
        ``UNSPELT_WEIGHT``). With them ``additive`` is this model's
        Viterbi, ``sample`` its subword regularization, and ``ambiguity`` (their default here)
        its distribution over segmentations."""
        _, vocab_to_model, base_expansion = self._vocabulary_parts()
        scores = self.token_log_probs()
        base = [scores[e[0]] if len(e) == 1 else UNSPELT_WEIGHT for e in base_expansion]
        return np.concatenate([np.asarray(base, dtype=np.float64), scores[vocab_to_model]])

    def token_log_probs(self) -> np.ndarray:
        """Per id, what sentencepiece's lattice adds for the token: its piece's score (the
        log-probability), a user-defined piece's ``0.1 * (bytes - 1)``, the unknown token's
        lowest score minus 10 (``kUnkPenalty``), 0 for a control token."""
        scores = self.scores.astype(np.float64)
        for i in np.flatnonzero(self.token_types == USER_DEFINED).tolist():  # their lattice score
            scores[i] = self._user_defined_score(self.texts[i])
        normal = self.token_types == NORMAL
        scores[self.token_types == UNKNOWN] = (np.float32(scores[normal].min()) if normal.any() else 0.0) - UNK_PENALTY
        scores[self.token_types == CONTROL] = 0.0
        return scores

    def _default_weights(self) -> np.ndarray:
        return self.unigram_weights()


def _pack_rules(rules: dict[str, Any]) -> dict[str, np.ndarray]:
    """`SentencePieceBPE._merge_rules`' dict as arrays alone (what the machine's cache keeps):
    characters as code points, the extra characters in the order of their ids."""
    return {"left": rules["left"], "right": rules["right"], "result": rules["result"], "rank": rules["rank"],
            "extra": np.array([ord(c) for c in rules["extra"]], dtype=np.uint32),
            "units": np.array([ord(c) for c in rules["units"]], dtype=np.uint32),
            "unit_ids": np.asarray(rules["unit_ids"], dtype=np.int64), "expand_offsets": rules["expand_offsets"],
            "expand_ids": rules["expand_ids"], "fallback": np.asarray(rules["fallback"], dtype=np.int64)}
