"""Importing Hermes' /undo: the rows it hid are stored where they were written, then taken out
of the context by one rewind (a `Rewound` event, no compaction), also when the undo hides
copies a compaction wrote; importing again rewinds nothing. On every backend."""

from __future__ import annotations

from pathlib import Path

from support.hermes import HermesHistory
from transcripts import TranscriptStore
from transcripts.adapters.importers.hermes import SessionReport, import_hermes


def ids(rows: list[int]) -> list[str]:
    return [f"hermes-s1-{row}" for row in rows]


def rewinds(store: TranscriptStore) -> list[dict]:
    """The data of the session's Rewound events."""
    return [event["data"] for event in store.events("s1") if event["type"] == "Rewound"]


def imported(store: TranscriptStore, hermes: HermesHistory, path: Path) -> SessionReport:
    """The report of importing `hermes`, written to `path`, into `store`."""
    (report,) = import_hermes(store, hermes.write(path))
    return report


def stored_again(store: TranscriptStore, path: Path) -> None:
    """Importing `path` again, dry or not, finds the session unchanged and writes nothing."""
    events = store.events("s1")
    assert [r.status for r in import_hermes(store, path, dry_run=True)] == ["unchanged"]
    assert [r.status for r in import_hermes(store, path)] == ["unchanged"]
    assert store.events("s1") == events


def test_an_undo_is_imported_as_a_rewind_of_its_rows_not_as_a_compaction(
    store: TranscriptStore, tmp_path: Path
) -> None:
    hermes = HermesHistory()
    kept = hermes.turns(4, "kept")
    undone = hermes.rewind(2)
    after = hermes.turns(2, "after")
    report = imported(store, hermes, path := tmp_path / "state.db")
    assert [m["id"] for m in store.active("s1")] == ids([*kept[:2], *after])
    assert store.compactions("s1") == []
    reason = f"Hermes rewind (rows {undone[0]}–{undone[1]} undone)"
    assert rewinds(store) == [{"message_ids": ids(undone), "reason": reason}]
    history = store.history("s1")
    assert [e["id"] for e in history] == ids([*kept, *after])
    assert [e["id"] for e in history if e["rewound"]] == ids(undone)
    assert all(e["superseded_by"] is None for e in history)
    assert store.explain("s1", ids(undone)[0])["rewound"]["reason"] == reason
    assert (report.messages, report.active, report.rewinds) == (6, 4, 1)
    assert (report.compactions_committed, report.compactions_failed) == (0, 0)
    stored_again(store, path)


def test_a_session_resumed_after_an_undo_goes_on_from_the_rewound_context(
    store: TranscriptStore, tmp_path: Path
) -> None:
    hermes = HermesHistory()
    kept = hermes.turns(4, "kept")
    hermes.rewind(2)
    imported(store, hermes, tmp_path / "first.db")
    more = hermes.turns(2, "more")
    report = imported(store, hermes, tmp_path / "later.db")
    assert report.status == "imported"
    assert [m["id"] for m in store.active("s1")] == ids([*kept[:2], *more])
    assert len(rewinds(store)) == 1


def test_an_undo_right_after_a_compaction_rewinds_the_messages_its_hidden_copies_carry(
    store: TranscriptStore, tmp_path: Path
) -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    hermes.compact(head=2, tail=2, text="early")  # copies 7-8, summary 9, copies 10-11
    reply = hermes.say("assistant", "reply")
    undone = hermes.rewind(3)  # the tail copies 10-11 and the reply
    after = hermes.turns(2, "after")
    report = imported(store, hermes, path := tmp_path / "state.db")
    (compaction,) = store.compactions("s1")
    assert compaction["superseded"] == ids(rows[2:4])
    assert rewinds(store) == [
        {
            "message_ids": ids([*rows[4:], reply]),
            "reason": f"Hermes rewind (rows {undone[0]}–{undone[-1]} undone)",
        }
    ]
    active = [m["id"] for m in store.active("s1")]
    assert active == [*ids(rows[:2]), compaction["added"][0], *ids(after)]
    rewound = [e["id"] for e in store.history("s1") if e["rewound"]]
    assert rewound == ids([*rows[4:], reply])
    assert (report.status, report.compactions_committed, report.rewinds) == ("imported", 1, 1)
    stored_again(store, path)


def test_an_undo_after_a_failed_commit_hiding_its_copies_leaves_their_live_originals_in_context(
    store: TranscriptStore, tmp_path: Path
) -> None:
    hermes = HermesHistory()
    rows = hermes.turns(6, "turn")
    hermes.compact(head=2, tail=2, text="attempt", commit=False)
    copies = hermes.rewind(2)  # the tail copies (of rows 5-6) the failed commit re-inserted
    more = hermes.turns(2, "more")
    report = imported(store, hermes, path := tmp_path / "state.db")
    assert [e["status"] for e in store.compactions("s1")] == ["failed"]
    assert rewinds(store) == []  # rows 5-6 are live in Hermes: what it loads on resume
    assert [m["id"] for m in store.active("s1")] == ids([*rows, *more])
    assert (report.status, report.compactions_failed, report.rewinds) == ("repaired", 1, 0)
    assert (
        f"rows {copies[0]}–{copies[-1]} are copies an undo hid while the rows they copy stay live"
        in "\n".join(report.notes)
    )
    stored_again(store, path)
