"""The README, a front page (issue 38): its examples run and print what it shows (the same
executed-page mechanism as every page of ``docs/``, ``tests/pages.py``), its two commands stay
as they are, its table of families names a runnable check for every format, and it stays a
front page that links into the site. All in ``tmp_path``."""

from __future__ import annotations

import re

from pages import ROOT, blocks, run_page, section
from ubpe.io import FORMATS

README = (ROOT / "README.md").read_text(encoding="utf-8")
#: the front page's length (issue 38): what it drops is on the site (the conversion table's notes
#: are in the converting guide)
MAX_LINES = 200
SETUP_COMMANDS = [
    'pip install -r requirements-build.txt && pip install --no-build-isolation -e ".[experiments]" && bash experiments/install_data.sh && python -m experiments',
    'pip install -r requirements-build.txt && pip install --no-build-isolation -e ".[test]" && bash experiments/install_data.sh && python -m pytest -n auto --dist loadgroup tests/spec tests/units tests/test_build.py',
]


def fenced(language: str, heading: str | None = None) -> list[str]:
    text = README if heading is None else section(README, heading)
    return [block.body for block in blocks(text) if block.language == language]


def table_rows(header: str) -> list[str]:
    """The body rows of the README table that starts with ``header`` (up to its first non-row line)."""
    lines = README[README.index(header):].splitlines()
    return lines[2:next((i for i, line in enumerate(lines) if not line.startswith("|")), len(lines))]


def test_readme_examples_run_and_print_what_it_shows(tmp_path, monkeypatch):
    """Every python and bash block but the two commands (which install), in order."""
    monkeypatch.chdir(tmp_path)
    assert run_page(README, "README.md", tmp_path, skip=tuple(SETUP_COMMANDS)) >= 2
    assert (tmp_path / "model.json").stat().st_size > 0


def test_python_quick_start_prints_what_the_readme_shows(tmp_path, monkeypatch):
    (code,) = fenced("python", "Python quick start")
    (quick_start,) = [b for b in blocks(section(README, "Python quick start")) if b.language == "python"]
    assert 5 <= len(code.strip().splitlines()) <= 14  # a quick start, not a tutorial
    assert quick_start.output  # what it prints is shown
    monkeypatch.chdir(tmp_path)
    run_page(section(README, "Python quick start"), "README.md Python quick start", tmp_path)


def test_readme_is_a_front_page_that_links_into_the_site():
    assert len(README.splitlines()) <= MAX_LINES
    links = [link.split("#")[0] for link in re.findall(r"\]\(([^)#:]+(?:#[^)]*)?)\)", README)]
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        assert (ROOT / link).exists(), link


REFERENCE_HEADER = "| format | family | reference system | checked on | command |"
COMMAND = re.compile(r"^`python -m pytest (tests/[\w/]+\.py)::(test_\w+)`$")


def test_reference_table_covers_every_format_with_a_runnable_check():
    """The table of families and their references: one row per family, its formats those of
    ``ubpe.io.FORMATS`` (each one at least once), each command a test that exists."""
    rows = table_rows(REFERENCE_HEADER)
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    assert all(len(row) == len(REFERENCE_HEADER.strip("|").split("|")) for row in cells)
    assert {row[0].strip("`") for row in cells} == set(FORMATS)
    for row in cells:
        found = COMMAND.match(row[-1])
        assert found, row[-1]
        path, name = found.groups()
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), row[-1]


def test_setup_commands_are_unchanged():
    (main_job,) = fenced("bash", "The two commands")[:1]
    assert [b.strip() for b in fenced("bash", "The two commands")] == SETUP_COMMANDS
    assert main_job.strip() == SETUP_COMMANDS[0]


def test_ci_runs_the_readme_test_command_then_every_other_layer():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace("python3 -m", "python -m").replace("python -m pip", "pip")
    assert SETUP_COMMANDS[1] in ci
    first_tests = re.search(r"python -m pytest [^'\n]*", ci)[0]
    assert first_tests == SETUP_COMMANDS[1].split(" && ")[-1], "the README's test command is the first that .ci/run runs"
    layers = {path.name for path in (ROOT / "tests").iterdir() if path.is_dir() and any(path.glob("test_*.py"))}
    named = set(re.findall(r"tests/(\w+)", ci))
    assert layers <= named, f"layers that .ci/run does not run: {sorted(layers - named)}"
    assert "-m long tests/spec" in ci, ".ci/run must run the long specification tests the README's command leaves out"


def test_results_links_point_into_results():
    links = re.findall(r"\]\((results/[^)]+)\)", README)
    assert "results/default/README.md" in links
    for link in links:
        if link.startswith("results/benchmarks/"):
            assert (ROOT / link).exists(), link


def test_use_it_elsewhere_shows_the_generated_conversion_table():
    """README's "Use it elsewhere" table is `ubpe.io.write.conversion_table`'s (grouped rows):
    a family or a format that changes there fails here until ``python docs/reference_pages.py``
    writes the table again."""
    import sys

    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from reference_pages import README_CONVERSION_MARKERS, guide_conversion_table, readme_conversion_table
    finally:
        sys.path.remove(str(ROOT / "docs"))
    start, end = README_CONVERSION_MARKERS
    shown = section(README, "Use it elsewhere").split(start, 1)[1].split(end, 1)[0].strip("\n")
    assert shown == readme_conversion_table(), "run `python docs/reference_pages.py` to write the table"
    assert shown.count("✓") >= 20 and "✗" in shown
    # the conditions and reasons, in the converting guide the README links to
    guide = (ROOT / "docs" / "guides" / "convert.md").read_text(encoding="utf-8")
    in_guide = guide.split(start, 1)[1].split(end, 1)[0].strip("\n")
    assert in_guide == guide_conversion_table(), "run `python docs/reference_pages.py` to write the table"
    assert in_guide.startswith(shown) and "- a. " in in_guide and "- 1. " in in_guide
