"""Inference methods on the vocabularies of real language models (issue 9, item 5).

    python -m experiments llm [--max-docs N] [--vocabs gpt-2,llama-spm] [--results DIR]

Six llama.cpp test vocabularies (GPT-2, Llama 3, Qwen2, StarCoder, Llama 2's sentencepiece
model, Phi-3), loaded with ``ubpe.load``; each held-out document is encoded by the model's own
algorithm (``native``, llama.cpp-exact) and by ubpe's encoders on the very same vocabulary.
``tfidf`` gets idf weights from the native encodings of the dataset's *train* split
(``fit_weights``), fitted per (vocabulary, dataset) and measured on the held-out split.

Per (vocabulary, dataset, encoder): tokens per character and per UTF-8 byte, Rényi efficiency
(`ubpe.lab.metrics`), the share of whitespace-separated words segmented differently from
``native`` (`words_differing`), and lossless decoding (every encoding must decode to what the
native encoding decodes to; failures are counted). Per-unit paired statistics of each encoder
against ``native`` are in `experiments.llm_report`.

>>> word_spans(b" ab  c")
[(1, 3), (5, 6)]
>>> words_differing([(1, 3), (5, 6)], np.array([0, 1, 3, 6]), np.array([0, 3, 6]))
1
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ubpe.lab.metrics import renyi_efficiency

RESULTS = Path(__file__).resolve().parent.parent / "results" / "llm"
LLAMA_CPP_PACKAGE = "llama-cpp-python"
MODELS_GLOB = "*/vendor/llama.cpp/models"

#: Display name -> llama.cpp vocabulary file name (``ggml-vocab-NAME.gguf``).
VOCABS: dict[str, str] = {
    "GPT-2": "gpt-2", "Llama 3": "llama-bpe", "Qwen2": "qwen2", "StarCoder": "starcoder",
    "Llama SPM": "llama-spm", "Phi-3": "phi-3",
}
#: Held-out datasets and their group in the report.
DATASETS: dict[str, str] = {"kjv": "prose", "shakespeare": "prose", "udhr": "multilingual",
                            "stdlib": "code"}
NATIVE = "native"
#: Encoder name -> its options; ``native`` is the model's own tokenization.
ENCODERS: dict[str, dict] = {
    NATIVE: {}, "fewest": {}, "longest_prefix": {}, "longest_token": {}, "tfidf": {},
    "dropout": {"p": 0.1, "seed": 0}, "ranked": {},
}
#: Characters per split: the held-out text measured, the train text the tfidf weights come from.
HELDOUT_CHARS = 300_000
TRAIN_CHARS = 300_000
_WORD = re.compile(rb"\S+")


def word_spans(surface: bytes) -> list[tuple[int, int]]:
    """Byte spans ``[start, end)`` of the whitespace-separated words of ``surface``."""
    return [m.span() for m in _WORD.finditer(surface)]


def boundaries(ids: Sequence[int], byte_lengths: np.ndarray) -> np.ndarray:
    """Byte offsets where the tokens ``ids`` start and end (0 first, the total last).

    >>> boundaries([2, 0], np.array([1, 1, 3])).tolist()
    [0, 3, 4]
    """
    return np.concatenate([[0], np.cumsum(byte_lengths[np.asarray(ids, dtype=np.int64)])])


def words_differing(spans: Sequence[tuple[int, int]], a: np.ndarray, b: np.ndarray) -> int:
    """Words whose token boundaries in the closed span ``[start, end]`` differ between the
    boundary arrays ``a`` and ``b`` (sorted). A boundary at the word's start counts, so
    ``Ġworld`` and ``Ġ`` + ``world`` differ; the whitespace between words does not."""
    if not spans:
        return 0
    starts = np.array([s for s, _ in spans])
    ends = np.array([e for _, e in spans])
    differ = 0
    a_lo, a_hi = np.searchsorted(a, starts, "left"), np.searchsorted(a, ends, "right")
    b_lo, b_hi = np.searchsorted(b, starts, "left"), np.searchsorted(b, ends, "right")
    for i in range(len(spans)):
        if not np.array_equal(a[a_lo[i]:a_hi[i]], b[b_lo[i]:b_hi[i]]):
            differ += 1
    return differ


def models_dir() -> Path:
    """llama.cpp's ``models`` folder in the extracted llama-cpp-python sdist."""
    from experiments.datasets.sources import extracted_dir

    found = sorted(extracted_dir(LLAMA_CPP_PACKAGE).glob(MODELS_GLOB))
    if not found:
        raise FileNotFoundError("no llama.cpp models folder: run experiments/install_data.sh")
    return found[0]


def load_vocab(name: str):
    import ubpe

    return ubpe.load(models_dir() / f"ggml-vocab-{name}.gguf")


