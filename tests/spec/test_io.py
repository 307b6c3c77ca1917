"""``ubpe.load`` / ``ubpe.save`` and the FORMATS table: detection by content, ``format=``
overrides, clear errors, and every family through one loader."""

from __future__ import annotations

import base64
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ubpe
from ubpe import ByteLevelBPE, ModelFormatError, UBPE, UBPEClassic
from ubpe.errors import InvalidParameterError, UBPEError
from ubpe.io import FORMATS, detect, format_module, load, save, supported

TEXTS = ["hello hello world", "hello there, world", "the cat sat on the mat"] * 5


@pytest.fixture(scope="module")
def models():
    universal = UBPE(alphabet=sorted(set("".join(TEXTS))), n_tokens=40, break_tokens=" ")
    universal.fit(TEXTS, quiet=True)
    classic = UBPEClassic(alphabet=sorted(set("".join(TEXTS))), n_tokens=40)
    classic.fit(TEXTS, quiet=True)
    bytelevel = ByteLevelBPE().fit(TEXTS, n_tokens=270, pattern="gpt2", special_tokens=["<|end|>"], quiet=True)
    ints = UBPEClassic(alphabet=5, n_tokens=12, known_words=[(1, 2)], stop_tokens=[4])
    ints.fit([[1, 2, 3, 1, 2, 0, 4], [0, 1, 2, 3]] * 5, quiet=True)
    return {"universal": universal, "classic": classic, "bytelevel": bytelevel, "ints": ints}


def test_table_rows_are_complete():
    """Every module of ``ubpe.io`` that declares a ``FORMAT`` is in the registry, in
    ``FORMAT_MODULES``' order (adding a format is its module plus that one line)."""
    import pkgutil

    import ubpe.io as io

    declaring = {m.name for m in pkgutil.iter_modules(io.__path__) if hasattr(format_module(m.name), "FORMAT")}
    assert set(io.FORMAT_MODULES) == declaring
    assert list(FORMATS) == [format_module(m).FORMAT.name for m in io.FORMAT_MODULES]
    for name, row in FORMATS.items():
        assert row.name == name and row.title and callable(row.detect)
    assert supported("read") == [name for name, row in FORMATS.items() if row.read is not None]
    assert {"gguf", "sentencepiece", "ubpe", "ubpe030", "minbpe", "tiktoken", "tekken", "hf", "clip"} <= set(FORMATS)


def test_format_registry_names_each_modules_declaration():
    import ubpe.io as io
    from ubpe.io import ours
    from ubpe.models import ubpe as ubpe_models

    assert list(io.FORMAT_REGISTRY) == [format_module(m).FORMAT.name for m in io.FORMAT_REGISTRY.values()]
    assert (ours.UNIVERSAL, ours.CLASSIC) == (ubpe_models.UNIVERSAL, ubpe_models.CLASSIC)


def _modules_after(code: str, tmp_path) -> set[str]:
    """The ``ubpe`` modules a fresh process has imported after running ``code``."""
    import subprocess
    import sys

    script = code + "\nimport sys; print(' '.join(m for m in sys.modules if m.startswith('ubpe')))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=True)
    return set(done.stdout.split())


@pytest.mark.parametrize("fmt", ["tiktoken", "hf"])
def test_importing_io_or_detecting_a_file_imports_no_reader_nor_model(models, tmp_path, fmt):
    """``import ubpe.io`` imports no format module; detecting a file imports none either (the
    detectors are `ubpe.io.sniff`'s) and no model; loading it, detected or with ``format=``,
    imports that format's module alone (issue 36: a 4 KB file's load is not the import of
    every format)."""
    path = tmp_path / "model"
    save(models["bytelevel"], path, format=fmt)
    formats = {f"ubpe.io.{m}" for m in ubpe.io.FORMAT_MODULES}
    assert _modules_after("import ubpe.io", tmp_path) & formats == set()
    detected = _modules_after(f"import ubpe.io; assert ubpe.io.detect({str(path)!r}) == {fmt!r}", tmp_path)
    assert detected & formats == set()
    assert not any(m.startswith(("ubpe.models", "ubpe.splitting", "ubpe.fit")) for m in detected)
    own = {f"ubpe.io.{ubpe.io.FORMAT_REGISTRY[fmt]}"}
    for how in ("", f", format={fmt!r}"):
        loaded = _modules_after(f"import ubpe.io; ubpe.io.load({str(path)!r}{how})", tmp_path)
        assert loaded & formats == own


