"""Experiment configs: a small TOML file naming the grid the runner computes.

An experiment is datasets x vocabulary sizes x n_candidates x encoders (x seeds for encoders
that take one). ``experiments/configs/default.toml`` is the documented example; the keys:

.. code-block:: toml

    name = "default"                       # results go to results/<name>/
    description = "one line for the report"

    [grid]
    vocab_sizes = ["+256", "+1024", 4096]  # "+k": alphabet size + k merged tokens; k: n_tokens
    n_candidates = [50]                    # fit's pairs per round (ubpe's default is 50)
    top_n = 4                              # alternatives asked of n-best encoders (score gaps)
    seeds = [0, 1, 2]                      # one cell per seed for the seeded encoders
    equal_size = true                      # (the default) fit each universal vocabulary to
                                           # the size the classic one of the same setting
                                           # ends with; false compares unequal sizes, and
                                           # the report's comparisons say so
    max_symbols = 300000                   # the symbol caps of every dataset's train and
    heldout_max_symbols = 75000            # held-out split (these are the defaults); `inf`
                                           # lifts them; a dataset's own keys override them

    [encoders]                             # default: universal:tfidf and classic:classic,
                                           # compared (when [[comparisons]] names none)
    run = ["universal:tfidf", "classic:classic", "classic:ranked"]   # variant:encoder
    baseline = "classic:classic"           # "differs from baseline" share in the metrics
    options = { dropout = { p = 0.1 } }    # keyword options per encoder name
    seeded = ["dropout"]                   # stochastic encoders: run once per grid seed,
                                           # with `seed=` passed to the encoder
    allow_failures = ["universal:classic"] # cells these may fail with a ubpe error (the
                                           # run still succeeds); any other failed cell
                                           # makes the run exit with status 1

    [statistics]
    alpha = 0.05                           # family-wise level of the primary comparisons
                                           # (Holm within them; their intervals agree)
    reference = "classic:classic"          # what each encoder's effect is measured against
                                           # (default: [encoders] baseline, else
                                           # classic:classic when it runs, else the first)
    resamples = 2000                       # bootstrap resamples of the units, and their seed
    seed = 0

    [downstream]                           # held-out bits per symbol under a Kneser-Ney
    sizes = ["+1024"]                      # n-gram model trained on each tokenisation of
    n_candidates = [1, 50]                 # the training split, at these grid settings
    order = 3                              # (`ubpe.lab.downstream`)
    discount = 0.75
    orders = [2, 3, 4, 5]                  # the ranking's sensitivity to the order ...
    train_fractions = [0.25, 0.5, 1.0]     # ... and to the training size

    [beam]                                 # the tf-idf beam at several widths against the
    size = "+1024"                         # exact optimum, universal fit of this setting
    n_candidates = 50                      # (`ubpe.lab.beam`)
    widths = [1, 5, 20, 64]

    [[comparisons]]                        # paired tests, a - b per held-out unit
    question = "Does universal (tf-idf, top-1) give shorter encodings than classic?"
    a = "universal:tfidf"
    b = "classic:classic"
    primary = true                         # declared before the run: one Holm family

    [datasets.kjv]                         # every dataset to run, with its options:
    regex = "words"                        #   pre-tokenisation: a preset name or a pattern
    break_tokens = ["\\n"]                 #   symbols that split documents into parts
    max_symbols = 300000                   #   train cap (held-out: heldout_max_symbols)
    [datasets.ecg]
    quantizer = "uniform:64"               #   signals / time series: a quantizer spec
    vocab_sizes = ["+256"]                 #   overrides grid.vocab_sizes for this dataset
    window = 360                           #   anything else goes to the dataset's loader
    [datasets.ecg-mulaw]                   # a second entry for one registered dataset:
    dataset = "ecg"                        #   the registry name (default: the table's name)
    quantizer = "mulaw:64"
    [datasets.notes]                       # a user's files (`ubpe.lab.datasets.files`):
    path = "notes/"                        #   a file, folder or glob, relative to the config
    format = "text"                        #   text | jsonl | csv | parquet | npy | fasta | midi

    [vocabularies.llama3]                  # a vocabulary from a file (anything `ubpe.load`
    path = "ggml-vocab-llama-bpe.gguf"     # reads) beside the fitted ones, at every grid
    encoders = ["native", "fewest"]        # setting of the text datasets (or `datasets =
                                           # [...]`); `native` is the model's own encoding;
                                           # its cells are `llama3:native`, `llama3:fewest`

Caps: a split keeps documents (in a fixed shuffled order) while they fit in its cap of symbols
(default 300,000 train, 75,000 held-out: the default experiment fits and encodes every dataset
in minutes on two cores). The runner prints what each cap left out (documents, units,
symbols), ``run.json`` records it (``caps``) and the report says it; ``inf`` lifts a cap.

Primary contrasts: comparisons marked ``primary = true`` form one multiplicity family (Holm
within it, at ``alpha``); every other comparison is exploratory (its own p, its interval at
``alpha``, labelled so). When no comparison carries the mark, the primary ones are those of
`DEFAULT_PRIMARY` the config asks (else the first comparison), chosen a priori as the
questions ubpe exists to answer: does the universal tokenizer with its own encoder give
shorter held-out encodings than (1) classic BPE with its own encoder, (2) standard BPE (the
classic vocabulary with merges applied by rank)? Whatever else a report shows (every
encoder's effect against ``reference`` with bootstrap intervals, the best encoder and those not
separable from it, rank intervals, the random-effects pooling across datasets:
`ubpe.lab.decisions`) is an estimate with its interval, not a test of this family.

The variant says which tokenizer is fitted (``universal`` = `ubpe.UBPE`, ``classic`` =
`ubpe.UBPEClassic`), the encoder which registered encoder (``ubpe.encoders``) encodes the
held-out split with that vocabulary. Vocabulary sizes relative to the alphabet keep the
number of *merged* tokens the same across datasets whose alphabets range from 4 (DNA) to
~1,800 symbols (UDHR); the alphabet is the union of both splits' symbols (a tokenizer is told
its symbol set; merges are learnt from the training split only).

The module is just over 600 lines because its docstring is the config's documented example
(the rendered reference of every key, ~110 lines) and every table's parser checks what it
reads where it reads it, naming the key at fault. What would split it: the per-table parsers
(``_vocabularies``, ``_beam``, ``_downstream``...) into a module beside the dataclasses.
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import os
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ubpe.lab.patterns import PRESETS
from ubpe.lab.schema import ConfigError, check_schema, suggest

VARIANTS: tuple[str, ...] = ("universal", "classic")
#: The encoder of a vocabulary from a file that is the model's own tokenisation.
NATIVE = "native"

#: Pre-tokenisation presets a dataset can name with ``regex = "<preset>"`` (`ubpe.lab.patterns`).
REGEX_PRESETS: dict[str, str] = PRESETS

DEFAULT_TOP_N = 1
#: Encoders that sample (one cell per seed) unless a config says otherwise.
DEFAULT_SEEDED: tuple[str, ...] = ("dropout",)
DEFAULT_ALPHA = 0.05
#: The primary contrasts when a config marks none (see the module docstring): (a, b) pairs.
DEFAULT_PRIMARY: tuple[tuple[str, str], ...] = (("universal:tfidf", "classic:classic"),
                                                ("universal:tfidf", "classic:ranked"))
#: Variants compared at equal final vocabulary size unless ``[grid] equal_size = false``.
DEFAULT_EQUAL_SIZE = True
#: A config without ``[encoders] run`` compares the two fitted variants, each with its own
#: encoder; without ``[[comparisons]]`` it asks the first two encoders' question.
DEFAULT_ENCODERS: tuple[str, ...] = ("universal:tfidf", "classic:classic")
# dataset keys the runner uses itself; the rest go to `experiments.datasets.load`
_RUNNER_KEYS = {"dataset", "regex", "break_tokens", "vocab_sizes", "max_symbols",
                "heldout_max_symbols"}


@dataclass(frozen=True)
class EncoderSpec:
    """``variant:encoder``: which tokenizer's vocabulary, encoded by which encoder.

    >>> EncoderSpec.parse("classic:ranked")
    EncoderSpec(variant='classic', encoder='ranked')
    >>> str(EncoderSpec("universal", "tfidf"))
    'universal:tfidf'
    """

    variant: str
    encoder: str

    @classmethod
    def parse(cls, text: Any, variants: tuple[str, ...] = VARIANTS) -> EncoderSpec:
        """``variants``: the fitted ones and the config's vocabularies from files."""
        if not isinstance(text, str) or text.count(":") != 1:
            raise ConfigError(f"an encoder is 'variant:encoder', got {text!r}")
        variant, encoder = (part.strip() for part in text.split(":"))
        if variant not in variants:
            raise ConfigError(f"{text!r}: the variant must be one of {', '.join(variants)}"
                              f"{suggest(variant, variants)}")
        if not encoder:
            raise ConfigError(f"{text!r}: no encoder name")
        return cls(variant, encoder)

    def __str__(self) -> str:
        return f"{self.variant}:{self.encoder}"


