"""Mistral's tekken files (issue 26, point 6) against mistral-common 1.13.1, the reference.

Both files mistral-common ships (``tekken_240718.json``, ``tekken_240911.json``, from the pinned
sdist in the data cache) are read with ``ubpe.load`` and compared with ``Tekkenizer.from_file``
on every text of `vocab_corpora.varied_texts` (1,100+: prose, the UDHR's scripts, Python source,
random code points, whitespace runs, emoji, special-token look-alikes): the ids, with and without
BOS/EOS, decoding under each special-token policy, every id's bytes and every special token.
Every encoder of the registry runs on them and round-trips. Corrupt files are built from a
small tekken file that mistral-common reads too, one field broken at a time, and each is
checked to be refused by mistral-common as well (or marked where ubpe is the stricter).
"""

from __future__ import annotations

import base64
import functools
import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe
from ubpe.encoders import available_encoders
from ubpe.errors import InvalidParameterError, ModelFormatError, UBPEError, UnknownTokenError
from ubpe.files import read_head
from ubpe.io import FORMATS, detect
from ubpe.io import tekken as tekken_io

from vocab_corpora import MISTRAL_PACKAGE, shipped_file, varied_texts

TEKKEN_FILES = ("tekken_240718.json", "tekken_240911.json")
MIN_TEXTS = 1000
POLICIES = ("ignore", "keep", "raise")
# encoders that need options to run at all
OPTIONS = {"additive": {"score": float}}  # score = the token id: any additive score will do
# texts where special tokens look like text: mistral-common never reads them as special tokens
LOOK_ALIKES = ["<s>[INST] hi [/INST]</s>", "<unk><pad><SPECIAL_20>", "[IMG][IMG_BREAK][TOOL_CALLS]x"]


def tekken_path(name: str):
    return shipped_file(MISTRAL_PACKAGE, f"*/src/mistral_common/data/{name}")


def _reference_class():
    pytest.importorskip("mistral_common")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    return Tekkenizer


@functools.lru_cache(maxsize=None)
def _pair(name: str):
    """``(ours, mistral-common's)`` tokenizers of one shipped file."""
    path = tekken_path(name)
    return ubpe.load(path), _reference_class().from_file(path)


@functools.lru_cache(maxsize=1)
def _texts() -> tuple[str, ...]:
    texts = tuple(varied_texts()) + tuple(LOOK_ALIKES)
    assert len(texts) >= MIN_TEXTS
    return texts


# -- the shipped files against mistral-common ----------------------------------------------------

@pytest.mark.parametrize("name", TEKKEN_FILES)
def test_ids_equal_mistral_commons_on_every_text(name):
    ours, reference = _pair(name)
    texts = _texts()
    expected = [reference.encode(text, bos=False, eos=False) for text in texts]
    differ = [text for text, ids in zip(texts, expected) if ours.encode(text) != ids]
    assert not differ, f"{len(differ)}/{len(texts)} texts differ, first: {differ[0][:80]!r}"
    assert ours.encode_batch(list(texts)) == expected
    assert [ids for ((ids, _),) in ours.encode_batch_with(texts)] == expected  # encode_with's default
    framed = [ours.encode(text, bos=True, eos=True) for text in texts[:200]]
    assert framed == [reference.encode(text, bos=True, eos=True) for text in texts[:200]]
    assert ours.encode_batch(list(texts[:200]), bos=True, eos=True) == framed


@pytest.mark.parametrize("name", TEKKEN_FILES)
def test_decode_inverts_encode_wherever_mistral_common_does(name):
    ours, reference = _pair(name)
    round_trips = [text for text in _texts() if reference.decode(reference.encode(text, False, False)) == text]
    assert len(round_trips) >= MIN_TEXTS
    differ = [text for text in round_trips if ours.decode(ours.encode(text)) != text]
    assert not differ, f"{len(differ)}/{len(round_trips)} texts do not round-trip, first: {differ[0][:80]!r}"


@pytest.mark.parametrize("name", TEKKEN_FILES)
@pytest.mark.parametrize("policy", POLICIES)
def test_decode_with_special_tokens_is_mistral_commons(name, policy):
    """Special tokens around and inside the text, and one between the two bytes of ``é``
    (each run of mergeable tokens is decoded on its own: two replacement characters)."""
    ours, reference = _pair(name)
    shift = reference.num_special_tokens
    split_char = [shift + 0xC3, 5, shift + 0xA9]
    for text in _texts()[::25]:
        ids = [reference.bos_id, *reference.encode(text, False, False), reference.eos_id, 999]
        for case in (ids, split_char, [reference.bos_id], []):
            try:
                expected = reference.decode(case, special_token_policy=policy)
            except ValueError:
                with pytest.raises(InvalidParameterError):
                    ours.decode(case, special_token_policy=policy)
                continue
            assert ours.decode(case, special_token_policy=policy) == expected


