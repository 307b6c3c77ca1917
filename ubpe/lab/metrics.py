"""Intrinsic metrics of an encoding of a held-out corpus: pure functions on counts and lengths.

Every metric here is computed per (dataset, vocabulary, encoder) cell by the runner from the
cell's raw results (per-document symbol and token counts, the unigram token counts, the
segmentation of every document and the scores of the n-best alternatives).

>>> tokens_per_symbol([3, 1], [6, 4])           # 4 tokens for 10 symbols
0.4
>>> renyi_efficiency([5, 5], vocab_size=4)     # two of four ids, equally often
0.5
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np

#: Zouhar et al. (2023), "Tokenization and the Noiseless Channel": alpha = 2.5 predicts
#: downstream BLEU best among the Renyi entropies they tried.
RENYI_ALPHA = 2.5
LENGTH_PERCENTILE = 95
_SEGMENTATION_DIGEST_BYTES = 8


def _total(values: Sequence[int] | np.ndarray) -> int:
    return int(np.sum(np.asarray(values, dtype=np.int64)))


def tokens_per_symbol(n_tokens: Sequence[int], n_symbols: Sequence[int]) -> float:
    """Corpus tokens per corpus symbol (lower is shorter): ``sum(n_tokens) / sum(n_symbols)``.

    >>> tokens_per_symbol([2, 3], [4, 6])
    0.5
    """
    symbols = _total(n_symbols)
    return _total(n_tokens) / symbols if symbols else math.nan


def compression_ratio(n_tokens: Sequence[int], n_symbols: Sequence[int]) -> float:
    """Symbols per token, the inverse of `tokens_per_symbol` (higher is shorter).

    >>> compression_ratio([2, 3], [4, 6])
    2.0
    """
    tokens = _total(n_tokens)
    return _total(n_symbols) / tokens if tokens else math.nan


def corpus_tokens(n_tokens: Sequence[int]) -> int:
    """Tokens in the whole held-out corpus.

    >>> corpus_tokens([2, 3, 0])
    5
    """
    return _total(n_tokens)


def renyi_entropy(counts: Sequence[int] | np.ndarray, alpha: float = RENYI_ALPHA) -> float:
    """Renyi entropy (nats) of the distribution ``counts / sum(counts)``.

    ``H_alpha(p) = ln(sum_i p_i ** alpha) / (1 - alpha)``; ``alpha = 1`` is Shannon's entropy.
    Zero counts do not contribute. A uniform distribution over k outcomes has ``ln k`` for every
    alpha:

    >>> round(renyi_entropy([1, 1, 1, 1]), 12) == round(math.log(4), 12)
    True
    >>> round(renyi_entropy([3, 1], alpha=2), 6)   # -ln(0.75**2 + 0.25**2) = -ln 0.625
    0.470004
    """
    values = np.asarray(counts, dtype=np.float64)
    values = values[values > 0]
    if values.size == 0:
        return math.nan
    p = values / values.sum()
    if alpha == 1:
        return float(-np.sum(p * np.log(p)))
    return float(np.log(np.sum(p**alpha)) / (1.0 - alpha))


def renyi_efficiency(counts: Sequence[int] | np.ndarray, vocab_size: int,
                     alpha: float = RENYI_ALPHA) -> float:
    """Renyi efficiency (Zouhar et al. 2023): ``H_alpha(unigram tokens) / ln |V|``, in [0, 1].

    ``counts`` are the held-out unigram counts of the token ids used; ``vocab_size`` is
    ``|V|``, every id the vocabulary has (used or not). 1 means every id is used equally often.

    >>> renyi_efficiency([7, 7, 7, 7], vocab_size=4)
    1.0
    >>> renyi_efficiency([5, 5], vocab_size=4)
    0.5
    """
    if vocab_size < 2:
        return math.nan
    return renyi_entropy(counts, alpha) / math.log(vocab_size)


def vocabulary_utilisation(counts: Sequence[int] | np.ndarray, vocab_size: int) -> float:
    """Share of the vocabulary's ids that occur at least once on the held-out corpus.

    >>> vocabulary_utilisation([3, 0, 1], vocab_size=8)   # 2 of 8 ids used
    0.25
    """
    return int(np.count_nonzero(np.asarray(counts))) / vocab_size if vocab_size else math.nan


def length_summary(lengths: Sequence[int] | np.ndarray) -> dict[str, float]:
    """Mean, median and 95th percentile (numpy's linear interpolation) of per-document lengths.

    >>> length_summary([1, 2, 3, 4, 5])         # p95 at rank 0.95 * 4 = 3.8: 4 + 0.8 * (5 - 4)
    {'mean': 3.0, 'median': 3.0, 'p95': 4.8}
    """
    values = np.asarray(lengths, dtype=np.float64)
    if values.size == 0:
        return {"mean": math.nan, "median": math.nan, "p95": math.nan}
    return {
        "mean": float(values.mean()),
        "median": float(np.median(values)),
        "p95": float(np.percentile(values, LENGTH_PERCENTILE)),
    }


def segmentation_key(tokens: Sequence[int], piece_lengths: np.ndarray) -> int:
    """A 64-bit fingerprint of where a document's tokens start and end.

    Two encodings of the same document are the same segmentation exactly when their tokens
    cover the same runs of symbols, i.e. the sequences of piece lengths are equal; unlike the
    token ids this compares across vocabularies. ``piece_lengths[t]`` is token t's length.

    >>> lengths = np.array([1, 1, 2, 2])                 # ids 2 and 3 are both two symbols
    >>> segmentation_key([2, 0], lengths) == segmentation_key([3, 1], lengths)
    True
    >>> segmentation_key([2, 0], lengths) == segmentation_key([0, 2], lengths)
    False
    """
    return runs_key(np.asarray(piece_lengths, dtype="<i8")[np.asarray(tokens, dtype=np.int64)])


def runs_key(runs: Sequence[int] | np.ndarray) -> int:
    """`segmentation_key` of the symbols each token covers, given those runs directly.

    >>> runs_key([2, 1]) == segmentation_key([2, 0], np.array([1, 1, 2]))
    True
    """
    data = np.asarray(runs, dtype="<i8").tobytes()
    return int.from_bytes(hashlib.blake2b(data, digest_size=_SEGMENTATION_DIGEST_BYTES).digest(), "little")


def differ_share(keys_a: Sequence[int], keys_b: Sequence[int]) -> float:
    """Share of documents whose two segmentations (see `segmentation_key`) differ.

    >>> differ_share([1, 2, 3, 4], [1, 2, 0, 0])
    0.5
    """
    a, b = np.asarray(keys_a, dtype=np.uint64), np.asarray(keys_b, dtype=np.uint64)
    if a.shape != b.shape:
        raise ValueError("the two encodings must cover the same documents")
    return float(np.mean(a != b)) if a.size else math.nan


def throughput(n_symbols: int, seconds: float) -> float:
    """Symbols encoded per second.

    >>> throughput(1_000, 0.5)
    2000.0
    """
    return n_symbols / seconds if seconds > 0 else math.nan


def score_gaps(scores: Sequence[Sequence[float]] | np.ndarray, top_n: int) -> dict[str, float]:
    """How far the best encoding's score is above the 2nd and the n-th alternatives.

    ``scores[d]`` holds document d's scores best first, padded with NaN where an encoder found
    fewer than ``top_n`` alternatives; documents without a 2nd (n-th) alternative are left out
    of that mean. Gaps are in the tf-idf score's units (nats times idf).

    >>> score_gaps([[5.0, 4.0, 1.0], [3.0, 3.0, float("nan")]], top_n=3)
    {'share_with_n_alternatives': 0.5, 'gap_2nd_mean': 0.5, 'gap_2nd_median': 0.5, 'gap_nth_mean': 4.0}
    """
    matrix = np.asarray(scores, dtype=np.float64).reshape(len(scores), -1)
    result = {"share_with_n_alternatives": math.nan, "gap_2nd_mean": math.nan,
              "gap_2nd_median": math.nan, "gap_nth_mean": math.nan}
    if matrix.shape[0] == 0 or top_n < 2 or matrix.shape[1] < 2:
        return result
    last = min(top_n, matrix.shape[1]) - 1
    second = matrix[:, 0] - matrix[:, 1]
    nth = matrix[:, 0] - matrix[:, last]
    second, nth = second[~np.isnan(second)], nth[~np.isnan(nth)]
    result["share_with_n_alternatives"] = float(nth.size / matrix.shape[0])
    if second.size:
        result["gap_2nd_mean"] = float(second.mean())
        result["gap_2nd_median"] = float(np.median(second))
    if nth.size:
        result["gap_nth_mean"] = float(nth.mean())
    return result
