"""`TranscriptSessionStore`, the Claude Agent SDK's `SessionStore`: the SDK wheel's own
conformance suite (every contract, none skipped) on SQLite and PostgreSQL, each contract on
a fresh store; the session the real CLI wrote (tests/data/claude_code), appended through the
store in batches, projects as its import does; entries come back verbatim; delete erases."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk.testing import run_session_store_conformance

from support.backends import DURABLE_BACKENDS
from support.claude_code import PROJECTS, SESSION_FILE, SESSION_ID
from transcripts import TranscriptStore
from transcripts.adapters.importers.claude_code import import_claude_code
from transcripts.integrations.claude_agent_sdk import TranscriptSessionStore

KEY = {"project_key": "-work-project", "session_id": SESSION_ID}
STORE_ID = f"-work-project:{SESSION_ID}"


@pytest.fixture(params=DURABLE_BACKENDS)
def fresh_urls(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], str]]:
    """Makes URLs of fresh, empty stores on a SQLite file, then on PostgreSQL."""
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_server")
        yield server.database
        return
    numbers = itertools.count()
    yield lambda: f"sqlite:///{tmp_path / f'store-{next(numbers)}.db'}"


def test_the_sdks_conformance_suite_passes_every_contract(
    fresh_urls: Callable[[], str],
) -> None:
    opened: list[TranscriptSessionStore] = []

    def make_store() -> TranscriptSessionStore:
        opened.append(TranscriptSessionStore(url=fresh_urls()))
        return opened[-1]

    try:
        asyncio.run(run_session_store_conformance(make_store))
    finally:
        for store in opened:
            store.close()


def records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SESSION_FILE.read_text().splitlines()]


def append_in_batches(sdk: TranscriptSessionStore, entries: list[Any], size: int) -> None:
    async def run() -> None:
        for start in range(0, len(entries), size):
            await sdk.append(KEY, entries[start : start + size])

    asyncio.run(run())


@pytest.mark.parametrize("size", [1, 7, 500])
def test_a_session_appended_in_batches_projects_as_its_import_does(
    store: TranscriptStore, size: int
) -> None:
    sdk = TranscriptSessionStore(store)
    entries = records()
    append_in_batches(sdk, entries, size)
    assert asyncio.run(sdk.load(KEY)) == entries
    import_claude_code(store, [SESSION_FILE])

    def messages(session_id: str) -> list[tuple[str, bool]]:
        return [(e["message"]["id"], e["active"]) for e in store.history(session_id)]

    def audit(session_id: str) -> list[tuple[Any, ...]]:
        keys = ("status", "reason", "tokens_before", "tokens_after", "error", "superseded")
        return [tuple(entry.get(k) for k in keys) for entry in store.compactions(session_id)]

    assert messages(STORE_ID) == messages(SESSION_ID)
    assert store.active(STORE_ID) == store.active(SESSION_ID)
    assert audit(STORE_ID) == audit(SESSION_ID) and len(audit(STORE_ID)) == 3


def test_re_sent_entries_are_kept_once_and_entries_without_a_uuid_as_they_come(
    store: TranscriptStore,
) -> None:
    sdk = TranscriptSessionStore(store)
    entries = records()[:20]
    append_in_batches(sdk, entries, 5)
    version = store.version(STORE_ID)
    with_uuid = [e for e in entries if "uuid" in e]
    append_in_batches(sdk, with_uuid, 3)
    assert asyncio.run(sdk.load(KEY)) == entries
    assert store.version(STORE_ID) == version
    no_uuid = {"type": "mode", "mode": "default"}
    append_in_batches(sdk, [no_uuid, no_uuid], 2)
    assert asyncio.run(sdk.load(KEY)) == [*entries, no_uuid, no_uuid]


def test_a_subagent_key_is_a_child_session_and_delete_erases_both(
    store: TranscriptStore,
) -> None:
    sdk = TranscriptSessionStore(store)
    sub = {**KEY, "subpath": "subagents/agent-1"}
    entries = records()[:5]

    async def run() -> None:
        await sdk.append(KEY, entries)
        await sdk.append(sub, entries)
        assert await sdk.list_subkeys(KEY) == ["subagents/agent-1"]
        assert store.session(f"{STORE_ID}:subagents/agent-1")["parent_id"] == STORE_ID
        await sdk.delete(KEY)
        assert await sdk.load(KEY) is None and await sdk.load(sub) is None
        await sdk.delete(KEY)  # absent: a no-op

    asyncio.run(run())
    assert store.session(f"{STORE_ID}:subagents/agent-1")["erased_at"] is not None
    assert store.session(STORE_ID)["erased_at"] is not None


def test_one_session_id_under_two_project_keys_is_two_sessions_whatever_their_colons(
    store: TranscriptStore,
) -> None:
    sdk = TranscriptSessionStore(store)
    one = {"project_key": "a:b", "session_id": "c"}
    two = {"project_key": "a", "session_id": "b:c"}

    async def run() -> None:
        await sdk.append(one, [{"type": "x", "n": 1}])
        await sdk.append(two, [{"type": "x", "n": 2}])
        assert await sdk.load(one) == [{"type": "x", "n": 1}]
        assert await sdk.load(two) == [{"type": "x", "n": 2}]

    asyncio.run(run())
    assert {s["id"] for s in store.sessions()} == {"a%3Ab:c", "a:b%3Ac"}


def test_the_importer_and_the_store_agree_on_the_subagent_file(store: TranscriptStore) -> None:
    (agent,) = PROJECTS.glob(f"*/{SESSION_ID}/subagents/agent-*.jsonl")
    sdk = TranscriptSessionStore(store)
    entries = [json.loads(line) for line in agent.read_text().splitlines()]
    sub = {**KEY, "subpath": f"subagents/{agent.stem}"}
    asyncio.run(sdk.append(sub, entries))
    import_claude_code(store, [SESSION_FILE])
    ours = store.active(f"{STORE_ID}:subagents/{agent.stem}")
    assert ours == store.active(f"{SESSION_ID}:subagents/{agent.stem}")


def test_two_store_objects_appending_in_turn_keep_every_entry_and_project_as_the_import(
    store_url: str,
) -> None:
    entries = records()
    with TranscriptStore.open(store_url) as one, TranscriptStore.open(store_url) as two:
        writers = [TranscriptSessionStore(one), TranscriptSessionStore(two)]

        async def run() -> None:
            for turn, start in enumerate(range(0, len(entries), 9)):
                await writers[turn % 2].append(KEY, entries[start : start + 9])

        asyncio.run(run())
        assert asyncio.run(writers[0].load(KEY)) == entries
        import_claude_code(one, [SESSION_FILE])
        assert one.active(STORE_ID) == one.active(SESSION_ID)
        assert len(one.compactions(STORE_ID)) == 3
