"""Every page of the documentation site runs (``tests/pages.py``): its ``python``, ``bash`` and
``console`` blocks, in order, in ``tmp_path``, each block's printed output compared with the
``text`` block the page shows after it. The site's own build, links and browser rendering are
tested in ``tests/docs`` (``-m docs``)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from pages import ROOT, PageError, blocks, run_page

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
#: pages whose examples need an extra (they skip without it, and fail in CI, UBPE_NO_SKIP=1)
EXTRAS = {
    "guides/dask.md": ("dask", "distributed", "pyarrow"),
    "guides/own-data.md": ("pyfaidx", "pandas", "scipy", "matplotlib"),
}


def name(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


def test_the_docs_have_pages_with_examples():
    assert len(PAGES) >= 10 and LONG <= {name(page) for page in PAGES}
    assert sum(1 for page in PAGES for block in blocks(page.read_text(encoding="utf-8"))
               if block.language in ("python", "bash", "console")) >= 15


#: pages whose examples run many processes or fits (~3-4 s each): with the long tests, which CI runs
LONG = {"guides/cli.md", "guides/own-data.md"}


@pytest.mark.parametrize("page", [pytest.param(page, marks=pytest.mark.long) if name(page) in LONG else page
                                  for page in PAGES], ids=name)
def test_page_examples_run_and_print_what_the_page_shows(page, tmp_path, monkeypatch):
    for module in EXTRAS.get(name(page), ()):
        pytest.importorskip(module, reason=f"{name(page)}'s examples need {module}")
    monkeypatch.chdir(tmp_path)
    run_page(page.read_text(encoding="utf-8"), f"docs/{name(page)}", tmp_path)


def test_a_page_that_prints_something_it_does_not_show_fails(tmp_path, monkeypatch):
    """The mechanism itself: a wrong output block, a missing one and a failing command fail."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PageError, match="but the page shows"):
        run_page("```python\nprint(1 + 1)\n```\n\n```text\n3\n```\n", "wrong", tmp_path)
    with pytest.raises(PageError, match="no text block"):
        run_page("```python\nprint('shown nowhere')\n```\n", "missing", tmp_path)
    with pytest.raises(PageError, match="exited 1"):
        run_page("```bash\nubpe encode no-such-model.json --text x\n```\n", "failing", tmp_path)
    with pytest.raises(PageError, match="neither run nor allow"):
        run_page("```py\nprint(1)\n```\n", "unknown language", tmp_path)
    assert run_page("```python\nx = 2\n```\n\n```python\nprint(x * 21)\n```\nIt prints:\n```text\n42\n```\n"
                    "```console\n$ echo hi\nhi\n```\n", "right", tmp_path) == 3


def shown_commands() -> list[tuple[str, list[str]]]:
    """``(page, words)`` of every command line of the pages' ``sh`` blocks (shown, not run)."""
    found = []
    for page in PAGES:
        for block in blocks(page.read_text(encoding="utf-8")):
            if block.language == "sh":
                found += [(name(page), shlex.split(line.split("  #")[0])) for line in block.body.splitlines()
                          if line.strip() and not line.lstrip().startswith("#")]
    return found


def test_shown_commands_name_scripts_options_and_tests_that_exist():
    """The commands a page shows without running them (benchmarks of minutes, the docs' own
    build): each script exists and knows the options given, each test path exists."""
    commands = shown_commands()
    assert commands
    for page, words in commands:
        if words[:3] == ["python", "-m", "pytest"]:
            paths = [word.split("::")[0] for word in words[3:] if word.startswith("tests")]
            assert all((ROOT / path).exists() for path in paths), (page, words)
        elif words[0] == "python":
            script = ROOT / words[1]
            assert script.is_file(), (page, words)
            source = script.read_text(encoding="utf-8")
            assert all(f'"{word}"' in source for word in words[2:] if word.startswith("--")), (page, words)
        else:
            assert words[0] == "mkdocs" and words[1] in ("build", "serve"), (page, words)
