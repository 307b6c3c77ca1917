"""What the reports may pool and conclude (issue 27): the units policy, saturated sizes and
duplicated vocabularies shown once, and the findings' classification - on hand-made tables,
plus the worked examples of the new modules' docstrings."""

import doctest
import importlib
import json

import pandas as pd
import pytest

from experiments import findings
from ubpe.lab import validity
from experiments.llm_report import duplicate_vocabularies


@pytest.mark.parametrize("name", ["experiments.freshness", "ubpe.lab.baselines", "ubpe.lab.validity",
                                  "experiments.findings", "experiments.llm_report"])
def test_docstring_examples(name):
    failures, _ = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert failures == 0


def _metrics(rows):
    return pd.DataFrame(rows, columns=["dataset", "n_candidates", "size", "encoder", "vocab_size",
                                       "tokens_per_symbol"])


def test_a_size_that_repeats_a_smaller_one_is_a_copy():
    metrics = _metrics([("ts", 1, "+4096", "a", 4034, 0.2), ("ts", 1, "+4096", "b", 4034, 0.3),
                        ("ts", 1, "+16384", "a", 4034, 0.2), ("ts", 1, "+16384", "b", 4034, 0.3),
                        ("ts", 1, "+256", "a", 315, 0.5), ("ts", 1, "+256", "b", 315, 0.6),
                        ("kjv", 1, "+4096", "a", 4000, 0.2), ("kjv", 1, "+16384", "a", 4000, 0.19)])
    assert validity.saturated_sizes(metrics) == {("ts", 1, "+16384"): "+4096"}


def test_a_vocabulary_that_segments_like_another_is_shown_once():
    rows = pd.DataFrame({"vocab": ["SPM"] * 2 + ["Phi"] * 2 + ["GPT"] * 2, "dataset": "d", "encoder": "e",
                         "doc_id": [0, 1] * 3, "n_tokens": [5, 6, 5, 6, 5, 7]})
    assert duplicate_vocabularies(rows) == {"Phi": "SPM"}


def _comparisons(verdicts_by_dataset, units=20):
    rows = []
    for dataset, (kind, verdicts) in verdicts_by_dataset.items():
        for n_cand, verdict in zip((1, 50), verdicts):
            rows.append({"question": 0, "dataset": dataset, "kind": kind, "size": "+1024",
                         "n_candidates": n_cand, "n_units": units if dataset != "ecg" else 2,
                         "verdict": verdict})
    return pd.DataFrame(rows)


def test_findings_split_text_from_non_text_and_count_datasets_once():
    questions = [{"a": "x", "b": "y"}]
    across = _comparisons({"kjv": ("prose", ["a shorter"] * 2), "dna": ("dna", ["a shorter"] * 2),
                           "ecg": ("signal", ["a longer"] * 2)})  # ecg: too few units, not counted
    assert findings.length_findings(across, questions, {})["across kinds"]
    text_only = _comparisons({"kjv": ("prose", ["a shorter"] * 2), "dna": ("dna", ["a shorter", "a longer"])})
    found = findings.length_findings(text_only, questions, {})
    assert found["only for text"] and "non-text: mixed 1/1" in found["only for text"][0]
    undecided = _comparisons({"kjv": ("prose", ["a shorter"] * 2), "stdlib": ("code", ["a longer"] * 2)})
    assert findings.length_findings(undecided, questions, {})["undecided"]


def test_bits_findings_never_rank_above_a_baseline():
    summary = pd.DataFrame({"dataset": ["dna"] * 2 + ["kjv"] * 2, "kind": ["dna"] * 2 + ["prose"] * 2,
                            "size": "+1024", "n_candidates": 1, "n_units": 20, "encoder": ["a", "b"] * 2,
                            "bits_per_symbol": [2.1, 2.2, 1.9, 2.0], "tokens_per_symbol": [0.3, 0.4, 0.3, 0.4],
                            "below_baseline": [True, True, False, False],
                            "ranked": ["proxy above a baseline"] * 2 + [""] * 2, "rank_bits": [None, None, 1, 2]})
    found = findings.bits_findings(summary, pd.DataFrame())
    assert any("non-text data best: the bits proxy cannot say" in line for line in found["undecided"])
    assert any("best mean rank by bits `a`" in line for line in found["only for text"])


def test_findings_file_cites_its_tables(tmp_path):
    questions = [{"question": "?", "a": "x", "b": "y"}]
    (tmp_path / "run.json").write_text(json.dumps({"config": {"comparisons": questions},
                                                   "git": {"commit": "0123456789ab"}}))
    _comparisons({"kjv": ("prose", ["a shorter"] * 2), "dna": ("dna", ["a shorter"] * 2)}).to_csv(
        tmp_path / "comparisons.csv", index=False)
    text = findings.findings(tmp_path)
    assert "## What holds across kinds" in text and "`results/default/comparisons.csv`, question 1" in text


