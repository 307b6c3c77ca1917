"""The fuzz lane of the bad-input audit of the experiment engine's readers (`lab_audit`, issue
37): no silent wrong documents, no raw exception, no hang, no memory blow-up over every format
x mutation class, sixty cut and sixty flipped copies of each format's file per seed, and the
2.4 GB archive bomb under the real bound (``-m slow``). The quick set runs in the default suite
(``tests/experiments/test_reader_audit.py``); ``python tests/bad_input/lab_audit.py`` prints
the table."""

from __future__ import annotations

import collections
import os

import pytest

import lab_audit


def _bad(results):
    return [r for r in results if r["outcome"] in lab_audit.BAD_OUTCOMES]


#: Cut and flipped copies of each format's file (``UBPE_LAB_AUDIT_COPIES``, default 60: about
#: 1,000 cases, two minutes on two cores).
COPIES = int(os.environ.get("UBPE_LAB_AUDIT_COPIES", "60"))


@pytest.mark.slow
def test_full_lab_audit():
    from ubpe.lab.datasets._arrays import MAX_ARRAY_BYTES

    cases = lab_audit.cases(0, per_format=COPIES, bomb_bytes=int(2.4e9))  # the 300 kB npz of 2.4 GB
    results = lab_audit.run(cases, array_limit=MAX_ARRAY_BYTES)
    counts = collections.Counter(r["outcome"] for r in results)
    assert not _bad(results), lab_audit.table(results) + "\n" + "\n".join(map(str, _bad(results)[:10]))
    assert counts["error"] > counts["right"] > 50 and counts["read"] > 0
