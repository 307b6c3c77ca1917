"""Work units: fit (or load) one tokenizer and encode its pending cells, in a worker.

A `Unit` is one fit with the cells that still need computing; `run_unit` runs in a process
of the runner's pool. Only ubpe's own errors (`ubpe.errors.UBPEError`: the encoder or the
fit rejects this vocabulary or these settings) are recorded as a failed cell - the runner
then fails the run unless the config allow-lists that encoder. Any other exception is a
bug: it is raised again as `CellCrashed`, naming the cell, and stops the run.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ubpe.lab import metrics as M
from ubpe.lab.cache import DAMAGED, cell_path, discard, model_path, read_meta, save_raw, write_atomically
from ubpe.lab.config import NATIVE
from ubpe.lab.grid import VARIANT_CLASSES, CellSpec, FitSpec, supports_nbest
from ubpe.errors import VocabularySizeWarning


class CellCrashed(RuntimeError):
    """Fitting or encoding raised something other than a ubpe error: a bug, not a result."""


@dataclass
class Unit:
    """A work unit for a worker: one fit and the cells that still need computing."""

    fit: FitSpec
    train_docs: list[Any]
    heldout_docs: list[Any]
    cells: list[CellSpec]
    cache_dir: Path
    force: bool


@dataclass
class UnitResult:
    fit_key: str
    vocab_size: int | None = None
    fit_seconds: float | None = None
    errors: dict[str, str] = field(default_factory=dict)  # cell key (or "fit") -> message
    short_fit: bool = False  # the fit ended with fewer ids than asked (its size is vocab_size)
    #: the computing modules loaded in the worker (`ubpe.lab.provenance.code_record`)
    modules: list[str] = field(default_factory=list)


def loaded_tokenizer(unit: Unit, result: UnitResult):
    """A vocabulary from a file (``ubpe.load``); given idf weights from the native encodings of
    the training split when an encoder other than the model's own reads it."""
    import ubpe

    started = time.perf_counter()
    tok = ubpe.load(unit.fit.source_file)
    if any(cell.encoder != NATIVE for cell in unit.cells) and hasattr(tok, "fit_weights"):
        tok.fit_weights(unit.train_docs)
    result.fit_seconds = time.perf_counter() - started
    result.vocab_size = tok.n_vocab
    return tok


def fitted_tokenizer(unit: Unit, result: UnitResult):
    """The unit's tokenizer: from the model cache, else fitted now and cached."""
    import ubpe

    if unit.fit.source_file is not None:
        return loaded_tokenizer(unit, result)
    cls = getattr(ubpe, VARIANT_CLASSES[unit.fit.variant])
    path = model_path(unit.cache_dir, unit.fit)
    meta_path = path.with_suffix(".meta.json")
    tok = cached_model(cls, path) if not unit.force else None
    if tok is not None:
        result.fit_seconds = tok[1]["fit_seconds"]
        tok = tok[0]
    else:
        # equal-size comparisons: fit to the size the classic vocabulary ended with (a universal
        # fit ends at its n_tokens: its rearrangement trims only a round's overshoot)
        n_tokens = unit.fit.n_tokens if unit.fit.fit_to is None else min(unit.fit.fit_to, unit.fit.n_tokens)
        tok = cls(alphabet=list(unit.fit.alphabet), n_tokens=n_tokens,
                  regex_str=unit.fit.regex,
                  break_tokens=list(unit.fit.break_tokens) if unit.fit.break_tokens else None)
        started = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:  # summarised once per run, by the runner
            warnings.simplefilter("always", VocabularySizeWarning)
            tok.fit(unit.train_docs, n_candidates=unit.fit.n_candidates, quiet=True)
        result.fit_seconds = time.perf_counter() - started
        result.short_fit = any(issubclass(w.category, VocabularySizeWarning) for w in caught)
        for other in caught:  # anything else is shown as it would have been
            if not issubclass(other.category, VocabularySizeWarning):
                warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
        path.parent.mkdir(parents=True, exist_ok=True)
        tok.save(path)
        write_atomically(meta_path, json.dumps({"fit_seconds": result.fit_seconds,
                                                "vocab_size": len(tok.vocabulary)}).encode())
    result.vocab_size = len(tok.vocabulary)
    return tok


def cached_model(cls, path: Path):
    """``(tokenizer, meta)`` from the model cache; None when it is not there or cannot be read
    (then it is removed with a `ubpe.lab.cache.CacheEntryWarning`, to be fitted again)."""
    from ubpe.errors import UBPEError

    meta = read_meta(path)
    if meta is None or not path.exists():
        return None
    try:
        return cls.load(path), meta
    except (UBPEError, *DAMAGED) as error:
        discard(path, error)
        return None


