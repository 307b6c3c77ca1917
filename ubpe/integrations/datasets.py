"""A ``datasets.Dataset.map`` function that tokenizes a column with ubpe.

>>> import datasets
>>> from ubpe import UBPE
>>> model = UBPE(alphabet="ACGT", n_tokens=12)
>>> model.fit(["GATTACA", "TACAGATTACA"] * 5, quiet=True)
>>> data = datasets.Dataset.from_dict({"text": ["GATTACA", "TACA"]})
>>> data.map(tokenize_function(model), batched=True)["input_ids"] == [
...     model.encode("GATTACA")[0][0], model.encode("TACA")[0][0]]
True

The function is an object (:class:`TokenizeFunction`) holding the ubpe tokenizer, which pickles
(its compiled encoders are built again on first use), so ``map(..., num_proc=N)`` sends it to
each worker process. A batch is encoded with ``encode_batch_to_numpy`` (the kernels fill flat
arrays without the GIL) where the family's batch call takes the encoder, else one document at a
time.
"""

from __future__ import annotations

import hashlib
from typing import Any


from ..errors import InvalidParameterError
from . import STOCHASTIC_ENCODERS, is_fitted


class TokenizeFunction:
    """``batch -> {"input_ids": [...], "attention_mask": [...]}`` for ``Dataset.map``
    (see :func:`tokenize_function`)."""

    def __init__(self, model: Any, column: str, encoder: str | None, encoder_options: dict[str, Any],
                 batched: bool, add_bos: int | None, add_eos: int | None, max_length: int | None,
                 attention_mask: bool):
        self.model = model
        self.column = column
        self.encoder = encoder
        self.options = dict(encoder_options)
        self.batched = batched
        self.bos, self.eos = add_bos, add_eos
        self.max_length = max_length
        self.attention_mask = attention_mask
        self.seed = self.options.pop("seed", 0) if encoder in STOCHASTIC_ENCODERS else None

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        try:
            texts = batch[self.column]
        except KeyError:
            raise InvalidParameterError(f"the batch has no column {self.column!r} (it has: {', '.join(batch)})") from None
        if not self.batched:
            return {key: value[0] for key, value in self._encode([texts]).items()}
        return self._encode(list(texts))

    def _seeded(self, doc: Any) -> list[int]:
        """``doc``'s ids drawn with a seed from the function's seed and ``doc`` itself, so that
        a map repeats whatever its batches and processes (equal documents draw alike)."""
        key = repr((self.seed, doc if isinstance(doc, str) else list(doc)))
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        options = {**self.options, "seed": int.from_bytes(digest, "little") >> 1}
        return [int(t) for t in self.model.encode_with(doc, self.encoder, 1, **options)[0][0]]

    def _rows(self, texts: list[Any]) -> list[list[int]]:
        model, options = self.model, self.options
        if self.seed is not None:
            return [self._seeded(doc) for doc in texts]
        if getattr(model, "variant", None) in ("universal", "classic"):
            ids, offsets = model.encode_batch_to_numpy(texts, encoder=self.encoder, **options).best()
        elif (self.encoder is None or self.encoder == model.default_encoder) and not options:
            ids, offsets = model.encode_batch_to_numpy(texts).best()
        else:  # a family whose batch call runs its own encoder only
            return [[int(t) for t in encodings[0][0]]
                    for encodings in model.encode_batch_with(texts, self.encoder, 1, **options)]
        return [ids[a:b].tolist() for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]

    def _encode(self, texts: list[Any]) -> dict[str, list[list[int]]]:
        rows = self._rows(texts)
        prefix = [self.bos] if self.bos is not None else []
        suffix = [self.eos] if self.eos is not None else []
        if prefix or suffix:
            rows = [prefix + row + suffix for row in rows]
        if self.max_length is not None:
            rows = [row[: self.max_length] for row in rows]
        out = {"input_ids": rows}
        if self.attention_mask:
            out["attention_mask"] = [[1] * len(row) for row in rows]
        return out


def tokenize_function(tok: Any, column: str = "text", *, encoder: str | None = None,
                      encoder_options: dict[str, Any] | None = None, batched: bool = True,
                      max_length: int | None = None, attention_mask: bool = True) -> TokenizeFunction:
    """A function for ``dataset.map(f, batched=batched)`` giving ``input_ids`` (and
    ``attention_mask``) of the column ``column``.

    ``tok`` is a ubpe tokenizer, or a :class:`~ubpe.integrations.transformers.UBPETokenizer`
    (then its model, encoder, options and bos/eos are the defaults: the ids are what the
    wrapper gives a text without special-token strings in it, for a deterministic encoder). ``encoder`` /
    ``encoder_options`` pick ubpe's encoder; a ``"sample"`` or ``"dropout"`` encoder draws
    each document with a seed from ``encoder_options["seed"]`` and the document, so a map
    repeats whatever ``batch_size`` and ``num_proc`` (one document at a time: no batch kernel). ``max_length`` cuts each row (after bos/eos); padding is the collator's.
    """
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1):
        raise InvalidParameterError(f"`max_length` must be a positive int or None, got {max_length!r}")
    bos = eos = None
    model = tok
    options = dict(encoder_options or {})
    if hasattr(tok, "ubpe_model"):  # a UBPETokenizer: its settings, unless given
        model = tok.ubpe_model
        encoder = encoder if encoder is not None else tok.init_kwargs.get("encoder")
        if encoder_options is None:
            options = dict(tok.init_kwargs.get("encoder_options") or {})
        bos = tok.bos_token_id if tok.init_kwargs.get("add_bos") else None
        eos = tok.eos_token_id if tok.init_kwargs.get("add_eos") else None
    if not is_fitted(model):
        raise InvalidParameterError(f"tokenize_function needs a fitted ubpe tokenizer, not {type(model).__name__}")
    if encoder is not None or options:
        name = encoder or model.default_encoder
        model.encoder(name, **({**options, "seed": 0} if name in STOCHASTIC_ENCODERS else options))  # bad options fail here
    return TokenizeFunction(model, column, encoder, options, batched, bos, eos, max_length, attention_mask)


__all__ = ["TokenizeFunction", "tokenize_function"]
