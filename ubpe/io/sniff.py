"""What each model format's first bytes look like: one detector per format, in detection order.

Detection reads a file's head (``ubpe.files.read_head``) and asks these in order; the first
that accepts names the format, and only that format's module is then imported (each module
imports what reading its files needs: numpy, ``base64``, ``mmap``...). This module imports the
standard library's ``re`` only (``zlib`` for a gzip'd head), so that loading a ``tokenizer.json``, the eighth
format tried, does not import seven readers first; its patterns are compiled when a detector
first needs one (``re``'s cache), behind a plain bytes test that turns most other files away
(eight compiles are 0.6 ms of a 2 ms file's load). Each format module declares its detector
(``FORMAT.detect``) as the one here.

>>> [name for name, accepts in DETECTORS.items() if accepts(b'{"version": "1.0", "truncation": null}')]
['hf']
>>> [name for name, accepts in DETECTORS.items() if accepts(b"GGUF\\x03\\x00")]
['gguf']
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Callable

#: GGUF's magic (the file's first four bytes)
GGUF_MAGIC = b"GGUF"
#: a sentencepiece ModelProto's first field: ``pieces`` (field 1, length-delimited)
_PIECES_TAG = 0x0A
_MAX_VARINT_BYTES = 10
#: the ``format`` field of ubpe's own model files
UBPE_FORMAT_NAME = "ubpe-model"
_UBPE_FORMAT_FIELD = rb'"format"\s*:\s*"' + UBPE_FORMAT_NAME.encode() + rb'"'
#: the top-level fields of a ubpe 0.3.0 JSON dump (one of them comes first)
UBPE030_FIELDS = ("n_tokens", "alphabet", "known_words", "break_tokens", "regex_str", "stop_tokens", "mapper",
                  "weights")
_UBPE030_FIRST_FIELD = rb'\s*\{\s*"(' + "|".join(UBPE030_FIELDS).encode() + rb')"\s*:'
#: minbpe's first line
MINBPE_VERSION = "minbpe v1"
_TIKTOKEN_LINE = rb"[A-Za-z0-9+/]+={0,2} [0-9]+(\r?\n|$)"
_BASE64_FIRST = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_TEKKEN_ENTRY = rb'\{\s*"rank"\s*:\s*[0-9]+\s*,\s*"(token_bytes|token_str)"\s*:'
_TEKKEN_SIZES = (rb'"default_vocab_size"\s*:\s*[0-9]', rb'"default_num_special_tokens"\s*:\s*[0-9]')
# HF's top-level keys, or its model object's first keys: a file whose keys come in another
# order than HF writes them puts the model and its vocabulary first
_HF_KEYS = rb'"(added_tokens|pre_tokenizer|post_processor|truncation)"\s*:'
_HF_MODEL = rb'"model"\s*:\s*\{\s*"(type|vocab|merges|unk_token|dropout|continuing_subword_prefix)"\s*:'
GZIP_MAGIC = b"\x1f\x8b"
#: what the first line of CLIP's merges file holds
CLIP_HEADER = "#version"
_CLIP_HEAD_BYTES = 4096


def gguf(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a GGUF file (its magic).

    >>> gguf(b"GGUF\\x03\\x00"), gguf(b"GGML")
    (True, False)
    """
    return head[:4] == GGUF_MAGIC


def _varint(head: bytes, pos: int) -> tuple[int, int] | None:
    """The protobuf varint at ``pos`` of ``head`` and the position after it (None: cut or too long)."""
    value = shift = 0
    for k in range(pos, min(len(head), pos + _MAX_VARINT_BYTES)):
        value |= (head[k] & 0x7F) << shift
        shift += 7
        if not head[k] & 0x80:
            return value, k + 1
    return None


def sentencepiece(head: bytes) -> bool:
    """Whether ``head`` starts like a sentencepiece ModelProto: a ``pieces`` entry whose first
    field is the piece string, of a length that fits in the entry, in UTF-8.

    >>> sentencepiece(b"\\n\\x0c\\n\\x05<unk>"), sentencepiece(b"\\n\\x0c\\n\\x00")
    (True, False)
    """
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


