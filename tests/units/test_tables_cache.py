"""ubpe's machine cache of tables (`ubpe.tables_cache`): an entry is built once and read back
the same, a corrupted, truncated or stale entry is rebuilt, ``UBPE_NO_CACHE`` turns it off, an
unwritable folder leaves it off, and the tables a process gets from the cache split text
exactly as the tables it builds itself (also end to end, in fresh processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ubpe import tables_cache
from ubpe.errors import InvalidParameterError
from ubpe.text import class_tables, regex_program
from ubpe.text.class_tables import _every_code_point_classes, code_point_class_buffer, code_point_classes
from ubpe.text.patterns import PATTERNS

TEKKEN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
          r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}|"
          r" ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
#: patterns for the kernel's VM (total, not total, with a word boundary) and ones it refuses
PATTERNS_TRIED = (TEKKEN, r"\w+", r"\b\p{Lu}\p{Ll}*", r"(?i:ab)+c?", r"(?<=a)b", r"a|", PATTERNS["gpt2"])
TEXTS = ("Hello world, it's 2024!", "naïve CAFÉ ｆｕｌｌ 東京 🦙🦙\n\n  x", "", "ab ABc abab", "\t\r\n $ 12345")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The cache in ``tmp_path`` (on), forgotten again after the test."""
    monkeypatch.setenv(tables_cache.DIR_VARIABLE, str(tmp_path))
    monkeypatch.delenv(tables_cache.DISABLE_VARIABLE, raising=False)
    tables_cache._reset()
    yield tmp_path
    tables_cache._reset()


class Builder:
    """A table builder that counts its calls."""

    def __init__(self, value: int = 7) -> None:
        self.calls, self.value = 0, value

    def __call__(self) -> dict[str, np.ndarray]:
        self.calls += 1
        return {"table": np.arange(self.value, dtype=np.uint16), "flag": np.array(True)}


def _entries(folder) -> list:
    return sorted(p for p in folder.rglob("*" + tables_cache.SUFFIX))


def test_an_entry_is_built_once_and_read_back_equal(cache):
    build = Builder()
    first = tables_cache.cached_arrays("kind", "key", build)
    second = tables_cache.cached_arrays("kind", "key", build)
    assert build.calls == 1
    assert first.keys() == second.keys() == {"table", "flag"}
    np.testing.assert_array_equal(first["table"], second["table"])
    assert second["table"].dtype == np.uint16 and bool(second["flag"])
    assert len(_entries(cache)) == 1
    assert not list(cache.rglob("*.tmp"))  # the temporary file was renamed into place


def test_an_entry_read_back_is_private_and_outlives_its_file_being_replaced(cache):
    """Entries are mapped copy-on-write: the arrays read back can be written as a copy in
    memory could (the file and later reads keep the table), and a holder keeps what it read
    when a later process replaces the entry (by renaming a new file into place, as `_write`
    does) or removes it."""
    tables_cache.cached_arrays("kind", "key", Builder())
    held = tables_cache.cached_arrays("kind", "key", Builder())
    view = tables_cache.cached_buffers("kind", "key", Builder())["table"]
    assert held["table"].flags.writeable
    held["table"][:] = 99
    assert tables_cache.cached_arrays("kind", "key", Builder())["table"].tolist() == list(range(7))
    assert view.tolist() == list(range(7))  # (another mapping of the same file)
    (entry,) = _entries(cache)
    tables_cache._write(entry, "key", {"table": np.arange(7, dtype=np.uint16)[::-1].copy(), "flag": np.array(True)})
    assert view.tolist() == list(range(7))
    assert tables_cache.cached_arrays("kind", "key", Builder())["table"].tolist() == list(range(6, -1, -1))
    entry.unlink()
    assert view.tolist() == list(range(7))


