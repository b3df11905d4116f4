"""The read commands that print a whole session as they read it: show, history, events.

They read the store a page at a time (`iter_active`, `iter_history`, `iter_events`, the
streamed timeline) and print a chunk of rows at a time (`streaming`): memory and the time
to the first line do not grow with the session. `--limit N` / `--tail N` keep the first or
the last N messages, reading only those.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Iterator
from typing import Any

import click

from ... import TranscriptError, TranscriptStore
from ..exporters.streamed_timeline import streamed_timeline
from ..exporters.timeline import Boundary, Entry, Item
from .render_read import context_table, events_table, plural, timeline_table
from .streaming import echo_json, jsonl_option, print_table
from .support import console, json_option, with_store
from .table_rows import (
    CONTEXT_COLUMNS,
    EVENT_COLUMNS,
    TIMELINE_COLUMNS,
    TYPE_WIDTH,
    context_row,
    event_row,
    timeline_row,
)

limit_option = click.option(
    "--limit", type=click.IntRange(min=0), metavar="N", help="Only the first N messages."
)
tail_option = click.option(
    "--tail", type=click.IntRange(min=0), metavar="N", help="Only the last N messages."
)


EVENT_TYPES = (  # as `events()` names them
    "Started",
    "MessageAppended",
    "CompactionCommitted",
    "CompactionFailed",
    "Rewound",
    "StateChanged",
    "Erased",
)
full_option = click.option(
    "--full",
    is_flag=True,
    help="Each message whole: its content wrapped, line breaks kept (else on one line, cut "
    "at the terminal's edge).",
)


def one_window(limit: int | None, tail: int | None) -> None:
    if limit is not None and tail is not None:
        raise click.UsageError("give --limit or --tail, not both")


@click.command()
@click.argument("session_id", metavar="SESSION")
@click.option(
    "--as-of",
    "as_of",
    type=click.IntRange(min=1),
    metavar="VERSION",
    help="The active context right after event VERSION of the session (see `events`).",
)
@limit_option
@tail_option
@full_option
@json_option
@jsonl_option
@with_store
def show(
    store: TranscriptStore,
    session_id: str,
    as_of: int | None,
    limit: int | None,
    tail: int | None,
    full: bool,
    as_json: bool,
    as_jsonl: bool,
) -> None:
    """Show the active context of a session: the messages a model would see, in order.

    Each message's content is on one line, cut at the terminal's edge; --full shows it
    whole. In a pipe: a header line, then one line a message, tab-separated, nothing cut.

    Example: transcripts show 20260830_141200_d4e5f6 --as-of 12 --tail 20
    """
    one_window(limit, tail)
    if as_of is not None:
        check_version(store, session_id, as_of)
    if as_of is None:
        messages: Iterable[dict[str, Any]] = store.iter_active(session_id, limit=limit, tail=tail)
        total = _summary(store, session_id)["active"]
        title = f"Active context of {session_id}"
    else:
        listed = store.active_at(session_id, as_of)  # a fold of the log up to the version
        total = len(listed)
        messages = listed[:limit] if tail is None else listed[max(total - tail, 0) :]
        title = f"Active context of {session_id} at version {as_of}"
    if as_json or as_jsonl:
        echo_json(messages, lines=as_jsonl)
        return
    first = 1 if tail is None else max(total - tail, 0) + 1
    shown = Counter[str]()
    print_table(
        console(),
        _counted(enumerate(messages, first), shown, lambda _: "message"),
        whole=lambda few: context_table([m for _, m in few], title, first, full=full),
        row=lambda numbered: context_row(*numbered, full=full),
        title=title,
        columns=CONTEXT_COLUMNS,
        min_widths=(len(str(max(total, 1))),),
        caption=lambda: plural(shown["message"], "message"),
        full=full,
    )


@click.command()
@click.argument("session_id", metavar="SESSION")
@limit_option
@tail_option
@full_option
@json_option
@jsonl_option
@with_store
def history(
    store: TranscriptStore,
    session_id: str,
    limit: int | None,
    tail: int | None,
    full: bool,
    as_json: bool,
    as_jsonl: bool,
) -> None:
    """Show every message ever stored, superseded and rewound ones too, with each compaction
    and each rewind where it happened.

    Rows: the event version (v), the message id, its role, its state (active, active summary,
    superseded by a compaction, rewound by a rewind; restored if appended again after a
    rewind) and its content; each compaction attempt and each rewind is a boundary row
    between the messages stored before and after it. --limit / --tail: the first or last N
    messages, with the compactions and rewinds between them. Content is on one line, cut at
    the terminal's edge; --full shows it whole. In a pipe: a header line, then one line a
    row, tab-separated, nothing cut.

    Example: transcripts history 20260830_141200_d4e5f6 --tail 50
    """
    one_window(limit, tail)
    if as_json or as_jsonl:
        entries = store.iter_history(session_id, versions=True, limit=limit, tail=tail)
        echo_json((_history_json(entry) for entry in entries), lines=as_jsonl)
        return
    items = streamed_timeline(store, session_id, limit=limit, tail=tail)
    versions = {attempt["id"]: attempt["version"] for attempt in store.compactions(session_id)}
    version = _summary(store, session_id)["version"]
    shown = Counter[str]()
    print_table(
        console(),
        _counted(items, shown, _kind),
        whole=lambda few: timeline_table(
            few, f"History of {session_id} ({_counts(_tally(few))})", versions, full=full
        ),
        row=lambda item: timeline_row(item, versions, full=full),
        title=f"History of {session_id}",
        columns=TIMELINE_COLUMNS,
        min_widths=(len(str(version)),),
        caption=lambda: _counts(shown),
        full=full,
    )


@click.command()
@click.argument("session_id", metavar="SESSION")
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(EVENT_TYPES),
    metavar="TYPE",
    help=f"Only events of this type ({', '.join(EVENT_TYPES)}); repeatable.",
)
@click.option(
    "--after", type=click.IntRange(min=0), default=0, metavar="V", help="Only after version V."
)
@click.option(
    "--until", type=click.IntRange(min=0), metavar="V", help="Only up to version V (included)."
)
@click.option(
    "--tail", type=click.IntRange(min=0), metavar="N", help="Only the last N (of those chosen)."
)
@json_option
@jsonl_option
@with_store
def events(
    store: TranscriptStore,
    session_id: str,
    types: tuple[str, ...],
    after: int,
    until: int | None,
    tail: int | None,
    as_json: bool,
    as_jsonl: bool,
) -> None:
    """Show the raw event log of a session, one event per version.

    Example: transcripts events 20260830_141200_d4e5f6 --type CompactionFailed --tail 5
    """
    log = store.iter_events(session_id, types=types or None, after=after, until=until)
    if tail is not None:
        log = iter(deque(log, maxlen=tail))
    if as_json or as_jsonl:
        echo_json(log, lines=as_jsonl)
        return
    title = f"Events of {session_id}"
    print_table(
        console(),
        log,
        whole=lambda few: events_table(few, title),
        row=event_row,
        title=title,
        columns=EVENT_COLUMNS,
        min_widths=(len(str(_summary(store, session_id)["version"])), 19, TYPE_WIDTH),
    )


def check_version(store: TranscriptStore, session_id: str, version: int) -> None:
    """A version past the session's last is an error naming the last one."""
    last = store.version(session_id)
    if version > last:
        raise TranscriptError(
            f"session {session_id!r} has versions 1 to {last}: there is no version {version}"
        )


def _history_json(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry as `history --json` prints it: the library's, and the version storing it."""
    del entry["rewound_version"], entry["restored_version"]
    entry["version"] = entry.pop("version")  # last, as always
    return entry


def _summary(store: TranscriptStore, session_id: str) -> dict[str, Any]:
    return next(s for s in store.sessions() if s["id"] == session_id)


def _kind(item: Item) -> str:
    if isinstance(item, Entry):
        return "message"
    return "compaction attempt" if isinstance(item, Boundary) else "rewind"


def _counted(items: Iterable[Any], tally: Counter[str], kind: Any) -> Iterator[Any]:
    """`items`, counted by `kind(item)` into `tally` as they go by."""
    for item in items:
        tally[kind(item)] += 1
        yield item


def _tally(items: list[Item]) -> Counter[str]:
    return Counter(_kind(item) for item in items)


def _counts(tally: Counter[str]) -> str:
    text = f"{plural(tally['message'], 'message')}, "
    text += plural(tally["compaction attempt"], "compaction attempt")
    return text + (f", {plural(tally['rewind'], 'rewind')}" if tally["rewind"] else "")
