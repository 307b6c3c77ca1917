"""Bridges to the tools models are trained with (the optional ``[transformers]`` extra).

* :mod:`ubpe.integrations.transformers` - :class:`~ubpe.integrations.transformers.UBPETokenizer`,
  a ``transformers`` ``PreTrainedTokenizer`` that runs any ubpe tokenizer with any encoder, and
  :func:`~ubpe.integrations.transformers.fast_tokenizer`, a ``PreTrainedTokenizerFast`` from
  the ``tokenizer.json`` that :func:`ubpe.io.save` writes (classic encodings);
* :mod:`ubpe.integrations.datasets` - :func:`~ubpe.integrations.datasets.tokenize_function`,
  a picklable function for ``datasets.Dataset.map``.

Neither module is imported by ``import ubpe``: each imports its library when imported.
"""

from __future__ import annotations

from typing import Any

from ..errors import NotFittedError

#: encoders that draw at random: each call (a text, a batch) gets a seed drawn from the one given
STOCHASTIC_ENCODERS = frozenset({"sample", "dropout"})


def is_fitted(model: Any) -> bool:
    """Whether ``model`` is a ubpe tokenizer with a vocabulary.

    >>> from ubpe import UBPE
    >>> is_fitted(UBPE(alphabet="ab", n_tokens=4)), is_fitted("not a tokenizer")
    (False, False)
    """
    try:
        return getattr(model, "vocabulary", None) is not None
    except NotFittedError:
        return False


__all__ = ["STOCHASTIC_ENCODERS", "is_fitted"]
