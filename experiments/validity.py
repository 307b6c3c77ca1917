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
