"""sentencepiece ``.model`` files: the ModelProto, read with sentencepiece's own protobuf schema.

A BPE model becomes a :class:`ubpe.models.sentencepiece.SentencePieceBPE` (``spm:bpe``), a unigram
model a :class:`ubpe.models.sentencepiece.SentencePieceUnigram` (``spm:unigram``); both normalize text
with the model's own rules (:class:`ubpe.text.normalizers.Normalizer`) and give
sentencepiece's ids. Word and char models, and protobufs that are no ModelProto, raise
`ModelFormatError`.

>>> detect(b"\\n\\x0c\\n\\x05<unk>"), detect(b"GGUF"), detect(b"{")
(True, False, False)
"""

from __future__ import annotations

import os

from ubpe_native._numpy import np

from ..errors import ModelFormatError
from .format import Format
from .sniff import sentencepiece as detect

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

# ModelProto field 1 (pieces), wire type 2 -> tag byte 0x0A; its SentencePiece field 1 too

SUPPORTED_TYPES = ("unigram", "bpe")


# sentencepiece's piece types
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_HEX_DIGITS = frozenset("0123456789ABCDEF")
N_BYTES = 256
#: sentencepiece refuses a piece of this many UTF-8 bytes or more (``kMaxPieceSize``)
MAX_PIECE_BYTES = 8000


def check_pieces(pieces: list[str], types: list[int], byte_fallback: bool, where: str, *,
                 one_table: bool = False) -> None:
    """Refuse what sentencepiece's ``ModelInterface::InitializePieces`` refuses, with its
    reasons: a piece of :data:`MAX_PIECE_BYTES` or more, empty, or holding a NUL; a piece
    defined twice (``one_table``, BPE: among all pieces; else normal, user-defined and unused
    pieces share one table and the other types another); an unknown piece defined twice or not
    at all; a byte piece without ``byte_fallback`` or that is no ``<0xXX>``; ``byte_fallback``
    without all 256 byte pieces (text would be lost).

    >>> check_pieces(["<unk>", "a", "a"], [UNKNOWN, NORMAL, NORMAL], False, "m.model")
    Traceback (most recent call last):
    ...
    ubpe.errors.ModelFormatError: m.model: piece 2 ('a') is already defined (piece 1)
    """
    if _pieces_pass(pieces, types, byte_fallback, one_table):
        return
    seen: tuple[dict[str, int], dict[str, int]] = ({}, {})
    unknown = None
    bytes_found: set[int] = set()
    for i, piece in enumerate(pieces):
        if len(piece.encode("utf-8")) >= MAX_PIECE_BYTES:
            raise ModelFormatError(f"{where}: piece {i} is too long ({MAX_PIECE_BYTES} bytes or more)")
    for i, (piece, kind) in enumerate(zip(pieces, types)):
        if not piece:
            raise ModelFormatError(f"{where}: piece {i} is empty (a piece must not be empty)")
        if "\0" in piece:
            raise ModelFormatError(f"{where}: piece {i} holds a NUL character")
        table = seen[0] if one_table or kind in (NORMAL, USER_DEFINED, UNUSED) else seen[1]
        if piece in table:
            raise ModelFormatError(f"{where}: piece {i} ({piece[:40]!r}) is already defined (piece {table[piece]})")
        table[piece] = i
        if kind == UNKNOWN:
            if unknown is not None:
                raise ModelFormatError(f"{where}: the unknown piece is defined twice (pieces {unknown} and {i})")
            unknown = i
        elif kind == BYTE:
            if not byte_fallback:
                raise ModelFormatError(f"{where}: byte piece {piece[:40]!r} is found although byte_fallback is false")
            value = byte_piece_value(piece)
            if value is None:
                raise ModelFormatError(f"{where}: byte piece {piece[:40]!r} is not of the form <0xXX>")
            bytes_found.add(value)
    if unknown is None:
        raise ModelFormatError(f"{where}: no piece is the unknown piece (sentencepiece needs one)")
    if byte_fallback and len(bytes_found) != N_BYTES:
        raise ModelFormatError(f"{where}: byte_fallback is true but {N_BYTES - len(bytes_found)} of the 256 byte "
                               "pieces are missing (text that needs them would be lost)")


def byte_piece_value(piece: str) -> int | None:
    """The byte that a byte piece ``<0xXX>`` (two uppercase hex digits, as sentencepiece writes
    them) stands for, or None if ``piece`` is not of that form.

    >>> byte_piece_value("<0x0A>"), byte_piece_value("<0x0a>"), byte_piece_value("<0x0A> ")
    (10, None, None)
    """
    if len(piece) == 6 and piece[:3] == "<0x" and piece[5] == ">" and piece[3] in _HEX_DIGITS and piece[4] in _HEX_DIGITS:
        return int(piece[3:5], 16)
    return None


def _pieces_pass(pieces: list[str], types: list[int], byte_fallback: bool, one_table: bool) -> bool:
    """Whether `check_pieces` finds nothing, decided by whole-list operations in C (a
    model's 32k-256k pieces; the loop of `check_pieces` then runs only to name a fault)."""
    longest = max(map(len, pieces), default=0)
    if longest * 4 >= MAX_PIECE_BYTES and max(len(p.encode("utf-8")) for p in pieces) >= MAX_PIECE_BYTES:
        return False  # 4 bytes a code point at most: only then can a piece be too long
    if not all(pieces) or "\0" in "".join(pieces) or types.count(UNKNOWN) != 1:
        return False
    if one_table:
        if len(set(pieces)) != len(pieces):
            return False
    else:
        shared = (NORMAL, USER_DEFINED, UNUSED)
        first = [p for p, kind in zip(pieces, types) if kind in shared]
        second = [p for p, kind in zip(pieces, types) if kind not in shared]
        if len(set(first)) != len(first) or len(set(second)) != len(second):
            return False
    byte_pieces = [p for p, kind in zip(pieces, types) if kind == BYTE]
    if not byte_fallback:
        return not byte_pieces
    values = list(map(byte_piece_value, byte_pieces))
    return None not in values and len(set(values)) == N_BYTES


