"""Committed results against today's data (issue 27, point 1): every ``results/*/run.json``
records the checksums of the splits it was computed on; today's loaders must give the same
splits, unless the folder is listed as known-stale in ``results/STALE.toml`` (with a reason),
in which case the test reports it (xfail) - and fails if the listed folder is fresh after all,
so the list cannot outlive the staleness.
"""

import dataclasses
import json
import os
from pathlib import Path

import pytest

from experiments import freshness
from experiments.datasets import DataNotInstalledError, clear_cache, load
from ubpe.lab.datasets import Dataset, content_checksum

RESULTS = Path(__file__).resolve().parents[2] / "results"
RUN_FOLDERS = sorted(p.parent.name for p in RESULTS.glob("*/run.json"))


def _installed(function, *args, **kwargs):
    """Call a loader (or the check, which loads); a missing source fails the test, or skips it
    with UBPE_ALLOW_MISSING_DATA=1 (as in test_datasets)."""
    try:
        return function(*args, **kwargs)
    except DataNotInstalledError as error:
        if os.environ.get("UBPE_ALLOW_MISSING_DATA") == "1":
            pytest.skip(str(error))
        pytest.fail(f"{error} (or set UBPE_ALLOW_MISSING_DATA=1 to skip)")


def _midi_loader(*args, **kwargs):
    from experiments import midi

    return midi.load(*args, **kwargs)


#: results computed on file datasets rather than the built-in loaders: how to load them again
LOADERS = {"midi": _midi_loader}


@pytest.mark.parametrize("folder", RUN_FOLDERS)
def test_committed_result_matches_todays_data(folder):
    run = json.loads((RESULTS / folder / "run.json").read_text())
    stale = _installed(freshness.check, run, LOADERS.get(folder))
    known = freshness.known_stale()
    if folder in known:  # (stale by its data, or by its code: the test below)
        stale = stale or freshness.check_provenance(run)
        assert stale, f"results/{folder} is fresh: remove it from results/STALE.toml"
        pytest.xfail(f"known stale ({known[folder]}): " + "; ".join(map(str, stale)))
    assert not stale, f"results/{folder} is stale - regenerate it: " + "; ".join(map(str, stale))
    assert run["git"]["commit"], f"results/{folder}/run.json names no commit"


def test_the_stale_list_names_existing_results_with_reasons():
    for name, reason in freshness.known_stale().items():
        assert name in RUN_FOLDERS, f"results/STALE.toml lists {name}, which has no run.json"
        assert reason.strip()


# -- the check itself, on a tiny loader -------------------------------------------------------


def _tiny(name, split, max_symbols=None, **options):
    docs = ["abc", "abd"] if split == "train" else ["abe"]
    return Dataset(name=name, kind="prose", split=split, docs=docs, doc_ids=[f"d{i}" for i in range(len(docs))],
                   source="test", source_version="0", licence="none", description="tiny",
                   symbol_type="char", checksum=content_checksum(docs), unit="document",
                   doc_units=[f"d{i}" for i in range(len(docs))])


def _run_on(loader, **options):
    records = [freshness.data_record(loader("tiny", split), registry_name="tiny", max_symbols=None,
                                     options=options) for split in ("train", "heldout")]
    return {"data": records, "git": {"commit": "x", "dirty": False}}


def test_a_run_on_todays_data_is_fresh():
    assert freshness.check(_run_on(_tiny), loader=_tiny) == []


def test_a_changed_loader_makes_the_result_stale():
    run = _run_on(_tiny)

    def changed(name, split, **kwargs):  # one more held-out document
        ds = _tiny(name, split, **kwargs)
        if split == "train":
            return ds
        docs = [*ds.docs, "xyz"]
        return Dataset(**{**ds.__dict__, "docs": docs, "doc_ids": ["d0", "d1"], "doc_units": ["d0", "d1"],
                          "checksum": content_checksum(docs)})

    stale = freshness.check(run, loader=changed)
    assert [(f.dataset, f.split) for f in stale] == [("tiny", "heldout")]
    assert "1 -> 2 docs" in stale[0].what


