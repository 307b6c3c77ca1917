"""Where the token boundaries fall: terminal and HTML views of an encoding.

Every token is shown as the symbols it stands for. Text tokens are shown as text: in a
terminal with cycling background colours, or, without colour, with ``|`` between tokens.
Tokens of other symbols (integers, tuples...) are shown as bracketed groups ``[3 17 4]``;
byte-level tokens that end inside a UTF-8 character show the stray bytes as ``\\xNN``.

>>> render(["the", " cat", " sat"], color=False)
'the| cat| sat'
>>> render([[3, 17], [4]], color=False)
'[3 17][4]'

Several encodings of one document (``top_n > 1``) are aligned one under another, so the
same symbol sits in the same column on every line; a ``|`` marks where that line's tokens
meet and ``·`` fills in where another line has a boundary:

>>> print(render_alternatives([(["ab", "c"], 2.5), (["a", "bc"], 1.25)], color=False))
#1  2.5000  a·b|c
#2  1.2500  a|b·c

:func:`render_html` writes the same views as a self-contained HTML page (tokens as
``<span title="id ...">``); :func:`show` encodes and renders in one call; :func:`segment`
encodes into a :class:`Segmentation`, which prints as :func:`show` does and displays itself in
a Jupyter notebook (``_repr_html_``: coloured tokens, each one's id on hover).
"""

from __future__ import annotations

import html
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

# 256-colour backgrounds, light enough for black text, adjacent ones clearly different.
PALETTE_ANSI = (153, 222, 157, 217, 183, 223, 159, 194)
PALETTE_HTML = ("#afd7ff", "#ffd787", "#afffaf", "#ffafaf", "#d7afff", "#ffd7af", "#afffff", "#d7ffd7")
ANSI_RESET = "\x1b[0m"
ANSI_DARK_TEXT = "\x1b[38;5;16m"
SEPARATOR = "|"
FILLER = "·"  # inside a token, where another alternative has a boundary
NO_SCORE = "-"  # the score of an encoding by a model without weights
# How control characters are drawn, so that one token never spans lines unexpectedly.
VISIBLE = {"\n": "↵", "\r": "␍", "\t": "→", "\x00": "␀"}


def use_color(stream: TextIO | None = None, *, force: bool | None = None) -> bool:
    """Whether to colour output for ``stream``: a TTY, and ``NO_COLOR`` unset (or ``force``)."""
    if force is not None:
        return force
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream if stream is not None else sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


# -- pieces -> display units -------------------------------------------------------------


def _units(piece: Any) -> list[str]:
    """One display string per symbol of ``piece`` (characters, bytes or other symbols).

    >>> _units("a\\tb"), _units(b"\\xc3\\xa9\\xe4"), _units([3, 17])
    (['a', '→', 'b'], ['é', '\\\\xe4'], ['3', '17'])
    """
    if isinstance(piece, str):
        return [VISIBLE.get(c, c) if c.isprintable() or c in VISIBLE else f"\\x{ord(c):02x}" for c in piece]
    if isinstance(piece, (bytes, bytearray)):
        return _byte_units(bytes(piece))
    return [str(symbol) for symbol in piece]


def _byte_units(data: bytes) -> list[str]:
    """Whole UTF-8 characters as text, stray bytes as ``\\xNN``."""
    units: list[str] = []
    i = 0
    while i < len(data):
        for width in (1, 2, 3, 4):
            try:
                char = data[i : i + width].decode("utf-8")
            except UnicodeDecodeError:
                continue
            units.extend(_units(char))
            i += width
            break
        else:
            units.append(f"\\x{data[i]:02x}")
            i += 1
    return units


def _is_text(pieces: Sequence[Any]) -> bool:
    return all(isinstance(p, (str, bytes, bytearray)) for p in pieces)


# -- terminal ----------------------------------------------------------------------------


def _paint(text: str, index: int) -> str:
    return f"\x1b[48;5;{PALETTE_ANSI[index % len(PALETTE_ANSI)]}m{ANSI_DARK_TEXT}{text}{ANSI_RESET}"


def render(pieces: Sequence[Any], *, color: bool = False) -> str:
    """One encoding as a single string: text tokens coloured (or ``|``-separated), other
    symbols as ``[a b]`` groups. Line breaks inside text are drawn as ``↵``.

    >>> render(["a\\nb", "c"], color=True) == _paint("a↵b", 0) + _paint("c", 1)
    True
    """
    if not _is_text(pieces):
        return "".join("[" + " ".join(_units(p)) + "]" for p in pieces)
    shown = ["".join(_units(p)) for p in pieces]
    if color:
        return "".join(_paint(text, i) for i, text in enumerate(shown))
    return SEPARATOR.join(shown)


