"""GGUF tokenizer types beyond gpt2 and llama, exact against llama.cpp itself (issue 26, point 6):
``t5`` (llama.cpp's unigram tokenizer, UGM: ``ggml-vocab-nomic-bert-moe.gguf``) and
``gemma4`` (``ggml-vocab-gemma-4.gguf``, with llama.cpp's own ``.inp`` / ``.out`` tests).

The reference is llama.cpp built from the pinned llama-cpp-python sdist:
``tests/fixtures/make_llama_expected.py`` ran its ``llama_tokenize`` / ``llama_detokenize`` on
1,040 varied texts (`vocab_corpora.varied_texts`: prose, the UDHR's scripts, Python source,
random code points, whitespace runs, emoji, plus texts that reach each tokenizer's special
cases) and on variants of the t5 file that reach what the shipped file does not
(`vocab_corpora.T5_VARIANTS`). For t5, sentencepiece itself (a ``ModelProto`` built from the
GGUF's pieces, scores, types and charsmap) is the second reference; where the two disagree
llama.cpp wins for a GGUF, and each disagreement is pinned by a test below.

The fixture also holds llama.cpp's ids for ``bert-bge`` (WPM) for the WordPiece work.
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import ubpe
from ubpe.encoders import available_encoders
from ubpe.errors import InvalidParameterError, ModelFormatError
from ubpe.io import gguf as gguf_io
from ubpe.io import sentencepiece as spm_io

from vocab_corpora import SYNTHETIC, T5_VARIANTS, t5_near_tie, variant_metadata, vocab_path, write_gguf

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "llama_vocab_expected.json.gz"
T5, GEMMA4 = "nomic-bert-moe", "gemma-4"
MIN_TEXTS = 1000
# encoders that need options to run at all
OPTIONS = {"additive": {"score": float}}


@functools.lru_cache(maxsize=1)
def _expected() -> dict:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=1)  # the tests over both files run file by file (module-scoped parameters)
def _load(name: str):
    return gguf_io.read(vocab_path(name))


@functools.lru_cache(maxsize=1)  # the variants' tests run one variant after the other
def _variant(variant: str):
    return gguf_io.from_metadata(variant_metadata(T5, variant), where=f"{T5}~{variant}")


def _mismatches(tok, texts: list[str], expected: list[list[int]]) -> list[tuple[str, list[int], list[int]]]:
    return [(text, want, got) for text, want, got in zip(texts, expected, (tok.encode(t) for t in texts))
            if got != want]


# -- ids: every text of the corpus ------------------------------------------------------------------

@pytest.mark.parametrize("name", [T5, GEMMA4], scope="module")
def test_ids_equal_llama_cpp_on_every_text(name):
    record = _expected()
    texts, expected = record["texts"], record["vocabs"][name]["ids"]
    assert len(texts) >= MIN_TEXTS
    tok = _load(name)
    failed = _mismatches(tok, texts, expected)
    assert not failed, f"{len(failed)}/{len(texts)} texts differ, first: {failed[0]!r}"
    assert tok.encode_batch(texts, threads=2) == expected


@pytest.mark.parametrize("name", [T5, GEMMA4], scope="module")
def test_special_tokens_as_llama_cpp_adds_and_parses_them(name):
    record = _expected()
    tok = _load(name)
    got = [tok.encode(text, add_special=True, parse_special=True) for text in record["special_texts"]]
    assert got == record["vocabs"][name]["special_ids"]
    assert tok.encode_batch(record["special_texts"], add_special=True) == \
        [tok.encode(text, add_special=True) for text in record["special_texts"]]


@pytest.mark.parametrize("variant", list(T5_VARIANTS))
def test_t5_variants_equal_llama_cpp(variant):
    """What the shipped file does not reach: no dummy prefix asked for, spaces kept, no
    charsmap (llama.cpp then normalizes nothing), unused pieces worth choosing and user-defined
    pieces."""
    record = _expected()
    tok = _variant(variant)
    expected = record["variants"][variant]
    failed = _mismatches(tok, record["variant_texts"], expected["ids"])
    assert not failed, f"{len(failed)}/{len(record['variant_texts'])} texts differ, first: {failed[0]!r}"
    got = [tok.encode(text, add_special=True, parse_special=True) for text in record["special_texts"]]
    assert got == expected["special_ids"]


def test_gemma4_passes_llama_cpp_own_tests():
    tok = _load(GEMMA4)
    cases = gguf_io.read_vocab_tests(vocab_path(GEMMA4))
    assert len(cases) >= 40
    assert [tok.encode(text) for text, _ in cases] == [ids for _, ids in cases]
    assert all(tok.decode(tok.encode(text)) == text for text, _ in cases)


# -- decoding ----------------------------------------------------------------------------------------

@pytest.mark.long  # every text of the shipped file and of the four variants (~2.5 s)
def test_t5_decode_is_llama_cpp_detokenize():
    """On every text, the dummy prefix removed and ``<unk>`` written out, as
    ``llama_detokenize(..., unparse_special=true)``: where llama.cpp gives the text back
    (NFKC and whitespace rules left it alone), so does ubpe."""
    record = _expected()
    sources = [(_load(T5), record["texts"], record["vocabs"][T5])]
    sources += [(_variant(variant), record["variant_texts"], source) for variant, source in record["variants"].items()]
    for tok, texts, source in sources:
        for text, ids, back in zip(texts, source["ids"], source["decoded"]):
            assert tok.decode(ids) == (text if back is None else back), (tok.where, text[:60])


def test_gemma4_decode_round_trips_wherever_llama_cpp_does():
    """Where llama.cpp's detokenizer gives the text back, so does ubpe's decode. Elsewhere ubpe
    writes what llama.cpp writes (a literal ``▁`` comes back as a space), except that llama.cpp
    also cleans spaces before punctuation (``clean_spaces``, on for every BPE vocabulary:
    ``" !="`` comes back as ``"!="``) and ubpe gives the text back there."""
    record = _expected()
    tok = _load(GEMMA4)
    source = record["vocabs"][GEMMA4]
    cleaned = 0
    for text, ids, back in zip(record["texts"], source["ids"], source["decoded"]):
        ours = tok.decode(ids)
        if back is None or ours != back:
            assert ours == text, text[:80]
            cleaned += back is not None
    assert sum(back is None for back in source["decoded"]) >= MIN_TEXTS and cleaned


# -- sentencepiece, the second reference for t5 ------------------------------------------------------

def _spm_proto(metadata: dict) -> bytes:
    """A sentencepiece unigram ``ModelProto`` with a GGUF t5 tokenizer's pieces, scores, types,
    charsmap and whitespace flags."""
    pb2 = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    keys = gguf_io.Keys
    proto = pb2.ModelProto()
    for text, score, kind in zip(metadata[keys.LIST], metadata[keys.SCORES].tolist(),
                                 metadata[keys.TOKEN_TYPE].tolist()):
        proto.pieces.add(piece=text, score=score, type=kind)
    spec = proto.trainer_spec
    spec.model_type = pb2.TrainerSpec.UNIGRAM
    defaults = gguf_io.DEFAULT_SPECIAL_IDS["t5"]  # llama.cpp's, where the file names none
    spec.unk_id, spec.bos_id, spec.eos_id, spec.pad_id = (
        metadata.get(key, defaults.get(name, -1)) for key, name in (
            (keys.UNK_ID, "unk"), (keys.BOS_ID, "bos"), (keys.EOS_ID, "eos"), (keys.PAD_ID, "pad")))
    charsmap = metadata.get(keys.PRECOMPILED_CHARSMAP)
    if charsmap is not None:
        proto.normalizer_spec.precompiled_charsmap = charsmap.tobytes()
    proto.normalizer_spec.add_dummy_prefix = bool(metadata.get(keys.ADD_PREFIX, True))
    proto.normalizer_spec.remove_extra_whitespaces = bool(metadata.get(keys.REMOVE_EXTRA_WS, False))
    proto.normalizer_spec.escape_whitespaces = True
    return proto.SerializeToString()


@functools.lru_cache(maxsize=1)  # the variants' tests run one variant after the other
def _spm_pair(variant: str | None):
    spm = pytest.importorskip("sentencepiece")
    metadata = variant_metadata(T5, variant) if variant else gguf_io.read_metadata(vocab_path(T5))
    data = _spm_proto(metadata)
    return spm.SentencePieceProcessor(model_proto=data), spm_io.from_bytes(data)


def test_t5_sentencepiece_agrees_with_llama_cpp_on_the_shipped_file():
    """On nomic-bert-moe's own settings the two references agree on every text (unused pieces
    score -10,000, no user-defined pieces), and ubpe's sentencepiece reader of the same
    ModelProto gives sentencepiece's ids."""
    record = _expected()
    reference, ours = _spm_pair(None)
    texts = record["texts"]
    assert [reference.encode(text) for text in texts] == record["vocabs"][T5]["ids"]
    assert [ours.encode(text) for text in texts] == record["vocabs"][T5]["ids"]


