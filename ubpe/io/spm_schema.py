"""sentencepiece's protobuf schema, for the ``.model`` reader (:mod:`ubpe.io.sentencepiece`) and
writer (:mod:`ubpe.io.write.spm`): a leaf module, so that reading a model imports no writer."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidParameterError


def model_pb2() -> Any:
    """sentencepiece's protobuf schema (``sentencepiece_model_pb2``), or a clear error."""
    try:
        from sentencepiece import sentencepiece_model_pb2
    except ImportError:
        raise InvalidParameterError(
            "reading or writing sentencepiece models needs the `sentencepiece` and `protobuf` packages: "
            "pip install 'ubpe[vocab]'") from None
    return sentencepiece_model_pb2
