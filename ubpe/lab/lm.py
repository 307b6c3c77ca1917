"""Does the encoding make a better *model*? A small causal transformer per tokenisation
(issue 34, points 3 and 4; the model and its training are `ubpe.lab.transformer`, which needs
the ``[lm]`` extra: PyTorch).

At one grid setting (``size``, ``n_candidates``) of every dataset, for each *arm*:

* a plain tokenisation (``encoders``: ``variant:encoder``), trained and tested with it;
* a tokenisation *trained* with sampling and tested with the plain encoder of the same
  vocabulary (``sampled``: BPE-dropout tested with ranked merges; ubpe's ``sample`` encoder,
  over the whole lattice or its ``nbest_size`` best, tested with tf-idf top-1), drawn anew
  every epoch as these methods are meant to be used;
* the symbols themselves (no merges) with the same context in *positions* (``symbols``), and
  the symbol model whose context covers as many *symbols* as each token model's (``symbols@C``,
  ``C`` = context x the tested tokenisation's held-out symbols per token, rounded up to a
  quarter of the context, so arms of similar lengths share a model),

models of equal total parameters (`ubpe.lab.transformer.matched_shape`) are trained on the same
training symbols (the same documents, ``epochs`` passes), once per seed, and give every
held-out document its bits (tokens and end). Bits per symbol = total bits / held-out symbols.

Statistics (all over the dataset's independent *units*, fixed by the dataset before any run:
book, file, genome, chorale, recording, ...): a seed's bits per document are averaged over the
seeds, summed per unit; 95 % percentile bootstrap intervals (``bootstrap`` resamples of the
units, the same resamples for every arm, so differences are paired) for bits per symbol and for
the difference to each baseline. **Point 4**: an arm is *ranked* by bits only where it beats
the context-matched symbol model and the one with the same positions (the intervals of both
differences lie below 0; see `ubpe.lab.lm_tables.rank` for why both) and the dataset has
enough units (`ubpe.lab.validity`); both differences are shown.
Per kind, the rank correlation (Spearman, over the plain arms and the symbol model of every
dataset of the kind, each value centred on its dataset's mean so datasets' levels do not
drive it) of transformer bits with tokens per symbol and with the Kneser-Ney n-gram's bits
(`ubpe.lab.downstream`), with a Fisher-z interval (Bonett & Wright 2000's variance); these are
correlations across a handful of tokenisations, not effects.

Outputs: ``transformer.csv`` (per dataset and arm), ``transformer_documents.csv`` (per held-out
document, arm and seed), ``transformer_correlations.csv`` (per kind), ``transformer.md`` and
``transformer_bits.png``; the experiment's README gets the same section. Trained models' bits
are cached (``<cache>/transformer/``): a rerun computes only what changed.

Running it (the ``[lm]`` extra: ``pip install torch==2.13.0`` on this project's machines, see
`ubpe.lab.transformer`)::

    python -m experiments downstream                       # experiments/configs/downstream.toml -> runs/downstream/
    python -m experiments downstream --results results     # -> results/downstream/ (the published study)
    ubpe experiment my.toml                                # any config with a [transformer] table

**Cost** (`experiments/configs/downstream.toml`: kjv, dna, protein, chorales at +1,024; 4 plain
and 3 sampled arms, 2-5 symbol models per dataset; 3 seeds; 300k training symbols x 3 epochs;
50k held-out symbols). Not run whole here (a shared machine); measured at a quarter of it
(2026-11-29, 2 shared cores at load ~16, ``nice -n 10``, torch threads 1; one seed, 50k training
symbols x 2 epochs): 109 CPU-s for the whole run (374 s wall at ~29 % of a core), of which per
dataset training ~60 (kjv) / 51 (dna) / 52 (protein) / 43 (chorales) wall-s and scoring 66 / 26
/ 33 / 12 wall-s. Training scales with symbols x epochs (x6.8 / 6 / 6.4 / 2.2 to the defaults'
training splits, x1.5 epochs), scoring does not, and both with the seeds (x3): about 1,500
CPU-s of training, 120 of scoring and ~60 of fitting, encoding and n-gram models, so **~28 min
on one idle core**, ~17-22 min with torch on 2 threads (1.3-1.7x for these small matrices):
within the 60 min bound with a margin of 2x for the estimate. A GPU, when present, is used.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ubpe.lab.lm_config import TransformerConfig

#: Version of the cached results' meaning (change it when the model or training changes).
MODEL_VERSION = "causal-transformer-v3-stream-eval"


# -- arms and tasks -----------------------------------------------------------------------


@dataclass(frozen=True)
class Arm:
    """One model to train: ``train`` / ``test`` are ``variant:encoder`` (None: the symbols);
    ``context``: the symbol model's context in positions (None: the study's)."""

    name: str
    train: str | None = None
    test: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    context: int | None = None

    @property
    def sampled(self) -> bool:
        return self.train is not None and self.train != self.test


def token_arms(config: TransformerConfig) -> list[Arm]:
    arms = [Arm(spec, spec, spec) for spec in config.encoders]
    for item in config.sampled:
        options = tuple(sorted(item["options"].items()))
        label = ",".join(f"{k}={v}" for k, v in options)
        arms.append(Arm(f"{item['train']}({label})>{item['test']}", item["train"], item["test"], options))
    return arms


@dataclass
class Task:
    """One dataset's study: its fitted tokenizers by variant and the documents used."""

    dataset: str
    kind: str
    fits: dict[str, Any]  # variant -> FitSpec
    train_docs: list[Any]
    heldout_docs: list[Any]
    units: list[str]
    alphabet: tuple[Any, ...]
    dropped: dict[str, int] = field(default_factory=dict)