def test_a_changed_unit_makes_the_result_stale():
    run = _run_on(_tiny)

    def regrouped(name, split, **kwargs):  # same documents, one unit for all
        ds = _tiny(name, split, **kwargs)
        return Dataset(**{**ds.__dict__, "doc_units": ["all"] * ds.n_docs})

    assert [f.what for f in freshness.check(run, loader=regrouped)] == [
        "same documents, other ids or units"] * 2


def test_a_run_without_records_is_stale():
    assert freshness.check({"git": {"commit": "x"}}, loader=_tiny)[0].dataset == "*"


def test_a_real_loader_change_is_caught(monkeypatch):
    """Records of today's DNA and KJV splits, checked after monkeypatching the real DNA loader
    so it reads one piece backwards: the check names DNA and nothing else."""
    from experiments.datasets import bio, registry

    clear_cache()
    splits = [(name, split) for name in ("dna", "kjv") for split in ("train", "heldout")]
    run = {"data": [freshness.data_record(_installed(load, name, split, max_symbols=20_000),
                                          registry_name=name, max_symbols=20_000) for name, split in splits]}
    assert freshness.check(run) == []

    def changed(*args, **kwargs):
        corpus = bio.dna(*args, **kwargs)
        corpus.docs[:] = [doc[::-1] for doc in corpus.docs]  # every piece read backwards
        return corpus

    clear_cache()
    monkeypatch.setitem(registry.REGISTRY, "dna", dataclasses.replace(registry.REGISTRY["dna"], build=changed))
    try:
        stale = freshness.check(run)
    finally:
        clear_cache()
    assert sorted((f.dataset, f.split) for f in stale) == [("dna", "heldout"), ("dna", "train")]
    assert all("content checksum" in f.what for f in stale)


# -- config and code (issue 34, point 7) -------------------------------------------------------


def _regenerate(folder: str, run: dict) -> str:
    """The command that regenerates a published result (what its run.json says, else the
    experiments entry point)."""
    command = (run.get("commands") or {}).get("run") or run.get("command")
    return command or f"python -m experiments {folder} --results results"


@pytest.mark.parametrize("folder", RUN_FOLDERS)
def test_committed_result_matches_todays_config_and_code(folder):
    """A published result's config and code hashes against today's. Results written before
    the hashes existed are reported (xfail) with the command that regenerates them, until they
    are regenerated; after that any change fails."""
    run = json.loads((RESULTS / folder / "run.json").read_text())
    stale = freshness.check_provenance(run)
    if stale and stale[0].what == freshness.NO_HASHES:
        pytest.xfail(f"stale: regenerate with `{_regenerate(folder, run)}` (from a clean tree): {stale[0].what}")
    known = freshness.known_stale()
    if stale and folder in known:  # listed, with the reason and the command (results/STALE.toml)
        pytest.xfail(f"known stale ({known[folder]}): " + "; ".join(map(str, stale[:3])))
    assert not stale, (f"results/{folder} is stale: regenerate with `{_regenerate(folder, run)}`: "
                       + "; ".join(map(str, stale)))


def _recorded(tmp_path, config_text: str):
    """A run.json as the runner writes it for a config in a copy of the repository (tmp_path):
    the config resolved and hashed, the code of this process's computing modules hashed, and
    those source files copied under tmp_path so they can be changed there."""
    import shutil

    from ubpe.lab import ngram  # noqa: F401  (a metric's module: loaded, so it is in the record)
    from ubpe.lab.config import load_config
    from ubpe.lab.provenance import REPO_ROOT, code_record, config_sha256

    config_file = tmp_path / "experiments" / "configs" / "tiny.toml"
    config_file.parent.mkdir(parents=True)
    config_file.write_text(config_text)
    config = json.loads(json.dumps(load_config(config_file).as_dict(), default=str))
    # what a run computes with, loaded here or not: a metric's modules, and a kernel
    code = code_record(["ubpe.lab.ngram", "ubpe.lab.metrics", "ubpe_native._regex"])
    for relative in code["files"]:
        source = REPO_ROOT / relative
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, tmp_path / relative)
    return {"config_file": "experiments/configs/tiny.toml", "config": config,
            "config_sha256": config_sha256(config), "code": code, "git": {"commit": "x", "dirty": False}}