def score_text(score: float | None) -> str:
    """A score as the views write it: four decimals, or ``-`` for none (a model without
    weights, see :meth:`ubpe.models.base.Tokenizer.score_kind`).

    >>> score_text(-12.5), score_text(None)
    ('-12.5000', '-')
    """
    return NO_SCORE if score is None else f"{score:.4f}"


def render_alternatives(encodings: Sequence[tuple[Sequence[Any], float | None]], *, color: bool = False) -> str:
    """Several encodings of one document, one per line with rank and score, aligned.

    Symbols line up when every encoding spells the same symbols (always, for one document);
    otherwise each line is rendered on its own. A score of ``None`` is written ``-``.

    >>> print(render_alternatives([([[1, 2], [3]], 0.5), ([[1], [2, 3]], None)], color=False))
    #1  0.5000  [1  2][3]
    #2       -  [1][2  3]
    """
    rows = [[_units(p) for p in pieces] for pieces, _ in encodings]
    text = all(_is_text(pieces) for pieces, _ in encodings)
    flat = [[u for token in row for u in token] for row in rows]
    aligned = all(f == flat[0] for f in flat)
    # boundaries: positions between units where some row starts a token
    cuts: list[set[int]] = []
    for row in rows:
        ends, position = set(), 0
        for token in row[:-1]:
            position += len(token)
            ends.add(position)
        cuts.append(ends)
    union = set().union(*cuts) if aligned and cuts else set()
    width = max((len(score_text(score)) for _, score in encodings), default=0)
    lines = []
    for rank, ((pieces, score), row, ends) in enumerate(zip(encodings, rows, cuts), start=1):
        body = _aligned_row(row, ends, union, text, color) if aligned else render(pieces, color=color)
        lines.append(f"#{rank}  {score_text(score):>{width}}  {body}")
    return "\n".join(lines)


def _aligned_row(row: list[list[str]], ends: set[int], union: set[int], text: bool, color: bool) -> str:
    """One encoding with a cell at every boundary of any encoding (``union``)."""
    out: list[str] = []
    position = 0
    for index, token in enumerate(row):
        cells: list[str] = []
        for k, unit in enumerate(token):
            if k:  # between two units of this token
                inner = position + k in union
                if text:
                    cells.append((" " if color else FILLER) if inner else "")
                else:
                    cells.append("  " if inner else " ")
            cells.append(unit)
        position += len(token)
        body = "".join(cells)
        if text:
            out.append(_paint(body, index) if color else body)
            if index < len(row) - 1:
                out.append(" " if color else SEPARATOR)
        else:
            out.append(body)
            if index < len(row) - 1:
                out.append("][")
    return "".join(out) if text else "[" + "".join(out) + "]"


# -- HTML --------------------------------------------------------------------------------

