"""Continuous signals: ECG, PPG and other time series, as float windows before quantizing.

A signal becomes documents by cutting it into consecutive non-overlapping windows of a fixed
number of samples; a trailing piece shorter than a window is dropped. Each recording is split
in time: its last 20 % of windows are held out (`tail_heldout`), so held-out windows never
sit between training windows of the same recording; a recording of fewer than five windows
goes whole to one split by hash of its name. The unit of the paired statistics is the
recording. The registry then fits one quantizer per series on that series' training windows
(see `ubpe.lab.datasets.quantize`) and turns every window into int symbols.

Recordings: ECG - MIT-BIH record 208 (scipy 1.11's wheel, 360 Hz, 5 min) and systole's
``Task1_ECG`` (systole 0.3.1's sdist, 1 kHz, 25.6 min of a healthy participant in an emotion
task), resampled to 360 Hz; PPG - heartpy's three recordings (~100 Hz) and systole's
``ppg.npy`` (75 Hz, 5.5 min), resampled to 100 Hz. The packages ship nothing else usable:
wfdb, neurokit2, biosppy and py-ecg-detectors (wheels and sdists) hold no recordings (their
loaders download), and systole's other channels (respiration, EDA) are not ECG or PPG.
"""

from __future__ import annotations

import csv
import io
import math
import tarfile
import zipfile
from fractions import Fraction

import numpy as np

from ubpe.lab.datasets._base import is_heldout, tail_heldout
from ubpe.lab.datasets._corpus import RawCorpus
from experiments.datasets.sources import archive_path

#: One second of the MIT-BIH record 208 excerpt in scipy (360 Hz).
ECG_WINDOW = 360
ECG_MEMBER = "scipy/misc/ecg.dat"
#: scipy.datasets.electrocardiogram's conversion of the stored 11-bit ADC values to millivolts.
ECG_ADC_ZERO = 1024
ECG_ADC_GAIN = 200.0
#: systole 0.3.1's bundled recordings (in the sdist, read without installing it).
SYSTOLE_DATA = "systole-0.3.1/src/systole/datasets/"
SYSTOLE_ECG = ("Task1_ECG.npy", 1000)      # (file, sampling rate in Hz)
SYSTOLE_PPG = ("ppg.npy", 75)
ECG_HZ = 360
PPG_HZ = 100

#: About two seconds of heartpy's PPG recordings (sampled at about 100 Hz).
PPG_WINDOW = 200
PPG_FILES: tuple[str, ...] = ("heartpy/data/data.csv", "heartpy/data/data2.csv",
                              "heartpy/data/data3.csv")

#: Windows of the slow statsmodels series (yearly, monthly, weekly, quarterly).
TIMESERIES_WINDOW = 32
_STATSMODELS = "statsmodels/datasets/"
#: Column-per-series CSV files: (file, column) pairs. Missing values are dropped.
TIMESERIES_COLUMNS: tuple[tuple[str, str], ...] = (
    ("sunspots/sunspots.csv", "SUNACTIVITY"),
    ("co2/co2.csv", "co2"),
    ("nile/nile.csv", "volume"),
    ("elec_equip/elec_equip.csv", "STS.M.I7.W.TOVT.NS0016.4.000"),
    *(("macrodata/macrodata.csv", column) for column in (
        "realgdp", "realcons", "realinv", "realgovt", "realdpi", "cpi", "m1", "tbilrate",
        "unemp", "pop", "infl", "realint")),
)
#: El Niño sea temperatures: one row per year with twelve monthly columns, read row by row.
ELNINO_FILE = "elnino/elnino.csv"
#: Fertility rates, one row per country and one column per year; all countries share one
#: quantizer (same unit), each country's years form its own windows.
FERTILITY_FILE = "fertility/fertility.csv"
FERTILITY_FIRST_YEAR_COLUMN = 4


def windows(samples: np.ndarray, window: int) -> list[np.ndarray]:
    """Consecutive non-overlapping windows of `window` samples; a shorter tail is dropped.

    >>> [w.tolist() for w in windows(np.arange(7.0), 3)]
    [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    """
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    count = len(samples) // window
    return [samples[i * window:(i + 1) * window] for i in range(count)]


class _Windows:
    """Accumulates windows of several recordings into the columns of a `RawCorpus`.

    Each recording is split in time (`tail_heldout`); its name is the unit of the statistics.
    """

    def __init__(self, window: int, dataset: str):
        self.window = window
        self.dataset = dataset
        self.ids: list[str] = []
        self.docs: list[np.ndarray] = []
        self.series: list[str] = []
        self.units: list[str] = []
        self.heldout: list[bool] = []

    def add(self, name: str, samples: np.ndarray, series: str | None = None,
            unit: str | None = None) -> None:
        pieces = windows(np.asarray(samples, dtype=np.float64), self.window)
        held = tail_heldout(len(pieces)) or [is_heldout(self.dataset, name)] * len(pieces)
        for index, piece in enumerate(pieces):
            self.ids.append(f"{name}#{index}")
            self.docs.append(piece)
            self.series.append(series or name)
            self.units.append(unit or name)
            self.heldout.append(held[index])

    def corpus(self, version: str, **settings) -> RawCorpus:
        return RawCorpus(ids=self.ids, docs=self.docs, series=self.series, version=version,
                         units=self.units, heldout=self.heldout,
                         settings={"window": self.window, "heldout": "last 20 % of each "
                                   "recording's windows", **settings})


