"""One Hermes `messages` row as plain values: its message, its state, what it is by content.

A row's *identity* is what makes two rows the same message: every kept column but the ones
Hermes writes differently for the same message (its write time, token counts, sidecars). A
copy Hermes re-inserts carries the same identity as its original whatever its timestamp.

A *summary* row is known by the `_compressed_summary` flag where the schema has it, else by
its content: it starts with one of the compressor's summary prefixes, or it is a summary the
compressor merged into the first tail message: from 0.18.0 `[PRIOR CONTEXT — …]`, the tail
message's own content, `[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]`, the summary; up
to 0.17.0 the summary, its `--- END OF CONTEXT SUMMARY — …---` line, a blank line, the tail
message's content. A merged row is read as two messages: the tail message it carried
(`original`) and the summary.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import orjson

from ....domain.messages import MAX_DEPTH

JSON_PREFIX = "\x00json:"
SUMMARY_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
MERGED_HEADER = "[PRIOR CONTEXT — for reference only; not a new message]\n"
MERGED_DELIMITER = "\n\n[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]\n\n"
# Ends a summary; up to 0.17.0 a merged row goes on, after a blank line, with the tail message.
SUMMARY_END = (
    "\n\n--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
)

# Message columns that are storage bookkeeping, not part of a message.
BOOKKEEPING = frozenset(
    {
        "id",
        "session_id",
        "active",
        "compacted",
        "_compressed_summary",
        "observed",
        "display_identity",
        "display_order",
        "message_uid",
        "absorbed_message_uids",
        "tool_call_uids",
        "tool_call_uid",
    }
)
# Columns that hold JSON text (besides any "\x00json:" text).
JSON_COLUMNS = frozenset(
    {
        "tool_calls",
        "reasoning_details",
        "codex_reasoning_items",
        "codex_message_items",
        "display_metadata",
        "model_config",
        "origin_json",
        "tool_names",
    }
)
# Kept columns that are not part of a message's identity: Hermes writes them differently for
# the same message (the time of the write; sidecars one write path sets and another not).
NOT_IDENTITY = frozenset(
    {"timestamp", "token_count", "api_content", "platform_message_id", "effect_disposition"}
)


@dataclass(frozen=True)
class HermesRow:
    """One `messages` row: its decoded message, its state, and what it is by content."""

    row_id: int
    message: dict[str, Any]  # role and every kept column, decoded
    identity: str
    live: bool  # `active` (every row is live where the schema has no `active` column)
    archived: bool  # `compacted`: archived by an in-place compaction
    summary: bool  # a compaction summary (flag or content), merged ones included
    original: HermesRow | None = None  # of a merged summary: the tail message it carried
    merged_summary: str | None = None  # of a merged summary: the summary's own content
    problems: tuple[str, ...] = ()

    @property
    def hidden(self) -> bool:
        """Neither live nor archived: rewound (or, in some schemas, a carried tail's original)."""
        return not self.live and not self.archived

    def summary_message(self) -> dict[str, Any]:
        """The summary as a message of its own (a merged row: without the tail message)."""
        if self.merged_summary is None:
            return self.message
        return {**self.message, "content": self.merged_summary}


def decode_row(row: sqlite3.Row) -> HermesRow:
    """A `messages` row as a message: NULL columns and bookkeeping dropped, JSON decoded."""
    message: dict[str, Any] = {}
    problems: list[str] = []
    for key in row.keys():
        value = row[key]
        if value is None or key in BOOKKEEPING:
            continue
        if isinstance(value, bytes):
            problems.append(f"row {row['id']}: column {key} holds binary data; not imported")
            continue
        if isinstance(value, str) and (key in JSON_COLUMNS or value.startswith(JSON_PREFIX)):
            try:
                value, ok = decode_json(value)
            except TooDeep as error:
                raise TooDeep(f"row {row['id']}: its {key} is {error}") from None
            if not ok:
                problems.append(f"row {row['id']}: {key} is not valid JSON; kept as text")
        message[key] = value
    content = message.get("content")
    flagged = bool(_column(row, "_compressed_summary", 0))
    live, archived = bool(_column(row, "active", 1)), bool(_column(row, "compacted", 0))
    original, merged_summary = _merged(row["id"], message, live, archived)
    summary = flagged or original is not None or _starts_summary(content)
    return HermesRow(
        row_id=row["id"],
        message=message,
        identity=identity(message),
        live=live,
        archived=archived,
        summary=summary,
        original=original,
        merged_summary=merged_summary,
        problems=tuple(problems),
    )


def identity(message: dict[str, Any]) -> str:
    """The canonical JSON of what makes rows the same message."""
    kept = {key: value for key, value in message.items() if key not in NOT_IDENTITY}
    return orjson.dumps(kept, option=orjson.OPT_SORT_KEYS).decode()


def decode_json(text: str) -> tuple[Any, bool]:
    """(value, True) for JSON text (with or without the "\\x00json:" prefix), else (text, False).

    orjson decodes without recursing in Python (it refuses more than 1,024 levels), and
    JSON nested deeper than a message may be is refused here (`TooDeep`), never walked."""
    raw = text.removeprefix(JSON_PREFIX)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        if str(error).startswith("depth limit exceeded"):
            raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels") from None
        return text, False
    if _depth(value) > MAX_DEPTH:
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value, True


class TooDeep(ValueError):
    """A JSON value nested deeper than a message may be."""


def _depth(value: Any) -> int:
    """How deep objects and lists nest in `value`, walked with a stack."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in item)
    return deepest


def _merged(
    row_id: int, message: dict[str, Any], live: bool, archived: bool
) -> tuple[HermesRow | None, str | None]:
    """Of a summary merged into a tail message: that message, and the summary's content."""
    content = message.get("content")
    if not isinstance(content, str):
        return None, None
    if content.startswith(MERGED_HEADER):  # 0.18.0 on: the tail message, then the summary
        end = content.rfind(MERGED_DELIMITER)
        summary = content[end + len(MERGED_DELIMITER) :]
        if end < 0 or not _starts_summary(summary):
            return None, None
        carried = content[len(MERGED_HEADER) : end]
    elif _starts_summary(content) and SUMMARY_END + "\n\n" in content:  # up to 0.17.0
        end = content.index(SUMMARY_END + "\n\n") + len(SUMMARY_END)
        summary, carried = content[:end], content[end + 2 :]
    else:
        return None, None
    original = {**message, "content": carried}
    row = HermesRow(row_id, original, identity(original), live, archived, summary=False)
    return row, summary


def _starts_summary(content: object) -> bool:
    return isinstance(content, str) and content.startswith(SUMMARY_PREFIXES)


def _column(row: sqlite3.Row, key: str, default: Any) -> Any:
    return row[key] if key in row.keys() else default