def test_keys_and_kinds_do_not_collide(cache):
    small, large = Builder(3), Builder(5)
    assert len(tables_cache.cached_arrays("kind", "a", small)["table"]) == 3
    assert len(tables_cache.cached_arrays("kind", "b", large)["table"]) == 5
    assert len(tables_cache.cached_arrays("other", "a", large)["table"]) == 5
    assert len(tables_cache.cached_arrays("kind", "a", large)["table"]) == 3
    assert len(_entries(cache)) == 3


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "folder"])
def test_a_damaged_entry_is_rebuilt_and_replaced(cache, damage):
    build = Builder()
    tables_cache.cached_arrays("kind", "key", build)
    (entry,) = _entries(cache)
    if damage == "garbage":
        entry.write_bytes(b"not a zip file at all")
    elif damage == "truncated":
        entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    elif damage == "empty":
        entry.write_bytes(b"")
    else:  # something that cannot be read as a file at all
        entry.unlink()
        entry.mkdir()
    again = tables_cache.cached_arrays("kind", "key", build)
    assert build.calls == 2
    np.testing.assert_array_equal(again["table"], np.arange(7))
    if damage != "folder":  # a folder in the way cannot be replaced: the cache stays off for it
        assert tables_cache.cached_arrays("kind", "key", build)["table"].tolist() == list(range(7))
        assert build.calls == 2


def test_an_entry_holding_another_key_is_rebuilt(cache):
    """Two keys whose file names collided (or an entry written by other code) are not mixed up."""
    tables_cache.cached_arrays("kind", "key", Builder(3))
    (entry,) = _entries(cache)
    tables_cache._write(entry, "another key", {"table": np.arange(9)})
    build = Builder(4)
    assert tables_cache.cached_arrays("kind", "key", build)["table"].tolist() == list(range(4))
    assert build.calls == 1


def test_every_kind_of_array_reads_back_as_written(cache):
    """Dtypes, shapes (scalars, empty arrays, 2-D), text, a key with a lone surrogate: read back
    equal and writable, as the builder made them; as memoryviews too, without numpy's help."""
    arrays = {"u2": np.arange(5, dtype=np.uint16), "grid": np.arange(12, dtype=np.int32).reshape(3, 4),
              "scalar": np.array(7, np.int64), "flag": np.array(True), "empty": np.zeros(0, np.uint32),
              "bytes": np.frombuffer(b"abc", np.uint8), "floats": np.array([0.5, -1.0]), "wide": np.arange(3, dtype=np.uint64)}
    key = "a key \ud800 with a lone surrogate"
    text = {"reason": np.array("why a program failed")}
    tables_cache.cached_arrays("kinds", key, lambda: {**arrays, **text})
    found = tables_cache.cached_arrays("kinds", key, lambda: pytest.fail("rebuilt"))
    assert found.keys() == arrays.keys() | text.keys()
    for name, value in {**arrays, **text}.items():
        assert found[name].dtype == value.dtype and found[name].shape == value.shape, name
        np.testing.assert_array_equal(found[name], value)
    found["u2"][0] = 9  # writable, as np.load's arrays were
    tables_cache.cached_arrays("numbers", key, lambda: arrays)
    views = tables_cache.cached_buffers("numbers", key, lambda: pytest.fail("rebuilt"))
    for name, value in arrays.items():
        assert views[name].tolist() == (value.reshape(-1) if value.ndim == 0 or not value.size else value).tolist(), name
        assert np.asarray(views[name]).dtype == value.dtype, name
    assert views["u2"].format == "H" and views["grid"].shape == (3, 4)


@pytest.mark.parametrize("disabled", [False, True])
def test_buffers_of_numpy_arrays_and_text_read_alike_built_or_cached(cache, monkeypatch, disabled):
    """`cached_buffers` gives what it reads back when ``build`` runs too (a scalar as one
    item, 2-D kept, text as a str: a failed program's reason), with the cache on or off."""
    if disabled:
        monkeypatch.setenv(tables_cache.DISABLE_VARIABLE, "1")
        tables_cache._reset()
    arrays = {"grid": np.arange(12, dtype=np.int32).reshape(3, 4), "scalar": np.array(7, np.int64),
              "flag": np.array(True), "wide": np.arange(3, dtype=np.uint64), "reason": np.array("why not ✓")}
    for _ in range(2):
        views = tables_cache.cached_buffers("mixed", "key", lambda: arrays)
        assert views["reason"] == "why not ✓"
        assert views["grid"].shape == (3, 4) and views["grid"].tolist() == arrays["grid"].tolist()
        assert views["scalar"].tolist() == [7] and views["flag"].tolist() == [True]
        assert views["wide"].tolist() == [0, 1, 2]


