"""How often the universal encoder's top-1 misses the best tf-idf encoding (a research figure).

    python -m experiments.beam_gap [--max-length 14] [--unsplit-length 18] [--n-tokens 4096]

ubpe's universal encoder keeps, at each position of a word, the best ``top_n`` tails only.
The tf-idf score is not additive (a token's term frequency counts all its occurrences in the
word), so this beam can miss the word's best-scoring segmentation. This script fits ``UBPE``
on the King James Bible, with the ``words`` pre-tokenisation (`ubpe.lab.patterns`) and without, enumerates *every*
segmentation of each held-out part (words up to ``--max-length`` symbols; unsplit snippets
of ``--unsplit-length``), and counts parts and documents whose top-1 scores below the
exhaustive best. A document misses when any of its parts does (its top-1 is the
concatenation of its parts' top-1). Writes ``results/beam_gap/README.md``.
"""

from __future__ import annotations

import argparse
import math
import platform
from collections import Counter
from pathlib import Path

import numpy as np

import ubpe
from ubpe import UBPE

from ubpe.lab.patterns import WORDS

RESULTS = Path(__file__).resolve().parent.parent / "results" / "beam_gap"
RELATIVE_TOLERANCE = 1e-12  # below this the beam's score counts as equal (a tie)


def exhaustive_best(word: list[int], pieces: dict[tuple[int, ...], int], weights: dict[int, float], max_piece: int) -> float:
    """The highest tf-idf score over all segmentations of ``word`` (depth-first)."""
    best = -math.inf
    n = len(word)

    def visit(position: int, counts: Counter) -> None:
        nonlocal best
        if position == n:
            score = sum((1 + math.log(c)) * weights.get(t, 0.0) for t, c in counts.items())
            best = max(best, score)
            return
        for end in range(position + 1, min(n, position + max_piece) + 1):
            token = word[position] if end == position + 1 else pieces.get(tuple(word[position:end]))
            if token is None:
                continue
            counts[token] += 1
            visit(end, counts)
            counts[token] -= 1
            if counts[token] == 0:
                del counts[token]

    visit(0, Counter())
    return best


def measure(tok: UBPE, docs: list[str], max_length: int) -> tuple[int, int, int, int]:
    """(words, words missed, documents, documents missed) over documents whose every part has
    at most ``max_length`` symbols."""
    vocab = tok.vocabulary
    pieces = {tuple(p): t for t, p in vocab.pieces().items()}
    weights = vocab.weight_of()
    max_piece = int(np.diff(vocab.piece_offsets).max())
    encoder = tok.encoder()
    words = missed_words = n_docs = missed_docs = 0
    for doc in docs:
        parts = tok.split_pipeline.split(doc).parts(0)
        if any(len(p) > max_length for p in parts):
            continue  # only documents whose every part can be enumerated
        n_docs += 1
        doc_missed = False
        for part in parts:
            (_, beam), = encoder.encode([part])
            best = exhaustive_best(part.tolist(), pieces, weights, max_piece)
            words += 1
            if beam < best - RELATIVE_TOLERANCE * max(1.0, abs(best)):
                missed_words += 1
                doc_missed = True
        missed_docs += doc_missed
    return words, missed_words, n_docs, missed_docs


def main() -> None:
    from experiments.datasets import load

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-length", type=int, default=14)
    parser.add_argument("--unsplit-length", type=int, default=18)
    parser.add_argument("--n-tokens", type=int, default=4096)
    parser.add_argument("--max-docs", type=int, default=2000)
    args = parser.parse_args()

    train = load("kjv", "train").docs
    verses = [line for doc in load("kjv", "heldout").docs for line in doc.split("\n") if line.strip()]
    alphabet = sorted(set("".join(train + verses)))
    split = UBPE(alphabet=alphabet, n_tokens=args.n_tokens, regex_str=WORDS)
    split.fit(train, quiet=True)
    unsplit = UBPE(alphabet=alphabet, n_tokens=args.n_tokens)
    unsplit.fit(train, quiet=True)
    # unsplit: each held-out verse cut into snippets short enough to enumerate
    snippets = [v[i : i + args.unsplit_length] for v in verses for i in range(0, len(v), args.unsplit_length)]
    rows = [
        ("parts of the `words` regex split", args.max_length, measure(split, verses[: args.max_docs], args.max_length)),
        ("unsplit snippets (no regex)", args.unsplit_length, measure(unsplit, snippets[: args.max_docs], args.unsplit_length)),
    ]
    lines = [
        "# How often tf-idf top-1 misses the best tf-idf encoding",
        "",
        f"Command: `python -m experiments.beam_gap`; ubpe {ubpe.__version__}, Python {platform.python_version()}.",
        f"Models: UBPE at {args.n_tokens} ids fitted on the King James Bible train split, with and without "
        "the regex. Data: held-out verses; every segmentation of every part is enumerated.",
        "",
        "| setting | max part length | parts | parts missed | documents | documents missed |",
        "|---|---|---|---|---|---|",
    ]
    for name, length, (words, missed_words, docs, missed_docs) in rows:
        lines.append(
            f"| {name} | {length} | {words} | {missed_words} ({missed_words / max(words, 1):.2%}) "
            f"| {docs} | {missed_docs} ({missed_docs / max(docs, 1):.2%}) |"
        )
    lines.append("")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "README.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
