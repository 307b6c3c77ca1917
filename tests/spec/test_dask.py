"""Fit and encode on a two-process Dask cluster: the same vocabularies and encodings, bit for
bit, as in memory; the same errors for bad input; a worker killed mid-fit changes nothing."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

distributed = pytest.importorskip("distributed")
import dask.bag as db  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from scale_cases import CASES, corpus  # noqa: E402
from ubpe import UBPE, ByteLevelBPE, UBPEClassic  # noqa: E402
from ubpe.distributed.dask import encode, encode_to_parquet  # noqa: E402
from ubpe.errors import EmptyCorpusError, SymbolTypeError, UBPEError, UnknownSymbolError  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster, distributed.Client(cluster) as client:
        yield client


def bag(docs, npartitions=4):
    return db.from_sequence(docs, npartitions=min(npartitions, len(docs)) or 1)


@pytest.mark.parametrize("case", sorted(CASES))
def test_cluster_fit_equals_in_memory_fit(client, case):
    name, size, fit = CASES[case]
    alphabet, docs = corpus(name, size)
    assert fit(alphabet, bag(docs, 5)) == fit(alphabet, docs)


@pytest.mark.long  # 15 clusters' fits (~4 s); the fixed cases above run every time
@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.text("abc .", max_size=25), min_size=1, max_size=10),
    st.integers(1, 4),
    st.sampled_from([UBPE, UBPEClassic]),
)
def test_cluster_fit_on_random_corpora(client, docs, npartitions, cls):
    def fit(corpus):
        tok = cls(alphabet="abc .", n_tokens=12, break_tokens=" ")
        tok.fit(corpus, n_candidates=2, quiet=True)
        return tok.to_json()

    assert fit(bag(docs, npartitions)) == fit(docs)


def test_cluster_fit_on_a_series(client):
    import dask.dataframe as dd
    import pandas as pd

    alphabet, docs = corpus("kjv", 30_000)
    series = dd.from_pandas(pd.DataFrame({"text": docs}), npartitions=3)["text"]
    fit = CASES["text-universal"][2]
    assert fit(alphabet, series) == fit(alphabet, docs)


def fitted_tokenizers():
    alphabet, docs = corpus("kjv", 30_000)
    universal = UBPE(alphabet=alphabet, n_tokens=200, regex_str=r" ?\w+| ?[^\w\s]+|\s+")
    universal.fit(docs, quiet=True)
    classic = UBPEClassic(alphabet=alphabet, n_tokens=200)
    classic.fit(docs, quiet=True)
    return docs[:6] + ["", "Amen."], [
        (universal, {"top_n": 2}),
        (classic, {}),
        (ByteLevelBPE().fit(docs, n_tokens=300, quiet=True), {}),
    ]


def test_cluster_encode_equals_encode(client):
    docs, tokenizers = fitted_tokenizers()
    for tok, options in tokenizers:
        expected = [tok.encode(doc, **options) for doc in docs]
        assert encode(tok, bag(docs, 3), **options).compute() == expected


def test_cluster_encode_a_series(client):
    import dask.dataframe as dd
    import pandas as pd

    docs, tokenizers = fitted_tokenizers()
    series = dd.from_pandas(pd.DataFrame({"text": docs}), npartitions=2)["text"]
    for tok, options in tokenizers:
        assert encode(tok, series, **options).compute().tolist() == [tok.encode(d, **options) for d in docs]


def test_encode_to_parquet(client, tmp_path):
    docs, tokenizers = fitted_tokenizers()
    for k, (tok, options) in enumerate(tokenizers):
        files = encode_to_parquet(tok, bag(docs, 3), tmp_path / str(k), **options)
        assert [os.path.basename(f) for f in files] == [f"part.{i:05d}.parquet" for i in range(3)]
        column = pq.read_table(files).column("ids")
        assert column.type == pa.list_(pa.int32()) or column.type.value_type == pa.int32()
        best = [tok.encode(d, **options) for d in docs]
        if isinstance(tok, (UBPE, UBPEClassic)):
            best = [encodings[0][0] for encodings in best]
        assert column.to_pylist() == best


def error_of(fit, corpus):
    with pytest.raises(UBPEError) as caught:
        fit(corpus)
    return type(caught.value), str(caught.value)


@pytest.mark.parametrize(
    "docs",
    [
        ["ab", "ba", "ab", "bb", 5, "ab"],  # a number among texts, in the third partition
        ["ab", "ba", "ab", "bb", "abc", "ab"],  # a symbol outside the alphabet
        ["ab", "ba", "ab", "bb", [0, 1], "ab"],  # a list of ints among texts
    ],
)
def test_cluster_errors_equal_in_memory_errors(client, docs):
    def fit(corpus):
        UBPE(alphabet="ab", n_tokens=5).fit(corpus, quiet=True)

    expected = error_of(fit, docs)
    assert expected[0] in (SymbolTypeError, UnknownSymbolError)
    assert error_of(fit, bag(docs, 3)) == expected


def test_cluster_empty_and_mistyped_corpora(client):
    empty = db.from_sequence([], npartitions=1)
    for fit in (
        lambda corpus: UBPE(alphabet="ab", n_tokens=5).fit(corpus, quiet=True),
        lambda corpus: ByteLevelBPE().fit(corpus, n_tokens=300, quiet=True),
    ):
        assert error_of(fit, empty) == error_of(fit, [])
        assert error_of(fit, empty)[0] is EmptyCorpusError
    bytelevel = lambda corpus: ByteLevelBPE().fit(corpus, n_tokens=300, quiet=True)  # noqa: E731
    mixed = ["ab", "cd", "ef", b"gh"]
    assert error_of(bytelevel, bag(mixed, 2)) == error_of(bytelevel, mixed)
    with pytest.raises(SymbolTypeError, match="dask.bag.Bag or a Dask series"):
        encode(UBPE(alphabet="ab", n_tokens=5), ["ab"])


def _die_once(partition, marker):
    """Kill the worker process the first time any partition gets here."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return partition
    os._exit(1)


