"""The ``ubpe`` command line: fit, encode, decode, inspect, compare, convert, view.

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

Models are read in any format ubpe knows: our model files (universal, classic and
byte-level), ubpe 0.3.0's JSON, and ``.tiktoken`` files. Errors are one line on stderr
(``ubpe: error: ...``) with exit code 1; usage errors exit with 2 (argparse).

"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..bytelevel import PATTERNS, ByteLevelBPE, resolve_pattern
from ..encoders import available_encoders, encoder_info, make_encoder
from ..errors import InvalidParameterError, ModelFormatError, UBPEError
from ..io.files import parse_json, read_text, unwrap_body, write_atomically
from ..tokenizer import DEFAULT_N_TOKENS, UBPE, UBPEBase, UBPEClassic
from ..view import render, render_alternatives, render_html, token_pieces, use_color

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130
PROG = "ubpe"
UNIVERSAL, CLASSIC, BYTELEVEL = "universal", "classic", "bytelevel"
VARIANTS = (UNIVERSAL, CLASSIC, BYTELEVEL)
DOCS_PER = ("line", "file", "paragraph")
# model formats: ours, ubpe 0.3.0's JSON, tiktoken's ranks, HF tokenizer.json (export only)
FORMAT_OURS, FORMAT_REFERENCE, FORMAT_TIKTOKEN, FORMAT_HF = "ubpe", "ubpe030", "tiktoken", "hf"
FORMAT_NAMES = {
    FORMAT_OURS: "ubpe model format",
    FORMAT_REFERENCE: "ubpe 0.3.0 JSON",
    FORMAT_TIKTOKEN: ".tiktoken",
    FORMAT_HF: "HF tokenizer.json",
}
TIKTOKEN_SUFFIX = ".tiktoken"
# byte-level pre-tokenization when none is given: a preset HF's Oniguruma reads as we do
DEFAULT_BYTELEVEL_PATTERN = "gpt2"
# presets checked to split held-out text of several scripts identically in HF tokenizers
# (cl100k's possessive `?+` is read differently there)
HF_SAFE_PATTERNS = frozenset({PATTERNS["gpt2"], PATTERNS["llama3"]})
HF_FILE_NAME = "tokenizer.json"
# inspect: how many rows the listings show by default
DEFAULT_TOP = 10
# compare: at most this many characters of segmentation per table row
PREVIEW_WIDTH = 60
# files read before a progress bar is worth showing
PROGRESS_MIN_FILES = 20
# marks a merge-tree node whose split is derived, not recorded (e.g. models from .tiktoken)
DERIVED_MARK = "  ~"
# set this environment variable to see tracebacks instead of one-line errors
TRACEBACK_ENV = "UBPE_TRACEBACK"
ESCAPES = {"\\n": "\n", "\\t": "\t", "\\r": "\r", "\\s": " ", "\\\\": "\\"}


class CLIError(Exception):
    """Bad input found by the command line itself (reported like our library errors)."""


# -- reading documents ---------------------------------------------------------------------


def unescape(text: str) -> str:
    r"""Shell-friendly escapes in symbol lists: ``\n``, ``\t``, ``\r``, ``\s`` (space), ``\\``.

    >>> unescape(r" \n\s,")
    ' \n ,'
    """
    out, i = [], 0
    while i < len(text):
        pair = text[i : i + 2]
        if pair in ESCAPES:
            out.append(ESCAPES[pair])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def input_files(inputs: Sequence[str], glob: str) -> list[str]:
    """Files named, with directories expanded recursively (``glob`` picks the files, hidden
    ones are skipped); ``-`` is stdin. A missing path is an error."""
    files: list[str] = []
    for name in inputs:
        if name == "-":
            files.append(name)
            continue
        path = Path(name)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob(glob)
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not found:
                raise CLIError(f"no files matching {glob!r} in directory {name}")
            files.extend(str(p) for p in found)
        elif path.is_file():
            files.append(name)
        else:
            raise CLIError(f"no such file or directory: {name}")
    return files


def _read(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CLIError(f"{name} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def split_docs(text: str, docs_per: str) -> list[str]:
    """A file's text cut into documents.

    >>> split_docs("a b\\nc\\n", "line"), split_docs("a\\nb\\n\\n\\nc", "paragraph")
    (['a b', 'c'], ['a\\nb', 'c'])
    """
    if docs_per == "file":
        return [text]
    if docs_per == "paragraph":
        paragraphs = [p.strip("\n") for p in text.replace("\r\n", "\n").split("\n\n")]
        return [p for p in paragraphs if p]
    lines = text.split("\n")
    if lines and lines[-1] == "":  # the newline that ends the file starts no document
        lines.pop()
    return lines


def parse_ints(line: str, where: str = "input") -> list[int]:
    """One integer sequence: whitespace- or comma-separated, or a JSON list.

    >>> parse_ints("3 17 4"), parse_ints("[1, 2]"), parse_ints("5,6")
    ([3, 17, 4], [1, 2], [5, 6])
    """
    stripped = line.strip()
    try:
        if stripped.startswith("["):
            values = json.loads(stripped)
            if not isinstance(values, list):
                raise ValueError
            return [_as_int(v) for v in values]
        return [int(v) for v in stripped.replace(",", " ").split()]
    except (ValueError, TypeError, json.JSONDecodeError):
        raise CLIError(f"{where}: expected integers, got {stripped[:60]!r}") from None


def _as_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(value)
    return value


def read_docs(
    inputs: Sequence[str],
    *,
    texts: Sequence[str] = (),
    ints: bool = False,
    docs_per: str = "line",
    glob: str = "*",
    quiet: bool = True,
) -> list[Any]:
    """Documents from ``texts`` and files: str documents, or int sequences (``ints``, or
    any ``.npy`` file: a 1-D array is one document, each row of a 2-D array is one)."""
    docs: list[Any] = [parse_ints(t, "--text") for t in texts] if ints else list(texts)
    names = list(inputs)
    if not names and not texts:
        if sys.stdin.isatty():
            raise CLIError("no input: give files or directories, '-' for stdin, or --text")
        names = ["-"]
    files = input_files(names, glob)
    if any(f.endswith(".npy") for f in files):
        ints = True
    progress = _progress(files, quiet, "reading")
    for name in progress:
        if name.endswith(".npy"):
            docs.extend(_npy_docs(name))
        elif ints:
            lines = _read(name).split("\n")
            docs.extend(parse_ints(line, f"{name}:{n}") for n, line in enumerate(lines, 1) if line.strip())
        else:
            docs.extend(split_docs(_read(name), docs_per))
    return docs


def _progress(items: list[Any], quiet: bool, description: str):
    if quiet or len(items) < PROGRESS_MIN_FILES:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=description, unit="file", leave=False)


def _npy_docs(name: str) -> list[np.ndarray]:
    try:
        array = np.load(name, allow_pickle=False)
    except ValueError as exc:
        raise CLIError(f"{name} is not a numeric .npy array: {exc}") from None
    if array.dtype.kind not in "iu":
        raise CLIError(f"{name} holds {array.dtype} values, not integers")
    if array.ndim == 1:
        return [array]
    if array.ndim == 2:
        return list(array)
    raise CLIError(f"{name} has {array.ndim} dimensions; expected one document (1-D) or one per row (2-D)")


# -- models --------------------------------------------------------------------------------


def detect_format(path: str) -> str:
    """Which of our model formats the file at ``path`` holds."""
    text = read_text(path)
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        if path.endswith(TIKTOKEN_SUFFIX) or stripped[:1].isalnum() or stripped[:1] in "+/":
            return FORMAT_TIKTOKEN
        raise ModelFormatError(f"{path} is not a ubpe model, ubpe 0.3.0 JSON or .tiktoken file")
    document = parse_json(text, path)
    if isinstance(document, dict) and "format" in document:
        return FORMAT_OURS
    if isinstance(document, dict) and "mapper" in document:
        return FORMAT_REFERENCE
    if isinstance(document, dict) and "model" in document and "added_tokens" in document:
        raise ModelFormatError(f"{path} is an HF tokenizer.json; ubpe exports that format but does not read it")
    raise ModelFormatError(f"{path} is not a ubpe model file (no `format` nor `mapper` field)")


def _reference_variant(text: str) -> str:
    """Universal or classic, for ubpe 0.3.0 JSON (which does not say): a classic mapper maps
    tokens to pairs that may hold merged ids; a universal one to runs of base ids only."""
    model = parse_json(text, "the model")
    n_base = len(model.get("alphabet") or {}) + len(model.get("known_words") or {})
    values = list((model.get("mapper") or {}).values())
    if values and all(isinstance(v, list) and len(v) == 2 for v in values):
        if any(isinstance(x, int) and x >= n_base for v in values for x in v):
            return CLASSIC
    return UNIVERSAL


def load_model(path: str, *, variant: str | None = None, pattern: str | None = None) -> Any:
    """A tokenizer from any file ubpe reads: ``UBPE``, ``UBPEClassic`` or ``ByteLevelBPE``.

    ``variant`` picks the class for ubpe 0.3.0 JSON (default: guessed from the mapper);
    ``pattern`` is the pre-tokenization of a ``.tiktoken`` file, which does not record it
    (default: gpt2, as ``ubpe fit --variant bytelevel``; ``ubpe convert x.tiktoken x.json
    --pattern cl100k`` binds another one into a model file).
    """
    fmt = detect_format(path)
    if fmt == FORMAT_TIKTOKEN:
        return ByteLevelBPE.load_tiktoken(path, pattern=pattern or DEFAULT_BYTELEVEL_PATTERN)
    text = read_text(path)
    if fmt == FORMAT_REFERENCE:
        chosen = variant or _reference_variant(text)
        if chosen == BYTELEVEL:
            raise InvalidParameterError("ubpe 0.3.0 JSON holds a universal or classic model, not a byte-level one")
        return (UBPEClassic if chosen == CLASSIC else UBPE).loads(text)
    body = unwrap_body(parse_json(text, path), path)
    kind = body.get("variant")
    if kind == BYTELEVEL:
        return ByteLevelBPE.from_json(text, what=path)
    for cls in (UBPE, UBPEClassic):
        if cls.variant == kind:
            return cls.from_json(text, what=path)
    raise ModelFormatError(f"{path} holds an unknown model variant {kind!r}")


def check_output(path: str) -> None:
    """Fail before any work if ``path`` cannot be written (its folder is missing)."""
    folder = Path(path).parent
    if not folder.is_dir():
        raise CLIError(f"cannot write {path}: no such directory {folder}")


def save_model(model: Any, path: str, fmt: str) -> None:
    """Write ``model`` to ``path`` in format ``fmt`` (one of ``FORMAT_NAMES``)."""
    from ..io.hf import save_tokenizer_json

    check_output(path)
    if isinstance(model, ByteLevelBPE):
        if fmt == FORMAT_OURS:
            model.save(path)
        elif fmt == FORMAT_TIKTOKEN:
            model.save_tiktoken(path)
        elif fmt == FORMAT_HF:
            save_tokenizer_json(model, path)
        else:
            raise InvalidParameterError(f"a byte-level model cannot be written as {FORMAT_NAMES[fmt]}")
        return
    if fmt == FORMAT_OURS:
        model.save(path)
    elif fmt == FORMAT_REFERENCE:
        write_atomically(path, model.dumps())
    else:
        raise InvalidParameterError(
            f"{FORMAT_NAMES[fmt]} holds byte-level vocabularies; this is a {model.variant} model"
        )


def model_kind(model: Any) -> str:
    return BYTELEVEL if isinstance(model, ByteLevelBPE) else model.variant


def symbol_type(model: Any) -> type:
    """``str`` for text models (byte-level included), else the alphabet's symbol type."""
    if isinstance(model, ByteLevelBPE):
        return str
    return type(next(iter(model.alphabet)))


