"""`import claude-code`'s report for people: a row per session, its notes, a summary line."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich import box
from rich.table import Table
from rich.text import Text

from ..importers.claude_code import SessionReport
from .render import short_id
from .render_read import plural

_STYLES = {"diverged": "red"}
STATUSES = ("imported", "unchanged", "diverged")


def claude_code_report_table(reports: Sequence[SessionReport], *, dry_run: bool) -> Table:
    """One row per session file (file text shown as text, never read as markup)."""
    title = "Claude Code import (dry run: nothing written)" if dry_run else "Claude Code import"
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for name in ("session", "status", "messages", "active", "compactions", "duplicates"):
        justify = "right" if name in ("messages", "active", "duplicates") else "left"
        table.add_column(name, justify=justify, no_wrap=name in ("session", "status"))
    for report in reports:
        compactions = str(report.compactions_committed)
        if report.compactions_failed:
            compactions += f" +{report.compactions_failed} failed"
        table.add_row(
            Text(_label(report)),
            report.status,
            str(report.messages),
            str(report.active),
            compactions,
            str(report.duplicates_dropped),
            style=_STYLES.get(report.status),
        )
    return table


def _label(report: SessionReport) -> str:
    """A session's id; a subagent's as `└ agent-<id>` under its session's row."""
    if report.parent_id and report.session_id.startswith(f"{report.parent_id}:"):
        return "└ " + report.session_id.rsplit("/", 1)[-1]
    return report.session_id


def claude_code_notes(reports: Sequence[SessionReport]) -> Iterator[Text]:
    for report in reports:
        for note in report.notes:
            yield Text(f"{short_id(report.session_id)}: {note}", style=_STYLES.get(report.status))


def claude_code_summary(reports: Sequence[SessionReport], *, dry_run: bool) -> str:
    counts = {status: sum(r.status == status for r in reports) for status in STATUSES}
    shown = [f"{n} {status}" for status, n in counts.items() if n or status != "diverged"]
    text = f"{plural(len(reports), 'session')}: " + ", ".join(shown)
    return text + (" (dry run: nothing was written)." if dry_run else ".")
