"""The figures and README of ``python -m experiments alternatives`` (see `experiments.alternatives`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

DPI = 110
PANEL_COLUMNS = 5
SCORE_COLORS = {"idf": "tab:blue", "unigram": "tab:orange"}
# parts shorter than this on average are words of pre-tokenized text, longer ones whole documents
WORD_PART_SYMBOLS = 20
METHOD_STYLES = {"sample (idf)": ("tab:blue", "o"), "sample (unigram)": ("tab:orange", "s"),
                 "dropout": ("tab:green", "^")}


def _bars(ax, summary: pd.DataFrame, column: str, title: str, ylabel: str) -> None:
    datasets = list(dict.fromkeys(summary["dataset"]))
    x = np.arange(len(datasets))
    width = 0.4
    for i, score in enumerate(("idf", "unigram")):
        part = summary[summary["score"] == score].set_index("dataset").reindex(datasets)
        ax.bar(x + (i - 0.5) * width, part[column], width, label=score, color=SCORE_COLORS[score])
    ax.set_xticks(x, datasets, rotation=45, ha="right")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)


def plot_ambiguity(summary: pd.DataFrame, path: Path) -> Path:
    """Segmentations and entropy per symbol; mass of the best and of the top-k per part."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    datasets = list(dict.fromkeys(summary["dataset"]))
    x = np.arange(len(datasets))
    log_n = summary[summary["score"] == "idf"].set_index("dataset").reindex(datasets)["log_n_per_symbol"]
    axes[0].bar(x, log_n, 0.6, color="tab:gray")
    axes[0].set_xticks(x, datasets, rotation=45, ha="right")
    axes[0].set_title("segmentations: ln(count) per symbol")
    axes[0].set_ylabel("nats per symbol")
    axes[0].grid(axis="y", alpha=0.3)
    _bars(axes[1], summary, "entropy_per_symbol", "entropy of p(y) ∝ exp(score) per symbol", "nats per symbol")
    _bars(axes[2], summary, "top1_mass", "mass of the best segmentation, per part", "probability")
    top_k = [c for c in summary.columns if c.startswith("top") and c != "top1_mass"][0]
    for i, score in enumerate(("idf", "unigram")):
        part = summary[summary["score"] == score].set_index("dataset").reindex(datasets)
        axes[2].scatter(x + (i - 0.5) * 0.4, part[top_k], marker="_", s=200, color="black",
                        label=f"{top_k.split('_')[0]} mass" if i == 0 else None, zorder=3)
    axes[1].legend(title="score")
    axes[2].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def plot_sampling(sampling: pd.DataFrame, path: Path) -> Path:
    """Per dataset: tokens per symbol against the boundary distance between draws."""
    datasets = list(dict.fromkeys(sampling["dataset"]))
    cols = min(PANEL_COLUMNS, len(datasets))
    rows = -(-len(datasets) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 3.1 * rows), squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[len(datasets):]:
        ax.set_visible(False)
    for ax, dataset in zip(flat, datasets):
        for method, (color, marker) in METHOD_STYLES.items():
            part = sampling[(sampling["dataset"] == dataset) & (sampling["method"] == method)]
            ax.plot(part["tokens_per_symbol"], part["pairwise_distance"], color=color, marker=marker,
                    label=method, markersize=4)
            for _, row in part.iloc[[0, -1]].iterrows():
                ax.annotate(f"{row['parameter']:g}", (row["tokens_per_symbol"], row["pairwise_distance"]),
                            fontsize=7, color=color, xytext=(3, 3), textcoords="offset points")
        ax.set_title(dataset)
        ax.grid(alpha=0.3)
    for ax in flat[::cols]:
        ax.set_ylabel("boundary distance between draws")
    for ax in flat[-cols:]:
        ax.set_xlabel("tokens per symbol")
    flat[0].legend(fontsize=7)
    fig.suptitle("sampling: length against diversity (labels: temperature, or dropout p)", y=1.0)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def agreement_matrix(agreement: pd.DataFrame) -> pd.DataFrame:
    """Mean boundary distance between encoders, averaged over datasets (symmetric)."""
    mean = agreement.groupby(["a", "b"], sort=False)["boundary_distance"].mean()
    names = list(dict.fromkeys(list(agreement["a"]) + list(agreement["b"])))
    matrix = pd.DataFrame(0.0, index=names, columns=names)
    for (a, b), value in mean.items():
        matrix.loc[a, b] = matrix.loc[b, a] = value
    return matrix


