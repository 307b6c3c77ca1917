"""``ubpe encode``: documents to token ids (plain, JSON records, or a view of the boundaries)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..view import use_color
from .inputs import load_model, parse_options, read_model_docs
from .view import view_text


def run(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    docs = read_model_docs(model, args)
    results = model.encode_batch_with(docs, args.encoder, args.top_n, **parse_options(args.option))
    out = sys.stdout
    if args.view:
        color = use_color(out, force=args.color)
        for encodings in results:
            out.write(view_text(model, encodings, args.top_n, color) + "\n")
            if args.top_n > 1:
                out.write("\n")
        return 0
    for encodings in results:
        if args.format == "json":
            if args.top_n == 1:
                record: dict[str, Any] = {"tokens": encodings[0][0], "score": encodings[0][1]}
            else:
                record = {"encodings": [{"tokens": t, "score": s} for t, s in encodings]}
            out.write(json.dumps(record) + "\n")
        elif args.top_n == 1:
            out.write(" ".join(map(str, encodings[0][0])) + "\n")
        else:
            for tokens, score in encodings:
                out.write(f"{score:.6f}\t{' '.join(map(str, tokens))}\n")
            out.write("\n")
    return 0
