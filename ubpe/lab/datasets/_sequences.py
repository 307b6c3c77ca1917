"""FASTA records (via pyfaidx, the ``fasta`` extra) and MIDI files (via symusic and MidiTok, the
``midi`` extra) as documents.

A MIDI file is checked as a Standard MIDI File before its library reads it: symusic reads a
damaged file leniently (a file claiming 50 tracks and holding 1, a track whose length field
is short, a file cut after its header, a division of 0), which would give a document of two
tokens and no music. Here the header must name a non-zero division and at least one track,
every track it claims must be there, whole, and end with its End of Track event; and the
score symusic reads must hold a note.
"""

from __future__ import annotations

import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ubpe.lab.datasets._text import FileFormatError, first_line, is_blank, read_bytes, split_lines

#: Besides letters, a FASTA sequence may hold gaps and stop codons.
RESIDUE_MARKS = frozenset("-*.")
_HEADER = struct.Struct(">4sIHHH")  # "MThd", its length, format, tracks, division
_CHUNK = struct.Struct(">4sI")
_END_OF_TRACK = b"\xff\x2f\x00"


def fasta_documents(path: Path, label: str, chunk: int | None) -> Iterator[tuple[str, str, str]]:
    """``(document, id, unit)``: a record per document (or its ``chunk``-symbol pieces)."""
    from ubpe.lab.extras import require

    require(("pyfaidx",), "fasta")
    import pyfaidx

    data = read_bytes(path, label)
    data = data[3:] if data.startswith(b"\xef\xbb\xbf") else data  # a UTF-8 byte order mark
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise FileFormatError(f"{label}, line {line}: not a FASTA file (a byte that is not ASCII)") from None
    lines = [line for line in split_lines(text) if not is_blank(line)]  # blank lines hold nothing
    if not lines or not lines[0].startswith(">"):
        raise FileFormatError(f"{label}, line 1: no FASTA record (a record starts with '>')")
    # pyfaidx indexes a copy with "\n" line ends and no blank lines (it cannot index a file
    # that ends in one), beside its index in a scratch folder: nothing is written beside the
    # user's file
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "records.fa"
        copy.write_text("\n".join(lines) + "\n", encoding="ascii")
        try:
            fasta = pyfaidx.Fasta(str(copy), indexname=str(Path(scratch) / "index.fai"),
                                  read_long_names=True, sequence_always_upper=True, as_raw=True,
                                  duplicate_action="stop")
            records = [(name, str(fasta[name][:])) for name in fasta.keys()]
        except Exception as error:  # pyfaidx's FastaIndexingError, ValueError (a duplicate), ...
            raise FileFormatError(f"{label}: not a readable FASTA file ({first_line(error)})") from None
    for name, sequence in records:
        sequence = sequence.replace("\n", "")
        if not sequence:
            continue
        bad = next((c for c in sequence if not (c.isascii() and c.isalpha() or c in RESIDUE_MARKS)), None)
        if bad is not None:
            raise FileFormatError(f"{label}, record {name!r}: {bad!r} is not a residue letter")
        pieces = [sequence] if not chunk else [sequence[i:i + chunk] for i in range(0, len(sequence), chunk)]
        for i, piece in enumerate(pieces):
            yield piece, f"{label}:{name}" + (f":{i}" if chunk else ""), f"{label}:{name}"


def check_midi(data: bytes, label: str) -> None:
    """Raise `FileFormatError` unless ``data`` is a whole Standard MIDI File (see the module)."""
    if len(data) < _HEADER.size or data[:4] != b"MThd":
        raise FileFormatError(f"{label}: not a Standard MIDI File (no MThd header)")
    _, length, _, claimed, division = _HEADER.unpack_from(data)
    if length < 6:
        raise FileFormatError(f"{label}: a MIDI header of {length} bytes (it has 6)")
    if division == 0:
        raise FileFormatError(f"{label}: a MIDI division of 0 ticks per quarter note")
    if claimed == 0:
        raise FileFormatError(f"{label}: a MIDI file of 0 tracks")
    offset, tracks = 8 + length, 0
    while offset < len(data) and tracks < claimed:
        if offset + _CHUNK.size > len(data):
            raise FileFormatError(f"{label}: cut inside a chunk header at byte {offset}")
        kind, size = _CHUNK.unpack_from(data, offset)
        body = data[offset + _CHUNK.size: offset + _CHUNK.size + size]
        if len(body) < size:
            raise FileFormatError(f"{label}: chunk {kind!r} at byte {offset} says {size} bytes, "
                                  f"the file holds {len(body)} (cut short?)")
        if kind == b"MTrk":
            tracks += 1
            if not body.endswith(_END_OF_TRACK):
                raise FileFormatError(f"{label}: track {tracks} does not end with an End of Track "
                                      "event (a short length field, or a cut file)")
        offset += _CHUNK.size + size
    if tracks < claimed:
        raise FileFormatError(f"{label}: the header claims {claimed} tracks, the file holds {tracks}")


def midi_tokenizer():
    """MidiTok's REMI tokenizer with its default settings, all tracks in one token stream (a
    document per MIDI file); the tokens are its vocabulary's ids."""
    from ubpe.lab.extras import require

    require(("miditok", "symusic"), "midi")
    import miditok

    return miditok.REMI(miditok.TokenizerConfig(use_programs=True))


def midi_tokens(path: Path, label: str, tokenizer: Any = None) -> np.ndarray:
    """One MIDI file as REMI token ids (`midi_tokenizer`), checked first (`check_midi`)."""
    tokenizer = tokenizer or midi_tokenizer()
    import symusic

    data = read_bytes(path, label)
    check_midi(data, label)
    try:
        score = symusic.Score.from_midi(data)
    except Exception as error:  # symusic raises RuntimeError / ValueError with the parser's words
        raise FileFormatError(f"{label}: not a readable MIDI file ({first_line(error)})") from None
    if not any(len(track.notes) for track in score.tracks):
        raise FileFormatError(f"{label}: a MIDI file holding no note")
    try:
        sequence = tokenizer.encode(score)
    except Exception as error:  # MidiTok on a score it cannot tokenize
        raise FileFormatError(f"{label}: MidiTok cannot tokenize it ({first_line(error)})") from None
    sequence = sequence[0] if isinstance(sequence, list) else sequence
    ids = np.asarray(sequence.ids, dtype=np.int64)
    if not ids.size:
        raise FileFormatError(f"{label}: MidiTok gives no token for it")
    return ids
