"""What the models over characters with ``▁`` share, :class:`CharModel`: sentencepiece's BPE and
unigram (:mod:`ubpe.models.sentencepiece`, llama.cpp's ``llama`` GGUF type), HF's character BPE
(:mod:`ubpe.models.hf_char`: Llama 2, Mistral, ``Metaspace``), gemma-4 and the composed
families: pieces over characters, byte fallback, llama.cpp's or sentencepiece's text handling,
and the text pipeline in C (`ubpe_native._spm_pipeline.SpmPipeline`) for one text or a batch.

A module of its own (it was `sentencepiece`'s): an HF character file's load imports neither the
``.model`` reader (`ubpe_native._spm_proto`) nor the sentencepiece models; a ``.model`` file's
tables are read here when one is loaded (`CharModel._init_from_tables`).

>>> blob_offsets([b"ab", b"", b"c"]).tolist()
[0, 2, 2, 3]
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import itertools
from array import array
from collections.abc import Callable

from ubpe_native._numpy import ID_DTYPE, np
from ubpe_native._spm import SpmBPE, SpmNormalizer
from ubpe_native._spm_pipeline import SpmPipeline

from .._lazy import as_buffer
from ..errors import ModelFormatError
from .chunks import FlatIds, spliced
from .deferred import Deferred
from .imported import (BYTE, CONTROL, NORMAL, SILENT_TYPES, UNKNOWN, UNUSED, USER_DEFINED, BatchRuns, ImportedTokenizer,
                       check_doc, token_bytes)

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any, ClassVar
    from ubpe_native._unigram import UnigramLattice

    from ..text.normalizers import Normalizer
    from ..vocabulary import Vocabulary

__all__ = ["CharModel", "SPACE", "blob_offsets"]

SPACE = "▁"
_UNK_SURFACE = " \u2047 "
# llama.cpp gives Phi-3's special tokens rstrip, except these (llama_vocab::impl::load)
_PHI3_NAMES = ("phi-3", "phi3")
_PHI3_NO_RSTRIP = ("<unk>", "<s>", "<|endoftext|>")


def _made_scores(model: CharModel, make: Callable[[], np.ndarray]) -> None:
    """The builder of the scores an HF character file's load leaves for later."""
    model.scores = make()


class CharModel(Deferred, ImportedTokenizer):
    """What the sentencepiece-style models share: pieces over characters with ``▁``, byte
    fallback, and either llama.cpp's text handling (dummy prefix after special tokens) or
    sentencepiece's (its `Normalizer`, user-defined pieces kept whole)."""

    symbol_unit = "char"
    #: sentencepiece cuts a text at its user-defined pieces before encoding (BPE: they never
    #: merge); its unigram model instead scores them in the lattice (``0.1 * (bytes - 1)``).
    _cuts_user_defined: ClassVar[bool] = True
    #: what a model read by `_init_from_tables` builds when first asked for (`_materialize`)
    _MATERIALIZED = ("texts", "scores", "token_types", "_text_to_id", "_user_regex", "_init_args")
    #: (the builders of `Deferred`: the constructor, which a pickle calls again, defers them again)
    _KERNELS = ImportedTokenizer._KERNELS + ("_later",)

    def _init_char_model(self, tokens: list[str], scores: np.ndarray | None,
                         token_types: np.ndarray | None, specials: dict[str, int | None] | None,
                         flags: dict[str, Any] | None, name: str, variant: str | None, where: str,
                         normalizer: Normalizer | None) -> None:
        self._init_common(list(tokens), token_types, specials, flags, name, where)
        if variant:
            self.variant = variant
        n = len(self.texts)
        if callable(scores):  # the scores made when first asked for (an HF file's: numpy's)
            self._defer(functools.partial(_made_scores, make=scores), "scores")
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
        from ubpe_native._spm_proto import piece_texts, user_defined_table  # (a .model file's: here)

        from ..text.normalizers import Normalizer

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
            _collapse_unk=BYTE not in types)
        self._defer(functools.partial(CharModel._materialize, tables=(blob, offsets, scores, types, specials, flags,
                                                                      variant)), *CharModel._MATERIALIZED)
        if variant:
            self.variant = variant
        return user

    def _materialize(self, tables: tuple) -> None:
        """The attributes `_init_from_tables` left for later (:attr:`_MATERIALIZED`), as
        `_init_char_model` sets them, and the constructor's arguments (for pickling)."""
        from ubpe_native._spm_proto import piece_texts

        blob, offsets, scores, types, specials, flags, variant = tables
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

    def __reduce__(self) -> tuple:
        self._build_deferred("_init_args")  # (a loaded file's: what the copy is rebuilt from)
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


def _i32(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int32)


def blob_offsets(parts: list[bytes]) -> array:
    """Where each of ``parts`` starts in their concatenation, and the end (a kernel's
    ``blob`` / ``offsets`` pair).

    >>> blob_offsets([b"ab", b"", b"c"]).tolist()
    [0, 2, 2, 3]
    """
    return array("q", itertools.accumulate(map(len, parts), initial=0))  # (no numpy needed)
