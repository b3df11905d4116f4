"""The timeline and the Markdown export read as they are written: the same items and bytes
as the whole-session versions, over many pages of messages and windows of the log."""

from __future__ import annotations

import pytest

from transcripts import TranscriptStore
from transcripts.adapters.exporters import markdown
from transcripts.adapters.exporters import streamed_timeline as streamed
from transcripts.adapters.exporters.markdown import markdown_chunks
from transcripts.adapters.exporters.timeline import Boundary, Entry, Item, timeline


def busy(store: TranscriptStore) -> str:
    """1,210 messages (more than two pages), compactions committed and failed, rewinds,
    a restore, and a failed attempt after the last message."""
    store.start("busy")
    store.append("busy", [{"role": "user", "content": f"m{i}"} for i in range(1200)])
    store.compact("busy", lambda messages: [{"role": "user", "content": "sum"}, *messages[600:]])
    [restored, _] = store.rewind("busy", count=2, reason="undo")
    store.append("busy", [{"role": "assistant", "content": f"n{i}"} for i in range(8)])
    store.append("busy", [restored])
    store.rewind("busy", count=3)
    store.append("busy", [{"role": "user", "content": "last"}])
    store.compact("busy", lambda messages: 1 / 0)
    return "busy"


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streamed, "WINDOW", 7)


def test_the_streamed_timeline_has_the_items_of_the_whole_one_in_order(
    store: TranscriptStore, small_windows: None
) -> None:
    session = busy(store)
    assert list(streamed.streamed_timeline(store, session)) == timeline(store, session)


def first(items: list[Item], n: int) -> list[Item]:
    """The items up to the n-th message (all, if there are no more than n)."""
    entries = [i for i, item in enumerate(items) if isinstance(item, Entry)]
    return items if n >= len(entries) else items[: entries[n - 1] + 1] if n else []


def last(items: list[Item], n: int) -> list[Item]:
    """The last n messages, and the attempts and rewinds from the first of them on."""
    entries = [item for item in items if isinstance(item, Entry)]
    if not n:
        return []
    shown = entries[-n:]
    return [
        item
        for item in items
        if (item in shown if isinstance(item, Entry) else item.version >= shown[0].version)
    ]


def test_limit_and_tail_keep_the_attempts_and_rewinds_between_the_messages_shown(
    store: TranscriptStore, small_windows: None
) -> None:
    session = busy(store)
    whole = timeline(store, session)
    for n in (0, 1, 3, 601, 1205, 1210, 5000):
        assert list(streamed.streamed_timeline(store, session, limit=n)) == first(whole, n)
        assert list(streamed.streamed_timeline(store, session, tail=n)) == last(whole, n)


def whole_document(store: TranscriptStore, session_id: str, *, history: bool) -> str:
    """The Markdown export as it was made before it streamed: from the whole timeline."""
    items = timeline(store, session_id)
    session = next(s for s in store.sessions() if s["id"] == session_id)
    lines = [f"# Session {session_id}", "", *markdown._facts(session), ""]
    if history:
        lines += ["## History", "", *markdown._history(items)]
    else:
        boundaries = {item.attempt["id"]: item for item in items if isinstance(item, Boundary)}
        added_by = {i.history["id"]: i.history["added_by"] for i in items if isinstance(i, Entry)}
        lines += ["## Active context", ""]
        shown: set[str] = set()
        for position, message in enumerate(store.active(session_id), 1):
            compaction = added_by.get(message["id"])
            if compaction in boundaries and compaction not in shown:
                shown.add(compaction)
                lines += markdown._boundary(boundaries[compaction])
            note = "summary" if compaction else None
            lines += markdown._message(position, message, note=note)
    return "\n".join(lines).rstrip("\n") + "\n"


@pytest.mark.parametrize("history", [False, True])
def test_the_markdown_export_in_pieces_is_the_document_byte_for_byte(
    store: TranscriptStore, history: bool
) -> None:
    session = busy(store)
    pieces = list(markdown_chunks(store, session, history=history))
    assert len(pieces) > 1000
    assert "".join(pieces) == whole_document(store, session, history=history)
    assert "".join(pieces).count("---\n") == (4 if history else 1)
