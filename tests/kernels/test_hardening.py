"""Hardening (issue 13): each bad input below is a minimal reproducer of a case that once gave
a silent wrong result, a raw exception or unsafe memory access. Every case asserts the
specific ``ubpe.errors`` class and a fragment of its message, or the correct result."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.text.patterns import NATIVE_PATTERNS, PATTERNS, code_point_classes
from ubpe.encoders import RankedEncoder, available_encoders, make_encoder
from ubpe.errors import InvalidParameterError, UnknownSymbolError
from ubpe.vocabulary import Vocabulary
from ubpe_native._pretokenize import split_text
from ubpe_native._ranked import MergeTable

GPT2 = NATIVE_PATTERNS[PATTERNS["gpt2"]]

# -- item 10: kernels on any input ---------------------------------------------------------

# malformed UTF-8 and the byte where it starts
BAD_UTF8 = [
    (b"ab\xf0", 2),  # truncated four-byte sequence (offsets past the end once)
    (b"\xf7\xbf\xbf\xbf", 0),  # above U+10FFFF (read beyond the class table once)
    (b"\xed\xa0\x80", 0),  # a surrogate
    (b"\xc0\x80", 0),  # overlong
    (b"a\x80", 1),  # a lone continuation byte
    (b"\xe2\x82", 0),  # truncated three-byte sequence
]


@pytest.mark.parametrize(("data", "at"), BAD_UTF8, ids=lambda v: repr(v))
def test_split_text_refuses_malformed_utf8(data, at):
    with pytest.raises(ValueError, match=f"not valid UTF-8.*at byte {at}"):
        split_text(np.frombuffer(data, np.uint8), code_point_classes(), GPT2)


@pytest.mark.parametrize(("data", "at"), BAD_UTF8, ids=lambda v: repr(v))
def test_merge_table_encode_text_refuses_malformed_utf8(data, at):
    table = MergeTable(256, np.array([0, 2], np.int64), np.array([97, 98], np.int32), np.array([0], np.int64))
    with pytest.raises(ValueError, match=f"not valid UTF-8.*at byte {at}"):
        table.encode_text(data, code_point_classes(), GPT2)


def test_ranked_encoder_encode_text_names_the_byte():
    vocabulary = Vocabulary.from_merges(256, [97], [98], documents=[1], n_docs=1)
    encoder = RankedEncoder(vocabulary, priority="rank")
    with pytest.raises(InvalidParameterError, match="at byte 2"):
        encoder.encode_text(b"ab\xf0", code_point_classes(), GPT2)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=3), st.text(max_size=12).map(str.encode),
                          st.integers(1, 40).map(lambda n: b"a" * n)), max_size=8).map(b"".join))
def test_the_utf8_check_is_the_codecs(data):
    """The check every kernel runs first (eight ASCII bytes at a time) refuses what Python's
    UTF-8 codec refuses, at the byte where the codec's error starts."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        with pytest.raises(ValueError, match=f"not valid UTF-8.*at byte {error.start}\\)"):
            split_text(np.frombuffer(data, np.uint8), code_point_classes(), GPT2)
    else:
        assert split_text(np.frombuffer(data, np.uint8), code_point_classes(), GPT2)[-1] == len(data)


def test_split_text_still_splits_valid_utf8():
    data = "é€𝄞 ok".encode()
    assert split_text(np.frombuffer(data, np.uint8), code_point_classes(), GPT2).tolist() == [0, 2, 9, 12]


@pytest.fixture(scope="module")
def small_vocabulary():
    import random

    import ubpe

    rng = random.Random(0)
    tokenizer = ubpe.UBPE(alphabet=list(range(10)), n_tokens=30)
    tokenizer.fit([[rng.randrange(10) for _ in range(50)] for _ in range(20)])
    return tokenizer.vocabulary


@pytest.mark.parametrize("name", [n for n in available_encoders() if n != "additive"])
def test_ids_beyond_int32_are_unknown_symbols_not_wrapped(small_vocabulary, name):
    encoder = make_encoder(name, small_vocabulary)
    with pytest.raises(UnknownSymbolError, match="4294967296 is not a base id"):
        encoder.encode([np.array([2**32, 2**32 + 1])])



