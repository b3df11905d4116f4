"""`transcripts search`: full-text search over every message ever stored."""

from __future__ import annotations

from typing import Any

import click
from rich.text import Text

from ... import TranscriptStore
from .inert import inert
from .render import make_table, short_id
from .streaming import echo_json, is_pipe, jsonl_option, plain_lines
from .support import console, json_option, with_store
from .table_rows import Row


@click.command()
@click.argument("query")
@click.option("--session", "session_id", metavar="SESSION", help="Only this session.")
@click.option("--role", help="Only messages of this role (user, assistant, tool, …).")
@click.option("--active-only", is_flag=True, help="Only messages in the active context.")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="At most this many hits.",
)
@json_option
@jsonl_option
@with_store
def search(
    store: TranscriptStore,
    query: str,
    session_id: str | None,
    role: str | None,
    active_only: bool,
    limit: int,
    as_json: bool,
    as_jsonl: bool,
) -> None:
    """Search every message ever stored, superseded ones included, best match first.

    QUERY: words (matched by their stem), "exact phrases", AND / OR / NOT; on SQLite
    also prefix* and NEAR(a b) (FTS5 syntax), on PostgreSQL -word (web-search syntax).

    Prints "no matches" when none (exit 0), and "showing N of more" when there are more
    than N. In a pipe: a header line, then one tab-separated line a hit (the count on
    stderr).

    Example: transcripts search 'lisbon AND weather' --role assistant
    """
    hits = store.search(
        query, session_id=session_id, role=role, active_only=active_only, limit=limit + 1
    )
    more = len(hits) > limit
    hits = hits[:limit]
    if as_json or as_jsonl:
        echo_json(hits, lines=as_jsonl)
        return
    if not hits:
        click.echo(f"No matches for {query!r}.")
        return
    title = f"{len(hits)} {'match' if len(hits) == 1 else 'matches'} for {query!r}"
    if more:
        title = f"Showing {len(hits)} of more matches for {query!r} (-n to show more)"
    output = console()
    if is_pipe(output):  # one line a hit, ids whole; the count on stderr
        rows = (
            Row((hit["session_id"], hit["message_id"], hit["role"], _yes(hit), hit["snippet"]))
            for hit in hits
        )
        for line in plain_lines(COLUMNS, rows):
            click.echo(line, nl=False)
        click.echo(inert(title), err=True)
        return
    table = make_table(title, *COLUMNS)
    for hit in hits:
        table.add_row(
            short_id(hit["session_id"]),
            short_id(hit["message_id"]),
            hit["role"],
            _yes(hit),
            highlighted(hit["snippet"]),
        )
    output.print(table)


COLUMNS = ("session", "message", "role", "active", "snippet")


def _yes(hit: dict[str, Any]) -> str:
    return "yes" if hit["active"] else "no"


def highlighted(snippet: str) -> Text:
    """The snippet with its «matches» in bold."""
    text = Text()
    for index, part in enumerate(snippet.replace("»", "«").split("«")):
        text.append(inert(part), style="bold" if index % 2 else None)
    return text
