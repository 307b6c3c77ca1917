"""Real music as MIDI files: pieces of music21's corpus written as MIDI by music21 itself.

The MIDI experiment (`experiments.midi`) compares MIDI tokenizations on these files. The
scores are read out of the pinned music21 wheel (`sources.ARCHIVES["music21"]`, 10.5.1) and
parsed and written as standard MIDI files by the *installed* music21, which must be the same
version (``pip install music21==10.5.1``, in the ``[experiments]`` extra): music21's own
parsers (MusicXML, Humdrum) and MIDI writer, not ours.

Collections (each piece is one file, the unit of the statistics; its collection is the
cluster the bootstrap resamples):

- Bach's four-part chorales (``bach/*.mxl``), one collection; the same duplicates as in
  `music.chorales` are dropped (a score whose soprano line repeats an earlier one's);
- Monteverdi's madrigals (``monteverdi/madrigal.B.N.mxl``), one collection per book ``B``;
- Palestrina's mass movements (``palestrina/*.krn``), one collection per mass (the Humdrum
  ``!!!OPR`` record): movements of one mass share their model and modes.

Conversion is slow (seconds per piece on a loaded machine), so at most `MAX_PIECES` of each
source are taken, in a fixed order (file name; for Palestrina whole masses, in the order of
their names), and the written files are kept in the data cache (`midi_corpus`), keyed by the
wheel's SHA-256 and `CONVERSION_VERSION`: a second run reads them. A piece music21 cannot
write (badly formed repeats, ...) is skipped and listed in the manifest.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import zipfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ubpe.lab.datasets import DataNotInstalledError

from experiments.datasets.sources import ARCHIVES, INSTALL_HINT, archive_path, data_cache_dir

#: Bump when the choice of pieces or the conversion changes: the cached files are rewritten.
CONVERSION_VERSION = 1
#: Pieces taken of each source (Palestrina: whole masses until this many movements).
MAX_PIECES = {"bach": 200, "monteverdi": 60, "palestrina": 120}
MANIFEST = "manifest.json"
_CORPUS = "music21/corpus/"
_OPR = re.compile(r"^!!!OPR:\s*(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Piece:
    """One score of the corpus: its member in the wheel, its name and its collection."""

    member: str
    name: str
    collection: str


def _bach(wheel: zipfile.ZipFile) -> list[Piece]:
    from experiments.datasets.music import CHORALE_FOLDER, VOICES, _musicxml, chorale_voices

    members = sorted(n for n in wheel.namelist()
                     if n.startswith(CHORALE_FOLDER) and n.endswith((".mxl", ".xml")))
    pieces: list[Piece] = []
    melodies: set[tuple[int, ...]] = set()
    for member in members:
        voices = chorale_voices(_musicxml(wheel.read(member), member))
        if len(voices) != len(VOICES):
            continue
        melody = tuple(voices[VOICES[0]])
        if melody in melodies:
            continue
        melodies.add(melody)
        pieces.append(Piece(member, f"bach/{PurePosixPath(member).stem}", "bach chorales"))
        if len(pieces) == MAX_PIECES["bach"]:
            break
    return pieces


def _monteverdi(wheel: zipfile.ZipFile) -> list[Piece]:
    members = sorted(n for n in wheel.namelist()
                     if n.startswith(_CORPUS + "monteverdi/madrigal.") and n.endswith(".mxl"))
    return [Piece(m, f"monteverdi/{PurePosixPath(m).stem}",
                  f"monteverdi book {PurePosixPath(m).stem.split('.')[1]}")
            for m in members[:MAX_PIECES["monteverdi"]]]


def _palestrina(wheel: zipfile.ZipFile) -> list[Piece]:
    members = sorted(n for n in wheel.namelist()
                     if n.startswith(_CORPUS + "palestrina/") and n.endswith(".krn"))
    masses: dict[str, list[str]] = {}
    for member in members:
        found = _OPR.search(wheel.read(member).decode("latin-1"))
        masses.setdefault(found.group(1) if found else "(no mass named)", []).append(member)
    pieces: list[Piece] = []
    for mass in sorted(masses):
        if len(pieces) + len(masses[mass]) > MAX_PIECES["palestrina"]:
            break
        pieces += [Piece(m, f"palestrina/{PurePosixPath(m).stem}", f"palestrina: {mass}")
                   for m in masses[mass]]
    return pieces


def select_pieces() -> list[Piece]:
    """The pieces the MIDI corpus is made of, in a fixed order (see the module docstring)."""
    with zipfile.ZipFile(archive_path("music21")) as wheel:
        return [*_bach(wheel), *_monteverdi(wheel), *_palestrina(wheel)]


def score_to_midi(data: bytes, suffix: str) -> bytes:
    """A score file's bytes (MusicXML ``.mxl``/``.xml`` or Humdrum ``.krn``) as a standard
    MIDI file written by music21."""
    from music21 import converter
    from music21.midi import translate

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"score{suffix}"
        path.write_bytes(data)
        score = converter.parse(str(path))
    return translate.music21ObjectToMidiFile(score).writestr()


def _convert(args: tuple[str, str, str]) -> tuple[str, str | None]:
    """Worker: (wheel, member, target) -> (target, error message or None)."""
    wheel_path, member, target = args
    try:
        with zipfile.ZipFile(wheel_path) as wheel:
            data = wheel.read(member)
        Path(target).write_bytes(score_to_midi(data, PurePosixPath(member).suffix))
        return target, None
    except Exception as error:  # music21 raises many types for scores it cannot write
        return target, f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"


def _check_music21() -> None:
    try:
        import music21
    except ImportError:
        raise DataNotInstalledError(
            "the MIDI corpus is written by music21: pip install music21=="
            f"{ARCHIVES['music21'].version} (the [experiments] extra)") from None
    if music21.__version__ != ARCHIVES["music21"].version:
        raise DataNotInstalledError(
            f"music21 {music21.__version__} is installed; the MIDI corpus is written with the "
            f"pinned {ARCHIVES['music21'].version} (pip install music21=="
            f"{ARCHIVES['music21'].version})")


def corpus_dir() -> Path:
    archive = ARCHIVES["music21"]
    return data_cache_dir() / "derived" / f"music21-midi-{archive.version}-{archive.sha256[:12]}-v{CONVERSION_VERSION}"


def midi_corpus(jobs: int | None = None, progress: bool = False) -> tuple[Path, list[dict]]:
    """The MIDI corpus folder and its manifest (one row per selected piece: ``name``,
    ``collection``, ``file`` relative to the folder, ``error`` when music21 could not write it).

    Written on first use (with `jobs` worker processes) and read from the data cache after.
    """
    folder = corpus_dir()
    manifest = folder / MANIFEST
    if manifest.is_file():
        return folder, json.loads(manifest.read_text(encoding="utf-8"))
    _check_music21()
    wheel = str(archive_path("music21"))
    pieces = select_pieces()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".midi-") as tmp:
        staging = Path(tmp) / "out"
        staging.mkdir()
        files = [f"{piece.name.replace('/', '__')}.mid" for piece in pieces]
        tasks = [(wheel, piece.member, str(staging / file)) for piece, file in zip(pieces, files)]
        workers = jobs or max(1, min(len(os.sched_getaffinity(0)), 4))
        with ProcessPoolExecutor(workers) as pool:
            errors = {}
            for done, (target, error) in enumerate(pool.map(_convert, tasks, chunksize=4), 1):
                errors[target] = error
                if progress and done % 25 == 0:
                    print(f"  music21 -> MIDI: {done}/{len(tasks)}", flush=True)
        rows = [{"name": piece.name, "collection": piece.collection, "file": file,
                 "error": errors[task[2]]}
                for piece, file, task in zip(pieces, files, tasks)]
        (staging / MANIFEST).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        if folder.exists():
            raise DataNotInstalledError(f"{folder} appeared while writing it: {INSTALL_HINT}")
        staging.replace(folder)
    return folder, rows
