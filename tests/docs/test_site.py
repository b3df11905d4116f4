"""The docs site's navigation holds every page, and names none that does not exist."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from support.markdown_blocks import ROOT

DOCS = ROOT / "docs"


def nav_pages(entries: Any) -> Iterator[str]:
    if isinstance(entries, str):
        yield entries
    elif isinstance(entries, list):
        for entry in entries:
            yield from nav_pages(entry)
    elif isinstance(entries, dict):
        for value in entries.values():
            yield from nav_pages(value)


def nav() -> list[str]:
    return list(nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]))


def test_every_docs_page_is_in_the_nav() -> None:
    pages = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    assert pages - set(nav()) == set()


def test_the_nav_names_only_pages_that_exist() -> None:
    assert [page for page in nav() if not (DOCS / page).is_file()] == []


def test_the_changelog_page_is_the_changelog() -> None:
    assert (DOCS / "changelog.md").read_text() == '--8<-- "CHANGELOG.md"\n'
