"""CLIP's merges file (issue 26, point 6) against open_clip 3.3.0's ``SimpleTokenizer``, the reference.

The file (``bpe_simple_vocab_16e6.txt.gz``) and open_clip's ``tokenizer.py`` both come from the
pinned open-clip-torch sdist in the data cache. The reference module imports torch, which only
its padded ``__call__`` uses: it is run from the sdist's source with a stand-in ``torch`` made of
the four numpy calls ``__call__`` needs (``zeros``, ``tensor``, ``long``, the tensor types of its
annotations) - tokenisation itself never touches it, and torch is not installed.

Compared on every text of `vocab_corpora.varied_texts` (1,100+: prose, the UDHR's scripts, Python
source, random code points, whitespace runs, emoji) plus texts for CLIP's cleaning (HTML
entities, mojibake, upper case, special tokens spelled in the text): the ids, the padded
``__call__`` rows at several context lengths, and ``decode`` of every encoding and of random ids.
Every encoder of the registry runs on the file and decodes to the text the native ids decode to.
"""

from __future__ import annotations

import functools
import gzip
import os
import pickle
import sys
import tarfile
import types
import unicodedata
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe
from ubpe.encoders import available_encoders
from ubpe.errors import InvalidParameterError, ModelFormatError, UnknownTokenError
from ubpe.files import read_head
from ubpe.io import FORMATS, detect
from ubpe.io import clip as clip_io

from ubpe.lab.datasets import DataNotInstalledError
from experiments.datasets.sources import archive_path
from vocab_corpora import shipped_file, varied_texts

CLIP_PACKAGE = "open-clip-torch"
MERGES_GLOB = "*/src/open_clip/bpe_simple_vocab_16e6.txt.gz"
TOKENIZER_MEMBER = "open_clip_torch-3.3.0/src/open_clip/tokenizer.py"
MIN_TEXTS = 1000
# encoders that need options to run at all
OPTIONS = {"additive": {"score": float}}
# what CLIP's cleaning and regex are for
CLIP_TEXTS = ["A photo of a CAT", "caf&eacute; &amp;amp; cr&egrave;me", "fa&#231;ade &lt;b&gt;", "Ã©tÃ© mojibake",
              "It'S I'M they'LL", "<start_of_text>a photo<end_of_text>", "x<START_OF_TEXT>y", "!<end_of_text>",
              "</w> a</w>b", "  \u00a0\u2003 spaced\u3000out  ", "ǅungla ﬁ ß İ", "ＡＢＣ①②"]


def merges_path():
    return shipped_file(CLIP_PACKAGE, MERGES_GLOB)


@functools.lru_cache(maxsize=1)
def _reference_module():
    """open_clip's ``tokenizer.py`` from the sdist, run with a numpy stand-in for torch."""
    pytest.importorskip("ftfy")
    path = merges_path()
    try:
        with tarfile.open(archive_path(CLIP_PACKAGE)) as archive:
            source = archive.extractfile(TOKENIZER_MEMBER).read().decode("utf-8")
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    torch = types.ModuleType("torch")
    torch.Tensor = torch.LongTensor = np.ndarray
    torch.long = np.int64
    torch.zeros = lambda *shape, dtype=None: np.zeros(shape, dtype=dtype)
    torch.tensor = np.asarray
    module = types.ModuleType("open_clip_tokenizer")
    module.__file__ = str(path.with_name("tokenizer.py"))  # its default_bpe() is the file beside it
    # the stand-in only while the module runs; and it sets TOKENIZERS_PARALLELISM: undone after
    with mock.patch.dict(sys.modules, {"torch": torch}), mock.patch.dict(os.environ):
        exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


@functools.lru_cache(maxsize=1)
def _pair():
    """``(ours, open_clip's)`` tokenizers of the shipped file."""
    path = merges_path()
    return ubpe.load(path), _reference_module().SimpleTokenizer(str(path))


@functools.lru_cache(maxsize=1)
def _texts() -> tuple[str, ...]:
    texts = tuple(varied_texts()) + tuple(CLIP_TEXTS)
    assert len(texts) >= MIN_TEXTS
    return texts


