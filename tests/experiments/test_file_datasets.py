"""A user's files as datasets (`ubpe.lab.datasets.files`): every format on real small files
written in tmp_path, broken files with errors naming the file and the line or record, units
that keep their documents in one split, checksums, and a run of the engine on them."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ubpe.lab.config import ConfigError, load_config, parse_config
from ubpe.lab.datasets import DatasetError, content_checksum
from ubpe.lab.datasets.files import FileFormatError, load_files, read_corpus

WORDS = ["alpha beta", "gamma delta", "beta gamma alpha", "delta delta", "epsilon", "zeta eta theta"]


def _both(name, **options):
    return [load_files(name, split, max_symbols=math.inf, **options) for split in ("train", "heldout")]


def _all_docs(name, **options):
    corpus, _ = read_corpus(name, options)
    return corpus


def _same_docs(docs, expected):
    return [d if isinstance(d, str) else list(d) for d in docs] == expected


def test_text_a_document_per_line_per_file_per_paragraph(tmp_path):
    one = tmp_path / "one.txt"
    one.write_text("\n".join(WORDS) + "\n\n", encoding="utf-8")
    assert _all_docs("t", path=str(one), format="text").docs == WORDS
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    for i, text in enumerate(WORDS):
        (folder / ("sub" if i % 2 else "") / f"n{i}.txt").write_text(text + "\n", encoding="utf-8")
    (folder / ".hidden").write_text("not read", encoding="utf-8")
    corpus = _all_docs("t", path=str(folder), format="text")
    assert sorted(corpus.docs) == sorted(t + "\n" for t in WORDS) and len(corpus.ids) == len(WORDS)
    paragraphs = tmp_path / "p.txt"
    paragraphs.write_text("a b\nc d\n\n\ne f\n\ng\n", encoding="utf-8")
    corpus = _all_docs("t", path=str(paragraphs), format="text", document="paragraph")
    assert corpus.docs == ["a b\nc d", "e f", "g"]
    # relative to the config's folder, through a glob
    corpus = _all_docs("t", path="notes/**/*.txt", format="text", root=str(tmp_path))
    assert len(corpus.docs) == len(WORDS)


def test_units_keep_their_documents_in_one_split(tmp_path):
    rows = [{"text": f"{w} {i}", "group": f"g{i % 7}"} for i, w in enumerate(WORDS * 20)]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    train, heldout = _both("j", path=str(path), format="jsonl", field="text", unit="group")
    assert train.unit == "group" and set(train.doc_units).isdisjoint(heldout.doc_units)
    assert sorted(train.docs + heldout.docs) == sorted(r["text"] for r in rows)
    assert train.n_units + heldout.n_units == 7
    assert train.checksum == content_checksum(train.docs)
    # documents as units: the same rule (hash of the unit's name), a different split
    train_docs, heldout_docs = _both("j", path=str(path), format="jsonl", field="text")
    assert heldout_docs.n_units == heldout_docs.n_docs > 0
    # the files' checksum changes with a byte of the files
    before = train.settings["files_sha256"]
    path.write_text(path.read_text().replace("alpha", "alphA", 1))
    assert _both("j", path=str(path), format="jsonl", field="text", unit="group")[0].settings["files_sha256"] != before


def test_jsonl_integer_lists_and_broken_lines(tmp_path):
    path = tmp_path / "ints.jsonl"
    path.write_text('{"ids": [1, 2, 3]}\n{"ids": [4, 5]}\n', encoding="utf-8")
    corpus = _all_docs("j", path=str(path), format="jsonl", field="ids")
    assert _same_docs(corpus.docs, [[1, 2, 3], [4, 5]])
    path.write_text('{"ids": [1, 2]}\n{"ids": [1, 2\n', encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"ints\.jsonl, line 2: not JSON"):
        _all_docs("j", path=str(path), format="jsonl", field="ids")
    path.write_text('{"ids": [1, 2]}\n{"other": 1}\n', encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"ints\.jsonl, line 2: no field 'ids'"):
        _all_docs("j", path=str(path), format="jsonl", field="ids")
    path.write_text('{"ids": {"a": 1}}\n', encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"line 1, field 'ids': a document is a string"):
        _all_docs("j", path=str(path), format="jsonl", field="ids")
    path.write_bytes(b'{"ids": "ok"}\n{"ids": "\xff"}\n')
    with pytest.raises(FileFormatError, match=r"ints\.jsonl, line 2: not utf-8"):
        _all_docs("j", path=str(path), format="jsonl", field="ids")


def test_csv_text_integer_lists_and_numbers(tmp_path):
    pd = pytest.importorskip("pandas")
    path = tmp_path / "series.csv"
    pd.DataFrame({"seq": ["3 1 4 1 5", "[9, 2, 6]", "5 3 5"], "text": ["a,b", "c", "d e"],
                  "who": ["x", "y", "x"]}).to_csv(path, index=False)
    corpus = _all_docs("c", path=str(path), format="csv", column="seq", unit="who")
    assert _same_docs(corpus.docs, [[3, 1, 4, 1, 5], [9, 2, 6], [5, 3, 5]])
    assert corpus.units == ["x", "y", "x"]
    assert _all_docs("c", path=str(path), format="csv", column="text").docs == ["a,b", "c", "d e"]
    # a numeric column: one series per unit, cut into windows, quantized on the train split
    rng = np.random.default_rng(0)
    values = np.cumsum(rng.normal(size=3000))
    pd.DataFrame({"v": values, "sensor": np.repeat([f"s{i}" for i in range(20)], 150)}).to_csv(
        tmp_path / "numbers.csv", index=False)
    train, heldout = _both("n", path=str(tmp_path / "numbers.csv"), format="csv", column="v",
                           unit="sensor", window=50, quantizer="quantile:8")
    assert train.symbol_type == "int" and train.kind == "timeseries" and train.unit == "sensor"
    assert train.n_docs + heldout.n_docs == 60 and set(train.alphabet) <= set(range(8))
    assert train.settings["quantizer"].startswith("quantile")
    # broken cells name the file and line
    path.write_text("seq\n1 2 3\n4 five 6\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"series\.csv, line 3, column 'seq': not a list of integers"):
        _all_docs("c", path=str(path), format="csv", column="seq", values="ints")
    with pytest.raises(FileFormatError, match=r"series\.csv: no column 'nope' \(columns: seq\)"):
        _all_docs("c", path=str(path), format="csv", column="nope")
    path.write_text('seq\n"1 2\n', encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"series\.csv: not a csv table"):
        _all_docs("c", path=str(path), format="csv", column="seq")


def test_parquet_integer_lists(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    path = tmp_path / "t.parquet"
    pd.DataFrame({"ids": [[1, 2, 3], [4, 5], [6]], "s": ["a", "b", "c"]}).to_parquet(path)
    assert _same_docs(_all_docs("p", path=str(path), format="parquet", column="ids").docs, [[1, 2, 3], [4, 5], [6]])
    assert _all_docs("p", path=str(path), format="parquet", column="s").docs == ["a", "b", "c"]
    # lists of real numbers are series to quantize
    pd.DataFrame({"x": [[0.5, 1.5, 2.5]] * 20}).to_parquet(path)
    corpus, source = read_corpus("p", {"path": str(path), "format": "parquet", "column": "x"})
    assert source.quantized and source.kind == "timeseries" and corpus.docs[0].dtype == np.float64
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(FileFormatError, match=r"t\.parquet: not a parquet table"):
        _all_docs("p", path=str(path), format="parquet", column="ids")


def test_npy_and_npz(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(12).reshape(3, 4))
    np.savez(tmp_path / "b.npz", first=np.array([7, 8, 9]), second=np.arange(6).reshape(2, 3))
    corpus = _all_docs("a", path=str(tmp_path / "*.np?"), format="npy")
    assert _same_docs(corpus.docs, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [7, 8, 9], [0, 1, 2], [3, 4, 5]])
    np.save(tmp_path / "c.npy", np.array(["x", "y"]))
    with pytest.raises(FileFormatError, match=r"c\.npy: an array of <U1, not of numbers"):
        _all_docs("a", path=str(tmp_path / "c.npy"), format="npy")
    (tmp_path / "d.npy").write_bytes(b"\x93NUMPY broken")
    with pytest.raises(FileFormatError, match=r"d\.npy: not a \.npy array"):
        _all_docs("a", path=str(tmp_path / "d.npy"), format="npy")


def test_fasta_records_chunks_and_kind(tmp_path):
    pytest.importorskip("pyfaidx", reason="the fasta extra (pyfaidx)")
    genomes = tmp_path / "genomes.fa"
    genomes.write_text(">chr1 first\nACGTACGTAC\nGTACGT\n>chr2\nacgtnn\n", encoding="ascii")
    corpus, source = read_corpus("g", {"path": str(genomes), "format": "fasta"})
    assert corpus.docs == ["ACGTACGTACGTACGT", "ACGTNN"] and source.kind == "dna"
    assert source.unit == "record" and not list(tmp_path.glob("*.fai"))  # no index left beside it
    corpus, _ = read_corpus("g", {"path": str(genomes), "format": "fasta", "chunk": 5})
    assert corpus.docs == ["ACGTA", "CGTAC", "GTACG", "T", "ACGTN", "N"]
    assert corpus.units == ["genomes.fa:chr1 first"] * 4 + ["genomes.fa:chr2"] * 2
    corpus, source = read_corpus("g", {"path": str(genomes), "format": "fasta", "chunk": 5, "unit": "chunk"})
    assert corpus.units == corpus.ids and len(set(corpus.ids)) == 6 and source.unit == "chunk"
    proteins = tmp_path / "p.fasta"
    proteins.write_text(">p1\nMKV*\n>p2\nMLLW\n", encoding="ascii")
    assert read_corpus("p", {"path": str(proteins), "format": "fasta"})[1].kind == "protein"
    broken = tmp_path / "broken.fa"
    broken.write_text(">r1\nACGT\nAC\nACGT\n", encoding="ascii")  # a short line inside a record
    with pytest.raises(FileFormatError, match=r"broken\.fa: not a readable FASTA file"):
        read_corpus("b", {"path": str(broken), "format": "fasta"})
    broken.write_text(">r1\nAC1GT\n", encoding="ascii")
    with pytest.raises(FileFormatError, match=r"broken\.fa, record 'r1': '1' is not a residue letter"):
        read_corpus("b", {"path": str(broken), "format": "fasta"})


def _write_midi(path, pitches):
    symusic = pytest.importorskip("symusic", reason="the midi extra (miditok, symusic)")
    score = symusic.Score(480)
    track = symusic.Track(program=0)
    for i, pitch in enumerate(pitches):
        track.notes.append(symusic.Note(i * 240, 240, pitch, 80))
    score.tracks.append(track)
    score.dump_midi(str(path))


def test_midi_files_as_remi_tokens(tmp_path):
    miditok = pytest.importorskip("miditok", reason="the midi extra (miditok)")
    for i in range(3):
        _write_midi(tmp_path / f"song{i}.mid", [60 + i, 62, 64, 65, 67 + i])
    corpus, source = read_corpus("m", {"path": str(tmp_path), "format": "midi"})
    assert source.kind == "music" and len(corpus.docs) == 3
    # MidiTok's own REMI ids of the same file
    expected = miditok.REMI(miditok.TokenizerConfig(use_programs=True)).encode(tmp_path / "song0.mid")
    expected = expected[0] if isinstance(expected, list) else expected
    assert list(corpus.docs[0]) == list(expected.ids)
    (tmp_path / "song1.mid").write_bytes(b"MThd\x00\x00\x00\x06 truncated")
    with pytest.raises(FileFormatError, match=r"song1\.mid: cut inside a chunk header"):
        read_corpus("m", {"path": str(tmp_path), "format": "midi", "strict": True})
    corpus, _ = read_corpus("m", {"path": str(tmp_path), "format": "midi"})  # skipped, and listed
    assert len(corpus.docs) == 2 and [s["file"] for s in corpus.settings["skipped_files"]] == ["song1.mid"]


def test_config_errors_name_the_key(tmp_path):
    base = {"encoders": {"run": ["universal:tfidf"]}}
    with pytest.raises(ConfigError, match="format must be one of"):
        parse_config({**base, "datasets": {"x": {"path": "a.txt", "format": "docx"}}})
    with pytest.raises(ConfigError, match=r"unknown key datasets\.x\.column; \[datasets\.x\] takes break_tokens, "):
        parse_config({**base, "datasets": {"x": {"path": "a.txt", "format": "text", "column": "c"}}})
    with pytest.raises(ConfigError, match="needs `field"):
        parse_config({**base, "datasets": {"x": {"path": "a.jsonl", "format": "jsonl"}}})
    with pytest.raises(DatasetError, match="no file at 'missing.txt'"):
        load_files("x", "train", path="missing.txt", format="text", root=str(tmp_path))
    (tmp_path / "one.txt").write_text("just one line\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="too few for a held-out split; name a finer `unit`"):
        _both("x", path=str(tmp_path / "one.txt"), format="text")


def test_an_experiment_on_files(tmp_path):
    """A config in tmp_path with text, CSV of integer series and FASTA, relative paths."""
    pytest.importorskip("pyfaidx", reason="the fasta extra (pyfaidx)")
    from ubpe.lab import runner

    rng = np.random.default_rng(1)
    (tmp_path / "notes").mkdir()
    for i in range(30):
        (tmp_path / "notes" / f"{i}.txt").write_text(" ".join(rng.choice(WORDS, 5)), encoding="utf-8")
    (tmp_path / "series.csv").write_text(
        "values\n" + "\n".join(" ".join(map(str, rng.integers(0, 6, 40))) for _ in range(30)) + "\n")
    (tmp_path / "genomes.fa").write_text(
        "".join(f">r{i}\n{''.join(rng.choice(list('ACGT'), 300))}\n" for i in range(20)), encoding="ascii")
    (tmp_path / "mine.toml").write_text("""
