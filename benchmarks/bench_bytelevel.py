"""Byte-level encoding speed: ubpe's ByteLevelBPE vs tiktoken on the same vocabulary.

    python benchmarks/bench_bytelevel.py                 # ~10 s on one core

One process, one thread each. A ``ByteLevelBPE`` is fitted (cl100k preset) on the first
``--fit-mb`` MB of the text, the same vocabulary is handed to ``tiktoken.Encoding``, and both
encode the whole text (``--encode-mb`` MB, >= 5). Ids are checked to be identical. Each
throughput is the best of ``--repeats`` runs: *warm* rows run one object again and again (its
word cache holds the text's words after the first run), *cold* rows time a fresh object's
first pass over the text (a new object per run, built before the clock starts), which is what
a user encoding unseen text gets. Pathological inputs (``"a" * n``, one long
piece of letters) show how time grows with the piece length: our merge loop is O(n log n),
tiktoken's rescans the piece after every merge.

Data (real, offline, no repetition): Python's documentation topics (``pydoc_data``) followed
by the standard library's sources in sorted path order. Results go to
``results/benchmarks/bytelevel.md``.
"""

from __future__ import annotations

import argparse
import pathlib
import platform
import sys
import sysconfig
import time

import numpy as np
import pydoc_data.topics
import regex
import tiktoken

from bench_patterns import ON_REGEX_MODULE
from common import best_time, provenance

from ubpe import __version__ as ubpe_version
from ubpe.text.patterns import PATTERNS
from ubpe.models.bytelevel import ByteLevelBPE

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results" / "benchmarks"
MB = 1_000_000
RUN_LENGTHS_OURS = [100_000, 200_000, 400_000, 800_000, 1_600_000]
RUN_LENGTHS_TIKTOKEN = [10_000, 20_000, 40_000, 100_000]


