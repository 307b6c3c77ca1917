"""What the benchmarks share: real data, the reference's venv, versions, report tables.

Provenance (commit, machine) comes from `ubpe.lab.provenance`, as in the experiments'
``run.json``; the pre-tokenisation pattern from `ubpe.lab.patterns`.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(__file__).resolve().parent / ".cache"
RESULTS = ROOT / "results" / "benchmarks"
REFERENCE_PACKAGES = ["ubpe==0.3.0", "ubpe-native==0.3.0"]
ECG_LEVELS = 2048

sys.path.insert(0, str(ROOT))

from ubpe.lab import provenance  # noqa: E402  (the repository root is on the path now)
from ubpe.lab.patterns import WORDS  # noqa: E402,F401  (the benchmarks' text pre-tokenisation)


def text_corpus(n_chars: int, split: str = "train") -> list[str]:
    """Documents of real English prose (a ``split`` of KJV + Shakespeare), ``n_chars`` characters in all."""
    from experiments.datasets import load

    docs: list[str] = []
    total = 0
    for name in ("kjv", "shakespeare"):
        for doc in load(name, split, max_symbols=float("inf")).docs:
            doc = doc[: n_chars - total]
            docs.append(doc)
            total += len(doc)
            if total >= n_chars:
                return docs
    raise SystemExit(f"only {total} characters of text available, {n_chars} asked")


def documents(text: str, size: int = 4096) -> list[str]:
    """``text`` as documents of consecutive whole lines, each about ``size`` characters (a line
    longer than that is a document of its own): batches of comparable documents, as a user's
    corpus would be (the KJV has no blank line, so splitting at paragraphs left one 3.3 MB
    document that a peer encodes on one thread).

    >>> documents("ab\\ncd\\nef\\n", size=4)
    ['ab\\ncd\\n', 'ef\\n']
    """
    out, current, length = [], [], 0
    for line in text.splitlines(keepends=True):
        current.append(line)
        length += len(line)
        if length >= size:
            out.append("".join(current))
            current, length = [], 0
    if current:
        out.append("".join(current))
    return out


def signal_corpus() -> list[list[int]]:
    from experiments.datasets import load

    # 2,048 uniform levels: the record's own 11-bit resolution
    dataset = load("ecg", "train", quantizer=f"uniform:{ECG_LEVELS}", max_symbols=float("inf"))
    return [list(map(int, doc)) for doc in dataset.docs]


def find_python312() -> str | None:
    for name in ("python3.12", "python3.13"):
        found = shutil.which(name)
        if found and subprocess.run([found, "-c", "pass"], capture_output=True).returncode == 0:  # not a dead shim
            return found
    pyenv = shutil.which("pyenv")
    if pyenv:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip()
        for candidate in sorted(Path(root, "versions").glob("3.1[2-9]*/bin/python3")):
            return str(candidate)
    return None


def reference_python(given: str | None) -> str | None:
    if given:
        return given
    venv = CACHE / "reference-venv"
    python = venv / "bin" / "python"
    if python.exists():
        return str(python)
    base = find_python312()
    if base is None:
        print("no Python >= 3.12 found: the reference is skipped", file=sys.stderr)
        return None
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *REFERENCE_PACKAGES], check=True)
    return str(python)


def versions(reference: str | None) -> dict[str, str]:
    import numpy

    import ubpe

    out = {"ubpe (ours)": ubpe.__version__, "python": platform.python_version(), "numpy": numpy.__version__}
    for name in ("tokenizers", "sentencepiece", "tiktoken"):
        try:
            out[name] = __import__(name).__version__
        except ImportError:
            pass
    if reference:
        out["ubpe (reference)"] = subprocess.run(
            [reference, "-I", "-c", "import ubpe, sys; print(ubpe.__version__, sys.version.split()[0])"],
            capture_output=True, text=True,
        ).stdout.strip()
    return out


def importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True



def best_time(function, repeats: int = 3, warmup: int = 1) -> float:
    """The fastest of ``repeats`` timed calls of ``function`` (seconds), after ``warmup``
    untimed calls (caches, thread pools, lazily built tables)."""
    for _ in range(warmup):
        function()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def interleaved(functions: list, repeats: int) -> list[float]:
    """Each function's best time over ``repeats`` rounds, one call of every function per round
    (after one untimed warm-up call of each), in a new order each round (seeded): rows that
    are compared see the same machine load, and no row always follows the same one (a row
    after one that streams through the caches would always start with them cold). Before
    each timed call the garbage collector runs (untimed): a call then pays for the collections
    its own objects cause, not for the garbage the previous call left (the results of
    ``encode_batch`` of 57 k lines moved a call's time by 50% from one round to the next)."""
    for function in functions:
        function()
    return _best_of_rounds(len(functions), repeats, 12, lambda k: _timed(functions[k]))


def _timed(function) -> float:
    """Seconds that ``function()`` takes, after an untimed garbage collection."""
    import gc

    gc.collect()
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def _best_of_rounds(n: int, repeats: int, seed: int, run) -> list[float]:
    """The best of ``run(k)`` (seconds) per ``k < n`` over ``repeats`` rounds, each round in a
    new order (shuffled with ``seed``)."""
    import random

    best = [float("inf")] * n
    order = list(range(n))
    shuffle = random.Random(seed).shuffle
    for _ in range(repeats):
        shuffle(order)
        for k in order:
            best[k] = min(best[k], run(k))
    return best


def add_provenance_arguments(parser) -> None:
    """``--allow-dirty``: run on a checkout with uncommitted changes (the report says so)."""
    parser.add_argument("--allow-dirty", action="store_true",
                        help="run although the checkout has uncommitted changes (recorded as dirty)")


def in_new_process(arguments: list[str], *, python: str | None = None, cwd: Path | str | None = None,
                   env: dict | None = None, what: str = "the child process") -> tuple[str, float]:
    """``(stdout, wall seconds)`` of ``python *arguments`` (``["-c", code, ...]``, ``["-m",
    module, ...]``) in a fresh interpreter (``python``: default this one), its start included;
    a child that fails raises SystemExit naming ``what`` with the end of its stderr. What the
    cold-start benchmarks time: imports, loads and first calls as a new process pays them."""
    command = [python or sys.executable, *arguments]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stderr[-2000:]}")
    return done.stdout, elapsed


