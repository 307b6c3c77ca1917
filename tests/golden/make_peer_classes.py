"""Write ``ubpe/text/peer_classes.py``: the code point class tables of the peers whose files ubpe
reads (tiktoken's engine, HF ``tokenizers``' Oniguruma, llama.cpp), each asked code point by
code point, in the bit layout of `ubpe.text.patterns.code_point_classes`.

The kernel's scanner and HF's pre-tokenizer programs classify code points with one uint16
table (`ubpe.text.patterns.CLASS_BITS`, and a fold index in bits 8-11 for the contraction
letters under ``(?i)``). Computed with the `regex` module it holds that module's Unicode; each
peer has its own (the Unicode of its day: code points assigned since are Cn there), so a model
read from a peer's file classifies with the peer's table (`code_point_classes(unicode=peer)`):

* ``tiktoken``: every bit is the set of code points that tiktoken's engine matches with the
  bit's expression, and fold letter ``x`` those it matches with ``(?i:x)``: an
  ``Encoding`` with a rank for every single byte and the expression as its pattern drops the
  text its pattern does not match, so encoding every code point gives back exactly the matched
  ones;
* ``tokenizers``: the same, asked of Oniguruma (a ``Split(Regex(expression), "removed")``
  pre-tokenizer keeps what the expression does not match). For tiktoken 0.14.0 and tokenizers
  0.23.3 the two differ on 8 code points, in bits that no peer's split reads (the ``words``
  split's ``\\w`` and ``[^\\W\\d_]``), as the module's docstring says;
* ``llama.cpp``: from ``src/unicode-data.cpp`` of the pinned llama-cpp-python sdist, what its
  ``llama3``/``gpt2``/``qwen2`` splitters (``src/unicode.cpp``) read: ``\\p{L}`` and ``\\p{N}``
  its letter and number flags, ``\\s`` its ``unicode_set_whitespace``, ``[\\r\\n]`` CR and LF,
  and fold letter ``x`` the code points that ``unicode_tolower`` (``unicode_map_lowercase``)
  maps to ``x`` (its splitters compare lowercased code points; ``ſ`` is not an ``s``
  there). Its splitters read no other bit: o200k's two letter classes and the ``words``
  split's bits hold tiktoken's, restricted to the code points llama.cpp defines.

Each table is stored as runs (hexadecimal ``start value`` pairs cut by ``;``: from ``start``
on, every code point has ``value``, up to the next run's start), one string per table; a table
close to tiktoken's as tiktoken's runs and its changes (``first last value``: every code point
of ``first..last`` has ``value``), which `ubpe.text.patterns` turns into the table on first use
per machine.

Run: ``python tests/golden/make_peer_classes.py > ubpe/text/peer_classes.py`` (a minute; the
sdist from the data cache, ``bash experiments/install_data.sh``, or ``--llama-source`` a
``unicode-data.cpp`` or the sdist). ``tests/spec/test_peer_classes.py`` checks the tables against
the installed peers on every code point.
"""

from __future__ import annotations

import argparse
import re
import sys
import tarfile
import textwrap
from array import array
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

from experiments.datasets.sources import ARCHIVES, archive_path  # noqa: E402
from ubpe.text.patterns import CLASS_BITS, CONTRACTION_LETTERS, FOLD_SHIFT, N_CODE_POINTS, SURROGATES  # noqa: E402

CODE_POINTS = [cp for cp in range(N_CODE_POINTS) if cp not in SURROGATES]
TEXT = "".join(map(chr, CODE_POINTS))
#: Oniguruma splits this many code points at a time (one split of the whole text takes GBs)
ONIG_CHUNK = 200_000
LLAMA_PACKAGE = "llama-cpp-python"
LLAMA_DATA = "vendor/llama.cpp/src/unicode-data.cpp"
#: llama.cpp's category flags (``unicode_cpt_flags`` in ``src/unicode.h``)
UNDEFINED, NUMBER, LETTER = 0x1, 0x2, 0x4
#: the bits llama.cpp's splitters read, from its own tables (the rest: tiktoken's, see the docstring)
LLAMA_BITS = (CLASS_BITS[r"\p{L}"], CLASS_BITS[r"\p{N}"], CLASS_BITS[r"\s"], CLASS_BITS[r"[\r\n]"])
_PAIR = re.compile(r"\{(0x[0-9A-Fa-f]+), (0x[0-9A-Fa-f]+)\},")
_SET_ITEM = re.compile(r"0x[0-9A-Fa-f]+")
#: a run string's lines in the written module (characters)
LINE = 96
#: a table that differs from tiktoken's in at most this many ranges is written as tiktoken's
#: runs and those ranges (`changes`)
MAX_CHANGES = 1000