[grid]
vocab_sizes = ["+8"]
[encoders]
run = ["universal:tfidf", "classic:classic"]
[datasets.notes]
path = "notes/"
format = "text"
[datasets.sensors]
path = "series.csv"
format = "csv"
column = "values"
[datasets.genomes]
path = "genomes.fa"
format = "fasta"
""")
    config = load_config(tmp_path / "mine.toml")
    out = runner.run_experiment(config, jobs=1, progress=False, results_dir=tmp_path / "out",
                                cache_dir=tmp_path / "cache")
    import pandas as pd

    datasets = pd.read_csv(out / "datasets.csv")
    assert set(datasets["name"]) == {"notes", "sensors", "genomes"}
    assert dict(zip(datasets["name"], datasets["kind"])) == {"notes": "prose", "sensors": "sequence", "genomes": "dna"}
    metrics = pd.read_csv(out / "metrics.csv")
    assert len(metrics) == 6 and metrics["lossless"].all()
    report = (out / "README.md").read_text()
    assert "csv files: series.csv" in report and str(tmp_path) not in report
    assert "ubpe experiment" in report


def _run(config_file):
    from ubpe.lab import runner

    config = load_config(config_file)
    return config, runner.run_experiment(config, jobs=1, progress=False, cache_dir=config_file.parent / "cache",
                                         results_dir=config_file.parent / "out")


def _notes_config(tmp_path, sizes, run, notes, vocabulary, path, encoders, comparison=None):
    """``exp.toml`` in tmp_path: the notes as a text dataset, a vocabulary from ``path``."""
    question = (f'[[comparisons]]\nquestion = "q"\na = "{comparison[0]}"\nb = "{comparison[1]}"\n'
                if comparison else "")
    config = tmp_path / "exp.toml"
    config.write_text(f'[grid]\nvocab_sizes = [{sizes}]\n[encoders]\nrun = ["{run}"]\n{question}'
                      f'[datasets.notes]\npath = "{notes}"\nformat = "text"\n'
                      f'[vocabularies.{vocabulary}]\npath = "{path}"\nencoders = [{encoders}]\n')
    return config


def _heldout(config):
    from ubpe.lab import runner

    return runner.load_split(config.datasets[0].name, "heldout", max_symbols=None,
                             options=config.resolved_options(config.datasets[0]))


def _text_files(tmp_path, n=30):
    rng = np.random.default_rng(2)
    (tmp_path / "notes").mkdir(exist_ok=True)
    for i in range(n):
        (tmp_path / "notes" / f"{i}.txt").write_text(" ".join(rng.choice(WORDS, 6)), encoding="utf-8")


def test_a_vocabulary_from_a_file_in_the_grid(tmp_path):
    """A model file (ours, written by a fit) as a vocabulary of the grid: its native cells
    are the model's own encodings, at every grid setting, computed once."""
    import pandas as pd

    import ubpe
    from ubpe.lab import runner

    _text_files(tmp_path)
    model = ubpe.UBPEClassic(alphabet=sorted(set("".join(WORDS))), n_tokens=23)
    model.fit(WORDS * 3, quiet=True)
    model.save(tmp_path / "mine.json")
    config, out = _run(_notes_config(tmp_path, '"+8", "+16"', "classic:classic", "notes", "mine", "mine.json",
                                     '"native", "fewest"', comparison=("mine:native", "classic:classic")))
    metrics = pd.read_csv(out / "metrics.csv", dtype={"size": str})
    mine = metrics[metrics["variant"] == "mine"]
    assert set(mine["encoder"]) == {"mine:native", "mine:fewest"} and set(mine["size"]) == {"+8", "+16"}
    assert mine["lossless"].all() and (mine["vocab_size"] == model.n_vocab).all()
    # the model's own encodings, counted
    docs = [d for d in pd.read_csv(out / "documents.csv", dtype={"size": str}).itertuples()
            if d.encoder == "mine:native" and d.size == "+8"]
    heldout = _heldout(config)
    assert [d.n_tokens for d in docs] == [len(model.encode(doc)[0][0]) for doc in heldout.docs]
    native, fewest = (mine[(mine["encoder"] == e) & (mine["size"] == "+8")].iloc[0] for e in ("mine:native", "mine:fewest"))
    assert fewest["corpus_tokens"] <= native["corpus_tokens"]
    assert len(pd.read_csv(out / "comparisons.csv")) == 2
    info = json.loads((out / "run.json").read_text())
    assert info["run"]["cells_computed"] == 4  # 2 classic + 2 of the file's, once for both sizes
    assert info["vocabulary_files"]["mine"]["path"] == "mine.json"
    with pytest.raises(ConfigError, match="variant must be one of"):
        parse_config({"encoders": {"run": ["other:native"]}, "datasets": {"x": {}}})
    (tmp_path / "mine.json").unlink()
    with pytest.raises(ConfigError, match="vocabularies.mine.path: no file at 'mine.json'"):
        runner.run_experiment(config, jobs=1, progress=False, results_dir=tmp_path / "out",
                              cache_dir=tmp_path / "cache")


