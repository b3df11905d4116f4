"""A session with a stored event that cannot be decoded: every public call on it raises
`StorageError` naming the event's version, and changes nothing; `forget` alone succeeds and
erases the session, that event included, leaving only the tombstone. The command line prints
one line and exits 1 (`show`, `events`), and `forget --yes` erases it.

Two kinds of damage, made with plain SQL on the stored log (SQLite: `stored_events`;
PostgreSQL: `transcripts_events`):
- damaged state bytes of a message that the views had projected (version 3), then a rebuild;
- an unknown topic on the newest event (version 5), `transcripts:Transcript.FutureEvent`:
  what a newer release of transcript-store might write, appended by another store after
  this one began its compaction attempts.
Other sessions read and write as ever.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from support.cli import error_line, run_cli
from support.rows import damage_event, delete_event, log_rows, store_raw_event
from transcripts import (
    MAX_ID_LENGTH,
    CompactionAttempt,
    CompactionResult,
    StorageError,
    TranscriptStore,
)
from transcripts.domain.transcript import Transcript, transcript_id

SICK, WELL = "sick", "well"
FUTURE_TOPIC = "transcripts:Transcript.FutureEvent"
# kind: (the version damaged, how: damage_event's arguments)
KINDS: dict[str, tuple[int, dict[str, Any]]] = {
    "damaged state bytes": (3, {"state": lambda _state: b"not json"}),
    "an unknown topic": (5, {"topic": FUTURE_TOPIC}),
}


@dataclass
class Damaged:
    url: str
    kind: str
    version: int  # the version that cannot be decoded
    writer: TranscriptStore  # the store that began the attempts, before the damage
    commit_attempt: CompactionAttempt
    fail_attempt: CompactionAttempt


@pytest.fixture(params=list(KINDS))
def damaged(request: pytest.FixtureRequest, durable_url: str) -> Iterator[Damaged]:
    kind, url = request.param, durable_url
    writer = TranscriptStore.open(url)
    try:
        writer.start(SICK, source="test")
        for i in range(3):  # versions 2, 3, 4
            writer.append(SICK, [{"id": f"s{i}", "role": "user", "content": f"sick {i}"}])
        writer.start(WELL)
        writer.append(WELL, [{"id": "w0", "role": "user", "content": "well 0"}])
        commit_attempt = writer.begin_compaction(SICK)
        fail_attempt = writer.begin_compaction(SICK)
        with TranscriptStore.open(url) as other:  # version 5, written by another store
            other.append(SICK, [{"id": "s3", "role": "user", "content": "sick 3"}])
        version, damage = KINDS[kind]
        damage_event(url, SICK, version, **damage)
        with TranscriptStore.open(url) as reader:
            reader.rebuild_projections()  # the views quarantine what they cannot decode
        yield Damaged(url, kind, version, writer, commit_attempt, fail_attempt)
    finally:
        writer.close()


def names_the_version(error: BaseException | str, version: int) -> bool:
    return f"version {version}" in str(error)


def summarize(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "summary"}]


CALLS: dict[str, Callable[[TranscriptStore], object]] = {
    "start with the same arguments": lambda s: s.start(SICK, source="test"),
    "append": lambda s: s.append(SICK, [{"id": "new", "role": "user", "content": "more"}]),
    "sync": lambda s: s.sync(SICK, [{"id": "new", "role": "user", "content": "more"}]),
    "active": lambda s: s.active(SICK),
    "active_at the last version": lambda s: s.active_at(SICK, 5),
    "history": lambda s: s.history(SICK),
    "compactions": lambda s: s.compactions(SICK),
    "events": lambda s: s.events(SICK),
    "explain": lambda s: s.explain(SICK, "s0"),
    "begin_compaction": lambda s: s.begin_compaction(SICK),
    "compact": lambda s: s.compact(SICK, summarize, reason="r"),
    "search in the session": lambda s: s.search("sick", session_id=SICK),
}


@pytest.mark.parametrize("call", CALLS)
def test_every_call_on_a_session_with_an_undecodable_event_is_a_storage_error_naming_it(
    damaged: Damaged, call: str
) -> None:
    rows = log_rows(damaged.url)
    with TranscriptStore.open(damaged.url) as store:
        with pytest.raises(StorageError) as raised:
            result = CALLS[call](store)
            # A compaction may report the trouble as a failed attempt rather than raise.
            if isinstance(result, CompactionResult) and not result.committed:
                assert result.failure == "storage_error", result
                raise StorageError(result.error or "")
        assert names_the_version(raised.value, damaged.version), str(raised.value)
    assert log_rows(damaged.url) == rows


@pytest.mark.parametrize("settle", ["commit_compaction", "fail_compaction"])
def test_settling_an_attempt_begun_before_the_damage_is_a_storage_error_naming_it(
    damaged: Damaged, settle: str
) -> None:
    rows = log_rows(damaged.url)
    store = damaged.writer
    try:
        if settle == "commit_compaction":
            result = store.commit_compaction(damaged.commit_attempt, summarize(["x"]))
        else:
            result = store.fail_compaction(damaged.fail_attempt, "summarizer timed out")
    except StorageError as error:
        assert names_the_version(error, damaged.version), str(error)
    else:  # or a failed attempt that says why (and records nothing behind the damage)
        assert not result.committed, result
        assert result.failure in ("storage_error", "summarize_error"), result
        assert names_the_version(result.error or "", damaged.version), result.error
    assert log_rows(damaged.url) == rows


def test_forget_erases_a_session_with_an_undecodable_event_leaving_only_the_tombstone(
    damaged: Damaged,
) -> None:
    well_before = [row for row in log_rows(damaged.url) if row not in _sick_rows(damaged.url)]
    with TranscriptStore.open(damaged.url) as store:
        erasure = store.forget(SICK)
        assert erasure.session_id == SICK and not erasure.already_erased
        assert [event["type"] for event in store.events(SICK)] == ["Erased"]
        (summary,) = [s for s in store.sessions() if s["id"] == SICK]
        assert summary["erased_at"] is not None and summary["quarantined"] == 0
        assert store.active(WELL) == [{"id": "w0", "role": "user", "content": "well 0"}]
        report = store.verify_projections()
        assert report.ok, report.problems
        assert store.forget(SICK).already_erased
    assert [topic for _, _, topic, _ in _sick_rows(damaged.url)] == [
        "transcripts:Transcript.Erased"
    ]
    assert [row for row in log_rows(damaged.url) if row not in _sick_rows(damaged.url)] == (
        well_before
    )


@pytest.fixture
def unreadable_start(durable_url: str) -> str:
    """A store whose session SICK has a Started event that cannot be decoded (damaged in
    place) before two readable appends; WELL beside it."""
    with TranscriptStore.open(durable_url) as store:
        store.start(SICK, source="test")
        store.append(SICK, [{"id": "s0", "role": "user", "content": "secret zebra"}])
        store.append(SICK, [{"id": "s1", "role": "user", "content": "secret yak"}])
        store.start(WELL)
        store.append(WELL, [{"id": "w0", "role": "user", "content": "well 0"}])
    damage_event(durable_url, SICK, 1, state=lambda _state: b"not json")
    with TranscriptStore.open(durable_url) as store:
        store.rebuild_projections()
    return durable_url


def test_forget_erases_a_session_whose_start_cannot_be_read_though_later_events_can(
    unreadable_start: str,
) -> None:
    with TranscriptStore.open(unreadable_start) as store:
        erasure = store.forget(SICK)
        assert (erasure.session_id, erasure.messages, erasure.events) == (SICK, 2, 3)
        assert [event["type"] for event in store.events(SICK)] == ["Erased"]
        assert store.search("secret") == []
        assert store.active(WELL) == [{"id": "w0", "role": "user", "content": "well 0"}]
        report = store.verify_projections()
        assert report.ok, report.problems


def test_the_command_line_forgets_a_session_whose_start_cannot_be_read(
    unreadable_start: str,
) -> None:
    declined = run_cli(unreadable_start, "forget", SICK, input="n\n")
    assert "(the views leave it out)" in declined.stderr and declined.exit_code == 1
    assert [v for _, v, _, _ in _sick_rows(unreadable_start)] == [1, 2, 3]
    _forget_on_the_command_line(unreadable_start)
    never = run_cli(unreadable_start, "forget", "never-started", "--yes")
    assert never.exit_code == 1 and "never started" in error_line(never)


def test_a_session_whose_started_event_is_gone_is_a_storage_error_and_forget_erases_it(
    durable_url: str,
) -> None:
    with TranscriptStore.open(durable_url) as store:
        store.start(SICK)
        store.append(SICK, [{"id": "s0", "role": "user", "content": "secret zebra"}])
    delete_event(durable_url, SICK, 1)
    with TranscriptStore.open(durable_url) as store:
        store.rebuild_projections()
        with pytest.raises(StorageError, match="version 2"):
            store.append(SICK, [{"id": "s1", "role": "user", "content": "more"}])
    _forget_on_the_command_line(durable_url)


def test_forgetting_again_a_session_whose_tombstone_cannot_be_read_writes_nothing(
    durable_url: str,
) -> None:
    with TranscriptStore.open(durable_url) as store:
        store.start(SICK)
        store.append(SICK, [{"id": "s0", "role": "user", "content": "secret"}])
        tombstone = store.forget(SICK)
    damage_event(durable_url, SICK, tombstone.events + 1, state=lambda _state: b"not json")
    rows = log_rows(durable_url)
    with TranscriptStore.open(durable_url) as store:
        with pytest.raises(StorageError, match=f"version {tombstone.events + 1}"):
            store.forget(SICK)
    assert log_rows(durable_url) == rows


def test_verify_reports_a_started_event_whose_session_id_is_no_string(
    durable_url: str,
) -> None:
    with TranscriptStore.open(durable_url) as store:
        store.start(SICK)
        store.start(WELL)
    damage_event(durable_url, SICK, 1, state=lambda state: state.replace(b'"sick"', b"5"))
    with TranscriptStore.open(durable_url) as store:
        store.rebuild_projections()
        report = store.verify_projections()
        assert [problem.kind for problem in report.problems] == ["quarantined"]
        assert "a session id that is no non-empty string: 5" in str(report.problems[0])
        assert [session["id"] for session in store.sessions()] == [WELL]


def test_forget_erases_a_session_whose_unreadable_start_names_an_id_todays_rules_refuse(
    durable_url: str,
) -> None:
    legacy = "L" * (MAX_ID_LENGTH + 1)  # an id an older release may have stored
    TranscriptStore.open(durable_url).close()
    store_raw_event(durable_url, legacy, 1, Transcript.Started.TOPIC, b"not json")
    with TranscriptStore.open(durable_url) as store:
        erasure = store.forget(legacy)
        assert erasure.session_id == legacy and not erasure.already_erased
        assert [event["type"] for event in store.events(legacy)] == ["Erased"]
        assert store.forget(legacy).already_erased


def _forget_on_the_command_line(url: str) -> None:
    """`transcripts forget SICK --yes` succeeds and leaves only the tombstone of SICK."""
    result = run_cli(url, "forget", SICK, "--yes")
    assert result.exit_code == 0, (result.output, result.stderr)
    assert [topic for _, _, topic, _ in _sick_rows(url)] == [Transcript.Erased.TOPIC]


def _sick_rows(url: str) -> list[tuple[str, int, str, bytes]]:
    """The stored rows of the sick session's events, in log order."""
    return [row for row in log_rows(url) if row[0] == transcript_id(SICK).hex]


def test_the_other_sessions_read_and_write_as_ever(damaged: Damaged) -> None:
    with TranscriptStore.open(damaged.url) as store:
        store.append(WELL, [{"id": "w1", "role": "user", "content": "well 1"}])
        assert [m["id"] for m in store.active(WELL)] == ["w0", "w1"]
        assert store.compact(WELL, summarize).committed
        assert {h["message_id"] for h in store.search("well", session_id=WELL)} == {"w0", "w1"}


@pytest.mark.parametrize(
    "args", [("show", SICK), ("events", SICK), ("history", SICK)], ids=" ".join
)
def test_the_command_line_prints_one_line_naming_the_version_and_exits_1(
    damaged: Damaged, args: tuple[str, ...]
) -> None:
    rows = log_rows(damaged.url)
    line = error_line(run_cli(damaged.url, *args))
    assert names_the_version(line, damaged.version), line
    assert log_rows(damaged.url) == rows


def test_the_command_line_forgets_a_session_with_an_undecodable_event(damaged: Damaged) -> None:
    _forget_on_the_command_line(damaged.url)
    shown = run_cli(damaged.url, "show", SICK)
    assert "was erased" in error_line(shown)
