"""One compaction attempt whole, for people (`transcripts audit SESSION ATTEMPT_ID`): what
it superseded or would have, the replacement it proposed (or that there was none), the
failure and the summarizer's traceback. Stored text is made inert where it is printed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..exporters.timeline import tokens_saved, when
from .message_text import message_lines

INDENT = "    "


def attempt_lines(attempt: dict[str, Any]) -> Iterator[str]:
    """`store.compaction()` in words."""
    committed = attempt["status"] == "committed"
    status = "committed" if committed else f"failed ({attempt['failure']})"
    yield f"Compaction attempt {attempt['id']} of session {attempt['session_id']}"
    yield _line("status", status)
    at = f"{when(attempt['at'])} UTC, version {attempt['version']}"
    yield _line("at", f"{at} (begun at version {attempt['based_on_version']})")
    if attempt["reason"]:
        yield _line("reason", attempt["reason"])
    yield _line("tokens", _tokens(attempt))
    superseded = ", ".join(attempt["superseded"]) or "none"
    yield _line("superseded" if committed else "would supersede", superseded)
    if committed:
        yield _line("added", ", ".join(attempt["added"]) or "none")
    yield from _proposed(attempt["proposed"], committed=committed)
    if attempt["error"]:
        yield _line("error", attempt["error"])
    exception = attempt["exception"]
    if exception is not None:
        yield _line("exception", f"{exception['type']}: {exception['message']}")
        yield _line("traceback", "")
        yield from (INDENT + line for line in exception["traceback"].rstrip("\n").split("\n"))


def _proposed(proposed: list[dict[str, Any]] | None, *, committed: bool) -> Iterator[str]:
    if proposed is None:
        yield _line("proposed", "no replacement")
        return
    noun = "message" if len(proposed) == 1 else "messages"
    what = "new" if committed else "new, not committed"
    yield _line("proposed", f"{len(proposed)} {noun} ({what})")
    for number, message in enumerate(proposed, 1):
        yield f"  [{number}]"
        yield from (INDENT + line for line in message_lines(message))


def _line(label: str, value: str) -> str:
    return f"  {label + ':':<17}{value}".rstrip()


def _tokens(attempt: dict[str, Any]) -> str:
    before, after = attempt["tokens_before"], attempt["tokens_after"]
    if before is None and after is None:
        return "not counted"
    text = f"{'?' if before is None else before}→{'?' if after is None else after}"
    saved = tokens_saved(attempt)
    return text + (f", saved {saved}" if saved is not None else "")
