"""The `llm` experiment's statistics, tables, figures and README (`experiments.llm`).

Statistics are paired per unit (`ubpe.lab.stats`): for every (vocabulary, dataset) each
encoder's held-out token count per unit against ``native``'s; Wilcoxon signed-rank on the
per-unit log ratios, Holm over all tested comparisons. ``fewest`` is not tested: it is at most
``native`` on every pre-token by construction (the native tokens are one segmentation into
vocabulary pieces), so its rows are labelled, with the count of documents breaking the bound.
"""

from __future__ import annotations

import json
import math
import platform
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from experiments.datasets.text import UDHR_LANGUAGES  # noqa: E402
from ubpe.lab.formatting import _interval, _num, _p, _pct, _ratio_pct, _table  # noqa: E402
from ubpe.lab.provenance import git_state, package_versions  # noqa: E402
from ubpe.lab.stats import holm, holm_level, log_ratios, unit_comparison, wilcoxon_interval  # noqa: E402

ALPHA = 0.05
NATIVE = "native"  # the model's own tokenization (`experiments.llm`)
BY_CONSTRUCTION = "fewest"
DPI = 110
HEADLINE = (NATIVE, "fewest", "longest_prefix")


def unit_stats(per_doc: pd.DataFrame) -> pd.DataFrame:
    """One row per (vocabulary, dataset, encoder != native): paired per-unit statistics."""
    rows = []
    for (vocab, dataset), frame in per_doc.groupby(["vocab", "dataset"], sort=False):
        native = frame[frame.encoder == NATIVE]
        native_units = native.groupby("unit", sort=True).n_tokens.sum()
        native_docs = native.set_index("doc_id").n_tokens
        for encoder, cell in frame[frame.encoder != NATIVE].groupby("encoder", sort=False):
            units = cell.groupby("unit", sort=True).n_tokens.sum().reindex(native_units.index)
            row = {"vocab": vocab, "dataset": dataset, "encoder": encoder,
                   "n_docs": len(cell), **unit_comparison(units.values, native_units.values)}
            docs = cell.set_index("doc_id").n_tokens.reindex(native_docs.index)
            row["docs_shorter"] = int((docs < native_docs).sum())
            row["docs_longer"] = int((docs > native_docs).sum())
            row["status"] = "by construction" if encoder == BY_CONSTRUCTION else "tested"
            if encoder == BY_CONSTRUCTION:
                row["p_value"] = math.nan  # not a hypothesis: reported, not tested
            rows.append(row)
    stats = pd.DataFrame(rows)
    tested = stats.status == "tested"
    stats["p_holm"] = math.nan
    stats.loc[tested, "p_holm"] = holm(stats.loc[tested, "p_value"].values)
    low, high = [], []
    for row in stats.itertuples():
        if row.status != "tested" or math.isnan(row.p_holm):
            low.append(math.nan)
            high.append(math.nan)
            continue
        cell = per_doc[(per_doc.vocab == row.vocab) & (per_doc.dataset == row.dataset)]
        a = cell[cell.encoder == row.encoder].groupby("unit", sort=True).n_tokens.sum()
        b = cell[cell.encoder == NATIVE].groupby("unit", sort=True).n_tokens.sum()
        interval = wilcoxon_interval(log_ratios(a.values, b.values),
                                     holm_level(ALPHA, row.p_value, row.p_holm))
        low.append(interval[0])
        high.append(interval[1])
    stats["ci_low"], stats["ci_high"] = low, high
    return stats


def script_table(per_doc: pd.DataFrame) -> pd.DataFrame:
    """UDHR tokens per character by script: rows script, one column per vocabulary, each cell
    ``native / fewest / longest_prefix``."""
    udhr = per_doc[(per_doc.dataset == "udhr") & per_doc.encoder.isin(HEADLINE)].copy()
    if udhr.empty:
        return pd.DataFrame()
    udhr["script"] = [UDHR_LANGUAGES.get(d.split("/")[0], "unknown") for d in udhr.doc_id]
    sums = udhr.groupby(["script", "vocab", "encoder"], sort=False)[["n_tokens", "n_chars"]].sum()
    tpc = (sums.n_tokens / sums.n_chars).unstack("encoder")
    vocabs = list(dict.fromkeys(udhr.vocab))
    languages = udhr.groupby("script").unit.nunique()
    rows = []
    for script in sorted(tpc.index.get_level_values(0).unique()):
        row = {"script": script, "languages": int(languages[script])}
        for vocab in vocabs:
            values = tpc.loc[(script, vocab)]
            row[vocab] = " / ".join(f"{values[e]:.3f}" for e in HEADLINE)
        rows.append(row)
    return pd.DataFrame(rows)


