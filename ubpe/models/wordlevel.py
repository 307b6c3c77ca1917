"""HF ``tokenizers``' ``WordLevel`` model as a model stage of a composed tokenizer.

The second family made purely by composition (:mod:`ubpe.models.composed`): this module and a
branch of the ``tokenizer.json`` reader. Each pre-token is one id, its own if the vocabulary
has it, else the unknown token's (``models/wordlevel/mod.rs``); without an unknown token in the
vocabulary such a pre-token is an error, as in HF (``MissingUnkToken``).

>>> model = WordLevelModel({"<unk>": 0, "the": 1, "cat": 2}, "<unk>")
>>> model.encode_words(["the", "cat", "dog"])
[1, 2, 0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..text.hf_pipeline import metaspace_split
from .imported import NORMAL, UNKNOWN, UNUSED

__all__ = ["WordLevelModel"]


class WordLevelModel:
    """``WordLevelModel(vocab, unk_token)``: HF's ``WordLevel`` over ``vocab`` (token -> id)."""

    kind = "wordlevel"
    variant = "hf:wordlevel"

    def __init__(self, vocab: dict[str, int], unk_token: str = "<unk>"):
        self.vocab = dict(vocab)
        self.unk_token = unk_token
        self.unk_id = self.vocab.get(unk_token)
        n = 1 + max(self.vocab.values(), default=-1)
        self.texts = [""] * n
        for token, i in self.vocab.items():
            self.texts[i] = token
        self.scores = np.zeros(n, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.texts)

    def encode_words(self, words: Sequence[str]) -> list[int]:
        """One id per pre-token (see the module docstring)."""
        vocab, unk = self.vocab, self.unk_id
        out = [vocab.get(word, unk) for word in words]
        if unk is None and None in out:
            word = words[out.index(None)]
            raise InvalidParameterError(f"the pre-token {word!r:.40} is not in this WordLevel model's vocabulary, "
                                        f"which has no unknown token ({self.unk_token!r}): HF refuses it too")
        return out  # type: ignore[return-value]

    def encode_flat(self, data: bytes, bounds: np.ndarray, split_spaces: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, offsets)`` of the words ``data[bounds[k]:bounds[k+1]]`` (UTF-8); ``split_spaces``:
        each cut again before every ``▁`` (HF's ``Metaspace`` split)."""
        cuts = np.asarray(bounds).tolist()
        words = [data[a:b].decode("utf-8", "surrogatepass") for a, b in zip(cuts, cuts[1:])]
        pieces = [metaspace_split(word) for word in words] if split_spaces else [[word] for word in words]
        ids = np.asarray(self.encode_words([piece for group in pieces for piece in group]), dtype=np.int32)
        offsets = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum([len(group) for group in pieces], out=offsets[1:])
        return ids, offsets

    def token_types(self, n: int) -> np.ndarray:
        types = np.full(n, UNUSED, dtype=np.int32)
        types[list(self.vocab.values())] = NORMAL
        if self.unk_id is not None:
            types[self.unk_id] = UNKNOWN
        return types

    def byte_token(self, byte: int) -> int | None:
        return None  # no byte fallback

    def token_log_probs(self, types: np.ndarray) -> None:
        return None  # no scores: ubpe's encoders take fitted idf weights (fit_weights)

    def describe(self) -> dict[str, Any]:
        return {"model": "WordLevel", "unk_token": self.unk_token, "unk_id": self.unk_id}
