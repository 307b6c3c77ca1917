"""``ubpe fit`` streams its inputs: DocStream yields exactly the documents read_docs reads (same
order, same errors), pass after pass, stdin included."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.cli.inputs import CLIError, read_docs
from ubpe.cli.stream import DocStream

PIECES = st.sampled_from(["a", "b c", "\n", "\r\n", "\r", "\n\n", " ", "é", "1 2", ",3", "\n\n\n"])


def outcome(read):
    try:
        return read()
    except CLIError as exc:
        return str(exc)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(PIECES, max_size=12).map("".join), min_size=1, max_size=3),
    st.sampled_from(["line", "file", "paragraph"]),
    st.booleans(),
    st.booleans(),
)
def test_same_documents_as_read_docs(tmp_path_factory, texts, docs_per, ints, bad_byte):
    folder = tmp_path_factory.mktemp("docs")
    for k, text in enumerate(texts):
        data = text.encode("utf-8")
        if bad_byte and k == len(texts) - 1:
            data = data[: len(data) // 2] + b"\xff" + data[len(data) // 2:]
        (folder / f"{k}.txt").write_bytes(data)
    expected = outcome(lambda: read_docs([str(folder)], ints=ints, docs_per=docs_per))
    with DocStream([str(folder)], ints=ints, docs_per=docs_per) as stream:
        if ints and bad_byte and isinstance(expected, str):
            # line by line, a line that is no integers may come before the bad byte: both
            # are errors, the stream reports the first one in reading order
            assert isinstance(outcome(lambda: list(stream)), str)
            return
        assert outcome(lambda: list(stream)) == expected
        assert outcome(lambda: list(stream)) == expected  # a second pass reads the same
        if not isinstance(expected, str):
            assert stream.n_docs == len(expected)


def test_stdin_is_copied_once_and_read_twice(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"ab\r\nba\n\nab")))
    with DocStream(["-"], skip_empty=True) as stream:
        assert list(stream) == list(stream) == ["ab", "ba", "ab"]
        copy = stream._stdin
    import os

    assert not os.path.exists(copy)


def test_npy_and_empty_inputs(tmp_path):
    np.save(tmp_path / "rows.npy", np.arange(6).reshape(2, 3))
    (tmp_path / "empty.txt").write_text("\n\n")
    with DocStream([str(tmp_path / "rows.npy")]) as stream:
        assert stream.ints and [d.tolist() for d in stream] == [[0, 1, 2], [3, 4, 5]]
    with DocStream([str(tmp_path / "empty.txt")], skip_empty=True) as stream:
        assert not stream.any()
    with pytest.raises(CLIError, match="no such file"):
        DocStream([str(tmp_path / "missing.txt")])
