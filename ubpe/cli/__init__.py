"""The ``ubpe`` command line: fit, encode, decode, view, inspect, compare, convert, experiment.

Run ``ubpe --help`` (or ``python -m ubpe --help``) and ``ubpe COMMAND --help``::

    ubpe fit corpus/ -o model.json --n-tokens 2000 --break-tokens ' \\n'
    echo "the cat sat" | ubpe encode model.json --view
    ubpe encode model.json --text "the cat" --top-n 3 --format json
    ubpe encode model.json --text "the cat" | ubpe decode model.json
    ubpe inspect model.json --tree 120 --coverage heldout.txt
    ubpe compare model.json --text "the cat sat on the mat"
    ubpe convert reference.json ours.json            # ubpe 0.3.0 JSON -> our format
    ubpe convert bytes.json tokenizer.json --to hf    # byte-level -> HF tokenizers
    ubpe view model.json notes.txt --html notes.html --top-n 3
    ubpe experiment init && ubpe experiment experiment.toml --results out/

One module per command (``fit``, ``encode``, ``decode``, ``view``, ``inspect``, ``compare``,
``convert``, ``experiment``: the engine of `ubpe.lab`), each with a ``run(args)``; ``inputs`` reads documents, ids and options;
``parser`` builds the argument parser. Models are read and written by :mod:`ubpe.io` (any
format it knows) and used through the :class:`~ubpe.models.base.Tokenizer` contract. Errors
in the input are one line on stderr (``ubpe: error: ...``) with exit code 1; usage errors
exit with 2 (argparse); a bug in ubpe (any other exception) is one line too, asking for a
report, with exit code 70 (``EX_SOFTWARE``). ``--debug`` (or ``UBPE_TRACEBACK=1``) shows the
traceback instead.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence

from ..errors import UBPEError
from .inputs import PROG
from .parser import COMMANDS, build_parser, command_of

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
EXIT_BUG = 70  # sysexits' EX_SOFTWARE: an internal error
EXIT_INTERRUPTED = 130
# set this environment variable to see tracebacks instead of one-line errors
TRACEBACK_ENV = "UBPE_TRACEBACK"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit code:
    0 ok, 1 bad input (one line on stderr), 2 bad usage (argparse), 130 interrupted.

    >>> main(["decode", "no-such-model.json", "--ids", "1"])
    1
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    command = command_of(argv)  # (a word that names no command: the whole parser, whose error lists them)
    parser = build_parser(command if command in COMMANDS else None)
    args = parser.parse_args(argv)
    if getattr(args, "top_n", 1) < 1:
        parser.error("--top-n must be at least 1")
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.handler(args)
    except BrokenPipeError:
        return _broken_pipe()
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (UBPEError, OSError) as exc:
        if args.debug or os.environ.get(TRACEBACK_ENV):  # for debugging: the full traceback
            raise
        print(f"{PROG}: error: {_message(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError:
        if args.debug or os.environ.get(TRACEBACK_ENV):
            raise
        print(f"{PROG}: error: out of memory", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a bug in ubpe: one line and a request, the traceback on demand
        if args.debug or os.environ.get(TRACEBACK_ENV):
            raise
        print(f"{PROG}: internal error: {type(exc).__name__}: {_message(exc)} - this is a bug in ubpe, "
              f"please report it (run again with --debug for the traceback)", file=sys.stderr)
        return EXIT_BUG


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line, like errors: ``ubpe: warning: ...`` (no source file nor line)."""
    print(f"{PROG}: warning: {' '.join(str(message).split())}", file=sys.stderr)


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror.lower()}{where}"
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())  # one line, always


def _broken_pipe() -> int:
    """The reader went away (``ubpe encode ... | head``): stop quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_OK


__all__ = ["main", "build_parser"]
