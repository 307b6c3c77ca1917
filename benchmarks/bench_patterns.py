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
seeded order (``common.interleaved``); best of ``--repeats`` rounds. Text: the held-out split
of KJV + Shakespeare (``--encode-mb``), unseen by any fit. Needs the mistral-common and
openai-whisper sdists (``experiments/install_data.sh``). Results go to
``results/benchmarks/patterns.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

from common import add_provenance_arguments, interleaved, markdown_report, provenance, text_corpus, write_results

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
    }


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
    markdown = markdown_report("Vocabularies with their own pattern: ubpe vs tiktoken", command, notes, rows,
                               provenance.package_versions(PEERS), state, load_before)
    write_results(args.output, "patterns", rows, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
