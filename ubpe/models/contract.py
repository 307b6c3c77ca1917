"""The parts of the tokenizer contract (:class:`ubpe.models.ubpe.Tokenizer`) that every imported
model answers the same way, so that ``ubpe encode / view / inspect / compare`` take GGUF and
sentencepiece files like our own.

A piece, in the contract, is what an id stands for in the model's ``symbol_unit``: the bytes of
a byte-level token, the text of a sentencepiece token (``▁`` read as a space). The model's
own spelling (``Ġworld``, ``▁the``, ``<0x0A>``) stays available as ``id_to_piece``.

>>> from ubpe.models.ranked_bpe import ImportedBPE
>>> tok = ImportedBPE(["a", "b", "ab", "Ġ", "Ġab"], ["a b", "Ġ ab"], pre="gpt-2")
>>> tok.pieces([4]), tok.id_to_piece(4), tok.piece_to_id(" ab"), tok.piece_to_id("Ġab")
([b' ab'], 'Ġab', 4, 4)
>>> inventory = tok.inventory()
>>> inventory.ids, inventory.lengths[4], sorted(inventory.base)
([0, 1, 2, 3, 4], 3, [0, 1, 3])
"""

from __future__ import annotations

from ..pieces import PieceLookups

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any


class ImportedContract(PieceLookups):
    """Mixin of :class:`~ubpe.models.imported.ImportedTokenizer`: the contract's
    ``symbol_type`` and ``unit_pieces``, and ``piece_to_id`` that also takes the model's own
    spelling; ``inventory`` and ``covers`` are :class:`~ubpe.pieces.PieceLookups`' (every id,
    no recorded merge, one-symbol pieces as base ids, every text covered: what the vocabulary
    lacks becomes bytes or the unknown token)."""

    symbol_type = str

    def unit_pieces(self, ids) -> list[Any]:
        """What every id stands for: bytes for byte-level models, text for character models."""
        raw = [self.decode_bytes([i]) for i in self._check_ids(ids)]  # type: ignore[attr-defined]
        if self.symbol_unit == "byte":  # type: ignore[attr-defined]
            return raw
        return [r.decode("utf-8", errors="replace") for r in raw]

    def piece_to_id(self, piece: str | bytes) -> int:
        """The id of a token by the model's own spelling, or by what it stands for (the
        lowest such id). Raises :class:`UnknownTokenError` if no token has it."""
        if isinstance(piece, str) and piece in self._text_index():
            return self._text_index()[piece]
        return super().piece_to_id(piece)

    def _text_index(self) -> dict[str, int]:
        index = getattr(self, "_text_index_cache", None)
        if index is None:
            index = {}
            for i, text in enumerate(self.texts):  # type: ignore[attr-defined]
                index.setdefault(text, i)
            self._text_index_cache = index
        return index