def _pivot(summary: pd.DataFrame, dataset: str, value: str, digits: int = 3) -> pd.DataFrame:
    frame = summary[summary.dataset == dataset].pivot(index="vocab", columns="encoder", values=value)
    frame = frame.reindex(index=list(dict.fromkeys(summary.vocab)),
                          columns=list(dict.fromkeys(summary.encoder)))
    out = frame.map(lambda v: _num(float(v), digits)).reset_index()
    return out.rename(columns={"vocab": "vocabulary"})


def plot(summary: pd.DataFrame, folder: Path) -> list[str]:
    """Two figures, a panel per dataset and a bar per vocabulary and encoder: tokens relative
    to native (without `tfidf`, whose +20 to +120 % would flatten the rest; it is in the
    tables), and the share of words segmented differently from native."""
    datasets = list(dict.fromkeys(summary.dataset))
    vocabs = list(dict.fromkeys(summary.vocab))
    colours = dict(zip([e for e in dict.fromkeys(summary.encoder) if e != NATIVE],
                       plt.get_cmap("tab10").colors))
    names = []
    for value, file, ylabel, encoders in (
            ("ratio", "tokens_vs_native.png", "tokens / native tokens - 1 (%)",
             [e for e in colours if e != "tfidf"]),
            ("words_differ_share", "words_differ.png", "words segmented unlike native (%)",
             list(colours))):
        columns = min(len(datasets), 2)
        rows = math.ceil(len(datasets) / columns)
        fig, axes = plt.subplots(rows, columns, figsize=(6.0 * columns, 3.6 * rows), squeeze=False)
        for ax, dataset in zip(axes.flat, datasets):
            frame = summary[summary.dataset == dataset].set_index(["vocab", "encoder"])
            width = 0.8 / len(encoders)
            for k, encoder in enumerate(encoders):
                if value == "ratio":
                    ys = [100 * (frame.loc[(v, encoder), "n_tokens"] / frame.loc[(v, NATIVE), "n_tokens"] - 1)
                          for v in vocabs]
                else:
                    ys = [100 * frame.loc[(v, encoder), value] for v in vocabs]
                ax.bar(np.arange(len(vocabs)) + (k - (len(encoders) - 1) / 2) * width, ys, width,
                       label=encoder, color=colours[encoder])
            ax.axhline(0, color="black", linewidth=0.6)
            ax.set_xticks(np.arange(len(vocabs)), vocabs, fontsize=8)
            ax.set_title(f"{dataset} ({frame.group.iloc[0]})", fontsize=9)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.grid(axis="y", alpha=0.3)
        for ax in list(axes.flat)[len(datasets):]:
            ax.set_visible(False)
        axes.flat[0].legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(folder / file, dpi=DPI)
        plt.close(fig)
        names.append(file)
    return names


