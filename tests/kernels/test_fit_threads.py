"""A list corpus is split and counted in chunks, on threads (issue 12): the vocabulary must be
the one of the whole corpus split at once, whatever the chunk size and the number of threads;
and importing ubpe must stay light."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe.fit as fit_module
from ubpe import UBPE, UBPEClassic
from ubpe.alphabet import Alphabet
from ubpe.errors import UnknownSymbolError
from ubpe.fit import PartCounts, count_documents, fit_vocabulary
from ubpe.splitting import WORDS, SplitMode, SplitPipeline

# few symbols and short documents: many pairs tie in occurrences (and in documents)
texts = st.lists(st.text(alphabet="ab c", max_size=30), min_size=1, max_size=12)


def merges(parts, n_base: int, n_tokens: int = 40, n_candidates: int = 3):
    vocabulary = fit_vocabulary(parts, n_base=n_base, n_tokens=n_tokens, n_candidates=n_candidates, quiet=True)
    return vocabulary.pieces(), vocabulary.weight_of()


@settings(max_examples=150, deadline=None)
@given(docs=texts, chunk_symbols=st.integers(1, 40), n_threads=st.integers(1, 4))
def test_chunked_threaded_counts_fit_like_the_whole_split(docs, chunk_symbols, n_threads):
    pipeline = SplitPipeline(Alphabet.from_spec("ab c"), break_tokens=" ")
    whole = pipeline.split_batch(docs)  # the corpus split at once, as ubpe 0.3.0 does
    counts = count_documents(docs, pipeline.split_batch, n_threads=n_threads, chunk_symbols=chunk_symbols)
    assert counts == PartCounts.of_batch(whole)
    assert merges(counts, 4) == merges(whole, 4)


NATIVE_ALPHABET = "ab _'s9.,\né字"
native_texts = st.lists(st.text(alphabet=NATIVE_ALPHABET, max_size=40), min_size=1, max_size=10)


@settings(max_examples=200, deadline=None)
@given(docs=native_texts, chunk_symbols=st.integers(1, 60), n_threads=st.integers(1, 3),
       pattern=st.sampled_from(["words", "gpt2", "cl100k", "llama3", "o200k"]))
def test_the_kernels_one_pass_count_is_the_split_s(docs, chunk_symbols, n_threads, pattern):
    """PartCounter.add_text (scanner + counter in one pass) counts what split_batch cuts."""
    from ubpe.text.patterns import PATTERNS

    pipeline = SplitPipeline(Alphabet.from_spec(NATIVE_ALPHABET), regex_str=WORDS if pattern == "words" else PATTERNS[pattern])
    native = pipeline.native_fit_tables(SplitMode.FULL)
    assert native is not None

    def unused(*args, **kwargs):
        raise AssertionError("the kernel counts every chunk itself")

    counts = count_documents(docs, unused, n_threads=n_threads, chunk_symbols=chunk_symbols, native=native)
    assert counts == PartCounts.of_batch(pipeline.split_batch(docs))


def test_a_stream_is_counted_by_the_kernel_too():
    from ubpe.fit import count_stream

    pipeline = SplitPipeline(Alphabet.from_spec(NATIVE_ALPHABET), regex_str=WORDS)
    docs = ["ab ba's 99", "é字 ab_ab", "", "ba ba ab"] * 5

    def unused(*args, **kwargs):
        raise AssertionError("the kernel counts every chunk itself")

    counts = count_stream(iter(docs), unused, chunk_docs=3, native=pipeline.native_fit_tables(SplitMode.FULL))
    assert counts == PartCounts.of_batch(pipeline.split_batch(docs))


def test_the_one_pass_count_leaves_unknown_symbols_and_surrogates_to_the_split():
    pipeline = SplitPipeline(Alphabet.from_spec("ab \ud800"), regex_str=WORDS)
    native = pipeline.native_fit_tables(SplitMode.FULL)
    docs = ["ab ab", "ba \ud800ab", "abab"]  # a lone surrogate: no UTF-8, the split takes it
    assert count_documents(docs, pipeline.split_batch, native=native) == PartCounts.of_batch(pipeline.split_batch(docs))
    with pytest.raises(UnknownSymbolError, match="document 1"):
        count_documents(["ab", "abc"], pipeline.split_batch, native=native)


def test_counts_are_the_same_on_any_number_of_threads():
    rng = np.random.default_rng(12)
    docs = ["".join(rng.choice(list("ab c"), size=int(rng.integers(0, 200)))) for _ in range(300)]
    split = SplitPipeline(Alphabet.from_spec("ab c"), regex_str=WORDS).split_batch
    one = count_documents(docs, split, n_threads=1, chunk_symbols=256)
    assert one.n_docs == 300
    for n_threads in (2, 3, 8, 1000):
        assert count_documents(docs, split, n_threads=n_threads, chunk_symbols=256) == one


@settings(max_examples=100, deadline=None)
@given(docs=texts, cuts=st.lists(st.integers(0, 12), max_size=4))
def test_counters_of_consecutive_runs_absorbed_in_order_count_the_whole(docs, cuts):
    """PartCounter.absorb: the counters of consecutive runs of documents (empty runs too),
    each absorbing the next, count what one counter of all the documents counts."""
    from ubpe.fit import add_batch
    from ubpe_native._parts import PartCounter

    split = SplitPipeline(Alphabet.from_spec("ab c"), break_tokens=" ").split_batch
    bounds = [0, *sorted(min(cut, len(docs)) for cut in cuts), len(docs)]
    counters = []
    for first, last in zip(bounds, bounds[1:]):
        counters.append(PartCounter())
        add_batch(counters[-1], split(docs[first:last], first_doc=first))
    assert PartCounts.merge_counters(counters) == PartCounts.of_batch(split(docs))
    assert counters == []


def test_absorb_frees_the_absorbed_counter_and_checks_its_arguments():
    from ubpe_native._parts import PartCounter

    first, second = PartCounter(), PartCounter()
    second.add(np.array([0, 1], np.int32), np.array([0, 2]), np.array([0], np.int32), 1)
    with pytest.raises(ValueError, match="itself"):
        first.absorb(first)
    with pytest.raises(TypeError):
        first.absorb(None)
    first.absorb(second)
    assert (first.n_docs, first.n_parts, second.n_docs, second.n_parts) == (1, 1, 0, 0)
    for use in (second.export, lambda: PartCounter().absorb(second), lambda: second.absorb(PartCounter())):
        with pytest.raises(ValueError, match="absorbed"):
            use()


def stalled_first_chunk(pipeline: SplitPipeline, n_docs: int):
    """A split whose first chunk (the calling thread's) waits until another thread splits a
    later document of the first half: one that has taken over the back of the first run."""
    import threading

    caller, taken_over = threading.current_thread(), threading.Event()

    def split(chunk, first_doc):
        if first_doc == 0:
            taken_over.wait(timeout=10)
        elif first_doc < n_docs // 2 and threading.current_thread() is not caller:
            taken_over.set()
        return pipeline.split_batch(chunk, first_doc=first_doc)

    return split


def test_a_thread_that_runs_out_takes_over_the_back_of_another_run(monkeypatch):
    """Two runs of ten one-document chunks; the first chunk stalls until the other thread,
    done with the second run, has taken over the back half of the first: more counters than
    threads, the same counts as on one thread."""
    merged = []
    merge = PartCounts.merge_counters.__func__
    monkeypatch.setattr(PartCounts, "merge_counters", classmethod(
        lambda cls, counters: merged.append(len(counters)) or merge(cls, counters)))
    pipeline = SplitPipeline(Alphabet.from_spec("ab c"), regex_str=WORDS)
    docs = [f"{'ab' * k} c{'ba' * (20 - k)} {'abc'[k % 3] * 3}" for k in range(20)]
    split = stalled_first_chunk(pipeline, len(docs))
    counts = count_documents(docs, split, n_threads=2, chunk_symbols=len(docs[0]))
    assert counts == count_documents(docs, pipeline.split_batch, chunk_symbols=len(docs[0]))
    assert merged[0] > 2


def test_the_first_bad_document_is_named_whoever_counts_it():
    """A bad document at the end of the second run, and one in the back of the first, which
    the thread that failed on the former takes over (and may hand on): the error names the
    earlier."""
    pipeline = SplitPipeline(Alphabet.from_spec("ab c"), regex_str=WORDS)
    docs = ["ab ba"] * 20
    docs[8], docs[19] = "ab xa", "yb ba"  # (one document a chunk, as the others)
    split = stalled_first_chunk(pipeline, len(docs))
    with pytest.raises(UnknownSymbolError, match="document 8"):
        count_documents(docs, split, n_threads=2, chunk_symbols=len(docs[0]))


def test_an_interrupt_goes_before_the_errors_of_the_chunks():
    pipeline = SplitPipeline(Alphabet.from_spec("ab c"), regex_str=WORDS)
    docs = ["ab ba"] * 20
    docs[12] = "ab xa"  # in the other thread's run

    def split(chunk, first_doc):
        if first_doc == 0:  # the calling thread's first chunk, whatever the other has done
            raise KeyboardInterrupt
        return pipeline.split_batch(chunk, first_doc=first_doc)

    with pytest.raises(KeyboardInterrupt):
        count_documents(docs, split, n_threads=2, chunk_symbols=len(docs[0]))


def many_small_runs(monkeypatch) -> list[int]:
    """Small chunks, threads for any corpus size; returns the numbers of runs counted."""
    monkeypatch.setattr(fit_module, "LIST_CHUNK_SYMBOLS", 64)
    monkeypatch.setattr(fit_module, "THREAD_SYMBOLS", 1)
    seen: list[int] = []
    runs = fit_module._runs

    def spy(chunks, n_runs):
        seen.append(n_runs)
        return runs(chunks, n_runs)

    monkeypatch.setattr(fit_module, "_runs", spy)
    return seen


def test_small_corpora_are_counted_on_one_thread():
    split = SplitPipeline(Alphabet.from_spec("ab "), break_tokens=" ").split_batch
    assert fit_module.THREAD_SYMBOLS > 1000
    assert count_documents(["ab ba"] * 100, split, n_threads=4) == count_documents(["ab ba"] * 100, split)


@pytest.mark.parametrize("cls", [UBPE, UBPEClassic])
def test_fit_is_the_same_on_one_and_two_threads(cls, monkeypatch):
    seen = many_small_runs(monkeypatch)
    rng = np.random.default_rng(7)
    docs = ["".join(rng.choice(list("abcd  "), size=int(rng.integers(1, 120)))) for _ in range(200)]
    fitted = []
    for n_threads in (1, 2):
        tok = cls(alphabet="abcd ", n_tokens=60, regex_str=WORDS)
        tok.fit(docs, quiet=True, threads=n_threads, n_candidates=4)
        fitted.append((tok.tokens_mapper, tok.tokens_weights))
    assert fitted[0] == fitted[1]
    assert seen == [1, 2]


def test_an_unknown_symbol_is_named_in_the_first_bad_document_on_threads(monkeypatch):
    seen = many_small_runs(monkeypatch)
    docs = ["abab"] * 10 + ["abxb"] + ["ab"] * 10 + ["yb"]
    tok = UBPE(alphabet="ab", n_tokens=8)
    with pytest.raises(UnknownSymbolError, match="document 10"):
        tok.fit(docs, quiet=True, threads=2)
    assert seen == [2]


def test_threads_is_checked():
    from ubpe.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="threads must"):
        UBPE(alphabet="ab", n_tokens=4).fit(["abab"], quiet=True, threads=0)


# what `import ubpe` / `from ubpe import UBPE` and a quiet fit must not load: file formats,
# byte-level models, encoders' kernels, progress bars and what they pull in, and numpy (see
# tests/kernels/test_fit_without_numpy.py)
HEAVY = [
    "numpy", "asyncio", "ssl", "email", "urllib.request", "csv", "subprocess", "concurrent.futures", "tqdm", "dask", "pandas",
    "ubpe.io", "ubpe.models.bytelevel", "ubpe.models.bytelevel_trainer", "ubpe.encoders.tfidf",
    "ubpe.encoders.ambiguity", "ubpe.distributed.dask", "ubpe.cli", "ubpe_native._lattice", "ubpe_native._lattice_cache",
    "ubpe_native._spm", "ubpe_native._merges", "ubpe_native._classic",
]


@pytest.mark.parametrize("statement", [
    "import ubpe",
    "from ubpe import UBPE, UBPEClassic, Vocabulary, Alphabet",
    "from ubpe import UBPE; UBPE(alphabet='ab', n_tokens=4).fit(['abab', 'abba'], quiet=True, threads=1)",
])
def test_import_is_light(statement):
    code = textwrap.dedent(f"""
        import sys
        before = set(sys.modules)  # what start-up loaded (an editable install's import hook: subprocess)
        {statement}
        print(" ".join(m for m in {HEAVY!r} if m in sys.modules and m not in before))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == []


def test_lazy_names_resolve():
    import ubpe
    import ubpe.encoders
    import ubpe.models
    import ubpe.text

    assert set(ubpe.__all__) <= set(dir(ubpe))
    for name in ubpe.__all__:
        assert getattr(ubpe, name) is not None
    for package in (ubpe.encoders, ubpe.models, ubpe.text):
        for name in package.__all__:
            assert getattr(package, name) is not None
    with pytest.raises(AttributeError):
        ubpe.NoSuchName  # noqa: B018


@pytest.mark.parametrize("doc_chars, message", [
    ([1, 3], "start at 0"),
    ([0, 2, 1], "ascending"),
    ([0, 2], "end at the 3 characters"),
    ([0, 4], "end at the 3 characters"),
])
def test_add_text_checks_its_documents(doc_chars, message):
    from ubpe.splitting import split_classes
    from ubpe_native._parts import PartCounter

    table = np.array([-1] * 97 + [0, 1, -1], np.int32)
    counter = PartCounter()
    with pytest.raises(ValueError, match=message):
        counter.add_text(np.frombuffer(b"aba", np.uint8), np.array(doc_chars), split_classes(), 5, table)
    assert counter.n_docs == 0


def test_add_text_checks_its_tables_and_text():
    from ubpe.splitting import split_classes
    from ubpe_native._parts import PartCounter

    table = np.array([-1] * 97 + [0, 1, -1], np.int32)
    text, chars = np.frombuffer(b"ab", np.uint8), np.array([0, 2])
    with pytest.raises(ValueError, match="one entry per code point"):
        PartCounter().add_text(text, chars, np.zeros(10, np.uint16), 5, table)
    with pytest.raises(ValueError, match="pattern"):  # (63: no preset, below every compiled program's id;
        PartCounter().add_text(text, chars, split_classes(), 63, table)  # 99 was one after 36 compiles)
    with pytest.raises(ValueError, match="UTF-8"):
        PartCounter().add_text(np.frombuffer(b"a\xff", np.uint8), chars, split_classes(), 5, table)
    with pytest.raises(TypeError):
        PartCounter().add_text(None, chars, split_classes(), 5, table)


# -- the merge rounds on threads (issue 12): documents of a round's pairs counted on workers ----

@pytest.fixture
def threaded_rounds(monkeypatch):
    """Every round with two or more pairs to count goes to the workers (THREAD_POSITIONS = 0),
    which count them all (the calling thread only waits); returns the mergers built, to check
    that the workers did count."""
    built = []

    class Spy(fit_module.PairMerger):
        def __init__(self, *args):
            super().__init__(*args)
            built.append(self)

        def use_threads(self, n_threads, min_positions):
            return super().use_threads(n_threads, min_positions, True)

    monkeypatch.setattr(fit_module, "THREAD_POSITIONS", 0)
    monkeypatch.setattr(fit_module, "THREAD_SYMBOLS", 1)
    monkeypatch.setattr(fit_module, "PairMerger", Spy)
    return built


def merged(counts, n_threads, n_tokens, n_candidates, unique):
    from ubpe_native._fit import PairMerger

    merger = PairMerger(counts.tokens, counts.offsets, counts.docs, counts.n_docs, 4, unique, counts.weights,
                        counts.doc_offsets)
    if n_threads > 1:
        assert merger.use_threads(n_threads, 0, True) == n_threads
    while merger.next_token <= n_tokens and merger.step(n_candidates):
        pass
    return [a.tolist() for a in merger.merges()], merger.next_token, merger.worker_pairs


@settings(max_examples=150, deadline=None)
@given(docs=texts, n_candidates=st.integers(1, 8), unique=st.booleans(), n_tokens=st.integers(5, 60))
def test_threaded_rounds_merge_as_one_thread(docs, n_candidates, unique, n_tokens):
    """Few symbols, short documents: many candidates tie in occurrences, so documents are
    counted in most rounds (by the workers alone here); the merges, ids, documents and
    occurrences are those of one thread, with and without unique pieces."""
    pipeline = SplitPipeline(Alphabet.from_spec("ab c"), break_tokens=" ")
    counts = PartCounts.of_batch(pipeline.split_batch(docs))
    one = merged(counts, 1, n_tokens, n_candidates, unique)
    for n_threads in (2, 3):
        assert merged(counts, n_threads, n_tokens, n_candidates, unique)[:2] == one[:2]


def test_threaded_rounds_on_tied_candidates_use_the_workers():
    docs = ["ab ba ca", "ac bc", "cab abc", "ba cc"] * 3
    counts = PartCounts.of_batch(SplitPipeline(Alphabet.from_spec("ab c"), break_tokens=" ").split_batch(docs))
    for unique in (False, True):
        one = merged(counts, 1, 40, 4, unique)
        two = merged(counts, 2, 40, 4, unique)
        assert two[:2] == one[:2] and two[2] > 0


@pytest.mark.parametrize("cls", [UBPE, UBPEClassic])
@pytest.mark.parametrize("integers", [False, True])
def test_threaded_rounds_fit_as_one_thread(cls, integers, threaded_rounds):
    """Text and integer corpora with frequent pairs in many documents (rounds with large
    scans, documents by bit set and by marks) give the same model on 1, 2 and 3 threads."""
    rng = np.random.default_rng(3)
    words = ["".join(rng.choice(list("abcdef"), size=int(rng.integers(1, 7)))) for _ in range(60)]
    docs = [" ".join(rng.choice(words, size=int(rng.integers(1, 40)))) for _ in range(300)]
    if integers:  # unsplit integer symbols
        docs = [[ord(c) - 32 for c in doc] for doc in docs]
        options = dict(alphabet=sorted({s for doc in docs for s in doc}))
    else:
        options = dict(alphabet="abcdef ", regex_str=WORDS)
    fitted = []
    for n_threads in (1, 2, 3):
        tok = cls(n_tokens=120, **options)
        tok.fit(docs, quiet=True, threads=n_threads, n_candidates=8)
        fitted.append((tok.tokens_mapper, tok.tokens_weights))
    assert fitted[1] == fitted[0] and fitted[2] == fitted[0]
    assert [merger.worker_pairs > 0 for merger in threaded_rounds] == [False, True, True]


def test_golden_fits_on_threads(threaded_rounds):
    """ubpe 0.3.0's fits (the golden fixtures) with every round's documents on workers."""
    from test_fit_golden import CLASSES, assert_same_model, fixture_of, reference_dump, runs, settings_of

    for param in runs():
        path, index = param.values
        fixture = fixture_of(path)
        run = fixture["runs"][index]
        for n_threads in (2, 3):
            tok = CLASSES[run["variant"]](**settings_of(fixture))
            tok.fit(fixture["corpus"], n_candidates=run["n_candidates"], rearrange_tokens=run["rearrange"],
                    quiet=True, threads=n_threads)
            assert_same_model(json.loads(tok.dumps()), json.loads(reference_dump(fixture, run["dump"])))
    assert any(merger.worker_pairs > 0 for merger in threaded_rounds)


@pytest.mark.parametrize("n_threads", [0, -1, 1.5, True, "2"])
def test_fit_vocabulary_checks_n_threads(n_threads):
    from ubpe.errors import InvalidParameterError

    counts = PartCounts.of_batch(SplitPipeline(Alphabet.from_spec("ab "), break_tokens=" ").split_batch(["ab ab"]))
    with pytest.raises(InvalidParameterError, match="n_threads"):
        fit_vocabulary(counts, n_base=3, n_tokens=5, quiet=True, n_threads=n_threads)


def test_use_threads_is_checked_and_reversible():
    from ubpe_native._fit import PairMerger

    merger = PairMerger(np.array([0, 1, 0, 1], np.int32), np.array([0, 4]), np.array([0], np.int32), 1, 2)
    with pytest.raises(ValueError, match="n_threads"):
        merger.use_threads(0)
    with pytest.raises(ValueError, match="min_positions"):
        merger.use_threads(2, -1)
    assert merger.use_threads(4, 0) == 4
    assert merger.use_threads(1) == 1  # the workers are stopped
    assert merger.step(5) == 1 and merger.parallel_sections == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_merges_without_the_parents_workers():
    """A child forked while a merger has workers does every item itself, and frees the merger."""
    docs = ["ab ba ca", "ac bc", "cab abc", "ba cc"] * 3
    counts = PartCounts.of_batch(SplitPipeline(Alphabet.from_spec("ab c"), break_tokens=" ").split_batch(docs))
    expected = merged(counts, 1, 40, 4, False)[:2]
    from ubpe_native._fit import PairMerger

    merger = PairMerger(counts.tokens, counts.offsets, counts.docs, counts.n_docs, 4, False, counts.weights,
                        counts.doc_offsets)
    merger.use_threads(2, 0, True)  # (workers_only: in the child the caller must not wait for them)
    pid = os.fork()
    if pid == 0:  # the child: merge, compare, free, and leave without pytest's teardown
        ok = False
        try:
            while merger.next_token <= 40 and merger.step(4):
                pass
            ok = [a.tolist() for a in merger.merges()] == expected[0] and merger.worker_pairs == 0
            del merger
        finally:
            os._exit(0 if ok else 1)
    for _ in range(600):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    del merger  # the parent's workers stop as usual
