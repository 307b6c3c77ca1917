"""Cold start: the first call of a fresh process, ubpe beside the system each file comes from.

    python benchmarks/bench_cold.py                 # ~5-10 min on 2 cores (quiet machine)
    python benchmarks/bench_cold.py --repeats 2 --families tiktoken --allow-dirty   # a smoke run

Every measurement runs in a fresh Python process (``subprocess``), ours and the reference's in
alternation, in a new seeded order each round; every figure is the best of ``--repeats``
rounds, and each round goes over every file in turn (a slow stretch of a shared machine, which
lasts minutes, then spoils one round of each file rather than every round of one). Per family
and file:

* import: ``import ubpe`` (``tokenizers``, ``sentencepiece``, ``tiktoken``) in the process;
* load: ``ubpe.load(path)`` (``Tokenizer.from_file``, ``SentencePieceProcessor(model_file=)``,
  ``tiktoken.Encoding`` over ``load_tiktoken_bpe``; for GGUF ``gguf.GGUFReader``, which reads
  the file but builds no tokenizer - llama.cpp has no Python loader here - in one round only:
  it takes 10-40 s on a 128k vocabulary); ``import ubpe`` imports the modules of a format when
  a file first needs them, where a reference's import loads all its library, so
* import + load: the two together, in one process (best of the rounds' sums), what a user
  waits for before the first call;
* first: load + the first ``encode`` of one sentence (the import not included), and
  import + load + first, the like-for-like figure of the two;
* load, modules imported (and load + first): ubpe's load in a fresh process that imported,
  before its clock, every module this file's load and first encode import (listed by one
  untimed process): what a reference's load follows, its import having loaded its library;
* per call: the best mean time of ``encode`` of a short text over loops of ``--calls`` calls,
  after the first call;
* per-document loop (fitted ``UBPE`` / ``UBPEClassic`` rows): characters per CPU second of
  ``encode`` called once per line over 5,000 lines of unseen Shakespeare (the fit saw the KJV),
  a first pass (after the one sentence);
* CLI: the wall time of ``python -m ubpe encode FILE --text SENTENCE`` beside ``python -c``
  that loads the file with the reference and prints the ids (interpreter start included), and
  (``ubpe script``) of the same call through the ``ubpe`` console script, as a shell runs
  ``ubpe encode``: no ``runpy`` finding the package's ``__main__`` (its imports ~8 ms).

The ids of our encode and the reference's are checked equal (``ids`` column). The machine's
per-process tables (code point classes, compiled regex programs) come from ubpe's machine cache
(`ubpe.tables_cache`), filled by one untimed process before the rounds (its encodes and one
``encode_batch``, which compiles what only a batch compiles); ``--no-cache`` runs
every process with ``UBPE_NO_CACHE=1`` instead (what a machine's very first process pays).
Files: llama.cpp's GGUF vocabularies, whisper's ``.tiktoken`` files and Mistral's
sentencepiece models and tekken file (``experiments/install_data.sh``), tokenizer.json files
built with ``tokenizers`` from them as the published ones are (``tests/hf_builders.py``), and
``UBPE`` / ``UBPEClassic`` fitted here with and without ``break_tokens``, each also as ubpe
0.3.0's JSON, which both ubpe 0.3.0 (``--reference-python``: a venv of its own) and ours load with
the 0.3.0 API, ``UBPE.loads`` (the ``0.3.0 JSON`` rows). Needs the ``[vocab]`` and ``[bench]`` extras. Results go to ``results/benchmarks/cold.md`` (and ``cold.csv``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

from common import ROOT, RESULTS, add_provenance_arguments, in_new_process, provenance, reference_python, report, versions

sys.path.insert(0, str(ROOT / "tests"))

#: the per-document loop of the fitted UBPE rows: lines of unseen prose, in a file beside the models
PROSE_FILE, PROSE_LINES, FITTED_PREFIX = "prose.txt", 5000, "ubpe-fitted-"
SENTENCE = "The quick brown fox jumps over the lazy dog, and naïve café owners don't mind."
SHORT = "the cat"
PEERS = ("ubpe", "numpy", "regex", "tokenizers", "sentencepiece", "tiktoken", "gguf")
#: the issue's targets: import (s), GGUF load of a 128k vocabulary (s), gemma-4's load (s),
#: per-call encode (s), CLI / per-call ratios to the reference
IMPORT_TARGET, GGUF_TARGET, GEMMA_TARGET, CALL_TARGET = 0.15, 0.5, 1.5, 10e-6
CLI_RATIO, CALL_RATIO = 1.5, 1.5
LOOP_TARGET = 2e6  # characters per second
#: the interpreter of the measured processes (``--python``; default: this one), and of the
#: reference ubpe 0.3.0's (``--reference-python``: a venv of its own, its package being ``ubpe`` too)
PYTHON, REFERENCE_PYTHON = [sys.executable], [None]
#: ours and the reference on the 0.3.0 JSON rows: ``UBPE.loads`` of each package (``_CHILD``)
OURS_LOADS, REFERENCE_030 = "ubpe loads", "ubpe 0.3.0"
OURS = ("ubpe", OURS_LOADS)


def _python(side: str) -> str:
    """The interpreter that runs ``side``'s processes."""
    return REFERENCE_PYTHON[0] if side == REFERENCE_030 else PYTHON[0]

