"""Pre-tokenization patterns: the regexes that cut text into pieces before byte-level BPE.

``PATTERNS`` holds tiktoken's and Llama 3's presets character for character; the kernel's
scanner (``ubpe_native._pretokenize``) splits the presets of ``NATIVE_PATTERNS`` itself, with
the code point classes computed here so that it agrees with ``regex.findall`` exactly, or with a
peer's own (:data:`UNICODES`, `ubpe.text.peer_classes`) for a model read from the peer's file.
Any other pattern is compiled for the kernel's regex VM (:mod:`~ubpe.text.regex_program`);
:func:`native_pattern_id` says which id the kernels split a pattern by.

>>> resolve_pattern("gpt2") == PATTERNS["gpt2"]
True
"""

from __future__ import annotations

import functools
import re
import sys
from array import array

from ubpe_native._numpy import np, numpy_types
from ubpe_native._pretokenize import or_classes

from .._lazy import regex
from ..errors import InvalidParameterError, SymbolTypeError
from ..tables_cache import cached_buffers, hasher
from .presets import DEFAULT_PATTERN, PATTERNS  # noqa: F401  (re-exported: the presets' home before presets.py)
from .regex_program import compile_pattern

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any


# Presets split by the kernel's scanner instead of the regex engine (ids of _pretokenize.pxd).
NATIVE_PATTERNS: dict[str, int] = {
    PATTERNS["gpt2"]: 1,
    PATTERNS["cl100k"]: 2,
    PATTERNS["llama3"]: 3,
    PATTERNS["o200k"]: 4,
}
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

# UTF-8 length of a code point: one byte below 0x80, two below 0x800, three below 0x10000
UTF8_WIDTH_STEPS = (0x80, 0x800, 0x10000)


class CompiledPatternId(int):
    """The id of a pattern compiled for the kernel's regex VM. Ids are handed out per process,
    so it pickles (and copies) as its pattern, compiled again where it is loaded: a model or
    a split pipeline sent to another process (Dask's workers) splits by the same pattern there.

    >>> import pickle
    >>> found = native_pattern_id(r"\\S+|\\s+")
    >>> pickle.loads(pickle.dumps(found)) == found, found.pattern
    (True, '\\\\S+|\\\\s+')
    """

    pattern: str

    def __new__(cls, value: int, pattern: str) -> CompiledPatternId:
        found = super().__new__(cls, value)
        found.pattern = pattern
        return found

    def __reduce__(self) -> tuple:
        return native_pattern_id, (self.pattern,)


def native_pattern_id(pattern: str) -> int | None:
    r"""The id by which the kernels split text with ``pattern`` (a pat_str): a preset's
    scanner, else the pattern compiled for the kernel's regex VM when its pieces tile any
    text; None when the `regex` module splits it (``compile_pattern(pattern).reason`` says
    why, or the pattern can leave text unmatched: then ``ubpe.text.scanner.pretokenize``
    still finds its pieces natively).

    >>> native_pattern_id(PATTERNS["gpt2"]), native_pattern_id(r"\S+|\s+") >= 64, native_pattern_id(r"\w+")
    (1, True, None)
    """
    preset = NATIVE_PATTERNS.get(pattern)
    if preset is not None:
        return preset
    compiled = compile_pattern(pattern)
    return CompiledPatternId(compiled.pattern_id, pattern) if compiled.total else None


# a bare name such as "gpt5" or "cl100k_base": taken for a preset name, never for a regex
_PRESET_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")  # (ASCII: re, loaded already)


#: The longest split pattern a file may give: published ones are under 200 characters, and the
#: regex module compiles about 50,000 characters a second (a 1 MiB pattern took 22 s)
MAX_PATTERN_CHARS = 16_384


def compile_regex(pattern: str, what: str, error: type[Exception] = InvalidParameterError) -> regex.Pattern:
    """``regex.compile(pattern)``, or ``error`` naming ``what`` if it does not compile, nests
    groups past the parser's recursion limit or is longer than :data:`MAX_PATTERN_CHARS`.

    >>> compile_regex("(" * 5000 + ")" * 5000, "the split pattern")
    Traceback (most recent call last):
    ...
    ubpe.errors.InvalidParameterError: the split pattern nests groups too deep to compile
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise error(f"{what} is {len(pattern):,} characters long (at most {MAX_PATTERN_CHARS:,})")
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise error(f"{what} is not a valid regex: {exc}") from None
    except RecursionError:  # the regex module's parser recurses once per group
        raise error(f"{what} nests groups too deep to compile") from None


def resolve_pattern(pattern: str) -> str:
    """The pat_str of a preset name, or ``pattern`` itself (checked to compile)."""
    if not isinstance(pattern, str):
        raise SymbolTypeError(f"`pattern` must be a str, not {type(pattern).__name__}")
    if pattern in PATTERNS:
        return PATTERNS[pattern]
    if _PRESET_LIKE.fullmatch(pattern):  # a misspelt preset, not a regex meant to match that word
        raise InvalidParameterError(
            f"`pattern` {pattern!r} is not a preset ({', '.join(sorted(PATTERNS))}); a regex that "
            "only matches one literal word cannot pre-tokenize text"
        )
    compiled = compile_regex(pattern, "`pattern`")
    if compiled.flags & regex.REVERSE:  # findall would return the pieces last to first
        raise InvalidParameterError("`pattern` must not match in reverse ((?r)): pieces must come in text order")
    return pattern


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
    from .peer_classes import CHANGES, RUNS  # (a peer's load only: its runs compile in ~0.5 ms)

    runs, changes = RUNS[unicode], CHANGES.get(unicode, "")
    # keyed by the runs themselves: a regenerated table is a new entry
    key = f"{unicode} runs {hasher(f'{runs}|{changes}'.encode('ascii'), 16).hexdigest()}"
    return cached_buffers("classes", key, lambda: {"classes": table_of_runs(runs, changes)})["classes"]


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


def without_surrogates(text: str) -> str:
    """What tiktoken encodes when ``text`` is not valid UTF-8: lone surrogates become U+FFFD
    (and a surrogate *pair* the character it stands for)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
