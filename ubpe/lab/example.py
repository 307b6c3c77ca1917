"""The config ``ubpe experiment init`` writes: one that runs as it is, on text every machine
with Python has (modules of the running Python's standard library, a document per file), and
the other kinds of data and vocabularies as commented tables to fill in.

>>> from ubpe.lab.config import parse_config
>>> import tomllib
>>> config = parse_config(tomllib.loads(example_config()))
>>> [d.name for d in config.datasets], [str(e) for e in config.encoders]
(['python'], ['universal:tfidf', 'classic:classic', 'classic:fewest'])
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

#: Standard-library packages the example reads (pure Python, in every CPython install).
EXAMPLE_PACKAGES = ("json", "email", "http", "urllib", "logging", "importlib", "asyncio")

TEMPLATE = '''# An experiment of ubpe: `ubpe experiment {name}` runs it, writing
# results/<name>/ (tables as CSV, a README.md report with plots); rerunning computes only
# what changed (fits and encodings are cached). Edit the tables below; every key but a
# dataset's path and format has a default.
name = "example"
description = "universal vs classic BPE on my data"

[grid]
vocab_sizes = ["+256", "+1024"]          # "+k": the data's alphabet + k merged tokens; k: ids
# n_candidates = [50]                    # pairs merged per fitting round (1: standard BPE)
# seeds = [0, 1, 2]                      # for the seeded encoders (dropout)
# equal_size = true                      # fit universal to the size classic ends with

[encoders]
run = ["universal:tfidf", "classic:classic", "classic:fewest"]   # variant:encoder
# baseline = "classic:classic"
# options = {{ dropout = {{ p = 0.1 }} }}

[[comparisons]]                          # paired tests per independent unit, Holm-corrected
question = "Does universal BPE (tf-idf encoder) give shorter encodings than classic BPE?"
a = "universal:tfidf"
b = "classic:classic"

[datasets.python]                        # text every Python has: standard-library modules
path = [{paths}]
format = "text"                          # text | jsonl | csv | parquet | npy | fasta | midi
kind = "code"                            # what the documents are, for the report (default: prose)
document = "file"                        # text: line | paragraph | file
unit = "file"                            # the unit of independence: document, file, or a
                                         # field / column naming it
regex = "words"                          # merges never cross a word boundary
max_symbols = 200000                     # cap on the training split (held-out: heldout_max_symbols)

# [datasets.genomes]                     # FASTA (pip install 'ubpe[fasta]')
# path = "genomes.fa"
# format = "fasta"
# chunk = 1000                           # pieces of 1,000 bases; the record is the unit
#
# [datasets.series]                      # CSV / parquet: a column of integer lists ("3 1 4"),
# path = "series.csv"                    # of text, or of numbers (quantized in windows)
# format = "csv"
# column = "values"
# quantizer = "uniform:64"               # numbers only: uniform | quantile | mulaw : levels
#
# [datasets.songs]                       # MIDI files as REMI tokens (pip install 'ubpe[midi]')
# path = "midi/"
# format = "midi"
#
# [vocabularies.llama3]                  # a tokenizer file (GGUF, tokenizer.json, sentencepiece,
# path = "ggml-vocab-llama-bpe.gguf"     # .tiktoken, ubpe's own): encoded beside the fitted ones
# encoders = ["native", "fewest"]        # native: the model's own tokenisation
'''


def stdlib_dir() -> Path:
    """The running Python's standard library folder."""
    return Path(sysconfig.get_paths()["stdlib"])


def example_config(name: str = "experiment.toml") -> str:
    """The example config's text (its dataset: this Python's standard library)."""
    paths = ", ".join(f'"{(stdlib_dir() / package).as_posix()}/**/*.py"' for package in EXAMPLE_PACKAGES)
    return TEMPLATE.format(name=name, paths=paths)
