"""Tables for the read commands: sessions, history with compaction boundaries and rewinds,
audit, events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from ..exporters.timeline import (
    Boundary,
    Item,
    tokens_saved,
    when,
)
from .render import make_table, message_text, short_id
from .table_rows import (
    CONTEXT_COLUMNS,
    EVENT_COLUMNS,
    TIMELINE_COLUMNS,
    Row,
    add_rows,
    context_row,
    event_row,
    timeline_row,
)


def sessions_table(sessions: Sequence[dict[str, Any]]) -> Table:
    """Session ids in full (other commands take them); the other columns wrap when narrow.
    A `parent` column if a session has a parent; a `rewound` column counts the messages
    rewound out of the context, if any session has some; an `erased` column says when, if a
    session was erased (its counts are then 0)."""
    columns = session_columns(sessions)
    table = Table(title="Sessions")
    for column in columns:
        if column == "session":
            table.add_column(column, no_wrap=True)
        elif column in ("active", "stored", "rewound"):
            table.add_column(column, justify="right")
        elif column in ("source", "model", "parent", "compactions"):
            table.add_column(column, overflow="fold")
        else:
            table.add_column(column)
    for session in sessions:
        table.add_row(*session_row(session, columns).cells)
    return table


def session_columns(sessions: Sequence[dict[str, Any]]) -> list[str]:
    """The columns of the sessions listed: `parent`, `rewound`, `erased` only if needed."""
    parent = ["parent"] if any(session["parent_id"] for session in sessions) else []
    rewound = ["rewound"] if any(session["rewound"] for session in sessions) else []
    erased = ["erased"] if any(session["erased_at"] for session in sessions) else []
    return [
        "session",
        "source",
        "model",
        *parent,
        "started",
        "last activity",
        "active",
        "stored",
        *rewound,
        "compactions",
        *erased,
    ]


def session_row(session: dict[str, Any], columns: Sequence[str]) -> Row:
    """A session's cells under `columns` (of `session_columns`)."""
    compactions = str(session["compactions_committed"])
    if session["compactions_failed"]:
        compactions += f" ({session['compactions_failed']} failed)"
    erased = session["erased_at"]
    cells = {
        "session": session["id"],
        "source": session["source"],
        "model": session["model"] or "",
        "parent": session["parent_id"] or "",
        "started": when(session["started_at"], seconds=False),
        "last activity": when(session["last_event_at"], seconds=False),
        "active": str(session["active"]),
        "stored": str(session["messages"]),
        "rewound": str(session["rewound"]),
        "compactions": compactions,
        "erased": when(erased, seconds=False) if erased else "",
    }
    return Row(tuple(cells[column] for column in columns))


def message_table(title: str, *columns: str, full: bool = False) -> Table:
    """A table of messages. Message ids are shown in full (`explain` takes them), folded
    when the terminal is narrow; the content column takes the rest of the width, its text
    on one line cut at the edge, or wrapped whole if `full`."""
    table = Table(title=title)
    for column in columns[:-1]:
        if column == "id":
            table.add_column(column, overflow="fold")
        else:
            table.add_column(column, no_wrap=True)
    table.add_column(columns[-1], ratio=1, overflow="fold" if full else "ellipsis")
    return table


def context_table(
    messages: Sequence[dict[str, Any]], title: str, first: int = 1, *, full: bool = False
) -> Table:
    """The active context: position (from `first`), id, role, content."""
    table = message_table(title, *CONTEXT_COLUMNS, full=full)
    rows = [context_row(n, message, full=full) for n, message in enumerate(messages, first)]
    add_rows(table, rows, cut=not full)
    table.caption = plural(len(messages), "message")
    return table


