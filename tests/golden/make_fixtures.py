"""Record golden fixtures from the reference implementation, ubpe 0.3.0.

Run it with a Python >= 3.12 that has the reference installed, from the repository root::

    python3.12 -m venv /tmp/ubpe-ref
    /tmp/ubpe-ref/bin/pip install ubpe==0.3.0 ubpe-native==0.3.0
    /tmp/ubpe-ref/bin/python tests/golden/make_fixtures.py
    /tmp/ubpe-ref/bin/python tests/golden/make_fixtures.py --encodings-only   # just those

It writes ``tests/golden/fit_<corpus>.json.gz``: the corpus itself, the tokenizer settings,
and for each run (variant x n_candidates x rearrangement) the reference's ``dumps()`` (parsed,
with the alphabet, the same in every run, stored once as ``dumped_alphabet``). The tests replay every run with our implementation, so CI never
needs Python 3.12 or the reference.

Both record ``reference_version`` (the script refuses to run unless ``import ubpe`` finds
ubpe 0.3.0 outside this repository). It also writes ``tests/golden/encode_<corpus>.json.gz``: for 2,000 held-out documents made by
``heldout.py`` (the tests rebuild the same documents), the reference's classic encoding and
universal top-1 and top-5 encodings of each, as a short digest of the token lists plus the
scores (12 significant digits), with the models fitted at ``ENCODE_N_CANDIDATES``.

Corpora are real text shipped with Python itself (the
documentation topics in ``pydoc_data``, standard-library source), a quantised random walk
over 4,096 symbols, and small edge cases.
"""

from __future__ import annotations

import gzip
import inspect
import json
import random
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent
REPO = OUT.parent.parent
REFERENCE_VERSION = "0.3.0"


def import_reference():
    """The reference ubpe, checked: version 0.3.0, imported from outside this repository.

    In the wrong environment ``import ubpe`` finds *our* package (an editable install, or
    the checkout on ``sys.path``) and the fixtures would record our own output as golden.
    """
    import ubpe as reference

    location = Path(reference.__file__).resolve()
    if reference.__version__ != REFERENCE_VERSION:
        raise SystemExit(f"ubpe {reference.__version__} at {location} is not the reference "
                         f"{REFERENCE_VERSION}: run this with the reference's venv (see above)")
    if location.is_relative_to(REPO):
        raise SystemExit(f"ubpe was imported from this repository ({location}), not from the "
                         "reference's installation: run this with the reference's venv")
    return reference


ubpe = import_reference()
UBPE, UBPEClassic = ubpe.UBPE, ubpe.UBPEClassic

sys.path.insert(0, str(OUT))
from heldout import heldout_docs  # noqa: E402

SEED = 20261121
REARRANGE_AGAIN_FRACTION = 0.6  # a second rearrangement trims to this share of the tokens
ENCODE_N_CANDIDATES = 50
ENCODE_TOP_N = 5
DIGEST_CHARS = 10
SCORE_DIGITS = 12


def digest(value) -> str:
    """A short, stable fingerprint of token lists (the tests compute the same)."""
    import hashlib

    return hashlib.sha1(json.dumps(value, separators=(",", ":")).encode()).hexdigest()[:DIGEST_CHARS]


def short_score(score: float) -> float:
    return float(f"{score:.{SCORE_DIGITS}g}")


def record_encodings(spec: dict) -> dict:
    """Classic and universal (top-1, top-5) encodings of the held-out documents."""
    docs = heldout_docs(spec["corpus"])
    n_candidates = ENCODE_N_CANDIDATES if ENCODE_N_CANDIDATES in spec["n_candidates"] else spec["n_candidates"][0]
    out = {"reference_version": ubpe.__version__, "n_candidates": n_candidates, "n_docs": len(docs)}
    for variant, cls in (("universal", UBPE), ("classic", UBPEClassic)):
        tok = cls(**spec["settings"])
        tok.fit(spec["corpus"], n_candidates=n_candidates, quiet=True)
        started = time.perf_counter()
        if variant == "classic":
            records = []
            for doc in docs:
                (tokens, score), = tok.encode(doc)
                records.append([digest(tokens), short_score(score)])
            out["classic"] = records
        else:
            top1, top5 = [], []
            for doc in docs:
                (tokens, score), = tok.encode(doc, top_n=1)
                top1.append([digest(tokens), short_score(score)])
                candidates = tok.encode(doc, top_n=ENCODE_TOP_N)
                top5.append([digest([t for t, _ in candidates]), [short_score(s) for _, s in candidates]])
            out["universal_top1"], out["universal_top5"] = top1, top5
        print(f"  encoded {len(docs)} documents ({variant}) in {time.perf_counter() - started:.1f}s", flush=True)
    return out


