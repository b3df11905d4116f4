"""What the commands share: a message's text, short ids, the views' status table, JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from rich.table import Table

from ... import ViewStatus

SHORT_ID = 13


def message_text(message: dict[str, Any], *, full: bool = False) -> str:
    """A message's content whole: its text (every part), then each tool call with its
    arguments, `name({"city": "Lisbon"})`. On one line (runs of white space as one space),
    unless `full`, which keeps its line breaks."""
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    pieces = [str(content or "")]
    for call in message.get("tool_calls") or ():
        function = call.get("function", {}) if isinstance(call, dict) else {}
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = orjson.dumps(arguments).decode()
        pieces.append(f"calls {function.get('name', '?')}({arguments})")
    pieces = [piece for piece in pieces if piece]
    if full:
        return "\n".join(piece.strip("\n") for piece in pieces)
    return " ".join(" ".join(piece.split()) for piece in pieces)


def short_id(identifier: str | None) -> str:
    """Ids are long; tables show their start (full ids are in `--json` output)."""
    if not identifier:
        return ""
    return identifier if len(identifier) <= SHORT_ID else identifier[: SHORT_ID - 1] + "…"


def make_table(title: str, *columns: str) -> Table:
    """A table whose last column wraps and whose other columns stay on one line."""
    table = Table(title=title)
    for column in columns[:-1]:
        table.add_column(column, no_wrap=True)
    table.add_column(columns[-1], ratio=1)
    return table


def status_table(statuses: Sequence[ViewStatus]) -> Table:
    table = make_table(
        "Projections", "view", "version", "position", "head", "lag", "rows", "quarantined"
    )
    for status in statuses:
        table.add_row(
            status.view,
            str(status.version),
            str(status.position),
            str(status.head),
            str(status.lag),
            str(status.rows),
            str(status.quarantined),
            style="red" if status.lag or status.quarantined else None,
        )
    return table


def to_json(value: object) -> str:
    """JSON for programs: datetimes as ISO 8601, keys as given."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
