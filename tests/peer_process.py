"""HF ``tokenizers`` run in a process of its own, for the tests that run it over many texts.

``tokenizers`` 0.23 keeps memory after a ``Tokenizer`` that encoded is dropped: measured with
glibc's ``mallinfo2`` (bytes in use, after ``gc.collect`` and ``malloc_trim``), each of the
17 test files built, encoded over the ~6,000 held-out lines and deleted leaves 11-15 MB in use;
``model._clear_cache()`` before the delete changes nothing, and ubpe's own models leave none.
In one test process that came to ~400 MB by the end of ``test_hf_import``, which every later
module carried. The peer runs here in a spawned child that ends with the module that uses it
(a module-scoped fixture), so what it keeps is handed back with the child.

>>> with HFPeer() as peer:  # doctest: +SKIP
...     peer.ids("tokenizer.json", ["a b"])
[[64, 275]]
"""

from __future__ import annotations

import functools
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


class HFPeer:
    """``tokenizers.Tokenizer`` calls made in a child process: a file by its path, or a
    tokenizer by its JSON text (``Tokenizer.from_str``)."""

    def __init__(self) -> None:
        self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))

    def ids(self, source: str | Path, texts: Sequence[str], add_special: bool = False) -> list[list[int]]:
        """``[e.ids for e in Tokenizer.encode_batch(texts, add_special_tokens=add_special)]``."""
        return self._pool.submit(_ids, str(source), list(texts), add_special).result()

    def decode(self, source: str | Path, ids: Sequence[Sequence[int]], skip_special: bool = True) -> list[str]:
        """``Tokenizer.decode`` of each list of ids."""
        return self._pool.submit(_decode, str(source), [list(i) for i in ids], skip_special).result()

    def close(self) -> None:
        self._pool.shutdown()

    def __enter__(self) -> HFPeer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@functools.lru_cache(maxsize=2)
def _tokenizer(source: str):
    import tokenizers

    if source.lstrip().startswith("{"):
        return tokenizers.Tokenizer.from_str(source)
    return tokenizers.Tokenizer.from_file(source)


def _ids(source: str, texts: list[str], add_special: bool) -> list[list[int]]:
    return [e.ids for e in _tokenizer(source).encode_batch(texts, add_special_tokens=add_special)]


def _decode(source: str, ids: list[list[int]], skip_special: bool) -> list[str]:
    return _tokenizer(source).decode_batch(ids, skip_special_tokens=skip_special)