def real_text(min_chars: int) -> str:
    texts = list(pydoc_data.topics.topics.values())
    total = sum(map(len, texts))
    for path in sorted(pathlib.Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if total >= min_chars:
            break
        text = path.read_text(encoding="utf-8", errors="replace")
        texts.append(text)
        total += len(text)
    return "\n".join(texts)[:min_chars]


def commit() -> str:
    return provenance.git("rev-parse", "--short", "HEAD") or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit-mb", type=float, default=2.0)
    parser.add_argument("--encode-mb", type=float, default=5.0)
    parser.add_argument("--n-tokens", type=int, default=16_384)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS / "bytelevel.md")
    args = parser.parse_args()

    text = real_text(int(args.encode_mb * MB))
    started = time.perf_counter()
    tok = ByteLevelBPE().fit(
        [text[: int(args.fit_mb * MB)]], n_tokens=args.n_tokens, pattern="cl100k", quiet=True
    )
    fit_seconds = time.perf_counter() - started
    tok.encode("warm-up: builds the code point table")
    reference = tiktoken.Encoding(
        "bench", pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks(), special_tokens={}
    )
    if tok.encode_ordinary(text) != reference.encode_ordinary(text):
        raise SystemExit("ids differ from tiktoken: the benchmark would compare different work")

    rows = []

    def compare(label: str, ours, theirs, chars: int) -> None:
        t_ours, t_theirs = best_time(ours, args.repeats), best_time(theirs, args.repeats)
        record(label, t_ours, t_theirs, chars)

    def first_pass(make) -> float:
        """The best over ``--repeats`` fresh objects of each one's first pass over the text."""
        objects = [make() for _ in range(args.repeats)]
        times = []
        for encoder in objects:
            started = time.perf_counter()
            encoder.encode_ordinary(text)
            times.append(time.perf_counter() - started)
        return min(times)

    def compare_cold(label: str, make_ours, make_theirs, chars: int) -> None:
        record(label, first_pass(make_ours), first_pass(make_theirs), chars)

    def record(label: str, t_ours: float, t_theirs: float, chars: int) -> None:
        rows.append((label, chars / t_ours / MB, chars / t_theirs / MB, t_theirs / t_ours))
        print(f"{label:<48} ours {chars / t_ours / MB:7.2f} Mchar/s  tiktoken "
              f"{chars / t_theirs / MB:7.2f} Mchar/s  ratio {t_theirs / t_ours:5.2f}x", flush=True)

    ranks = tok.mergeable_ranks()
    compare_cold("encode_ordinary, cl100k (native scanner), cold",
                 lambda: ByteLevelBPE.from_mergeable_ranks(ranks, pattern="cl100k"),
                 lambda: tiktoken.Encoding("bench", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={}),
                 len(text))
    compare("encode_ordinary, cl100k (native scanner), warm",
            lambda: tok.encode_ordinary(text), lambda: reference.encode_ordinary(text), len(text))
    compare("encode (special check), cl100k",
            lambda: tok.encode(text), lambda: reference.encode(text), len(text))
    # the same pattern, but kept on the `regex` module: a last alternative that the kernel's VM
    # refuses (a lookbehind) and that is never reached
    generic = ByteLevelBPE.from_mergeable_ranks(tok.mergeable_ranks(), pattern=f"(?:{tok.pattern})" + ON_REGEX_MODULE)
    compare("encode_ordinary, cl100k via the regex module",
            lambda: generic.encode_ordinary(text), lambda: reference.encode_ordinary(text), len(text))
    o200k = ByteLevelBPE.from_mergeable_ranks(tok.mergeable_ranks(), pattern="o200k")
    o200k_reference = tiktoken.Encoding(
        "bench-o200k", pat_str=PATTERNS["o200k"], mergeable_ranks=tok.mergeable_ranks(), special_tokens={}
    )
    if o200k.encode_ordinary(text) != o200k_reference.encode_ordinary(text):
        raise SystemExit("o200k ids differ from tiktoken: the benchmark would compare different work")
    compare_cold("encode_ordinary, o200k (native scanner), cold",
                 lambda: ByteLevelBPE.from_mergeable_ranks(ranks, pattern="o200k"),
                 lambda: tiktoken.Encoding("bench-o200k", pat_str=PATTERNS["o200k"], mergeable_ranks=ranks,
                                           special_tokens={}),
                 len(text))
    compare("encode_ordinary, o200k (native scanner), warm",
            lambda: o200k.encode_ordinary(text), lambda: o200k_reference.encode_ordinary(text), len(text))
    generic_o200k = ByteLevelBPE.from_mergeable_ranks(tok.mergeable_ranks(),
                                                      pattern=f"(?:{PATTERNS['o200k']})" + ON_REGEX_MODULE)
    compare("encode_ordinary, o200k via the regex module",
            lambda: generic_o200k.encode_ordinary(text), lambda: o200k_reference.encode_ordinary(text), len(text))

    # pathological single pieces
    runs = []
    for n in RUN_LENGTHS_OURS:
        piece = "a" * n
        runs.append(("ours", f'"a" * {n:,}', best_time(lambda: tok.encode_ordinary(piece), 1)))
    for n in RUN_LENGTHS_TIKTOKEN:
        piece = "a" * n
        runs.append(("tiktoken", f'"a" * {n:,}', best_time(lambda: reference.encode_ordinary(piece), 1)))
    letters = "".join(regex.findall(r"\p{L}+", text))[:MB]
    runs.append(("ours", "1 MB of letters, one piece", best_time(lambda: tok.encode_ordinary(letters), 1)))
    runs.append(("tiktoken", "1 MB of letters, one piece", best_time(lambda: reference.encode_ordinary(letters), 1)))
    for who, what, seconds in runs:
        print(f"{who:<9} {what:<30} {seconds * 1000:10.1f} ms", flush=True)

    versions = (
        f"ubpe {ubpe_version} (commit {commit()}), tiktoken {tiktoken.__version__}, "
        f"regex {regex.__version__}, numpy {np.__version__}, Python {platform.python_version()}"
    )
    host = provenance.machine()
    machine = f"{host['cpu']}, {host['cores']} logical CPUs, {host['platform']}"
    lines = [
        "# Byte-level encoding: ubpe ByteLevelBPE vs tiktoken",
        "",
        f"- Versions: {versions}",
        f"- Machine: {machine.strip()} (shared with other jobs while measured)",
        f"- Data: {len(text) / MB:.1f} M characters ({len(text.encode()) / MB:.1f} MB UTF-8) of real text, "
        "not repeated: Python's documentation topics (`pydoc_data`) then the standard library's "
        "sources in sorted path order.",
        f"- Vocabulary: ByteLevelBPE fitted on the first {args.fit_mb:g} MB, cl100k preset, "
        f"{len(tok.vocabulary):,} mergeable tokens (fit took {fit_seconds:.1f} s); the same "
        "`mergeable_ranks` given to `tiktoken.Encoding` (the o200k rows split the same text with "
        "the o200k pattern over this vocabulary). Ids checked identical on the whole text.",
        f"- One thread each, one process; throughput is the best of {args.repeats} runs; warm: one "
        "object run again and again; cold: a fresh object's first pass over the text (built before "
        "the clock starts). "
        f"Command: `python benchmarks/bench_bytelevel.py`.",
        "",
        "| workload | ubpe Mchar/s | tiktoken Mchar/s | ubpe / tiktoken |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {label} | {ours:.2f} | {theirs:.2f} | {ratio:.2f}x |" for label, ours, theirs, ratio in rows]
    lines += [
        "",
        "Pathological single pieces (one run each; time should grow ~linearly for ubpe):",
        "",
        "| library | input | ms |",
        "|---|---|---:|",
    ]
    lines += [f"| {who} | {what} | {seconds * 1000:.1f} |" for who, what, seconds in runs]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