def test_downstream_findings_word_correlations_as_correlations_and_sampling_by_its_interval(tmp_path):
    arms = pd.DataFrame({
        "dataset": "dna", "kind": "dna", "n_units": 20,
        "arm": ["symbols", "a", "b", "b_sampled", "b_sampled2"],
        "train_encoder": ["symbols", "a", "b", "b~", "b~"], "sampled_training": [False, False, False, True, True],
        "bits_per_symbol": [2.0, 1.8, 1.9, 1.85, 1.95], "bits_low": [1.9, 1.7, 1.8, 1.8, 1.9],
        "bits_high": [2.1, 1.9, 2.0, 1.9, 2.0], "vs_matched": [0.0, -0.2, -0.1, -0.15, 0.05],
        "vs_matched_low": [0.0, -0.3, -0.2, -0.2, 0.0], "vs_matched_high": [0.0, -0.1, -0.05, -0.1, 0.1],
        "ranked": ["baseline", "", "", "", "does not beat both symbol models"],
        "plain_arm": ["", "", "", "b", "b"], "vs_plain": [None, None, None, -0.05, 0.05],
        "vs_plain_low": [None, None, None, -0.08, -0.01], "vs_plain_high": [None, None, None, -0.02, 0.1]})
    arms.to_csv(tmp_path / "transformer.csv", index=False)
    pd.DataFrame({"kind": ["dna", "dna"], "predictor": ["length (tokens per symbol)", "n-gram bits per symbol"],
                  "n_points": 5, "n_datasets": 1, "spearman": [0.8, 0.1], "low": [0.2, -0.5], "high": [0.95, 0.6]}
                 ).to_csv(tmp_path / "transformer_correlations.csv", index=False)
    lines = findings.downstream_findings(tmp_path)
    assert any("+0.80 [+0.20, +0.95]" in line and "shorter tokenisations go with fewer bits" in line
               and "a correlation across tokenisations, not an effect of length" in line for line in lines)
    assert any("best ranked `a` 1.800" in line and "(3 of 4 token arms ranked)" in line for line in lines)
    assert any("`b_sampled` (tested with `b`) helped: -0.0500" in line for line in lines)
    assert any("`b_sampled2` (tested with `b`) made no separable difference" in line for line in lines)
    assert all(line.endswith("(`results/downstream/transformer.csv`).") for line in lines)


def test_midi_findings_give_each_comparisons_verdicts_by_merges(tmp_path):
    rows = [{"merges": m, "ubpe": "standard", "miditok": "miditok", "at": "equal merges", "pieces": 64,
             "collections": 13, "ratio": r, "95% low": r - 0.01, "95% high": r + 0.01, "verdict": v}
            for m, r, v in ((256, 0.98, "ubpe shorter"), (512, 1.0, "not separable"), (1024, 1.001, "not separable"))]
    pd.DataFrame(rows).to_csv(tmp_path / "summary.csv", index=False)
    [line] = findings.midi_findings(tmp_path)
    assert "ubpe shorter at 256 merges; not separable at 512, 1024 merges" in line
    assert "token ratio 0.980 to 1.001 (95 % intervals within [0.970, 1.011])" in line


def test_the_committed_findings_are_the_committed_results_findings():
    """results/FINDINGS.md is what `python -m experiments findings` writes from the committed
    results today: regenerated results (or a changed rule) without new findings fail here."""
    from experiments import RESULTS_DIR

    if not (RESULTS_DIR / "FINDINGS.md").is_file():
        pytest.skip("no results/ beside the experiments (a wheel's test run)")
    assert findings.findings(RESULTS_DIR / "default") == (RESULTS_DIR / "FINDINGS.md").read_text(encoding="utf-8")


def test_findings_pool_only_the_datasets_they_count():
    """The random-effects line pools the datasets with ``validity.MIN_UNITS`` units or more: a
    dataset of 7 units (enough for the lab's own ``meta.csv``) changes the report's pooling but
    not the findings', and is named as left out."""
    rows = []
    for dataset, units, ratio in (("a", 30, -0.2), ("b", 25, -0.3), ("small", 7, -0.9)):
        for encoder, log_ratio in (("x", ratio), ("ref", 0.0)):
            rows.append({"dataset": dataset, "kind": "music", "size": "+256", "n_candidates": 1,
                         "encoder": encoder, "reference": "ref", "n_units": units, "log_ratio": log_ratio,
                         "log_ratio_var": 0.001 if encoder == "x" else 0.0, "ci_low": log_ratio - 0.05,
                         "ci_high": log_ratio + 0.05, "decision": "best" if encoder == "x" else "longer than the best"})
    decisions = pd.DataFrame(rows)
    from ubpe.lab.decisions import meta_analysis

    everything, counted = meta_analysis(decisions), findings.counted_meta(decisions)
    assert set(everything["datasets"].iloc[0].split(", ")) == {"a", "b", "small"}
    assert counted["datasets"].iloc[0] == "a, b" and int(counted["k"].iloc[0]) == 2
    assert counted["estimate"].iloc[0] > everything["estimate"].iloc[0]  # without the -0.9 dataset
    line = findings.meta_findings(counted)[0]
    assert line.startswith("- music (2 datasets: a, b)") and "-22.1 %" in line
    assert findings._left_out(decisions) == "small (7 units)"
