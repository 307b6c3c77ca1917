"""An interpolated Kneser-Ney n-gram language model over token ids, vectorised with numpy.

The downstream proxy of the experiments (issue 14, item 4): a model trained on one
tokenisation of a training split gives the held-out split a probability, and
``bits / held-out symbols`` compares tokenisations of the same text whatever their lengths.

The model is NLTK's ``nltk.lm.KneserNeyInterpolated`` (Kneser & Ney 1995; Chen & Goodman
1999, one discount ``D`` for every order), computed for all positions at once with sorted
n-gram keys and ``np.searchsorted`` instead of NLTK's scan over every n-gram per query, with
two changes, so that every probability is positive and every distribution sums to at most 1:

* the bottom: NLTK's unigram level is the continuation probability ``N1+(. w) / N1+(. .)``
  alone, so an id never seen after any other in training gets probability 0 (infinite
  bits). Here the unigram level is discounted as well and the freed mass
  ``D * |{w : N1+(. w) > 0}| / N1+(. .)`` is spread uniformly over the ``vocab_size + 1``
  symbols the model can predict (every id of the tokenizer's vocabulary and the end of a
  document): an id the training tokenisation never produced - a token out of the model's
  experience, not out of the vocabulary - costs what the floor gives it, finitely;
* the back-off weight of a lower order: NLTK counts the words that follow a context ``h`` in
  the raw counts, ``N1+(h .)``, but discounts continuation counts, so at the start of a
  document (where ``h`` is all beginning symbols, and raw counts see a word no continuation
  count does) its distribution sums to more than 1. Here it is the number of words with a
  continuation count, ``|{w : N1+(. h w) > 0}|`` (Chen & Goodman's definition).

``tests/experiments/test_ngram.py`` checks every probability against NLTK's own ``KneserNeyInterpolated``
with those two lines changed.

Documents are padded as NLTK pads them for training with left context: ``order - 1``
beginning-of-document symbols on the left and one end-of-document symbol on the right, which
is predicted (so the model pays for knowing where a document ends; what that costs differs
between tokenisations - its share of the bits is a column of the downstream report). Counts are the *everygrams* of the padded documents (every k-gram, k = 1 ...
order, at every position), as NLTK counts them.

>>> lm = KneserNeyLM(order=2, discount=0.75).fit([np.array([0, 1, 0, 1])], vocab_size=3)
>>> bits = lm.document_bits([np.array([0, 1])])
>>> bits.shape, bool(bits[0] > 0)
((1,), True)
>>> lm.log2_probabilities(np.array([0, 1])).shape   # two tokens and the end
(3,)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Order and discount of the experiments' model (Chen & Goodman's usual single discount).
DEFAULT_ORDER = 3
DEFAULT_DISCOUNT = 0.75


class NgramModelError(ValueError):
    """Bad settings or input for the n-gram model."""


def _table(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys and how often each occurs."""
    return np.unique(keys, return_counts=True)