def test_a_gguf_vocabulary_on_text_files(tmp_path):
    """llama.cpp's Llama 3 vocabulary beside a fitted one: native ids are the GGUF model's."""
    import pandas as pd

    import ubpe
    from vocab_corpora import vocab_path

    gguf = vocab_path("llama-bpe")
    _text_files(tmp_path)
    config, out = _run(_notes_config(tmp_path, '"+8"', "universal:tfidf", "notes/*.txt", "llama3", gguf.as_posix(),
                                     '"native", "tfidf"'))
    metrics = pd.read_csv(out / "metrics.csv").set_index("encoder")
    model = ubpe.load(gguf)
    heldout = _heldout(config)
    assert metrics.loc["llama3:native", "corpus_tokens"] == sum(len(model.encode(d)) for d in heldout.docs)
    assert metrics.loc["llama3:native", "vocab_size"] == model.n_vocab
    assert metrics.loc[["llama3:native", "llama3:tfidf"], "lossless"].all()


def test_an_experiment_on_midi_files(tmp_path):
    pytest.importorskip("miditok", reason="the midi extra (miditok)")
    import pandas as pd

    rng = np.random.default_rng(3)
    (tmp_path / "songs").mkdir()
    for i in range(20):
        _write_midi(tmp_path / "songs" / f"{i}.mid", rng.integers(55, 75, 24).tolist())
    (tmp_path / "exp.toml").write_text('[grid]\nvocab_sizes = ["+8"]\n[datasets.songs]\npath = "songs/"\nformat = "midi"\n')
    config, out = _run(tmp_path / "exp.toml")
    metrics = pd.read_csv(out / "metrics.csv")
    assert set(metrics["kind"]) == {"music"} and metrics["lossless"].all()
    assert (metrics["tokens_per_symbol"] < 1).all()
