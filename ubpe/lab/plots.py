"""The report's figures (matplotlib, Agg backend), drawn from the results' CSV tables.

- `plot_tokens_per_symbol`: one panel per dataset, held-out tokens per symbol against the
  vocabulary's actual size (log scale), one line per encoder;
- `plot_length_differences`: for one comparison ``a`` vs ``b``, the per-document length ratio
  ``n_a / n_b`` as box plots per dataset and vocabulary size, on a log scale (a few documents
  can be 100 times longer with one encoder, e.g. the all-N assembly gaps in DNA, and a
  linear axis would flatten every box);
- `plot_bits_per_symbol`: the downstream proxy, held-out bits per symbol against tokens per
  symbol, one panel per dataset, one point per encoder and n_candidates;
- `plot_beam_sweep`: the tf-idf beam against its width, per dataset: share of inputs improved
  over width 1, share at the exact optimum and the mean gap to it.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402
import pandas as pd  # noqa: E402

from ubpe.lab.formatting import _kind_key  # noqa: E402

PANEL_COLUMNS = 5
PANEL_SIZE = (3.4, 3.0)  # inches per panel
DPI = 110
PERCENT = 100.0
# colour and marker follow the encoder, the line style the vocabulary (variant), so one
# encoder on both vocabularies reads as one colour, solid and dashed
_PALETTE = plt.get_cmap("tab10").colors
_MARKERS = "os^vD<>pPX*h"


def _style(spec: str, specs: list[str]) -> dict:
    variant, encoder = spec.split(":", 1)
    encoders = list(dict.fromkeys(s.split(":", 1)[1] for s in specs))
    i = encoders.index(encoder)
    return {"color": _PALETTE[i % len(_PALETTE)], "marker": _MARKERS[i % len(_MARKERS)],
            "linestyle": "-" if variant == "universal" else "--"}


def _grid(n: int) -> tuple[plt.Figure, list[plt.Axes]]:
    cols = min(PANEL_COLUMNS, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(PANEL_SIZE[0] * cols, PANEL_SIZE[1] * rows),
                             squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _label_panels(axes: list[plt.Axes], xlabel: str, ylabel: str) -> None:
    """Small ticks and a grid on every panel, y labels on the left column, x on the bottom row."""
    for ax in axes:
        ax.tick_params(labelsize=8)
        ax.grid(True, alpha=0.3)
    for ax in axes[::PANEL_COLUMNS]:
        ax.set_ylabel(ylabel, fontsize=9)
    for ax in axes[-min(PANEL_COLUMNS, len(axes)):]:
        ax.set_xlabel(xlabel, fontsize=9)


def plot_tokens_per_symbol(metrics: pd.DataFrame, path: Path) -> Path:
    """Tokens per symbol against vocabulary size, per dataset (seeded encoders: seed mean)."""
    table = (metrics.groupby(["dataset", "kind", "encoder", "size"], sort=False, as_index=False)
             .agg(vocab_size=("vocab_size", "first"), tokens_per_symbol=("tokens_per_symbol", "mean")))
    datasets = list(dict.fromkeys(table["dataset"]))
    specs = list(dict.fromkeys(table["encoder"]))
    fig, axes = _grid(len(datasets))
    for ax, dataset in zip(axes, datasets):
        part = table[table["dataset"] == dataset]
        for spec in specs:
            rows = part[part["encoder"] == spec].sort_values("vocab_size")
            if not rows.empty:
                ax.plot(rows["vocab_size"], rows["tokens_per_symbol"], label=spec,
                        markersize=4, linewidth=1.2, **_style(spec, specs))
        ax.set_xscale("log", base=2)
        ax.set_title(f"{dataset} ({part['kind'].iloc[0]})", fontsize=10)
    _label_panels(axes, "vocabulary size (ids)", "held-out tokens / symbol")
    _finish(fig, axes, "Held-out tokens per symbol (lower is shorter); solid: universal "
                        "vocabulary, dashed: classic", path)
    return path


def _finish(fig: plt.Figure, axes: list[plt.Axes], title: str, path: Path,
            extra: tuple[list, list] = ([], [])) -> None:
    """One legend below the panels (every label once, then ``extra``), title, save, close."""
    handles, labels = [], []
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    handles, labels = handles + list(extra[0]), labels + list(extra[1])
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=9,
               frameon=False)
    fig.suptitle(title, fontsize=11)
    legend_rows = math.ceil(len(labels) / 6)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * legend_rows, 1, 0.96))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def _percent_change(ratio: float, _position: float) -> str:
    """Axis label of a length ratio as a change: 0.5 -> -50 %, 2 -> +100 %."""
    change = (ratio - 1.0) * PERCENT
    return f"{change:+.0f} %" if abs(change) >= 1 else "0 %"


def plot_length_differences(documents: pd.DataFrame, a: str, b: str, path: Path) -> Path | None:
    """Box plots of ``n_tokens(a) / n_tokens(b)`` per document, per dataset and size."""
    keys = ["dataset", "size", "n_candidates", "doc"]
    mean_a = documents[documents["encoder"] == a].groupby(keys, sort=False)["n_tokens"].mean()
    mean_b = documents[documents["encoder"] == b].groupby(keys, sort=False)["n_tokens"].mean()
    joined = pd.concat([mean_a.rename("a"), mean_b.rename("b")], axis=1, join="inner").reset_index()
    joined = joined[joined["b"] > 0]
    if joined.empty:
        return None
    joined["diff"] = joined["a"] / joined["b"]
    datasets = list(dict.fromkeys(joined["dataset"]))
    sizes = list(dict.fromkeys(joined["size"]))
    width = 0.8 / len(sizes)
    fig, ax = plt.subplots(figsize=(max(8.0, 1.1 * len(datasets) * max(1, len(sizes)) / 2), 4.6))
    colours = plt.get_cmap("viridis")([0.15 + 0.7 * i / max(1, len(sizes) - 1)
                                       for i in range(len(sizes))])
    for j, size in enumerate(sizes):
        data = [joined[(joined["dataset"] == d) & (joined["size"] == size)]["diff"].to_numpy()
                for d in datasets]
        positions = [i + (j - (len(sizes) - 1) / 2) * width for i in range(len(datasets))]
        kept = [(p, x) for p, x in zip(positions, data) if len(x)]
        if not kept:
            continue
        box = ax.boxplot([x for _, x in kept], positions=[p for p, _ in kept], widths=width * 0.85,
                         patch_artist=True, showfliers=True, flierprops={"markersize": 2},
                         medianprops={"color": "black"})
        for patch in box["boxes"]:
            patch.set_facecolor(colours[j])
            patch.set_alpha(0.8)
        ax.plot([], [], "s", color=colours[j], label=f"vocabulary {size}")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_formatter(FuncFormatter(_percent_change))
    ax.set_xticks(range(len(datasets)))
    ax.set_xticklabels(datasets, rotation=20, fontsize=9)
    ax.set_ylabel(f"tokens of {a} vs {b}\n(per document, log scale)", fontsize=9)
    ax.set_title(f"Per-document length, {a} relative to {b} (below 0 %: {a} shorter)",
                 fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _panels_by_kind(table: pd.DataFrame, keys: list[str]) -> list[tuple]:
    """The distinct ``keys`` of ``table`` (first is the dataset), in the report's kind order."""
    order = table.assign(_k=table["kind"].map(_kind_key)).sort_values("_k", kind="stable")
    return list(dict.fromkeys(order[keys].itertuples(index=False, name=None)))


