"""The quick set of the bad-input audit of the experiment engine's readers
(``tests/bad_input/lab_audit.py``, issue 37): every targeted case (line ends, BOMs, CRLF,
non-finite numbers, ids past int64, huge array headers, a 32 MB archive bomb under a 16 MiB
bound, object arrays, codecs, damaged MIDI, symlink loops, a bad file in a folder...) and six
cut and six flipped copies of each format's file, each read in a process of its own under a
time and memory bound: no silent wrong documents, no raw exception, no hang, no memory
blow-up. The fuzz lane runs the whole set (``tests/bad_input/test_lab_audit.py``, ``-m slow``)."""

from __future__ import annotations

import collections

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
