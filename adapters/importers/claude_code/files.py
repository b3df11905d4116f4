"""Finding Claude Code session files and reading one, line by line, without changing it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .... import TranscriptError

Record = dict[str, Any]


class ClaudeCodeImportError(TranscriptError):
    """A path names nothing, or a session file is malformed (the file and line named)."""


@dataclass
class SessionFile:
    """The records of one session file (a main session or a subagent's sidechain)."""

    path: Path
    records: list[tuple[int, Record]] = field(default_factory=list)  # (line, record)
    notes: list[str] = field(default_factory=list)
    meta: Record | None = None  # a subagent's `.meta.json`


def default_folder() -> Path:
    """Where Claude Code keeps its sessions: `$CLAUDE_CONFIG_DIR/projects`, else
    `~/.claude/projects`."""
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(config) if config else Path.home() / ".claude") / "projects"


def find_sessions(paths: Iterable[str | Path]) -> list[Path]:
    """The main session files named: a `.jsonl` file as given, else every `*.jsonl` of a
    project folder, or of the project folders of a `projects` folder (subagent files are
    found beside their session). No paths: the default folder."""
    given = [Path(path).expanduser() for path in paths]
    if not given:
        folder = default_folder()
        if not folder.is_dir():
            raise ClaudeCodeImportError(
                f"no Claude Code projects folder at {folder} (set CLAUDE_CONFIG_DIR or give a PATH)"
            )
        given = [folder]
    found: list[Path] = []
    for path in given:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += sorted(p for p in path.glob("*.jsonl") if p.is_file())
            found += sorted(p for p in path.glob("*/*.jsonl") if p.is_file())
        else:
            raise ClaudeCodeImportError(f"no such file or folder: {path}")
    return list(dict.fromkeys(found))


def subagent_files(session: Path) -> list[Path]:
    """The sidechain files of a session: `<session-id>/subagents/agent-*.jsonl`."""
    folder = session.with_suffix("") / "subagents"
    return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []


def read_session(path: Path) -> SessionFile:
    """Read a session file; raise OSError if it cannot be read.

    A last line without its end that is not JSON was cut short (a crash): left out, with a
    note. Any other line that is not a JSON object with a `type` raises ClaudeCodeImportError
    naming the file and line. Blank lines are skipped.
    """
    read = SessionFile(path)
    with path.open("rb") as file:
        for number, raw in enumerate(file, 1):
            if not raw.strip():
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError as error:
                if not raw.endswith(b"\n"):
                    read.notes.append(
                        f"the last line ({number}) is cut short, as a crash leaves it: "
                        f"imported up to line {number - 1}"
                    )
                    break
                raise ClaudeCodeImportError(f"{path}: line {number} is not JSON: {error}") from None
            if not isinstance(record, dict) or not isinstance(record.get("type"), str):
                raise ClaudeCodeImportError(
                    f"{path}: line {number} is not a Claude Code record (a JSON object with a type)"
                )
            read.records.append((number, record))
    meta = path.with_suffix(".meta.json")
    if meta.is_file():
        try:
            loaded = orjson.loads(meta.read_bytes())
        except orjson.JSONDecodeError as error:
            raise ClaudeCodeImportError(f"{meta}: not JSON: {error}") from None
        read.meta = loaded if isinstance(loaded, dict) else None
    return read
