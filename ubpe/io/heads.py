"""What each model format's first bytes look like: the detectors behind :func:`ubpe.io.detect`.

They live together in this small module so that recognising a file imports no reader: a
format's module (and what it needs, such as the byte-level models or HF's pipeline) is
imported only when a file of that format is read or written. Each format module re-exports
its detector as ``detect``.

>>> gguf(b"GGUF\\x03\\x00"), sentencepiece(b"\\n\\x0c\\n\\x05<unk>"), ours(b'{"format": "ubpe-model"')
(True, True, True)
>>> ubpe030(b'{"n_tokens": 9, "alphabet": {"a": 0}'), ubpe030(b'{"format": "ubpe-model"')
(True, False)
>>> minbpe(b"minbpe v1\\n"), tiktoken(b"IQ== 0\\n"), hf(b'{"version": "1.0", "truncation": null}')
(True, True, True)
"""

from __future__ import annotations

import re

__all__ = ["gguf", "hf", "minbpe", "ours", "sentencepiece", "tiktoken", "ubpe030"]

#: A GGUF file's first four bytes.
GGUF_MAGIC = b"GGUF"
#: The ``format`` field of our model files, and the first line of minbpe's.
OURS_FORMAT_NAME = "ubpe-model"
MINBPE_VERSION = "minbpe v1"
#: The fields of a ubpe 0.3.0 dump; its JSON object starts with one of them (the reference
#: writes n_tokens first; other writers may not keep the order).
UBPE030_FIELDS = ("n_tokens", "alphabet", "known_words", "break_tokens", "regex_str", "stop_tokens", "mapper",
                  "weights")

# ModelProto field 1 (pieces), wire type 2 -> tag byte 0x0A; its SentencePiece field 1 too
_PIECES_TAG = 0x0A
_MAX_VARINT_BYTES = 10
_OURS = re.compile(rb'"format"\s*:\s*"' + OURS_FORMAT_NAME.encode() + rb'"')
_UBPE030 = re.compile(rb'\s*\{\s*"(' + "|".join(UBPE030_FIELDS).encode() + rb')"\s*:')
_TIKTOKEN_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} [0-9]+(\r?\n|$)")
# keys only HF's tokenizer.json has at its top level
_HF_KEYS = re.compile(rb'"(added_tokens|pre_tokenizer|post_processor|truncation)"\s*:')


def gguf(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a GGUF file (its magic)."""
    return head[:4] == GGUF_MAGIC


def _varint(head: bytes, pos: int) -> tuple[int, int] | None:
    value = shift = 0
    for k in range(pos, min(len(head), pos + _MAX_VARINT_BYTES)):
        value |= (head[k] & 0x7F) << shift
        shift += 7
        if not head[k] & 0x80:
            return value, k + 1
    return None


def sentencepiece(head: bytes) -> bool:
    """Whether ``head`` starts like a sentencepiece ModelProto: a ``pieces`` entry whose first
    field is the piece string, of a length that fits in the entry, in UTF-8."""
    if len(head) < 4 or head[0] != _PIECES_TAG:
        return False
    outer = _varint(head, 1)
    if outer is None or outer[1] >= len(head) or head[outer[1]] != _PIECES_TAG:
        return False
    inner = _varint(head, outer[1] + 1)
    if inner is None or inner[0] == 0 or inner[1] + inner[0] > outer[1] + outer[0]:
        return False
    piece = head[inner[1] : inner[1] + inner[0]]
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return len(piece) < inner[0] and len(head) == inner[1] + len(piece)  # cut by the head
    return True


def ours(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts one of our model files."""
    return head.lstrip()[:1] == b"{" and _OURS.search(head) is not None


def ubpe030(head: bytes) -> bool:
    """Whether ``head`` starts a ubpe 0.3.0 JSON dump."""
    return _UBPE030.match(head) is not None


def minbpe(head: bytes) -> bool:
    """Whether ``head`` starts with minbpe's version line."""
    return head.split(b"\n", 1)[0].rstrip(b"\r") == MINBPE_VERSION.encode()


def tiktoken(head: bytes) -> bool:
    """Whether ``head`` starts with a ``.tiktoken`` line."""
    return _TIKTOKEN_LINE.match(head.lstrip(b"\r\n")) is not None


def hf(head: bytes) -> bool:
    """Whether ``head`` starts an HF ``tokenizer.json`` (a JSON object with HF's top-level keys)."""
    return head.lstrip()[:1] == b"{" and _HF_KEYS.search(head) is not None
