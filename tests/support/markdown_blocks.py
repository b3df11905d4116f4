"""The code blocks of the README and the docs pages, for the tests that keep them true."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNNABLE = "<!-- runnable -->"
BLOCK = re.compile(r"(?P<marker><!-- runnable -->\n)?```(?P<lang>\w*)\n(?P<code>.*?)\n```", re.S)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    code: str
    runnable: bool

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """The README and every page of the docs site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    return [
        Block(
            page=page,
            line=text.count("\n", 0, match.start("code")),
            lang=match["lang"],
            code=match["code"],
            runnable=bool(match["marker"]),
        )
        for match in BLOCK.finditer(text)
    ]