def test_buffers_built_without_numpy_are_stored_and_read_back(cache):
    from array import array

    built = {"table": memoryview(array("H", [1, 2, 65535])), "ids": memoryview(array("i", [-1, 5]))}
    assert tables_cache.cached_buffers("buffers", "key", lambda: built)["table"].tolist() == [1, 2, 65535]
    again = tables_cache.cached_buffers("buffers", "key", lambda: pytest.fail("rebuilt"))
    assert again["table"].tolist() == [1, 2, 65535] and again["ids"].tolist() == [-1, 5]
    assert tables_cache.cached_arrays("buffers", "key", lambda: pytest.fail("rebuilt"))["ids"].dtype == np.int32


@pytest.mark.parametrize("header", [
    {"key": "key", "arrays": [["table", "<u2", [10 ** 12], 0]]},  # past the file's end
    {"key": "key", "arrays": [["table", "|O", [1], 0]]},  # an object dtype
    {"key": "key", "arrays": [["table", "<U99999999999", [1], 0]]},  # text past any size
    {"key": "key", "arrays": [["table", "<u2", [-1], 0]]},  # a negative extent
    {"key": "key", "arrays": [["table", "<u2", [1], -64]]},  # before the arrays
    {"key": "key", "arrays": [["table", "<u2", [1]]]},  # a field missing
    {"key": "key", "arrays": "table"},  # not a list of rows
    ["key"],  # not an object
])
def test_a_tampered_header_is_rebuilt_not_trusted(cache, header):
    build = Builder()
    tables_cache.cached_arrays("kind", "key", build)
    (entry,) = _entries(cache)
    text = json.dumps(header).encode()
    entry.write_bytes(tables_cache._MAGIC + len(text).to_bytes(4, "little") + text + bytes(64))
    assert tables_cache.cached_arrays("kind", "key", build)["table"].tolist() == list(range(7))
    assert build.calls == 2
    entry.write_bytes(tables_cache._MAGIC + (1 << 31).to_bytes(4, "little") + bytes(64))  # a header past the bound
    assert tables_cache.cached_arrays("kind", "key", build)["table"].tolist() == list(range(7))
    assert build.calls == 3


def test_the_environment_variable_turns_the_cache_off(cache, monkeypatch):
    monkeypatch.setenv(tables_cache.DISABLE_VARIABLE, "1")
    tables_cache._reset()
    build = Builder()
    tables_cache.cached_arrays("kind", "key", build)
    tables_cache.cached_arrays("kind", "key", build)
    assert build.calls == 2
    assert tables_cache.cache_dir() is None and not _entries(cache)


