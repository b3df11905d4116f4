"""Writes fenced on the version a caller read (`expected_version`), the session's version as
the log holds it (`version()`), and compactions whose new messages bring ids of their own:
what importers and frameworks with ids and revisions of their own build on."""

from __future__ import annotations

import threading

import pytest

from support.messages import summary, turns
from transcripts import (
    SessionErasedError,
    SessionNotFoundError,
    TranscriptError,
    TranscriptStore,
    VersionConflictError,
)


@pytest.fixture
def session(store: TranscriptStore) -> str:
    store.start("s")
    return "s"


def test_the_version_is_that_of_the_sessions_last_event(
    store: TranscriptStore, session: str
) -> None:
    assert store.version(session) == 1  # Started
    store.append(session, turns(3))
    assert store.version(session) == 4
    assert store.version(session) == store.events(session)[-1]["version"]


def test_the_version_of_a_session_never_started_or_erased_is_an_error(
    store: TranscriptStore, session: str
) -> None:
    with pytest.raises(SessionNotFoundError):
        store.version("nobody")
    store.forget(session)
    with pytest.raises(SessionErasedError):
        store.version(session)


def test_an_append_at_the_expected_version_stores_its_messages(
    store: TranscriptStore, session: str
) -> None:
    stored = store.append(session, turns(2), expected_version=1)
    assert store.active(session) == stored
    assert store.version(session) == 3


def test_an_append_at_another_version_raises_and_stores_nothing(
    store: TranscriptStore, session: str
) -> None:
    store.append(session, turns(2))
    events = store.events(session)
    with pytest.raises(VersionConflictError) as conflict:
        store.append(session, turns(1, prefix="late"), expected_version=1)
    assert (conflict.value.session_id, conflict.value.expected, conflict.value.actual) == (
        session,
        1,
        3,
    )
    assert "at version 3, not 1" in str(conflict.value)
    assert store.events(session) == events


def test_a_sync_at_another_version_raises_and_stores_nothing(
    store: TranscriptStore, session: str
) -> None:
    live = store.append(session, turns(2))
    with pytest.raises(VersionConflictError):
        store.sync(session, [*live, *turns(1, prefix="new")], expected_version=2)
    assert store.active(session) == live
    assert (
        store.sync(session, [*live, *turns(1, prefix="new")], expected_version=3)[-1]["content"]
        == turns(1, prefix="new")[0]["content"]
    )


def test_a_fenced_append_of_messages_stored_already_is_a_no_op_at_any_version(
    store: TranscriptStore, session: str
) -> None:
    """So the retry of a fenced call whose first try landed returns as that try would have."""
    given = [{"id": f"m{i}", **message} for i, message in enumerate(turns(2))]
    stored = store.append(session, given, expected_version=1)
    assert store.append(session, given, expected_version=1) == stored
    assert store.version(session) == 3


def test_a_fenced_append_conflicts_after_a_compaction_or_a_rewind(
    store: TranscriptStore, session: str
) -> None:
    store.append(session, turns(3))
    version = store.version(session)
    store.rewind(session, count=1)
    with pytest.raises(VersionConflictError):
        store.append(session, turns(1, prefix="x"), expected_version=version)
    version = store.version(session)
    assert store.compact(session, lambda messages: [summary()]).committed
    with pytest.raises(VersionConflictError):
        store.append(session, turns(1, prefix="x"), expected_version=version)


def test_of_two_writers_fenced_on_the_same_version_exactly_one_stores(
    durable_url: str,
) -> None:
    with TranscriptStore.open(durable_url) as first:
        first.start("s")
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def write(index: int) -> None:
        with TranscriptStore.open(durable_url) as store:
            barrier.wait()
            try:
                store.append("s", turns(1, prefix=f"writer{index}"), expected_version=1)
                outcomes.append("stored")
            except VersionConflictError:
                outcomes.append("conflict")

    threads = [threading.Thread(target=write, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict"] * 3 + ["stored"]
    with TranscriptStore.open(durable_url) as store:
        assert store.version("s") == 2


@pytest.mark.parametrize("expected", [-1, 1.0, "1", True])
def test_an_expected_version_that_is_no_version_number_is_refused(
    store: TranscriptStore, session: str, expected: object
) -> None:
    with pytest.raises(TranscriptError, match="expected_version"):
        store.append(session, turns(1), expected_version=expected)  # type: ignore[arg-type]
    assert store.active(session) == []


# -- compactions: new messages with ids of their own, and the version they leave ---------------


def test_a_compaction_stores_a_new_message_under_the_id_it_brings(
    store: TranscriptStore, session: str
) -> None:
    stored = store.append(session, turns(4))
    result = store.compact(
        session, lambda messages: [{"id": "summary-uuid", **summary()}, messages[-1]]
    )
    assert result.committed, result.error
    assert [m["id"] for m in result.messages] == ["summary-uuid", stored[-1]["id"]]
    (entry,) = store.compactions(session)
    assert entry["added"] == ["summary-uuid"]
    assert entry["superseded"] == [m["id"] for m in stored[:-1]]
    history = {row["id"]: row for row in store.history(session)}
    assert history["summary-uuid"]["added_by"] == result.compaction_id
    # The id is stored now: appended again with its content it is a no-op.
    assert store.append(session, [{"id": "summary-uuid", **summary()}])
    assert store.version(session) == result.version


def test_a_compaction_refuses_an_id_the_session_stored_outside_its_snapshot(
    store: TranscriptStore, session: str
) -> None:
    stored = store.append(session, turns(2))
    attempt = store.begin_compaction(session)
    late = store.append(session, [{"id": "late", "role": "user", "content": "late"}])
    result = store.commit_compaction(attempt, [{"id": "late", "role": "user", "content": "late"}])
    assert (result.committed, result.failure) == (False, "invalid_replacement")
    assert "stored outside the snapshot" in (result.error or "")
    assert store.active(session) == [*stored, *late]


def test_a_compaction_result_names_the_version_it_left_the_session_at(
    store: TranscriptStore, session: str
) -> None:
    store.append(session, turns(3))
    committed = store.compact(session, lambda messages: [summary()])
    assert committed.version == store.version(session) == 5
    failed = store.compact(session, lambda messages: 1 / 0)
    assert not failed.committed and failed.version == store.version(session) == 6