def token_byte_lengths(tok) -> np.ndarray:
    """Every id's length in bytes as the model decodes it (``▁`` counts as one space)."""
    return np.array([len(tok.decode_bytes([i])) for i in range(tok.n_vocab)], dtype=np.int64)


@dataclass
class Cell:
    """Raw results of one (vocabulary, dataset, encoder) cell, per document."""

    vocab: str
    dataset: str
    encoder: str
    n_tokens: list[int] = field(default_factory=list)
    n_words: list[int] = field(default_factory=list)
    words_differ: list[int] = field(default_factory=list)
    lossless_failures: int = 0
    counts: np.ndarray | None = None
    seconds: float = 0.0


def encode(tok, doc: str, encoder: str, options: dict) -> list[int]:
    if encoder == NATIVE:
        return tok.encode(doc)
    (ids, _), = tok.encode_with(doc, encoder, **options)
    return ids


def unseen_share(tok) -> float:
    """Share of the vocabulary's merged pieces at the highest idf after `fit_weights`: the
    pieces that no train document's native encoding uses."""
    weights = tok.vocabulary.weights
    return float(np.mean(weights == weights.max())) if len(weights) else math.nan


def measure_vocab(vocab: str, tok, dataset: str, train: Sequence[str], docs: Sequence[str],
                  encoders: dict[str, dict] = ENCODERS) -> list[Cell]:
    """Every encoder on ``docs`` with one vocabulary; ``tfidf`` weights fitted on ``train``."""
    if "tfidf" in encoders:
        tok.fit_weights(train)
    lengths = token_byte_lengths(tok)
    native_ids = [tok.encode(doc) for doc in docs]
    surfaces = [tok.decode_bytes(ids) for ids in native_ids]
    spans = [word_spans(s) for s in surfaces]
    native_bounds = [boundaries(ids, lengths) for ids in native_ids]
    cells = []
    for encoder, options in encoders.items():
        cell = Cell(vocab, dataset, encoder, counts=np.zeros(tok.n_vocab, dtype=np.int64))
        started = time.perf_counter()
        for doc, surface, words, bounds, native in zip(docs, surfaces, spans, native_bounds,
                                                        native_ids):
            ids = native if encoder == NATIVE else encode(tok, doc, encoder, options)
            cell.n_tokens.append(len(ids))
            cell.n_words.append(len(words))
            cell.words_differ.append(words_differing(words, boundaries(ids, lengths), bounds))
            if tok.decode_bytes(ids) != surface or tok.decode(ids) != tok.decode(native):
                cell.lossless_failures += 1
            np.add.at(cell.counts, np.asarray(ids, dtype=np.int64), 1)
        cell.seconds = time.perf_counter() - started
        cells.append(cell)
    return cells


def native_decodes_to_text(tok, docs: Sequence[str]) -> int:
    """Documents whose native encoding does not decode to the text itself (a sentencepiece
    model with a dummy prefix may give it back with one leading space: allowed)."""
    failures = 0
    for doc in docs:
        out = tok.decode(tok.encode(doc))
        if out != doc and not (getattr(tok, "add_space_prefix", False) and out == " " + doc):
            failures += 1
    return failures


def per_doc_rows(cell: Cell, docs: Sequence[str], doc_ids: Sequence[str],
                 units: Sequence[str]) -> list[dict]:
    return [{"vocab": cell.vocab, "dataset": cell.dataset, "encoder": cell.encoder,
             "doc_id": doc_id, "unit": unit, "n_chars": len(doc),
             "n_bytes": len(doc.encode("utf-8")), "n_tokens": n, "n_words": w,
             "words_differ": d}
            for doc, doc_id, unit, n, w, d in zip(docs, doc_ids, units, cell.n_tokens,
                                                   cell.n_words, cell.words_differ)]


def summary_row(cell: Cell, docs: Sequence[str], n_units: int, n_vocab: int) -> dict:
    chars = sum(len(d) for d in docs)
    nbytes = sum(len(d.encode("utf-8")) for d in docs)
    tokens = sum(cell.n_tokens)
    words = sum(cell.n_words)
    return {
        "vocab": cell.vocab, "dataset": cell.dataset, "group": DATASETS.get(cell.dataset, ""),
        "encoder": cell.encoder, "n_docs": len(docs), "n_units": n_units, "n_chars": chars,
        "n_bytes": nbytes, "n_tokens": tokens,
        "tokens_per_char": tokens / chars if chars else math.nan,
        "tokens_per_byte": tokens / nbytes if nbytes else math.nan,
        "renyi_efficiency": renyi_efficiency(cell.counts, n_vocab),
        "n_words": words, "words_differ_share": sum(cell.words_differ) / words if words else math.nan,
        "lossless_failures": cell.lossless_failures, "seconds": round(cell.seconds, 3),
    }


