"""WordPiece (BERT) on every core: ubpe's ``encode_batch_to_numpy`` (the `_wordpiece` kernel)
against HF ``tokenizers``, cold and warm, on all threads and on one.

Files: BERT's ``tokenizer.json`` as ``BertWordPieceTokenizer`` writes it on bge's vocabulary
(``tests/hf_builders.py``, ``bert()``) and llama.cpp's ``ggml-vocab-bert-bge.gguf`` (its WPM);
both against ``tokenizers`` on the ``tokenizer.json`` (the GGUF's ids differ where llama.cpp
normalizes otherwise: only its speed is compared). Text: ``bench_hf``'s real lines (UDHR every
script, KJV, Shakespeare, stdlib). Cold: a fresh object's first pass (loaded anew, untimed);
warm: the best of ``--repeats`` on one object after a warm-up. One thread: ubpe with
``threads=1``, tokenizers ``encode`` line by line (no rayon). Prints a table; writes nothing.

Reproduce: ``python benchmarks/bench_wordpiece.py --repeats 3``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench_hf import real_lines
from common import ROOT, cold_and_warm, provenance

sys.path.insert(0, str(ROOT / "tests"))

import tokenizers  # noqa: E402

import ubpe  # noqa: E402
from hf_builders import bert  # noqa: E402
from vocab_corpora import vocab_path  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    lines = real_lines()
    mb = sum(len(line.encode("utf-8")) for line in lines) / 1e6
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as folder:
        json_path = str(Path(folder) / "bert.json")
        bert().save(json_path)
        want = [e.ids for e in tokenizers.Tokenizer.from_file(json_path).encode_batch(lines, add_special_tokens=False)]
        files = {"bert (tokenizer.json)": json_path, "bert-bge (GGUF, WPM)": str(vocab_path("bert-bge"))}
        rows = []
        for name, path in files.items():
            ours = ubpe.load(path)
            ids, offsets = ours.encode_batch_to_numpy(lines).best()
            got = [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])]
            if got != [ours.encode(line) for line in lines] or (path == json_path and got != want):
                raise SystemExit(f"{name}: the batch's ids are not encode's (or tokenizers')")
            entries = [(lambda path=path: ubpe.load(path), lambda tok: tok.encode_batch_to_numpy(lines, threads=cores)),
                       (lambda: tokenizers.Tokenizer.from_file(json_path),
                        lambda hf: hf.encode_batch(lines, add_special_tokens=False)),
                       (lambda path=path: ubpe.load(path), lambda tok: tok.encode_batch_to_numpy(lines, threads=1)),
                       (lambda: tokenizers.Tokenizer.from_file(json_path),
                        lambda hf: [hf.encode(line, add_special_tokens=False) for line in lines])]
            (ours_all, hf_all, ours_one, hf_one) = [(mb / c, mb / w) for c, w in cold_and_warm(entries, args.repeats)]
            rows.append(f"| {name} | {ours_all[0]:.1f} / {ours_all[1]:.1f} | {hf_all[0]:.1f} / {hf_all[1]:.1f} | "
                        f"{ours_all[0] / hf_all[0]:.2f}x / {ours_all[1] / hf_all[1]:.2f}x | "
                        f"{ours_one[0]:.1f} / {ours_one[1]:.1f} | {hf_one[0]:.1f} / {hf_one[1]:.1f} | "
                        f"{ours_one[0] / hf_one[0]:.2f}x / {ours_one[1] / hf_one[1]:.2f}x |")
            print(rows[-1], flush=True)
    host = provenance.machine()
    print(f"\n{len(lines)} lines, {mb:.2f} MB; commit {provenance.git('rev-parse', '--short', 'HEAD') or 'unknown'}; "
          f"{host['cpu']}, {cores} threads; tokenizers {tokenizers.__version__}; best of {args.repeats}; MB/s cold / warm\n")
    print("| file | ubpe arrays, all threads | tokenizers encode_batch | ratio | ubpe arrays, 1 thread | "
          "tokenizers encode, 1 thread | ratio |\n|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
