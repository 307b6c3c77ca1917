"""The corrupt-file and command-line audit (`audit`, issue 28): no silent wrong result, no raw
exception, no hang, no traceback.

The default run audits :data:`QUICK_CASES` corrupted files (every original, every mutation
class) and :data:`QUICK_LINES` command lines; the fuzz lane (``-m slow``) audits
``UBPE_AUDIT_CASES`` files (default 2,800, the full audit) and every command line.
``python -m tests.bad_input.audit --cases 2800`` prints the table.
"""

from __future__ import annotations

import collections
import os

import pytest

import audit

QUICK_CASES = 192  # 12 originals x 8 classes, twice
QUICK_LINES = 3
FULL_CASES = int(os.environ.get("UBPE_AUDIT_CASES", "2800"))


def _bad(results: list[dict]) -> list[dict]:
    return [r for r in results if r["outcome"] in audit.BAD_OUTCOMES]


def test_quick_audit_of_corrupt_files():
    results = audit.run_cases(QUICK_CASES, seed=1)
    assert len(results) == QUICK_CASES
    assert {r["class"] for r in results} == set(audit.CLASSES)
    assert not _bad(results), audit.table(results) + "\n" + "\n".join(map(str, _bad(results)[:5]))


def test_quick_audit_of_command_lines():
    results = audit.run_cli(lines=QUICK_LINES)
    assert len(results) == QUICK_LINES
    assert all(r["outcome"] == "clean" for r in results), results


@pytest.mark.slow
def test_full_audit_of_corrupt_files():
    results = audit.run_cases(FULL_CASES, seed=0)
    counts = collections.Counter(r["outcome"] for r in results)
    assert not _bad(results), audit.table(results) + "\n" + "\n".join(map(str, _bad(results)[:10]))
    assert counts["error"] > 0 and counts["same"] > 0


@pytest.mark.slow
def test_full_audit_of_command_lines():
    results = audit.run_cli()
    assert len(results) >= 60
    assert all(r["outcome"] == "clean" for r in results), [r for r in results if r["outcome"] != "clean"]