@pytest.mark.parametrize("name", TEKKEN_FILES)
def test_every_id_is_mistral_commons(name):
    """The special tokens (by text and by id), BOS/EOS, the vocabulary size, and the bytes of
    every mergeable id."""
    ours, reference = _pair(name)
    assert ours.n_vocab == reference.n_words
    assert ours.num_special_tokens == reference.num_special_tokens
    assert (ours.bos_id, ours.eos_id) == (reference.bos_id, reference.eos_id)
    assert set(ours.special_tokens.values()) == reference.special_ids
    for text, token in ours.special_tokens.items():
        assert reference.get_special_token(text) == token
        assert ours.decode([token], special_token_policy="keep") == reference.id_to_piece(token)
    for token in range(reference.num_special_tokens, reference.n_words):
        assert ours.decode_bytes([token]) == reference.id_to_byte_piece(token), token
    with pytest.raises(UnknownTokenError):
        ours.decode([reference.n_words])


@pytest.mark.parametrize("name", TEKKEN_FILES)
def test_special_tokens_are_text_unless_allowed(name):
    ours, reference = _pair(name)
    for text in LOOK_ALIKES:
        assert min(ours.encode(text)) >= reference.num_special_tokens
    inst = reference.get_special_token("[INST]")
    ids = ours.encode("[INST]hello", allowed_special={"[INST]"})
    assert ids == [inst, *reference.encode("hello", False, False)]


@pytest.mark.parametrize("name", TEKKEN_FILES)
@pytest.mark.parametrize("encoder", available_encoders())
def test_every_encoder_runs_and_round_trips(name, encoder):
    ours, reference = _pair(name)
    shift, texts = reference.num_special_tokens, _texts()[::4]
    for text in texts:
        ((ids, score),) = ours.encode_with(text, encoder, **OPTIONS.get(encoder, {}))
        assert ours.decode(ids) == text, (encoder, text[:80])
        assert all(shift <= token < reference.n_words for token in ids)
        assert np.isfinite(score)
        if encoder == "ranked":
            assert ids == reference.encode(text, False, False)


def test_the_two_files_are_one_vocabulary():
    """What issue 26 calls two files are the same tokens: 240911 adds an image section."""
    (old, _), (new, _) = _pair(TEKKEN_FILES[0]), _pair(TEKKEN_FILES[1])
    assert old.mergeable_ranks() == new.mergeable_ranks() and old.pattern == new.pattern
    assert old.special_tokens == new.special_tokens


# -- format, detection, the model's surface ---------------------------------------------------------

def test_detected_as_tekken_and_by_no_other_format():
    for name in TEKKEN_FILES:
        path = tekken_path(name)
        head = read_head(path)
        assert detect(path) == "tekken"
        assert [row.name for row in FORMATS.values() if row.detect(head)] == ["tekken"]


def test_files_of_the_other_formats_are_not_tekken(tmp_path):
    tok = ubpe.ByteLevelBPE().fit(["hello hello world"] * 3, n_tokens=262,
                                  special_tokens=["<|end|>"], quiet=True)
    for fmt in ("ubpe", "tiktoken", "hf", "minbpe"):
        path = tmp_path / f"model.{fmt}"
        ubpe.save(tok, path, format=fmt)
        assert not tekken_io.detect(read_head(path)) and detect(path) == fmt
    universal = ubpe.UBPE(alphabet="ab", n_tokens=4)
    universal.fit(["abab", "abba"], quiet=True)
    ubpe.save(universal, tmp_path / "model.ubpe030", format="ubpe030")
    assert detect(tmp_path / "model.ubpe030") == "ubpe030"


def test_the_tokenizer_contract():
    """What the command line and the views rely on, as ``tests/spec/test_contract.py`` asks it
    of the other families: pieces, inventory, lookups, description."""
    ours, reference = _pair(TEKKEN_FILES[0])
    doc = "Hello wörld 🦙 <s>"
    ids = ours.encode(doc)
    assert b"".join(ours.pieces(ids)).decode() == doc and ours.n_symbols(doc) == len(doc.encode())
    assert ours.pieces([reference.bos_id]) == [b"<s>"] and ours.piece_to_id("<s>") == reference.bos_id
    assert [ours.piece_to_id(piece) for piece in ours.pieces(ids)] == ids
    inventory = ours.inventory()
    assert len(inventory.ids) == ours.n_vocab == len(set(inventory.ids))
    info = ours.describe()
    assert str(reference.num_special_tokens) in info["vocabulary"] and "<SPECIAL_k>" in info["special tokens"]


