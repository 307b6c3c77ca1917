"""Ambiguity, sampling and reranking against exhaustive enumeration of all segmentations.

The oracle lists every segmentation of a short document (one token per piece, the highest
weight standing for a shared piece, tokens never crossing parts) and computes the exact
distribution ``p(y) ∝ exp(score(y) / T)``. Counts and probabilities must match it to 1e-9;
sampling is checked with Pearson's chi-square test on fixed seeds (deterministic: a
threshold of p > 1e-4 can only fail if the sampler is wrong or the seed changes, and the same
test must reject a wrong distribution with p < 1e-12).

The sampler against sentencepiece's own subword regularization on an imported unigram model:
``tests/spec/test_sentencepiece.py``; the CLI flags ``--rerank`` and ``--ambiguity``:
``tests/spec/test_cli.py``.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare
from test_paths import document_segmentations, piece_table

from ubpe import UBPE
from ubpe.encoders import make_encoder
from ubpe.encoders.ambiguity import DocumentLattice, ambiguity, idf_scores
from ubpe.encoders.exact_tfidf import ExactTfidf, SearchLimitError, tfidf_score
from ubpe.encoders.rerank import document_frequencies, rerank
from ubpe.encoders.sample import SampleEncoder
from ubpe.errors import InvalidParameterError, UnknownTokenError
from ubpe.vocabulary import Vocabulary
from ubpe_native._radix import RadixTree
from ubpe_native._sampling import SegmentLattice

TOLERANCE = 1e-9
CHI2_ACCEPT = 1e-4
CHI2_REJECT = 1e-12
MILP_TOLERANCE = 1e-6   # HiGHS proves optimality to an absolute gap of 1e-6


# -- the oracle ---------------------------------------------------------------------------------


def oracle(vocabulary, parts, weights, temperature):
    """Every segmentation of the document with its exact probability."""
    table = piece_table(vocabulary, weights)   # the highest (weight, id) stands for a piece
    paths = [[token for token, _ in path] for path in document_segmentations([list(p) for p in parts], table)]
    scores = np.array([sum(weights[t] for t in path) / temperature for path in paths])
    probabilities = np.exp(scores - scores.max())
    probabilities /= probabilities.sum()
    return [tuple(p) for p in paths], probabilities, scores


@st.composite
def vocabulary_and_parts(draw, max_symbols, max_parts):
    """Random merges (shared pieces possible) with idf weights from random document counts,
    and a document of base ids cut into parts."""
    n_base = draw(st.integers(1, 3))
    n_merged = draw(st.integers(0, 12))
    left = [draw(st.integers(0, n_base + t - 1)) for t in range(n_merged)]
    right = [draw(st.integers(0, n_base + t - 1)) for t in range(n_merged)]
    n_docs = draw(st.integers(1, 6))
    counts = [draw(st.integers(0, n_docs)) for _ in range(n_merged)]
    vocabulary = Vocabulary.from_merges(n_base, left, right, documents=counts, n_docs=n_docs)
    symbols = draw(st.lists(st.integers(0, n_base - 1), max_size=max_symbols))
    cuts = sorted(draw(st.lists(st.integers(0, len(symbols)), max_size=max_parts - 1)))
    edges = [0, *cuts, len(symbols)]
    return vocabulary, [np.array(symbols[a:b], np.int32) for a, b in zip(edges[:-1], edges[1:])]


@st.composite
def documents(draw, max_symbols=10, max_parts=3):
    """A random vocabulary, any weights (negative ones too), a document and a temperature."""
    vocabulary, parts = draw(vocabulary_and_parts(max_symbols, max_parts))
    weights = np.array(draw(st.lists(st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0]),
                                     min_size=len(vocabulary), max_size=len(vocabulary))))
    temperature = draw(st.sampled_from([0.3, 1.0, 2.5]))
    return vocabulary, parts, weights, temperature


# -- ambiguity ------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(documents())
def test_ambiguity_matches_enumeration(case):
    vocabulary, parts, weights, temperature = case
    paths, probabilities, scores = oracle(vocabulary, parts, weights, temperature)
    lattice = DocumentLattice(vocabulary, parts, weights, temperature)
    summary = lattice.ambiguity(encoding=list(paths[-1]))
    assert summary.n_segmentations == len(paths) == len(set(paths))
    assert summary.log_n == pytest.approx(math.log(len(paths)), abs=TOLERANCE)
    assert lattice.log_n() == pytest.approx(math.log(len(paths)), abs=1e-9)
    entropy = -float(np.sum(probabilities * np.log(probabilities)))
    assert summary.entropy == pytest.approx(entropy, abs=TOLERANCE)
    log_z = scores.max() + math.log(np.exp(scores - scores.max()).sum())
    assert summary.log_partition == pytest.approx(log_z, abs=TOLERANCE)
    lengths = np.array([len(p) for p in paths])
    assert summary.expected_tokens == pytest.approx(float(probabilities @ lengths), abs=TOLERANCE)
    assert summary.best_probability == pytest.approx(probabilities.max(), abs=TOLERANCE)
    assert summary.encoding_probability == pytest.approx(probabilities[-1], abs=TOLERANCE)
    for path, probability in zip(paths, probabilities):
        assert lattice.probability(list(path)) == pytest.approx(probability, abs=TOLERANCE)
    for k in (1, 2, 5):
        assert lattice.top_mass(k) == pytest.approx(np.sort(probabilities)[::-1][:k].sum(), abs=TOLERANCE)


def test_counts_beyond_64_bits_are_exact():
    # a single symbol and the piece [0 0]: a run of n symbols has Fibonacci(n + 1) segmentations
    vocabulary = Vocabulary.from_merges(1, [0], [0], documents=[1], n_docs=1)
    n = 200
    lattice = DocumentLattice(vocabulary, [np.zeros(n, np.int32), np.zeros(n, np.int32)])
    fib = [1, 1]
    while len(fib) <= n:
        fib.append(fib[-1] + fib[-2])
    assert lattice.n_segmentations() == fib[n] ** 2 > 2**64
    assert lattice.log_n() == pytest.approx(2 * math.log(fib[n]), rel=1e-12)


def test_the_api_on_a_tokenizer():
    tok = UBPE(alphabet="abc ", n_tokens=30, break_tokens=" ")
    tok.fit(["abc abca cab", "ab ab abc", "cabcab bca"] * 3, quiet=True)
    chosen = tok.encode("abcab cab")[0][0]
    summary = ambiguity(tok, "abcab cab", encoding=chosen)
    assert summary.n_symbols == 9 and summary.n_segmentations > 1
    assert summary.as_dict()["n_segmentations"] == summary.n_segmentations
    assert math.log(summary.n_segmentations) == pytest.approx(summary.log_n, rel=1e-12)
    assert 0 <= summary.entropy <= summary.log_n + TOLERANCE
    assert 0 < summary.encoding_probability <= summary.best_probability + TOLERANCE
    # a very low temperature concentrates all mass on the best segmentation (without ties)
    distinct = np.random.default_rng(0).normal(size=len(tok))
    cold = ambiguity(tok, "abcab cab", weights=distinct, temperature=1e-3)
    assert cold.best_probability == pytest.approx(1.0) and cold.entropy < 1e-6


def test_tokenizer_ambiguity_method():
    """``tok.ambiguity`` is :func:`ambiguity` with the tokenizer's own top-1 as the encoding;
    under the additive objective's own weights that encoding is the most probable one."""
    tok = UBPE(alphabet="abc ", n_tokens=30, break_tokens=" ")
    tok.fit(["abc abca cab", "ab ab abc", "cabcab bca"] * 3, quiet=True)
    doc = "abcab cab"
    own = tok.ambiguity(doc, temperature=2.0)
    assert own == ambiguity(tok, doc, temperature=2.0, encoding=tok.encode(doc)[0][0])
    assert tok.ambiguity(doc, encoding=None).encoding_probability is None
    weights = np.random.default_rng(1).normal(size=len(tok))
    viterbi = tok.encode(doc, encoder="additive", weights=weights)[0][0]
    summary = tok.ambiguity(doc, weights=weights, encoding=viterbi)
    assert summary.encoding_probability == pytest.approx(summary.best_probability, rel=1e-12)
    worse = tok.encode(doc, encoder="additive", weights=weights, top_n=2)[1][0]
    assert tok.ambiguity(doc, weights=weights, encoding=worse).encoding_probability < summary.best_probability
    with pytest.raises(UnknownTokenError):
        tok.ambiguity(doc, encoding=[0])


