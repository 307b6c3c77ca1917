"""The transcription oracles (`reference_impl`, `reference_encode`) against the golden fixtures.

The property tests compare our kernels with the oracles on random corpora; this checks the
oracles themselves against what ubpe 0.3.0 actually recorded (tests/golden), so an oracle
that drifted from the reference cannot vouch for a kernel that drifted with it.

Fit: every run of the small fixtures and of ``prose_regex`` (a regex split) is replayed with
`reference_impl` - fit the merges, build the universal or classic mapper, rearrange when
the run did - and must give the reference's mapper and weights exactly (the rearranged
re-trims too). Encode: the first held-out documents of fixtures without known words are
split with `reference_impl.split_reference` and encoded with `reference_encode` (classic,
universal top-1 and top-5); token digests must be equal and scores within the fixtures'
rounding (`test_encode_golden.SCORE_TOLERANCE`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import regex

import reference_encode as renc
import reference_impl as ref
from test_encode_golden import GOLDEN, digest, model_and_docs, read, same_score

FIT_FIXTURES = ["tiny", "tiny_runs", "no_pairs_repeat", "prose_regex"]
# fixtures without known words (the oracle splitter takes no id mapping for those)
ENCODE_FIXTURES = {"tiny": 300, "prose_regex": 300, "multilingual": 300, "walk_split": 60}
TOP_N = 5

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def symbol_ids(fixture: dict):
    alphabet = fixture["dumped_alphabet"]  # JSON keys: ints were stored as strings
    return lambda symbol: alphabet[symbol] if isinstance(symbol, str) else alphabet[str(symbol)]


def oracle_parts(fixture: dict, doc) -> list[list[int]]:
    settings = fixture["settings"]
    pattern = regex.compile(settings["regex_str"]) if settings.get("regex_str") else None
    to_id = symbol_ids(fixture)
    parts = ref.split_reference(doc, regex=pattern, break_tokens=settings.get("break_tokens"),
                                stop_tokens=settings.get("stop_tokens"))
    return [[to_id(s) for s in part] for part in parts if len(part)]


def mapper_of(dump: dict) -> tuple[dict, dict]:
    return ({int(k): tuple(v) for k, v in dump["mapper"].items()},
            {int(k): w for k, w in dump["weights"].items()})


def fit_runs():
    for name in FIT_FIXTURES:
        fixture = read(GOLDEN / f"fit_{name}.json.gz")
        for index, run in enumerate(fixture["runs"]):
            yield pytest.param(name, index, id=f"{name}-{run['variant']}-nc{run['n_candidates']}-"
                                                f"{'re' if run['rearrange'] else 'raw'}")


@pytest.mark.parametrize(("name", "index"), list(fit_runs()))
def test_fit_oracle_reproduces_the_reference(name, index):
    fixture = read(GOLDEN / f"fit_{name}.json.gz")
    assert not fixture["settings"].get("known_words")
    run = fixture["runs"][index]
    n_base, n_tokens = len(fixture["dumped_alphabet"]), fixture["settings"]["n_tokens"]
    corpus = [oracle_parts(fixture, doc) for doc in fixture["corpus"]]
    merges = ref.fit_merges(corpus, n_base, n_tokens, run["n_candidates"])
    classic = run["variant"] == "classic"
    mapper = ref.classic_mapper(merges, n_base) if classic else ref.universal_mapper(merges, n_base)
    weights = dict(enumerate(ref.weights_of(merges, len(corpus)), start=n_base))
    if run["rearrange"]:
        mapper, weights = ref.rearrange(mapper, weights, n_base, n_tokens, classic)
    assert (mapper, weights) == mapper_of(run["dump"])
    if "rearranged_to" in run:
        again = ref.rearrange(mapper, weights, n_base, run["rearranged_to"], classic)
        assert again == mapper_of(run["rearranged_dump"])


@pytest.mark.parametrize("name", list(ENCODE_FIXTURES))
def test_encode_oracles_reproduce_the_reference(name):
    fixture = read(GOLDEN / f"fit_{name}.json.gz")
    path = GOLDEN / f"encode_{name}.json.gz"
    n_docs = ENCODE_FIXTURES[name]

    tok, docs, encodings = model_and_docs(path, "classic")
    pairs, pair_token, weights = renc.classic_tables(tok.vocabulary)
    for doc, (expected_digest, expected_score) in zip(docs[:n_docs], encodings["classic"]):
        # the reference encodes each part on its own and adds the parts' scores
        parts = [renc.classic_encode_word(pairs, pair_token, weights, part)[0] if len(part) > 1
                 else (part, 0.0) for part in oracle_parts(fixture, doc)]
        assert digest([t for tokens, _ in parts for t in tokens]) == expected_digest, doc
        assert same_score(sum(score for _, score in parts), expected_score), doc

    tok, docs, encodings = model_and_docs(path, "universal")
    lookup, weights = renc.universal_tables(tok.vocabulary)
    for i, doc in enumerate(docs[:n_docs]):
        parts = oracle_parts(fixture, doc)
        for top_n, key in ((1, "universal_top1"), (TOP_N, "universal_top5")):
            found = (renc.combine_parts(lambda p: renc.encode_word(lookup, weights, p, top_n),
                                        parts, top_n) if parts else [([], 0.0)])
            expected_digest, expected = encodings[key][i]
            expected = expected if top_n > 1 else [expected]
            tokens = [t for t, _ in found]
            assert digest(tokens if top_n > 1 else tokens[0]) == expected_digest, (key, doc)
            assert len(found) == len(expected)
            assert all(same_score(s, e) for (_, s), e in zip(found, expected)), (key, doc)
