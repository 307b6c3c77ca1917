"""A fit of str documents, and saving its model, import no numpy (issue 12: a fit's peak memory
no higher than HF tokenizers'; ``import numpy`` alone is ~14 MB of it). numpy comes in only
when something needs it - and then the public arrays are numpy arrays as before."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ubpe import UBPE, UBPEClassic
from ubpe.fit import PartCounts, count_documents
from ubpe.splitting import WORDS, SplitMode

# a fit on one thread and one on two (2.2M symbols: two threads each get their 1M), each
# dumped and saved; prints whether numpy was imported, then what each fit wrote
FIT = textwrap.dedent("""
    import hashlib, os, random, sys, tempfile, warnings
    warnings.simplefilter("ignore")
    {first}
    from ubpe import UBPE, UBPEClassic
    from ubpe.splitting import WORDS
    rng = random.Random(12)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 7))) for _ in range(3000)]
    small = [" ".join(rng.choice(words) for _ in range(40)) + ", 12 it's." for _ in range(300)]
    large = [" ".join(rng.choice(words) for _ in range(2000)) for _ in range(250)]
    alphabet = sorted(set("".join(small + large)))
    out = []
    for cls, docs, threads in ((UBPE, small, 1), (UBPEClassic, small, 1), (UBPE, large, 2)):
        tok = cls(alphabet=alphabet, n_tokens=400, regex_str=WORDS)
        tok.fit(docs, quiet=True, n_threads=threads)
        path = os.path.join(tempfile.mkdtemp(), "model.json")
        tok.save(path)
        saved = open(path, encoding="utf-8").read()
        out.append(hashlib.sha256((tok.dumps() + saved).encode()).hexdigest())
    print("numpy" in sys.modules)
    print(" ".join(out))
""")


def run_fit(first: str = "") -> list[str]:
    result = subprocess.run([sys.executable, "-c", FIT.format(first=first)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.split("\n")


def test_fit_dumps_and_save_import_no_numpy():
    imported, written = run_fit()[:2]
    assert imported == "False"
    # the same models as a process that has numpy (and so takes the paths made for it)
    assert run_fit("import numpy")[:2] == ["True", written]


@pytest.mark.parametrize("cls", [UBPE, UBPEClassic])
def test_fitted_arrays_are_numpy_arrays(cls):
    tok = cls(alphabet="ab ", n_tokens=5, regex_str=WORDS)
    tok.fit(["ab ab ba", "abab ba", "aab"], quiet=True)
    vocab = tok.vocabulary
    expected = {"merges": np.int32, "piece_offsets": np.int64, "piece_symbols": np.int32,
                "weights": np.float64, "ranks": np.int64}
    for name, dtype in expected.items():
        array = getattr(vocab, name)
        assert isinstance(array, np.ndarray) and array.dtype == dtype, name
    assert vocab.merges.shape == (vocab.n_merged, 2)
    assert vocab.merges.tolist() == [list(pair) for pair in vocab.pairs().values()]
    assert [vocab.piece(t).tolist() for t in range(vocab.n_base, len(vocab))] == [
        list(p) for p in vocab.pieces().values()
    ]


def test_part_counts_read_as_numpy_and_compare():
    pipeline = UBPE(alphabet="ab ", n_tokens=8, regex_str=WORDS).split_pipeline
    docs = ["ab ab ba", "abab ba", "aab"]
    native = count_documents(docs, pipeline.split_batch, native=pipeline.native_fit_tables(SplitMode.FULL))
    python = count_documents(docs, pipeline.split_batch)
    assert native == python
    assert isinstance(native.weights, np.ndarray) and native.weights.dtype == np.int64
    assert native.weights.tolist() == [1, 1, 2, 1, 1] and native.docs.tolist() == [0, 0, 0, 1, 1, 2]
    assert PartCounts.merge([native, python]).n_docs == 6
