"""GGUF vocabularies whose llama.cpp pre-tokenizer is a list of regexes (falcon, starcoder,
deepseek, default): their passes run on the kernel's regex VM without the GIL
(``ubpe.text.pretokenizers.vm_pattern``), and cut exactly as the Python path
(:class:`~ubpe.text.pretokenizers.Pretokenizer`, collapsed text and all) on every script;
batches on any number of threads, lists or arrays, are ``encode`` one by one (which runs the
passes as one program of isolated splits, ``ImportedBPE._passes_scan``, in the kernel call
that merges: `_native` against `_native_by_regex` below). llama.cpp's own
expected ids for these files (``test_gguf.py`` checks ``encode``, which takes the Python path
until a batch has compiled the passes) hold on the native path too."""

from __future__ import annotations

import pytest

from ubpe.io import gguf as gguf_io

from vocab_corpora import GPT2_VOCABS, text_lines, vocab_path

PASSES_VOCABS = ("falcon", "starcoder", "deepseek-llm", "deepseek-coder", "command-r", "aquila", "gpt-neox")
#: one vocabulary per pre-tokenizer type in the README's test command; the others' with the long tests
LONG = ("command-r", "gpt-neox")
EDGES = ["", " ", "  \r\n  end   ", "'ſ 'S 'Ll \u0378x \ufdd0 a\U0010ffff  \n\n\t x", "12345 1 22 333 4444 ½ ١٢٣",
         "中文 한국어 カタカナ ー，。！", "a\u3000b\u2028c\xa0d\x85e", "$+<=>^~|` ¿¡ ‘q’ “q”", "<|endoftext|>x  y"]


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return (text_lines("udhr", limit=600, split="train") + text_lines(limit=200) + text_lines("stdlib", limit=200)
            + EDGES)


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.long) if name in LONG else name
                                  for name in PASSES_VOCABS])
def test_native_passes_are_the_python_path(name, lines):
    tok = gguf_io.read(vocab_path(name))
    assert tok._scanner is None and tok._passes() is not None  # the VM's passes, no preset scanner
    assert tok._passes_scan() is not None  # ... and one text's program
    assert [tok._native(line) for line in lines] == [tok._native_by_regex(line) for line in lines]
    want = [tok.encode(line) for line in lines]
    assert tok.encode_batch(lines, threads=1) == want
    assert tok.encode_batch(lines * 2, threads=3) == want * 2
    ids, offsets = tok.encode_batch_to_numpy(lines, threads=2).best()
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want
    # documents holding a control token are skipped by the kernel and encoded one by one
    special = [line for line in lines if "<|endoftext|>" in line]
    assert special and tok.encode_batch(lines, parse_special=True) == [tok.encode(line, parse_special=True)
                                                                        for line in lines]


@pytest.mark.parametrize("name", [name for name in PASSES_VOCABS if name in GPT2_VOCABS])
def test_llama_cpp_expected_ids_on_the_native_path(name):
    tok = gguf_io.read(vocab_path(name))
    cases = gguf_io.read_vocab_tests(vocab_path(name))
    assert tok.encode_batch([text for text, _ in cases], threads=2) == [ids for _, ids in cases]
    assert tok._passes(compile=False) is not None  # the batch compiled them: encode now runs them
    assert [tok.encode(text) for text, _ in cases] == [ids for _, ids in cases]
