"""``python -m experiments``: the main job.

Until the experiment runner lands, this fits both tokenizers on real English prose that ships
with Python itself (the documentation topics of ``pydoc_data``), checks that decoding gives
the text back, and writes the models and a short report to ``results/demo/``.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np
import pydoc_data.topics

import ubpe
from ubpe import UBPE, UBPEClassic

RESULTS = Path(__file__).resolve().parent.parent / "results" / "demo"
GPT2_LIKE = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def prose() -> list[str]:
    topics = pydoc_data.topics.topics
    return [p for key in sorted(topics) for p in topics[key].split("\n\n") if p.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-tokens", type=int, default=4096)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    docs = prose()
    alphabet = sorted(set("".join(docs)))
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# ubpe demo fit",
        "",
        f"ubpe {ubpe.__version__}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"{platform.machine()} with {len(__import__('os').sched_getaffinity(0))} cores",
        f"data: {len(docs)} paragraphs of Python's documentation topics, {sum(map(len, docs)):,} chars, "
        f"{len(alphabet)} distinct characters; regex: GPT-2-like pre-tokenisation",
        "",
        "| tokenizer | n_tokens | fit seconds | decode(piece) round trip |",
        "|---|---|---|---|",
    ]
    for cls in (UBPE, UBPEClassic):
        tok = cls(alphabet=alphabet, n_tokens=args.n_tokens, regex_str=GPT2_LIKE)
        started = time.perf_counter()
        tok.fit(docs)
        seconds = time.perf_counter() - started
        tok.save(args.out / f"{cls.__name__.lower()}.json")
        pieces_ok = all(
            tok.decode([t]) == "".join(alphabet[i] for i in tok.vocabulary.piece(t))
            for t in range(len(tok.vocabulary))
        )
        lines.append(f"| {cls.__name__} | {len(tok.vocabulary)} | {seconds:.2f} | {pieces_ok} |")
        print(f"{cls.__name__}: {len(tok.vocabulary)} tokens in {seconds:.2f} s")
    (args.out / "README.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
