"""Importing a Hermes `state.db`: the synthetic schema-31 file's sessions end to end
(healthy, compacted, corrupted by the failed-commit bug, a rotation), idempotence, dry runs,
the read-only source, bad files, and Hermes histories written the way Hermes writes them
(successive compactions, summaries of summaries, JSON content; rewinds:
test_hermes_rewinds.py)."""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.hermes import SUMMARY, HermesHistory, make_hermes
from support.hermes import SYNTHETIC as FIXTURE
from transcripts import TranscriptError, TranscriptStore
from transcripts.adapters.importers.hermes import HermesImportError, SessionReport, import_hermes

HEALTHY = "20260829_101500_a1b2c3"
COMPACTED = "20260830_141200_d4e5f6"
CORRUPTED = "20260831_093000_99477a"
PARENT = "20260901_080000_0a0b0c"
CHILD = "20260901_083000_0d0e0f"


def ids(session: str, rows: list[int] | range) -> list[str]:
    return [f"hermes-{session}-{row}" for row in rows]


def runs(events: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """The event types of a log after Started, as (type, how many in a row)."""
    types = [event["type"] for event in events[1:]]
    return [(kind, len(list(group))) for kind, group in itertools.groupby(types)]


def fingerprint(path: Path) -> tuple[str, int, list[str]]:
    stat = path.stat()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, stat.st_mtime_ns, sorted(os.listdir(path.parent))


@pytest.fixture(scope="module")
def fixture_file() -> Path:
    assert FIXTURE.is_file(), f"the Hermes fixture is missing: {FIXTURE}"
    return FIXTURE


@pytest.fixture(scope="module")
def imported(
    fixture_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TranscriptStore, list[SessionReport]]]:
    """The fixture imported once into a real SQLite store file."""
    url = f"sqlite:///{tmp_path_factory.mktemp('hermes') / 'store.db'}"
    with TranscriptStore.open(url) as store:
        yield store, import_hermes(store, fixture_file)


@pytest.fixture
def store(imported: tuple[TranscriptStore, list[SessionReport]]) -> TranscriptStore:
    return imported[0]


@pytest.fixture
def reports(imported: tuple[TranscriptStore, list[SessionReport]]) -> dict[str, SessionReport]:
    return {report.session_id: report for report in imported[1]}


@pytest.fixture
def empty_store(sqlite_url: str) -> Iterator[TranscriptStore]:
    with TranscriptStore.open(sqlite_url) as opened:
        yield opened


# -- the healthy session --------------------------------------------------------------------


def test_a_healthy_session_becomes_its_59_rows_as_59_active_messages_in_order(
    store: TranscriptStore, reports: dict[str, SessionReport]
) -> None:
    active = store.active(HEALTHY)
    assert [m["id"] for m in active] == ids(HEALTHY, range(1, 60))
    assert len(store.history(HEALTHY)) == 59
    assert store.compactions(HEALTHY) == []
    report = reports[HEALTHY]
    assert (report.status, report.messages, report.active) == ("imported", 59, 59)
    assert (report.compactions_committed, report.compactions_failed) == (0, 0)
    assert report.duplicates_dropped == 0


def test_tool_calls_tool_results_reasoning_and_timestamps_are_kept_as_message_keys(
    store: TranscriptStore,
) -> None:
    call, result = store.active(HEALTHY)[3:5]
    assert call["role"] == "assistant"
    assert call["finish_reason"] == "tool_calls"
    assert call["reasoning"] == "Checking the relevant files before answering."
    assert call["timestamp"] == 1787998834.827631
    assert call["tool_calls"][0]["id"] == "call_0001b8a2c13e05"  # decoded JSON, not text
    assert call["tool_calls"][0]["function"]["name"] == "read_file"
    assert result["role"] == "tool"
    assert result["tool_call_id"] == "call_0001b8a2c13e05"
    assert result["tool_name"] == "read_file"


def test_storage_bookkeeping_and_null_columns_are_not_message_keys(store: TranscriptStore) -> None:
    keys = set().union(*(message.keys() for message in store.active(HEALTHY)))
    assert keys <= {
        "id",
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "tool_name",
        "timestamp",
        "finish_reason",
        "reasoning",
    }
    user = store.active(HEALTHY)[0]
    assert set(user) == {"id", "role", "content", "timestamp"}