@dataclass(frozen=True)
class Comparison:
    """A paired question: is ``a`` shorter than ``b`` on the same held-out units? ``primary``:
    one of the pre-declared contrasts (their own Holm family), else exploratory."""

    question: str
    a: EncoderSpec
    b: EncoderSpec
    primary: bool = True


@dataclass(frozen=True)
class DatasetConfig:
    """One dataset of the experiment and how to load and split it."""

    name: str
    dataset: str = ""  # the registry name; empty: the same as `name`
    regex: str | None = None
    break_tokens: tuple[Any, ...] | None = None
    vocab_sizes: tuple[int | str, ...] | None = None
    max_symbols: int | None = None
    heldout_max_symbols: int | None = None
    load_options: dict[str, Any] = field(default_factory=dict)

    @property
    def registry_name(self) -> str:
        return self.dataset or self.name

    @property
    def regex_pattern(self) -> str | None:
        """The pattern to split with (a preset resolved)."""
        if self.regex is None:
            return None
        return REGEX_PRESETS.get(self.regex, self.regex)


@dataclass(frozen=True)
class VocabularyConfig:
    """A vocabulary read from a file (``ubpe.load``), encoded beside the fitted ones."""

    name: str
    path: str
    encoders: tuple[str, ...] = (NATIVE,)
    #: the datasets it encodes; None: every text dataset of the config
    datasets: tuple[str, ...] | None = None
    #: the file's format when detection should be skipped (`ubpe.io`)
    format: str | None = None


