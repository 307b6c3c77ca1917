"""The one-pass reader of base64 vocabulary lines against Python's base64 and tiktoken's loader."""

from __future__ import annotations

import base64
import binascii

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._base64_lines import first_repeat, parse_lines


def python_lines(data: bytes) -> list[tuple[bytes, int]] | None:
    """The tokens of ``.tiktoken`` lines by Python's strict base64 (tiktoken's loader and
    ``ubpe.io.tiktoken.parse_tiktoken`` read them so), ``None`` where that refuses a line."""
    out = []
    for line in data.split(b"\n"):
        line = line[:-1] if line.endswith(b"\r") else line
        if not line:
            continue
        fields = line.split(b" ")
        if len(fields) != 2 or not fields[1].isdigit() or int(fields[1]) >= 2**32:
            return None
        try:
            piece = b"" if not fields[0].strip(b"=") else base64.b64decode(fields[0], validate=True)
        except (binascii.Error, ValueError):
            return None
        out.append((piece, int(fields[1])))
    return out


def arrays_as_lines(result) -> list[tuple[bytes, int]]:
    pieces, offsets, ranks = result
    return [(bytes(pieces[offsets[k]:offsets[k + 1]]), int(ranks[k])) for k in range(len(ranks))]


tokens = st.lists(st.tuples(st.binary(max_size=12), st.integers(0, 2**32 - 1)), max_size=20)


@settings(max_examples=300, deadline=None)
@given(tokens, st.sampled_from([b"\n", b"\r\n"]))
def test_written_files_read_back(entries, newline):
    """Lines as a ``.tiktoken`` writer makes them decode to the same bytes and ranks."""
    # the empty token as whisper's multilingual.tiktoken writes it: padding alone
    data = b"".join((base64.b64encode(piece) or b"=") + b" %d" % rank + newline for piece, rank in entries)
    want = [(piece, rank) for piece, rank in entries]
    got = parse_lines(data, True)
    assert got is not None and arrays_as_lines(got) == want
    unranked = parse_lines(b"\n".join(base64.b64encode(piece) or b"=" for piece, _ in entries), False)
    assert [piece for piece, _ in arrays_as_lines(unranked)] == [piece for piece, _ in entries]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text("AQYWJj+/=xz09 \r", max_size=10), max_size=6))
def test_mangled_lines_are_read_as_python_reads_them_or_left_to_it(lines):
    """Whatever the C reader accepts, Python's strict base64 reads the same way; what it
    refuses goes to the slow reader (so never a different token)."""
    data = "\n".join(lines).encode()
    got = parse_lines(data, True)
    if got is not None:
        assert arrays_as_lines(got) == python_lines(data)


@given(st.lists(st.binary(max_size=4), max_size=30))
def test_first_repeat_finds_the_first_equal_piece(pieces):
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in pieces], out=offsets[1:])
    want = next((k for k, p in enumerate(pieces) if p in pieces[:k]), -1)
    assert first_repeat(np.frombuffer(b"".join(pieces), np.uint8), offsets) == want