def ubpe(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts one of our model files.

    >>> ubpe(b'{"format": "ubpe-model", "format_version": 1'), ubpe(b'{"n_tokens": 9')
    (True, False)
    """
    return head.lstrip()[:1] == b"{" and UBPE_FORMAT_NAME.encode() in head and re.search(_UBPE_FORMAT_FIELD, head) is not None


def ubpe030(head: bytes) -> bool:
    """Whether ``head`` starts a ubpe 0.3.0 JSON dump.

    >>> ubpe030(b'{"n_tokens": 9, "alphabet": {"a": 0}'), ubpe030(b'{"format": "ubpe-model"')
    (True, False)
    """
    start = head.lstrip()
    return start[:1] == b"{" and start[1:].lstrip()[:1] == b'"' and re.match(_UBPE030_FIRST_FIELD, head) is not None


def minbpe(head: bytes) -> bool:
    """Whether ``head`` starts with minbpe's version line.

    >>> minbpe(b"minbpe v1\\n\\n0\\n"), minbpe(b"minbpe v2\\n")
    (True, False)
    """
    return head.split(b"\n", 1)[0].rstrip(b"\r") == MINBPE_VERSION.encode()


def tiktoken(head: bytes) -> bool:
    """Whether ``head`` starts with a ``.tiktoken`` line (base64 of a token, a space, its rank).

    >>> tiktoken(b"IQ== 0\\nIg== 1\\n"), tiktoken(b"IQ== zero\\n")
    (True, False)
    """
    line = head.lstrip(b"\r\n")
    return line[:1] != b"" and line[0] in _BASE64_FIRST and re.match(_TIKTOKEN_LINE, line) is not None


def tekken(head: bytes) -> bool:
    """Whether ``head`` starts a tekken file: a JSON object holding a vocabulary or special
    token entry as Mistral writes them (``{"rank": 0, "token_bytes": ...``), or both sizes of
    its ``config``.

    >>> tekken(b'{"config": {}, "vocab": [{"rank": 0, "token_bytes": "AA=="'), tekken(b'{"vocab": []')
    (True, False)
    """
    if head.lstrip()[:1] != b"{" or (b'"rank"' not in head and b'"default_vocab_size"' not in head):
        return False
    return re.search(_TEKKEN_ENTRY, head) is not None or all(re.search(size, head) for size in _TEKKEN_SIZES)


def hf(head: bytes) -> bool:
    """Whether ``head`` starts an HF ``tokenizer.json``: a JSON object with HF's top-level
    keys, or whose ``model`` is an object of HF's model keys (keys in another order than HF
    writes them put the model and its vocabulary before the others).

    >>> hf(b'{"version": "1.0", "truncation": null}'), hf(b'{"a": 1}')
    (True, False)
    >>> hf(b'{"model": {"type": "BPE", "vocab": {"a": 0'), hf(b'{"model": "gpt-4"}')
    (True, False)
    """
    return head.lstrip()[:1] == b"{" and (re.search(_HF_KEYS, head) is not None or re.search(_HF_MODEL, head) is not None)


def _unpack_head(head: bytes) -> bytes:
    """The first unpacked bytes of gzip'd ``head`` (empty if it does not unpack)."""
    import zlib

    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, _CLIP_HEAD_BYTES)
    except zlib.error:
        return b""


def clip(head: bytes) -> bool:
    """Whether ``head`` starts a gzip'd CLIP merges file: its first line holds ``#version``
    and its second is two tokens separated by one space.

    >>> import gzip
    >>> clip(gzip.compress(b"#version: 0.2\\ni n\\nt h\\n")), clip(gzip.compress(b"#version: 0.2\\n"))
    (True, False)
    """
    if not head.startswith(GZIP_MAGIC):
        return False
    lines = _unpack_head(head).split(b"\n", 2)
    return len(lines) == 3 and CLIP_HEADER.encode() in lines[0] and len(lines[1].split(b" ")) == 2


#: Format name -> its detector, in detection order (binary formats with a magic or a protobuf
#: tag first, then the JSON and text formats): ``ubpe.io.FORMAT_REGISTRY``'s names and order.
DETECTORS: dict[str, Callable[[bytes], bool]] = {
    "gguf": gguf, "sentencepiece": sentencepiece, "ubpe": ubpe, "ubpe030": ubpe030, "minbpe": minbpe,
    "tiktoken": tiktoken, "tekken": tekken, "hf": hf, "clip": clip,
}
