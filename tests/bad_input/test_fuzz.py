"""Fuzz lane: random model files and random documents; nothing but clear errors
(``UBPEError`` subclasses) or correct results (round trips).

Every target is marked ``slow``. The number of examples per target comes from the
environment variable ``UBPE_FUZZ_EXAMPLES`` (default 40, so the ordinary ``pytest`` run
tries each target briefly); the CI lane runs them with a larger, bounded budget
(``.ci/run``) and ``UBPE_FUZZ_EXAMPLES=10000 python -m pytest -m slow tests/bad_input``
is the full run. Targets:

- model files of every format, mutated (truncation, bit flips, inserted, deleted and
  overwritten bytes, NUL bytes, huge counts, JSON nested thousands deep, duplicated JSON keys),
  loaded with and without ``format=``, each case under a time bound (:data:`CASE_SECONDS`) and
  the whole lane under a memory bound (:data:`LANE_MEMORY`) - a hang or a runaway allocation
  fails the case instead of stalling CI;
- random JSON in each JSON format's shape (our envelope with a valid checksum, ubpe 0.3.0,
  HF ``tokenizer.json``) and random bytes behind each binary or text format's first bytes
  (GGUF magic, a protobuf tag, ``.tiktoken`` lines, minbpe's version line, CLIP's gzip'd
  merges);
- random documents through every encoder of the fitted families (universal text and ints,
  classic), also in batches as arrays (``encode_batch_to_numpy``), and through every loader
  family's ``encode`` / ``encode_with`` and ``decode``.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import struct
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe
from ubpe.encoders import available_encoders, encoder_info
from ubpe.errors import UBPEError, UnknownSymbolError

import audit

EXAMPLES = int(os.environ.get("UBPE_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None)
FORMATS = ("ubpe", "ubpe-bytelevel", "ubpe030", "tiktoken", "minbpe", "hf", "gguf", "sentencepiece")
READ_AS = {"ubpe-bytelevel": "ubpe"}  # the format= name of each file kind

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scratch():
    with tempfile.TemporaryDirectory(prefix="ubpe-fuzz-") as folder:
        yield Path(folder)


#: a case that takes longer than this fails (a reader super-linear in a field's size, a hang)
CASE_SECONDS = 20
#: the address space the lane's process may take (a reader allocating what a size field claims)
LANE_MEMORY = 8 << 30


class CaseTooSlow(Exception):
    """A fuzz case ran past :data:`CASE_SECONDS`."""


def _bounded(what: str):
    """Run one case under the time bound (SIGALRM: the main thread only, where pytest runs)."""
    return audit._alarm(CASE_SECONDS, CaseTooSlow(f"{what} took more than {CASE_SECONDS} s"))


@pytest.fixture(scope="module", autouse=True)
def lane_memory_bound():
    """The lane's address space bounded (Linux), so that an allocation of what a corrupt size
    field claims fails fast instead of swapping; restored after the module."""
    try:
        import resource
    except ImportError:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    under_asan = "libasan" in open("/proc/self/maps").read() if os.path.exists("/proc/self/maps") else False
    if under_asan or (soft != resource.RLIM_INFINITY and soft <= LANE_MEMORY):
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (LANE_MEMORY, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _load_or_clear_error(path: Path, format: str | None):
    """The tokenizer in ``path``, or None after a clear error; anything else fails."""
    try:
        with warnings.catch_warnings(), _bounded(f"loading {path.name} (format={format})"):
            warnings.simplefilter("ignore")
            return ubpe.load(path, format=format)
    except UBPEError:
        return None


def _use(tok, text: str = "the cat sat") -> None:
    """A model that loaded must work or refuse clearly: ids in range, decode takes them."""
    try:
        encoded = tok.encode(text)
    except UBPEError:
        return
    ids = encoded[0][0] if tok.variant in ("universal", "classic") else encoded
    assert all(0 <= i < tok.n_vocab for i in ids) or tok.variant == "bytelevel"
    try:
        tok.decode(ids)
    except UBPEError:
        pass


# -- model files -----------------------------------------------------------------------------

MUTATION = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.floats(0, 1), st.integers(0, 7)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 64)),
    st.tuples(st.just("overwrite"), st.floats(0, 1), st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("nul"), st.floats(0, 1)),
    st.tuples(st.just("huge count"), st.floats(0, 1), st.sampled_from([b"\xff" * 8, b"\xff\xff\xff\x7f",
                                                                         b"\x00\x00\x00\x80", b"99999999999999999999"])),
    st.tuples(st.just("nest"), st.floats(0, 1), st.integers(1, 5000)),
    st.tuples(st.just("duplicate key"), st.floats(0, 1)),
)


def _mutate(data: bytes, mutation: tuple) -> bytes:
    kind, where = mutation[0], int(mutation[1] * len(data))
    if kind == "truncate":
        return data[:where]
    if kind == "flip" and data:
        where = min(where, len(data) - 1)
        return data[:where] + bytes([data[where] ^ (1 << mutation[2])]) + data[where + 1:]
    if kind == "insert":
        return data[:where] + mutation[2] + data[where:]
    if kind == "delete":
        return data[:where] + data[where + mutation[2]:]
    if kind == "overwrite":
        return data[:where] + mutation[2] + data[where + len(mutation[2]):]
    if kind == "nul":
        return data[:where] + b"\x00" + data[where:]
    if kind == "huge count":
        return data[:where] + mutation[2] + data[where + len(mutation[2]):]
    if kind == "nest":  # an array nested deep, in place of whatever JSON value starts here
        return data[:where] + b"[" * mutation[2] + b"1" + b"]" * mutation[2] + data[where:]
    if kind == "duplicate key":  # a JSON object's key said again (JSON readers keep the last one)
        start = data.find(b'"', where)
        end = data.find(b'":', start + 1) if start >= 0 else -1
        if end < 0:
            return data
        brace = data.find(b"{")
        return data[:brace + 1] + data[start:end + 2] + b' null, ' + data[brace + 1:] if brace >= 0 else data
    return data


@pytest.mark.parametrize("kind", FORMATS)
def test_mutated_model_files(m, scratch, kind):
    original = m.files[kind].read_bytes()
    path = scratch / f"mutated-{m.files[kind].name}"

    @FUZZ
    @given(mutations=st.lists(MUTATION, min_size=1, max_size=3), explicit=st.booleans())
    def run(mutations, explicit):
        data = original
        for mutation in mutations:
            data = _mutate(data, mutation)
        path.write_bytes(data)
        tok = _load_or_clear_error(path, READ_AS.get(kind, kind) if explicit else None)
        if tok is not None:
            with _bounded(f"using a mutated {kind} model"):
                _use(tok)

    run()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


def _ours(body) -> str:
    from ubpe.io.ours import wrap_body

    return wrap_body(body)


def _our_body(m):
    """Bodies of our files: a real one with random values swapped in, or random objects."""
    from ubpe.io.ours import BODIES

    real = json.loads(m.files["ubpe"].read_text())["body"]
    real_bl = json.loads(m.files["ubpe-bytelevel"].read_text())["body"]
    keys = sorted(set(real) | set(real_bl))
    swapped = st.tuples(st.sampled_from([real, real_bl]), st.sampled_from(keys), JSON).map(
        lambda t: {**t[0], t[1]: t[2]})
    shaped = st.fixed_dictionaries({"variant": st.sampled_from(sorted(BODIES))}, optional={k: JSON for k in keys if k != "variant"})
    return st.one_of(swapped, shaped, st.dictionaries(st.text(max_size=8), JSON, max_size=6))


REFERENCE_FIELDS = ("n_tokens", "alphabet", "known_words", "break_tokens", "regex_str", "stop_tokens", "mapper", "weights")


@pytest.mark.parametrize("shape", ["ours", "ubpe030", "hf", "any"])
def test_random_json(m, scratch, shape):
    path = scratch / f"random-{shape}.json"
    reference = json.loads(m.files["ubpe030"].read_text())
    hf = json.loads(m.files["hf"].read_text())
    documents = {
        "ours": _our_body(m).map(_ours),
        "ubpe030": st.tuples(st.sampled_from(REFERENCE_FIELDS), JSON).map(
            lambda t: json.dumps({"n_tokens": reference["n_tokens"], **reference, t[0]: t[1]})),
        "hf": st.one_of(
            st.tuples(st.sampled_from(sorted(hf)), JSON).map(lambda t: json.dumps({**hf, t[0]: t[1]})),
            st.tuples(st.sampled_from(sorted(hf["model"])), JSON).map(
                lambda t: json.dumps({**hf, "model": {**hf["model"], t[0]: t[1]}}))),
        "any": JSON.map(json.dumps),
    }[shape]
    explicit_format = {"ours": "ubpe", "ubpe030": "ubpe030", "hf": "hf", "any": None}[shape]

    @FUZZ
    @given(text=documents, explicit=st.booleans())
    def run(text, explicit):
        path.write_text(text, encoding="utf-8")
        tok = _load_or_clear_error(path, explicit_format if explicit else None)
        if tok is not None:
            _use(tok)

    run()


def _tiktoken_lines(lines):
    return "".join(f"{base64.b64encode(piece).decode()} {rank}\n" for piece, rank in lines).encode()


PREFIXED = {
    "gguf": st.tuples(st.integers(0, 5), st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), st.binary(max_size=200)).map(
        lambda t: b"GGUF" + struct.pack("<IQQ", *t[:3]) + t[3]),
    "sentencepiece": st.binary(max_size=300).map(lambda b: b"\x0a" + bytes([len(b) % 128]) + b),
    "tiktoken": st.lists(st.tuples(st.binary(min_size=1, max_size=4), st.integers(0, 2**33)), max_size=40).map(
        _tiktoken_lines),
    "minbpe": st.lists(st.text(alphabet="0123456789 <>|abc\\w+\n-", max_size=12), max_size=12).map(
        lambda lines: ("minbpe v1\n" + "\n".join(lines)).encode()),
    # CLIP's merges: gzip'd lines after the header, and (raw) random bytes behind gzip's magic
    "clip": st.one_of(
        st.lists(st.text(alphabet="abc </w>\n\t\u0120é", max_size=10), max_size=20).map(
            lambda lines: gzip.compress(("#version: 0.2\n" + "\n".join(lines)).encode())),
        st.binary(max_size=200).map(lambda b: b"\x1f\x8b" + b)),
}


@pytest.mark.parametrize("kind", sorted(PREFIXED))
def test_random_bytes_behind_a_format_header(scratch, kind):
    path = scratch / f"random.{kind}"

    @FUZZ
    @given(data=PREFIXED[kind], explicit=st.booleans())
    def run(data, explicit):
        path.write_bytes(data)
        tok = _load_or_clear_error(path, kind if explicit else None)
        if tok is not None:
            _use(tok)

    run()


# -- documents -------------------------------------------------------------------------------

OPTIONS = {"additive": {"score": float}}
TEXT = st.text(alphabet=st.sampled_from("the cat sat on mat dog log and met a.z!é\n"), max_size=60)
ANY_TEXT = st.text(max_size=40)


def _nbest(name: str) -> bool:
    return encoder_info(name).supports_nbest


@pytest.mark.parametrize("family", ["u", "c"])
def test_random_text_documents_every_encoder(m, family):
    tok = getattr(m, family)

    @FUZZ
    @given(doc=TEXT, name=st.sampled_from(available_encoders()), top_n=st.integers(1, 4))
    def run(doc, name, top_n):
        top_n = top_n if _nbest(name) else 1
        try:
            encodings = tok.encode(doc, encoder=name, top_n=top_n, **OPTIONS.get(name, {}))
        except UnknownSymbolError:
            assert not tok.covers(doc)
            return
        assert 1 <= len(encodings) <= top_n
        for tokens, score in encodings:
            assert tok.decode(tokens) == doc
            assert np.isfinite(score)

    run()


@pytest.mark.parametrize("family", ["u", "c"])
def test_random_batches_as_arrays_every_encoder(m, family):
    """``encode_batch_to_numpy``: a clear error, or ``encode_batch``'s encodings, lossless."""
    tok = getattr(m, family)

    @FUZZ
    @given(docs=st.lists(TEXT, max_size=6), name=st.sampled_from(available_encoders()), top_n=st.integers(1, 3),
           threads=st.integers(1, 3))
    def run(docs, name, top_n, threads):
        top_n = top_n if _nbest(name) else 1
        options = OPTIONS.get(name, {})
        try:
            batch = tok.encode_batch_to_numpy(docs, encoder=name, top_n=top_n, threads=threads, **options)
        except UnknownSymbolError:
            assert not all(tok.covers(doc) for doc in docs)
            return
        assert len(batch) == len(docs)
        if tok.encoder(name, **options).deterministic:
            assert batch.tolist() == tok.encode_batch(docs, encoder=name, top_n=top_n, **options)
        for doc, encodings in zip(docs, batch):
            assert 1 <= len(encodings) <= top_n
            assert all(tok.decode(tokens) == doc for tokens, _ in encodings)

    run()