def test_not_in_ubpes_format_and_not_fittable(tmp_path):
    ours, _ = _pair(TEKKEN_FILES[0])
    with pytest.raises(InvalidParameterError, match="cannot hold a tekken model"):
        ubpe.save(ours, tmp_path / "model.json")
    with pytest.raises(InvalidParameterError, match="fit"):
        ours.fit(["hello"], n_tokens=300)
    copy = pickle.loads(pickle.dumps(ours))
    assert copy.encode(LOOK_ALIKES[0]) == ours.encode(LOOK_ALIKES[0]) and copy.version == "v3"


# -- a small tekken file, and that file broken one field at a time --------------------------------

SMALL_PATTERN = r" ?\p{L}+| ?\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
SMALL_MERGES = [b"he", b"ll", b"hell", b"hello", b" w", b"or", b" wor", b"ld", b" world"]
SMALL_SPECIALS = ["<unk>", "<s>", "</s>"]
N_SMALL_SPECIAL = 5
N_CUT = 3  # the last merges are past default_vocab_size
SMALL_TEXTS = ["hello world", "hello <s> world", "Hello, worlds! 42\n\n  hell", "héllo wörld 🦙", ""]


def _vocab_entry(rank: int, piece: bytes) -> dict:
    try:
        text: str | None = piece.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {"rank": rank, "token_bytes": base64.b64encode(piece).decode("ascii"), "token_str": text}


def _small_tekken() -> dict:
    """A v7 tekken file: 3 named special tokens made up to 5, 265 ranks of which 262 are kept."""
    pieces = [bytes([b]) for b in range(256)] + SMALL_MERGES
    return {
        "config": {"pattern": SMALL_PATTERN, "num_vocab_tokens": len(pieces), "version": "v7",
                   "default_vocab_size": N_SMALL_SPECIAL + len(pieces) - N_CUT,
                   "default_num_special_tokens": N_SMALL_SPECIAL},
        "vocab": [_vocab_entry(rank, piece) for rank, piece in enumerate(pieces)],
        "special_tokens": [{"rank": k, "token_str": text, "is_control": True} for k, text in enumerate(SMALL_SPECIALS)],
    }


def _write(tmp_path, data: dict):
    path = tmp_path / "tekken_small.json"
    path.write_text(json.dumps(data))
    return path


def test_a_small_file_is_read_as_mistral_common_reads_it(tmp_path):
    """The cut, the named special tokens, the fillers and the shift, on a file small enough
    to see them; and entries past the cut are not looked at (mistral-common's neither)."""
    data = _small_tekken()
    data["vocab"].append("past the cut: never read")
    path = _write(tmp_path, data)
    ours, reference = ubpe.load(path), _reference_class().from_file(path)
    assert ours.n_vocab == reference.n_words == N_SMALL_SPECIAL + 256 + len(SMALL_MERGES) - N_CUT
    assert ours.special_tokens == {reference.id_to_piece(k): k for k in range(N_SMALL_SPECIAL)}
    for text in SMALL_TEXTS:
        assert ours.encode(text, bos=True, eos=True) == reference.encode(text, True, True)
        assert ours.decode(ours.encode(text)) == reference.decode(reference.encode(text, False, False)) == text


def _set(*keys, value):
    def edit(data):
        node = data
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value
    return edit


def _delete(*keys):
    def edit(data):
        node = data
        for key in keys[:-1]:
            node = node[key]
        del node[keys[-1]]
    return edit


def _special(k, **fields):
    return lambda data: data["special_tokens"][k].update(fields)


