"""How many ways a document can be segmented, how concentrated they are, and how sampling trades
length for diversity (issue 15, item 5).

    python -m experiments alternatives [--jobs 2] [--force] [--results DIR]

For every dataset of the default config: UBPE (universal variant, alphabet + 1,024 merged
tokens) is fitted on the training split (cached in ``experiments/.cache/alternatives/``);
every held-out document is put on its segmentation lattice (:mod:`ubpe.encoders.ambiguity`)
under two additive scores, each at temperature 1:

* ``idf``: the vocabulary's idf weights (base ids 0), the ``sample`` encoder's default;
* ``unigram``: log relative frequencies (add-one) of the tokens in the training split
  encoded by ``ranked`` - a one-step unigram language model, as sentencepiece would sample.

Measured exactly on the lattice: segmentations per symbol (``log_n / n_symbols``), entropy
per symbol, the mass of the best and of the ``TOP_K`` best segmentations of each *part*,
the log-probability per symbol of each encoder's choice; how often the encoders agree
(boundary distance: cut points in one and not the other, per symbol); and sampling
(``sample`` at several temperatures, BPE-dropout at several ``p``): tokens per symbol
against the diversity of ``N_DRAWS`` draws per document.

Writes ``results/alternatives/``: ``documents.csv``, ``parts.csv``, ``agreement.csv``,
``sampling.csv``, ``summary.csv``, ``run.json``, the plots and ``README.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import ubpe
from ubpe import UBPE
from ubpe.encoders import make_encoder
from ubpe.encoders.ambiguity import DocumentLattice, idf_scores, weighted_paths
from ubpe.encoders.exact_tfidf import ExactTfidf, SearchLimitError
from ubpe.errors import VocabularySizeWarning
from ubpe.encoders.sample import SampleEncoder

from ubpe.lab import provenance
from ubpe.lab.config import load_config, n_tokens_for

from experiments import CONFIG_DIR

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results" / "alternatives"
CACHE = Path(__file__).resolve().parent / ".cache" / "alternatives"
SIZE = "+1024"
ENCODERS = ("tfidf", "fewest", "ranked", "longest_prefix", "longest_suffix", "longest_token")
SCORES = ("idf", "unigram")
TEMPERATURES = (0.25, 0.5, 1.0, 2.0, 4.0)
DROPOUTS = (0.05, 0.1, 0.2, 0.4)
N_DRAWS = 8
TOP_K = 10
MAX_PARTS = 3000  # parts per dataset for the top-k masses (one k-best search each)
SEED = 0
EXACT_WINDOW = 64  # unsplit documents: the exact tf-idf search runs on this many first symbols
EXACT_MAX_NODES = 200_000  # per document; beyond it the document counts as unresolved
BEAM_TOP_N = 5
MISS_TOLERANCE = 1e-12  # relative: a smaller shortfall of the beam's score is a tie


def cuts(tokens: list[int] | np.ndarray, lengths: np.ndarray) -> set[int]:
    """The cut points of a segmentation (token ends, the last one left out)."""
    ends = np.cumsum(lengths[np.asarray(tokens, dtype=np.int64)])
    return set(ends[:-1].tolist())


def boundary_distance(a: set[int], b: set[int], n_symbols: int) -> float:
    """Cut points in one segmentation and not the other, per possible cut point."""
    return len(a ^ b) / max(1, n_symbols - 1)


def fitted(name: str, train, heldout, ds) -> UBPE:
    """UBPE on the training split, cached by what decides it."""
    alphabet = sorted(set(train.alphabet) | set(heldout.alphabet))
    n_tokens = n_tokens_for(SIZE, len(alphabet))
    key = hashlib.sha256(json.dumps([train.checksum, n_tokens, ds.regex_pattern, ubpe.__version__],
                                    default=str).encode()).hexdigest()[:16]
    path = CACHE / f"{name}-{key}.json"
    if path.exists():
        return UBPE.load(path)
    tok = UBPE(alphabet=alphabet, n_tokens=n_tokens, regex_str=ds.regex_pattern,
               break_tokens=list(ds.break_tokens) if ds.break_tokens else None)
    with warnings.catch_warnings():  # a fit that ends smaller: its size is in run.json's datasets
        warnings.simplefilter("ignore", VocabularySizeWarning)
        tok.fit(list(train.docs), quiet=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tok.save(tmp)
    tmp.replace(path)
    return tok


def unigram_scores(tok: UBPE, docs: list[Any]) -> np.ndarray:
    """Per id, the add-one log relative frequency of the tokens of ``docs`` encoded by ``ranked``."""
    counts = np.ones(len(tok.vocabulary))
    for encodings in tok.encode_batch(docs, encoder="ranked", threads=1):
        np.add.at(counts, encodings[0][0], 1)
    return np.log(counts / counts.sum())


def measure_dataset(name: str, kind: str, tok: UBPE, docs: list[Any], train_docs: list[Any]) -> dict[str, list]:
    """Every table's rows for one dataset."""
    vocab = tok.vocabulary
    lengths = np.ones(len(vocab), dtype=np.int64)
    lengths[vocab.n_base:] = np.diff(vocab.piece_offsets)
    weights = {"idf": idf_scores(vocab), "unigram": unigram_scores(tok, train_docs)}
    additive = {score: weighted_paths(vocab, w) for score, w in weights.items()}
    encoders = {e: make_encoder(e, vocab) for e in ENCODERS}
    rows: dict[str, list] = {"documents": [], "parts": [], "agreement": [], "sampling": []}
    split = [tok.split_pipeline.split(doc).parts(0) for doc in docs]
    choices = {e: [encoders[e].encode(parts)[0][0] for parts in split] for e in ENCODERS}
    n_parts_done = 0
    for d, parts in enumerate(split):
        n = int(sum(len(p) for p in parts))
        if n == 0:
            continue
        for score in SCORES:
            lattice = DocumentLattice(vocab, parts, additive=additive[score])
            row = {"dataset": name, "kind": kind, "doc": d, "score": score, "n_symbols": n,
                   "n_parts": len(parts), "log_n": lattice.log_n(), "entropy": float(lattice.entropy),
                   "expected_tokens": float(lattice.expected_tokens),
                   "mode_tokens": len(lattice.best(1)[0][0])}
            for e in ENCODERS:
                row[f"tokens_{e}"] = len(choices[e][d])
                row[f"logp_{e}"] = lattice.path_score(choices[e][d]) - lattice.log_partition
            rows["documents"].append(row)
        # concentration per part (a pre-tokenized word; the whole document when unsplit)
        for p, part in enumerate(parts):
            if n_parts_done >= MAX_PARTS or not len(part):
                continue
            n_parts_done += 1
            for score in SCORES:
                lattice = DocumentLattice(vocab, [part], additive=additive[score])
                masses = np.exp(np.array([s for _, s in lattice.best(TOP_K)]) - lattice.log_partition)
                rows["parts"].append({"dataset": name, "kind": kind, "doc": d, "part": p, "score": score,
                                      "n_symbols": len(part), "log_n": lattice.log_n(),
                                      "top1_mass": float(masses[0]), f"top{TOP_K}_mass": float(masses.sum())})
    documents = [i for i, parts in enumerate(split) if sum(len(p) for p in parts)]
    for a, b in combinations(ENCODERS, 2):
        distances = [boundary_distance(cuts(choices[a][d], lengths), cuts(choices[b][d], lengths),
                                       int(sum(len(p) for p in split[d]))) for d in documents]
        same = [choices[a][d] == choices[b][d] for d in documents]
        rows["agreement"].append({"dataset": name, "kind": kind, "a": a, "b": b,
                                  "identical_share": float(np.mean(same)),
                                  "boundary_distance": float(np.mean(distances))})
    rows["sampling"] = sampling_rows(name, kind, tok, split, documents, weights, lengths)
    rows["beam"] = beam_rows(name, kind, tok, docs)
    return rows


