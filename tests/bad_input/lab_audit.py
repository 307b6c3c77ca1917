"""The bad-input audit of the experiment engine's file readers (issue 37): every format
`ubpe.lab.datasets.files` reads x the mutation classes users' files arrive with, each case
read in a process of its own under a time and a memory bound, and classified.

    python tests/bad_input/lab_audit.py [--quick] [--seed N] [--json FILE]

``tests/bad_input/test_lab_audit.py`` runs the quick set in the default suite and the whole
set (more random seeds, the 2.4 GB archive bomb) in the fuzz lane (``-m slow``).

A case is a dataset (one file, or a folder) and what reading it must give:

- ``refuse``: a `DatasetError` (NaN in a series, an id past int64, an array header asking for
  8 TiB, a MIDI file claiming tracks it lacks, an unknown codec, ...);
- the documents it holds, computed here independently of the readers (a line holding U+2028,
  a BOM, CRLF line ends, a FASTA file ending in blank lines, a folder with a symbolic link
  loop, a folder with one bad file);
- for a random cut or flipped byte (``truncation``, ``flip``): numpy's own reading of the
  bytes for ``.npy`` / ``.npz`` (where numpy reads a numeric array it must be what we read,
  and what numpy refuses we must refuse); for the other formats no oracle: a read is ``read``.

Outcomes: ``error`` (a `DatasetError` naming the file), ``right`` (the documents expected),
``read`` (no oracle), and the bad ones: ``error (file not named)``, ``SILENT WRONG`` (other
documents than expected, or a read where a refusal was due), ``RAW`` (any other exception),
``HANG`` (past the time bound: the process is killed), ``MEMORY`` (`MemoryError` under the
address-space bound).
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import random
import shutil
import struct
import sys
import tempfile
import traceback
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

OUTCOMES = ("error", "right", "read", "error (file not named)", "SILENT WRONG", "RAW", "HANG", "MEMORY")
BAD_OUTCOMES = ("error (file not named)", "SILENT WRONG", "RAW", "HANG", "MEMORY")
REFUSE = "refuse"
SECONDS = 60
MEMORY_GIB = 3
#: The array bound the cases run under, so that the archive bomb of the quick set is small.
QUICK_ARRAY_LIMIT = 16 << 20
WORDS = "the cat sat on a mat and a dog ran to the red barn".split()
NOT_LINE_ENDS = ["\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e"]


@dataclass
class Case:
    fmt: str
    klass: str
    name: str
    files: dict[str, bytes]
    options: dict[str, Any] = field(default_factory=dict)
    expect: Any = None  # REFUSE, a list of documents, "numpy" (np.load decides), or None
    links: dict[str, str] = field(default_factory=dict)  # link name -> target (relative)
    path: str = ""  # the dataset's path (default: the only file, else the folder)
    names: str = ""  # what an error must name, when not the file (an option: its key)


# -- the originals ---------------------------------------------------------------------------------

def _lines(n: int = 8) -> list[str]:
    return [" ".join(WORDS[i:] + WORDS[:i]) for i in range(n)]


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _npz(compress: bool = False, **arrays) -> bytes:
    buffer = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buffer, **arrays)
    return buffer.getvalue()


def _midi(tracks: list[bytes], *, claimed: int | None = None, division: int = 480) -> bytes:
    header = b"MThd" + struct.pack(">IHHH", 6, 1, len(tracks) if claimed is None else claimed, division)
    return header + b"".join(b"MTrk" + struct.pack(">I", len(t)) + t for t in tracks)


NOTES = b"".join(b"\x00\x90" + bytes([p]) + b"\x50\x83\x60\x80" + bytes([p]) + b"\x00" for p in (60, 64, 67, 72)) \
    + b"\x00\xff\x2f\x00"


def originals() -> dict[str, tuple[dict[str, bytes], dict[str, Any]]]:
    """Per format: a valid file and the options that read it."""
    lines = _lines()
    csv = "seq,text\n" + "".join(f'"{i} {i + 1} {i + 2}",{w}\n' for i, w in enumerate(lines))
    out = {
        "text": ({"a.txt": "\n".join(lines).encode() + b"\n"}, {"format": "text"}),
        "jsonl": ({"a.jsonl": "".join(json.dumps({"t": w, "v": [i, i + 1]}) + "\n"
                                      for i, w in enumerate(lines)).encode()}, {"format": "jsonl", "field": "t"}),
        "csv": ({"a.csv": csv.encode()}, {"format": "csv", "column": "seq"}),
        "npy": ({"a.npy": _npy(np.arange(40).reshape(5, 8))}, {"format": "npy"}),
        "npz": ({"a.npz": _npz(x=np.arange(12), y=np.arange(30).reshape(3, 10))}, {"format": "npy"}),
        "fasta": ({"a.fa": b">r1 one\nACGTACGT\nACGT\n>r2\nGGCCTTAA\n"}, {"format": "fasta"}),
        "midi": ({"a.mid": _midi([NOTES])}, {"format": "midi"}),
    }
    try:
        import pandas as pd

        buffer = io.BytesIO()
        pd.DataFrame({"ids": [np.arange(i, i + 4) for i in range(6)]}).to_parquet(buffer)
        out["parquet"] = ({"a.parquet": buffer.getvalue()}, {"format": "parquet", "column": "ids"})
    except ImportError:
        pass
    return out


# -- the cases -------------------------------------------------------------------------------------

def _targeted(bomb_bytes: int) -> list[Case]:
    cases: list[Case] = []
    lines = _lines(4)
    for char in NOT_LINE_ENDS:
        docs = [f"{w}{char}{w}" for w in lines]
        name = f"U+{ord(char):04X}"
        cases += [
            Case("text", "line ends", name, {"a.txt": "\n".join(docs).encode()}, {"format": "text"}, docs),
            Case("jsonl", "line ends", name, {"a.jsonl": "".join(json.dumps({"t": d}, ensure_ascii=False) + "\n"
                                                                 for d in docs).encode()},
                 {"format": "jsonl", "field": "t"}, docs),
        ]
    cases += [
        Case("text", "bom", "utf-8 BOM", {"a.txt": "\ufeff".encode() + "\n".join(lines).encode()}, {"format": "text"},
             lines),
        Case("jsonl", "bom", "utf-8 BOM", {"a.jsonl": b"\xef\xbb\xbf" + "".join(json.dumps({"t": w}) + "\n"
                                                                               for w in lines).encode()},
             {"format": "jsonl", "field": "t"}, lines),
        Case("csv", "bom", "utf-8 BOM", {"a.csv": b"\xef\xbb\xbfcol\n" + "\n".join(lines).encode() + b"\n"},
             {"format": "csv", "column": "col"}, lines),
        Case("fasta", "bom", "utf-8 BOM", {"a.fa": b"\xef\xbb\xbf>r\nACGT\n"}, {"format": "fasta"}, ["ACGT"]),
        Case("text", "crlf", "paragraphs", {"a.txt": b"a b\r\nc d\r\n\r\ne f\r\n"},
             {"format": "text", "document": "paragraph"}, ["a b\nc d", "e f"]),
        Case("text", "crlf", "lines", {"a.txt": b"a b\r\nc d\re f\r\n"}, {"format": "text"}, ["a b", "c d", "e f"]),
        Case("jsonl", "crlf", "records", {"a.jsonl": b'{"t": "x"}\r\n{"t": "y"}\r\n'}, {"format": "jsonl", "field": "t"},
             ["x", "y"]),
        Case("csv", "crlf", "rows", {"a.csv": b"col\r\nx y\r\nz\r\n"}, {"format": "csv", "column": "col"}, ["x y", "z"]),
        Case("fasta", "crlf", "records", {"a.fa": b">a\r\nACGT\r\nAC\r\n>b\r\nGG\r\n"}, {"format": "fasta"},
             ["ACGTAC", "GG"]),
        Case("fasta", "blank end", "one blank line", {"a.fa": b">a\nACGT\nAC\n>b\nGG\n\n"}, {"format": "fasta"},
             ["ACGTAC", "GG"]),
        Case("fasta", "blank end", "three blank lines", {"a.fa": b">a\nACGT\n\n\n\n"}, {"format": "fasta"}, ["ACGT"]),
        Case("fasta", "blank end", "between records", {"a.fa": b">a\nACGT\n\n>b\nGG\n"}, {"format": "fasta"},
             ["ACGT", "GG"]),
    ]
    for fmt, data, options in [
        ("jsonl", b'{"v": [1.5, NaN]}\n', {"field": "v"}),
        ("jsonl", b'{"v": [1.5, -Infinity]}\n', {"field": "v"}),
        ("jsonl", b'{"v": [1e999]}\n', {"field": "v"}),
        ("csv", b"v\n1.5\ninf\n", {"column": "v"}),
        ("csv", b"v\n1.5\n-inf\n2\n", {"column": "v", "values": "numbers"}),
        ("npy", _npy(np.array([1.0, np.nan])), {}),
        ("npy", _npy(np.array([[1.0, np.inf]], dtype=np.float32)), {}),
    ]:
        cases.append(Case(fmt, "non-finite", data[:24].decode("latin-1"), {f"a.{fmt}": data},
                          {"format": fmt, **options}, REFUSE))
    big = np.array([1, (1 << 63) + 1], dtype=np.uint64)
    for fmt, data, options in [
        ("jsonl", b'{"v": [1, 9223372036854775808]}\n', {"field": "v"}),
        ("jsonl", b'{"v": [-9223372036854775809]}\n', {"field": "v"}),
        ("csv", b'seq\n"3 9223372036854775808"\n', {"column": "seq"}),
        ("csv", b'seq\n"[1, -9223372036854775809]"\n', {"column": "seq", "values": "ints"}),
        ("csv", b"seq\n3 " + b"9" * 5000 + b"\n", {"column": "seq"}),
        ("npy", _npy(big), {}),
        ("npz", _npz(ids=big.reshape(1, 2)), {}),
    ]:
        cases.append(Case(fmt, "id range", data[:24].decode("latin-1"), {f"a.{fmt[:3]}" if fmt != "npz" else "a.npz": data},
                          {"format": "npy" if fmt == "npz" else fmt, **options}, REFUSE))
    cases.append(Case("jsonl", "id range", "int64 bounds", {"a.jsonl": b'{"v": [-9223372036854775808, 9223372036854775807]}\n'},
                      {"format": "jsonl", "field": "v"}, [[-(1 << 63), (1 << 63) - 1]]))
    try:
        import pandas as pd

        buffer = io.BytesIO()
        pd.DataFrame({"ids": [big]}).to_parquet(buffer)
        cases.append(Case("parquet", "id range", "uint64 2^63+1", {"a.parquet": buffer.getvalue()},
                          {"format": "parquet", "column": "ids"}, REFUSE))
    except ImportError:
        pass
    huge = io.BytesIO()
    np.lib.format.write_array_header_1_0(huge, {"descr": "<i8", "fortran_order": False, "shape": (1 << 40,)})
    huge_npy = huge.getvalue() + b"\0" * 64  # 200 bytes asking for 8 TiB
    cases += [
        Case("npy", "huge header", "8 TiB in 200 bytes", {"a.npy": huge_npy}, {"format": "npy"}, REFUSE),
        Case("npz", "huge header", "8 TiB member", {"a.npz": _zip({"x.npy": huge_npy})}, {"format": "npy"}, REFUSE),
        Case("npz", "bomb", f"{bomb_bytes:,} bytes of zeros", {"a.npz": _bomb(bomb_bytes)}, {"format": "npy"}, REFUSE),
        Case("npy", "object array", "object .npy", {"a.npy": _npy(np.array([1, "a"], dtype=object))}, {"format": "npy"},
             REFUSE),
        Case("npz", "object array", "object member", {"a.npz": _npz(ok=np.arange(3), o=np.array([None, 1]))},
             {"format": "npy"}, REFUSE),
        Case("npy", "object array", "text array", {"a.npy": _npy(np.array(["a", "b"]))}, {"format": "npy"}, REFUSE),
    ]
    for codec in ("no-such-codec", "rot13", "hex"):
        cases.append(Case("text", "codec", codec, {"a.txt": b"x\n"}, {"format": "text", "encoding": codec}, REFUSE,
                          names="datasets.audit.encoding"))
        cases.append(Case("jsonl", "codec", codec, {"a.jsonl": b'{"t": "x"}\n'},
                          {"format": "jsonl", "field": "t", "encoding": codec}, REFUSE, names="datasets.audit.encoding"))
    cases += [
        Case("jsonl", "nesting", "50,000 deep", {"a.jsonl": b'{"t": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n"},
             {"format": "jsonl", "field": "t"}, REFUSE),
        Case("jsonl", "huge number", "5,000 digits", {"a.jsonl": b'{"t": [1' + b"0" * 5000 + b"]}\n"},
             {"format": "jsonl", "field": "t"}, REFUSE),
    ]
    for name, data in [
        ("division 0", _midi([NOTES], division=0)),
        ("50 tracks claimed, 1 present", _midi([NOTES], claimed=50)),
        ("short track length", _midi([NOTES])[:18] + struct.pack(">I", 12) + NOTES),
        ("cut after the header", _midi([NOTES])[:14]),
        ("0 tracks", _midi([])),
        ("no notes", _midi([b"\x00\xff\x2f\x00"])),
        ("RIFF", b"RIFF\x10\x00\x00\x00RMIDdata" + _midi([NOTES])),
    ]:
        cases.append(Case("midi", "midi structure", name, {"a.mid": data}, {"format": "midi"}, REFUSE))
    for fmt in ("text", "jsonl", "csv", "npy", "fasta", "midi"):
        options = {"text": {}, "jsonl": {"field": "t"}, "csv": {"column": "c"}}.get(fmt, {})
        cases.append(Case(fmt, "empty", "0 bytes", {f"a.{fmt}": b""}, {"format": fmt, **options}, REFUSE))
    loop_files = {f"d/{w}.txt": f"{w} {w}\n".encode() for w in WORDS[:5]}
    cases += [
        Case("text", "symlink loop", "folder", dict(loop_files), {"format": "text"},
             sorted(f"{w} {w}\n" for w in WORDS[:5]), links={"d/sub/up": "..", "d/self": "."}, path="d"),
        Case("text", "symlink loop", "glob **", dict(loop_files), {"format": "text"},
             sorted(f"{w} {w}\n" for w in WORDS[:5]), links={"d/sub/up": "..", "d/x/y": "../.."}, path="d/**/*.txt"),
        Case("text", "bad file in a folder", "one bad of five", {**loop_files, "d/zz.txt": b"\xff\xfe\xfa"},
             {"format": "text"}, sorted(f"{w} {w}\n" for w in WORDS[:5]), path="d"),
        Case("text", "bad file in a folder", "strict", {**loop_files, "d/zz.txt": b"\xff\xfe\xfa"},
             {"format": "text", "strict": True}, REFUSE, path="d"),
    ]
    return cases


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _bomb(size: int) -> bytes:
    """An ``.npz`` whose one member is ``size`` bytes of int64 zeros, deflated (about 1/1000)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("zeros.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, {"descr": "<i8", "fortran_order": False,
                                                          "shape": (size // 8,)})
            block = bytes(1 << 22)
            for start in range(0, size - size % 8, len(block)):
                member.write(block[: min(len(block), size - size % 8 - start)])
    return buffer.getvalue()


def _random(seed: int, per_format: int) -> list[Case]:
    """Cut and flipped copies of each original."""
    rng = random.Random(seed)
    cases = []
    for fmt, (files, options) in originals().items():
        (name, data), = files.items()
        for i in range(per_format):
            cut = rng.randrange(len(data))
            cases.append(Case(fmt, "truncation", f"cut at {cut}", {name: data[:cut]}, options,
                              "numpy" if fmt in ("npy", "npz") else None))
            flipped = bytearray(data)
            for _ in range(rng.randint(1, 3)):
                flipped[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            cases.append(Case(fmt, "flip", f"seed {seed}/{i}", {name: bytes(flipped)}, options,
                              "numpy" if fmt in ("npy", "npz") else None))
    return cases


def cases(seed: int = 0, per_format: int = 6, bomb_bytes: int = 2 * QUICK_ARRAY_LIMIT) -> list[Case]:
    return _targeted(bomb_bytes) + _random(seed, per_format)


# -- one case, in a process of its own ----------------------------------------------------------------

def _numpy_documents(path: Path) -> list[Any] | str:
    """What numpy reads (REFUSE unless numeric 1-D / 2-D arrays)."""
    try:
        loaded = np.load(path, allow_pickle=False)
        arrays = [loaded[k] for k in loaded.files] if hasattr(loaded, "files") else [loaded]
    except Exception:  # noqa: BLE001  (numpy refuses it: so must we)
        return REFUSE
    docs = []
    for array in arrays:
        if array.dtype.kind not in "iuf" or array.ndim not in (1, 2):
            return REFUSE
        if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
            return REFUSE
        if array.dtype.kind == "u" and array.size and array.max() >= 1 << 63:
            return REFUSE
        docs += [row.tolist() for row in ([array] if array.ndim == 1 else array) if len(row)]
    return docs or REFUSE


def _classify(case: Case, folder: Path, result: dict) -> None:
    from ubpe.lab.datasets import DatasetError
    from ubpe.lab.datasets.files import read_corpus

    for name, data in case.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    for name, target in case.links.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, folder / name, target_is_directory=True)
    path = case.path or (next(iter(case.files)) if len(case.files) == 1 else ".")
    try:
        corpus, _ = read_corpus("audit", {**case.options, "path": path, "root": str(folder)})
    except DatasetError as error:
        named = (case.names in str(error) if case.names
                 else any(Path(n).name in str(error) for n in case.files) or path in str(error))
        result["outcome"] = "error" if named else "error (file not named)"
        result["message"] = str(error)[:300]
        if case.expect not in (REFUSE, None, "numpy") or (case.expect == "numpy"
                                                            and _numpy_documents(folder / path) != REFUSE):
            result["outcome"], result["why"] = "SILENT WRONG", "refused a valid file"
        return
    docs = [d if isinstance(d, str) else d.tolist() for d in corpus.docs]
    expect = _numpy_documents(folder / path) if case.expect == "numpy" else case.expect
    if expect is None:
        result["outcome"] = "read"
    elif expect == REFUSE:
        result["outcome"], result["why"] = "SILENT WRONG", f"read {len(docs)} documents, expected a refusal"
    else:
        same = (sorted(docs, key=repr) == sorted(expect, key=repr)) if case.path else docs == expect
        result["outcome"] = "right" if same else "SILENT WRONG"
        if not same:
            result["why"] = f"read {docs[:3]!r}, expected {expect[:3]!r}"


def _run_one(case: Case, folder: str, memory_gib: float, array_limit: int, conn) -> None:
    import resource

    os.environ["UBPE_LAB_MAX_ARRAY_BYTES"] = str(array_limit)
    limit = int(memory_gib * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    result: dict[str, Any] = {"format": case.fmt, "class": case.klass, "case": case.name}
    sys.stderr = io.StringIO()  # the skipped-file lines of a folder case
    try:
        _classify(case, Path(folder), result)
    except MemoryError:
        result["outcome"] = "MEMORY"
    except BaseException as error:  # noqa: BLE001  (what the audit looks for)
        result["outcome"], result["message"] = "RAW", f"{type(error).__name__}: {str(error)[:200]}"
        result["traceback"] = traceback.format_exc()[-1500:]
    conn.send(result)


def run(all_cases: list[Case], *, seconds: int = SECONDS, memory_gib: float = MEMORY_GIB,
        array_limit: int = QUICK_ARRAY_LIMIT, workers: int = 2) -> list[dict]:
    """Every case in a forked process of its own (``workers`` at a time); a process past
    ``seconds`` is killed (a hang)."""
    import time

    # what the readers import, imported once before the forks
    import ubpe.lab.datasets.files  # noqa: F401
    for module in ("pandas", "pyarrow", "pyfaidx", "miditok", "symusic"):
        try:
            __import__(module)
        except ImportError:
            pass
    context = multiprocessing.get_context("fork")
    root = Path(tempfile.mkdtemp(prefix="ubpe-lab-audit-"))
    results: list[dict] = []
    running: list[tuple[Any, Any, Case, float]] = []
    todo = list(reversed(all_cases))
    try:
        while todo or running:
            while todo and len(running) < workers:
                case = todo.pop()
                folder = root / str(len(todo))
                folder.mkdir()
                receive, send = context.Pipe(duplex=False)
                process = context.Process(target=_run_one, args=(case, str(folder), memory_gib, array_limit, send))
                process.start()
                running.append((process, receive, case, time.monotonic()))
            for item in list(running):
                process, receive, case, started = item
                base = {"format": case.fmt, "class": case.klass, "case": case.name}
                if receive.poll(0.01):
                    results.append(receive.recv())
                elif not process.is_alive():
                    results.append({**base, "outcome": "MEMORY" if process.exitcode == -9 else "RAW",
                                    "message": f"the process died (exit {process.exitcode})"})
                elif time.monotonic() - started > seconds:
                    process.kill()
                    results.append({**base, "outcome": "HANG"})
                else:
                    continue
                process.join()
                running.remove(item)
    finally:
        for process, *_ in running:
            process.kill()
        shutil.rmtree(root, ignore_errors=True)
    return results


def table(results: list[dict]) -> str:
    """Counts per format and per mutation class, by outcome (`audit.counts_table`)."""
    from audit import counts_table

    return counts_table(results, [(key, key, sorted({r[key] for r in results})) for key in ("format", "class")],
                        OUTCOMES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the default suite's set (a small archive bomb)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write every case's result here")
    args = parser.parse_args(argv)
    if args.quick:
        results = run(cases(args.seed, per_format=6))
    else:
        from ubpe.lab.datasets._arrays import MAX_ARRAY_BYTES

        results = run(cases(args.seed, per_format=60, bomb_bytes=int(2.4e9)), array_limit=MAX_ARRAY_BYTES)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    bad = [r for r in results if r["outcome"] in BAD_OUTCOMES]
    for r in bad[:20]:
        print(r, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