def plot_bits_per_symbol(downstream: pd.DataFrame, path: Path) -> Path | None:
    """Held-out bits per symbol against tokens per symbol, one panel per dataset (and size),
    one point per encoder and n_candidates: colour is the encoder, the marker the vocabulary
    (circle universal, square classic), the fill n_candidates (hollow: the smallest)."""
    if downstream.empty:
        return None
    table = downstream.assign(size=downstream["size"].astype(str))
    sizes = list(table["size"].unique())
    panels = _panels_by_kind(table, ["dataset", "size"])
    names = list(dict.fromkeys(s.split(":", 1)[1] for s in table["encoder"]))
    colours = plt.get_cmap("tab10" if len(names) <= 10 else "tab20").colors
    colour = {name: colours[i % len(colours)] for i, name in enumerate(names)}
    shape = {"universal": "o", "classic": "s"}
    n_cands = sorted(table["n_candidates"].unique())
    fig, axes = _grid(len(panels))
    for ax, (dataset, size) in zip(axes, panels):
        part = table[(table["dataset"] == dataset) & (table["size"] == size)]
        for spec, rows in part.groupby("encoder", sort=False):
            variant, name = spec.split(":", 1)
            rows = rows.sort_values("n_candidates")
            ax.plot(rows["tokens_per_symbol"], rows["bits_per_symbol"], color=colour[name],
                    linewidth=0.6, alpha=0.5)
            for row in rows.itertuples():
                hollow = len(n_cands) > 1 and row.n_candidates == n_cands[0]
                ax.plot(row.tokens_per_symbol, row.bits_per_symbol, linestyle="none",
                        marker=shape.get(variant, "^"), markersize=5, color=colour[name],
                        markerfacecolor="none" if hollow else colour[name])
        title = dataset if len(sizes) == 1 else f"{dataset} {size}"
        ax.set_title(f"{title} ({part['kind'].iloc[0]})", fontsize=10)
        for column, style in _BASELINES:  # drawn, never clipped away by the axis limits
            if column in part:
                ax.axhline(float(part[column].iloc[0]), color="black", linewidth=0.9, linestyle=style)
        if "below_baseline" in part:
            below = part[part["below_baseline"].astype(bool)]
            ax.plot(below["tokens_per_symbol"], below["bits_per_symbol"], linestyle="none", marker="x",
                    markersize=8, color="black")
    _label_panels(axes, "held-out tokens / symbol", "held-out bits / symbol")
    handles = [plt.Line2D([], [], color=colour[n], linewidth=3) for n in names]
    labels = [f"encoder {n}" for n in names]
    variants = list(dict.fromkeys(s.split(":", 1)[0] for s in table["encoder"]))
    handles += [plt.Line2D([], [], color="grey", marker=shape.get(v, "^"), linestyle="none")
                for v in variants]
    labels += [f"{v} vocabulary" for v in variants]
    if len(n_cands) > 1:
        handles += [plt.Line2D([], [], color="grey", marker="o", linestyle="none",
                               markerfacecolor=face) for face in ("none", "grey")]
        labels += [f"n_candidates {n_cands[0]}", f"n_candidates {n_cands[-1]}"]
    if "uniform_bits_per_symbol" in table:
        handles += [plt.Line2D([], [], color="black", linewidth=0.9, linestyle=style) for _, style in _BASELINES]
        handles += [plt.Line2D([], [], color="black", marker="x", linestyle="none")]
        labels += ["uniform: log2 |alphabet|", "symbol-level n-gram (no merges)", "above a baseline"]
    _finish(fig, axes, f"Held-out bits per symbol under a Kneser-Ney n-gram model (lower is "
                       f"better) against tokens per symbol, vocabulary {', '.join(sizes)}", path,
            (handles, labels))
    return path


