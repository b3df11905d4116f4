"""Finding Codex rollouts and reading one, line by line, without changing it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .... import TranscriptError

ROLLOUT_GLOB = "rollout-*.jsonl"


class CodexImportError(TranscriptError):
    """A path to import names nothing, or no Codex sessions folder is found."""


@dataclass(frozen=True)
class Line:
    """One record of a rollout: `{timestamp, ordinal?, type, payload, metadata?}`."""

    number: int  # 1-based, as an editor shows it
    record: dict[str, Any]

    @property
    def type(self) -> str:
        return self.record["type"]

    @property
    def payload(self) -> Any:
        return self.record.get("payload")

    @property
    def key(self) -> str:
        """What derived ids name this line by: Codex's ordinal, else its line number."""
        ordinal = self.record.get("ordinal")
        return str(ordinal) if type(ordinal) is int else f"line{self.number}"


@dataclass
class Rollout:
    """The whole lines of a rollout, and what the reading noticed."""

    path: Path
    lines: list[Line] = field(default_factory=list)
    whole_lines: int = 0  # the number of its last whole line
    notes: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)  # lines that could not be read


def default_folder() -> Path:
    """Where Codex keeps its rollouts: `$CODEX_HOME/sessions`, else `~/.codex/sessions`."""
    home = os.environ.get("CODEX_HOME")
    return (Path(home) if home else Path.home() / ".codex") / "sessions"


def find_rollouts(paths: Iterable[str | Path]) -> list[Path]:
    """The rollout files named: a file as given, a folder's `rollout-*.jsonl` files at any
    depth (sorted). No paths: the default folder. Raise CodexImportError for a path that does
    not exist."""
    given = [Path(path).expanduser() for path in paths]
    if not given:
        folder = default_folder()
        if not folder.is_dir():
            raise CodexImportError(
                f"no Codex sessions folder at {folder} (set CODEX_HOME or give a PATH)"
            )
        given = [folder]
    found: list[Path] = []
    for path in given:
        if path.is_dir():
            found += sorted(p for p in path.rglob(ROLLOUT_GLOB) if p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise CodexImportError(f"no such file or folder: {path}")
    return list(dict.fromkeys(found))


def base_folders(paths: Iterable[str | Path], files: Iterable[Path]) -> list[Path]:
    """Where the sessions forks start from are looked for: the folders given, and the
    `sessions` folder (else the folder) of each file."""
    folders = [Path(path).expanduser() for path in paths]
    for file in files:
        sessions = [folder for folder in file.parents if folder.name == "sessions"]
        folders.append(sessions[0] if sessions else file.parent)
    return [folder for folder in folders if folder.is_dir()]


def read_rollout(path: Path) -> Rollout:
    """Read a rollout's lines; raise OSError if it cannot be read.

    A last line without its end that is not JSON was cut short (Codex or the machine stopped
    while writing it): it is left out, with a note. Any other line that is not a JSON object
    with a `type` is left out as a doubt; blank lines are skipped.
    """
    rollout = Rollout(path)
    with path.open("rb") as file:
        for number, raw in enumerate(file, 1):
            if raw.endswith(b"\n"):
                rollout.whole_lines = number
            if not raw.strip():
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                if raw.endswith(b"\n"):
                    rollout.doubts.append(f"line {number} is not JSON: not imported")
                else:
                    rollout.notes.append(
                        f"the last line ({number}, {len(raw):,} bytes) is cut short, as a "
                        f"crash leaves it: imported up to line {number - 1}"
                    )
                continue
            if not isinstance(record, dict) or not isinstance(record.get("type"), str):
                rollout.doubts.append(f"line {number} is not a rollout record: not imported")
                continue
            rollout.lines.append(Line(number, record))
    return rollout
