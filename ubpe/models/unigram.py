"""HF ``tokenizers``' ``Unigram`` model as a model stage of a composed tokenizer.

The first family built purely by composition (:mod:`ubpe.models.composed`): an HF Unigram
``tokenizer.json`` (T5, ALBERT, XLNet, mBART...) is HF's text stages around this model. The
model is the unigram lattice sentencepiece models use (`ubpe_native._unigram.UnigramLattice`)
with HF's rules (``models/unigram/model.rs``):

* every piece is in the trie (control and unknown pieces too), and a text spelt by several
  pieces is the last one's (``token_to_ids``), with that one's score;
* scores are doubles and path scores add up in double precision; an unknown character scores
  the lowest score of the vocabulary minus :data:`UNK_PENALTY`;
* a run of unknown nodes is one string looked up again: the piece it spells, else with
  ``byte_fallback`` its bytes' ``<0xXX>`` pieces if every byte has one, else the unknown id;
  without an unknown id an unknown character is an error (HF: ``MissingUnkId``);
* each pre-token is a lattice of its own (:meth:`UnigramModel.encode_words`).

>>> model = UnigramModel([("<unk>", 0.0), ("▁a", -1.0), ("b", -2.0), ("▁", -3.0)], unk_id=0)
>>> model.encode_words(["▁ab", "▁c"])
[1, 2, 3, 0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ubpe_native._unigram import UnigramLattice

from ..errors import InvalidParameterError, ModelFormatError
from .imported import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED
from .sentencepiece import UNK_PENALTY, blob_offsets

__all__ = ["UnigramModel"]

_NO_FALLBACK = np.full(256, -1, dtype=np.int32)


def byte_piece(byte: int) -> str:
    """The piece that stands for a byte in byte fallback.

    >>> byte_piece(10)
    '<0x0A>'
    """
    return f"<0x{byte:02X}>"


class UnigramModel:
    """``UnigramModel(vocab, unk_id=None, byte_fallback=False)``: HF's ``Unigram`` over
    ``vocab``, a list of ``(piece, score)`` whose index is the id (see the module docstring)."""

    kind = "unigram"
    variant = "hf:unigram"

    def __init__(self, vocab: Sequence[tuple[str, float]], unk_id: int | None = None, byte_fallback: bool = False,
                 where: str = "<tokenizer.json>"):
        self.vocab = [(str(piece), float(score)) for piece, score in vocab]
        self.unk_id = unk_id
        self.byte_fallback = bool(byte_fallback)
        self.where = where
        n = len(self.vocab)
        if not n:
            raise ModelFormatError(f"{where}: the Unigram model's `vocab` is empty")
        if unk_id is not None and not 0 <= unk_id < n:
            raise ModelFormatError(f"{where}: the Unigram model's `unk_id` {unk_id} is not in its "
                                   f"{n}-piece vocabulary")
        self.texts = [piece for piece, _ in self.vocab]
        self.scores = np.array([score for _, score in self.vocab], dtype=np.float64)
        if not np.isfinite(self.scores).all():
            raise ModelFormatError(f"{where}: a Unigram score is not a finite number")
        self.token_to_id = {piece: i for i, piece in enumerate(self.texts)}  # the last of a text wins
        self.min_score = float(self.scores.min())
        fallback = np.array([self.token_to_id.get(byte_piece(b), -1) for b in range(256)], dtype=np.int32)
        self.byte_ids = fallback if self.byte_fallback else _NO_FALLBACK
        chosen = [i for piece, i in self.token_to_id.items() if piece]
        encoded = [self.texts[i].encode("utf-8", "surrogatepass") for i in chosen]
        # without an unknown id, an unknown character is an error: it is written as the id
        # past the vocabulary (runs fused, never looked up again) and refused after
        self._missing = n if unk_id is None else None
        self._kernel = UnigramLattice(
            b"".join(encoded), blob_offsets(encoded), np.asarray(chosen, dtype=np.int32), self.scores[chosen],
            np.zeros(len(chosen), np.uint8), n if unk_id is None else unk_id, self.min_score - UNK_PENALTY,
            _NO_FALLBACK if unk_id is None else self.byte_ids, double_sums=True, hf_unknowns=unk_id is not None)

    def __reduce__(self) -> tuple:
        return UnigramModel, (self.vocab, self.unk_id, self.byte_fallback, self.where)

    def __len__(self) -> int:
        return len(self.vocab)

    # -- encoding ---------------------------------------------------------------------------

    def encode_words(self, words: Sequence[str]) -> list[int]:
        """The ids of the pre-tokens ``words``, each one's best path on its own."""
        if not words:
            return []
        encoded = [w.encode("utf-8", "surrogatepass") for w in words]
        ids, _ = self.encode_flat(b"".join(encoded), blob_offsets(encoded))
        return ids.tolist()

    def encode_flat(self, data: bytes, bounds: np.ndarray, split_spaces: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, offsets)`` of the words ``data[bounds[k]:bounds[k+1]]`` (UTF-8), in one kernel
        call without the GIL: word ``k``'s ids are ``ids[offsets[k]:offsets[k+1]]``;
        ``split_spaces``: each word cut again before every ``▁`` (HF's ``Metaspace`` split)."""
        ids, offsets = self._kernel.encode_words(np.frombuffer(data, dtype=np.uint8), bounds, split_spaces)
        if self._missing is not None and len(ids) and ids.max() >= self._missing:
            raise InvalidParameterError("the text holds a character no piece covers, and this Unigram model "
                                        "has no unknown token (`unk_id` is null): HF refuses it too")
        return ids, offsets

    # -- what the composed tokenizer asks of its model ----------------------------------------

    def token_types(self, n: int) -> np.ndarray:
        """llama.cpp's token types of ids ``0..n-1`` (added tokens are typed by the tokenizer)."""
        types = np.full(n, UNUSED, dtype=np.int32)
        types[: len(self.vocab)] = NORMAL
        if self.byte_fallback:
            types[self.byte_ids[self.byte_ids >= 0]] = BYTE
        if self.unk_id is not None:
            types[self.unk_id] = UNKNOWN
        return types

    def byte_token(self, byte: int) -> int | None:
        """The id byte fallback writes for ``byte`` (None: none)."""
        token = int(self.byte_ids[byte])
        return None if token < 0 else token

    def token_log_probs(self, types: np.ndarray) -> np.ndarray:
        """Per id, what the lattice adds for it: its score; the unknown token's is the lowest
        score minus :data:`UNK_PENALTY`; control and user-defined (added) tokens 0."""
        scores = np.zeros(len(types), dtype=np.float64)
        scores[: len(self.scores)] = self.scores
        scores[types == UNKNOWN] = self.min_score - UNK_PENALTY
        scores[np.isin(types, (CONTROL, USER_DEFINED))] = 0.0
        return scores

    def describe(self) -> dict[str, Any]:
        return {"model": "Unigram", "unk_id": self.unk_id, "byte_fallback": self.byte_fallback,
                "min_score": self.min_score}
