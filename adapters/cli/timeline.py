"""`transcripts timeline SESSION`: the story of a session's context in a few lines — its
size over the versions as a bar chart, the marks under it (✂ committed, ✗ failed,
↶ rewound, ↷ restored), then one line per mark. The points and marks are the web app's
(`adapters.web.context_timeline`), read the same way: never the session's messages."""

from __future__ import annotations

import click
from rich.text import Text

from ... import SessionNotFoundError, TranscriptStore
from ..web.context_timeline import (
    COMMITTED,
    FAILED,
    REWOUND,
    ContextTimeline,
    Mark,
    read_timeline,
)
from .inert import inert
from .support import console, with_store

BLOCKS = " ▁▂▃▄▅▆▇█"
GUTTER = 9  # the axis labels' column
STYLES = {COMMITTED: "green", FAILED: "bold red", REWOUND: "yellow"}
PRIORITY = [FAILED, COMMITTED, REWOUND]  # the mark a column shows when it holds several


@click.command()
@click.argument("session_id", metavar="SESSION")
@click.option(
    "--height",
    type=click.IntRange(1, 40),
    default=5,
    show_default=True,
    help="Rows of the chart.",
)
@with_store
def timeline(store: TranscriptStore, session_id: str, height: int) -> None:
    """Show how a session's context grew and shrank: a chart of its size over the
    session's versions with a mark at every compaction (✂ committed, ✗ failed), rewind (↶)
    and restore (↷), then one line per mark.

    Example: transcripts timeline 20260830_141200_d4e5f6
    """
    session = next((s for s in store.sessions() if s["id"] == session_id), None)
    if session is None:
        raise SessionNotFoundError(session_id)
    out = console()
    width = max(out.width - GUTTER, 20)
    for line in timeline_lines(read_timeline(store, session_id, session), width, height):
        out.print(line, soft_wrap=True)


def timeline_lines(story: ContextTimeline, width: int, height: int) -> list[Text]:
    """The chart (`height` rows over `width` columns), its marks and axis, then the marks'
    lines. Every text from the store is made safe for a terminal (`inert`)."""
    columns = min(width, story.head)
    spans = [_span(story.head, columns, column) for column in range(columns)]
    sizes = [max(_sizes(story, low, high)) for low, high in spans]
    top = max(story.largest, 1)
    lines = [
        Text(f"Context of {inert(story.session_id)}: ", style="bold")
        + Text(
            f"{story.size:,} messages at version {story.head:,} (at most {story.largest:,}); "
            f"{_counts(story)}"
        )
    ]
    for row in reversed(range(height)):
        label = f"{story.largest:,}" if row == height - 1 else "0" if row == 0 else ""
        bars = "".join(BLOCKS[min(max(round(s / top * height * 8) - row * 8, 0), 8)] for s in sizes)
        lines.append(Text(f"{label:>{GUTTER - 2}} │") + Text(bars, style="cyan"))
    marks_row = Text(" " * (GUTTER - 1))
    for low, high in spans:
        inside = [m for m in story.marks if low <= m.version <= high]
        mark = _first(inside)
        marks_row += Text(mark.symbol, style=STYLES.get(mark.type, "magenta")) if mark else " "
    lines.append(marks_row)
    last = f"v{story.head:,}"
    gap = max(columns - 2 - len(last), 1)
    lines.append(Text(" " * (GUTTER - 1) + "v1" + " " * gap + last, style="dim"))
    for mark in story.marks:
        lines.append(mark_line(mark))
    return lines


def mark_line(mark: Mark) -> Text:
    style = STYLES.get(mark.type, "magenta")
    return (
        Text(f"{mark.symbol} v{mark.version:<8,}", style=style)
        + Text(f"{mark.type:<20}", style=style)
        + Text(f"{mark.before:>6,} → {mark.after:<6,} ")
        + Text(inert(mark.summary))
    )


def _span(head: int, columns: int, column: int) -> tuple[int, int]:
    """The versions a column covers."""
    low = 1 + column * head // columns
    high = (column + 1) * head // columns
    return low, max(low, high)


def _sizes(story: ContextTimeline, low: int, high: int) -> list[int]:
    inside = [point.version for point in story.points if low <= point.version <= high]
    return [story.size_at(version) for version in {low, high, *inside}]


def _first(marks: list[Mark]) -> Mark | None:
    for kind in PRIORITY:
        for mark in marks:
            if mark.type == kind:
                return mark
    return marks[0] if marks else None


def _counts(story: ContextTimeline) -> str:
    counts = story.counts()
    names = {COMMITTED: "committed", FAILED: "failed", REWOUND: "rewound"}
    parts = [f"{counts[kind]} {name}" for kind, name in names.items()]
    return ", ".join(parts) + f", {counts['Restored']} restored"
