"""CLIP's merges file (``bpe_simple_vocab_16e6.txt.gz``, shipped by OpenAI CLIP and open_clip),
read as open_clip 3.3.0's ``SimpleTokenizer`` reads it, into a :class:`~ubpe.models.clip.CLIPBPE`.

The file is gzip'd UTF-8 text: a header line (``"bpe_simple_vocab_16e6.txt#version: 0.2``),
then one merge per line, two tokens separated by a space, in rank order (``i n``, ``t h``,
``ab c</w>``...). CLIP keeps the first ``49152 - 256 - 2`` merges (its vocabulary size; the
file holds 262,145) and ignores the rest; a file with fewer keeps them all. Every kept line
must be two tokens of the byte alphabet, an operand made by the lines before (else
:class:`ModelFormatError` naming the line). An uncompressed file of the same lines is read
too with ``format="clip"``; detection looks for the gzip'd one only, since a plain
``#version`` merges file is also GPT-2's ``merges.txt``.

>>> import gzip
>>> detect(gzip.compress(b"bpe.txt#version: 0.2\\ni n\\nt h\\n")), detect(gzip.compress(b"i n\\n"))
(True, False)
>>> parse_merges("#version: 0.2\\ni n\\nin g</w>\\n").encode("Ring")
[81, 513]
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from typing import Any

from ..errors import ModelFormatError
from ..files import check_path
from ..text.byte_chars import CHAR_TO_BYTE
from .format import Format
from .sniff import CLIP_HEADER, GZIP_MAGIC, clip as detect

HEADER = CLIP_HEADER
#: the most bytes a merges file may unpack to (CLIP's unpacks to 1.6 MB)
MAX_UNPACKED = 1 << 26
_END_OF_WORD = "</w>"


def read(path: str | os.PathLike) -> Any:
    """The :class:`~ubpe.models.clip.CLIPBPE` of a CLIP merges file (gzip'd or not)."""
    where = os.fsdecode(check_path(path))
    with open(path, "rb") as handle:
        data = handle.read(MAX_UNPACKED + 1)
    if data.startswith(GZIP_MAGIC):
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unpacked:
                data = unpacked.read(MAX_UNPACKED + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise ModelFormatError(f"{where}: not a readable gzip file (corrupt or truncated?): {exc}") from None
    if len(data) > MAX_UNPACKED:
        raise ModelFormatError(f"{where}: more than {MAX_UNPACKED} bytes of merges; CLIP's file holds 1.6 MB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{where}: a CLIP merges file is UTF-8 text: {exc}") from None
    return parse_merges(text, where)


def parse_merges(text: str, where: str = "<clip>") -> Any:
    """The tokenizer of a merges file's text (``SimpleTokenizer``'s reading, every kept line
    checked)."""
    from ..models.clip import N_MERGES, CLIPBPE

    lines = text.split("\n")
    if HEADER not in lines[0]:
        raise ModelFormatError(f"{where}: not a CLIP merges file (its first line holds no {HEADER!r})")
    known = set(CHAR_TO_BYTE) | {c + _END_OF_WORD for c in CHAR_TO_BYTE}
    merges = []
    for number, line in enumerate(lines[1 : 1 + N_MERGES], start=2):
        if not line and number == len(lines):
            # the newline that ends a file shorter than CLIP's cut: SimpleTokenizer makes the
            # empty line an empty token (after the merges, before the special tokens)
            merges.append(("", ""))
            break
        pair = line.split()
        if len(pair) != 2:
            raise ModelFormatError(f"{where}, line {number}: a merge is two tokens separated by a space, got {line!r:.80}")
        for token in pair:
            if token not in known:
                raise ModelFormatError(f"{where}, line {number}: {token!r:.40} is neither a byte character "
                                       "nor made by an earlier merge")
        merges.append((pair[0], pair[1]))
        known.add(pair[0] + pair[1])
    return CLIPBPE(merges, name=os.path.basename(where), where=where)


FORMAT = Format("clip", "CLIP merges (bpe_simple_vocab_16e6.txt.gz)", detect, read, None)
