"""Fitting: the corpus, split into parts, goes through the Cython pair merger.

One fit yields one :class:`~ubpe.vocabulary.Vocabulary` in creation order; the classic and
universal tokenizers differ only in how they rearrange and trim it afterwards.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ubpe_native._fit import PairMerger

from .errors import EmptyCorpusError, InvalidParameterError, SymbolTypeError
from .splitting import SplitBatch, SplitMode, SplitPipeline
from .vocabulary import Vocabulary


def check_n_candidates(n_candidates: object) -> int:
    if isinstance(n_candidates, bool) or not isinstance(n_candidates, int):
        raise InvalidParameterError(
            f"`n_candidates` must be an int, not {type(n_candidates).__name__}"
        )
    if n_candidates < 1:
        raise InvalidParameterError(f"`n_candidates` must be at least 1, got {n_candidates}")
    return n_candidates


def fit_vocabulary(
    batch: SplitBatch,
    *,
    n_base: int,
    n_tokens: int,
    n_candidates: int = 50,
    quiet: bool = False,
    description: str = "fit",
    unique_pieces: bool = False,
) -> Vocabulary:
    """Merge pairs until the largest id reaches ``n_tokens`` (or no pair is left).

    As in ubpe 0.3.0 the loop runs while the largest id is below ``n_tokens``, and a round
    may create several tokens, so the result can hold a few more than ``n_tokens`` ids;
    rearrangement trims it. With ``unique_pieces`` a merge that rebuilds an existing token's
    piece reuses that token (byte-level vocabularies).
    """
    check_n_candidates(n_candidates)
    tokens, offsets, doc_of_part = batch.fit_parts()
    merger = PairMerger(tokens, offsets, doc_of_part, batch.n_docs, n_base, unique_pieces)
    largest = n_base - 1
    with tqdm(
        total=max(0, n_tokens - largest), desc=description, unit="token", disable=quiet, leave=False
    ) as progress:
        while largest < n_tokens:
            if merger.step(n_candidates) == 0:
                break
            progress.update(merger.next_token - 1 - largest)
            largest = merger.next_token - 1
    left, right, documents, _ = merger.merges()
    return Vocabulary.from_merges(n_base, left, right, documents=documents, n_docs=batch.n_docs)


def as_corpus(corpus: Any) -> list[Any]:
    """``corpus`` as a list of documents; a single document or an empty corpus is an error.

    >>> as_corpus(("ab", "ba"))
    ['ab', 'ba']
    """
    if isinstance(corpus, (str, bytes)):
        raise SymbolTypeError("`corpus` must be a list of documents, not a single str/bytes")
    if isinstance(corpus, np.ndarray) and corpus.ndim == 1 and corpus.dtype != object:
        raise SymbolTypeError("`corpus` must be a list of documents, not one 1-D array")
    if not isinstance(corpus, Iterable):
        raise SymbolTypeError(f"`corpus` must be a list of documents, not {type(corpus).__name__}")
    docs = list(corpus)
    if not docs:
        raise EmptyCorpusError("`corpus` is empty: fitting needs at least one document")
    return docs


def fit_corpus(
    pipeline: SplitPipeline,
    corpus: Any,
    *,
    n_tokens: int,
    n_candidates: int = 50,
    quiet: bool = False,
    split_mode: SplitMode = SplitMode.FULL,
    description: str = "fit",
) -> Vocabulary:
    """``corpus`` (a list of documents) split by ``pipeline`` and fitted: the vocabulary in
    creation order, as ubpe 0.3.0 fits it before rearranging.

    >>> from ubpe.alphabet import Alphabet
    >>> from ubpe.splitting import make_pipeline
    >>> fit_corpus(make_pipeline(Alphabet.from_spec("ab")), ["abab", "abba"], n_tokens=4, quiet=True).pieces()
    {2: (0, 1), 3: (0, 1, 0, 1), 4: (0, 1, 1)}
    """
    check_n_candidates(n_candidates)
    batch = pipeline.split_batch(as_corpus(corpus), mode=split_mode)
    n_base = len(pipeline.alphabet) + len(pipeline.known_words or {})
    return fit_vocabulary(
        batch, n_base=n_base, n_tokens=n_tokens, n_candidates=n_candidates, quiet=quiet, description=description
    )
