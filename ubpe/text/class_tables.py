r"""The code point class tables that the kernel's scanner and HF's pre-tokenizer programs read,
and that the regex VM compiles a peer's Unicode by: one uint16 per code point, the bits of
:data:`CLASS_BITS` and a fold index for the contraction letters, by the `regex` module's
Unicode or a peer's (:data:`UNICODES`, `ubpe.text.peer_classes`).

A module of their own below both `ubpe.text.patterns` (which re-exports them, their home
before) and `ubpe.text.regex_program` (whose programs for a peer's Unicode read them): the
tables need neither.

>>> int(code_point_classes()[ord("a")] & CLASS_BITS[r"\p{L}"])
1
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import sys
from array import array

from ubpe_native._numpy import np, numpy_types
from ubpe_native._pretokenize import or_classes

from .._lazy import regex
from ..errors import InvalidParameterError
from ..tables_cache import cached_buffers

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

N_CODE_POINTS = 0x110000
SURROGATES = range(0xD800, 0xE000)
# Bits of the code point class table read by the kernel's scanner (see _pretokenize.pyx);
# the last two are o200k's letter classes, which overlap in Lm, Lo and M.
CLASS_BITS = {
    r"\p{L}": 1,
    r"\p{N}": 2,
    r"\s": 4,
    r"[\r\n]": 8,
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]": 16,
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]": 32,
    # the `words` split of ubpe.splitting (WORDS): its letters, digits and word characters
    r"[^\W\d_]": 64,
    r"\d": 128,
    r"\w": 1 << 12,  # above the fold index (bits 8-11)
}
FOLD_SHIFT = 8
CONTRACTION_LETTERS = "sdmtlvre"  # fold index 1..8 in this order


#: Whose Unicode a class table follows: the `regex` module's (what ubpe fits and splits with),
#: or a peer's, read off the peer itself (`ubpe.text.peer_classes`): the models read from a
#: peer's file classify code points as the peer does
UNICODES = ("regex", "tiktoken", "tokenizers", "llama.cpp")


def code_point_classes(unicode: str = "regex") -> np.ndarray:
    """One uint16 per code point for the kernel's scanner, by the Unicode of ``unicode``
    (:data:`UNICODES`): by default computed with the `regex` module, so that the scanner splits
    exactly like ``regex.findall`` with the same pattern; a peer's name gives the peer's
    table (tiktoken's engine, HF tokenizers' Oniguruma, llama.cpp's tables), so that a model
    read from its file splits as it does on every code point.

    Low byte: the bits of :data:`CLASS_BITS` (letter, number, whitespace, CR/LF, o200k's
    "upper" and "lower" letter classes); high byte: which of ``s d m t l v r e`` the code
    point is under case-insensitive matching (``ſ`` is an ``s`` for `regex` and tiktoken).
    Built once per machine (`regex`'s in ~0.3-1 s) and kept in its cache
    (`ubpe.tables_cache`), read from there in milliseconds. A numpy view of
    :func:`code_point_class_buffer`.

    >>> int(code_point_classes()[0x3EE07] & 1), int(code_point_classes("llama.cpp")[0x3EE07] & 1)
    (1, 0)
    """
    return _class_array(checked_unicode(unicode))


def code_point_class_buffer(unicode: str = "regex") -> memoryview:
    """:func:`code_point_classes` as a uint16 ``memoryview``, read from the machine's cache
    (or built) without importing numpy: what a load that runs only the kernel's scanner needs."""
    return _class_buffer(checked_unicode(unicode))


def checked_unicode(unicode: str) -> str:
    """``unicode`` if it names a class table (:data:`UNICODES`), else InvalidParameterError."""
    if unicode not in UNICODES:
        raise InvalidParameterError(f"no code point classes for the Unicode of {unicode!r}: one of {', '.join(UNICODES)}")
    return unicode


@functools.lru_cache(maxsize=None)
def _class_array(unicode: str) -> np.ndarray:
    return np.frombuffer(_class_buffer(unicode), dtype=np.uint16)


@functools.lru_cache(maxsize=None)
def _class_buffer(unicode: str) -> memoryview:
    if unicode == "regex":
        return cached_buffers("classes", "code points", _every_code_point_class_buffer)["classes"]

    def build() -> dict[str, memoryview]:
        from .peer_classes import CHANGES, RUNS  # (when the machine's cache has no entry: ~0.5 ms)

        return {"classes": table_of_runs(RUNS[unicode], CHANGES.get(unicode, ""))}

    return cached_buffers("classes", class_table_key(unicode), build)["classes"]


def class_table_key(unicode: str) -> str:
    """The machine cache's key of a peer's class table (and of the regex VM's programs compiled
    by it): the peer's name. A regenerated table is a new folder of the cache: the folder's key
    hashes ``ubpe/text/peer_classes.py`` (`ubpe.tables_cache`), so that a load whose tables are
    cached does not import the tables' module (~0.5 ms) to hash them."""
    return f"{checked_unicode(unicode)} runs"


def table_of_runs(runs: str, changes: str = "") -> memoryview:
    """The uint16 table of ``runs`` (``"start value;..."``, hexadecimal: from ``start`` on,
    each code point has ``value`` up to the next start), then ``changes`` (``"first last
    value;..."``: each code point of ``first..last`` has ``value``), as
    `ubpe.text.peer_classes` holds the peers' tables.

    >>> table = table_of_runs("0 0;41 1;5B 0", "42 43 3")
    >>> table[0x40], table[0x41], table[0x42], table[0x43], table[0x5A], table[0x5B], len(table)
    (0, 1, 3, 3, 1, 0, 1114112)
    """
    table = array("H", bytes(2 * N_CODE_POINTS))
    entries = [entry.split(" ") for entry in runs.split(";")]
    starts = [int(start, 16) for start, _ in entries] + [N_CODE_POINTS]
    for (_, value), start, end in zip(entries, starts, starts[1:]):
        value = int(value, 16)
        if value:
            table[start:end] = array("H", [value]) * (end - start)
    for entry in changes.split(";") if changes else ():
        first, last, value = (int(field, 16) for field in entry.split(" "))
        table[first:last + 1] = array("H", [value]) * (last + 1 - first)
    return memoryview(table)


def _every_code_point_class_buffer() -> dict[str, memoryview]:
    every = array("I", range(SURROGATES.start))  # every code point but the surrogates, which str cannot hold
    every.extend(range(SURROGATES.stop, N_CODE_POINTS))
    return {"classes": classes_of(every)}


def _every_code_point_classes() -> dict[str, np.ndarray]:
    return {"classes": np.frombuffer(_every_code_point_class_buffer()["classes"], dtype=np.uint16)}


def classes_of(code_points: Any) -> memoryview:
    r"""The table of :func:`code_point_classes` with only the entries of ``code_points`` (no
    surrogates; a uint32 ``array.array``, or any sequence of ints) filled in, the rest 0:
    enough for text made of those characters, and much faster to build for a small alphabet.

    A uint16 ``memoryview`` built without numpy (so that a fit needs none) over anonymous
    memory, whose pages cost no memory until written: a small alphabet's table takes a few KB
    of its 2.2 MB.

    >>> table = classes_of([ord("a"), ord("1")])
    >>> table[ord("a")] & CLASS_BITS[r"\p{L}"], table[ord("b")]
    (1, 0)
    """
    if isinstance(code_points, numpy_types("ndarray")):
        code_points = array("I", code_points.astype(np.uint32).tobytes())
    elif not (isinstance(code_points, array) and code_points.typecode == "I"):
        code_points = array("I", code_points)
    every_char = code_points.tobytes().decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")
    import mmap  # (a table's build: not on a load's path)

    classes = memoryview(mmap.mmap(-1, 2 * N_CODE_POINTS)).cast("H")  # zero pages until written
    for expression, bit in CLASS_BITS.items():
        for run in regex.finditer(f"{expression}+", every_char):
            or_classes(classes, code_points, run.start(), run.end(), bit)
    for index, letter in enumerate(CONTRACTION_LETTERS, start=1):
        for found in regex.finditer(f"(?i:{letter})", every_char):
            classes[code_points[found.start()]] |= index << FOLD_SHIFT
    return classes
