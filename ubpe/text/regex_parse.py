"""The pattern language the kernels' regex VM runs, parsed: a recursive-descent parser over the
subset of regex syntax that tokenizer patterns use (alternation, concatenation, quantifiers,
classes with ``\\p{..}``, ``\\s\\d\\w``, anchors, ``(?i:..)``, lookahead, atomic groups), giving
the syntax tree that :mod:`ubpe.text.regex_program` compiles; anything else raises
:class:`Unsupported` (the pattern then runs on the `regex` module).

>>> _Parser(r"a|\\p{L}+").parse()[0]
'alt'
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)

from .._lazy import regex

__all__ = ["Node", "Unsupported", "FLAGS"]

# the assertions of regex_vm.h, as the tree names them
AT_START, AT_END_OR_FINAL_NEWLINE, AT_END, WORD_BOUNDARY, NOT_WORD_BOUNDARY = 0, 1, 2, 3, 4

FLAGS = "is"  # the inline flags the compiler knows (the others change what it would emit)
# escapes that stand for one code point each (the regex module says which)
_CLASS_ESCAPES = set("sSdDwWnrtfva")
_BRACED_ESCAPES = set("pPxN")  # \p{..} \x{..} \N{..}; also \pL and \xhh


@functools.cache
def _quantifier() -> regex.Pattern:
    return regex.compile(r"\{(\d*)(?:(,)(\d*))?\}")


@functools.cache
def _flag_group() -> regex.Pattern:
    return regex.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")


class Unsupported(Exception):
    """A construct the compiler leaves to the `regex` module (the message says which)."""


# The syntax tree: one-code-point atoms are ("class", key) with key (source, ignorecase, dotall)
Node = tuple


class _Parser:
    """Recursive descent over the subset; ``Unsupported`` for anything outside it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.at = 0
        self.uses_word_boundary = False

    def parse(self) -> Node:
        flags = ""
        found = _flag_group().match(self.source)
        if found and found.group(3) == ")":  # global flags: only at the start
            flags = self._flags(found)
            self.at = found.end()
        tree = self._alternation("i" in flags, "s" in flags)
        if self.at != len(self.source):
            raise Unsupported(f"unexpected {self.source[self.at]!r} at {self.at}")
        return tree

    def _flags(self, found: regex.Match) -> str:
        on, off = found.group(1), found.group(2) or ""
        unknown = set(on + off) - set(FLAGS)
        if unknown:
            raise Unsupported(f"the flag {''.join(sorted(unknown))!r} is not supported")
        return on

    def _peek(self) -> str:
        return self.source[self.at] if self.at < len(self.source) else ""

    def _alternation(self, ignorecase: bool, dotall: bool) -> Node:
        branches = [self._sequence(ignorecase, dotall)]
        while self._peek() == "|":
            self.at += 1
            branches.append(self._sequence(ignorecase, dotall))
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def _sequence(self, ignorecase: bool, dotall: bool) -> Node:
        items = []
        while self._peek() not in ("", "|", ")"):
            atom = self._atom(ignorecase, dotall)
            items.append(self._quantified(atom))
        return items[0] if len(items) == 1 else ("seq", items)

    def _quantified(self, atom: Node) -> Node:
        c = self._peek()
        if c in ("?", "*", "+"):
            low, high = {"?": (0, 1), "*": (0, None), "+": (1, None)}[c]
            self.at += 1
        elif c == "{":
            found = _quantifier().match(self.source, self.at)
            if not found or (not found.group(1) and not found.group(2)):
                raise Unsupported(f"a '{{' that is no quantifier at {self.at}")
            low = int(found.group(1) or 0)
            high = (int(found.group(3)) if found.group(3) else None) if found.group(2) else low
            if high is not None and high < low:
                raise Unsupported("a quantifier {m,n} with n < m")
            self.at = found.end()
        else:
            return atom
        mode = "greedy"
        if self._peek() == "?":
            mode, self.at = "lazy", self.at + 1
        elif self._peek() == "+":
            mode, self.at = "possessive", self.at + 1
        if self._peek() in ("?", "*", "+") or _quantifier().match(self.source, self.at):
            raise Unsupported("a quantifier on a quantifier")
        if atom[0] in ("look", "assert"):
            raise Unsupported("a quantifier on a zero-width assertion")
        return ("repeat", atom, low, high, mode)

    def _atom(self, ignorecase: bool, dotall: bool) -> Node:
        source, at = self.source, self.at
        c = source[at]
        if c == "(":
            return self._group(ignorecase, dotall)
        if c == "[":
            end = self._set_end(at)
            self.at = end
            return ("class", (source[at:end], ignorecase, dotall))
        if c in "*+?{":
            raise Unsupported(f"nothing to repeat at {at}")
        self.at = at + 1
        if c == ".":
            return ("class", (".", ignorecase, dotall))
        if c == "^":
            return ("assert", AT_START)
        if c == "$":
            return ("assert", AT_END_OR_FINAL_NEWLINE)
        if c != "\\":
            return ("class", (regex.escape(c), ignorecase, dotall))
        return self._escape(ignorecase, dotall)

    def _escape(self, ignorecase: bool, dotall: bool) -> Node:
        source, start = self.source, self.at - 1
        if self.at >= len(source):
            raise Unsupported("a pattern ending in a backslash")
        e = source[self.at]
        self.at += 1
        if e in ("A", "Z", "b", "B"):
            if e in "bB":
                self.uses_word_boundary = True
            return ("assert", {"A": AT_START, "Z": AT_END, "b": WORD_BOUNDARY, "B": NOT_WORD_BOUNDARY}[e])
        if e in _BRACED_ESCAPES:
            if self._peek() == "{":
                close = source.find("}", self.at)
                if close < 0:
                    raise Unsupported(f"an unclosed \\{e}{{")
                self.at = close + 1
            elif e == "x":
                self.at += 2
            elif e in "pP":
                self.at += 1
            else:
                raise Unsupported(f"\\{e} without braces")
        elif e == "u":
            self.at += 4
        elif e == "U":
            self.at += 8
        elif e.isalnum() and e not in _CLASS_ESCAPES:
            raise Unsupported(f"the escape \\{e} is not supported")
        if self.at > len(source):
            raise Unsupported(f"a truncated escape at {start}")
        return ("class", (source[start:self.at], ignorecase, dotall))

    def _set_end(self, at: int) -> int:
        """Where the set ``[...]`` that opens at ``at`` ends (after its ``]``)."""
        source, i = self.source, at + 1
        if source.startswith("^", i):
            i += 1
        if source.startswith("]", i):  # a first ] is a member
            i += 1
        while i < len(source):
            c = source[i]
            if c == "]":
                return i + 1
            if c == "\\":
                if i + 2 < len(source) and source[i + 1] in _BRACED_ESCAPES and source[i + 2] == "{":
                    close = source.find("}", i)
                    if close < 0:
                        break
                    i = close + 1
                else:
                    i += 2
                continue
            if c == "[":
                if source.startswith("[:", i):
                    close = source.find(":]", i + 2)
                    if close < 0:
                        break
                    i = close + 2
                    continue
                raise Unsupported("a '[' inside a set")
            i += 1
        raise Unsupported(f"an unclosed set at {at}")

    def _group(self, ignorecase: bool, dotall: bool) -> Node:
        source, at = self.source, self.at
        kind = "group"
        if source.startswith("(?", at):
            found = _flag_group().match(source, at)
            if source.startswith("(?:", at):
                self.at = at + 3
            elif source.startswith(("(?=", "(?!"), at):
                kind = "look"
                self.at = at + 3
            elif source.startswith("(?>", at):
                kind = "atomic"
                self.at = at + 3
            elif source.startswith(("(?<=", "(?<!"), at):
                raise Unsupported("lookbehind is not supported")
            elif source.startswith(("(?P<", "(?<"), at):
                close = source.find(">", at)
                if close < 0:
                    raise Unsupported("an unclosed group name")
                self.at = close + 1
            elif found and found.group(3) == ":":
                on = self._flags(found)
                off = found.group(2) or ""
                ignorecase = ("i" in on) or (ignorecase and "i" not in off)
                dotall = ("s" in on) or (dotall and "s" not in off)
                self.at = found.end()
            elif found:
                raise Unsupported("inline flags are supported at the start of the pattern only")
            else:
                raise Unsupported(f"the group {source[at:at + 4]!r}... is not supported")
        else:
            self.at = at + 1
        inner = self._alternation(ignorecase, dotall)
        if self._peek() != ")":
            raise Unsupported(f"an unclosed group at {at}")
        self.at += 1
        if kind == "look":
            return ("look", inner, source[at + 2] == "!")
        if kind == "atomic":
            return ("atomic", inner)
        return inner