def test_random_integer_documents_every_encoder(m):
    tok = m.i

    @FUZZ
    @given(doc=st.lists(st.integers(-2, 9), max_size=60), name=st.sampled_from(available_encoders()),
           top_n=st.integers(1, 4), as_array=st.booleans())
    def run(doc, name, top_n, as_array):
        top_n = top_n if _nbest(name) else 1
        given_doc = np.asarray(doc, dtype=np.int64) if as_array else doc
        try:
            encodings = tok.encode(given_doc, encoder=name, top_n=top_n, **OPTIONS.get(name, {}))
        except UnknownSymbolError:
            assert any(not 0 <= s < 7 for s in doc)
            return
        for tokens, _ in encodings:
            assert tok.decode(tokens) == doc

    run()


LOSSLESS = {"b", "h", "mb", "g"}  # byte-level: every text round-trips; sentencepiece may map to <unk>


@pytest.mark.parametrize("family", ["b", "h", "mb", "g", "s"])
def test_random_documents_every_loader_family(m, family):
    tok = getattr(m, family)
    # (`sample` on a model read without weights is refused: tested in tests/spec/test_imported_scores.py)
    encoders = [None] + [n for n in available_encoders() if n not in OPTIONS
                         and not (n == "sample" and tok.score_kind() is None)]

    @FUZZ
    @given(doc=st.one_of(TEXT, ANY_TEXT), name=st.sampled_from(encoders))
    def run(doc, name):
        try:
            if name is None:
                ids = tok.encode(doc)
            else:
                ids = tok.encode_with(doc, name)[0][0]
        except UBPEError:
            assert family != "b"  # imported families refuse lone surrogates; ByteLevelBPE replaces them
            return
        assert all(0 <= i < tok.n_vocab for i in ids)
        text = tok.decode(ids)
        if family in LOSSLESS and not any("\ud800" <= c <= "\udfff" for c in doc):
            assert text == doc
        elif family == "s" and tok.covers(doc) and doc == " ".join(doc.split()) and not doc.startswith(" ") \
                and "\u2581" not in doc:  # (sentencepiece reads its space symbol as a space: "a▁b" -> "a b")
            assert text == doc

    run()
