"""The generated reference pages (called by ``docs/hooks.py`` at build time; the tests of
``tests/docs`` read `PUBLIC_PACKAGES` to know what the pages must cover).

`api_pages` reads the public names statically (no import of ubpe), `table_pages` imports the
installed package for its registries, its parser and its config dataclasses.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import os
import re
from pathlib import Path

#: page -> (title, the packages whose public names it documents, modules documented whole)
PUBLIC_PACKAGES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "ubpe": ("The `ubpe` package", ("ubpe",), ()),
    "encoders": ("`ubpe.encoders`", ("ubpe.encoders",), ("ubpe.encoders.ambiguity", "ubpe.encoders.rerank",
                                                        "ubpe.encoders.exact_tfidf")),
    "io": ("`ubpe.io`", ("ubpe.io", "ubpe.io.write"), ()),
    "models": ("`ubpe.models`", ("ubpe.models",), ()),
    "text": ("`ubpe.text`", ("ubpe.text",), ()),
    "view": ("`ubpe.view`", (), ("ubpe.view",)),
    "distributed": ("`ubpe.distributed`", (), ("ubpe.distributed.dask", "ubpe.distributed.rounds")),
    "lab": ("`ubpe.lab`", ("ubpe.lab", "ubpe.lab.datasets"), ("ubpe.lab.config",)),
    "cli": ("`ubpe.cli`", ("ubpe.cli",), ()),
    "integrations": ("`ubpe.integrations`", (), ("ubpe.integrations", "ubpe.integrations.transformers",
                                                 "ubpe.integrations.datasets")),
}


def module_file(root: Path, module: str) -> Path:
    path = root.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def static_all(root: Path, package: str) -> list[str]:
    """A package's ``__all__`` as its source writes it: a list of strings, or ``list(_LAZY)``
    (the keys of its lazy-import table)."""
    tree = ast.parse(module_file(root, package).read_text(encoding="utf-8"))
    assigned = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned[node.targets[0].id] = node.value
    value = assigned.get("__all__")
    if value is None:
        raise ValueError(f"{package} has no __all__")
    if isinstance(value, ast.Call) and isinstance(value.args[0], ast.Name):  # list(_LAZY)
        return [key.value for key in assigned[value.args[0].id].keys]
    return list(ast.literal_eval(value))


def api_pages(root: Path) -> dict[str, str]:
    """The API pages and the kernels' page: read from the sources, no import."""
    pages = {"reference/kernels.md": kernels_page(root)}
    for page, (title, packages, modules) in PUBLIC_PACKAGES.items():
        lines = [f"# {title}", ""]
        for package in packages:
            lines += [f"::: {package}", "    options:", "      members: false", "      show_root_heading: false", ""]
            for name in static_all(root, package):
                if name == "__version__":
                    lines += [f"## `{package}.__version__`", "", "The package's version, as a string.", ""]
                    continue
                lines += [f"::: {package}.{name}", ""]
        for module in modules:
            lines += [f"::: {module}", "    options:", "      show_submodules: false", ""]
        pages[f"reference/api/{page}.md"] = "\n".join(lines)
    return pages


