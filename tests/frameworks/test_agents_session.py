"""TranscriptSession under the OpenAI Agents SDK's real Runner, with the SDK's own scripted
model: what it stores, what the model is given, ids, re-sent items, threads."""

from __future__ import annotations

import asyncio
import threading

import pytest
from agents import Runner
from agents.testing import ScriptedModel

from support.agents import agent, run, script_tool_turn, turn
from transcripts import TranscriptStore
from transcripts.integrations.openai_agents import TranscriptSession

SESSION = "agent-session"


def stored_items(store: TranscriptStore, session_id: str = SESSION) -> list[dict]:
    return [message["openai_agents"]["item"] for message in store.active(session_id)]


def test_two_turns_with_a_tool_call_store_every_item_once_and_feed_the_stored_history_back(
    store: TranscriptStore,
) -> None:
    session = TranscriptSession(SESSION, store)
    model = ScriptedModel()

    async def two_turns() -> None:
        script_tool_turn(model, "Paris", "call_1", "It is sunny in Paris.")
        await Runner.run(agent(model), "Weather in Paris?", session=session)
        await turn(model, "Thanks!", "You're welcome.", session=session)

    run(two_turns())

    items = run(session.get_items())
    assert stored_items(store) == items
    assert [item.get("type", item.get("role")) for item in items] == [
        "user",
        "function_call",
        "function_call_output",
        "message",
        "user",
        "message",
    ]
    # The second turn's model input is the stored history, then the new message.
    assert model.calls[-1].input == items[:-1]
    ids = [message["id"] for message in store.active(SESSION)]
    assert len(set(ids)) == len(ids) == len(store.history(SESSION)) == 6
    # The store keeps the tool pair's facts, so a compaction cannot orphan the result.
    call, output = store.active(SESSION)[1:3]
    assert (call["role"], call["tool_calls"][0]["id"]) == ("assistant", "call_1")
    assert (output["role"], output["tool_call_id"]) == ("tool", "call_1")