def test_each_format_declares_the_detector_detection_asks():
    """`ubpe.io.sniff.DETECTORS` holds the registry's formats in its order, and each format's
    ``FORMAT.detect`` is its detector there (detection and ``FORMATS`` cannot disagree)."""
    import ubpe.io as io
    from ubpe.io.sniff import DETECTORS

    assert list(DETECTORS) == list(io.FORMAT_REGISTRY)
    assert all(FORMATS[name].detect is accepts for name, accepts in DETECTORS.items())


@pytest.mark.parametrize(
    "variant, fmt",
    [("universal", "ubpe"), ("classic", "ubpe"), ("bytelevel", "ubpe"),
     ("universal", "ubpe030"), ("classic", "ubpe030"), ("bytelevel", "tiktoken"), ("bytelevel", "hf")],
)
def test_every_writer_is_detected_as_itself(models, tmp_path, variant, fmt):
    path = tmp_path / "model"
    save(models[variant], path, format=fmt)
    assert detect(path) == fmt


@pytest.mark.parametrize("variant, fmt", [("universal", "ubpe"), ("classic", "ubpe"), ("bytelevel", "ubpe"),
                                          ("universal", "ubpe030"), ("classic", "ubpe030")])
def test_one_loader_reads_every_family(models, tmp_path, variant, fmt):
    tok = models[variant]
    path = tmp_path / "model"
    save(tok, path, format=fmt)
    loaded = ubpe.load(path)
    assert type(loaded) is type(tok) and loaded.variant == variant
    assert loaded.encode_with("hello world") == tok.encode_with("hello world")
    assert loaded.n_vocab == tok.n_vocab


def test_ubpe_load_reads_reference_json_as_the_class_methods_do(models, tmp_path):
    """Before: ``ubpe.load`` rejected ubpe 0.3.0 JSON that ``UBPE.load`` read."""
    path = tmp_path / "reference.json"
    path.write_text(models["classic"].dumps())
    assert isinstance(ubpe.load(path), UBPEClassic)
    assert UBPEClassic.load(path).tokens_mapper == ubpe.load(path).tokens_mapper
    path.write_text(models["universal"].dumps())
    assert isinstance(ubpe.load(path), UBPE) and isinstance(UBPE.load(path), UBPE)


def test_tiktoken_loads_with_pattern_and_specials(models, tmp_path):
    tok = models["bytelevel"]
    path = tmp_path / "vocab.tiktoken"
    save(tok, path, format="tiktoken")
    loaded = ubpe.load(path, pattern="gpt2", special_tokens=tok.special_tokens)
    assert loaded.mergeable_ranks() == tok.mergeable_ranks()
    text = "hello<|end|> world"
    assert loaded.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert ByteLevelBPE.load(path).mergeable_ranks() == tok.mergeable_ranks()


def test_format_overrides_detection(models, tmp_path):
    path = tmp_path / "model.json"
    models["universal"].save(path)
    with pytest.raises(ModelFormatError, match="expected 'base64 rank'"):
        load(path, format="tiktoken")
    with pytest.raises(ModelFormatError, match="no `alphabet`"):
        load(path, format="ubpe030")


def test_unknown_and_undetectable_formats_name_the_supported_ones(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"\x00\x01garbage")
    with pytest.raises(ModelFormatError, match=re.escape(", ".join(supported("read")))):
        load(path)
    with pytest.raises(ModelFormatError, match="unknown model format 'onnx'.*" + re.escape(", ".join(FORMATS))):
        load(path, format="onnx")
    with pytest.raises(ModelFormatError, match="unknown model format"):
        save(UBPE(alphabet="ab", n_tokens=3), path, format="onnx")


def test_hf_files_we_write_read_back_alike(models, tmp_path):
    path = tmp_path / "tokenizer.json"
    save(models["bytelevel"], path, format="hf")
    back = load(path)
    assert back.variant == "hf:bytelevel"
    for text in ("abba cab", "the cat saw the dog", "  x\n\ny ", "héllo"):
        assert back.encode(text) == models["bytelevel"].encode(text)


def test_formats_that_cannot_hold_a_family_say_so(models, tmp_path):
    with pytest.raises(InvalidParameterError, match="byte-level"):
        save(models["universal"], tmp_path / "x.tiktoken", format="tiktoken")
    with pytest.raises(InvalidParameterError, match="universal and classic"):
        save(models["bytelevel"], tmp_path / "x.json", format="ubpe030")
    with pytest.raises(InvalidParameterError, match="merge-list"):
        save(models["universal"], tmp_path / "tokenizer.json", format="hf")
    assert not list(tmp_path.iterdir())


