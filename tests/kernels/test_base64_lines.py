"""The one-pass reader of base64 vocabulary lines against Python's base64 and tiktoken's loader."""

from __future__ import annotations

import base64
import binascii

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._base64_lines import first_repeat, parse_lines, ranked_tables


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


def _python_tables(data: bytes):
    """What the numpy path makes of a ``.tiktoken`` file: `parse_lines`, the empty token left
    out, then `arrays_vocabulary` (``None`` where either refuses)."""
    from ubpe.errors import ModelFormatError
    from ubpe.models.bytelevel_trainer import arrays_vocabulary, gather_pieces

    parsed = parse_lines(data, True)
    if parsed is None:
        return None
    pieces, offsets, ranks = parsed
    kept = np.flatnonzero(np.diff(offsets) > 0)
    (pieces, offsets), ranks = gather_pieces(pieces, offsets, kept), ranks[kept]
    try:
        vocabulary, token_ids = arrays_vocabulary(pieces, offsets, ranks)
    except ModelFormatError:
        return None
    return vocabulary.piece_symbols.tolist(), vocabulary.piece_offsets.tolist(), token_ids.tolist()


#: a vocabulary's lines: the 256 bytes (some may go missing or repeat), merged pieces, and ranks
#: drawn from a small range so that repeats happen, shuffled
vocabulary_lines = st.tuples(
    st.permutations(range(256)), st.sampled_from([0, 0, 0, 1, 3]),
    st.lists(st.tuples(st.binary(min_size=2, max_size=5), st.integers(0, 5000)), max_size=40)
    | st.lists(st.tuples(st.binary(max_size=3), st.integers(0, 60)), max_size=8),  # empty, one-byte, repeats
    st.booleans(), st.randoms(use_true_random=False))


@settings(max_examples=300, deadline=None)
@given(vocabulary_lines)
def test_ranked_tables_give_what_the_numpy_path_gives(drawn):
    """`ranked_tables` (C, no numpy) against `parse_lines` + `arrays_vocabulary`: the same
    merged pieces in the same order and the same token ids, or ``None`` exactly where those
    refuse the file (a rank given twice, a piece given twice, a byte missing, a rank too large)."""
    byte_ranks, dropped, merged, in_order, rng = drawn
    entries = [(bytes([b]), rank) for b, rank in zip(range(dropped, 256), byte_ranks[dropped:])]
    entries += [(piece, 256 + rank) for piece, rank in merged]
    if not in_order:
        rng.shuffle(entries)
    data = b"".join((base64.b64encode(piece) or b"=") + b" %d\n" % rank for piece, rank in entries)
    got = ranked_tables(data)
    want = _python_tables(data)
    if want is None:
        assert got is None
        return
    assert got is not None
    symbols, offsets, token_ids, priorities, identity = got
    assert (symbols.tolist(), offsets.tolist(), token_ids.tolist()) == want
    assert priorities.tolist() == list(range(len(offsets) - 1))
    assert identity == (token_ids.tolist() == list(range(len(token_ids))))
    assert (symbols.typecode, offsets.typecode, token_ids.typecode, priorities.typecode) == ("i", "q", "i", "q")


def test_ranked_tables_refuse_a_rank_past_an_int32_id_and_an_irregular_file():
    lines = b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256))
    assert ranked_tables(lines) is not None
    assert ranked_tables(lines + b"YWI= %d\n" % (2**31 - 1)) is None  # ids are int32: 2**31 - 2 at most
    assert ranked_tables(lines + b"YWI= %d\n" % (2**31 - 2)) is not None
    assert ranked_tables(lines + b"YWI 300\n") is None  # padding missing: the slow path names it
    assert ranked_tables(b"") is None
