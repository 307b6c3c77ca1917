"""The pre-tokenization presets as text, in a module of their own that imports nothing.

What a file reader needs to name a pattern (``ubpe.io.tiktoken``, ``ubpe.io.tekken``) without
:mod:`ubpe.text.patterns`, which compiles patterns and imports `regex` and the kernels (what
detecting a file's format must not pay). :mod:`ubpe.text.patterns` re-exports both names.

>>> DEFAULT_PATTERN in PATTERNS, sorted(PATTERNS)
(True, ['cl100k', 'gpt2', 'llama3', 'o200k'])
"""

from __future__ import annotations

# The pre-tokenization patterns of tiktoken's encodings (tiktoken_ext/openai_public.py) and of
# Meta's Llama 3 tokenizer, character for character.
PATTERNS: dict[str, str] = {
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "cl100k": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    "llama3": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
}
DEFAULT_PATTERN = "cl100k"
