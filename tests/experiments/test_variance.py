"""The variance study's pieces (experiments.variance) on tiny inputs."""

from __future__ import annotations

import pandas as pd
import pytest

from experiments.datasets import Dataset, content_checksum
from experiments.variance import _subsample, spread


def _train():
    docs = [f"doc{i}" for i in range(20)]
    return Dataset(name="t", kind="prose", split="train", docs=docs, doc_ids=docs, source="tests",
                   source_version="0", licence="CC0", description="tiny", symbol_type="char",
                   settings={}, checksum=content_checksum(docs), unit="book",
                   doc_units=[f"u{i // 2}" for i in range(20)])


def test_subsample_keeps_whole_units():
    train = _train()
    kept = _subsample(train, 0.6, seed=3)
    units = {f"u{int(d[3:]) // 2}" for d in kept}
    assert len(units) == 6 and len(kept) == 12  # 6 of 10 units, both documents of each
    assert _subsample(train, 0.6, seed=3) == kept
    assert _subsample(train, 1.0, seed=0) == train.docs


def test_subsample_takes_documents_when_units_are_few():
    train = _train()
    train.doc_units[:] = ["r0"] * 10 + ["r1"] * 10  # two recordings
    kept = _subsample(train, 0.6, seed=1)
    assert len(kept) == 12 and len(set(kept)) == 12
    assert {d[3:] for d in kept} & {str(i) for i in range(10)}  # from both recordings
    assert {d[3:] for d in kept} & {str(i) for i in range(10, 20)}


def test_spread_and_order_stability():
    rows = pd.DataFrame({
        "study": "replicate", "dataset": "d", "seed": [0, 0, 1, 1, 2, 2],
        "encoder": ["a", "b"] * 3,
        "tokens_per_symbol": [0.5, 0.6, 0.52, 0.58, 0.61, 0.55],
        "bits_per_symbol": [2.0, 2.1, 2.0, 2.2, 1.9, 2.3],
        "symbol_bits_per_symbol": 2.15, "uniform_bits_per_symbol": 3.0})
    s = spread(rows).set_index("encoder")
    assert s.loc["a", "replicates"] == 3
    assert s.loc["a", "tps_mean"] == pytest.approx((0.5 + 0.52 + 0.61) / 3)
    assert s.loc["b", "bits_max"] == pytest.approx(2.3)
    assert s.loc["a", "order_stable_tokens_per_symbol"] == pytest.approx(2 / 3)
    assert s.loc["a", "order_stable_bits_per_symbol"] == pytest.approx(1.0)
    assert s.loc["a", "above_baseline"] == 0 and s.loc["b", "above_baseline"] == 2  # 2.2 and 2.3
