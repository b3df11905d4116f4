"""The iterating reads (`iter_active`, `iter_history`, `iter_events`): the same entries as
the list reads, a page at a time, the first N or the last N without reading the rest."""

from __future__ import annotations

import pytest

from transcripts import SessionErasedError, SessionNotFoundError, TranscriptError, TranscriptStore


def filled(store: TranscriptStore, count: int = 23) -> str:
    """A session of `count` messages, 9 of them compacted into a summary, 2 rewound."""
    store.start("long")
    store.append("long", [{"role": "user", "content": f"m{i}"} for i in range(count)])
    store.compact("long", lambda messages: [{"role": "user", "content": "sum"}, *messages[9:]])
    store.rewind("long", count=2)
    return "long"


def test_paged_reads_give_what_the_list_reads_give_across_many_pages(
    store: TranscriptStore,
) -> None:
    session = filled(store)
    assert list(store.iter_active(session, page_size=4)) == store.active(session)
    assert list(store.iter_history(session, page_size=4)) == store.history(session)
    assert list(store.iter_events(session, page_size=4)) == store.events(session)


def test_limit_gives_the_first_n_and_tail_the_last_n_in_order(store: TranscriptStore) -> None:
    session = filled(store)
    active, history = store.active(session), store.history(session)
    for n in (0, 1, 4, 5, 13, 100):
        assert list(store.iter_active(session, limit=n, page_size=4)) == active[:n]
        assert list(store.iter_active(session, tail=n, page_size=4)) == active[-n:][: n or 0]
        assert list(store.iter_history(session, limit=n, page_size=4)) == history[:n]
        assert list(store.iter_history(session, tail=n, page_size=4)) == history[-n:][: n or 0]


def test_history_with_versions_names_the_events_that_stored_rewound_and_restored(
    store: TranscriptStore,
) -> None:
    session = filled(store)
    rewind = store.events(session)[-1]
    entries = list(store.iter_history(session, versions=True))
    assert [e["version"] for e in entries[:3]] == [2, 3, 4]
    assert [e["rewound_version"] for e in entries if e["rewound"]] == [rewind["version"]] * 2
    assert all(e["restored_version"] is None for e in entries)


def test_events_of_some_types_leave_the_others_out(store: TranscriptStore) -> None:
    session = filled(store)
    rewinds = [e for e in store.events(session) if e["type"] == "Rewound"]
    assert list(store.iter_events(session, types={"Rewound"}, page_size=4)) == rewinds
    appended = [e for e in store.events(session) if e["type"] == "MessageAppended"]
    both = list(store.iter_events(session, types=["MessageAppended", "Rewound"], after=5))
    assert both == [e for e in store.events(session) if e in appended[4:] or e in rewinds]
    assert list(store.iter_events(session, types=[])) == []
    with pytest.raises(SessionNotFoundError):
        store.iter_events("nope", types={"Rewound"})


def test_an_unknown_or_erased_session_raises_at_the_call_before_anything_is_yielded(
    store: TranscriptStore,
) -> None:
    for read in (store.iter_active, store.iter_history, store.iter_events):
        with pytest.raises(SessionNotFoundError):
            read("nope")
    session = filled(store)
    store.forget(session)
    for read in (store.iter_active, store.iter_history):
        with pytest.raises(SessionErasedError):
            read(session)
    assert [e["type"] for e in store.iter_events(session)] == ["Erased"]


def test_limit_and_tail_together_or_negative_are_refused(store: TranscriptStore) -> None:
    session = filled(store)
    with pytest.raises(TranscriptError, match="not both"):
        store.iter_history(session, limit=1, tail=1)
    with pytest.raises(TranscriptError, match="a tail is an integer from 0"):
        store.iter_active(session, tail=-1)
    with pytest.raises(TranscriptError, match="a page size"):
        store.iter_active(session, page_size=0)


def test_a_compaction_between_pages_of_the_active_context_is_an_error_not_a_mixed_list(
    store: TranscriptStore,
) -> None:
    session = filled(store)
    messages = store.iter_active(session, page_size=2)
    first = [next(messages), next(messages)]
    store.compact(session, lambda active: active[-1:])
    with pytest.raises(TranscriptError, match="compacted or rewound while it was read"):
        list(messages)
    assert first[0]["content"] == "sum"


def test_appends_between_pages_show_in_the_pages_after_them(store: TranscriptStore) -> None:
    session = filled(store)
    history = store.iter_history(session, page_size=5)
    next(history)
    store.append(session, [{"role": "user", "content": "later"}])
    assert [entry["message"]["content"] for entry in history][-1] == "later"


def test_events_after_and_until_a_version_are_that_window_of_the_log(
    store: TranscriptStore,
) -> None:
    session = filled(store)
    events = store.events(session)
    assert list(store.iter_events(session, after=3, until=9, page_size=2)) == events[3:9]
    assert list(store.iter_events(session, after=len(events))) == []
