"""Vocabularies with their *own* pattern (no preset): ubpe vs tiktoken on the same ranks and pattern.

    python benchmarks/bench_patterns.py            # a few minutes on one core

Where users leave the presets: tekken's file (mistral-common's ``tekken_240911.json``, its own
pattern, ``ubpe.load``) and whisper's ``multilingual.tiktoken`` and ``gpt2.tiktoken`` with
whisper's exact regex (``ubpe.load(path, pattern=...)``, as whisper builds its tokenizer).
tiktoken gets the same ranks and pattern (``tiktoken.Encoding``); ids are checked equal.

Columns, one process, MB/s: ours on a fresh object's first pass (cold) and best of the rounds
(warm); ours through the `regex` module (the path before patterns compiled for the kernel's VM:
the same pattern with a last alternative ``|(?<=\\x00)\\x00`` that the compiler refuses - a
lookbehind - and that is never reached, since the pattern's own alternatives match at every
position); tiktoken; then ``encode_batch`` on one thread per core against tiktoken's
``encode_ordinary_batch``. One interleaved run: every round calls each row once, in a new
seeded order (``common.interleaved``); best of ``--repeats`` rounds.

Load columns, seconds: reading the file into a ready tokenizer. Ours is ``ubpe.load``;
tiktoken's is ``tiktoken.load.load_tiktoken_bpe`` + ``tiktoken.Encoding`` for a ``.tiktoken``
file, and for tekken what mistral-common's ``Tekkenizer.from_file`` does with tiktoken
(``json.load``, a base64 decode per vocabulary entry, ``tiktoken.Encoding``). Both best of
``--repeats`` interleaved rounds in this process (warm: files in the page cache, modules
imported, the regex module's pattern cache warm), and once each in a new process (cold: the
time of the load call alone: ``ubpe``, ``ubpe.io``, its formats and ``tiktoken`` are imported
before the clock starts, the pattern is compiled inside it). Text: the held-out split
of KJV + Shakespeare (``--encode-mb``), unseen by any fit. Needs the mistral-common and
openai-whisper sdists (``experiments/install_data.sh``). Results go to
``results/benchmarks/patterns.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import pathlib
import sys
import time

from common import add_provenance_arguments, in_new_process, interleaved, provenance, report, text_corpus

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results" / "benchmarks"
MB = 1_000_000
PEERS = ("ubpe", "tiktoken", "regex", "numpy")
# whisper/tokenizer.py's get_encoding
WHISPER_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# never reached after a pattern that matches at every position; a lookbehind keeps the whole
# pattern on the regex module
ON_REGEX_MODULE = r"|(?<=\x00)\x00"
sys.path.insert(0, str(ROOT / "tests"))


def _vocabularies() -> list[tuple[str, pathlib.Path, str | None]]:
    from vocab_corpora import MISTRAL_PACKAGE, shipped_file, whisper_file

    tekken = shipped_file(MISTRAL_PACKAGE, "*/src/mistral_common/data/tekken_240911.json")
    return [("tekken 240911 (own pattern)", tekken, None),
            ("whisper multilingual", whisper_file("multilingual.tiktoken"), WHISPER_PATTERN),
            ("whisper gpt2", whisper_file("gpt2.tiktoken"), WHISPER_PATTERN)]


def _row(name: str, path: pathlib.Path, pattern: str | None, text: str, docs: list[str], repeats: int) -> dict:
    import tiktoken

    import ubpe
    from ubpe.text.regex_program import compile_pattern

    def load():
        return ubpe.load(path) if pattern is None else ubpe.load(path, pattern=pattern)

    tok = load()
    own = tok.pattern
    ours_load, theirs_load = interleaved([load, lambda: _tiktoken_load(path, own)], repeats)
    ours_cold_load, theirs_cold_load = (_in_new_process(side, path, pattern) for side in ("ours", "tiktoken"))
    started = time.perf_counter()
    compiled = compile_pattern(own)  # once per process (cached afterwards)
    compile_seconds = time.perf_counter() - started
    if not compiled.total:
        raise SystemExit(f"{name}: the pattern does not run on the kernel's VM: {compiled.reason}")
    on_regex = tok.with_pattern(own + ON_REGEX_MODULE)
    if compile_pattern(on_regex.pattern).pattern_id is not None:
        raise SystemExit("the regex-module row would not run on the regex module")
    enc = tiktoken.Encoding(name, pat_str=own, mergeable_ranks=tok.mergeable_ranks(), special_tokens={})
    threads = os.cpu_count() or 1
    fresh = [load() for _ in range(repeats + 1)]  # one new object per round: a first pass each

    def cold():
        fresh.pop().encode(text)

    size = len(text.encode("utf-8")) / MB
    want = enc.encode_ordinary(text)
    same = tok.encode(text) == want and on_regex.encode(text) == want
    same_batch = tok.encode_batch(docs, threads=threads) == enc.encode_ordinary_batch(docs, num_threads=threads)
    ours_cold, ours, regex_path, theirs, ours_all, theirs_all = (size / t for t in interleaved([
        cold, lambda: tok.encode(text), lambda: on_regex.encode(text), lambda: enc.encode_ordinary(text),
        lambda: tok.encode_batch(docs, threads=threads),
        lambda: enc.encode_ordinary_batch(docs, num_threads=threads)], repeats))
    return {
        "vocabulary": name, "tokens": f"{tok.n_vocab:,}", "compile": f"{compile_seconds:.2f} s",
        "ours cold": f"{ours_cold:.1f}", "ours warm": f"{ours:.1f}", "ours via regex module": f"{regex_path:.1f}",
        "tiktoken": f"{theirs:.1f}", "cold / tiktoken": f"{ours_cold / theirs:.2f}x",
        "warm / tiktoken": f"{ours / theirs:.2f}x", "regex module / tiktoken": f"{regex_path / theirs:.2f}x",
        "ours, all threads": f"{ours_all:.1f}", "tiktoken, all threads": f"{theirs_all:.1f}",
        "all threads ratio": f"{ours_all / theirs_all:.2f}x", "same ids": str(same and same_batch),
        "load, ours (best)": f"{ours_load:.3f} s", "load, tiktoken (best)": f"{theirs_load:.3f} s",
        "load ratio (best)": f"{ours_load / theirs_load:.2f}x",
        "load, ours (new process)": f"{ours_cold_load:.3f} s",
        "load, tiktoken (new process)": f"{theirs_cold_load:.3f} s",
        "load ratio (new process)": f"{ours_cold_load / theirs_cold_load:.2f}x",
    }


def _tiktoken_load(path: pathlib.Path, pattern: str):
    """tiktoken's tokenizer of the file: ``load_tiktoken_bpe`` for a ``.tiktoken`` file; for a
    tekken file mistral-common's way (``Tekkenizer.from_file``: json, base64 per entry)."""
    import tiktoken
    import tiktoken.load

    if path.suffix == ".tiktoken":
        ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    else:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
        config = data["config"]
        n_ranks = config["default_vocab_size"] - config["default_num_special_tokens"]
        ranks = {base64.b64decode(entry["token_bytes"]): entry["rank"] for entry in data["vocab"][:n_ranks]}
    return tiktoken.Encoding(path.name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


def _in_new_process(side: str, path: pathlib.Path, pattern: str | None) -> float:
    """Seconds of one load call (``side``: ours or tiktoken) in a new process, imports excluded."""
    script = "\n".join([
        "import json, pathlib, sys, time",
        f"sys.path[:0] = [{str(ROOT / 'benchmarks')!r}, {str(ROOT)!r}]",
        "import tiktoken, tiktoken.load, ubpe, ubpe.io, ubpe.models.tekken, bench_patterns",
        f"path = pathlib.Path({str(path)!r})",
        # tiktoken's side is handed the pattern, found before the clock starts
        f"pattern = {pattern!r} or json.load(open(path, encoding='utf-8'))['config']['pattern']",
        "started = time.perf_counter()",
        "ubpe.load(path" + (f", pattern={pattern!r})" if pattern else ")") if side == "ours"
        else "bench_patterns._tiktoken_load(path, pattern)",
        "print(time.perf_counter() - started)",
    ])
    out, _ = in_new_process(["-c", script], cwd=ROOT, what=f"a {side} load of {path.name}")
    return float(out.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encode-mb", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS)
    add_provenance_arguments(parser)
    args = parser.parse_args()
    state = provenance.require_clean(args.allow_dirty)
    load_before = provenance.load_average()
    docs = text_corpus(int(args.encode_mb * MB), split="heldout")
    text = "\n".join(docs)
    rows = [_row(name, path, pattern, text, docs, args.repeats) for name, path, pattern in _vocabularies()]
    command = f"python benchmarks/bench_patterns.py --encode-mb {args.encode_mb} --repeats {args.repeats}"
    notes = [
        "",
        f"Text: {len(text) / MB:.1f} M characters of held-out KJV + Shakespeare ({len(docs)} documents for the "
        "batch columns). MB/s of UTF-8; one thread unless told; best of the rounds of one interleaved run; "
        "cold: a fresh object's first pass; compile: the pattern compiled for the kernel's VM, once per "
        "process. `ours via regex module` is the same pattern kept on the `regex` module (the path before "
        "this change). The machine is shared: compare the ratios of one run, not absolute numbers.",
    ]
    report(args.output, "patterns", "Vocabularies with their own pattern: ubpe vs tiktoken", command, notes, rows,
           PEERS, state, load_before)


if __name__ == "__main__":
    main()
