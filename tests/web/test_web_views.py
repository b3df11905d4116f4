"""What the web views show equals what the store says: the timeline's size at every version
is the length of `active_at`, its marks are the log's events of their types, a compaction's
before and after are the contexts around it, replay is `active_at` — on every backend."""

from __future__ import annotations

import pytest

from support.messages import turns
from support.story import mark_versions, tell_story
from transcripts import TranscriptStore
from transcripts.adapters.web.compaction import compaction_page
from transcripts.adapters.web.context_timeline import read_timeline
from transcripts.adapters.web.pages import (
    NotFound,
    history_page,
    replay_page,
    session_page,
    session_summary,
)


def ids(messages: list[dict]) -> list[str]:
    return [message["id"] for message in messages]


def run_ids(runs: list) -> list[str]:
    return [view.id for run in runs for view in [*run.head, *run.tail]]


def timeline_of(store: TranscriptStore, session_id: str):
    return read_timeline(store, session_id, session_summary(store, session_id))


def test_the_timeline_s_size_at_every_version_is_the_length_of_active_at(store):
    tell_story(store, messages=40)
    timeline = timeline_of(store, "story")
    head = store.version("story")
    assert timeline.head == head
    assert [timeline.size_at(v) for v in range(1, head + 1)] == [
        len(store.active_at("story", v)) for v in range(1, head + 1)
    ]
    assert timeline.size == len(store.active("story"))


def test_the_timeline_has_one_mark_per_compaction_rewind_and_restore_event(store):
    tell_story(store, messages=40)
    marks = timeline_of(store, "story").marks
    expected = mark_versions(store, "story")
    assert {kind: [m.version for m in marks if m.type == kind] for kind in expected} == expected
    assert [len(expected[kind]) for kind in sorted(expected)] == [2, 2, 1, 1]


def test_a_message_rewound_restored_and_rewound_again_marks_both_restores(store):
    store.start("s")
    store.append("s", turns(4))
    first = store.rewind("s", count=2)
    store.append("s", turns(2, prefix="between"))
    store.append("s", first)  # restored at the end of the context
    again = store.rewind("s", count=2)
    store.append("s", again[:1])
    marks = [(m.type, m.version) for m in timeline_of(store, "s").marks]
    assert marks == [
        ("Rewound", 6),
        ("Restored", 9),
        ("Restored", 10),
        ("Rewound", 11),
        ("Restored", 12),
    ]
    assert [m.version for m in timeline_of(store, "s").marks] == sorted(
        v for vs in mark_versions(store, "s").values() for v in vs
    )


def test_a_committed_compaction_shows_the_context_before_it_and_after_it(store):
    tell_story(store, messages=40)
    for attempt in store.compactions("story"):
        page = compaction_page(store, "story", attempt["id"])
        version = attempt["version"]
        if attempt["status"] == "committed":
            assert run_ids(page.before) == ids(store.active_at("story", version - 1))
            assert run_ids(page.after) == ids(store.active_at("story", version))
            superseded = [v.id for r in page.before if r.kind == "superseded" for v in r.head]
            assert superseded == attempt["superseded"]
            assert [r.kind for r in page.after][:2] == ["kept", "added"]
        else:
            snapshot = store.active_at("story", attempt["based_on_version"])
            assert run_ids(page.before) == ids(snapshot) and page.after == []


def test_a_long_run_lists_its_ends_and_counts_the_rest(store):
    store.start("s")
    store.append("s", turns(300))
    store.compact("s", lambda messages: [{"role": "system", "content": "summary"}])
    [attempt] = store.compactions("s")
    [run] = compaction_page(store, "s", attempt["id"]).before
    assert (run.kind, run.count, len(run.head), len(run.tail), run.left_out) == (
        "superseded",
        300,
        50,
        50,
        200,
    )
    assert run.tail[-1].id == attempt["superseded"][-1]


def test_replay_at_a_version_is_active_at_that_version_a_page_at_a_time(store):
    store.start("s")
    store.append("s", turns(700))
    page_one = replay_page(store, "s", 600)
    page_two = replay_page(store, "s", 600, page=2)
    shown = [v.id for v in page_one.messages] + [v.id for v in page_two.messages]
    assert shown == ids(store.active_at("s", 600)) and page_one.pages == 2
    with pytest.raises(NotFound):
        replay_page(store, "s", 702)
    with pytest.raises(NotFound):
        replay_page(store, "s", 600, page=3)


def test_the_events_list_shows_one_page_of_events_after_a_version(store):
    store.start("s")
    store.append("s", turns(250))
    page = session_page(store, "s", after=100)
    assert [row.version for row in page.events] == list(range(101, 201))
    assert (page.previous_after, page.next_after, page.last_after) == (0, 200, 200)
    with pytest.raises(NotFound):
        session_page(store, "s", after=251)


def test_the_history_pages_hold_every_message_once_with_the_attempts_where_they_happened(store):
    tell_story(store, messages=600)
    pages = [history_page(store, "story", page=1)]
    while pages[-1].more:
        pages.append(history_page(store, "story", page=len(pages) + 1))
    entries = [i.history["id"] for p in pages for i in p.items if hasattr(i, "history")]
    assert entries == [entry["id"] for entry in store.history("story")]
    attempts = [i.attempt["id"] for p in pages for i in p.items if hasattr(i, "attempt")]
    assert attempts == [attempt["id"] for attempt in store.compactions("story")]