N_SMALL_RANKS = 256 + len(SMALL_MERGES)
# (what is broken, the field the error names, whether mistral-common refuses it too: True, False
# where ubpe is stricter, None where the reference would not return: it would make 2**40 fillers)
BROKEN = [
    ("no config", _delete("config"), "config", True),
    ("unknown version", _set("config", "version", value="v4"), "config.version", True),
    ("pattern not a string", _set("config", "pattern", value=5), "config.pattern", True),
    ("pattern not a regex", _set("config", "pattern", value="(?<"), "config.pattern", True),
    ("size as a string", _set("config", "default_vocab_size", value="262"), "config.default_vocab_size", True),
    ("size past the ranks", _set("config", "default_vocab_size", value=N_SMALL_SPECIAL + N_SMALL_RANKS + 1),
     "config.default_vocab_size", True),
    ("size leaving bytes out", _set("config", "default_vocab_size", value=N_SMALL_SPECIAL + 100),
     "config.default_vocab_size", False),
    ("specials a bool", _set("config", "default_num_special_tokens", value=True),
     "config.default_num_special_tokens", True),
    ("specials unbounded", _set("config", "default_num_special_tokens", value=2**40),
     "config.default_num_special_tokens", None),
    ("vocab an object", _set("vocab", value={"a": 0}), "vocab", True),
    ("entry a string", _set("vocab", 3, value="AwA="), r"vocab\[3\]", True),
    ("entry without token_str", _delete("vocab", 5, "token_str"), r"vocab\[5\]", True),
    ("rank out of place", _set("vocab", 5, "rank", value=6), r"vocab\[5\]\.rank", True),
    ("bytes an integer", _set("vocab", 3, "token_bytes", value=12), r"vocab\[3\]\.token_bytes", True),
    ("byte out of place", _set("vocab", 7, "token_bytes", value="CA=="), r"vocab\[7\]\.token_bytes", True),
    ("repeated bytes", _set("vocab", 260, "token_bytes", value="aGU="), r"vocab\[260\]\.token_bytes", True),
    ("lenient base64", _set("vocab", 259, "token_bytes", value="aGVs!bG8="), r"vocab\[259\]\.token_bytes", False),
    ("specials not an array", _set("special_tokens", value="<s>"), "special_tokens", True),
    ("special listed twice", _special(2, token_str="<s>"), "special_tokens", True),
    ("more specials than the count", _set("config", "default_num_special_tokens", value=2), "special_tokens", True),
    ("special named as a filler", _special(2, token_str="<SPECIAL_4>"), "special_tokens", True),
    ("special rank out of place", _special(1, rank=7), r"special_tokens\[1\]\.rank", False),
    ("v11 without specials", lambda data: (data.pop("special_tokens"), data["config"].update(version="v11")),
     "special_tokens", True),
    ("multimodal after v11", lambda data: (data["config"].update(version="v13"),
                                            data.update(multimodal={"image_patch_size": 16})), "multimodal", True),
    ("model settings before v15", _set("model_settings_builder", value={}), "model_settings_builder", True),
]


@pytest.mark.parametrize("what, edit, field, reference_refuses", BROKEN, ids=[case[0] for case in BROKEN])
def test_a_broken_file_is_a_clear_error(tmp_path, what, edit, field, reference_refuses):
    data = _small_tekken()
    edit(data)
    path = _write(tmp_path, data)
    assert detect(path) == "tekken"
    with pytest.raises(ModelFormatError, match=field) as error:
        ubpe.load(path)
    assert str(path) in str(error.value)
    if reference_refuses is None:
        return
    try:
        _reference_class().from_file(path)
    except Exception:  # noqa: BLE001 - mistral-common refuses with AssertionError, ValueError, TypeError...
        refused = True
    else:
        refused = False
    assert refused == reference_refuses, what


@pytest.mark.parametrize("size", [1, 100, 40_000, 1_000_000])
def test_a_truncated_file_is_a_clear_error(tmp_path, size):
    path = tmp_path / "tekken_truncated.json"
    path.write_bytes(tekken_path(TEKKEN_FILES[0]).read_bytes()[:size])
    with pytest.raises(ModelFormatError, match="not valid JSON") as error:
        ubpe.load(path, format="tekken")
    assert str(path) in str(error.value)
    if size >= 40_000:  # past the config and into the vocabulary: found without format=
        with pytest.raises(ModelFormatError, match="not valid JSON"):
            ubpe.load(path)


@settings(max_examples=100, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.binary(max_size=3)), min_size=1, max_size=3),
       cut=st.integers(0, 10**6))
def test_a_mutated_file_loads_or_is_a_clear_error(tmp_path_factory, edits, cut):
    """Bytes of the small file overwritten here and there, or the file cut short: a tokenizer
    whose ids decode, or a ubpe error; with the pattern intact, decoding gives the text back (a
    mutated pattern may match less of the text, and tiktoken, as ubpe, drops the rest)."""
    data = bytearray(json.dumps(_small_tekken()).encode())
    for position, replacement in edits:
        at = position % len(data)
        data[at : at + len(replacement)] = replacement
    path = tmp_path_factory.mktemp("mutated") / "tekken_mutated.json"
    path.write_bytes(bytes(data[: max(1, len(data) - cut % len(data))]))
    try:
        tok = ubpe.load(path, format="tekken")
    except UBPEError:
        return
    for text in SMALL_TEXTS:
        ids = tok.encode(text)
        assert all(tok.num_special_tokens <= token < tok.n_vocab for token in ids)
        decoded = tok.decode(ids)
        assert decoded == text or tok.pattern != SMALL_PATTERN
