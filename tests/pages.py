"""Executed pages: the code blocks of a Markdown page (the README, a page of ``docs/``) run in
order, as a reader would run them, and what they print is compared with the page.

* a ``python`` block runs in one namespace shared by the page's blocks (a page is one session);
* a ``bash`` block runs in bash, ``ubpe`` being this checkout's ``python -m ubpe``;
* a ``console`` block is a transcript: each ``$ command`` runs and its output must be the lines
  below it;
* the output of a ``python`` or ``bash`` block is the ``text`` block right after it (at most one
  line of prose between them, e.g. "It prints:"); a block with no such output block must print
  nothing, so no example can print what its page does not show;
* ``sh`` blocks are shown, not run (installs, clusters, runs of minutes: the test of the docs
  checks what they name exists); ``toml``, ``text``,
  ``pycon`` (doctest transcripts of the API reference) and plain blocks are not code to run.

All of it in a folder the caller gives (the tests' ``tmp_path``).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
RUN = ("python", "bash", "console")
SHOWN = ("sh", "toml", "text", "pycon", "")
SHELL_TIMEOUT = 300


@dataclass(frozen=True)
class Block:
    language: str
    body: str
    line: int  # where the block starts in its page, 1-based
    output: str | None = None  # the text block that shows what it prints


def blocks(text: str) -> list[Block]:
    """The fenced blocks of ``text``, in order, each run block with its output block."""
    found = [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1, m.start(), m.end())
             for m in FENCE.finditer(text)]
    result, claimed = [], set()
    for index, (language, body, line, _, end) in enumerate(found):
        if index in claimed:
            continue
        output = None
        if language in ("python", "bash") and index + 1 < len(found):
            nxt_language, nxt_body, _, nxt_start, _ = found[index + 1]
            between = [row for row in text[end:nxt_start].splitlines() if row.strip()]
            if nxt_language == "text" and len(between) <= 1:
                output = nxt_body
                claimed.add(index + 1)
        result.append(Block(language, body, line, output))
    return result


def section(text: str, heading: str) -> str:
    """The part of ``text`` under ``## heading``, up to the next ``## `` heading."""
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start: end if end >= 0 else None]


def shell_env(folder: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("UBPE_TRACEBACK", None)
    env["NO_COLOR"] = ""
    env["UBPE_LAB_CACHE"] = str(folder / ".lab-cache")  # `ubpe experiment`'s cache stays in the folder
    return env


def run_shell(script: str, cwd: Path) -> subprocess.CompletedProcess:
    """``script`` in bash with ``ubpe`` meaning this checkout's ``python -m ubpe``."""
    prelude = f'set -euo pipefail\nubpe() {{ "{sys.executable}" -m ubpe "$@"; }}\n'
    return subprocess.run(["bash", "-c", prelude + script], cwd=cwd, capture_output=True, text=True,
                          env=shell_env(cwd), timeout=SHELL_TIMEOUT)


class PageError(AssertionError):
    """A block of a page failed or printed other than what the page shows."""


def _compare(where: str, printed: str, shown: str | None) -> None:
    if shown is None:
        if printed.strip():
            raise PageError(f"{where} prints, but no text block after it shows what:\n{printed}")
        return
    if printed.rstrip("\n") != shown.rstrip("\n"):
        raise PageError(f"{where} printed\n{printed}\nbut the page shows\n{shown}")


def run_page(text: str, name: str, folder: Path, *, skip: tuple[str, ...] = ()) -> int:
    """Run every block of the page ``text`` in ``folder`` (the caller's working directory);
    ``skip``: bodies of blocks not to run. Returns how many blocks ran; raises `PageError`."""
    unknown = {block.language for block in blocks(text)} - set(RUN) - set(SHOWN)
    if unknown:
        raise PageError(f"{name}: code blocks in {sorted(unknown)}, which the tests neither run nor allow")
    namespace: dict[str, object] = {"__name__": "__main__"}
    ran = 0
    for block in blocks(text):
        if block.language not in RUN or block.body.strip() in skip:
            continue
        where = f"{name} line {block.line} ({block.language})"
        if block.language == "python":
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(block.body, where, "exec"), namespace)
            _compare(where, printed.getvalue(), block.output)
        elif block.language == "bash":
            result = run_shell(block.body, folder)
            if result.returncode != 0:
                raise PageError(f"{where} exited {result.returncode}:\n{result.stderr}")
            _compare(where, result.stdout, block.output)
        else:
            for command in re.split(r"^\$ ", block.body, flags=re.MULTILINE)[1:]:
                line, _, expected = command.partition("\n")
                result = run_shell(line, folder)
                if result.returncode != 0:
                    raise PageError(f"{where}: `{line}` exited {result.returncode}:\n{result.stderr}")
                _compare(f"{where}: `{line}`", result.stdout, expected)
        ran += 1
    return ran


def main(argv: list[str]) -> int:
    """``python tests/pages.py PAGE.md [FOLDER]``: run a page's blocks (in a new temporary folder
    unless given one) and print each block's output, to write a page's output blocks."""
    import tempfile

    page = Path(argv[0]).resolve()
    folder = Path(argv[1]) if len(argv) > 1 else Path(tempfile.mkdtemp(prefix="ubpe-page-"))
    os.chdir(folder)
    namespace: dict[str, object] = {"__name__": "__main__"}
    for block in blocks(page.read_text(encoding="utf-8")):
        print(f"--- line {block.line} ({block.language})")
        if block.language == "python":
            exec(compile(block.body, f"{page.name}:{block.line}", "exec"), namespace)
        elif block.language == "bash":
            result = run_shell(block.body, folder)
            print(result.stdout + result.stderr, end="")
        elif block.language == "console":
            for command in re.split(r"^\$ ", block.body, flags=re.MULTILINE)[1:]:
                line = command.partition("\n")[0]
                print(f"$ {line}\n" + run_shell(line, folder).stdout, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