def read_model_docs(model: Any, args: argparse.Namespace) -> list[Any]:
    kind = symbol_type(model)
    if kind not in (str, int):
        raise CLIError(f"the command line reads str and int documents; this model's symbols are {kind.__name__}")
    return read_docs(
        args.inputs, texts=args.text or (), ints=kind is int or getattr(args, "ints", False),
        docs_per=args.docs_per, glob=args.glob,
    )


# -- encoding through any model ------------------------------------------------------------


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``key=value`` encoder options; values are JSON (``0.1``, ``true``, ``[1, 2]``) or
    plain strings; ``@file.npy`` / ``@file.json`` loads an array (e.g. additive weights).

    >>> parse_options(["p=0.1", "priority=id", "exact=true"])
    {'p': 0.1, 'priority': 'id', 'exact': True}
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not all(name.isidentifier() for name in key.split(".")):
            raise CLIError(f"encoder options are key=value, got {pair!r}")
        if value.startswith("@"):
            source = value[1:]
            if source.endswith(".npy"):
                options[key] = np.load(source, allow_pickle=False)
            else:
                options[key] = parse_json(Path(source).read_text(encoding="utf-8"), source)
            continue
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def encode_docs(
    model: Any, docs: list[Any], *, encoder: str | None = None, top_n: int = 1, options: dict[str, Any] | None = None
) -> list[list[tuple[list[int], float]]]:
    """``[(tokens, score)]`` per document, for any model.

    A byte-level model encodes with its own rank-ordered merging (tiktoken's ids; special
    tokens in the text become their ids) unless another encoder is named; then the text's
    pre-tokenized pieces, as bytes, go to that encoder on the byte-level vocabulary (special
    tokens are plain text there, and scores are 0: such vocabularies have no weights).
    """
    options = options or {}
    if not isinstance(model, ByteLevelBPE):
        return model.encode_batch(docs, top_n=top_n, encoder=encoder, **options)
    if encoder in (None, "ranked") and not options:
        if top_n != 1:
            raise InvalidParameterError("the byte-level encoder gives one encoding: top_n must be 1")
        return [[(model.encode(doc, allowed_special="all"), 0.0)] for doc in docs]
    chosen = make_encoder(encoder or "ranked", model.vocabulary, **options)
    import regex

    splitter = regex.compile(model.pattern)
    out = []
    for doc in docs:
        parts = [np.frombuffer(p.encode("utf-8"), dtype=np.uint8).astype(np.int32) for p in splitter.findall(doc)]
        out.append([(model.token_ids[tokens].tolist(), score) for tokens, score in chosen.encode(parts, top_n)])
    return out


