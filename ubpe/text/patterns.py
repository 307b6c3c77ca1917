"""Pre-tokenization patterns: the regexes that cut text into pieces before byte-level BPE.

``PATTERNS`` holds tiktoken's and Llama 3's presets character for character; the kernel's
scanner (``ubpe_native._pretokenize``) splits the presets of ``NATIVE_PATTERNS`` itself, with
the code point classes of `ubpe.text.class_tables` (re-exported here), so that it agrees with
``regex.findall`` exactly, or with a peer's own (:data:`UNICODES`, `ubpe.text.peer_classes`)
for a model read from the peer's file.
Any other pattern is compiled for the kernel's regex VM (:mod:`~ubpe.text.regex_program`);
:func:`native_pattern_id` says which id the kernels split a pattern by.

>>> resolve_pattern("gpt2") == PATTERNS["gpt2"]
True
"""

from __future__ import annotations

from .._lazy import regex
from ..errors import InvalidParameterError, SymbolTypeError
from .class_tables import (CLASS_BITS, CONTRACTION_LETTERS, FOLD_SHIFT, N_CODE_POINTS, SURROGATES,  # noqa: F401
                           UNICODES, checked_unicode, class_table_key, classes_of, code_point_class_buffer,
                           code_point_classes, table_of_runs)  # (re-exported: their home before class_tables.py)
from .presets import DEFAULT_PATTERN, PATTERNS  # noqa: F401  (re-exported: the presets' home before presets.py)
from .regex_program import compile_pattern


# Presets split by the kernel's scanner instead of the regex engine (ids of _pretokenize.pxd).
NATIVE_PATTERNS: dict[str, int] = {
    PATTERNS["gpt2"]: 1,
    PATTERNS["cl100k"]: 2,
    PATTERNS["llama3"]: 3,
    PATTERNS["o200k"]: 4,
}
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
    unicode: str

    def __new__(cls, value: int, pattern: str, unicode: str = "regex") -> CompiledPatternId:
        found = super().__new__(cls, value)
        found.pattern = pattern
        found.unicode = unicode
        return found

    def __reduce__(self) -> tuple:
        return native_pattern_id, (self.pattern, self.unicode)


def native_pattern_id(pattern: str, unicode: str = "regex") -> int | None:
    r"""The id by which the kernels split text with ``pattern`` (a pat_str): a preset's
    scanner, else the pattern compiled for the kernel's regex VM when its pieces tile any
    text (its classes by the Unicode of ``unicode``, :data:`UNICODES`: a preset's scanner takes
    the class table as an argument instead); None when the `regex` module splits it
    (``compile_pattern(pattern).reason`` says why, or the pattern can leave text unmatched:
    then ``ubpe.text.scanner.pretokenize`` still finds its pieces natively).

    >>> native_pattern_id(PATTERNS["gpt2"]), native_pattern_id(r"\S+|\s+") >= 64, native_pattern_id(r"\w+")
    (1, True, None)
    """
    preset = NATIVE_PATTERNS.get(pattern)
    if preset is not None:
        return preset
    compiled = compile_pattern(pattern, checked_unicode(unicode))
    return CompiledPatternId(compiled.pattern_id, pattern, unicode) if compiled.total else None


# a bare name such as "gpt5" or "cl100k_base": taken for a preset name, never for a regex
_PRESET_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_PRESET_REST = _PRESET_FIRST | frozenset("0123456789_.-")


def _preset_like(name: str) -> bool:
    """Whether ``name`` reads as a preset's name: ``[A-Za-z][A-Za-z0-9_.-]*`` (ASCII).

    >>> _preset_like("gpt4o"), _preset_like("o200k_base.v2"), _preset_like("4o"), _preset_like("a b")
    (True, True, False, False)
    """
    return name[:1] in _PRESET_FIRST and all(c in _PRESET_REST for c in name)


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
    if _preset_like(pattern):  # a misspelt preset, not a regex meant to match that word
        raise InvalidParameterError(
            f"`pattern` {pattern!r} is not a preset ({', '.join(sorted(PATTERNS))}); a regex that "
            "only matches one literal word cannot pre-tokenize text"
        )
    compiled = compile_regex(pattern, "`pattern`")
    if compiled.flags & regex.REVERSE:  # findall would return the pieces last to first
        raise InvalidParameterError("`pattern` must not match in reverse ((?r)): pieces must come in text order")
    return pattern


def without_surrogates(text: str) -> str:
    """What tiktoken encodes when ``text`` is not valid UTF-8: lone surrogates become U+FFFD
    (and a surrogate *pair* the character it stands for)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
