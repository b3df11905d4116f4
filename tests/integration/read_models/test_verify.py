"""verify_projections diffs the stored views against an independent fold of the log: rows
changed by hand (deleted, edited, added, reordered) are reported by session, view, kind and
row, and a rebuild repairs them. `active_messages` is the history rows above their session's
position base: an active message's row changed by hand is a problem of both views."""

from __future__ import annotations

import pytest

from support.rows import connect, query, raw_rows, stream_key
from transcripts import TranscriptStore
from transcripts.domain.id_index import id_key

# What is done to the views of the `fill` store by hand, and the problems verify must report
# for it: (session, view, kind, key), one or a list.
TAMPERING = {
    "an active message taken out of the active list": (
        ["UPDATE message_history SET position = NULL WHERE message_id = 'a4'"],
        ("alpha", "active_messages", "missing", "a4"),
    ),
    "an active message edited": (
        [
            """UPDATE message_history
            SET message = '{"id":"a4","role":"assistant","content":"forged"}'
            WHERE message_id = 'a4'"""
        ],
        [
            ("alpha", "active_messages", "changed", "a4"),
            ("alpha", "message_history", "changed", "a4"),
        ],
    ),
    "a superseded message edited": (
        [
            """UPDATE message_history SET message = '{"id":"a1","role":"user","content":"forged"}'
            WHERE message_id = 'a1'"""
        ],
        ("alpha", "message_history", "changed", "a1"),
    ),
    "a history message deleted": (
        ["DELETE FROM message_history WHERE message_id = 'a1'"],
        ("alpha", "message_history", "missing", "a1"),
    ),
    "a superseded message marked active": (
        ["UPDATE message_history SET active = 1, superseded_by = NULL WHERE message_id = 'a2'"],
        ("alpha", "message_history", "changed", "a2"),
    ),
    "a rewound message marked active": (
        ["UPDATE message_history SET active = 1, rewound_version = NULL WHERE message_id = 'a6'"],
        ("alpha", "message_history", "changed", "a6"),
    ),
    "a restored message's restore forgotten": (
        ["UPDATE message_history SET restored_version = NULL WHERE message_id = 'a5'"],
        ("alpha", "message_history", "changed", "a5"),
    ),
    "an active message marked rewound": (
        ["UPDATE message_history SET rewound_version = 3 WHERE message_id = 'b1'"],
        ("beta", "message_history", "changed", "b1"),
    ),
    "a rewound message put back in the active list": (
        [
            "UPDATE message_history SET position = 4 + (SELECT position_base FROM sessions "
            "WHERE session_id = 'alpha') WHERE message_id = 'a6'"
        ],
        ("alpha", "active_messages", "extra", "a6"),
    ),
    "a session's rewound count edited": (
        ["UPDATE sessions SET rewound_count = 0 WHERE session_id = 'alpha'"],
        ("alpha", "sessions", "changed", "alpha"),
    ),
    "a session's state edited": (
        ["""UPDATE sessions SET state = '{"forged": true}' WHERE session_id = 'alpha'"""],
        ("alpha", "sessions", "changed", "alpha"),
    ),
    "a history message added": (
        [
            """INSERT INTO message_history SELECT session_id, 99, 'forged', role, message, active,
            superseded_by, added_by, appended_at, appended_version, rewound_version,
            restored_version, NULL, log_position FROM message_history WHERE message_id = 'b1'"""
        ],
        ("beta", "message_history", "extra", "forged"),
    ),
    "a compaction attempt added": (
        [
            """INSERT INTO compaction_attempts SELECT 'cmp_forged', session_id, 99, status, reason,
            failure, error, based_on_version, superseded_count, added_count, superseded_ids,
            added_ids, tokens_before, tokens_after, at, metadata
            FROM compaction_attempts WHERE status = 'failed'"""
        ],
        ("alpha", "compaction_attempts", "extra", "cmp_forged"),
    ),
    "a compaction attempt deleted": (
        ["DELETE FROM compaction_attempts WHERE status = 'failed'"],
        ("alpha", "compaction_attempts", "missing", "{failed}"),
    ),
    "a compaction's status edited": (
        ["UPDATE compaction_attempts SET status = 'failed' WHERE status = 'committed'"],
        ("alpha", "compaction_attempts", "changed", "{committed}"),
    ),
    "two active positions swapped": (
        [
            "UPDATE message_history SET position = -1 WHERE session_id = 'beta' AND position = 1",
            "UPDATE message_history SET position = 1 WHERE session_id = 'beta' AND position = 2",
            "UPDATE message_history SET position = 2 WHERE session_id = 'beta' AND position = -1",
        ],
        ("beta", "active_messages", "misordered", "rows"),
    ),
    "two history seqs swapped": (
        [
            "UPDATE message_history SET seq = -1 WHERE session_id = 'alpha' AND seq = 1",
            "UPDATE message_history SET seq = 1 WHERE session_id = 'alpha' AND seq = 2",
            "UPDATE message_history SET seq = 2 WHERE session_id = 'alpha' AND seq = -1",
        ],
        ("alpha", "message_history", "misordered", "rows"),
    ),
    "an active position with a gap": (
        ["UPDATE message_history SET position = 7 WHERE session_id = 'beta' AND position = 2"],
        ("beta", "active_messages", "misordered", "positions"),
    ),
    "a session row deleted": (
        ["DELETE FROM sessions WHERE session_id = 'beta'"],
        ("beta", "sessions", "missing", "beta"),
    ),
    "a session's counts edited": (
        [
            "UPDATE sessions SET message_count = 40, compactions_failed = 0 "
            "WHERE session_id = 'alpha'"
        ],
        ("alpha", "sessions", "changed", "alpha"),
    ),
    "rows of a session the log does not have": (
        [
            """INSERT INTO message_history SELECT 'ghost', seq, message_id, role, message,
            active, superseded_by, added_by, appended_at, appended_version, rewound_version,
            restored_version, position, log_position + 1000000 FROM message_history
            WHERE session_id = 'beta'"""
        ],
        [
            ("ghost", "active_messages", "extra", "ghost"),
            ("ghost", "message_history", "extra", "ghost"),
        ],
    ),
    # Public columns users filter on with plain SQL, or that explain() returns.
    "an active message's role column edited": (
        ["UPDATE message_history SET role = 'system' WHERE message_id = 'a4'"],
        [
            ("alpha", "active_messages", "changed", "a4"),
            ("alpha", "message_history", "changed", "a4"),
        ],
    ),
    "a superseded message's role column edited": (
        ["UPDATE message_history SET role = 'system' WHERE message_id = 'a2'"],
        ("alpha", "message_history", "changed", "a2"),
    ),
    "a history message's appended_version edited": (
        ["UPDATE message_history SET appended_version = 42 WHERE message_id = 'b2'"],
        ("beta", "message_history", "changed", "b2"),
    ),
    "a compaction's superseded_count edited": (
        ["UPDATE compaction_attempts SET superseded_count = 0 WHERE status = 'committed'"],
        ("alpha", "compaction_attempts", "changed", "{committed}"),
    ),
}