@dataclass(frozen=True)
class StatsConfig:
    """Per-unit paired tests (see `ubpe.lab.stats`) at this family-wise level; effects against
    ``reference`` (None: the default, `ExperimentConfig.reference`) with bootstrap intervals of
    ``resamples`` draws from ``seed`` (`ubpe.lab.decisions`)."""

    alpha: float = DEFAULT_ALPHA
    reference: str | None = None
    resamples: int = 2000
    seed: int = 0


@dataclass(frozen=True)
class DownstreamConfig:
    """Where and how the language-model proxy is measured (`ubpe.lab.downstream`)."""

    sizes: tuple[str, ...] = ("+1024",)
    n_candidates: tuple[int, ...] = (50,)
    order: int = 3
    discount: float = 0.75
    #: the ranking's sensitivity: every order here (full training split), and every share of
    #: the training documents here (at ``order``)
    orders: tuple[int, ...] = (2, 3, 4, 5)
    train_fractions: tuple[float, ...] = (0.25, 0.5, 1.0)


@dataclass(frozen=True)
class BeamConfig:
    """The beam-width study (`ubpe.lab.beam`): at which grid setting, which widths, how
    many documents, and how far the exact search goes."""

    size: str = "+1024"
    n_candidates: int = 50
    widths: tuple[int, ...] = (1, 5, 20, 64)
    max_docs: int = 100
    exact_max_symbols: int = 32
    exact_max_nodes: int = 100_000


