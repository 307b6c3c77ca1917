"""A tokenizer as a composition of stages: normalizer + pre-tokenizer + model + decoder +
post-processor, as HF ``tokenizers``' ``Tokenizer`` is.

:class:`ComposedTokenizer` holds the text stages of :class:`~ubpe.models.hf_base.HFPipeline` (added
tokens, normalizer, pre-tokenizer, decoder, post-processor; each one of HF's components, in
:mod:`ubpe.text`) and a *model stage* (:class:`ModelStage`): a small object that encodes
pre-tokens and says what its ids are. The tokenizer contract (``encode``, ``encode_batch``,
``encode_batch_to_numpy``, ``decode``, the vocabulary lookups, ubpe's other encoders on the same
vocabulary) is written here once, over the stages. So a reader builds a tokenizer by building
its stages, and a new model family is one model-stage module and the readers that hold it: HF's
``Unigram`` (:class:`~ubpe.models.unigram.UnigramModel`) is the first family made this way.

Speed: a batch is cut into runs of consecutive documents, one per thread; each run is
normalized and pre-tokenized in Python, then every pre-token of the run goes to the model's
kernel in one call without the GIL (``ModelStage.encode_flat``); a document holding an added
token goes the general way, spliced in its place.

>>> from ubpe.text.hf_pipeline import AddedToken, AddedTokens, PreTokenizer
>>> from ubpe.models.hf_base import HFPipeline
>>> from ubpe.models.unigram import UnigramModel
>>> model = UnigramModel([("<unk>", 0.0), ("▁a", -1.0), ("b", -2.0), ("▁", -3.0), ("</s>", 0.0)], unk_id=0)
>>> pipe = HFPipeline(AddedTokens([AddedToken("</s>", 4, special=True)], lambda t: t), [],
...                   PreTokenizer([("metaspace", "▁", "always", True)]), [("metaspace", "▁", True)], [], [4])
>>> tok = ComposedTokenizer(model, pipe)
>>> tok.encode("ab c", add_special=True), tok.decode([1, 2, 3, 0, 4])
([1, 2, 3, 0, 4], 'ab <unk>')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from .chunks import FlatIds, spliced, text_lengths
from .hf import HFPipeline, HFPipelineMixin, _Segment
from .imported import CONTROL, USER_DEFINED, BatchRuns, check_doc
from .sentencepiece import SPACE, CharModel, SentencePieceUnigram, blob_offsets

__all__ = ["ComposedTokenizer", "ModelStage"]

#: the options ``encode`` and ``encode_batch`` take
_OPTIONS = frozenset({"add_special", "parse_special"})


class ModelStage(Protocol):
    """What a composed tokenizer asks of its model (:class:`~ubpe.models.unigram.UnigramModel`
    is one): the pieces, their types, and the encoding of pre-tokens."""

    variant: str
    texts: list[str]
    scores: np.ndarray
    unk_id: int | None

    def encode_words(self, words: Sequence[str]) -> list[int]: ...

    def encode_flat(self, data: bytes, bounds: np.ndarray, split_spaces: bool = False) -> tuple[np.ndarray, np.ndarray]: ...

    def token_types(self, n: int) -> np.ndarray: ...

    def byte_token(self, byte: int) -> int | None: ...

    def token_log_probs(self, types: np.ndarray) -> np.ndarray | None: ...

    def describe(self) -> dict[str, Any]: ...


class ComposedTokenizer(HFPipelineMixin, CharModel):
    """``ComposedTokenizer(model, pipeline)``: the stages of ``pipeline`` around ``model``
    (see the module docstring). Added tokens are cut out of the text first, special or not,
    as HF's ``Tokenizer.encode`` does (``parse_special`` has no effect); ``add_special`` puts
    the post-processor's tokens around; ``decode`` skips special tokens, as HF's does."""

    def __init__(self, model: ModelStage, pipeline: HFPipeline, *, name: str = "", where: str = "<tokenizer.json>"):
        added = pipeline.added.tokens
        n = max(len(model.texts), 1 + max((t.id for t in added), default=-1))
        texts = list(model.texts) + [""] * (n - len(model.texts))
        types = model.token_types(n)
        for token in added:
            texts[token.id] = pipeline.added.spelling(token)
            types[token.id] = CONTROL if token.special else USER_DEFINED
        scores = np.zeros(n, dtype=np.float32)
        scores[: len(model.scores)] = model.scores
        self.model = model
        self.variant = model.variant
        self._init_char_model(texts, scores, types, {"unk": model.unk_id}, {"add_bos": False, "add_space_prefix": False},
                              name, None, where, None)
        if model.unk_id is None:
            self.special_ids.pop("unk", None)
        self._setup_pipeline(pipeline)
        steps = pipeline.pre.steps
        # the usual pre-tokenizer, Metaspace("▁", split): its split is the kernel's (`_run`)
        self._metaspace = steps[0][2] if len(steps) == 1 and steps[0][0] == "metaspace" and steps[0][1] == SPACE \
            and steps[0][3] else None

    # -- encoding ---------------------------------------------------------------------------

    def _encode_segment(self, segment: _Segment) -> list[int]:
        return self.model.encode_words(self._words(segment))

    def _words(self, segment: _Segment) -> list[str]:
        return self.pipeline.pre.words(segment.text, segment.first)

    def _batch_runs(self, options: dict[str, Any]) -> BatchRuns | None:
        """The batch template's run encoder (`ImportedTokenizer._flat_batch`): `_run`."""
        if not set(options) <= _OPTIONS:
            return None  # (encode says what is wrong with them)
        return (lambda docs, _: self._run(docs)), None

    def _run(self, docs: list) -> FlatIds:
        """The ids of consecutive documents: their pre-tokens in one call of the model's kernel;
        a document holding an added token through :meth:`encode`."""
        for doc in docs:
            check_doc(doc)
        text, lengths, skip = self._batch_input(docs, text_lengths(docs), False)
        pre, scheme = self.pipeline.pre, self._metaspace
        words: list[bytes] = []
        counts = np.zeros(len(docs) + 1, dtype=np.int64)
        start = 0
        for k, length in enumerate(lengths.tolist()):
            if length and (skip is None or not skip[k]):
                segment = text[start : start + length]
                if scheme is None:
                    found = pre.words(segment, True)
                else:  # Metaspace's replacement and prefix (the kernel cuts the words)
                    segment = segment.replace(" ", SPACE)
                    found = [segment if scheme == "never" or segment.startswith(SPACE) else SPACE + segment]
                words.extend(w.encode("utf-8", "surrogatepass") for w in found)
                counts[k + 1] = len(found)
            start += length
        ids, word_offsets = self.model.encode_flat(b"".join(words), blob_offsets(words), scheme is not None)
        offsets = word_offsets[np.cumsum(counts)]
        redo = {} if skip is None else {k: self.encode(docs[k]) for k in np.flatnonzero(skip).tolist()}
        return spliced(ids, offsets, redo)

    # -- the model's pieces ---------------------------------------------------------------

    def _byte_token(self, byte: int) -> int | None:
        return self.model.byte_token(byte)

    def _parts(self, segment: _Segment) -> list[np.ndarray]:
        return [part for word in self._words(segment) for part in CharModel._parts(self, word)]

    def token_log_probs(self) -> np.ndarray | None:
        return self.model.token_log_probs(self.token_types)

    # a unigram model's log-probabilities as ubpe's weights (``additive``, ``sample``, ``ambiguity``)
    unigram_weights = SentencePieceUnigram.unigram_weights

    def _default_weights(self) -> np.ndarray | None:
        return None if self.token_log_probs() is None else self.unigram_weights()

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.pop("add_space_prefix", None)
        info.update(self._hf_description(), **self.model.describe())
        return info