def test_an_unwritable_folder_leaves_the_cache_off(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv(tables_cache.DIR_VARIABLE, str(blocker / "cache"))  # under a file: mkdir fails
    monkeypatch.delenv(tables_cache.DISABLE_VARIABLE, raising=False)
    tables_cache._reset()
    try:
        build = Builder()
        assert tables_cache.cached_arrays("kind", "key", build)["table"].tolist() == list(range(7))
        assert tables_cache.cache_dir() is None
    finally:
        tables_cache._reset()


def test_the_folder_is_keyed_by_version_and_code(cache):
    folder = tables_cache.cache_dir()
    assert folder.parent == cache
    assert folder.name.startswith("tables-") and tables_cache.__version__ in folder.name


@pytest.mark.parametrize("xdg", [None, "", "   ", "/somewhere/cache"])
def test_the_user_cache_folder_is_platformdirs_own(monkeypatch, xdg):
    platformdirs = pytest.importorskip("platformdirs")
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert tables_cache.user_cache_dir() == platformdirs.user_cache_dir("ubpe", appauthor=False)


def test_a_cold_load_reads_the_cache_without_openssl_nor_platformdirs(tmp_path):
    """What a load and a first encode of a tokenizer.json import: not `hashlib` (its OpenSSL
    start), not platformdirs, not the encoders nor the writers (each a few ms of a cold start)."""
    from hf_builders import BUILDERS

    path = tmp_path / "tokenizer.json"
    BUILDERS["gpt2"]().save(str(path))
    code = ("import sys, ubpe; tok = ubpe.load(sys.argv[1]); print(tok.encode('Hello world')); "
            "print(sorted(m for m in sys.modules if m in ('hashlib', '_hashlib', 'platformdirs', 'html') "
            "or m.startswith(('ubpe.encoders', 'ubpe.io.write', 'ubpe.lab', 'ubpe.fit'))))")
    env = {**os.environ, "UBPE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("XDG_CACHE_HOME", None)
    env.pop(tables_cache.DISABLE_VARIABLE, None)
    for _ in range(2):  # the first process fills the cache, the second reads it
        out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env,
                             check=True).stdout.splitlines()
        assert json.loads(out[0]) and out[1] == "[]", out


def _forget_code_point_classes() -> None:
    class_tables._class_array.cache_clear()
    class_tables._class_buffer.cache_clear()


def test_code_point_classes_from_the_cache_equal_a_fresh_build(cache):
    fresh = _every_code_point_classes()["classes"]
    _forget_code_point_classes()
    try:
        first = code_point_classes()  # built and written
        _forget_code_point_classes()
        cached = code_point_classes()  # read back
        _forget_code_point_classes()
        buffer = code_point_class_buffer()  # read back without numpy
    finally:
        _forget_code_point_classes()
    assert cached.dtype == fresh.dtype == np.uint16 and buffer.format == "H"
    np.testing.assert_array_equal(first, fresh)
    np.testing.assert_array_equal(cached, fresh)
    np.testing.assert_array_equal(np.asarray(buffer), fresh)
    assert len(_entries(cache)) == 1


def test_a_peers_classes_are_its_runs(cache):
    from ubpe.text import peer_classes

    expected = bytes(class_tables.table_of_runs(peer_classes.RUNS["llama.cpp"], peer_classes.CHANGES.get("llama.cpp", "")))
    _forget_code_point_classes()
    try:
        built = code_point_class_buffer("llama.cpp")  # built from the runs and written
        _forget_code_point_classes()
        cached = code_point_class_buffer("llama.cpp")  # read back
        assert len(_entries(cache)) == 1
    finally:
        _forget_code_point_classes()
    assert cached.format == built.format == "H" and bytes(cached) == bytes(built) == expected


def test_a_regenerated_peer_table_is_a_new_folder_of_the_cache(tmp_path, monkeypatch):
    """A peer's entries (its classes, the programs compiled by them) are keyed by its name in a
    folder whose key hashes ``text/peer_classes.py``: a regenerated table is another folder, so
    no process reads the old table's entries (and a load whose tables are cached does not
    import the tables' module to hash them)."""
    import shutil

    package = os.path.dirname(tables_cache.__file__)
    for name in tables_cache._SOURCES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(os.path.join(package, name), tmp_path / name)
    monkeypatch.setattr(tables_cache, "__file__", str(tmp_path / "tables_cache.py"))
    before = tables_cache._code_key()
    assert tables_cache._code_key() == before
    tables = tmp_path / "text" / "peer_classes.py"
    tables.write_text(tables.read_text(encoding="utf-8").replace('"0 0;', '"0 1;', 1), encoding="utf-8")
    assert tables_cache._code_key() != before


def test_the_code_key_is_remembered_per_install_and_follows_an_edit(tmp_path, monkeypatch):
    """With the cache's root the code key is computed once and then read back (no source read,
    no `regex` lookup: ~0.5 ms of a first encode), under a signature of the sources' sizes and
    modification times: an edited source, even of the same size, is a new key; a damaged or
    missing memo, or a root that cannot be written, only means computing it again."""
    import shutil

    package = os.path.dirname(tables_cache.__file__)
    for name in tables_cache._SOURCES:
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(os.path.join(package, name), tmp_path / "pkg" / name)
    monkeypatch.setattr(tables_cache, "__file__", str(tmp_path / "pkg" / "tables_cache.py"))
    root = tmp_path / "root"
    root.mkdir()
    want = tables_cache._code_key()
    assert tables_cache._code_key(str(root)) == want
    memos = list((root / "code-keys").iterdir())
    assert len(memos) == 1 and memos[0].read_text() == want

    computed = []
    real_version = tables_cache._regex_version
    monkeypatch.setattr(tables_cache, "_regex_version", lambda: computed.append(1) or real_version())
    assert tables_cache._code_key(str(root)) == want and computed == []  # read back
    source = tmp_path / "pkg" / "text" / "peer_classes.py"
    stat = source.stat()
    source.write_text(source.read_text(encoding="utf-8").replace('"0 0;', '"0 1;', 1), encoding="utf-8")
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert source.stat().st_size == stat.st_size
    edited = tables_cache._code_key(str(root))
    assert edited != want and edited == tables_cache._code_key() and computed == [1, 1]
    assert len(list((root / "code-keys").iterdir())) == 2
    for memo in (root / "code-keys").iterdir():
        memo.write_bytes(b"not a key at all")
    assert tables_cache._code_key(str(root)) == edited and len(computed) == 3
    assert tables_cache._code_key(str(root)) == edited and len(computed) == 3  # (written again)
    (tmp_path / "a file").write_text("")
    assert tables_cache._code_key(str(tmp_path / "a file")) == edited  # (a root that cannot be written)


def test_a_peers_program_is_an_entry_of_its_own_keyed_by_the_peers_table(cache, monkeypatch):
    """A program compiled by a peer's Unicode is cached apart from the `regex` module's (a
    regenerated peer table is a new folder: the test above)."""
    pattern = r"x\p{L}+y"
    keys = [regex_program._program_key(pattern, unicode) for unicode in ("regex", "tiktoken", "llama.cpp")]
    assert len(set(keys)) == 3 and keys[0] == pattern
    assert not regex_program.compiles_quickly(pattern, "llama.cpp")
    tables_cache.cached_arrays("program", keys[2], lambda: regex_program._program(pattern, "llama.cpp"))
    assert regex_program.compiles_quickly(pattern, "llama.cpp") and not regex_program.compiles_quickly(pattern)
    with pytest.raises(InvalidParameterError, match="one of regex, tiktoken"):
        regex_program.compile_pattern(pattern, "unicodedata")


@pytest.mark.parametrize("pattern", PATTERNS_TRIED)
def test_a_program_from_the_cache_equals_a_fresh_compile(cache, pattern):
    fresh = regex_program._program(pattern)
    tables_cache.cached_arrays("program", pattern, lambda: regex_program._program(pattern))
    cached = tables_cache.cached_arrays("program", pattern, lambda: pytest.fail("not read from the cache"))
    assert cached.keys() == fresh.keys()
    for name, array in fresh.items():
        assert cached[name].dtype == array.dtype, name
        np.testing.assert_array_equal(cached[name], array, err_msg=name)


_SPLIT = r"""
import json, sys
from ubpe.text.scanner import pretokenize
out = []
for pattern in json.loads(sys.argv[1]):
    for text in json.loads(sys.argv[2]):
        symbols, bounds = pretokenize(text, pattern)
        out.append([symbols.tolist(), bounds.tolist()])
print(json.dumps(out))
"""


def _split_in_fresh_process(tmp_path, *, disabled: bool) -> list:
    env = {**os.environ, tables_cache.DIR_VARIABLE: str(tmp_path / "cache")}
    env.pop(tables_cache.DISABLE_VARIABLE, None)
    if disabled:
        env[tables_cache.DISABLE_VARIABLE] = "1"
    patterns = [p for p in PATTERNS_TRIED if p != "a|"] + [PATTERNS["o200k"]]
    done = subprocess.run([sys.executable, "-c", _SPLIT, json.dumps(patterns), json.dumps(TEXTS)],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def test_fresh_processes_split_the_same_with_and_without_the_cache(tmp_path):
    without = _split_in_fresh_process(tmp_path, disabled=True)
    assert not (tmp_path / "cache").exists()
    filling = _split_in_fresh_process(tmp_path, disabled=False)
    entries = _entries(tmp_path / "cache")
    assert entries  # the classes and the programs were written
    reading = _split_in_fresh_process(tmp_path, disabled=False)
    assert without == filling == reading
    assert _entries(tmp_path / "cache") == entries


def _mistral_model():
    from vocab_corpora import MISTRAL_PACKAGE, shipped_file

    return shipped_file(MISTRAL_PACKAGE, "*/src/mistral_common/data/tokenizer.model.v1")


def test_sentencepiece_merge_rules_from_the_cache_equal_a_fresh_derivation(cache):
    import ubpe

    tok = ubpe.load(_mistral_model())  # (its rules derived in C; _merge_rules derives and writes them)
    mergeable = np.isin(tok.token_types, (1, 4, 5))  # NORMAL, USER_DEFINED, UNUSED: what the kernel merges
    fresh = tok._derive_merge_rules(mergeable)
    cached = tok._merge_rules(mergeable)
    assert any(p.name.startswith("spm-rules-") for p in _entries(cache))
    assert cached.keys() == fresh.keys()
    for name, value in fresh.items():
        if isinstance(value, np.ndarray):
            assert cached[name].dtype == value.dtype, name
            np.testing.assert_array_equal(cached[name], value, err_msg=name)
        else:
            assert cached[name] == value and type(cached[name]) is type(value), name
    tok.scores[-1] += 1.0  # other scores are another key: derived again, not read
    other = tok._merge_rules(mergeable)
    assert len([p for p in _entries(cache) if p.name.startswith("spm-rules-")]) == 2
    assert other.keys() == fresh.keys()


_ENCODE = r"""
import json, sys
import ubpe
tok = ubpe.load(sys.argv[1])
print(json.dumps([tok.encode(text) for text in json.loads(sys.argv[2])]))
"""


def test_fresh_processes_encode_a_sentencepiece_model_the_same_with_and_without_the_cache(tmp_path):
    path = str(_mistral_model())
    runs = []
    for disabled in (True, False, False):
        env = {**os.environ, tables_cache.DIR_VARIABLE: str(tmp_path / "cache")}
        env.pop(tables_cache.DISABLE_VARIABLE, None)
        if disabled:
            env[tables_cache.DISABLE_VARIABLE] = "1"
        done = subprocess.run([sys.executable, "-c", _ENCODE, path, json.dumps(TEXTS)], capture_output=True,
                              text=True, env=env, check=True)
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1] == runs[2]
    # a .model file's merge rules are derived in C at every load (ubpe_native._spm_proto), not cached
    assert not any(p.name.startswith("spm-rules-") for p in _entries(tmp_path / "cache"))


def test_is_cached_says_whether_an_entry_is_there(cache, monkeypatch):
    assert not tables_cache.is_cached("kind", "key")
    tables_cache.cached_arrays("kind", "key", Builder())
    assert tables_cache.is_cached("kind", "key") and not tables_cache.is_cached("kind", "other")
    assert not tables_cache.is_cached("other kind", "key")
    monkeypatch.setenv(tables_cache.DISABLE_VARIABLE, "1")
    tables_cache._reset()
    assert not tables_cache.is_cached("kind", "key")


_PASSES = r"""
import json, sys
from ubpe.text.pretokenizers import Pretokenizer, _stand_ins
pre = Pretokenizer.for_type("falcon")
before = pre.vm_patterns(compile=False)
if sys.argv[1] == "compile":
    pre.vm_patterns()
print(json.dumps([before is not None, _stand_ins.cache_info().currsize > 0]))
"""


def test_a_list_of_regexes_runs_on_the_vm_for_one_text_once_the_machine_has_its_programs(tmp_path):
    """``vm_patterns(compile=False)`` (one text's encode of a GGUF falcon vocabulary) takes the
    VM programs only when reading them is a look-up: a process that finds them in the
    machine's cache (a batch compiled them once), not a process on a machine without them; and
    the process that finds them builds no code point's stand-in (~0.3-1 s): the VM patterns the
    regexes become are read from the cache too (`vm_pattern`)."""
    env = {**os.environ, tables_cache.DIR_VARIABLE: str(tmp_path / "cache")}
    env.pop(tables_cache.DISABLE_VARIABLE, None)

    def compiled_without_asking(action: str) -> list:
        done = subprocess.run([sys.executable, "-c", _PASSES, action], capture_output=True, text=True, env=env,
                              check=True)
        return json.loads(done.stdout)  # [programs found, stand-ins built]

    assert compiled_without_asking("look") == [False, True]
    assert compiled_without_asking("compile") == [False, False]  # ... it compiles them, into the cache
    assert compiled_without_asking("look") == [True, False]