def spread(docs: list[Any], cap: int, units: list[str] | None = None) -> tuple[list[int], int]:
    """Indices of the documents kept under a cap of ``cap`` symbols (0: no cap) and how many
    symbols that drops. With ``units``: the first ``m`` documents of every unit, ``m`` the
    largest that fits (at least 1), so a cap never drops a unit; without: every k-th document,
    so the kept ones come from the whole split.

    >>> spread(["ab", "cd", "ef", "gh"], 4)
    ([0, 2], 4)
    >>> spread(["ab", "cd", "ef", "gh"], 4, ["x", "x", "y", "y"])
    ([0, 2], 4)
    """
    lengths = [len(d) for d in docs]
    total = sum(lengths)
    if not cap or total <= cap:
        return list(range(len(docs))), 0
    if units is None:
        k = 2
        while sum(lengths[::k]) > cap and k < len(docs):
            k += 1
        keep = list(range(0, len(docs), k))
    else:
        rank = []  # each document's position within its unit
        seen: dict[str, int] = {}
        for unit in units:
            rank.append(seen.get(unit, 0))
            seen[unit] = rank[-1] + 1
        m = 1
        while m < max(seen.values()) and sum(n for n, r in zip(lengths, rank) if r <= m) <= cap:
            m += 1
        keep = [i for i, r in enumerate(rank) if r < m]
    return keep, total - sum(lengths[i] for i in keep)


def tasks(config, grid, units: dict[str, list[str]]) -> list[Task]:
    """One task per dataset at the ``[transformer]`` setting (its fitted vocabularies only)."""
    study: TransformerConfig = config.transformer
    found: dict[str, Task] = {}
    for fit, _cells, data in grid:
        if str(fit.size) != study.size or fit.n_candidates != study.n_candidates or fit.source_file:
            continue
        if fit.dataset not in found:
            train_keep, train_dropped = spread(list(data.train.docs), study.train_symbols)
            names = units[fit.dataset]
            held_keep, held_dropped = spread(list(data.heldout.docs), study.heldout_symbols, names)
            found[fit.dataset] = Task(
                fit.dataset, fit.kind, {}, [data.train.docs[i] for i in train_keep],
                [data.heldout.docs[i] for i in held_keep], [names[i] for i in held_keep],
                tuple(data.alphabet),
                {"train_docs_dropped": len(data.train.docs) - len(train_keep),
                 "train_symbols_dropped": train_dropped,
                 "heldout_docs_dropped": len(data.heldout.docs) - len(held_keep),
                 "heldout_symbols_dropped": held_dropped,
                 "heldout_units_dropped": len(set(names)) - len({names[i] for i in held_keep})})
        found[fit.dataset].fits[fit.variant] = fit
    return list(found.values())


