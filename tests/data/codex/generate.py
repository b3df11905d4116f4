"""Write Codex rollouts with the real Codex CLI, and the truth about every request it made.

Run by hand (Node and npm needed; the tests only read what it writes):

    python3 tests/data/codex/generate.py tests/data/codex [--scratch /work/scratch/codex]

It installs `@openai/codex@VERSION` from npm into `<scratch>/npm` (the linux-x64 binary comes
as an optional dependency), then runs `codex exec` and `codex exec resume` with a scratch
`CODEX_HOME` and `HOME` per scenario, against `fake_responses.FakeResponses` on 127.0.0.1:
no model, no network. Each scenario is one Codex session (see `scenarios`):

- `local`: a custom provider (`wire_api = "responses"`); a tool call (Codex runs the shell
  command itself), a turn reporting usage above `model_auto_compact_token_limit`, then a
  local compaction (Codex asks for a summary in a normal request) before the next turn, and
  one in the middle of a turn, after a tool call;
- `failed`: a custom provider; the summary requests are answered with HTTP 400
  `context_length_exceeded` (Codex retries, dropping its oldest item each time, then fails
  the turn), then a turn whose compaction succeeds;
- `remote`: the built-in provider with `openai_base_url`: a remote compaction (a request
  ending with a `compaction_trigger`, answered with one opaque `compaction` item);
- `overflow`: a custom provider; a turn request itself answered with HTTP 400 (no compaction
  asked for), then a turn that goes on;
- `fork`: `codex exec fork` of the `local` session once it ended (its rollout holds only its
  own lines and names the session and ordinal it forked from), then a resumed turn.

The truth is what each request carried (its input: the active context Codex sent, led by its
base instructions) and what the fake answered, recorded by the server as the requests came.
Codex's own prompt text (base instructions, developer messages, the compaction prompt and
the summary prefix, the skills list in `world_state`) is replaced by a placeholder naming what
it was and a digest of it, alike in the rollouts and the truth.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from fake_responses import FakeResponses, Reply, Request, message  # noqa: E402

VERSION = "0.171.0"
MODEL = "gpt-test"
LIMIT = 1000  # model_auto_compact_token_limit
OVER = 5000  # input tokens reported to make Codex compact before its next request


@dataclass
class Turn:
    """One `codex exec [resume]`: its prompt, the replies to its turn requests, and how the
    fake answers its compaction requests ("summary" or "fail")."""

    prompt: str
    replies: list[Reply] = field(default_factory=list)
    compaction: str = "summary"


@dataclass
class Scenario:
    """One Codex session: its turns, each one `codex exec [resume]` (or `codex exec fork` of
    the `fork_of` scenario's session, in its CODEX_HOME, for the first)."""

    description: str
    provider: str  # "custom" or "builtin"
    turns: list[Turn]
    fork_of: str | None = None


def scenarios(api: FakeResponses) -> dict[str, Scenario]:

    def say(text: str, tokens: int = 100) -> Reply:
        return Reply([message("assistant", text, api.next_id("msg"))], input_tokens=tokens)

    def shell(command: str, tokens: int = 100) -> Reply:
        call_id = api.next_id("call")
        reasoning = {
            "type": "reasoning",
            "id": api.next_id("rs"),
            "summary": [{"type": "summary_text", "text": f"Running `{command}` first."}],
            "encrypted_content": f"gAAAAA-reasoning-{call_id}",
        }
        call = {
            "type": "function_call",
            "id": api.next_id("fc"),
            "call_id": call_id,
            "name": "exec_command",
            "arguments": json.dumps({"cmd": command}),
            "status": "completed",
        }
        return Reply([reasoning, call], input_tokens=tokens)

    return {
        "local": Scenario(
            "custom provider: a tool call, a local compaction before a turn, one mid-turn",
            "custom",
            [
                Turn("List the files here.", [shell("ls"), say("There is notes.txt.")]),
                Turn("What does notes.txt say?", [say("It says: remember the milk.", OVER)]),
                Turn("Thanks. Anything else?", [say("Nothing else.")]),
                Turn("Count its lines.", [shell("wc -l notes.txt", OVER), say("One line.")]),
            ],
        ),
        "failed": Scenario(
            "custom provider: a compaction failing with context_length_exceeded, then one "
            "that commits",
            "custom",
            [
                Turn("Hello there.", [say("Hello.", OVER)]),
                Turn("Tell me more.", compaction="fail"),  # the turn ends before its request
                Turn("Try again.", [say("Here is more.")]),
            ],
        ),
        "remote": Scenario(
            "built-in provider (openai_base_url): a remote compaction",
            "builtin",
            [
                Turn("First question.", [say("First answer.")]),
                Turn("Second question.", [say("Second answer.", OVER)]),
                Turn("Third question.", [say("Third answer.")]),
            ],
        ),
        "overflow": Scenario(
            "custom provider: a turn request answered context_length_exceeded (no compaction)",
            "custom",
            [
                Turn("Start.", [say("Started.")]),
                Turn("Overflow now.", [Reply(overflow=True)]),
                Turn("And now?", [say("Going on.")]),
            ],
        ),
        "fork": Scenario(
            "custom provider: `codex exec fork` of the local session, after its compactions",
            "custom",
            [
                Turn("Fork: what was in the notes?", [say("The milk.")]),
                Turn("And in this fork only?", [say("Only this.")]),
            ],
            fork_of="local",
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="tests/data/codex")
    parser.add_argument("--scratch", type=Path, default=Path("/work/scratch/codex"))
    parser.add_argument("--version", default=VERSION)
    args = parser.parse_args()
    codex = install(args.scratch / "npm", args.version)
    runs = args.scratch / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    out = args.out / args.version
    shutil.rmtree(out, ignore_errors=True)
    truth: dict[str, Any] = {"codex_version": args.version, "sessions": {}}
    sessions: dict[str, str] = {}  # scenario -> its session id
    with FakeResponses() as api:
        for name, scenario in scenarios(api).items():
            api.requests.clear()
            place = runs / (scenario.fork_of or name)
            parent = sessions.get(scenario.fork_of or "")
            rollout = run_session(codex, api, place, scenario, parent)
            session = session_truth(name, scenario, rollout, api.requests)
            sessions[name] = session["id"]
            truth["sessions"][session["id"]] = session
            target = out / session["rollout"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(rollout.read_text())
        stripper = Stripper(out.rglob("*.jsonl"), truth, api.summaries)
    for path in out.rglob("*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        path.write_text("".join(json.dumps(stripper(line)) + "\n" for line in lines))
    (out / "truth.json").write_text(json.dumps(stripper(truth), indent=1) + "\n")
    print(f"wrote {len(truth['sessions'])} sessions to {out}")


def install(folder: Path, version: str) -> Path:
    binary = folder / "node_modules" / ".bin" / "codex"
    if not binary.exists() or version not in run([str(binary), "--version"], folder):
        folder.mkdir(parents=True, exist_ok=True)
        run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(folder),
                f"@openai/codex@{version}",
            ],
            folder,
        )
    return binary


def run_session(
    codex: Path, api: FakeResponses, place: Path, scenario: Scenario, parent: str | None
) -> Path:
    """Run a scenario's turns as one Codex session (a fork of `parent`, a session run in
    `place` before); return its rollout."""
    home, work = place / "home", place / "work"
    if parent is None:
        home.mkdir(parents=True)
        work.mkdir(parents=True)
        (work / "notes.txt").write_text("remember the milk\n")
        git = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com"]
        run([*git, "init", "-q", "-b", "main"], work)
        run([*git, "remote", "add", "origin", "https://example.com/demo.git"], work)
        run([*git, "add", "."], work)
        run([*git, "commit", "-q", "-m", "notes"], work)
        (home / "config.toml").write_text(config(scenario.provider, api.url))
    before = set((home / "sessions").rglob("rollout-*.jsonl"))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home.parent),
        "CODEX_HOME": str(home),
        "FAKE_API_KEY": "not-a-key",
        "OPENAI_API_KEY": "sk-not-a-key",
        "RUST_LOG": "error",
    }
    session_id = None
    for api.turn, turn in enumerate(scenario.turns):
        api.replies.extend(turn.replies)
        api.compaction = turn.compaction
        if session_id is not None:
            resume = ["resume", session_id]
        else:
            resume = [] if parent is None else ["fork", parent]
        command = [
            str(codex),
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            *resume,
            turn.prompt,
        ]
        subprocess.run(command, cwd=work, env=env, capture_output=True, timeout=300, check=False)
        if api.replies or api.unexpected:
            raise RuntimeError(
                f"{turn.prompt!r}: {len(api.replies)} scripted replies not asked for, "
                f"{api.unexpected} requests with no reply scripted"
            )
        (rollout,) = set((home / "sessions").rglob("rollout-*.jsonl")) - before
        session_id = json.loads(rollout.read_text().splitlines()[0])["payload"]["id"]
    return rollout


