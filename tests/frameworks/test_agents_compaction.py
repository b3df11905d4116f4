"""Compactions of a TranscriptSession under the Agents SDK's real Runner: the session's own
summarizer (the Runner's `run_compaction`), and the SDK's `OpenAIResponsesCompactionSession`
wrapped around it. Each is one compaction event of the store, never a clear and re-add."""

from __future__ import annotations

import httpx
import openai
import pytest
from agents import RunConfig, Runner
from agents.memory import OpenAIResponsesCompactionSession, SessionSettings
from agents.testing import ScriptedModel

from support.agents import CompactEndpoint, agent, run, script_tool_turn, turn
from transcripts import TranscriptStore
from transcripts.integrations.openai_agents import TranscriptSession

SESSION = "compacted"
SUMMARY = {"role": "user", "content": "Summary: the user asked twice."}


def event_types(store: TranscriptStore) -> list[str]:
    return [event["type"] for event in store.events(SESSION)]


def keep_last_two(items: list[dict]) -> list[dict]:
    return [SUMMARY, *items[-2:]]


def test_run_compaction_with_a_summarizer_is_one_committed_compaction_the_next_turn_sees(
    store: TranscriptStore,
) -> None:
    session = TranscriptSession(
        SESSION, store, summarizer=keep_last_two, compact_when=lambda items: len(items) == 4
    )
    model = ScriptedModel()
    run(turn(model, "First question", "First answer.", session=session))
    run(turn(model, "Second question", "Second answer.", session=session))
    stored = store.history(SESSION)

    [compaction] = store.compactions(SESSION)
    assert compaction["status"] == "committed"
    assert compaction["superseded"] == [entry["id"] for entry in stored[:2]]
    assert event_types(store).count("CompactionCommitted") == 1
    assert "Rewound" not in event_types(store)

    run(turn(model, "Third question", "Third answer.", session=session))
    items = run(session.get_items())
    assert items[0] == SUMMARY
    assert model.calls[-1].input == items[:-1]
    assert [item.get("content") for item in items if item.get("role") == "user"] == [
        SUMMARY["content"],
        "Second question",
        "Third question",
    ]
    assert len(store.history(SESSION)) == 7  # nothing deleted: 6 items and the summary


def test_a_failing_summarizer_is_recorded_and_the_run_goes_on(store: TranscriptStore) -> None:
    def failing(items: list[dict]) -> list[dict]:
        raise RuntimeError("summary model unavailable")

    session = TranscriptSession(SESSION, store, summarizer=failing, compact_when=bool)
    model = ScriptedModel()
    result = run(turn(model, "Question", "Answer.", session=session))

    assert result.final_output == "Answer."
    [failure] = store.compactions(SESSION)
    assert (failure["status"], failure["failure"]) == ("failed", "summarize_error")
    assert "summary model unavailable" in failure["error"]
    assert len(run(session.get_items())) == 2


def test_an_async_summarizer_is_awaited_and_forced_compaction_ignores_compact_when(
    store: TranscriptStore,
) -> None:
    async def summarize(items: list[dict]) -> list[dict]:
        return [SUMMARY]

    session = TranscriptSession(SESSION, store, summarizer=summarize, compact_when=lambda _: False)
    run(session.add_items([{"role": "user", "content": f"m{n}"} for n in range(3)]))
    run(session.run_compaction())
    assert store.compactions(SESSION) == []

    run(session.run_compaction({"force": True}))
    assert run(session.get_items()) == [SUMMARY]
    assert store.compactions(SESSION)[0]["status"] == "committed"


def test_a_summary_that_would_orphan_a_tool_result_is_refused_by_the_store(
    store: TranscriptStore,
) -> None:
    def drop_the_call(items: list[dict]) -> list[dict]:
        return [item for item in items if item.get("type") != "function_call"]

    session = TranscriptSession(SESSION, store, summarizer=drop_the_call, compact_when=bool)
    model = ScriptedModel()
    script_tool_turn(model, "Lima", "call_3", "Mild.")
    run(Runner.run(agent(model), "Weather in Lima?", session=session))

    failures = [entry["failure"] for entry in store.compactions(SESSION)]
    assert failures and set(failures) == {"orphaned_tool_result"}
    assert len(run(session.get_items())) == 4


# -- the SDK's OpenAIResponsesCompactionSession around ours -------------------------------

COMPACTED = [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Earlier: hi"}]},
    {"type": "compaction", "id": "cmp_server", "encrypted_content": "opaque"},
]