def test_a_session_starts_with_its_source_model_and_metadata(store: TranscriptStore) -> None:
    session = next(s for s in store.sessions() if s["id"] == HEALTHY)
    assert (session["source"], session["model"], session["parent_id"]) == (
        "cli",
        "anthropic/claude-sonnet-4.6",
        None,
    )
    metadata = session["metadata"]
    assert metadata["title"] == "Harden invoice parsing"
    assert metadata["end_reason"] == "cli_close"
    assert metadata["started_at"] == 1787998500.0
    assert metadata["ended_at"] == 1788000901.924572
    assert metadata["tokens"] == {
        "input": 412330,
        "output": 9870,
        "cache_read": 351004,
        "cache_write": 48112,
        "reasoning": 1204,
    }
    assert metadata["system_prompt"].startswith("You are Hermes, an autonomous coding agent")
    assert metadata["hermes"]["cwd"] == "/home/dev/billing"
    assert metadata["hermes"]["model_config"]["provider"] == "openrouter"  # decoded JSON


# -- the correctly compacted session --------------------------------------------------------


def test_a_compaction_supersedes_exactly_the_rows_its_summary_replaced(
    store: TranscriptStore,
) -> None:
    (entry,) = store.compactions(COMPACTED)
    assert entry["status"] == "committed"
    assert entry["reason"] == "Hermes in-place compaction (summary row 108)"
    assert entry["superseded"] == ids(COMPACTED, range(62, 103))  # 41 of the 43 archived rows
    (summary_id,) = entry["added"]
    active = store.active(COMPACTED)
    assert [m["id"] for m in active] == [
        *ids(COMPACTED, [60, 61]),  # the head: archived rows 60-61 carried as rows 106-107
        summary_id,
        *ids(COMPACTED, [103, 104, 105]),  # the tail: hidden rows carried as rows 109-111
        *ids(COMPACTED, range(112, 120)),
    ]
    assert len(active) == 14
    assert active[2]["content"].startswith("[CONTEXT COMPACTION")


def test_rows_carried_past_a_compaction_are_kept_not_duplicated(store: TranscriptStore) -> None:
    history = store.history(COMPACTED)
    assert len(history) == 46 + 1 + 8  # rows 60-105, the summary, rows 112-119
    stored = {entry["id"] for entry in history}
    assert not stored & set(ids(COMPACTED, [106, 107, 109, 110, 111]))
    messages = [
        (e["message"]["role"], e["message"].get("content"), e["message"]["timestamp"])
        for e in history
    ]
    assert len(messages) == len(set(messages))  # every message once
    by_id = {entry["id"]: entry for entry in history}
    (entry,) = store.compactions(COMPACTED)
    for archived in ids(COMPACTED, range(62, 103)):
        assert by_id[archived]["superseded_by"] == entry["id"]
        assert by_id[archived]["active"] is False
    for carried in ids(COMPACTED, [60, 61, 103, 104, 105]):
        assert by_id[carried]["active"] is True


def test_the_compacted_session_reports_one_commit_and_no_duplicates(
    reports: dict[str, SessionReport],
) -> None:
    report = reports[COMPACTED]
    assert (report.status, report.messages, report.active) == ("imported", 55, 14)
    assert (report.compactions_committed, report.compactions_failed) == (1, 0)
    assert report.duplicates_dropped == 0


# -- the session corrupted by the failed-commit bug -----------------------------------------

REAL_ROWS = [*range(121, 161), *range(209, 213), *range(277, 281), *range(361, 365), 461, 462]


def test_the_corrupted_session_keeps_the_real_conversation_each_message_once_in_order(
    store: TranscriptStore,
) -> None:
    active = store.active(CORRUPTED)
    assert [m["id"] for m in active] == ids(CORRUPTED, REAL_ROWS)
    assert len(active) == 54
    first = "hey, can you help me set up backups of my NAS photos to the external drive?"
    assert [m.get("content") for m in active].count(first) == 1
    assert not [m for m in active if str(m.get("content")).startswith("[CONTEXT COMPACTION")]
    history = store.history(CORRUPTED)
    assert [entry["id"] for entry in history] == ids(CORRUPTED, REAL_ROWS)  # nothing else stored


