"""Claude Code sessions for tests: the one the real CLI wrote (tests/data/claude_code) with
its truth, and the conversation a request or a stored context carries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code"
VERSION = "2.1.332"
PROJECTS = DATA / VERSION / "projects"
TRUTH: dict[str, Any] = json.loads((DATA / VERSION / "truth.json").read_text())
SESSION_ID: str = TRUTH["session_id"]
SESSION_FILE = next(PROJECTS.glob(f"*/{SESSION_ID}.jsonl"))
SUBAGENT_PROMPT = "Read notes.txt and report what it says."
_STRIPPED = "[Claude Code prompt text stripped"


def copy_projects(folder: Path) -> Path:
    shutil.copytree(PROJECTS, folder / "projects")
    return folder / "projects"


def main_requests() -> list[dict[str, Any]]:
    """The main session's answered requests (not the subagent's), in order."""
    return [
        request
        for request in TRUTH["requests"]
        if request["status"] == 200
        and request["kind"] != "side"
        and conversation(request["messages"])[:1] != [("text", "user", SUBAGENT_PROMPT)]
    ]


def conversation(messages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """What the model reads of a list of Messages API messages: the text, tool calls and
    tool results of user and assistant messages, in order (the CLI's own reminders, system
    messages and prompt text left out; texts stripped of surrounding white space)."""
    found: list[tuple[str, str, str]] = []
    for message in messages:
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks or []:
            kind = block.get("type")
            if kind == "text":
                text = block["text"].strip()  # the CLI ends a command's text with a newline
                if not text.startswith(_STRIPPED) and not text.startswith("<system-reminder>"):
                    found.append(("text", role, text))
            elif kind == "tool_use":
                found.append(("tool_use", role, block["id"]))
            elif kind == "tool_result":
                found.append(("tool_result", role, block["tool_use_id"]))
    return found
