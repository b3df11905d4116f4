"""Codex rollouts for tests: the ones the real Codex CLI wrote (tests/data/codex) with their
truth, copies to change (a crash's cut, Codex's rewrite in place), and the context the truth
says each request carried."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data" / "codex"
VERSION = "0.171.0"
TRUTH = json.loads((DATA / VERSION / "truth.json").read_text())
SESSIONS: dict[str, dict[str, Any]] = TRUTH["sessions"]
# Keys Codex sends to the built-in provider in a shorter form than it writes them.
BOOKKEEPING = frozenset({"internal_chat_message_metadata_passthrough"})


def scenario(name: str) -> Session:
    (found,) = (Session(sid, s) for sid, s in SESSIONS.items() if s["scenario"] == name)
    return found


def copy_all(folder: Path) -> Path:
    """The rollouts, copied into `folder/sessions` as Codex lays them out."""
    shutil.copytree(DATA / VERSION / "sessions", folder / "sessions")
    return folder / "sessions"


@dataclass(frozen=True)
class Session:
    id: str
    truth: dict[str, Any]

    @property
    def path(self) -> Path:
        return DATA / VERSION / self.truth["rollout"]

    def lines(self) -> list[str]:
        """The rollout's lines, each with its end."""
        return self.path.read_text().splitlines(keepends=True)

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines()]

    def copy(self, folder: Path, lines: list[str] | None = None) -> Path:
        """The rollout (or these lines of it) in a file of `folder`, named as Codex names it."""
        target = folder / self.path.name
        target.write_text("".join(self.lines() if lines is None else lines))
        return target

    @property
    def parent(self) -> Session | None:
        """The session it forked from (the fixture forks at the end of it)."""
        parent = self.truth["forked_from"]
        return Session(parent, SESSIONS[parent]) if parent else None

    @property
    def requests(self) -> list[dict[str, Any]]:
        """What Codex sent in this session: a fork's begins with its parent's."""
        inherited = self.parent.requests if self.parent else []
        return inherited + self.truth["requests"]

    @property
    def compactions(self) -> list[dict[str, Any]]:
        """What Codex attempted in this session: a fork's begins with its parent's."""
        inherited = self.parent.compactions if self.parent else []
        return inherited + self.truth["compactions"]

    def answered(self) -> list[dict[str, Any]]:
        """The requests the fake answered (HTTP 200), in order."""
        return [request for request in self.requests if request["status"] == 200]

    def final_context(self) -> list[str]:
        """The ids of the context after the last answer: its request's input and output."""
        last = [r for r in self.answered() if r["kind"] == "turn"][-1]
        return context_ids(last) + [item["id"] for item in last["output"]]


def context_ids(request: dict[str, Any]) -> list[str]:
    """The ids of the context a request carried: its input without Codex's base instructions
    (the first item) and, for a compaction, without the prompt or trigger it ends with."""
    items = request["input"][1:]
    if request["kind"] == "compaction":
        items = items[:-1]
    return [item["id"] for item in items]


def visible(item: dict[str, Any]) -> dict[str, Any]:
    """An item as the model reads it: without Codex's own bookkeeping keys, and without the
    null fields Codex writes but does not send (a reasoning item's `content`)."""
    return {k: v for k, v in item.items() if k not in BOOKKEEPING and v is not None}