def plot_agreement(agreement: pd.DataFrame, path: Path) -> Path:
    matrix = agreement_matrix(agreement)
    fig, ax = plt.subplots(figsize=(6.2, 5.2))
    image = ax.imshow(matrix.values, cmap="viridis")
    ax.set_xticks(range(len(matrix)), matrix.columns, rotation=45, ha="right")
    ax.set_yticks(range(len(matrix)), matrix.index)
    for i in range(len(matrix)):
        for j in range(len(matrix)):
            ax.text(j, i, f"{matrix.values[i, j]:.2f}", ha="center", va="center", fontsize=8,
                    color="white" if matrix.values[i, j] < matrix.values.max() / 2 else "black")
    fig.colorbar(image, ax=ax, label="cut points not shared, per symbol")
    ax.set_title("how much the encoders' choices differ (mean over datasets)")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def plot_beam(beam_summary: pd.DataFrame, path: Path) -> Path:
    """Per dataset: the share of documents whose tf-idf top-1 the beam misses, and the share
    of the top-n ranks where its score falls short of the exact one."""
    fig, ax = plt.subplots(figsize=(8, 3.8))
    x = np.arange(len(beam_summary))
    ax.bar(x - 0.2, beam_summary["missed_share"], 0.4, label="top-1 missed (documents)", color="tab:red")
    ax.bar(x + 0.2, beam_summary["ranks_short"], 0.4, label="top-n ranks short", color="tab:purple")
    ax.set_xticks(x, beam_summary["dataset"], rotation=45, ha="right")
    ax.set_ylabel("share")
    ax.set_title("the universal encoder's beam against the exact tf-idf search")
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _share_text(share: float) -> str:
    return "never" if share == 0 else f"in {share:.1%} of documents at most"


def _beam_headline(split_beam: pd.DataFrame, window_beam: pd.DataFrame, info: dict[str, Any]) -> str:
    text = "* The universal encoder's beam (one tail per position for top-1) misses the exact tf-idf best:"
    if len(split_beam):
        text += (f"\n  on whole pre-tokenized documents ({', '.join(split_beam['dataset'])}) "
                 f"{_share_text(split_beam['missed_share'].max())};")
    if len(window_beam):
        worst = window_beam.loc[window_beam["missed_share"].idxmax()]
        text += (f"\n  on unsplit documents (whole, or their first {info['exact_window']} symbols) in "
                 f"{window_beam['missed_share'].min():.1%}-{worst['missed_share']:.1%} (worst: {worst['dataset']}),"
                 f"\n  by {window_beam['mean_relative_gap'].max():.2%} of the score on average at most, "
                 f"{window_beam['max_relative_gap'].max():.1%} at worst.")
    return text


def _versus_dropout(sampling: pd.DataFrame, unsplit: set[str], p: float = 0.4) -> dict[str, float]:
    """Medians over datasets (and ranges over unsplit ones): `sample` (unigram, T = 1) against
    dropout at ``p``."""
    sample = sampling[(sampling["method"] == "sample (unigram)") & (sampling["parameter"] == 1.0)]
    dropout = sampling[(sampling["method"] == "dropout") & (sampling["parameter"] == p)]
    whole_sample = sample[sample["dataset"].isin(unsplit)]["pairwise_distance"]
    whole_dropout = dropout[dropout["dataset"].isin(unsplit)]["pairwise_distance"]
    return {"sample_whole_min": whole_sample.min(), "sample_whole_max": whole_sample.max(),
            "dropout_whole_min": whole_dropout.min(), "dropout_whole_max": whole_dropout.max(),
            "sample": sample["pairwise_distance"].median(), "dropout": dropout["pairwise_distance"].median(),
            "sample_length": sample["tokens_per_symbol"].median(),
            "dropout_length": dropout["tokens_per_symbol"].median(), "p": p}


def _sampling_verdict(versus: dict[str, float]) -> str:
    """The headline's first words, stated only as far as the medians show it."""
    more = versus["sample"] > versus["dropout"]
    shorter = versus["sample_length"] < versus["dropout_length"]
    if more and shorter:
        return "Sampling on the lattice: more diversity at fewer tokens than BPE-dropout (medians)"
    return "Sampling on the lattice against BPE-dropout (medians)"


def _tfidf_sentence(logp: pd.DataFrame) -> str:
    """Where `tfidf`'s choice sits under each score, from the log-probability table."""
    if "tfidf" not in logp:
        return ""
    medians = logp.groupby("score")["tfidf"].median()
    return ("`tfidf`'s choice has median log-probability per symbol "
            + ", ".join(f"{v:.3f} under `{k}`" for k, v in medians.items()) + " (over datasets).")