@dataclass(frozen=True)
class ExperimentConfig:
    name: str
    description: str
    datasets: tuple[DatasetConfig, ...]
    vocab_sizes: tuple[int | str, ...]
    n_candidates: tuple[int, ...]
    encoders: tuple[EncoderSpec, ...]
    baseline: EncoderSpec | None = None
    encoder_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    seeds: tuple[int, ...] = (0,)
    seeded: tuple[str, ...] = DEFAULT_SEEDED
    allow_failures: tuple[EncoderSpec, ...] = ()
    top_n: int = DEFAULT_TOP_N
    equal_size: bool = DEFAULT_EQUAL_SIZE
    comparisons: tuple[Comparison, ...] = ()
    stats: StatsConfig = field(default_factory=StatsConfig)
    source: str = ""
    #: the language-model proxy (`ubpe.lab.downstream`); None: not measured
    downstream: DownstreamConfig | None = None
    #: the beam study (`ubpe.lab.beam`); None: not run
    beam: BeamConfig | None = None
    #: the transformer study (``[transformer]``, `ubpe.lab.lm.TransformerConfig`); None: not run
    transformer: Any = None
    #: vocabularies from files (``[vocabularies.NAME]``); their cells are in ``encoders``
    vocabularies: tuple[VocabularyConfig, ...] = ()
    #: the folder a dataset's relative ``path`` is taken from (the config file's); not a setting
    folder: str = ""

    def reference(self) -> str | None:
        """What effects are measured against: ``[statistics] reference``, else the baseline,
        else ``classic:classic`` when it runs, else the first encoder."""
        names = [str(e) for e in self.encoders]
        for candidate in (self.stats.reference, str(self.baseline) if self.baseline else None,
                          "classic:classic"):
            if candidate in names:
                return candidate
        return names[0] if names else None

    def sizes_for(self, dataset: DatasetConfig) -> tuple[int | str, ...]:
        return dataset.vocab_sizes if dataset.vocab_sizes is not None else self.vocab_sizes

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (for the report and for cache keys)."""
        data = asdict(self)
        del data["folder"]  # where the files are is not what they are (their checksums say that)
        data["encoders"] = [str(e) for e in self.encoders]
        data["baseline"] = str(self.baseline) if self.baseline else None
        data["allow_failures"] = [str(e) for e in self.allow_failures]
        data["comparisons"] = [
            {"question": c.question, "a": str(c.a), "b": str(c.b),
             "family": "primary" if c.primary else "exploratory"} for c in self.comparisons
        ]
        return data

    def resolved_options(self, dataset: DatasetConfig) -> dict[str, Any]:
        """The dataset's loader options; a ``path`` is taken from the config's folder (``root``)."""
        options = dict(dataset.load_options)
        if "path" in options and self.folder:
            options["root"] = self.folder
        return options

    def vocabulary_path(self, vocabulary: VocabularyConfig) -> Path:
        """Where a vocabulary's file is: ``$VARIABLES`` expanded, a relative path taken from
        the config's folder."""
        return Path(self.folder or ".") / Path(os.path.expandvars(vocabulary.path)).expanduser()


def n_tokens_for(size: int | str, alphabet_size: int) -> int:
    """The ``n_tokens`` a vocabulary size setting asks for.

    >>> n_tokens_for("+256", 62), n_tokens_for(1000, 62)
    (318, 1000)
    """
    if isinstance(size, str):
        return alphabet_size + _parse_relative(size)
    return int(size)


def _parse_relative(size: str) -> int:
    if not size.startswith("+") or not size[1:].isdigit() or int(size[1:]) < 1:
        raise ConfigError(f"a relative vocabulary size is '+k' with k >= 1, got {size!r}")
    return int(size[1:])


def _check_regex(dataset: str, regex: Any) -> None:
    """A preset name or a pattern; a bare word that names no preset is a mistake, not a regex.

    (``"gpt2"`` was the old name of ``"words"``: a config still saying it would otherwise
    split on the literal text "gpt2".)
    """
    if regex is None or regex in REGEX_PRESETS:
        return
    if not isinstance(regex, str) or not regex:
        raise ConfigError(f"datasets.{dataset}.regex must be a preset name or a pattern")
    if regex.isidentifier():
        raise ConfigError(f"datasets.{dataset}.regex = {regex!r} is no preset "
                          f"({', '.join(sorted(REGEX_PRESETS))}); write a pattern to split on it")