def test_each_failed_commit_is_recorded_as_a_failed_attempt_where_it_happened(
    store: TranscriptStore,
) -> None:
    audit = store.compactions(CORRUPTED)
    assert len(audit) == 48
    assert {(e["status"], e["failure"]) for e in audit} == {("failed", "storage_error")}
    assert all(e["added"] == [] for e in audit)
    assert audit[0]["reason"] == "Hermes in-place compaction (summary row 163)"
    assert audit[-1]["reason"] == "Hermes in-place compaction (summary row 575)"
    assert runs(store.events(CORRUPTED)) == [
        ("MessageAppended", 40),
        ("CompactionFailed", 6),
        ("MessageAppended", 4),
        ("CompactionFailed", 8),
        ("MessageAppended", 4),
        ("CompactionFailed", 10),
        ("MessageAppended", 4),
        ("CompactionFailed", 12),
        ("MessageAppended", 2),
        ("CompactionFailed", 12),
    ]


def test_a_failed_attempt_audits_only_what_its_replacement_would_have_superseded(
    store: TranscriptStore,
) -> None:
    first = store.compactions(CORRUPTED)[0]
    assert first["superseded"] == ids(
        CORRUPTED, range(123, 156)
    )  # not the carried 121-122, 156-160
    assert "hermes-agent#99477" in first["error"]
    assert "head rows 161–162 (copies of 121–122)" in first["error"]
    assert "tail rows 164–168 (copies of 156–160)" in first["error"]
    assert "would have superseded 33 of the 40 active messages (rows 123–155)" in first["error"]
    assert "database is locked" in first["error"]


def test_the_corrupted_session_reports_what_was_repaired(
    store: TranscriptStore, reports: dict[str, SessionReport]
) -> None:
    report = reports[CORRUPTED]
    assert report.status == "repaired"
    assert (report.messages, report.active) == (54, 54)
    assert (report.compactions_committed, report.compactions_failed) == (0, 48)
    assert report.duplicates_dropped == 360  # 463 rows - 1 session_meta - 54 real - 48 summaries
    assert any("48 failed in-place compaction commits" in note for note in report.notes)


def test_session_meta_rows_become_session_metadata_not_messages(store: TranscriptStore) -> None:
    session = next(s for s in store.sessions() if s["id"] == CORRUPTED)
    assert session["metadata"]["session_meta"] == [{"row": 120, "timestamp": 1788168600.462073}]
    assert ids(CORRUPTED, [120])[0] not in {e["id"] for e in store.history(CORRUPTED)}
    assert session["source"] == "telegram"


# -- the rotation -----------------------------------------------------------------------------


def test_a_rotation_child_names_its_parent_and_keeps_its_handoff(store: TranscriptStore) -> None:
    sessions = {s["id"]: s for s in store.sessions()}
    assert sessions[CHILD]["parent_id"] == PARENT
    assert sessions[PARENT]["parent_id"] is None
    assert sessions[PARENT]["metadata"]["end_reason"] == "compression"
    assert [m["id"] for m in store.active(PARENT)] == ids(PARENT, range(583, 597))
    child = store.active(CHILD)
    assert [m["id"] for m in child] == ids(CHILD, range(597, 608))
    assert child[2]["content"].startswith("[CONTEXT COMPACTION")  # the handoff summary
    assert store.compactions(CHILD) == [] == store.compactions(PARENT)


def test_sessions_are_started_parents_first(store: TranscriptStore) -> None:
    order = [s["id"] for s in store.sessions()]
    assert order.index(PARENT) < order.index(CHILD)


def test_the_imported_views_agree_with_the_event_log(store: TranscriptStore) -> None:
    report = store.verify_projections()
    assert report.ok, report.problems


# -- idempotence, dry runs, the read-only source ----------------------------------------------


