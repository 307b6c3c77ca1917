"""The C reader of sentencepiece ``.model`` files (``ubpe_native._spm_proto``) against the
protobuf path it stands in for (``ubpe.io.sentencepiece._from_protobuf``).

* ``read_model_proto`` gives what protobuf parses - the pieces, their scores (``-0.0`` kept)
  and types, the specs' fields with their defaults when absent, the last value of a field
  given twice, unknown fields skipped - on models trained here and on random ModelProtos
  built with sentencepiece's own schema; and ``None`` exactly where the protobuf path refuses
  the file (a NaN or infinite score, a piece defined twice, no unknown piece, a cut file...).
  Truncated and corrupted files never crash it.
* The models built from its tables (``bpe_tables``, ``unigram_tables``,
  ``user_defined_table``) get the very arguments the protobuf path's Python derivation gives
  the kernels, and the same ids.
"""

from __future__ import annotations

import io
import math
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe.models.char_model as char_model
import ubpe.models.sentencepiece as spm_models
from ubpe.errors import ModelFormatError
from ubpe.io import sentencepiece as spm_io
from ubpe_native._spm_proto import bpe_tables, piece_texts, read_model_proto

spm = pytest.importorskip("sentencepiece")
from sentencepiece import sentencepiece_model_pb2 as pb2  # noqa: E402

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
TEXTS = ["Hello world, this is a test.", "naïve café — 東京 🦙", "  spaces   and\ttabs ", "",
         "<sep> qu<sep> ｆｕｌｌ①", "aaaaaaaa bbbb ab ba"]
WORDS = ["the", "quick", "brown", "fox", "naïve", "café", "東京", "straße", "über", "jumps", "lazy", "dog", "qu",
         "ｆｕｌｌ", "①②", "ab", "ba"]
CONFIGS = {
    "bpe": dict(model_type="bpe", vocab_size=300),
    "bpe-bytes-user": dict(model_type="bpe", vocab_size=600, byte_fallback=True, user_defined_symbols=["<sep>", "qu"]),
    "bpe-identity": dict(model_type="bpe", vocab_size=250, normalization_rule_name="identity",
                         remove_extra_whitespaces=False, treat_whitespace_as_suffix=True),
    "unigram": dict(model_type="unigram", vocab_size=200),
    "unigram-bytes-user": dict(model_type="unigram", vocab_size=500, byte_fallback=True,
                               user_defined_symbols=["<sep>", "qu"], add_dummy_prefix=False),
}
_TRAINED: dict[str, bytes] = {}


def _trained(config: str) -> bytes:
    """A model trained on random sentences of `WORDS` (no dataset needed)."""
    if config not in _TRAINED:
        rng = random.Random(0)
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, character_coverage=1.0,
                                       num_threads=1, minloglevel=2, hard_vocab_limit=False, **CONFIGS[config])
        _TRAINED[config] = out.getvalue()
    return _TRAINED[config]


def _protobuf_model(data: bytes):
    """The protobuf path's model, or None where it refuses the file."""
    return _protobuf_result(data)[0]


def _protobuf_result(data: bytes):
    """``(model, None)`` of the protobuf path, or ``(None, its refusal)``."""
    try:
        return spm_io._from_protobuf(data, where="m.model"), None
    except ModelFormatError as exc:
        return None, str(exc)


def _bits(value: float) -> bytes:
    return struct.pack("<f", value)  # (tells -0.0 from 0.0)


