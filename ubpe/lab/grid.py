"""The grid: which tokenizers to fit and which cells to encode, in a fixed order.

One `FitSpec` per (dataset, variant, vocabulary size, n_candidates): a tokenizer fitted on
the dataset's training split. One `CellSpec` per (fit, encoder, seed): the held-out split
encoded by a registered encoder with that tokenizer's vocabulary. `plan` builds the grid of
a config; its order (datasets, sizes, n_candidates, variants, encoders, seeds as the config
lists them) is the order of every table, whatever order the work runs in.
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ubpe.lab.cache import RAW_FORMAT, code_fingerprint, digest, file_sha256
from ubpe.lab.config import NATIVE, ExperimentConfig, n_tokens_for

#: The tokenizer class (in `ubpe`) each variant fits.
VARIANT_CLASSES = {"universal": "UBPE", "classic": "UBPEClassic"}


@dataclass(frozen=True)
class FitSpec:
    """One tokenizer to fit: a dataset's training split, a variant, a size, n_candidates."""

    dataset: str
    kind: str
    variant: str
    size: int | str
    n_tokens: int
    n_candidates: int
    alphabet: tuple[Any, ...]
    regex: str | None
    break_tokens: tuple[Any, ...] | None
    train_checksum: str
    code: str  # `code_fingerprint()` of the main process
    #: equal-size comparisons: fit to this many ids instead of ``n_tokens`` (the size the
    #: classic vocabulary of the same setting ends with); None: fit to ``n_tokens``
    fit_to: int | None = None
    #: a vocabulary read from this file (``[vocabularies]``), not fitted; its SHA-256 keys it
    source_file: str | None = None
    source_sha256: str | None = None

    @functools.cached_property
    def key(self) -> str:
        if self.source_sha256 is not None:
            # the same at every grid setting (size, n_candidates): computed once, listed at each;
            # the train split gives the weights of the encoders that read them
            return digest({"source": self.source_sha256, "train": self.train_checksum,
                           "code": self.code, "format": RAW_FORMAT})
        return digest({
            "train": self.train_checksum, "variant": self.variant, "n_tokens": self.n_tokens,
            "n_candidates": self.n_candidates, "alphabet": list(self.alphabet),
            "regex": self.regex, "break_tokens": self.break_tokens, "code": self.code,
            "format": RAW_FORMAT, "fit_to": self.fit_to,
        })

    @property
    def setting(self) -> tuple[str, str, int]:
        """``(dataset, size, n_candidates)``: the fits of one setting share it."""
        return self.dataset, str(self.size), self.n_candidates

    def label(self) -> str:
        """``dataset size n_candidates=k variant``, for messages."""
        return f"{self.dataset} {self.size} n_candidates={self.n_candidates} {self.variant}"


@dataclass(frozen=True)
class CellSpec:
    """One encoder run on the held-out split with one fitted tokenizer."""

    fit: FitSpec
    encoder: str
    options: tuple[tuple[str, Any], ...]
    seed: int | None
    top_n: int
    heldout_checksum: str

    @property
    def spec(self) -> str:
        return f"{self.fit.variant}:{self.encoder}"

    @property
    def key(self) -> str:
        return digest({
            "fit": self.fit.key, "heldout": self.heldout_checksum, "encoder": self.encoder,
            "options": self.options, "seed": self.seed, "top_n": self.top_n,
        })

    def label(self) -> dict[str, Any]:
        return {"dataset": self.fit.dataset, "size": str(self.fit.size),
                "n_candidates": self.fit.n_candidates, "encoder": self.spec,
                "seed": self.seed}

    def name(self) -> str:
        """``dataset size n_candidates=k variant:encoder [seed s]``, for messages."""
        seed = f" seed {self.seed}" if self.seed is not None else ""
        return (f"{self.fit.dataset} {self.fit.size} n_candidates={self.fit.n_candidates} "
                f"{self.spec}{seed}")