def _table(frame: pd.DataFrame, digits: int = 3) -> str:
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    lines = [head, rule]
    for row in frame.itertuples(index=False):
        cells = [f"{v:.{digits}g}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render(out: Path, tables: dict[str, pd.DataFrame], info: dict[str, Any]) -> Path:
    summary, sampling, agreement = tables["summary"], tables["sampling"], tables["agreement"]
    plot_ambiguity(summary, out / "ambiguity.png")
    plot_sampling(sampling, out / "sampling.png")
    plot_agreement(agreement, out / "agreement.png")
    beam = tables["beam_summary"]
    plot_beam(beam, out / "beam.png")
    split_beam = beam[beam["mean_parts"] > 1]
    window_beam = beam[beam["mean_parts"] <= 1]
    top_k = f"top{info['top_k']}_mass"
    main = summary[["dataset", "kind", "score", "docs", "symbols", "log_n_per_symbol", "entropy_per_symbol",
                    "mean_part_symbols", "top1_mass", top_k]]
    encoders = info["encoders"]
    logp = summary[["dataset", "score"] + [f"logp_per_symbol_{e}" for e in encoders]]
    logp.columns = ["dataset", "score"] + list(encoders)
    matrix = agreement_matrix(agreement)
    identical = agreement.groupby(["a", "b"], sort=False)["identical_share"].mean()
    at_one = sampling[(sampling["parameter"] == 1.0) | (sampling["method"] == "dropout")]
    at_one = at_one[["dataset", "method", "parameter", "tokens_per_symbol", "exact_tokens_per_symbol",
                     "pairwise_distance", "distinct_share", "exact_entropy_per_symbol"]]
    idf = summary[summary["score"] == "idf"]
    uni = summary[summary["score"] == "unigram"]
    most = idf.loc[idf["log_n_per_symbol"].idxmax()]
    least = idf.loc[idf["log_n_per_symbol"].idxmin()]
    sample_rows = sampling[sampling["method"] == "sample (unigram)"]
    words = uni[uni["mean_part_symbols"] < WORD_PART_SYMBOLS]
    whole = uni[uni["mean_part_symbols"] >= WORD_PART_SYMBOLS]
    versus = _versus_dropout(sampling, set(whole["dataset"]))
    gap = np.abs(sampling["tokens_per_symbol"] - sampling["exact_tokens_per_symbol"]).max()
    pairs = sorted(((matrix.loc[a, b], a, b) for a in matrix.index for b in matrix.columns if a < b))
    text = f"""# Alternative encodings: how ambiguous documents are, and sampling

Command: `{info['command']}` ({info['seconds']} s on this machine; ubpe {info['ubpe']},
Python {info['python']}). Universal ubpe tokenizer (the alphabet and {info['size'].lstrip('+')} merged tokens),
fitted on each dataset's training split; held-out documents measured on their segmentation
lattice (`ubpe.encoders.ambiguity`), exactly - no enumeration. Scores: `idf` (the vocabulary's
idf weights, `sample`'s default) and `unigram` (add-one log relative frequencies of the tokens
of the training split encoded by `ranked`), both at temperature 1. Masses of the best and the
{info['top_k']} best segmentations are per *part* (a pre-tokenized word for text, the whole
document otherwise; the first {info['max_parts']} parts of each dataset).

## Headlines

* Segmentations per symbol range from {least['log_n_per_symbol']:.3f} nats ({least['dataset']}) to
  {most['log_n_per_symbol']:.3f} nats ({most['dataset']}): a document of {int(most['symbols'] / most['docs'])}
  symbols of {most['dataset']} has about e^{most['log_n_per_symbol'] * most['symbols'] / most['docs']:.0f}
  segmentations.
* Entropy per symbol (of the distribution over segmentations) is
  {uni['entropy_per_symbol'].min():.3f}-{uni['entropy_per_symbol'].max():.3f} nats under `unigram`
  and {idf['entropy_per_symbol'].min():.3f}-{idf['entropy_per_symbol'].max():.3f} under `idf`
  (median share of log_n: unigram {np.median(uni['entropy_per_symbol'] / uni['log_n_per_symbol']):.0%},
  idf {np.median(idf['entropy_per_symbol'] / idf['log_n_per_symbol']):.0%}).
* Per word of pre-tokenized text ({', '.join(words['dataset'])}), the best segmentation holds on
  average {words['top1_mass'].min():.2f}-{words['top1_mass'].max():.2f} of the mass under `unigram`
  (the {info['top_k']} best: {words[top_k].min():.2f}-{words[top_k].max():.2f}); over a whole unsplit
  document of tens to thousands of symbols it holds {whole['top1_mass'].min():.1e} to {whole['top1_mass'].max():.2f}.
* {_sampling_verdict(versus)}: `sample`
  (`unigram`, T = 1) reaches a median boundary distance between draws of {versus['sample']:.3f} at
  {versus['sample_length']:.3f} tokens per symbol, dropout (p = {versus['p']:g}) {versus['dropout']:.3f} at
  {versus['dropout_length']:.3f}. On unsplit data ({', '.join(whole['dataset'])}) dropout's distance stays at
  {versus['dropout_whole_min']:.3f}-{versus['dropout_whole_max']:.3f} even at p = {versus['p']:g}, `sample`'s at T = 1 is
  {versus['sample_whole_min']:.3f}-{versus['sample_whole_max']:.3f}.
* Cut points of the encoders' choices: the closest pair ({pairs[0][1]}, {pairs[0][2]}) differs in
  {pairs[0][0]:.3f} cut points per symbol, the farthest ({pairs[-1][1]}, {pairs[-1][2]}) in {pairs[-1][0]:.3f}.
* Sampling with the `unigram` score, from temperature
  {sample_rows['parameter'].min():g} to {sample_rows['parameter'].max():g} tokens per symbol grow
  {sample_rows.groupby('dataset')['tokens_per_symbol'].agg(lambda s: s.iloc[-1] / s.iloc[0]).median():.2f}x
  (median over datasets) while the distance between draws grows
  {sample_rows.groupby('dataset')['pairwise_distance'].agg(lambda s: s.iloc[-1] / max(s.iloc[0], 1e-12)).median():.1f}x.
  The sampler's mean length matches the exact expectation from the lattice to within {gap:.4f}
  tokens per symbol everywhere ({info['draws']} draws per document).
{_beam_headline(split_beam, window_beam, info)}

![ambiguity](ambiguity.png)

## Per dataset

`log_n_per_symbol`: ln(number of segmentations) per symbol; `entropy_per_symbol`: of
p(y) ∝ exp(score(y)), nats; `mean_part_symbols`: length of the parts the masses are
measured on.

{_table(main)}

## How likely each encoder's choice is

Log-probability per symbol of each encoder's segmentation under each distribution (0 would
be certain; the mode of the distribution is the `additive` encoder's choice with the same
weights). {_tfidf_sentence(logp)}

{_table(logp)}

## How much the encoders' choices differ

Mean over datasets of the cut points in one segmentation and not the other, per symbol;
share of documents with identical segmentations in `agreement.csv` (mean over pairs:
{identical.mean():.3f}).

![agreement](agreement.png)

## The beam against the exact tf-idf top-{info['beam_top_n']}

`ubpe.encoders.exact_tfidf.ExactTfidf` (branch and bound, bounded by the best additive sum of
idf weights) against the `tfidf` encoder (`exact=True` combination of parts), top-{info['beam_top_n']}.
Pre-tokenized documents whole (parts up to {info['exact_window']} symbols); unsplit documents longer
than {info['exact_window']} symbols: their first {info['exact_window']} (`measured_on`). `resolved`: documents the exact search finished within
{info['exact_max_nodes']:,} nodes (the others are left out of the shares; `ExactTfidf(milp=True)`,
the default, solves them as integer programs instead, at seconds per part - too slow for this run); `missed_share`: documents
whose beam top-1 scores below the exact best (relative tolerance 1e-12); `*_relative_gap`: the
shortfall as a share of the best score; `ranks_short`: share of the {info['beam_top_n']} ranks whose
beam score falls short of the exact score at that rank; `same_tokens`: share of ranks with the same
segmentation (ties may be listed in another order, so this can be below 1 with nothing missed).

{_table(beam)}

![beam](beam.png)

## Sampling: length against diversity

`sample` at temperatures {', '.join(f'{t:g}' for t in info['temperatures'])} under both scores and
BPE-dropout at p = {', '.join(f'{p:g}' for p in info['dropouts'])}; {info['draws']} draws per document,
seed {info['seed']}. `pairwise_distance`: boundary distance between two draws of a document;
`distinct_share`: distinct draws / draws; `exact_*`: from the lattice. Temperature 1 and
dropout rows:

{_table(at_one)}

![sampling](sampling.png)

Files: `documents.csv` (per document and score), `parts.csv`, `agreement.csv`,
`sampling.csv`, `summary.csv`, `beam.csv` (per document), `beam_summary.csv`, `run.json`.
"""
    path = out / "README.md"
    path.write_text(text)
    return path
