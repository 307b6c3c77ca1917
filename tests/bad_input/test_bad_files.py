"""Bad model files, per format, through ``ubpe.load`` (with and without ``format=``).

Each row is ``BadFile(name, source, make, format, error, fragment)``: ``make(data)`` turns
the bytes of a good file of format ``source`` (see ``bad_models.model_files``) into a bad
one, which ``ubpe.load(path, format=format)`` must refuse with ``error`` and ``fragment`` in
the message. To add a case, add a row to the group of its format.
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Callable, NamedTuple

import pytest

import ubpe
from ubpe.errors import InvalidParameterError, ModelFormatError, UBPEError

from bad_models import GGUF_ARRAY, GGUF_INT32, gguf_fields, gguf_join, gguf_tokens_edited, gguf_type_set


class BadFile(NamedTuple):
    name: str
    source: str
    make: Callable[[bytes], bytes]
    format: str | None
    error: type[UBPEError]
    fragment: str


def _json(edit):
    """A row maker that edits the parsed JSON of the file."""
    def make(data: bytes) -> bytes:
        document = json.loads(data)
        edit(document)
        return json.dumps(document).encode()
    return make


def _body(edit):
    """Edit the body of one of our files and keep its checksum right (so the body checks run)."""
    def change(document):
        from ubpe.io.ours import checksum

        edit(document["body"])
        document["checksum"] = checksum(document["body"])
    return _json(change)


def _vocab(edit):
    return _body(lambda body: edit(body["vocabulary"]))


def _b64(piece: bytes) -> bytes:
    return base64.b64encode(piece)


def _set(mapping, key, value):
    mapping[key] = value


def _key_twice(data: bytes) -> bytes:
    header, fields = gguf_fields(data)
    return gguf_join(header, fields + [fields[-1]])


def _nested_arrays(depth: int):
    """A GGUF file with one more key: an array of arrays ``depth`` deep."""
    def make(data: bytes) -> bytes:
        value = struct.pack("<IQi", GGUF_INT32, 1, 1)
        for _ in range(depth - 1):
            value = struct.pack("<IQ", GGUF_ARRAY, 1) + value
        header, fields = gguf_fields(data)
        return gguf_join(header, fields + [(struct.pack("<Q", 8) + b"x.nested", struct.pack("<I", GGUF_ARRAY) + value)])
    return make


def _tokens(edit):
    def make(data: bytes) -> bytes:
        return gguf_tokens_edited(data, edit)
    return make


def _long_number(data: bytes) -> bytes:
    """A JSON file with its first integer made 4,400 digits long (past Python's int conversion limit)."""
    at = next(k for k, c in enumerate(data) if chr(c).isdigit() and data[k - 1:k] in (b" ", b":", b"["))
    return data[:at] + b"1" + b"0" * 4400 + data[at:]


def _first_tokens_swapped(doc):
    """A ubpe 0.3.0 file whose ``ubpe_model`` body (which its checksum does not cover) holds
    its first two tokens the other way round: a valid body, another model than the fields'."""
    vocabulary = doc["ubpe_model"]["body"]["vocabulary"]
    for values in vocabulary.values():
        if isinstance(values, list):
            values[0], values[1] = values[1], values[0]


def _one_id_twice(doc):
    vocab = doc["model"]["vocab"]
    vocab["{"] = vocab["y"]


ANY_FORMAT = [
    BadFile("empty", "ubpe", lambda d: b"", None, ModelFormatError, "is an empty file"),
    BadFile("blank lines", "ubpe", lambda d: b"\n\n  \n", None, ModelFormatError, "is an empty file"),
    BadFile("random bytes", "ubpe", lambda d: bytes(range(7, 250)) * 3, None, ModelFormatError, "not a ubpe model nor any other"),
    BadFile("plain text", "ubpe", lambda d: b"hello world\n", None, ModelFormatError, "not a ubpe model nor any other"),
    BadFile("JSON array", "ubpe", lambda d: b"[1, 2, 3]", None, ModelFormatError, "not a ubpe model nor any other"),
    BadFile("JSON of something else", "ubpe", lambda d: b'{"hello": 1}', None, ModelFormatError, "not a ubpe model nor any other"),
    BadFile("unknown format name", "ubpe", lambda d: d, "yaml", ModelFormatError, "unknown model format 'yaml'"),
    BadFile("format=None-like str", "ubpe", lambda d: d, "", ModelFormatError, "unknown model format ''"),
    BadFile("ours read as tiktoken", "ubpe", lambda d: d, "tiktoken", ModelFormatError, "expected 'base64 rank'"),
    BadFile("ours read as gguf", "ubpe", lambda d: d, "gguf", ModelFormatError, "GGUF"),
    BadFile("ours read as sentencepiece", "ubpe", lambda d: d, "sentencepiece", ModelFormatError, "sentencepiece"),
    BadFile("ours read as minbpe", "ubpe", lambda d: d, "minbpe", ModelFormatError, "not a minbpe model"),
    BadFile("ours read as hf", "ubpe", lambda d: d, "hf", ModelFormatError, "no `model` object"),
    BadFile("ours read as ubpe030", "ubpe", lambda d: d, "ubpe030", ModelFormatError, "alphabet"),
    BadFile("tiktoken read as ours", "tiktoken", lambda d: d, "ubpe", ModelFormatError, "not valid JSON"),
    BadFile("gguf read as ours", "gguf", lambda d: d, "ubpe", ModelFormatError, "is not valid JSON"),
    BadFile("spm read as hf", "sentencepiece", lambda d: d, "hf", ModelFormatError, "not an HF tokenizer.json (not UTF-8 text)"),
    BadFile("UTF-16 JSON", "ubpe", lambda d: d.decode().encode("utf-16"), None, ModelFormatError, "not a ubpe model nor any other"),
    BadFile("ours: integer of 4,400 digits", "ubpe", _long_number, None, ModelFormatError, "a number too long"),
    BadFile("0.3.0: integer of 4,400 digits", "ubpe030", _long_number, None, ModelFormatError, "a number too long"),
    BadFile("tokenizer.json: integer of 4,400 digits", "hf", _long_number, None, ModelFormatError, "a number too long"),
]

OURS = [
    BadFile("truncated", "ubpe", lambda d: d[: len(d) // 2], None, ModelFormatError, "not valid JSON"),
    BadFile("last byte cut", "ubpe", lambda d: d[:-1], None, ModelFormatError, "not valid JSON"),
    BadFile("weight changed", "ubpe", _json(lambda doc: doc["body"]["vocabulary"]["weights"].__setitem__(0, 9.5)), None, ModelFormatError, "checksum"),
    BadFile("no checksum", "ubpe", _json(lambda doc: doc.pop("checksum")), None, ModelFormatError, "checksum"),
    BadFile("format version 99", "ubpe", _json(lambda doc: _set(doc, "format_version", 99)), None, ModelFormatError, "format version 99"),
    BadFile("format version 0", "ubpe", _json(lambda doc: _set(doc, "format_version", 0)), None, ModelFormatError, "unknown format version 0"),
    BadFile("format version str", "ubpe", _json(lambda doc: _set(doc, "format_version", "1")), None, ModelFormatError, "no valid format_version"),
    BadFile("no body", "ubpe", _json(lambda doc: doc.pop("body")), None, ModelFormatError, "no model body"),
    BadFile("unknown variant", "ubpe", _body(lambda b: _set(b, "variant", "quantum")), None, ModelFormatError, "unknown model variant 'quantum'"),
    BadFile("no alphabet", "ubpe", _body(lambda b: b.pop("alphabet")), None, ModelFormatError, "it has no `alphabet`"),
    BadFile("empty alphabet", "ubpe", _body(lambda b: _set(b, "alphabet", [])), None, ModelFormatError, "`alphabet` must be non-empty"),
    BadFile("bad symbol tag", "ubpe", _body(lambda b: b["alphabet"].__setitem__(0, {"complex": "1j"})), None, ModelFormatError, "not a saved symbol"),
    BadFile("n_tokens str", "ubpe", _body(lambda b: _set(b, "n_tokens", "x")), None, ModelFormatError, "malformed"),
    BadFile("vocabulary not an object", "ubpe", _body(lambda b: _set(b, "vocabulary", [1])), None, ModelFormatError, "the vocabulary must be an object"),
    BadFile("vocabulary without ranks", "ubpe", _vocab(lambda v: v.pop("ranks")), None, ModelFormatError, "ranks"),
    BadFile("n_base wrong", "ubpe", _vocab(lambda v: _set(v, "n_base", v["n_base"] + 1)), None, ModelFormatError, "which spell another piece than its own"),
    BadFile("n_base 2**40", "ubpe", _vocab(lambda v: _set(v, "n_base", 2**40)), None, ModelFormatError, "32-bit"),
    BadFile("weight NaN", "ubpe", _vocab(lambda v: v["weights"].__setitem__(0, float("nan"))), None, ModelFormatError, "not a finite number"),
    BadFile("weight a str", "ubpe", _vocab(lambda v: v["weights"].__setitem__(0, "1")), None, ModelFormatError, "not a finite number"),
    BadFile("lengths differ", "ubpe", _vocab(lambda v: v["weights"].pop()), None, ModelFormatError, "differ in length"),
    BadFile("merge outside", "ubpe", _vocab(lambda v: v["merges"].__setitem__(0, [0, 10**6])), None, ModelFormatError, "outside"),
    BadFile("merge not a pair", "ubpe", _vocab(lambda v: v["merges"].__setitem__(0, [0])), None, ModelFormatError, "array of 2"),
    BadFile("piece symbol huge", "ubpe", _vocab(lambda v: v["pieces"].__setitem__(0, [2**40])), None, ModelFormatError, "32-bit"),
    BadFile("merges do not build pieces", "ubpe", _vocab(lambda v: v["pieces"].__setitem__(0, v["pieces"][0][::-1] + [0])), None, ModelFormatError, "piece"),
    BadFile("bytelevel ranks not pairs", "ubpe-bytelevel", _body(lambda b: _set(b, "mergeable_ranks", [1, 2])), None, ModelFormatError, "must be an array of [base64, rank] pairs"),
    BadFile("bytelevel pattern invalid", "ubpe-bytelevel", _body(lambda b: _set(b, "pattern", "(")), None, InvalidParameterError, "not a valid regex"),
    BadFile("bytelevel specials a list", "ubpe-bytelevel", _body(lambda b: _set(b, "special_tokens", ["<a>"])), None, ModelFormatError, "special_tokens must be an object"),
    BadFile("bytelevel special id huge", "ubpe-bytelevel", _body(lambda b: _set(b, "special_tokens", {"<a>": 2**40})), None, InvalidParameterError, "invalid id"),
    BadFile("bytelevel byte missing", "ubpe-bytelevel", _body(lambda b: b["mergeable_ranks"].pop(0)), None, ModelFormatError, "single bytes have no rank"),
]

REFERENCE = [
    BadFile("truncated", "ubpe030", lambda d: d[:-10], None, ModelFormatError, "not valid JSON"),
    BadFile("no mapper", "ubpe030", _json(lambda doc: doc.pop("mapper")), None, ModelFormatError, "no `mapper`"),
    BadFile("no weights", "ubpe030", _json(lambda doc: doc.pop("weights")), None, ModelFormatError, "no `weights`"),
    BadFile("alphabet a list", "ubpe030", _json(lambda doc: _set(doc, "alphabet", [1, 2])), None, ModelFormatError, "no `alphabet`"),
    BadFile("mapper id missing", "ubpe030", _json(lambda doc: doc["mapper"].pop(next(iter(doc["mapper"])))), None, ModelFormatError, "must be the ids 13.."),
    BadFile("extra weight", "ubpe030", _json(lambda doc: doc["weights"].update({"999": 1.0})), None, ModelFormatError, "different tokens"),
    BadFile("mapper malformed", "ubpe030", _json(lambda doc: doc["mapper"].update({k: ["x"] for k in doc["mapper"]})), None, ModelFormatError, "malformed"),
    BadFile("alphabet ids with gaps", "ubpe030", _json(lambda doc: _set(doc, "alphabet", {"a": 0, "b": 5})), None, ModelFormatError, "alphabet"),
    BadFile("known_words a number", "ubpe030", _json(lambda doc: _set(doc, "known_words", 5)), None, ModelFormatError, "`known_words` must be a JSON object"),
    BadFile("regex_str a list", "ubpe030", _json(lambda doc: _set(doc, "regex_str", ["x"])), None, ModelFormatError, "`regex_str` must be a JSON string"),
    BadFile("regex_str invalid", "ubpe030", _json(lambda doc: _set(doc, "regex_str", "(")), None, InvalidParameterError, "not a valid regex"),
    BadFile("cycle", "ubpe030", lambda d: json.dumps({"n_tokens": 4, "alphabet": {"a": 0, "b": 1}, "mapper": {"2": [3, 0], "3": [2, 1]}, "weights": {"2": 0.1, "3": 0.2}}).encode(), None, ModelFormatError, "built from itself"),
    BadFile("pieces that double", "ubpe030", lambda d: json.dumps({"n_tokens": 72, "alphabet": {"a": 0, "b": 1}, "mapper": {"2": [0, 1], **{str(t): [t - 1, t - 1] for t in range(3, 72)}}, "weights": {str(t): 0.1 for t in range(2, 72)}}).encode(), None, ModelFormatError, "more than 268,435,456 symbols"),
    BadFile("weight NaN", "ubpe030", _json(lambda doc: doc["weights"].update({k: float("nan") for k in doc["weights"]})), None, ModelFormatError, "finite"),
    BadFile("token id 2**40", "ubpe030", _json(lambda doc: doc["mapper"].update({str(2**40): [0, 1]})), None, ModelFormatError, "must be the ids 13.."),
    BadFile("pair id 2**63", "ubpe030", _json(lambda doc: doc["mapper"].update({"13": [2**63, 1]})), None, ModelFormatError, "`mapper`: token 13 maps to"),
    BadFile("pair id -2**63 - 1", "ubpe030", _json(lambda doc: doc["mapper"].update({"13": [-(2**63) - 1, 1]})), None, ModelFormatError, "`mapper`: token 13 maps to"),
    BadFile("pair of itself", "ubpe030", _json(lambda doc: doc["mapper"].update({"13": [13, 1]})), None, ModelFormatError, "`mapper`: token 13 maps to"),
    BadFile("ubpe_model body weight edited", "ubpe030",
            _json(lambda doc: doc["ubpe_model"]["body"]["vocabulary"]["weights"].__setitem__(0, 0.123)), None, ModelFormatError,
            "the `ubpe_model` body disagrees with the field `weights`"),
    BadFile("ubpe_model body: two tokens swapped", "ubpe030", _json(_first_tokens_swapped), None, ModelFormatError,
            "the `ubpe_model` body disagrees with the field `mapper`"),
]

TIKTOKEN = [
    BadFile("not base64", "tiktoken", lambda d: d + b"!!!! 999\n", None, ModelFormatError, "is not base64"),
    BadFile("three fields", "tiktoken", lambda d: d + _b64(b"zz") + b" 999 1\n", None, ModelFormatError, "expected 'base64 rank'"),
    BadFile("rank not a number", "tiktoken", lambda d: d + _b64(b"zz") + b" x\n", None, ModelFormatError, "rank 'x' is not a non-negative integer"),
    BadFile("negative rank", "tiktoken", lambda d: d + _b64(b"zz") + b" -5\n", None, ModelFormatError, "not a non-negative integer"),
    BadFile("superscript rank", "tiktoken", lambda d: d + _b64(b"zz") + " ²\n".encode(), None, ModelFormatError, "not ASCII"),
    BadFile("token twice", "tiktoken", lambda d: d + d.splitlines(keepends=True)[0].split(b" ")[0] + b" 999\n", None, ModelFormatError, "appears twice"),
    BadFile("rank twice", "tiktoken", lambda d: d + _b64(b"zzq") + b" 3\n", None, ModelFormatError, "rank 3"),
    BadFile("byte missing", "tiktoken", lambda d: b"".join(d.splitlines(keepends=True)[1:]), None, ModelFormatError, "single bytes have no rank"),
    BadFile("rank beyond 2**31", "tiktoken", lambda d: d + _b64(b"zz") + b" 99999999999\n", None, ModelFormatError, "rank"),
    BadFile("empty with format", "tiktoken", lambda d: b"", "tiktoken", ModelFormatError, "is an empty file"),
    BadFile("binary with format", "tiktoken", lambda d: b"\xff\xfe\x00" * 10, "tiktoken", ModelFormatError, "not ASCII"),
    BadFile("only one line", "tiktoken", lambda d: d.splitlines(keepends=True)[0], None, ModelFormatError, "single bytes have no rank"),
    BadFile("rank of 4,400 digits", "tiktoken", lambda d: d + _b64(b"zz") + b" 1" + b"0" * 4400 + b"\n", None, ModelFormatError,
            "is past tiktoken's 32-bit ranks"),
    BadFile("rank 2**32", "tiktoken", lambda d: d + _b64(b"zz") + f" {2**32}\n".encode(), None, ModelFormatError, "is past tiktoken's 32-bit ranks"),
]

MINBPE = [
    BadFile("only the version", "minbpe", lambda d: b"minbpe v1\n", None, ModelFormatError, "needs a pattern line"),
    BadFile("specials count a word", "minbpe", lambda d: b"minbpe v1\n\\w+\nmany\n", None, ModelFormatError, "the number of special tokens"),
    BadFile("specials count huge", "minbpe", lambda d: b"minbpe v1\n\\w+\n99999999999\n", None, ModelFormatError, "at most 10 digits, got '99999999999'"),
    BadFile("special line of one field", "minbpe", lambda d: b"minbpe v1\n\\w+\n1\n<a>\n", None, ModelFormatError, "expected '<token> <id>'"),
    BadFile("special twice", "minbpe", lambda d: b"minbpe v1\n\\w+\n2\n<a> 300\n<a> 301\n", None, ModelFormatError, "appears twice"),
    BadFile("merge of three", "minbpe", lambda d: b"minbpe v1\n\\w+\n0\n1 2 3\n", None, ModelFormatError, "expected '<left id> <right id>', got '1 2 3'"),
    BadFile("merge of unknown id", "minbpe", lambda d: b"minbpe v1\n\\w+\n0\n1 999\n", None, ModelFormatError, "999"),
    BadFile("merge of words", "minbpe", lambda d: b"minbpe v1\n\\w+\n0\na b\n", None, ModelFormatError, "an id must be a non-negative integer"),
    BadFile("pattern invalid", "minbpe", lambda d: b"minbpe v1\n(\n0\n", None, ModelFormatError, "regex"),
    BadFile("truncated", "minbpe", lambda d: d[:12], None, ModelFormatError, "needs a pattern line"),
    BadFile("pattern nested 5,000 deep", "minbpe", lambda d: b"minbpe v1\n" + b"(" * 5000 + b"a" + b")" * 5000 + b"\n0\n", None,
            ModelFormatError, "nests groups too deep to compile"),
    BadFile("pattern of 1 MiB", "minbpe", lambda d: b"minbpe v1\n" + b"a" * (1 << 20) + b"\n0\n", None, ModelFormatError,
            "characters long (at most 16,384)"),
]

HF = [
    BadFile("truncated", "hf", lambda d: d[: len(d) // 2], None, ModelFormatError, "not valid JSON"),
    BadFile("model not an object", "hf", _json(lambda doc: _set(doc, "model", 5)), None, ModelFormatError, "model"),
    BadFile("WordPiece model", "hf", _json(lambda doc: _set(doc["model"], "type", "WordPiece")), None, ModelFormatError, "WordPiece"),
    BadFile("no vocab", "hf", _json(lambda doc: doc["model"].pop("vocab")), None, ModelFormatError, "vocab"),
    BadFile("merge of unknown tokens", "hf", _json(lambda doc: doc["model"]["merges"].append(["zzq", "qqz"])), None, ModelFormatError, "zzq"),
    BadFile("vocab id a str", "hf", _json(lambda doc: doc["model"]["vocab"].update({"Ġzz": "x"})), None, ModelFormatError, "vocab"),
    BadFile("unknown pre-tokenizer", "hf", _json(lambda doc: _set(doc, "pre_tokenizer", {"type": "Quantum"})), None, ModelFormatError, "Quantum"),
    BadFile("Precompiled normalizer", "hf", _json(lambda doc: _set(doc, "normalizer", {"type": "Precompiled", "precompiled_charsmap": ""})), None, ModelFormatError, "Precompiled"),
    BadFile("added token without id", "hf", _json(lambda doc: _set(doc, "added_tokens", [{"content": "<x>"}])), None, ModelFormatError, "added"),
    BadFile("split pattern invalid", "hf", _json(lambda doc: _set(doc, "pre_tokenizer", {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated", "invert": False})), None, ModelFormatError, "regex"),
    BadFile("split pattern nested 5,000 deep", "hf", _json(lambda doc: _set(doc, "pre_tokenizer", {"type": "Split", "pattern": {"Regex": "(" * 5000 + ")" * 5000}, "behavior": "Isolated", "invert": False})),
            None, ModelFormatError, "too deep to compile"),
    BadFile("one id for two tokens", "hf", _json(_one_id_twice), None, ModelFormatError, "`vocab` gives id 121 to 2 tokens"),
]

GGUF = [
    BadFile("magic only", "gguf", lambda d: d[:4], None, ModelFormatError, "truncated"),
    BadFile("cut in the header", "gguf", lambda d: d[:20], None, ModelFormatError, "truncated"),
    BadFile("cut in the tokens", "gguf", lambda d: d[: len(d) // 2], None, ModelFormatError, "truncated"),
    BadFile("version 99", "gguf", lambda d: d[:4] + struct.pack("<I", 99) + d[8:], None, ModelFormatError, "version"),
    BadFile("kv count 2**40", "gguf", lambda d: d[:16] + struct.pack("<Q", 1 << 40) + d[24:], None, ModelFormatError, "corrupt"),
    BadFile("magic with format=gguf on JSON", "ubpe", lambda d: d, "gguf", ModelFormatError, "GGUF"),
    BadFile("tokenizer model rwkv", "gguf", lambda d: d.replace(b"gpt2", b"rwkv", 1), None, ModelFormatError, "'rwkv' is not supported"),
    BadFile("unknown pre-tokenizer", "gguf", lambda d: d.replace(b"gpt-2", b"gpt-9", 1), None, ModelFormatError, "pre-tokenizer 'gpt-9'"),
    BadFile("token type -1", "gguf", lambda d: gguf_type_set(d, 100, -1), None, ModelFormatError, "tokenizer.ggml.token_type[100] is -1"),
    BadFile("token type 7", "gguf", lambda d: gguf_type_set(d, 5, 7), None, ModelFormatError, "not a llama.cpp token type (0..6"),
    BadFile("token type -2**31", "gguf", lambda d: gguf_type_set(d, 0, -(2**31)), "gguf", ModelFormatError, "not a llama.cpp token type"),
    BadFile("key twice", "gguf", _key_twice, None, ModelFormatError, "is given twice"),
    BadFile("array of arrays", "gguf", _nested_arrays(2), None, ModelFormatError, "an array of arrays"),
    BadFile("arrays nested 5,000 deep", "gguf", _nested_arrays(5000), None, ModelFormatError, "an array of arrays"),
    BadFile("token twice", "gguf", _tokens(lambda t: t.__setitem__(101, t[100])), None, ModelFormatError,
            "tokenizer.ggml.tokens[101]"),
    BadFile("token twice once cut at its NUL", "gguf", _tokens(lambda t: t.__setitem__(101, t[100] + b"\x00x")), None,
            ModelFormatError, "is token 100 again"),
]

SENTENCEPIECE = [
    BadFile("truncated", "sentencepiece", lambda d: d[: len(d) // 2], None, ModelFormatError, "sentencepiece"),
    BadFile("first bytes only", "sentencepiece", lambda d: d[:6], "sentencepiece", ModelFormatError, "sentencepiece"),
    BadFile("random bytes as spm", "sentencepiece", lambda d: bytes(range(256)), "sentencepiece", ModelFormatError, "sentencepiece"),
    BadFile("text as spm", "sentencepiece", lambda d: b"hello", "sentencepiece", ModelFormatError, "sentencepiece"),
]

GROUPS = {
    "any format": ANY_FORMAT, "ours": OURS, "ubpe030": REFERENCE, "tiktoken": TIKTOKEN, "minbpe": MINBPE,
    "hf": HF, "gguf": GGUF, "sentencepiece": SENTENCEPIECE,
}
ROWS = [pytest.param(row, id=f"{group}: {row.name}") for group, rows in GROUPS.items() for row in rows]


@pytest.mark.parametrize("row", ROWS)
def test_bad_model_file_is_a_clear_error(m, tmp_path, row):
    path = tmp_path / m.files[row.source].name
    path.write_bytes(row.make(m.files[row.source].read_bytes()))
    with pytest.raises(row.error) as caught:
        ubpe.load(path, format=row.format)
    assert row.fragment in str(caught.value), f"{type(caught.value).__name__}: {caught.value}"
    if row.format is None or row.format in ubpe.io.FORMATS:  # (an unknown format= is the call's error)
        assert str(path) in str(caught.value), "every reader error names the file (issue 28, point 4)"


DEEP = 100_000  # far past the JSON decoder's recursion limit


@pytest.mark.parametrize("text, message", [
    ('{"format": "ubpe-model", "body": ' + "[" * DEEP + "]" * DEEP + "}", "too deep to be a model file"),
    ('{"n_tokens": 5, "alphabet": ' + "[" * DEEP + "]" * DEEP + "}", "too deep to be a model file"),
    ('{"version": "1.0", "truncation": null, "model": {}, "pre_tokenizer": ' + "[" * DEEP + "]" * DEEP + "}",
     "too deep to be a model file"),
    ('{"version": "1.0", "truncation": null, "model": {"type": "BPE"}, "normalizer": '
     + '{"type": "Sequence", "normalizers": [' * 200 + '{"type": "NFC"}' + "]}" * 200 + "}",
     "normalizer nests arrays and objects deeper than 64 levels"),
], ids=["ours", "ubpe030", "tokenizer.json", "tokenizer.json walked part"])
def test_deep_nesting_is_a_clear_error(tmp_path, text, message):
    """Issue 28, point 4: JSON nested thousands deep raised RecursionError from the decoder,
    and a reader that walks a part recursively must see a bounded depth."""
    path = tmp_path / "model.json"
    path.write_text(text)
    with pytest.raises(ModelFormatError, match=message) as caught:
        ubpe.load(path)
    assert str(path) in str(caught.value)
