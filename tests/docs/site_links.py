"""A link check of a built site, offline: every internal link (``<a href>``, ``<img src>``,
``<link href>``, ``<script src>``) of every HTML page must name a file of the site, and its
``#anchor`` an element id of the page it names. External links (a scheme or ``//``) are not
fetched.

    python tests/docs/site_links.py site/      # prints the broken links; exit 1 if any
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

LINKING = {"a": "href", "link": "href", "img": "src", "script": "src"}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        attributes = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if attributes.get(key):
                self.ids.add(attributes[key])
        target = attributes.get(LINKING.get(tag, ""))
        if target:
            self.links.append(target)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def _target(site: Path, page: Path, path: str) -> Path:
    """The file a link's path names, from ``page`` (a folder means its ``index.html``)."""
    if not path:
        return page
    base = site if path.startswith("/") else page.parent
    target = (base / unquote(path.lstrip("/"))).resolve()
    return target / "index.html" if target.is_dir() or path.endswith("/") else target


def broken_links(site: Path) -> list[str]:
    """``page: link (why)`` for every internal link of ``site`` that leads nowhere."""
    site = site.resolve()
    pages = {path.resolve(): _parse(path) for path in site.rglob("*.html")}
    broken = []
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue  # external: not fetched
            target = _target(site, page, parts.path)
            where = f"{page.relative_to(site)}: {link}"
            if not target.is_relative_to(site):
                broken.append(f"{where} (outside the site)")
            elif not target.is_file():
                broken.append(f"{where} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where} (no such anchor)")
    return sorted(broken)


def main(argv: list[str]) -> int:
    broken = broken_links(Path(argv[0] if argv else "site"))
    print("\n".join(broken) or "no broken links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
