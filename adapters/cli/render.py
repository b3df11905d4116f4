"""Tables for people: the active context, the history and the compaction audit, with rich."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import orjson
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from ... import ViewStatus

SNIPPET = 60
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


def snippet(message: dict[str, Any]) -> str:
    """A one-line preview of a message (`message_text`, cut at SNIPPET characters)."""
    text = message_text(message)
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"


def short_id(identifier: str | None) -> str:
    """Ids are long; tables show their start (full ids are in `--json` output)."""
    if not identifier:
        return ""
    return identifier if len(identifier) <= SHORT_ID else identifier[: SHORT_ID - 1] + "…"


def active_table(messages: Sequence[dict[str, Any]], title: str = "Active context") -> Table:
    table = make_table(title, "#", "id", "role", "content")
    for position, message in enumerate(messages, 1):
        table.add_row(str(position), short_id(message["id"]), message["role"], snippet(message))
    return table


def history_table(entries: Sequence[dict[str, Any]], title: str = "History") -> Table:
    table = make_table(title, "id", "role", "state", "content")
    for entry in entries:
        if entry["superseded_by"]:
            state = f"superseded by {short_id(entry['superseded_by'])}"
        elif entry["added_by"]:
            state = f"added by {short_id(entry['added_by'])}"
        else:
            state = "active"
        style = "dim" if not entry["active"] else None
        message = entry["message"]
        table.add_row(short_id(entry["id"]), message["role"], state, snippet(message), style=style)
    return table


def audit_table(attempts: Sequence[dict[str, Any]], title: str = "Compaction audit") -> Table:
    table = make_table(title, "at", "id", "status", "change", "tokens", "reason / error")
    for attempt in attempts:
        explanation = attempt["reason"]
        if attempt["failure"]:
            explanation += f" — {attempt['failure']}: {attempt['error']}"
        table.add_row(
            _time(attempt["at"]),
            short_id(attempt["id"]),
            attempt["status"],
            f"-{len(attempt['superseded'])} +{len(attempt['added'])}",
            _tokens(attempt["tokens_before"], attempt["tokens_after"]),
            explanation,
            style="red" if attempt["status"] == "failed" else "green",
        )
    return table


def make_table(title: str, *columns: str) -> Table:
    """A table whose last column wraps and whose other columns stay on one line."""
    table = Table(title=title)
    for column in columns[:-1]:
        table.add_column(column, no_wrap=True)
    table.add_column(columns[-1], ratio=1)
    return table


def _time(at: datetime) -> str:
    return at.strftime("%H:%M:%S")


def _tokens(before: int | None, after: int | None) -> str:
    if before is None or after is None:
        return ""
    return f"{before}→{after}"


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


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar, driven by the library's `progress(done, total)` callbacks.

    It draws on stderr, and only on a terminal: stdout stays the command's output.
    """
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    console = Console(stderr=True)
    with Progress(
        *columns, console=console, transient=True, disable=not console.is_terminal
    ) as bar:
        task = bar.add_task(description, total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance


def to_json(value: object) -> str:
    """JSON for programs: datetimes as ISO 8601, keys as given."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
