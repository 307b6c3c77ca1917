"""``.npy`` / ``.npz`` arrays as documents, bounded before anything is allocated.

numpy's own `numpy.load` allocates what a header asks for (a 200-byte ``.npy`` can ask for
8 TiB) and inflates an archive's members whole (a 300 kB ``.npz`` can hold 2.4 GB of
zeros). Here a header is read first and its shape x item size compared with the bytes the
file (or the archive member, by the size its directory declares) actually holds, and with
`max_array_bytes` (`MAX_ARRAY_BYTES`, or ``$UBPE_LAB_MAX_ARRAY_BYTES``); only then are the
bytes read. Object, structured, complex and text arrays are refused: a document is integers
or finite numbers.
"""

from __future__ import annotations

import io
import math
import os
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from ubpe.lab.datasets._text import FileFormatError, first_line, float_document, int_document

#: The most bytes of array data one ``.npy`` file, or all members of one ``.npz``, may hold.
MAX_ARRAY_BYTES = 1 << 30
MAX_ARRAY_BYTES_ENV = "UBPE_LAB_MAX_ARRAY_BYTES"
#: numpy's own bound on the length of a header's text.
_MAX_HEADER = 10_000


def max_array_bytes() -> int:
    """`MAX_ARRAY_BYTES`, or ``$UBPE_LAB_MAX_ARRAY_BYTES`` when set to a positive integer."""
    value = os.environ.get(MAX_ARRAY_BYTES_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else MAX_ARRAY_BYTES


def _header(stream: IO[bytes], at: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    fmt = np.lib.format
    try:
        version = fmt.read_magic(stream)
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran, dtype = read(stream, max_header_size=_MAX_HEADER)
    except Exception as error:  # numpy's header parser: ValueError, SyntaxError, tokenize's TokenError...
        raise FileFormatError(f"{at}: not a .npy array ({first_line(error)})") from None
    if dtype.hasobject or dtype.kind not in "iuf" or dtype.fields is not None:
        raise FileFormatError(f"{at}: an array of {dtype}, not of numbers (integers or floats)")
    if len(shape) not in (1, 2):
        raise FileFormatError(f"{at}: {len(shape)}-D; a document is a 1-D array or a 2-D array's row")
    return shape, fortran, dtype


def _array(stream: IO[bytes], available: int, at: str, limit: int) -> np.ndarray:
    """The array of a ``.npy`` stream holding ``available`` bytes in all."""
    start = stream.tell()
    shape, fortran, dtype = _header(stream, at)
    declared = math.prod(shape) * dtype.itemsize
    if declared > limit:
        raise FileFormatError(f"{at}: its header declares {declared:,} bytes of data, over the "
                              f"limit of {limit:,} (${MAX_ARRAY_BYTES_ENV} raises it)")
    held = available - (stream.tell() - start)
    if declared > held:
        raise FileFormatError(f"{at}: its header declares {declared:,} bytes of data, the file "
                              f"holds {max(held, 0):,} (cut short?)")
    data = stream.read(declared)
    if len(data) != declared:
        raise FileFormatError(f"{at}: cut short ({len(data):,} of {declared:,} bytes)")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")


def read_arrays(path: Path, label: str) -> Iterator[tuple[str, np.ndarray]]:
    """``(name, array)`` of a ``.npy`` (name "") or each member of a ``.npz``, bounded."""
    limit = max_array_bytes()
    try:
        with open(path, "rb") as handle:
            is_zip = handle.read(4) == b"PK\x03\x04"
            if not is_zip:
                handle.seek(0)
                yield "", _array(handle, os.fstat(handle.fileno()).st_size, label, limit)
                return
        yield from _npz(path, label, limit)
    except OSError as error:
        raise FileFormatError(f"{label}: cannot be read ({error.strerror or type(error).__name__})") from None


def _npz(path: Path, label: str, limit: int) -> Iterator[tuple[str, np.ndarray]]:
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            total = sum(info.file_size for info in members)
            if total > limit:
                raise FileFormatError(f"{label}: its members hold {total:,} bytes uncompressed, over "
                                      f"the limit of {limit:,} (${MAX_ARRAY_BYTES_ENV} raises it)")
            if not members:
                raise FileFormatError(f"{label}: an empty .npz archive")
            for info in members:
                name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                at = f"{label}, array {name!r}"
                data = archive.read(info)  # at most info.file_size bytes; the CRC is checked
                yield name, _array(io.BytesIO(data), len(data), at, limit)
    except FileFormatError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError, RuntimeError) as error:
        # RuntimeError: an encrypted member; NotImplementedError: a compression zipfile lacks
        raise FileFormatError(f"{label}: not a readable .npz archive ({first_line(error)})") from None


def array_documents(path: Path, label: str) -> Iterator[tuple[str, Any]]:
    """``(id, document)``: a 1-D array is a document, a 2-D array a document per row; integers
    must fit int64, numbers be finite; empty rows are left out."""
    for key, array in read_arrays(path, label):
        at = f"{label}, array {key!r}" if key else label
        base = f"{label}:{key}" if key else label
        rows = [array] if array.ndim == 1 else list(array)
        for i, row in enumerate(rows):
            where = f"{base}:{i}" if array.ndim == 2 else base
            if not len(row):
                continue
            row_at = f"{at}, row {i}" if array.ndim == 2 else at
            yield where, (int_document(row, row_at) if row.dtype.kind in "iu" else float_document(row, row_at))