def show_piece(piece: Any) -> str:
    """A token's piece for listings: quoted text (escapes visible), or ``[3 17 4]``.

    >>> show_piece(" the"), show_piece(b"\\xe4"), show_piece([3, 17])
    ("' the'", "b'\\\\xe4'", '[3 17]')
    """
    if isinstance(piece, str):
        return repr(piece)
    if isinstance(piece, bytes):
        try:
            return repr(piece.decode("utf-8"))
        except UnicodeDecodeError:
            return repr(piece)
    return "[" + " ".join(str(s) for s in piece) + "]"


# -- fit -----------------------------------------------------------------------------------


def cmd_fit(args: argparse.Namespace) -> int:
    # progress bars only where someone watches; the summary line unless --quiet
    quiet = args.quiet or not sys.stderr.isatty()
    check_output(args.output)
    started = time.perf_counter()
    docs = read_docs(args.inputs, ints=args.ints, docs_per=args.docs_per, glob=args.glob, quiet=quiet)
    ints = bool(docs) and not isinstance(docs[0], str)
    if not ints:
        docs = [d for d in docs if d]
    if not docs:
        raise CLIError("the input holds no documents")
    regex_str = args.regex if args.regex is not None else (PATTERNS[args.pattern] if args.pattern else None)
    if args.variant == BYTELEVEL:
        if ints:
            raise CLIError("the byte-level variant fits text, not integer sequences")
        model: Any = ByteLevelBPE().fit(
            docs,
            n_tokens=args.n_tokens or DEFAULT_N_TOKENS,
            n_candidates=args.n_candidates,
            pattern=regex_str or DEFAULT_BYTELEVEL_PATTERN,
            special_tokens=args.special_token or (),
            quiet=quiet,
        )
        summary = f"{len(model.mergeable_ranks())} byte-level tokens"
    else:
        model = fit_universal(args, docs, ints, regex_str, quiet)
        summary = f"{model.n_base} base ids + {model.vocabulary.n_merged} tokens"
    fmt = FORMAT_TIKTOKEN if args.output.endswith(TIKTOKEN_SUFFIX) else FORMAT_OURS
    save_model(model, args.output, fmt)
    if not args.quiet:
        seconds = time.perf_counter() - started
        print(f"{PROG}: fitted a {args.variant} model on {len(docs)} documents: {summary} "
              f"in {seconds:.2f} s -> {args.output}", file=sys.stderr)
    return EXIT_OK


