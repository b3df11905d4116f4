"""Write Claude Code session files with the real Claude Code CLI, and the truth about every
request it made.

Run by hand (Node and npm needed; the tests only read what it writes):

    python3 tests/data/claude_code/generate.py tests/data/claude_code [--scratch DIR]

It installs `@anthropic-ai/claude-code@VERSION` from npm into `<scratch>/npm` (the linux-x64
binary comes as an optional dependency), then runs `claude -p PROMPT [--resume ID]
--output-format json --allowedTools …` once per turn with a scratch `HOME`, against
`tests/support/fake_anthropic.FakeAnthropic` on 127.0.0.1: no model, no network. One
session, in turns:

1. a tool call (`Bash ls`, which the CLI runs) and its answer;
2. a subagent (`Agent`, in the foreground) that runs a tool itself;
3. a `/compact` whose summary requests are answered with HTTP 400: it fails;
4. a turn; 5. a `/compact` that commits (manual);
6. a turn reporting 990,000 input tokens, near the model's window, so that
7. the next turn starts with an automatic compaction, then answers.

The truth is what each request carried (`messages`: the context the CLI sent, which is the
active context at that point) and how the fake answered. The CLI's own prompt text is
replaced by a placeholder naming it and a digest of it: in the records that carry it
(`attachment`, `api-request*`: every record, uuid and parent link kept), and in the truth
(its system prompt, the `<system-reminder>` blocks, its summary instructions, its system
messages).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[2] / "support"))

from fake_anthropic import FakeAnthropic, Reply, Request, text, tool_use  # noqa: E402

VERSION = "2.1.332"
NEAR_WINDOW = 990_000  # input tokens reported to make the CLI compact before its next turn
TOOLS = ["Bash", "Agent"]
STRIPPED_RECORDS = ("attachment", "api-request", "api-request-blob", "api-request-shape")
LONG = 200  # characters: a string this long in those records is the CLI's own text


@dataclass
class Turn:
    prompt: str
    replies: list[Reply] = field(default_factory=list)
    compaction: str = "summary"


def turns() -> list[Turn]:
    subagent = {
        "description": "Read notes",
        "prompt": "Read notes.txt and report what it says.",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    return [
        Turn(
            "List the files here.",
            [
                Reply([text("Let me look."), tool_use("toolu_01", "Bash", {"command": "ls"})]),
                Reply([text("There is notes.txt.")]),
            ],
        ),
        Turn(
            "Ask a subagent to read notes.txt.",
            [
                Reply([tool_use("toolu_02", "Agent", subagent)]),
                Reply([tool_use("toolu_03", "Bash", {"command": "cat notes.txt"})]),
                Reply([text("It says: remember the milk.")]),
                Reply([text("The subagent says: remember the milk.")]),
            ],
        ),
        Turn("/compact", compaction="fail"),
        Turn("Still there?", [Reply([text("Yes.")])]),
        Turn("/compact"),
        Turn("What did the notes say?", [Reply([text("Remember the milk.")], NEAR_WINDOW)]),
        Turn("And now?", [Reply([text("Still the milk.")])]),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="tests/data/claude_code")
    parser.add_argument("--scratch", type=Path, default=Path("/work/scratch/claude-code"))
    parser.add_argument("--version", default=VERSION)
    args = parser.parse_args()
    claude = install(args.scratch / "npm", args.version)
    run_dir = args.scratch / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    home, work = run_dir / "home", run_dir / "work"
    home.mkdir(parents=True)
    work.mkdir(parents=True)
    (work / "notes.txt").write_text("remember the milk\n")
    script = turns()
    with FakeAnthropic() as api:
        session_id = run_session(claude, api, home, work, script)
    projects = home / ".claude" / "projects"
    out = args.out / args.version
    shutil.rmtree(out, ignore_errors=True)
    for path in sorted(projects.rglob("*")):
        if path.is_file():
            target = out / "projects" / path.relative_to(projects)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(strip_file(path))
    truth = {
        "claude_code_version": args.version,
        "session_id": session_id,
        "cwd": str(work),
        "prompts": [turn.prompt for turn in script],
        "requests": [request_truth(request) for request in api.requests],
        "summaries": api.summaries,
    }
    (out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    print(f"wrote session {session_id} to {out}")


def install(folder: Path, version: str) -> Path:
    binary = folder / "node_modules" / ".bin" / "claude"
    if not binary.exists() or version not in run([str(binary), "--version"], folder):
        folder.mkdir(parents=True, exist_ok=True)
        run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder),
             f"@anthropic-ai/claude-code@{version}"],
            folder,
        )  # fmt: skip
    return binary


def run_session(
    claude: Path, api: FakeAnthropic, home: Path, work: Path, script: list[Turn]
) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-not-a-key",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    session_id: str | None = None
    for api.turn, turn in enumerate(script):
        api.replies.extend(turn.replies)
        api.compaction = turn.compaction
        command = [str(claude), "-p", turn.prompt, "--output-format", "json"]
        command += ["--allowedTools", *TOOLS]
        if session_id:
            command += ["--resume", session_id]
        done = subprocess.run(
            command, cwd=work, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        if api.replies or api.unexpected:
            raise RuntimeError(
                f"{turn.prompt!r}: {len(api.replies)} scripted replies not asked for, "
                f"{api.unexpected} requests with no reply scripted; {done.stderr[-500:]}"
            )
        session_id = session_id or json.loads(done.stdout)["session_id"]
    assert session_id is not None
    return session_id


def strip_file(path: Path) -> str:
    if path.suffix != ".jsonl":
        return path.read_text()
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") in STRIPPED_RECORDS:
            record = stripped(record, lambda value: len(value) >= LONG)
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines)


def request_truth(request: Request) -> dict[str, Any]:
    return {
        "turn": request.turn,
        "kind": request.kind,
        "status": request.status,
        "usage": request.usage,
        "messages": [_message_truth(message) for message in request.messages],
        "output": request.output,
    }


def _message_truth(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("role") == "system":
        return stripped(message, lambda value: True)
    return stripped(message, _cli_text)


def _cli_text(value: str) -> bool:
    return value.startswith("<system-reminder>") or "Respond with TEXT ONLY" in value


def stripped(value: Any, strip: Any, key: str = "") -> Any:
    """`value` with each string `strip` picks replaced by a placeholder with its digest."""
    if isinstance(value, str):
        if key not in ("role", "type") and strip(value):
            digest = hashlib.sha256(value.encode()).hexdigest()[:16]
            return f"[Claude Code prompt text stripped: sha256 {digest}]"
        return value
    if isinstance(value, list):
        return [stripped(item, strip, key) for item in value]
    if isinstance(value, dict):
        return {name: stripped(item, strip, name) for name, item in value.items()}
    return value


def run(command: list[str], cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr}")
    return done.stdout


if __name__ == "__main__":
    main()
