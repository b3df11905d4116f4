"""Printing as the store is read: tables in chunks of rows, JSON arrays item by item.

A table of at most `CHUNK` rows is printed as it always was: one rich table measured over
its rows. A longer one is printed a chunk at a time, with the look of one table: the column
widths are measured on the first chunk (and at least what the caller knows the values
need), later values that do not fit fold within their cell, the content column takes the
rest of the width; its rows are drawn by `grid` (no rich table per chunk: measuring and
laying one out costs more than the rows), no border between chunks, and a chunk never ends
next to a boundary row (whose lines belong to it). Memory holds one chunk, whatever the
length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import TypeVar

import orjson
from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment, Segments
from rich.table import Table

from .grid import Grid
from .table_rows import Row

T = TypeVar("T")
CHUNK = 100  # rows measured and printed at a time
CONTENT = 20  # the content column's least width, narrower columns folding to make room
NARROWEST = 6  # no column folds narrower


def print_table(
    console: Console,
    items: Iterable[T],
    *,
    whole: Callable[[list[T]], Table],
    row: Callable[[T], Row],
    title: str,
    columns: Sequence[str],
    min_widths: Sequence[int] = (),
    caption: Callable[[], str | None] = lambda: None,
) -> None:
    """Print `items`: as `whole(items)` if they are few, else chunk by chunk, each item as
    `row(item)` under `title` and `columns` (the last one the content), `caption()` after
    the last row (called once every item was read)."""
    iterator = iter(items)
    first = list(islice(iterator, CHUNK + 1))
    if len(first) <= CHUNK:
        console.print(whole(first))
        return
    measured = [row(item) for item in first]
    widths = _fitted(_widths(columns, measured, min_widths), console.width)
    rows = chain(measured, (row(item) for item in iterator))
    chunk: list[Row] = []
    printed = False
    for each in rows:
        if len(chunk) >= CHUNK and not each.section and not chunk[-1].section:
            _print_chunk(console, chunk, columns, widths, title=None if printed else title)
            printed, chunk = True, []
        chunk.append(each)
    table_title = None if printed else title
    _print_chunk(console, chunk, columns, widths, title=table_title, caption=caption(), last=True)


def _widths(columns: Sequence[str], rows: list[Row], least: Sequence[int]) -> list[int]:
    """The width of each column but the content: its widest value in `rows`, or more."""
    widths = []
    for index, header in enumerate(columns[:-1]):
        values = [line for row in rows for line in row.cells[index].splitlines()]
        widest = max((cell_len(value) for value in values), default=0)
        widths.append(max(cell_len(header), widest, least[index] if index < len(least) else 0))
    return widths


def _fitted(widths: list[int], width: int) -> list[int]:
    """`widths`, the widest narrowed until the content column has room in `width` (each
    column takes its width, 2 of padding and a border; the table, one more border)."""
    widths = list(widths)
    room = width - 1 - 3 * (len(widths) + 1) - CONTENT
    while sum(widths) > room and max(widths) > NARROWEST:
        widest = widths.index(max(widths))
        widths[widest] -= 1
    return widths


def _print_chunk(
    console: Console,
    rows: list[Row],
    columns: Sequence[str],
    widths: list[int],
    *,
    title: str | None,
    caption: str | None = None,
    last: bool = False,
) -> None:
    content = console.width - sum(widths) - 3 * len(columns) - 1
    grid = Grid(columns, [*widths, max(content, NARROWEST)], console)
    lines: list[list[Segment]] = []
    if title is not None:
        lines += [grid.title(title), grid.top(), *grid.header()]
    rule = grid.section()
    for index, row in enumerate(rows):
        if row.section and (index or title is None) and lines[-1:] != [rule]:
            lines.append(rule)
        lines += grid.row(row)
        if row.section and (index < len(rows) - 1 or not last):
            lines.append(rule)
    if last:
        lines.append(grid.bottom())
        if caption:
            lines.append(grid.title(caption, "dim"))
    console.print(Segments(segment for line in lines for segment in (*line, Segment.line())))


def json_array(items: Iterable[object]) -> Iterator[str]:
    """The text `to_json(list(items))` prints (orjson, indented by 2), item by item."""
    opening = "[\n"
    for item in items:
        text = orjson.dumps(item, option=orjson.OPT_INDENT_2).decode()
        yield opening + "\n".join("  " + line for line in text.split("\n"))
        opening = ",\n"
    yield "[]" if opening == "[\n" else "\n]"