def prose_docs(limit_chars: int) -> list[str]:
    """Paragraphs of Python's documentation topics (real English prose)."""
    import pydoc_data.topics

    docs, total = [], 0
    for key in sorted(pydoc_data.topics.topics):
        for paragraph in pydoc_data.topics.topics[key].split("\n\n"):
            paragraph = paragraph.strip()
            if len(paragraph) < 40:
                continue
            docs.append(paragraph)
            total += len(paragraph)
            if total >= limit_chars:
                return docs
    return docs


def code_docs(limit_chars: int) -> list[str]:
    """Functions and classes of a few standard-library modules."""
    import json.decoder
    import textwrap
    import string

    docs, total = [], 0
    for module in (textwrap, string, json.decoder):
        for _, obj in sorted(vars(module).items()):
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__:
                source = inspect.getsource(obj)
                docs.append(source)
                total += len(source)
                if total >= limit_chars:
                    return docs
    return docs


def random_walk_docs(n_docs: int, length: int, levels: int) -> list[list[int]]:
    """A quantised random walk with a few recurring motifs, so pairs repeat."""
    rng = random.Random(SEED)
    motifs = [[rng.randrange(levels) for _ in range(rng.randint(2, 6))] for _ in range(40)]
    docs = []
    for _ in range(n_docs):
        value, doc = rng.randrange(levels), []
        while len(doc) < length:
            if rng.random() < 0.3:
                doc.extend(rng.choice(motifs))
            else:
                value = (value + rng.choice((-3, -2, -1, 1, 2, 3))) % levels
                doc.append(value)
        docs.append(doc[:length])
    return docs


def multilingual_docs() -> list[str]:
    lines = [
        "Все люди рождаются свободными и равными в своем достоинстве и правах.",
        "Они наделены разумом и совестью и должны поступать в отношении друг друга в духе братства.",
        "人人生而自由,在尊严和权利上一律平等。他们赋有理性和良心,并应以兄弟关系的精神相对待。",
        "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα.",
        "Alle Menschen sind frei und gleich an Würde und Rechten geboren.",
        "All human beings are born free and equal in dignity and rights.",
        "Tous les êtres humains naissent libres et égaux en dignité et en droits.",
        "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。",
    ]
    return [line for line in lines for _ in range(3)]


def corpora() -> list[dict]:
    prose = prose_docs(40_000)
    prose_alphabet = sorted({ch for doc in prose for ch in doc})
    code = code_docs(30_000)
    code_alphabet = sorted({ch for doc in code for ch in doc})
    walk = random_walk_docs(40, 300, 4096)
    rng = random.Random(SEED)
    walk_ids = list(range(4096))
    rng.shuffle(walk_ids)
    multi = multilingual_docs()
    multi_alphabet = sorted({ch for doc in multi for ch in doc})
    long_text = " ".join(prose_docs(25_000))
    return [
        dict(name="prose_plain", corpus=prose, settings=dict(alphabet=prose_alphabet, n_tokens=400),
             n_candidates=(1, 50, 200)),
        dict(name="prose_regex", corpus=prose,
             settings=dict(alphabet=prose_alphabet, n_tokens=400,
                           regex_str=r"[A-Za-z]+|[0-9]+|[^A-Za-z0-9\s]+|\s+"),
             n_candidates=(50,)),
        dict(name="prose_word_regex", corpus=prose,
             # \w+ leaves spaces and punctuation unmatched: the reference drops them, we keep
             # them as one-symbol parts; fitting is the same either way.
             settings=dict(alphabet=prose_alphabet, n_tokens=350, regex_str=r"\w+"),
             n_candidates=(50,)),
        dict(name="prose_split", corpus=prose,
             settings=dict(alphabet=prose_alphabet, n_tokens=400,
                           known_words=["the", "of the", "and", "Python", "function"],
                           break_tokens=[" ", "\n"], stop_tokens=[".", ",", ":", "("]),
             n_candidates=(50, 200)),
        dict(name="code", corpus=code,
             settings=dict(alphabet=code_alphabet, n_tokens=500, break_tokens=["\n"]),
             n_candidates=(1, 50)),
        dict(name="multilingual", corpus=multi,
             settings=dict(alphabet=multi_alphabet, n_tokens=len(multi_alphabet) + 120,
                           regex_str=r"\w+|[^\w\s]+|\s+"),
             n_candidates=(50,)),
        dict(name="walk4096", corpus=walk,
             settings=dict(alphabet={s: i for i, s in zip(walk_ids, range(4096))}, n_tokens=4096 + 250),
             n_candidates=(1, 50)),
        dict(name="walk_split", corpus=walk,
             settings=dict(alphabet=list(range(4096)), n_tokens=4096 + 200,
                           # (the reference accepts known words only for str/tuple alphabets)
                           break_tokens=[0, 100], stop_tokens=[5]),
             n_candidates=(50,)),
        dict(name="long_document", corpus=[long_text],
             settings=dict(alphabet=sorted(set(long_text)), n_tokens=len(set(long_text)) + 300),
             n_candidates=(1, 50)),
        dict(name="tiny", corpus=["aaaa", "abab", "a", "ab", "ba", "aaabbb", "abcabc", "c"],
             settings=dict(alphabet=["a", "b", "c", "d"], n_tokens=12), n_candidates=(1, 2, 50)),
        dict(name="tiny_runs", corpus=["aaaaaaa", "aaa", "bbbbabbbb", "ab" * 9],
             settings=dict(alphabet=["a", "b"], n_tokens=9), n_candidates=(1, 3, 50)),
        dict(name="no_pairs_repeat", corpus=["abc", "def", "ghi"],
             settings=dict(alphabet=list("abcdefghi"), n_tokens=20), n_candidates=(50,)),
    ]