def _grouped_sum(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys (sorted) and the sum of ``values`` per key."""
    distinct, inverse = np.unique(keys, return_inverse=True)
    return distinct, np.bincount(inverse, weights=values, minlength=len(distinct))


def _lookup(table: tuple[np.ndarray, np.ndarray], queries: np.ndarray) -> np.ndarray:
    """The table's value for each query key (0 where the key is absent)."""
    keys, values = table
    if len(keys) == 0:
        return np.zeros(len(queries))
    at = np.minimum(np.searchsorted(keys, queries), len(keys) - 1)
    return np.where(keys[at] == queries, values[at], 0).astype(np.float64)


class KneserNeyLM:
    """Interpolated Kneser-Ney over ids ``0 .. vocab_size - 1`` (see the module docstring)."""

    def __init__(self, order: int = DEFAULT_ORDER, discount: float = DEFAULT_DISCOUNT):
        if isinstance(order, bool) or not isinstance(order, int) or order < 2:
            raise NgramModelError(f"order must be an int >= 2, got {order!r}")
        if not 0 < discount < 1:
            raise NgramModelError(f"discount must be in (0, 1), got {discount!r}")
        self.order = order
        self.discount = float(discount)
        self.vocab_size = 0

    # -- symbols and keys ---------------------------------------------------------------

    @property
    def bos(self) -> int:
        return self.vocab_size

    @property
    def eos(self) -> int:
        return self.vocab_size + 1

    def _padded(self, doc: Sequence[int] | np.ndarray) -> np.ndarray:
        ids = np.asarray(doc, dtype=np.int64)
        if ids.ndim != 1:
            raise NgramModelError("a document is a 1-D sequence of token ids")
        if len(ids) and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise NgramModelError(f"token ids must be in 0 .. {self.vocab_size - 1}")
        return np.concatenate([np.full(self.order - 1, self.bos, np.int64), ids, [self.eos]])

    def _keys(self, padded: np.ndarray, k: int) -> np.ndarray:
        """The key of the k-gram ending at each position ``k - 1 ..`` of ``padded``."""
        n = len(padded) - k + 1
        key = np.zeros(max(n, 0), dtype=np.int64)
        for i in range(k):
            key = key * self.base + padded[i:i + n]
        return key

    # -- training -----------------------------------------------------------------------

    def fit(self, docs: Sequence[Sequence[int] | np.ndarray], vocab_size: int) -> KneserNeyLM:
        """Count the everygrams of the padded training documents; returns ``self``."""
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
            raise NgramModelError(f"vocab_size must be an int >= 1, got {vocab_size!r}")
        self.vocab_size = vocab_size
        self.base = vocab_size + 2
        if float(self.base) ** self.order >= 2.0 ** 62:
            raise NgramModelError(f"order {self.order} over {vocab_size} ids overflows 64-bit keys")
        padded = [self._padded(doc) for doc in docs]
        if not padded:
            raise NgramModelError("no training documents")
        raw = [_table(np.concatenate([self._keys(p, k) for p in padded]))
               for k in range(1, self.order + 1)]
        self._raw = raw  # raw[k - 1]: k-gram counts
        # per context (a (k-1)-gram, key // base) of the highest order: how many distinct words
        # follow it, and how often it is followed at all
        top_keys, top_counts = raw[-1]
        self._top_followers = _grouped_sum(top_keys // self.base, np.ones(len(top_keys)))
        self._context_total = _grouped_sum(top_keys // self.base, top_counts.astype(np.float64))
        # lower orders: continuation counts N1+(. h w) from the distinct (k+1)-grams
        self._continuation: list[tuple[np.ndarray, np.ndarray]] = []
        self._continuation_total: list[tuple[np.ndarray, np.ndarray]] = []
        self._continuation_followers: list[tuple[np.ndarray, np.ndarray]] = []
        for k in range(1, self.order):
            higher = raw[k][0]  # distinct (k+1)-grams
            cont = _table(higher % self.base ** k)
            self._continuation.append(cont)
            context = cont[0] // self.base
            self._continuation_total.append(_grouped_sum(context, cont[1].astype(np.float64)))
            self._continuation_followers.append(_grouped_sum(context, np.ones(len(context))))
        return self

    # -- scoring ------------------------------------------------------------------------

    def log2_probabilities(self, doc: Sequence[int] | np.ndarray) -> np.ndarray:
        """log2 p of each token of ``doc`` and of its end, given the preceding ones."""
        if not self.vocab_size:
            raise NgramModelError("the model is not fitted")
        padded = self._padded(doc)
        n_pred = len(padded) - (self.order - 1)
        d = self.discount
        prob = None
        for k in range(1, self.order + 1):
            keys = self._keys(padded, k)[-n_pred:]
            context = keys // self.base
            if k == 1:
                words, cont = self._continuation[0]  # N1+(. w) per word
                cont_w = _lookup((words, cont), keys)
                n_total = float(cont.sum())  # N1+(. .): distinct bigrams
                n_types = float(len(words))
                prob = (np.maximum(cont_w - d, 0) / n_total
                        + d * n_types / n_total / (self.vocab_size + 1))
                continue
            if k == self.order:
                count = _lookup(self._raw[k - 1], keys)
                total = _lookup(self._context_total, context)
                followers = _lookup(self._top_followers, context)
            else:
                count = _lookup(self._continuation[k - 1], keys)
                total = _lookup(self._continuation_total[k - 1], context)
                followers = _lookup(self._continuation_followers[k - 1], context)
            seen = (followers > 0) & (total > 0)
            safe = np.where(seen, total, 1.0)
            alpha = np.where(seen, np.maximum(count - d, 0) / safe, 0.0)
            gamma = np.where(seen, d * followers / safe, 1.0)
            prob = alpha + gamma * prob
        return np.log2(prob)

    def document_bits(self, docs: Sequence[Sequence[int] | np.ndarray]) -> np.ndarray:
        """Per document, ``-sum log2 p`` of its tokens and its end (bits)."""
        return np.array([-self.log2_probabilities(doc).sum() for doc in docs], dtype=np.float64)