def assert_as_protobuf(data: bytes) -> None:
    """Where the protobuf path refuses ``data``, ``read_model_proto(data)`` is ``None`` or the
    model built from it is refused alike (a unigram model without normal pieces); else it is
    protobuf's view of the file, and the model read in C equals the protobuf path's."""
    found = read_model_proto(data)
    want, refusal = _protobuf_result(data)
    if want is None:
        if found is not None:
            with pytest.raises(ModelFormatError) as raised:
                spm_io.from_bytes(data, where="m.model")
            assert str(raised.value) == refusal
        return
    assert found is not None
    proto = pb2.ModelProto()
    proto.ParseFromString(data)
    blob, offsets, scores, types, spec = found
    assert piece_texts(blob, offsets) == [p.piece for p in proto.pieces]
    assert list(map(_bits, scores)) == [_bits(p.score) for p in proto.pieces]
    assert types.tolist() == [p.type for p in proto.pieces]
    trainer, normalizer = proto.trainer_spec, proto.normalizer_spec
    assert spec == {
        "model_type": {1: "unigram", 2: "bpe"}[trainer.model_type], "byte_fallback": trainer.byte_fallback,
        "treat_whitespace_as_suffix": trainer.treat_whitespace_as_suffix, "unk_id": trainer.unk_id,
        "bos_id": trainer.bos_id, "eos_id": trainer.eos_id, "precompiled_charsmap": normalizer.precompiled_charsmap,
        "add_dummy_prefix": normalizer.add_dummy_prefix,
        "remove_extra_whitespaces": normalizer.remove_extra_whitespaces,
        "escape_whitespaces": normalizer.escape_whitespaces}
    assert_same_model(spm_io.from_bytes(data, where="m.model"), want)


def assert_same_model(tok, want) -> None:
    """What the model read in C and the protobuf path's show of themselves, and their ids."""
    assert type(tok) is type(want) and tok.variant == want.variant
    assert tok.special_ids == want.special_ids and tok.describe() == want.describe()
    for text in TEXTS:
        assert tok.encode(text) == want.encode(text), text
    assert tok.texts == want.texts
    assert tok.scores.tobytes() == want.scores.tobytes() and tok.token_types.tolist() == want.token_types.tolist()
    for text in TEXTS:
        assert tok._general_encode(text) == want._general_encode(text), text  # (the lazy attributes)
    assert tok._init_args[1].keys() == want._init_args[1].keys()


# -- models trained here ------------------------------------------------------------------

@pytest.mark.parametrize("config", CONFIGS)
def test_trained_models_read_as_protobuf_reads_them(config):
    assert_as_protobuf(_trained(config))


def _kernel_arguments(monkeypatch, data: bytes, reader) -> dict[str, list]:
    """The arguments ``reader(data)`` builds the kernels with, as lists (by kernel name)."""
    calls: dict[str, list] = {}
    for name in ("SpmBPE", "SpmNormalizer", "UnigramLattice"):
        real = getattr(spm_models, name)

        def record(*args, _real=real, _name=name, **options):
            calls[_name] = [_plain(a) for a in args] + sorted((k, _plain(v)) for k, v in options.items())
            return _real(*args, **options)

        for module in (spm_models, char_model):  # (CharModel builds the normalizer)
            if hasattr(module, name):
                monkeypatch.setattr(module, name, record)
    reader(data)
    monkeypatch.undo()
    return calls


def _plain(value):
    """numpy arrays and scalars, ``array.array`` objects as Python lists and numbers."""
    return value.tolist() if hasattr(value, "tolist") else value


@pytest.mark.parametrize("config", CONFIGS)
def test_kernels_get_the_python_derivations_arguments(config, monkeypatch):
    """`bpe_tables` and `unigram_tables` make, in C, what `_build_spm_kernel` (its merge rules
    by `_derive_merge_rules`) and `_build_lattice` make in Python, value for value; a BPE
    model read in C merges by its pieces' texts instead (`_same_kernels`)."""
    data = _trained(config)
    _same_kernels(_kernel_arguments(monkeypatch, data, spm_io.from_bytes),
                  _kernel_arguments(monkeypatch, data, spm_io._from_protobuf))


# SpmBPE's arguments: the rules, then the tables that do not hold the ids of characters that
# are no piece (``bpe_tables`` without the rules numbers those by code point)
RULES, SAME_TABLES = slice(1, 5), (0, 5, 6, 7, 9, 12, 13, 14, 15)


