"""Issue 36 point 1: HF's Unicode normalizers (``NFC``, ``NFD``, ``NFKC``, ``NFKD``) and
``Lowercase`` as ``tokenizers`` runs them, with its tables (`ubpe.text.unicode`, tables generated
by ``tests/golden/make_unicode_tables.py``), not Python's ``unicodedata``.

Every code point (the ``long`` lane; a sample and every code point where Python's data differs
in the default lane), every ordering of two combining marks after a starter, and every
composition pair with a mark between, through each form: ``tokenizers``' output. The issue's
examples are explicit cases, through a ``tokenizer.json`` read by ``ubpe.load`` too. Another
Python (3.12, where found) runs the module on the same texts and gets the same output: its
``unicodedata`` is Unicode 15.0, this one's 14.0.
"""

from __future__ import annotations

import glob
import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe
from ubpe.text import unicode as peer_unicode
from ubpe.text import unicode_tables

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import normalizers  # noqa: E402

hf_builders = pytest.importorskip("hf_builders")

FORMS = peer_unicode.FORMS
CODE_POINTS = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
MODULE = Path(peer_unicode.__file__)
#: the issue's examples: tokenizers keeps ㋿ whole under NFKC (Python 3.11: 令和), and gives
#: U+1AC1 no combining class, so NFC composes nothing (Python 3.11: ạ then U+1AC1)
ISSUE_CASES = [("NFKC", "\u32ff"), ("NFC", "a\u1ac1\u0323"), ("NFKD", "\u32ff"), ("NFD", "\U00011938")]


def _steps():
    return {**{form: getattr(normalizers, form)() for form in FORMS}, "Lowercase": normalizers.Lowercase()}


def _ours(form: str, text: str) -> str:
    return peer_unicode.lowercase(text) if form == "Lowercase" else peer_unicode.normalize(form, text)


def _first_difference(form: str, texts: list[str]) -> list[tuple[str, str, str]]:
    """The texts (up to 5) whose output is not ``tokenizers``': (text, ours, theirs)."""
    step = _steps()[form]
    wrong = []
    for text in texts:
        theirs = step.normalize_str(text)
        ours = _ours(form, text)
        if ours != theirs:
            wrong.append((ascii(text), ascii(ours), ascii(theirs)))
            if len(wrong) == 5:
                break
    return wrong


def _marks() -> list[str]:
    """Every code point with a combining class in ``tokenizers``' tables or in Python's."""
    ours = {ord(c) for c in peer_unicode.parsed(unicode_tables).ccc}
    python = {cp for cp in CODE_POINTS if unicodedata.combining(chr(cp))}
    return [chr(cp) for cp in sorted(ours | python)]


def _differ_points() -> list[int]:
    """The code points where this Python's data differs (the tables' own list for it)."""
    pattern_ranges = unicode_tables.DIFFER_NORMALIZE.get(unicodedata.unidata_version, ())
    lower_ranges = unicode_tables.DIFFER_LOWER.get(unicodedata.unidata_version, ())
    return sorted({cp for a, b in (*pattern_ranges, *lower_ranges) for cp in range(a, b + 1)})


def _check(form: str, texts: list[str]) -> None:
    """All ``texts`` at once (joined by a starter that composes with nothing, so no text
    reaches another), then text by text where they differ."""
    joined = "\u0915".join(texts)
    if _ours(form, joined) != _steps()[form].normalize_str(joined):
        assert _first_difference(form, texts) == [], form
        pytest.fail(f"{form}: the joined texts differ, no text alone does")


@pytest.mark.parametrize("form, text", ISSUE_CASES)
def test_the_issues_examples(form, text):
    theirs = _steps()[form].normalize_str(text)
    assert peer_unicode.normalize(form, text) == theirs
    assert unicodedata.normalize(form, text) != theirs or unicodedata.unidata_version != "14.0.0"


@pytest.mark.parametrize("form", [*FORMS, "Lowercase"])
def test_a_sample_of_code_points_and_where_python_differs(form):
    sample = CODE_POINTS[::61] + _differ_points() + [0x3A3, 0x130, 0x1E9E, 0xAC00, 0xD7A3, 0x1100, 0x1161, 0x11A8]
    _check(form, [chr(cp) for cp in sample])
    _check(form, ["ΑΣ ὈΔΥΣΣΕΎΣ"])


