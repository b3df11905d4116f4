"""`import_claude_code` on the session the real Claude Code CLI wrote (tests/data/claude_code),
compared with what the CLI sent the model: every request's conversation is the stored
active context at some version, in order; each compaction is one audit entry with its
token counts; the subagent is a child session; the files are never changed. On every
backend."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from support.claude_code import (
    PROJECTS,
    SESSION_FILE,
    SESSION_ID,
    TRUTH,
    conversation,
    copy_projects,
    main_requests,
)
from transcripts import TranscriptStore
from transcripts.adapters.importers.claude_code import ClaudeCodeImportError, import_claude_code


@pytest.fixture
def imported(store: TranscriptStore) -> TranscriptStore:
    reports = import_claude_code(store, [PROJECTS])
    assert [r.status for r in reports] == ["imported", "imported"]
    return store


def test_every_request_the_cli_sent_is_the_stored_active_context_at_a_version_in_order(
    imported: TranscriptStore,
) -> None:
    last = imported.version(SESSION_ID)
    contexts = [conversation(imported.active_at(SESSION_ID, v)) for v in range(1, last + 1)]
    at = 0
    requests = main_requests()
    assert len(requests) == 9
    for request in requests:
        sent = conversation(request["messages"])
        assert sent in contexts[at:], f"{request['kind']} request of turn {request['turn']}"
        at = contexts.index(sent, at)
    final = conversation(imported.active(SESSION_ID))
    last_request = requests[-1]
    answered = conversation([{"role": "assistant", "content": last_request["output"]}])
    assert final == conversation(last_request["messages"]) + answered


def test_each_compaction_is_one_audit_entry_with_its_tokens_and_trigger(
    imported: TranscriptStore,
) -> None:
    audit = imported.compactions(SESSION_ID)
    assert [entry["status"] for entry in audit] == ["failed", "committed", "committed"]
    failed, manual, auto = audit
    assert "Compaction failed" in failed["error"]
    assert "manual" in manual["reason"] and "auto" in auto["reason"]
    assert auto["tokens_before"] == 990014 and auto["tokens_after"] == 2617
    assert manual["tokens_after"] == 2611
    summaries = [m for m in imported.active(SESSION_ID) if m["claude_code"].get("isCompactSummary")]
    assert len(summaries) == 1 and TRUTH["summaries"][-1] in summaries[0]["content"]


def test_every_message_is_stored_under_its_record_uuid_with_the_record_verbatim(
    imported: TranscriptStore,
) -> None:
    records = [json.loads(line) for line in SESSION_FILE.read_text().splitlines()]
    by_uuid = {
        r["uuid"]: r for r in records if r.get("type") in ("user", "assistant", "attachment")
    }
    history = {e["message"]["id"]: e["message"] for e in imported.history(SESSION_ID)}
    for uuid, record in by_uuid.items():
        assert history[uuid]["claude_code"] == record
    session = imported.session(SESSION_ID)
    assert session["source"] == "claude-code"
    assert session["metadata"]["version"] == TRUTH["claude_code_version"]
    assert session["metadata"]["cwd"] == TRUTH["cwd"]


def test_the_subagent_is_a_child_session_naming_the_tool_call_that_started_it(
    imported: TranscriptStore,
) -> None:
    (child,) = [s for s in imported.sessions() if s["parent_id"] == SESSION_ID]
    assert child["metadata"]["tool_use_id"] == "toolu_02"
    assert ("tool_use", "assistant", "toolu_03") in conversation(imported.active(child["id"]))


def test_a_second_import_is_unchanged_and_the_files_are_never_changed(
    store: TranscriptStore,
) -> None:
    digest = _digest(PROJECTS)
    import_claude_code(store, [PROJECTS])
    events = store.events(SESSION_ID)
    again = import_claude_code(store, [PROJECTS])
    assert [r.status for r in again] == ["unchanged", "unchanged"]
    assert store.events(SESSION_ID) == events
    assert _digest(PROJECTS) == digest


def test_a_session_that_went_on_is_resumed_after_what_an_earlier_import_stored(
    store: TranscriptStore, tmp_path: Path
) -> None:
    projects = copy_projects(tmp_path)
    session = next(projects.glob(f"*/{SESSION_ID}.jsonl"))
    whole = session.read_text()
    lines = whole.splitlines(keepends=True)
    session.write_text("".join(lines[:60]))  # before the manual compaction's boundary
    (first, _) = import_claude_code(store, [projects])
    assert (first.compactions_committed, first.compactions_failed) == (0, 1)
    session.write_text(whole)
    (resumed, _) = import_claude_code(store, [projects])
    assert resumed.status == "imported"
    assert any("resumed after the" in note for note in resumed.notes)
    with TranscriptStore.open("memory://") as fresh:
        import_claude_code(fresh, [projects])
        assert store.active(SESSION_ID) == fresh.active(SESSION_ID)
        assert len(store.compactions(SESSION_ID)) == len(fresh.compactions(SESSION_ID)) == 3


def test_the_failed_compact_changed_nothing_of_the_context(imported: TranscriptStore) -> None:
    events = imported.events(SESSION_ID)
    (failed,) = [e for e in events if e["type"] == "CompactionFailed"]
    version = failed["version"]
    before = imported.active_at(SESSION_ID, version - 1)
    assert imported.active_at(SESSION_ID, version) == before
    (entry,) = [a for a in imported.compactions(SESSION_ID) if a["status"] == "failed"]
    assert entry["superseded"] == [m["id"] for m in before]  # what it would have superseded


def test_a_dry_run_writes_nothing(store: TranscriptStore) -> None:
    reports = import_claude_code(store, [SESSION_FILE], dry_run=True)
    assert reports[0].compactions_committed == 2 and reports[0].compactions_failed == 1
    assert store.sessions() == []


def test_copies_of_records_are_stored_once_and_counted(
    store: TranscriptStore, tmp_path: Path
) -> None:
    projects = copy_projects(tmp_path)
    session = next(projects.glob(f"*/{SESSION_ID}.jsonl"))
    lines = session.read_text().splitlines(keepends=True)
    copies = [line for line in lines if '"type": "user"' in line][:3]
    session.write_text("".join(lines + copies))  # a later /compact re-appends (#92089)
    (report, _) = import_claude_code(store, [projects])
    assert report.duplicates_dropped == 3
    assert report.messages == len(store.history(SESSION_ID))


def test_a_last_line_cut_short_imports_up_to_it_with_a_note(
    store: TranscriptStore, tmp_path: Path
) -> None:
    projects = copy_projects(tmp_path)
    session = next(projects.glob(f"*/{SESSION_ID}.jsonl"))
    session.write_bytes(session.read_bytes() + b'{"type": "user", "uuid": "cut')
    (report, _) = import_claude_code(store, [projects])
    assert report.status == "imported"
    assert any("cut short" in note for note in report.notes)


def test_a_malformed_line_is_an_error_naming_file_and_line_and_stores_nothing(
    store: TranscriptStore, tmp_path: Path
) -> None:
    projects = copy_projects(tmp_path)
    session = next(projects.glob(f"*/{SESSION_ID}.jsonl"))
    lines = session.read_text().splitlines(keepends=True)
    lines.insert(4, "not json\n")
    session.write_text("".join(lines))
    with pytest.raises(ClaudeCodeImportError, match=r"line 5 is not JSON"):
        import_claude_code(store, [projects])
    assert store.sessions() == []


def test_no_path_reads_claude_config_dir(
    store: TranscriptStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_projects(tmp_path)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    assert [r.session_id for r in import_claude_code(store)][0] == SESSION_ID


def _digest(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()