def fit_universal(
    args: argparse.Namespace, docs: list[Any], ints: bool, regex_str: str | None, quiet: bool
) -> UBPEBase:
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
    n_tokens = args.n_tokens or (DEFAULT_N_TOKENS if DEFAULT_N_TOKENS > n_base else n_base + DEFAULT_N_TOKENS)
    model = cls(
        alphabet=alphabet,
        n_tokens=n_tokens,
        known_words=known_words,
        break_tokens=break_tokens,
        regex_str=regex_str,
        stop_tokens=stop_tokens,
    )
    model.fit(docs, n_candidates=args.n_candidates, quiet=quiet)
    return model


def _symbols(spec: str | None, ints: bool) -> list[Any] | None:
    if spec is None:
        return None
    return parse_ints(spec, "separator ids") if ints else list(unescape(spec))


def _known_words(path: str | None, ints: bool) -> list[Any] | None:
    if path is None:
        return None
    lines = [line for line in _read(path).split("\n") if line.strip()]
    if ints:
        return [tuple(parse_ints(line, path)) for line in lines]
    return [line.rstrip("\r") for line in lines]


# -- encode / decode / view ----------------------------------------------------------------


def cmd_encode(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    docs = read_model_docs(model, args)
    options = parse_options(args.option)
    results = encode_docs(model, docs, encoder=args.encoder, top_n=args.top_n, options=options)
    out = sys.stdout
    if args.view:
        color = use_color(out, force=args.color)
        for encodings in results:
            out.write(_view_text(model, encodings, args.top_n, color) + "\n")
            if args.top_n > 1:
                out.write("\n")
        return EXIT_OK
    for encodings in results:
        if args.format == "json":
            if args.top_n == 1:
                record: dict[str, Any] = {"tokens": encodings[0][0], "score": encodings[0][1]}
            else:
                record = {"encodings": [{"tokens": t, "score": s} for t, s in encodings]}
            out.write(json.dumps(record) + "\n")
        elif args.top_n == 1:
            out.write(" ".join(map(str, encodings[0][0])) + "\n")
        else:
            for tokens, score in encodings:
                out.write(f"{score:.6f}\t{' '.join(map(str, tokens))}\n")
            out.write("\n")
    return EXIT_OK


def _view_text(model: Any, encodings: list[tuple[list[int], float]], top_n: int, color: bool) -> str:
    if top_n == 1:
        return render(token_pieces(model, encodings[0][0]), color=color)
    return render_alternatives([(token_pieces(model, t), s) for t, s in encodings], color=color)


def cmd_view(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    docs = read_model_docs(model, args)
    options = parse_options(args.option)
    results = encode_docs(model, docs, encoder=args.encoder, top_n=args.top_n, options=options)
    if args.html:
        check_output(args.html)
        encoder = args.encoder or ("ranked" if isinstance(model, ByteLevelBPE) else model.default_encoder)
        page = render_html(
            [[(token_pieces(model, t), t, s) for t, s in encodings] for encodings in results],
            title=f"ubpe: {Path(args.model).name}",
            caption=f"{model_kind(model)} model, encoder {encoder}, top {args.top_n}; hover a token for its id",
        )
        write_atomically(args.html, page)
        if not args.quiet:
            print(f"{PROG}: wrote {len(results)} documents to {args.html}", file=sys.stderr)
        return EXIT_OK
    color = use_color(sys.stdout, force=args.color)
    blocks = [_view_text(model, encodings, args.top_n, color) for encodings in results]
    sys.stdout.write(("\n\n" if args.top_n > 1 else "\n").join(blocks) + "\n")
    return EXIT_OK


def cmd_decode(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    if args.ids is not None:
        sequences = [parse_ints(line, "--ids") for line in args.ids]
    else:
        names = args.inputs or (["-"] if not sys.stdin.isatty() else [])
        if not names:
            raise CLIError("no input: give files of ids, '-' for stdin, or --ids")
        sequences = [
            _ids_of_line(line, f"{name}:{number}")
            for name in input_files(names, "*")
            for number, line in enumerate(split_docs(_read(name), "line"), start=1)
        ]
    text = symbol_type(model) is str
    for tokens in sequences:
        decoded = model.decode(tokens)
        if args.format == "json":
            sys.stdout.write(json.dumps(decoded, ensure_ascii=False) + "\n")
        else:
            sys.stdout.write((decoded if text else " ".join(map(str, decoded))) + "\n")
    return EXIT_OK


def _ids_of_line(line: str, where: str) -> list[int]:
    """Ids from a plain line (``1 2 3``), a JSON list, or a JSON record of ``encode``."""
    stripped = line.strip()
    if stripped.startswith("{"):
        try:
            record = json.loads(stripped)
            tokens = record["tokens"] if "tokens" in record else record["encodings"][0]["tokens"]
            return [_as_int(t) for t in tokens]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, ValueError):
            raise CLIError(f"{where}: not an encode record with `tokens`: {stripped[:60]!r}") from None
    if "\t" in stripped:  # a top-n line of plain `encode` output: score, tab, ids
        stripped = stripped.split("\t", 1)[1]
    return parse_ints(stripped, where)


# -- inspect -------------------------------------------------------------------------------


class TokenTable:
    """Every id of a model with its piece, weight and (where known) the pair it merges."""

    def __init__(self, model: Any):
        self.model = model
        if isinstance(model, ByteLevelBPE):
            ranks = model.mergeable_ranks()
            self.ids = sorted(ranks.values()) + sorted(model.special_tokens.values())
            self.pieces = {rank: piece for piece, rank in ranks.items()}
            self.pieces.update({t: text.encode("utf-8") for text, t in model.special_tokens.items()})
            self.weights: dict[int, float] = {}
            vocab = model.vocabulary
            to_rank = model.token_ids
            self.merges = {
                int(to_rank[vocab.n_base + t]): (int(to_rank[l]), int(to_rank[r]))
                for t, (l, r) in enumerate(vocab.merges.tolist()) if l >= 0 and r >= 0
            }
            self.base = {int(to_rank[b]) for b in range(vocab.n_base)}
        else:
            vocab = model.vocabulary
            self.ids = list(range(len(vocab)))
            self.pieces = {t: model.id_to_piece(t) for t in self.ids}
            self.weights = vocab.weight_of()
            self.merges = {
                vocab.n_base + t: (int(l), int(r))
                for t, (l, r) in enumerate(vocab.merges.tolist()) if l >= 0 and r >= 0
            }
            self.base = set(range(vocab.n_base))
        self.by_piece = {}
        for t in self.ids:
            self.by_piece.setdefault(self._key(self.pieces[t]), t)

    @staticmethod
    def _key(piece: Any) -> Any:
        return piece if isinstance(piece, (str, bytes)) else tuple(piece)

    def length(self, token: int) -> int:
        piece = self.pieces[token]
        if isinstance(self.model, UBPEBase) and token in self.base:
            return 1
        return len(piece)

    def children(self, token: int) -> tuple[tuple[int, int] | None, bool]:
        """The pair ``token`` merges and whether it is recorded (else derived from pieces:
        the split into two tokens whose larger id is smallest)."""
        if token in self.base:
            return None, True
        if token in self.merges:
            return self.merges[token], True
        piece = self.pieces[token]
        best = None
        for cut in range(1, len(piece)):
            left, right = self.by_piece.get(self._key(piece[:cut])), self.by_piece.get(self._key(piece[cut:]))
            if left is not None and right is not None and left != token and right != token:
                if best is None or max(left, right) < max(best):
                    best = (left, right)
        return best, False

    def tree(self, token: int) -> list[str]:
        """The merge tree of ``token``, one node per line, drawn with box characters."""
        lines = [self._node(token)]
        self._grow(token, "", lines, depth=0)
        if any(line.endswith(DERIVED_MARK) for line in lines):
            lines.append(f"({DERIVED_MARK.strip()}: no merge recorded, split derived from the pieces)")
        return lines

    def _node(self, token: int) -> str:
        pair, recorded = self.children(token)
        mark = DERIVED_MARK if pair and not recorded else ""
        return f"{token} {show_piece(self.pieces[token])}{mark}"

    def _grow(self, token: int, prefix: str, lines: list[str], depth: int) -> None:
        pair, recorded = self.children(token)
        if pair is None and token not in self.base:
            # trimming dropped the tokens it was built from, and no two tokens spell it
            lines.append(prefix + "└── (its parts are not in the vocabulary)")
        if pair is None or depth > len(self.ids):
            return
        for index, child in enumerate(pair):
            last = index == 1
            lines.append(prefix + ("└── " if last else "├── ") + self._node(child))
            self._grow(child, prefix + ("    " if last else "│   "), lines, depth + 1)


def resolve_token(table: TokenTable, spec: str) -> int:
    """A token by id (an integer) or by its piece (text; with a model of ints, ``[3 17]``)."""
    stripped = spec.strip()
    if stripped.lstrip("-").isdigit():
        token = int(stripped)
        if token not in table.pieces:
            raise CLIError(f"token {token} is not in the vocabulary")
        return token
    if stripped.startswith("["):
        key: Any = tuple(parse_ints(stripped.replace(" ", ","), "--tree"))
    elif isinstance(table.model, ByteLevelBPE):
        key = unescape(spec).encode("utf-8")
    else:
        key = unescape(spec)
    token = table.by_piece.get(key)
    if token is None:
        raise CLIError(f"no token stands for {spec!r}")
    return token


def cmd_inspect(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    table = TokenTable(model)
    report: dict[str, Any] = summary(model, args.model)
    longest = sorted(table.ids, key=lambda t: (-table.length(t), t))[: args.top]
    report["longest"] = [{"id": t, "length": table.length(t), "piece": show_piece(table.pieces[t])} for t in longest]
    if table.weights:
        heaviest = sorted(table.weights, key=lambda t: (-table.weights[t], t))[: args.top]
        report["top_weights"] = [
            {"id": t, "weight": table.weights[t], "piece": show_piece(table.pieces[t])} for t in heaviest
        ]
    report["trees"] = {spec: table.tree(resolve_token(table, spec)) for spec in args.tree or []}
    if args.coverage:
        report["coverage"] = coverage(model, args)
    if args.format == "json":
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    else:
        sys.stdout.write(format_inspect(report))
    return EXIT_OK


def summary(model: Any, path: str) -> dict[str, Any]:
    info: dict[str, Any] = {"model": path, "format": FORMAT_NAMES[detect_format(path)], "variant": model_kind(model)}
    if isinstance(model, ByteLevelBPE):
        info["vocabulary"] = f"{model.n_vocab} ids: 256 bytes + {model.vocabulary.n_merged} merged tokens + {len(model.special_tokens)} special"
        info["pattern"] = model.pattern
        info["special tokens"] = ", ".join(sorted(model.special_tokens)) or "none"
        return info
    vocab = model.vocabulary
    kind = symbol_type(model).__name__
    info["alphabet"] = f"{len(model.alphabet)} symbols ({kind})"
    info["known words"] = str(len(model.known_words or {}))
    info["vocabulary"] = f"{len(vocab)} ids: {vocab.n_base} base + {vocab.n_merged} merged tokens"
    for name, values in (("break tokens", model.break_tokens), ("stop tokens", model.stop_tokens)):
        if values:
            info[name] = " ".join(repr(v) for v in sorted(values, key=repr))
    if model.regex_str:
        info["regex"] = model.regex_str
    return info


def coverage(model: Any, args: argparse.Namespace) -> dict[str, Any]:
    """How a held-out file encodes: tokens per symbol, share of the vocabulary used, and how
    many documents hold symbols outside the alphabet (those are skipped)."""
    ints = symbol_type(model) is int
    docs = read_docs(args.coverage, ints=ints, docs_per=args.docs_per, glob=args.glob)
    alphabet = None if isinstance(model, ByteLevelBPE) else model.alphabet
    known = [d for d in docs if alphabet is None or all(s in alphabet for s in (d.tolist() if isinstance(d, np.ndarray) else d))]
    results = encode_docs(model, known, encoder=args.encoder)
    tokens = [encodings[0][0] for encodings in results]
    n_symbols = sum(len(d) for d in known)
    n_tokens = sum(len(t) for t in tokens)
    used = {t for seq in tokens for t in seq}
    vocab_size = model.n_vocab if isinstance(model, ByteLevelBPE) else len(model.vocabulary)
    return {
        "files": ", ".join(args.coverage),
        "documents": len(docs),
        "documents skipped (symbols outside the alphabet)": len(docs) - len(known),
        "symbols": n_symbols,
        "tokens": n_tokens,
        "tokens per symbol": round(n_tokens / n_symbols, 4) if n_symbols else None,
        "distinct tokens used": len(used),
        "share of the vocabulary used": round(len(used) / vocab_size, 4),
    }


def format_inspect(report: dict[str, Any]) -> str:
    lines = []
    for key in ("model", "format", "variant", "alphabet", "known words", "vocabulary", "pattern",
                "special tokens", "break tokens", "stop tokens", "regex"):
        if key in report:
            lines.append(f"{key:<14} {report[key]}")
    lines.append("")
    lines.append("longest tokens")
    lines.extend(f"  {r['id']:>7}  {r['length']:>4}  {r['piece']}" for r in report["longest"])
    if "top_weights" in report:
        lines.append("")
        lines.append("highest weights (idf)")
        lines.extend(f"  {r['id']:>7}  {r['weight']:8.4f}  {r['piece']}" for r in report["top_weights"])
    for spec, tree in report["trees"].items():
        lines.append("")
        lines.append(f"merge tree of {spec}")
        lines.extend("  " + line for line in tree)
    if "coverage" in report:
        lines.append("")
        lines.append("coverage")
        lines.extend(f"  {key:<50} {value}" for key, value in report["coverage"].items())
    return "\n".join(lines) + "\n"


# -- compare -------------------------------------------------------------------------------


def cmd_compare(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    if args.text is None:
        if len(args.inputs) > 1:
            raise CLIError("compare takes one input: one file, '-' or --text")
        args.docs_per = "file"
    docs = read_model_docs(model, args)
    if len(docs) != 1:
        raise CLIError(f"compare takes one document, got {len(docs)}")
    doc = docs[0]
    names = args.encoders.split(",") if args.encoders else default_encoders(model)
    options = parse_options(args.option)
    for key in options:
        if "." not in key and not any(_accepts(encoder_info(n).factory, key) for n in names):
            raise CLIError(f"no encoder compared takes the option {key!r}")
    rows = []
    n_symbols = len(doc.encode("utf-8")) if isinstance(model, ByteLevelBPE) else len(doc)
    for name in names:
        info = encoder_info(name)  # an unknown name is an error, not a skipped row
        mine = {k.split(".", 1)[1]: v for k, v in options.items() if k.startswith(name + ".")}
        mine.update({k: v for k, v in options.items() if "." not in k and _accepts(info.factory, k)})
        tokens, score = encode_docs(model, [doc], encoder=name, options=mine)[0][0]
        rows.append((name, tokens, score))
    if args.format == "json":
        for name, tokens, score in rows:
            sys.stdout.write(json.dumps({"encoder": name, "n_tokens": len(tokens), "score": score, "tokens": tokens}) + "\n")
        return EXIT_OK
    unit = "bytes" if isinstance(model, ByteLevelBPE) else "symbols"
    header = ("encoder", "tokens", f"{unit}/token", "score", "segmentation")
    body = []
    for name, tokens, score in rows:
        shown = render(token_pieces(model, tokens), color=False)
        if len(shown) > PREVIEW_WIDTH:
            shown = shown[: PREVIEW_WIDTH - 1] + "…"
        per = f"{n_symbols / len(tokens):.2f}" if tokens else "-"
        body.append((name, str(len(tokens)), per, f"{score:.4f}", shown))
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i in (0, 4) else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))).rstrip()
             for r in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _accepts(factory: Any, option: str) -> bool:
    """Whether an encoder factory takes the keyword ``option``."""
    import inspect

    parameters = inspect.signature(factory).parameters
    return option in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def default_encoders(model: Any) -> list[str]:
    """Every registered encoder that runs without options (``additive`` needs scores);
    ``classic`` only where the vocabulary records its merges (not for ``.tiktoken`` ranks)."""
    names = []
    vocab = model.vocabulary
    for name in available_encoders():
        if name == "classic" and vocab.n_merged and (vocab.merges < 0).all():
            continue
        try:
            make_encoder(name, vocab)
        except UBPEError:
            continue
        names.append(name)
    return names


# -- convert -------------------------------------------------------------------------------


def cmd_convert(args: argparse.Namespace) -> int:
    source = detect_format(args.input)
    model = load_model(args.input, variant=args.variant, pattern=args.pattern)
    target = args.to or infer_target(source, args.output, model)
    if target == FORMAT_HF and isinstance(model, ByteLevelBPE) and args.pattern:
        model = ByteLevelBPE.from_mergeable_ranks(
            model.mergeable_ranks(), pattern=args.pattern, special_tokens=model.special_tokens
        )
    save_model(model, args.output, target)
    if target == FORMAT_HF and model.pattern not in HF_SAFE_PATTERNS and not args.quiet:
        print(f"{PROG}: warning: HF tokenizers reads regexes with Oniguruma; only the gpt2 and llama3 "
              "presets are checked to split text as ours does (use --pattern gpt2)", file=sys.stderr)
    if not args.quiet:
        print(f"{PROG}: {args.input} ({FORMAT_NAMES[source]}, {model_kind(model)}) -> "
              f"{args.output} ({FORMAT_NAMES[target]})", file=sys.stderr)
    return EXIT_OK


def infer_target(source: str, output: str, model: Any) -> str:
    """The output format when ``--to`` is not given: by the output's name, else the other
    JSON format (ubpe 0.3.0 <-> ours)."""
    if output.endswith(TIKTOKEN_SUFFIX):
        return FORMAT_TIKTOKEN
    if Path(output).name == HF_FILE_NAME:
        return FORMAT_HF
    if isinstance(model, ByteLevelBPE):
        return FORMAT_OURS
    return FORMAT_OURS if source == FORMAT_REFERENCE else FORMAT_REFERENCE


# -- the parser ----------------------------------------------------------------------------


def _input_options(parser: argparse.ArgumentParser, *, docs_per_default: str = "line") -> None:
    parser.add_argument("inputs", nargs="*", metavar="INPUT",
                        help="text files, directories (recursive) or '-' for stdin; default: stdin")
    parser.add_argument("--text", action="append", metavar="DOC",
                        help="a document given on the command line (repeatable)")
    parser.add_argument("--docs-per", choices=DOCS_PER, default=docs_per_default,
                        help=f"what one document is in a text file (default: {docs_per_default})")
    parser.add_argument("--glob", default="*", help="which files of a directory to read (default: '*')")


def _encoder_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--encoder", metavar="NAME",
                        help=f"one of: {', '.join(available_encoders())} (default: the model's own)")
    parser.add_argument("--top-n", type=int, default=1, metavar="N", help="the N best encodings (default: 1)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an encoder option, e.g. p=0.1 or exact=true (repeatable)")