# -- the shipped file against open_clip ------------------------------------------------------------

def test_ids_equal_open_clips_on_every_text():
    ours, reference = _pair()
    texts = _texts()
    expected = [reference.encode(text) for text in texts]
    differ = [text for text, ids in zip(texts, expected) if ours.encode(text) != ids]
    assert not differ, f"{len(differ)}/{len(texts)} texts differ, first: {differ[0][:80]!r}"
    assert ours.encode_batch(list(texts)) == expected
    assert [ids for ((ids, _),) in ours.encode_batch_with(texts)] == expected  # encode_with's default
    sot, eot = reference.sot_token_id, reference.eot_token_id
    assert ours.encode(texts[0], add_special=True) == [sot, *expected[0], eot]


@pytest.mark.parametrize("context_length", [1, 2, 16, 77])
def test_padded_rows_are_open_clips_call(context_length):
    """``tokenize`` is ``SimpleTokenizer.__call__``: start, ids, end, zeros; a long text is cut
    and ends with the end token."""
    ours, reference = _pair()
    texts = list(_texts()[::7])
    expected = reference(texts, context_length=context_length)
    assert np.array_equal(ours.tokenize(texts, context_length=context_length), expected)
    assert np.array_equal(ours.tokenize(texts[0]), reference(texts[0]))
    assert ours.tokenize([]).shape == (0, 77)


@pytest.mark.parametrize("context_length", [0, -1, 2.5, True])
def test_a_context_length_below_one_is_refused(context_length):
    ours, _ = _pair()
    with pytest.raises(InvalidParameterError, match="context_length"):
        ours.tokenize("a cat", context_length=context_length)


def test_decode_is_open_clips_on_every_encoding():
    """CLIP's decode writes a space for every ``</w>`` (so a decoded text ends with one):
    ubpe's is the same text wherever the reference's is, which is every text."""
    ours, reference = _pair()
    differ = []
    for text in _texts():
        ids = reference.encode(text)
        if ours.decode(ids) != reference.decode(ids) or ours.decode(ours.encode(text)) != reference.decode(ids):
            differ.append(text)
    assert not differ, f"{len(differ)}/{len(_texts())} decode differently, first: {differ[0][:80]!r}"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 49407), max_size=30))
def test_decode_of_any_ids_is_open_clips(ids):
    """Any ids, special ones and bytes that are not UTF-8 included: ``</w>`` is read in the
    joined text, so two tokens may spell it."""
    ours, reference = _pair()
    assert ours.decode(ids) == reference.decode(ids)


def test_every_id_is_open_clips():
    ours, reference = _pair()
    assert ours.n_vocab == reference.vocab_size
    assert [ours.special_ids["bos"], ours.special_ids["eos"]] == reference.all_special_ids
    assert [ours.id_to_piece(i) for i in range(ours.n_vocab)] == [reference.decoder[i] for i in range(ours.n_vocab)]
    with pytest.raises(UnknownTokenError):
        ours.decode([reference.vocab_size])


# sample (its weights fitted first: ~4 s) runs with the long tests
@pytest.mark.parametrize("encoder", [pytest.param(e, marks=pytest.mark.long) if e == "sample" else e
                                     for e in available_encoders()])
def test_every_encoder_runs_on_clips_tokens(encoder):
    """Every encoder segments the same words into CLIP tokens: decoded, the native ids' text.
    (``sample`` needs weights, which a merges file has none of: refused without, run with.)"""
    ours, reference = _pair()
    options = dict(OPTIONS.get(encoder, {}))
    if encoder == "sample":
        with pytest.raises(InvalidParameterError, match="fit_weights"):
            ours.encode_with("a cat", encoder)
        options["weights"] = -np.ones(len(ours.vocabulary))  # every token costs the same: few tokens
    for text in _texts()[::4]:
        ((ids, score),) = ours.encode_with(text, encoder, **options)
        assert ours.decode(ids) == reference.decode(reference.encode(text)), (encoder, text[:80])
        assert all(0 <= token < ours.n_vocab for token in ids)
        assert np.isfinite(score)
        if encoder == "ranked":
            assert ids == reference.encode(text)