def timeline_table(
    items: Sequence[Item],
    title: str,
    compaction_versions: dict[str, int] | None = None,
    *,
    full: bool = False,
) -> Table:
    """Every message with its state; each compaction attempt and each rewind as a boundary
    row where it happened (see `timeline_row`). `compaction_versions`: of every attempt
    (else of the ones among the items)."""
    table = message_table(title, *TIMELINE_COLUMNS, full=full)
    versions = compaction_versions
    if versions is None:
        versions = {
            item.attempt["id"]: item.version for item in items if isinstance(item, Boundary)
        }
    add_rows(table, [timeline_row(item, versions, full=full) for item in items], cut=not full)
    return table


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def audit_table(attempts: Sequence[dict[str, Any]], *, with_sessions: bool) -> Table:
    """One row per attempt. `change` is -superseded +added; a failed attempt changed nothing,
    so what it would have changed is in parentheses. `tokens` is before→after and the saving.
    """
    table = Table(title="Compaction audit")
    if with_sessions:
        table.add_column("session", overflow="fold")
    table.add_column("compaction / at (UTC)", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("change", no_wrap=True)
    table.add_column("tokens", no_wrap=True)
    table.add_column("reason / failure: error", ratio=1)
    for attempt in attempts:
        explanation = attempt["reason"]
        if attempt["failure"]:
            failure = f"{attempt['failure']}: {attempt['error']}"
            explanation = f"{explanation}\n{failure}" if explanation else failure
        change = _change(attempt)
        before, after = attempt["tokens_before"], attempt["tokens_after"]
        tokens = "" if before is None and after is None else f"{_count(before)}→{_count(after)}"
        saved = tokens_saved(attempt)
        if saved is not None:
            tokens += f"\nsaved {saved}"
        table.add_row(
            *([attempt["session_id"]] if with_sessions else []),
            f"{short_id(attempt['id'])}\n{when(attempt['at'])}",
            attempt["status"],
            change,
            tokens,
            explanation,
            style="red" if attempt["status"] == "failed" else None,
        )
    return table


def _count(tokens: int | None) -> str:
    return "?" if tokens is None else str(tokens)


def _change(attempt: dict[str, Any]) -> str:
    """-superseded +added; for a failure, what it would have changed in parentheses, or
    "no replacement" when it proposed none (`proposed`, read from its event: None)."""
    superseded = len(attempt["superseded"])
    if attempt["status"] == "committed":
        return f"-{superseded} +{len(attempt['added'])}"
    proposed = attempt.get("proposed")
    return "no replacement" if proposed is None else f"(-{superseded} +{len(proposed)})"


def audit_summary(attempts: Sequence[dict[str, Any]]) -> str:
    committed = sum(attempt["status"] == "committed" for attempt in attempts)
    saved = sum(tokens_saved(attempt) or 0 for attempt in attempts)
    failed = len(attempts) - committed
    return (
        f"{plural(len(attempts), 'attempt')}: {committed} committed, {failed} failed; "
        f"{plural(saved, 'token')} saved."
    )


def hermes_report_table(reports: Sequence[Any], *, dry_run: bool) -> Table:
    """One row per imported Hermes session (`SessionReport`s): what was stored or repaired;
    Hermes' undos are rewinds, counted apart from the compactions."""
    title = "Hermes import (dry run: nothing written)" if dry_run else "Hermes import"
    table = Table(title=title)
    table.add_column("session", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("messages", justify="right")
    table.add_column("active", justify="right")
    table.add_column("compactions")
    table.add_column("rewinds", justify="right")
    table.add_column("dropped", justify="right")
    table.add_column("notes", ratio=1)
    for report in reports:
        compactions = str(report.compactions_committed)
        if report.compactions_failed:
            compactions += f" ({report.compactions_failed} failed)"
        table.add_row(
            report.session_id,
            report.status,
            str(report.messages),
            str(report.active),
            compactions,
            str(report.rewinds),
            str(report.duplicates_dropped),
            "\n".join(report.notes),
            style={"repaired": "yellow", "doubtful": "red"}.get(report.status),
        )
    return table


def hermes_summary(reports: Sequence[Any], *, dry_run: bool) -> str:
    counts = {
        status: sum(report.status == status for report in reports)
        for status in ("imported", "repaired", "unchanged", "doubtful")
    }
    if not counts["doubtful"]:
        del counts["doubtful"]
    text = f"{plural(len(reports), 'session')}: " + ", ".join(
        f"{count} {status}" for status, count in counts.items()
    )
    return text + (" (dry run: nothing was written)." if dry_run else ".")


def events_table(events: Sequence[dict[str, Any]], title: str) -> Table:
    table = make_table(title, *EVENT_COLUMNS)
    add_rows(table, [event_row(event) for event in events])
    return table


def explanation_lines(explained: dict[str, Any]) -> list[str]:
    """`store.explain()` in words."""
    added = explained["added"]
    if added["compaction_id"]:
        how = f"as a summary by compaction {added['compaction_id']}"
        if added["reason"]:
            how += f" ({added['reason']})"
    else:
        how = "by MessageAppended"
    superseded, rewound, restored = (
        explained["superseded"],
        explained["rewound"],
        explained["restored"],
    )
    if explained["active"]:
        in_context = f"yes, at position {explained['position']}"
    elif superseded is not None:
        in_context = (
            f"no: superseded by compaction {superseded['compaction_id']} "
            f"at version {superseded['version']}, {when(superseded['at'])} UTC"
        )
        if superseded["reason"]:
            in_context += f" ({superseded['reason']})"
    elif rewound is not None:
        in_context = f"no: rewound at version {rewound['version']}, {when(rewound['at'])} UTC"
        if rewound["reason"]:
            in_context += f" ({rewound['reason']})"
    else:
        in_context = "no"
    restore = (
        []
        if restored is None
        else [
            f"  restored:    by MessageAppended, at version {restored['version']}, "
            f"{when(restored['at'])} UTC"
        ]
    )
    return [
        f"Message {explained['message_id']} of session {explained['session_id']}",
        f"  role:        {explained['role']}",
        f"  added:       {how}, at version {added['version']}, {when(added['at'])} UTC",
        *restore,
        f"  in context:  {in_context}",
        f"  content:     {message_text(explained['message'])}",
    ]