def piece_lengths(vocabulary) -> np.ndarray:
    """Symbols per token id (1 for the alphabet)."""
    lengths = np.ones(len(vocabulary), dtype=np.int64)
    lengths[vocabulary.n_base:] = np.diff(vocabulary.piece_offsets)
    return lengths


def encode_cell(tok, docs: Sequence[Any], cell: CellSpec) -> dict[str, np.ndarray]:
    """Encode ``docs`` with the cell's encoder: the raw arrays the metrics are computed from."""
    options = dict(cell.options)
    if cell.seed is not None:
        options["seed"] = cell.seed
    if cell.fit.source_file is not None:
        return encode_loaded(tok, docs, cell.encoder, options)
    vocabulary = tok.vocabulary
    started = time.perf_counter()
    best = tok.encode_batch(docs, encoder=cell.encoder, top_n=1, threads=1, **options)
    seconds = time.perf_counter() - started
    tokens = [encodings[0][0] for encodings in best]
    lengths = piece_lengths(vocabulary)
    flat = np.fromiter((t for seq in tokens for t in seq), dtype=np.int64)
    n_best = cell.top_n if cell.top_n > 1 and supports_nbest(cell.encoder) else 1
    scores = np.full((len(docs), n_best), np.nan)
    if n_best > 1:
        for d, encodings in enumerate(tok.encode_batch(docs, encoder=cell.encoder, top_n=n_best,
                                                       threads=1, **options)):
            values = [score for _, score in encodings[:n_best]]
            scores[d, : len(values)] = values
    else:
        scores[:, 0] = [encodings[0][1] for encodings in best]
    return {
        "n_symbols": np.array([len(doc) for doc in docs], dtype=np.int64),
        "n_tokens": np.array([len(seq) for seq in tokens], dtype=np.int64),
        "n_covered": np.array([int(lengths[seq].sum()) if seq else 0 for seq in tokens],
                              dtype=np.int64),
        "segmentation": np.array([M.segmentation_key(seq, lengths) for seq in tokens],
                                 dtype=np.uint64),
        "scores": scores,
        "token_counts": np.bincount(flat, minlength=len(vocabulary)).astype(np.int64),
        "vocab_size": np.array(len(vocabulary)),
        "encode_seconds": np.array(seconds),
    }


def id_bytes(tok) -> list[bytes]:
    """What every id of a vocabulary from a file stands for alone, in UTF-8 bytes (the
    contract's ``decode_bytes``: a sentencepiece ``▁`` is a space, a byte token its byte, a
    control or special id nothing); indexed by id, over all ``n_vocab`` ids (specials too)."""
    return [bytes(tok.decode_bytes([i])) for i in range(tok.n_vocab)]


def char_runs(seq: Sequence[int], doc: str, pieces: list[bytes]) -> np.ndarray:
    """The characters of ``doc`` each token covers (the runs `M.segmentation_key` hashes, so a
    file vocabulary's segmentation compares with a fitted one's).

    Token ends are byte offsets into the concatenated pieces; a leading space the document does
    not have (sentencepiece's dummy prefix) is taken off first, and a token left empty by that
    has no run. An end inside a character (a byte-level token that splits one) is run -1,
    which no character segmentation has, and counts that character as ended there (the token
    that ends it covers no new one).

    >>> char_runs([0, 1], "the cat", [b" the", b" cat"]).tolist()    # dummy prefix
    [3, 4]
    >>> char_runs([0, 1, 2], "é!", [b"\\xc3", b"\\xa9", b"!"]).tolist()   # 'é' split in bytes
    [-1, 0, 1]
    """
    if not len(seq):
        return np.zeros(0, dtype=np.int64)
    spelt = b"".join(pieces[t] for t in seq)
    data = doc.encode("utf-8")
    extra = len(spelt) - len(data)
    shift = extra if 0 < extra and spelt[:extra].isspace() and spelt[extra:] == data else 0
    ends = np.cumsum([len(pieces[t]) for t in seq]) - shift
    ends = np.unique(ends[ends > 0])
    codes = np.frombuffer(data, dtype=np.uint8)
    starts = np.append(np.flatnonzero((codes & 0xC0) != 0x80), len(data))  # char starts in bytes
    index = np.minimum(np.searchsorted(starts, ends), len(starts) - 1)
    aligned = starts[index] == ends
    runs = np.diff(np.concatenate([[0], index])).astype(np.int64)
    runs[~aligned] = -1
    return runs


