"""HF ``tokenizers`` BPE whose model marks the end of a word (``end_of_word_suffix``, CLIP's
``</w>``), id for id: :class:`HFEndOfWordBPE`. A module of its own beside the byte-level models
of :mod:`ubpe.models.hf` (which names it too), so that their loads do not import CLIP's.
"""

from __future__ import annotations

from collections.abc import Sequence

from ubpe_native._numpy import np

from ..text.hf_pipeline import chars_bytes
from .clip import EndOfWordBPE, unit_texts
from .hf_base import HFPipeline, HFPipelineMixin, _Segment
from .hf_program import _pre_tokenization, _program_scan, _ProgramBatch
from .imported import NORMAL, ImportedTokenizer
from .ranked_bpe import CHAR_TO_BYTE, ImportedBPE

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["HFEndOfWordBPE"]


class HFEndOfWordBPE(HFPipelineMixin, _ProgramBatch, EndOfWordBPE, ImportedTokenizer):
    """An HF byte-level BPE ``tokenizer.json`` whose model marks the end of a word
    (``end_of_word_suffix``, CLIP's ``</w>``): the last character of every pre-token is looked
    up with the suffix (HF's ``BPE::merge_word``), so it is a symbol of its own; merges are
    pair-ranked as in :class:`HFByteLevelBPE` (`ubpe.models.clip.EndOfWordBPE`). A character
    that is no token (with or without the suffix) becomes the unknown token, or nothing."""

    variant = "hf:bytelevel-suffix"
    symbol_unit = "byte"

    def __init__(self, vocab: dict[str, int], merges: Sequence[tuple[str, str]], pipeline: HFPipeline, *,
                 suffix: str, unk: str | None = None, name: str = "", where: str = "<tokenizer.json>"):
        texts, types, _, (left, right, result, rank) = self._setup_bpe(vocab, merges, pipeline, unk, name, where)
        unk_id = vocab.get(unk) if unk else None
        self.suffix = suffix
        self._setup_merges(np.stack([left, right, result, rank]).T.astype(np.int64),
                           [vocab.get(text) for text in unit_texts(suffix)], unk_id)
        self._raw = [self._stands_for(text, kind) for text, kind in zip(texts, types.tolist())]
        self._scanner, self._python_reason = _program_scan(pipeline.pre.native(end_of_word=True))

    def _stands_for(self, text: str, kind: int) -> bytes:
        """A token's bytes: its byte characters' (the suffix read as a space), or an added or
        odd token's text."""
        core, end = (text[: -len(self.suffix)], b" ") if text.endswith(self.suffix) else (text, b"")
        if kind != NORMAL or not all(c in CHAR_TO_BYTE for c in core):
            return text.encode("utf-8", "surrogatepass")
        return chars_bytes(core) + end

    def _words(self, segment: _Segment) -> list[bytes]:
        pre = self.pipeline.pre
        if pre.steps[-1][0] == "byte_level":  # spelled as text: their UTF-8 bytes are the units
            return [w.encode("utf-8", "surrogatepass") for w in pre.words(segment.text, segment.first, False)]
        return [chars_bytes(w) for w in pre.words(segment.text, segment.first)]

    def _encode_segment(self, segment: _Segment) -> list[int]:
        if self._scanner is None:
            return self._merge_words(self._words(segment))
        return self._scanned_ids(segment)

    # ImportedBPE's batch: chunks of documents, pre-tokenized by the program and merged in one
    # kernel call each without the GIL (its units are the end-of-word units the program
    # writes); documents holding added tokens go through encode. Without a program: one by one.
    _batch_runs = ImportedBPE._batch_runs

    def _parts(self, segment: _Segment) -> list[np.ndarray]:
        return self._word_parts(self._words(segment))

    def decode_bytes(self, ids) -> bytes:
        """What the ids stand for: a token's bytes, the suffix read as a space (``decode`` is
        HF's decoder, which keeps it)."""
        return b"".join(self._raw[i] for i in self._check_ids(ids))

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(self._hf_description(), end_of_word_suffix=self.suffix, n_merges=self.n_merges,
                    pre_tokenization=_pre_tokenization(self._scanner, self._python_reason))
        return info