# each variant's texts on which llama.cpp and sentencepiece must disagree, and why (measured on
# the 367 variant texts: no-prefix 365 differ, keep-spaces 1, no-charsmap 0, user-unused 57)
DISAGREE = {
    # remove_extra_whitespaces puts a ▁ before every word, the first one too, even without
    # add_space_prefix; sentencepiece's add_dummy_prefix=false leaves the first word bare
    "no-prefix": ["AS YOU LIKE IT"],
    # llama.cpp's dummy prefix goes before the first character that is no space: a text of
    # spaces only ("\n" normalizes to one) gets none; sentencepiece's goes at the start
    "keep-spaces": ["\n"],
    # unused pieces are chosen like normal ones ([PAD250001] is one id); a user-defined piece
    # (",") cuts the text and each side is normalized on its own, with its own dummy prefix
    "user-unused": ["[PAD250001] [PAD250010]x", "beholders take his part with weeping."],
}


@pytest.mark.long  # the four variants against sentencepiece (~6 s); the shipped settings run above
@pytest.mark.parametrize("variant", list(T5_VARIANTS))
def test_t5_sentencepiece_differences_are_llama_cpp_rules(variant):
    """ubpe's sentencepiece reader follows sentencepiece on every variant; where llama.cpp
    differs (`DISAGREE`), the GGUF model follows llama.cpp (checked above)."""
    record = _expected()
    reference, ours = _spm_pair(variant)
    texts = record["variant_texts"]
    want = [reference.encode(text) for text in texts]
    assert [ours.encode(text) for text in texts] == want
    llama = record["variants"][variant]["ids"]
    differ = {text for text, a, b in zip(texts, want, llama) if a != b}
    if variant in DISAGREE:
        assert set(DISAGREE[variant]) <= differ
    else:
        assert not differ


