"""A griffe extension: the package's docstrings are reStructuredText-flavoured prose; this turns
the few constructs they use into Markdown before mkdocstrings renders them.

* roles (``:class:`~ubpe.UBPE```, ``:func:`load```, ``:pep:`562```) -> code spans;
* ``.. code-block:: toml`` and a paragraph ending in ``::`` -> a fenced block of what is
  indented below it;
* doctest lines (``>>>``, ``...`` and their output) -> a fenced ``pycon`` block.
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj|const|ref|doc):`~?([^`]+)`")
PEP = re.compile(r":pep:`(\d+)`")
DIRECTIVE = re.compile(r"^(\s*)\.\. code-block::\s*(\w*)\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _fence_indented(lines: list[str], start: int, language: str, base: int) -> tuple[list[str], int]:
    """The block indented deeper than ``base`` from ``start`` on, fenced; and where it ends."""
    body, index = [], start
    while index < len(lines) and not lines[index].strip():
        index += 1
    while index < len(lines) and (not lines[index].strip() or _indent(lines[index]) > base):
        body.append(lines[index])
        index += 1
    while body and not body[-1].strip():
        body.pop()
        index -= 1
    depth = min((_indent(line) for line in body if line.strip()), default=0)
    fenced = [" " * base + f"```{language}", *(" " * base + line[depth:] for line in body), " " * base + "```"]
    return fenced, index


def to_markdown(text: str) -> str:
    lines = PEP.sub(r"PEP \1", ROLE.sub(r"`\1`", text)).splitlines()
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        directive = DIRECTIVE.match(line)
        if directive:
            fenced, index = _fence_indented(lines, index + 1, directive.group(2) or "text", _indent(line))
            out += ["", *fenced, ""]
            continue
        if line.rstrip().endswith("::") and not line.strip().startswith(">>>"):
            out.append(line.rstrip()[:-1])
            nxt = index + 1
            while nxt < len(lines) and not lines[nxt].strip():
                nxt += 1
            if nxt < len(lines) and _indent(lines[nxt]) > _indent(line):
                fenced, index = _fence_indented(lines, nxt, "text", _indent(line))
                out += ["", *fenced, ""]
                continue
            index += 1
            continue
        if line.lstrip().startswith(">>>"):
            base = _indent(line)
            block = []
            while index < len(lines) and lines[index].strip() and _indent(lines[index]) >= base:
                block.append(lines[index][base:])
                index += 1
            # at the margin: indented, the fence would read as part of an indented code block above
            out += ["", "```pycon", *block, "```", ""]
            continue
        out.append(line)
        index += 1
    return "\n".join(out)


class Markup(griffe.Extension):
    """Rewrites every docstring once, when griffe has read it."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
