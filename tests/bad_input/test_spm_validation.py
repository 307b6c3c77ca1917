"""The sentencepiece reader refuses exactly what sentencepiece refuses (issue 28, point 2: it
accepted 25 models sentencepiece refuses - an empty piece, duplicate pieces, two unknown pieces,
byte fallback without the 256 byte pieces, with which text is lost).

Each case mutates a real trained model; sentencepiece itself (``SentencePieceProcessor``) is the
oracle: ubpe must raise a ``ModelFormatError`` when it refuses, and read the model when it does
not (then with sentencepiece's ids on a few texts)."""

from __future__ import annotations

import pytest

from bad_models import TEXTS, spm_model_bytes
from ubpe.errors import ModelFormatError

spm = pytest.importorskip("sentencepiece")
from sentencepiece import sentencepiece_model_pb2 as pb2  # noqa: E402

from ubpe.io.sentencepiece import from_bytes  # noqa: E402

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def _add_bytes(model, values):
    for b in values:
        piece = model.pieces.add()
        piece.piece, piece.type = f"<0x{b:02X}>", BYTE


def _set(index, **fields):
    def mutate(model):
        for name, value in fields.items():
            setattr(model.pieces[index], name, value(model) if callable(value) else value)
    return mutate


def _fallback(values):
    def mutate(model):
        model.trainer_spec.byte_fallback = True
        _add_bytes(model, values)
    return mutate


MUTATIONS = {
    "empty piece": _set(5, piece=""),
    "duplicate piece": _set(6, piece=lambda m: m.pieces[5].piece),
    "duplicate user-defined piece": lambda m: (_set(5, type=USER_DEFINED)(m), _set(6, type=USER_DEFINED)(m),
                                               _set(6, piece=lambda n: n.pieces[5].piece)(m)),
    "control piece spelled like a normal one": _set(1, piece=lambda m: m.pieces[5].piece),
    "two unknown pieces": _set(5, type=UNKNOWN),
    "no unknown piece": _set(0, type=NORMAL),
    "byte piece without byte_fallback": _set(5, type=BYTE),
    "byte_fallback without byte pieces": _fallback([]),
    "byte_fallback with 255 byte pieces": _fallback(range(255)),
    "byte_fallback with every byte piece": _fallback(range(256)),
    "byte piece of lower-case hex": lambda m: (_fallback(range(256))(m), setattr(m.pieces[-1], "piece", "<0xff>")),
    "unused piece": _set(5, type=UNUSED),
    "a piece of 7999 bytes": _set(5, piece="a" * 7999),
    "a piece of 8000 bytes": _set(5, piece="a" * 8000),
    "a piece of 4000 two-byte characters": _set(5, piece="é" * 4000),
    "a piece holding NUL": _set(5, piece="a\0b"),
    "a piece with a space": _set(5, piece="a b"),
    "unk_id past the pieces": lambda m: setattr(m.trainer_spec, "unk_id", 9999),
}


@pytest.mark.parametrize("kind", ["bpe", "unigram"])
@pytest.mark.parametrize("name", list(MUTATIONS))
def test_refused_exactly_when_sentencepiece_refuses(kind, name):
    model = pb2.ModelProto()
    model.ParseFromString(spm_model_bytes(kind))
    MUTATIONS[name](model)
    data = model.SerializeToString()
    try:
        theirs = spm.SentencePieceProcessor(model_proto=data)
    except RuntimeError:
        theirs = None
    if theirs is None:
        with pytest.raises(ModelFormatError, match="<model>: "):
            from_bytes(data)
        return
    ours = from_bytes(data)
    for text in TEXTS[:20]:
        assert ours.encode(text) == theirs.encode(text), text