@dataclass
class LoadedDataset:
    """A configured dataset with both splits loaded and the alphabet of both."""

    config: Any
    train: Any
    heldout: Any
    alphabet: tuple[Any, ...]


def takes_seed(encoder: str) -> bool:
    """True when the registered encoder's factory has a ``seed`` parameter (e.g. dropout)."""
    from ubpe.encoders import encoder_info

    try:
        return "seed" in inspect.signature(encoder_info(encoder).factory).parameters
    except (TypeError, ValueError):
        return False


def supports_nbest(encoder: str) -> bool:
    """True when the registered encoder returns ranked alternatives (``top_n > 1``)."""
    from ubpe.encoders import encoder_info

    return bool(encoder_info(encoder).supports_nbest)


Grid = list[tuple[FitSpec, list[CellSpec], LoadedDataset]]


#: The variant whose final size the other is fitted to when ``equal_size`` is set.
SIZE_LEADER = "classic"


def plan(config: ExperimentConfig, datasets: list[LoadedDataset], available: set[str],
         final_sizes: dict[tuple[str, str, int], int] | None = None) -> Grid:
    """The grid: every fit with its cells, in a fixed order.

    With ``config.equal_size`` the non-classic fits of a setting are fitted to
    ``final_sizes[setting]`` ids, the vocabulary size the classic fit of that setting ended with
    after its rearrangement (the runner fits the classic ones first); without ``final_sizes``
    only the classic fits are planned then.
    """
    runnable = [e for e in config.encoders if e.encoder in available or e.encoder == NATIVE]
    variants = list(dict.fromkeys(e.variant for e in runnable))
    files = {v.name: v for v in config.vocabularies}
    units = []
    for data in datasets:
        ds = data.config
        for size in config.sizes_for(ds):
            n_tokens = n_tokens_for(size, len(data.alphabet))
            for n_candidates in config.n_candidates:
                for variant in variants:
                    if variant in files:
                        vocabulary = files[variant]
                        if _reads(vocabulary, data):
                            path = config.vocabulary_path(vocabulary)
                            fit = FitSpec(ds.name, data.train.kind, variant, size, 0, n_candidates,
                                          (), None, None, data.train.checksum, code_fingerprint(),
                                          source_file=str(path.resolve()), source_sha256=_sha256(path.resolve()))
                            units.append((fit, _cells(config, runnable, fit, data), data))
                        continue
                    fit_to = None
                    if config.equal_size and variant != SIZE_LEADER and SIZE_LEADER in variants:
                        if final_sizes is None:
                            continue
                        fit_to = final_sizes.get((ds.name, str(size), n_candidates))
                    fit = FitSpec(ds.name, data.train.kind, variant, size, n_tokens, n_candidates,
                                  data.alphabet, ds.regex_pattern, ds.break_tokens,
                                  data.train.checksum, code_fingerprint(), fit_to)
                    units.append((fit, _cells(config, runnable, fit, data), data))
    return units


def _cells(config: ExperimentConfig, runnable: list, fit: FitSpec, data: LoadedDataset) -> list[CellSpec]:
    """The cells of one fit: its variant's encoders, once per seed for the seeded ones."""
    cells = []
    for spec in runnable:
        if spec.variant != fit.variant:
            continue
        options = tuple(sorted(config.encoder_options.get(spec.encoder, {}).items()))
        seeds = config.seeds if spec.encoder in config.seeded else (None,)
        cells.extend(CellSpec(fit, spec.encoder, options, seed, config.top_n,
                              data.heldout.checksum) for seed in seeds)
    return cells


@functools.lru_cache(maxsize=64)
def _sha256(path: Path) -> str:
    """`file_sha256`, once per file and run (the grid asks at every setting)."""
    return file_sha256(path)


def _reads(vocabulary: Any, data: LoadedDataset) -> bool:
    """Whether a vocabulary from a file encodes this dataset: the ones it names, else every
    text dataset (a language model's vocabulary reads text, not integer symbols)."""
    if vocabulary.datasets is not None:
        return data.config.name in vocabulary.datasets
    return data.train.symbol_type == "char"
