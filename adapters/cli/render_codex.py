"""`import codex`'s report for people: a row per rollout, its notes, a summary line."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich import box
from rich.table import Table
from rich.text import Text

from ..importers.codex import SessionReport
from .inert import inert
from .render import short_id
from .render_read import plural

_STYLES = {"doubtful": "yellow", "diverged": "red", "unreadable": "red"}
STATUSES = ("imported", "unchanged", "doubtful", "diverged", "unreadable")


def codex_report_table(reports: Sequence[SessionReport], *, dry_run: bool) -> Table:
    """One row per rollout: its session, status and what it holds once imported (rollout
    text is shown as text, never read as markup)."""
    title = "Codex import (dry run: nothing written)" if dry_run else "Codex import"
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("session", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("messages", justify="right")
    table.add_column("active", justify="right")
    table.add_column("compactions")
    for report in reports:
        compactions = str(report.compactions_committed)
        if report.compactions_failed:
            compactions += f" +{report.compactions_failed} failed"
        table.add_row(
            Text(inert(report.session_id or report.path)),
            report.status,
            str(report.messages),
            str(report.active),
            compactions,
            style=_STYLES.get(report.status),
        )
    return table


def codex_notes(reports: Sequence[SessionReport]) -> Iterator[Text]:
    """Each note of each report, after the session (or file) it is about."""
    for report in reports:
        about = short_id(report.session_id) if report.session_id else report.path
        for note in report.notes:
            yield Text(inert(f"{about}: {note}"), style=_STYLES.get(report.status))


def codex_summary(reports: Sequence[SessionReport], *, dry_run: bool) -> str:
    counts = {status: sum(r.status == status for r in reports) for status in STATUSES}
    shown = [
        f"{count} {status}"
        for status, count in counts.items()
        if count or status in ("imported", "unchanged")
    ]
    text = f"{plural(len(reports), 'rollout')}: " + ", ".join(shown)
    return text + (" (dry run: nothing was written)." if dry_run else ".")
