"""``ubpe view``: where token boundaries fall, in the terminal or as an HTML page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..files import write_atomically
from ..view import render, render_alternatives, render_html, use_color
from .inputs import PROG, check_output, fit_weights_from, load_model, parse_options, read_model_docs, score_note

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any


def run(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    fit_weights_from(model, args.fit_weights)
    docs = read_model_docs(model, args)
    results = [model.scored(encodings)
               for encodings in model.encode_batch_with(docs, args.encoder, args.top_n, **parse_options(args.option))]
    if args.html:
        check_output(args.html)
        page = render_html(
            [[(model.pieces(t), t, s) for t, s in encodings] for encodings in results],
            title=f"ubpe: {Path(args.model).name}",
            caption=f"{model.variant} model, encoder {args.encoder or model.default_encoder}, top {args.top_n}; "
                    f"hover a token for its id{'; ' + score_note(model) if score_note(model) else ''}",
        )
        write_atomically(args.html, page)
        if not args.quiet:
            print(f"{PROG}: wrote {len(results)} documents to {args.html}", file=sys.stderr)
        return 0
    color = use_color(sys.stdout, force=args.color)
    blocks = [view_text(model, encodings, args.top_n, color) for encodings in results]
    sys.stdout.write(("\n\n" if args.top_n > 1 else "\n").join(blocks) + "\n")
    note = score_note(model) if args.top_n > 1 else None
    if note and not args.quiet:
        print(f"{PROG}: {note}", file=sys.stderr)
    return 0


def view_text(model: Any, encodings: list[tuple[list[int], float | None]], top_n: int, color: bool) -> str:
    """One document's encodings drawn for the terminal."""
    if top_n == 1:
        return render(model.pieces(encodings[0][0]), color=color)
    return render_alternatives([(model.pieces(t), s) for t, s in encodings], color=color)