def compaction_ids(store: TranscriptStore) -> dict[str, str]:
    return {"{" + entry["status"] + "}": entry["id"] for entry in store.compactions("alpha")}


Problem = tuple[str, str, str, str]


@pytest.mark.parametrize("statements, problems", TAMPERING.values(), ids=TAMPERING.keys())
def test_a_view_row_changed_by_hand_is_reported_by_verify_and_repaired_by_a_rebuild(
    sqlite_url: str, fill, statements: list[str], problems: Problem | list[Problem]
) -> None:
    expected = problems if isinstance(problems, list) else [problems]
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
        assert store.verify_projections().ok
        right = raw_rows(sqlite_url)
        ids = compaction_ids(store)
        expected = [
            (session, view, kind, ids.get(key, key)) for session, view, kind, key in expected
        ]
        with connect(sqlite_url) as db:
            for statement in statements:
                db.execute(statement)
        assert raw_rows(sqlite_url) != right

        report = store.verify_projections()
        assert not report.ok
        found = [(p.session_id, p.view, p.kind, p.key) for p in report.problems]
        assert all(problem in found for problem in expected), found
        assert {p.view for p in report.problems} == {p[1] for p in expected}  # nothing else

        store.rebuild_projections()
        assert store.verify_projections().ok
        assert raw_rows(sqlite_url) == right


