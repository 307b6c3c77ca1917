"""The site's generated pages, made at every build so that they cannot drift from the code.

* ``reference/api/*.md``: one page per public package, one ``::: name`` per public name read
  statically (``__all__``, or the keys of a lazy package's ``_LAZY``); mkdocstrings renders
  them from the source with griffe, without importing ubpe.
* ``reference/encoders.md``, ``formats.md``, ``cli.md``, ``config.md``: tables from the
  registries (`ubpe.encoders.encoder_info`, `ubpe.io.FORMATS`), the ``argparse`` parser and the
  dataclasses and documented example of `ubpe.lab.config`; these import the installed package.
* ``results/``: the reports and benchmark tables under ``results/`` with their plots, taken
  from the repository at build time (not copied into ``docs/``), and added to the navigation.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
if str(DOCS) not in sys.path:
    sys.path.insert(0, str(DOCS))

from reference_pages import api_pages, table_pages  # noqa: E402  (docs/ is not a package)

#: the navigation sections the result files are appended to, and which files go where
RESULT_SECTIONS = {"Results": "results", "Performance": "results/benchmarks"}


def result_files() -> list[Path]:
    """Every report, benchmark table and plot under results/, and benchmarks/PROFILE.md,
    relative to the repository."""
    found = [*ROOT.glob("results/*.md"), *ROOT.glob("results/*/*.md"), *ROOT.glob("results/**/*.png"),
             ROOT / "benchmarks" / "PROFILE.md"]
    return sorted(path.relative_to(ROOT) for path in found)


def title_of(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].replace("`", "").strip()
    return path.stem


def on_config(config, **kwargs):
    """Append every report under results/ to the Results or Performance section of the nav."""
    listed = set()

    def walk(items):
        for item in items:
            for value in (item.values() if isinstance(item, dict) else [item]):
                if isinstance(value, list):
                    walk(value)
                else:
                    listed.add(value)

    walk(config["nav"])
    for item in config["nav"]:
        if not isinstance(item, dict):
            continue
        ((section, entries),) = item.items()
        folder = RESULT_SECTIONS.get(section)
        if folder is None:
            continue
        for path in result_files():
            if path.suffix == ".md" and path.parent.as_posix() == folder or (
                    section == "Results" and path.parent.parent.as_posix() == folder and path.name == "README.md"):
                if path.as_posix() not in listed:
                    entries.append({title_of(ROOT / path): path.as_posix()})
    return config


def on_files(files, config, **kwargs):
    for path in result_files():
        files.append(File.generated(config, path.as_posix(), abs_src_path=str(ROOT / path)))
    for name, text in {**api_pages(ROOT), **table_pages()}.items():
        files.append(File.generated(config, name, content=text))
    return files