# What one child process runs: {"import", "load", "first", "call"} seconds and the ids, as JSON.
# Nothing but `sys` and `time` is imported before the clock starts (json only to print the
# result): a module imported first would pre-pay part of a side's import (json imports re,
# enum, functools and collections: 10 ms of tokenizers' 22 ms import, 3 of ubpe's 6). Unless
# `preload` names modules: then they are imported first on purpose (`_preloaded`).
_CHILD = r"""
import sys, time
REFERENCE_LINES = 500  # (the note of main() says so)
side, path, sentence, short, calls, pattern, prose, fill, preload = sys.argv[1:10]
# (pattern: a .tiktoken file's split pattern; for the 0.3.0 JSON rows, the class, UBPE or UBPEClassic)
calls = int(calls)
clock = time.perf_counter
if preload:  # ubpe's modules that this file's load and first encode import, imported first (untimed)
    import importlib
    for name in preload.split(","):
        importlib.import_module(name)
t0 = clock()
if side == "ubpe":
    import ubpe
    t1 = clock()
    tok = ubpe.load(path)
    t2 = clock()
    def encode(text):
        out = tok.encode(text)
        return out[0][0] if out and isinstance(out[0], tuple) else out
elif side in ("ubpe loads", "ubpe 0.3.0"):  # the 0.3.0 API on its JSON: ours, and the reference itself
    import ubpe
    t1 = clock()
    with open(path, encoding="utf-8") as file:
        tok = getattr(ubpe, pattern).loads(file.read(), token_type=str)
    t2 = clock()
    def encode(text):
        return tok.encode(text)[0][0]
elif side == "tokenizers":
    import tokenizers
    t1 = clock()
    tok = tokenizers.Tokenizer.from_file(path)
    t2 = clock()
    def encode(text):
        return tok.encode(text, add_special_tokens=False).ids
elif side == "sentencepiece":
    import sentencepiece
    t1 = clock()
    tok = sentencepiece.SentencePieceProcessor(model_file=path)
    t2 = clock()
    encode = tok.encode
elif side == "tiktoken":
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    t1 = clock()
    tok = tiktoken.Encoding("file", pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(path), special_tokens={})
    t2 = clock()
    encode = tok.encode_ordinary
elif side == "gguf":
    import gguf
    t1 = clock()
    reader = gguf.GGUFReader(path)
    tokens = reader.fields["tokenizer.ggml.tokens"]
    t2 = clock()
    import json
    print(json.dumps({"import": t1 - t0, "load": t2 - t1, "import_load": t2 - t0}))
    sys.exit(0)
ids = list(encode(sentence))
t3 = clock()
found = {"import": t1 - t0, "load": t2 - t1, "import_load": t2 - t0, "first": t3 - t1, "import_first": t3 - t0}
if prose:  # a per-document loop, a first pass over unseen prose (CPU time: the machine may be shared)
    docs = open(prose, encoding="utf-8").read().split("\n")
    if side == "ubpe 0.3.0":  # the reference's pure-Python encode: a sample (its classic: ~0.01 M chars/s)
        docs = docs[:REFERENCE_LINES]
    started = time.process_time()
    for doc in docs:
        encode(doc)
    found["loop"] = sum(map(len, docs)) / (time.process_time() - started)
best = float("inf")
for _ in range(5):
    started = clock()
    for _ in range(calls):
        encode(short)
    best = min(best, (clock() - started) / calls)
if fill and side in ("ubpe", "ubpe loads"):
    tok.encode_batch([sentence, short])
import json
print(json.dumps({**found, "call": best, "ids": [int(i) for i in ids]}))
"""

