"""CLIP's text steps (OpenAI CLIP's and open_clip's ``SimpleTokenizer``): the cleaning in front
of the model and the regex that cuts the cleaned text into words.

:func:`clean` is open_clip's default ``clean="lower"``: ``ftfy.fix_text`` (mojibake, odd
quotes), HTML entities unescaped twice, whitespace runs made one space, ends stripped, lower
case. :func:`word_regex` is CLIP's pattern with the special tokens as its first alternatives
(so a special token spelled in the text is that token), compiled case-insensitively as CLIP
compiles it.

``ftfy`` is an optional dependency (``pip install 'ubpe[clip]'``): it is imported when a CLIP
text is first cleaned.

>>> clean("  Hello&amp;amp;   WORLD\\n")
'hello& world'
>>> word_regex(("<start_of_text>",)).findall("it's <start_of_text>a2!?")
['it', "'s", '<start_of_text>', 'a', '2', '!?']
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from collections.abc import Sequence

from .._lazy import regex
from ..errors import InvalidParameterError

#: CLIP's words after its special tokens: English contractions, letter runs, one digit, runs of
#: anything else but whitespace
WORD_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
FTFY_HINT = "CLIP's text cleaning needs the `ftfy` package: pip install 'ubpe[clip]'"


@functools.cache
def _fix_text():
    try:
        import ftfy
    except ImportError:
        raise InvalidParameterError(FTFY_HINT) from None
    return ftfy.fix_text


def require_ftfy() -> None:
    """Raise :class:`InvalidParameterError` naming the extra to install if ``ftfy`` is missing."""
    _fix_text()


def clean(text: str) -> str:
    """open_clip's ``_clean_lower``: ``ftfy.fix_text``, HTML unescaped twice, stripped, every
    whitespace run one space, lower case."""
    from html import unescape  # (here: ftfy's call costs far more; a load of another model imports neither)

    text = unescape(unescape(_fix_text()(text))).strip()
    return " ".join(text.split()).lower()


@functools.lru_cache(maxsize=8)
def word_regex(special_tokens: Sequence[str]) -> regex.Pattern:
    """CLIP's word regex with ``special_tokens`` first, as ``SimpleTokenizer`` builds it (the
    tokens joined unescaped, as CLIP does: its own tokens hold no regex syntax)."""
    return regex.compile("|".join(special_tokens) + "|" + WORD_PATTERN, regex.IGNORECASE)