def config(provider: str, url: str) -> str:
    common = (
        f'model = "{MODEL}"\nmodel_auto_compact_token_limit = {LIMIT}\n'
        "check_for_update_on_startup = false\n"
    )
    if provider == "builtin":
        return f'model = "gpt-5.4"\nopenai_base_url = "{url}"\n' + common.split("\n", 1)[1]
    return (
        common + 'model_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{url}"\nwire_api = "responses"\nenv_key = "FAKE_API_KEY"\n'
    )


def session_truth(
    name: str, scenario: Scenario, rollout: Path, requests: list[Request]
) -> dict[str, Any]:
    meta = json.loads(rollout.read_text().splitlines()[0])["payload"]
    return {
        "id": meta["id"],
        "scenario": name,
        "description": scenario.description,
        "provider": scenario.provider,
        "forked_from": meta.get("forked_from_id"),
        "rollout": str(rollout.relative_to(rollout.parents[4])),
        "prompts": [turn.prompt for turn in scenario.turns],
        "requests": [vars(request) for request in requests],
        "compactions": compactions(requests),
    }


def compactions(requests: list[Request]) -> list[dict[str, Any]]:
    """Each compaction Codex attempted: its requests in a row in one turn (a failing one is
    retried with its oldest item dropped), the snapshot it summarised (the first request's
    input without the base instructions and the compaction prompt or trigger), its turn and
    how it ended."""
    found: list[dict[str, Any]] = []
    previous = None
    for request in requests:
        if request.kind == "compaction":
            if (
                previous is None
                or previous.kind != "compaction"
                or previous.status == 200
                or previous.turn != request.turn
            ):
                remote = request.input[-1].get("type") == "compaction_trigger"
                found.append(
                    {
                        "kind": "remote" if remote else "local",
                        "turn": request.turn,
                        "snapshot": [item.get("id") for item in request.input[1:-1]],
                        "requests": 0,
                    }
                )
            found[-1]["requests"] += 1
            found[-1]["outcome"] = "committed" if request.status == 200 else "failed"
        previous = request
    return found