def test_bad_input_gives_clear_errors():
    vocabulary = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    word = [np.array([0, 1, 0, 1], np.int32)]
    for temperature in (0, -1.0, float("nan"), float("inf"), "hot", True):
        with pytest.raises(InvalidParameterError, match="temperature"):
            DocumentLattice(vocabulary, word, temperature=temperature)
    with pytest.raises(InvalidParameterError, match="one score per id"):
        DocumentLattice(vocabulary, word, weights=[1.0])
    lattice = DocumentLattice(vocabulary, [np.array([0, 1], np.int32), np.array([0, 1], np.int32)])
    with pytest.raises(UnknownTokenError, match="do not spell"):
        lattice.probability([2])
    with pytest.raises(UnknownTokenError, match="not in the vocabulary"):
        lattice.probability([7])
    crossing = DocumentLattice(vocabulary, [np.array([0], np.int32), np.array([1], np.int32)])
    with pytest.raises(UnknownTokenError, match="crosses"):
        crossing.probability([2])
    with pytest.raises(InvalidParameterError, match="overflow"):
        DocumentLattice(vocabulary, word, weights=[1e308, 1e308, 1e308], temperature=1e-300)


def test_kernel_validates_its_arguments():
    tree = RadixTree(2, np.array([0, 2]), np.array([0, 1], np.int32))
    with pytest.raises(ValueError, match=r"parts may hold ids 0\.\.1 only"):
        SegmentLattice(tree, np.array([0, 5], np.int32), np.array([0, 2]))
    with pytest.raises(ValueError, match="bounds"):
        SegmentLattice(tree, np.array([0, 1], np.int32), np.array([0, 3]))
    lattice = SegmentLattice(tree, np.array([0, 1], np.int32), np.array([0, 2]))
    with pytest.raises(ValueError, match="one score per edge"):
        lattice.backward(np.zeros(1))
    with pytest.raises(ValueError, match="finite"):
        lattice.backward(np.array([0.0, np.inf, 0.0]))
    with pytest.raises(ValueError, match="columns"):
        lattice.sample(np.zeros(3), np.zeros((1, 1)))
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        lattice.sample(np.zeros(3), np.ones((1, 2)))
    empty = SegmentLattice(tree, np.zeros(0, np.int32), np.array([0]))
    assert empty.backward(np.zeros(0)) == (0.0, 0.0, 0.0)
    assert empty.n_parts == 0 and empty.count_parts()[0].tolist() == []