#: The baselines drawn on the bits plot: (column of downstream.csv, line style).
_BASELINES = (("uniform_bits_per_symbol", "--"), ("symbol_bits_per_symbol", ":"))


def plot_beam_sweep(beam_summary: pd.DataFrame, path: Path) -> Path | None:
    """Per dataset, against the beam width: the share of inputs whose best tf-idf score beats
    width 1's, the share at the exact optimum, and the mean gap to it (solid: whole documents,
    dashed: their first symbols)."""
    if beam_summary.empty:
        return None
    datasets = [d for d, in _panels_by_kind(beam_summary, ["dataset"])]
    widths = sorted(beam_summary["width"].unique())
    inputs = list(dict.fromkeys(beam_summary["input"]))
    panels = (("improved", "inputs improved over width 1 (%)"),
              ("optimal", "resolved inputs at the exact optimum (%)"),
              ("mean_gap", "mean gap to the exact optimum (% of score)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6))
    colours = plt.get_cmap("tab10" if len(datasets) <= 10 else "tab20").colors
    for ax, (column, label) in zip(axes, panels):
        for i, dataset in enumerate(datasets):
            for j, name in enumerate(inputs):
                rows = beam_summary[(beam_summary["dataset"] == dataset)
                                    & (beam_summary["input"] == name)].sort_values("width")
                rows = rows[rows[column].notna()]
                if rows.empty:
                    continue
                values = rows[column].clip(lower=0) * PERCENT
                ax.plot(rows["width"], values, color=colours[i % len(colours)],
                        marker=_MARKERS[i % len(_MARKERS)], markersize=4, linewidth=1.2,
                        linestyle="-" if j == 0 else "--", label=dataset)
        ax.set_xscale("log")
        ax.set_xticks(widths)
        ax.set_xticklabels([str(w) for w in widths])
        ax.minorticks_off()
        ax.set_xlabel("beam width (top_n)", fontsize=9)
        ax.set_ylabel(label, fontsize=9)
        ax.set_ylim(bottom=0)  # shares and gaps from 0, so a small change does not look large
        ax.tick_params(labelsize=8)
        ax.grid(True, alpha=0.3)
    extra = ([plt.Line2D([], [], color="grey", linestyle="-" if j == 0 else "--")
              for j in range(len(inputs))], [f"input: {name}" for name in inputs])
    _finish(fig, list(axes), "The tf-idf beam against its width, per dataset (solid: whole documents, "
                             "dashed: their first symbols; the optimum only where it was resolved)", path, extra)
    return path
