"""`import_codex` on the rollouts the real Codex CLI wrote (tests/data/codex), compared with
what Codex sent the model: every request's input is the active context the store had at some
version, in order; each compaction Codex attempted is one audit entry with its snapshot; tool
calls pair with their outputs; the files are never changed. On every backend."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from support.codex import (
    DATA,
    SESSIONS,
    VERSION,
    Session,
    context_ids,
    copy_all,
    scenario,
    visible,
)
from transcripts import TranscriptStore
from transcripts.adapters.importers.codex import import_codex

ROLLOUTS = DATA / VERSION / "sessions"
ALL = [Session(session_id, truth) for session_id, truth in SESSIONS.items()]


@pytest.fixture
def imported(store: TranscriptStore) -> TranscriptStore:
    reports = import_codex(store, [ROLLOUTS])
    assert sorted((r.session_id, r.status) for r in reports) == sorted(
        (session.id, "imported") for session in ALL
    )
    return store


def contexts(store: TranscriptStore, session_id: str) -> list[list[str]]:
    """The active ids after each version of the session, oldest first."""
    last = store.version(session_id)
    return [[m["id"] for m in store.active_at(session_id, v)] for v in range(1, last + 1)]


@pytest.mark.parametrize("session", ALL, ids=lambda s: s.truth["scenario"])
def test_every_context_codex_sent_the_model_is_the_stored_active_context_at_a_version_in_order(
    imported: TranscriptStore, session: Session
) -> None:
    versions = contexts(imported, session.id)
    at = 0
    for request in session.answered():
        sent = context_ids(request)
        assert sent in versions[at:], f"{request['kind']} request of turn {request['turn']}"
        at = versions.index(sent, at)
    assert [m["id"] for m in imported.active(session.id)] == session.final_context()


@pytest.mark.parametrize("session", ALL, ids=lambda s: s.truth["scenario"])
def test_each_stored_message_holds_the_item_codex_sent_verbatim(
    imported: TranscriptStore, session: Session
) -> None:
    stored = {entry["id"]: entry["message"] for entry in imported.history(session.id)}
    for request in session.requests:
        for item in [*request["input"][1:], *request["output"]]:
            if "id" in item:  # Codex's compaction prompt and trigger have none: not stored
                assert visible(stored[item["id"]]["codex"]["item"]) == visible(item)


@pytest.mark.parametrize("session", ALL, ids=lambda s: s.truth["scenario"])
def test_each_compaction_codex_attempted_is_one_audit_entry_on_the_context_it_was_asked_to_cut(
    imported: TranscriptStore, session: Session
) -> None:
    audit = imported.compactions(session.id)
    assert [entry["status"] for entry in audit] == [c["outcome"] for c in session.compactions]
    answers = {tuple(context_ids(r)): r["output"] for r in session.requests if r["status"] == 200}
    for entry, attempt in zip(audit, session.compactions, strict=True):
        snapshot = [m["id"] for m in imported.active_at(session.id, entry["based_on_version"])]
        if entry["status"] == "failed":
            assert entry["superseded"] == attempt["snapshot"]  # what it would have cut
            continue
        # Codex records the summary it asked for before compacting: the commit supersedes it.
        summary = [
            i["id"] for i in answers[tuple(attempt["snapshot"])] if attempt["kind"] == "local"
        ]
        assert snapshot == attempt["snapshot"] + summary
        kept = [m for m in snapshot if m not in entry["superseded"]]
        after = [m["id"] for m in imported.active_at(session.id, entry["version"])]
        assert set(after) == set(kept) | set(entry["added"])


def test_a_local_compaction_adds_codex_s_summary_and_new_context_under_codex_s_ids(
    imported: TranscriptStore,
) -> None:
    session = scenario("local")
    first = imported.compactions(session.id)[0]
    added = [imported.explain(session.id, m)["message"] for m in first["added"]]
    assert [m["role"] for m in added] == ["developer", "user", "user"]  # skills, env, summary
    assert added[-1]["content"].endswith("Summary 1: the user is checking a project.")
    assert "local compaction" in first["reason"]
    # Codex's own ids: the next request carried these items under them.
    after = next(r for r in session.requests if r["turn"] == 2 and r["kind"] == "turn")
    assert set(first["added"]) <= set(context_ids(after))


def test_a_remote_compaction_adds_the_opaque_compaction_item_verbatim(
    imported: TranscriptStore,
) -> None:
    session = scenario("remote")
    (entry,) = imported.compactions(session.id)
    (remote,) = [r for r in session.requests if r["kind"] == "compaction"]
    (returned,) = remote["output"]
    stored = imported.explain(session.id, returned["id"])
    assert stored["added"]["compaction_id"] == entry["id"]
    assert stored["message"]["role"] == "assistant"
    assert stored["message"]["codex"]["item"] == returned  # encrypted_content as sent
    assert "remote compaction" in entry["reason"]


def test_compaction_token_counts_come_from_the_nearest_token_counts_codex_wrote(
    imported: TranscriptStore,
) -> None:
    for session in [s for s in ALL if s.parent is None]:  # a fork's: its parent's (below)
        records = session.records()
        committed = [e for e in imported.compactions(session.id) if e["status"] == "committed"]
        requests = session.requests
        summaries = [
            i for i, r in enumerate(requests) if r["kind"] == "compaction" and r["status"] == 200
        ]
        for entry, index in zip(committed, summaries, strict=True):
            # Before: what the last answered turn request reported (Codex's last measure).
            turns = [r for r in requests[:index] if r["kind"] == "turn" and r["status"] == 200]
            assert entry["tokens_before"] == turns[-1]["usage"]["total_tokens"]
            # After: Codex's count of the compacted context, its first token_count after it.
            line = int(entry["reason"].rsplit(" ", 1)[1].rstrip(")"))
            after = next(
                r["payload"]["info"]["last_token_usage"]["total_tokens"]
                for r in records[line:]
                if r["type"] == "event_msg" and r["payload"]["type"] == "token_count"
            )
            assert entry["tokens_after"] == after


def test_the_turn_whose_compaction_found_no_room_is_one_failed_attempt_that_changes_nothing(
    imported: TranscriptStore,
) -> None:
    session = scenario("failed")
    failed, committed = imported.compactions(session.id)
    assert failed["failure"] == "context_window_exceeded"
    assert "Codex ran out of room in the model's context window" in failed["error"]
    assert failed["superseded"] == session.compactions[0]["snapshot"]
    before = imported.active_at(session.id, failed["version"] - 1)
    assert imported.active_at(session.id, failed["version"]) == before
    assert committed["status"] == "committed"


def test_a_turn_request_that_overflowed_is_no_compaction_attempt_and_the_report_says_so(
    store: TranscriptStore,
) -> None:
    session = scenario("overflow")
    (report,) = import_codex(store, session.path)
    assert [e["status"] for e in store.compactions(session.id)] == ["committed"]
    assert any("context_window_exceeded once its model requests began" in n for n in report.notes)


@pytest.mark.parametrize("session", ALL, ids=lambda s: s.truth["scenario"])
def test_tool_calls_and_their_outputs_are_linked_by_call_id(
    imported: TranscriptStore, session: Session
) -> None:
    calls = outputs = 0
    for entry in imported.history(session.id):
        message, item = entry["message"], entry["message"]["codex"]["item"]
        if item["type"] == "function_call":
            calls += 1
            assert message["role"] == "assistant"
            assert message["tool_calls"] == [
                {
                    "id": item["call_id"],
                    "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]},
                }
            ]
        elif item["type"] == "function_call_output":
            outputs += 1
            assert (message["role"], message["tool_call_id"]) == ("tool", item["call_id"])
        elif item["type"] == "message":
            assert message["role"] == item["role"]
        else:
            assert message["role"] == "assistant"  # reasoning, compaction
    assert calls == outputs == (2 if session.truth["scenario"] in ("local", "fork") else 0)


def test_a_session_is_started_with_codex_s_metadata_and_only_a_digest_of_its_instructions(
    imported: TranscriptStore,
) -> None:
    for session in ALL:
        (summary,) = [s for s in imported.sessions() if s["id"] == session.id]
        metadata = summary["metadata"]
        instructions = session.records()[0]["payload"]["base_instructions"]["text"]
        sent = session.requests[0]["input"][0]["content"][0]["text"]  # Codex edits them
        assert summary["source"] == "codex"
        assert summary["model"] == (
            "gpt-5.4" if session.truth["provider"] == "builtin" else "gpt-test"
        )
        assert metadata["cli_version"] == VERSION
        assert metadata["originator"] == "codex_exec"
        place = SESSIONS.get(session.truth["forked_from"], session.truth)["scenario"]
        assert metadata["cwd"].endswith(f"runs/{place}/work")
        assert metadata["git"]["repository_url"] == "https://example.com/demo.git"
        assert metadata["git"]["branch"] == "main"
        assert metadata["instructions_sha256"] == hashlib.sha256(instructions.encode()).hexdigest()
        assert metadata["rollout"] == session.path.name
        events = json.dumps(imported.events(session.id), default=str)
        assert instructions not in events and sent not in events


def test_importing_again_stores_nothing_and_reports_every_session_unchanged(
    imported: TranscriptStore,
) -> None:
    versions = {session.id: imported.version(session.id) for session in ALL}
    reports = import_codex(imported, [ROLLOUTS])
    assert {r.status for r in reports} == {"unchanged"}
    assert {session.id: imported.version(session.id) for session in ALL} == versions


def test_a_dry_run_writes_nothing_and_reports_what_the_import_then_stores(
    store: TranscriptStore,
) -> None:
    dry = import_codex(store, [ROLLOUTS], dry_run=True)
    assert {r.status for r in dry} == {"imported"}
    assert store.sessions() == []
    import_codex(store, [ROLLOUTS])
    stored = {
        s["id"]: (s["messages"], s["active"], s["compactions_committed"], s["compactions_failed"])
        for s in store.sessions()
    }
    assert stored == {
        r.session_id: (r.messages, r.active, r.compactions_committed, r.compactions_failed)
        for r in dry
    }


def test_the_rollouts_are_only_read(store: TranscriptStore, tmp_path: Path) -> None:
    folder = copy_all(tmp_path)
    files = sorted(folder.rglob("*.jsonl"))
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in files]
    import_codex(store, [folder])
    import_codex(store, [folder])
    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in files] == before


def test_progress_counts_the_bytes_of_the_rollouts_read(store: TranscriptStore) -> None:
    calls: list[tuple[int, int]] = []
    import_codex(store, [ROLLOUTS], progress=lambda done, total: calls.append((done, total)))
    total = sum(path.stat().st_size for path in ROLLOUTS.rglob("*.jsonl"))
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert len(calls) == len(ALL) + 1


def test_a_fork_is_a_child_session_that_starts_from_its_parent_s_lines_before_the_fork(
    imported: TranscriptStore,
) -> None:
    fork, local = scenario("fork"), scenario("local")
    (summary,) = [s for s in imported.sessions() if s["id"] == fork.id]
    assert summary["parent_id"] == local.id
    history = imported.history(fork.id)
    inherited = [e["id"] for e in history if e["message"]["codex"].get("session") == local.id]
    assert inherited == [e["id"] for e in imported.history(local.id)]
    assert [
        (e["reason"], e["tokens_before"], e["tokens_after"]) for e in imported.compactions(fork.id)
    ] == [
        (
            e["reason"].replace("(rollout line", f"(rollout of session {local.id}, line"),
            e["tokens_before"],
            e["tokens_after"],
        )
        for e in imported.compactions(local.id)
    ]