def test_items_come_back_exactly_as_given_reasoning_and_repeated_provider_ids_included(
    store: TranscriptStore,
) -> None:
    session = TranscriptSession(SESSION, store)
    items = [
        {"role": "user", "content": "ok"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Think"}]},
        {
            "id": "__fake_id__",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Sure.", "annotations": []}],
        },
        {"role": "user", "content": "ok"},  # the same text again: a second item
        {
            "id": "__fake_id__",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Sure.", "annotations": []}],
        },
    ]
    run(session.add_items(items))

    assert run(session.get_items()) == items
    assert run(session.get_items(limit=2)) == items[-2:]
    assert len(store.history(SESSION)) == 5
    assert {hit["message_id"] for hit in store.search("Think", session_id=SESSION)} == {
        store.active(SESSION)[1]["id"]
    }


def test_a_resent_tool_batch_is_stored_once(store: TranscriptStore) -> None:
    session = TranscriptSession(SESSION, store)
    model = ScriptedModel()
    script_tool_turn(model, "Oslo", "call_7", "Cold.")
    run(Runner.run(agent(model), "Weather in Oslo?", session=session))
    tool_batch = run(session.get_items())[1:3]

    # The tool items given again, by the caller and by the Runner re-sending its input.
    run(session.add_items(tool_batch))
    run(
        turn(
            model,
            [*tool_batch, {"role": "user", "content": "And now?"}],
            "Still cold.",
            session=session,
        )
    )

    kinds = [item.get("type", item.get("role")) for item in run(session.get_items())]
    assert kinds == ["user", "function_call", "function_call_output", "message", "user", "message"]
    assert len(store.history(SESSION)) == 6


def test_without_call_id_dedupe_every_item_is_a_new_message(store: TranscriptStore) -> None:
    session = TranscriptSession(SESSION, store, dedupe=None)
    call = {"type": "function_call", "call_id": "call_0", "name": "forecast", "arguments": "{}"}
    run(session.add_items([call]))
    run(session.add_items([call]))

    assert run(session.get_items()) == [call, call]
    with pytest.raises(ValueError, match="dedupe"):
        TranscriptSession(SESSION, store, dedupe="content")


def test_two_sessions_run_concurrently_on_one_store(store: TranscriptStore) -> None:
    sessions = [TranscriptSession(f"user-{n}", store) for n in range(2)]
    models = [ScriptedModel() for _ in sessions]

    async def both() -> None:
        for round_ in range(3):
            await asyncio.gather(
                *(
                    turn(model, f"user {n} says {round_}", f"reply {n}.{round_}", session=session)
                    for n, (model, session) in enumerate(zip(models, sessions, strict=True))
                )
            )

    run(both())
    for n, (model, session) in enumerate(zip(models, sessions, strict=True)):
        items = run(session.get_items())
        assert [item.get("content") for item in items[::2]] == [
            f"user {n} says {r}" for r in range(3)
        ]
        assert model.calls[-1].input == items[:-1]
        assert stored_items(store, f"user-{n}") == items


def test_one_session_driven_from_several_threads_each_with_its_own_loop(
    store: TranscriptStore,
) -> None:
    session = TranscriptSession(SESSION, store)
    start = threading.Barrier(4)

    def writer(n: int) -> None:
        start.wait()
        for k in range(5):
            asyncio.run(session.add_items([{"role": "user", "content": f"thread {n} item {k}"}]))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    contents = [item["content"] for item in run(session.get_items())]
    assert sorted(contents) == sorted(f"thread {n} item {k}" for n in range(4) for k in range(5))
    for n in range(4):  # each thread's items in its own order
        assert [c for c in contents if c.startswith(f"thread {n} ")] == [
            f"thread {n} item {k}" for k in range(5)
        ]


def test_session_settings_limit_the_history_and_unknown_keys_raise_as_the_sdk_s_do(
    store: TranscriptStore,
) -> None:
    session = TranscriptSession(SESSION, store, session_settings={"limit": 2})
    run(session.add_items([{"role": "user", "content": f"m{n}"} for n in range(4)]))

    assert [item["content"] for item in run(session.get_items())] == ["m2", "m3"]
    assert [item["content"] for item in run(session.get_items(limit=3))] == ["m1", "m2", "m3"]
    assert run(session.get_items(limit=0)) == []
    with pytest.raises(TypeError, match="Unknown session settings: limitt"):
        TranscriptSession(SESSION, store, session_settings={"limitt": 1})


def test_a_session_opened_from_a_url_closes_its_store_and_refuses_calls_after(
    store_url: str,
) -> None:
    session = TranscriptSession(SESSION, url=store_url, model="gpt-test")
    run(session.add_items([{"role": "user", "content": "hello"}]))
    session.close()

    with pytest.raises(RuntimeError, match="TranscriptSession is closed"):
        run(session.add_items([]))
    with pytest.raises(RuntimeError, match="TranscriptSession is closed"):
        run(session.get_items())
    with TranscriptStore.open(store_url) as reopened:
        [info] = reopened.sessions()
        assert (info["id"], info["source"], info["model"]) == (SESSION, "openai-agents", "gpt-test")


def test_a_session_never_written_reads_as_empty_and_is_not_started(store: TranscriptStore) -> None:
    session = TranscriptSession(SESSION, store)

    assert run(session.get_items()) == []
    assert store.sessions() == []


def test_pop_takes_the_latest_item_out_and_adding_it_back_restores_it(
    store: TranscriptStore,
) -> None:
    session = TranscriptSession(SESSION, store)
    model = ScriptedModel()
    run(turn(model, "Hi", "Hello!", session=session))
    items = run(session.get_items())

    popped = run(session.pop_item())
    assert popped == items[-1]
    assert run(session.get_items()) == items[:-1]
    [rewound] = [entry for entry in store.history(SESSION) if entry["rewound"]]
    assert rewound["message"]["openai_agents"]["item"] == popped

    run(session.add_items([popped]))  # the SDK's own undo of a pop
    assert run(session.get_items()) == items
    assert len(store.history(SESSION)) == 2  # restored, not stored again
    assert store.active(SESSION)[-1]["id"] == rewound["id"]

    assert run(TranscriptSession("never-started", store).pop_item()) is None


def test_clear_rewinds_every_item_keeps_the_history_and_the_session_goes_on(
    store: TranscriptStore,
) -> None:
    session = TranscriptSession(SESSION, store)
    model = ScriptedModel()
    script_tool_turn(model, "Rome", "call_9", "Warm.")
    run(Runner.run(agent(model), "Weather in Rome?", session=session))

    run(session.clear_session())
    assert run(session.get_items()) == []
    assert [entry["rewound"] for entry in store.history(SESSION)] == [True] * 4
    assert [event["type"] for event in store.events(SESSION)][-1] == "Rewound"

    run(turn(model, "New topic", "Sure.", session=session))
    assert model.calls[-1].input == [{"role": "user", "content": "New topic"}]
    assert [item.get("content") for item in run(session.get_items())][0] == "New topic"
    assert len(store.history(SESSION)) == 6
