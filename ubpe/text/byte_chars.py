"""GPT-2's byte <-> printable-character table, the one spelling of bytes as text that byte-level
BPE files use (HF ``tokenizer.json`` vocabularies and merges, GGUF ``gpt2`` tokens;
llama.cpp's ``unicode_byte_to_utf8_map``).

Printable Latin-1 bytes stand for themselves; the other 68 (controls, space, soft hyphen...)
take the characters from U+0100 on, in byte order.

>>> BYTE_TO_CHAR[ord(" ")], BYTE_TO_CHAR[ord("a")], BYTE_TO_CHAR[0]
('Ġ', 'a', 'Ā')
>>> byte_chars(" é"), chars_bytes("ĠÃ©").decode()
('ĠÃ©', ' é')
"""

from __future__ import annotations

N_BYTES = 256
_PRINTABLE = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]


def bytes_to_unicode() -> dict[int, str]:
    """A new copy of GPT-2's byte -> printable character table."""
    table = {b: chr(b) for b in _PRINTABLE}
    shifted = 0
    for b in range(N_BYTES):
        if b not in table:
            table[b] = chr(N_BYTES + shifted)
            shifted += 1
    return table


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}
_CHARS_TO_LATIN1 = str.maketrans({c: chr(b) for c, b in CHAR_TO_BYTE.items()})
_LATIN1_TO_CHARS = str.maketrans({chr(b): c for b, c in BYTE_TO_CHAR.items()})


def byte_chars(text: str) -> str:
    """``text``'s UTF-8 bytes spelled in GPT-2's printable alphabet (HF's ``ByteLevel``)."""
    return text.encode("utf-8", "surrogatepass").decode("latin-1").translate(_LATIN1_TO_CHARS)


def chars_bytes(text: str) -> bytes:
    """The bytes a GPT-2-alphabet string spells (the inverse of :func:`byte_chars`)."""
    return text.translate(_CHARS_TO_LATIN1).encode("latin-1")


def byte_string(piece: bytes) -> str:
    """A token's bytes as byte-level vocabularies spell them.

    >>> byte_string(" the".encode()), byte_string("é".encode())
    ('Ġthe', 'Ã©')
    """
    return piece.decode("latin-1").translate(_LATIN1_TO_CHARS)
