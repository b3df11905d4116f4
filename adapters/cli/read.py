"""Read commands: info, sessions, audit, explain (and, from `session_reads`, show, history,
events)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

import click

from ... import MessageNotFoundError, TranscriptStore
from ..exporters.timeline import tokens_saved
from .ids import unique_attempt_id, unique_message_id
from .inert import echo
from .render import status_table, to_json
from .render_audit import attempt_lines
from .render_read import (
    audit_summary,
    audit_table,
    explanation_lines,
    session_columns,
    session_row,
    sessions_table,
)
from .session_reads import events, history, show
from .streaming import echo_json, is_pipe, jsonl_option, plain_lines
from .support import console, json_option, parse_since, with_store


@click.command()
@json_option
@with_store
def info(store: TranscriptStore, as_json: bool) -> None:
    """Show the store's backend and URL, what it holds, and the state of its views.

    Example: transcripts info
    """
    sessions = store.sessions()
    location = store.config.location
    path = location.path
    summary: dict[str, Any] = {
        "url": store.config.url,  # without a password
        "backend": location.kind,
        "path": None if path is None else str(path.resolve()),
        "encrypted": store.config.cipher_key is not None,
        "sessions": len(sessions),
        "messages": sum(session["messages"] for session in sessions),
        "active": sum(session["active"] for session in sessions),
        "rewound": sum(session["rewound"] for session in sessions),
        "compactions_committed": sum(session["compactions_committed"] for session in sessions),
        "compactions_failed": sum(session["compactions_failed"] for session in sessions),
        "events": sum(1 if s["erased_at"] else s["version"] for s in sessions),  # a tombstone
        "erased": sum(session["erased_at"] is not None for session in sessions),
        "durability": store.durability_settings(),
    }
    statuses = store.projection_status()
    if as_json:
        projections = [{**asdict(status), "lag": status.lag} for status in statuses]
        click.echo(to_json({**summary, "projections": projections}))
        return
    backend = summary["backend"] + (f", file {summary['path']}" if path is not None else "")
    backend += ", encrypted (AES-GCM)" if summary["encrypted"] else ""
    click.echo(f"Store:        {summary['url']}")
    click.echo(f"Backend:      {backend}")
    durability = dict(summary["durability"])
    level = durability.pop("durability")
    reported = ", ".join(f"{name}={value}" for name, value in durability.items())
    click.echo(f"Durability:   {level} ({reported})")
    erased = f" ({summary['erased']} erased)" if summary["erased"] else ""
    click.echo(f"Sessions:     {summary['sessions']}{erased}")
    rewound = f", {summary['rewound']} rewound" if summary["rewound"] else ""
    click.echo(f"Messages:     {summary['messages']} stored, {summary['active']} active{rewound}")
    click.echo(
        f"Compactions:  {summary['compactions_committed']} committed, "
        f"{summary['compactions_failed']} failed"
    )
    click.echo(f"Events:       {summary['events']}")
    console().print(status_table(statuses))


@click.command()
@click.option(
    "--source", help="Only sessions from this source (jsonl, api, a Hermes platform such as cli)."
)
@click.option("--model", help="Only sessions of this model.")
@click.option(
    "--since",
    callback=parse_since,
    metavar="WHEN",
    help="Only sessions started at or after WHEN: a date or an ISO datetime (UTC unless "
    "it has an offset).",
)
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    metavar="N",
    help="Only the N most recently active.",
)
@json_option
@with_store
def sessions(
    store: TranscriptStore,
    source: str | None,
    model: str | None,
    since: datetime | None,
    limit: int | None,
    as_json: bool,
) -> None:
    """List sessions by last activity, the most recent last, with their message and
    compaction counts.

    Example: transcripts sessions --source telegram --since 2026-03-01 -n 20
    """
    found = [
        session
        for session in store.sessions()
        if (source is None or session["source"] == source)
        and (model is None or session["model"] == model)
        and (since is None or session["started_at"] >= since)
    ]
    found.sort(key=lambda session: session["last_event_at"])  # stable: then by start
    if limit is not None:
        found = found[-limit:]
    if as_json:
        click.echo(to_json(found))
    elif not found:
        click.echo("No sessions.")
    elif is_pipe(output := console()):
        columns = session_columns(found)
        for line in plain_lines(columns, (session_row(each, columns) for each in found)):
            click.echo(line, nl=False)
    else:
        output.print(sessions_table(found))


@click.command()
@click.argument("session_id", metavar="[SESSION]", required=False)
@click.argument("attempt_id", metavar="[ATTEMPT_ID]", required=False)
@click.option("--failed", is_flag=True, help="Only the failed attempts.")
@json_option
@jsonl_option
@with_store
def audit(
    store: TranscriptStore,
    session_id: str | None,
    attempt_id: str | None,
    failed: bool,
    as_json: bool,
    as_jsonl: bool,
) -> None:
    """List compaction attempts, committed and failed: what they changed, why, tokens saved.

    Without SESSION, the attempts of every session (erased sessions have none). With
    ATTEMPT_ID (or a unique start of it), that attempt whole: what it superseded, the
    replacement it proposed, its error and the summarizer's traceback.

    Example: transcripts audit --failed
    """
    if session_id is not None and attempt_id is not None:
        whole = store.compaction(session_id, unique_attempt_id(store, session_id, attempt_id))
        if as_jsonl:
            echo_json([whole], lines=True)
        elif as_json:
            click.echo(to_json(whole))
        else:
            for line in attempt_lines(whole):
                echo(line)
        return
    session_ids = (
        [session_id]
        if session_id
        else [s["id"] for s in store.sessions() if s["erased_at"] is None]
    )
    attempts = [
        {"session_id": each, **attempt, "tokens_saved": tokens_saved(attempt)}
        for each in session_ids
        for attempt in store.compactions(each)
        if not failed or attempt["status"] == "failed"
    ]
    if as_jsonl:
        echo_json(attempts, lines=True)
    elif as_json:
        click.echo(to_json(attempts))
    elif not attempts:
        click.echo("No failed compaction attempts." if failed else "No compaction attempts.")
    else:
        for attempt in attempts:  # what a failure proposed is in its event, in the log
            if attempt["status"] == "failed":
                whole = store.compaction(attempt["session_id"], attempt["id"])
                attempt["proposed"] = whole["proposed"]
        console().print(audit_table(attempts, with_sessions=session_id is None))
        click.echo(audit_summary(attempts))


@click.command()
@click.argument("session_id", metavar="SESSION")
@click.argument("message_id")
@json_option
@with_store
def explain(store: TranscriptStore, session_id: str, message_id: str, as_json: bool) -> None:
    """Explain why a message is (or is not) in the active context: who added, superseded,
    rewound or restored it.

    MESSAGE_ID may be a unique start of the id (`msg_3f2a` for `msg_3f2a…`).

    Example: transcripts explain 20260830_141200_d4e5f6 hermes-20260830_141200_d4e5f6-60
    """
    try:
        explained = store.explain(session_id, message_id)
    except MessageNotFoundError:
        explained = store.explain(session_id, unique_message_id(store, session_id, message_id))
    if as_json:
        click.echo(to_json(explained))
    else:
        for line in explanation_lines(explained):
            echo(line)


COMMANDS = [info, sessions, show, history, audit, events, explain]
