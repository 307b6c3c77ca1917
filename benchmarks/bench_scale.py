"""Fitting at scale: peak memory and wall time of in-memory, streaming and Dask fits.

    python benchmarks/bench_scale.py                      # ~10 min on 2 cores

Every measurement runs in a fresh process (peak RSS from ``getrusage``, so C++ buffers
count too; "above baseline" subtracts the process after its imports). Modes:

- ``list``: the corpus file read into a list of documents, ``tok.fit(docs)``;
- ``stream``: ``tok.fit(line for line in file)`` - split chunk by chunk, distinct parts counted;
- ``dask-N``: ``tok.fit(dask.bag.read_text(file, blocksize=...))`` on a ``LocalCluster`` of N
  worker processes (one thread each); the client process holds the scheduler; for text it
  runs the merge loop on the gathered distinct parts, for the unsplit integer documents the
  partitions stay on the workers and the fit runs round by round (``ubpe.distributed.rounds``: the
  client holds only the summed pair statistics); workers' peaks come from ``client.run``;
- ``cli``: ``ubpe fit FILE`` as a subprocess (``--regex`` / ``--ints``, the same number of
  tokens, the alphabet inferred by a first streaming pass over the file): its peak RSS and
  CPU time; the model it writes must be the same as the others.

All modes of one corpus must give the same model (its JSON's SHA-256 is compared). Wall
time includes reading the file; on a shared machine it mostly measures the other jobs, so
CPU seconds are given too: of the fit process (for Dask the client, which also runs the
scheduler and the merge loop) and, summed, of the Dask workers.

Corpora: text - 14 MB of real, distinct text (the experiments' kjv, shakespeare, stdlib and
udhr corpora, one document per line), repeated to reach the larger sizes; UBPE, words split
by a regex, 4,096 tokens. Repetition adds documents but no new distinct parts, so the larger
sizes show how memory follows the distinct parts and the (part, document) pairs rather than
the corpus. Integers - the MIT-BIH ECG excerpt (train split) quantized to 64 levels, cut into
360-sample windows again and again, copy k starting at sample 37k mod 360: one unsplit
document per window (0.53 M symbols per copy). Up to 360 copies no window repeats and every
document is a distinct part (the worst case for memory); the 190-copy corpus holds ~100 M
symbols. UBPE, 1,024 tokens. Results go to ``results/benchmarks/scale.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(__file__).resolve().parent / ".cache" / "scale"
RESULTS = ROOT / "results" / "benchmarks"
MB = 1_000_000
WORDS = r" ?\w+| ?[^\w\s]+|\s+"
TEXT_SOURCES = ("kjv", "shakespeare", "stdlib", "udhr")
BLOCKSIZE = "8MB"

sys.path.insert(0, str(ROOT))


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- corpora -----------------------------------------------------------------------------------


def base_text() -> Path:
    path = CACHE / "text-base.txt"
    if not path.exists():
        from experiments.datasets import load

        CACHE.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            for name in TEXT_SOURCES:
                for split in ("train", "heldout"):
                    for doc in load(name, split, max_symbols=float("inf")).docs:
                        out.write(" ".join(doc.split("\n")) + "\n")
    return path


def base_ints() -> Path:
    path = CACHE / "ints-base.txt"
    if not path.exists():
        from experiments.datasets import load

        CACHE.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as out:
            for doc in load("ecg", "train", max_symbols=float("inf")).docs:
                out.write(" ".join(map(str, doc.tolist())) + "\n")
    return path


def repeated(base: Path, copies: int) -> Path:
    """Text: the base file ``copies`` times. Integers: the signal cut into windows again,
    each copy starting at another phase, so that no window repeats (unsplit documents
    are distinct parts, as in real recordings)."""
    path = CACHE / f"{base.stem}-x{copies}.txt"
    if path.exists():
        return path
    if base.stem.startswith("text"):
        data = base.read_bytes()
        with open(path, "wb") as out:
            for _ in range(copies):
                out.write(data)
        return path
    lines = base.read_text().splitlines()
    signal = " ".join(lines).split()
    width = len(lines[0].split())
    with open(path, "w") as out:
        for copy in range(copies):
            start = (copy * 37) % width
            for first in range(start, len(signal) - width + 1, width):
                out.write(" ".join(signal[first : first + width]) + "\n")
    return path


def symbols_of(path: Path, kind: str) -> int:
    if kind == "text":
        return sum(len(line) - 1 for line in open(path, encoding="utf-8"))
    return sum(line.count(" ") + 1 for line in open(path))


# -- one measurement (a child process) ---------------------------------------------------------


def tokenizer(kind: str, path: Path):
    from ubpe import UBPE

    base = CACHE / ("text-base.txt" if kind == "text" else "ints-base.txt")
    if kind == "text":
        alphabet = sorted(set(base.read_text(encoding="utf-8")) - {"\n"})
        return UBPE(alphabet=alphabet, n_tokens=4096, regex_str=WORDS)
    alphabet = sorted({int(x) for line in open(base) for x in line.split()})
    return UBPE(alphabet=alphabet, n_tokens=1024)


def parse(kind: str, line: str):
    import numpy as np

    line = line.rstrip("\n")
    return line if kind == "text" else np.array(line.split(), dtype=np.int64)


def child(mode: str, kind: str, path: Path) -> dict:
    import numpy as np  # noqa: F401  (imported before the baseline, as by every mode)

    import ubpe.fit  # noqa: F401

    tok = tokenizer(kind, path)
    cluster = client = None
    if mode.startswith("dask"):
        import dask.bag as db
        import distributed

        cluster = distributed.LocalCluster(
            n_workers=int(mode.split("-")[1]), threads_per_worker=1, processes=True, dashboard_address=":0"
        )
        client = distributed.Client(cluster)
    baseline = rss_mb()
    if client is not None:
        worker_cpu = sum(client.run(cpu_seconds).values())
    cpu = cpu_seconds()
    started = time.perf_counter()
    if mode == "cli":
        return cli(kind, path, tok.n_tokens)
    if mode == "list":
        with open(path, encoding="utf-8") as handle:
            docs = [parse(kind, line) for line in handle]
        tok.fit(docs, quiet=True)
    elif mode == "stream":
        with open(path, encoding="utf-8") as handle:
            tok.fit((parse(kind, line) for line in handle), quiet=True)
    else:
        bag = db.read_text(str(path), blocksize=BLOCKSIZE, encoding="utf-8").map(lambda line: parse(kind, line))
        tok.fit(bag, quiet=True)
    seconds = time.perf_counter() - started
    out = {
        "seconds": seconds,
        "cpu": cpu_seconds() - cpu,
        "peak_mb": rss_mb(),
        "baseline_mb": baseline,
        "model_sha256": hashlib.sha256(tok.to_json().encode()).hexdigest()[:16],
    }
    if client is not None:
        peaks = client.run(rss_mb)
        out["worker_peak_mb"] = max(peaks.values())
        out["worker_cpu"] = sum(client.run(cpu_seconds).values()) - worker_cpu
        out["partitions"] = bag.npartitions
        client.close()
        cluster.close()
    return out


def cli(kind: str, path: Path, n_tokens: int) -> dict:
    """``ubpe fit`` on ``path`` in a subprocess: its peak RSS, CPU time and model."""
    import ubpe

    output = CACHE / f"cli-{os.getpid()}.json"
    options = ["--regex", WORDS] if kind == "text" else ["--ints"]
    command = [sys.executable, "-m", "ubpe", "fit", str(path), "-o", str(output), "-q", "--n-tokens", str(n_tokens)]
    started = time.perf_counter()
    subprocess.run(command + options, check=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    model = ubpe.load(output)
    output.unlink()
    return {
        "seconds": seconds,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "model_sha256": hashlib.sha256(model.to_json().encode()).hexdigest()[:16],
    }


def measure(mode: str, kind: str, path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, kind, str(path)],
        capture_output=True, text=True, cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"{mode} {kind} {path.name} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def write_report(output: Path, rows: list[dict]) -> None:
    """The Markdown table of the rows so far (rewritten after every measurement)."""
    from ubpe.lab.provenance import git, machine as machine_of

    described = machine_of()
    machine = f"{described['cpu']}, {described['cores']} cores ({described['cores_available']} available), {described['platform']}"
    commit = git("rev-parse", "--short", "HEAD")
    lines = [
        "# Fitting at scale: in-memory, streaming and Dask",
        "",
        f"Command: `python benchmarks/bench_scale.py`; commit {commit}; machine: {machine} "
        f"(shared with other jobs while measured); Python {platform.python_version()}; "
        f"{time.strftime('%Y-%m-%d')}.",
        "",
        *[line for line in __doc__.split("\n\n", 2)[2].splitlines()],
        "",
        "| " + " | ".join(rows[0]) + " |",
        "|" + "---|" * len(rows[0]),
    ]
    lines += ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in rows]
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- the report --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=3, metavar=("MODE", "KIND", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--text-copies", default="1,2,4,8,72", help="repetitions of the 14 MB text")
    parser.add_argument("--list-max-copies", type=int, default=8, help="larger text corpora skip `list`")
    parser.add_argument("--dask-copies", default="8,72", help="text sizes also fitted on Dask")
    parser.add_argument("--int-copies", default="1,10,100,190", help="phases of the ECG windows")
    parser.add_argument("--int-dask-copies", default="100,190", help="integer sizes also fitted on Dask (round by round)")
    parser.add_argument("--cli-copies", default="1,8", help="text sizes also fitted by `ubpe fit`")
    parser.add_argument("--modes", default="list,stream,cli,dask-1,dask-2", help="modes to run (others skipped)")
    parser.add_argument("--output", type=Path, default=RESULTS / "scale.md")
    args = parser.parse_args()
    if args.child:
        mode, kind, path = args.child
        print(json.dumps(child(mode, kind, Path(path))))
        return

    rows = []

    def run(kind: str, base: Path, copies: int, modes: list[str]) -> None:
        path = repeated(base, copies)
        symbols = symbols_of(path, kind)
        hashes = set()
        for mode in [m for m in modes if m in args.modes.split(",")]:
            result = measure(mode, kind, path)
            hashes.add(result["model_sha256"])
            row = {
                "corpus": kind, "copies": copies, "M symbols": f"{symbols / MB:.1f}",
                "file MB": f"{path.stat().st_size / MB:.0f}", "mode": mode,
                "wall s": f"{result['seconds']:.1f}",
                "CPU s (fit process)": f"{result['cpu']:.1f}",
                "CPU s (workers)": f"{result['worker_cpu']:.1f}" if "worker_cpu" in result else "",
                "peak RSS MB": f"{result['peak_mb']:.0f}",
                "above baseline MB": f"{result['peak_mb'] - result['baseline_mb']:.0f}" if "baseline_mb" in result else "",
                "worker peak MB": f"{result.get('worker_peak_mb', 0):.0f}" if "worker_peak_mb" in result else "",
                "model": result["model_sha256"],
            }
            rows.append(row)
            print(" | ".join(f"{k}={v}" for k, v in row.items()), flush=True)
            write_report(args.output, rows)
        if len(hashes) != 1:
            raise SystemExit(f"the modes disagree on {path.name}: {hashes}")

    text, ints = base_text(), base_ints()
    dask_copies = {int(c) for c in args.dask_copies.split(",") if c}
    text_copies = [int(c) for c in args.text_copies.split(",") if c]

    cli_copies = {int(c) for c in args.cli_copies.split(",") if c}
    int_dask_copies = {int(c) for c in args.int_dask_copies.split(",") if c}

    def run_text(copies: int) -> None:
        modes = (["list"] if copies <= args.list_max_copies else []) + ["stream"]
        modes += ["cli"] if copies in cli_copies else []
        run("text", text, copies, modes + (["dask-1", "dask-2"] if copies in dask_copies else []))

    # small text corpora, integers, then the large text corpora (the longest runs) last
    for copies in text_copies:
        if copies <= args.list_max_copies:
            run_text(copies)
    for copies in (int(c) for c in args.int_copies.split(",") if c):
        modes = (["list"] if copies <= 100 else []) + ["stream", "cli"]
        modes += ["dask-1", "dask-2"] if copies in int_dask_copies else []
        run("ints", ints, copies, modes)
    for copies in text_copies:
        if copies > args.list_max_copies:
            run_text(copies)

    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