def beam_rows(name: str, kind: str, tok: UBPE, docs: list[Any]) -> list[dict]:
    """Per document: the universal encoder's beam against the exact tf-idf top-n.

    Pre-tokenized documents are taken whole; unsplit ones (a single part) as their first
    ``EXACT_WINDOW`` symbols. A document is *resolved* when every part fits the exact search
    (``max_length``, ``max_nodes``)."""
    vocab = tok.vocabulary
    beam = make_encoder("tfidf", vocab, exact=True)
    # branch and bound only: the integer-program fallback resolves the rest, but at seconds per part
    exact = ExactTfidf(vocab, max_length=EXACT_WINDOW, max_nodes=EXACT_MAX_NODES, milp=False)
    rows = []
    for d, doc in enumerate(docs):
        parts = tok.split_pipeline.split(doc).parts(0)
        window = None
        if len(parts) == 1 and len(parts[0]) > EXACT_WINDOW:
            parts, window = [parts[0][:EXACT_WINDOW]], EXACT_WINDOW
        n = int(sum(len(p) for p in parts))
        if n == 0:
            continue
        row = {"dataset": name, "kind": kind, "doc": d, "n_symbols": n, "n_parts": len(parts),
               "window": window, "resolved": False}
        try:
            found = exact.encode(parts, top_n=BEAM_TOP_N)
        except SearchLimitError:
            rows.append(row)
            continue
        beamed = beam.encode(parts, top_n=BEAM_TOP_N)
        exact_scores = [score for _, score in found]
        beam_scores = [score for _, score in beamed] + [-math.inf] * (len(found) - len(beamed))
        short = [b < e - MISS_TOLERANCE * max(1.0, abs(e)) for e, b in zip(exact_scores, beam_scores)]
        best, got = exact_scores[0], beam_scores[0]
        row.update(resolved=True, exact_score=best, beam_score=got, missed=short[0],
                   relative_gap=(best - got) / best if best > 0 else 0.0,
                   ranks_short=float(np.mean(short)),
                   same_tokens=float(np.mean([a[0] == b[0] for a, b in zip(found, beamed)])),
                   nodes=exact.nodes)
        rows.append(row)
    return rows