def _same_kernels(found: dict[str, list], want: dict[str, list]) -> None:
    """``found`` (the model read in C) and ``want`` (the protobuf path's) have the same
    normalizer and unigram lattice; a BPE model read in C is given its pieces and no rules,
    the protobuf path's tables but for the ids of characters that are no piece, and
    `bpe_tables` with the rules gives the protobuf path's arguments value for value."""
    assert set(found) == set(want) and len(found) == 2
    for name in found:
        options = [entry for entry in want[name] if isinstance(entry, tuple)]
        got = [entry for entry in found[name] if not isinstance(entry, tuple)]
        wanted = [entry for entry in want[name] if not isinstance(entry, tuple)]
        assert all(entry in found[name] for entry in options), name
        if name != "SpmBPE":
            assert got == wanted, name
            continue
        blob, offsets, types, scores = dict(entry for entry in found[name] if isinstance(entry, tuple))["pieces"]
        assert got[RULES] == [[]] * 4
        assert [got[k] for k in SAME_TABLES] == [wanted[k] for k in SAME_TABLES]
        derived = bpe_tables(blob, offsets, types, scores, wanted[12])
        assert [got[0], *map(_plain, derived[:11]), wanted[12], *map(_plain, derived[11:])] == wanted


def test_shipped_models_read_as_protobuf_reads_them(monkeypatch):
    """Mistral's ``.model`` files (32k pieces, byte fallback, control and user-defined pieces):
    the same reading, kernels and ids as the protobuf path's."""
    from vocab_corpora import MISTRAL_PACKAGE, shipped_files

    for path in shipped_files(MISTRAL_PACKAGE, "*/src/mistral_common/data/*.model.v*"):
        data = path.read_bytes()
        assert_as_protobuf(data)
        _same_kernels(_kernel_arguments(monkeypatch, data, spm_io.from_bytes),
                      _kernel_arguments(monkeypatch, data, spm_io._from_protobuf))


def test_a_load_builds_the_rest_when_first_asked_for_and_pickles():
    """A model read in C has its texts, scores and types made on first use (thread-safe: many
    threads asking at once see one set), and pickles as the protobuf path's model does."""
    import pickle
    import threading

    data = _trained("bpe-bytes-user")
    tok = spm_io.from_bytes(data)
    assert "texts" in tok._pending() and "texts" not in vars(tok)
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(id(tok.texts))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(seen)) == 1 and tok._pending() == []
    again = pickle.loads(pickle.dumps(spm_io.from_bytes(data, where="m.model")))
    assert_same_model(again, _protobuf_model(data))
    with pytest.raises(AttributeError):
        tok.no_such_attribute  # noqa: B018


# -- random ModelProtos -------------------------------------------------------------------

def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        out.append(value & 0x7F | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    head = _varint(number << 3 | wire)
    return head + (_varint(len(payload)) + payload if wire == LENGTH else payload)


UNKNOWN_FIELDS = st.sampled_from([b"", _field(99, VARINT, _varint(5)), _field(77, LENGTH, b"xyz"),
                                  _field(1000, FIXED32, bytes(4)), _field(201, FIXED64, bytes(8)),
                                  _field(6, LENGTH, b"rules")])
SCORES = st.one_of(st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-50, max_value=0),
                   st.sampled_from([0.0, -0.0, -1e9]),
                   st.sampled_from([math.inf, -math.inf, math.nan]).filter(lambda _: random.random() < 0.3))
PIECES = st.text(alphabet="ab▁cé東", min_size=1, max_size=4)
BROKEN_PIECES = st.sampled_from(["", "a\0", "\0"])


