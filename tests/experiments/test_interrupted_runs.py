"""Interrupted runs (issue 37): ``ubpe experiment`` killed with SIGKILL at each stage of writing
its results folder never leaves a folder that the report reads as complete; a folder a killed
run of an older version left (an empty or cut table) is refused in one line with exit status 2;
a cache entry that cannot be read is computed again with a warning. Every run is a real
subprocess, killed by ``$UBPE_LAB_KILL_AT`` (`ubpe.lab.outputs.kill_point`) at a named point."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

pd = pytest.importorskip("pandas")

from ubpe.lab.outputs import KILL_AT_ENV, TABLES  # noqa: E402
from ubpe.lab.tables import numbers_only  # noqa: E402

WORDS = "the cat sat on a mat and a dog ran to the red barn".split()
RUN = ["experiment", "my.toml", "--results", "out", "--cache", "cache", "--jobs", "1", "--no-progress", "-q"]
#: The points of writing the results folder at which a run is killed (`ubpe.lab.outputs`).
KILL_POINTS = ("stage", "datasets.csv", "documents.csv", "metrics.csv", "comparisons.csv", "publish")


def _ubpe(tmp_path, *args, kill_at=None):
    """``ubpe`` in a subprocess (killed at ``kill_at``, `ubpe.lab.outputs.kill_point`)."""
    env = {k: v for k, v in os.environ.items() if k != KILL_AT_ENV}
    if kill_at:
        env[KILL_AT_ENV] = kill_at
    return subprocess.run([sys.executable, "-m", "ubpe", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)


def _main(capsys, *args):
    """``ubpe`` in this process: (exit status, stderr)."""
    from ubpe.cli import main

    capsys.readouterr()
    status = main(list(args))
    return status, capsys.readouterr().err


def _tables(folder):
    return {name: numbers_only(pd.read_csv(folder / f"{name}.csv")) for name in TABLES}


def _same_tables(folder, expected):
    found = _tables(folder)
    for name in TABLES:
        pd.testing.assert_frame_equal(found[name], expected[name])


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A project folder after one whole run (its results and cache), to copy."""
    from ubpe.cli import main

    root = tmp_path_factory.mktemp("finished")
    (root / "notes.txt").write_text("\n".join(" ".join(WORDS[i:] + WORDS[:i]) for i in range(len(WORDS))) * 3)
    (root / "my.toml").write_text('[grid]\nvocab_sizes = ["+8"]\n[datasets.notes]\npath = "notes.txt"\n'
                                  'format = "text"\n')
    cwd = os.getcwd()
    try:
        os.chdir(root)
        assert main(RUN) == 0
    finally:
        os.chdir(cwd)
    return root, _tables(root / "out" / "my")


@pytest.fixture
def project(finished, tmp_path):
    """A copy of the finished project, and its tables."""
    root, expected = finished
    shutil.copytree(root, tmp_path / "p")
    return tmp_path / "p", expected


def test_a_first_run_killed_leaves_no_results_folder(project, capsys, monkeypatch):
    root, expected = project
    shutil.rmtree(root / "out")
    done = _ubpe(root, *RUN, kill_at="documents.csv")
    assert done.returncode == -signal.SIGKILL
    left = [p.name for p in (root / "out").iterdir()]
    assert len(left) == 1 and left[0].startswith(".my.partial-")  # only the hidden stage folder
    monkeypatch.chdir(root)
    assert _main(capsys, "experiment", "report", "out/my") == (
        2, "ubpe: error: no results in out/my (metrics.csv, run.json)\n")
    assert _main(capsys, *RUN)[0] == 0
    assert [p.name for p in (root / "out").iterdir()] == ["my"]  # the killed run's stage is removed
    _same_tables(root / "out" / "my", expected)


def test_a_rerun_killed_at_any_point_leaves_the_previous_results(project, capsys, monkeypatch):
    """SIGKILL at each point of writing the folder: before the renames the previous results are
    whole (and read as such), between them there is no folder; never a mix."""
    from ubpe.lab import load_results

    root, expected = project
    out = root / "out" / "my"
    for point in KILL_POINTS:
        done = _ubpe(root, *RUN, "--force", kill_at=point)
        assert done.returncode == -signal.SIGKILL, (point, done.stderr)
        if point == "publish":  # between the two renames: no folder, never half of one
            assert not out.exists()
        else:
            _same_tables(out, expected)
            assert load_results(out)["run"]["outputs"]
    report = _ubpe(root, "experiment", "report", "out/my")
    assert report.returncode == 2 and report.stderr == "ubpe: error: no results in out/my (metrics.csv, run.json)\n"
    monkeypatch.chdir(root)
    assert _main(capsys, *RUN)[0] == 0
    _same_tables(out, expected)
    assert sorted(p.name for p in (root / "out").iterdir()) == ["my"]  # the killed runs' folders are gone