def draw_stats(draws_per_doc: list[list[list[int]]], split, documents, lengths) -> dict[str, float]:
    """Tokens per symbol, pairwise boundary distance and share of distinct draws."""
    n_tokens = n_symbols = 0
    distances, distinct = [], []
    for draws, d in zip(draws_per_doc, documents):
        n = int(sum(len(p) for p in split[d]))
        n_tokens += sum(len(t) for t in draws)
        n_symbols += n * len(draws)
        cut_sets = [cuts(t, lengths) for t in draws]
        distances.extend(boundary_distance(a, b, n) for a, b in combinations(cut_sets, 2))
        distinct.append(len({tuple(t) for t in draws}) / len(draws))
    return {"tokens_per_symbol": n_tokens / n_symbols, "pairwise_distance": float(np.mean(distances)),
            "distinct_share": float(np.mean(distinct))}


def sampling_rows(name, kind, tok, split, documents, weights, lengths) -> list[dict]:
    vocab = tok.vocabulary
    rows = []
    total = sum(int(sum(len(p) for p in split[d])) for d in documents)
    for score in SCORES:
        for temperature in TEMPERATURES:
            encoder = SampleEncoder(vocab, weights=weights[score], temperature=temperature, seed=SEED)
            draws = [[t for t, _ in encoder.encode_paths(split[d], top_n=N_DRAWS)] for d in documents]
            exact_tokens = exact_entropy = 0.0
            for d in documents:
                lattice = DocumentLattice(vocab, split[d], temperature=temperature, additive=encoder._additive)
                exact_tokens += lattice.expected_tokens
                exact_entropy += lattice.entropy
            rows.append({"dataset": name, "kind": kind, "method": f"sample ({score})", "parameter": temperature,
                         **draw_stats(draws, split, documents, lengths),
                         "exact_tokens_per_symbol": exact_tokens / total,
                         "exact_entropy_per_symbol": exact_entropy / total})
    for p in DROPOUTS:
        encoder = make_encoder("dropout", vocab, p=p, seed=SEED)
        draws = [[encoder.encode(split[d])[0][0] for _ in range(N_DRAWS)] for d in documents]
        rows.append({"dataset": name, "kind": kind, "method": "dropout", "parameter": p,
                     **draw_stats(draws, split, documents, lengths),
                     "exact_tokens_per_symbol": math.nan, "exact_entropy_per_symbol": math.nan})
    return rows


def run_dataset(ds) -> dict[str, Any]:
    from experiments.datasets import load
    from experiments.freshness import data_record

    started = time.perf_counter()
    train = load(ds.registry_name, "train", max_symbols=ds.max_symbols, **ds.load_options)
    heldout = load(ds.registry_name, "heldout", max_symbols=ds.heldout_max_symbols, **ds.load_options)
    tok = fitted(ds.name, train, heldout, ds)
    rows = measure_dataset(ds.name, heldout.kind, tok, list(heldout.docs), list(train.docs))
    rows["info"] = {"dataset": ds.name, "kind": heldout.kind, "vocab_size": len(tok.vocabulary),
                    "heldout_docs": len(heldout.docs), "heldout_symbols": int(sum(len(d) for d in heldout.docs)),
                    "seconds": round(time.perf_counter() - started, 1)}
    rows["data"] = [data_record(split, registry_name=ds.registry_name, max_symbols=cap, options=ds.load_options)
                    for split, cap in ((train, ds.max_symbols), (heldout, ds.heldout_max_symbols))]
    return rows