@pytest.mark.parametrize("form", FORMS)
def test_a_sample_of_mark_orderings(form):
    rng = random.Random(36)
    marks = _marks()
    differ = [chr(cp) for cp in _differ_points() if unicodedata.combining(chr(cp))] + ["\u1ac1", "\u0323"]
    pairs = [(rng.choice(marks), rng.choice(marks)) for _ in range(3000)]
    pairs += [(m, rng.choice(marks)) for m in differ] + [(rng.choice(marks), m) for m in differ]
    _check(form, [base + a + b for a, b in pairs for base in ("a", "\u1100\u1161")])


@pytest.mark.parametrize("form", [*FORMS, "Lowercase"])
def test_the_varied_texts(form):
    """The 1,100+ texts of every kind (prose, the UDHR's scripts, code, random code points
    of any plane, awkward cases), text by text."""
    from vocab_corpora import varied_texts

    assert _first_difference(form, varied_texts(n_random=300)) == []


@given(st.text(st.sampled_from(["a", "e", "\u0915", "\u1100", "\u1161", "\u11a8", "\uac00", "\u32ff",
                                "\u0300", "\u0301", "\u0323", "\u0327", "\u1ac1", "\u0345", "\u05b0",
                                "\u093c", "\u0f71", "\u0f72", "\u0f80", "\u1e0b", "\u0344", "\u212b",
                                "\U00011938", "\U0001d15e", "\U000107a0", "\ufb01", " "]), max_size=12))
@settings(max_examples=300, deadline=None)
def test_mixed_marks_and_composites(text):
    """Random runs of starters, marks (some that Python's data classes otherwise), composites
    and Hangul jamo: each form is ``tokenizers``', by the fast path or the tables."""
    for form in FORMS:
        assert peer_unicode.normalize(form, text) == _steps()[form].normalize_str(text), form


def test_strip_accents_removes_what_tokenizers_removes_on_every_code_point():
    """HF's ``StripAccents`` removes the marks of ``tokenizers``' own Unicode tables (485 code
    points fewer than Python 3.11's ``\\p{M}``, 2 more): every code point, and the varied texts."""
    from ubpe.text.hf_pipeline import normalize
    from vocab_corpora import varied_texts

    step = normalizers.StripAccents()
    strip = [("strip_accents",)]
    texts = [chr(cp) for cp in CODE_POINTS]
    joined = "a".join(texts)  # (a character-wise filter: no text reaches another)
    if normalize(strip, joined) != step.normalize_str(joined):
        assert [ascii(t) for t in texts if normalize(strip, t) != step.normalize_str(t)][:5] == []
    assert [ascii(t) for t in varied_texts(n_random=300) if normalize(strip, t) != step.normalize_str(t)][:5] == []


def test_through_a_tokenizer_json(tmp_path):
    """ubpe.load on a byte-level file with an NFKC (and an NFC + Lowercase) normalizer:
    the issue's texts get ``tokenizers``' ids on every path (encode, encode_batch,
    encode_batch_to_numpy)."""
    texts = ["\u32ff", "a\u1ac1\u0323", "令和 \u32ff ΑΣ", "plain", "e\u0301 \ufb01"]
    for normalizer in [normalizers.NFKC(), normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])]:
        hf = hf_builders.gpt2()
        hf.normalizer = normalizer
        path = tmp_path / "tokenizer.json"
        hf.save(str(path))
        tok = ubpe.load(path)
        expected = [hf.encode(t).ids for t in texts]
        assert [tok.encode(t) for t in texts] == expected
        assert tok.encode_batch(texts) == expected
        ids, offsets = tok.encode_batch_to_numpy(texts, threads=2).best()
        assert [ids[offsets[d]:offsets[d + 1]].tolist() for d in range(len(texts))] == expected


@pytest.mark.long
@pytest.mark.parametrize("form", [*FORMS, "Lowercase"])
def test_every_code_point(form):
    texts = [chr(cp) for cp in CODE_POINTS]
    _check(form, texts)
    if form != "Lowercase":  # the tables alone (what a Python whose data differs everywhere would run)
        step = _steps()[form]
        assert [t for t in texts if peer_unicode._normalize_tables(form, t) != step.normalize_str(t)] == []


