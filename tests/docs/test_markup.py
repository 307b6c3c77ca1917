"""The griffe extension that turns the docstrings' reStructuredText into Markdown
(``docs/griffe_markup.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docs
pytest.importorskip("griffe", reason="the [docs] extra")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs"))
from griffe_markup import to_markdown  # noqa: E402


def test_roles_become_code_and_peps_their_name():
    assert to_markdown("See :class:`~ubpe.UBPE` and :func:`load`, :pep:`562`.") == "See `ubpe.UBPE` and `load`, PEP 562."


def test_a_code_block_directive_and_a_literal_paragraph_become_fences():
    text = "Keys:\n\n.. code-block:: toml\n\n    [grid]\n    top_n = 4\n\nRun it::\n\n    ubpe fit x\n\nDone."
    assert to_markdown(text) == ("Keys:\n\n\n```toml\n[grid]\ntop_n = 4\n```\n\n\nRun it:\n\n```text\n"
                                 "ubpe fit x\n```\n\n\nDone.")


def test_doctest_lines_become_a_pycon_block_at_the_margin():
    text = "Example:\n\n    ubpe encode m.json\n\n    >>> 1 + 1\n    2\n\nAfter."
    assert to_markdown(text) == "Example:\n\n    ubpe encode m.json\n\n\n```pycon\n>>> 1 + 1\n2\n```\n\n\nAfter."
