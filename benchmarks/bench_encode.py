"""Encode speed: ours vs the reference ubpe 0.3.0 on the same models and held-out data.

    python benchmarks/bench_encode.py [--reference-python /path/to/python3.12]

Models are fitted once by us (identical to the reference's fit) at 4,096 tokens on the King
James Bible + Shakespeare (the `words` regex) and on the MIT-BIH ECG (2,048 levels), dumped
as ubpe 0.3.0 JSON and loaded by both libraries. Held-out documents are the datasets'
held-out splits. Throughput counts input symbols per second of one thread (ours: ``encode``
per document, as the reference is called, and ``encode_batch`` on both cores). The reference
is slow, so it runs on a sample of the held-out documents (stated in the table). The unsplit
rows encode one sequence of N ECG samples as a single part (``split_mode=NONE``), where the
reference's cost grows as N^1.6. Results: ``results/benchmarks/encode.{csv,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from common import (
    ECG_LEVELS,
    WORDS,
    RESULTS,
    best_time,
    markdown_report,
    reference_python,
    versions,
    write_results,
)

from ubpe import UBPE, UBPEClassic, SplitMode

N_TOKENS = 4096
REFERENCE_SAMPLE_SYMBOLS = 60_000
UNSPLIT_LENGTHS = (10_000, 20_000, 100_000, 1_000_000)
REFERENCE_UNSPLIT_LENGTHS = (10_000, 20_000)

WORKER = r"""
import json, sys, time
from ubpe import UBPE, UBPEClassic
spec = json.load(open(sys.argv[1]))
docs = json.load(open(spec["docs"]))
cls = UBPE if spec["variant"] == "universal" else UBPEClassic
tok = cls.loads(open(spec["model"]).read(), token_type=str if spec["text"] else int)
kwargs = {"top_n": spec["top_n"]} if spec["variant"] == "universal" else {}
if spec.get("unsplit"):
    from ubpe_native.utils import SplitMode
    kwargs["split_mode"] = SplitMode.NONE
started = time.perf_counter()
for doc in docs:
    tok.encode(doc, **kwargs)
print(json.dumps({"seconds": time.perf_counter() - started}))
"""


def load_data():
    from experiments.datasets import load

    inf = float("inf")
    text_train = load("kjv", "train", max_symbols=inf).docs + load("shakespeare", "train", max_symbols=inf).docs
    text_held = load("kjv", "heldout").docs + load("shakespeare", "heldout").docs
    ecg_train = load("ecg", "train", quantizer=f"uniform:{ECG_LEVELS}", max_symbols=inf).docs
    ecg_held = load("ecg", "heldout", quantizer=f"uniform:{ECG_LEVELS}").docs
    return (
        ("text", text_train, text_held, dict(regex_str=WORDS)),
        ("ECG", [d.tolist() for d in ecg_train], [d.tolist() for d in ecg_held], {}),
    )


def sample(docs: list, n_symbols: int) -> list:
    out, total = [], 0
    for doc in docs:
        out.append(doc)
        total += len(doc)
        if total >= n_symbols:
            break
    return out


def reference_time(python: str, model_path: Path, docs: list, variant: str, top_n: int, text: bool,
                   workdir: Path, unsplit: bool = False) -> float:
    docs_path = workdir / "docs.json"
    docs_path.write_text(json.dumps(docs))
    spec = dict(docs=str(docs_path), model=str(model_path), variant=variant, top_n=top_n, text=text, unsplit=unsplit)
    spec_path = workdir / "spec.json"
    spec_path.write_text(json.dumps(spec))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([python, "-c", WORKER, str(spec_path)], capture_output=True, text=True, env=env, cwd=workdir)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])
    return json.loads(result.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference-python", default=os.environ.get("UBPE_REFERENCE_PYTHON"))
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    reference = None if args.no_reference else reference_python(args.reference_python)
    rows: list[dict] = []

    def add(data, encoder, mode, symbols, ours, theirs=None, note=""):
        row = dict(data=data, encoder=encoder, mode=mode, symbols=symbols,
                   ours_symbols_per_s=f"{symbols / ours:,.0f}",
                   reference_symbols_per_s=f"{symbols / theirs:,.0f}" if theirs else "",
                   speedup=f"{theirs / ours:.0f}x" if theirs else "", note=note)
        rows.append(row)
        print("  ".join(str(v) for v in row.values()), flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for label, train, held, settings in load_data():
            text = isinstance(train[0], str)
            alphabet = sorted(set("".join(train))) if text else list(range(ECG_LEVELS))
            symbols = sum(map(len, held))
            ref_docs = sample(held, REFERENCE_SAMPLE_SYMBOLS)
            ref_symbols = sum(map(len, ref_docs))
            for cls, variant in ((UBPE, "universal"), (UBPEClassic, "classic")):
                tok = cls(alphabet=alphabet, n_tokens=N_TOKENS if text else ECG_LEVELS + N_TOKENS, **settings)
                tok.fit(train, quiet=True)
                model_path = workdir / f"{variant}.json"
                model_path.write_text(tok.dumps())
                for top_n in ((1, 5) if variant == "universal" else (1,)):
                    name = f"tfidf top-{top_n}" if variant == "universal" else "classic"
                    ours = best_time(lambda: [tok.encode(d, top_n=top_n) for d in held])
                    ours_sample = best_time(lambda: [tok.encode(d, top_n=top_n) for d in ref_docs])
                    theirs = (reference_time(reference, model_path, ref_docs, variant, top_n, text, workdir)
                              if reference else None)
                    add(label, name, "encode per doc", symbols, ours)
                    if theirs:
                        add(label, name, "encode per doc (reference sample)", ref_symbols, ours_sample, theirs)
                    batch = best_time(lambda: tok.encode_batch(held, top_n=top_n))
                    add(label, name, "encode_batch, 2 threads", symbols, batch)
                if not text:
                    stream = np.concatenate([np.asarray(d) for d in held + train])
                    for length in UNSPLIT_LENGTHS:
                        seq = np.resize(stream, length).tolist()
                        for top_n in ((1, 5) if variant == "universal" else (1,)):
                            name = f"tfidf top-{top_n}" if variant == "universal" else "classic"
                            ours = best_time(lambda: tok.encode(seq, top_n=top_n, split_mode=SplitMode.NONE))
                            theirs = None
                            if reference and length in REFERENCE_UNSPLIT_LENGTHS and top_n == 1:
                                theirs = reference_time(reference, model_path, [seq], variant, top_n, False,
                                                        workdir, unsplit=True)
                            add(label, name, "one unsplit sequence", length, ours, theirs,
                                note=f"{ours * 1000:.1f} ms")
    notes = [
        f"Models: {N_TOKENS} tokens (text: King James Bible + Shakespeare, `words` regex; ECG: "
        f"{ECG_LEVELS} levels + {N_TOKENS} tokens), fitted by us, loaded by both libraries from ubpe 0.3.0 JSON.",
        f"The reference runs on the first {REFERENCE_SAMPLE_SYMBOLS:,} held-out symbols; ours best of 3.",
    ]
    write_results(args.out, "encode", rows, markdown_report(
        "Encode benchmark", "python benchmarks/bench_encode.py", notes, rows, versions(reference)))


if __name__ == "__main__":
    main()
