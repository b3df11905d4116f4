"""What a failed compaction attempt keeps of what was attempted.

Version 2 of `CompactionFailed` adds two optional fields: `proposed`, the new messages of
the replacement that could not be committed (those it did not keep from the snapshot), when
there was one; and `exception`, the summarizer's exception (type, message, formatted
traceback) when it raised. `upcast_v1_v2` reads a version 1 event as one without either
(None): "nothing was proposed" and "no exception was kept" are then the same answer.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import TranscriptError
from .messages import plain_json, safe_text

MAX_EXCEPTION_TEXT = 16_384  # characters of an exception's message, and of its traceback
MAX_UNREADABLE = 1_000  # characters of the repr of a proposed item that is not JSON


def upcast_v1_v2(state: dict[str, Any]) -> None:
    """A version 1 event's state as version 2: nothing proposed, no exception kept."""
    state["proposed"] = None
    state["exception"] = None


def proposed_messages(snapshot: Sequence[str], replacement: object) -> list[dict[str, Any]]:
    """The replacement's new messages (the items that do not keep a snapshot message), as
    they can be stored: a JSON object as given (its id, if any, in it); an item that is
    not one as `{"unreadable": its repr}`, cut to `MAX_UNREADABLE` characters."""
    if not isinstance(replacement, Sequence) or isinstance(replacement, (str, bytes)):
        return [unreadable(replacement)]
    kept = set(snapshot)
    return [
        _storable(item)
        for item in replacement
        if not (
            isinstance(item, Mapping) and isinstance(item.get("id"), str) and item["id"] in kept
        )
    ]


def exception_record(error: BaseException) -> dict[str, str]:
    """An exception as kept: its type (qualified), message and formatted traceback, each at
    most `MAX_EXCEPTION_TEXT` characters (a longer traceback keeps its first quarter, the
    outer frames, and its end: the innermost frames and the exception)."""
    kind = type(error)
    name = (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )
    message = safe_text(str(error))
    if len(message) > MAX_EXCEPTION_TEXT:
        message = message[: MAX_EXCEPTION_TEXT - 1] + "…"
    formatted = safe_text("".join(traceback.format_exception(error)))
    if len(formatted) > MAX_EXCEPTION_TEXT:
        cut = f"\n… ({len(formatted) - MAX_EXCEPTION_TEXT + 40:,} characters cut) …\n"
        keep = MAX_EXCEPTION_TEXT - len(cut)
        formatted = formatted[: keep // 4] + cut + formatted[-(keep - keep // 4) :]
    return {"type": name, "message": message, "traceback": formatted}


def _storable(item: object) -> dict[str, Any]:
    if isinstance(item, Mapping):
        try:
            plain, _ = plain_json(dict(item), "proposed")
            return plain
        except (TranscriptError, TypeError, ValueError):
            pass
    return unreadable(item)


def unreadable(item: object) -> dict[str, str]:
    """An item kept as its repr (cut), whatever it is."""
    try:
        text = repr(item)
    except Exception:  # a repr that raises
        text = f"<{type(item).__name__}>"
    text = safe_text(text)
    return {"unreadable": text if len(text) <= MAX_UNREADABLE else text[: MAX_UNREADABLE - 1] + "…"}