HTML_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.2em; }
.doc { margin: 1.5em 0; }
.enc { font-family: ui-monospace, monospace; white-space: pre-wrap; line-height: 1.9; }
.enc span { border-radius: 3px; padding: 1px 0; }
.score { color: #666; font-family: ui-monospace, monospace; padding-right: 1em; white-space: nowrap; }
.meta { color: #666; }
table { border-collapse: collapse; }
td { vertical-align: top; padding: 2px 4px; }
"""


def _html_encoding(pieces: Sequence[Any], ids: Sequence[int]) -> str:
    spans = []
    text = _is_text(pieces)
    for index, (piece, token) in enumerate(zip(pieces, ids)):
        shown = "".join(_units(piece)) if text else "[" + " ".join(_units(piece)) + "]"
        colour = PALETTE_HTML[index % len(PALETTE_HTML)]
        spans.append(
            f'<span style="background:{colour}" title="id {int(token)}">{html.escape(shown)}</span>'
        )
    return "".join(spans)


def render_html(
    documents: Sequence[Sequence[tuple[Sequence[Any], Sequence[int], float | None]]],
    *,
    title: str = "ubpe tokenization",
    caption: str = "",
) -> str:
    """A self-contained HTML page: for every document, its encodings ``(pieces, ids, score)``
    one per row, best first; hovering a token shows its id. Everything is escaped.

    >>> page = render_html([[(["<a>", "&"], [5, 6], 1.0)]])
    >>> '<span style="background:#afd7ff" title="id 5">&lt;a&gt;</span>' in page
    True
    """
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{HTML_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if caption:
        parts.append(f'<p class="meta">{html.escape(caption)}</p>')
    for number, encodings in enumerate(documents, start=1):
        n_tokens = len(encodings[0][1]) if encodings else 0
        parts.append(f'<div class="doc"><p class="meta">document {number}: {n_tokens} tokens</p><table>')
        for rank, (pieces, ids, score) in enumerate(encodings, start=1):
            parts.append(
                f'<tr><td class="score">#{rank} {score_text(score)} ({len(ids)})</td>'
                f'<td class="enc">{_html_encoding(pieces, ids)}</td></tr>'
            )
        parts.append("</table></div>")
    parts.append("</body></html>")
    return "\n".join(parts)


# -- tokenizers -> pieces ----------------------------------------------------------------


def token_pieces(tokenizer: Any, tokens: Sequence[int]) -> list[Any]:
    """What each token stands for: str (text models), bytes (byte-level), or a list
    (``tokenizer.pieces(tokens)``, the :class:`~ubpe.models.ubpe.Tokenizer` contract).

    >>> from ubpe import UBPE
    >>> tok = UBPE(alphabet="ab", n_tokens=4)
    >>> tok.fit(["abab", "abba"], quiet=True)
    >>> token_pieces(tok, [3, 1])
    ['abab', 'b']
    """
    return tokenizer.pieces(tokens)


def show(
    tokenizer: Any,
    doc: Any,
    *,
    top_n: int = 1,
    encoder: str | None = None,
    color: bool | None = None,
    **options: Any,
) -> str:
    """Encode ``doc`` and render it (see :func:`render`, :func:`render_alternatives`).

    >>> from ubpe import UBPE
    >>> tok = UBPE(alphabet="abc ", n_tokens=9, break_tokens=" ")
    >>> tok.fit(["abcab abc", "ab cab", "abca bca"], quiet=True)
    >>> show(tok, "abcab cab", color=False)
    'abcab| |cab'
    >>> print(show(tok, "abcabc", top_n=3, color=False))
    #1  0.6931  a·bca·b|c
    #2  0.6931  a·bca|b|c
    #3  0.6931  a|bca|b|c
    """
    color = use_color(force=color)
    encodings = tokenizer.encode_with(doc, encoder, top_n, **options)
    if top_n == 1:
        return render(tokenizer.pieces(encodings[0][0]), color=color)
    return render_alternatives([(tokenizer.pieces(tokens), score) for tokens, score in tokenizer.scored(encodings)],
                               color=color)


@dataclass(frozen=True)
class Segmentation:
    """A document's encodings with what each token stands for, best first: ``encodings`` holds
    ``(pieces, ids, score)`` per encoding (``score`` None for a model without weights). It
    prints as :func:`show` renders it and displays itself in a notebook (``_repr_html_``).

    >>> from ubpe import UBPE
    >>> tok = UBPE(alphabet="abc ", n_tokens=9, break_tokens=" ")
    >>> tok.fit(["abcab abc", "ab cab", "abca bca"], quiet=True)
    >>> seg = segment(tok, "abcab cab")
    >>> print(seg)
    abcab| |cab
    >>> seg.ids, '<span style="background:#afd7ff" title="id 8">abcab</span>' in seg._repr_html_()
    ([8, 3, 5], True)
    """

    encodings: tuple[tuple[tuple[Any, ...], tuple[int, ...], float | None], ...]

    @property
    def ids(self) -> list[int]:
        """The best encoding's ids."""
        return list(self.encodings[0][1]) if self.encodings else []

    def __str__(self) -> str:
        if len(self.encodings) == 1:
            return render(self.encodings[0][0], color=False)
        return render_alternatives([(pieces, score) for pieces, _, score in self.encodings], color=False)

    def __repr__(self) -> str:
        return f"Segmentation({len(self.encodings)} encoding(s), best: {len(self.ids)} tokens)\n{self}"

    def _repr_html_(self) -> str:
        rows = "".join(
            f'<tr><td class="score">#{rank} {score_text(score)} ({len(ids)})</td>'
            f'<td class="enc">{_html_encoding(pieces, ids)}</td></tr>'
            for rank, (pieces, ids, score) in enumerate(self.encodings, start=1)
        )
        return f"<table>{rows}</table>"


def segment(tokenizer: Any, doc: Any, *, top_n: int = 1, encoder: str | None = None, **options: Any) -> Segmentation:
    """Encode ``doc`` (``tokenizer.encode_with``) into a :class:`Segmentation`: its ``top_n``
    encodings by ``encoder`` (default: the tokenizer's own), with pieces and scores."""
    encodings = tokenizer.scored(tokenizer.encode_with(doc, encoder, top_n, **options))
    return Segmentation(tuple((tuple(tokenizer.pieces(ids)), tuple(int(t) for t in ids), score)
                              for ids, score in encodings))