@pytest.mark.parametrize("damage, message", [
    ("empty documents", "documents.csv is empty (a run was interrupted while writing it)"),
    ("cut metrics", "metrics.csv is not the table run.json records"),
    ("no comparisons", "no comparisons.csv"),
    ("cut run.json", "run.json cannot be read"),
    ("empty documents, no record", "documents.csv is empty"),
])
def test_an_incomplete_folder_is_refused_in_one_line(project, capsys, monkeypatch, damage, message):
    from ubpe.lab import load_results
    from ubpe.lab.outputs import IncompleteResultsError

    root, expected = project
    out = root / "out" / "my"
    if damage.startswith("empty documents"):  # what a killed run of an older ubpe left
        (out / "documents.csv").write_bytes(b"")
    if damage.endswith("no record"):  # as an older version of ubpe wrote it: no "outputs"
        run = json.loads((out / "run.json").read_text())
        del run["outputs"]
        (out / "run.json").write_text(json.dumps(run))
    if damage.startswith("cut "):
        name = {"cut metrics": "metrics.csv", "cut run.json": "run.json"}[damage]
        data = (out / name).read_bytes()
        (out / name).write_bytes(data[: len(data) // 2])
    if damage == "no comparisons":
        (out / "comparisons.csv").unlink()
    monkeypatch.chdir(root)
    status, err = _main(capsys, "experiment", "report", "out/my")
    assert status == 2 and err.startswith("ubpe: error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1 and "run the experiment again" in err
    with pytest.raises(IncompleteResultsError, match=message.split(" (")[0]):
        load_results(out)
    assert _main(capsys, *RUN)[0] == 0  # a rerun mends it
    assert _main(capsys, "experiment", "report", "out/my", "-q")[0] == 0
    _same_tables(out, expected)


def test_a_killed_report_rerenders(project, capsys, monkeypatch):
    """The report is drawn after the folder is in place: a run killed while drawing it leaves
    whole tables, and ``report`` draws it again."""
    root, _ = project
    out = root / "out" / "my"
    before = (out / "README.md").read_text()
    (out / "README.md").write_text(before[:100])
    for png in out.glob("*.png"):
        png.write_bytes(b"")
    monkeypatch.chdir(root)
    assert _main(capsys, "experiment", "report", "out/my", "-q")[0] == 0
    assert (out / "README.md").read_text() == before


def test_an_unreadable_cache_entry_is_computed_again(project, capsys, monkeypatch):
    root, expected = project
    out = root / "out" / "my"
    cells = sorted((root / "cache" / "cells").glob("*.npz"))
    models = sorted(m for m in (root / "cache" / "models").glob("*.json") if not m.name.endswith(".meta.json"))
    assert len(cells) == 2 and len(models) == 2
    data = cells[0].read_bytes()
    cells[0].write_bytes(data[: len(data) // 2])  # a cut cell
    cells[1].write_bytes(b"")  # an empty one
    for model in models:  # cut models: computing the cells again reads them, and refits
        model.write_text(model.read_text()[:50])
    monkeypatch.chdir(root)
    status, err = _main(capsys, *RUN)
    assert status == 0, err
    assert err.count("cannot be read") == 4 and err.count("computing it again") == 4, err
    _same_tables(out, expected)
    assert all(cell.is_file() for cell in cells)
    status, err = _main(capsys, *RUN)  # mended: nothing to warn about
    assert status == 0 and "cannot be read" not in err
    _same_tables(out, expected)
    # a cut model's metadata alone, its cells cached: the model is fitted again (its size and
    # fit time are in that entry), the cells are read from the cache
    for meta in (root / "cache" / "models").glob("*.meta.json"):
        meta.write_text("{")
    status, err = _main(capsys, *RUN)
    assert status == 0 and err.count("cannot be read") == 2, err
    assert json.loads((out / "run.json").read_text())["run"]["cells_cached"] == 2
    assert all(json.loads(m.read_text())["fit_seconds"] >= 0 for m in (root / "cache" / "models").glob("*.meta.json"))
    _same_tables(out, expected)
