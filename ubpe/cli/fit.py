"""``ubpe fit``: fit a universal, classic or byte-level model and write it.

The inputs are streamed (:class:`~ubpe.cli.stream.DocStream`): a first pass infers the
alphabet when ``--alphabet`` is not given, a second one fits; memory is bounded by the
distinct parts (and the pair statistics), not by the corpus. On Dask (``--scheduler``,
``--workers``) the documents are read into a list and partitioned from there.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterable

import numpy as np

from ..text.patterns import PATTERNS
from ..models.bytelevel import ByteLevelBPE
from ..io import save
from ..models.ubpe import CLASSIC, DEFAULT_N_TOKENS, UBPE, UBPEBase, UBPEClassic
from .inputs import DEFAULT_BYTELEVEL_PATTERN, PROG, CLIError, check_output, parse_symbols, read_file, unescape
from .stream import DocStream

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

TIKTOKEN_SUFFIX = ".tiktoken"


def run(args: argparse.Namespace) -> int:
    # progress bars only where someone watches; the summary line unless --quiet
    quiet = args.quiet or not sys.stderr.isatty()
    check_output(args.output)
    if args.n_tokens is not None and args.n_tokens < 1:
        raise CLIError(f"--n-tokens must be at least 1, got {args.n_tokens}")
    started = time.perf_counter()
    with DocStream(args.inputs, ints=args.ints, docs_per=args.docs_per, glob=args.glob, quiet=quiet,
                   skip_empty=True) as docs:
        if not docs.any():
            raise CLIError("the input holds no documents")
        ints = docs.ints
        regex_str = args.regex if args.regex is not None else (PATTERNS[args.pattern] if args.pattern else None)
        if ints and args.variant == ByteLevelBPE.variant:
            raise CLIError("the byte-level variant fits text, not integer sequences")
        on_dask = args.scheduler is not None or args.workers is not None
        with contextlib.ExitStack() as stack:
            corpus = _on_cluster(stack, list(docs), args) if on_dask else docs
            model, summary = _fit(args, docs, corpus, ints, regex_str, quiet)
    save(model, args.output, "tiktoken" if args.output.endswith(TIKTOKEN_SUFFIX) else "ubpe")
    if not args.quiet:
        seconds = time.perf_counter() - started
        where = " on Dask" if on_dask else ""
        print(f"{PROG}: fitted a {args.variant} model on {docs.n_docs} documents{where}: {summary} "
              f"in {seconds:.2f} s -> {args.output}", file=sys.stderr)
    return 0


def _on_cluster(stack: contextlib.ExitStack, docs: list[Any], args: argparse.Namespace) -> Any:
    """``docs`` as a Dask bag on the cluster of ``--scheduler`` or of ``--workers`` local
    processes (closed when ``stack`` closes)."""
    if args.workers is not None and args.workers < 1:
        raise CLIError("--workers must be at least 1")
    try:
        from ..distributed.dask import cluster, partitioned

        client = stack.enter_context(cluster(args.scheduler, workers=args.workers))
    except ImportError:
        raise CLIError('--scheduler and --workers need Dask: pip install "ubpe[dask]"') from None
    return partitioned(docs, client)


def _fit(
    args: argparse.Namespace, docs: Iterable[Any], corpus: Any, ints: bool, regex_str: str | None, quiet: bool
) -> tuple[Any, str]:
    """The fitted model and its summary; ``corpus`` is ``docs`` or a Dask bag of them."""
    if args.variant == ByteLevelBPE.variant:
        model: Any = ByteLevelBPE().fit(
            corpus,
            n_tokens=DEFAULT_N_TOKENS if args.n_tokens is None else args.n_tokens,
            n_candidates=args.n_candidates,
            pattern=regex_str or DEFAULT_BYTELEVEL_PATTERN,
            special_tokens=args.special_token or (),
            quiet=quiet,
        )
        return model, f"{len(model.mergeable_ranks())} byte-level tokens"
    model = fit_universal(args, docs, ints, regex_str, quiet, corpus=corpus)
    return model, f"{model.n_base} base ids + {model.vocabulary.n_merged} tokens"


def fit_universal(
    args: argparse.Namespace, docs: Iterable[Any], ints: bool, regex_str: str | None, quiet: bool,
    *, corpus: Any = None,
) -> UBPEBase:
    """A fitted ``UBPE`` or ``UBPEClassic``; the alphabet defaults to every symbol seen (a
    pass over ``docs``, which may be re-iterable stream).
    The fit runs on ``corpus`` (the same documents, e.g. as a Dask bag) when given."""
    if ints and regex_str:
        raise CLIError("a regex splits text; integer sequences take --break-tokens instead")
    break_tokens = _symbols(args.break_tokens, ints)
    stop_tokens = _symbols(args.stop_tokens, ints)
    known_words = _known_words(args.known_words, ints)
    if args.alphabet is not None:
        if ints:
            if not args.alphabet.isdigit():
                raise CLIError("for integer sequences --alphabet is a size N (the ids 0..N-1)")
            alphabet: Any = int(args.alphabet)
        else:
            alphabet = unescape(args.alphabet)
    else:  # every symbol seen, with the separators and known words' symbols
        seen: set[Any] = set()
        for doc in docs:
            seen.update(np.unique(np.asarray(doc)).tolist() if ints else doc)
        for extra in (break_tokens or [], stop_tokens or [], *(known_words or [])):
            seen.update(extra)
        alphabet = sorted(seen)
    cls = UBPEClassic if args.variant == CLASSIC else UBPE
    n_base = (alphabet if isinstance(alphabet, int) else len(alphabet)) + len(known_words or [])
    n_tokens = args.n_tokens if args.n_tokens is not None else (DEFAULT_N_TOKENS if DEFAULT_N_TOKENS > n_base else n_base + DEFAULT_N_TOKENS)
    model = cls(
        alphabet=alphabet,
        n_tokens=n_tokens,
        known_words=known_words,
        break_tokens=break_tokens,
        regex_str=regex_str,
        stop_tokens=stop_tokens,
    )
    model.fit(docs if corpus is None else corpus, n_candidates=args.n_candidates, quiet=quiet)
    return model


def _symbols(spec: str | None, ints: bool) -> list[Any] | None:
    if spec is None:
        return None
    return parse_symbols(spec, "separator ids") if ints else list(unescape(spec))


def _known_words(path: str | None, ints: bool) -> list[Any] | None:
    if path is None:
        return None
    lines = [line for line in read_file(path).split("\n") if line.strip()]
    if ints:
        return [tuple(parse_symbols(line, path)) for line in lines]
    return [line.rstrip("\r") for line in lines]
