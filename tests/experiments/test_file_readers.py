"""The readers of a user's files refuse what they cannot read with a `DatasetError` naming the
file and line or record, and read what the formats allow exactly (issue 37): lines end only
at \\n, \\r\\n, \\r; a BOM is not text; ids fit int64; arrays are bounded before they are read;
a MIDI file is whole and holds a note; globs end on symbolic link loops; a bad file of a
folder is skipped and listed (``strict = true`` stops instead); the command line says each in
one line with exit status 2."""

from __future__ import annotations

import io
import json
import struct
import sys
import zipfile

import numpy as np
import pytest

from ubpe.lab.datasets import DatasetError
from ubpe.lab.datasets.files import FileFormatError, find_files, read_corpus

#: Characters `str.splitlines` breaks at that no text format does.
NOT_LINE_ENDS = ["\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e"]


def _docs(path, **options):
    corpus, _ = read_corpus("d", {"path": str(path), **options})
    return [d if isinstance(d, str) else d.tolist() for d in corpus.docs]


@pytest.mark.parametrize("char", NOT_LINE_ENDS)
def test_lines_end_only_at_newlines(tmp_path, char):
    path = tmp_path / "t.txt"
    path.write_text(f"one{char}two\r\nthree\rfour\n", encoding="utf-8", newline="")
    assert _docs(path, format="text", document="line") == [f"one{char}two", "three", "four"]
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(json.dumps({"t": f"a{char}b"}, ensure_ascii=False) + "\r\n" + json.dumps({"t": "c"}) + "\n",
                     encoding="utf-8", newline="")
    assert _docs(jsonl, format="jsonl", field="t") == [f"a{char}b", "c"]


def test_bom_crlf_paragraphs_and_line_numbers(tmp_path):
    path = tmp_path / "p.txt"
    path.write_bytes("\ufeffa b\r\nc\r\n\r\n  \r\nd\u2028e\r\n".encode("utf-8"))
    corpus, _ = read_corpus("d", {"path": str(path), "format": "text", "document": "paragraph"})
    assert corpus.docs == ["a b\nc", "d\u2028e"] and corpus.ids == ["p.txt:1", "p.txt:5"]
    assert _docs(path, format="text", document="line") == ["a b", "c", "d\u2028e"]
    path.write_bytes("\ufeffx\ny\n".encode("utf-16"))
    assert _docs(path, format="text", encoding="utf-16") == ["x", "y"]
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_bytes(b'\xef\xbb\xbf{"t": "x"}\n')
    assert _docs(jsonl, format="jsonl", field="t") == ["x"]