def summarize(documents: pd.DataFrame, parts: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and score: pooled per-symbol quantities and mean part masses."""
    g = documents.groupby(["dataset", "kind", "score"], sort=False)
    out = g.agg(docs=("doc", "size"), symbols=("n_symbols", "sum"), log_n=("log_n", "sum"),
                entropy=("entropy", "sum"), expected_tokens=("expected_tokens", "sum"),
                mode_tokens=("mode_tokens", "sum")).reset_index()
    out["log_n_per_symbol"] = out["log_n"] / out["symbols"]
    out["entropy_per_symbol"] = out["entropy"] / out["symbols"]
    out["expected_tokens_per_symbol"] = out["expected_tokens"] / out["symbols"]
    for e in ENCODERS:
        out[f"logp_per_symbol_{e}"] = g[f"logp_{e}"].sum().values / out["symbols"]
    masses = parts.groupby(["dataset", "score"], sort=False).agg(
        mean_part_symbols=("n_symbols", "mean"), top1_mass=("top1_mass", "mean"),
        **{f"top{TOP_K}_mass": (f"top{TOP_K}_mass", "mean")}).reset_index()
    return out.merge(masses, on=["dataset", "score"]).drop(columns=["log_n", "entropy", "expected_tokens"])


def summarize_beam(beam: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: how often and by how much the beam misses the exact tf-idf best, and how
    much of the exact top-n it finds."""
    done = beam[beam["resolved"]]
    out = beam.groupby(["dataset", "kind"], sort=False).agg(docs=("doc", "size"),
                                                            resolved=("resolved", "sum")).reset_index()
    stats = done.groupby("dataset", sort=False).agg(
        window=("window", "max"), mean_parts=("n_parts", "mean"), mean_symbols=("n_symbols", "mean"),
        missed_share=("missed", "mean"),
        mean_relative_gap=("relative_gap", "mean"), max_relative_gap=("relative_gap", "max"),
        ranks_short=("ranks_short", "mean"), same_tokens=("same_tokens", "mean")).reset_index()
    out = out.merge(stats, on="dataset", how="left")
    out.insert(2, "measured_on", ["whole documents" if pd.isna(w) else f"first {int(w)} symbols (shorter: whole)"
                                  for w in out.pop("window")])
    return out


#: The CSV files of a results folder (`make_tables`' keys).
TABLES = ("documents", "parts", "agreement", "sampling", "beam", "summary", "beam_summary")


def make_tables(results: list[dict[str, list]]) -> dict[str, pd.DataFrame]:
    """Every table of the report from the datasets' rows."""
    tables = {name: pd.DataFrame([row for r in results for row in r[name]])
              for name in ("documents", "parts", "agreement", "sampling", "beam")}
    tables["summary"] = summarize(tables["documents"], tables["parts"])
    tables["beam_summary"] = summarize_beam(tables["beam"])
    return tables


def run_info(started: float, results: list[dict[str, Any]]) -> dict[str, Any]:
    return {"command": "python -m experiments alternatives", "size": SIZE, "encoders": ENCODERS,
            "temperatures": TEMPERATURES, "dropouts": DROPOUTS, "draws": N_DRAWS, "top_k": TOP_K,
            "max_parts": MAX_PARTS, "seed": SEED, "exact_window": EXACT_WINDOW,
            "exact_max_nodes": EXACT_MAX_NODES, "beam_top_n": BEAM_TOP_N,
            "datasets": [r["info"] for r in results if "info" in r],
            "ubpe": ubpe.__version__, "python": platform.python_version(),
            "seconds": round(time.perf_counter() - started, 1),
            "data": [record for r in results for record in r.get("data", [])]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments alternatives", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--results", type=Path, default=RESULTS, help="output folder")
    parser.add_argument("--datasets", default=None, help="comma-separated subset of the default config's")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--report", action="store_true",
                        help="re-render README.md and the plots from the folder's CSV files and run.json")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="write into results/ from a tree with uncommitted changes (run.json then says dirty)")
    args = parser.parse_args(argv)
    from experiments import refuse_dirty

    refuse_dirty(args.results, args.allow_dirty)
    if args.report:
        from experiments.alternatives_report import render

        out = args.results
        tables = {name: pd.read_csv(out / f"{name}.csv") for name in TABLES}
        print(f"wrote {render(out, tables, json.loads((out / 'run.json').read_text()))}")
        return 0
    started = time.perf_counter()
    code = provenance.git_state(exclude=["results"])  # the commit that computes
    config = load_config("default", named=CONFIG_DIR)
    chosen = [ds for ds in config.datasets if args.datasets is None or ds.name in args.datasets.split(",")]
    from tqdm import tqdm

    # a dataset takes minutes: one step of the bar per dataset done, in the config's order
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(tqdm(pool.map(run_dataset, chosen), total=len(chosen), desc="alternatives: datasets",
                            unit="dataset", file=sys.stderr, disable=args.no_progress))
    tables = make_tables(results)
    out = args.results
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.to_csv(out / f"{name}.csv", index=False, float_format="%.6g")
    info = {**run_info(started, results), "git": code,
            **provenance.side_record({"datasets": [ds.name for ds in chosen]})}
    (out / "run.json").write_text(json.dumps(info, indent=1) + "\n")
    from experiments.alternatives_report import render

    render(out, tables, info)
    print(f"wrote {out} in {info['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