@st.composite
def model_protos(draw) -> bytes:
    """A ModelProto as sentencepiece's schema writes it, with optional fields left out, fields
    given again (a second ``trainer_spec`` or ``normalizer_spec`` merges into the first),
    unknown fields in every message, and pieces that may break sentencepiece's rules."""
    byte_fallback = draw(st.booleans())
    pieces = [("<unk>", UNKNOWN, 0.0)] if draw(st.integers(0, 9)) else []
    for _ in range(draw(st.integers(0, 12))):
        text = draw(PIECES if draw(st.integers(0, 19)) else BROKEN_PIECES)
        pieces.append((text, draw(st.sampled_from([NORMAL] * 4 + [CONTROL, USER_DEFINED, UNUSED, UNKNOWN])),
                       draw(SCORES)))
    if byte_fallback or not draw(st.integers(0, 19)):
        n_bytes = 256 if draw(st.integers(0, 9)) else draw(st.integers(0, 256))
        pieces += [(f"<0x{b:02X}>", BYTE, 0.0) for b in range(n_bytes)]
    out = b""
    for text, kind, score in pieces:
        piece = pb2.ModelProto.SentencePiece(piece=text, score=score)
        if kind != NORMAL or draw(st.booleans()):  # (NORMAL is the default: absent or given)
            piece.type = kind
        out += _field(1, LENGTH, piece.SerializeToString() + draw(UNKNOWN_FIELDS))
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2, 2]))):
        trainer = pb2.TrainerSpec()
        for name, values in (("model_type", [1, 2, 2]), ("byte_fallback", [byte_fallback]),
                             ("treat_whitespace_as_suffix", [False, True]), ("unk_id", [0, 1, -1, 300]),
                             ("bos_id", [1, -1, 2]), ("eos_id", [2, -1, 5]), ("vocab_size", [8000])):
            if draw(st.booleans()):
                setattr(trainer, name, draw(st.sampled_from(values)))
        out += _field(2, LENGTH, trainer.SerializeToString() + draw(UNKNOWN_FIELDS))
    for number in (3, 5):
        if draw(st.booleans()):
            spec = pb2.NormalizerSpec()
            for name in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"):
                if draw(st.booleans()):
                    setattr(spec, name, draw(st.booleans()))
            if draw(st.booleans()):
                spec.name = "identity"
            out += _field(number, LENGTH, spec.SerializeToString() + draw(UNKNOWN_FIELDS))
    return out + draw(UNKNOWN_FIELDS)


@settings(max_examples=300)
@given(model_protos())
def test_random_model_protos_read_as_protobuf_reads_them(data):
    assert_as_protobuf(data)


@settings(max_examples=200)
@given(st.data())
def test_cut_and_corrupted_files_are_refused_or_read_as_protobuf_reads_them(data):
    """A model cut anywhere, or with bytes changed, never crashes the reader: it gives None,
    or, where protobuf reads the file too, the same."""
    model = bytearray(_trained(data.draw(st.sampled_from(["bpe", "unigram"]))))
    if data.draw(st.booleans()):
        model = model[: data.draw(st.integers(0, len(model)))]
    else:
        for _ in range(data.draw(st.integers(1, 4))):
            model[data.draw(st.integers(0, len(model) - 1))] = data.draw(st.integers(0, 255))
    found = read_model_proto(bytes(model))
    proto = pb2.ModelProto()
    try:
        proto.ParseFromString(bytes(model))
    except Exception:  # noqa: BLE001  (DecodeError, or a RuntimeWarning-free ValueError)
        assert found is None
        return
    if found is not None:
        blob, offsets, scores, types, _ = found
        assert piece_texts(blob, offsets) == [p.piece for p in proto.pieces]
        assert list(map(_bits, scores)) == [_bits(p.score) for p in proto.pieces]
        assert types.tolist() == [p.type for p in proto.pieces]


@pytest.mark.parametrize("data", [
    _field(1, VARINT, _varint(1)),  # pieces of another wire type
    _field(1, LENGTH, _field(1, LENGTH, b"a")) + _field(2, 3, b""),  # a group
    b"\x0a\x80",  # a length cut short
    b"\x0a" + _varint(1 << 40),  # a length past the end
    b"\x0a\x02\x18\x09",  # a piece type the schema does not list (a closed enum)
    b"\x00\x01",  # field number 0
    b"\x0a\x00" + b"\x12\x02\x18\x07",  # a model type the schema does not list
    b"\x0a\x00" + b"\x12\x0b\x18" + b"\xff" * 10,  # a varint longer than 64 bits
])
def test_wire_data_it_is_not_sure_of_goes_to_protobuf(data):
    assert read_model_proto(data) is None
    assert _protobuf_model(data) is None