def report(folder: Path, name: str, title: str, command: str, notes: list[str], rows: list[dict], peers,
           state: dict | None = None, load_before: tuple | None = None) -> str:
    """:func:`markdown_report` of ``rows`` (versions of the packages ``peers``) written with
    :func:`write_results` as ``folder/name.md`` / ``.csv``, and printed; returns the markdown."""
    markdown = markdown_report(title, command, notes, rows, provenance.package_versions(peers), state, load_before)
    write_results(folder, name, rows, markdown)
    print(markdown)
    return markdown


def write_results(folder: Path, name: str, rows: list[dict], markdown: str) -> None:
    """``folder/name.csv`` (the raw rows) and ``folder/name.md`` (the report)."""
    import csv

    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{name}.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (folder / f"{name}.md").write_text(markdown)
    print(f"wrote {folder / name}.md")


def markdown_report(title: str, command: str, notes: list[str], rows: list[dict], library_versions: dict[str, str],
                    state: dict | None = None, load_before: tuple | None = None) -> str:
    """The report: command, commit (and whether the tree was dirty), CPU, cores, load average
    before and after the run, versions, notes, then the rows as a table."""
    state = state or provenance.git_state(exclude=("results",))
    commit = str(state["commit"])[:10] or "unknown"
    machine = provenance.machine()
    load_after = provenance.load_average()
    load = f"load average {load_before} before, {load_after} after" if load_before else f"load average {load_after}"
    lines = [
        f"# {title}",
        "",
        f"Command: `{command}`; commit {commit}{' (dirty tree)' if state['dirty'] else ''}; "
        f"{machine['cpu']}, {machine['cores']} cores ({machine['cores_available']} available); {load}; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in library_versions.items()) + ".",
        *notes,
        "",
        "| " + " | ".join(rows[0]) + " |",
        "|" + "---|" * len(rows[0]),
    ]
    lines += ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def cold_and_warm(entries: list, repeats: int) -> list[tuple[float, float]]:
    """``(cold, warm)`` seconds per entry ``(make, call)``: *cold* is the best over ``repeats``
    rounds of ``call(make())``'s call alone - a fresh object's first pass over text it has not
    seen (its caches empty), ``make`` untimed -, *warm* the best of ``call`` on one object
    after a warm-up (:func:`interleaved`: every cache filled). Rounds run the entries in a new
    seeded order, each call after a garbage collection, as :func:`interleaved` does."""

    def first_pass(k: int) -> float:
        make, call = entries[k]
        fresh = make()
        return _timed(lambda: call(fresh))

    cold = _best_of_rounds(len(entries), repeats, 13, first_pass)
    warm_objects = [make() for make, _ in entries]
    warm = interleaved([lambda k=k: entries[k][1](warm_objects[k]) for k in range(len(entries))], repeats)
    return list(zip(cold, warm))