def _color_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--color", dest="color", action="store_const", const=True, default=None,
                       help="colour token boundaries even when not writing to a terminal")
    group.add_argument("--no-color", dest="color", action="store_const", const=False,
                       help="separate tokens with '|' instead of colours")


def _pattern_arg(value: str) -> str:
    try:
        return resolve_pattern(value)
    except InvalidParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Universal Byte-Pair Encoding: fit, encode, inspect and compare tokenizers.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    fit = commands.add_parser("fit", help="fit a model on text or integer sequences",
                              description="Fit a model and write it to -o (our format; .tiktoken for byte-level).")
    fit.add_argument("inputs", nargs="*", metavar="INPUT",
                     help="text files, directories, .npy arrays, or '-' for stdin (default: stdin)")
    fit.add_argument("-o", "--output", required=True, metavar="MODEL", help="where to write the model")
    fit.add_argument("--variant", choices=VARIANTS, default=UNIVERSAL, help="default: universal")
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
    fit.add_argument("-q", "--quiet", action="store_true", help="no progress bars nor summary")
    fit.set_defaults(handler=cmd_fit)

    encode = commands.add_parser("encode", help="encode documents to token ids",
                                 description="Encode each document; one line of output per document.")
    encode.add_argument("model", help="a model file")
    _input_options(encode)
    encode.add_argument("--ints", action="store_true", help="documents are integer sequences")
    _encoder_options(encode)
    encode.add_argument("--format", choices=("plain", "json"), default="plain",
                        help="plain: ids per line (top-n: 'score<TAB>ids' lines, blank line after each document); json: one record per document")
    encode.add_argument("--view", action="store_true", help="show token boundaries instead of ids")
    _color_options(encode)
    encode.set_defaults(handler=cmd_encode)

    decode = commands.add_parser("decode", help="decode token ids back to documents",
                                 description="Decode one sequence of ids per line (plain, JSON list, or encode's JSON records).")
    decode.add_argument("model", help="a model file")
    decode.add_argument("inputs", nargs="*", metavar="INPUT", help="files of ids or '-' (default: stdin)")
    decode.add_argument("--ids", action="append", metavar="IDS", help="ids given on the command line, e.g. '5 3 9'")
    decode.add_argument("--format", choices=("plain", "json"), default="plain",
                        help="plain: one document per line; json: one JSON value per line")
    decode.set_defaults(handler=cmd_decode)

    view = commands.add_parser("view", help="show where token boundaries fall (terminal or HTML)")
    view.add_argument("model", help="a model file")
    _input_options(view)
    view.add_argument("--ints", action="store_true", help="documents are integer sequences")
    _encoder_options(view)
    view.add_argument("--html", metavar="FILE", help="write a self-contained HTML page instead")
    _color_options(view)
    view.add_argument("-q", "--quiet", action="store_true")
    view.set_defaults(handler=cmd_view)

    inspect = commands.add_parser("inspect", help="vocabulary size, longest tokens, weights, merge trees, coverage")
    inspect.add_argument("model", help="a model file")
    inspect.add_argument("--top", type=int, default=DEFAULT_TOP, metavar="K", help=f"rows per listing (default: {DEFAULT_TOP})")
    inspect.add_argument("--tree", action="append", metavar="TOKEN",
                         help="the merge tree of a token, by id or by piece (repeatable)")
    inspect.add_argument("--coverage", nargs="+", metavar="FILE", help="encode these files and report tokens per symbol")
    inspect.add_argument("--encoder", metavar="NAME", help="encoder for --coverage (default: the model's own)")
    inspect.add_argument("--docs-per", choices=DOCS_PER, default="line")
    inspect.add_argument("--glob", default="*")
    inspect.add_argument("--format", choices=("plain", "json"), default="plain")
    inspect.set_defaults(handler=cmd_inspect)

    compare = commands.add_parser("compare", help="one document, several encoders side by side",
                                  description="Encode one document (a whole file, '-' or --text) with several encoders.")
    compare.add_argument("model", help="a model file")
    compare.add_argument("inputs", nargs="*", metavar="INPUT", help="one file or '-'")
    compare.add_argument("--text", action="append", metavar="DOC", help="the document")
    compare.add_argument("--ints", action="store_true", help="the document is an integer sequence")
    compare.add_argument("--encoders", metavar="A,B,...", help="default: every encoder that needs no options")
    compare.add_argument("--option", action="append", default=[], metavar="[ENCODER.]KEY=VALUE",
                         help="an option for every encoder, or for one (dropout.p=0.2)")
    compare.add_argument("--format", choices=("plain", "json"), default="plain")
    compare.set_defaults(handler=cmd_compare, docs_per="file", glob="*")

    convert = commands.add_parser(
        "convert", help="between ubpe 0.3.0 JSON, our format, .tiktoken and HF tokenizer.json",
        description="Convert a model. Without --to: a .tiktoken or tokenizer.json output name decides, "
                    "else ubpe 0.3.0 JSON becomes our format and ours becomes ubpe 0.3.0 JSON.",
    )
    convert.add_argument("input", help="ubpe model, ubpe 0.3.0 JSON or .tiktoken file")
    convert.add_argument("output")
    convert.add_argument("--to", choices=(FORMAT_OURS, FORMAT_REFERENCE, FORMAT_TIKTOKEN, FORMAT_HF),
                         help="ubpe: our format; ubpe030: ubpe 0.3.0 JSON; tiktoken; hf: tokenizer.json (byte-level)")
    convert.add_argument("--variant", choices=(UNIVERSAL, CLASSIC),
                         help="for ubpe 0.3.0 JSON input (default: guessed from the mapper)")
    convert.add_argument("--pattern", type=_pattern_arg,
                         help="pre-tokenization of a .tiktoken input, or for the HF export: a preset "
                              f"({', '.join(sorted(PATTERNS))}) or a regex")
    convert.add_argument("-q", "--quiet", action="store_true")
    convert.set_defaults(handler=cmd_convert)
    return parser


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror.lower()}{where}"
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())  # one line, always


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit code:
    0 ok, 1 bad input (one line on stderr), 2 bad usage (argparse), 130 interrupted."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "top_n", 1) < 1:
        parser.error("--top-n must be at least 1")
    try:
        return args.handler(args)
    except BrokenPipeError:
        return _broken_pipe()
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (UBPEError, CLIError, OSError, ValueError, KeyError, TypeError) as exc:
        if os.environ.get(TRACEBACK_ENV):  # for debugging: the full traceback
            raise
        print(f"{PROG}: error: {_message(exc)}", file=sys.stderr)
        return EXIT_ERROR


def _broken_pipe() -> int:
    """The reader went away (``ubpe encode ... | head``): stop quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_OK

