"""How the kernel's scanner splits a model's text (:class:`Scan`), and the words that become one
token whole (:func:`whole_words`): shared by the byte-level models (`ubpe.models.ranked_bpe`)
and HF's character models (`ubpe.models.hf_char`), in a module of their own so that a
character model's load does not import the byte-level model (its scanner's class tables,
the regex VM's compiler, llama.cpp's pre-tokenizers: ~14 M instructions of a cold load).
"""

from __future__ import annotations

from array import array
from .._fntools import namedtuple  # (collections.namedtuple without exec: ubpe._fntools)
from itertools import accumulate

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Scan", "whole_words"]


class Scan(namedtuple("Scan", "pattern single_digits prefix_space program", defaults=(False, False, None))):
    """How the kernel's scanner splits a model's text: by a preset ``pattern`` of
    `ubpe_native._pretokenize`, with every number code point cut out on its own
    (``single_digits``: Qwen2's ``\\p{N}`` where Llama 3's pattern has ``\\p{N}{1,3}``, the
    one alternative that matches a number), after a blank put in front of a text that has none
    (``prefix_space``: HF's ``ByteLevel(add_prefix_space=true)``), or by a ``program`` of HF's
    pre-tokenizer steps. (`collections`' named tuple: `typing.NamedTuple` compiles each
    field's annotation, ~0.5 ms of a load.)"""

    __slots__ = ()

    pattern: int
    single_digits: bool  # (default: False)
    prefix_space: bool  # (default: False)
    #: an `ubpe_native._hf_pretok.HFPreTokenizer` that gives the words instead of ``pattern``
    #: (HF's multi-step pre-tokenizers; ``pattern`` is then not read; default: None)
    program: Any


def whole_words(words: list[tuple[bytes | None, int]]) -> tuple[bytes, array, array]:
    """``(blob, offsets, ids)`` of the (bytes, id) words that have bytes, as `PairMerges`
    takes words that become one token (llama.cpp's ``ignore_merges``)."""
    raws, ids = [raw for raw, _ in words if raw], [i for raw, i in words if raw]
    return b"".join(raws), array("q", accumulate(map(len, raws), initial=0)), array("i", ids)
