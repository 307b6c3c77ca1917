"""The tokenization views: terminal rendering, aligned alternatives, HTML, HF export tables."""

from __future__ import annotations

import html.parser

import pytest

from ubpe import UBPE, ByteLevelBPE
from ubpe.view import Segmentation, render, render_alternatives, render_html, segment, show, token_pieces, use_color

ANSI_BACKGROUND = "\x1b[48;5;"


@pytest.fixture(scope="module")
def tok():
    corpus = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"] * 10
    model = UBPE(alphabet=sorted(set("".join(corpus))), n_tokens=40, break_tokens=" ")
    model.fit(corpus, quiet=True)
    return model


def test_plain_render_round_trips_the_text(tok):
    pieces = token_pieces(tok, tok.encode("the cat sat")[0][0])
    assert render(pieces, color=False).replace("|", "") == "the cat sat"
    assert "".join(pieces) == "the cat sat"


def test_color_render_has_one_block_per_token_and_no_separators(tok):
    pieces = token_pieces(tok, tok.encode("the cat sat")[0][0])
    shown = render(pieces, color=True)
    assert shown.count(ANSI_BACKGROUND) == len(pieces) and "|" not in shown
    # adjacent tokens get different colours
    colours = [part.split("m", 1)[0] for part in shown.split(ANSI_BACKGROUND)[1:]]
    assert all(a != b for a, b in zip(colours, colours[1:]))


def test_control_characters_stay_on_one_line():
    assert render(["a\nb", "\t"], color=False) == "a↵b|→"
    assert "\n" not in render(["x\r\n"], color=True)


def test_non_text_symbols_are_bracketed_groups():
    assert render([[3, 17, 4], [5]], color=False) == "[3 17 4][5]"
    assert render([[("C", 4)], [("E", 8), ("G", 1)]], color=False) == "[('C', 4)][('E', 8) ('G', 1)]"


def test_alternatives_are_aligned_column_for_column(tok):
    encodings = tok.encode("the cat sat", top_n=4)
    text = show(tok, "the cat sat", top_n=4, color=False)
    lines = text.splitlines()
    assert len(lines) == len(encodings) > 1
    bodies = [line.split("  ", 2)[2] for line in lines]
    assert len({len(b) for b in bodies}) == 1  # same width: same symbol, same column
    for body in bodies:
        assert body.replace("|", "").replace("·", "") == "the cat sat"
    scores = [float(line.split()[1]) for line in lines]
    assert scores == sorted(scores, reverse=True)


def test_aligned_integer_alternatives():
    rows = render_alternatives([([[1, 2], [3]], 1.0), ([[1], [2, 3]], 0.5), ([[1], [2], [3]], 0.0)])
    bodies = [line.split("  ", 2)[2] for line in rows.splitlines()]
    assert len({len(b) for b in bodies}) == 1
    assert [b.index("3") for b in bodies] == [bodies[0].index("3")] * 3


def test_byte_level_pieces_show_whole_characters_and_stray_bytes():
    bl = ByteLevelBPE().fit(["héllo wörld"] * 5, n_tokens=262, quiet=True)
    ids = bl.encode("héllo")
    pieces = token_pieces(bl, ids)
    assert b"".join(pieces) == "héllo".encode()
    shown = render(pieces, color=False)
    assert shown.replace("|", "") in ("héllo", "h\\xc3\\xa9llo")


class _Collector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.spans, self.text = [], []

    def handle_starttag(self, tag, attrs):
        if tag == "span":
            self.spans.append(dict(attrs))

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_escaped_and_well_formed(tok):
    pieces = ["<b>", "&amp;", '"q"']
    page = render_html([[(pieces, [7, 8, 9], 1.5)]], title="x < y")
    parser = _Collector()
    parser.feed(page)
    assert [s["title"] for s in parser.spans] == ["id 7", "id 8", "id 9"]
    assert "<b>" not in page.split("<body>")[1].replace("<body>", "")
    assert "".join(parser.text).count("&amp;") == 1  # the piece itself, unescaped by the parser
    assert "x < y" in "".join(parser.text)


def test_use_color_respects_no_color(monkeypatch):
    class Tty:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(Tty()) is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color(Tty()) is False
    assert use_color(Tty(), force=True) is True


def test_a_segmentation_prints_as_show_and_displays_its_tokens_in_a_notebook(tok):
    for top_n in (1, 3):
        seg = segment(tok, "the cat sat", top_n=top_n)
        assert str(seg) == show(tok, "the cat sat", top_n=top_n, color=False)
        assert len(seg.encodings) == len(tok.encode_with("the cat sat", None, top_n))
        parser = _Collector()
        parser.feed(seg._repr_html_())
        assert [int(s["title"][3:]) for s in parser.spans][: len(seg.ids)] == seg.ids
    assert seg.ids == tok.encode_with("the cat sat", None, 1)[0][0]
    escaped = Segmentation(((("<b>", "&"), (1, 2), 0.5),))._repr_html_()
    assert "<b>" not in escaped and "&lt;b&gt;" in escaped and "&amp;" in escaped


def test_a_segmentation_of_a_model_without_weights_shows_no_score():
    model = ByteLevelBPE().fit(["hello hello world"] * 3, n_tokens=262, quiet=True)
    seg = segment(model, "hello world")
    assert isinstance(seg, Segmentation) and seg.encodings[0][2] is None
    assert model.decode(seg.ids) == "hello world"
    assert "(" in seg._repr_html_() and repr(seg).startswith("Segmentation(1 encoding(s)")
