"""The rows of the message tables (`show`, `history`, `events`), one item at a time, so that
a table of a few rows and a table printed as it is read share them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from ..exporters.timeline import Boundary, Item, Rewind, boundary_text, rewind_text, state, when
from .inert import inert
from .render import message_text, short_id


@dataclass(frozen=True)
class Row:
    """A table row: its cells, its style, and whether it is a boundary (a compaction attempt
    or a rewind: a line above and below it)."""

    cells: tuple[str, ...]
    style: str | None = None
    section: bool = False


CONTEXT_COLUMNS = ("#", "id", "role", "content")
TIMELINE_COLUMNS = ("v", "id", "role", "state", "content")
EVENT_COLUMNS = ("v", "at (UTC)", "type", "data")
TYPE_WIDTH = len("CompactionCommitted")  # the longest event type: the column never folds


def add_rows(table: Table, rows: list[Row], *, cut: bool = False) -> None:
    """Add `rows` to `table`; `cut`: the last cell of a message row on one line, cut at the
    column's edge (a boundary row wraps)."""
    for row in rows:
        if row.section:
            table.add_section()
        cells: list[str | Text] = list(row.cells)
        if cut and not row.section:
            cells[-1] = Text(inert(cells[-1], lines=True), no_wrap=True, overflow="ellipsis")
        table.add_row(*cells, style=row.style, end_section=row.section)


def context_row(position: int, message: dict[str, Any], *, full: bool = False) -> Row:
    """A message of the active context; its content whole (on one line unless `full`)."""
    text = message_text(message, full=full)
    return Row((str(position), message["id"], message["role"], text))


def timeline_row(item: Item, compaction_versions: dict[str, int], *, full: bool = False) -> Row:
    """A message with its state, or a boundary row: a compaction attempt, a rewind.

    A superseded message names the version of the compaction that superseded it (in
    `compaction_versions`, by compaction id), a rewound one the version of the rewind."""
    if isinstance(item, Boundary):
        attempt = item.attempt
        committed = attempt["status"] == "committed"
        text = ("compaction: " if committed else "compaction failed: ") + boundary_text(attempt)
        return Row(
            (str(item.version), attempt["id"], "", attempt["status"], text),
            style="bold green" if committed else "bold red",
            section=True,
        )
    if isinstance(item, Rewind):
        cells = (str(item.version), "", "", "rewind", rewind_text(item))
        return Row(cells, style="bold yellow", section=True)
    entry = item.history
    message = entry["message"]
    return Row(
        (
            str(item.version),
            entry["id"],
            message["role"],
            state(item, compaction_versions),
            message_text(message, full=full),
        ),
        style=None if entry["active"] else "dim",
    )


def event_row(event: dict[str, Any]) -> Row:
    return Row((str(event["version"]), when(event["at"]), event["type"], event_text(event)))


def event_text(event: dict[str, Any]) -> str:
    """A one-line summary of an event's data."""
    data = event["data"]
    kind = event["type"]
    if kind == "Started":
        parts = [f"source={data['source']}", f"model={data['model']}"]
        if data["parent_id"]:
            parts.append(f"parent={data['parent_id']}")
        if data["metadata"]:
            parts.append(f"metadata keys: {', '.join(sorted(data['metadata']))}")
        return ", ".join(parts)
    if kind == "MessageAppended":
        message = data["message"]
        return f"{data['message_id']} {message['role']}: {message_text(message)}"
    if kind == "CompactionCommitted":
        return (
            f"{short_id(data['compaction_id'])} "
            f"superseded {data['replaced'] - len(data['kept'])}, "
            f"kept {len(data['kept'])}, added {len(data['added'])}"
            + (f" ({data['reason']})" if data["reason"] else "")
        )
    if kind == "CompactionFailed":
        return f"{short_id(data['compaction_id'])} {data['failure']}: {data['error']}"
    if kind == "Rewound":
        text = f"rewound {len(data['message_ids'])}: {', '.join(data['message_ids'])}"
        return text + (f" ({data['reason']})" if data["reason"] else "")
    if kind == "StateChanged":  # the keys only: the values may be long
        parts = [f"set {', '.join(sorted(data['values']))}"] if data["values"] else []
        if data["removed"]:
            parts.append(f"removed {', '.join(data['removed'])}")
        return "; ".join(parts)
    return ", ".join(sorted(data))