def wrapped(store: TranscriptStore, endpoint: CompactEndpoint, **options: object) -> tuple:
    session = TranscriptSession(SESSION, store)
    wrapper = OpenAIResponsesCompactionSession(
        SESSION, session, client=endpoint, model="gpt-4.1", **options
    )
    return session, wrapper


def test_the_sdk_s_automatic_compaction_replaces_the_turn_in_one_compaction_event(
    store: TranscriptStore,
) -> None:
    endpoint = CompactEndpoint(output=COMPACTED)
    session, wrapper = wrapped(store, endpoint, should_trigger_compaction=lambda _: True)
    model = ScriptedModel()
    run(turn(model, "Hi", "Hello!", session=wrapper))

    assert len(endpoint.calls) == 1
    assert run(session.get_items()) == COMPACTED
    assert event_types(store) == [
        "Started",
        "MessageAppended",
        "MessageAppended",
        "CompactionCommitted",
    ]
    [compaction] = store.compactions(SESSION)
    assert len(compaction["superseded"]) == 2 and len(compaction["added"]) == 2
    assert len(store.history(SESSION)) == 4  # the originals are kept, superseded


def test_the_sdk_s_automatic_compaction_replaces_only_the_exchange_the_model_saw(
    store: TranscriptStore,
) -> None:
    # The SDK's suffix snapshot (its `_get_compaction_snapshot` hook): history older than
    # the model's input is kept; without the hook the SDK would skip this compaction.
    endpoint = CompactEndpoint(output=COMPACTED)
    session, wrapper = wrapped(store, endpoint, should_trigger_compaction=lambda _: True)
    old = [{"role": role, "content": f"old {role}"} for role in ("user", "assistant")] * 2
    run(session.add_items(old))
    model = ScriptedModel()
    last_two = RunConfig(session_settings=SessionSettings(limit=2))
    run(turn(model, "Hi", "Hello!", session=wrapper, run_config=last_two))

    assert model.calls[-1].input == [*old[2:], {"role": "user", "content": "Hi"}]
    assert run(session.get_items()) == [*old[:2], *COMPACTED]
    [compaction] = store.compactions(SESSION)
    assert len(compaction["superseded"]) == 4
    assert event_types(store)[-1] == "CompactionCommitted"


def test_the_sdk_s_manual_compaction_replaces_the_history_in_one_compaction_event(
    store: TranscriptStore,
) -> None:
    endpoint = CompactEndpoint(output=COMPACTED)
    session, wrapper = wrapped(store, endpoint)
    run(wrapper.add_items([{"role": "user", "content": f"m{n}"} for n in range(3)]))

    run(wrapper.run_compaction({"force": True}))

    assert endpoint.calls[0]["input"] == [{"role": "user", "content": f"m{n}"} for n in range(3)]
    assert run(session.get_items()) == COMPACTED
    assert event_types(store)[-1] == "CompactionCommitted"
    assert "Rewound" not in event_types(store)


@pytest.mark.parametrize("how", ["manual", "automatic"])
def test_when_responses_compact_fails_the_history_is_untouched(
    store: TranscriptStore, how: str
) -> None:
    error = openai.APIConnectionError(request=httpx.Request("POST", "https://api.invalid/"))
    endpoint = CompactEndpoint(error=error)
    session, wrapper = wrapped(store, endpoint, should_trigger_compaction=lambda _: True)
    model = ScriptedModel()
    if how == "manual":
        run(wrapper.add_items([{"role": "user", "content": "kept"}]))
        with pytest.raises(openai.APIConnectionError):
            run(wrapper.run_compaction({"force": True}))
    else:
        with pytest.raises(openai.APIConnectionError):
            run(turn(model, "Hi", "Hello!", session=wrapper))

    assert endpoint.calls
    assert set(event_types(store)) == {"Started", "MessageAppended"}
    stored = [message["openai_agents"]["item"] for message in store.active(SESSION)]
    assert stored and run(session.get_items()) == stored
    assert all(entry["active"] for entry in store.history(SESSION))


def test_a_suffix_replaced_after_the_tail_moved_is_a_recorded_conflict_keeping_its_output(
    store: TranscriptStore,
) -> None:
    session = TranscriptSession(SESSION, store)
    run(session.add_items([{"role": "user", "content": f"turn {n}"} for n in range(3)]))
    snapshot = run(session._get_compaction_snapshot(2))
    run(session.pop_item())  # the tail the snapshot saw is no longer the active tail

    assert run(snapshot.replace_suffix(0, COMPACTED)) is False
    [failure] = store.compactions(SESSION)
    assert failure["failure"] == "conflict"
    proposed = store.compaction(SESSION, failure["id"])["proposed"]
    assert [message["role"] for message in proposed] == ["user", "assistant"]  # COMPACTED
