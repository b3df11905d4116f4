"""Printing as the store is read: tables in chunks of rows, JSON arrays item by item.

A table of at most `CHUNK` rows is printed as it always was: one rich table measured over
its rows. A longer one is printed a chunk at a time, with the look of one table: the column
widths are measured on the first chunk (and at least what the caller knows the values
need), later values that do not fit fold within their cell, the content column takes the
rest of the width; its rows are drawn by `grid` (no rich table per chunk: measuring and
laying one out costs more than the rows), no border between chunks, and a chunk never ends
next to a boundary row (whose lines belong to it). Memory holds one chunk, whatever the
length.

In a pipe (`is_pipe`) there is no table: a header line, then one line a row, its cells
separated by tabs, nothing wrapped or cut (`plain_lines`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import TypeVar

import click
import orjson
from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment, Segments
from rich.table import Table

from .grid import Grid
from .inert import inert
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
    full: bool = False,
) -> None:
    """Print `items`: as `whole(items)` if they are few, else chunk by chunk, each item as
    `row(item)` under `title` and `columns` (the last one the content, cut at the edge
    unless `full`), `caption()` after the last row (called once every item was read).
    `min_widths`: columns never narrower. In a pipe: `plain_lines`."""
    if is_pipe(console):
        for line in plain_lines(columns, (row(item) for item in items)):
            click.echo(line, nl=False)
        return
    iterator = iter(items)
    first = list(islice(iterator, CHUNK + 1))
    if len(first) <= CHUNK:
        console.print(whole(first))
        return
    measured = [row(item) for item in first]
    widths = _fitted(_widths(columns, measured, min_widths), console.width, min_widths)
    rows = chain(measured, (row(item) for item in iterator))
    chunk: list[Row] = []
    printed = False
    for each in rows:
        if len(chunk) >= CHUNK and not each.section and not chunk[-1].section:
            title_once = None if printed else title
            _print_chunk(console, chunk, columns, widths, title=title_once, cut=not full)
            printed, chunk = True, []
        chunk.append(each)
    title_last = None if printed else title
    ending = {"caption": caption(), "last": True}
    _print_chunk(console, chunk, columns, widths, title=title_last, cut=not full, **ending)


def _widths(columns: Sequence[str], rows: list[Row], least: Sequence[int]) -> list[int]:
    """The width of each column but the content: its widest value in `rows`, or more."""
    widths = []
    for index, header in enumerate(columns[:-1]):
        values = [line for row in rows for line in row.cells[index].splitlines()]
        widest = max((cell_len(value) for value in values), default=0)
        widths.append(max(cell_len(header), widest, least[index] if index < len(least) else 0))
    return widths


def _fitted(widths: list[int], width: int, least: Sequence[int] = ()) -> list[int]:
    """`widths`, the widest narrowed until the content column has room in `width` (each
    column takes its width, 2 of padding and a border; the table, one more border); a
    column of a `least` width is never narrowed below it."""
    widths = list(widths)
    floors = [max(NARROWEST, least[i] if i < len(least) else 0) for i in range(len(widths))]
    room = width - 1 - 3 * (len(widths) + 1) - CONTENT
    while sum(widths) > room:
        narrowable = [i for i, each in enumerate(widths) if each > floors[i]]
        if not narrowable:
            break
        widest = max(narrowable, key=lambda i: widths[i])
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
    cut: bool = True,
) -> None:
    content = console.width - sum(widths) - 3 * len(columns) - 1
    grid = Grid(columns, [*widths, max(content, NARROWEST)], console, cut)
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


def is_pipe(console: Console) -> bool:
    """Whether output goes to a program rather than a person: not to a terminal, and no
    width asked for with $COLUMNS."""
    return not console.is_terminal and not os.environ.get("COLUMNS")


def plain_lines(columns: Sequence[str], rows: Iterable[Row]) -> Iterator[str]:
    """A header line, then one line a row: cells separated by tabs, whole and `inert`
    (their tabs, line breaks and other control characters written `\\t`, `\\n`, `\\x1b`)."""
    yield "\t".join(columns) + "\n"
    for row in rows:
        yield "\t".join(inert(cell) for cell in row.cells) + "\n"


jsonl_option = click.option(
    "--jsonl",
    "as_jsonl",
    is_flag=True,
    help="Print JSON for programs, one object a line (no need for --json).",
)


def echo_json(items: Iterable[object], *, lines: bool = False) -> None:
    """`to_json(list(items))`, printed item by item; `lines`: one compact object a line."""
    for piece in json_lines(items) if lines else json_array(items):
        click.echo(piece, nl=False)
    if not lines:
        click.echo()


def json_lines(items: Iterable[object]) -> Iterator[str]:
    """One compact JSON object a line (`--jsonl`)."""
    for item in items:
        yield orjson.dumps(item).decode() + "\n"


def json_array(items: Iterable[object]) -> Iterator[str]:
    """The text `to_json(list(items))` prints (orjson, indented by 2), item by item."""
    opening = "[\n"
    for item in items:
        text = orjson.dumps(item, option=orjson.OPT_INDENT_2).decode()
        yield opening + "\n".join("  " + line for line in text.split("\n"))
        opening = ",\n"
    yield "[]" if opening == "[\n" else "\n]"
