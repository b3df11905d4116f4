"""A table drawn a row at a time with fixed column widths: the look of rich's default table
(heavy head, light body), without measuring the whole table first.

Rows of a long table are drawn here rather than by a rich `Table` per chunk: the widths are
known, so a row is its cells wrapped to them (at spaces; a longer word folds; the content
of a message is on one line cut with an ellipsis, as rich does, unless the grid does not
`cut`), padded and joined by the borders.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from .inert import inert
from .table_rows import Row

Line = list[Segment]


@dataclass(frozen=True)
class Grid:
    """Columns of fixed widths (the last one, the content, is cut rather than folded,
    unless not `cut`: then it wraps whole)."""

    headers: Sequence[str]
    widths: Sequence[int]
    console: Console
    cut: bool = True

    @property
    def width(self) -> int:
        return sum(self.widths) + 3 * len(self.widths) + 1

    def title(self, text: str, style: str = "italic") -> Line:
        text = inert(text)
        return [
            Segment(" " * max((self.width - cell_len(text)) // 2, 0) + text, Style.parse(style))
        ]

    def top(self) -> Line:
        return self._rule("┏", "━", "┳", "┓")

    def header(self) -> Iterator[Line]:
        yield from self._lines(self.headers, "┃", Style(bold=True), cut=False)
        yield self._rule("┡", "━", "╇", "┩")

    def section(self) -> Line:
        return self._rule("├", "─", "┼", "┤")

    def bottom(self) -> Line:
        return self._rule("└", "─", "┴", "┘")

    def row(self, row: Row) -> Iterator[Line]:
        style = Style.parse(row.style) if row.style else None
        return self._lines(row.cells, "│", style, cut=self.cut and not row.section)

    def _rule(self, left: str, fill: str, joint: str, right: str) -> Line:
        inner = joint.join(fill * (width + 2) for width in self.widths)
        return [Segment(left + inner + right)]

    def _lines(
        self, cells: Sequence[str], bar: str, style: Style | None, *, cut: bool
    ) -> Iterator[Line]:
        """The lines of a row; `cut`: its last cell is cut rather than folded."""
        last = len(self.widths) - 1
        wrapped = [
            self._wrap(inert(cell, lines=True), width, cut=cut and index == last)
            for index, (cell, width) in enumerate(zip(cells, self.widths, strict=True))
        ]
        for number in range(max(len(lines) for lines in wrapped)):
            line = [Segment(bar)]
            for lines, width in zip(wrapped, self.widths, strict=True):
                text = lines[number] if number < len(lines) else ""
                line.append(Segment(" " + text + " " * (width - cell_len(text)) + " ", style))
                line.append(Segment(bar))
            yield line

    def _wrap(self, text: str, width: int, *, cut: bool) -> list[str]:
        """`text` in lines of at most `width` cells: wrapped at spaces (a longer word folds),
        or if `cut` on one line, cut with an ellipsis."""
        if cut:
            line = Text(" ".join(text.splitlines()))
            line.truncate(width, overflow="ellipsis")
            return [line.plain]
        lines: list[str] = []
        for paragraph in text.split("\n") or [""]:
            cells = cell_len(paragraph)
            if cells <= width:
                lines.append(paragraph)
            elif cells == len(paragraph):  # a character a cell: wrapped by characters
                lines += textwrap.wrap(paragraph, width) or [""]
            else:
                wrapped = Text(paragraph).wrap(self.console, width, overflow="fold")
                lines += [line.plain.rstrip() for line in wrapped]
        return lines
