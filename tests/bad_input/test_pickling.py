"""Every tokenizer family pickles and deep-copies after it has encoded (issue 13, item 11):
once the compiled kernels built on first use (radix trees, merge tables) made ``pickle`` and
``deepcopy`` fail with "self.children cannot be converted to a Python object"; and on every
pickle protocol (issue 28, point 8: protocols 0 and 1 failed on the alphabet's slots). The copy
must encode exactly as the original, with every deterministic encoder, scores included."""

from __future__ import annotations

import copy
import pickle

import pytest

import ubpe
from bad_models import spm_model_bytes
from ubpe.encoders import available_encoders

OPTIONS = {"additive": {"score": float}}
FAMILIES = ["u", "i", "c", "b", "h", "mb", "g", "s", "unigram", "gguf-bert", "hf-wordpiece"]
_LOADED = {"gguf-bert", "hf-wordpiece"}  # the WordPiece models: read from llama.cpp's bert-bge


def _deterministic(name: str) -> bool:
    return name not in ("dropout", "sample")  # seeded streams continue from call to call


@pytest.fixture(scope="module")
def families(m, tmp_path_factory):
    path = tmp_path_factory.mktemp("unigram") / "unigram.model"
    path.write_bytes(spm_model_bytes("unigram"))
    found = {name: getattr(m, name) for name in FAMILIES if name != "unigram" and name not in _LOADED}
    found["unigram"] = ubpe.load(path)
    return found


def _wordpiece(family: str):
    from ubpe.io import hf_import
    from vocab_corpora import vocab_path

    if family == "gguf-bert":
        return ubpe.load(vocab_path("bert-bge"))
    import hf_builders

    return hf_import.from_json(hf_builders.bert().to_str())


def _encodings(tok, doc):
    return {name: tok.encode_with(doc, name, **OPTIONS.get(name, {}))
            for name in available_encoders() if _deterministic(name)}


HOWS = ["pickle", "deepcopy", *(f"pickle protocol {p}" for p in range(pickle.HIGHEST_PROTOCOL))]


def _copy(tok, how):
    if how == "deepcopy":
        return copy.deepcopy(tok)
    if how == "pickle":
        return pickle.loads(pickle.dumps(tok))
    return pickle.loads(pickle.dumps(tok, protocol=int(how.rsplit(" ", 1)[1])))


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("family", FAMILIES)
def test_copies_after_encoding_encode_the_same(families, family, how):
    tok = _wordpiece(family) if family in _LOADED else families[family]
    doc = [1, 2, 3, 1, 2, 0] if family == "i" else "the cat sat on the mat"
    for name in available_encoders():  # builds every kernel
        if name == "sample" and tok.score_kind() is None:
            continue  # refused on a model read without weights (tests/spec/test_imported_scores.py)
        tok.encode_with(doc, name, **OPTIONS.get(name, {}))
    if hasattr(tok, "fit_weights"):  # state that changed after loading travels too
        tok.fit_weights(["the cat sat", "a dog met the cat", "the log"])
    copied = _copy(tok, how)
    assert type(copied) is type(tok)
    assert _encodings(copied, doc) == _encodings(tok, doc)
    assert copied.encode(doc) == tok.encode(doc)
    ids = tok.encode_with(doc)[0][0]
    assert copied.decode(ids) == tok.decode(ids)



@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("name", ["falcon", "clip", "trained-words"])
def test_hf_files_with_a_native_program_copy(name, how):
    """A tokenizer.json whose pre-tokenizer runs as the kernel's program (which pickle cannot
    copy) is built again from its arguments, program and all, and batches alike."""
    import hf_builders
    from ubpe.io import hf_import

    tok = hf_import.from_json(hf_builders.BUILDERS[name]().to_str())
    docs = ["Hello, World! 12345 ²³", "the cat sat on the mat", "中文 x--y"]
    copied = _copy(tok, how)
    assert copied.describe()["pre_tokenization"] == tok.describe()["pre_tokenization"] == "native program"
    assert copied.encode_batch(docs, threads=2) == tok.encode_batch(docs) == [tok.encode(d) for d in docs]