def resolve_path(name_or_path: str | Path, named: Path | None = None) -> Path:
    """A path is taken as it is; a bare name is ``<named>/<name>.toml`` (``default`` ->
    ``experiments/configs/default.toml`` when ``named`` is that folder)."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists() or named is None:
        return path
    return named / f"{name_or_path}.toml"


def load_config(name_or_path: str | Path, *, named: Path | None = None) -> ExperimentConfig:
    """Read and check a config (see the module docstring for the format); ``named`` is a folder
    of configs a bare name refers to (the repository's ``experiments/configs``)."""
    path = resolve_path(name_or_path, named)
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in named.glob("*.toml"))) if named else ""
        raise ConfigError(f"no config {str(name_or_path)!r}" + (f" (named configs: {known})" if known else ""))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return replace(parse_config(data, default_name=path.stem), source=_shown_path(path),
                   folder=str(path.resolve().parent))


def _shown_path(path: Path) -> str:
    """The config's path as results record it: relative to ubpe's checkout when inside it, else
    its file name, so that no machine's directories end up in committed files."""
    from ubpe.lab.provenance import REPO_ROOT

    try:
        return str(path.resolve().relative_to(REPO_ROOT.resolve())) if REPO_ROOT else path.name
    except ValueError:
        return path.name