class Stripper:
    """Replaces Codex's own prompt text with a placeholder naming it, in every string of a
    JSON value: the same text always gets the same placeholder."""

    def __init__(
        self, rollouts: Iterable[Path], truth: dict[str, Any], summaries: list[str]
    ) -> None:
        self.table: dict[str, str] = {}
        self.prefixes: dict[str, str] = {}
        for path in rollouts:
            for line in path.read_text().splitlines():
                self._collect(json.loads(line), summaries)
        for session in truth["sessions"].values():
            for request in session["requests"]:
                instructions, *rest = request["input"]
                self._add(_texts(instructions), "Codex base instructions")
                for item in rest:
                    self._item(item)
                last = request["input"][-1]
                if request["kind"] == "compaction" and "id" not in last:
                    self._add(_texts(last), "Codex compaction prompt")

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            if value in self.table:
                return self.table[value]
            for prefix, placeholder in self.prefixes.items():
                if value.startswith(prefix):
                    return placeholder + value[len(prefix) :]
            return value
        if isinstance(value, list):
            return [self(item) for item in value]
        if isinstance(value, dict):
            return {key: self(item) for key, item in value.items()}
        return value

    def _collect(self, line: dict[str, Any], summaries: list[str]) -> None:
        payload = line.get("payload") or {}
        kind = line.get("type")
        if kind == "session_meta":
            self._add(
                [payload.get("base_instructions", {}).get("text", "")], "Codex base instructions"
            )
        if kind in ("session_meta", "world_state", "turn_context", "event_msg"):
            self._add(_long_strings(payload), f"Codex {kind} text")
        if kind == "response_item":
            self._item(payload)
        if kind == "compacted":
            for item in payload.get("replacement_history") or []:
                self._item(item)
            text = payload.get("message") or ""
            for summary in summaries:
                if text.endswith(summary) and len(text) > len(summary):
                    prefix = text[: -len(summary)]
                    self.prefixes[prefix] = f"[Codex summary prefix stripped: {_digest(prefix)}]\n"

    def _item(self, item: dict[str, Any]) -> None:
        if item.get("type") == "message" and item.get("role") in ("developer", "system"):
            self._add(_texts(item), f"Codex {item['role']} text")

    def _add(self, texts: Iterable[str], what: str) -> None:
        for text in texts:
            if text and text not in self.table:
                tag = text.split(">", 1)[0][1:] if text.startswith("<") else ""
                label = f"{what} <{tag}>" if tag and len(tag) < 40 else what
                self.table[text] = f"[{label} stripped: {_digest(text)}]"


def _texts(item: dict[str, Any]) -> list[str]:
    return [
        part["text"]
        for part in item.get("content") or []
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]


def _long_strings(value: Any) -> Iterable[str]:
    if isinstance(value, str) and len(value) >= 300:
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _long_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _long_strings(item)


def _digest(text: str) -> str:
    return "sha256 " + hashlib.sha256(text.encode()).hexdigest()[:16]


def run(command: list[str], cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr}")
    return done.stdout


if __name__ == "__main__":
    main()
