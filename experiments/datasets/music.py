"""Symbolic music: the Bach chorales, Monteverdi's madrigals and the trecento pieces of
music21's corpus as note-event sequences (`chorales`, `monteverdi`, `trecento`).

Read straight from the pinned music21 wheel (not installed: no music21 import, no writes to a
home folder) with a small MusicXML reader. Each SATB voice of each chorale is one document;
the four voices of a chorale share a split group, so a chorale is never split across train
and held-out, and the chorale is the unit of the statistics. The corpus holds some chorales
twice under two catalogue numbers (bwv175.7 is bwv59.3, bwv398 is bwv197.7-a, ...): a score
whose soprano line equals an earlier score's (in file-name order) is dropped, so no chorale
is in both splits (8 of 409 four-part scores).

An event is one note or rest of the voice (first voice of the part; chord tones other than the
first and grace notes are skipped; tied notes are merged into one event). It becomes the int
symbol ``pitch_code * DURATION_STEPS + (sixteenths - 1)``, where ``pitch_code`` is the MIDI
pitch (0-127) or `REST` (128), and ``sixteenths`` the duration in sixteenth notes rounded and
clipped to 1..`DURATION_STEPS`. `event_of_symbol` reverses it.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import PurePosixPath
from xml.etree import ElementTree

import numpy as np

from ubpe.lab.datasets._corpus import RawCorpus
from experiments.datasets.sources import archive_path

CHORALE_FOLDER = "music21/corpus/bach/"
VOICES: tuple[str, ...] = ("soprano", "alto", "tenor", "bass")
REST = 128
SIXTEENTHS_PER_QUARTER = 4
#: Longest duration kept apart, in sixteenths (a whole note); longer notes are clipped to it.
DURATION_STEPS = 16
_SEMITONE = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
_SEMITONES_PER_OCTAVE = 12


def event_symbol(pitch: int | None, sixteenths: int) -> int:
    """The int symbol of a note (MIDI `pitch`) or rest (``None``) lasting `sixteenths`.

    >>> event_symbol(60, 4), event_symbol(None, 1)
    (963, 2048)
    """
    code = REST if pitch is None else pitch
    steps = min(max(sixteenths, 1), DURATION_STEPS)
    return code * DURATION_STEPS + steps - 1


def event_of_symbol(symbol: int) -> tuple[int | None, int]:
    """``(MIDI pitch or None for a rest, duration in sixteenths)`` of a symbol."""
    code, steps = divmod(int(symbol), DURATION_STEPS)
    return (None if code == REST else code), steps + 1


def _midi(pitch: ElementTree.Element) -> int:
    step = pitch.findtext("step", "C")
    alter = round(float(pitch.findtext("alter", "0")))
    octave = int(pitch.findtext("octave", "4"))
    return (octave + 1) * _SEMITONES_PER_OCTAVE + _SEMITONE[step] + alter


def _voice_events(part: ElementTree.Element) -> list[int]:
    """Event symbols of the first voice of a MusicXML ``<part>``."""
    divisions = 1.0
    events: list[tuple[int | None, float]] = []
    for measure in part.iter("measure"):
        for element in measure:
            if element.tag == "attributes" and element.findtext("divisions"):
                divisions = float(element.findtext("divisions"))
            if element.tag != "note":
                continue
            if element.find("grace") is not None or element.find("chord") is not None:
                continue
            if element.findtext("voice", "1").strip() != "1":
                continue
            quarters = float(element.findtext("duration", "0")) / divisions
            pitch_element = element.find("pitch")
            pitch = None if pitch_element is None else _midi(pitch_element)
            tie_stop = any(t.get("type") == "stop" for t in element.findall("tie"))
            if tie_stop and events and events[-1][0] == pitch:
                events[-1] = (pitch, events[-1][1] + quarters)
            else:
                events.append((pitch, quarters))
    return [event_symbol(p, round(q * SIXTEENTHS_PER_QUARTER)) for p, q in events]


def _musicxml(data: bytes, name: str) -> bytes:
    if not name.endswith(".mxl"):
        return data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        scores = [n for n in archive.namelist()
                  if n.endswith((".xml", ".musicxml")) and not n.startswith("META-INF/")]
        return archive.read(sorted(scores)[0])


def chorale_voices(score: bytes) -> dict[str, list[int]]:
    """Event symbols per SATB voice of one MusicXML score (voices found by part name)."""
    root = ElementTree.fromstring(score)
    names = {p.get("id"): (p.findtext("part-name") or "").strip().lower()
             for p in root.iter("score-part")}
    voices: dict[str, list[int]] = {}
    for part in root.iter("part"):
        name = names.get(part.get("id"), "")
        voice = next((v for v in VOICES if name.startswith(v)), None)
        if voice is not None and voice not in voices:
            events = _voice_events(part)
            if events:
                voices[voice] = events
    return voices


def chorales() -> RawCorpus:
    """Bach chorales from music21's corpus: one int-event document per SATB voice.

    Unit of independence: the *chorale* (its four voices are one harmonisation of one
    melody, so they share a key, a metre and cadences), the split group as well; a melody
    harmonised twice is kept once, so no chorale is in both splits. ~86 held-out chorales.
    """
    ids: list[str] = []
    groups: list[str] = []
    docs: list[np.ndarray] = []
    with zipfile.ZipFile(archive_path("music21")) as wheel:
        members = sorted(n for n in wheel.namelist()
                         if n.startswith(CHORALE_FOLDER) and n.endswith((".mxl", ".xml")))
        melodies: dict[tuple[int, ...], str] = {}
        duplicates: dict[str, str] = {}
        for member in members:
            work = PurePosixPath(member).stem
            voices = chorale_voices(_musicxml(wheel.read(member), member))
            if len(voices) != len(VOICES):
                continue  # not a four-part chorale (an instrumental piece or a fragment)
            melody = tuple(voices[VOICES[0]])
            if melody in melodies:  # the same chorale under another number
                duplicates[work] = melodies[melody]
                continue
            melodies[melody] = work
            for voice in VOICES:
                ids.append(f"{work}/{voice}")
                groups.append(work)
                docs.append(np.asarray(voices[voice], dtype=np.int64))
    return RawCorpus(ids=ids, docs=docs, groups=groups, version="10.5.1",
                     settings={"duration_steps": DURATION_STEPS,
                               "dropped_duplicates": dict(sorted(duplicates.items()))})


#: Monteverdi's madrigals (books 3, 4, 5; five or six voices) and the Italian trecento pieces
#: (14th century; two to four voices) of music21's corpus, both MusicXML.
MONTEVERDI_FOLDER = "music21/corpus/monteverdi/"
TRECENTO_FOLDER = "music21/corpus/trecento/"


def score_parts(score: bytes) -> list[tuple[str, list[int]]]:
    """``(part id, event symbols)`` of every part of a MusicXML score holding an event, in
    score order (the first voice of each part, as `chorale_voices` reads a voice)."""
    root = ElementTree.fromstring(score)
    parts = []
    for part in root.iter("part"):
        events = _voice_events(part)
        if events:
            parts.append((part.get("id") or f"P{len(parts) + 1}", events))
    return parts


def _piece_corpus(folder: str, suffixes: tuple[str, ...], **settings: object) -> RawCorpus:
    """One int-event document per part of each MusicXML score under `folder` of the wheel;
    the score is the split group and the unit. A score stored twice (``.mxl`` and ``.xml``
    under one name, as trecento's PMFC_13_01) is read once."""
    ids: list[str] = []
    groups: list[str] = []
    docs: list[np.ndarray] = []
    with zipfile.ZipFile(archive_path("music21")) as wheel:
        members = sorted(n for n in wheel.namelist()
                         if n.startswith(folder) and n.endswith(suffixes))
        seen: set[str] = set()
        for member in members:
            piece = PurePosixPath(member).stem
            if piece in seen:
                continue
            seen.add(piece)
            for index, (part, events) in enumerate(score_parts(_musicxml(wheel.read(member),
                                                                          member))):
                ids.append(f"{piece}/{index}:{part}")
                groups.append(piece)
                docs.append(np.asarray(events, dtype=np.int64))
    return RawCorpus(ids=ids, docs=docs, groups=groups, version="10.5.1",
                     settings={"duration_steps": DURATION_STEPS, **settings})


def monteverdi() -> RawCorpus:
    """Monteverdi's madrigals from music21's corpus (49, books 3-5): one int-event document per
    voice. Unit of independence: the *madrigal* (its voices set one text together), also the
    split group."""
    return _piece_corpus(MONTEVERDI_FOLDER, (".mxl",))


def trecento() -> RawCorpus:
    """Italian trecento pieces (ballate, madrigals, mass movements; 103 scores edited after the
    PMFC volumes) from music21's corpus: one int-event document per voice. Unit of
    independence: the *piece*, also the split group."""
    return _piece_corpus(TRECENTO_FOLDER, (".xml", ".mxl"))
