"""Writers of other systems' formats, and which family each format can hold.

The writers read a tokenizer through :func:`~ubpe.io.write.model_view.view_of` (a small record
per kind of model) and are declared by their format modules (``FORMAT.write`` of
:mod:`ubpe.io.hf`, :mod:`ubpe.io.sentencepiece`, :mod:`ubpe.io.gguf`; ``.tiktoken``, ours,
ubpe 0.3.0 and minbpe write themselves). :data:`FAMILIES` and :func:`why_not` say, per family
and format, whether the format holds the family and, where not, why; :func:`conversion_table`
is that as the table of the README's "Use it elsewhere" (``tests/spec/test_writers.py`` checks
every cell marked as held by writing a model of the family and loading it in the target's own
system, and every refusal by the writer's refusal).
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import InvalidParameterError


class CannotWrite(InvalidParameterError):
    """A format cannot hold this tokenizer (the message says why, in one line)."""


#: the families, by ``variant``, with the title the table shows
FAMILIES: dict[str, str] = {
    "universal": "UBPE (universal)",
    "classic": "UBPEClassic",
    "bytelevel": "ByteLevelBPE / .tiktoken",
    "tekken": "tekken",
    "gguf:gpt2": "GGUF gpt2",
    "gguf:llama": "GGUF llama (SPM)",
    "spm:bpe": "sentencepiece BPE",
    "spm:unigram": "sentencepiece unigram",
    "gguf:t5": "GGUF t5 (UGM)",
    "gguf:bert": "GGUF bert (WPM)",
    "gguf:gemma4": "GGUF gemma4",
    "hf:bytelevel": "HF byte-level BPE",
    "hf:bytelevel-suffix": "HF byte-level BPE (suffix)",
    "hf:bpe": "HF BPE",
    "hf:wordpiece": "HF WordPiece",
    "minbpe": "minbpe",
    "clip": "CLIP",
}

#: the formats of the table, in order (every format ubpe writes)
TARGETS = ("ubpe", "ubpe030", "hf", "sentencepiece", "gguf", "tiktoken", "minbpe")

_SENTENCEPIECE = ("gguf:llama", "spm:bpe", "spm:unigram", "gguf:t5")
#: (families) each format holds; a family not listed gets the format's reason
_HOLDS: dict[str, tuple[str, ...]] = {
    "ubpe": ("universal", "classic", "bytelevel"),
    "ubpe030": ("universal", "classic"),
    "hf": ("classic", "bytelevel", "tekken", "gguf:gpt2", *_SENTENCEPIECE),
    "sentencepiece": ("classic", *_SENTENCEPIECE),
    "gguf": ("classic", "bytelevel", "gguf:gpt2", *_SENTENCEPIECE),
    "tiktoken": ("bytelevel", "tekken"),
    "minbpe": ("bytelevel", "minbpe"),
}
#: cells that hold the family when the model meets a condition (the writer refuses, saying
#: why, otherwise): the table's footnotes
CONDITIONS: dict[tuple[str, str], str] = {
    **{("classic", target): "no regex, break/stop tokens or known words, each piece under one id; the "
                            "target gives the ids of ubpe's `ranked` encoder (priority=\"id\", standard "
                            "BPE), not of 0.3.0's batched `classic` steps, which no merge list expresses"
       for target in ("hf", "sentencepiece", "gguf")},
    ("bytelevel", "gguf"): "a pattern llama.cpp names (gpt2, llama3, qwen2...)",
    ("spm:bpe", "gguf"): "no normalization (identity rule, no whitespace clean-up)",
    ("bytelevel", "minbpe"): "ids in creation order (fitted by ubpe, or read from minbpe)",
}
_READ_ONLY = "ubpe has no writer for this family (read-only: keep the source file)"
_UNIVERSAL = "tf-idf top-n over all segmentations has no merge-list form"
_BYTE_TOKENS = "its tokens are bytes (parts of a character have no piece text)"
_NOT_BYTE_LEVEL = "a .tiktoken file holds byte-level tokens by tiktoken's rule"


def why_not(variant: str, target: str) -> str | None:
    """``None`` if the format ``target`` holds a model of the family ``variant``, else why not
    (one line).

    >>> why_not("spm:unigram", "hf") is None, why_not("universal", "hf")
    (True, 'tf-idf top-n over all segmentations has no merge-list form')
    """
    if variant in _HOLDS.get(target, ()):
        return None
    if variant not in FAMILIES:
        return f"unknown family {variant!r}"
    if target == "tiktoken" and variant in ("universal", "classic", *_SENTENCEPIECE):
        return _NOT_BYTE_LEVEL
    if variant == "universal":
        return _UNIVERSAL
    if not any(variant in families for families in _HOLDS.values()):
        return _READ_ONLY
    if target == "tiktoken":
        return _NOT_BYTE_LEVEL
    if target == "sentencepiece":
        return _BYTE_TOKENS
    if target == "ubpe030":
        return "ubpe 0.3.0 JSON holds universal and classic models (UBPE, UBPEClassic)"
    if target == "ubpe":
        return "ubpe's format holds the models ubpe fits (keep the source file)"
    if target == "minbpe":
        return "minbpe ids are the 256 bytes, then one merge per id in creation order"
    if target == "gguf" and variant == "tekken":
        return "llama.cpp names no pre-tokenizer with tekken's pattern"
    return _READ_ONLY


#: the format a file name asks for, by suffix (``tokenizer.json`` by name); other names: ours
SUFFIXES = {".gguf": "gguf", ".tiktoken": "tiktoken", ".model": "sentencepiece"}
HF_FILE_NAME = "tokenizer.json"


def format_for(path: str | os.PathLike, variant: str) -> str:
    """The format of a file named ``path`` for a model of the family ``variant``:
    ``tokenizer.json`` -> ``hf``, ``.gguf``, ``.tiktoken``, ``.model`` (sentencepiece, or
    minbpe for the families only minbpe holds), any other name -> ours (``ubpe``).

    >>> format_for("out/tokenizer.json", "classic"), format_for("m.model", "bytelevel"), format_for("m.json", "classic")
    ('hf', 'minbpe', 'ubpe')
    """
    name = Path(path).name
    if name == HF_FILE_NAME:
        return "hf"
    target = SUFFIXES.get(Path(name).suffix, "ubpe")
    if target == "sentencepiece" and why_not(variant, "sentencepiece") and why_not(variant, "minbpe") is None:
        return "minbpe"
    return target


def conversion_table() -> str:
    """The Markdown table family x format: ✓ where the format holds the family (``✓ 1``: when
    the model meets note 1's condition), else ``✗`` and the letter of the reason; the notes
    and reasons follow the table.

    >>> print(conversion_table().splitlines()[0][:40])
    | from \\ to | ubpe | ubpe030 | hf | sent
    """
    notes = list(dict.fromkeys(CONDITIONS.values()))
    reasons: list[str] = []

    def cell(variant: str, target: str) -> str:
        reason = why_not(variant, target)
        if reason is not None:
            if reason not in reasons:
                reasons.append(reason)
            return f"✗ {chr(ord('a') + reasons.index(reason))}"
        condition = CONDITIONS.get((variant, target))
        return "✓" if condition is None else f"✓ {notes.index(condition) + 1}"

    header = "| from \\ to | " + " | ".join(TARGETS) + " |"
    rule = "|" + "---|" * (len(TARGETS) + 1)
    rows = [f"| {title} | " + " | ".join(cell(variant, target) for target in TARGETS) + " |"
            for variant, title in FAMILIES.items()]
    legend = [f"{k}. {note}" for k, note in enumerate(notes, start=1)]
    legend += [f"{chr(ord('a') + k)}. {reason}" for k, reason in enumerate(reasons)]
    return "\n".join([header, rule, *rows, "", *[f"- {line}" for line in legend]])


__all__ = ["FAMILIES", "TARGETS", "CONDITIONS", "CannotWrite", "conversion_table", "format_for", "why_not"]
