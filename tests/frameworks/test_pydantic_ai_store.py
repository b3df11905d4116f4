"""pydantic-ai's conversations on the store (`TranscriptConversationStore`), driven by a real
`Agent` with a `FunctionModel` and a compaction capability (support/pydantic_agent.py), side
by side with pydantic-ai's own `InMemoryConversationStore`: the same runs load the same
conversations, and the store adds the audit: one session per conversation, one committed
compaction per compaction a run kept, branches as rewinds, forks as child sessions.
Runs on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from pydantic_ai.conversation import Conversation, ConversationTypeAdapter
from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationStore,
    InMemoryConversationStore,
)
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import CompactionPart

from support.pydantic_agent import agent, comparable
from transcripts import StoreConfig, TranscriptStore
from transcripts.integrations.pydantic_ai import TranscriptConversationStore

CHAT = "chat"
PROMPTS = [f"question {n}" for n in range(5)]


@pytest.fixture
def ours(store_url: str) -> Iterator[TranscriptConversationStore]:
    with TranscriptConversationStore(url=store_url) as opened:
        yield opened


async def converse(
    store: ConversationStore,
    prompts: list[str],
    *,
    conversation_id: str = CHAT,
    reload: bool = True,
    scope: str | None = None,
    saved: list[Any] | None = None,
    **summarizing: Any,
) -> list[Any]:
    """Run one turn per prompt on the stored conversation, saving each run's result (the
    entries each save stored go to `saved`); with `reload`, each turn loads the
    conversation, else it carries the last run's."""
    made = agent(**summarizing)
    conversation = await store.load(conversation_id) or Conversation(
        conversation_id=conversation_id
    )
    results = []
    for prompt in prompts:
        result = await made.run(prompt, conversation=conversation)
        stored = await store.save(result, scope=scope)
        results.append(result)
        if saved is not None:
            saved += stored
        loaded = await store.load(conversation_id)
        conversation = loaded if reload and loaded is not None else result.conversation
    return results


def loaded(store: ConversationStore, conversation_id: str = CHAT) -> list[Any]:
    conversation = asyncio.run(store.load(conversation_id))
    assert conversation is not None
    return comparable(conversation.messages)


@pytest.mark.parametrize("reload", [True, False], ids=["loaded each turn", "carried"])
def test_runs_saved_to_the_store_load_as_they_do_from_pydantic_ais_in_memory_store(
    ours: TranscriptConversationStore, reload: bool
) -> None:
    theirs = InMemoryConversationStore()
    saved: list[Any] = []
    ran = [
        asyncio.run(converse(store, PROMPTS, reload=reload, saved=into))
        for store, into in ((theirs, None), (ours, saved))
    ]
    assert sum(len(result.compactions) for result in ran[1]) == 3
    assert loaded(ours) == loaded(theirs)
    back = asyncio.run(ours.load_entries(CHAT))
    assert back is not None and [e.message for e in back] == [e.message for e in saved]  # exactly
    ours_record, their_record = (asyncio.run(s.read_record(CHAT)) for s in (ours, theirs))
    assert ours_record is not None and their_record is not None
    assert ours_record.usage == their_record.usage
    assert (ours_record.branches, ours_record.title, ours_record.scope) == ([], None, None)
    entries = asyncio.run(ours.load_entries(CHAT))
    assert entries is not None and ours_record.head_id == entries[-1].id
    at = {entry.id: index for index, entry in enumerate(entries)}  # carried or loaded: alike
    assert [
        ([at[i] for i in entry["superseded"]], [at[i] for i in entry["added"]])
        for entry in ours.store.compactions(CHAT)
    ] == [([0, 1, 2, 3, 4, 5, 6], [8]), ([7, 8, 9, 10, 11], [13]), ([12, 13, 14, 15, 16], [18])]


