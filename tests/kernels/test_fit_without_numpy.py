"""A fit of str documents (under a native split pattern or none) or of int lists, and saving
its model, import no numpy (issue 12: a fit's peak memory no higher than HF tokenizers';
``import numpy`` alone is ~14 MB of it). numpy comes in only when something needs it - and
then the public arrays are numpy arrays as before. The kernel paths that make this possible
(``PartCounter.add_text`` with ``WHOLE_DOCUMENTS``, ``PartCounter.add_values``) count what
the splitter cuts."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe import UBPE, UBPEClassic
from ubpe.alphabet import Alphabet
from ubpe.errors import SymbolTypeError, UnknownSymbolError
from ubpe.fit import PartCounts, count_documents
from ubpe.splitting import WORDS, SplitMode, SplitPipeline

# fits on one thread and on two (2.2M symbols: two threads each get their 1M), of text under
# the words split or none, of int lists, each dumped and saved; prints whether numpy was
# imported, then what each fit wrote
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
    ints = [[rng.randrange(50) // 4 for _ in range(rng.randint(0, 400))] for _ in range(200)]
    alphabet = sorted(set("".join(small + large)))
    out = []
    for cls, docs, threads, regex in ((UBPE, small, 1, WORDS), (UBPEClassic, small, 1, WORDS), (UBPE, large, 2, WORDS),
                                      (UBPE, small, 1, None), (UBPEClassic, ints, 1, None), (UBPE, ints, 1, None)):
        tok = cls(alphabet=range(13) if docs is ints else alphabet, n_tokens=400, regex_str=regex)
        tok.fit(docs, quiet=True, threads=threads)
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


def unused(*args, **kwargs):
    raise AssertionError("the kernel counts every chunk itself")


@settings(max_examples=150, deadline=None)
@given(docs=st.lists(st.text(alphabet="ab c\u00e9\u5b57", max_size=30), min_size=1, max_size=12),
       chunk_symbols=st.integers(1, 40), n_threads=st.integers(1, 3))
def test_text_nothing_splits_is_counted_by_the_kernel_as_the_split_cuts_it(docs, chunk_symbols, n_threads):
    pipeline = SplitPipeline(Alphabet.from_spec("ab c\u00e9\u5b57"))
    native = pipeline.native_fit_tables(SplitMode.FULL)
    assert native is not None and native[1] == -1  # WHOLE_DOCUMENTS
    counts = count_documents(docs, unused, n_threads=n_threads, chunk_symbols=chunk_symbols, native=native)
    assert counts == PartCounts.of_batch(pipeline.split_batch(docs))


int_docs = st.lists(st.lists(st.integers(-3, 5), max_size=30) | st.tuples(st.integers(-3, 5), st.integers(-3, 5)),
                    min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(docs=int_docs, chunk_symbols=st.integers(1, 40), n_threads=st.integers(1, 3))
def test_int_lists_are_counted_by_the_kernel_as_the_split_cuts_them(docs, chunk_symbols, n_threads):
    pipeline = SplitPipeline(Alphabet.from_spec(list(range(-3, 6))))
    native = pipeline.native_fit_tables(SplitMode.FULL)
    assert native is not None and native[0] is None and native[3] == -3
    counts = count_documents(docs, unused, n_threads=n_threads, chunk_symbols=chunk_symbols, native=native)
    assert counts == PartCounts.of_batch(pipeline.split_batch(docs))


def test_what_the_kernel_does_not_take_goes_to_the_split():
    pipeline = SplitPipeline(Alphabet.from_spec([0, 1, 2]))
    native = pipeline.native_fit_tables(SplitMode.FULL)
    with pytest.raises(UnknownSymbolError, match="document 1"):
        count_documents([[0, 1], [1, 2, 7]], pipeline.split_batch, native=native)
    with pytest.raises(UnknownSymbolError):
        count_documents([[0, 1], [-1, 2]], pipeline.split_batch, native=native)
    bools = [[0, 1], [True, 2]]  # whatever the split makes of a bool, the fit does too
    assert count_documents(bools, pipeline.split_batch, native=native) == PartCounts.of_batch(pipeline.split_batch(bools))
    big = [[0, 1], [2**70, 1]]  # no int64: the split reports it
    with pytest.raises((UnknownSymbolError, SymbolTypeError)):
        count_documents(big, pipeline.split_batch, native=native)
    # numpy arrays and str documents are the split's too, counted the same
    docs = [np.array([0, 1, 1, 0]), [0, 1]]
    assert count_documents(docs, pipeline.split_batch, native=native) == PartCounts.of_batch(pipeline.split_batch(docs))
    text = SplitPipeline(Alphabet.from_spec("ab"))
    with pytest.raises(UnknownSymbolError, match="document 1"):
        count_documents(["ab", "abc"], text.split_batch, native=text.native_fit_tables(SplitMode.FULL))
    assert SplitPipeline(Alphabet.from_spec([0, 1]), break_tokens=[1]).native_fit_tables(SplitMode.FULL) is None
    assert SplitPipeline(Alphabet.from_spec("ab"), stop_tokens="b").native_fit_tables(SplitMode.FULL) is None


def test_the_new_kernel_entries_check_their_arguments():
    from array import array

    from ubpe_native._parts import PartCounter
    from ubpe_native._pretokenize import or_classes

    counter = PartCounter()
    table = array("i", [0, 1, -1])
    with pytest.raises(ValueError, match="doc_offsets"):
        counter.add_values(array("q", [0, 1]), array("q", [0, 3]), table, 0)
    with pytest.raises(ValueError, match="doc_offsets"):
        counter.add_values(array("q", [0, 1]), array("q", [1, 2]), table, 0)
    assert counter.add_values(array("q", [2**62, 0]), array("q", [0, 2]), table, -(2**62)) == 0  # no overflow
    assert counter.add_values(array("q", [-(2**63), 0]), array("q", [0, 2]), table, 0) == 0
    assert counter.n_docs == 0  # nothing counted on an unknown value
    with pytest.raises(ValueError, match="classes must hold"):  # (needed by any pattern but WHOLE_DOCUMENTS)
        counter.add_text(b"ab", array("q", [0, 2]), array("H"), 99, table)
    classes = array("H", [0] * 4)
    with pytest.raises(ValueError, match="start..stop"):
        or_classes(classes, array("I", [1, 2]), 1, 3, 1)
    with pytest.raises(ValueError, match="past the table"):
        or_classes(classes, array("I", [1, 9]), 0, 2, 1)
    assert classes.tolist() == [0, 0, 0, 0]  # checked before any entry is written
