"""What `append` / `sync` accept is visible, on every backend: in `active()`, `history()`,
the `sessions()` counts, the JSONL export of the command line and (where the store has a
search index) `search()` by its words, unchanged, and again after `rebuild_projections()`.
A message the views could not hold is refused by `append` with `InvalidMessageError`, the
same way on every backend: never acknowledged and then missing (quarantined by the views).

Messages are JSON objects with a role whose every other key is kept as given (README,
"Messages"): LangChain's `content` is `list[str | dict]`, tool calls come as strings, lists
of strings or objects, parts may have no `text`, and any key may nest.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from support.backends import BACKENDS, fresh_url
from support.cli import exported
from support.json_messages import messages
from transcripts import InvalidMessageError, TranscriptStore

SESSION = "shapes"
FLAVOURS = [*BACKENDS, "sqlite-encrypted"]


@pytest.fixture(params=FLAVOURS)
def flavour(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def flavoured_url(
    flavour: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> str:
    """A fresh store of the flavour: the three backends, and an encrypted SQLite file (no
    search index there: `search` is not available, everything else must hold)."""
    if flavour == "sqlite-encrypted":
        from transcripts.config import new_cipher_key

        monkeypatch.setenv("TRANSCRIPTS_CIPHER_KEY", new_cipher_key())  # the store and the CLI
        return fresh_url("sqlite", tmp_path, request)
    return fresh_url(flavour, tmp_path, request)


@pytest.fixture
def shapes_store(flavoured_url: str) -> Iterator[TranscriptStore]:
    with TranscriptStore.open(flavoured_url) as opened:
        yield opened


# name: (message, words that must each find it by search)
SHAPES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "content a list of strings (LangChain)": (
        {"role": "user", "content": ["What is", "2+2? zebracornia"]},
        ["zebracornia"],
    ),
    "content a list of strings and dicts": (
        {
            "role": "user",
            "content": ["plain quokkafish", {"type": "text", "text": "typed narwhalic part"}],
        },
        ["quokkafish", "narwhalic"],
    ),
    "tool_calls a string": (
        {"role": "assistant", "content": None, "tool_calls": "lookup marmosetville forecast"},
        ["marmosetville"],
    ),
    "tool_calls a list of strings": (
        {"role": "assistant", "content": "calling", "tool_calls": ["fetch axolotlium", "again"]},
        ["axolotlium"],
    ),
    "tool_calls an object": (
        {
            "role": "assistant",
            "content": None,
            "tool_calls": {
                "id": "call_1",
                "type": "function",
                "function": {"name": "capybarize", "arguments": '{"q": "x"}'},
            },
        },
        ["capybarize"],
    ),
    "tool_calls an object of strings": (
        {"role": "assistant", "content": None, "tool_calls": {"name": "pangolinade"}},
        ["pangolinade"],
    ),
    "parts without text": (
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
                {"type": "text", "text": "caption wombatine"},
            ],
        },
        ["wombatine"],
    ),
    "nested objects": (
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "okapified answer",
                    "annotations": [{"type": "url_citation", "url_citation": {"url": "u"}}],
                },
                ["a", ["nested", {"list": [1, 2.5, None, True]}]],
            ],
            "metadata": {"a": {"b": [1, {"c": None, "d": ["e", {"f": "g"}]}]}},
        },
        ["okapified"],
    ),
    "unicode": (
        {
            "role": "user",
            "content": [
                "Grüße aus Köln 東京 🦄",
                "tapirissimo façade",
                {"type": "text", "text": "ñ"},
            ],
            "name": "ユーザー",
        },
        ["tapirissimo"],
    ),
    "reasoning beside parts of strings": (
        {"role": "assistant", "content": ["ok"], "reasoning": "thinking about ibexlore"},
        ["ibexlore"],
    ),
    "tool message with parts of strings": (
        {"role": "tool", "tool_call_id": "call_9", "content": ["17°C", "showers gerenukian"]},
        ["gerenukian"],
    ),
}

LEAD = {"id": "lead", "role": "user", "content": "a plain question first"}


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def check_visible(
    store: TranscriptStore,
    url: str,
    session_id: str,
    active: list[dict[str, Any]],
    history: list[dict[str, Any]],
    words: list[str],
    target_id: str,
) -> None:
    """Every reader sees exactly `active` and `history` (messages with ids, in order)."""
    assert [canonical(m) for m in store.active(session_id)] == [canonical(m) for m in active]
    stored = store.history(session_id)
    assert [canonical(h["message"]) for h in stored] == [canonical(m) for m in history]
    active_ids = {m["id"] for m in active}
    assert [h["active"] for h in stored] == [h["id"] in active_ids for h in stored]
    (summary,) = [s for s in store.sessions() if s["id"] == session_id]
    assert (summary["messages"], summary["active"], summary["quarantined"]) == (
        len(history),
        len(active),
        0,
    )
    if store.config.cipher_key is None:  # an encrypted store has no search index
        for word in words:
            hits = store.search(word, session_id=session_id)
            assert target_id in [hit["message_id"] for hit in hits], (word, hits)
    if url != "memory://":  # the command line reads the same database
        assert [canonical(m) for m in exported(url, session_id)] == [canonical(m) for m in active]
        assert [canonical(m) for m in exported(url, session_id, history=True)] == [
            canonical(m) for m in history
        ]
    report = store.verify_projections()
    assert report.ok, report.problems
    assert all(status.quarantined == 0 for status in store.projection_status())


@pytest.mark.parametrize("shape", SHAPES)
def test_an_accepted_message_of_any_shape_is_visible_everywhere_and_after_a_rebuild(
    shapes_store: TranscriptStore, flavoured_url: str, shape: str
) -> None:
    message, words = SHAPES[shape]
    store = shapes_store
    store.start(SESSION)
    try:
        returned = store.append(SESSION, [LEAD, message])
    except InvalidMessageError:
        pytest.fail(f"{shape}: a message the README accepts was refused")
    assert len(returned) == 2
    lead, stored = returned
    assert lead == LEAD
    assert stored == {**message, "id": stored["id"]}
    check_visible(store, flavoured_url, SESSION, returned, returned, words, stored["id"])
    store.rebuild_projections()
    check_visible(store, flavoured_url, SESSION, returned, returned, words, stored["id"])


@pytest.mark.parametrize("shape", SHAPES)
def test_sync_returns_a_message_of_any_shape_in_the_active_list(
    shapes_store: TranscriptStore, shape: str
) -> None:
    message, _ = SHAPES[shape]
    store = shapes_store
    store.start(SESSION)
    live = store.sync(SESSION, [LEAD])
    live = store.sync(SESSION, [*live, message])
    assert len(live) == 2, live
    assert live[0] == LEAD
    assert live[1] == {**message, "id": live[1]["id"]}
    assert store.active(SESSION) == live
    assert store.sync(SESSION, live) == live  # stored ids are skipped: nothing new


@pytest.mark.parametrize("shape", SHAPES)
def test_a_session_holding_a_message_of_any_shape_compacts_and_stays_verified(
    shapes_store: TranscriptStore, flavoured_url: str, shape: str
) -> None:
    message, words = SHAPES[shape]
    store = shapes_store
    store.start(SESSION)
    lead, stored = store.append(SESSION, [LEAD, message])
    summary = {"role": "system", "content": "summary of the plain question"}
    result = store.compact(SESSION, lambda messages: [summary, messages[-1]], reason="budget")
    assert result.committed, (result.failure, result.error)
    new_summary, kept = result.messages
    assert kept == stored
    assert new_summary == {**summary, "id": new_summary["id"]}
    assert store.active(SESSION) == result.messages
    history = [lead, stored, new_summary]
    check_visible(store, flavoured_url, SESSION, result.messages, history, words, stored["id"])
    (entry,) = store.compactions(SESSION)
    assert (entry["status"], entry["superseded"]) == ("committed", ["lead"])
    # and compacting the odd message away works too
    again = store.compact(SESSION, lambda messages: [messages[0]], reason="again")
    assert again.committed, (again.failure, again.error)
    assert store.active(SESSION) == [new_summary]
    assert (
        store.explain(SESSION, stored["id"])["superseded"]["compaction_id"] == again.compaction_id
    )
    store.rebuild_projections()
    assert store.active(SESSION) == [new_summary]
    assert store.verify_projections().ok


@pytest.mark.parametrize("shape", SHAPES)
def test_a_message_of_any_shape_that_is_the_whole_context_can_be_compacted_away(
    shapes_store: TranscriptStore, shape: str
) -> None:
    message, _ = SHAPES[shape]
    store = shapes_store
    store.start(SESSION)
    (stored,) = store.append(SESSION, [message])
    attempt = store.begin_compaction(SESSION)
    assert attempt.messages == [stored]
    result = store.compact(SESSION, lambda messages: [{"role": "system", "content": "summary"}])
    assert result.committed, (result.failure, result.error)
    (summary,) = result.messages
    assert store.active(SESSION) == [summary]
    assert [(h["id"], h["active"]) for h in store.history(SESSION)] == [
        (stored["id"], False),
        (summary["id"], True),
    ]
    assert store.verify_projections().ok


def test_several_odd_messages_in_one_append_are_all_visible(
    shapes_store: TranscriptStore, flavoured_url: str
) -> None:
    store = shapes_store
    store.start(SESSION)
    messages = [message for message, _ in SHAPES.values()]
    returned = store.append(SESSION, messages)
    assert [{k: v for k, v in m.items() if k != "id"} for m in returned] == messages
    assert store.active(SESSION) == returned
    assert [h["message"] for h in store.history(SESSION)] == returned
    (summary,) = store.sessions()
    assert (summary["messages"], summary["active"], summary["quarantined"]) == (
        len(messages),
        len(messages),
        0,
    )
    assert store.verify_projections().ok
    store.rebuild_projections()
    assert store.active(SESSION) == returned
    assert store.verify_projections().ok


# -- any JSON, as a property ----------------------------------------------------------------

EXAMPLES = {"memory": 100, "sqlite": 100, "postgres": 50}
_counter = itertools.count()


@pytest.fixture
def property_store(store_url: str) -> Iterator[TranscriptStore]:
    with TranscriptStore.open(store_url) as opened:
        yield opened


def test_any_json_message_is_refused_whole_or_visible_exactly_as_given(
    property_store: TranscriptStore, store_url: str, backend: str
) -> None:
    store = property_store

    def check(session_id: str, stored: dict[str, Any]) -> None:
        assert [canonical(m) for m in store.active(session_id)] == [canonical(stored)]
        assert [canonical(h["message"]) for h in store.history(session_id)] == [canonical(stored)]
        (summary,) = [s for s in store.sessions() if s["id"] == session_id]
        assert (summary["messages"], summary["active"], summary["quarantined"]) == (1, 1, 0)
        # this session's problems only: an earlier example's would fail every later one
        problems = [p for p in store.verify_projections().problems if p.session_id == session_id]
        assert problems == []

    @settings(
        max_examples=EXAMPLES[backend],
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(message=messages())
    def run(message: dict[str, Any]) -> None:
        session_id = f"p-{next(_counter)}"
        store.start(session_id)
        before = store.events(session_id)
        try:
            returned = store.append(session_id, [message])
        except InvalidMessageError:
            assert store.events(session_id) == before
            assert store.active(session_id) == []
            assert store.history(session_id) == []
            return
        (stored,) = returned
        assert isinstance(stored.get("id"), str) and stored["id"]
        assert canonical(stored) == canonical({**message, "id": stored["id"]})
        check(session_id, stored)
        store.rebuild_projections()
        check(session_id, stored)

    run()
    report = store.verify_projections()
    assert report.ok, report.problems
