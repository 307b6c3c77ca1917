"""``ubpe convert``: a model from one file format to another (all format code is in :mod:`ubpe.io`).

Any format ubpe reads to any format that can hold the model (:func:`ubpe.io.write.why_not`);
where the target cannot, one line says why and the exit code is 2 (as for bad usage): the
conversion is not possible, whatever the input's contents."""

from __future__ import annotations

import argparse
import sys

from ..text.patterns import PATTERNS
from ..io import FORMATS, detect, save
from ..errors import InvalidParameterError
from ..io.write import format_for
from .inputs import PROG, check_output, load_model

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

# presets checked to split held-out text of several scripts identically in HF tokenizers once
# written (cl100k's possessive interval as an atomic group: tests/spec/test_writers.py)
HF_SAFE_PATTERNS = frozenset({PATTERNS["gpt2"], PATTERNS["llama3"], PATTERNS["cl100k"], PATTERNS["o200k"]})
#: the exit code of a conversion the target format cannot hold
EXIT_CANNOT_HOLD = 2


def run(args: argparse.Namespace) -> int:
    source = detect(args.input)
    model = load_model(args.input, variant=args.variant, pattern=args.pattern)
    target = args.to or infer_target(source, args.output, model)
    if target == "hf" and args.pattern and model.variant == "bytelevel":
        model = model.with_pattern(args.pattern)
    check_output(args.output)
    try:
        save(model, args.output, target)
    except InvalidParameterError as refusal:  # CannotWrite, or a writer's refusal of this model
        print(f"{PROG}: error: cannot convert: {' '.join(str(refusal).split())}", file=sys.stderr)
        return EXIT_CANNOT_HOLD
    if target == "hf" and model.variant == "bytelevel" and model.pattern not in HF_SAFE_PATTERNS and not args.quiet:
        print(f"{PROG}: warning: HF tokenizers reads regexes with Oniguruma; only the gpt2, llama3, cl100k "
              "and o200k presets are checked to split text as ours does (use --pattern gpt2)", file=sys.stderr)
    if not args.quiet:
        print(f"{PROG}: {args.input} ({FORMATS[source].title}, {model.variant}) -> "
              f"{args.output} ({FORMATS[target].title})", file=sys.stderr)
    return 0


def infer_target(source: str, output: str, model: Any) -> str:
    """The output format when ``--to`` is not given: by the output's name
    (:func:`ubpe.io.write.format_for`: ``tokenizer.json``, ``.model``, ``.gguf``,
    ``.tiktoken``), else the other JSON format (ubpe 0.3.0 <-> ours) where the model fits it."""
    target = format_for(output, model.variant)
    if target == "ubpe" and source == "ubpe" and model.variant in ("universal", "classic"):
        return "ubpe030"
    return target