def test_importing_the_same_file_again_stores_nothing_new(
    store: TranscriptStore, fixture_file: Path
) -> None:
    before = {s["id"]: store.events(s["id"]) for s in store.sessions()}
    again = import_hermes(store, fixture_file)
    assert {r.status for r in again} == {"unchanged"}
    assert {s["id"]: store.events(s["id"]) for s in store.sessions()} == before


def test_a_dry_run_reports_what_an_import_does_and_writes_nothing(
    empty_store: TranscriptStore, fixture_file: Path, reports: dict[str, SessionReport]
) -> None:
    planned = import_hermes(empty_store, fixture_file, dry_run=True)
    assert empty_store.sessions() == []
    assert {r.session_id: r for r in planned} == reports


def test_a_dry_run_of_a_file_imported_already_reports_every_session_unchanged(
    store: TranscriptStore, fixture_file: Path
) -> None:
    before = {s["id"]: s["version"] for s in store.sessions()}
    planned = import_hermes(store, fixture_file, dry_run=True)
    assert {r.status for r in planned} == {"unchanged"}
    assert {s["id"]: s["version"] for s in store.sessions()} == before


def test_the_source_file_is_read_only_and_never_changed(
    empty_store: TranscriptStore, fixture_file: Path, tmp_path: Path
) -> None:
    source = tmp_path / "state.db"
    shutil.copy2(fixture_file, source)
    before = fingerprint(source)
    import_hermes(empty_store, source, dry_run=True)
    import_hermes(empty_store, source)
    import_hermes(empty_store, source)
    assert fingerprint(source) == before


def test_a_wal_mode_source_gains_no_sidecar_files(
    empty_store: TranscriptStore, fixture_file: Path, tmp_path: Path
) -> None:
    source = tmp_path / "state.db"
    shutil.copy(fixture_file, source)
    source.chmod(0o644)
    with sqlite3.connect(source) as connection:
        assert connection.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    connection.close()
    before = fingerprint(source)
    reports = import_hermes(empty_store, source)
    assert len(reports) == 5
    assert fingerprint(source) == before


def test_progress_counts_every_row_up_to_the_total(
    empty_store: TranscriptStore, fixture_file: Path
) -> None:
    calls: list[tuple[int, int]] = []
    import_hermes(
        empty_store, fixture_file, progress=lambda done, total: calls.append((done, total))
    )
    assert calls[0] == (0, 607)
    assert calls[-1] == (607, 607)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_a_session_that_went_on_in_hermes_is_resumed_where_the_store_stands(
    empty_store: TranscriptStore, fixture_file: Path, tmp_path: Path
) -> None:
    store = empty_store
    import_hermes(store, fixture_file)
    source = tmp_path / "state.db"
    shutil.copy(fixture_file, source)
    source.chmod(0o644)
    with sqlite3.connect(source) as connection:
        new_rows = (("user", "One more thing.", 1788000900.0), ("assistant", "Sure.", 1788000901.0))
        for role, text, at in new_rows:
            connection.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                (HEALTHY, role, text, at),
            )
    connection.close()
    before = len(store.events(HEALTHY))
    again = {r.session_id: r for r in import_hermes(store, source)}
    assert again[HEALTHY].status == "imported"
    assert again[HEALTHY].messages == again[HEALTHY].active == 61
    assert len(store.events(HEALTHY)) == before + 2
    assert [m["content"] for m in store.active(HEALTHY)[-2:]] == ["One more thing.", "Sure."]
    assert {r.status for sid, r in again.items() if sid != HEALTHY} == {"unchanged"}


def test_a_session_stored_with_another_history_stops_the_import_before_any_write(
    empty_store: TranscriptStore, fixture_file: Path
) -> None:
    empty_store.start(CORRUPTED, source="telegram", model="openai/gpt-5.6")
    empty_store.append(CORRUPTED, [{"id": "mine", "role": "user", "content": "not from Hermes"}])
    with pytest.raises(HermesImportError, match=CORRUPTED):
        import_hermes(empty_store, fixture_file)
    assert [s["id"] for s in empty_store.sessions()] == [CORRUPTED]


