"""`transcripts search`: full-text search over every message ever stored."""

from __future__ import annotations

import click
from rich.text import Text

from ... import TranscriptStore
from .inert import inert
from .render import make_table, short_id, to_json
from .support import console, json_option, with_store


@click.command()
@click.argument("query")
@click.option("--session", "session_id", metavar="SESSION", help="Only this session.")
@click.option("--role", help="Only messages of this role (user, assistant, tool, …).")
@click.option("--active-only", is_flag=True, help="Only messages in the active context.")
@click.option("-n", "--limit", default=20, show_default=True, help="At most this many hits.")
@json_option
@with_store
def search(
    store: TranscriptStore,
    query: str,
    session_id: str | None,
    role: str | None,
    active_only: bool,
    limit: int,
    as_json: bool,
) -> None:
    """Search every message ever stored, superseded ones included, best match first.

    QUERY: words (matched by their stem), "exact phrases", AND / OR / NOT; on SQLite
    also prefix* and NEAR(a b) (FTS5 syntax), on PostgreSQL -word (web-search syntax).

    Example: transcripts search 'lisbon AND weather' --role assistant
    """
    hits = store.search(
        query, session_id=session_id, role=role, active_only=active_only, limit=limit
    )
    if as_json:
        click.echo(to_json(hits))
        return
    table = make_table(
        f"{len(hits)} matches for {query!r}", "session", "message", "role", "active", "snippet"
    )
    for hit in hits:
        table.add_row(
            short_id(hit["session_id"]),
            short_id(hit["message_id"]),
            hit["role"],
            "yes" if hit["active"] else "no",
            highlighted(hit["snippet"]),
        )
    console().print(table)


def highlighted(snippet: str) -> Text:
    """The snippet with its «matches» in bold."""
    text = Text()
    for index, part in enumerate(snippet.replace("»", "«").split("«")):
        text.append(inert(part), style="bold" if index % 2 else None)
    return text