@pytest.mark.parametrize("name", list(SYNTHETIC))
def test_tiny_vocabularies_equal_llama_cpp(name):
    record = _expected()["synthetic"][name]
    metadata, texts = SYNTHETIC[name]
    tok = gguf_io.from_metadata(metadata())
    assert [tok.encode(text) for text in texts] == record["ids"]
    assert [tok.encode(text, add_special=True, parse_special=True) for text in _expected()["special_texts"]] == \
        record["special_ids"]


def test_t5_path_sums_are_double_as_in_llama_cpp():
    """On a near tie (`vocab_corpora.t5_near_tie`) llama.cpp's double sums choose ``a b`` (its
    fixture ids), sentencepiece's float32 sums keep ``ab``, and each of ubpe's readers follows
    its own reference."""
    spm = pytest.importorskip("sentencepiece")
    metadata = t5_near_tie()
    llama = gguf_io.from_metadata(metadata)
    data = _spm_proto(metadata)
    reference, ours = spm.SentencePieceProcessor(model_proto=data), spm_io.from_bytes(data)
    a, b, ab = (llama.piece_to_id(piece) for piece in ("a", "b", "ab"))
    assert llama.encode("ab") == [a, b] == _expected()["synthetic"]["t5-near-tie"]["ids"][0]
    assert reference.encode("ab") == ours.encode("ab") == [ab]


# -- every encoder of the registry ---------------------------------------------------------------

@pytest.mark.parametrize("encoder", available_encoders())
# one model's encoders after the other's, with the long tests (t5 ~4 s, gemma-4's 262k tokens ~12 s):
# every encoder runs on the imported vocabularies of tests/spec/test_hf_import.py in the README's lane
@pytest.mark.long
@pytest.mark.parametrize("name", [T5, GEMMA4])
def test_every_encoder_runs_and_decodes_as_native(name, encoder):
    """Any encoder's ids decode to what the native ids decode to (for t5: the normalized
    text; for gemma4: the text), on texts the pieces cover (ubpe's encoders have no unknown
    token)."""
    tok = _load(name)
    texts = [text for text in _expected()["texts"][::40] if tok.covers(text)]
    assert len(texts) >= 20
    options = dict(OPTIONS.get(encoder, {}))
    if encoder == "sample" and tok.score_kind() is None:  # BPE merges carry no weights: refused without
        with pytest.raises(InvalidParameterError, match="fit_weights"):
            tok.encode_with("a cat", encoder)
        options["weights"] = -np.ones(len(tok.vocabulary))
    for text in texts:
        ((ids, score),) = tok.encode_with(text, encoder, **options)
        assert tok.decode(ids) == tok.decode(tok.encode(text)), (encoder, text[:80])
        assert all(0 <= token < tok.n_vocab for token in ids) and np.isfinite(score)


