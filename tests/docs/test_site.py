"""The built site (``mkdocs build --strict``, see conftest): its internal links and anchors all
lead somewhere, and its API reference covers every public name of ``ubpe.__all__`` and of the
public subpackages."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import pytest

from site_links import broken_links

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs"))
from reference_pages import PUBLIC_PACKAGES  # noqa: E402

pytestmark = pytest.mark.docs


def public_names() -> dict[str, list[str]]:
    """API page -> the anchors it must hold: ``package.name`` for every name of a package's
    ``__all__`` (as imported), ``module.name`` for every public class and function a module
    documented whole defines."""
    expected: dict[str, list[str]] = {}
    for page, (_, packages, modules) in PUBLIC_PACKAGES.items():
        names = []
        for package in packages:
            names += [f"{package}.{name}" for name in importlib.import_module(package).__all__
                      if name != "__version__"]
        for module_name in modules:
            module = importlib.import_module(module_name)
            names += [f"{module_name}.{name}" for name, value in vars(module).items()
                      if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
                      and value.__module__ == module_name]
        expected[page] = names
    return expected


def test_every_public_package_has_a_page():
    import ubpe

    subpackages = {".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "ubpe").rglob("*/__init__.py")}
    documented = {"ubpe"}
    for _, packages, modules in PUBLIC_PACKAGES.values():
        documented |= set(packages) | {module.rpartition(".")[0] for module in modules}
    assert subpackages <= documented, f"public subpackages without a reference page: {subpackages - documented}"
    assert set(ubpe.__all__) >= {"UBPE", "load", "save"}


def test_the_reference_covers_every_public_name(built_site):
    missing = []
    for page, names in public_names().items():
        html = (built_site / "reference" / "api" / page / "index.html").read_text(encoding="utf-8")
        missing += [name for name in names if f'id="{name}"' not in html]
    assert not missing, f"public names without an entry in the reference: {missing}"


def test_the_site_has_no_broken_internal_link_or_anchor(built_site):
    assert len(list(built_site.rglob("*.html"))) >= 30
    assert broken_links(built_site) == []


def test_the_link_check_finds_a_broken_link_and_anchor(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text('<a href="a/">ok</a><a href="a/#here">ok</a><a href="b/">no</a>'
                                         '<a href="a/#gone">no</a><img src="x.png"><a href="https://x.org/y">ext</a>')
    (tmp_path / "a" / "index.html").write_text('<h1 id="here">A</h1><a href="../index.html#top">no</a>')
    assert broken_links(tmp_path) == [
        "a/index.html: ../index.html#top (no such anchor)",
        "index.html: a/#gone (no such anchor)",
        "index.html: b/ (no such file)",
        "index.html: x.png (no such file)",
    ]


def test_generated_tables_come_from_the_registries(built_site):
    from ubpe.encoders import available_encoders
    from ubpe.io import FORMATS

    encoders = (built_site / "reference" / "encoders" / "index.html").read_text(encoding="utf-8")
    formats = (built_site / "reference" / "formats" / "index.html").read_text(encoding="utf-8")
    cli = (built_site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    config = (built_site / "reference" / "config" / "index.html").read_text(encoding="utf-8")
    assert all(f"<code>{name}</code>" in encoders for name in available_encoders())
    assert all(f"<code>{name}</code>" in formats for name in FORMATS)
    assert all(f"ubpe {command}" in cli for command in ("fit", "encode", "decode", "view", "inspect",
                                                          "compare", "convert", "experiment"))
    assert all(f"<code>{key}</code>" in config for key in ("vocab_sizes", "alpha", "widths", "path", "quantizer"))


def test_every_report_and_plot_under_results_is_on_the_site_and_in_its_navigation(built_site):
    home = (built_site / "index.html").read_text(encoding="utf-8")
    reports = [*ROOT.glob("results/*.md"), *ROOT.glob("results/*/README.md"), *ROOT.glob("results/benchmarks/*.md")]
    assert len(reports) >= 15
    for report in reports:
        relative = report.relative_to(ROOT).with_suffix("")
        page = relative.parent if relative.name == "README" else relative
        assert (built_site / page / "index.html").is_file(), page
        assert f'href="{page.as_posix()}/"' in home, f"{page} is not in the navigation"
    for plot in ROOT.glob("results/**/*.png"):
        assert (built_site / plot.relative_to(ROOT)).is_file(), plot