def test_variant_requirement(models, tmp_path):
    path = tmp_path / "model.json"
    models["bytelevel"].save(path)
    with pytest.raises(ModelFormatError, match="holds a bytelevel model, not a universal one"):
        load(path, variant="universal")
    with pytest.raises(ModelFormatError, match="not a universal one"):
        UBPE.load(path)


def test_detection_ignores_leading_whitespace_and_key_spacing(models, tmp_path):
    path = tmp_path / "model.json"
    document = json.loads(models["universal"].to_json())
    path.write_text("\n  " + json.dumps(document, indent=2))
    assert detect(path) == "ubpe"
    assert load(path).tokens_mapper == models["universal"].tokens_mapper


def test_reference_dump_is_detected_by_its_first_key_even_when_the_head_is_all_alphabet(tmp_path):
    tok = UBPE(alphabet=20_000, n_tokens=20_004)
    tok.fit([list(range(100)) * 3, list(range(50))], quiet=True)
    model = json.loads(tok.dumps())
    reordered = {"alphabet": model.pop("alphabet"), **model}  # as written by other tools
    path = tmp_path / "reference.json"
    path.write_text(json.dumps(reordered))
    assert path.stat().st_size > 2 * 65536 and detect(path) == "ubpe030"
    assert load(path).tokens_mapper == tok.tokens_mapper
    path.write_text(json.dumps({"version": "1.0", "mapper": {}}))
    with pytest.raises(ModelFormatError, match="not a ubpe model"):
        load(path)


def loads_or_raises_a_ubpe_error(path) -> None:
    try:
        load(path)
    except UBPEError:
        pass


def _containers(children):
    return st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 300) | st.floats(allow_nan=False) | st.text(max_size=5),
    _containers,
    max_leaves=12,
)
FIELDS = st.sampled_from(["n_tokens", "alphabet", "known_words", "break_tokens", "regex_str", "stop_tokens",
                          "mapper", "weights", "format", "format_version", "body", "checksum", "variant"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(
    st.binary(max_size=200),
    st.dictionaries(FIELDS, JSON, max_size=6).map(lambda d: json.dumps(d).encode()),
    st.lists(st.tuples(st.binary(min_size=1, max_size=4), st.integers(0, 600)), max_size=20).map(
        lambda rows: "".join(f"{base64.b64encode(p).decode()} {r}\n" for p, r in rows).encode()),
))
def test_any_file_loads_or_raises_a_ubpe_error(tmp_path, data):
    path = tmp_path / "model"
    path.write_bytes(data)
    loads_or_raises_a_ubpe_error(path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(variant=st.sampled_from(["universal", "classic", "ints"]), field=FIELDS, value=JSON)
def test_a_corrupted_reference_dump_raises_a_ubpe_error(models, tmp_path, variant, field, value):
    model = json.loads(models[variant].dumps())
    model[field] = value
    path = tmp_path / "reference.json"
    path.write_text(json.dumps(model))
    loads_or_raises_a_ubpe_error(path)


BODY_FIELDS = st.sampled_from(["variant", "alphabet", "known_words", "break_tokens", "regex_str", "stop_tokens",
                               "n_tokens", "pattern", "special_tokens", "mergeable_ranks"])
VOCABULARY_FIELDS = st.sampled_from(["n_base", "merges", "pieces", "weights", "ranks"])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(variant=st.sampled_from(["universal", "classic", "bytelevel", "ints"]),
       edits=st.lists(st.tuples(st.booleans(), BODY_FIELDS, VOCABULARY_FIELDS, JSON), min_size=1, max_size=3))
def test_a_corrupted_body_with_a_valid_checksum_raises_a_ubpe_error(models, tmp_path, variant, edits):
    """A file whose checksum was recomputed after editing (by hand or by another tool)."""
    from ubpe.io.ours import checksum

    document = json.loads(models[variant].to_json())
    body = document["body"]
    for nested, field, vocabulary_field, value in edits:
        if nested and variant != "bytelevel":
            body["vocabulary"][vocabulary_field] = value
        else:
            body[field] = value
    document["checksum"] = checksum(body)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document))
    loads_or_raises_a_ubpe_error(path)