def test_verify_finds_nothing_wrong_with_views_projected_from_the_log(
    store: TranscriptStore, fill
) -> None:
    fill(store)
    report = store.verify_projections()
    assert report.ok
    assert report.problems == []
    assert report.sessions == 2


def test_verify_of_an_empty_store_is_ok(store: TranscriptStore) -> None:
    report = store.verify_projections()
    assert report.ok and report.sessions == 0


def test_verify_catches_the_views_up_before_comparing(sqlite_url: str, fill) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
        store.append("beta", [{"id": "b3", "role": "user", "content": "not read yet"}])
        assert store.verify_projections().ok


def test_problems_read_as_sentences_naming_session_view_kind_and_row(sqlite_url: str, fill) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
        with connect(sqlite_url) as db:
            db.execute("UPDATE message_history SET position = NULL WHERE message_id = 'b2'")
        texts = [str(problem) for problem in store.verify_projections().problems]
    assert "session 'beta': active_messages: missing b2" in texts


def test_queries_read_the_views_so_a_row_taken_out_by_hand_is_gone_until_a_rebuild(
    sqlite_url: str, fill
) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
        active = store.active("beta")
        with connect(sqlite_url) as db:
            db.execute("UPDATE message_history SET position = NULL WHERE message_id = 'b2'")
        assert store.active("beta") == active[:1]
        assert store.active_at("beta", 3) == active  # time travel folds the log itself
        store.rebuild_projections()
        assert store.active("beta") == active


def test_a_session_longer_than_a_page_is_verified_page_by_page_and_its_damage_named(
    durable_url: str,
) -> None:
    """The log and the rows are read 1,000 at a time: messages appended in the first page of
    events and rewound in the second (one restored) verify clean; a history row deleted and
    one edited past the first page of rows, and an index entry of a rewound message, are
    each named."""
    with TranscriptStore.open(durable_url) as store:
        store.start("long")
        turns = [{"id": f"m{i}", "role": "user", "content": f"turn {i}"} for i in range(1, 1201)]
        store.append("long", turns)
        store.rewind("long", count=300)  # m901 to m1200, appended by versions 902 to 1201
        store.append("long", [turns[949]])  # m950 restored
        assert store.verify_projections().ok
        query(durable_url, "DELETE FROM message_history WHERE message_id = 'm1100'")
        query(
            durable_url,
            "UPDATE message_history SET rewound_version = NULL WHERE message_id = 'm1150'",
        )
        query(
            durable_url,
            "UPDATE log_message_ids SET rewound = FALSE WHERE stream_id = ? AND id_key = ?",
            (stream_key(durable_url, "long"), id_key("m920")),
        )
        found = [(p.view, p.kind, p.key) for p in store.verify_projections().problems]
    assert found == [
        ("message_history", "missing", "m1100"),
        ("message_history", "changed", "m1150"),
        ("message_history", "misordered", "positions"),  # seq 1100 is gone
        ("log_message_ids", "changed", "m920"),
    ]


def test_index_entries_no_event_names_are_extra_each_named_by_its_id_or_its_key(
    durable_url: str,
) -> None:
    """The index is looked up, never read whole: when it holds more ids than the events name,
    its keys are read in order and each the log does not name is extra (a long id's key,
    which does not hold the id whole, by the key in hex); the log's own long id is not."""
    long_id, ghost = "l" * 80, id_key("g" * 80)
    with TranscriptStore.open(durable_url) as store:
        store.start("s")
        store.append("s", [{"id": "m1", "role": "user"}, {"id": long_id, "role": "user"}])
        assert store.verify_projections().ok
        for key in (id_key("ghost"), ghost):
            query(
                durable_url,
                "INSERT INTO log_message_ids VALUES (?, ?, ?, ?)",
                (stream_key(durable_url, "s"), key, bytes(32), False),
            )
        found = [(p.view, p.kind, p.key) for p in store.verify_projections().problems]
    assert found == [
        ("log_message_ids", "extra", f"id key {ghost.hex()}"),
        ("log_message_ids", "extra", "ghost"),
    ]