# -- running -------------------------------------------------------------------------------


def run_transformer(config, grid, cache_dir: Path, units: dict[str, list[str]],
                    *, log=sys.stderr) -> dict[str, Any]:
    """Train and score every arm of every dataset (cached); the tables."""
    from ubpe.lab import lm_tables

    study: TransformerConfig = config.transformer
    results = []
    for task in tasks(config, grid, units):
        d = task.dropped
        if any(d.values()):
            print(f"transformer: {task.dataset}: the caps (train_symbols {study.train_symbols:,}, "
                  f"heldout_symbols {study.heldout_symbols:,}) dropped {d['train_docs_dropped']} training "
                  f"documents ({d['train_symbols_dropped']:,} symbols) and {d['heldout_docs_dropped']} "
                  f"held-out documents ({d['heldout_symbols_dropped']:,} symbols, "
                  f"{d['heldout_units_dropped']} whole units)", file=log)
        results.append((task, run_task(task, study, Path(cache_dir), log=log)))
    return lm_tables.tables(study, results)


def _tokens(tok, docs, spec: str, options: dict[str, Any]) -> list[np.ndarray]:
    from ubpe.lab.downstream import _tokens

    return _tokens(tok, docs, spec.split(":")[1], options)


def run_task(task: Task, study: TransformerConfig, cache_dir: Path, *, log=sys.stderr) -> dict[str, Any]:
    """Every arm x seed of one dataset: per held-out document bits (and per arm its tokens,
    n-gram bits, model shape, steps), from the cache when computed before."""
    from ubpe.lab import transformer as T
    from ubpe.lab.baselines import symbol_document_bits, symbol_ids
    from ubpe.lab.cache import digest
    from ubpe.lab.downstream import measure
    from ubpe.lab.lm_tables import SYMBOLS, matched_context
    from ubpe.lab.provenance import available_cores
    from ubpe.lab.units import Unit, UnitResult, fitted_tokenizer

    device = T.device_for(study.threads or available_cores())
    toks = {variant: fitted_tokenizer(Unit(fit, task.train_docs, task.heldout_docs, [], cache_dir, False),
                                      UnitResult(fit.key)) for variant, fit in task.fits.items()}
    arms = [a for a in token_arms(study) if a.train.split(":")[0] in toks]
    heldout: dict[str, list[np.ndarray]] = {}
    for spec in dict.fromkeys(a.test for a in arms):
        heldout[spec] = _tokens(toks[spec.split(":")[0]], task.heldout_docs, spec, {})
    n_symbols = np.array([len(d) for d in task.heldout_docs], np.int64)
    sym_train = symbol_ids(task.train_docs, task.alphabet)
    sym_held = symbol_ids(task.heldout_docs, task.alphabet)
    per_token = {spec: sum(len(t) for t in ids) / max(1, int(n_symbols.sum())) for spec, ids in heldout.items()}
    contexts = sorted({matched_context(study.context, 1 / max(p, 1e-9)) for p in per_token.values()} - {study.context})
    arms = [Arm(SYMBOLS)] + [Arm(f"{SYMBOLS}@{c}", context=c) for c in contexts] + arms
    vocab = {a.name: (len(task.alphabet) if a.train is None else len(toks[a.train.split(":")[0]].vocabulary))
             for a in arms}
    # every model's steps per epoch: the symbol model's at the study's context and batch
    steps = max(1, math.ceil((sum(len(d) + 1 for d in task.train_docs)) / (study.context * study.batch)))
    budget = T.budget_for(max(vocab.values()), d_model=study.d_model, n_layers=study.layers,
                          context=study.context)
    out: dict[str, Any] = {"arms": arms, "n_symbols": n_symbols, "units": task.units, "budget": budget,
                           "heldout_tokens": {a.name: (np.array([len(t) for t in heldout[a.test]]) if a.test
                                                       else n_symbols) for a in arms},
                           "ngram_bits": {}, "bits": {}, "shape": {}, "training": {}}
    for spec, ids in heldout.items():
        variant = spec.split(":")[0]
        out["ngram_bits"][spec] = measure(toks[variant], task.train_docs, task.heldout_docs, spec.split(":")[1],
                                          {}, study.ngram_order, 0.75)["bits"]
    out["ngram_bits"][SYMBOLS] = symbol_document_bits(sym_train, sym_held, len(task.alphabet), study.ngram_order, 0.75)
    for arm in arms:
        context = arm.context or study.context
        shape = T.matched_shape(vocab[arm.name], budget, d_model=study.d_model, n_layers=study.layers,
                                n_heads=study.heads, context=context)
        out["shape"][arm.name] = shape
        for seed in study.seeds:
            data_key = (task.fits[arm.train.split(":")[0]].key if arm.train
                        else next(iter(task.fits.values())).train_checksum)
            key = digest({"version": MODEL_VERSION, "data": data_key,
                          "arm": [arm.name, arm.train, arm.test, list(arm.options), context],
                          "seed": seed, "shape": list(shape.__dict__.values()), "budget": budget,
                          "train": [study.train_symbols, study.epochs, study.batch, study.lr],
                          "heldout": [study.heldout_symbols, int(n_symbols.sum()), len(n_symbols)]})
            path = cache_dir / "transformer" / f"{task.dataset}-{key}.npz"
            if path.exists():
                with np.load(path) as data:
                    out["bits"][arm.name, seed] = data["bits"]
                    out["training"][arm.name, seed] = {k: float(data[k]) for k in ("steps", "tokens", "seconds",
                                                                                     "eval_seconds", "first_loss",
                                                                                     "last_loss")}
                continue
            started = time.perf_counter()
            if arm.train is None:
                model, training = T.train(shape, lambda epoch: sym_train, epochs=study.epochs,
                                          steps_per_epoch=steps, lr=study.lr, seed=seed, device=device)
                trained = time.perf_counter()
                bits = T.document_bits(model, sym_held, device)
            else:
                tok = toks[arm.train.split(":")[0]]
                options = dict(arm.options)
                if arm.sampled:
                    def encode(epoch, tok=tok, arm=arm, options=options, seed=seed):
                        return _tokens(tok, task.train_docs, arm.train, {**options, "seed": seed * 1000 + epoch})
                else:
                    plain = _tokens(tok, task.train_docs, arm.train, options)

                    def encode(epoch, plain=plain):
                        return plain
                model, training = T.train(shape, encode, epochs=study.epochs, steps_per_epoch=steps,
                                          lr=study.lr, seed=seed, device=device)
                trained = time.perf_counter()
                bits = T.document_bits(model, heldout[arm.test], device)
            seconds = time.perf_counter() - started
            record = {"steps": training.steps, "tokens": training.tokens, "seconds": seconds,
                      "eval_seconds": seconds - (trained - started),
                      "first_loss": training.losses[0], "last_loss": float(np.mean(training.losses[-10:]))}
            out["bits"][arm.name, seed] = bits
            out["training"][arm.name, seed] = record
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp.npz")
            np.savez(tmp, bits=bits, **{k: np.array(v) for k, v in record.items()})
            tmp.replace(path)
            print(f"transformer: {task.dataset} {arm.name} seed {seed}: "
                  f"{bits.sum() / max(1, n_symbols.sum()):.4f} bits/symbol, {training.steps} steps, "
                  f"{seconds:.1f} s", file=log)
    return out


def write_outputs(study: TransformerConfig, found: dict[str, Any], out: Path) -> None:
    """The tables as CSV, ``transformer.md`` and ``transformer_bits.png`` into ``out``."""
    from ubpe.lab import lm_tables
    from ubpe.lab.tables import write_csv

    out.mkdir(parents=True, exist_ok=True)
    for name, table in found.items():
        write_csv(table, out / f"{name}.csv")
    (out / "transformer.md").write_text(lm_tables.summary(study, found))
    lm_tables.plot(found["transformer"], out / "transformer_bits.png")
