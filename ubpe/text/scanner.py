"""Pre-tokenization of text for byte-level models: UTF-8 bytes and the byte bounds of the
pattern's pieces.

The presets of ``NATIVE_PATTERNS`` (gpt2, cl100k, llama3, o200k) are split by the kernel's
scanner (``ubpe_native._pretokenize``), other patterns by the kernel's regex VM
(:mod:`~ubpe.text.regex_program`); both agree with ``regex.findall`` exactly. A pattern the
VM does not take (``compile_pattern(pattern).reason``) is split by the ``regex`` engine into
the same pieces: whole matches (``finditer``'s ``group(0)``; ``findall`` would give the groups
of a pattern that has any). A pattern that leaves characters unmatched drops them, as tiktoken
does.

>>> from ubpe.text.patterns import PATTERNS
>>> symbols, bounds = pretokenize("hi there", PATTERNS["gpt2"])
>>> bytes(symbols.tolist()), bounds.tolist()
(b'hi there', [0, 2, 8])
>>> pretokenize("hé!", r"\\w+")[1].tolist()                    # "!" is dropped
[0, 3]
"""

from __future__ import annotations

from ubpe_native._numpy import np

from ubpe_native._pretokenize import find_pieces, split_text
from ubpe_native._numpy import ID_DTYPE

from .._lazy import regex
from ..errors import RegexBudgetError
from .patterns import UTF8_WIDTH_STEPS, code_point_classes, native_pattern_id
from .regex_program import compile_pattern

__all__ = ["native_bounds", "pretokenize", "whole_matches"]

#: The `regex` module's path runs on a time budget (``finditer``'s ``timeout``): this much, plus
#: :data:`REGEX_SECONDS_PER_CHAR` per character of the text. The module splits tokenizer patterns
#: at 1-50 MB/s, so only a pattern that backtracks catastrophically on this text (``(a*)*b``,
#: which the VM leaves to it) runs past; the VM's own budget counts steps instead (regex_vm.h).
REGEX_SECONDS = 2.0
REGEX_SECONDS_PER_CHAR = 1e-5


def whole_matches(pattern: str | regex.Pattern, text: str) -> list[str]:
    r"""The non-empty matches of ``pattern`` in ``text``, whole and in order, as the kernel's VM
    finds them (an empty match holds no text, so no piece): ``regex.findall`` would return a
    pattern's capture groups instead (``[("a", "")]`` below).

    >>> whole_matches(r"(?<=x)(a)b|c|\s+|x", "xab c"), regex.findall(r"(a)b|(c)", "ab")
    (['x', 'ab', ' ', 'c'], [('a', '')])
    """
    compiled = regex.compile(pattern) if isinstance(pattern, str) else pattern
    budget = REGEX_SECONDS + REGEX_SECONDS_PER_CHAR * len(text)
    try:
        return [found.group() for found in compiled.finditer(text, timeout=budget) if found.end() > found.start()]
    except TimeoutError:
        raise RegexBudgetError(
            f"the split pattern {compiled.pattern!r} took more than {budget:.1f} s in the regex module on a text of "
            f"{len(text):,} characters (catastrophic backtracking: nested repeats such as (a*)*b try exponentially "
            "many ways to match); rewrite it so that each character can be matched in fewer ways") from None


def native_bounds(data: bytes, pattern: str, unicode: str = "regex") -> np.ndarray | None:
    """Byte offsets of the pieces of UTF-8 ``data`` by the kernel's scanner, or ``None`` when
    the kernel cannot take ``pattern`` as a tiling of the text (see ``native_pattern_id``);
    code points are classified by the Unicode of ``unicode``
    (`ubpe.text.patterns.code_point_classes`, `ubpe.text.regex_program`).

    >>> from ubpe.text.patterns import PATTERNS
    >>> native_bounds("hi there".encode(), PATTERNS["cl100k"]).tolist(), native_bounds(b"x", "x+")
    ([0, 2, 8], None)
    """
    native = native_pattern_id(pattern, unicode)
    if native is None:
        return None
    return split_text(np.frombuffer(data, dtype=np.uint8), code_point_classes(unicode), native)


def pretokenize(text: str, pattern: str, unicode: str = "regex") -> tuple[np.ndarray, np.ndarray]:
    """``(symbols, bounds)``: the UTF-8 bytes of ``text``'s pieces under ``pattern`` (a
    pat_str) as ids, piece ``k`` at ``bounds[k]:bounds[k+1]``; code points are classified by
    the Unicode of ``unicode`` (`ubpe.text.patterns.UNICODES`), except by a pattern the regex
    VM does not take, which the `regex` module splits with its own.
    Raises ``UnicodeEncodeError`` on lone surrogates (callers replace them first, see
    ``without_surrogates``)."""
    data = text.encode("utf-8")
    bounds = native_bounds(data, pattern, unicode)
    if bounds is not None:
        return np.frombuffer(data, dtype=np.uint8).astype(ID_DTYPE), bounds
    compiled = compile_pattern(pattern, unicode)
    if compiled.pattern_id is not None:  # the kernel's VM; characters between pieces are dropped
        raw = np.frombuffer(data, dtype=np.uint8)
        starts, ends = find_pieces(raw, compiled.pattern_id)
        bounds = np.zeros(len(starts) + 1, dtype=np.int64)
        np.cumsum(ends - starts, out=bounds[1:])
        if bounds[-1] != len(data):
            keep = np.repeat(ends - bounds[1:], ends - starts) + np.arange(bounds[-1])
            raw = raw[keep]
        return raw.astype(ID_DTYPE), bounds
    pieces = whole_matches(pattern, text)
    char_lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    bounds = np.zeros(len(pieces) + 1, dtype=np.int64)
    if int(char_lengths.sum()) == len(text):
        np.cumsum(char_lengths, out=bounds[1:])
        if len(data) != len(text):  # not ASCII: character offsets -> byte offsets
            code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
            widths = 1 + np.searchsorted(UTF8_WIDTH_STEPS, code_points, side="right")
            byte_offsets = np.zeros(len(text) + 1, dtype=np.int64)
            np.cumsum(widths, out=byte_offsets[1:])
            bounds = byte_offsets[bounds]
    else:
        encoded = [piece.encode("utf-8") for piece in pieces]
        data = b"".join(encoded)
        np.cumsum([len(e) for e in encoded], out=bounds[1:])
    return np.frombuffer(data, dtype=np.uint8).astype(ID_DTYPE), bounds
