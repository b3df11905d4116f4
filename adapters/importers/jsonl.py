"""Importing OpenAI-style chat JSONL: one message object per line (see `exporters.jsonl`).

A file is one session named after its stem, unless a line carries a `session_id`
(removed from the message), which puts that line in that session. Every line is checked
before anything is stored: a malformed line is a `JsonlError` naming the file and the line,
and nothing of the file is imported. A line keeps its `"id"`; a line without one gets an id
derived from the file name, the session, the message's place in it and its content, so
importing the same file again stores nothing new.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import InvalidMessageError, SessionNotFoundError, TranscriptError, TranscriptStore
from ...domain.messages import MAX_DEPTH, check_json, content_hash, split_id, with_id

SOURCE = "jsonl"


class JsonlError(TranscriptError):
    """A JSONL file cannot be read or holds a malformed line."""


@dataclass
class JsonlSession:
    """The messages of one session read from one file, each with an id."""

    session_id: str
    path: Path
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ImportReport:
    session_id: str
    path: Path
    messages: int
    new: int
    started: bool  # the session did not exist before


def read_jsonl(path: Path) -> list[JsonlSession]:
    """The sessions of a JSONL file, in the order they first appear; raise JsonlError."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise JsonlError(f"cannot read {path}: {error.strerror or error}") from None
    default = path.stem
    sessions: dict[str, JsonlSession] = {}
    seen: dict[tuple[str, str], tuple[int, str]] = {}  # (session, id) -> (line, content hash)
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            session_id, message = _parse_line(line)
        except InvalidMessageError as error:
            raise JsonlError(f"{path} line {number}: {error}") from None
        session = sessions.setdefault(
            session_id or default, JsonlSession(session_id or default, path)
        )
        message_id, content = split_id(message)
        digest = content_hash(content)
        if message_id is None:
            message_id = derived_id(path.name, session.session_id, len(session.messages), digest)
        earlier = seen.setdefault((session.session_id, message_id), (number, digest))
        if earlier[1] != digest:
            raise JsonlError(
                f"{path} line {number}: id {message_id!r} was given on line {earlier[0]} "
                "with other content"
            )
        session.messages.append(with_id(message_id, content))
    if not sessions:  # an empty file: an empty session, as an empty session exports
        sessions[default] = JsonlSession(default, path)
    return list(sessions.values())


def _parse_line(line: bytes) -> tuple[str | None, dict[str, Any]]:
    # The standard parser, not orjson: orjson reads an integer beyond 64 bits as a float,
    # which would change the value silently; here it stays exact and validation refuses it.
    try:
        value = json.loads(line.decode("utf-8"), parse_constant=_not_json)
    except UnicodeDecodeError as error:
        raise InvalidMessageError(f"not valid UTF-8 at byte {error.start + 1}") from None
    except json.JSONDecodeError as error:
        raise InvalidMessageError(f"not valid JSON: {error.msg} at column {error.colno}") from None
    except ValueError as error:  # NaN, Infinity
        raise InvalidMessageError(f"not valid JSON: {error}") from None
    except RecursionError:
        raise InvalidMessageError(f"nested deeper than {MAX_DEPTH} levels") from None
    if not isinstance(value, dict):
        raise InvalidMessageError(f"a message must be a JSON object, not {type(value).__name__}")
    session_id = value.pop("session_id", None)
    if session_id is not None and (not isinstance(session_id, str) or not session_id.strip()):
        raise InvalidMessageError(f"session_id must be a non-empty string: {session_id!r}")
    if session_id is not None:
        check_json(session_id, "session_id")  # text the store takes (no lone surrogate)
    split_id(value)  # validates the role, the id and the values
    return session_id, value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def derived_id(file_name: str, session_id: str, index: int, digest: str) -> str:
    """A stable id for the `index`-th message of a session in a file, from its content hash."""
    key = "\0".join((file_name, session_id, str(index), digest))
    return "jsonl_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def import_session(store: TranscriptStore, session: JsonlSession) -> ImportReport:
    """Store one session's messages in one write (all or nothing); stored ids are skipped,
    rewound ones too: a file imported again does not restore what was rewound since."""
    try:
        stored = {entry["id"] for entry in store.history(session.session_id)}
        started = False
    except SessionNotFoundError:
        store.start(session.session_id, source=SOURCE)
        stored, started = set(), True
    store.sync(session.session_id, session.messages)
    ids = {message["id"] for message in session.messages}
    return ImportReport(
        session.session_id, session.path, len(session.messages), len(ids - stored), started
    )
