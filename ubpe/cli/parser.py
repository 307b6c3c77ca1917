"""The command line's parser: one sub-command per module of :mod:`ubpe.cli`.

Each sub-command's arguments are added by its own builder (``_fit``, ``_encode``...), which
imports what its options name (presets, encoders, formats) and its command's module.
``build_parser(only)`` builds one sub-command's parser alone: ``ubpe encode`` imports neither
the fitting code, the writers nor the lab, nor builds seven parsers it does not use (a one-shot
call costs the reader it uses, not the whole package: issue 36). Help is formatted to the
terminal's width as argparse's own formatter does, read without importing ``shutil`` (and the
three compression modules it imports: ~3 ms of a one-shot call, for a width only a help needs).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from .._version import __version__
from ..errors import InvalidParameterError
from .inputs import DOCS_PER, PROG

# inspect: how many rows the listings show by default
DEFAULT_TOP = 10


def _input_options(parser: argparse.ArgumentParser, *, docs_per_default: str = "line") -> None:
    parser.add_argument("inputs", nargs="*", metavar="INPUT",
                        help="text files, directories (recursive) or '-' for stdin; default: stdin")
    parser.add_argument("--text", action="append", metavar="DOC",
                        help="a document given on the command line (repeatable)")
    parser.add_argument("--docs-per", choices=DOCS_PER, default=docs_per_default,
                        help=f"what one document is in a text file (default: {docs_per_default})")
    parser.add_argument("--glob", default="*", help="which files of a directory to read (default: '*')")


class _EncoderNames:
    """The registered encoders' names, looked up when a help text is printed (``%s``): the
    registry imports every encoder module, which a call that prints no help does not need."""

    def __str__(self) -> str:
        from ..encoders import available_encoders

        return ", ".join(available_encoders())


def _encoder_options(parser: argparse.ArgumentParser) -> None:
    action = parser.add_argument("--encoder", metavar="NAME",
                                 help="one of: %(encoder_names)s (default: the model's own)")
    action.encoder_names = _EncoderNames()  # (argparse formats a help with the action's attributes)
    parser.add_argument("--top-n", type=int, default=1, metavar="N", help="the N best encodings (default: 1)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an encoder option, e.g. p=0.1 or exact=true (repeatable)")


def _weights_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fit-weights", nargs="+", metavar="FILE",
                        help="give a model read from another system's file idf weights from the lines of "
                             "these files first (its scores, tfidf and sample then have weights)")


def _color_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--color", dest="color", action="store_const", const=True, default=None,
                       help="colour token boundaries even when not writing to a terminal")
    group.add_argument("--no-color", dest="color", action="store_const", const=False,
                       help="separate tokens with '|' instead of colours")


def _pattern_arg(value: str) -> str:
    from ..text.patterns import resolve_pattern

    try:
        return resolve_pattern(value)
    except InvalidParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def terminal_columns() -> int:
    """The width help is formatted to, as ``shutil.get_terminal_size`` reads it (``COLUMNS``,
    then standard output's terminal, then 80), less argparse's margin of 2.

    >>> terminal_columns() > 0
    True
    """
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):  # (no standard output, or not a terminal)
            columns = 0
    return (columns or 80) - 2


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, its width from `terminal_columns` (argparse makes one for
    every argument added, to check its metavar, and its own reads the width through
    ``shutil``)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         terminal_columns() if width is None else width)


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose help is formatted by `_Formatter` unless a command asks for
    another (``experiment``'s raw description); its sub-commands' parsers are of this class too."""

    def __init__(self, *args, formatter_class: type = _Formatter, **kwargs) -> None:
        super().__init__(*args, formatter_class=formatter_class, **kwargs)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; ``only`` (a sub-command's name): that sub-command alone
    (what ``main`` builds for one call; ``ubpe --help`` needs them all).

    >>> build_parser("decode").parse_args(["decode", "model.json", "--ids", "5 3"]).ids
    ['5 3']
    """
    parser = _Parser(
        prog=PROG,
        description="Universal Byte-Pair Encoding: fit, encode, inspect and compare tokenizers.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error instead of one line (for bug reports)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (help_text, build) in COMMANDS.items():
        if only is None or name == only:
            build(commands, name, help_text)
    return parser


def command_of(argv: list[str]) -> str | None:
    """The sub-command ``argv`` names (the first word that is not an option: the top-level
    options take no value), or None; None too when a help option comes before it (``ubpe
    --help encode`` prints the top-level help, which lists every command).

    >>> command_of(["--debug", "encode", "model.json"]), command_of(["--version"]), command_of(["-h", "encode"])
    ('encode', None, None)
    """
    for word in argv:
        if word in ("-h", "--help"):
            return None
        if not word.startswith("-"):
            return word
    return None


def _fit(commands: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from ..models.bytelevel import ByteLevelBPE
    from ..models.ubpe import CLASSIC, DEFAULT_N_TOKENS, UNIVERSAL
    from ..text.presets import PATTERNS
    from . import fit as fit_cmd

    fit = commands.add_parser(
        name, help=help_text,
        description="Fit a model and write it to -o (our format; .tiktoken for byte-level).")
    fit.add_argument("inputs", nargs="*", metavar="INPUT",
                     help="text files, directories, .npy arrays, or '-' for stdin (default: stdin)")
    fit.add_argument("-o", "--output", required=True, metavar="MODEL", help="where to write the model")
    fit.add_argument("--variant", choices=(UNIVERSAL, CLASSIC, ByteLevelBPE.variant), default=UNIVERSAL,
                     help="default: universal")
    fit.add_argument("--n-tokens", type=int, metavar="N",
                     help=f"vocabulary size, alphabet included (default: {DEFAULT_N_TOKENS})")
    fit.add_argument("--n-candidates", type=int, default=50, metavar="K", help="pairs merged per round at most (default: 50)")
    split = fit.add_mutually_exclusive_group()
    split.add_argument("--regex", help="split text into parts by this regex before fitting")
    split.add_argument("--pattern", choices=sorted(PATTERNS),
                       help="a preset regex (byte-level default: gpt2)")
    fit.add_argument("--break-tokens", metavar="SYMBOLS",
                     help=r"symbols that cut documents into parts, e.g. ' \n' (ints: '0 100')")
    fit.add_argument("--stop-tokens", metavar="SYMBOLS", help="like --break-tokens, applied after the regex")
    fit.add_argument("--known-words", metavar="FILE", help="a file of known words, one per line (each gets its own id)")
    fit.add_argument("--alphabet", metavar="SPEC",
                     help="the symbols, e.g. 'abc' (ints: a size N); default: every symbol seen")
    fit.add_argument("--special-token", action="append", metavar="TEXT", help="byte-level: a special token (repeatable)")
    fit.add_argument("--ints", action="store_true",
                     help="inputs are integer sequences, one per line (.npy inputs always are)")
    fit.add_argument("--docs-per", choices=DOCS_PER, default="line", help="what one document is (default: line)")
    fit.add_argument("--glob", default="*", help="which files of a directory to read (default: '*')")
    where = fit.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="count the corpus on the Dask cluster of this scheduler (tcp://host:8786); "
                            'needs pip install "ubpe[dask]"')
    where.add_argument("--workers", type=int, metavar="N",
                       help="count the corpus on a local Dask cluster of N worker processes")
    fit.add_argument("-q", "--quiet", action="store_true", help="no progress bars nor summary")
    fit.set_defaults(handler=fit_cmd.run)


def _encode(commands: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from . import encode as encode_cmd

    encode = commands.add_parser(
        name, help=help_text,
        description="Encode each document; one line of output per document.")
    encode.add_argument("model", help="a model file")
    _input_options(encode)
    encode.add_argument("--ints", action="store_true", help="documents are integer sequences")
    _encoder_options(encode)
    encode.add_argument("--format", choices=("plain", "json"), default="plain",
                        help="plain: ids per line (top-n: 'score<TAB>ids' lines, blank line after each document); json: one record per document")
    encode.add_argument("--view", action="store_true", help="show token boundaries instead of ids")
    encode.add_argument("--rerank", choices=("fewest", "mean_frequency"),
                        help="re-order the top-n alternatives: fewest tokens, or highest mean token frequency")
    _color_options(encode)
    encode.set_defaults(handler=encode_cmd.run)


def _decode(commands: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from . import decode as decode_cmd

    decode = commands.add_parser(
        name, help=help_text,
        description="Decode one sequence of ids per line (plain, JSON list, or encode's JSON records).")
    decode.add_argument("model", help="a model file")
    decode.add_argument("inputs", nargs="*", metavar="INPUT", help="files of ids or '-' (default: stdin)")
    decode.add_argument("--ids", action="append", metavar="IDS", help="ids given on the command line, e.g. '5 3 9'")
    decode.add_argument("--format", choices=("plain", "json"), default="plain",
                        help="plain: one document per line; json: one JSON value per line")
    decode.set_defaults(handler=decode_cmd.run)


def _view(commands: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from . import view as view_cmd

    view = commands.add_parser(name, help=help_text)
    view.add_argument("model", help="a model file")
    _input_options(view)
    view.add_argument("--ints", action="store_true", help="documents are integer sequences")
    _encoder_options(view)
    _weights_option(view)
    view.add_argument("--html", metavar="FILE", help="write a self-contained HTML page instead")
    _color_options(view)
    view.add_argument("-q", "--quiet", action="store_true")
    view.set_defaults(handler=view_cmd.run)


def _inspect(commands: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from . import inspect as inspect_cmd

    inspect = commands.add_parser(name, help=help_text)
    inspect.add_argument("model", help="a model file")
    inspect.add_argument("--top", type=_at_least_one, default=DEFAULT_TOP, metavar="K", help=f"rows per listing (default: {DEFAULT_TOP})")
    inspect.add_argument("--tree", action="append", metavar="TOKEN",
                         help="the merge tree of a token, by id or by piece (repeatable)")
    inspect.add_argument("--coverage", nargs="+", metavar="FILE", help="encode these files and report tokens per symbol")
    inspect.add_argument("--encoder", metavar="NAME", help="encoder for --coverage (default: the model's own)")
    inspect.add_argument("--ambiguity", nargs="+", metavar="FILE",
                         help="per document of these files: segmentations, entropy, probability of the model's encoding")
    inspect.add_argument("--temperature", type=float, default=1.0, help="for --ambiguity (default: 1)")
    inspect.add_argument("--docs-per", choices=DOCS_PER, default="line")
    inspect.add_argument("--glob", default="*")
    inspect.add_argument("--format", choices=("plain", "json"), default="plain")
    inspect.set_defaults(handler=inspect_cmd.run)


def _compare(commands: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from . import compare as compare_cmd

    compare = commands.add_parser(
        name, help=help_text,
        description="Encode one document (a whole file, '-' or --text) with several encoders.")
    compare.add_argument("model", help="a model file")
    compare.add_argument("inputs", nargs="*", metavar="INPUT", help="one file or '-'")
    compare.add_argument("--text", action="append", metavar="DOC", help="the document")
    compare.add_argument("--ints", action="store_true", help="the document is an integer sequence")
    compare.add_argument("--encoders", metavar="A,B,...", help="default: every encoder that needs no options")
    compare.add_argument("--option", action="append", default=[], metavar="[ENCODER.]KEY=VALUE",
                         help="an option for every encoder, or for one (dropout.p=0.2)")
    compare.add_argument("--format", choices=("plain", "json"), default="plain")
    compare.add_argument("--width", type=_at_least_zero, default=compare_cmd.PREVIEW_WIDTH, metavar="N",
                         help=f"cut the segmentation column at N characters (default: {compare_cmd.PREVIEW_WIDTH}; "
                              "0: never cut)")
    _weights_option(compare)
    compare.set_defaults(handler=compare_cmd.run, docs_per="file", glob="*")


def _convert(commands: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from ..io import supported
    from ..models.ubpe import CLASSIC, UNIVERSAL
    from ..text.presets import PATTERNS
    from . import convert as convert_cmd

    convert = commands.add_parser(
        name, help=help_text,
        description="Convert a model. Without --to: the output's name decides (tokenizer.json, .model, .gguf, "
                    ".tiktoken), else ubpe 0.3.0 JSON becomes our format and ours becomes ubpe 0.3.0 JSON. "
                    "A target that cannot hold the model: one line saying why, exit code 2.",
    )
    convert.add_argument("input", help=f"a model file in any format ubpe reads ({', '.join(supported())})")
    convert.add_argument("output")
    convert.add_argument("--to", choices=tuple(supported("write")),
                         help="ubpe: our format; ubpe030: ubpe 0.3.0 JSON; hf: tokenizer.json; sentencepiece: .model; "
                              "gguf: a GGUF vocabulary; tiktoken; minbpe")
    convert.add_argument("--variant", choices=(UNIVERSAL, CLASSIC),
                         help="for ubpe 0.3.0 JSON input (default: guessed from the mapper)")
    convert.add_argument("--pattern", type=_pattern_arg,
                         help="pre-tokenization of a .tiktoken input (default, as ubpe.load: a published file's own, "
                              "else cl100k with a warning), "
                              "or for the HF export: a preset "
                              f"({', '.join(sorted(PATTERNS))}) or a regex")
    convert.add_argument("-q", "--quiet", action="store_true")
    convert.set_defaults(handler=convert_cmd.run)


def _experiment(commands: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from . import experiment as experiment_cmd

    experiment_cmd.add_parser(commands, name, help_text)


#: sub-command -> (its help, the builder of its arguments), in the order ``ubpe --help`` lists them
COMMANDS: dict[str, tuple[str, Callable[[argparse._SubParsersAction, str, str], None]]] = {
    "fit": ("fit a model on text or integer sequences", _fit),
    "encode": ("encode documents to token ids", _encode),
    "decode": ("decode token ids back to documents", _decode),
    "view": ("show where token boundaries fall (terminal or HTML)", _view),
    "inspect": ("vocabulary size, longest tokens, weights, merge trees, coverage, ambiguity", _inspect),
    "compare": ("one document, several encoders side by side", _compare),
    "convert": ("any model file to any format that can hold it (tokenizer.json, .model, GGUF, ...)", _convert),
    "experiment": ("run an experiment config on your own data (init: write an example)", _experiment),
}


def _at_least(least: int, text: str) -> int:
    """An integer >= ``least`` (a usage error, exit 2, otherwise)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
    return value


def _at_least_one(text: str) -> int:
    """An argparse type: an integer >= 1."""
    return _at_least(1, text)


def _at_least_zero(text: str) -> int:
    """An argparse type: an integer >= 0."""
    return _at_least(0, text)