# What the reference's one-shot CLI stand-in runs (python -c), per side
_ONE_SHOT = {
    "tokenizers": "import sys, tokenizers; print(*tokenizers.Tokenizer.from_file(sys.argv[1])"
                  ".encode(sys.argv[2], add_special_tokens=False).ids)",
    "sentencepiece": "import sys, sentencepiece; print(*sentencepiece.SentencePieceProcessor(model_file=sys.argv[1])"
                     ".encode(sys.argv[2]))",
    "ubpe 0.3.0": "import sys, ubpe; print(*getattr(ubpe, sys.argv[3]).loads(open(sys.argv[1], encoding='utf-8').read(), "
                  "token_type=str).encode(sys.argv[2])[0][0])",
    "tiktoken": "import sys, tiktoken; from tiktoken.load import load_tiktoken_bpe; "
                "print(*tiktoken.Encoding('f', pat_str=sys.argv[3], mergeable_ranks=load_tiktoken_bpe(sys.argv[1]), "
                "special_tokens={}).encode_ordinary(sys.argv[2]))",
}


def _environment(no_cache: bool) -> dict:
    env = dict(os.environ)
    # a user's Python writes bytecode: with this set (some CI images and containers do), every
    # process of an install without .pyc files (editable, or pip --no-compile) compiles ubpe's sources
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if no_cache:
        env["UBPE_NO_CACHE"] = "1"
    return env


def _child(side: str, path: Path, pattern: str | None, calls: int, env: dict, fill: bool = False,
           preload: list[str] | None = None) -> dict:
    """One fresh process's measurements; ``fill``: also a batch call at its end (untimed), which
    writes what a batch builds (GGUF lists of regexes compiled for the VM) to the machine's cache;
    ``preload``: modules imported before the clock starts."""
    prose = path.parent / PROSE_FILE
    fitted = path.name.startswith(FITTED_PREFIX)
    prose_arg = str(prose) if side in (*OURS, REFERENCE_030) and fitted and not preload else ""
    spec = [side, str(path), SENTENCE, SHORT, str(calls), pattern or "", prose_arg, "1" if fill else "",
            ",".join(preload or ())]
    out, _ = in_new_process(["-c", _CHILD, *spec], python=_python(side), cwd=path.parent, env=env,
                            what=f"{side} on {path.name}")
    return json.loads(out)


#: What `_preloaded` runs: the modules a fresh process has after ``ubpe.load`` and one encode
#: that it did not have after ``import ubpe`` (the standard library's and numpy's included, its
#: private accelerators too - ``_json``, which `ubpe.files.loads_json` imports when it first
#: reads a document; not the entries Cython adds that no import finds under that name,
#: ``cython_runtime``, ``_cyutility``: their spec is another module's or none).
_PROBE = r"""
import sys  # (json after the snapshot: it would hide the `_json` a load imports)
path, sentence, loads = sys.argv[1:4]
import ubpe
before = set(sys.modules)
if loads:  # the 0.3.0 API: UBPE.loads / UBPEClassic.loads
    with open(path, encoding="utf-8") as file:
        tok = getattr(ubpe, loads).loads(file.read(), token_type=str)
else:
    tok = ubpe.load(path)
tok.encode(sentence)
found = sorted(name for name in set(sys.modules) - before
               if getattr(getattr(sys.modules[name], "__spec__", None), "name", None) == name)
import json
print(json.dumps(found))
"""


