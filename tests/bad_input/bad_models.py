"""Small models of every family and their files in every format ubpe reads, shared by the
bad-input table (``test_bad_*.py``) and the fuzz lane (``test_fuzz.py``).

Everything is built in a few seconds from tiny corpora: no data set, no network."""

from __future__ import annotations

import io
import struct
from pathlib import Path
from types import SimpleNamespace

import ubpe
from ubpe.models.bytelevel import ByteLevelBPE
from ubpe.io import save

TEXTS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog met on the mat"] * 4
INTS = [[i % 7, (i * 3) % 7, 1, 2, 1, 2] for i in range(30)]


def fitted_models() -> SimpleNamespace:
    """One fitted model per family ubpe fits: universal (text and ints), classic, byte-level."""
    universal = ubpe.UBPE(alphabet=sorted(set("".join(TEXTS))), n_tokens=24, break_tokens=" ")
    universal.fit(TEXTS, quiet=True)
    ints = ubpe.UBPE(alphabet=7, n_tokens=20)
    ints.fit(INTS, quiet=True)
    classic = ubpe.UBPEClassic(alphabet=sorted(set("".join(TEXTS))), n_tokens=24)
    classic.fit(TEXTS, quiet=True)
    bytelevel = ByteLevelBPE().fit(TEXTS, n_tokens=280, pattern="gpt2", quiet=True,
                                   special_tokens=["<|end|>"])
    return SimpleNamespace(u=universal, i=ints, c=classic, b=bytelevel)


def spm_model_bytes(model_type: str = "bpe") -> bytes:
    """A tiny sentencepiece ``.model`` (identity normalization: no 200 kB charsmap)."""
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(TEXTS * 5), model_writer=out, vocab_size=40 if model_type == "bpe" else 20,
        model_type=model_type,
        normalization_rule_name="identity", minloglevel=2, num_threads=1)
    return out.getvalue()


def write_gguf(path: Path, bytelevel: ByteLevelBPE) -> None:
    """A tiny llama.cpp GGUF vocabulary of type gpt2 made from a ByteLevelBPE (HF's byte
    alphabet and merges, as llama.cpp stores them)."""
    import json

    import gguf

    hf_path = path.with_suffix(".hf.json")
    save(bytelevel, hf_path, format="hf")
    model = json.loads(hf_path.read_text(encoding="utf-8"))["model"]
    tokens = [piece for piece, _ in sorted(model["vocab"].items(), key=lambda item: item[1])]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    writer = gguf.GGUFWriter(str(path), arch="llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types([1] * len(tokens))
    writer.add_token_merges(merges)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    hf_path.unlink()


def write_gguf_llama(path: Path, spm_model: bytes) -> None:
    """A llama.cpp GGUF vocabulary of type llama made from a sentencepiece BPE ``.model`` (its
    pieces, scores and types, as llama.cpp's converter stores them)."""
    import gguf
    import sentencepiece.sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(spm_model)
    writer = gguf.GGUFWriter(str(path), arch="llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list([p.piece for p in proto.pieces])
    writer.add_token_scores([p.score for p in proto.pieces])
    writer.add_token_types([int(p.type) for p in proto.pieces])
    writer.add_unk_token_id(0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def model_files(folder: Path, models: SimpleNamespace) -> dict[str, Path]:
    """A file per format ubpe reads, all from ``models``: name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "ubpe": folder / "universal.json",
        "ubpe-bytelevel": folder / "bytelevel.json",
        "ubpe030": folder / "reference.json",
        "tiktoken": folder / "vocab.tiktoken",
        "minbpe": folder / "m.model",
        "hf": folder / "tokenizer.json",
        "gguf": folder / "vocab.gguf",
        "sentencepiece": folder / "spm.model",
    }
    save(models.u, files["ubpe"])
    save(models.b, files["ubpe-bytelevel"])
    save(models.c, files["ubpe030"], format="ubpe030")
    save(models.b, files["tiktoken"], format="tiktoken")
    save(models.b, files["minbpe"], format="minbpe")
    save(models.b, files["hf"], format="hf")
    write_gguf(files["gguf"], models.b)
    files["sentencepiece"].write_bytes(spm_model_bytes())
    return files


# -- GGUF files edited field by field (the bad-files table and the audit) ------------------------

#: GGUF value types (gguf.GGUFValueType)
GGUF_INT32, GGUF_STRING, GGUF_ARRAY = 5, 8, 9


def gguf_fields(data: bytes) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """``(header, [(key bytes, raw value bytes with its type)])`` of a well-formed GGUF file
    (the tensor count kept in the header); used to rewrite single fields."""
    from ubpe.io.gguf import _Cursor, _read_value

    cursor = _Cursor(data, "<original>")
    cursor.take(4)
    cursor.unpack("<I")
    cursor.unpack("<Q")
    n_kv = cursor.unpack("<Q")
    header = data[:cursor.pos - 8]
    fields = []
    for _ in range(n_kv):
        start = cursor.pos
        cursor.string()  # the key
        value_start = cursor.pos
        value_type = cursor.unpack("<I")
        _read_value(cursor, value_type)
        fields.append((data[start:value_start], data[value_start:cursor.pos]))
    return header, fields


def gguf_join(header: bytes, fields: list[tuple[bytes, bytes]]) -> bytes:
    return header + struct.pack("<Q", len(fields)) + b"".join(k + v for k, v in fields)


def gguf_key(raw_key: bytes) -> str:
    return raw_key[8:].decode("utf-8", "replace")


def gguf_string_array(strings: list[bytes]) -> bytes:
    return struct.pack("<IIQ", GGUF_ARRAY, GGUF_STRING, len(strings)) + b"".join(
        struct.pack("<Q", len(s)) + s for s in strings)


def gguf_strings(raw_value: bytes) -> list[bytes]:
    _, _, n = struct.unpack_from("<IIQ", raw_value)
    out, pos = [], 16
    for _ in range(n):
        (length,) = struct.unpack_from("<Q", raw_value, pos)
        out.append(raw_value[pos + 8:pos + 8 + length])
        pos += 8 + length
    return out


def gguf_edit(data: bytes, key: str, edit) -> bytes:
    """The file with the value of ``key`` replaced by ``edit(raw value)``."""
    header, fields = gguf_fields(data)
    return gguf_join(header, [(k, edit(v) if gguf_key(k) == key else v) for k, v in fields])


def gguf_tokens_edited(data: bytes, edit, key: str = "tokenizer.ggml.tokens") -> bytes:
    """The file with its token list (or another string array) edited in place: ``edit(list of bytes)``."""
    def change(raw: bytes) -> bytes:
        strings = gguf_strings(raw)
        edit(strings)
        return gguf_string_array(strings)
    return gguf_edit(data, key, change)


def gguf_type_set(data: bytes, token: int, value: int) -> bytes:
    """The file with token ``token``'s type (an int32 array) set to ``value``."""
    def change(raw: bytes) -> bytes:
        values = list(struct.unpack_from(f"<{(len(raw) - 16) // 4}i", raw, 16))
        values[token] = value
        return raw[:16] + struct.pack(f"<{len(values)}i", *values)
    return gguf_edit(data, "tokenizer.ggml.token_type", change)
