"""A store whose views were built by a newer release (a view version above this release's
`Projector.VERSIONS`) is refused on open with a `StorageError` telling to upgrade
transcript-store, and nothing is changed: this release must not rebuild a newer release's
views down to its own. (Older view versions are rebuilt on open, as the README says.)"""

from __future__ import annotations

from typing import Any

import pytest

from support.cli import error_line, run_cli
from support.rows import log_rows, query, raw_rows, table_names
from transcripts import StorageError, TranscriptStore
from transcripts.projections.projector import Projector


def fill(url: str) -> None:
    with TranscriptStore.open(url) as store:
        store.start("s", source="older")
        store.append("s", [{"id": f"m{i}", "role": "user", "content": f"m {i}"} for i in range(4)])
        assert store.compact("s", lambda ms: [{"role": "system", "content": "sum"}]).committed
        store.catch_up_projections()


def stored(url: str) -> dict[str, Any]:
    """Everything stored: the tables, the views' rows and the tracked position, the log."""
    return {"tables": table_names(url), "views": raw_rows(url), "log": log_rows(url)}


def bump(url: str, view: str, by: int = 1) -> None:
    version = Projector.VERSIONS[view] + by
    query(url, "UPDATE view_versions SET version = ? WHERE view = ?", (version, view))
    assert dict(query(url, "SELECT view, version FROM view_versions"))[view] == version


@pytest.mark.parametrize("view", list(Projector.VERSIONS))
def test_views_of_a_newer_release_are_refused_on_open_and_left_as_they_are(
    durable_url: str, view: str
) -> None:
    fill(durable_url)
    bump(durable_url, view)
    before = stored(durable_url)
    with pytest.raises(StorageError) as raised:
        TranscriptStore.open(durable_url).close()
    message = str(raised.value)
    assert "upgrade" in message.lower() and "transcript-store" in message, message
    assert stored(durable_url) == before


def test_views_far_ahead_are_refused_too_and_every_open_refuses_them(durable_url: str) -> None:
    fill(durable_url)
    bump(durable_url, "message_history", by=40)
    before = stored(durable_url)
    for _ in range(2):
        with pytest.raises(StorageError):
            TranscriptStore.open(durable_url, lock_timeout=2).close()
    assert stored(durable_url) == before


def test_the_command_line_refuses_newer_views_in_one_line(durable_url: str) -> None:
    fill(durable_url)
    bump(durable_url, "sessions")
    before = stored(durable_url)
    for args in (("sessions",), ("show", "s"), ("projections", "rebuild")):
        line = error_line(run_cli(durable_url, *args))
        assert "upgrade" in line.lower() and "transcript-store" in line, line
    assert stored(durable_url) == before


def test_views_of_an_older_release_are_still_rebuilt_on_open(durable_url: str) -> None:
    """The other direction keeps working: a fixed release repairs an older one's views."""
    fill(durable_url)
    view = "active_messages"
    query(
        durable_url,
        "UPDATE view_versions SET version = ? WHERE view = ?",
        (Projector.VERSIONS[view] - 1, view),
    )
    query(durable_url, "UPDATE message_history SET position = NULL")  # no message active
    with TranscriptStore.open(durable_url) as store:
        assert [m["content"] for m in store.active("s")] == ["sum"]
        assert store.verify_projections().ok
    assert dict(query(durable_url, "SELECT view, version FROM view_versions")) == Projector.VERSIONS


def test_views_of_an_older_release_are_rebuilt_on_open_even_in_a_store_with_no_event(
    durable_url: str,
) -> None:
    """An older release's empty store: its tables lack the columns this release writes."""
    TranscriptStore.open(durable_url).close()  # made, and never written to
    query(durable_url, "UPDATE view_versions SET version = 2 WHERE view = 'message_history'")
    query(durable_url, "ALTER TABLE message_history DROP COLUMN restored_version")
    query(durable_url, "ALTER TABLE message_history DROP COLUMN rewound_version")
    with TranscriptStore.open(durable_url) as store:
        store.start("s")
        [message] = store.append("s", [{"role": "user", "content": "x"}])
        assert store.rewind("s", count=1) == [message]
        assert store.history("s")[0]["rewound"] is True
        assert store.verify_projections().ok
    assert dict(query(durable_url, "SELECT view, version FROM view_versions")) == Projector.VERSIONS


def test_a_store_of_the_release_before_positions_above_a_base_is_rebuilt_once_on_open(
    durable_url: str,
) -> None:
    """The release before: superseded rows lost their positions, the active ones were 1..n,
    `sessions` had no position_base and `active_messages` was every row with a position."""
    fill(durable_url)
    query(durable_url, "DROP VIEW active_messages")
    query(durable_url, "ALTER TABLE sessions DROP COLUMN position_base")
    query(
        durable_url,
        "CREATE VIEW active_messages AS SELECT session_id, position, message_id, role, "
        "message FROM message_history WHERE position IS NOT NULL",
    )
    query(durable_url, "UPDATE message_history SET position = NULL WHERE NOT active")
    query(durable_url, "UPDATE message_history SET position = 1 WHERE active")  # the summary
    for view, version in {"active_messages": 3, "message_history": 6, "sessions": 6}.items():
        query(durable_url, "UPDATE view_versions SET version = ? WHERE view = ?", (version, view))
    with TranscriptStore.open(durable_url) as store:
        assert [m["content"] for m in store.active("s")] == ["sum"]
        assert store.verify_projections().ok
    assert dict(query(durable_url, "SELECT view, version FROM view_versions")) == Projector.VERSIONS
    assert query(durable_url, "SELECT position FROM message_history ORDER BY seq") == [
        (1,),
        (2,),
        (3,),
        (4,),
        (5,),  # the superseded rows keep theirs; the summary above
    ]
    assert query(durable_url, "SELECT position_base FROM sessions") == [(4,)]
    assert query(durable_url, "SELECT position, message_id FROM active_messages")[0][0] == 1
    rebuilt = stored(durable_url)
    with TranscriptStore.open(durable_url) as store:  # once: current now
        assert [m["content"] for m in store.active("s")] == ["sum"]
    assert stored(durable_url) == rebuilt