# -- bad files --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"not a database at all\n" * 10, b"", b"SQLite format 3\x00" + b"\x00" * 84],
    ids=["text", "empty", "a truncated header"],
)
def test_a_file_that_is_not_sqlite_is_a_clear_error(
    empty_store: TranscriptStore, tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(content)
    with pytest.raises(HermesImportError, match="not a Hermes store"):
        import_hermes(empty_store, path)
    assert empty_store.sessions() == []


def test_an_sqlite_file_without_the_hermes_tables_is_not_a_hermes_store(
    empty_store: TranscriptStore, tmp_path: Path
) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE sessions (id TEXT)")
    connection.close()
    with pytest.raises(HermesImportError, match="not a Hermes store.*schema_version"):
        import_hermes(empty_store, path)


def test_an_unknown_schema_version_is_a_clear_error(
    empty_store: TranscriptStore, tmp_path: Path
) -> None:
    for version in (32, 10):
        path = make_hermes(tmp_path / f"state_{version}.db", version=version)
        with pytest.raises(HermesImportError, match=f"version {version}.*reads versions 11 to 31"):
            import_hermes(empty_store, path)


def test_a_missing_file_is_a_clear_error_and_every_import_error_is_a_transcript_error(
    empty_store: TranscriptStore, tmp_path: Path
) -> None:
    with pytest.raises(TranscriptError, match="no such file"):
        import_hermes(empty_store, tmp_path / "missing.db")
    assert issubclass(HermesImportError, TranscriptError)


# -- histories written the way Hermes writes them ---------------------------------------------


@pytest.fixture
def hermes() -> HermesHistory:
    return HermesHistory()


def test_successive_compactions_and_a_summary_of_summaries_are_successive_events(
    empty_store: TranscriptStore, hermes: HermesHistory, tmp_path: Path
) -> None:
    first = hermes.turns(6, "early")
    first_summary = hermes.compact(head=2, tail=2, text="early turns")
    later = hermes.turns(4, "later")
    second_summary = hermes.compact(head=2, tail=1, text="the summary and later turns")
    (report,) = import_hermes(empty_store, hermes.write(tmp_path / "state.db"))
    one, two = empty_store.compactions("s1")
    assert one["reason"] == f"Hermes in-place compaction (summary row {first_summary})"
    assert two["reason"] == f"Hermes in-place compaction (summary row {second_summary})"
    assert one["superseded"] == ids("s1", first[2:4])
    summary_one = one["added"][0]
    # The second compaction summarises the first summary, the first tail and all but one
    # of the later turns; the head (the first two messages) is carried through both.
    assert two["superseded"] == [summary_one, *ids("s1", first[4:6]), *ids("s1", later[:3])]
    active = [m["id"] for m in empty_store.active("s1")]
    assert active == [*ids("s1", first[:2]), two["added"][0], *ids("s1", later[3:])]
    assert runs(empty_store.events("s1")) == [
        ("MessageAppended", 6),
        ("CompactionCommitted", 1),
        ("MessageAppended", 4),
        ("CompactionCommitted", 1),
    ]
    assert (report.messages, report.active, report.compactions_committed) == (12, 4, 2)
    history = {e["id"]: e for e in empty_store.history("s1")}
    assert history[summary_one]["superseded_by"] == two["id"]  # every original recoverable


def test_a_failed_commit_then_a_committed_one_records_both_and_keeps_each_message_once(
    empty_store: TranscriptStore, hermes: HermesHistory, tmp_path: Path
) -> None:
    rows = hermes.turns(6, "turn")
    hermes.compact(head=2, tail=2, text="attempt one", commit=False)
    more = hermes.turns(2, "more")
    (report,) = import_hermes(empty_store, hermes.write(tmp_path / "state.db"))
    assert [m["id"] for m in empty_store.active("s1")] == ids("s1", [*rows, *more])
    assert [e["status"] for e in empty_store.compactions("s1")] == ["failed"]
    assert (report.status, report.duplicates_dropped) == ("repaired", 4)


def test_a_failed_commit_a_later_compaction_archived_is_imported_as_failed_with_a_note(
    empty_store: TranscriptStore, hermes: HermesHistory, tmp_path: Path
) -> None:
    rows = hermes.turns(6, "turn")
    failed_summary = hermes.compact(head=2, tail=2, text="attempt one", commit=False)
    more = hermes.turns(2, "more")
    hermes.compact(head=2, tail=2, text="attempt two")
    (report,) = import_hermes(empty_store, hermes.write(tmp_path / "state.db"))
    first, second = empty_store.compactions("s1")
    assert (first["status"], second["status"]) == ("failed", "committed")
    assert first["superseded"] == ids("s1", rows[2:4])
    assert second["superseded"] == ids("s1", rows[2:])
    active = [m["id"] for m in empty_store.active("s1")]
    assert active == [*ids("s1", rows[:2]), second["added"][0], *ids("s1", more)]
    assert (report.status, report.messages, report.duplicates_dropped) == ("repaired", 9, 4)
    assert any(
        f"summary rows {failed_summary} had their rows archived by a later compaction: told "
        "failed by their rows' write times" in note
        for note in report.notes
    )


def test_json_content_is_decoded_and_text_that_is_not_json_is_kept_with_a_note(
    empty_store: TranscriptStore, hermes: HermesHistory, tmp_path: Path
) -> None:
    parts = '[{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}]'
    hermes.say("user", "\x00json:" + parts)
    hermes.say("assistant", "\x00json:{not json", reasoning_content="thinking")
    (report,) = import_hermes(empty_store, hermes.write(tmp_path / "state.db"))
    user, assistant = empty_store.active("s1")
    assert user["content"][0] == {"type": "text", "text": "look"}
    assert assistant["content"] == "\x00json:{not json"
    assert assistant["reasoning_content"] == "thinking"
    assert any("not valid JSON" in note for note in report.notes)


def test_a_compaction_the_store_refuses_is_recorded_as_its_failure(
    empty_store: TranscriptStore, hermes: HermesHistory, tmp_path: Path
) -> None:
    hermes.say("user", "run it")
    call = '[{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]'
    hermes.say("assistant", "", tool_calls=call)
    hermes.say("tool", "done", tool_call_id="c1", tool_name="t")
    hermes.compact(head=1, tail=1, text="the tool result loses its call")
    (report,) = import_hermes(empty_store, hermes.write(tmp_path / "state.db"))
    (entry,) = empty_store.compactions("s1")
    assert (entry["status"], entry["failure"]) == ("failed", "orphaned_tool_result")
    assert len(empty_store.active("s1")) == 3
    assert report.compactions_failed == 1


def test_a_session_with_something_the_file_cannot_tell_is_reported_doubtful_with_a_note(
    empty_store: TranscriptStore, hermes: HermesHistory, tmp_path: Path
) -> None:
    hermes.turns(6, "turn")
    summary = hermes.compact(head=2, tail=2, text="resumed")
    for row in hermes.rows[summary - 3 : summary + 2]:  # copies keeping their stored times
        if row["id"] != summary:
            row["timestamp"] = hermes.rows[hermes.copied[row["id"]] - 1]["timestamp"]
    hermes.turns(2, "more")
    hermes.compact(head=2, tail=2, text="later")
    (report,) = import_hermes(empty_store, hermes.write(tmp_path / "state.db"))
    assert report.status == "doubtful"
    assert any(
        f"summary row {summary} had its rows archived by a later compaction and they carry no "
        "write times of their own" in note
        for note in report.notes
    )
    assert [entry["status"] for entry in empty_store.compactions("s1")] == ["committed"] * 2


def test_a_failed_commit_that_left_only_its_summary_is_repaired(
    empty_store: TranscriptStore, hermes: HermesHistory, tmp_path: Path
) -> None:
    before = hermes.turns(4, "before")
    summary = hermes.say("user", SUMMARY.format("never committed"))  # hermes-agent 0.18.0
    after = hermes.turns(2, "after")
    (report,) = import_hermes(empty_store, hermes.write(tmp_path / "state.db"))
    assert (report.status, report.compactions_failed, report.active) == ("repaired", 1, 6)
    assert [m["id"] for m in empty_store.active("s1")] == ids("s1", [*before, *after])
    (failed,) = empty_store.compactions("s1")
    assert failed["status"] == "failed" and f"only the summary (row {summary})" in failed["error"]
    assert any(f"summary rows {summary} are failed commits" in note for note in report.notes)