def parse_config(data: dict[str, Any], *, default_name: str = "experiment") -> ExperimentConfig:
    """An `ExperimentConfig` from parsed TOML (a dict), checked (`ubpe.lab.schema` first: every
    key known, of its type and range; then what needs more than one key)."""
    check_schema(data)
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ConfigError(f"`name` must be a plain folder name, got {name!r}")
    grid = data.get("grid", {})
    vocab_sizes = tuple(grid.get("vocab_sizes", ["+1024"]))
    n_candidates = tuple(grid.get("n_candidates", [50]))
    seeds = tuple(grid.get("seeds", [0]))
    top_n = grid.get("top_n", DEFAULT_TOP_N)
    equal_size = grid.get("equal_size", DEFAULT_EQUAL_SIZE)

    vocabularies = _vocabularies(data.get("vocabularies"))
    variants = VARIANTS + tuple(v.name for v in vocabularies)
    enc = data.get("encoders", {})
    known = _registered_encoders()
    parse = functools.partial(_encoder, variants=variants, known=known)
    encoders = tuple(dict.fromkeys([*(parse(f"encoders.run", e) for e in enc.get("run", DEFAULT_ENCODERS)),
                                    *(EncoderSpec(v.name, e) for v in vocabularies for e in v.encoders)]))
    if not encoders:
        raise ConfigError("encoders.run names no encoder (and no [vocabularies] table adds one)")
    for vocabulary in vocabularies:
        for encoder in vocabulary.encoders:
            _check_encoder(f"vocabularies.{vocabulary.name}.encoders", encoder, known | {NATIVE})
    baseline = parse("encoders.baseline", enc["baseline"]) if enc.get("baseline") else None
    options = enc.get("options", {})
    if not all(isinstance(v, dict) for v in options.values()):
        raise ConfigError("encoders.options maps encoder names to tables of options")
    for encoder in (*options, *enc.get("seeded", [])):
        _check_encoder("encoders.options / encoders.seeded", encoder, known | {NATIVE})
    seeded = enc.get("seeded", list(DEFAULT_SEEDED))
    allow_failures = tuple(dict.fromkeys(parse("encoders.allow_failures", e)
                                         for e in enc.get("allow_failures", [])))

    st = data.get("statistics", {})
    reference = str(parse("statistics.reference", st["reference"])) if "reference" in st else None
    if reference is not None and EncoderSpec.parse(reference, variants) not in encoders:
        raise ConfigError(f"statistics.reference {reference!r} is not one of the encoders the run lists")
    stats = StatsConfig(alpha=float(st.get("alpha", DEFAULT_ALPHA)), reference=reference,
                        resamples=st.get("resamples", StatsConfig.resamples), seed=st.get("seed", StatsConfig.seed))
    comparisons = [Comparison(str(item["question"]), parse(f"comparisons[{i}].a", item["a"]),
                              parse(f"comparisons[{i}].b", item["b"]), bool(item.get("primary", False)))
                   for i, item in enumerate(data.get("comparisons", []))]
    if "comparisons" not in data:
        present = {str(e) for e in encoders}
        for a, b in DEFAULT_PRIMARY:
            if a in present and b in present:
                comparisons.append(Comparison(f"Does {a} give shorter encodings than {b}?",
                                              EncoderSpec.parse(a), EncoderSpec.parse(b)))
        if not comparisons and len(encoders) >= 2:
            a, b = encoders[:2]
            comparisons.append(Comparison(f"Does {a} give shorter encodings than {b}?", a, b))
    comparisons = _primaries(comparisons)

    datasets = []
    for ds_name, ds_options in (data.get("datasets") or {}).items():
        if not isinstance(ds_options, dict):
            raise ConfigError(f"datasets.{ds_name} must be a table")
        sizes = ds_options.get("vocab_sizes")
        _check_regex(ds_name, ds_options.get("regex"))
        breaks = ds_options.get("break_tokens")
        if "path" in ds_options:
            _check_files(ds_name, {k: v for k, v in ds_options.items() if k not in _RUNNER_KEYS})
        datasets.append(DatasetConfig(
            name=ds_name,
            dataset=str(ds_options.get("dataset", "")),
            regex=ds_options.get("regex"),
            break_tokens=tuple(breaks) if breaks else None,
            vocab_sizes=tuple(sizes) if sizes is not None else None,
            max_symbols=ds_options.get("max_symbols", grid.get("max_symbols")),
            heldout_max_symbols=ds_options.get("heldout_max_symbols", grid.get("heldout_max_symbols")),
            load_options={k: v for k, v in ds_options.items() if k not in _RUNNER_KEYS},
        ))
    if not datasets:
        raise ConfigError("the config names no dataset ([datasets.<name>] tables)")
    for vocabulary in vocabularies:
        unknown_ds = set(vocabulary.datasets or ()) - {d.name for d in datasets}
        if unknown_ds:
            raise ConfigError(f"vocabularies.{vocabulary.name}.datasets: no dataset "
                              f"{', '.join(sorted(unknown_ds))} in the config")
    return ExperimentConfig(
        name=name,
        description=str(data.get("description", "")),
        datasets=tuple(datasets),
        vocab_sizes=vocab_sizes,
        n_candidates=n_candidates,
        encoders=encoders,
        baseline=baseline,
        encoder_options=options,
        seeds=seeds,
        seeded=tuple(seeded),
        allow_failures=allow_failures,
        top_n=top_n,
        equal_size=equal_size,
        comparisons=tuple(comparisons),
        stats=stats,
        downstream=_downstream(data.get("downstream")),
        beam=_beam(data.get("beam")),
        transformer=_transformer(data.get("transformer")),
        vocabularies=vocabularies,
    )


def _primaries(comparisons: list[Comparison]) -> list[Comparison]:
    """The primary family: the comparisons marked ``primary``; when none is, those of
    `DEFAULT_PRIMARY`, else the first (see the module docstring)."""
    if not comparisons or any(c.primary for c in comparisons):
        return comparisons
    defaults = {(EncoderSpec.parse(a), EncoderSpec.parse(b)) for a, b in DEFAULT_PRIMARY}
    chosen = [(c.a, c.b) in defaults for c in comparisons]
    if not any(chosen):
        chosen[0] = True
    return [replace(c, primary=flag) for c, flag in zip(comparisons, chosen)]


def _registered_encoders() -> set[str]:
    from ubpe.encoders import available_encoders

    return set(available_encoders())


