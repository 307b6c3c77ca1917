"""The pieces HF's models share when the kernel runs a program of their pre-tokenizer's steps
(`PreTokenizer.native`): the program as the kernel's `Scan` (:func:`_program_scan`), what
``describe()`` says of who splits (:func:`_pre_tokenization`), and the batch calls of a model
whose scanner holds only such a program (:class:`_ProgramBatch`). A module of its own, below
the character models (`ubpe.models.hf_char`), the byte-level ones (`ubpe.models.hf`) and the
end-of-word ones (`ubpe.models.hf_clip`), so that a load of one family imports none of the
others' modules.

>>> _pre_tokenization(None, "a Metaspace among several steps")
'python (a Metaspace among several steps)'
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

    from .scan import Scan

__all__ = ["_ProgramBatch", "_pre_tokenization", "_program_scan"]


def _program_scan(found: tuple) -> tuple[Scan | None, str | None]:
    """``(scan, reason)`` of `PreTokenizer.native`'s ``(program, reason)``: the program as the
    kernel's `Scan`, or None and why Python splits."""
    program, reason = found
    if program is None:
        return None, reason
    from .scan import Scan

    return Scan(0, program=program), None


def _pre_tokenization(scan: Scan | None, reason: str | None) -> str:
    """What ``describe()`` says about who splits the text: the kernel's scanner, the kernel's
    program of HF's steps (both without the GIL), or HF's steps in Python (and why)."""
    if scan is None:
        return f"python ({reason})"
    return "native program" if scan.program is not None else "native scanner"


@functools.lru_cache(maxsize=1)
def _imported_bpe() -> type:
    """`ubpe.models.ranked_bpe.ImportedBPE`, imported when a batch or the word path first needs
    its kernel calls (a load of a character model does not)."""
    from .ranked_bpe import ImportedBPE

    return ImportedBPE


class _ProgramBatch:
    """What ImportedBPE's chunked batch asks of a model whose ``_scanner`` holds only a program
    of the pre-tokenizer's steps (`PreTokenizer.native`): its kernel call (ImportedBPE's), no
    long documents cut."""

    def _scan_encode(self, data: bytes, lengths: Any, skip: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        return _imported_bpe()._scan_encode(self, data, lengths, skip)

    def _scan_ids(self, text: str) -> list[int]:
        return self._text_ids(self._scanner)(text)

    def _text_ids(self, scan: Scan) -> Any:
        return _imported_bpe()._text_ids(self, scan)

    def _passes(self, compile: bool = True) -> None:
        return None  # llama.cpp's lists of regexes are GGUF's (`ImportedBPE._passes`)

    def _cuttable(self, parse_special: bool) -> None:
        return None  # a cut between two of the program's words is not proven
