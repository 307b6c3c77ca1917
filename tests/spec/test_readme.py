"""The README's examples run, so they cannot rot: every ``python`` block, the command-line
quick start (``ubpe`` is ``python -m ubpe``), the ``console`` transcripts (output compared
line for line) and the encoder table (against the registry). All in ``tmp_path``."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ubpe.encoders import available_encoders, encoder_info
from ubpe.io import FORMATS

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
SETUP_COMMANDS = [
    'bash experiments/install_data.sh && pip install -r requirements-build.txt && pip install --no-build-isolation -e ".[experiments]" && python -m experiments',
    'bash experiments/install_data.sh && pip install -r requirements-build.txt && pip install --no-build-isolation -e ".[test]" && python -m pytest tests/spec tests/units tests/test_build.py',
]


def blocks(language: str, section: str | None = None) -> list[str]:
    text = README
    if section is not None:
        start = README.index(f"## {section}\n")
        end = README.find("\n## ", start + 1)
        text = README[start : end if end >= 0 else None]
    return [body for lang, body in FENCE.findall(text) if lang == language]


def table_rows(header: str) -> list[str]:
    """The body rows of the README table that starts with ``header`` (up to its first non-row line)."""
    lines = README[README.index(header):].splitlines()
    return lines[2:next((i for i, line in enumerate(lines) if not line.startswith("|")), len(lines))]


def shell_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("UBPE_TRACEBACK", None)
    env["NO_COLOR"] = ""
    return env


def run_shell(script: str, cwd: Path) -> subprocess.CompletedProcess:
    """``script`` in bash with ``ubpe`` meaning this checkout's ``python -m ubpe``."""
    prelude = f'set -euo pipefail\nubpe() {{ "{sys.executable}" -m ubpe "$@"; }}\n'
    return subprocess.run(
        ["bash", "-c", prelude + script], cwd=cwd, capture_output=True, text=True, env=shell_env(), timeout=300
    )


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_blocks_run(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(blocks("python")[index], f"README.md python block {index}", "exec"), {})


def test_python_quick_start_prints_what_the_readme_shows(tmp_path, monkeypatch):
    (code,) = blocks("python", "Python quick start")
    (shown,) = blocks("text", "Python quick start")
    assert 5 <= len(code.strip().splitlines()) <= 14  # a quick start, not a tutorial
    monkeypatch.chdir(tmp_path)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, "README.md Python quick start", "exec"), {})
    assert output.getvalue() == shown


@pytest.fixture(scope="module")
def quick_start_dir(tmp_path_factory) -> Path:
    """The directory in which the command-line quick start ran."""
    path = tmp_path_factory.mktemp("readme")
    (script,) = blocks("bash", "Command-line quick start")
    result = run_shell(script, path)
    assert result.returncode == 0, result.stderr
    return path


def test_cli_quick_start_runs(quick_start_dir):
    for produced in ("model.json", "corpus.html", "reference.json"):
        assert (quick_start_dir / produced).stat().st_size > 0


def test_your_own_data_runs(tmp_path, monkeypatch):
    """The section's files, then its commands: a report on FASTA, CSV and text files."""
    pytest.importorskip("pyfaidx", reason="the fasta extra")
    (code,) = blocks("python", "Your own data")
    (script,) = blocks("bash", "Your own data")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md Your own data", "exec"), {})
    result = run_shell(script.replace("--results out/", "--results out/ --no-progress --cache cache"), tmp_path)
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "out" / "my" / "README.md").read_text()
    for name in ("genomes", "series", "notes"):
        assert f"| {name} |" in report
    assert (tmp_path / "experiment.toml").is_file()


def test_console_transcripts_match(quick_start_dir):
    transcripts = blocks("console", "Command-line quick start")
    assert transcripts
    for transcript in transcripts:
        commands = re.split(r"^\$ ", transcript, flags=re.MULTILINE)[1:]
        for command in commands:
            line, _, expected = command.partition("\n")
            result = run_shell(line, quick_start_dir)
            assert result.returncode == 0, result.stderr
            assert result.stdout.rstrip("\n") == expected.rstrip("\n"), line


def test_encoder_table_matches_the_registry():
    rows = table_rows("| encoder | picks | top-n | source |")
    table = {}
    for row in rows:
        name, picks, top_n, source = [cell.strip() for cell in row.strip("|").split("|")]
        table[name.strip("`")] = (picks, top_n == "yes", source)
    expected = {}
    for name in available_encoders():
        info = encoder_info(name)
        expected[name] = (info.optimises, info.supports_nbest, info.source)
    assert table == expected


def test_format_table_matches_the_registry():
    rows = table_rows("| format | file | read | write |")
    table = [tuple(cell.strip() for cell in row.strip("|").split("|")) for row in rows]
    expected = [(f"`{row.name}`", row.title, "yes" if row.read else "no", "yes" if row.write else "no")
                for row in FORMATS.values()]
    assert table == expected


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
    (main_job,) = blocks("bash", "The two commands")[:1]
    assert [b.strip() for b in blocks("bash", "The two commands")] == SETUP_COMMANDS
    assert main_job.strip() == SETUP_COMMANDS[0]


def test_ci_runs_the_readme_test_command_then_every_other_layer():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace("python3 -m", "python -m").replace("python -m pip", "pip")
    assert SETUP_COMMANDS[1] in ci
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
