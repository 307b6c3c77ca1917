"""Split patterns between `regex` and Oniguruma (HF ``tokenizers``' regex engine): the one
place their syntax means different things in tokenizer patterns is an interval followed by
``+`` (``X{1,3}+``), possessive in `regex` and the interval repeated in Oniguruma. The reader of
tokenizer.json files (`ubpe.io.hf_import`) takes Oniguruma's meaning with :func:`onig_regex`;
the writer (`ubpe.io.write.hf`) writes `regex`'s with :func:`as_onig_regex`."""

from __future__ import annotations

import re

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

# (re, which the interpreter has loaded: reading a file's pattern imports no regex module)
_INTERVAL = re.compile(r"\{\d+(?:,\d*)?\}")
_ESCAPE = re.compile(r"\\[pP]\{[^}]*\}|\\x\{[0-9a-fA-F]+\}|\\.", re.S)


def onig_regex(pattern: str) -> str:
    r"""``pattern`` as Oniguruma (HF's regex engine) reads it, in `regex`'s syntax: an interval
    followed by ``+`` (``X{1,3}+``) repeats the interval greedily there, where `regex` reads a
    possessive interval; it becomes ``(?:X{1,3})+``. (``?+``, ``*+``, ``++`` are possessive
    in both.)

    >>> print(onig_regex(r"\p{N}{1,3}+|[a-z]{2}+x|(ab){1}+|\{1}+|a{2}"))
    (?:\p{N}{1,3})+|(?:[a-z]{2})+x|(?:(ab){1})+|\{1}+|a{2}
    """
    return _rewrite_plus_intervals(pattern, lambda atom, interval: f"(?:{atom}{interval})+")


def as_onig_regex(pattern: str) -> str:
    r"""`regex`'s ``pattern`` written for Oniguruma (a tokenizer.json's ``Split``): a possessive
    interval (``X{1,3}+``, which Oniguruma would repeat) becomes the atomic group that means the
    same in both, ``(?>X{1,3})``; :func:`onig_regex` reads it back unchanged.

    >>> print(as_onig_regex(r"\p{N}{1,3}+|[a-z]{2}+x|(ab){1}+|\{1}+|a{2}|b++"))
    (?>\p{N}{1,3})|(?>[a-z]{2})x|(?>(ab){1})|\{1}+|a{2}|b++
    >>> onig_regex(as_onig_regex(r"\p{N}{1,3}+")) == as_onig_regex(r"\p{N}{1,3}+")
    True
    """
    return _rewrite_plus_intervals(pattern, lambda atom, interval: f"(?>{atom}{interval})")


def _rewrite_plus_intervals(pattern: str, wrap: Any) -> str:
    """``pattern`` with every atom followed by an interval and ``+`` (``X{1,3}+``) replaced by
    ``wrap(atom, interval)``; everything else as it was."""
    out: list[str] = []
    opened: list[int] = []  # positions in `out` of the open groups
    atom = -1  # position in `out` of the last atom
    i = 0
    while i < len(pattern):
        c = pattern[i]
        interval = _INTERVAL.match(pattern, i) if c == "{" else None
        if interval and atom >= 0 and interval.end() < len(pattern) and pattern[interval.end()] == "+":
            out[atom:] = [wrap("".join(out[atom:]), interval.group())]
            i = interval.end() + 1
            continue
        start = i
        if c == "\\":
            found = _ESCAPE.match(pattern, i)
            i = found.end() if found else i + 1
        elif c == "[":
            i = _class_end(pattern, i)
        elif c == "(":
            opened.append(len(out))
            out.append(c)
            i += 1
            continue
        elif c == ")" and opened:
            atom = opened.pop()
            out.append(c)
            i += 1
            continue
        else:
            i += 1
        if c in "*+?{|" and not (c == "{" and interval is None):
            out.append(pattern[start:i])
            if c == "|":
                atom = -1
            continue
        atom = len(out)
        out.append(pattern[start:i])
    return "".join(out)


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class opening at ``pattern[i]`` (nested classes too)."""
    depth = 0
    j = i
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            depth += 1
            j += 1
            if pattern.startswith("^", j):
                j += 1
            if pattern.startswith("]", j):
                j += 1
            continue
        if c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(pattern)