TINY = '[grid]\nvocab_sizes = ["+8"]\nn_candidates = [50]\n[datasets.notes]\npath = "n.txt"\nformat = "text"\n'


@pytest.mark.skipif(freshness.REPO_ROOT is None, reason="needs ubpe's sources (a checkout)")
def test_a_changed_config_value_or_metric_code_makes_a_result_stale(tmp_path):
    run = _recorded(tmp_path, TINY)
    assert freshness.check_provenance(run, root=tmp_path) == []
    assert "ubpe/lab/ngram.py" in run["code"]["files"] and "ubpe/lab/metrics.py" in run["code"]["files"]
    # a config value
    config = tmp_path / run["config_file"]
    config.write_text(TINY.replace("n_candidates = [50]", "n_candidates = [1]"))
    stale = freshness.check_provenance(run, root=tmp_path)
    assert [(f.dataset, f.what) for f in stale] == [("config", "changed: n_candidates = [50] -> [1]")]
    config.write_text(TINY)
    # a metric's code: the Kneser-Ney discount's module
    ngram = tmp_path / "ubpe" / "lab" / "ngram.py"
    ngram.write_text(ngram.read_text() + "\n# changed\n")
    stale = freshness.check_provenance(run, root=tmp_path)
    assert [(f.dataset, f.split, f.what) for f in stale] == [("code", "ubpe/lab/ngram.py", "source changed")]


@pytest.mark.skipif(freshness.REPO_ROOT is None, reason="needs ubpe's sources (a checkout)")
def test_a_kernels_code_is_its_pyx_and_what_it_compiles_in(tmp_path):
    run = _recorded(tmp_path, TINY)
    files = run["code"]["files"]
    # the kernel's own source, the declarations it cimports (with their inline code) and the
    # C++ headers they name, found in the checkout although an editable install runs a build folder
    assert {"ubpe_native/_regex.pyx", "ubpe_native/_regex.pxd", "ubpe_native/regex_vm.h"} <= set(files)
    header = tmp_path / "ubpe_native" / "regex_vm.h"
    header.write_text(header.read_text() + "\n// changed\n")
    stale = freshness.check_provenance(run, root=tmp_path)
    assert [(f.dataset, f.split, f.what) for f in stale] == [("code", "ubpe_native/regex_vm.h", "source changed")]


def test_a_run_without_hashes_or_from_a_dirty_tree_is_stale(tmp_path):
    assert freshness.check_provenance({"git": {"commit": "x"}})[0].what == freshness.NO_HASHES
    run = {"config_sha256": "0", "config_file": "", "code": {"files": {}}, "git": {"commit": "abc", "dirty": True}}
    assert [f.what for f in freshness.check_provenance(run, root=tmp_path)] == [
        "computed from a tree with uncommitted changes"]


def test_publishing_refuses_a_dirty_tree(monkeypatch, capsys):
    import experiments.__main__ as entry
    from ubpe.lab import runner

    if freshness.REPO_ROOT is None:
        pytest.skip("needs ubpe's checkout")

    def must_not_run(*args, **kwargs):
        raise AssertionError("a dirty tree was published")

    monkeypatch.setattr(entry, "_dirty_files", lambda: ["ubpe/lab/ngram.py"])
    monkeypatch.setattr(runner, "run_experiment", must_not_run)
    with pytest.raises(SystemExit) as exit_:
        entry._run(["default", "--results", str(freshness.REPO_ROOT / "results"), "--no-progress"])
    assert exit_.value.code == 2
    assert "uncommitted changes (ubpe/lab/ngram.py)" in capsys.readouterr().err
    assert entry.publishes(freshness.REPO_ROOT / "results") and not entry.publishes(freshness.REPO_ROOT / "runs")