def _preloaded(path: Path, ours: str, pattern: str | None, env: dict) -> list[str]:
    """The modules ``ubpe.load(path)`` and its first encode import (`_PROBE`): what a reference's
    import holds, imported before the clock by the `load, modules imported` figures."""
    loads = pattern if ours == OURS_LOADS else ""
    out, _ = in_new_process(["-c", _PROBE, str(path), SENTENCE, loads or ""], python=PYTHON[0], cwd=path.parent, env=env,
                            what=f"the modules of {path.name}")
    return json.loads(out)


def _one_shot(side: str, path: Path, pattern: str | None, env: dict, script: bool = False) -> float:
    """The wall time of one one-shot call: ``python -m ubpe encode`` (``script``: the ``ubpe``
    console script beside the interpreter, which pip writes and a user's shell runs; its
    ``python SCRIPT`` is what its ``#!`` line runs), or the reference's ``python -c``."""
    if side in OURS:  # (the 0.3.0 JSON rows too: `ubpe encode` reads the reference's files)
        command = [str(Path(PYTHON[0]).parent / "ubpe")] if script else ["-m", "ubpe"]
        arguments = [*command, "encode", str(path), "--text", SENTENCE]
    else:
        arguments = ["-c", _ONE_SHOT[side], str(path), SENTENCE, pattern or ""]
    _, elapsed = in_new_process(arguments, python=_python(side), cwd=path.parent, env=env,
                                what=f"one-shot {side} on {path.name}")
    return elapsed


