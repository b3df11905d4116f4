"""The views make a committed compaction where the rows are (a statement per step, whatever
it supersedes): what they hold equals the fold of the log message by message, and a rebuild,
on every backend, whatever the replacement's length against what it replaces, with messages
appended meanwhile, after rewinds, restores and an erasure, and with the compaction in the
batch of the appends it supersedes."""

from __future__ import annotations

from typing import Any

import pytest

from support.log import fold_of, write_behind_the_views
from support.rows import raw_rows
from transcripts import TranscriptStore

SESSION = "views"


def said(n: int, prefix: str = "m") -> list[dict[str, Any]]:
    return [
        {"id": f"{prefix}{i}", "role": ("user", "assistant")[i % 2], "content": f"{prefix} {i}"}
        for i in range(1, n + 1)
    ]


def new(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


def check_against_the_log(store: TranscriptStore, url: str, session_id: str = SESSION) -> None:
    """The views equal the fold of the log, verify is clean, and a rebuild changes nothing."""
    assert store.verify_projections().ok
    if url == "memory://":
        return
    fold = fold_of(url, session_id)
    assert store.active(session_id) == fold.active()
    assert store.history(session_id) == fold.history()
    audit = [{k: v for k, v in e.items() if k != "at"} for e in store.compactions(session_id)]
    assert audit == [{k: v for k, v in e.items() if k != "at"} for e in fold.compactions]
    live = raw_rows(url)
    store.rebuild_projections()
    assert raw_rows(url) == live


def commit_meanwhile(
    store: TranscriptStore, replacement: Any, appended: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Begin, append `appended`, commit `replacement(snapshot)`; the active list after it."""
    attempt = store.begin_compaction(SESSION)
    if appended:
        store.append(SESSION, appended)
    result = store.commit_compaction(attempt, replacement(attempt.messages))
    assert result.committed, result.error
    return result.messages


@pytest.mark.parametrize(
    ("replacement", "expected"),
    [
        # longer than what it replaces: the messages appended meanwhile move down past each other
        (lambda s: [s[2], new("a"), s[0], new("b"), new("c")], ["m3", "a", "m1", "b", "c"]),
        # shorter
        (lambda s: [new("a"), s[1]], ["a", "m2"]),
        # as long, kept messages reordered
        (lambda s: [s[2], s[1], s[0]], ["m3", "m2", "m1"]),
        # nothing kept, nothing added
        (lambda s: [], []),
    ],
    ids=["longer", "shorter", "reordered", "emptied"],
)
def test_a_compaction_with_messages_appended_meanwhile_projects_as_the_log_says(
    store: TranscriptStore, store_url: str, replacement: Any, expected: list[str]
) -> None:
    store.start(SESSION)
    store.append(SESSION, said(3))
    active = commit_meanwhile(store, replacement, said(5, prefix="late"))
    named = [m["content"] if m["role"] == "system" else m["id"] for m in active]
    assert named == [*expected, *(f"late{i}" for i in range(1, 6))]
    assert store.sessions()[0]["active"] == len(active)
    check_against_the_log(store, store_url)


def test_compactions_after_rewinds_and_restores_project_as_the_log_says(
    store: TranscriptStore, store_url: str
) -> None:
    store.start(SESSION)
    store.append(SESSION, said(8))
    store.rewind(SESSION, count=3, reason="undo")
    store.append(SESSION, [said(8)[6]])  # m7 restored, at the end
    commit_meanwhile(store, lambda s: [new("first"), s[-1]], said(2, prefix="late"))
    store.rewind(SESSION, to=store.active(SESSION)[1]["id"])
    store.append(SESSION, said(3, prefix="more"))
    active = commit_meanwhile(store, lambda s: [*s[:2], new("second")], [])
    assert [m["id"] for m in active][1:] == ["m7", active[2]["id"]]
    history = {entry["id"]: entry for entry in store.history(SESSION)}
    assert history["m6"]["rewound"] and history["m6"]["superseded_by"] is None
    assert history["late1"]["rewound"] and not history["late1"]["active"]
    assert {history[f"more{i}"]["superseded_by"] for i in (1, 2, 3)} == {
        store.compactions(SESSION)[-1]["id"]
    }
    check_against_the_log(store, store_url)


def test_a_compaction_beside_an_erased_session_projects_as_the_log_says(
    store: TranscriptStore, store_url: str
) -> None:
    for session in ("gone", SESSION):
        store.start(session)
        store.append(session, said(6))
        store.compact(session, lambda s: [new("summary"), s[-1]])
    store.forget("gone")
    store.append(SESSION, said(2, prefix="after"))
    store.compact(SESSION, lambda s: [s[0], new("again")])
    assert [m["content"] for m in store.active(SESSION)] == ["summary", "again"]
    check_against_the_log(store, store_url)


def test_compactions_in_the_batch_of_the_appends_they_supersede_project_as_the_log_says(
    durable_url: str,
) -> None:
    TranscriptStore.open(durable_url).close()
    sessions = write_behind_the_views(durable_url, 3, 40, compact_every=7)
    with TranscriptStore.open(durable_url) as store:  # one catch-up: appends and commits
        for session in sessions:
            assert len(store.active(session)) == 1 + 40 % 7
            check_against_the_log(store, durable_url, session)
