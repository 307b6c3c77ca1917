"""HF ``tokenizers`` BPE over characters, id for id: ``▁`` for spaces and byte fallback (Llama 2,
Mistral, a trained ``Metaspace`` model), :class:`HFCharBPE`.

A :class:`~ubpe.models.char_model.CharModel` with HF's text pipeline
(:mod:`ubpe.text.hf_pipeline`) in front; the usual pipeline (Llama 2's, ``Metaspace``) runs it
all in C (`HFCharBPE._build_native_pipeline`). A module of its own, beside the byte-level
models of :mod:`ubpe.models.hf` (which re-exports it): a character model's load imports no
byte-level model (`ubpe.models.ranked_bpe`: the scanner's class tables, the regex VM's
compiler, llama.cpp's pre-tokenizers; ~14 M instructions of a cold load); a batch whose
words the kernel's program gives borrows the byte-level model's kernel calls when it first runs.

>>> from ubpe.text.hf_pipeline import AddedTokens, PreTokenizer
>>> vocab = {"▁": 0, "a": 1, "b": 2, "▁a": 3, "▁ab": 4}
>>> pipe = HFPipeline(AddedTokens([], lambda t: t), [], PreTokenizer([("metaspace", "▁", "always", True)]), [])
>>> HFCharBPE(vocab, [("▁", "a"), ("▁a", "b")], pipe).encode("ab a")
[4, 3]
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import itertools
from array import array
from collections.abc import Sequence

from ubpe_native._numpy import np
from ubpe_native._spm import SpmBPE, SpmNormalizer
from ubpe_native._spm_pipeline import SpmPipeline

from .._lazy import LazyPattern
from ..text.literals import escape
from .hf_base import HFPipeline, HFPipelineMixin, _merge_rules, _merge_scores, _Segment, _texts_and_types
from .imported import CONTROL, BatchRuns
from .char_model import SPACE, CharModel, blob_offsets
from .hf_program import _ProgramBatch, _imported_bpe, _pre_tokenization, _program_scan

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

    import regex

    from .scan import Scan

__all__ = ["HFCharBPE"]

#: what the word path (`HFCharBPE._build_word_path`) sets, made when first needed beside a C pipeline
_WORD_PATH = ("_kernel", "_scanner", "_python_reason")


def _is_space(pattern: regex.Pattern) -> bool:
    return pattern.pattern in (" ", "\\ ")  # (a space, or regex.escape's)


def _replaces_spaces(step: tuple) -> bool:
    """Whether a normalizer step is ``Replace(" ", "▁")``."""
    return step[0] == "replace" and _is_space(step[1]) and step[2] == SPACE


class HFCharBPE(HFPipelineMixin, _ProgramBatch, CharModel):
    """An HF BPE ``tokenizer.json`` over characters (no ``ByteLevel``): ``▁`` for spaces from
    ``Metaspace`` or the normalizer, ``byte_fallback`` to ``<0xXX>`` tokens, else the unknown
    token for a character that is no token (one per run with ``fuse_unk``; it merges with
    nothing), or, without an unknown token, nothing at all (its neighbours may then merge) -
    as HF's ``BPE::merge_word``.

    The word path (`_encode_segment`: the merge kernel and the pre-tokenizer's program, for a
    pipeline that does not run in C, or a text that goes the general way) is built when first
    needed where the C pipeline runs the rest: a load of such a file imports neither kernel.
    """

    variant = "hf:bpe"

    def __init__(self, vocab: dict[str, int], merges: Sequence[tuple[str, str]], pipeline: HFPipeline, *,
                 unk: str | None = None, fuse_unk: bool = False, byte_fallback: bool = False,
                 ignore_merges: bool = False, name: str = "", where: str = "<tokenizer.json>"):
        texts, types, _ = _texts_and_types(vocab, pipeline, unk, byte_fallback)
        self.byte_fallback = byte_fallback
        left, right, result, rank = _merge_rules(vocab, merges, where)
        unk_id = vocab.get(unk) if unk else None
        # (the scores, which only ubpe's own encoders read, made when first asked for: numpy's)
        self._init_char_model(texts, functools.partial(_merge_scores, len(texts), result, rank), types, {"unk": unk_id},
                              {"add_bos": False, "add_space_prefix": False}, name, None, where, None)
        if unk_id is None:
            self.special_ids.pop("unk", None)
        self._setup_pipeline(pipeline)
        self.ignore_merges = ignore_merges
        self.n_merges = len(merges)
        self.fuse_unk = fuse_unk
        self._unk_id = unk_id
        singles = {text: i for text, i in vocab.items() if len(text) == 1}
        fallback = [vocab.get(f"<0x{b:02X}>", -1) if byte_fallback else -1 for b in range(256)]
        self._known = set(singles)
        self._every_byte = byte_fallback and min(fallback) >= 0
        self._fallback = fallback
        units = {c: i for c, i in singles.items() if 1 <= len(c.encode("utf-8", "surrogatepass")) <= 4}
        # Without byte fallback a character that is no token becomes the unknown token (one per
        # run with fuse_unk), which merges with nothing: it is written as a sentinel character,
        # a unit of its own whose id expands to the unknown token.
        self._unknown = None
        if max(fallback) < 0:
            self._sentinel = next(c for c in map(chr, range(0x10FFFF, 0, -1)) if c not in units)
            known = "".join(map(escape, sorted(units)))  # (a class's body: re's escapes are regex's too)
            self._unknown = LazyPattern(f"[^{known}]+" if fuse_unk or unk_id is None else f"[^{known}]") \
                if known else LazyPattern("(?s:.)+" if fuse_unk or unk_id is None else "(?s:.)")
            units[self._sentinel] = len(texts)
        whole = [(t.encode("utf-8", "surrogatepass"), i) for t, i in vocab.items()] if ignore_merges else []
        self._pipeline = self._build_native_pipeline(left, right, result, rank, singles)
        # (the unbound method: a bound one would make the model a cycle of references)
        word_path = functools.partial(type(self)._build_word_path, left=left, right=right, result=result,
                                      rank=rank, units=units, whole=whole)
        if self._pipeline is None:
            word_path(self)
        else:  # (made when a text first goes the general way)
            self._defer(word_path, *_WORD_PATH)

    def _build_word_path(self, left: np.ndarray, right: np.ndarray, result: np.ndarray, rank: np.ndarray,
                         units: dict[str, int], whole: list[tuple[bytes, int]]) -> None:
        """The word path's merge kernel over ``units`` (the characters that are tokens, and the
        sentinel of unknown ones) and ``whole`` (``ignore_merges``' words) and the pre-tokenizer's
        program (`_word_program`)."""
        from ubpe_native._merges import PairMerges, pack_units

        from .scan import whole_words

        expansion = [] if self._unk_id is None else [self._unk_id]
        self._kernel = PairMerges(
            len(self.texts), left, right, result, rank, array("q", [0, len(expansion)]),
            array("i", expansion), pack_units([c.encode("utf-8", "surrogatepass") for c in units]),
            array("i", units.values()), array("i", self._fallback), True, *whole_words(whole))
        self._scanner, self._python_reason = _program_scan(self._word_program())

    def _build_native_pipeline(self, left: np.ndarray, right: np.ndarray, result: np.ndarray,
                               rank: np.ndarray, singles: dict[str, int]) -> SpmPipeline | None:
        """The whole HF pipeline in C (`ubpe_native._spm_pipeline.SpmPipeline` over
        `ubpe_native._spm.SpmBPE`, whose loop is HF's ``merge_word`` with pair ranks) when it
        is the usual one: unicode normalization (done in Python, for the texts it changes),
        then the legacy ``Prepend("▁") + Replace(" ", "▁")`` or ``Replace(" ", "▁")`` alone
        (Gemma's; a ``Split(" ")`` after either never splits) or a ``Metaspace("▁")``
        pre-tokenizer, or neither; no ``ignore_merges``. Characters that are no token go as
        HF's ``merge_word`` writes them (``SpmBPE``'s ``hf_unknowns``): byte tokens, some or all,
        the unknown token, or nothing.
        Normalized added tokens without flags are cut out in C; a text holding another added
        token goes the general way. None for any other pipeline. (``singles``: the vocabulary's
        tokens of one character, `_single_characters`.)"""
        pipeline = self.pipeline
        steps = list(pipeline.normalizer)
        self._unicode_forms = []
        while steps and steps[0][0] == "unicode":
            self._unicode_forms.append(steps.pop(0)[1])
        legacy = len(steps) == 2 and steps[0] == ("prepend", SPACE) and _replaces_spaces(steps[1])
        escaped = legacy or (len(steps) == 1 and _replaces_spaces(steps[0]))  # no space is left
        pre = pipeline.pre.steps
        if escaped and len(pre) == 1 and pre[0][0] == "split" and _is_space(pre[0][1]) and not pre[0][3]:
            pre = []  # it finds no space to split at: one piece
        metaspace = len(pre) == 1 and pre[0][0] == "metaspace" and pre[0][1] == SPACE
        if (steps and not escaped) or (pre and not metaspace) or (escaped and metaspace) or self.ignore_merges \
                or SPACE not in self._text_to_id \
                or (escaped and any(t.normalized for t in pipeline.added.tokens)):
            return None
        n = len(self.texts)
        units = [(t, i) for t, i in self._single_characters(singles, [t.id for t in pipeline.added.tokens])
                 if self._type_of(i) != CONTROL]
        blob = [t.encode("utf-8", "surrogatepass") for t, _ in units]
        split = metaspace and pre[0][3]
        # (a set: np.unique imports numpy.ma, 3 ms of a small file's load)
        joins_space = any(self.texts[i].startswith(SPACE) for i in set(right.tolist()))
        model = SpmBPE(
            n, left, right, result, rank, bytes(n), b"".join(blob), blob_offsets(blob),
            array("i", [i for _, i in units]), bytes(len(units)), array("i"),
            array("q", [0]), -1 if self._unk_id is None else self._unk_id, array("i", self._fallback),
            self.fuse_unk, split or not joins_space, hf_unknowns=True)
        normalizer = SpmNormalizer(array("I"), b"", legacy, False, escaped or metaspace, False, b"",
                                   array("q", [0]), array("i"))
        # added tokens: a normalized one without flags is cut out in C (HF matches it in the
        # normalized text, which a text sent to C is); a text holding any other goes the general way
        triggers: dict[bytes, int] = {}
        for token in pipeline.added.tokens:
            plain = token.normalized and not (token.single_word or token.lstrip or token.rstrip)
            for text in {token.content, pipeline.added.spelling(token)}:
                key = text.encode("utf-8", "surrogatepass")
                want = token.id if plain and text == pipeline.added.spelling(token) else -1
                triggers[key] = want if triggers.get(key, want) == want else -1
        triggers.pop(b"", None)
        scheme = pre[0][2] if metaspace else "never"
        return SpmPipeline(normalizer, model, scheme != "never", b"".join(triggers), blob_offsets(list(triggers)),
                           array("i", triggers.values()), scheme == "always")

    def _single_characters(self, singles: dict[str, int], added: list[int]) -> list[tuple[str, int]]:
        """The items of one character of `_text_to_id` (each text's last id, in the order of
        its first) from the vocabulary's (``singles``) and the added tokens' (ids ``added``),
        not a pass over every text: an id's text is the vocabulary's unless an added token
        took the id.

        >>> tok = HFCharBPE.__new__(HFCharBPE)
        >>> tok.texts = ["a", "bc", "b", "a", "x", "y", ""]  # (added: "a" at 3, "x" at 4 over "d", "y" at 5)
        >>> items = [(t, i) for t, i in {t: i for i, t in enumerate(tok.texts)}.items() if len(t) == 1]
        >>> tok._single_characters({"a": 0, "b": 2, "d": 4}, [3, 4, 5]) == items
        True
        """
        texts = self.texts
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        for text, i in [*singles.items(), *((texts[i], i) for i in added)]:
            if len(text) == 1 and texts[i] == text:  # (an id an added token took is its)
                if i < first.get(text, i + 1):
                    first[text] = i
                if i > last.get(text, -1):
                    last[text] = i
        return sorted(((t, last[t]) for t in first), key=lambda item: first[item[0]])

    # CharModel's: the C pipeline where there is one, else HFPipelineMixin's via _general_encode
    encode = CharModel.encode

    def _batch_runs(self, options: dict[str, Any]) -> BatchRuns | None:
        """The batch template's run encoder: CharModel's with the C pipeline; without it but
        with the word path's program, runs of documents each normalized in Python, then
        pre-tokenized and merged in one kernel call without the GIL (ImportedBPE's; documents
        holding added tokens through `encode`); else one by one."""
        if self._pipeline is None and self._scanner is not None:
            return _imported_bpe()._batch_runs(self, options)
        return CharModel._batch_runs(self, options)

    def _sendable(self, docs: list) -> list:
        """The texts after the unicode normalizer (in Python: a text it changes is rare); one
        holding an added token that is matched before normalization is left to the general path."""
        forms = self._unicode_forms
        if not forms:
            return docs
        from ..text.unicode import normalize as unicode_normalize  # (per batch; imported when a file needs it)

        out = list(docs)
        for k, doc in enumerate(docs):
            if type(doc) is not str or doc.isascii():
                continue
            normalized = doc
            for form in forms:
                normalized = unicode_normalize(form, normalized)
            if normalized == doc:
                continue
            out[k] = None if self.pipeline.added.raw_match(doc) else normalized
        return out

    def _general_encode(self, doc: str, **options: Any) -> list[int]:
        return HFPipelineMixin.encode(self, doc, add_special=options.get("add_special", False))

    def _byte_token(self, byte: int) -> int | None:
        token = self._fallback[byte]
        return None if token < 0 else token

    def _is_known(self, char: str) -> bool:
        return char in self._known or (self.byte_fallback and all(
            self._fallback[b] >= 0 for b in char.encode("utf-8", "surrogatepass")))

    def _words(self, segment: _Segment) -> list[str]:
        return self.pipeline.pre.words(segment.text, segment.first)

    def _word_program(self) -> tuple[Any, str | None]:
        """The pre-tokenizer as the kernel's program (`PreTokenizer.native`) for the word path
        (`_encode_segment`): its words, unknown characters replaced as ``_unknown`` does, go
        to the merge kernel without a Python list of words. With every byte token, unknown
        characters are the kernel's byte fallback; with some only, the word path stays Python."""
        if self._every_byte:
            return self.pipeline.pre.native(characters=(None, -1, False))
        if self._unknown is None:
            return None, "byte fallback without every byte token"
        known = bytearray(0x110000)
        for char in self._known:
            known[ord(char)] = 1
        sentinel = -1 if self._unk_id is None else ord(self._sentinel)  # HF drops unknowns without <unk>
        return self.pipeline.pre.native(characters=(memoryview(known), sentinel, self.fuse_unk or self._unk_id is None))

    def _encode_segment(self, segment: _Segment) -> list[int]:
        if self._scanner is not None:  # the steps and unknown characters in the kernel
            return self._scanned_ids(segment)
        words = self._words(segment)
        if self._every_byte:
            return self._encode_known(words)
        if self._unknown is not None:
            sentinel = "" if self._unk_id is None else self._sentinel  # HF drops unknowns without <unk>
            return self._encode_known([self._unknown.sub(sentinel, w) for w in words])
        return self._encode_partial_fallback(words)

    def _encode_partial_fallback(self, words: list[str]) -> list[int]:
        """Byte fallback without every ``<0xXX>`` token, symbol by symbol as HF's
        ``BPE::merge_word``: a character that is a token joins the run that merges; one whose
        bytes are all tokens becomes them at once; any other is the unknown token, written
        when the next token character comes (so after the bytes of characters between: HF's
        order) or at the end of the word. Unknown and byte tokens merge with nothing."""
        out: list[int] = []
        for word in words:
            run: list[str] = []
            pending = False
            for char in word:
                if char in self._known:
                    if pending:
                        out.append(self._unk_id)
                        pending = False
                    run.append(char)
                    continue
                if self._unk_id is None and not self._is_known(char):
                    continue  # dropped: its neighbours meet
                out.extend(self._encode_known(["".join(run)]))
                run = []
                if self._is_known(char):
                    out.extend(self._fallback[b] for b in char.encode("utf-8", "surrogatepass"))
                elif pending and not self.fuse_unk:
                    out.append(self._unk_id)
                else:
                    pending = True
            out.extend(self._encode_known(["".join(run)]))
            if pending:
                out.append(self._unk_id)
        return out

    def _encode_known(self, words: list[str]) -> list[int]:
        encoded = [w.encode("utf-8", "surrogatepass") for w in words]
        bounds = array("q", itertools.accumulate(map(len, encoded), initial=0))
        return self._kernel.encode(b"".join(encoded), bounds, as_list=True)

    def _parts(self, segment: _Segment) -> list[np.ndarray]:
        return [part for word in self._words(segment) for part in CharModel._parts(self, word)]

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(self._hf_description(), byte_fallback=self.byte_fallback, fuse_unk=self.fuse_unk,
                    pre_tokenization="native pipeline" if self._pipeline is not None
                    else _pre_tokenization(self._scanner, self._python_reason),
                    ignore_merges=self.ignore_merges, n_merges=self.n_merges)
        info.pop("add_space_prefix", None)
        return info