def decodes_to(tok, ids: Sequence[int], doc: str) -> bool:
    """Whether ``ids`` decode to ``doc`` (a sentencepiece model with a dummy prefix may give it
    back with one leading space: allowed)."""
    out = tok.decode(ids)
    return out == doc or (bool(getattr(tok, "add_space_prefix", False)) and out == " " + doc)


def encode_loaded(tok, docs: Sequence[str], encoder: str, options: dict[str, Any]) -> dict[str, np.ndarray]:
    """`encode_cell` for a vocabulary from a file: ``native`` is the model's own encoding, any
    other name a ubpe encoder on its vocabulary. Lossless means decoding to the document;
    segmentations are compared by the characters each token covers (`char_runs`; ubpe's own
    model files by their pieces' symbols)."""
    started = time.perf_counter()
    name = None if encoder == NATIVE else encoder  # None: the family's own
    tokens = [list(tok.encode_with(doc, name, **options)[0][0]) for doc in docs]
    seconds = time.perf_counter() - started
    if getattr(tok, "symbol_unit", "symbol") != "symbol":  # bytes or characters: an imported model
        pieces = id_bytes(tok)
        keys = [M.runs_key(char_runs(seq, doc, pieces)) for seq, doc in zip(tokens, docs)]
    else:  # ubpe's own model file: ids are its vocabulary's
        lengths = piece_lengths(tok.vocabulary)
        keys = [M.segmentation_key(seq, lengths) for seq in tokens]
    n_symbols = np.array([len(doc) for doc in docs], dtype=np.int64)
    flat = np.fromiter((t for seq in tokens for t in seq), dtype=np.int64)
    return {
        "n_symbols": n_symbols,
        "n_tokens": np.array([len(seq) for seq in tokens], dtype=np.int64),
        "n_covered": np.where([decodes_to(tok, seq, doc) for seq, doc in zip(tokens, docs)], n_symbols, 0),
        "segmentation": np.array(keys, dtype=np.uint64),
        "scores": np.full((len(docs), 1), np.nan),
        "token_counts": np.bincount(flat, minlength=tok.n_vocab).astype(np.int64),
        "vocab_size": np.array(tok.n_vocab),
        "encode_seconds": np.array(seconds),
    }


def final_size(cache_dir: Path, fit: FitSpec) -> int | None:
    """The vocabulary size a cached fit ended with (None when it is not cached)."""
    meta = read_meta(model_path(cache_dir, fit))
    return meta.get("vocab_size") if meta else None


def run_unit(unit: Unit) -> UnitResult:
    """Fit (or load) one tokenizer and compute its pending cells (runs in a worker)."""
    from ubpe.errors import UBPEError

    result = UnitResult(unit.fit.key)
    try:
        tok = fitted_tokenizer(unit, result)
    except UBPEError as exc:  # settings the fit rejects (e.g. n_tokens below the alphabet)
        result.errors["fit"] = f"{type(exc).__name__}: {exc}"
        return result
    except Exception as exc:
        raise CellCrashed(f"fitting {unit.fit.label()} crashed: {type(exc).__name__}: {exc}") from exc
    for cell in unit.cells:
        path = cell_path(unit.cache_dir, cell)
        if path.exists() and not unit.force:
            continue
        try:
            raw = encode_cell(tok, unit.heldout_docs, cell)
        except UBPEError as exc:  # an encoder that rejects this vocabulary
            result.errors[cell.key] = f"{type(exc).__name__}: {exc}"
            continue
        except Exception as exc:
            raise CellCrashed(f"cell {cell.name()} crashed: {type(exc).__name__}: {exc}") from exc
        save_raw(path, raw)
    from ubpe.lab.provenance import computing

    result.modules = sorted(name for name in sys.modules if computing(name))
    return result


def map_with_progress(function: Callable[[Any], Any], todo: list[Any], jobs: int, *,
                      progress: bool, desc: str) -> list[Any]:
    """``[function(t) for t in todo]`` in a process pool when ``jobs > 1``, in order, with a
    progress bar of ``desc`` on stderr (the analyses after the grid: none of them is silent)."""
    from tqdm import tqdm

    results = []
    with tqdm(total=len(todo), desc=desc, unit="task", disable=not progress, file=sys.stderr) as bar:
        if jobs > 1 and len(todo) > 1:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                for result in pool.map(function, todo):
                    results.append(result)
                    bar.update()
        else:
            for item in todo:
                results.append(function(item))
                bar.update()
    return results
