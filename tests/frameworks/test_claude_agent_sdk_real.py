"""The real Claude Agent SDK (`query` with `ClaudeAgentOptions(session_store=…)`, its bundled
CLI) on `TranscriptSessionStore`, against a fake Anthropic Messages API on 127.0.0.1: a turn
with a tool call, a `/compact`, then a resume from a fresh config directory, which only the
store's `load()` can serve. What the resumed turn sent the model is the stored active
context, the audit shows the compaction with its token counts, and the CLI's own file of
the session imports as the same messages and compactions. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

from support.claude_code import conversation
from support.fake_anthropic import FakeAnthropic, Reply, text, tool_use
from transcripts import TranscriptStore
from transcripts.adapters.importers.claude_code import import_claude_code
from transcripts.integrations.claude_agent_sdk import TranscriptSessionStore

pytestmark = pytest.mark.slow


class CountingStore(TranscriptSessionStore):
    """Counts the SDK's `load` calls."""

    loads = 0

    async def load(self, key: Any) -> list[Any] | None:
        self.loads += 1
        return await super().load(key)


async def run_turn(
    api: FakeAnthropic, sdk: TranscriptSessionStore, work: Path, config: Path, prompt: str,
    resume: str | None = None,
) -> str:  # fmt: skip
    env = {
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-not-a-key",
        "CLAUDE_CONFIG_DIR": str(config),
        "HOME": str(config.parent / "home"),
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    options = ClaudeAgentOptions(
        cwd=str(work), env=env, allowed_tools=["Bash"], session_store=sdk, resume=resume
    )
    session_id = None
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, ResultMessage):
            assert not message.is_error, message.result
            session_id = message.session_id
    assert session_id is not None
    return session_id


def test_a_resume_from_a_fresh_config_dir_is_served_by_the_store_and_audited(
    store_url: str, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("remember the milk\n")
    with TranscriptStore.open(store_url) as store:
        sdk = CountingStore(store)

        async def scenario(api: FakeAnthropic) -> str:
            api.replies.extend(
                [
                    Reply([text("Let me look."), tool_use("toolu_01", "Bash", {"command": "ls"})]),
                    Reply([text("There is notes.txt.")]),
                ]
            )
            first = tmp_path / "config-1"
            session_id = await run_turn(api, sdk, work, first, "List the files here.")
            await run_turn(api, sdk, work, first, "/compact", resume=session_id)
            api.replies.append(Reply([text("Yes.")]))
            fresh = tmp_path / "config-2"
            assert not fresh.exists()
            await run_turn(api, sdk, work, fresh, "Still there?", resume=session_id)
            return session_id

        with FakeAnthropic() as api:
            session_id = asyncio.run(scenario(api))
        assert api.unexpected == 0 and not api.replies
        assert sdk.loads >= 1
        (session,) = [s for s in store.sessions() if s["metadata"]["subpath"] is None]
        assert session["metadata"]["session_id"] == session_id
        sid = session["id"]
        resumed = [r for r in api.requests if r.kind == "turn"][-1]
        sent = conversation(resumed.messages)
        assert sent[0][2].startswith("This session is being continued")
        assert api.summaries[0] in sent[0][2]
        stored = [conversation(store.active_at(sid, v)) for v in range(1, session["version"] + 1)]
        assert sent in stored
        assert conversation(store.active(sid)) == sent + [("text", "assistant", "Yes.")]
        (compaction,) = store.compactions(sid)
        boundary = next(
            e
            for e in asyncio.run(sdk.load(session["metadata"]))
            if e.get("subtype") == "compact_boundary"
        )
        meta = boundary["compactMetadata"]
        assert compaction["status"] == "committed" and "manual" in compaction["reason"]
        assert (compaction["tokens_before"], compaction["tokens_after"]) == (
            meta["preTokens"], meta["postTokens"],
        )  # fmt: skip
        assert compaction["tokens_before"] > 0 and compaction["tokens_after"] > 0

        entries = asyncio.run(sdk.load(session["metadata"]))
        (written,) = (tmp_path / "config-1" / "projects").glob(f"*/{session_id}.jsonl")
        lines = [json.loads(line) for line in written.read_text().splitlines()]
        records = [e for e in lines if "uuid" in e]  # not every bookkeeping line is mirrored
        assert [e for e in entries if "uuid" in e][: len(records)] == records
        local = tmp_path / "entries" / f"{session_id}.jsonl"
        local.parent.mkdir()
        local.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
        with TranscriptStore.open("memory://") as imported:
            import_claude_code(imported, [local])
            assert imported.active(session_id) == store.active(sid)
            assert [c["reason"] for c in imported.compactions(session_id)] == [compaction["reason"]]
