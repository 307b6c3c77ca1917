"""Write ``ubpe/text/unicode_tables.py``: the Unicode normalization and lowercase data of HF
``tokenizers``, read off ``tokenizers`` itself, code point by code point.

``tokenizers``' ``NFC``/``NFD``/``NFKC``/``NFKD`` normalizers run the Rust crate
``unicode-normalization``'s tables and its ``Lowercase`` Rust's ``char::to_lowercase``: each of
another Unicode version than Python's ``unicodedata`` (72 code points decompose otherwise under
NFKC with Python 3.11, 98 combining marks have another class). What is written here is what
``tokenizers`` does, found by asking it (each table one string, which `ubpe.text.unicode`
reads on first use: it compiles in a moment, where a dict of thousands of entries takes a third
of a second in a process that writes no bytecode):

* ``NFD``, ``NFKD``: the full decomposition of every code point that has one (NFKD: where it is
  not the NFD's), Hangul syllables left out (the algorithm, which `ubpe.text.unicode` runs);
* ``CCC``: the canonical combining class of every code point that does not decompose, where it
  is not 0. A class is found by the orderings: ``a r m`` with a reference mark ``r`` of each
  class becomes ``a m r`` exactly when ``m``'s class is lower (and not 0);
* ``COMPOSE``: ``(first, second) -> composite`` for every composite that NFC gives back
  whole (the primary composites): its pair is the NFC of its decomposition without the last
  code point, and that code point (checked: NFC of the two is the composite);
* ``LOWER``: every code point that ``Lowercase`` changes, to what it writes;
* ``DIFFER_NORMALIZE[version]``, ``DIFFER_LOWER[version]``: for a Python Unicode version
  (``unicodedata.unidata_version``), the code points where that Python's normalization data or ``str.lower`` is not ``tokenizers``' (and
  every code point that decomposes to one): a text without any of them normalizes alike in both,
  so `ubpe.text.unicode` lets ``unicodedata`` (C, fast) do it. A version not listed gets the
  set computed on first use (`ubpe.text.unicode.differing`).

Run: ``python tests/golden/make_unicode_tables.py --python python3.12 --python python3.13 >
ubpe/text/unicode_tables.py`` (a few minutes); each Python given with ``--python`` (no
``tokenizers`` needed there) adds its ``DIFFER`` sets (the committed file: 3.11, 3.12, 3.13).
``tests/spec/test_hf_unicode.py`` checks the tables against the installed ``tokenizers`` on
every code point.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_bert_tables import merged_ranges, table_lines  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "ubpe" / "text" / "unicode.py"
CODE_POINTS = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
#: a starter that does not decompose, before the probes' marks (they run NFD, which composes nothing)
PROBE_BASE = "\u0915"  # DEVANAGARI LETTER KA


def _normalized(form: str, texts: list[str]) -> list[str]:
    from tokenizers import normalizers

    step = getattr(normalizers, form)() if form != "Lowercase" else normalizers.Lowercase()
    return [step.normalize_str(t) for t in texts]


def decompositions() -> tuple[dict[int, str], dict[int, str]]:
    chars = [chr(cp) for cp in CODE_POINTS]
    nfd = {ord(c): out for c, out in zip(chars, _normalized("NFD", chars)) if out != c}
    nfkd = {ord(c): out for c, out in zip(chars, _normalized("NFKD", chars)) if out != nfd.get(ord(c), c)}
    for table in (nfd, nfkd):
        for cp in range(HANGUL_FIRST, HANGUL_LAST + 1):
            table.pop(cp, None)
    return nfd, nfkd


def _reference_marks(nfd: dict[int, str]) -> dict[int, str]:
    """One mark of each combining class Python knows, that ``tokenizers`` orders as that class:
    per class the first code point whose orderings against the chosen ones agree."""
    by_class: dict[int, list[str]] = {}
    for cp in CODE_POINTS:
        value = unicodedata.combining(chr(cp))
        if value and cp not in nfd:
            by_class.setdefault(value, []).append(chr(cp))
    chosen: dict[int, str] = {}
    for value in sorted(by_class):
        for mark in by_class[value]:
            if all(_orders(mark, other, value, known) for known, other in chosen.items()):
                chosen[value] = mark
                break
    return chosen


def _orders(mark: str, other: str, value: int, known: int) -> bool:
    """Whether ``tokenizers`` orders ``mark`` (class ``value``) and ``other`` (``known``) so."""
    ab, ba = _normalized("NFD", [PROBE_BASE + mark + other, PROBE_BASE + other + mark])
    first = PROBE_BASE + (other + mark if known < value else mark + other)
    return ab == ba == first


def combining_classes(nfd: dict[int, str]) -> dict[int, int]:
    marks = _reference_marks(nfd)
    lowest, highest = marks[min(marks)], marks[max(marks)]
    candidates = [chr(cp) for cp in CODE_POINTS if cp not in nfd and not HANGUL_FIRST <= cp <= HANGUL_LAST]
    # a code point of class 0 never moves; any other moves before the highest class or after the lowest
    # (one text of all probes at once: every probe starts with a starter, so none reaches another)
    before = _normalized("NFD", ["".join(PROBE_BASE + highest + c for c in candidates)])[0]
    after = _normalized("NFD", ["".join(PROBE_BASE + c + lowest for c in candidates)])[0]
    moving = [c for k, c in enumerate(candidates)
              if before[3 * k: 3 * k + 3] != PROBE_BASE + highest + c or after[3 * k: 3 * k + 3] != PROBE_BASE + c + lowest]
    found: dict[int, int] = {}
    for c in moving:
        texts = [PROBE_BASE + r + c for r in marks.values()] + [PROBE_BASE + c + r for r in marks.values()]
        outs = _normalized("NFD", texts)
        n = len(marks)
        # a r c -> a c r: c's class is below v; a c r -> a r c: above v
        lower = [v for k, v in enumerate(marks) if outs[k] != texts[k]]
        higher = [v for k, v in enumerate(marks) if outs[n + k] != texts[n + k]]
        equal = [v for v in marks if v not in lower and v not in higher]
        if len(equal) != 1 or (lower and min(lower) <= equal[0]) or (higher and max(higher) >= equal[0]):
            raise SystemExit(f"U+{ord(c):04X}: no combining class orders it as tokenizers does")
        found[ord(c)] = equal[0]
    return found


def compositions(nfd: dict[int, str]) -> dict[tuple[int, int], int]:
    composites = [cp for cp in nfd if len(nfd[cp]) > 1]
    nfc = _normalized("NFC", [chr(cp) for cp in composites])
    primary = [cp for cp, out in zip(composites, nfc) if out == chr(cp)]
    firsts = _normalized("NFC", [nfd[cp][:-1] for cp in primary])
    pairs = {}
    for cp, first in zip(primary, firsts):
        if len(first) != 1:
            raise SystemExit(f"U+{cp:04X}: its decomposition less the last code point does not compose to one")
        pairs[(ord(first), ord(nfd[cp][-1]))] = cp
    checked = _normalized("NFC", [chr(a) + chr(b) for a, b in pairs])
    wrong = [f"U+{c:04X}" for (pair, c), out in zip(pairs.items(), checked) if out != chr(c)]
    if wrong:
        raise SystemExit(f"pairs that do not compose as found: {wrong[:10]}")
    return pairs


def lowercase() -> dict[int, str]:
    chars = [chr(cp) for cp in CODE_POINTS]
    return {ord(c): out for c, out in zip(chars, _normalized("Lowercase", chars)) if out != c}


def differ_elsewhere(python: str, tables_text: str) -> tuple[str, list, list]:
    """``(unidata_version, normalization ranges, lowercase ranges)`` of a Python (`ubpe.text.unicode.differing`
    run there on the tables written so far)."""
    # (the packages ubpe and ubpe.text without their __init__: the module's own imports,
    # `ubpe._fntools`, found in the folders)
    script = ("import importlib.util, json, sys, types\n"
              "tables = types.ModuleType('unicode_tables'); exec(sys.stdin.read(), tables.__dict__)\n"
              f"for name, path in (('ubpe', {str(MODULE.parents[1])!r}), ('ubpe.text', {str(MODULE.parent)!r})):\n"
              "    package = types.ModuleType(name); package.__path__ = [path]; sys.modules[name] = package\n"
              f"spec = importlib.util.spec_from_file_location('ubpe.text.unicode', {str(MODULE)!r})\n"
              "module = importlib.util.module_from_spec(spec); sys.modules['ubpe.text.unicode'] = module\n"
              "spec.loader.exec_module(module)\n"
              "import unicodedata\n"
              "print(json.dumps([unicodedata.unidata_version, *module.differing(tables)]))\n")
    done = subprocess.run([python, "-c", script], input=tables_text, capture_output=True, text=True, check=True)
    version, normalize_ranges, lower_ranges = json.loads(done.stdout)
    return version, [tuple(r) for r in normalize_ranges], [tuple(r) for r in lower_ranges]


def _packed(name: str, entries: list[str], note: str) -> list[str]:
    """``NAME = ("entry;entry;..." ...)``: one string cut into lines of about 100 characters."""
    lines, line = [f"#: {note}", f"{name} = ("], ""
    for entry in entries:
        if len(line) + len(entry) > 96:
            lines.append(f'    "{line}"')
            line = ""
        line += entry + ";"
    if line:
        lines.append(f'    "{line}"')
    return lines + [")"]


def _hex(text: str) -> str:
    return " ".join(f"{ord(c):X}" for c in text)


def render(found: dict[str, object], differ: dict[str, tuple[list, list]]) -> str:
    from tokenizers import __version__ as tokenizers_version

    lines = [
        f'"""The Unicode normalization and lowercase data of HF ``tokenizers`` {tokenizers_version}',
        "(generated by ``tests/golden/make_unicode_tables.py`` from ``tokenizers`` itself; do not edit).",
        "",
        "Code points in hexadecimal, entries cut by ``;`` (`ubpe.text.unicode.parsed` reads them).",
        "``DIFFER_*``: per Python Unicode version, ranges ``(first, last)`` of the code points where",
        "``unicodedata`` and ``str.lower`` are not these. Over 600 lines because it is data only: every",
        "code point whose normalization or lowercase ``tokenizers`` changes.",
        '"""',
        "",
        f"TOKENIZERS_VERSION = {tokenizers_version!r}",
    ]
    for name, note in (("NFD", "code point, then its full canonical decomposition (Hangul syllables left out)"),
                       ("NFKD", "code point, then its full compatibility decomposition, where it is not the NFD's"),
                       ("LOWER", "code point, then what ``Lowercase`` writes for it")):
        table = found[name]
        lines += _packed(name, [f"{cp:X} {_hex(out)}" for cp, out in sorted(table.items())], note)
    by_class: dict[int, list[tuple[int, int]]] = {}
    for cp, value in found["CCC"].items():
        by_class.setdefault(value, []).append((cp, cp))
    lines += _packed("CCC", [f"{value} " + " ".join(f"{a:X}" if a == b else f"{a:X}-{b:X}"
                                                     for a, b in merged_ranges(by_class[value]))
                             for value in sorted(by_class)],
                     "combining class (decimal), then its code points and ranges (first-last); 0 elsewhere")
    lines += _packed("COMPOSE", [f"{a:X} {b:X} {c:X}" for (a, b), c in sorted(found["COMPOSE"].items())],
                     "first, second, the primary composite they make")
    for k, name in enumerate(("DIFFER_NORMALIZE", "DIFFER_LOWER")):
        lines.append(f"{name} = {{")
        for version in sorted(differ):
            body = table_lines("x", differ[version][k])
            lines.append(f"    {version!r}: (")
            lines += ["    " + line for line in body[1:-1]]
            lines.append("    ),")
        lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", default=[],
                        help="another Python whose unicodedata DIFFER set to add (repeatable)")
    args = parser.parse_args()
    nfd, nfkd = decompositions()
    found = {"NFD": nfd, "NFKD": nfkd, "CCC": combining_classes(nfd), "COMPOSE": compositions(nfd),
             "LOWER": lowercase()}
    draft = render(found, {})
    differ = {}
    for python in [sys.executable, *args.python]:
        version, normalize_ranges, lower_ranges = differ_elsewhere(python, draft)
        differ[version] = (normalize_ranges, lower_ranges)
    print(render(found, differ), end="")


if __name__ == "__main__":
    main()
