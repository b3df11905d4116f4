"""Reopening a SQLite file gives back exactly what was stored, and ids stay idempotent."""

from __future__ import annotations

import pytest

from support.reads import everything
from transcripts import MessageConflictError, TranscriptStore


def fill(store: TranscriptStore) -> None:
    """Two sessions with unicode, tool calls, a failed and a committed compaction."""
    store.start(
        "parent", source="cli", model="model-a", metadata={"cwd": "/home/ann", "tags": ["x"]}
    )
    store.start("child", parent_id="parent")
    store.append(
        "parent",
        [
            {"id": "q", "role": "user", "content": "héllo 🦜", "name": None},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"x": 1.5}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "ok"}]},
            {"role": "assistant", "content": "done", "n": 2**63 - 1, "f": 1.0},
        ],
    )
    store.compact("parent", lambda messages: 1 / 0, reason="first try")
    attempt = store.begin_compaction("parent")
    store.append("parent", [{"role": "user", "content": "while compacting"}])
    store.commit_compaction(
        attempt,
        [{"role": "system", "content": "résumé"}, attempt.messages[-1]],
        reason="second try",
        tokens_before=900,
        tokens_after=120,
    )
    store.append("child", [{"role": "user", "content": "child"}])


@pytest.fixture
def written(sqlite_url: str) -> dict:
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
        return everything(store)


def test_reopening_a_file_gives_back_exactly_the_same_sessions_messages_histories_audits_and_events(
    sqlite_url: str, written: dict
) -> None:
    with TranscriptStore.open(sqlite_url) as reopened:
        assert everything(reopened) == written
    assert [session["id"] for session in written["sessions"]] == ["parent", "child"]
    assert [entry["status"] for entry in written["parent"]["compactions"]] == [
        "failed",
        "committed",
    ]


def test_messages_read_back_after_reopening_keep_their_exact_json(
    sqlite_url: str, written: dict
) -> None:
    with TranscriptStore.open(sqlite_url) as reopened:
        stored = {entry["id"]: entry["message"] for entry in reopened.history("parent")}
    assert stored["q"] == {"id": "q", "role": "user", "content": "héllo 🦜", "name": None}
    last = next(m for m in stored.values() if m.get("content") == "done")
    assert type(last["f"]) is float and last["n"] == 2**63 - 1


def test_after_reopening_re_appending_is_still_a_no_op_and_a_changed_message_still_conflicts(
    sqlite_url: str, written: dict
) -> None:
    with TranscriptStore.open(sqlite_url) as reopened:
        superseded = [
            entry["message"] for entry in reopened.history("parent") if not entry["active"]
        ]
        assert reopened.sync("parent", superseded) == written["parent"]["active"]
        with pytest.raises(MessageConflictError):
            reopened.append("parent", [{"id": "q", "role": "user", "content": "changed"}])
        assert reopened.events("parent") == written["parent"]["events"]


def test_after_reopening_starting_a_session_again_with_the_same_arguments_is_a_no_op(
    sqlite_url: str, written: dict
) -> None:
    with TranscriptStore.open(sqlite_url) as reopened:
        reopened.start(
            "parent", source="cli", model="model-a", metadata={"cwd": "/home/ann", "tags": ["x"]}
        )
        reopened.start("child", parent_id="parent")
        assert everything(reopened) == written


def test_a_long_stream_is_replayed_a_page_at_a_time_into_the_transcript_the_whole_makes(
    durable_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.events import replay
    from support.log import log_events
    from transcripts.application import log_reads
    from transcripts.domain.transcript import transcript_id

    with TranscriptStore.open(durable_url) as store:
        store.start("long")
        for i in range(9):
            store.append("long", [{"id": f"m{i}", "role": "user", "content": f"turn {i}"}])
        store.compact(
            "long", lambda messages: [{"role": "system", "content": "sum"}, *messages[-2:]]
        )
        store.rewind("long", count=2)
    monkeypatch.setattr(log_reads, "_REPLAY_PAGE", 4)
    pages: list[object] = []
    with TranscriptStore.open(durable_url) as store:  # as a new process: nothing cached
        select = store._log.recorder.select_events

        def paged(*args: object, **kwargs: object) -> object:
            pages.append(kwargs.get("limit"))
            return select(*args, **kwargs)

        monkeypatch.setattr(store._log.recorder, "select_events", paged)
        attempt = store.begin_compaction("long")
        store.fail_compaction(attempt, "gave up")  # not an append: the session is replayed
        assert pages[:3] == [4, 4, 4]  # 12 events stored: 3 pages, then the fast-forward
        replayed = store._log._cached(transcript_id("long"))
        whole = replay(log_events(durable_url, "long"))
        assert replayed is not None and replayed.complete
        assert (replayed.active, replayed.hashes, replayed.fence_version, replayed.rewound) == (
            whole.active,
            whole.hashes,
            whole.fence_version,
            whole.rewound,
        )
        store.append("long", [{"id": "m7", "role": "user", "content": "turn 7"}])  # a restore
        assert replayed.active[-1] == "m7" and not replayed.rewound & {"m7"}
        result = store.commit_compaction(
            store.begin_compaction("long"), [{"role": "system", "content": "again"}]
        )
        assert result.committed and store.verify_projections().ok
