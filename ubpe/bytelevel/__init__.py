"""Byte-level tokenizers of text: pre-tokenization patterns, the trainer and tiktoken-style BPE.

``patterns`` holds the regexes that cut text into pieces; ``trainer`` fits a byte-level
vocabulary on them; ``specials`` is tiktoken's special-token policy; ``model`` the tokenizer
(:class:`ByteLevelBPE`), token for token identical to tiktoken. Its file formats (ours,
``.tiktoken``, HF ``tokenizer.json``) are in :mod:`ubpe.io`.
"""

from ..errors import DisallowedSpecialTokenError
from .model import ByteLevelBPE
from .patterns import DEFAULT_PATTERN, NATIVE_PATTERNS, PATTERNS, resolve_pattern
from .patterns import code_point_classes, without_surrogates
from .specials import SpecialTokens
from .trainer import fit_bytelevel

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
