"""Our fit against golden fixtures recorded from ubpe 0.3.0 (see golden/make_fixtures.py)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from ubpe import UBPE, UBPEClassic

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
FIXTURES = sorted(GOLDEN.glob("fit_*.json.gz"))
WEIGHT_TOLERANCE = 1e-12
CLASSES = {"universal": UBPE, "classic": UBPEClassic}


def load_fixture(path: Path) -> dict:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def settings_of(fixture: dict) -> dict:
    settings = dict(fixture["settings"])
    if settings.pop("alphabet_is_dict", False):
        settings["alphabet"] = {symbol: i for symbol, i in settings["alphabet"]}
    return settings


def reference_dump(fixture: dict, model: dict) -> str:
    """The reference's ``dumps()`` string, with the alphabet stored once per fixture put back."""
    return json.dumps({"n_tokens": model["n_tokens"], "alphabet": fixture["dumped_alphabet"], **model})


def assert_same_model(ours: dict, reference: dict) -> None:
    """Two parsed ``dumps()`` describe the same model (sets compared as sets)."""
    assert ours["n_tokens"] == reference["n_tokens"]
    assert ours["alphabet"] == reference["alphabet"]
    assert ours.get("known_words") == reference.get("known_words")
    assert ours.get("regex_str") == reference.get("regex_str")
    for field in ("break_tokens", "stop_tokens"):
        assert sorted(ours.get(field) or []) == sorted(reference.get(field) or [])
    assert ours["mapper"] == reference["mapper"]
    assert ours["weights"].keys() == reference["weights"].keys()
    for token, weight in reference["weights"].items():
        assert math.isclose(ours["weights"][token], weight, rel_tol=WEIGHT_TOLERANCE, abs_tol=WEIGHT_TOLERANCE)


def runs():
    for path in FIXTURES:
        fixture = load_fixture(path)
        for index, run in enumerate(fixture["runs"]):
            yield pytest.param(
                path,
                index,
                id=f"{fixture['name']}-{run['variant']}-nc{run['n_candidates']}-{'re' if run['rearrange'] else 'raw'}",
            )


def test_fixtures_exist():
    assert len(FIXTURES) >= 8, "golden fixtures are missing: run tests/golden/make_fixtures.py"


_cache: dict[Path, dict] = {}


def fixture_of(path: Path) -> dict:
    if path not in _cache:
        _cache[path] = load_fixture(path)
    return _cache[path]


@pytest.mark.parametrize(("path", "index"), list(runs()))
def test_fit_reproduces_reference(path, index):
    fixture = fixture_of(path)
    run = fixture["runs"][index]
    tok = CLASSES[run["variant"]](**settings_of(fixture))
    tok.fit(fixture["corpus"], n_candidates=run["n_candidates"], rearrange_tokens=run["rearrange"], quiet=True)
    assert_same_model(json.loads(tok.dumps()), json.loads(reference_dump(fixture, run["dump"])))
    if "rearranged_to" in run:
        tok.rearrange_tokens(n_tokens=run["rearranged_to"], quiet=True)
        assert_same_model(
            json.loads(tok.dumps()), json.loads(reference_dump(fixture, run["rearranged_dump"]))
        )


@pytest.mark.parametrize(("path", "index"), list(runs()))
def test_reference_dump_loads_and_dumps_back(path, index):
    fixture = fixture_of(path)
    run = fixture["runs"][index]
    cls = CLASSES[run["variant"]]
    dump = reference_dump(fixture, run["dump"])
    tok = cls.loads(dump)
    reference = json.loads(dump)
    assert_same_model(json.loads(tok.dumps()), reference)
    assert {str(k): list(v) for k, v in tok.tokens_mapper["backward"].items()} == reference["mapper"]
    # the symbol type was inferred from the JSON: the loaded alphabet equals the fitted one
    assert tok.alphabet == cls(**settings_of(fixture)).alphabet