def read_model_proto(data: bytes) -> Any:
    """`ubpe_native._spm_proto.read_model_proto`, its extension imported when first called
    (detection imports this module for every file)."""
    from ubpe_native._spm_proto import read_model_proto as read_in_c

    return read_in_c(data)


def read(path: str | os.PathLike):
    """The tokenizer of a sentencepiece ``.model`` file."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ModelFormatError(f"{path}: cannot read: {exc}") from None
    return from_bytes(data, where=str(path))


def from_bytes(data: bytes, *, where: str = "<model>"):
    """The tokenizer of a serialized ModelProto: read in C
    (`ubpe_native._spm_proto.read_model_proto`, which checks what `check_pieces` checks; no
    protobuf, no numpy), or, for a file it is not sure of, with protobuf (`_from_protobuf`),
    which names the fault."""
    tables = read_model_proto(data)
    if tables is None:
        return _from_protobuf(data, where=where)
    from ..models.sentencepiece import SentencePieceBPE, SentencePieceUnigram

    model = SentencePieceBPE if tables[-1]["model_type"] == "bpe" else SentencePieceUnigram
    return model._from_tables(tables, name=os.path.basename(where), where=where)


def _from_protobuf(data: bytes, *, where: str = "<model>"):
    """`from_bytes` with sentencepiece's protobuf schema."""
    from google.protobuf.message import DecodeError

    from ..models.sentencepiece import SentencePieceBPE, SentencePieceUnigram
    from ..text.normalizers import Normalizer

    from .spm_schema import model_pb2

    pb2 = model_pb2()
    proto = pb2.ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, ValueError) as exc:
        raise ModelFormatError(f"{where}: not a sentencepiece model ({exc})") from None
    if not proto.pieces or not proto.HasField("trainer_spec"):
        raise ModelFormatError(f"{where}: not a sentencepiece model (no pieces or no trainer_spec)")
    kinds = pb2.TrainerSpec.ModelType
    model_type = proto.trainer_spec.model_type
    type_name = kinds.Name(model_type).lower() if model_type in kinds.values() else str(model_type)
    if type_name not in SUPPORTED_TYPES:
        raise ModelFormatError(f"{where}: sentencepiece model type {type_name!r} is not supported; "
                               f"supported: {', '.join(SUPPORTED_TYPES)}")
    tokens, piece_types, values = zip(*[(p.piece, p.type, p.score) for p in proto.pieces])  # one pass
    tokens, piece_types = list(tokens), list(piece_types)
    if set(map(type, tokens)) != {str}:  # protobuf hands over a string field that is not UTF-8 as bytes
        broken = next(i for i, t in enumerate(tokens) if not isinstance(t, str))
        raise ModelFormatError(f"{where}: piece {broken} is not valid UTF-8: {tokens[broken][:20]!r}")
    # BPE models keep all pieces in one table (sentencepiece's InitializePieces(false))
    check_pieces(tokens, piece_types, proto.trainer_spec.byte_fallback, where, one_table=type_name == "bpe")
    scores = np.array(values, dtype=np.float32)
    if not np.all(np.isfinite(scores)):
        raise ModelFormatError(f"{where}: a piece score is NaN or infinite")
    # sentencepiece's piece types (NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, BYTE 6,
    # UNUSED 5) are llama.cpp's token type numbers
    token_types = np.array(piece_types, dtype=np.int32)
    spec = proto.normalizer_spec
    normalizer = Normalizer(
        spec.precompiled_charsmap,
        add_dummy_prefix=spec.add_dummy_prefix,
        remove_extra_whitespaces=spec.remove_extra_whitespaces,
        escape_whitespaces=spec.escape_whitespaces,
        treat_whitespace_as_suffix=proto.trainer_spec.treat_whitespace_as_suffix,
        protected=tuple(t for t, k in zip(tokens, piece_types) if k == USER_DEFINED),
    )
    trainer = proto.trainer_spec
    specials = {"unk": trainer.unk_id if 0 <= trainer.unk_id < len(tokens) else None,
                "bos": trainer.bos_id if 0 <= trainer.bos_id < len(tokens) else None,
                "eos": trainer.eos_id if 0 <= trainer.eos_id < len(tokens) else None}
    flags = {"add_bos": False, "add_eos": False, "add_space_prefix": spec.add_dummy_prefix}
    name = os.path.basename(where)
    if type_name == "bpe":
        return SentencePieceBPE(tokens, scores, token_types=token_types, specials=specials,
                                flags=flags, name=name, variant="spm:bpe", where=where,
                                normalizer=normalizer)
    return SentencePieceUnigram(tokens, scores, token_types=token_types, specials=specials,
                                flags=flags, name=name, where=where, normalizer=normalizer)


def write(tokenizer: Any, path: str | os.PathLike) -> None:
    """`ubpe.io.write.spm.write` (imported when called: reading and saving other formats import
    no numpy)."""
    from .write.spm import write as write_model

    write_model(tokenizer, path)


FORMAT = Format("sentencepiece", "sentencepiece .model", detect, read, write)
