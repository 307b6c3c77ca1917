"""HF ``tokenizers`` BPE models, id for id: byte-level (GPT-2, RoBERTa, Llama 3, Qwen2) and
character-level with ``▁`` and byte fallback (Llama 2, Mistral).

HF's BPE merges explicit pairs of tokens by their place in ``merges`` (lowest first, leftmost
on ties) - the pair-ranked loop of `ubpe_native._merges.PairMerges` that llama.cpp's models
use too. So :class:`HFByteLevelBPE` is :class:`~ubpe.models.ranked_bpe.ImportedBPE` and
:class:`HFCharBPE` a :class:`~ubpe.models.char_model.CharModel` with HF's text pipeline
(:mod:`ubpe.text.hf_pipeline`) in front: added tokens, normalizer, pre-tokenizer; HF's
decoder behind; the post-processor's tokens with ``add_special=True``. A character model with
the usual pipeline (Llama 2's, ``Metaspace``) runs it all in C
(`HFCharBPE._build_native_pipeline`), whatever its byte fallback and unknown token. Added tokens are always
cut out of the text, special or not, as ``Tokenizer.encode`` does (``parse_special`` is
accepted and has no effect); ``decode`` skips special tokens as HF's ``decode`` does by default.
:class:`HFCharBPE` lives in :mod:`ubpe.models.hf_char` and :class:`HFEndOfWordBPE` (CLIP's
``</w>``) in :mod:`ubpe.models.hf_clip`, both named here too and imported when first asked
for: a character model's load imports none of the byte-level models, a byte-level model's
neither the character models' kernels nor CLIP's.

>>> from ubpe.text.hf_pipeline import AddedTokens, PreTokenizer
>>> vocab = {"a": 0, "b": 1, "Ġ": 2, "ab": 3, "Ġab": 4}
>>> pipe = HFPipeline(AddedTokens([], lambda t: t), [], PreTokenizer([("byte_level", False, True)]),
...                   [("byte_level",)])
>>> tok = HFByteLevelBPE(vocab, [("a", "b"), ("Ġ", "ab")], pipe)
>>> tok.encode("ab ab b"), tok.decode([3, 4])
([3, 4, 2, 1], 'ab ab')

The pipeline's classes, the vocabulary's texts and types and the merge-rule reading (from a
list, or from a file's bytes: `JsonMerges`) are :mod:`ubpe.models.hf_base`'s, which WordPiece
shares without importing the BPE models.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Callable, Sequence

from ubpe_native._merges import DROPPED, FUSED, PairMerges, pack_units
from ubpe_native._numpy import ID_DTYPE, np
from ubpe_native._vocab import vocab_ids

from .chunks import cuttable_unless
from ..text.hf_pipeline import BYTE_LEVEL_REGEX, UNICODE, PreTokenizer, chars_bytes
from .ranked_bpe import BYTE_TO_CHAR, ImportedBPE, Scan, byte_level_words, whole_words
from ..text.patterns import NATIVE_PATTERNS, PATTERNS, native_pattern_id
from .hf_program import _pre_tokenization, _program_scan
from .hf_base import QWEN2_REGEX, SCANNED_REGEXES, HFPipeline, HFPipelineMixin, JsonMerges, _MAX_ID, _Segment

#: the added tokens (at most) that `HFByteLevelBPE.encode` looks for one by one in a text that
#: holds a first character of one, before its general path
_FEW_ADDED = 16

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

#: (the pipeline's classes and the merge rules' reader are `ubpe.models.hf_base`'s, named here too)
__all__ = ["HFByteLevelBPE", "HFCharBPE", "HFEndOfWordBPE", "HFPipeline", "HFPipelineMixin", "JsonMerges", "QWEN2_REGEX",
           "SCANNED_REGEXES"]

# HF regexes that the kernel's scanner splits (it splits as `regex` does with tiktoken's
# patterns of the same alternatives). Qwen2's regex is Llama 3's with single digits: only its
# number alternative matches a \p{N}.
_SCANNED = {BYTE_LEVEL_REGEX: Scan(NATIVE_PATTERNS[PATTERNS["gpt2"]]),
            PATTERNS["llama3"]: Scan(NATIVE_PATTERNS[PATTERNS["llama3"]]),
            QWEN2_REGEX: Scan(NATIVE_PATTERNS[PATTERNS["llama3"]], single_digits=True)}


class HFByteLevelBPE(HFPipelineMixin, ImportedBPE):
    """An HF byte-level BPE ``tokenizer.json`` (its pre-tokenizer holds ``ByteLevel``)."""

    variant = "hf:bytelevel"

    def __init__(self, vocab: dict[str, int], merges: Sequence[tuple[str, str]], pipeline: HFPipeline, *,
                 unk: str | None = None, ignore_merges: bool = False, fuse_unk: bool = False, name: str = "",
                 where: str = "<tokenizer.json>"):
        texts, _, self._shadowed, (left, right, result, rank) = self._setup_bpe(vocab, merges, pipeline, unk, name,
                                                                                where)
        self.ignore_merges = ignore_merges
        self._rule_ids = (left, right, result)
        n = len(texts)
        unk_id = vocab.get(unk) if unk else None
        self.fuse_unk = fuse_unk
        # a byte that is no token, as HF's merge_word has it before merging: dropped (its
        # neighbours may merge), the unknown token (which merges as a token), or with fuse_unk
        # one unknown token for a run of them
        missing = DROPPED if unk_id is None else FUSED if fuse_unk else unk_id
        units = [vocab.get(BYTE_TO_CHAR[b], missing) for b in range(256)]
        whole = whole_words([]) if not ignore_merges else self._whole_words(vocab, texts)
        self._kernel = PairMerges(
            n, left, right, result, rank, array("q", [0]), array("i"),
            pack_units([bytes([b]) for b in range(256)]), array("i", units), array("i", [-1]) * 256,
            False, *whole, fuse_id=-1 if unk_id is None else unk_id)
        self._scanner, self._python_reason = self._fast_path(pipeline.pre)
        # `encode`'s one kernel call: a text holding none of the added tokens (as matched: the
        # normalized ones normalized) is one segment, the scanner's, when there is no
        # normalizer or only Unicode normal forms and the text is ASCII (its normal forms are
        # itself). Looked for by their first characters, then, where one of those occurs (a
        # token starting with a space, say), by their texts when they are few
        self._quick_ascii = bool(pipeline.normalizer)
        spelled = [text for text in map(pipeline.added.spelling, pipeline.added.tokens) if text]
        self._quick = None if self._scanner is None or any(step[0] != "unicode" for step in pipeline.normalizer) \
            else frozenset(text[0] for text in spelled)
        self._quick_texts = tuple(spelled) if len(spelled) <= _FEW_ADDED else None

    def encode(self, doc: str, *, add_special: bool = False, parse_special: bool = False) -> list[int]:
        """HF's ``Tokenizer.encode(doc, add_special_tokens=add_special).ids``."""
        quick = self._quick
        if (quick is not None and type(doc) is str and doc and not add_special
                and (not self._quick_ascii or doc.isascii())
                and (quick.isdisjoint(doc) or (self._quick_texts is not None
                                               and not any(map(doc.__contains__, self._quick_texts))))):
            try:  # (`_scan_ids`, without its frames)
                return self._text_ids(self._scanner)(doc)
            except UnicodeEncodeError:  # a lone surrogate: the general path names it
                pass
        return super().encode(doc, add_special=add_special, parse_special=parse_special)

    def _whole_words(self, vocab: dict[str, int], texts: list[str]) -> tuple:
        """The words that become one token (``ignore_merges``): every vocabulary id's bytes,
        the last of equal ones winning. When its ids are ``0, 1, 2...`` in order (the usual
        file; added tokens after them) they are read at once (`byte_level_words`), with no
        bytes object per token."""
        if vocab_ids(vocab, _MAX_ID) == (len(vocab) - 1, True):
            return byte_level_words(texts[:len(vocab)])
        return whole_words([(self._raw[i], i) for i in vocab.values()])

    def _merge_texts(self) -> tuple[list[str], list[str], list[str]]:
        """``(lefts, rights, merged)`` of the merge rules in rule order, the vocabulary's texts
        of their ids (made when asked: kept, they would be three strings per rule)."""
        texts = [self._shadowed.get(i, text) for i, text in enumerate(self.texts)] if self._shadowed else self.texts
        return tuple([texts[i] for i in column.tolist()] for column in self._rule_ids)

    @staticmethod
    def _fast_path(pre: PreTokenizer) -> tuple[Scan | None, str | None]:
        """How the kernel splits, and why the Python pre-tokenizer runs instead (None: it
        does not). The scanner when the pre-tokenizer is one of the usual two:
        ``ByteLevel(use_regex=true)`` (with its ``add_prefix_space``), or ``Split(regex,
        isolated)`` then ``ByteLevel(use_regex=false, add_prefix_space=false)`` with a regex
        it splits; else the steps as a native program (`PreTokenizer.native`), if it takes them."""
        scan = HFByteLevelBPE._scanned(pre.steps)
        if scan is not None:
            return scan, None
        return _program_scan(pre.native())

    @staticmethod
    def _scanned(steps: list[tuple]) -> Scan | None:
        if len(steps) == 1 and steps[0][0] == "byte_level" and steps[0][2]:
            return _SCANNED[BYTE_LEVEL_REGEX]._replace(prefix_space=steps[0][1])
        if (len(steps) == 2 and steps[0][0] == "split" and steps[0][2] == "isolated" and not steps[0][3]
                and steps[1] == ("byte_level", False, False)):
            pattern = steps[0][1].pattern
            if pattern in _SCANNED:
                return _SCANNED[pattern]
            native = native_pattern_id(pattern, UNICODE)  # any other regex whose pieces tile the text: the VM
            return Scan(native) if native is not None else None
        return None

    def _encode_segment(self, segment: _Segment) -> list[int]:
        if self._scanner is None:
            return self._encode_words(self._words(segment))
        return self._scanned_ids(segment)

    def _cuttable(self, parse_special: bool) -> Callable[[str], bool] | None:
        """Long documents are cut only without a normalizer (it runs on the whole text), and
        not where an added token occurs; never with a program of steps (that a cut falls
        between two of its words is not proven)."""
        if self.pipeline.normalizer or super()._cuttable(parse_special) is None:
            return None
        return cuttable_unless(self.pipeline.added.raw_pattern, self.pipeline.added.normalized_pattern)

    def _words(self, segment: _Segment) -> list[bytes]:
        pre = self.pipeline.pre
        if pre.steps[-1][0] == "byte_level":  # spelled as text: their UTF-8 bytes are the units
            return [w.encode("utf-8", "surrogatepass") for w in pre.words(segment.text, segment.first, False)]
        return [chars_bytes(w) for w in pre.words(segment.text, segment.first)]

    def _encode_words(self, words: list[bytes]) -> list[int]:
        bounds = array("q", itertools.accumulate(map(len, words), initial=0))
        return self._kernel.encode(b"".join(words), bounds, as_list=True)

    def _parts(self, segment: _Segment) -> list[np.ndarray]:
        return [np.frombuffer(w, dtype=np.uint8).astype(ID_DTYPE) for w in self._words(segment)]

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(self._hf_description(), scanned=self._scanner is not None,
                    pre_tokenization=_pre_tokenization(self._scanner, self._python_reason))
        return info


def __getattr__(name: str) -> type:
    """:class:`HFCharBPE` and :class:`HFEndOfWordBPE`, from their modules when first asked for."""
    if name == "HFCharBPE":
        from .hf_char import HFCharBPE

        return HFCharBPE
    if name == "HFEndOfWordBPE":
        from .hf_clip import HFEndOfWordBPE

        return HFEndOfWordBPE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
