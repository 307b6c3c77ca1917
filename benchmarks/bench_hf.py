"""HF ``tokenizer.json`` files: ubpe's import vs HF ``tokenizers`` itself, side by side.

    python benchmarks/bench_hf.py             # ~8 min on 2 cores

The files are the tests' (``tests/hf_builders.py``), one per pre-tokenizer family ubpe reads:
llama.cpp's GPT-2, Llama 3, Qwen2, Falcon, StarCoder, DeepSeek-Coder and Llama 2 vocabularies
assembled as the published ``tokenizer.json`` files are, RoBERTa, tekken's split, CLIP, BERT's
WordPiece, and BPE models trained with ``tokenizers`` (byte-level, Metaspace, words, byte
fallback). For each: the time to load the file (ubpe.load,
``Tokenizer.from_file``), and encoding throughput on the same real text - every script of the
UDHR, the KJV, Shakespeare and Python's standard library, held-out lines - as MB of UTF-8 per
second, the best of ``--repeats`` interleaved rounds (``common.interleaved``): ubpe's and HF's
``encode`` per line (one thread), and
both ``encode_batch`` (all threads: ubpe one per core, HF its rayon pool). Then every file
on every core, cold (a fresh object's first pass) and warm: ubpe's ``encode_batch`` and
``encode_batch_to_numpy`` beside HF's ``encode_batch`` and, for the byte-level files,
tiktoken's ``encode_ordinary_batch`` on the same ranks and regex (`common.every_core_rows`).
Ids are checked to be identical first. Results go to ``results/benchmarks/hf.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from common import EVERY_CORE_HEADER, ROOT, best_time, every_core_rows, interleaved, provenance

sys.path.insert(0, str(ROOT / "tests"))

import tokenizers  # noqa: E402

import ubpe  # noqa: E402
from hf_builders import BUILDERS, bert  # noqa: E402
from vocab_corpora import text_lines  # noqa: E402

#: every builder of tests/hf_builders.py (every pre-tokenizer family ubpe reads from a
#: tokenizer.json: byte-level, multi-step Split, metaspace, words, byte fallback, CLIP) and BERT's
#: WordPiece: the issue's targets are on every imported family
STYLES = (*BUILDERS, "bert")
RESULTS = ROOT / "results" / "benchmarks"


def real_lines() -> list[str]:
    from experiments.datasets import load

    lines = [line for split in ("train", "heldout") for doc in load("udhr", split).docs
             for line in str(doc).split("\n") if line.strip()]
    return lines + text_lines("kjv", 5000) + text_lines("shakespeare", 3000) + text_lines("stdlib", 3000)


def _peers(path: str, ours, style: str) -> dict:
    """HF ``tokenizers`` on the file, and tiktoken on a byte-level file's ranks and regex."""
    import tiktoken

    from ubpe.models.hf import QWEN2_REGEX, HFByteLevelBPE
    from ubpe.text.patterns import PATTERNS

    threads = os.cpu_count() or 1
    peers = {"tokenizers": (lambda: tokenizers.Tokenizer.from_file(path),
                            lambda hf, texts: hf.encode_batch(texts, add_special_tokens=False),
                            lambda out: [e.ids for e in out])}
    pattern = {"gpt2": PATTERNS["gpt2"], "llama3": PATTERNS["llama3"], "qwen2": QWEN2_REGEX}.get(style)
    if pattern is not None and isinstance(ours, HFByteLevelBPE):
        ranks = {raw: i for i, raw in enumerate(ours._raw) if raw is not None and ours.token_types[i] == 1}
        peers["tiktoken"] = (lambda: tiktoken.Encoding(style, pat_str=pattern, mergeable_ranks=ranks, special_tokens={}),
                             lambda enc, texts: enc.encode_ordinary_batch(texts, num_threads=threads),
                             lambda out: out)
    return peers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    lines = real_lines()
    mb = sum(len(line.encode("utf-8")) for line in lines) / 1e6
    rows, every_core = [], []
    with tempfile.TemporaryDirectory() as folder:
        for style in STYLES:
            path = Path(folder) / f"{style}.json"
            (bert() if style == "bert" else BUILDERS[style]()).save(str(path))
            started = time.perf_counter()
            hf = tokenizers.Tokenizer.from_file(str(path))
            hf_load = time.perf_counter() - started
            started = time.perf_counter()
            ours = ubpe.load(path)
            our_load = time.perf_counter() - started
            want = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]  # also the warm-up
            if [ours.encode(line) for line in lines] != want or ours.encode_batch(lines) != want:
                raise SystemExit(f"{style}: ids differ from tokenizers")
            our_load = min(our_load, best_time(lambda: ubpe.load(path), args.repeats))
            hf_load = min(hf_load, best_time(lambda: tokenizers.Tokenizer.from_file(str(path)), args.repeats))
            ours_s, hf_s, ours_batch_s, batch_s = interleaved([
                lambda: [ours.encode(line) for line in lines],
                lambda: [hf.encode(line, add_special_tokens=False) for line in lines],
                lambda: ours.encode_batch(lines), lambda: hf.encode_batch(lines, add_special_tokens=False)],
                args.repeats)
            rows.append((style, our_load, hf_load, mb / ours_s, mb / hf_s, mb / ours_batch_s, mb / batch_s))
            print(f"{style}: load {our_load:.2f} s / {hf_load:.2f} s, MB/s {mb / ours_s:.2f} / {mb / hf_s:.2f}, "
                  f"batch {mb / ours_batch_s:.2f} / {mb / batch_s:.2f}", flush=True)
            every_core.append(every_core_rows(style, lines, lambda path=path: ubpe.load(path),
                                              _peers(str(path), ours, style), args.repeats))
            print(every_core[-1], flush=True)
    table = ["| file | load ubpe (s) | load HF (s) | ubpe encode MB/s (1 thread) | HF encode MB/s (1 thread) "
             "| ratio | ubpe encode_batch MB/s (all threads) | HF encode_batch MB/s (all threads) | ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    table += [f"| {s} | {a:.2f} | {b:.2f} | {c:.2f} | {d:.2f} | {c / d:.2f}x | {e:.2f} | {f:.2f} | {e / f:.2f}x |"
              for s, a, b, c, d, e, f in rows]
    host = provenance.machine()
    versions = ", ".join(f"{k} {v}" for k, v in provenance.package_versions(("ubpe", "tokenizers", "numpy")).items())
    text = (f"# HF tokenizer.json: ubpe vs tokenizers {tokenizers.__version__}\n\n"
            f"{len(lines)} lines, {mb:.2f} MB of real text (UDHR every script, KJV, Shakespeare, stdlib); "
            f"best of {args.repeats} interleaved rounds after a warm-up; ids identical (per line and in batches).\n"
            f"Commit {provenance.git('rev-parse', '--short', 'HEAD') or 'unknown'}; {host['cpu']}, "
            f"{host['cores_available']} of {host['cores']} cores; {versions}; load average "
            f"{load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (a shared machine: "
            "compare the ratios of one run, not absolute numbers).\n"
            f"Reproduce: `python benchmarks/bench_hf.py`.\n\n" + "\n".join(table) + "\n"
            "\n## Every file on every core: all threads, cold and warm (MB/s)\n\n"
            "Cold: a fresh object's first pass (loaded anew, untimed; its caches empty); warm: the best of "
            f"{args.repeats} on one object after a warm-up. ubpe `threads=None` (one per core), tiktoken "
            "`num_threads` = cores on the same ranks and regex (byte-level files only), tokenizers its rayon "
            "pool. Targets (issue 25): arrays >= 1.3x tiktoken and >= 1.0x tokenizers.\n\n"
            + "\n".join(EVERY_CORE_HEADER + every_core) + "\n")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "hf.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
