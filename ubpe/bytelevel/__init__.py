"""Byte-level tokenizers of text: pre-tokenization patterns and tiktoken-style byte-level BPE.

``patterns`` holds the regexes that cut text into pieces; ``model`` the tokenizer that fits and
encodes with them (:class:`ByteLevelBPE`), token for token identical to tiktoken.
"""

from ..errors import DisallowedSpecialTokenError
from .model import ByteLevelBPE, parse_tiktoken
from .patterns import (
    DEFAULT_PATTERN,
    NATIVE_PATTERNS,
    PATTERNS,
    code_point_classes,
    resolve_pattern,
    without_surrogates,
)

__all__ = [
    "ByteLevelBPE",
    "DisallowedSpecialTokenError",
    "DEFAULT_PATTERN",
    "NATIVE_PATTERNS",
    "PATTERNS",
    "code_point_classes",
    "parse_tiktoken",
    "resolve_pattern",
    "without_surrogates",
]
