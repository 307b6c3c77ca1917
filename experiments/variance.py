"""How much the default experiment's numbers move with the training data (issue 14, item 5).

    python -m experiments variance [--jobs 2] [--results DIR]

For each dataset of ``DATASETS`` (from the default config, with its options) at one setting
(``SIZE``, ``N_CANDIDATES``; the universal tokenizer fitted to the classic one's final size,
as in the default grid):

* **replicates**: ``REPLICATES`` fits, each on a random ``SUBSAMPLE`` of the training split's
  independent units (books, works, files, ...; seed = replicate number; a dataset with fewer
  than ``MIN_UNITS`` units - ECG's two recordings - subsamples its documents), every ``ENCODERS``
  entry encoding the fixed held-out split - tokens per symbol and held-out bits per symbol
  under the downstream model (`ubpe.lab.downstream`, trained on that replicate's training
  tokens), summarised per encoder as mean, sd and range, and how often the encoders' order
  on each measure agrees with the first replicate's;
* **training size**: fits on the first 1/8, 1/4, 1/2 and all of the training units (in a
  fixed shuffled order, seed 0), same measures;
* **cross-domain**: a tokenizer fitted on KJV (the alphabet of both corpora) encodes the
  Shakespeare held-out split, against one fitted on Shakespeare's own training split.

The held-out splits stay as the datasets define them (split by unit, deduplicated), so
replicates vary the training data, not the split. Writes ``results/variance/`` (CSV files,
``run.json``, ``README.md``). Fitted models are not cached: every run refits.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ubpe.lab import provenance
from ubpe.lab.baselines import symbol_document_bits, symbol_ids, uniform_bits_per_symbol
from ubpe.lab.config import load_config, n_tokens_for
from ubpe.lab.downstream import measure
from ubpe.lab.formatting import _num, _table
from ubpe.lab.tables import units_of, write_csv

from experiments import CONFIG_DIR, RESULTS_DIR

RESULTS = RESULTS_DIR / "variance"
DATASETS = ("kjv", "shakespeare", "stdlib", "dna", "protein", "chorales", "ecg")
SIZE = "+1024"
N_CANDIDATES = 50
ENCODERS = ("universal:tfidf", "universal:fewest", "classic:classic", "classic:ranked", "classic:tfidf")
REPLICATES = 5
SUBSAMPLE = 0.8
FRACTIONS = (0.125, 0.25, 0.5, 1.0)
ORDER, DISCOUNT = 3, 0.75
#: fewer training units than this: subsample documents instead (else every replicate of a
#: two-recording dataset would hold the same data)
MIN_UNITS = 10


def _subsample(train, fraction: float, seed: int) -> list[Any]:
    """The training documents of a random ``fraction`` of the training units; with fewer than
    `MIN_UNITS` units (ECG's two recordings), of the training documents."""
    units = units_of(train)
    if len(set(units)) < MIN_UNITS:
        units = [str(i) for i in range(len(train.docs))]
    distinct = sorted(set(units))
    order = np.random.default_rng(seed).permutation(len(distinct))
    keep = {distinct[i] for i in order[: max(1, round(fraction * len(distinct)))]}
    return [doc for doc, unit in zip(train.docs, units) if unit in keep]


def _fit_pair(ds, alphabet, docs: list[Any]):
    """Classic and universal tokenizers on ``docs``, the universal one fitted to the classic
    one's final size (the default grid's equal-size rule)."""
    import warnings

    import ubpe

    n_tokens = n_tokens_for(SIZE, len(alphabet))
    fitted = {}
    for variant, cls in (("classic", ubpe.UBPEClassic), ("universal", ubpe.UBPE)):
        tok = cls(alphabet=list(alphabet), n_tokens=n_tokens, regex_str=ds.regex_pattern,
                  break_tokens=list(ds.break_tokens) if ds.break_tokens else None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the vocabulary-size warning: sizes are recorded
            tok.fit(docs, n_candidates=N_CANDIDATES, quiet=True)
        fitted[variant] = tok
        n_tokens = min(n_tokens, len(tok.vocabulary))  # the universal fit aims at classic's size
    return fitted


def _splits(task: dict[str, Any]):
    """The task's configured dataset, and ``(split, cap)`` of its train and held-out splits."""
    from experiments.datasets import load

    config = load_config("default", named=CONFIG_DIR)
    ds = {d.name: d for d in config.datasets}[task["dataset"]]
    train = load(ds.registry_name, "train", max_symbols=ds.max_symbols, **ds.load_options)
    heldout_ds = {d.name: d for d in config.datasets}[task.get("heldout", task["dataset"])]
    cap = heldout_ds.max_symbols if heldout_ds.heldout_max_symbols is None else heldout_ds.heldout_max_symbols
    heldout = load(heldout_ds.registry_name, "heldout", max_symbols=cap, **heldout_ds.load_options)
    return ds, (train, ds.max_symbols), (heldout, cap)


def data_records(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``run.json``'s ``data`` (`experiments.freshness`): every split the tasks load, once."""
    from experiments.freshness import data_record

    config = {d.name: d for d in load_config("default", named=CONFIG_DIR).datasets}
    records = {}
    for task in tasks:
        _, train, heldout = _splits(task)
        names = (task["dataset"], task.get("heldout", task["dataset"]))
        for name, (split, cap) in zip(names, (train, heldout)):
            records[(name, split.split)] = data_record(split, registry_name=config[name].registry_name,
                                                       max_symbols=cap, options=config[name].load_options)
    return list(records.values())


def run_task(task: dict[str, Any]) -> list[dict[str, Any]]:
    """One fit pair and every encoder's measures (runs in a worker)."""
    ds, (train, _), (heldout, _) = _splits(task)
    alphabet = sorted(set(train.alphabet) | set(heldout.alphabet))
    docs = _subsample(train, task["fraction"], task["seed"])
    started = time.perf_counter()
    fitted = _fit_pair(ds, alphabet, docs)
    fit_seconds = time.perf_counter() - started
    n_symbols = sum(len(d) for d in heldout.docs)
    # the baselines beside the proxy (`ubpe.lab.baselines`): the same model over the symbols
    # of the same training documents, and log2 |alphabet|
    symbol_bits = symbol_document_bits(symbol_ids(docs, alphabet), symbol_ids(heldout.docs, alphabet),
                                       len(alphabet), ORDER, DISCOUNT).sum() / n_symbols
    uniform = uniform_bits_per_symbol(len(alphabet))
    rows = []
    for spec in ENCODERS:
        variant, encoder = spec.split(":")
        r = measure(fitted[variant], docs, list(heldout.docs), encoder, {}, ORDER, DISCOUNT)
        rows.append({**{k: v for k, v in task.items()}, "encoder": spec,
                     "train_docs": len(docs), "train_symbols": sum(len(d) for d in docs),
                     "vocab_size": len(fitted[variant].vocabulary),
                     "tokens_per_symbol": float(r["n_tokens"].sum()) / n_symbols,
                     "bits_per_symbol": float(r["bits"].sum()) / n_symbols,
                     "unseen_share": float(r["unseen_tokens"]) / max(1, int(r["n_tokens"].sum())),
                     "symbol_bits_per_symbol": float(symbol_bits), "uniform_bits_per_symbol": uniform,
                     "fit_seconds": fit_seconds})
    return rows


def plan() -> list[dict[str, Any]]:
    tasks = []
    for name in DATASETS:
        for seed in range(REPLICATES):
            tasks.append({"study": "replicate", "dataset": name, "seed": seed, "fraction": SUBSAMPLE})
        for fraction in FRACTIONS:
            tasks.append({"study": "training size", "dataset": name, "seed": 0, "fraction": fraction})
    tasks.append({"study": "cross-domain", "dataset": "kjv", "heldout": "shakespeare", "seed": 0, "fraction": 1.0})
    tasks.append({"study": "cross-domain", "dataset": "shakespeare", "heldout": "shakespeare", "seed": 0,
                  "fraction": 1.0})
    return tasks


def spread(rows: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and encoder over the replicates: mean, sd, min and max of each measure."""
    reps = rows[rows["study"] == "replicate"]
    out = reps.groupby(["dataset", "encoder"], sort=False).agg(
        replicates=("seed", "size"),
        tps_mean=("tokens_per_symbol", "mean"), tps_sd=("tokens_per_symbol", "std"),
        tps_min=("tokens_per_symbol", "min"), tps_max=("tokens_per_symbol", "max"),
        bits_mean=("bits_per_symbol", "mean"), bits_sd=("bits_per_symbol", "std"),
        bits_min=("bits_per_symbol", "min"), bits_max=("bits_per_symbol", "max"),
        symbols_mean=("symbol_bits_per_symbol", "mean"), uniform=("uniform_bits_per_symbol", "first"),
        above_baseline=("bits_per_symbol", lambda b: int((b.to_numpy() > np.minimum(
            reps.loc[b.index, "symbol_bits_per_symbol"], reps.loc[b.index, "uniform_bits_per_symbol"])).sum())),
    ).reset_index()
    stable = []
    for dataset, group in reps.groupby("dataset", sort=False):
        for measure_name in ("tokens_per_symbol", "bits_per_symbol"):
            orders = group.pivot_table(index="seed", columns="encoder", values=measure_name).rank(axis=1)
            same = float((orders.eq(orders.iloc[0], axis=1).all(axis=1)).mean())
            stable.append({"dataset": dataset, "measure": measure_name, "same_order_as_first": same})
    return out.merge(pd.DataFrame(stable).pivot(index="dataset", columns="measure",
                                                values="same_order_as_first").add_prefix("order_stable_")
                     .reset_index(), on="dataset")


def report(rows: pd.DataFrame, summary: pd.DataFrame, info: dict[str, Any]) -> str:
    def pm(mean, sd, low, high):
        return f"{_num(mean)} ± {_num(sd)} ({_num(low)}-{_num(high)})"

    table = pd.DataFrame({
        "dataset": summary["dataset"], "encoder": "`" + summary["encoder"] + "`",
        "tokens/symbol mean ± sd (range)": [pm(*v) for v in zip(summary["tps_mean"], summary["tps_sd"],
                                                                summary["tps_min"], summary["tps_max"])],
        "bits/symbol mean ± sd (range)": [pm(*v) for v in zip(summary["bits_mean"], summary["bits_sd"],
                                                              summary["bits_min"], summary["bits_max"])],
        "symbol-level n-gram / uniform": [f"{_num(a)} / {_num(b)}" for a, b in
                                          zip(summary["symbols_mean"], summary["uniform"])],
        "replicates above a baseline": [f"{n} / {r}" for n, r in zip(summary["above_baseline"],
                                                                      summary["replicates"])],
        "same order (length / bits)": [f"{a * 100:.0f} % / " + (f"{b * 100:.0f} %" if not above else "not ranked")
                                       for a, b, above in zip(summary["order_stable_tokens_per_symbol"],
                                                              summary["order_stable_bits_per_symbol"],
                                                              summary.groupby("dataset")["above_baseline"]
                                                              .transform("sum"))]})
    sizes = rows[rows["study"] == "training size"]
    size_table = sizes.pivot_table(index=["dataset", "fraction"], columns="encoder", sort=False,
                                   values=["tokens_per_symbol", "bits_per_symbol"])
    size_rows = []
    for (dataset, fraction), values in size_table.iterrows():
        row = {"dataset": dataset, "training units": f"{fraction:g}",
               "training symbols": f"{int(sizes[(sizes['dataset'] == dataset) & (sizes['fraction'] == fraction)]['train_symbols'].iloc[0]):,}"}
        here = sizes[(sizes["dataset"] == dataset) & (sizes["fraction"] == fraction)].iloc[0]
        floor = min(here["symbol_bits_per_symbol"], here["uniform_bits_per_symbol"])
        for spec in ENCODERS:
            bits = values[("bits_per_symbol", spec)]
            row[f"`{spec}` tok / bits"] = (f"{_num(values[('tokens_per_symbol', spec)])} / {_num(bits)}"
                                           + (" †" if bits > floor else ""))
        row["symbol-level n-gram / uniform"] = (f"{_num(here['symbol_bits_per_symbol'])} / "
                                                f"{_num(here['uniform_bits_per_symbol'])}")
        size_rows.append(row)
    cross = rows[rows["study"] == "cross-domain"]
    cross_rows = [{"fitted on": r.dataset, "encoded": r.heldout, "encoder": f"`{r.encoder}`",
                   "tokens/symbol": _num(r.tokens_per_symbol), "bits/symbol": _num(r.bits_per_symbol),
                   "unseen tokens": f"{r.unseen_share * 100:.2f} %",
                   "symbol-level n-gram": _num(r.symbol_bits_per_symbol)} for r in cross.itertuples()]
    return "\n".join([
        "# Variance: training subsamples, training size, cross-domain", "",
        f"Command: `python -m experiments variance` ({info['seconds']} s on {info['jobs']} worker "
        f"processes; {info['machine']['cpu']}). Setting: alphabet {SIZE} merged tokens, "
        f"n_candidates {N_CANDIDATES}, the universal tokenizer fitted to the classic one's final "
        "size; the default config's datasets, options and held-out splits (fixed). Bits per "
        f"symbol: interpolated Kneser-Ney, order {ORDER}, discount {DISCOUNT}, trained on each "
        "fit's own tokenisation of its training documents (`experiments/downstream.py`). See "
        "`experiments/variance.py` for the design.", "",
        f"## Replicates: {REPLICATES} fits on random {SUBSAMPLE:.0%} subsamples of the training units", "",
        f"(A dataset with fewer than {MIN_UNITS} training units - ecg, two recordings - "
        "subsamples its training documents, windows of the recordings, instead.)", "",
        "Mean ± sd (min-max) over the replicates; beside the bits, the baselines of the same "
        "training documents (`experiments/baselines.py`: the same model over the symbols, and "
        "log2 |alphabet|); *same order*: share of replicates that rank the encoders in the same "
        "order as the first replicate, on length and on bits (*not ranked* where a replicate's "
        "tokenisation is above a baseline).", "",
        _table(table), "",
        "## Training size: the first 1/8 ... all of the training units (one shuffled order)", "",
        f"(Documents instead of units below {MIN_UNITS} units, as above.)", "",
        "tokens per symbol / bits per symbol of the held-out split; †: above a baseline (the "
        "last column, same training documents).", "",
        _table(pd.DataFrame(size_rows)), "",
        "## Cross-domain: fitted on KJV, encoding Shakespeare", "",
        "The KJV tokenizer is given the alphabet of both corpora; its language model is trained "
        "on KJV's training split. Against it, the in-domain fit on Shakespeare's training split.", "",
        _table(pd.DataFrame(cross_rows)), ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments variance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--results", type=Path, default=None)
    parser.add_argument("--allow-dirty", action="store_true",
                        help="write into results/ from a tree with uncommitted changes (run.json then says dirty)")
    args = parser.parse_args(argv)
    from experiments import refuse_dirty

    refuse_dirty((args.results / "variance") if args.results else RESULTS, args.allow_dirty)
    jobs = args.jobs or provenance.available_cores()
    started = time.perf_counter()
    tasks = plan()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        rows = pd.DataFrame([row for result in pool.map(run_task, tasks) for row in result])
    out = (args.results / "variance") if args.results else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    summary = spread(rows)
    write_csv(rows, out / "runs.csv")
    write_csv(summary, out / "spread.csv")
    info = {"experiment": "variance", "seconds": round(time.perf_counter() - started, 1), "jobs": jobs,
            "datasets": list(DATASETS), "size": SIZE, "n_candidates": N_CANDIDATES,
            "encoders": list(ENCODERS), "replicates": REPLICATES, "subsample": SUBSAMPLE,
            "fractions": list(FRACTIONS), "order": ORDER, "discount": DISCOUNT,
            "versions": provenance.package_versions(), "git": provenance.git_state(exclude=["results"]),
            "machine": provenance.machine(), "peak_memory_mb": provenance.peak_memory_mb(),
            "data": data_records(tasks)}
    info.update(provenance.side_record({k: info[k] for k in ("datasets", "size", "n_candidates", "encoders",
                                                             "replicates", "subsample", "fractions", "order",
                                                             "discount")}))
    (out / "run.json").write_text(json.dumps(info, indent=2) + "\n")
    (out / "README.md").write_text(report(rows, summary, info))
    print(f"wrote {out} in {info['seconds']} s")
    return 0
