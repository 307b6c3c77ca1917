"""``ubpe encode``: documents to token ids (plain, JSON records, or a view of the boundaries)."""

from __future__ import annotations

import argparse
import sys

from ..errors import NotFittedError
from .inputs import CLIError, load_model, parse_options, read_model_docs

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
    from ..encoders import Encoding


def run(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    docs = read_model_docs(model, args)
    results = model.encode_batch_with(docs, args.encoder, args.top_n, **parse_options(args.option))
    keys = None
    if args.rerank:
        results, keys = rerank_results(model, results, args.rerank)
    out = sys.stdout
    if args.view:  # (what only --view uses is imported here: a plain call stays light)
        from ..view import use_color
        from .view import view_text

        color = use_color(out, force=args.color)
        for encodings in results:
            out.write(view_text(model, encodings, args.top_n, color) + "\n")
            if args.top_n > 1:
                out.write("\n")
        return 0
    if args.format == "json":
        import json  # (a plain call's output needs none)
    for d, encodings in enumerate(results):
        if args.format == "json":
            if args.top_n == 1:
                record: dict[str, Any] = {"tokens": encodings[0][0], "score": encodings[0][1]}
            else:
                record = {"encodings": [{"tokens": t, "score": s} for t, s in encodings]}
                if keys is not None:
                    for entry, key in zip(record["encodings"], keys[d]):
                        entry["rerank"] = key
            out.write(json.dumps(record) + "\n")
        elif args.top_n == 1:
            out.write(" ".join(map(str, encodings[0][0])) + "\n")
        else:
            for tokens, score in encodings:
                out.write(f"{score:.6f}\t{' '.join(map(str, tokens))}\n")
            out.write("\n")
    return 0


def rerank_results(model: Any, results: list[list[Encoding]],
                   key: str) -> tuple[list[list[Encoding]], list[list[float]]]:
    """Each document's alternatives re-ordered by ``key`` (``ubpe.encoders.rerank``), and the
    key's values beside them. ``mean_frequency`` needs the model's ``token_frequencies()``
    (ubpe models; imported ones after ``fit_weights``)."""
    from ..encoders.rerank import rerank

    frequencies = None
    if key == "mean_frequency":
        if not model.has_token_frequencies:
            raise CLIError(f"--rerank mean_frequency needs token frequencies, "
                           f"which {model.variant} models do not have")
        try:
            frequencies = model.token_frequencies()
        except NotFittedError as exc:
            raise CLIError(f"--rerank mean_frequency: {exc}") from None
    reranked = [rerank(encodings, key, frequencies=frequencies) for encodings in results]
    return ([[(r.tokens, r.original) for r in rows] for rows in reranked],
            [[r.score for r in rows] for rows in reranked])
