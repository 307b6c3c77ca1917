"""Fits shared by the streaming and Dask tests: one per tokenizer kind and corpus shape.

Each case fits a fresh tokenizer on a corpus given in any form (a list, a generator, a Dask
bag) and returns the model as its JSON, so that two fits compare bit for bit.
"""

from __future__ import annotations

from functools import lru_cache

from experiments.datasets.registry import load
from ubpe import UBPE, ByteLevelBPE, UBPEClassic

WORDS = r" ?\w+| ?[^\w\s]+|\s+"


@lru_cache(maxsize=None)
def corpus(name: str, max_symbols: int) -> tuple[list, list]:
    """``(alphabet, documents)`` of a real training corpus, capped."""
    ds = load(name, "train", max_symbols=max_symbols)
    return list(ds.alphabet), list(ds.docs)


def fit_ubpe(alphabet, docs, *, classic=False, n_tokens=300, regex_str=WORDS, **options) -> str:
    cls = UBPEClassic if classic else UBPE
    tok = cls(alphabet=alphabet, n_tokens=n_tokens, regex_str=regex_str)
    tok.fit(docs, quiet=True, **options)
    return tok.to_json()


def fit_bytelevel(docs, *, n_tokens=400, **options) -> str:
    return ByteLevelBPE().fit(docs, n_tokens=n_tokens, quiet=True, **options).to_json()


#: name -> (corpus name, symbols, fit(alphabet, docs) -> model JSON)
CASES = {
    "text-universal": ("kjv", 60_000, lambda a, d: fit_ubpe(a, d, n_candidates=20)),
    "text-classic": ("shakespeare", 60_000, lambda a, d: fit_ubpe(a, d, classic=True)),
    "dna-unsplit": ("dna", 40_000, lambda a, d: fit_ubpe(a, d, regex_str=None, n_tokens=120)),
    "ints-unsplit": ("ecg", 30_000, lambda a, d: fit_ubpe(a, d, regex_str=None, n_tokens=150)),
    "bytelevel": ("udhr", 60_000, lambda a, d: fit_bytelevel(d)),
}
