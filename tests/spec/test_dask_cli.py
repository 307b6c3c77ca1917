"""``ubpe fit --scheduler ADDRESS`` / ``--workers N`` and ``python -m experiments --scheduler``:
the same models and results as the local runs; bad addresses and counts give clear errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

import ubpe.distributed.dask  # noqa: E402
from ubpe.lab import runner  # noqa: E402
from test_dask import client  # noqa: E402, F401 - the two-process LocalCluster fixture
from ubpe.cli import main  # noqa: E402

TEXT = [
    "the cat sat on the mat",
    "the dog sat on the log",
    "a cat and a dog met on the mat",
    "the cat saw the dog and the dog saw the cat",
] * 7


def _fit(tmp_path, name, *args):
    out = tmp_path / name
    assert main(["fit", *args, "-o", str(out), "-q"]) == 0
    return json.loads(out.read_text())["body"]


@pytest.mark.parametrize("options", [
    ["--regex", r" ?\w+"],
    ["--variant", "classic", "--regex", r" ?\w+", "--n-tokens", "40"],
    ["--variant", "bytelevel", "--n-tokens", "270"],
    ["--ints", "--n-tokens", "30"],
], ids=["universal", "classic", "bytelevel", "ints"])
def test_fit_on_a_scheduler_equals_the_local_fit(client, tmp_path, options):
    if "--ints" in options:
        rows = np.random.default_rng(0).integers(0, 8, size=(40, 25))
        (tmp_path / "docs.txt").write_text("\n".join(" ".join(map(str, r)) for r in rows) + "\n")
    else:
        (tmp_path / "docs.txt").write_text("\n".join(TEXT) + "\n")
    docs = str(tmp_path / "docs.txt")
    local = _fit(tmp_path, "local.json", docs, *options)
    on_dask = _fit(tmp_path, "dask.json", docs, *options, "--scheduler", client.scheduler.address)
    assert on_dask == local
    assert distributed.default_client() is client  # the command's client closed, ours is back


def test_fit_on_local_workers_equals_the_local_fit(tmp_path):
    (tmp_path / "docs.txt").write_text("\n".join(TEXT) + "\n")
    docs = str(tmp_path / "docs.txt")
    assert _fit(tmp_path, "a.json", docs, "--workers", "1") == _fit(tmp_path, "b.json", docs)


def test_bad_scheduler_and_worker_counts(tmp_path, monkeypatch, capsys):
    (tmp_path / "docs.txt").write_text("\n".join(TEXT) + "\n")
    docs, out = str(tmp_path / "docs.txt"), str(tmp_path / "m.json")
    monkeypatch.setattr(ubpe.distributed.dask, "CONNECT_TIMEOUT", 1)
    assert main(["fit", docs, "-o", out, "--scheduler", "tcp://127.0.0.1:9"]) == 1
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err
    assert main(["fit", docs, "-o", out, "--workers", "0"]) == 1
    assert "--workers must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # one or the other
        main(["fit", docs, "-o", out, "--workers", "1", "--scheduler", "tcp://127.0.0.1:9"])
    assert not (tmp_path / "m.json").exists()


def test_cluster_needs_one_of_address_and_workers():
    from ubpe.errors import InvalidParameterError

    for kwargs in ({}, {"scheduler": "tcp://127.0.0.1:9", "workers": 1}, {"workers": 0}, {"workers": True}):
        with pytest.raises(InvalidParameterError):
            with ubpe.distributed.dask.cluster(**kwargs):
                pass


def test_runner_on_a_scheduler_gives_the_local_numbers(client, monkeypatch, tmp_path):
    from test_runner import TINY, fake_load

    from ubpe.lab.config import parse_config

    monkeypatch.setattr(runner, "load_split", fake_load)
    monkeypatch.setattr(runner, "RESULTS_DIR", tmp_path / "results")
    config = parse_config(TINY)
    local = runner.run_experiment(config, jobs=1, progress=False, render=False,
                                  cache_dir=tmp_path / "local")
    first = {n: pd.read_csv(local / f"{n}.csv") for n in ("documents", "metrics", "comparisons")}
    out = runner.run_experiment(config, scheduler=client.scheduler.address, progress=False,
                                render=False, cache_dir=tmp_path / "dask")
    info = json.loads((out / "run.json").read_text())
    assert info["run"]["dask"] and info["run"]["cells_computed"] == 12
    for name, table in first.items():
        pd.testing.assert_frame_equal(runner.numbers_only(table),
                                      runner.numbers_only(pd.read_csv(out / f"{name}.csv")))
