"""Hugging Face's ``tokenizer.json``: detection and the export of byte-level vocabularies.

A :class:`~ubpe.models.bytelevel.ByteLevelBPE` is tiktoken's model: text is cut by a regex, each piece
becomes UTF-8 bytes, and the adjacent pair whose concatenation has the lowest rank merges
first. HF ``tokenizers`` runs the same loop with two differences that the export bridges:

* its vocabulary holds *strings*, so every byte is written as a printable character by
  GPT-2's byte table (:mod:`ubpe.text.byte_chars`) (``" "`` -> ``"Ġ"``), which its ``ByteLevel``
  pre-tokenizer and decoder apply and undo;
* it merges only pairs listed in ``merges``, by their place in that list, while tiktoken
  merges any two adjacent pieces whose concatenation is a token. So each token gets one merge
  for *every* split of its bytes into two tokens, all at the token's rank (the order in which
  the tiktoken loop would form it); splits of one token are ordered by the ranks of their
  halves. A piece that is itself a token is emitted whole by both (``ignore_merges``).

Pre-tokenization is a ``Split`` with the same regex (HF runs it in Oniguruma, we in
``regex``: pick a pattern both read the same way - the ``gpt2`` preset does) followed by
``ByteLevel(use_regex=False)``.

>>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"bc": 257, b"abc": 258}
>>> from ubpe.io.write.hf import merges_from_ranks
>>> merges_from_ranks(ranks)          # "abc" can be made from ab+c and from a+bc
[('a', 'b', 256), ('b', 'c', 257), ('a', 'bc', 258), ('ab', 'c', 258)]
"""

from __future__ import annotations

import os

from .format import Format
from .sniff import hf as detect

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

N_BYTES = 256




def tokenizer_json(tokenizer: Any) -> dict[str, Any]:
    """The ``tokenizer.json`` document of ``tokenizer``: :func:`ubpe.io.write.hf.tokenizer_json`
    (byte-level models go through :func:`ranks_json`).

    >>> from ubpe import ByteLevelBPE
    >>> tok = ByteLevelBPE().fit(["low lower lowest"] * 3, n_tokens=260, pattern="gpt2", quiet=True)
    >>> doc = tokenizer_json(tok)
    >>> doc["model"]["type"], len(doc["model"]["vocab"]), doc["model"]["merges"][0]
    ('BPE', 260, ['o', 'w'])
    """
    from .write.hf import tokenizer_json as document  # the writers import numpy: here, not at import

    return document(tokenizer)


def save_tokenizer_json(tokenizer: Any, path: str | os.PathLike) -> None:
    """Write :func:`tokenizer_json` of ``tokenizer`` to ``path`` (atomically).

    The file loads with ``tokenizers.Tokenizer.from_file(path)``.
    """
    from .write.hf import write

    write(tokenizer, path)


def read(path: str | os.PathLike) -> Any:
    """The tokenizer of an HF ``tokenizer.json`` (:func:`ubpe.io.hf_import.read`)."""
    from .hf_import import read as read_tokenizer_json

    return read_tokenizer_json(path)


FORMAT = Format("hf", "HF tokenizer.json", detect, read, save_tokenizer_json)