# Each script runs a kernel under an address-space limit; it must raise MemoryError, not print
# "Exception ignored in ..." and carry on with half-built state (as the lattice and fit did).
MEMORY_LIMITED = {
    "lattice": (
        """
from ubpe_native._lattice_cache import encode_parts
from ubpe_native._radix import RadixTree
tree = RadixTree(2, np.array([0, 2]), np.array([0, 1], np.int32))
symbols = np.zeros(200_000, np.int32)
limit()
encode_parts(tree, np.array([0.0, 0.0, 0.5]), symbols, np.array([0, len(symbols)], np.int64), 4096)
""",
        "MemoryError: a part of 200000 symbols with top_n=4096 needs about",
    ),
    "fit": (
        """
from ubpe_native._fit import PairMerger
tokens = np.zeros(60_000_000, np.int32)
tokens[1::2] = 1
limit()
PairMerger(tokens, np.array([0, len(tokens)], np.int64), np.zeros(1, np.int32), 1, 2)
""",
        "MemoryError:",
    ),
}
MEMORY_PRELUDE = """
import resource
import numpy as np
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024**2, resource.RLIM_INFINITY))
"""


@pytest.mark.skipif(__import__("sys").platform != "linux", reason="RLIMIT_AS")
@pytest.mark.parametrize("kernel", MEMORY_LIMITED)
def test_kernel_out_of_memory_raises_memory_error_not_exception_ignored(kernel):
    import os
    import subprocess
    import sys
    from pathlib import Path

    import ubpe_native

    script, expected = MEMORY_LIMITED[kernel]
    code = MEMORY_PRELUDE + "try:\n" + "".join(f"    {line}\n" for line in script.strip().splitlines())
    code += "except MemoryError as exc:\n    print('MemoryError:', exc)\nelse:\n    print('no error')\n"
    root = str(Path(ubpe_native.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert "Exception ignored" not in done.stderr
    assert expected in done.stdout, done.stdout + done.stderr


# -- item 3: files --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted_models():
    import ubpe
    from ubpe.models.bytelevel import ByteLevelBPE

    universal = ubpe.UBPE(alphabet=list("abc "), n_tokens=12)
    universal.fit(["abc abc cab", "cab abc"] * 3, quiet=True)
    bytelevel = ByteLevelBPE().fit(["the cat saw the dog"] * 5, n_tokens=260, quiet=True)
    return universal, bytelevel


def _savers(models):
    from ubpe.io import save

    universal, bytelevel = models
    return {
        "save": universal.save,
        "save_tiktoken": bytelevel.save_tiktoken,
        "bytelevel_save": bytelevel.save,
        "hf": lambda path: save(bytelevel, path, format="hf"),
    }


SAVERS = ["save", "save_tiktoken", "bytelevel_save", "hf"]


@pytest.fixture
def umask_022():
    import os

    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.mark.parametrize("saver", SAVERS)
def test_new_file_respects_the_umask(tmp_path, fitted_models, saver, umask_022):
    """Once: 0600 whatever the umask (NamedTemporaryFile's mode, renamed over)."""
    path = tmp_path / "model"
    _savers(fitted_models)[saver](path)
    assert (path.stat().st_mode & 0o777) == 0o644


@pytest.mark.parametrize("saver", SAVERS)
def test_resaving_keeps_the_file_mode(tmp_path, fitted_models, saver, umask_022):
    path = tmp_path / "model"
    path.write_text("old")
    path.chmod(0o640)
    _savers(fitted_models)[saver](path)
    assert (path.stat().st_mode & 0o777) == 0o640
    assert path.read_text() != "old"


@pytest.mark.parametrize("saver", SAVERS)
def test_saving_to_a_symlink_writes_its_target(tmp_path, fitted_models, saver):
    target = tmp_path / "real"
    target.write_text("old")
    link = tmp_path / "link"
    link.symlink_to(target)
    _savers(fitted_models)[saver](link)
    assert link.is_symlink()
    assert target.read_text() != "old"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left


def test_lone_surrogate_in_alphabet_is_a_clear_error_on_save(tmp_path):
    import ubpe

    tokenizer = ubpe.UBPE(alphabet=["a", "\udcff"], n_tokens=10)
    tokenizer.fit([["a", "\udcff", "a", "\udcff"]] * 3)
    with pytest.raises(InvalidParameterError, match="lone surrogate"):
        tokenizer.save(tmp_path / "x.json")
    assert not list(tmp_path.iterdir())


def _cli(tmp_path, *args, stdin=None):
    import os
    import subprocess
    import sys
    from pathlib import Path

    import ubpe

    root = str(Path(ubpe.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root, "NO_COLOR": ""}
    env.pop("UBPE_TRACEBACK", None)
    return subprocess.run(
        [sys.executable, "-m", "ubpe", *args], cwd=tmp_path, input=stdin, capture_output=True, env=env, timeout=120
    )


@pytest.mark.parametrize("source", ["stdin", "file"])
def test_invalid_utf8_input_one_rule_for_stdin_and_files(tmp_path, source):
    """Once: stdin replaced invalid bytes by U+FFFD (then save failed) while files were refused."""
    data = b"ab\xff cd\n" * 3
    (tmp_path / "bad.txt").write_bytes(data)
    args = ["fit", "-o", "m.json"] + (["bad.txt"] if source == "file" else ["-"])
    done = _cli(tmp_path, *args, stdin=data if source == "stdin" else None)
    assert done.returncode == 1
    assert b"Traceback" not in done.stderr
    assert (b"stdin" if source == "stdin" else b"bad.txt") + b" is not UTF-8 text" in done.stderr
    assert not (tmp_path / "m.json").exists()


# -- items 1 and 5: silent wrong results and raw exceptions in the API ------------------------

from ubpe.errors import SymbolTypeError, UnknownTokenError  # noqa: E402

API_CASES = {
    # name: (call on (universal, bytelevel), error class, message fragment)
    "bytelevel decode [-1]": (lambda u, b: b.decode([-1]), UnknownTokenError, "token -1 is not in the vocabulary"),
    "bytelevel decode_bytes [-1]": (lambda u, b: b.decode_bytes([-1]), UnknownTokenError, "token -1"),
    "bytelevel decode [True]": (lambda u, b: b.decode([True]), SymbolTypeError, "must be ints, got True"),
    "bytelevel decode None": (lambda u, b: b.decode(None), SymbolTypeError, "got NoneType"),
    "bytelevel pieces [-1]": (lambda u, b: b.pieces([-1]), UnknownTokenError, "token -1"),
    "universal decode [-1]": (lambda u, b: u.decode([-1]), UnknownTokenError, "token -1"),
    "universal decode [True]": (lambda u, b: u.decode([True]), SymbolTypeError, "True"),
    "encode_batch one str": (lambda u, b: u.encode_batch("abc"), InvalidParameterError, "not one document"),
    "exact='no'": (lambda u, b: u.encode("abc", exact="no"), InvalidParameterError, "exact must be True or False"),
    "threads=0": (lambda u, b: u.encode_batch(["abc"], threads=0), InvalidParameterError, "threads must"),
    "threads=-1": (lambda u, b: u.encode_batch(["abc"], threads=-1), InvalidParameterError, "got -1"),
    "threads='2'": (lambda u, b: u.encode_batch(["abc"], threads="2"), InvalidParameterError, "got '2'"),
    "threads=True": (lambda u, b: u.encode_batch(["abc"], threads=True), InvalidParameterError, "got True"),
}


@pytest.mark.parametrize("case", API_CASES)
def test_api_bad_input_is_a_clear_error(fitted_models, case):
    call, error, fragment = API_CASES[case]
    with pytest.raises(error, match=__import__("re").escape(fragment)):
        call(*fitted_models)


def test_encode_batch_good_arguments_still_work(fitted_models):
    universal, _ = fitted_models
    assert universal.encode_batch(["abc"], threads=2) == [universal.encode("abc")]


# -- items 1 and 6 in the CLI ---------------------------------------------------------------

CLI_CASES = {
    "decode --ids -1": (["decode", "b.json", "--ids", "-1"], "token -1 is not in the vocabulary"),
    "fit --n-tokens 0": (["fit", "c.txt", "--n-tokens", "0", "-o", "m.json"], "--n-tokens must be at least 1, got 0"),
    "fit bytelevel --n-tokens 0": (
        ["fit", "c.txt", "--variant", "bytelevel", "--n-tokens", "0", "-o", "m.json"],
        "--n-tokens must be at least 1",
    ),
    "fit -o a directory": (["fit", "c.txt", "-o", "sub"], "cannot write sub: it is a directory"),
}


@pytest.mark.parametrize("case", CLI_CASES)
def test_cli_bad_input_is_one_line_error(tmp_path, fitted_models, case):
    args, fragment = CLI_CASES[case]
    fitted_models[1].save(tmp_path / "b.json")
    (tmp_path / "c.txt").write_text("the cat saw the dog\n" * 3)
    (tmp_path / "sub").mkdir()
    done = _cli(tmp_path, *args)
    assert done.returncode == 1
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr.decode(), done.stderr
    assert fragment in lines[0]
    assert not (tmp_path / "m.json").exists()


def test_write_error_names_the_users_path_not_the_temporary(tmp_path, monkeypatch):
    from ubpe import files

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", args[0])

    monkeypatch.setattr(files.os, "open", refuse)
    with pytest.raises(PermissionError) as caught:
        files.write_atomically(tmp_path / "model.json", "{}")
    assert caught.value.filename == str(tmp_path / "model.json")


# -- items 2, 5, 6, 4: model files and byte-level arguments ----------------------------------

from ubpe.errors import ModelFormatError  # noqa: E402


def _single_bytes() -> str:
    import base64

    return "".join(f"{base64.b64encode(bytes([i])).decode()} {i}\n" for i in range(256))


def _ab_line(rank: str) -> str:
    import base64

    return f"{base64.b64encode(b'ab').decode()} {rank}\n"


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("empty.tiktoken", "", "is an empty file"),
        ("empty.json", "", "is an empty file"),
        ("blank.json", "\n\n", "is an empty file"),
        ("super.tiktoken", "SUPER", "not ASCII"),  # rank "²": isdigit() but no int
    ],
)
def test_bad_model_files_say_what_is_wrong(tmp_path, name, text, fragment):
    import ubpe

    if text == "SUPER":
        text = _single_bytes() + _ab_line("²")
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(ModelFormatError, match=fragment):
        ubpe.load(tmp_path / name)


def test_empty_tiktoken_with_explicit_format(tmp_path):
    import ubpe

    (tmp_path / "x.tiktoken").write_text("")
    with pytest.raises(ModelFormatError, match="is an empty file"):
        ubpe.load(tmp_path / "x.tiktoken", format="tiktoken")


def test_huge_rank_in_a_small_tiktoken_file_is_stored_sparsely(tmp_path):
    """Once: ``[None] * (2**31 - 1)`` (16 GiB) for a 2 kB file; now a dict of the ids that exist."""
    import ubpe

    (tmp_path / "big.tiktoken").write_text(_single_bytes() + _ab_line("2147483646"))
    tok = ubpe.load(tmp_path / "big.tiktoken")
    assert tok.n_vocab == 2**31 - 1
    assert tok.decode([2147483646, 99]) == "abc"
    assert len(tok._bytes_of) == 257
    with pytest.raises(UnknownTokenError, match="token 300"):
        tok.decode([300])


def test_huge_special_token_id_is_stored_sparsely():
    from ubpe.models.bytelevel import ByteLevelBPE

    tok = ByteLevelBPE().fit(["the cat"] * 3, n_tokens=258, quiet=True, special_tokens={"<e>": 2**31 - 2})
    assert tok.decode([2**31 - 2]) == "<e>"
    assert len(tok._bytes_of) == 259


@pytest.mark.parametrize("seed", [-1, "x", True, 1.5])
def test_dropout_seed_is_checked(fitted_models, seed):
    universal, _ = fitted_models
    with pytest.raises(InvalidParameterError, match="seed"):
        universal.encode("abc", encoder="dropout", seed=seed)


def test_special_tokens_given_as_a_set_get_sorted_ids():
    from ubpe.models.bytelevel import ByteLevelBPE

    tok = ByteLevelBPE().fit(["the cat"] * 3, n_tokens=258, quiet=True, special_tokens={"<b>", "<a>", "<c>"})
    assert tok.special_tokens == {"<a>": 258, "<b>": 259, "<c>": 260}


def test_special_tokens_set_order_does_not_follow_the_hash_seed():
    import os
    import subprocess
    import sys

    code = (
        "from ubpe.models.bytelevel import ByteLevelBPE\n"
        "names = {'<%d>' % i for i in range(20)}\n"
        "print(ByteLevelBPE().fit(['the cat'] * 3, n_tokens=258, quiet=True, special_tokens=names).special_tokens)\n"
    )
    import ubpe

    root = str(__import__("pathlib").Path(ubpe.__file__).resolve().parent.parent)
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True,
            env=dict(os.environ, PYTHONHASHSEED=str(seed), PYTHONPATH=root),
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(outputs) == 1


def test_duplicate_special_tokens_are_refused():
    from ubpe.models.bytelevel import ByteLevelBPE

    with pytest.raises(InvalidParameterError, match="special tokens given twice"):
        ByteLevelBPE().fit(["the cat"] * 3, n_tokens=258, quiet=True, special_tokens=["<a>", "<b>", "<a>"])


# -- item 1: patterns, break tokens, rearranging ------------------------------------------------


@pytest.mark.parametrize("pattern", [r"(?r)\w+|\s+", r"(?r)\S+"])
def test_reverse_matching_patterns_are_refused(pattern):
    """Once: a (?r) pattern reversed the pieces of byte-level text."""
    from ubpe.models.bytelevel import ByteLevelBPE

    with pytest.raises(InvalidParameterError, match=r"must not match in reverse"):
        ByteLevelBPE().fit(["the cat"] * 3, n_tokens=258, quiet=True, pattern=pattern)


def test_break_tokens_outside_the_alphabet_warn():
    import ubpe
    from ubpe.errors import IgnoredInputWarning

    with pytest.warns(IgnoredInputWarning, match=r"not in the alphabet and are ignored: \['z'\]"):
        ubpe.UBPE(alphabet=list("abc"), break_tokens=["z", "a"], n_tokens=10)


@pytest.mark.parametrize("n_tokens", [1, 4])
def test_rearrange_tokens_to_no_merges_is_refused(n_tokens):
    import ubpe

    tokenizer = ubpe.UBPE(alphabet=list("abc "), n_tokens=12)
    tokenizer.fit(["abc abc cab", "cab abc"] * 3, quiet=True)
    with pytest.raises(InvalidParameterError, match=f"`n_tokens` \\({n_tokens}\\) must be larger than the base ids"):
        tokenizer.rearrange_tokens(n_tokens=n_tokens)


@pytest.mark.parametrize(
    ("variant", "corpus", "asked"),
    [("UBPE", ["", "", ""], 10), ("UBPEClassic", ["abc abc cab", "cab abc"] * 3, 1000)],
)
def test_fewer_ids_than_asked_warn_with_both_numbers(variant, corpus, asked):
    """Once: n_tokens silently rewritten (the reference's trimming, kept, but now said)."""
    import ubpe
    from ubpe.errors import VocabularySizeWarning

    tokenizer = getattr(ubpe, variant)(alphabet=list("abc "), n_tokens=asked)
    with pytest.warns(VocabularySizeWarning, match=f"n_tokens={asked} was asked for, the fit ended with") as caught:
        tokenizer.fit(corpus, quiet=True)
    assert str(tokenizer.n_vocab) in str(caught[0].message)
    assert tokenizer.n_tokens == tokenizer.n_vocab < asked


@pytest.mark.parametrize("top", ["-1", "0", "x"])
def test_inspect_top_must_be_positive(top, tmp_path, capsys):
    from ubpe import UBPE
    from ubpe.cli import main

    tok = UBPE(alphabet="ab", n_tokens=4)
    tok.fit(["abab", "abba"], quiet=True)
    tok.save(tmp_path / "m.json")
    with pytest.raises(SystemExit) as exit_info:
        main(["inspect", str(tmp_path / "m.json"), "--top", top])
    assert exit_info.value.code == 2
    assert "--top" in capsys.readouterr().err