def _round(path: Path, ours: str, peer: str | None, pattern: str | None, round_: int, calls: int,
           order: random.Random, env: dict, cli: bool, preload: list[str], best: dict[str, dict]) -> None:
    """Round ``round_`` of every measurement of one file for ubpe (side ``ours``: ``ubpe.load``,
    or the 0.3.0 API's ``loads``) and ``peer``, in an order ``order`` draws; each figure kept in
    ``best`` (by side) where it is the best so far. ``preload``: the modules of ubpe's ``modules
    imported`` side (`_preloaded`)."""
    sides = [ours, "ubpe, modules imported"] + ([peer] if peer else [])
    order.shuffle(sides)
    for side in sides:
        best.setdefault(side, {})
        if side == "gguf" and round_:  # GGUFReader takes 10-40 s on a 128k vocabulary: one round
            continue
        if side == "ubpe, modules imported":
            found = _child(ours, path, pattern, 1, env, preload=preload)
            for key in ("load", "first"):
                best[side][key] = min(best[side].get(key, float("inf")), found[key])
            continue
        # (the reference's encode takes 0.1-2 ms a call: loops of a twentieth of the calls)
        found = _child(side, path, pattern, max(1, calls // 20) if side == REFERENCE_030 else calls, env)
        if cli and side in (*OURS, *_ONE_SHOT):
            found["cli"] = _one_shot(side, path, pattern, env)
            if side in OURS:
                found["script"] = _one_shot(side, path, pattern, env, script=True)
        for key, value in found.items():
            if key == "ids":
                best[side]["ids"] = value
            elif key == "loop":  # characters per second: the best is the largest
                best[side][key] = max(best[side].get(key, 0.0), value)
            else:
                best[side][key] = min(best[side].get(key, float("inf")), value)


def _files(work: Path, families: set[str]) -> list[tuple[str, str, Path, str | None, str | None, str]]:
    """(family, name, path, reference, pattern, our side) of every file measured."""
    from vocab_corpora import MISTRAL_PACKAGE, shipped_file, vocab_path, whisper_file

    from ubpe.text.patterns import PATTERNS

    files = []
    if "tiktoken" in families:
        for name in ("gpt2.tiktoken", "multilingual.tiktoken"):
            files.append(("tiktoken", name, whisper_file(name), "tiktoken", PATTERNS["gpt2"], "ubpe"))
    if "tokenizer.json" in families:
        from hf_builders import BUILDERS, bert

        # (the trained files: a researcher's own small vocabularies, 3,000 tokens, byte-level and Metaspace)
        for name in ("gpt2", "llama3", "qwen2", "falcon", "llama2", "trained-bytelevel", "trained-metaspace", "bert"):
            path = work / f"{name}.json"
            (bert() if name == "bert" else BUILDERS[name]()).save(str(path))
            files.append(("tokenizer.json", name, path, "tokenizers", None, "ubpe"))
    if "model" in families:
        for name in ("tokenizer.model.v1", "mistral_instruct_tokenizer_241114.model.v7"):
            files.append(("sentencepiece", name, shipped_file(MISTRAL_PACKAGE, f"*/src/mistral_common/data/{name}"),
                          "sentencepiece", None, "ubpe"))
    if "tekken" in families:
        files.append(("tekken", "tekken_240911.json",
                      shipped_file(MISTRAL_PACKAGE, "*/src/mistral_common/data/tekken_240911.json"), None, None, "ubpe"))
    if "gguf" in families:
        for name in ("llama-bpe", "qwen2", "falcon", "llama-spm", "gemma-4"):
            files.append(("GGUF", name, vocab_path(name), "gguf", None, "ubpe"))
    if "ubpe" in families:
        _write_prose(work)
        reference = REFERENCE_030 if REFERENCE_PYTHON[0] else None
        for cls, breaks in (("UBPE", " "), ("UBPE", None), ("UBPEClassic", " "), ("UBPEClassic", None)):
            name = "fitted, 3,000 tokens, " + ('break_tokens=" "' if breaks else "no break_tokens")
            ours_file, reference_file = _fitted(work, cls, breaks)
            files.append((cls, name, ours_file, None, None, "ubpe"))
            files.append((f"{cls}, 0.3.0 JSON", name, reference_file, reference, cls, OURS_LOADS))
    return files


def _write_prose(work: Path) -> None:
    """Unseen prose for the per-document loop: Shakespeare's lines (the fit saw the KJV)."""
    from vocab_corpora import text_lines

    (work / PROSE_FILE).write_text("\n".join(text_lines("shakespeare", PROSE_LINES)), encoding="utf-8")


def _fitted(work: Path, cls: str, break_tokens: str | None) -> tuple[Path, Path]:
    """A ``UBPE`` / ``UBPEClassic`` fitted on KJV lines (the 0.3.0 way), saved in ubpe's format
    and as ubpe 0.3.0's JSON (``dumps``, without the key by which ours carries its exact model:
    the fields the reference writes, equal to its own by the golden tests)."""
    from vocab_corpora import text_lines

    import ubpe
    from ubpe.io.ubpe030 import EXTRA_KEY

    lines = text_lines("kjv", 3000)
    prose = (work / PROSE_FILE).read_text(encoding="utf-8")
    alphabet = sorted(set("".join(lines)) | set(prose) | set(SENTENCE) | set(SHORT))
    tok = getattr(ubpe, cls)(alphabet=alphabet, n_tokens=3000, break_tokens=break_tokens)
    tok.fit(lines, quiet=True)
    path = work / f"{FITTED_PREFIX}{cls}-{'break' if break_tokens else 'plain'}.json"
    tok.save(path)
    fields = json.loads(tok.dumps())
    del fields[EXTRA_KEY]
    reference_path = path.with_suffix(".ubpe030.json")
    reference_path.write_text(json.dumps(fields), encoding="utf-8")
    return path, reference_path


def _install_kind() -> str:
    """Whether the measured interpreter imports ubpe from an editable install (whose import
    runs meson-python's rebuild check) or from plain files (a wheel)."""
    code = "import sys, ubpe; print(any('editable' in name for name in sys.modules))"
    out, _ = in_new_process(["-c", code], python=PYTHON[0], cwd=tempfile.gettempdir(), what="import ubpe")
    editable = out.strip() == "True"
    return ("an editable install (its import includes meson-python's rebuild check: measure a wheel's venv "
            "with --python)") if editable else "installed files (a wheel or plain files)"


def _ms(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1e3:.0f} ms" if seconds >= 0.01 else f"{seconds * 1e3:.1f} ms"


def _us(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1e6:.1f} µs"


def _rate(chars_per_second: float | None) -> str:
    return "" if chars_per_second is None else f"{chars_per_second / 1e6:.3g} M chars/s"


def _ratio(ours: float | None, theirs: float | None) -> str:
    return "" if ours is None or not theirs else f"{ours / theirs:.2f}×"


def _row(family: str, name: str, peer: str | None, side: str, best: dict[str, dict]) -> dict:
    ours, theirs, imported = best[side], best.get(peer or "", {}), best["ubpe, modules imported"]
    same = "" if "ids" not in theirs else ("equal" if theirs["ids"] == ours["ids"] else "DIFFER")
    return {
        "family": family, "file": name, "reference": peer or "-",
        "import": _ms(ours["import"]), "ref import": _ms(theirs.get("import")),
        "load": _ms(ours["load"]), "ref load": _ms(theirs.get("load")), "load ratio": _ratio(ours["load"], theirs.get("load")),
        "import + load": _ms(ours["import_load"]), "ref import + load": _ms(theirs.get("import_load")),
        "import + load ratio": _ratio(ours["import_load"], theirs.get("import_load")),
        "load + first encode": _ms(ours["first"]), "ref": _ms(theirs.get("first")),
        "first ratio": _ratio(ours["first"], theirs.get("first")),
        "import + load + first": _ms(ours["import_first"]), "ref import + load + first": _ms(theirs.get("import_first")),
        "import + first ratio": _ratio(ours["import_first"], theirs.get("import_first")),
        "load, modules imported": _ms(imported["load"]), "its load ratio": _ratio(imported["load"], theirs.get("load")),
        "load + first, modules imported": _ms(imported["first"]),
        "its first ratio": _ratio(imported["first"], theirs.get("first")),
        "per call": _us(ours["call"]), "ref per call": _us(theirs.get("call")),
        "per-doc loop, first pass": _rate(ours.get("loop")), "ref per-doc loop": _rate(theirs.get("loop")),
        "CLI": _ms(ours.get("cli")), "ref CLI": _ms(theirs.get("cli")), "CLI ratio": _ratio(ours.get("cli"), theirs.get("cli")),
        "ubpe script": _ms(ours.get("script")), "script ratio": _ratio(ours.get("script"), theirs.get("cli")),
        "ids": same,
    }


FAMILIES = ("tiktoken", "tokenizer.json", "model", "tekken", "gguf", "ubpe")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="rounds (fresh processes each) per file")
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed loop of the per-call figure")
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    parser.add_argument("--no-cache", action="store_true", help="every process without ubpe's machine cache")
    parser.add_argument("--no-cli", action="store_true", help="leave out the one-shot CLI calls")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter of the measured processes, e.g. a venv with ubpe's wheel installed "
                             "(an editable install rebuilds on import: meson-python runs ninja, ~0.1-0.3 s)")
    parser.add_argument("--reference-python", default=os.environ.get("UBPE_REFERENCE_PYTHON"),
                        help="a Python >= 3.12 with ubpe==0.3.0 and ubpe-native==0.3.0, the reference of the fitted "
                             "UBPE rows (default: a venv built once under experiments/.cache, as bench_fit.py does)")
    parser.add_argument("--no-reference", action="store_true", help="leave out ubpe 0.3.0")
    parser.add_argument("--output", type=Path, default=RESULTS)
    add_provenance_arguments(parser)
    args = parser.parse_args()
    PYTHON[0] = args.python
    if "ubpe" in args.families and not args.no_reference:
        REFERENCE_PYTHON[0] = reference_python(args.reference_python)
    state = provenance.require_clean(args.allow_dirty)
    load_before = provenance.load_average()
    env = _environment(args.no_cache)
    with tempfile.TemporaryDirectory() as work:
        measured = []  # per file: (family, name, path, peer, pattern, our side, preload, its order's draws, best)
        for seed, (family, name, path, peer, pattern, ours) in enumerate(_files(Path(work), set(args.families))):
            _child(ours, path, pattern, 1, env, fill=True)  # untimed: fills the machine's cache and the page cache
            preload = _preloaded(path, ours, pattern, env)
            measured.append((family, name, path, peer, pattern, ours, preload, random.Random(seed), {}))
        # rounds outermost: a slow stretch of the machine (minutes, on this VM) spoils a round of
        # every file, not every round of one
        for round_ in range(args.repeats):
            for family, name, path, peer, pattern, ours, preload, order, best in measured:
                _round(path, ours, peer, pattern, round_, args.calls, order, env, not args.no_cli, preload, best)
            print(f"round {round_ + 1} of {args.repeats}: {len(measured)} files", flush=True)
        rows = [_row(family, name, peer, ours, best) for family, name, _, peer, _, ours, _, _, best in measured]
    # the interpreter's own path stays on this machine: the report names it by what it is
    shown = ["VENV/bin/python" if arg == args.python and arg != sys.executable else arg for arg in sys.argv[1:]]
    command = "python benchmarks/bench_cold.py " + " ".join(shown)
    notes = [
        "",
        f"ubpe as the measured processes import it: {_install_kind()}"
        + ("; VENV is a venv holding ubpe's wheel built at this commit (`pip wheel --no-build-isolation "
           "--no-deps .`) beside the peers." if args.python != sys.executable else "."),
        "",
        f"Every process fresh; best of {args.repeats} rounds, ours and the reference's alternating, each round "
        f"over every file in turn. Sentence: "
        f"{SENTENCE!r}; per call: `encode({SHORT!r})`, best mean of loops of {args.calls} calls. "
        f"{'Without' if args.no_cache else 'With'} ubpe's machine cache of tables (`ubpe.tables_cache`). "
        f"Targets (issue 36): import ≤ {IMPORT_TARGET} s; load and load + first encode ≤ the reference's "
        "(ubpe's load imports the format's modules, which a reference's import holds: `import + load` "
        "and `import + load + first` compare the two sides' whole wait, and `load, modules imported` and "
        "`load + first, modules imported` time ubpe's in a fresh process that imported, before its clock, "
        "every module this file's load and first encode import, as a reference's import does); "
        f"GGUF load ≤ {GGUF_TARGET} s for a 128k vocabulary, gemma-4 ≤ {GEMMA_TARGET} s; CLI ≤ {CLI_RATIO}× the "
        f"reference's `python -c` (`CLI`: `python -m ubpe encode`; `ubpe script`: the `ubpe encode` a shell "
        f"runs, pip's console script); per call ≤ {CALL_RATIO}× tiktoken's on byte-level files and ≤ "
        f"{CALL_TARGET * 1e6:.0f} µs everywhere; a per-document `UBPE.encode` loop ≥ {LOOP_TARGET / 1e6:.0f} M "
        "chars/s on a first pass. The GGUF reference is `gguf.GGUFReader` reading the file "
        "(it builds no tokenizer). Where a target is missed, benchmarks/PROFILE.md says why.",
    ]
    if REFERENCE_PYTHON[0]:
        notes += [
            "",
            "The `0.3.0 JSON` rows: the same fitted models as the rows above them, written as ubpe 0.3.0's JSON "
            "(its fields only), loaded the 0.3.0 way by both packages - `UBPE.loads(text, token_type=str)` "
            "(`UBPEClassic.loads`) after `import ubpe` - ours beside the reference itself "
            f"(ubpe, Python: {versions(REFERENCE_PYTHON[0]).get('ubpe (reference)', '?')}; its own venv, both "
            "packages being `ubpe`); its per-document loop runs over the first "
            "500 of the 5,000 lines (its classic encodes ~0.01 M chars/s), its per-call loops hold a twentieth "
            "of the calls, and its one-shot call is `python -c` "
            "loading the file and printing the ids.",
        ]
    report(args.output, "cold", "Cold start: fresh processes, ubpe vs the reference loaders", command, notes, rows,
           PEERS, state, load_before)


if __name__ == "__main__":
    main()
