"""Byte-level tokenizers of text: pre-tokenization patterns, the trainer and tiktoken-style BPE.

``patterns`` holds the regexes that cut text into pieces; ``trainer`` fits a byte-level
vocabulary on them; ``specials`` is tiktoken's special-token policy; ``model`` the tokenizer
(:class:`ByteLevelBPE`), token for token identical to tiktoken. Its file formats (ours,
``.tiktoken``, HF ``tokenizer.json``) are in :mod:`ubpe.io`.

The names below are imported from their modules when first used (:pep:`562`): the splitter
reads ``patterns`` without loading the models and the trainer.

>>> from ubpe.bytelevel import PATTERNS
>>> "gpt2" in PATTERNS
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes
from ..errors import DisallowedSpecialTokenError

if TYPE_CHECKING:
    from .model import ByteLevelBPE
    from .patterns import DEFAULT_PATTERN, NATIVE_PATTERNS, PATTERNS, code_point_classes, resolve_pattern
    from .patterns import without_surrogates
    from .specials import SpecialTokens
    from .trainer import fit_bytelevel

_LAZY = {
    "ByteLevelBPE": ".model",
    "DEFAULT_PATTERN": ".patterns",
    "NATIVE_PATTERNS": ".patterns",
    "PATTERNS": ".patterns",
    "code_point_classes": ".patterns",
    "resolve_pattern": ".patterns",
    "without_surrogates": ".patterns",
    "SpecialTokens": ".specials",
    "fit_bytelevel": ".trainer",
}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())


__all__ = [
    "ByteLevelBPE",
    "DisallowedSpecialTokenError",
    "DEFAULT_PATTERN",
    "NATIVE_PATTERNS",
    "PATTERNS",
    "SpecialTokens",
    "code_point_classes",
    "fit_bytelevel",
    "resolve_pattern",
    "without_surrogates",
]
