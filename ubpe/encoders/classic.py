"""ubpe's classic encoder: batched pair substitution in vocabulary (id) order, top-1.

The pair-merge kernel is :mod:`ubpe_native._classic`; a document's parts are encoded one by
one and concatenated, their scores added left to right, as ubpe 0.3.0's ``UBPEClassic`` does.

>>> from ubpe.vocabulary import Vocabulary
>>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)   # token 2 = [0 1]
>>> ClassicEncoder(vocab).encode([np.array([0, 1]), np.array([1]), np.array([0, 1])])
[([2, 1, 2], 0.8109302162163288)]
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import compress

from ubpe_native._numpy import np

from ubpe_native._classic import PairTable, encode_texts, encode_words
from ubpe_native._combine import top1_documents

from ..vocabulary import Vocabulary
from ._base import Encoder, EncoderInfo, Encoding, all_weights, check_top_n, concatenate_best, flatten_parts
from .encoding import EncodedBatch

TYPE_CHECKING = False  # (typing's, without importing typing: see ubpe.files)
if TYPE_CHECKING:
    from typing import Any

    from ..splitting import SplitBatch


class ClassicEncoder(Encoder):
    """ubpe 0.3.0's ``UBPEClassic`` encoder: batched pair merges in token id order (top-1).

    On a vocabulary where some tokens have no pair (a universal vocabulary trimmed by
    weight, or one loaded from pieces only) those tokens are simply never produced.
    """

    name = "classic"
    supports_nbest = False
    deterministic = True
    splits_batches = True
    encodes_texts = True
    #: (a batch of str documents to arrays takes the split path: ``encode_split_arrays``)
    encode_texts_arrays = None

    def __init__(self, vocabulary: Vocabulary):
        self.vocabulary = vocabulary
        # (array.array throughout: an encoder's build imports no numpy)
        flat = vocabulary._merges
        left, right = flat[0::2], flat[1::2]
        has_pair = [min(pair) >= 0 for pair in zip(left, right)]  # (a trimmed token may have none)
        self._table = PairTable(
            array("i", compress(left, has_pair)), array("i", compress(right, has_pair)),
            array("i", compress(range(vocabulary.n_base, len(vocabulary)), has_pair)),
        )
        self._weights = all_weights(vocabulary)

    def __repr__(self) -> str:
        return f"ClassicEncoder({self.vocabulary!r})"

    def part_candidates(self, parts: Sequence[np.ndarray]) -> list[list[Encoding]]:
        """Each part's encoding, as a one-element list (the reference's ``_encode_word``)."""
        out, offsets, scores = self._run(parts)
        bounds, flat = offsets.tolist(), out.tolist()
        return [[(flat[bounds[k] : bounds[k + 1]], score)] for k, score in enumerate(scores.tolist())]

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        """A document's encoding ``[(tokens, score)]``."""
        check_top_n(self, top_n)
        out, offsets, scores = self._run(parts)
        if len(parts) == 1:
            return [(out.tolist(), float(scores[0]))]
        return concatenate_best(out, offsets, scores)

    def encode_split(self, batch: SplitBatch, top_n: int = 1) -> list[list[Encoding]]:
        """:meth:`encode` of every document of a split batch, in one kernel call."""
        return self._split(batch, top_n, False)

    def encode_split_arrays(self, batch: SplitBatch, top_n: int = 1) -> EncodedBatch:
        """:meth:`encode_split` as an :class:`~ubpe.encoders.encoding.EncodedBatch` (no list built)."""
        return EncodedBatch.from_arrays(self._split(batch, top_n, True))

    def encode_texts(self, splitter: Any, docs: Sequence[str], top_n: int = 1) -> list[list[Encoding]] | None:
        """:meth:`encode` of str documents split by a native ``splitter``
        (:meth:`ubpe.splitting.SplitPipeline.text_splitter`) in one kernel call; None where
        the general path must run instead (a document it cannot split; a ``top_n`` other than
        1, which that path checks after the split, as it always has)."""
        if type(top_n) is not int or top_n != 1:
            return None
        return encode_texts(self._table, self._weights, splitter, docs)

    def _split(self, batch: SplitBatch, top_n: int, arrays: bool) -> Any:
        check_top_n(self, top_n)
        out, offsets, scores = encode_words(self._table, self._weights, batch.tokens, batch.part_offsets)
        return top1_documents(out, offsets, scores, batch.doc_part_offsets, arrays=arrays)

    def _run(self, parts: Sequence[np.ndarray]):
        symbols, bounds = flatten_parts(parts, self.vocabulary.n_base)
        return encode_words(self._table, self._weights, symbols, bounds)


#: this module's entries of the encoder registry (:func:`ubpe.encoders.available_encoders`)
ENCODERS = (
    EncoderInfo(
        "classic", ClassicEncoder, False,
        "greedy batched pair substitution in idf (vocabulary id) order",
        "UBPE classic encoder (ubpe 0.3.0 UBPEClassic)",
    ),
)
