"""What the reports may pool, rank and conclude over (issue 27, points 3 and 4).

- **Units**: a dataset whose held-out split has fewer than `MIN_UNITS` independent units (its
  loader's docstring says what a unit is and why) is shown in every table but left out of
  rankings and pooled summaries, and marked `FEW_UNITS`: with fewer units, a per-unit test has
  almost no power and one unit (one ECG recording) decides the pooled value. The threshold is
  the referee's "about ten", fixed here before any result of issue 27 was seen.
- **Kinds**: text (prose, multilingual, code) and non-text (DNA, protein, signals, music, time
  series) are summarised separately; no correlation or ranking is pooled across both.
- **Settings are not independent**: the settings of one dataset (sizes, n_candidates) share
  their held-out text, so a summary counts *datasets*, each summarised by the median over its
  settings, never settings.

>>> group("prose"), group("dna")
('text', 'non-text')
>>> too_few_units(2), too_few_units(11)
(True, False)
"""

from __future__ import annotations

#: Fewest held-out units for a dataset to enter rankings and pooled summaries.
MIN_UNITS = 10
#: The kinds that are text; every other kind is non-text.
TEXT_KINDS = ("prose", "multilingual", "code")
#: Groups in report order.
GROUPS = ("text", "non-text")
#: The mark of a dataset left out of rankings and pooled summaries for its units.
FEW_UNITS = f"fewer than {MIN_UNITS} units: shown, not ranked or pooled"


def group(kind: str) -> str:
    """``"text"`` or ``"non-text"``."""
    return "text" if kind in TEXT_KINDS else "non-text"


def too_few_units(n_units: int) -> bool:
    """Whether a held-out split of ``n_units`` units stays out of rankings and pooled summaries."""
    return int(n_units) < MIN_UNITS


def saturated_sizes(metrics) -> dict[tuple[str, int, str], str]:
    """Settings that repeat a smaller size: ``(dataset, n_candidates, size) -> smaller size``.

    A fit that runs out of merges ends where the smaller size's fit ended, so its cells are
    copies (the large experiment's time series: +16384 ends at the +4096 vocabulary). A size
    is a copy when every cell (encoder, seed) has the same vocabulary size and the same
    held-out tokens per symbol as at a smaller size.
    """
    import pandas as pd

    if metrics.empty:
        return {}
    from ubpe.lab.formatting import _size_key

    keys = ["encoder"] + (["seed"] if "seed" in metrics else [])
    found: dict[tuple[str, int, str], str] = {}
    for (dataset, n_cand), part in metrics.groupby(["dataset", "n_candidates"], sort=False):
        seen: dict[tuple, str] = {}
        for size in sorted(part["size"].astype(str).unique(), key=_size_key):
            cells = part[part["size"].astype(str) == size].sort_values(keys)
            signature = tuple(zip(cells["encoder"], pd.Series(cells.get("seed")).fillna(-1).tolist()
                                  if "seed" in cells else [None] * len(cells),
                                  cells["vocab_size"].tolist(), cells["tokens_per_symbol"].round(12).tolist()))
            if signature in seen:
                found[(dataset, int(n_cand), size)] = seen[signature]
            else:
                seen[signature] = size
    return found
