"""The `llm` experiment's core on a tiny slice: one real vocabulary, a few held-out documents."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ubpe.lab.datasets import DataNotInstalledError
from experiments.llm import ENCODERS, NATIVE, boundaries, run, word_spans, words_differing
from experiments.llm_report import unit_stats, write_results
from tests.vocab_corpora import llama_cpp_models

DATASETS = ("kjv", "udhr")
MAX_DOCS = 4


@pytest.fixture(scope="module")
def tiny():
    llama_cpp_models()  # skips when llama.cpp's vocabularies are not installed
    try:
        return run({"GPT-2": "gpt-2"}, DATASETS, max_docs=MAX_DOCS, heldout_chars=20_000,
                   train_chars=20_000, progress=False)
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))


def test_summary_has_one_row_per_dataset_and_encoder(tiny):
    summary, per_doc, info = tiny
    frame = pd.DataFrame(summary)
    assert len(frame) == len(DATASETS) * len(ENCODERS)
    assert set(frame.encoder) == set(ENCODERS) and set(frame.dataset) == set(DATASETS)
    assert (frame.n_docs == MAX_DOCS).all()
    assert len(per_doc) == len(DATASETS) * len(ENCODERS) * MAX_DOCS
    assert ((frame.tokens_per_char > 0) & (frame.tokens_per_byte <= frame.tokens_per_char)).all()
    assert frame.renyi_efficiency.between(0, 1).all()
    assert info["vocab_sizes"] == {"GPT-2": 50257}


def test_every_encoding_is_lossless(tiny):
    summary, _, info = tiny
    assert sum(row["lossless_failures"] for row in summary) == 0
    assert sum(info["native_roundtrip_failures"].values()) == 0


def test_fewest_never_longer_and_ranked_is_native_on_gpt2(tiny):
    per_doc = pd.DataFrame(tiny[1]).set_index(["dataset", "doc_id", "encoder"]).n_tokens.unstack()
    assert (per_doc["fewest"] <= per_doc[NATIVE]).all()
    frame = pd.DataFrame(tiny[0]).set_index(["dataset", "encoder"])
    # GPT-2 has no ignore_merges: merging by rank is its own algorithm
    assert (frame.xs("ranked", level="encoder").words_differ_share == 0).all()
    assert (frame.xs(NATIVE, level="encoder").words_differ_share == 0).all()


def test_stats_label_fewest_and_report_units(tiny):
    stats = unit_stats(pd.DataFrame(tiny[1]))
    assert len(stats) == len(DATASETS) * (len(ENCODERS) - 1)
    fewest = stats[stats.encoder == "fewest"]
    assert (fewest.status == "by construction").all() and fewest.p_value.isna().all()
    assert (fewest.docs_longer == 0).all()
    assert (stats.n_units <= stats.n_docs).all()


def test_write_results(tiny, tmp_path):
    readme = write_results(tmp_path, *tiny[:2], {**tiny[2], "seconds": 1.0, "max_docs": MAX_DOCS})
    text = readme.read_text()
    assert "Lossless: 0 failures" in text and "Beside the literature" in text
    for name in ("summary.csv", "per_doc.csv", "stats.csv", "run.json",
                 "tokens_vs_native.png", "words_differ.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_words_differing_counts_boundaries_inside_and_at_word_ends():
    surface = b" the cat"
    spans = word_spans(surface)
    lengths = np.array([1, 3, 4, 2, 2, 1])  # ' ', 'the', ' cat', ' c', 'at', 't'
    whole = boundaries([0, 1, 2], lengths)          # ' ' 'the' ' cat'
    split = boundaries([0, 1, 3, 4], lengths)       # ' ' 'the' ' c' 'at'
    assert words_differing(spans, whole, whole) == 0
    assert words_differing(spans, whole, split) == 1
    # ' the' as one token against ' ' + 'the': the boundary at the word's start differs
    assert words_differing(spans, np.array([0, 4, 8]), whole) == 1