def tiktoken_members(expression: str) -> set[int]:
    """The code points tiktoken's engine matches with ``expression``."""
    import tiktoken

    ranks = {bytes([b]): b for b in range(256)}
    encoding = tiktoken.Encoding(name="probe", pat_str=expression, mergeable_ranks=ranks, special_tokens={})
    return set(map(ord, bytes(encoding.encode_ordinary(TEXT)).decode("utf-8")))


def oniguruma_members(expression: str) -> set[int]:
    """The code points HF ``tokenizers``' Oniguruma matches with ``expression``."""
    from tokenizers import Regex, pre_tokenizers

    split = pre_tokenizers.Split(Regex(expression), behavior="removed")
    kept: set[int] = set()
    for start in range(0, len(TEXT), ONIG_CHUNK):
        for piece, _ in split.pre_tokenize_str(TEXT[start : start + ONIG_CHUNK]):
            kept.update(map(ord, piece))
    return set(CODE_POINTS) - kept


def probed_table(members: Callable[[str], set[int]]) -> array:
    """The class table of an engine that ``members`` asks: every bit of ``CLASS_BITS``, and
    each contraction letter's fold index where ``(?i:letter)`` matches."""
    table = array("H", bytes(2 * N_CODE_POINTS))
    for expression, bit in CLASS_BITS.items():
        for cp in members(expression):
            table[cp] |= bit
    for index, letter in enumerate(CONTRACTION_LETTERS, start=1):
        for cp in members(f"(?i:{letter})"):
            if table[cp] >> FOLD_SHIFT & 0x0F:
                raise SystemExit(f"U+{cp:04X} folds to two contraction letters")
            table[cp] |= index << FOLD_SHIFT
    return table


def llama_source(given: str | None) -> str:
    """The text of llama.cpp's ``unicode-data.cpp``: the file given, or the one in the sdist
    given or found in the data cache."""
    path = Path(given) if given else archive_path(LLAMA_PACKAGE)
    if path.suffix == ".cpp":
        return path.read_text(encoding="utf-8")
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            if member.name.endswith(LLAMA_DATA):
                return tar.extractfile(member).read().decode("utf-8")
    raise SystemExit(f"no {LLAMA_DATA} in {path}")


def _section(text: str, name: str) -> str:
    start = text.index(f" {name} = {{")
    return text[start : text.index("\n};", start)]


def llama_cpp_table(source: str, tiktoken: array) -> array:
    """llama.cpp's class table (see the module docstring) from its ``unicode-data.cpp``."""
    flags = [(int(a, 16), int(b, 16)) for a, b in _PAIR.findall(_section(source, "unicode_ranges_flags"))]
    if flags[0][0] != 0 or flags[-1][0] != N_CODE_POINTS:
        raise SystemExit("unicode_ranges_flags does not cover every code point")
    whitespace = {int(v, 16) for v in _SET_ITEM.findall(_section(source, "unicode_set_whitespace"))}
    lowercase = {int(a, 16): int(b, 16) for a, b in _PAIR.findall(_section(source, "unicode_map_lowercase"))}
    llama_bits = sum(LLAMA_BITS)
    table = array("H", bytes(2 * N_CODE_POINTS))
    for (start, value), (end, _) in zip(flags, flags[1:]):
        if not value:  # a code point without flags is matched by no rule of llama.cpp's splitters
            raise SystemExit(f"U+{start:04X}: no flags (the scanner would take it for a symbol)")
        for cp in range(start, end):
            # llama.cpp's own bits, and tiktoken's others where llama.cpp knows the code point
            bits = (LETTER & value and CLASS_BITS[r"\p{L}"]) | (NUMBER & value and CLASS_BITS[r"\p{N}"])
            if not value & UNDEFINED:
                bits |= tiktoken[cp] & ~llama_bits & ~(0x0F << FOLD_SHIFT)
            table[cp] = bits
    for cp in whitespace:
        table[cp] |= CLASS_BITS[r"\s"]
    for cp in (0x0A, 0x0D):
        table[cp] |= CLASS_BITS[r"[\r\n]"]
    fold = {ord(letter): index for index, letter in enumerate(CONTRACTION_LETTERS, start=1)}
    for cp in set(lowercase) | set(fold):  # (any other code point lowercases to itself)
        index = fold.get(lowercase.get(cp, cp))
        if index:
            table[cp] |= index << FOLD_SHIFT
    return table


def runs(table: array) -> list[str]:
    """The table as ``"start value"`` entries (hexadecimal), one where the value changes."""
    out, last = [], None
    for cp in range(N_CODE_POINTS):
        if table[cp] != last:
            last = table[cp]
            out.append(f"{cp:X} {last:X}")
    return out


