"""Record that the reference ubpe 0.3.0 ignores the ``ubpe_model`` key of our ubpe 0.3.0 dumps.

Run from the repository root with our Python, naming the reference's interpreter::

    python3.12 -m venv /tmp/ubpe-ref
    /tmp/ubpe-ref/bin/pip install ubpe==0.3.0 ubpe-native==0.3.0
    python tests/golden/make_extra_key_fixture.py /tmp/ubpe-ref/bin/python

For each model of ``MODELS`` it writes our dump (with the key) and, from the reference: its
``dumps()`` after ``loads`` of the dump with the key and without it, and its encodings of
``DOCS`` both ways. ``tests/spec/test_ubpe030_roundtrip.py`` checks the two agree and that our
dumps still carry the same reference fields.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

OUT = Path(__file__).resolve().parent / "ubpe030_extra_key.json"
CORPUS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog met"] * 5
DOCS = ["the cat sat", "a dog met the cat", "mat log"]
# name -> (class name, constructor keywords, reference token_type)
MODELS = {
    "universal": ("UBPE", {"alphabet": sorted(set("".join(CORPUS))), "n_tokens": 30}, "str"),
    "classic": ("UBPEClassic", {"alphabet": sorted(set("".join(CORPUS))), "n_tokens": 30}, "str"),
}

REFERENCE = """
import json, sys
import ubpe
assert ubpe.__version__ == "0.3.0", ubpe.__file__
case = json.loads(sys.stdin.read())
cls = getattr(ubpe, case["cls"])
with_key = cls.loads(case["dump"], token_type=str)
without = json.loads(case["dump"]); without.pop("ubpe_model")
without_key = cls.loads(json.dumps(without), token_type=str)
def encodings(tok):
    return [tok.encode(d) for d in case["docs"]]
print(json.dumps({"dumps_with_key": with_key.dumps(), "dumps_without_key": without_key.dumps(),
                  "encode_with_key": repr(encodings(with_key)), "encode_without_key": repr(encodings(without_key))}))
"""


def main(reference_python: str) -> None:
    sys.path.insert(0, str(OUT.parent.parent.parent))
    import ubpe
    from ubpe.io import ubpe030

    records = {}
    for name, (cls, options, token_type) in MODELS.items():
        tok = getattr(ubpe, cls)(**options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tok.fit(CORPUS, quiet=True)
        dump = ubpe030.dumps(tok)
        case = json.dumps({"cls": cls, "dump": dump, "docs": DOCS})
        done = subprocess.run([reference_python, "-c", REFERENCE], input=case, capture_output=True, text=True,
                              check=True, cwd="/")
        records[name] = {"dump": dump, **json.loads(done.stdout)}
    OUT.write_text(json.dumps({"reference_version": "0.3.0", "corpus": CORPUS, "docs": DOCS, "models": records},
                              indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