def test_each_compaction_a_run_kept_is_one_committed_compaction_saying_what_its_record_says(
    ours: TranscriptConversationStore,
) -> None:
    results = asyncio.run(converse(ours, PROMPTS))
    records = [record for result in results for record in result.compactions]
    entries = asyncio.run(ours.load_entries(CHAT))
    assert entries is not None
    audit = ours.store.compactions(CHAT)
    assert [entry["status"] for entry in audit] == ["committed"] * len(records) == ["committed"] * 3
    summaries = [
        entry.id
        for entry in entries
        if any(isinstance(p, CompactionPart) for p in entry.message.parts)
    ]
    assert [entry["added"] for entry in audit] == [[summary] for summary in summaries]
    for entry, record in zip(audit, records, strict=True):
        assert entry["reason"] == record.reason == "threshold"
        assert entry["metadata"] == {
            "handler": "summarizing",
            "model": record.model_name,
            "provider": "function",
            "messages_before": record.messages_before,
            "messages_after": record.messages_after,
            "kept_from": 1,
            "metadata": {"kept": 2},
        }
    # The first compaction summarized every message before the two it kept (the last
    # response and the request being answered): the history up to its summary, but those.
    first = [e.id for e in entries].index(summaries[0])
    assert audit[0]["superseded"] == [entry.id for entry in entries[: first - 1]]
    [commit, *_] = [
        e["data"] for e in ours.store.events(CHAT) if e["type"] == "CompactionCommitted"
    ]
    assert commit["kept"] == [entries[first - 1].id, entries[first + 1].id]
    superseded = {i for entry in audit for i in entry["superseded"]}
    active = [message["id"] for message in ours.store.active(CHAT)]
    assert active == [entry.id for entry in entries if entry.id not in superseded]
    assert ours.store.verify_projections().ok


def test_a_save_is_one_transaction_of_its_entries_its_compactions_and_its_record(
    store_url: str,
) -> None:
    config = StoreConfig.from_url(store_url)
    counting = CountingBackend(config.backend)
    with TranscriptStore(dataclasses.replace(config, backend=counting)) as store:  # type: ignore[arg-type]
        conversations = TranscriptConversationStore(store)
        asyncio.run(converse(conversations, PROMPTS[:1]))  # the first also starts the session
        for prompt in PROMPTS[1:]:
            before = counting.transactions
            [result] = asyncio.run(converse(conversations, [prompt]))
            assert counting.transactions == before + 1, prompt
        assert result.compactions
        written = [event["type"] for event in store.events(CHAT)[-6:]]
    assert written == [
        "MessageAppended",
        "CompactionCommitted",
        "MessageAppended",
        "MessageAppended",
        "MessageAppended",
        "StateChanged",
    ]