def _check_encoder(where: str, encoder: str, known: set[str]) -> None:
    """An encoder name the registry (`ubpe.encoders`) knows, else an error with the close ones."""
    if encoder not in known:
        raise ConfigError(f"{where}: no encoder {encoder!r}{suggest(encoder, known)} "
                          f"(registered: {', '.join(sorted(known))})")


def _encoder(where: str, text: Any, *, variants: tuple[str, ...], known: set[str]) -> EncoderSpec:
    """``variant:encoder`` with a known variant and a registered encoder (``native`` for a
    vocabulary from a file)."""
    spec = EncoderSpec.parse(text, variants)
    _check_encoder(f"{where} {text!r}", spec.encoder,
                   known | ({NATIVE} if spec.variant not in VARIANTS else set()))
    return spec


def _vocabularies(tables: Any) -> tuple[VocabularyConfig, ...]:
    """The ``[vocabularies.NAME]`` tables (`VocabularyConfig`; `ubpe.lab.schema` checked their
    keys and types)."""
    from ubpe.io import supported

    found = []
    for name, table in (tables or {}).items():
        where = f"vocabularies.{name}"
        if name in VARIANTS or not name.replace("-", "_").isidentifier():
            raise ConfigError(f"{where}: a vocabulary's name is a word other than {', '.join(VARIANTS)}")
        fmt = table.get("format")
        readable = supported("read")
        if fmt is not None and fmt not in readable:
            raise ConfigError(f"{where}.format: no model format {fmt!r}{suggest(fmt, readable)} "
                              f"(ubpe reads {', '.join(readable)})")
        datasets = table.get("datasets")
        found.append(VocabularyConfig(name, table["path"], tuple(dict.fromkeys(table.get("encoders", [NATIVE]))),
                                      tuple(datasets) if datasets is not None else None, fmt))
    return tuple(found)


def _check_files(name: str, options: dict[str, Any]) -> None:
    """A dataset of the user's files takes the keys of its format (`ubpe.lab.datasets.files`)."""
    from ubpe.lab.datasets import DatasetError
    from ubpe.lab.datasets.files import check_options

    path = options["path"]
    paths = path if isinstance(path, list) else [path]
    if not paths or not all(isinstance(p, str) and p for p in paths):
        raise ConfigError(f"datasets.{name}.path must be a file, folder or glob (or a list of them)")
    try:
        check_options(name, options)
    except DatasetError as error:
        raise ConfigError(str(error)) from None


def _beam(table: Any) -> BeamConfig | None:
    """The ``[beam]`` table (`BeamConfig`; `ubpe.lab.schema` checked its keys and types)."""
    if table is None:
        return None
    default = BeamConfig()
    widths = tuple(table.get("widths", default.widths))
    if list(widths) != sorted(set(widths)) or widths[0] != 1:
        raise ConfigError("beam.widths must be increasing and start at 1")
    numbers = {key: table.get(key, getattr(default, key))
               for key in ("n_candidates", "max_docs", "exact_max_symbols", "exact_max_nodes")}
    return BeamConfig(str(table.get("size", default.size)), widths=widths, **numbers)


def _transformer(table: Any):
    """The ``[transformer]`` table, checked by its own module (`ubpe.lab.lm`)."""
    from ubpe.lab.lm_config import TransformerConfigError, parse_transformer

    try:
        return parse_transformer(table, VARIANTS)
    except TransformerConfigError as exc:
        raise ConfigError(str(exc)) from None


def _downstream(table: Any) -> DownstreamConfig | None:
    """The ``[downstream]`` table (`ubpe.lab.downstream.DownstreamConfig`; `ubpe.lab.schema`
    checked its keys and types)."""
    if table is None:
        return None
    default = DownstreamConfig()
    return DownstreamConfig(
        tuple(str(s) for s in table.get("sizes", default.sizes)),
        tuple(table.get("n_candidates", default.n_candidates)),
        table.get("order", default.order), float(table.get("discount", default.discount)),
        tuple(sorted(set(table.get("orders", default.orders)))),
        tuple(sorted({float(f) for f in table.get("train_fractions", default.train_fractions)})))
