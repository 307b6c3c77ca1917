"""``ubpe compare``: one document through several encoders, side by side."""

from __future__ import annotations

import argparse
import inspect
import json
import sys

from ..encoders import available_encoders, encoder_info
from ..errors import UBPEError
from ..view import render, score_text
from .inputs import CLIError, fit_weights_from, load_model, parse_options, read_model_docs, score_note

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

#: at most this many characters of segmentation per table row, unless --width says otherwise
PREVIEW_WIDTH = 60


def run(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    fit_weights_from(model, args.fit_weights)
    if args.text is None:
        if len(args.inputs) > 1:
            raise CLIError("compare takes one input: one file, '-' or --text")
        args.docs_per = "file"
    docs = read_model_docs(model, args)
    if len(docs) != 1:
        raise CLIError(f"compare takes one document, got {len(docs)}")
    doc = docs[0]
    if args.encoders is None:
        names = default_encoders(model)
    else:
        names = [name.strip() for name in args.encoders.split(",") if name.strip()]
        if not names:
            raise CLIError("--encoders needs at least one encoder name (e.g. --encoders tfidf,fewest)")
    options = parse_options(args.option)
    registered = [n for n in names if n != model.default_encoder or n in available_encoders()]
    for key in options:
        if "." not in key and not any(accepts(encoder_info(n).factory, key) for n in registered):
            raise CLIError(f"no encoder compared takes the option {key!r}")
    rows = []
    for name in names:
        mine = {k.split(".", 1)[1]: v for k, v in options.items() if k.startswith(name + ".")}
        if name in registered:
            info = encoder_info(name)  # an unknown name is an error, not a skipped row
            mine.update({k: v for k, v in options.items() if "." not in k and accepts(info.factory, k)})
        ((tokens, score),) = model.scored(model.encode_with(doc, name, **mine)[:1])
        rows.append((name, tokens, score))
    if args.format == "json":
        kind = model.score_kind()
        for name, tokens, score in rows:
            sys.stdout.write(json.dumps({"encoder": name, "n_tokens": len(tokens), "score": score,
                                         "score_kind": kind, "tokens": tokens}) + "\n")
        return 0
    sys.stdout.write(table(model, rows, model.n_symbols(doc), args.width))
    note = score_note(model)
    if note:
        sys.stdout.write(note + "\n")
    return 0


def table(model: Any, rows: list[tuple[str, list[int], float | None]], n_symbols: int,
          width: int = PREVIEW_WIDTH) -> str:
    """The plain-text table: encoder, tokens, symbols per token, score (``-``: the model has
    no weights), segmentation (cut at ``width`` characters with ``…``; 0: never cut)."""
    header = ("encoder", "tokens", f"{model.symbol_unit}s/token", "score", "segmentation")
    body = []
    for name, tokens, score in rows:
        shown = render(model.pieces(tokens), color=False)
        if 0 < width < len(shown):
            shown = shown[: width - 1] + "…"
        per = f"{n_symbols / len(tokens):.2f}" if tokens else "-"
        body.append((name, str(len(tokens)), per, score_text(score), shown))
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i in (0, 4) else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))).rstrip()
             for r in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def accepts(factory: Any, option: str) -> bool:
    """Whether an encoder factory takes the keyword ``option``."""
    parameters = inspect.signature(factory).parameters
    return option in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def default_encoders(model: Any) -> list[str]:
    """The model's own encoder when it is not a registered one (an imported model's
    ``native``, first), then every registered encoder that runs without options (``additive``
    needs scores); ``classic`` only where the vocabulary records its merges (not for
    ``.tiktoken`` ranks)."""
    names = [] if model.default_encoder in available_encoders() else [model.default_encoder]
    vocab = model.vocabulary
    for name in available_encoders():
        if name == "classic" and vocab.n_merged and (vocab.merges < 0).all():
            continue
        try:
            model.encoder(name)  # (an imported model without weights refuses `sample`)
        except UBPEError:
            continue
        names.append(name)
    return names