@pytest.mark.long
@pytest.mark.parametrize("form", FORMS)
def test_every_mark_ordering_and_composition(form):
    """Every two marks after a starter (their order), and every composition pair with every
    mark between (whether it blocks)."""
    marks = _marks()
    _check(form, ["a" + a + b for a in marks for b in marks])
    pairs = list(peer_unicode.parsed(unicode_tables).compose)
    _check(form, [first + m + second for first, second in pairs for m in marks[::7]])


@pytest.mark.long
def test_this_pythons_differ_set_is_computed_alike():
    """The stored set of this Python's version is what `differing` computes (a version not
    stored gets it computed at first use)."""
    version = unicodedata.unidata_version
    normalize_ranges, lower_ranges = peer_unicode.differing(unicode_tables)
    assert tuple(normalize_ranges) == unicode_tables.DIFFER_NORMALIZE[version]
    assert tuple(lower_ranges) == unicode_tables.DIFFER_LOWER[version]


def _other_python() -> str | None:
    """A Python 3.12 (other Unicode data than 3.11's) that runs: pyenv's, or on the path."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates = sorted(glob.glob(os.path.join(root, "versions", "3.12*", "bin", "python3.12")))
    candidates += [found for found in [shutil.which("python3.12")] if found]
    for python in candidates:
        if subprocess.run([python, "-c", "import unicodedata"], capture_output=True).returncode == 0:
            return python
    return None


_OTHER = textwrap.dedent("""
    import importlib.util, json, os, sys, types, unicodedata
    folder, computed = sys.argv[1], sys.argv[2] == "computed"
    # the packages ubpe and ubpe.text without their __init__ (ubpe's own imports its kernels):
    # their modules, `ubpe._fntools` among them, found in the folders
    for name, path in (("ubpe", os.path.dirname(folder)), ("ubpe.text", folder)):
        package = types.ModuleType(name); package.__path__ = [path]; sys.modules[name] = package
    def load(name):
        spec = importlib.util.spec_from_file_location("ubpe.text." + name, folder + "/" + name + ".py")
        module = importlib.util.module_from_spec(spec); sys.modules["ubpe.text." + name] = module
        spec.loader.exec_module(module); return module
    tables, unicode = load("unicode_tables"), load("unicode")
    if computed:  # as a Python whose version the tables do not list
        tables.DIFFER_NORMALIZE.pop(unicodedata.unidata_version, None)
    texts = json.load(sys.stdin)
    out = {form: [unicode.lowercase(t) if form == "Lowercase" else unicode.normalize(form, t) for t in texts[form]]
           for form in texts}
    print(json.dumps([unicodedata.unidata_version, out]))
""")


@pytest.mark.long
@pytest.mark.parametrize("computed", [False, True], ids=["stored", "computed"])
def test_another_python_gives_the_same(tmp_path, computed):
    """Python 3.12 (Unicode 15.0) runs `ubpe.text.unicode` alone on every code point and on
    the mark orderings of the sample: ``tokenizers``' output, with the set it has stored and
    with the set computed there."""
    python = _other_python()
    if python is None:
        pytest.skip("no Python 3.12 here (python3.12 on the path or under pyenv)")
    rng = random.Random(36)
    marks = _marks()
    orderings = ["a" + rng.choice(marks) + rng.choice(marks) for _ in range(20_000)]
    every = "\u0915".join(chr(cp) for cp in CODE_POINTS)
    texts = {form: [every, *orderings] for form in FORMS}
    texts["Lowercase"] = [every]
    script = tmp_path / "other.py"
    script.write_text(_OTHER)
    done = subprocess.run([python, str(script), str(MODULE.parent), "computed" if computed else "stored"],
                          input=json.dumps(texts), capture_output=True, text=True, check=True)
    version, out = json.loads(done.stdout)
    assert version != unicodedata.unidata_version
    steps = _steps()
    for form, outputs in out.items():
        assert outputs == [steps[form].normalize_str(t) for t in texts[form]], form
