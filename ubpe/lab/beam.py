"""The universal encoder's beam on whole documents, against the exact tf-idf optimum, and the
tf-idf objective itself with numbers (issue 14, items 6-7).

The universal (tf-idf) encoder keeps ``top_n`` candidate tails per part; the default
experiment asks for ``top_n = 1`` on documents that are, for DNA, protein, signals and music,
whole and unsplit. For each dataset, with the grid's universal tokenizer of the config's
``[beam]`` setting, every held-out document (up to ``max_docs``) is encoded as the
experiment encodes it at each beam width; the score and length of the best encoding are
compared with width 1. The exact optimum (`ubpe.encoders.exact_tfidf.ExactTfidf`, branch and
bound) is computed for documents whose parts are at most ``exact_max_symbols`` long (every
pre-tokenized text document: its parts are words); of a longer unsplit document, the first
``exact_max_symbols`` symbols are taken as a document of their own (the ``window`` rows), and
the widths run on it as well, so every gap is measured against the true optimum of the same
input. A search that expands more than ``exact_max_nodes`` nodes leaves the document
unresolved (counted, not guessed).

    [beam]
    size = "+1024"
    n_candidates = 50
    widths = [1, 5, 20, 64]
    max_docs = 100
    exact_max_symbols = 32
    exact_max_nodes = 100000

Writes ``beam.csv`` (per input and width), ``beam_summary.csv`` and ``tfidf_objective.json``
(the weights and one sentence, see `objective`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ubpe.encoders import make_encoder
from ubpe.encoders.exact_tfidf import ExactTfidf, SearchLimitError, tfidf_score

from ubpe.lab.config import BeamConfig
from ubpe.lab.units import Unit, UnitResult, fitted_tokenizer

#: relative score difference below which two encodings tie (the encoder adds part scores in
#: different orders at different widths, which moves the last bits)
TOLERANCE = 1e-9
#: the sentence the report's tf-idf section explains, on the first prose dataset
EXAMPLE = "the LORD said unto Moses"


@dataclass
class Job:
    fit: Any
    kind: str
    train_docs: list[Any]
    docs: list[Any]
    cache_dir: Path
    beam: BeamConfig


def sweep(encoder, exact: ExactTfidf, parts: list[np.ndarray], widths: tuple[int, ...]
          ) -> dict[str, Any]:
    """Best score and length at each width, and the exact optimum (NaN: unresolved)."""
    out: dict[str, Any] = {}
    for width in widths:
        tokens, score = encoder.encode(parts, top_n=width)[0]
        out[width] = (float(score), len(tokens))
    try:
        if any(len(p) > exact.max_length for p in parts):
            raise SearchLimitError("a part too long")
        out["exact"] = float(exact.encode(parts, top_n=1)[0][1])
    except SearchLimitError:
        out["exact"] = math.nan
    return out


def run_job(job: Job) -> list[dict[str, Any]]:
    """Every row of one dataset."""
    tok = fitted_tokenizer(Unit(job.fit, job.train_docs, job.docs, [], job.cache_dir, False),
                           UnitResult(job.fit.key))
    vocab = tok.vocabulary
    encoder = make_encoder("tfidf", vocab)
    exact = ExactTfidf(vocab, max_length=job.beam.exact_max_symbols,
                       max_nodes=job.beam.exact_max_nodes, milp=False)
    rows = []
    for d, doc in enumerate(job.docs[: job.beam.max_docs]):
        parts = [p for p in tok.split_pipeline.split(doc).parts(0) if len(p)]
        if not parts:
            continue
        inputs = [("document", parts)]
        if len(parts) == 1 and len(parts[0]) > job.beam.exact_max_symbols:
            inputs.append((f"first {job.beam.exact_max_symbols} symbols",
                           [parts[0][: job.beam.exact_max_symbols]]))
        for name, these in inputs:
            result = sweep(encoder, exact, these, job.beam.widths)
            score_1, tokens_1 = result[job.beam.widths[0]]
            for width in job.beam.widths:
                score, tokens = result[width]
                rows.append({"dataset": job.fit.dataset, "kind": job.kind, "doc": d, "input": name,
                             "n_symbols": int(sum(len(p) for p in these)), "n_parts": len(these),
                             "width": width, "score": score, "tokens": tokens,
                             "score_width1": score_1, "tokens_width1": tokens_1,
                             "exact_score": result["exact"]})
    return rows


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, input and width: how often and how much the width changes the best
    encoding, and how far it is from the exact optimum."""
    if rows.empty:
        return rows
    tol = TOLERANCE * rows["score_width1"].abs().clip(lower=1.0)
    frame = rows.assign(
        improved=rows["score"] > rows["score_width1"] + tol,
        worse=rows["score"] < rows["score_width1"] - tol,
        score_change=(rows["score"] - rows["score_width1"]) / rows["score_width1"].where(rows["score_width1"] > 0),
        token_change=(rows["tokens"] - rows["tokens_width1"]) / rows["tokens_width1"],
        resolved=rows["exact_score"].notna(),
        optimal=(rows["exact_score"] - rows["score"]).abs() <= TOLERANCE * rows["exact_score"].abs().clip(lower=1.0),
        gap=(rows["exact_score"] - rows["score"]) / rows["exact_score"].where(rows["exact_score"] > 0))
    grouped = frame.groupby(["dataset", "kind", "input", "width"], sort=False)
    summary = grouped.agg(docs=("doc", "size"), mean_symbols=("n_symbols", "mean"),
                          improved=("improved", "mean"), worse=("worse", "mean"),
                          mean_score_change=("score_change", "mean"),
                          mean_token_change=("token_change", "mean"),
                          resolved=("resolved", "sum")).reset_index()
    exact = frame[frame["resolved"]].groupby(["dataset", "kind", "input", "width"], sort=False).agg(
        optimal=("optimal", "mean"), mean_gap=("gap", "mean"), max_gap=("gap", "max")).reset_index()
    return summary.merge(exact, on=["dataset", "kind", "input", "width"], how="left")