def jsonable(settings: dict) -> dict:
    out = dict(settings)
    if isinstance(out.get("alphabet"), dict):
        out["alphabet"] = [[k, v] for k, v in out["alphabet"].items()]
        out["alphabet_is_dict"] = True
    return out


def without_alphabet(dump: str, dumped_alphabet: dict) -> dict:
    """A parsed dump minus its alphabet, which is stored once per fixture (it can be large)."""
    model = json.loads(dump)
    if model.pop("alphabet") != dumped_alphabet:
        raise RuntimeError("the alphabet changed between runs")
    return model


def record(spec: dict, dumped_alphabet: dict) -> list[dict]:
    runs = []
    for variant, cls in (("universal", UBPE), ("classic", UBPEClassic)):
        for n_candidates in spec["n_candidates"]:
            for rearrange in (True, False):
                tok = cls(**spec["settings"])
                started = time.perf_counter()
                tok.fit(spec["corpus"], n_candidates=n_candidates, rearrange_tokens=rearrange, quiet=True)
                seconds = time.perf_counter() - started
                run = dict(
                    variant=variant, n_candidates=n_candidates, rearrange=rearrange,
                    n_tokens=tok.n_tokens, dump=without_alphabet(tok.dumps(), dumped_alphabet),
                    seconds=round(seconds, 3),
                )
                if not rearrange and tok.tokens_weights:
                    target = len(tok.alphabet) + len(tok.known_words or {}) + max(
                        1, int(len(tok.tokens_weights) * REARRANGE_AGAIN_FRACTION))
                    tok.rearrange_tokens(n_tokens=target, quiet=True)
                    run["rearranged_to"] = target
                    run["rearranged_dump"] = without_alphabet(tok.dumps(), dumped_alphabet)
                runs.append(run)
                print(f"  {variant:9} n_candidates={n_candidates:<3} rearrange={rearrange!s:5} "
                      f"-> {tok.n_tokens} tokens in {seconds:.2f}s", flush=True)
    return runs


def write_gzip_json(path: Path, value) -> None:
    payload = json.dumps(value, ensure_ascii=False).encode("utf-8")
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as handle:
        handle.write(payload)  # mtime=0: the same fixtures give the same bytes
    print(f"  wrote {path.name} ({path.stat().st_size // 1024} KB)", flush=True)


def main() -> None:
    only_encodings = "--encodings-only" in sys.argv
    for spec in corpora():
        if only_encodings:
            print(spec["name"], flush=True)
            encodings = record_encodings(spec)
            write_gzip_json(OUT / f"encode_{spec['name']}.json.gz", dict(name=spec["name"], **encodings))
            continue
        print(spec["name"], flush=True)
        dumped_alphabet = json.loads(UBPE(**spec["settings"]).dumps())["alphabet"]
        fixture = dict(
            name=spec["name"],
            reference_version=ubpe.__version__,
            python=sys.version.split()[0],
            corpus=spec["corpus"],
            settings=jsonable(spec["settings"]),
            dumped_alphabet=dumped_alphabet,
            runs=record(spec, dumped_alphabet),
        )
        write_gzip_json(OUT / f"fit_{spec['name']}.json.gz", fixture)
        encodings = record_encodings(spec)
        write_gzip_json(OUT / f"encode_{spec['name']}.json.gz", dict(name=spec["name"], **encodings))


if __name__ == "__main__":
    main()
