"""Held-out documents for the encoding fixtures, derived deterministically from a corpus.

Both the fixture script (Python >= 3.12, the reference) and the tests (any Python >= 3.11)
import this module, so the documents never need to be stored: only ``random.Random`` with a
fixed seed is used, whose sequences are stable across Python versions.
"""

from __future__ import annotations

import random

N_DOCS = 2000
SEED = 97
MIN_SPAN, MAX_SPAN = 3, 60
MAX_SPANS = 3


def heldout_docs(corpus: list, n_docs: int = N_DOCS) -> list:
    """``n_docs`` documents made of 1-3 random spans of corpus documents glued together.

    The spans come from different places, so most documents are new sequences; the first
    few are edge cases (empty, one symbol, one repeated symbol).
    """
    rng = random.Random(SEED)
    is_text = isinstance(corpus[0], str)
    sources = [doc for doc in corpus if len(doc) > 0]
    first = sources[0]
    edge = [first[:0], first[:1], first[:1] * 7]
    docs = [doc if is_text else list(doc) for doc in edge]
    while len(docs) < n_docs:
        pieces = []
        for _ in range(rng.randint(1, MAX_SPANS)):
            source = rng.choice(sources)
            length = rng.randint(MIN_SPAN, MAX_SPAN)
            start = rng.randrange(max(1, len(source) - length + 1))
            pieces.append(source[start : start + length])
        docs.append("".join(pieces) if is_text else [s for piece in pieces for s in piece])
    return docs
