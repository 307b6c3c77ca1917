"""sentencepiece ``.model`` files: a ``ModelProto`` (``sentencepiece_model_pb2``) for the models
sentencepiece runs with ubpe's ids.

* sentencepiece's own models (read from a ``.model`` or a GGUF ``llama`` file): the pieces,
  scores and types as they are, the model type, ``byte_fallback``, the special ids and the
  normalizer (the precompiled charsmap, ``add_dummy_prefix``, ``remove_extra_whitespaces``,
  ``escape_whitespaces``; a GGUF ``llama`` model: no charsmap, its space prefix, no clean-up);
* classic vocabularies: a BPE model over the alphabet's characters (``code_points`` of
  :mod:`ubpe.io.write.hf` for other alphabets) where the piece of id ``i`` scores ``-i``:
  sentencepiece merges the adjacent pair whose concatenation scores highest, which is ubpe's
  ``ranked`` encoder with ``priority="id"``; the identity normalizer, spaces not escaped. The
  unknown piece sentencepiece needs is appended after the vocabulary (the last id).

The file's ``trainer_spec`` records ubpe as its writer in ``model_prefix``-free fields only;
sentencepiece has no format version field (``ModelProto`` is versioned by protobuf's rules).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...files import write_atomically
from .hf import _symbol_chars
from .model_view import NORMAL, UNKNOWN, CannotWrite, Pieces, SymbolMerges, view_of
from ..spm_schema import model_pb2

UNKNOWN_PIECE = "<unk>"


def _symbol_pieces(view: SymbolMerges) -> Pieces:
    chars = _symbol_chars(view)
    texts = ["".join(chars[s] for s in piece) for piece in view.pieces]
    if len(set(texts)) < len(texts):
        raise CannotWrite("this classic vocabulary holds one piece under several ids; a sentencepiece model "
                          "holds each piece once")
    if "\0" in chars:
        raise CannotWrite("sentencepiece pieces cannot hold a NUL character")
    unknown = UNKNOWN_PIECE
    while unknown in texts:
        unknown = f"<{unknown}>"
    n = len(texts)
    return Pieces("bpe", [*texts, unknown], np.array([-float(i) for i in range(n)] + [0.0], np.float32),
                  np.array([NORMAL] * n + [UNKNOWN], np.int32), b"", False, False, False, False, {"unk": n})


def model_proto(tokenizer: Any) -> bytes:
    """The serialized ``ModelProto`` of ``tokenizer`` (:class:`CannotWrite`: none holds it)."""
    view = view_of(tokenizer)
    if isinstance(view, SymbolMerges):
        view = _symbol_pieces(view)
    if not isinstance(view, Pieces):
        raise CannotWrite(f"a sentencepiece .model holds pieces over characters, not {tokenizer.variant} "
                          "byte-level tokens (pieces that are parts of a character have no text)")
    pb2 = model_pb2()
    proto = pb2.ModelProto()
    for piece, score, kind in zip(view.pieces, view.scores.tolist(), view.types.tolist()):
        proto.pieces.add(piece=piece, score=score, type=kind)
    trainer = proto.trainer_spec
    trainer.model_type = pb2.TrainerSpec.BPE if view.kind == "bpe" else pb2.TrainerSpec.UNIGRAM
    trainer.vocab_size = len(view.pieces)
    trainer.byte_fallback = view.byte_fallback
    ids = view.special_ids
    trainer.unk_id = ids.get("unk", -1)
    trainer.bos_id = ids.get("bos", -1)
    trainer.eos_id = ids.get("eos", -1)
    trainer.pad_id = ids.get("pad", -1)
    if view.llama_text:  # GGUF: the pieces were not cut at spaces by a sentencepiece trainer
        trainer.split_by_whitespace = False
    spec = proto.normalizer_spec
    spec.name = "custom" if view.charsmap else "identity"
    spec.precompiled_charsmap = view.charsmap
    spec.add_dummy_prefix = view.add_dummy_prefix
    spec.remove_extra_whitespaces = view.remove_extra_whitespaces
    spec.escape_whitespaces = view.escape_whitespaces
    return proto.SerializeToString()


def write(tokenizer: Any, path: Any) -> None:
    """Write ``tokenizer`` as a sentencepiece ``.model`` (atomically)."""
    write_atomically(path, model_proto(tokenizer))