class CountingBackend:
    """A backend counting the write transactions it opens."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.transactions = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    @contextmanager
    def writing(self, log: Any, stream: Any = None) -> Iterator[Any]:
        self.transactions += 1
        with self.backend.writing(log, stream) as transaction:
            yield transaction


def test_two_writers_of_one_conversation_conflict_as_in_pydantic_ais_in_memory_store(
    store_url: str,
) -> None:
    theirs = InMemoryConversationStore()
    with (
        TranscriptConversationStore(url=store_url) as first,
        TranscriptConversationStore(url=store_url) as second,
    ):
        for writer, other in ((theirs, theirs), (first, second)):
            asyncio.run(converse(writer, PROMPTS[:1]))
            one, two = (asyncio.run(store.load(CHAT)) for store in (writer, other))
            made = agent()
            asyncio.run(writer.save(asyncio.run(made.run("first writer", conversation=one))))
            late = asyncio.run(made.run("second writer", conversation=two))
            with pytest.raises(ConversationConflict):
                asyncio.run(other.save(late))
        assert loaded(first) == loaded(second) == loaded(theirs)
        assert "second writer" not in str(first.store.history(CHAT))


def test_a_branch_regenerates_a_turn_and_branches_back_as_in_the_in_memory_store(
    ours: TranscriptConversationStore,
) -> None:
    theirs = InMemoryConversationStore()
    for store in (theirs, ours):
        asyncio.run(converse(store, PROMPTS[:2], after=100))
        record = asyncio.run(store.read_record(CHAT))
        assert record is not None
        branched = asyncio.run(store.branch(CHAT, at=4, expected_revision=record.revision))
        asyncio.run(store.save(asyncio.run(agent(after=100).run("instead", conversation=branched))))
    assert loaded(ours) == loaded(theirs)
    history = ours.store.history(CHAT)
    left = [entry["id"] for entry in history if entry["rewound"]]
    assert len(left) == 4 and not [entry for entry in history if entry["superseded_by"]]
    record = asyncio.run(ours.read_record(CHAT))
    assert record is not None and record.branches == [left[-1]]
    back = asyncio.run(ours.branch(CHAT, from_entry=left[-1], expected_revision=record.revision))
    their_record = asyncio.run(theirs.read_record(CHAT))
    assert their_record is not None
    asyncio.run(
        theirs.branch(
            CHAT, from_entry=their_record.branches[-1], expected_revision=their_record.revision
        )
    )
    assert comparable(back.messages) == loaded(ours) == loaded(theirs)
    assert [m["id"] for m in ours.store.active(CHAT)][4:] == left  # restored, in order
    assert ours.store.verify_projections().ok


def test_a_fork_is_a_child_session_holding_only_the_entries_added_after_it(
    ours: TranscriptConversationStore,
) -> None:
    theirs = InMemoryConversationStore()
    for store in (theirs, ours):
        asyncio.run(converse(store, PROMPTS[:2], after=100))
        fork = asyncio.run(store.fork(CHAT, at=4, new_conversation_id="fork"))
        asyncio.run(store.save(asyncio.run(agent(after=100).run("elsewhere", conversation=fork))))
        asyncio.run(converse(store, ["and on"], after=100))
    assert loaded(ours, "fork") == loaded(theirs, "fork")
    assert loaded(ours) == loaded(theirs)
    session = ours.store.session("fork")
    assert (session["parent_id"], session["source"]) == (CHAT, "pydantic-ai")
    assert len(ours.store.history("fork")) == 4  # the new turn: its 4 entries, no copies
    record = asyncio.run(ours.read_record("fork"))
    assert record is not None and record.forked_from == CHAT
    with TranscriptConversationStore(url=ours.store.config.url) as fresh:  # knows no entry
        assert comparable(asyncio.run(fresh.load("fork")).messages) == loaded(theirs, "fork")


def test_conversations_are_listed_by_scope_newest_first_as_in_the_in_memory_store(
    ours: TranscriptConversationStore,
) -> None:
    theirs = InMemoryConversationStore()
    listed = []
    for store in (theirs, ours):
        for name, scope in (("a", "ada"), ("b", "bob"), ("c", "ada"), ("d", None)):
            conversation = Conversation(conversation_id=name)
            result = asyncio.run(agent().run("hello", conversation=conversation))
            asyncio.run(store.save(result, scope=scope))
        asyncio.run(converse(store, ["again"], conversation_id="a"))
        listed.append(
            [
                [record.conversation_id for record in asyncio.run(store.list_conversations(**a))]
                for a in ({}, {"scope": "ada"}, {"limit": 2}, {"scope": "nobody"})
            ]
        )
    assert listed[0] == listed[1] == [["a", "d", "c", "b"], ["a", "c"], ["a", "d"], []]
    with pytest.raises(ConversationConflict):  # saved with another scope: not in this one
        asyncio.run(converse(ours, ["mine?"], conversation_id="b", scope="ada"))


def test_a_title_set_by_update_survives_saves_and_guards_a_second_title(
    ours: TranscriptConversationStore,
) -> None:
    theirs = InMemoryConversationStore()
    for store in (theirs, ours):
        asyncio.run(converse(store, PROMPTS[:1], after=100))
        record = asyncio.run(store.update(CHAT, title="Trip", metadata={"model": "m"}))
        assert (record.title, record.metadata) == ("Trip", {"model": "m"})
        asyncio.run(converse(store, PROMPTS[1:2], after=100))
        with pytest.raises(ConversationConflict):
            asyncio.run(store.update(CHAT, title="Agent's title", expected_title=None))
        record = asyncio.run(store.update(CHAT, title=None, expected_title="Trip"))
        assert (record.title, record.metadata) == (None, {"model": "m"})
        with pytest.raises(UserError):
            asyncio.run(store.update("nobody", title="x"))
    assert ours.store.session(CHAT)["state"]["metadata"] == {"model": "m"}
    assert loaded(ours) == loaded(theirs)


def test_a_deleted_conversation_no_longer_loads_or_lists_and_its_entries_stay_stored(
    ours: TranscriptConversationStore,
) -> None:
    asyncio.run(converse(ours, PROMPTS[:2], after=100))
    stored = ours.store.history(CHAT)
    asyncio.run(ours.delete(CHAT))
    assert asyncio.run(ours.load(CHAT)) is None
    assert asyncio.run(ours.list_conversations()) == []
    assert ours.store.active(CHAT) == []
    assert [entry["id"] for entry in ours.store.history(CHAT)] == [e["id"] for e in stored]
    asyncio.run(converse(ours, ["a new start"], after=100))  # the same id, a new conversation
    assert ours.store.active(CHAT)[0]["content"] == "Answer briefly.\na new start"
    assert len(loaded(ours)) == 4
    ours.store.forget(CHAT)  # erased for good
    assert asyncio.run(ours.load(CHAT)) is None


def test_a_paused_run_keeps_the_tool_calls_it_waits_on_in_the_store(
    ours: TranscriptConversationStore,
) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.tools import DeferredToolRequests

    def model(messages: list, info: object) -> ModelResponse:
        if any(part.part_kind == "tool-return" for part in messages[-1].parts):
            return ModelResponse(parts=[TextPart("deleted")])
        return ModelResponse(parts=[ToolCallPart("delete_file", {"path": "a.txt"}, "c1")])

    paused: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model), output_type=[str, DeferredToolRequests]
    )

    @paused.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        return f"{path} deleted"

    theirs = InMemoryConversationStore()
    for store in (theirs, ours):
        result = asyncio.run(
            paused.run("delete a.txt", conversation=Conversation(conversation_id=CHAT))
        )
        asyncio.run(store.save(result))
    mine, their = (asyncio.run(store.load(CHAT)) for store in (ours, theirs))
    assert mine is not None and their is not None
    assert mine.deferred_tool_requests == their.deferred_tool_requests is not None
    assert mine.deferred_tool_requests.approvals[0].tool_name == "delete_file"


def test_a_result_saved_twice_records_its_compaction_once(
    ours: TranscriptConversationStore,
) -> None:
    results = asyncio.run(converse(ours, PROMPTS[:3]))
    assert results[-1].compactions
    events = ours.store.events(CHAT)
    asyncio.run(ours.save(results[-1]))  # nothing new: no entry, no compaction
    assert [e["type"] for e in ours.store.events(CHAT)][: len(events)] == [
        e["type"] for e in events
    ]
    assert len(ours.store.compactions(CHAT)) == 1


def test_a_conversation_saved_without_its_run_stores_the_summary_as_a_message(
    ours: TranscriptConversationStore,
) -> None:
    """Only the run's result says what a compaction replaced: `save(result.conversation)`
    stores its summary as one more entry, and no compaction."""
    made = agent()
    conversation = Conversation(conversation_id=CHAT)
    for prompt in PROMPTS[:3]:
        result = asyncio.run(made.run(prompt, conversation=conversation))
        conversation = result.conversation
        asyncio.run(ours.save(conversation))
    assert result.compactions
    assert ours.store.compactions(CHAT) == []
    theirs = InMemoryConversationStore()
    asyncio.run(converse(theirs, PROMPTS[:3]))
    assert loaded(ours) == loaded(theirs)


def test_a_serialized_conversation_edited_before_its_last_turn_is_saved_as_a_branch(
    ours: TranscriptConversationStore,
) -> None:
    theirs = InMemoryConversationStore()
    for store in (theirs, ours):
        asyncio.run(converse(store, PROMPTS[:2], after=100))
        conversation = asyncio.run(store.load(CHAT))
        copy = ConversationTypeAdapter.validate_json(
            ConversationTypeAdapter.dump_json(conversation)
        )
        copy.messages = copy.messages[:4]  # the second turn dropped: a rewritten history
        asyncio.run(store.save(asyncio.run(agent(after=100).run("instead", conversation=copy))))
    assert loaded(ours) == loaded(theirs)
    record = asyncio.run(ours.read_record(CHAT))
    assert record is not None and len(record.branches) == 1
    assert len([entry for entry in ours.store.history(CHAT) if entry["rewound"]]) == 4


def test_entries_are_read_by_id_from_a_store_object_that_never_saw_them(
    ours: TranscriptConversationStore,
) -> None:
    saved = asyncio.run(
        ours.save(asyncio.run(agent().run("hi", conversation=Conversation(conversation_id=CHAT))))
    )
    with TranscriptConversationStore(url=ours.store.config.url) as fresh:
        entry = asyncio.run(fresh.read_entry(saved[-1].id))
        assert (entry.id, entry.parent_id) == (saved[-1].id, saved[-2].id)
        assert comparable([entry.message]) == comparable([saved[-1].message])
        assert [e.id for e in asyncio.run(fresh.read_history(saved[-1].id))] == [
            e.id for e in saved
        ]
        with pytest.raises(KeyError):
            asyncio.run(fresh.read_entry("no-such-entry"))


def test_a_conversation_id_naming_another_programs_session_is_refused(
    ours: TranscriptConversationStore,
) -> None:
    ours.store.start(CHAT, source="langchain")
    ours.store.append(CHAT, [{"role": "user", "content": "not pydantic-ai's"}])
    assert asyncio.run(ours.load(CHAT)) is None
    with pytest.raises(ConversationConflict, match="langchain"):
        asyncio.run(converse(ours, ["hello"]))
    assert len(ours.store.history(CHAT)) == 1


def test_a_failing_compaction_fails_the_run_and_stores_nothing_as_in_the_in_memory_store(
    ours: TranscriptConversationStore,
) -> None:
    theirs = InMemoryConversationStore()
    for store in (theirs, ours):
        asyncio.run(converse(store, PROMPTS[:2]))
        with pytest.raises(RuntimeError, match="summarizer is down"):
            asyncio.run(converse(store, ["one too many"], fail=True))
    assert loaded(ours) == loaded(theirs)
    assert ours.store.compactions(CHAT) == []


def test_a_compaction_of_a_conversation_read_back_from_json_is_told_by_equal_messages(
    ours: TranscriptConversationStore,
) -> None:
    theirs = InMemoryConversationStore()
    for store in (theirs, ours):
        asyncio.run(converse(store, PROMPTS[:2], after=100))
        conversation = asyncio.run(store.load(CHAT))
        copy = ConversationTypeAdapter.validate_json(
            ConversationTypeAdapter.dump_json(conversation)
        )
        result = asyncio.run(agent(after=100).run("compact", conversation=copy, compact=True))
        assert result.compactions
        asyncio.run(store.save(result))
    assert loaded(ours) == loaded(theirs)
    entries = asyncio.run(ours.load_entries(CHAT))
    assert entries is not None
    [audit] = ours.store.compactions(CHAT)
    # It kept the last response and the new request: every entry before those, summarized.
    assert audit["superseded"] == [entry.id for entry in entries[:7]]
    assert audit["added"] == [entries[8].id] and audit["reason"] == "manual"


def test_a_compaction_of_the_last_messages_loaded_supersedes_none_of_the_others(
    ours: TranscriptConversationStore,
) -> None:
    theirs = InMemoryConversationStore()
    for store in (theirs, ours):
        asyncio.run(converse(store, PROMPTS[:3], after=100))
        window = asyncio.run(store.load(CHAT, limit=4))  # the last turn only
        result = asyncio.run(agent(after=100).run("compact", conversation=window, compact=True))
        asyncio.run(store.save(result))
    assert loaded(ours) == loaded(theirs)
    entries = asyncio.run(ours.load_entries(CHAT))
    assert entries is not None
    [audit] = ours.store.compactions(CHAT)
    assert audit["superseded"] == [entry.id for entry in entries[8:11]]  # the window's three
    active = [message["id"] for message in ours.store.active(CHAT)]
    assert active[:8] == [entry.id for entry in entries[:8]]


def test_a_conversation_id_no_session_may_have_is_refused_as_the_store_refuses_it(
    ours: TranscriptConversationStore,
) -> None:
    from transcripts import TranscriptError

    with pytest.raises(TranscriptError, match="NUL"):
        asyncio.run(converse(ours, ["hello"], conversation_id="nul\x00id"))
    assert ours.store.sessions() == []


def test_of_two_writers_saving_one_conversation_at_once_exactly_one_saves(
    store_url: str,
) -> None:
    async def race() -> list[BaseException | None]:
        with (
            TranscriptConversationStore(url=store_url) as first,
            TranscriptConversationStore(url=store_url) as second,
        ):
            await converse(first, PROMPTS[:1], after=100)
            runs = []
            for name, store in (("first", first), ("second", second)):
                conversation = await store.load(CHAT)
                runs.append((store, await agent(after=100).run(name, conversation=conversation)))
            saved = await asyncio.gather(
                *(store.save(result) for store, result in runs), return_exceptions=True
            )
            return [None if isinstance(s, list) else s for s in saved]

    outcomes = asyncio.run(race())
    assert sorted(type(o).__name__ for o in outcomes) == ["ConversationConflict", "NoneType"]
    with TranscriptConversationStore(url=store_url) as check:
        assert len(loaded(check)) == 8  # the first turn and the winner's, nothing of the other
        assert check.store.verify_projections().ok
