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
    "hf:unigram": "HF Unigram",
    "hf:wordlevel": "HF WordLevel",
    "minbpe": "minbpe",
    "clip": "CLIP",
}

#: the formats of the table, in order (every format ubpe writes)
TARGETS = ("ubpe", "ubpe030", "hf", "sentencepiece", "gguf", "tiktoken", "minbpe")

_SENTENCEPIECE = ("gguf:llama", "spm:bpe", "spm:unigram", "gguf:t5")
#: the families read from a tokenizer.json (model_view.HF_FAMILIES: no numpy here)
_HF = ("hf:bytelevel", "hf:bytelevel-suffix", "hf:bpe", "hf:wordpiece", "hf:unigram", "hf:wordlevel")
#: (families) each format holds; a family not listed gets the format's reason
_HOLDS: dict[str, tuple[str, ...]] = {
    "ubpe": ("universal", "classic", "bytelevel"),
    "ubpe030": ("universal", "classic"),
    "hf": ("classic", "bytelevel", "tekken", "gguf:gpt2", "gguf:gemma4", *_SENTENCEPIECE, *_HF),
    "sentencepiece": ("classic", *_SENTENCEPIECE),
    "gguf": ("classic", "bytelevel", "gguf:gpt2", "gguf:bert", "gguf:gemma4", *_SENTENCEPIECE),
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
    ("gguf:bert", "gguf"): "lowercase, accents stripped (what llama.cpp's WPM does)",
}
_NO_WRITER = "ubpe has no writer from this family to this format (keep the source file)"
_UNIVERSAL = "tf-idf top-n over all segmentations has no merge-list form"
_BYTE_TOKENS = "its tokens are bytes (parts of a character have no piece text)"
_NOT_BYTE_LEVEL = "a .tiktoken file holds byte-level tokens by tiktoken's rule"
_MERGE_LIST = "tiktoken merges any pair whose concatenation is a token; this model merges by its own list"
_PIPELINE = "its tokenizer.json pipeline (normalizers, pre-tokenizers) is no rule of the target's own"
#: byte-level families (a sentencepiece piece is text)
_BYTE_LEVEL = ("bytelevel", "tekken", "gguf:gpt2", "minbpe", "clip", "hf:bytelevel", "hf:bytelevel-suffix")
#: families whose text rules no other system has, and which (one line each)
_OWN_TEXT_RULES = {
    "gguf:bert": "llama.cpp's WPM text rules (every mark dropped, ASCII symbols kept apart) are no other "
                 "system's normalizer",
    "clip": "open_clip cleans text with ftfy and HTML unescaping, which no other system's normalizer does",
}
#: the reasons of single cells (family, format)
_CELL_REASONS = {
    ("tekken", "gguf"): "llama.cpp names no pre-tokenizer with tekken's pattern",
    ("gguf:gemma4", "sentencepiece"): "gemma4 merges by list rank within lines; sentencepiece merges by piece "
                                      "score across a whole text",
}
_TARGET_REASONS = {
    "ubpe030": "ubpe 0.3.0 JSON holds universal and classic models (UBPE, UBPEClassic)",
    "ubpe": "ubpe's format holds the models ubpe fits; this one is read-only (keep the source file)",
    "minbpe": "minbpe ids are the 256 bytes, then one merge per id in creation order",
}


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
    if target == "tiktoken":
        return _MERGE_LIST if variant in _BYTE_LEVEL else _NOT_BYTE_LEVEL
    if variant == "universal":
        return _UNIVERSAL
    if (variant, target) in _CELL_REASONS:
        return _CELL_REASONS[variant, target]
    if variant in _OWN_TEXT_RULES and target in ("hf", "sentencepiece"):
        return _OWN_TEXT_RULES[variant]
    if target in _TARGET_REASONS:
        return _TARGET_REASONS[target]
    if target == "sentencepiece" and variant in _BYTE_LEVEL:
        return _BYTE_TOKENS
    if variant in _HF:
        return _PIPELINE
    return _NO_WRITER


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


def conversion_table(grouped: bool = False, legend: bool = True) -> str:
    """The Markdown table family x format: ✓ where the format holds the family (``✓ 1``: when
    the model meets note 1's condition), else ``✗`` and the letter of the reason; the notes
    and reasons follow the table unless ``legend`` is false. ``grouped``: families whose rows
    are the same share one (the README's shorter table).

    >>> print(conversion_table().splitlines()[0][:40])
    | from \\ to | ubpe | ubpe030 | hf | sent
    >>> len(conversion_table(grouped=True).splitlines()) < len(conversion_table().splitlines())
    True
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
    titles: dict[tuple[str, ...], list[str]] = {}
    for variant, title in FAMILIES.items():
        cells = tuple(cell(variant, target) for target in TARGETS)
        titles.setdefault(cells if grouped else (variant, *cells), []).append(title)
    rows = [f"| {', '.join(names)} | " + " | ".join(cells[-len(TARGETS):]) + " |" for cells, names in titles.items()]
    legend_lines = [f"{k}. {note}" for k, note in enumerate(notes, start=1)]
    legend_lines += [f"{chr(ord('a') + k)}. {reason}" for k, reason in enumerate(reasons)]
    if not legend:
        return "\n".join([header, rule, *rows])
    return "\n".join([header, rule, *rows, "", *[f"- {line}" for line in legend_lines]])


__all__ = ["FAMILIES", "TARGETS", "CONDITIONS", "CannotWrite", "conversion_table", "format_for", "why_not"]