def resample(samples: np.ndarray, from_hz: int, to_hz: int) -> np.ndarray:
    """``samples`` resampled from ``from_hz`` to ``to_hz`` (polyphase, scipy's anti-aliasing).

    >>> resample(np.ones(1000), 1000, 360).shape
    (360,)
    """
    from scipy.signal import resample_poly

    ratio = Fraction(to_hz, from_hz)
    return resample_poly(np.asarray(samples, dtype=np.float64), ratio.numerator,
                         ratio.denominator)


def _systole(member: str) -> np.ndarray:
    with tarfile.open(archive_path("systole")) as sdist:
        data = sdist.extractfile(SYSTOLE_DATA + member).read()
    return np.load(io.BytesIO(data), allow_pickle=False).astype(np.float64)


def _number(text: str) -> float:
    text = text.strip()
    return float(text) if text else math.nan


def _without_nan(values: list[float]) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    return array[~np.isnan(array)]


def ecg(window: int = ECG_WINDOW) -> RawCorpus:
    """ECG: the 5-minute MIT-BIH excerpt (108,000 samples, 360 Hz, mV) in scipy 1.11's wheel
    and systole's 25.6-minute ``Task1_ECG`` (1 kHz), resampled to 360 Hz.

    Unit of independence: the *recording* (a person's heart on one day); block: a 1-second
    window, split in time. Two recordings - fewer than the ten the reports need - so ECG is
    shown but kept out of rankings and pooled summaries (`ubpe.lab.validity`).
    """
    with zipfile.ZipFile(archive_path("scipy")) as wheel:
        with np.load(io.BytesIO(wheel.read(ECG_MEMBER))) as stored:
            raw = stored["ecg"].astype(np.float64)
    acc = _Windows(window, "ecg")
    acc.add("mitbih208", (raw - ECG_ADC_ZERO) / ECG_ADC_GAIN)
    member, hz = SYSTOLE_ECG
    acc.add("systole-task1", resample(_systole(member), hz, ECG_HZ))
    return acc.corpus("scipy 1.11.4, systole 0.3.1", sampling_hz=ECG_HZ)


def _ppg_values(text: str) -> np.ndarray:
    """The last column of a heartpy CSV (with or without a header row)."""
    values = []
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        try:
            values.append(float(row[-1]))
        except ValueError:
            continue  # the header row
    return np.asarray(values, dtype=np.float64)


def ppg(window: int = PPG_WINDOW) -> RawCorpus:
    """PPG: heartpy's three bundled photoplethysmograms (about 86,000 samples in all) and
    systole's 5.5-minute recording (75 Hz), resampled to 100 Hz.

    Unit of independence: the *recording*; block: a 2-second window, split in time. Four
    recordings: shown, kept out of rankings and pooled summaries (`ubpe.lab.validity`).
    """
    acc = _Windows(window, "ppg")
    with zipfile.ZipFile(archive_path("heartpy")) as wheel:
        for member in PPG_FILES:
            name = member.rsplit("/", 1)[-1].removesuffix(".csv")
            acc.add(name, _ppg_values(wheel.read(member).decode("utf-8")))
    member, hz = SYSTOLE_PPG
    acc.add("systole-ppg", resample(_systole(member), hz, PPG_HZ))
    return acc.corpus("heartpy 1.2.7, systole 0.3.1")


def _read_csv(wheel: zipfile.ZipFile, member: str) -> list[dict[str, str]]:
    text = wheel.read(_STATSMODELS + member).decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(text)))


def timeseries(window: int = TIMESERIES_WINDOW) -> RawCorpus:
    """Economic and environmental series bundled with statsmodels (about 18,000 samples).

    sunspots, Mauna Loa CO2 (weekly), Nile flow, euro-area electrical equipment orders, twelve
    US macro series, El Niño temperatures (months in order) and fertility rates of 218 countries.

    Unit of independence: the *source dataset* (its statsmodels folder: sunspots, co2, nile,
    elec_equip, macrodata, elnino, fertility - seven), not the series. The twelve macro series
    are one economy's quarters (GDP, consumption, investment ... move together) and the 218
    fertility series share years and a global trend; windows of one source are no more
    independent than windows of one recording. Block size: one window (`TIMESERIES_WINDOW`
    samples); the split stays per series (its last 20 % of windows held out). Seven units is
    fewer than the ten the reports need (`ubpe.lab.validity`), so time series are shown
    but kept out of rankings and pooled summaries.
    """
    acc = _Windows(window, "timeseries")
    with zipfile.ZipFile(archive_path("statsmodels")) as wheel:
        for member, column in TIMESERIES_COLUMNS:
            rows = _read_csv(wheel, member)
            dataset = member.split("/", 1)[0]
            acc.add(f"{dataset}:{column}", _without_nan([_number(r[column]) for r in rows]),
                    unit=dataset)
        elnino = _read_csv(wheel, ELNINO_FILE)
        months = [_number(value) for row in elnino for key, value in row.items() if key != "YEAR"]
        acc.add("elnino", _without_nan(months))
        text = wheel.read(_STATSMODELS + FERTILITY_FILE).decode("utf-8-sig")
        rows = list(csv.reader(io.StringIO(text)))
        for row in rows[1:]:
            values = _without_nan([_number(v) for v in row[FERTILITY_FIRST_YEAR_COLUMN:]])
            acc.add(f"fertility:{row[1]}", values, series="fertility", unit="fertility")
    return acc.corpus("0.14.6")