def objective(tok, docs_kind: str, example: str = EXAMPLE) -> dict[str, Any]:
    """The tf-idf objective in numbers: weights by merge order, the weights of the most and
    the least frequent tokens, and ``example`` encoded by tf-idf and by fewest tokens."""
    vocab = tok.vocabulary
    weights = np.asarray(vocab.weights, dtype=np.float64)
    ids = np.arange(vocab.n_base, vocab.n_base + len(weights))
    pieces = tok.pieces(ids.tolist())
    order = np.argsort(weights, kind="stable")
    tenth = max(1, len(weights) // 10)
    # ids follow weight after rearrangement; the merge order is the tokens' creation rank
    by_rank = weights[np.argsort(np.asarray(vocab.ranks), kind="stable")]
    parts = [p for p in tok.split_pipeline.split(example).parts(0) if len(p)]
    encodings = {}
    all_w = np.concatenate([np.zeros(vocab.n_base), weights])
    for name in ("tfidf", "fewest"):
        encoder = make_encoder(name, vocab)
        per_part = [encoder.encode([p], top_n=1)[0][0] for p in parts]
        tokens = [t for part in per_part for t in part]
        encodings[name] = {"tokens": len(tokens), "pieces": tok.pieces(tokens),
                           "weights": [round(float(all_w[t]), 3) for t in tokens],
                           "score": float(sum(tfidf_score(part, all_w) for part in per_part))}
    return {
        "kind": docs_kind, "n_merged": int(len(weights)),
        "ranks_known": bool((np.asarray(vocab.ranks) >= 0).all()),
        "mean_weight_first_tenth": float(by_rank[:tenth].mean()),
        "mean_weight_last_tenth": float(by_rank[-tenth:].mean()),
        "lowest": [(pieces[i], round(float(weights[i]), 3)) for i in order[:8]],
        "highest": [(pieces[i], round(float(weights[i]), 3)) for i in order[::-1][:8]],
        "example": example, "encodings": encodings,
    }


def jobs_for(config, grid, cache_dir: Path) -> list[Job]:
    beam: BeamConfig = config.beam
    found = []
    for fit, _, data in grid:
        if (fit.variant == "universal" and str(fit.size) == beam.size
                and fit.n_candidates == beam.n_candidates):
            found.append(Job(fit, data.train.kind, list(data.train.docs), list(data.heldout.docs),
                             Path(cache_dir), beam))
    return found


def run_beam(config, grid, cache_dir: Path, jobs: int, progress: bool = False) -> dict[str, Any]:
    """The beam tables of every dataset (a process pool when ``jobs > 1``) and the objective."""
    from ubpe.lab.units import map_with_progress

    todo = jobs_for(config, grid, cache_dir)
    todo.sort(key=lambda j: -sum(len(d) for d in j.docs[: j.beam.max_docs]))
    results = map_with_progress(run_job, todo, jobs, progress=progress, desc=f"{config.name}: beam")
    rows = pd.DataFrame([row for result in results for row in result])
    prose = next((j for j in todo if j.kind == "prose"), None)
    example = None
    if prose is not None:
        tok = fitted_tokenizer(Unit(prose.fit, prose.train_docs, prose.docs, [], prose.cache_dir, False),
                               UnitResult(prose.fit.key))
        # the sentence when the alphabet has its symbols, else the start of a held-out document
        text = EXAMPLE if set(EXAMPLE) <= set(prose.fit.alphabet) else str(prose.docs[0])[:24]
        example = {"dataset": prose.fit.dataset, "size": prose.fit.size,
                   "n_candidates": prose.fit.n_candidates, **objective(tok, prose.kind, text)}
    return {"beam": rows, "beam_summary": summarize(rows), "objective": example}