def test_killed_worker_gives_the_same_vocabulary(client, tmp_path):
    name, size, fit = CASES["text-universal"]
    alphabet, docs = corpus(name, size)
    dying = bag(docs, 4).map_partitions(_die_once, str(tmp_path / "died"))
    assert fit(alphabet, dying) == fit(alphabet, docs)
    assert (tmp_path / "died").exists()
    client.wait_for_workers(2)


def test_part_counts_travel_as_numpy(client):
    """The reduction's results are plain arrays (cheap to move between workers)."""
    from ubpe.distributed.dask import count_parts

    alphabet, docs = corpus("kjv", 20_000)
    tok = UBPE(alphabet=alphabet, n_tokens=100, regex_str=r"\w+")
    counts = count_parts(bag(docs, 3), tok.split_pipeline.split_batch)
    assert counts.n_docs == len(docs)
    assert all(isinstance(a, np.ndarray) for a in (counts.tokens, counts.weights, counts.docs))


def test_encode_errors_name_the_partition(client, tmp_path):
    """Issue 28, point 8: an error of a partition's encoding says which partition (its document
    numbers count from the partition's start, which is all a task knows)."""
    tok = UBPE(alphabet="ab", n_tokens=5)
    tok.fit(["abab", "abba", "baab"], quiet=True)
    docs = ["ab", "ba", "ab", "bb", "abc", "ab"]  # 'c' is in the third partition of three
    for compute in (lambda: encode(tok, bag(docs, 3)).compute(),
                    lambda: encode_to_parquet(tok, bag(docs, 3), tmp_path)):
        with pytest.raises(UnknownSymbolError, match=r"^partition 2 \(documents numbered from its start\): .*'c'"):
            compute()
    import dask.dataframe as dd
    import pandas as pd

    series = dd.from_pandas(pd.DataFrame({"text": docs}), npartitions=3)["text"]
    with pytest.raises(UnknownSymbolError, match=r"^partition 2 "):
        encode(tok, series).compute()
