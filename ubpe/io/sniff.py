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
#: the top-level fields of a ubpe 0.3.0 JSON dump (one of them comes first)
UBPE030_FIELDS = ("n_tokens", "alphabet", "known_words", "break_tokens", "regex_str", "stop_tokens", "mapper",
                  "weights")
#: minbpe's first line
MINBPE_VERSION = "minbpe v1"
_BASE64_FIRST = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_BASE64 = bytes(sorted(_BASE64_FIRST))
#: whitespace between a JSON file's tokens, as a bytes regex's ``\s`` reads it
_SPACE = frozenset(b" \t\n\r\x0b\x0c")
#: a part of :func:`_then` that stands for one or more ASCII digits
DIGITS = b"[0-9]+"


def _quoted(*names: str) -> tuple[bytes, ...]:
    return tuple(f'"{name}"'.encode() for name in names)


# HF's top-level keys, or its model object's first keys: a file whose keys come in another
# order than HF writes them puts the model and its vocabulary first
_HF_KEYS = _quoted("added_tokens", "pre_tokenizer", "post_processor", "truncation")
_HF_MODEL_KEYS = _quoted("type", "vocab", "merges", "unk_token", "dropout", "continuing_subword_prefix")
_TEKKEN_TOKEN_KEYS = _quoted("token_bytes", "token_str")
GZIP_MAGIC = b"\x1f\x8b"
#: what the first line of CLIP's merges file holds
CLIP_HEADER = "#version"
_CLIP_HEAD_BYTES = 4096


def _then(head: bytes, pos: int, *parts: bytes | tuple[bytes, ...]) -> int:
    """The position after ``parts`` read in order from ``pos`` of ``head``, whitespace allowed
    before each (a tuple: any one of its literals; :data:`DIGITS`: one or more digits), or -1
    where they do not follow. ``_then(head, 0, b"{", b'"a"', b":")`` is ``re.match(rb'\\s*\\{\\s*"a"\\s*:', head)``.

    >>> _then(b' { "a" :1', 0, b"{", (b'"b"', b'"a"'), b":", DIGITS), _then(b'{"a"', 0, b"{", b":")
    (9, -1)
    """
    end = len(head)
    for part in parts:
        while pos < end and head[pos] in _SPACE:
            pos += 1
        if part is DIGITS:
            start = pos
            while pos < end and 48 <= head[pos] <= 57:
                pos += 1
            if pos == start:
                return -1
            continue
        for option in part if isinstance(part, tuple) else (part,):
            if head.startswith(option, pos):
                pos += len(option)
                break
        else:
            return -1
    return pos


def _occurs(head: bytes, keys: tuple[bytes, ...], *parts: bytes | tuple[bytes, ...], after: bytes = b"") -> bool:
    """Whether one of ``keys`` occurs in ``head`` followed by ``parts`` (:func:`_then`) and, if
    ``after`` is given, right after it and whitespace (``re.search(after + r'\\s*' + key + ...)``).

    >>> _occurs(b'[{ "rank": 3', (b'"rank"',), b":", DIGITS, after=b"{"), _occurs(b'["rank": 3', (b'"rank"',), b":")
    (True, True)
    >>> _occurs(b'["rank": 3', (b'"rank"',), b":", after=b"{")
    False
    """
    for key in keys:
        at = head.find(key)
        while at >= 0:
            before = at - 1
            while before >= 0 and head[before] in _SPACE:
                before -= 1
            if (not after or before >= 0 and head[before] == after[0]) and _then(head, at + len(key), *parts) >= 0:
                return True
            at = head.find(key, at + 1)
    return False


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
    return head.lstrip()[:1] == b"{" and UBPE_FORMAT_NAME.encode() in head and _occurs(
        head, (b'"format"',), b":", f'"{UBPE_FORMAT_NAME}"'.encode())


def ubpe030(head: bytes) -> bool:
    """Whether ``head`` starts a ubpe 0.3.0 JSON dump.

    >>> ubpe030(b'{"n_tokens": 9, "alphabet": {"a": 0}'), ubpe030(b'{"format": "ubpe-model"')
    (True, False)
    """
    start = head.lstrip()
    return start[:1] == b"{" and start[1:].lstrip()[:1] == b'"' and _then(head, 0, b"{", _quoted(*UBPE030_FIELDS), b":") >= 0


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
    if line[:1] == b"" or line[0] not in _BASE64_FIRST:
        return False
    token, space, rest = line.partition(b" ")  # rb"[A-Za-z0-9+/]+={0,2} [0-9]+(\r?\n|$)"
    body = token.rstrip(b"=")
    if not space or len(token) - len(body) > 2 or body.translate(None, _BASE64):
        return False
    if not rest[:1].isdigit():
        return False
    tail = rest[_then(rest, 0, DIGITS):]
    return tail[:1] in (b"", b"\n") or tail[:2] == b"\r\n"


def tekken(head: bytes) -> bool:
    """Whether ``head`` starts a tekken file: a JSON object holding a vocabulary or special
    token entry as Mistral writes them (``{"rank": 0, "token_bytes": ...``), or both sizes of
    its ``config``.

    >>> tekken(b'{"config": {}, "vocab": [{"rank": 0, "token_bytes": "AA=="'), tekken(b'{"vocab": []')
    (True, False)
    """
    if head.lstrip()[:1] != b"{" or (b'"rank"' not in head and b'"default_vocab_size"' not in head):
        return False
    return _occurs(head, (b'"rank"',), b":", DIGITS, b",", _TEKKEN_TOKEN_KEYS, b":", after=b"{") or all(
        _occurs(head, (key,), b":", DIGITS) for key in _quoted("default_vocab_size", "default_num_special_tokens"))


def hf(head: bytes) -> bool:
    """Whether ``head`` starts an HF ``tokenizer.json``: a JSON object with HF's top-level
    keys, or whose ``model`` is an object of HF's model keys (keys in another order than HF
    writes them put the model and its vocabulary before the others).

    >>> hf(b'{"version": "1.0", "truncation": null}'), hf(b'{"a": 1}')
    (True, False)
    >>> hf(b'{"model": {"type": "BPE", "vocab": {"a": 0'), hf(b'{"model": "gpt-4"}')
    (True, False)
    """
    return head.lstrip()[:1] == b"{" and (_occurs(head, _HF_KEYS, b":") or _occurs(head, (b'"model"',), b":", b"{", _HF_MODEL_KEYS, b":"))


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
#: `hf` goes before `tekken`: it looks for keys HF writes followed by ``:``, which a tekken file
#: holds as no key (its tokens are values), in ~1 µs, where `tekken`'s search of a 64 KiB head
#: of JSON for ``"rank"`` takes 70-150 µs (a twentieth of a small tokenizer.json's load).
DETECTORS: dict[str, Callable[[bytes], bool]] = {
    "gguf": gguf, "sentencepiece": sentencepiece, "ubpe": ubpe, "ubpe030": ubpe030, "minbpe": minbpe,
    "tiktoken": tiktoken, "hf": hf, "tekken": tekken, "clip": clip,
}