# -- format, detection, the model's surface ----------------------------------------------------------

def test_detected_as_clip_and_by_no_other_format():
    path = merges_path()
    assert detect(path) == "clip"
    assert [row.name for row in FORMATS.values() if row.detect(read_head(path))] == ["clip"]


def test_files_of_the_other_formats_are_not_clip(tmp_path):
    tok = ubpe.ByteLevelBPE().fit(["hello hello world"] * 3, n_tokens=262, quiet=True)
    for fmt in ("ubpe", "tiktoken", "hf", "minbpe"):
        path = tmp_path / f"model.{fmt}"
        ubpe.save(tok, path, format=fmt)
        assert not clip_io.detect(read_head(path)) and detect(path) == fmt
    assert not clip_io.detect(gzip.compress(b"just some text\nin two lines\n"))


def test_the_tokenizer_contract():
    ours, _ = _pair()
    doc = "Hello wörld 🦙 <end_of_text>"
    ids = ours.encode(doc)
    assert b"".join(ours.pieces(ids)).decode() == ours.decode(ids) == "hello wörld 🦙 <end_of_text>"
    inventory = ours.inventory()
    assert len(inventory.ids) == ours.n_vocab == len(set(inventory.ids))
    assert ours.inventory().merges[ours.encode("the")[0]]
    info = ours.describe()
    assert info["variant"] == "clip" and info["n_merges"] == 48894 and info["context_length"] == 77


def test_read_only_and_pickles(tmp_path):
    ours, _ = _pair()
    with pytest.raises(InvalidParameterError, match="read-only"):
        ubpe.save(ours, tmp_path / "model.json")
    copy = pickle.loads(pickle.dumps(ours))
    assert copy.encode(CLIP_TEXTS[0]) == ours.encode(CLIP_TEXTS[0])


def test_without_ftfy_loading_names_the_extra(monkeypatch):
    from ubpe.text import clip as clip_text

    monkeypatch.setitem(sys.modules, "ftfy", None)
    clip_text._fix_text.cache_clear()
    try:
        with pytest.raises(InvalidParameterError, match=r"ubpe\[clip\]"):
            ubpe.load(merges_path())
    finally:
        clip_text._fix_text.cache_clear()


# -- small and broken files ----------------------------------------------------------------------------

def _write(tmp_path, text: str, packed: bool = True):
    path = tmp_path / ("merges.txt.gz" if packed else "merges.txt")
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if packed else data)
    return path


def test_a_small_file_reads_as_open_clip_reads_it(tmp_path):
    text = "#version: 0.2\nc a\nca t</w>\nt h\nth e</w>\n"
    path = _write(tmp_path, text)
    reference = _reference_module().SimpleTokenizer(str(path))
    ours = ubpe.load(path)
    for doc in ("the cat", "The CAT sat", "a", "", "cat<end_of_text>", "théâtre"):
        assert ours.encode(doc) == reference.encode(doc)
    assert ubpe.load(_write(tmp_path, text, packed=False), format="clip").encode("the cat") == ours.encode("the cat")


@pytest.mark.parametrize(("text", "message"), [
    ("i n\nt h\n", "#version"),
    ("#version: 0.2\ni n x\n", "line 2"),
    ("#version: 0.2\ni n\n\nt h\n", "line 3"),
    ("#version: 0.2\nin g\n", "line 2: 'in'"),
    ("#version: 0.2\ni ☃\n", "line 2"),
])
def test_a_broken_file_is_a_clear_error(tmp_path, text, message):
    with pytest.raises(ModelFormatError, match=message):
        ubpe.load(_write(tmp_path, text), format="clip")