def changes_from(base: array, table: array) -> list[str]:
    """Where ``table`` is not ``base``, as ``"first last value"`` entries (hexadecimal): every
    code point of ``first..last`` has ``value`` in ``table``."""
    out: list[list[int]] = []
    for cp in range(N_CODE_POINTS):
        if table[cp] != base[cp]:
            if out and out[-1][1] == cp - 1 and out[-1][2] == table[cp]:
                out[-1][1] = cp
            else:
                out.append([cp, cp, table[cp]])
    return [f"{first:X} {last:X} {value:X}" for first, last, value in out]


def _string_lines(name: str, entries: list[str]) -> list[str]:
    """``NAME = ("entry;entry;..." ...)``: one string cut into lines of about ``LINE`` characters."""
    lines, line = [f"{name} = ("], ""
    for entry in entries:
        if len(line) + len(entry) > LINE - 6:
            lines.append(f'    "{line}"')
            line = ""
        line += entry + ";"
    lines.append(f'    "{line[:-1]}"')
    return lines + [")"]


def render(tables: dict[str, array]) -> str:
    import tiktoken
    import tokenizers

    archive = ARCHIVES[LLAMA_PACKAGE]
    same = tables["tokenizers"] == tables["tiktoken"]
    names = {bit: expression for expression, bit in CLASS_BITS.items()}
    differ: dict[str, int] = {}
    for a, b in zip(tables["tiktoken"], tables["tokenizers"]):
        for bit in names:
            if (a ^ b) & bit:
                differ[names[bit]] = differ.get(names[bit], 0) + 1
        if (a ^ b) >> FOLD_SHIFT & 0x0F:
            differ["fold letters"] = differ.get("fold letters", 0) + 1
    differences = ", ".join(f"``{name}`` on {count}" for name, count in differ.items())
    paragraphs = [
        "The code point class tables of the peers whose files ubpe reads, in the bit layout of "
        "`ubpe.text.patterns.code_point_classes` (generated by ``tests/golden/make_peer_classes.py`` "
        "from the peers themselves; do not edit).",
        f"``tiktoken``: tiktoken {tiktoken.__version__}'s engine; ``tokenizers``: HF tokenizers "
        f"{tokenizers.__version__}'s Oniguruma ("
        + ("the same table" if same else f"where it differs from tiktoken: {differences} code points") + "); "
        f"``llama.cpp``: ``src/unicode-data.cpp`` of {archive.package} {archive.version}'s sdist: its letter "
        "and number flags, whitespace set, CR/LF and lowercase map (the fold letters); o200k's letter "
        "classes and the ``words`` bits, which its splitters do not read, are tiktoken's on the code "
        "points llama.cpp defines, 0 elsewhere.",
        "Each table as runs: hexadecimal ``start value`` pairs cut by ``;`` (from ``start`` on, every "
        "code point has ``value``, up to the next start), and in ``CHANGES`` where a table is not its "
        "runs: hexadecimal ``first last value`` (every code point of ``first..last`` has ``value``), "
        "so that a table close to another shares its runs. `ubpe.text.patterns` reads them once per "
        "machine (a string compiles in a moment, where thousands of tuples take a third of a second "
        "in a process that writes no bytecode).",
    ]
    text = "\n\n".join(textwrap.fill(paragraph, LINE, break_on_hyphens=False) for paragraph in paragraphs)
    lines = [
        f'r"""{text}',
        '"""',
        "",
        f"TIKTOKEN_VERSION = {tiktoken.__version__!r}",
        f"TOKENIZERS_VERSION = {tokenizers.__version__!r}",
        f"LLAMA_CPP_SOURCE = {f'{archive.package} {archive.version}'!r}",
        "",
    ]
    lines += _string_lines("_TIKTOKEN", runs(tables["tiktoken"]))
    names, changes = {"tiktoken": "_TIKTOKEN"}, {}
    for peer in ("tokenizers", "llama.cpp"):
        found = changes_from(tables["tiktoken"], tables[peer])
        if len(found) <= MAX_CHANGES:
            names[peer], changes[peer] = "_TIKTOKEN", found
        else:
            names[peer] = "_" + peer.upper().replace(".", "_")
            lines += _string_lines(names[peer], runs(tables[peer]))
    lines += ["", "#: peer -> its table's runs", "RUNS = {" + ", ".join(f'"{peer}": {name}' for peer, name in names.items()) + "}",
              "#: peer -> where its table is not its runs", "CHANGES = {"]
    for peer, found in changes.items():
        lines += [f'    "{peer}": ('] + ["    " + line for line in _string_lines("", found)[1:-1]] + ["    ),"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llama-source", help="llama.cpp's unicode-data.cpp, or the llama-cpp-python sdist")
    args = parser.parse_args()
    tiktoken = probed_table(tiktoken_members)
    tables = {"tiktoken": tiktoken, "tokenizers": probed_table(oniguruma_members),
              "llama.cpp": llama_cpp_table(llama_source(args.llama_source), tiktoken)}
    print(render(tables), end="")


if __name__ == "__main__":
    main()