def test_describe_and_variant_names():
    t5, gemma4 = _load(T5), _load(GEMMA4)
    assert (t5.variant, gemma4.variant) == ("gguf:t5", "gguf:gemma4")
    info = t5.describe()
    assert info["remove_extra_whitespaces"] and info["architecture"] == "nomic-bert-moe"
    assert (t5.add_bos, t5.add_eos) == (True, True)  # the file's keys
    info = gemma4.describe()
    assert info["n_merges"] == 514906 and info["n_vocab"] == 262144 and gemma4.add_bos
    assert gemma4.inventory().merges  # the merges it records
    assert t5.unigram_weights().shape == (len(t5.vocabulary),)


# -- corrupt files: a clear error naming the file --------------------------------------------------

def _t5_metadata() -> dict:
    keys = gguf_io.Keys
    return {"general.architecture": "t5", keys.MODEL: "t5",
            keys.LIST: ["<pad>", "</s>", "<unk>", "▁", "a", "▁a"],
            keys.SCORES: np.array([0, 0, 0, -1, -2, -1.5], np.float32),
            keys.TOKEN_TYPE: np.array([3, 3, 2, 1, 1, 1], np.int32), keys.REMOVE_EXTRA_WS: True}


def _gemma4_metadata() -> dict:
    keys = gguf_io.Keys
    return {"general.architecture": "gemma4", keys.MODEL: "gemma4", keys.LIST: ["<bos>", "a", "b", "ab"],
            keys.TOKEN_TYPE: np.array([3, 1, 1, 1], np.int32), keys.BOS_ID: 0, keys.MERGES: ["a b"]}


CORRUPT = {  # case -> (tokenizer type, tokenizer keys changed (None: removed), error message)
    "t5 without scores": ("t5", {"scores": None}, "scores"),
    "t5 with a NaN score": ("t5", {"scores": np.array([0, 0, 0, -1, np.nan, -1], np.float32)}, "NaN"),
    "t5 with too few scores": ("t5", {"scores": np.array([0, 0], np.float32)}, "scores"),
    "t5 without token types": ("t5", {"token_type": None}, "token_type"),
    "t5 with a truncated charsmap": ("t5", {"precompiled_charsmap": np.array([200, 0, 0, 0, 1], np.uint8)}, "charsmap"),
    "t5 with a charsmap of strings": ("t5", {"precompiled_charsmap": ["x"]}, "charsmap"),
    "t5 without normal pieces": ("t5", {"token_type": np.array([3, 3, 2, 3, 3, 3], np.int32)}, "normal"),
    "gemma4 without merges": ("gemma4", {"merges": None}, "merges"),
    "gemma4 with a merge of one symbol": ("gemma4", {"merges": ["ab"]}, "merge 0"),
}


@pytest.mark.parametrize("case", list(CORRUPT))
def test_corrupt_files_name_themselves(case, tmp_path):
    kind, changes, message = CORRUPT[case]
    metadata = _t5_metadata() if kind == "t5" else _gemma4_metadata()
    for key, value in changes.items():
        metadata[f"tokenizer.ggml.{key}"] = value
    path = tmp_path / "broken.gguf"
    write_gguf({k: v for k, v in metadata.items() if v is not None}, path)
    with pytest.raises(ModelFormatError, match=message) as caught:
        ubpe.load(str(path))
    assert str(path) in str(caught.value)


def test_a_t5_file_without_charsmap_normalizes_nothing():
    """llama.cpp reads the charsmap only where the file has one (checked on the "no-charsmap"
    variant above): without one, text is only cut into words."""
    tok = gguf_io.from_metadata(_t5_metadata())
    assert [tok.id_to_piece(i) for i in tok.encode("  a  a ")] == ["▁a", "▁a"]
    assert (tok.add_bos, tok.add_eos) == (False, True)  # llama.cpp's UGM defaults