def test_a_truncated_or_not_utf8_file_is_a_clear_error(tmp_path):
    packed = merges_path().read_bytes()
    path = tmp_path / "cut.gz"
    path.write_bytes(packed[: len(packed) // 2])
    assert detect(path) == "clip"
    with pytest.raises(ModelFormatError, match="gzip"):
        ubpe.load(path)
    path.write_bytes(gzip.compress(b"#version: 0.2\n\xff\xfe\n"))
    with pytest.raises(ModelFormatError, match="UTF-8"):
        ubpe.load(path, format="clip")


# -- CLIP as HF tokenizers writes it: tokenizer.json with end_of_word_suffix ----------------------

@functools.lru_cache(maxsize=1)
def _hf_pair(folder: str):
    """``(ours, HF tokenizers')`` of CLIP's tokenizer.json, as transformers' converter writes it."""
    tokenizers = pytest.importorskip("tokenizers")
    from hf_builders import clip as clip_tokenizer_json

    path = f"{folder}/clip_tokenizer.json"
    clip_tokenizer_json().save(path)
    return ubpe.load(path), tokenizers.Tokenizer.from_file(path)


@pytest.fixture(scope="module")
def hf_pair(tmp_path_factory):
    return _hf_pair(str(tmp_path_factory.mktemp("clip_hf")))


def _unassigned_in_python(text: str) -> bool:
    """Whether ``text`` holds a code point Python's Unicode tables (14.0 in 3.11) leave unassigned."""
    return any(unicodedata.category(c) == "Cn" for c in text)


def test_clip_tokenizer_json_gives_hf_tokenizers_ids(hf_pair):
    """The HF file reads as an end-of-word BPE and gives tokenizers' ids, with and without the
    start and end tokens, and its decoder's text. Where HF's regex engine (Oniguruma, older
    Unicode tables) cuts a text into other words than the `regex` module does - only texts
    holding code points assigned in recent Unicode versions - the words differ before the model
    sees them: those texts are counted, not compared."""
    ours, reference = hf_pair
    assert ours.variant == "hf:bytelevel-suffix" and ours.describe()["end_of_word_suffix"] == "</w>"
    texts = _texts()
    pre, norm = reference.pre_tokenizer, reference.normalizer
    same_words = [t for t in texts
                  if [w for w, _ in pre.pre_tokenize_str(norm.normalize_str(t))] ==
                  ours.pipeline.pre.words(norm.normalize_str(t), True)
                  or not _unassigned_in_python(t)]
    assert len(texts) - len(same_words) <= 20 and len(same_words) >= MIN_TEXTS
    differ = [t for t in same_words if ours.encode(t) != reference.encode(t, add_special_tokens=False).ids]
    assert not differ, f"{len(differ)}/{len(same_words)} texts differ, first: {differ[0][:80]!r}"
    framed = [t for t in same_words[::5] if ours.encode(t, add_special=True) != reference.encode(t).ids]
    assert not framed
    for text in same_words[::5]:
        ids = reference.encode(text).ids
        assert ours.decode(ids) == reference.decode(ids)


def test_clip_tokenizer_json_and_the_merges_file_agree(hf_pair):
    """HF's CLIP and open_clip's on texts their cleanings agree on (printable ASCII and
    whitespace: no HTML entity, mojibake or control character for ftfy to mend): the same ids."""
    ours, _ = hf_pair
    clip, _ = _pair()
    texts = [t for t in _texts() if t.isascii() and all(c.isprintable() or c in "\n\t" for c in t)
             and "&" not in t and "<" not in t]
    assert len(texts) >= 300
    assert [ours.encode(t) for t in texts] == [clip.encode(t) for t in texts]


@pytest.mark.parametrize("encoder", ["fewest", "longest_prefix", "tfidf", "ranked", "dropout"])
def test_every_encoder_runs_on_the_tokenizer_json(hf_pair, encoder):
    ours, _ = hf_pair
    for text in _texts()[::20]:
        ((ids, _),) = ours.encode_with(text, encoder)
        assert ours.decode(ids) == ours.decode(ours.encode(text))
        if encoder == "ranked":
            assert ids == ours.encode(text)


def test_a_character_level_suffix_is_refused(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(vocab={"a</w>": 0, "a": 1}, merges=[],
                                                     end_of_word_suffix="</w>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    with pytest.raises(ModelFormatError, match="end_of_word_suffix.*character-level"):
        ubpe.load(path)
