"""Our encoders against encodings recorded from ubpe 0.3.0 (see golden/make_fixtures.py).

The models come from the reference's own dumps (the fit fixtures), so these tests do not
depend on our fit. Token lists are compared through the fixtures' short digests and must be
identical on every document (0 mismatches on all 12 fixtures), scores at every rank within
the fixtures' rounding.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import sys
from pathlib import Path

import pytest
import regex

from ubpe import UBPE, UBPEClassic

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
sys.path.insert(0, str(GOLDEN))
from heldout import heldout_docs  # noqa: E402

# The fixtures keep 12 significant digits of each score: rounding moves a value by at most
# half a unit of the 12th digit, 5e-12 of it. Measured over all fixtures and ranks: at most
# 4.97e-12 (the rounding itself; our unrounded scores differ from the reference's by far less).
SCORE_TOLERANCE = 5e-12 * (1 + 1e-6)
ENCODE_FIXTURES = sorted(GOLDEN.glob("encode_*.json.gz"))


def read(path: Path) -> dict:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def digest(value) -> str:
    return hashlib.sha1(json.dumps(value, separators=(",", ":")).encode()).hexdigest()[:10]


def reference_view(tok, tokens: list[int]) -> list[int]:
    """Our tokens as the reference outputs them: it drops characters its regex does not
    match, we keep each as a one-symbol token (gaps weigh 0, so scores agree)."""
    if not tok.regex_str:
        return tokens
    pattern = regex.compile(tok.regex_str)
    symbols = tok.inverse_alphabet
    return [t for t in tokens if t >= len(symbols) or pattern.fullmatch(symbols[t])]


def same_score(a: float, b: float) -> bool:
    """``a`` rounds to the fixture's ``b`` (relative: a score of 0 must be exactly 0)."""
    return math.isclose(a, b, rel_tol=SCORE_TOLERANCE, abs_tol=0.0)


def model_and_docs(encode_path: Path, variant: str):
    encodings = read(encode_path)
    fit = read(GOLDEN / encode_path.name.replace("encode_", "fit_"))
    run = next(
        r for r in fit["runs"]
        if r["variant"] == variant and r["rearrange"] and r["n_candidates"] == encodings["n_candidates"]
    )
    dump = json.dumps({"n_tokens": run["dump"]["n_tokens"], "alphabet": fit["dumped_alphabet"], **run["dump"]})
    tok = (UBPE if variant == "universal" else UBPEClassic).loads(dump)
    docs = heldout_docs(fit["corpus"])
    assert len(docs) == encodings["n_docs"] >= 2000
    return tok, docs, encodings


def test_encode_fixtures_exist():
    assert len(ENCODE_FIXTURES) >= 8, "run tests/golden/make_fixtures.py --encodings-only"


def test_every_fixture_was_recorded_by_the_reference():
    """make_fixtures.py refuses to run unless ``import ubpe`` is 0.3.0 from outside this
    repository, and writes that version into every fixture."""
    fixtures = sorted(GOLDEN.glob("*.json.gz"))
    assert {p.name[: p.name.index("_")] for p in fixtures} == {"fit", "encode"}
    for path in fixtures:
        assert read(path)["reference_version"] == "0.3.0", path.name


@pytest.mark.parametrize("path", ENCODE_FIXTURES, ids=lambda p: p.name[7:-8])
def test_classic_encodings_identical(path):
    tok, docs, encodings = model_and_docs(path, "classic")
    for doc, (expected_digest, expected_score) in zip(docs, encodings["classic"]):
        (tokens, score), = tok.encode(doc)
        assert digest(reference_view(tok, tokens)) == expected_digest, doc
        assert same_score(score, expected_score)
        assert tok.decode(tokens) == (doc if isinstance(doc, str) else list(doc))


@pytest.mark.parametrize("path", ENCODE_FIXTURES, ids=lambda p: p.name[7:-8])
def test_universal_top1_equals_reference(path):
    tok, docs, encodings = model_and_docs(path, "universal")
    for doc, (expected_digest, expected_score) in zip(docs, encodings["universal_top1"]):
        (tokens, score), = tok.encode(doc, top_n=1)
        assert same_score(score, expected_score), doc
        assert tok.decode(tokens) == (doc if isinstance(doc, str) else list(doc))
        assert digest(reference_view(tok, tokens)) == expected_digest, doc


@pytest.mark.parametrize("path", ENCODE_FIXTURES, ids=lambda p: p.name[7:-8])
def test_universal_top5_equals_reference(path):
    tok, docs, encodings = model_and_docs(path, "universal")
    for doc, (expected_digest, expected_scores) in zip(docs, encodings["universal_top5"]):
        candidates = tok.encode(doc, top_n=5)
        assert len(candidates) == len(expected_scores), doc
        for (tokens, score), expected in zip(candidates, expected_scores):
            assert same_score(score, expected), doc
            assert tok.decode(tokens) == (doc if isinstance(doc, str) else list(doc))
        assert digest([reference_view(tok, t) for t, _ in candidates]) == expected_digest, doc