def run(vocabs: dict[str, str] = VOCABS, datasets: Sequence[str] = tuple(DATASETS),
        encoders: dict[str, dict] = ENCODERS, max_docs: int | None = None,
        heldout_chars: int = HELDOUT_CHARS, train_chars: int = TRAIN_CHARS,
        progress: bool = True) -> tuple[list[dict], list[dict], dict]:
    """The experiment's core: ``(summary rows, per-document rows, info)``.

    Each split is capped at ``heldout_chars`` / ``train_chars`` characters by the dataset
    loader (whole documents); ``max_docs`` then keeps the first documents of each split - for
    a quick run or a test.
    """
    from experiments.datasets import load

    from experiments.freshness import data_record

    splits, records = {}, []
    for name in datasets:
        train = load(name, "train", max_symbols=train_chars)
        heldout = load(name, "heldout", max_symbols=heldout_chars)
        records += [data_record(train, registry_name=name, max_symbols=train_chars),
                    data_record(heldout, registry_name=name, max_symbols=heldout_chars)]
        keep = slice(None, max_docs)
        splits[name] = (train.docs[keep], heldout.docs[keep], heldout.doc_ids[keep],
                        (heldout.doc_units or heldout.doc_ids)[keep], heldout.unit)
    summary, per_doc = [], []
    info = {"datasets": {n: {"unit": s[4], "docs": len(s[1]), "units": len(set(s[3])),
                             "chars": sum(map(len, s[1])), "train_docs": len(s[0]),
                             "train_chars": sum(map(len, s[0]))} for n, s in splits.items()},
            "native_roundtrip_failures": {}, "unseen_id_share": {}, "vocab_sizes": {}, "vocab_files": {},
            "heldout_chars_cap": heldout_chars, "train_chars_cap": train_chars, "data": records}
    for label, name in vocabs.items():
        tok = load_vocab(name)
        info["vocab_sizes"][label] = tok.n_vocab
        info["vocab_files"][label] = f"ggml-vocab-{name}.gguf"
        for dataset, (train, docs, doc_ids, units, _) in splits.items():
            started = time.perf_counter()
            info["native_roundtrip_failures"][f"{label}/{dataset}"] = native_decodes_to_text(tok, docs)
            cells = measure_vocab(label, tok, dataset, train, docs, encoders)
            if "tfidf" in encoders:
                info["unseen_id_share"][f"{label}/{dataset}"] = unseen_share(tok)
            for cell in cells:
                summary.append(summary_row(cell, docs, len(set(units)), tok.n_vocab))
                per_doc.extend(per_doc_rows(cell, docs, doc_ids, units))
            if progress:
                print(f"  {label:10s} {dataset:12s} {time.perf_counter() - started:6.1f} s",
                      file=sys.stderr, flush=True)
    return summary, per_doc, info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments llm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=None,
                        help="keep the first N documents of each split (default: all, as capped "
                             "by the dataset loader)")
    parser.add_argument("--heldout-chars", type=int, default=HELDOUT_CHARS,
                        help=f"cap on each held-out split, in characters (default {HELDOUT_CHARS:,})")
    parser.add_argument("--train-chars", type=int, default=TRAIN_CHARS,
                        help=f"cap on each train split (tfidf's idf), in characters (default {TRAIN_CHARS:,})")
    parser.add_argument("--vocabs", default=None,
                        help="comma-separated llama.cpp vocabulary names (default: all six)")
    parser.add_argument("--results", type=Path, default=RESULTS, help="output folder")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="write into results/ from a tree with uncommitted changes (run.json then says dirty)")
    args = parser.parse_args(argv)
    from experiments import refuse_dirty

    refuse_dirty(args.results, args.allow_dirty)
    vocabs = VOCABS
    if args.vocabs:
        wanted = args.vocabs.split(",")
        by_file = {v: k for k, v in VOCABS.items()}
        vocabs = {by_file.get(w, w): w for w in wanted}
    from experiments.llm_report import write_results

    started = time.perf_counter()
    summary, per_doc, info = run(vocabs, max_docs=args.max_docs, heldout_chars=args.heldout_chars,
                                 train_chars=args.train_chars)
    info["seconds"] = round(time.perf_counter() - started, 1)
    info["max_docs"] = args.max_docs
    from ubpe.lab.provenance import side_record

    info.update(side_record({"vocabs": sorted(vocabs), "max_docs": args.max_docs,
                             "heldout_chars": args.heldout_chars, "train_chars": args.train_chars}))
    out = write_results(args.results, summary, per_doc, info)
    failures = sum(r["lossless_failures"] for r in summary)
    print(f"wrote {out} in {info['seconds']:.1f} s; lossless failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
