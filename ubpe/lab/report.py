"""The Markdown report of an experiment, rendered from its results folder only.

`render_report` reads ``run.json`` (settings, versions, commit, machine) and the CSV tables the
runner wrote, draws the plots (`ubpe.lab.plots`) and writes ``README.md``: settings, data,
environment, metric definitions, tables, then per comparison and dataset kind the answer with
its paired test. Nothing is recomputed, so ``python -m experiments report <name>`` re-renders
a committed result on any machine.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from ubpe.lab import plots, validity
from ubpe.lab import stats as S
from ubpe.lab.answers import _answers, _decisions, _summary
from ubpe.lab.extras_report import _read, beam_section, downstream_section
from ubpe.lab.lm_tables import report_section as transformer_section
from ubpe.lab.formatting import KIND_ORDER, cap_lines, _estimable, _kind_key, _num, _size_key, _table
from ubpe.lab.outputs import TABLES, IncompleteResultsError, check_complete

__all__ = ["KIND_ORDER", "read_results", "render_report"]

_READ = {"dtype": {"size": str, "encoder": str, "a": str, "b": str}, "keep_default_na": True}


def read_results(folder: Path) -> dict[str, Any]:
    """The tables and run.json of a whole results folder (`ubpe.lab.outputs.check_complete`:
    else an `IncompleteResultsError`)."""
    folder = Path(folder)
    run = check_complete(folder)
    tables = {name: _read_table(folder / f"{name}.csv") for name in TABLES}
    for name in ("decisions", "meta"):  # results before issue 34 have neither
        path = folder / f"{name}.csv"
        tables[name] = _read_table(path) if path.exists() else pd.DataFrame()
    tables["run"] = run
    return tables


def _read_table(path: Path) -> pd.DataFrame:
    if path.stat().st_size <= 1:
        return pd.DataFrame()
    try:
        return pd.read_csv(path, **_READ)
    except (ValueError, pd.errors.ParserError) as error:
        raise IncompleteResultsError(f"{path} cannot be read ({str(error).strip().splitlines()[0]}): "
                                     "run the experiment again") from None


# -- formatting ----------------------------------------------------------------------------


# -- sections ------------------------------------------------------------------------------


def _settings(run: dict[str, Any], n_tests: int) -> list[str]:
    cfg = run["config"]
    stats = cfg["stats"]
    commands = run.get("commands") or {"run": f"python -m experiments {cfg['name']}",
                                       "report": f"python -m experiments report {cfg['name']}"}
    lines = [
        "## Settings", "",
        f"- config: `{run.get('config_file') or cfg['name']}`; regenerate with "
        f"`{commands['run']}` (compute, cached) or "
        f"`{commands['report']}` (re-render from the CSV files)",
        f"- vocabulary sizes: {', '.join(map(str, cfg['vocab_sizes']))} (`+k`: the alphabet of "
        f"both splits plus k merged tokens, so every dataset gets the same number of merges; "
        f"the actual vocabulary size after ubpe's rearrangement is in the tables)",
        *(["- equal final vocabulary size: the classic tokenizer is fitted to `+k`; its "
           "rearrangement drops, with each low-weight token, every token built from it, so it "
           "ends with fewer ids (the *Vocabulary size* table); the universal tokenizer of the "
           "same setting is then fitted to exactly that many ids (a universal fit ends at its "
           "target: its rearrangement only trims the last round's overshoot, lowest weights "
           "first). Fitting to the size, rather than trimming a larger universal vocabulary: "
           "trimming goes by weight, the idf of the pair at merge time, so it would drop the "
           "most frequent tokens first and handicap the universal variant for a reason that "
           "is not the variant; and one fit per setting is needed instead of a search. This "
           "holds for the fitted vocabularies only: a vocabulary from a file keeps its own size, "
           "and its comparisons say so (`own size`)"]
          if cfg.get("equal_size") else []),
        f"- n_candidates: {', '.join(map(str, cfg['n_candidates']))} (1: standard BPE training, "
        f"one merge per round); top_n for n-best encoders: "
        f"{cfg['top_n']}; seeds for seeded encoders: {', '.join(map(str, cfg['seeds']))}",
        f"- encoders (variant:encoder; the variant is the fitted tokenizer, `universal` = UBPE, "
        f"`classic` = UBPEClassic): {', '.join(f'`{e}`' for e in cfg['encoders'])}",
        f"- encoder options: `{json.dumps(cfg['encoder_options'])}`; baseline for "
        f"\"differs from baseline\": `{cfg['baseline']}`",
        f"- statistics: per independent unit (each dataset's unit is in the Data table; a "
        f"unit's documents are summed), the effect is the per-unit log ratio ln(A_u / B_u) of "
        f"held-out token counts; Wilcoxon signed-rank tests (two-sided, zero differences "
        f"dropped). The *primary* questions (declared in the config before the run) are one "
        f"family: Holm's correction over their {n_tests} tests, family-wise level "
        f"{stats['alpha']}, Hodges-Lehmann estimates with intervals from inverting the same test "
        f"at the Holm-consistent level alpha x p / p_Holm (an interval excludes 0 exactly when "
        f"the verdict is significant); every other question is *exploratory*: its p unadjusted, "
        f"its interval at {stats['alpha']}, labelled so. Comparisons with fewer than "
        f"{S.MIN_UNITS} units are not tested (the exact two-sided test cannot reach p < 0.05); "
        f"comparisons of the fewest-tokens encoder with another encoder on the same vocabulary "
        f"hold by construction and are labelled, not tested. Holm compares the k-th smallest "
        f"of the {n_tests} p-values with {stats['alpha']} / ({n_tests} - k + 1); the exact "
        f"test's smallest p over n units is 2 / 2^n, so a comparison over fewer than "
        f"{_units_to_reach(stats['alpha'], n_tests)} units cannot pass the first step, while "
        f"at the last step {_units_to_reach(stats['alpha'], 1)} units can: how many units a "
        f"comparison needs depends on how many other tests are significant",
    ]
    lines += _caps(run)
    for ds in cfg["datasets"]:
        extra = {k: v for k, v in ds.items()
                 if v not in (None, {}, (), "") and k not in ("name", "load_options")}
        extra.update(ds.get("load_options") or {})
        if extra:
            lines.append(f"- `{ds['name']}`: `{json.dumps(extra, default=str)}`")
    for name, vocabulary in run.get("vocabulary_files", {}).items():
        lines.append(f"- vocabulary `{name}` from the file `{vocabulary['path']}` (SHA-256 "
                     f"`{vocabulary['sha256'][:12]}`), not fitted: the same cells at every grid "
                     f"setting; `{name}:native` is the model's own encoding, the other encoders run "
                     f"on its vocabulary with idf weights from its native encodings of the train split")
    for name, pattern in run.get("regex_presets", {}).items():
        lines.append(f"- regex preset `{name}` (pre-tokenisation; merges never cross a match): "
                     f"`{pattern}`")
    lines.append("")
    lines += ["### Encoders", "",
              _table(pd.DataFrame([
                  {"encoder": f"`{name}`", "n-best": "yes" if info["supports_nbest"] else "no",
                   "seed": ("yes, one cell per seed" if name in cfg.get("seeded", ())
                                    else "takes one, not varied" if info.get("takes_seed") else "no"),
                   "optimises": info["optimises"], "source": info["source"]}
                  for name, info in run["encoders"].items()])), ""]
    if run["unavailable_encoders"]:
        lines += [f"Configured but not registered in `ubpe.encoders` when this ran (skipped): "
                  f"{', '.join(f'`{e}`' for e in run['unavailable_encoders'])}.", ""]
    if run.get("missing_datasets"):
        lines += ["Datasets skipped because their source is not installed (run "
                  "`experiments/install_data.sh`): "
                  + "; ".join(f"`{k}` ({v})" for k, v in run["missing_datasets"].items()) + ".", ""]
    failures = pd.DataFrame(run["failed_cells"])
    if not failures.empty:
        grouped = (failures.groupby(["encoder", "error"], sort=False)
                   .agg(cells=("dataset", "size"), datasets=("dataset", lambda s: ", ".join(dict.fromkeys(s))))
                   .reset_index())
        grouped["encoder"] = "`" + grouped["encoder"] + "`"
        lines += ["Cells that could not be computed (the encoder does not apply to that "
                  "vocabulary):", "", _table(grouped[["encoder", "cells", "datasets", "error"]]), ""]
    return lines


def _caps(run: dict[str, Any]) -> list[str]:
    """The symbol caps and what they left out (``run.json``'s ``caps``; older runs have none)."""
    caps = run.get("caps")
    if not caps:
        return []

    cut = cap_lines(caps)
    caps_set = sorted({f"{c['split']} {c['max_symbols']:,}" for c in caps if c["max_symbols"] is not None})
    return [f"- symbol caps per split (`max_symbols` / `heldout_max_symbols`; default 300,000 "
            f"train / 75,000 held-out, `inf` lifts them): {', '.join(caps_set) or 'none'}; "
            + ("what they left out: " + "; ".join(cut) if cut else "no split was cut")]


def _units_to_reach(alpha: float, n_tests: int) -> int:
    """Fewest units whose exact two-sided signed-rank test can give p < alpha / n_tests.

    >>> _units_to_reach(0.05, 1), _units_to_reach(0.05, 400)
    (6, 14)
    """
    n = 1
    while 2.0 / 2**n >= alpha / max(n_tests, 1):
        n += 1
    return n


def _data(datasets: pd.DataFrame) -> list[str]:
    rows, skipped = [], []
    for name, group in datasets.groupby("name", sort=False):
        train = group[group["split"] == "train"].iloc[0]
        held = group[group["split"] == "heldout"].iloc[0]
        settings = {k: v for k, v in json.loads(train["settings"]).items() if k != "max_symbols"}
        skipped += [f"- `{name}`: skipped `{s['file']}`: {s['error']}" for s in settings.get("skipped_files", [])]
        few = validity.too_few_units(held["n_units"]) if not pd.isna(held.get("n_units")) else False
        rows.append({
            "dataset": name + (" ‡" if few else ""), "kind": train["kind"], "source": train["source"],
            "version": train["source_version"], "licence": train["licence"],
            "unit": train.get("unit", "document"),
            "train docs / units / symbols":
                f"{train['n_docs']:,} / {_count(train, 'n_units')} / {train['n_symbols']:,}",
            "held-out docs / units / symbols":
                f"{held['n_docs']:,} / {_count(held, 'n_units')} / {held['n_symbols']:,}",
            "alphabet": f"{train['alphabet_size_both_splits']:,}",
            "checksum train / held-out": f"`{train['checksum'][:12]}` / `{held['checksum'][:12]}`",
            "settings": ", ".join(f"{k}={v}" for k, v in settings.items()
                                  if not isinstance(v, (list, dict))) or "–",
        })
    return ["## Data", "",
            "Fixed train / held-out splits by the rules of `ubpe.lab.datasets` (checksums: SHA-256 of the "
            "documents, first 12 hex digits; full values in `datasets.csv`). Fitting sees the "
            "training split only; every metric is measured on the held-out split. The *unit* is "
            "what the paired tests count as one independent observation (the documents of a "
            "unit are summed); each loader's docstring (`experiments/datasets/`) says what its "
            f"unit is and why, fixed before the results. ‡: fewer than {validity.MIN_UNITS} "
            "held-out units - shown in every table, left out of rankings and of the summary's "
            "counts.", "",
            _table(pd.DataFrame(rows)), "",
            *(["Files that could not be read, left out of their dataset (`strict = true` in a "
               "dataset's table stops the run instead):", "", *skipped, ""] if skipped else [])]


def _count(row: pd.Series, column: str) -> str:
    value = row.get(column)
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{int(value):,}"


def _environment(run: dict[str, Any], metrics: pd.DataFrame) -> list[str]:
    versions = ", ".join(f"{k} {v}" for k, v in run["versions"].items())
    git = run["git"]
    machine = run["machine"]
    r = run["run"]
    return ["## Environment", "",
            f"- packages: {versions}",
            f"- git commit: `{git['commit'] or 'unknown'}`" + (" (with uncommitted changes)" if git["dirty"] else ""),
            f"- machine: {machine['cpu']}, {machine['cores_available']} of {machine['cores']} "
            f"cores available, {machine['platform']}",
            f"- run: {r['jobs']} worker processes, {r['seconds']} s wall clock "
            f"({r['cells_computed']} cells computed, {r['cells_cached']} from the cache), "
            f"finished {r['finished']}", *_costs(run, metrics), ""]


def _costs(run: dict[str, Any], metrics: pd.DataFrame) -> list[str]:
    """Fit time (per fit, from the cache's record of when it was fitted) and peak memory."""
    lines = []
    if not metrics.empty and "fit_seconds" in metrics:
        fits = (metrics.dropna(subset=["fit_seconds"])
                .assign(variant=lambda m: m["encoder"].str.split(":").str[0])
                .drop_duplicates(["dataset", "size", "n_candidates", "variant"]))
        if not fits.empty:
            top = fits.loc[fits["fit_seconds"].idxmax()]
            lines.append(f"- fit time: {fits['fit_seconds'].sum():,.1f} s over {len(fits)} fits "
                         f"(longest {top['fit_seconds']:,.1f} s: {top['dataset']} {top['size']} "
                         f"n_candidates={int(top['n_candidates'])} {top['variant']}; "
                         "cached fits keep the time of the run that fitted them)")
    memory = run["run"].get("peak_memory_mb")
    if memory:
        lines.append(f"- peak resident memory: {memory['main']:,.0f} MB the main process, "
                     f"{memory['largest_worker']:,.0f} MB the largest worker process (ru_maxrss; "
                     "workers are forked from the main process and count the pages they share "
                     "with it, so the two are not to be added)")
    return lines


METRIC_DEFINITIONS = [
    "- **tokens/symbol**: held-out tokens / held-out symbols (lower is shorter); "
    "**compression** is its inverse, symbols per token",
    "- **Rényi eff.**: Rényi entropy (α = 2.5) of the held-out unigram token distribution "
    "divided by ln |V| (Zouhar et al. 2023, *Tokenization and the Noiseless Channel*)",
    "- **util.**: share of the vocabulary's ids used at least once on the held-out split",
    "- **n.e.** (not estimable): Rényi efficiency and utilisation of a cell with fewer held-out "
    "tokens than vocabulary ids (utilisation cannot reach 1 and the unigram distribution over "
    "the ids cannot be estimated); such cells are shown as n.e., their values are in `metrics.csv`",
    "- **differs**: share of held-out documents whose segmentation (where tokens start and end, "
    "comparable across vocabularies) differs from the baseline encoder's",
    "- **doc tokens**: mean / median / 95th percentile of per-document token counts",
    "- **gap 2nd / gap n-th**: for n-best encoders, mean tf-idf score of the best encoding minus "
    "that of the 2nd / n-th alternative",
    "- **k sym/s**: encode throughput, thousands of symbols per second, one measurement per "
    "cell on one core of the machine above (splitting included; a timing, it differs between runs)",
]


def _pivot(metrics: pd.DataFrame, column: str, digits: int = 3, scale: float = 1.0,
           estimable_only: bool = False) -> str:
    values = metrics[column].astype(float)
    if estimable_only and "distribution_estimable" in metrics:
        values = values.where(metrics["distribution_estimable"].astype(bool), -math.inf)
    table = (metrics.assign(_v=values).groupby(["kind", "dataset", "size", "encoder"], sort=False)["_v"]
             .mean().unstack("encoder"))
    specs = list(dict.fromkeys(metrics["encoder"]))
    table = table[[s for s in specs if s in table.columns]]
    table = table.reset_index()
    table["_k"] = table["kind"].map(_kind_key)
    table["_s"] = table["size"].map(_size_key)
    table = table.sort_values(["_k", "dataset", "_s"], kind="stable").drop(columns=["_k", "_s"])
    for spec in specs:
        if spec in table.columns:
            table[spec] = table[spec].map(lambda v: "n.e." if v == -math.inf else _num(v * scale, digits))
    table.columns = [f"`{c}`" if ":" in c else c for c in table.columns]
    return _table(table)


def _tables(metrics: pd.DataFrame) -> list[str]:
    seeded = metrics["seed"].notna().any() if "seed" in metrics else False
    note = " (seeded encoders: mean over seeds)" if seeded else ""
    lines = ["## Metrics", "", *METRIC_DEFINITIONS, "",
             f"### Held-out tokens per symbol{note}", "", _pivot(metrics, "tokens_per_symbol"), "",
             "### Vocabulary size (ids after rearrangement)", "", _pivot(metrics, "vocab_size", 0), "",
             "### Rényi efficiency (α = 2.5; n.e.: not estimable)", "",
             _pivot(metrics, "renyi_efficiency", estimable_only=True), "",
             "### Vocabulary utilisation (n.e.: not estimable)", "",
             _pivot(metrics, "vocab_utilisation", estimable_only=True), "",
             "### Encode throughput (k symbols/s; timing)", "",
             _pivot(metrics, "symbols_per_second", 0, 1e-3), ""]
    baseline = metrics["baseline"].dropna()
    if not baseline.empty:
        lines[-4:-4] = [f"### Share of documents segmented differently from `{baseline.iloc[0]}`",
                        "", _pivot(metrics, "differs_from_baseline"), ""]
    nbest = metrics[metrics["gap_2nd_mean"].notna()]
    if not nbest.empty:
        rows = nbest.assign(
            dataset=nbest["dataset"], encoder="`" + nbest["encoder"] + "`",
            docs=nbest["share_with_n_alternatives"].map(lambda v: _num(v, 2)),
            gap2=nbest["gap_2nd_mean"].map(_num), gap2med=nbest["gap_2nd_median"].map(_num),
            gapn=nbest["gap_nth_mean"].map(_num))
        rows = rows[["dataset", "size", "encoder", "top_n", "docs", "gap2", "gap2med", "gapn"]]
        rows.columns = ["dataset", "size", "encoder", "top_n", "share with n alternatives",
                        "gap 2nd (mean)", "gap 2nd (median)", "gap n-th (mean)"]
        lines += ["### Score gaps of the n-best encoders", "",
                  "tf-idf score of the best encoding minus that of the 2nd and the n-th "
                  "alternative (a gap of 0: the runner-up scores the same and loses only on length "
                  "or order).", "", _table(rows), ""]
    return lines


def _details(metrics: pd.DataFrame) -> list[str]:
    if "distribution_estimable" in metrics:
        estimable = metrics["distribution_estimable"].astype(bool)
        metrics = metrics.assign(
            renyi_efficiency=metrics["renyi_efficiency"].where(estimable, -math.inf),
            vocab_utilisation=metrics["vocab_utilisation"].where(estimable, -math.inf))
    frame = (metrics.groupby(["kind", "dataset", "size", "encoder"], sort=False)
             .agg(V=("vocab_size", "first"), tps=("tokens_per_symbol", "mean"),
                  ratio=("compression_ratio", "mean"), corpus=("corpus_tokens", "mean"),
                  renyi=("renyi_efficiency", "mean"), util=("vocab_utilisation", "mean"),
                  mean=("doc_tokens_mean", "mean"), median=("doc_tokens_median", "mean"),
                  p95=("doc_tokens_p95", "mean"), differs=("differs_from_baseline", "mean"))
             .reset_index())
    frame["_k"] = frame["kind"].map(_kind_key)
    frame["_s"] = frame["size"].map(_size_key)
    frame = frame.sort_values(["_k", "dataset", "_s"], kind="stable")
    out = pd.DataFrame({
        "dataset": frame["dataset"], "size": frame["size"], "encoder": "`" + frame["encoder"] + "`",
        "V": frame["V"].map(lambda v: f"{int(v):,}"), "tokens/symbol": frame["tps"].map(_num),
        "compression": frame["ratio"].map(lambda v: _num(v, 2)),
        "corpus tokens": frame["corpus"].map(lambda v: f"{v:,.0f}"),
        "Rényi eff.": frame["renyi"].map(_estimable), "util.": frame["util"].map(_estimable),
        "doc tokens mean / median / p95": [f"{a:,.1f} / {b:,.1f} / {c:,.1f}" for a, b, c in
                                           zip(frame["mean"], frame["median"], frame["p95"])],
        "differs": frame["differs"].map(_num),
    })
    return ["## Appendix: every metric per cell", "",
            "Raw values in `metrics.csv` (one row per cell and seed); per-document token counts in "
            "`documents.csv`.", "", _table(out), ""]


def _figures(folder: Path, tables: dict[str, Any]) -> list[str]:
    lines = ["## Plots", ""]
    metrics, documents, run = tables["metrics"], tables["documents"], tables["run"]
    path = plots.plot_tokens_per_symbol(metrics, folder / "tokens_per_symbol.png")
    lines += [f"![tokens per symbol]({path.name})", ""]
    if plots.plot_bits_per_symbol(_read(folder, "downstream"), folder / "bits_per_symbol.png"):
        lines += ["Downstream proxy: look at whether the shortest encodings (left) are also the "
                  "lowest (fewest bits per symbol); points low and to the right mean longer "
                  "tokenisations that model the text better. Dashed: the uniform baseline "
                  "(log2 |alphabet|, 2.0 for DNA); dotted: the symbol-level n-gram; ×: a "
                  "tokenisation above a baseline (not ranked).", "",
                  "![bits per symbol](bits_per_symbol.png)", ""]
    if plots.plot_beam_sweep(_read(folder, "beam_summary"), folder / "beam_sweep.png"):
        lines += ["The tf-idf beam: look at how the share of documents a wider beam improves "
                  "grows with the width (left) and how far top-1 falls short of the exact "
                  "optimum where it is known (right).", "",
                  "![beam sweep](beam_sweep.png)", ""]
    for index, question in enumerate(run["config"]["comparisons"]):
        a, b = question["a"], question["b"]
        name = f"length_diff_{index + 1:02d}_{a.replace(':', '-')}_vs_{b.replace(':', '-')}.png"
        if plots.plot_length_differences(documents, a, b, folder / name) is not None:
            lines += [f"**{index + 1}.** {question['question']}", "", f"![{a} vs {b}]({name})", ""]
    return lines


def _without_copies(comparisons: pd.DataFrame, saturated: dict[tuple[str, int, str], str]) -> pd.DataFrame:
    """The comparisons minus those of settings that repeat a smaller size (counted once)."""
    if comparisons.empty or not saturated:
        return comparisons
    copy = [(d, int(n), str(s)) in saturated for d, n, s in
            zip(comparisons["dataset"], comparisons["n_candidates"], comparisons["size"])]
    return comparisons[~pd.Series(copy, index=comparisons.index)]


def _saturated(saturated: dict[tuple[str, int, str], str]) -> list[str]:
    if not saturated:
        return []
    items = "; ".join(f"{d} {s} (n_candidates {n}) = {smaller}" for (d, n, s), smaller in saturated.items())
    return [f"**Saturated sizes, counted once**: {items} - every cell has the same vocabulary size "
            "and held-out length as at the smaller size (the fit ran out of merges), so these "
            "settings are copies: they stay in the tables but not in the summary's counts.", ""]


def stale_banner(folder: Path) -> list[str]:
    """A warning at the top of a report whose folder the ``STALE.toml`` beside it lists
    (`ubpe.lab.provenance.known_stale`; the repository's freshness test reads the same file)."""
    from ubpe.lab.provenance import known_stale

    reason = known_stale(Path(folder).resolve().parent).get(Path(folder).name)
    return [f"> **Stale**: this result no longer matches today's data loaders - {reason}", ""] if reason else []


def render_report(folder: Path) -> Path:
    """Draw the plots and write ``README.md`` in ``folder`` from its CSV files and run.json."""
    folder = Path(folder)
    for stale in folder.glob("*.png"):
        stale.unlink()
    tables = read_results(folder)
    run, comparisons = tables["run"], tables["comparisons"]
    header = [f"# Experiment `{run['experiment']}`", "", run["description"], "", *stale_banner(folder)]
    primary = (comparisons["family"] == "primary" if "family" in comparisons.columns
               else pd.Series(True, index=comparisons.index)) if not comparisons.empty else None
    n_tests = int((comparisons["p_value"].notna() & primary).sum()) if not comparisons.empty else 0
    lines = [*header, *_settings(run, n_tests), *_data(tables["datasets"]),
             *_environment(run, tables["metrics"])]
    saturated = validity.saturated_sizes(tables["metrics"])
    if tables["metrics"].empty:
        lines += ["## Results", "", "No cell could be computed: see the settings above.", ""]
    else:
        lines += [*_summary(_without_copies(comparisons, saturated), run), *_saturated(saturated),
                  *_decisions(tables["decisions"], tables["meta"]),
                  *_tables(tables["metrics"]),
                  *_answers(comparisons, tables["documents"], run),
                  *downstream_section(folder, run), *transformer_section(folder, run),
                  *beam_section(folder, run, tables["metrics"]),
                  *_figures(folder, tables), *_details(tables["metrics"])]
    path = folder / "README.md"
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path
