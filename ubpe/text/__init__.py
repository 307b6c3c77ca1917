"""Text stages before a model: normalizers, pre-tokenizers, special tokens, byte tables, decoders.

Everything here works on text and knows no vocabulary; the models (:mod:`ubpe.models`) and
the file readers (:mod:`ubpe.io`) put these steps in front of a model. One module per job:

* ``patterns`` - the pre-tokenization regexes (presets ``gpt2``, ``cl100k``, ``o200k``,
  ``llama3``, ...) and the code-point classes of the native scanner (the `regex` module's or a
  peer's, ``peer_classes``: tiktoken's, HF tokenizers', llama.cpp's);
* ``scanner`` - the native scanner's piece bounds (``ubpe_native._pretokenize``) for the presets;
* ``pretokenizers`` - llama.cpp's named pre-tokenizers (GGUF ``tokenizer.ggml.pre``);
* ``hf_pipeline`` - Hugging Face ``tokenizer.json`` normalizers, pre-tokenizers, added tokens
  and decoders;
* ``normalizers`` - sentencepiece's normalizer (its ``precompiled_charsmap`` and flags);
* ``specials`` - tiktoken's special-token policy (allowed / disallowed);
* ``byte_chars`` - GPT-2's byte <-> printable-character table.

Our own split pipeline for any sequence (known words, break tokens, regex, stop tokens) is
:mod:`ubpe.splitting`; its native presets come from ``patterns`` here.

>>> from ubpe.text import PATTERNS
>>> "gpt2" in PATTERNS
True
"""

from __future__ import annotations

from .._lazy import lazy_attributes

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from .byte_chars import BYTE_TO_CHAR, CHAR_TO_BYTE, bytes_to_unicode
    from .patterns import DEFAULT_PATTERN, NATIVE_PATTERNS, PATTERNS, code_point_classes, resolve_pattern
    from .specials import SpecialTokens

_LAZY = {
    "BYTE_TO_CHAR": ".byte_chars",
    "CHAR_TO_BYTE": ".byte_chars",
    "bytes_to_unicode": ".byte_chars",
    "DEFAULT_PATTERN": ".patterns",
    "NATIVE_PATTERNS": ".patterns",
    "PATTERNS": ".patterns",
    "code_point_classes": ".patterns",
    "resolve_pattern": ".patterns",
    "SpecialTokens": ".specials",
}

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = list(_LAZY)
