"""`transcripts message SESSION MESSAGE_ID`: one message in full, with its state and the tool
call or results it is paired with."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click

from ... import MessageNotFoundError, TranscriptStore
from .ids import unique_message_id
from .inert import echo
from .message_text import message_lines
from .render import to_json
from .render_read import explanation_lines
from .support import json_option, with_store


@click.command("message")
@click.argument("session_id", metavar="SESSION")
@click.argument("message_id")
@json_option
@with_store
def message(store: TranscriptStore, session_id: str, message_id: str, as_json: bool) -> None:
    """Show one message in full: its role, every part of its content, its tool calls with
    their arguments, the tool results answering them or the call it answers, its state
    (active, superseded by which compaction, rewound) and the version that stored it.

    MESSAGE_ID may be a unique start of the id. --json: the message as stored.

    Example: transcripts message 20260830_141200_d4e5f6 msg_3f2a
    """
    try:
        explained = store.explain(session_id, message_id)
    except MessageNotFoundError:
        explained = store.explain(session_id, unique_message_id(store, session_id, message_id))
    if as_json:
        click.echo(to_json(explained["message"]))
        return
    for line in explanation_lines(explained)[:-1]:  # all but its content's snippet
        echo(line)
    for line in message_lines(explained["message"], header=False):
        echo("  " + line)
    for line in _pairing(store, session_id, explained["message"]):
        echo(line)


def _pairing(store: TranscriptStore, session_id: str, stored: dict[str, Any]) -> Iterator[str]:
    """The tool results answering the message's calls, or the call it answers, with their
    state (read from the history: only for a message making or answering a call)."""
    calls = [call.get("id") for call in stored.get("tool_calls") or [] if isinstance(call, dict)]
    answered = stored.get("tool_call_id")
    if not calls and answered is None:
        return
    found: dict[str, list[str]] = {call: [] for call in calls}
    making: list[str] = []
    for entry in store.iter_history(session_id):
        other = entry["message"]
        if other.get("tool_call_id") in found:
            found[other["tool_call_id"]].append(f"{entry['id']} ({_state(entry)})")
        made = [c.get("id") for c in other.get("tool_calls") or [] if isinstance(c, dict)]
        if answered is not None and answered in made:
            making.append(f"{entry['id']} ({_state(entry)})")
    for call, results in found.items():
        yield f"  call {call}: " + (
            f"answered by {', '.join(results)}" if results else "no result stored"
        )
    if answered is not None:
        yield f"  answers call {answered}, " + (
            f"made by {', '.join(making)}" if making else "whose call is not stored"
        )


def _state(entry: dict[str, Any]) -> str:
    if entry["superseded_by"]:
        return f"superseded by {entry['superseded_by']}"
    return "rewound" if entry["rewound"] else "active"
