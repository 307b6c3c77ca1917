"""The bad-input audit of the experiment engine's readers (`lab_audit`, issue 37): no silent
wrong documents, no raw exception, no hang, no memory blow-up, over every format x mutation
class. The default run audits the quick set (every targeted case, six cut and six flipped
copies of each format's file, a 32 MB archive bomb under a 16 MiB bound); the fuzz lane
(``-m slow``) sixty of each per seed and the 2.4 GB bomb under the real bound.
``python tests/bad_input/lab_audit.py`` prints the table."""

from __future__ import annotations

import collections

import pytest

import lab_audit


def _bad(results):
    return [r for r in results if r["outcome"] in lab_audit.BAD_OUTCOMES]


def test_quick_lab_audit():
    cases = lab_audit.cases(seed=1)
    results = lab_audit.run(cases)
    assert len(results) == len(cases)
    assert {r["class"] for r in results} >= {"line ends", "bom", "crlf", "non-finite", "id range", "huge header",
                                             "bomb", "object array", "codec", "midi structure", "symlink loop",
                                             "bad file in a folder", "truncation", "flip", "blank end"}
    assert not _bad(results), lab_audit.table(results) + "\n" + "\n".join(map(str, _bad(results)[:8]))
    counts = collections.Counter(r["outcome"] for r in results)
    assert counts["error"] > 50 and counts["right"] > 20  # both kinds of answer are exercised


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_full_lab_audit(seed):
    from ubpe.lab.datasets._arrays import MAX_ARRAY_BYTES

    cases = lab_audit.cases(seed, per_format=60, bomb_bytes=int(2.4e9) if seed == 0 else 2 * MAX_ARRAY_BYTES)
    results = lab_audit.run(cases, array_limit=MAX_ARRAY_BYTES)
    assert not _bad(results), lab_audit.table(results) + "\n" + "\n".join(map(str, _bad(results)[:10]))