@pytest.mark.parametrize("line, reason", [
    ('{"v": [1.0, NaN]}', "NaN is not a number JSON allows"),
    ('{"v": [Infinity]}', "Infinity"),
    ('{"v": [1e400, 2]}', "not a finite number"),
    ('{"v": [1, 9223372036854775808]}', "outside the 64-bit signed range"),
    ('{"v": ' + "[" * 50_000 + "]" * 50_000 + "}", "not JSON"),
    ('{"v": 1' + "0" * 5000 + "}", "not JSON"),
])
def test_jsonl_refuses_what_json_does_not_allow(tmp_path, line, reason):
    path = tmp_path / "s.jsonl"
    path.write_text('{"v": [1, 2]}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"s\.jsonl, line 2.*" + reason):
        read_corpus("d", {"path": str(path), "format": "jsonl", "field": "v"})


def test_an_unknown_codec_is_a_clear_error(tmp_path):
    from ubpe.lab.config import ConfigError, parse_config

    (tmp_path / "a.txt").write_text("x\n")
    for codec in ("no-such-codec", "rot13", 7):
        with pytest.raises(DatasetError, match="is not a text encoding Python knows"):
            read_corpus("d", {"path": str(tmp_path / "a.txt"), "format": "text", "encoding": codec})
    with pytest.raises(ConfigError, match="no-such-codec"):
        parse_config({"datasets": {"x": {"path": "a.txt", "format": "text", "encoding": "no-such-codec"}}})


def test_csv_ids_out_of_range(tmp_path):
    pytest.importorskip("pandas")
    path = tmp_path / "c.csv"
    path.write_text("seq\n1 2 3\n3 9223372036854775808\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"c\.csv, line 3, column 'seq': id 9223372036854775808 is outside"):
        read_corpus("d", {"path": str(path), "format": "csv", "column": "seq"})
    path.write_text("seq\n1 2 3\n3 " + "9" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"line 3.*5000 digits"):
        read_corpus("d", {"path": str(path), "format": "csv", "column": "seq"})
    path.write_text("seq\n-9223372036854775808 9223372036854775807\n", encoding="utf-8")
    assert _docs(path, format="csv", column="seq") == [[-(1 << 63), (1 << 63) - 1]]
    path.write_text("v\n1.5\n2.5\ninf\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"c\.csv, line 4, column 'v': not a finite number"):
        read_corpus("d", {"path": str(path), "format": "csv", "column": "v"})


def test_uint64_ids_of_2_63_and_more_are_refused(tmp_path):
    big = np.array([1, (1 << 63) + 5], dtype=np.uint64)
    np.save(tmp_path / "u.npy", big)
    with pytest.raises(FileFormatError, match=r"u\.npy: id 9223372036854775813 is outside"):
        read_corpus("d", {"path": str(tmp_path / "u.npy"), "format": "npy"})
    np.save(tmp_path / "u.npy", np.array([1, (1 << 63) - 1], dtype=np.uint64))
    assert _docs(tmp_path / "u.npy", format="npy") == [[1, (1 << 63) - 1]]
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    path = tmp_path / "u.parquet"
    pd.DataFrame({"ids": [big, big[:1]]}).to_parquet(path)
    with pytest.raises(FileFormatError, match=r"u\.parquet, row 0, column 'ids': id 9223372036854775813"):
        read_corpus("d", {"path": str(path), "format": "parquet", "column": "ids"})


def test_arrays_are_bounded_before_they_are_read(tmp_path, monkeypatch):
    header = io.BytesIO()  # magic, version, then the header asking for 2^40 int64s
    np.lib.format.write_array_header_1_0(header, {"descr": "<i8", "fortran_order": False, "shape": (1 << 40,)})
    (tmp_path / "huge.npy").write_bytes(header.getvalue() + b"\0" * 64)
    assert (tmp_path / "huge.npy").stat().st_size < 300
    with pytest.raises(FileFormatError, match=r"huge\.npy: its header declares 8,796,093,022,208 bytes"):
        read_corpus("d", {"path": str(tmp_path / "huge.npy"), "format": "npy"})
    # declared within the limit but more than the file holds: cut short
    np.save(tmp_path / "cut.npy", np.arange(100))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "cut.npy").read_bytes()[:-8])
    with pytest.raises(FileFormatError, match=r"cut\.npy: .*the file holds 792"):
        read_corpus("d", {"path": str(tmp_path / "cut.npy"), "format": "npy"})
    # an archive member that inflates past the limit: refused from the archive's directory
    monkeypatch.setenv("UBPE_LAB_MAX_ARRAY_BYTES", str(1 << 20))
    np.savez_compressed(tmp_path / "bomb.npz", zeros=np.zeros(1 << 18, dtype=np.int64))
    assert (tmp_path / "bomb.npz").stat().st_size < 10_000
    with pytest.raises(FileFormatError, match=r"bomb\.npz: its members hold 2,097,\d+ bytes uncompressed"):
        read_corpus("d", {"path": str(tmp_path / "bomb.npz"), "format": "npy"})


def test_object_and_truncated_npz_are_refused(tmp_path):
    np.savez(tmp_path / "o.npz", ok=np.arange(3), objects=np.array([1, "a"], dtype=object))
    with pytest.raises(FileFormatError, match=r"o\.npz, array 'objects': an array of object"):
        read_corpus("d", {"path": str(tmp_path / "o.npz"), "format": "npy"})
    np.savez(tmp_path / "t.npz", a=np.arange(1000))
    data = (tmp_path / "t.npz").read_bytes()
    for cut in (len(data) // 2, len(data) - 30, 40):
        (tmp_path / "t.npz").write_bytes(data[:cut])
        with pytest.raises(FileFormatError, match=r"t\.npz: not a readable \.npz archive"):
            read_corpus("d", {"path": str(tmp_path / "t.npz"), "format": "npy"})
    # a flipped byte inside the compressed data: the CRC says so
    np.savez_compressed(tmp_path / "f.npz", a=np.arange(1000))
    data = bytearray((tmp_path / "f.npz").read_bytes())
    data[200] ^= 0xFF
    (tmp_path / "f.npz").write_bytes(bytes(data))
    with pytest.raises(FileFormatError, match=r"f\.npz"):
        read_corpus("d", {"path": str(tmp_path / "f.npz"), "format": "npy"})


def test_fasta_ending_in_blank_lines(tmp_path):
    pytest.importorskip("pyfaidx", reason="the fasta extra (pyfaidx)")
    path = tmp_path / "g.fa"
    for ending in ("\n\n", "\n\n\n", "\r\n\r\n", "\n  \n", "\n\t\n"):
        path.write_bytes(f">a\nACGT\nAC\n>b\nGGTT{ending}".encode())
        assert _docs(path, format="fasta") == ["ACGTAC", "GGTT"]
        path.write_bytes(f">a\nACGT\nAC{ending}>b\nGGTT{ending}".encode())  # between records too
        assert _docs(path, format="fasta") == ["ACGTAC", "GGTT"]


def _midi(tracks: list[bytes], *, claimed=None, division=480) -> bytes:
    header = b"MThd" + struct.pack(">IHHH", 6, 1, len(tracks) if claimed is None else claimed, division)
    return header + b"".join(b"MTrk" + struct.pack(">I", len(t)) + t for t in tracks)


#: A track of three notes: note on / off pairs, then End of Track.
NOTES = b"".join(b"\x00\x90" + bytes([p]) + b"\x50\x83\x60\x80" + bytes([p]) + b"\x00" for p in (60, 64, 67)) \
    + b"\x00\xff\x2f\x00"
EMPTY = b"\x00\xff\x2f\x00"


@pytest.mark.parametrize("name, data, message", [
    ("division 0", _midi([NOTES], division=0), "division of 0"),
    ("tracks missing", _midi([NOTES], claimed=50), "claims 50 tracks, the file holds 1"),
    ("short length field", _midi([NOTES])[:18] + struct.pack(">I", 10) + NOTES, "End of Track"),
    ("cut after the header", _midi([NOTES])[:14], "claims 1 tracks, the file holds 0"),
    ("cut inside a track", _midi([NOTES])[:-5], "cut short"),
    ("0 tracks", _midi([]), "0 tracks"),
    ("no notes", _midi([EMPTY]), "holding no note"),
    ("not midi", b"RIFF....", "not a Standard MIDI File"),
])
def test_damaged_midi_is_refused(tmp_path, name, data, message):
    pytest.importorskip("miditok", reason="the midi extra (miditok)")
    (tmp_path / "good.mid").write_bytes(_midi([NOTES]))
    assert len(_docs(tmp_path / "good.mid", format="midi")[0]) > 3
    (tmp_path / "bad.mid").write_bytes(data)
    with pytest.raises(FileFormatError, match=r"bad\.mid: .*" + message):
        read_corpus("d", {"path": str(tmp_path / "bad.mid"), "format": "midi"})


def test_globs_and_folders_end_on_symlink_loops(tmp_path):
    (tmp_path / "data" / "sub").mkdir(parents=True)
    (tmp_path / "data" / "a.txt").write_text("a\n")
    (tmp_path / "data" / "sub" / "b.txt").write_text("b\n")
    (tmp_path / "data" / "sub" / "loop").symlink_to(tmp_path / "data", target_is_directory=True)
    (tmp_path / "data" / "sub" / "self").symlink_to(tmp_path / "data" / "sub", target_is_directory=True)
    names = {p.name for p in find_files("data", tmp_path)}
    assert names == {"a.txt", "b.txt"}
    assert {p.name for p in find_files("data/**/*.txt", tmp_path)} == {"a.txt", "b.txt"}
    assert [p.name for p in find_files("data/*.txt", tmp_path)] == ["a.txt"]
    # a linked folder outside the dataset is followed (once)
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "c.txt").write_text("c\n")
    (tmp_path / "data" / "more").symlink_to(tmp_path / "more", target_is_directory=True)
    assert {p.name for p in find_files("data", tmp_path)} == {"a.txt", "b.txt", "c.txt"}


def test_a_bad_file_of_a_folder_is_skipped_and_listed(tmp_path, capsys):
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(4):
        (folder / f"{i}.txt").write_text(f"note {i}\n", encoding="utf-8")
    (folder / "2.txt").write_bytes(b"bad \xff byte\n")
    corpus, _ = read_corpus("n", {"path": str(folder), "format": "text"})
    assert corpus.docs == ["note 0\n", "note 1\n", "note 3\n"]
    assert corpus.settings["skipped_files"] == [{"file": "2.txt", "error": "2.txt, line 1: not utf-8 text "
                                                                           "(invalid start byte)"}]
    assert "skipping 2.txt: 2.txt, line 1: not utf-8 text" in capsys.readouterr().err
    with pytest.raises(FileFormatError, match=r"2\.txt, line 1: not utf-8"):
        read_corpus("n", {"path": str(folder), "format": "text", "strict": True})
    with pytest.raises(DatasetError, match="strict must be true or false"):
        read_corpus("n", {"path": str(folder), "format": "text", "strict": "yes"})
    for i in range(4):
        (folder / f"{i}.txt").write_bytes(b"\xff")
    with pytest.raises(DatasetError, match=r"hold no document \(4 skipped; the first: 0\.txt, line 1"):
        read_corpus("n", {"path": str(folder), "format": "text"})


def test_a_run_lists_the_skipped_files(tmp_path, monkeypatch, capsys):
    from ubpe.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes").mkdir()
    words = "the cat sat on a mat and a dog ran to the red barn".split()
    for i in range(24):
        (tmp_path / "notes" / f"{i:02}.txt").write_text(" ".join(words[i % 7:] + words[:i % 7]), encoding="utf-8")
    (tmp_path / "notes" / "zz.txt").write_bytes(b"\xff\xfe\xfa")
    (tmp_path / "my.toml").write_text('[grid]\nvocab_sizes = ["+8"]\n[datasets.notes]\npath = "notes"\nformat = "text"\n')
    assert main(["experiment", "my.toml", "--results", "out", "--cache", "cache", "--no-progress", "-q"]) == 0
    assert "skipping zz.txt" in capsys.readouterr().err
    readme = (tmp_path / "out" / "my" / "README.md").read_text()
    assert "skipped `zz.txt`: zz.txt, line 1: not utf-8 text" in readme
    assert "zz.txt" in (tmp_path / "out" / "my" / "datasets.csv").read_text()
    (tmp_path / "my.toml").write_text((tmp_path / "my.toml").read_text() + "strict = true\n")
    assert main(["experiment", "my.toml", "--results", "out", "--cache", "cache", "--no-progress", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ubpe: error: zz.txt, line 1: not utf-8") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("fmt, module, extra", [("fasta", "pyfaidx", "fasta"), ("midi", "miditok", "midi"),
                                                 ("parquet", "pyarrow", "parquet"), ("text", "scipy", "lab")])
def test_a_missing_extra_is_one_line_naming_it(tmp_path, monkeypatch, capsys, fmt, module, extra):
    import importlib.util

    from ubpe.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.x").write_bytes(b"anything")
    column = 'column = "c"\n' if fmt == "parquet" else ""
    (tmp_path / "my.toml").write_text(f'[datasets.d]\npath = "data.x"\nformat = "{fmt}"\n{column}')
    assert main(["experiment", "my.toml", "--cache", "cache", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == f"ubpe: error: {module} is not installed: pip install 'ubpe[{extra}]'\n"


@pytest.mark.parametrize("content, options, message", [
    (b'{"t": [1, NaN]}\n', 'format = "jsonl"\nfield = "t"', "line 1: not JSON (NaN"),
    (b"x\n", 'format = "text"\nencoding = "no-such-codec"', "'no-such-codec' is not a text encoding"),
    (b"PK\x03\x04 cut", 'format = "npy"', "not a readable .npz archive"),
])
def test_bad_data_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, content, options, message):
    from ubpe.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.x").write_bytes(content)
    (tmp_path / "my.toml").write_text(f'[datasets.d]\npath = "data.x"\n{options}\n')
    assert main(["experiment", "my.toml", "--cache", "cache", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ubpe: error: ") and message in err and len(err.strip().splitlines()) == 1
    assert "internal error" not in err and "Traceback" not in err


def test_the_cli_never_shows_a_traceback_on_a_bad_file(tmp_path):
    """The same as a user runs it: a subprocess, its exit status and its whole stderr."""
    import subprocess

    (tmp_path / "data.jsonl").write_text('{"t": "a"}\n{"t": [Infinity]}\n')
    (tmp_path / "my.toml").write_text('[datasets.d]\npath = "data.jsonl"\nformat = "jsonl"\nfield = "t"\n')
    done = subprocess.run([sys.executable, "-m", "ubpe", "experiment", "my.toml", "--cache", "cache",
                           "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "ubpe: error: data.jsonl, line 2: not JSON (Infinity is not a number JSON allows)\n"


def test_a_zip_member_lying_about_its_size(tmp_path):
    """The archive's directory declares a small member; the data inflates to more: the read
    stops at the declared size and the CRC refuses it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        member = io.BytesIO()
        np.save(member, np.arange(10_000))
        archive.writestr("a.npy", member.getvalue())
    data = bytearray(buffer.getvalue())
    central = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 200)  # the central directory's uncompressed size
    local = data.find(b"PK\x03\x04")
    struct.pack_into("<I", data, local + 22, 200)
    (tmp_path / "lie.npz").write_bytes(bytes(data))
    with pytest.raises(FileFormatError, match=r"lie\.npz"):
        read_corpus("d", {"path": str(tmp_path / "lie.npz"), "format": "npy"})