def _stats_table(stats: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for r in stats.itertuples():
        by_construction = r.status == "by construction"
        verdict = ("≤ native by construction" if by_construction else
                   "–" if math.isnan(r.p_holm) else
                   ("shorter" if r.hl_log_ratio < 0 else "longer") if r.p_holm < ALPHA else "n.s.")
        rows.append({"vocabulary": r.vocab, "dataset": r.dataset, "encoder": r.encoder,
                     "units / docs": f"{r.n_units} / {r.n_docs}",
                     "total vs native": _pct(r.relative_diff, 2),
                     "HL per unit": _ratio_pct(r.hl_log_ratio),
                     "interval": "–" if by_construction else _interval(r.ci_low, r.ci_high),
                     "docs shorter / longer": f"{r.docs_shorter} / {r.docs_longer}",
                     "p (Holm)": "not tested" if by_construction else _p(r.p_holm),
                     "verdict": verdict})
    return pd.DataFrame(rows)


def _headline(summary: pd.DataFrame) -> pd.DataFrame:
    """Pooled over the datasets: tokens per character of every encoder, per vocabulary."""
    sums = summary.groupby(["vocab", "encoder"], sort=False)[["n_tokens", "n_chars", "n_words"]].sum()
    tpc = (sums.n_tokens / sums.n_chars).unstack("encoder")
    vocabs = list(dict.fromkeys(summary.vocab))
    encoders = list(dict.fromkeys(summary.encoder))
    out = tpc.reindex(index=vocabs, columns=encoders)
    frame = out.map(lambda v: _num(float(v), 4)).reset_index().rename(columns={"vocab": "vocabulary"})
    for encoder in encoders[1:]:
        frame[encoder] = [f"{_num(float(out.loc[v, encoder]), 4)} ({_pct(out.loc[v, encoder] / out.loc[v, NATIVE] - 1)})"
                          for v in vocabs]
    return frame


def _words_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Pooled share of words segmented unlike native, per vocabulary and encoder."""
    summary = summary.assign(diff=summary.words_differ_share * summary.n_words)
    sums = summary.groupby(["vocab", "encoder"], sort=False)[["diff", "n_words"]].sum()
    share = (sums["diff"] / sums.n_words).unstack("encoder")
    share = share.reindex(index=list(dict.fromkeys(summary.vocab)),
                          columns=[e for e in dict.fromkeys(summary.encoder) if e != NATIVE])
    return share.map(lambda v: f"{100 * v:.2f} %").reset_index().rename(columns={"vocab": "vocabulary"})


def _beside_literature(summary: pd.DataFrame, stats: pd.DataFrame) -> list[str]:
    sums = summary.groupby(["vocab", "encoder"], sort=False).n_tokens.sum().unstack("encoder")
    rel = sums.div(sums[NATIVE], axis=0) - 1
    tested = stats[stats.status == "tested"]
    lp = tested[tested.encoder == "longest_prefix"]
    lp_short = int(((lp.p_holm < ALPHA) & (lp.hl_log_ratio < 0)).sum())
    lp_long = int(((lp.p_holm < ALPHA) & (lp.hl_log_ratio > 0)).sum())
    lp_where = sorted({r.dataset for r in lp.itertuples() if r.p_holm < ALPHA and r.hl_log_ratio < 0})
    share = summary.assign(d=summary.words_differ_share * summary.n_words).groupby(
        ["vocab", "encoder"], sort=False)[["d", "n_words"]].sum()
    share = (share.d / share.n_words).unstack("encoder")

    def words(encoder: str) -> str:
        if encoder not in share:
            return "–"
        return f"{100 * share[encoder].min():.1f} to {100 * share[encoder].max():.1f} %"

    renyi_cells = summary.pivot_table(index=["vocab", "dataset"], columns="encoder",
                                      values="renyi_efficiency")
    renyi = "; ".join(
        f"`{e}` above native in {int((renyi_cells[e] > renyi_cells[NATIVE]).sum())} of "
        f"{len(renyi_cells)} cells" for e in ("fewest", "longest_prefix", "tfidf", "dropout")
        if e in renyi_cells)

    def span(encoder: str) -> str:
        if encoder not in rel:
            return "–"
        return f"{_pct(rel[encoder].min(), 2)} to {_pct(rel[encoder].max(), 2)}"

    return [
        "## Beside the literature",
        "",
        "**Uzan et al. 2024, \"Greed is All You Need\"** (ACL 2024, short paper) compare seven "
        "inference methods on vocabularies they trained themselves (BPE, UnigramLM, WordPiece, "
        "SaGe; three sizes) with an *intrinsic* English suite: morphological alignment, cognitive "
        "plausibility and token-distribution measures (including Rényi efficiency). They find greedy "
        "inference surprisingly good for the common tokenizers, least-tokens inference good on the "
        "cognitive measures, and likelihood-based inference lowering Rényi efficiency. "
        "**Schmidt et al. 2024, \"Tokenization Is More Than Compression\"** introduce PathPiece "
        "(fewest tokens for a given vocabulary, a shortest path, our `fewest`) and train 64 "
        "language models (350M-2.4B parameters): fewer tokens did *not* give better downstream "
        "accuracy; pre-tokenization and the vocabulary's construction mattered more.",
        "",
        "What our numbers add, on the vocabularies of six released models and four held-out "
        "corpora (English prose, 25-language UDHR, Python code):",
        "",
        f"- **Length.** Pooled over the corpora, `fewest` changes the token count by {span('fewest')} "
        f"against the model's own tokenization and `longest_prefix` by {span('longest_prefix')} "
        "(per vocabulary, table above). The merge rules of these vocabularies are already within "
        f"{100 * abs(rel['fewest'].min()):.1f} % of the shortest segmentation. The question "
        "Schmidt et al. answered downstream (does the shortest segmentation help?) is, on these "
        "vocabularies, about a difference of that size; our numbers say nothing about its "
        "answer.",
        f"- **Greedy.** `longest_prefix` is significantly shorter than native in {lp_short} and "
        f"significantly longer in {lp_long} of {len(lp)} (vocabulary, corpus) comparisons (Holm, "
        "per-unit Wilcoxon)"
        + (f"; the significant ones are on {', '.join(lp_where)}" if lp_where else "")
        + (". Greedy inference is never significantly longer than the merge rules here, in line "
           "with Uzan et al.'s \"greed is all you need\" - but length is the only one of their "
           "criteria we measure." if lp_long == 0 else
           f". Greedy inference is significantly longer than the merge rules in {lp_long} of them."),
        "- **Different segmentations.** Whatever the token counts: `fewest` segments {words('fewest')} of the words differently from native and "
        f"`longest_prefix` {words('longest_prefix')} (per vocabulary, pooled): that many words "
        "a model would see in a segmentation it was never trained on if the inference method "
        "were swapped at run time.",
        f"- **Rényi efficiency** (Zouhar et al. 2023's alpha = 2.5): {renyi}. Uzan et al. report "
        "it among their measures, so the direction can be set beside theirs, but our "
        "vocabularies, corpora and languages differ.",
        "",
        "What these numbers **cannot** say: nothing here trains or evaluates a language model, so "
        "no statement about downstream quality follows from them. The models were trained on their "
        "native segmentations; any other encoder gives them token sequences out of their training "
        "distribution, and a shorter sequence may well be a worse one. We measure no morphological "
        "or cognitive alignment (Uzan et al.'s main criteria) and use no morphological gold "
        "standard. The corpora are small (see the data table) and the units few in places; the "
        "statistics are about these corpora's units, not about text in general.",
    ]


def _reading_notes(summary: pd.DataFrame, info: dict) -> list[str]:
    """What explains the odd-looking rows (measured on this run where possible)."""
    unseen = info.get("unseen_id_share", {})
    unseen_span = (f"{100 * min(unseen.values()):.0f} to {100 * max(unseen.values()):.0f} %"
                   if unseen else "–")
    ranked = summary[summary.encoder == "ranked"].groupby("vocab").n_tokens.sum()
    native = summary[summary.encoder == NATIVE].groupby("vocab").n_tokens.sum()
    off = [v for v in ranked.index if ranked[v] != native[v]]
    vocabs = set(summary.vocab)
    notes = ["## Reading the numbers", ""]
    if {"Phi-3", "Llama SPM"} <= vocabs and (native.get("Phi-3") == native.get("Llama SPM")):
        notes.append("- **Phi-3 equals Llama SPM** in every row: Phi-3's vocabulary is Llama 2's "
                     "32,000 pieces plus 64 added special tokens, and none of the held-out text "
                     "contains them.")
    notes.append(
        "- **`ranked`** applies the vocabulary's merges by rank, as the original BPE does; it "
        "reproduces `native` except on " + (", ".join(off) if off else "no vocabulary") + "."
        + (" Llama 3's pre-tokenizer uses llama.cpp's `ignore_merges` (a pre-token that is "
           "itself a vocabulary piece is one token, whatever the merges say), which pure "
           "merging does not do." if "Llama 3" in off else ""))
    if vocabs & {"Llama SPM", "Phi-3"}:
        notes.append(
            "- **`dropout` does almost nothing on the sentencepiece models.** ubpe's BPE-dropout "
            "(YouTokenToMe's definition) drops each candidate merge for one step and ends a "
            "pre-token only when one step drops *every* candidate. Llama SPM has no "
            "pre-tokenizer: the whole document is one pre-token with hundreds of candidates, so "
            "that almost never happens and the skipped merges are applied a step later. "
            "sentencepiece's own BPE-dropout discards a skipped merge instead; the numbers here "
            "are ubpe's definition, not sentencepiece's.")
    notes += [
        "- **`tfidf` is much longer than native everywhere.** `fit_weights` gives each piece "
        "the idf of its document frequency *under the native encoding* of the train split; "
        f"{unseen_span} of each vocabulary's merged pieces never occur there and all get the "
        "highest idf, so the tf-idf score (a sum over tokens) prefers many rare short pieces "
        "(`Ġt` `he` `re` for ` there`). This is the weighting's behaviour on a vocabulary "
        "it was not fitted with, not an encoder failure: the encodings are lossless.",
        "",
    ]
    return notes


def readme(summary: pd.DataFrame, stats: pd.DataFrame, scripts: pd.DataFrame, info: dict,
           figures: list[str]) -> str:
    import ubpe

    state = git_state(exclude=["results"])
    groups = dict(zip(summary.dataset, summary.group))
    data = pd.DataFrame([{"dataset": name, "group": groups.get(name, ""), "unit": d["unit"],
                          "held-out docs": d["docs"], "units": d["units"],
                          "held-out chars": f"{d['chars']:,}", "train docs (idf)": d["train_docs"],
                          "train chars": f"{d['train_chars']:,}"}
                         for name, d in info["datasets"].items()])
    vocabs = pd.DataFrame([{"vocabulary": label, "file": info["vocab_files"][label],
                            "ids": f"{info['vocab_sizes'][label]:,}"} for label in info["vocab_sizes"]])
    failures = int(summary.lossless_failures.sum())
    roundtrip = sum(info["native_roundtrip_failures"].values())
    sample = (f"each split capped at {info['heldout_chars_cap']:,} held-out and "
              f"{info['train_chars_cap']:,} train characters (whole documents in the loaders' fixed "
              "hash-shuffled order)")
    if info.get("max_docs"):
        sample += f", then its first {info['max_docs']} documents"
    lines = [
        "# Inference methods on real LLM vocabularies (`llm`)",
        "",
        f"Command: `python -m experiments llm` ({info['seconds']:.0f} s on this machine); "
        f"ubpe {ubpe.__version__}, Python {platform.python_version()}, commit "
        f"`{state['commit'][:10]}`{' (dirty)' if state['dirty'] else ''}. Generated by "
        "`experiments/llm.py` and `experiments/llm_report.py`; the numbers are in `summary.csv` "
        "(one row per vocabulary, dataset and encoder), `per_doc.csv` and `stats.csv`.",
        "",
        "Each held-out document is encoded by the model's own tokenization (`native`, "
        "llama.cpp-exact: ubpe passes llama.cpp's tokenizer tests on these files) and by ubpe's "
        "encoders on the same vocabulary, per pre-token: `fewest` (fewest tokens, PathPiece's "
        "segmentation), `longest_prefix` (greedy longest match from the left), `longest_token`, "
        "`tfidf` (idf weights fitted on the native encodings of the dataset's train split), "
        "`dropout` (BPE-dropout, p = 0.1, seed 0) and `ranked`. Documents are never truncated; "
        f"the sample is {sample}.",
        "",
        "## Data and vocabularies",
        "",
        _table(data), "",
        _table(vocabs), "",
        *([("**Shown once**: " + "; ".join(f"{c} segments every document as {o} does (every dataset and "
                                              "encoder), so it is the same experiment twice: its rows are in "
                                              "`summary.csv` and `per_doc.csv`, not in the tables, the tests "
                                              "or Holm's family below" for c, o in info["duplicate_vocabularies"].items())
            + "."), ""] if info.get("duplicate_vocabularies") else []),
        f"**Lossless: {failures} failures** over every (vocabulary, dataset, encoder, document): "
        "each encoding decodes to exactly the bytes the native encoding decodes to. The native "
        "encodings decode back to the text in "
        + ("every document" if not roundtrip else f"all but {roundtrip} documents")
        + " (a sentencepiece model with a dummy prefix gives the text back after one space, as llama.cpp's "
        "detokenizer does without `remove_special`; that is counted as equal).",
        "",
        "## Tokens per character, pooled over the four datasets",
        "",
        "In brackets: against `native`.",
        "",
        _table(_headline(summary)), "",
        "## Share of words segmented differently from native",
        "",
        "Words are whitespace-separated; a word differs when the token boundaries inside it or at "
        "its ends differ (so `Ġworld` against `Ġ` + `world` differs), pooled over the datasets.",
        "",
        _table(_words_table(summary)), "",
    ]
    for title, value, digits in (("Tokens per character", "tokens_per_char", 4),
                                 ("Tokens per UTF-8 byte", "tokens_per_byte", 4),
                                 ("Rényi efficiency (alpha = 2.5)", "renyi_efficiency", 4)):
        lines += [f"## {title}, per dataset", ""]
        for dataset in dict.fromkeys(summary.dataset):
            lines += [f"**{dataset}**", "", _table(_pivot(summary, dataset, value, digits)), ""]
    lines += [
        "## Paired statistics: each encoder against native",
        "",
        "Per unit (the dataset's independent unit: book, work, language, file), the held-out "
        "token counts summed over the unit's documents; Wilcoxon signed-rank on the per-unit log "
        "ratios ln(encoder / native), two-sided, Holm over every tested row "
        f"(alpha = {ALPHA}); \"HL\": Hodges-Lehmann estimate of the per-unit change, with its "
        "interval at the Holm-consistent level. `fewest` is not tested: it is at most `native` on "
        "every pre-token **by construction** (native's tokens are one segmentation into the "
        "vocabulary's pieces); its \"docs longer\" column counts the documents breaking that bound "
        f"(must be 0: here {int(stats[stats.status == 'by construction'].docs_longer.sum())}).",
        "",
        _table(_stats_table(stats)), "",
    ]
    if not scripts.empty:
        lines += ["## UDHR by script: tokens per character, `native / fewest / longest_prefix`", "",
                  _table(scripts), ""]
    lines += _reading_notes(summary, info)
    lines += ["## Figures", ""]
    lines += ["Token count against native, per dataset (`tfidf` left out for scale; see the "
              "tables); then the share of words segmented differently from native.", ""]
    lines += [f"![{f}]({f})" for f in figures]
    lines += ["", *_beside_literature(summary, stats), ""]
    return "\n".join(lines)


def duplicate_vocabularies(per_doc: pd.DataFrame) -> dict[str, str]:
    """Vocabularies whose every (dataset, encoder, document) token count equals an earlier
    vocabulary's: ``copy -> original`` (Phi-3 ships Llama SPM's pieces plus a few special
    ids; encoding them is the same experiment twice).

    >>> rows = pd.DataFrame({"vocab": ["A", "A", "B", "B"], "dataset": "d", "encoder": "e",
    ...                      "doc_id": [0, 1, 0, 1], "n_tokens": [3, 4, 3, 4]})
    >>> duplicate_vocabularies(rows)
    {'B': 'A'}
    """
    signatures: dict[tuple, str] = {}
    copies: dict[str, str] = {}
    for vocab, frame in per_doc.groupby("vocab", sort=False):
        key = tuple(frame.sort_values(["dataset", "encoder", "doc_id"])
                    [["dataset", "encoder", "doc_id", "n_tokens"]].itertuples(index=False, name=None))
        if key in signatures:
            copies[vocab] = signatures[key]
        else:
            signatures[key] = vocab
    return copies


def write_results(folder: Path, summary_rows: list[dict], per_doc_rows: list[dict],
                  info: dict) -> Path:
    """Write the CSV files, figures, ``run.json`` and ``README.md``; returns the README path."""
    folder.mkdir(parents=True, exist_ok=True)
    summary, per_doc = pd.DataFrame(summary_rows), pd.DataFrame(per_doc_rows)
    copies = duplicate_vocabularies(per_doc)
    info = {**info, "duplicate_vocabularies": copies}
    summary.to_csv(folder / "summary.csv", index=False)
    per_doc.to_csv(folder / "per_doc.csv", index=False)
    # a vocabulary that segments every document as another does is shown once: its rows
    # stay in the CSV files, not in the tests (Holm's family) or the report's tables
    summary = summary[~summary.vocab.isin(copies)]
    per_doc = per_doc[~per_doc.vocab.isin(copies)]
    stats = unit_stats(per_doc)
    scripts = script_table(per_doc)
    stats.to_csv(folder / "stats.csv", index=False)
    figures = plot(summary, folder)
    info = {**info, "packages": package_versions(["numpy", "scipy", "pandas", "matplotlib", "gguf"]),
            "git": git_state(exclude=["results"])}
    (folder / "run.json").write_text(json.dumps(info, indent=2) + "\n")
    path = folder / "README.md"
    path.write_text(readme(summary, stats, scripts, info, figures))
    return path
