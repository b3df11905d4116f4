"""A session as Markdown, for people: its messages, and its compactions as boundaries.

The active context shows the boundary of each compaction whose summary it holds, right
before that summary; the history shows every message ever stored (superseded, rewound and
restored ones marked), every compaction attempt, committed or failed, and every rewind,
where it happened.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from ... import TranscriptStore
from .streamed_timeline import streamed_timeline
from .timeline import Boundary, Item, Rewind, boundary_text, rewind_text, when


def session_markdown(store: TranscriptStore, session_id: str, *, history: bool = False) -> str:
    """The whole document (raises SessionNotFoundError for an unknown session)."""
    return "".join(markdown_chunks(store, session_id, history=history))


def markdown_chunks(
    store: TranscriptStore, session_id: str, *, history: bool = False, as_of: int | None = None
) -> Iterator[str]:
    """The document of `session_markdown` in pieces, read from the store as they are
    written: a page of messages in memory, whatever the session's length. The session is
    read by the call (an unknown or erased one raises here). `as_of`: the active context
    right after that version (`active_at`), with the compactions up to it."""
    messages: Iterable[dict[str, Any]]
    if history:
        items: Iterator[Item] = streamed_timeline(store, session_id)
    elif as_of is None:
        messages = store.iter_active(session_id)
        attempts = store.compactions(session_id)
    else:
        messages = store.active_at(session_id, as_of)
        attempts = [a for a in store.compactions(session_id) if a["version"] <= as_of]
    session = next(s for s in store.sessions() if s["id"] == session_id)

    def lines() -> Iterator[str]:
        yield from [f"# Session {session_id}", "", *_facts(session), ""]
        if history:
            yield from ["## History", ""]
            yield from _history(items)
        else:
            at = "" if as_of is None else f" at version {as_of}"
            yield from [f"## Active context{at}", ""]
            yield from _active(messages, attempts)

    return _document(lines())


def _document(lines: Iterable[str]) -> Iterator[str]:
    """`"\n".join(lines).rstrip("\n") + "\n"`, in pieces: newlines are held back until
    text follows them."""
    held, first = "", True
    for line in lines:
        text = held + (line if first else "\n" + line)
        first = False
        kept = text.rstrip("\n")
        held = text[len(kept) :]
        if kept:
            yield kept
    yield "\n"


def _facts(session: dict[str, Any]) -> list[str]:
    facts = [f"- source: {session['source']}"]
    if session["model"]:
        facts.append(f"- model: {session['model']}")
    if session["parent_id"]:
        facts.append(f"- parent session: {session['parent_id']}")
    facts.append(f"- started: {when(session['started_at'])} UTC")
    facts.append(f"- messages: {session['active']} active, {session['messages']} stored")
    facts.append(
        f"- compactions: {session['compactions_committed']} committed, "
        f"{session['compactions_failed']} failed"
    )
    return facts


def _active(messages: Iterable[dict[str, Any]], attempts: list[dict[str, Any]]) -> Iterator[str]:
    boundaries = {attempt["id"]: Boundary(attempt) for attempt in attempts}
    added_by = {  # the summaries each committed compaction added
        message_id: attempt["id"]
        for attempt in attempts
        if attempt["status"] == "committed"
        for message_id in attempt["added"]
    }
    shown: set[str] = set()
    for position, message in enumerate(messages, 1):
        compaction = added_by.get(message["id"])
        if compaction in boundaries and compaction not in shown:
            shown.add(compaction)
            yield from _boundary(boundaries[compaction])
        yield from _message(position, message, note="summary" if compaction else None)


def _history(items: Iterable[Item]) -> Iterator[str]:
    number = 0
    for item in items:
        if isinstance(item, Boundary):
            yield from _boundary(item)
            continue
        if isinstance(item, Rewind):
            yield from _rewind(item)
            continue
        number += 1
        entry = item.history
        if entry["superseded_by"]:
            note = f"superseded by `{entry['superseded_by']}`"
        elif entry["rewound"]:
            note = f"rewound at version {item.rewound_version}"
        elif entry["added_by"]:
            note = "summary"
        else:
            note = None
        if item.restored_version is not None and not entry["rewound"]:
            note = ", ".join(filter(None, [note, f"restored at version {item.restored_version}"]))
        yield from _message(number, entry["message"], note=note)


def _boundary(boundary: Boundary) -> Iterator[str]:
    attempt = boundary.attempt
    title = "Compaction" if attempt["status"] == "committed" else "Failed compaction"
    yield "---"
    yield ""
    yield (
        f"> **{title} `{attempt['id']}`** at version {boundary.version}, "
        f"{when(attempt['at'])} UTC: {boundary_text(attempt)}"
    )
    yield ""


def _rewind(rewind: Rewind) -> Iterator[str]:
    yield "---"
    yield ""
    yield f"> **Rewind** at version {rewind.version}, {when(rewind.at)} UTC: {rewind_text(rewind)}"
    yield ""


def _message(number: int, message: dict[str, Any], *, note: str | None) -> Iterator[str]:
    heading = f"### {number}. {message['role']} · `{message['id']}`"
    if message.get("tool_call_id"):
        heading += f" · result of `{message['tool_call_id']}`"
    if note:
        heading += f" · {note}"
    yield heading
    yield ""
    text = _content(message.get("content"))
    if text:
        yield text
        yield ""
    for call in message.get("tool_calls") or []:
        yield from _tool_call(call)


def _content(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                parts.append(_json_block(part))
        return "\n\n".join(parts)
    return _json_block(content)


def _tool_call(call: object) -> Iterator[str]:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        yield _json_block(call)
        yield ""
        return
    yield f"Tool call `{function.get('name', '?')}` (`{call.get('id', '')}`):"
    yield ""
    arguments = function.get("arguments")
    yield _json_block(arguments if not isinstance(arguments, str) else _decoded(arguments))
    yield ""


def _decoded(arguments: str) -> object:
    try:
        return orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return arguments


def _json_block(value: object) -> str:
    text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    return f"```json\n{text}\n```"