#: the columns of :func:`every_core_rows`' table
EVERY_CORE_HEADER = [
    "| file | ubpe `encode_batch` cold / warm | ubpe `encode_batch_to_numpy` cold / warm | tiktoken "
    "`encode_ordinary_batch` cold / warm | tokenizers `encode_batch` cold / warm | arrays / tiktoken cold / warm "
    "| arrays / tokenizers cold / warm | same ids |",
    "|---|---|---|---|---|---|---|---|"]


def every_core_rows(name: str, docs: list[str], make_ours, peers: dict, repeats: int) -> str:
    """One row of :data:`EVERY_CORE_HEADER` (MB/s, all threads on every side): ubpe's
    ``encode_batch`` and ``encode_batch_to_numpy`` of a fresh ``make_ours()`` beside the
    ``peers`` (``"tiktoken"`` / ``"tokenizers"`` -> ``(make, encode(obj, docs), ids(encoded) -> id
    lists)``, a missing one: a dash; only ``encode`` is timed). Ids are checked equal first:
    ``same ids`` names a peer that differs."""
    import os

    from ubpe_native._merges import id_lists

    threads = os.cpu_count() or 1
    size = sum(len(doc.encode("utf-8")) for doc in docs) / 1e6
    ours = make_ours()
    want = ours.encode_batch(docs, threads=threads)
    if id_lists(*ours.encode_batch_to_numpy(docs, threads=threads).best()) != want:
        raise SystemExit(f"{name}: encode_batch_to_numpy's ids are not encode_batch's")
    differ = [peer for peer, (make, encode, ids) in peers.items() if ids(encode(make(), docs)) != want]
    entries = [(make_ours, lambda tok: tok.encode_batch(docs, threads=threads)),
               (make_ours, lambda tok: tok.encode_batch_to_numpy(docs, threads=threads))]
    entries += [(make, lambda obj, encode=encode: encode(obj, docs)) for make, encode, _ in peers.values()]
    speeds = [(size / cold, size / warm) for cold, warm in cold_and_warm(entries, repeats)]
    by_peer = dict(zip(peers, speeds[2:]))
    arrays = speeds[1]

    def pair(values) -> str:
        return "-" if values is None else f"{values[0]:.1f} / {values[1]:.1f}"

    def ratio(peer: str) -> str:
        theirs = by_peer.get(peer)
        return "-" if theirs is None else f"{arrays[0] / theirs[0]:.2f}x / {arrays[1] / theirs[1]:.2f}x"

    same = "yes" if not differ else "no: " + ", ".join(differ)
    return (f"| {name} | {pair(speeds[0])} | {pair(arrays)} | {pair(by_peer.get('tiktoken'))} | "
            f"{pair(by_peer.get('tokenizers'))} | {ratio('tiktoken')} | {ratio('tokenizers')} | {same} |")
