"""Time series of the UCR archive bundled in aeon's wheel: one document per series (case).

aeon 1.6.0 ships a few UCR/UEA classification datasets in ``aeon/datasets/data/<name>/``
as ``.ts`` files (`read_ts`); the pinned wheel is read without installing aeon. The train
and test files of a dataset are pooled (the archive's split is for classifiers; ours is by
hash of the case, `ubpe.lab.datasets`), and every case is a document and an independent unit:
a separate recording (an appliance's day, a leaf outline, one gesture). All cases of a dataset
share one quantizer (one series name), fitted on the training split.

- ``acsf1``: ACSF1, 200 days of power consumption of home appliances (10 kinds), 1,460 samples;
- ``gunpoint``: GunPoint, 200 hand-centroid traces of two actors (gun draw or point), 150 samples;
- ``osuleaf``: OSULeaf, 442 leaf outlines (six tree species) read as distance-to-centre
  series, 427 samples.
"""

from __future__ import annotations

import zipfile

import numpy as np

from ubpe.lab.datasets._corpus import RawCorpus
from experiments.datasets.sources import ARCHIVES, archive_path

_FOLDER = "aeon/datasets/data/"
#: Dataset name in the registry -> the UCR name of its folder in aeon's wheel.
UCR_DATASETS: dict[str, str] = {"acsf1": "ACSF1", "gunpoint": "GunPoint", "osuleaf": "OSULeaf"}
SPLIT_FILES = ("TRAIN", "TEST")


class TsFormatError(ValueError):
    """A ``.ts`` file that is not the univariate, equal-length form read here."""


def read_ts(text: str) -> list[np.ndarray]:
    """The series of a univariate ``.ts`` file (sktime/aeon format), class labels dropped.

    >>> [s.tolist() for s in read_ts("#c\\n@univariate true\\n@data\\n1,2,3:a\\n4,5,6:b\\n")]
    [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    """
    series: list[np.ndarray] = []
    in_data = False
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not in_data:
            if line.lower() == "@univariate false":
                raise TsFormatError("a multivariate .ts file; only univariate ones are read")
            in_data = line.lower() == "@data"
            continue
        values, _, _label = line.rpartition(":")
        if ":" in values:
            raise TsFormatError(f"line {number}: more than one dimension")
        try:
            series.append(np.asarray([float(v) for v in values.split(",")], dtype=np.float64))
        except ValueError:
            raise TsFormatError(f"line {number}: not a comma-separated list of numbers") from None
    return series


def ucr(name: str) -> RawCorpus:
    """The cases of one UCR dataset of aeon's wheel (`UCR_DATASETS`), one document each.

    Unit of independence: the *case* (one recording), also the split group.
    """
    if name not in UCR_DATASETS:
        raise ValueError(f"unknown UCR dataset {name!r}; datasets: {', '.join(UCR_DATASETS)}")
    folder = UCR_DATASETS[name]
    ids: list[str] = []
    docs: list[np.ndarray] = []
    with zipfile.ZipFile(archive_path("aeon")) as wheel:
        for part in SPLIT_FILES:
            text = wheel.read(f"{_FOLDER}{folder}/{folder}_{part}.ts").decode("utf-8")
            for index, values in enumerate(read_ts(text)):
                values = values[~np.isnan(values)]
                if len(values):
                    ids.append(f"{part.lower()}{index}")
                    docs.append(values)
    return RawCorpus(ids=ids, docs=docs, series=[name] * len(ids),
                     version=ARCHIVES["aeon"].version,
                     settings={"ucr_dataset": folder, "document": "one case (whole series)"})
