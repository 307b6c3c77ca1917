"""Our encoders against encodings recorded from ubpe 0.3.0 (see golden/make_fixtures.py).

The models come from the reference's own dumps (the fit fixtures), so these tests do not
depend on our fit. Token lists are compared through the fixtures' short digests; where they
differ, the scores at every rank must still agree (a floating-point tie between equally
scored encodings), and such ties must stay rare.
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

GOLDEN = Path(__file__).parent / "golden"
sys.path.insert(0, str(GOLDEN))
from heldout import heldout_docs  # noqa: E402

SCORE_TOLERANCE = 1e-9
MAX_TIE_SHARE = 0.01  # ties may explain at most 1% of differing documents
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
    return math.isclose(a, b, rel_tol=SCORE_TOLERANCE, abs_tol=SCORE_TOLERANCE)


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
    ties = 0
    for doc, (expected_digest, expected_score) in zip(docs, encodings["universal_top1"]):
        (tokens, score), = tok.encode(doc, top_n=1)
        assert same_score(score, expected_score), doc
        assert tok.decode(tokens) == (doc if isinstance(doc, str) else list(doc))
        ties += digest(reference_view(tok, tokens)) != expected_digest
    assert ties <= MAX_TIE_SHARE * len(docs)


@pytest.mark.parametrize("path", ENCODE_FIXTURES, ids=lambda p: p.name[7:-8])
def test_universal_top5_equals_reference(path):
    tok, docs, encodings = model_and_docs(path, "universal")
    ties = 0
    for doc, (expected_digest, expected_scores) in zip(docs, encodings["universal_top5"]):
        candidates = tok.encode(doc, top_n=5)
        assert len(candidates) == len(expected_scores), doc
        for (tokens, score), expected in zip(candidates, expected_scores):
            assert same_score(score, expected), doc
            assert tok.decode(tokens) == (doc if isinstance(doc, str) else list(doc))
        ties += digest([reference_view(tok, t) for t, _ in candidates]) != expected_digest
    assert ties <= MAX_TIE_SHARE * len(docs)