def kernels_page(root: Path) -> str:
    """The Cython modules of ``ubpe_native``, each with the first paragraph of its docstring."""
    lines = ["# The kernels", "",
             "The Cython modules of `ubpe_native/`, generated from their sources when the site is built "
             "(the first paragraph of each module's docstring). How they fit in: [design](../design.md#the-kernels).",
             "", "| module | what it is |", "|---|---|"]
    for path in sorted((root / "ubpe_native").glob("*.pyx")):
        found = re.search(r'"""(.*?)(?:\n\s*\n|""")', path.read_text(encoding="utf-8"), re.DOTALL)
        summary = " ".join(found.group(1).split()) if found else ""
        lines.append(f"| `ubpe_native.{path.stem}` | {_cell(summary)} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# tables from the installed package


def _cell(text: object) -> str:
    """``text`` fit for a Markdown table cell (or a line of prose)."""
    return str(text).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def encoders_page() -> str:
    from ubpe.encoders import available_encoders, encoder_info

    lines = ["# Encoders", "",
             "Every encoder of the registry (`ubpe.available_encoders()`, `ubpe.encoders.encoder_info(name)`),",
             "generated from it when the site is built. Which to use when: "
             "[the encoders guide](../guides/encoders.md).", "",
             "| encoder | picks | top-n | source |", "|---|---|---|---|"]
    for name in available_encoders():
        info = encoder_info(name)
        lines.append(f"| `{name}` | {_cell(info.optimises)} | {'yes' if info.supports_nbest else 'no'} | "
                     f"{_cell(info.source)} |")
    return "\n".join(lines) + "\n"


def formats_page() -> str:
    from ubpe.io import FORMATS

    lines = ["# File formats", "",
             "`ubpe.io.FORMATS`, in detection order, generated from the registry when the site is built:",
             "`ubpe.load(path)` tries the detectors in this order, `ubpe.save(tok, path, format=...)` writes",
             "the formats that can hold the model. How each family is checked against its own system:",
             "[load any tokenizer file](../guides/load.md).", "",
             "| format | file | read | write |", "|---|---|---|---|"]
    for row in FORMATS.values():
        lines.append(f"| `{row.name}` | {_cell(row.title)} | {'yes' if row.read else 'no'} | "
                     f"{'yes' if row.write else 'no'} |")
    return "\n".join(lines) + "\n" + conversion_section()


def conversion_section() -> str:
    """The conversion table (family x format) of :func:`ubpe.io.write.conversion_table`."""
    from ubpe.io.write import conversion_table

    return "\n".join(["", "## Use it elsewhere: which format holds which family", "",
                      "`ubpe convert IN OUT [--to FORMAT]` and `tok.save(path, format=None)` write a model in",
                      "every format marked ✓; elsewhere they refuse in one line saying why (the letter's",
                      "reason below; `ubpe convert` exits 2). Every ✓ cell is checked by writing a model",
                      "and encoding held-out text in the target's own system (`tests/spec/test_writers.py`,",
                      "`tests/spec/test_writers_llama.py`).", "", conversion_table(), ""])


#: the README's "Use it elsewhere" table sits between these (snippet) markers, and the converting
#: guide's table with its notes between the same markers there; `tests/spec/test_readme.py` fails
#: when either is not what :func:`readme_conversion_table` / :func:`guide_conversion_table` give,
#: ``python docs/reference_pages.py`` writes both
README_CONVERSION_MARKERS = ("<!-- --8<-- [start:conversion] -->", "<!-- --8<-- [end:conversion] -->")
CONVERT_GUIDE = Path(__file__).resolve().parent / "guides" / "convert.md"


def readme_conversion_table() -> str:
    """The README's conversion table: :func:`ubpe.io.write.conversion_table`, families with the
    same row in one, without the notes (the front page's short form; the converting guide has
    the notes, the formats page one row per family)."""
    from ubpe.io.write import conversion_table

    return conversion_table(grouped=True, legend=False)


def guide_conversion_table() -> str:
    """The converting guide's conversion table: grouped rows, with the conditions (numbers) and
    the reasons (letters)."""
    from ubpe.io.write import conversion_table

    return conversion_table(grouped=True)


def _write_between_markers(path: Path, body: str) -> None:
    start, end = README_CONVERSION_MARKERS
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{start}\n{body}\n{end}{tail}", encoding="utf-8")


def write_readme_conversion_table(readme: Path = Path(__file__).resolve().parents[1] / "README.md") -> None:
    """Write :func:`readme_conversion_table` into ``readme`` and :func:`guide_conversion_table`
    into the converting guide, between the markers."""
    _write_between_markers(readme, readme_conversion_table())
    _write_between_markers(CONVERT_GUIDE, guide_conversion_table())


def _subcommands(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def _argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    formatter = parser._get_formatter()  # (its %-expansion of a help, as ``--help`` prints it)
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = ", ".join(action.option_strings) or (action.metavar or action.dest)
        if action.option_strings and action.nargs != 0:
            name += f" {action.metavar or action.dest.upper()}"
        default = action.default
        shown = "" if default in (None, False, [], argparse.SUPPRESS) or action.nargs == 0 else f"`{default}`"
        choices = ", ".join(f"`{c}`" for c in action.choices) if action.choices else ""
        required = "yes" if action.required or not action.option_strings and action.nargs not in ("*", "?") else ""
        rows.append(f"| `{name}` | {required} | {shown} | {choices} | {_cell(formatter._expand_help(action) if action.help else '')} |")
    return rows


def _usage(parser: argparse.ArgumentParser) -> str:
    """The usage lines as argparse wraps them on a terminal of `USAGE_COLUMNS` (not the build's)."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(USAGE_COLUMNS)
    try:
        return parser.format_usage().strip()
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


#: the width the usage lines are wrapped at (the width of a code block on the site)
USAGE_COLUMNS = 78


def cli_page() -> str:
    from ubpe.cli import build_parser

    parser = build_parser()
    lines = ["# The command line", "",
             "Generated from the `argparse` parser (`ubpe.cli.build_parser()`) when the site is built;",
             "`ubpe COMMAND --help` prints the same. Worked examples: [the command-line guide](../guides/cli.md).",
             "", "```text", _usage(parser), "```", "",
             _cell(parser.description), "", "| argument | required | default | choices | help |",
             "|---|---|---|---|---|", *_argument_rows(parser), ""]
    for name, summary, sub in _subcommands(parser):
        lines += [f"## `ubpe {name}`", "", _cell(summary), "", "```text", _usage(sub), "```", ""]
        if sub.description and sub.formatter_class is argparse.RawDescriptionHelpFormatter:
            lines += ["```text", sub.description.strip(), "```", ""]
        elif sub.description:
            lines += [_cell(sub.description), ""]
        lines += ["| argument | required | default | choices | help |", "|---|---|---|---|---|",
                  *_argument_rows(sub), ""]
    return "\n".join(lines)


# the TOML sections of an experiment config and the dataclass each one's keys come from; the
# ExperimentConfig fields that are keys of [grid] and [encoders] (their TOML names where they differ)
GRID_FIELDS = {"vocab_sizes": "vocab_sizes", "n_candidates": "n_candidates", "top_n": "top_n",
               "seeds": "seeds", "equal_size": "equal_size"}
ENCODERS_FIELDS = {"encoders": "run", "baseline": "baseline", "encoder_options": "options",
                   "seeded": "seeded", "allow_failures": "allow_failures"}
TOP_FIELDS = {"name": "name", "description": "description"}
#: ExperimentConfig fields that are tables of their own, and those that are no setting
TABLE_FIELDS = {"datasets", "comparisons", "stats", "downstream", "beam", "vocabularies", "transformer"}
NOT_SETTINGS = {"source", "folder"}


def documented_example(docstring: str) -> dict[str, list[str]]:
    """The lines of a module docstring's example TOML block, by section: ``""`` for the top
    level, ``"grid"``, ``"comparisons"``, and ``"datasets"`` / ``"vocabularies"`` for all
    their ``[datasets.NAME]`` / ``[vocabularies.NAME]`` tables."""
    sections: dict[str, list[str]] = {}
    section, in_block, depth = "", False, 0
    for raw in docstring.splitlines():
        if ".. code-block:: toml" in raw:
            in_block, depth = True, len(raw) - len(raw.lstrip())
            continue
        if not in_block or not raw.strip():
            continue
        if len(raw) - len(raw.lstrip()) <= depth:
            break
        header = re.match(r"^\s*\[\[?([\w-]+)", raw)
        if header:
            section = header.group(1)
        sections.setdefault(section, []).append(raw)
    indent = min((len(line) - len(line.lstrip()) for lines in sections.values() for line in lines), default=0)
    return {name: [line[indent:] for line in lines] for name, lines in sections.items()}


def _type(field: dataclasses.Field) -> str:
    """The annotation as TOML sees it: a tuple is a list."""
    return re.sub(r"tuple\[(.*), \.\.\.\]", r"list[\1]", str(field.type)).replace(" | ", " or ")


def _key_rows(fields, defaults: dict[str, object], toml_names=None) -> list[str]:
    rows = []
    for field in fields:
        key = (toml_names or {}).get(field.name, field.name)
        default = defaults.get(field.name, dataclasses.MISSING)
        if default is dataclasses.MISSING:
            shown = "required"
        elif default is None:
            shown = "unset"
        elif isinstance(default, Described):
            shown = str(default)
        else:
            shown = f"`{_toml(default)}`"
        rows.append(f"| `{key}` | `{_type(field)}` | {shown} |")
    return rows


class Described(str):
    """A default that is a rule, not a value (shown as prose)."""


def _toml(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "none"
    if dataclasses.is_dataclass(value):
        return str(value)
    return str(value)


def _dataclass_defaults(cls) -> dict[str, object]:
    defaults = {}
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            defaults[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            defaults[field.name] = field.default_factory()
    return defaults


def config_page() -> str:
    from ubpe.lab import config
    from ubpe.lab.datasets import files

    fields = {field.name: field for field in dataclasses.fields(config.ExperimentConfig)}
    unplaced = set(fields) - set(GRID_FIELDS) - set(ENCODERS_FIELDS) - set(TOP_FIELDS) - TABLE_FIELDS - NOT_SETTINGS
    if unplaced:
        raise RuntimeError(f"docs/reference_pages.py does not say where these config fields go: {sorted(unplaced)}")
    example = documented_example(config.__doc__ or "")
    # what the parser fills in for a config that names one dataset and nothing else
    parsed = config.parse_config({"datasets": {"d": {}}})
    actual = {name: getattr(parsed, name) for name in fields}
    actual["name"] = Described("the config file's name")
    actual["encoders"] = tuple(str(spec) for spec in parsed.encoders)

    def section(title: str, name: str, intro: str, rows: list[str]) -> list[str]:
        shown = example.get(name, [])
        return [f"## `{title}`" if title else "## Top level", "", intro, "",
                "| key | type | default |", "|---|---|---|", *rows, "",
                *(["From the documented example:", "", "```toml", *shown, "```", ""] if shown else [])]

    lines = ["# Experiment config", "",
             "The keys of an `ubpe experiment` config (TOML), generated when the site is built from",
             "`ubpe/lab/config.py`: the types of its dataclasses, the defaults its parser fills in, and",
             "its documented example, section by section. How to use them: [your own data](../guides/own-data.md).",
             ""]
    lines += section("", "", "Keys outside any table.", _key_rows([fields[f] for f in TOP_FIELDS], actual))
    lines += section("[grid]", "grid", "The grid every dataset runs on.",
                     _key_rows([fields[f] for f in GRID_FIELDS], actual, GRID_FIELDS))
    lines += section("[encoders]", "encoders", "Which cells (`variant:encoder`) run and are compared.",
                     _key_rows([fields[f] for f in ENCODERS_FIELDS], actual, ENCODERS_FIELDS))
    lines += section("[statistics]", "statistics", "The paired tests.",
                     _key_rows(dataclasses.fields(config.StatsConfig), _dataclass_defaults(config.StatsConfig)))
    lines += section("[downstream]", "downstream", "The language-model proxy; measured only when the table is present.",
                     _key_rows(dataclasses.fields(config.DownstreamConfig),
                               _dataclass_defaults(config.DownstreamConfig)))
    lines += section("[beam]", "beam", "The beam-width study; run only when the table is present.",
                     _key_rows(dataclasses.fields(config.BeamConfig), _dataclass_defaults(config.BeamConfig)))
    lines += section("[[comparisons]]", "comparisons", "Paired questions, `a - b` per held-out document "
                     "(default: the first two encoders').", _key_rows(dataclasses.fields(config.Comparison), {}))
    dataset_fields = [f for f in dataclasses.fields(config.DatasetConfig) if f.name not in ("name", "load_options")]
    lines += section("[datasets.NAME]", "datasets", "One table per dataset; keys other than these go to the "
                     "dataset's loader (a registered dataset's options, or a file dataset's keys below).",
                     _key_rows(dataset_fields, _dataclass_defaults(config.DatasetConfig)))
    vocabulary_fields = [f for f in dataclasses.fields(config.VocabularyConfig) if f.name != "name"]
    lines += section("[vocabularies.NAME]", "vocabularies", "A tokenizer file (anything `ubpe.load` reads) "
                     "encoded beside the fitted vocabularies.",
                     _key_rows(vocabulary_fields, _dataclass_defaults(config.VocabularyConfig)))
    files_example = [line for lines in documented_example(files.__doc__ or "").values() for line in lines]
    lines += ["## A dataset of your own files", "",
              "A `[datasets.NAME]` table with a `path` reads your files (`ubpe.lab.datasets.files`); the keys",
              "each `format` takes, generated from `ubpe.lab.datasets.files.KEYS`:", "",
              "| format | keys |", "|---|---|"]
    common = sorted(files.COMMON_KEYS - {"root"})
    for fmt in files.FORMATS:
        lines.append(f"| `{fmt}` | {', '.join(f'`{k}`' for k in common + sorted(files.KEYS[fmt]))} |")
    lines += ["", "From the documented example of `ubpe/lab/datasets/files.py`:", "", "```toml", *files_example, "```"]
    return "\n".join(lines) + "\n"


def table_pages() -> dict[str, str]:
    try:
        import ubpe  # noqa: F401
    except ImportError as error:  # pragma: no cover - the build's own message
        raise RuntimeError(f"the reference tables import ubpe; install it first ({error})") from None
    return {"reference/encoders.md": encoders_page(), "reference/formats.md": formats_page(),
            "reference/cli.md": cli_page(), "reference/config.md": config_page()}


if __name__ == "__main__":
    write_readme_conversion_table()