# -- sampling -------------------------------------------------------------------------------------


def fitted_case():
    """A fitted vocabulary and a two-part document with a few dozen segmentations."""
    tok = UBPE(alphabet="abc", n_tokens=24)
    rng = np.random.default_rng(3)
    tok.fit(["".join(rng.choice(list("abc"), size=rng.integers(4, 20))) for _ in range(80)], quiet=True)
    parts = [np.array([0, 1, 2, 0, 1, 0], np.int32), np.array([2, 0, 1, 2, 0], np.int32)]
    return tok.vocabulary, parts


def empirical_counts(draws, paths):
    counter = Counter(tuple(d) for d in draws)
    assert set(counter) <= set(paths)
    return np.array([counter[p] for p in paths])


@pytest.mark.parametrize("temperature", [0.5, 1.0, 3.0])
def test_sampling_matches_the_exact_distribution(temperature):
    vocabulary, parts = fitted_case()
    weights = idf_scores(vocabulary)
    paths, probabilities, _ = oracle(vocabulary, parts, weights, temperature)
    assert len(paths) >= 15
    n = 20000
    encoder = SampleEncoder(vocabulary, temperature=temperature, seed=12345)
    draws = [tokens for _ in range(n // 4000) for tokens, _ in encoder.encode_paths(parts, top_n=4000)]
    observed = empirical_counts(draws, paths)
    # pool the rarest outcomes so that every expected count is at least 5
    order = np.argsort(probabilities)
    expected = probabilities[order] * n
    keep = np.cumsum(expected) >= 5
    pooled_expected = np.append(expected[keep], expected[~keep].sum())
    pooled_observed = np.append(observed[order][keep], observed[order][~keep].sum())
    if pooled_expected[-1] == 0:
        pooled_expected, pooled_observed = pooled_expected[:-1], pooled_observed[:-1]
    assert chisquare(pooled_observed, pooled_expected).pvalue > CHI2_ACCEPT
    # the same test rejects the uniform distribution: it has the power to catch a wrong sampler
    uniform = np.full(len(paths), n / len(paths))
    assert chisquare(observed, uniform).pvalue < CHI2_REJECT


def test_nbest_sampling_draws_from_the_k_best():
    vocabulary, parts = fitted_case()
    weights = idf_scores(vocabulary)
    paths, probabilities, _ = oracle(vocabulary, parts, weights, 1.0)
    k = 4
    best = DocumentLattice(vocabulary, parts).best(k)
    best_paths = [tuple(tokens.tolist()) for tokens, _ in best]
    expected = np.array([probabilities[paths.index(p)] for p in best_paths])
    expected /= expected.sum()
    n = 8000
    encoder = SampleEncoder(vocabulary, nbest_size=k, seed=99)
    draws = [t for _ in range(n // 4000) for t, _ in encoder.encode_paths(parts, top_n=4000)]
    observed = empirical_counts(draws, best_paths)
    assert observed.sum() == n
    assert chisquare(observed, expected * n).pvalue > CHI2_ACCEPT


def test_sampling_is_reproducible_and_seed_dependent():
    vocabulary, parts = fitted_case()
    one = SampleEncoder(vocabulary, seed=5).encode(parts, top_n=50)
    assert one == SampleEncoder(vocabulary, seed=5).encode(parts, top_n=50)
    assert one != SampleEncoder(vocabulary, seed=6).encode(parts, top_n=50)
    # the draws are reported with ubpe's tf-idf score, as every encoder reports them
    tfidf = make_encoder("fewest", vocabulary)._scorer
    tokens, score = one[0]
    assert score == tfidf.score(np.array(tokens), np.array([0, 6, 11]))


def test_sample_encoder_through_the_tokenizer():
    tok = UBPE(alphabet="abc ", n_tokens=30, break_tokens=" ")
    tok.fit(["abc abca cab", "ab ab abc", "cabcab bca"] * 3, quiet=True)
    draws = tok.encode("abcab cab", encoder="sample", top_n=30, seed=1, temperature=2.0)
    assert len(draws) == 30 and len({tuple(t) for t, _ in draws}) > 1
    assert all(tok.decode(t) == "abcab cab" for t, _ in draws)
    greedy = tok.encode("abcab cab", encoder="sample", top_n=3, nbest_size=1)
    best = tok.encode("abcab cab", encoder="additive", weights=idf_scores(tok.vocabulary))
    assert [t for t, _ in greedy] == [best[0][0]] * 3
    with pytest.raises(InvalidParameterError, match="nbest_size"):
        tok.encode("ab", encoder="sample", nbest_size="all")
    with pytest.raises(InvalidParameterError, match="seed"):
        tok.encode("ab", encoder="sample", seed=-1)


# -- reranking ------------------------------------------------------------------------------------


def test_rerank_orders_by_the_key_and_keeps_the_original_score():
    tok = UBPE(alphabet="abc ", n_tokens=30, break_tokens=" ")
    tok.fit(["abc abca cab", "ab ab abc", "cabcab bca"] * 3, quiet=True)
    alternatives = tok.encode("abcab cab", top_n=6)
    by_length = rerank(alternatives, "fewest")
    assert sorted((r.tokens, r.original) for r in by_length) == sorted(alternatives)
    assert [len(r.tokens) for r in by_length] == sorted(len(t) for t, _ in alternatives)
    # stable: equal keys keep the encoder's order
    for a, b in zip(by_length, by_length[1:]):
        if a.score == b.score:
            assert alternatives.index((a.tokens, a.original)) < alternatives.index((b.tokens, b.original))
    frequent = rerank(alternatives, "mean_frequency", vocabulary=tok.vocabulary)
    share = document_frequencies(tok.vocabulary)
    assert [r.score for r in frequent] == sorted((float(np.mean(share[t])) for t, _ in alternatives), reverse=True)
    custom = np.arange(len(tok), dtype=float)
    assert rerank(alternatives, "mean_frequency", frequencies=custom)[0].score == max(
        float(np.mean(custom[t])) for t, _ in alternatives)


def test_encode_with_rerank():
    tok = UBPE(alphabet="abc ", n_tokens=30, break_tokens=" ")
    tok.fit(["abc abca cab", "ab ab abc", "cabcab bca"] * 3, quiet=True)
    plain = tok.encode("abcab cab", top_n=6)
    for key in ("fewest", "mean_frequency", lambda tokens: -abs(len(tokens) - 4)):
        assert tok.encode("abcab cab", top_n=6, rerank=key) == rerank(plain, key, vocabulary=tok.vocabulary)
    fewest = tok.encode("abcab cab", top_n=6, rerank="fewest")
    assert [len(r.tokens) for r in fewest] == sorted(len(t) for t, _ in plain)
    assert tok.encode("abcab cab", top_n=6, rerank=None) == plain
    assert np.array_equal(tok.token_frequencies(), document_frequencies(tok.vocabulary))
    with pytest.raises(InvalidParameterError, match="unknown rerank key"):
        tok.encode("abcab", top_n=2, rerank="longest")


def test_rerank_errors():
    with pytest.raises(InvalidParameterError, match="unknown rerank key"):
        rerank([([1], 0.0)], "shortest")
    with pytest.raises(InvalidParameterError, match="needs"):
        rerank([([1], 0.0)], "mean_frequency")
    with pytest.raises(InvalidParameterError, match="must return a number"):
        rerank([([1], 0.0)], lambda tokens: "high")
    with pytest.raises(InvalidParameterError, match="NaN"):
        rerank([([1], 0.0)], lambda tokens: float("nan"))
    with pytest.raises(InvalidParameterError, match="pairs"):
        rerank([[1, 2, 3]], "fewest")
    with pytest.raises(InvalidParameterError, match="no frequency"):
        rerank([([9], 0.0)], "mean_frequency", frequencies=[1.0])


# -- the experiment ---------------------------------------------------------------------------------


def test_alternatives_experiment_on_a_tiny_dataset(tmp_path):
    from experiments import alternatives as experiment
    from experiments.alternatives_report import render

    tok = UBPE(alphabet="abc ", n_tokens=30, break_tokens=" ")
    train = ["abc abca cab", "ab ab abc", "cabcab bca"] * 3
    tok.fit(train, quiet=True)
    rows = experiment.measure_dataset("tiny", "prose", tok, ["abcab cab", "", "bca cab abc"], train)
    tables = experiment.make_tables([rows])
    assert len(tables["documents"]) == 2 * len(experiment.SCORES)     # the empty document is skipped
    assert (tables["documents"]["entropy"] <= tables["documents"]["log_n"] + TOLERANCE).all()
    assert ((tables["parts"]["top1_mass"] > 0) & (tables["parts"]["top10_mass"] <= 1 + TOLERANCE)).all()
    assert tables["beam"]["resolved"].all() and not tables["beam"]["missed"].any()
    info = experiment.run_info(0.0, [rows])
    readme = render(tmp_path, tables, info)
    assert "## Headlines" in readme.read_text()
    assert {p.name for p in tmp_path.glob("*.png")} == {"ambiguity.png", "sampling.png", "agreement.png",
                                                        "beam.png"}


# -- exact tf-idf top-n ---------------------------------------------------------------------------


def oracle_tfidf(vocabulary, parts):
    """Every segmentation of the document with its tf-idf score (sum over parts)."""
    weights = idf_scores(vocabulary)
    table = piece_table(vocabulary)   # the highest id stands for a shared piece, as in tfidf
    out = []
    for path in document_segmentations([list(p) for p in parts], table):
        tokens = [t for t, _ in path]
        score, k = 0.0, 0
        for part in parts:
            spelled, taken = 0, []
            while spelled < len(part):
                taken.append(path[k])
                spelled += path[k][1]
                k += 1
            score += tfidf_score([t for t, _ in taken], weights)
        out.append((tokens, score))
    return out


@settings(max_examples=150, deadline=None)
@given(vocabulary_and_parts(max_symbols=11, max_parts=3), st.sampled_from([1, 2, 5]))
def test_exact_tfidf_matches_enumeration_and_never_loses_to_the_beam(case, top_n):
    vocabulary, parts = case
    everything = oracle_tfidf(vocabulary, parts)
    expected = sorted((score for _, score in everything), reverse=True)[:top_n]
    found = ExactTfidf(vocabulary).encode(parts, top_n=top_n)
    assert [s for _, s in found] == pytest.approx(expected, rel=1e-12, abs=1e-12)
    scored = {tuple(tokens): score for tokens, score in everything}
    for tokens, score in found:   # real segmentations, reported with their own score
        assert scored[tuple(tokens)] == pytest.approx(score, rel=1e-12, abs=1e-12)
    assert len({tuple(t) for t, _ in found}) == len(found)
    beam = make_encoder("tfidf", vocabulary, exact=True).encode(parts, top_n=1)
    assert beam[0][1] <= found[0][1] + 1e-12


@settings(max_examples=60, deadline=None)
@given(vocabulary_and_parts(max_symbols=9, max_parts=2), st.sampled_from([1, 3]))
def test_the_integer_program_matches_enumeration(case, top_n):
    vocabulary, parts = case
    everything = oracle_tfidf(vocabulary, parts)
    expected = sorted((score for _, score in everything), reverse=True)[:top_n]
    search = ExactTfidf(vocabulary, max_nodes=0)     # no node allowed: every part by the MILP
    found = search.encode(parts, top_n=top_n)
    assert search.milp_parts == sum(1 for p in parts if len(p))
    assert [s for _, s in found] == pytest.approx(expected, abs=MILP_TOLERANCE)
    scored = {tuple(tokens): score for tokens, score in everything}
    assert all(scored[tuple(t)] == pytest.approx(s, rel=1e-12, abs=1e-12) for t, s in found)
    assert len({tuple(t) for t, _ in found}) == len(found)


def test_exact_tfidf_finds_what_the_beam_misses():
    # tf-idf counts repeats sub-linearly, so a beam keeping the best tail per position can
    # drop the prefix of the best segmentation: on small random cases this happens often
    for seed in range(200):
        rng = np.random.default_rng(seed)
        vocabulary = Vocabulary.from_merges(2, [0, 2, 1, 0], [0, 2, 1, 4], documents=rng.integers(0, 5, 4).tolist(), n_docs=5)
        part = [rng.integers(0, 2, 10).astype(np.int32)]
        beam = make_encoder("tfidf", vocabulary).encode(part)[0][1]
        exact = ExactTfidf(vocabulary).encode(part)[0][1]
        assert beam <= exact + 1e-12
        if beam < exact - 1e-9:
            return
    pytest.fail("no beam miss found on 200 random cases")


def test_exact_tfidf_limits():
    vocabulary = Vocabulary.from_merges(1, [0], [0], documents=[1], n_docs=3)
    with pytest.raises(SearchLimitError, match="max_length"):
        ExactTfidf(vocabulary, max_length=8).encode([np.zeros(9, np.int32)])
    with pytest.raises(SearchLimitError, match="max_nodes"):
        ExactTfidf(vocabulary, max_nodes=10, milp=False).encode([np.zeros(30, np.int32)], top_n=50)
    # with the integer program as fallback the same search finishes, and agrees with a long one
    fallback = ExactTfidf(vocabulary, max_nodes=10)
    found = fallback.encode([np.zeros(12, np.int32)], top_n=5)
    assert fallback.milp_parts == 1
    expected = ExactTfidf(vocabulary, milp=False).encode([np.zeros(12, np.int32)], top_n=5)
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=MILP_TOLERANCE)
    negative = Vocabulary.from_pieces(1, [[0, 0]], [-1.0])
    with pytest.raises(InvalidParameterError, match="non-negative"):
        ExactTfidf(negative)


@pytest.mark.parametrize("experiment", ["alternatives", "llm"])
def test_results_root_is_not_an_experiments_folder(experiment):
    """`--results results` names the parent for the runner's experiments and the output folder
    for these two: written there, their tables would land beside every experiment's folder."""
    import importlib

    from experiments import RESULTS_DIR

    module = importlib.import_module(f"experiments.{experiment}")
    with pytest.raises(SystemExit, match="every experiment's folder"):
        module.main(["--results", str(RESULTS_DIR), "--allow-dirty"])
