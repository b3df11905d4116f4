"""`import_codex` on rollouts changed after Codex wrote them: cut short by a crash, grown since
an import, rewritten in place (codex#44363), damaged, or holding what this Codex release does
not write (items without ids or of unknown types, a repeated id, an older `compacted`). Each
starts from a rollout the real Codex CLI wrote (tests/data/codex). On every backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.codex import Session, copy_all, scenario
from transcripts import TranscriptStore
from transcripts.adapters.importers.codex import CodexImportError, import_codex

LOCAL = scenario("local")


def history_ids(store: TranscriptStore, session_id: str) -> list[str]:
    return [entry["id"] for entry in store.history(session_id)]


def event_shapes(store: TranscriptStore, session_id: str) -> list[tuple[str, object]]:
    """The session's events without their times and compaction ids."""
    shapes: list[tuple[str, object]] = []
    for event in store.events(session_id):
        data = dict(event["data"])
        data.pop("compaction_id", None)
        shapes.append((event["type"], json.dumps(data, sort_keys=True, default=str)))
    return shapes


def line_of(session: Session, predicate: object) -> int:
    """The number of the first line whose record satisfies `predicate`."""
    return next(n for n, r in enumerate(session.records(), 1) if predicate(r))  # type: ignore[operator]


def edited(session: Session, number: int, change: object) -> list[str]:
    """The rollout's lines with line `number`'s record passed through `change`."""
    lines = session.lines()
    record = json.loads(lines[number - 1])
    lines[number - 1] = json.dumps(change(record)) + "\n"  # type: ignore[operator]
    return lines


def test_a_rollout_cut_short_by_a_crash_imports_up_to_its_last_whole_line_with_a_note(
    store: TranscriptStore, tmp_path: Path
) -> None:
    lines = LOCAL.lines()
    cut = line_of(LOCAL, lambda r: r["type"] == "compacted")  # cut in the compaction's line
    path = LOCAL.copy(tmp_path, [*lines[: cut - 1], lines[cut - 1][:80]])
    (report,) = import_codex(store, path)
    assert report.status == "imported"
    assert report.notes == [
        f"the last line ({cut}, 80 bytes) is cut short, as a crash leaves it: imported up "
        f"to line {cut - 1}"
    ]
    assert store.compactions(LOCAL.id) == []
    assert [m["codex"]["line"] for m in store.active(LOCAL.id)][-1] < cut


def test_the_crashed_rollout_once_codex_went_on_resumes_and_equals_a_fresh_import(
    store: TranscriptStore, tmp_path: Path
) -> None:
    lines = LOCAL.lines()
    for cut in (30, 38, 64):  # mid-turn, at the compaction, before the second one
        path = LOCAL.copy(tmp_path, [*lines[: cut - 1], lines[cut - 1][:50]])
        (report,) = import_codex(store, path)
        assert report.status == "imported"
    path = LOCAL.copy(tmp_path)
    (report,) = import_codex(store, path)
    assert report.status == "imported"
    assert any(note.startswith("resumed after the") for note in report.notes)
    with TranscriptStore.open("memory://") as fresh:
        import_codex(fresh, LOCAL.path)
        assert event_shapes(store, LOCAL.id) == event_shapes(fresh, LOCAL.id)
        assert store.active(LOCAL.id) == fresh.active(LOCAL.id)


def test_a_compaction_imported_before_codex_wrote_the_count_after_it_keeps_none_and_goes_on(
    store: TranscriptStore, tmp_path: Path
) -> None:
    compacted = line_of(LOCAL, lambda r: r["type"] == "compacted")
    import_codex(store, LOCAL.copy(tmp_path, LOCAL.lines()[:compacted]))
    assert store.compactions(LOCAL.id)[0]["tokens_after"] is None
    (report,) = import_codex(store, LOCAL.copy(tmp_path))
    assert report.status == "imported"
    assert [m["id"] for m in store.active(LOCAL.id)] == LOCAL.final_context()
    assert store.compactions(LOCAL.id)[0]["tokens_after"] is None  # no event updates it


@pytest.mark.parametrize(
    ("rewrite", "first_line"),
    [
        ("lines 8 to 15 gone", 8),
        ("line 18 changed", 18),
        ("only the context after the compaction kept", 2),
        ("the end gone", 45),  # the store holds more, from line 47
    ],
)
def test_a_rollout_codex_rewrote_in_place_is_reported_diverged_at_its_first_differing_line(
    store: TranscriptStore, tmp_path: Path, rewrite: str, first_line: int
) -> None:
    import_codex(store, LOCAL.path)
    before = store.events(LOCAL.id)
    lines = LOCAL.lines()
    compacted = line_of(LOCAL, lambda r: r["type"] == "compacted")
    rewritten = {
        "lines 8 to 15 gone": [*lines[:7], *lines[15:]],
        "line 18 changed": edited(
            LOCAL,
            18,
            lambda r: {
                **r,
                "payload": {
                    **r["payload"],
                    "content": [{"type": "output_text", "text": "Changed."}],
                },
            },
        ),
        "only the context after the compaction kept": [lines[0], *lines[compacted - 1 :]],
        "the end gone": lines[:44],
    }[rewrite]
    (report,) = import_codex(store, LOCAL.copy(tmp_path, rewritten))
    assert report.status == "diverged"
    assert report.diverged_at_line == first_line
    assert report.notes[0].startswith(f"diverged from line {first_line}: the store holds ")
    assert report.notes[0].endswith("nothing was written")
    assert store.events(LOCAL.id) == before


def test_a_diverged_rollout_is_reported_in_a_dry_run_too(
    store: TranscriptStore, tmp_path: Path
) -> None:
    import_codex(store, LOCAL.path)
    (report,) = import_codex(store, LOCAL.copy(tmp_path, LOCAL.lines()[:20]), dry_run=True)
    assert (report.status, report.diverged_at_line) == ("diverged", 21)


def test_a_line_that_is_no_json_in_the_middle_is_left_out_and_the_session_is_doubtful(
    store: TranscriptStore, tmp_path: Path
) -> None:
    session = scenario("remote")
    lines = session.lines()
    lost = json.loads(lines[2])["payload"]["id"]
    lines[2] = '{"timestamp": "2026-12-06T07:00:00Z", "type": "respon\n'
    (report,) = import_codex(store, session.copy(tmp_path, lines))
    assert report.status == "doubtful"
    assert "line 3 is not JSON: not imported" in report.notes
    with TranscriptStore.open("memory://") as fresh:
        import_codex(fresh, session.path)
        expected = [m for m in history_ids(fresh, session.id) if m != lost]
    assert history_ids(store, session.id) == expected


def test_items_without_ids_get_ids_from_the_rollout_id_and_their_ordinal(
    store: TranscriptStore, tmp_path: Path
) -> None:
    number = line_of(LOCAL, lambda r: r["payload"].get("type") == "function_call_output")
    lines = edited(
        LOCAL,
        number,
        lambda r: {**r, "payload": {k: v for k, v in r["payload"].items() if k != "id"}},
    )
    ordinal = json.loads(lines[number - 1])["ordinal"]
    import_codex(store, LOCAL.copy(tmp_path, lines))
    output = store.explain(LOCAL.id, f"codex-{LOCAL.id}-{ordinal}")["message"]
    assert output["role"] == "tool"
    assert output["codex"]["line"] == number


def test_item_types_this_importer_does_not_know_are_kept_verbatim_as_assistant_messages(
    store: TranscriptStore, tmp_path: Path
) -> None:
    session = scenario("remote")
    lines = session.lines()
    ghost = {"type": "ghost_snapshot", "ghost_commit": {"id": "abc123", "parent": None}}
    record = {"timestamp": "2026-12-06T07:00:00Z", "type": "response_item", "payload": ghost}
    lines.insert(9, json.dumps(record) + "\n")
    (report,) = import_codex(store, session.copy(tmp_path, lines))
    stored = store.explain(session.id, f"codex-{session.id}-line10")["message"]
    assert (stored["role"], stored["codex"]["item"]) == ("assistant", ghost)
    assert report.status == "imported"
    assert (
        "items of types without a role of their own, stored as assistant messages: "
        "ghost_snapshot (1)" in report.notes
    )


def test_an_item_repeating_a_stored_id_is_stored_again_under_an_id_of_its_own(
    store: TranscriptStore, tmp_path: Path
) -> None:
    session = scenario("remote")
    lines = session.lines()
    question = line_of(
        session,
        lambda r: (
            r["payload"].get("role") == "user" and "First question." in json.dumps(r["payload"])
        ),
    )
    lines.insert(question, lines[question - 1])  # written twice (codex#29531)
    (report,) = import_codex(store, session.copy(tmp_path, lines))
    first = json.loads(lines[question - 1])["payload"]["id"]
    twice = [
        m for m in store.history(session.id) if m["message"]["codex"]["item"].get("id") == first
    ]
    assert [entry["id"] for entry in twice] == [
        first,
        f"codex-{session.id}-{json.loads(lines[question])['ordinal']}",
    ]
    assert any("repeat the id of an item stored before" in note for note in report.notes)


def test_a_compaction_without_replacement_history_replaces_the_context_with_its_summary(
    store: TranscriptStore, tmp_path: Path
) -> None:
    number = line_of(LOCAL, lambda r: r["type"] == "compacted")
    lines = edited(LOCAL, number, lambda r: {**r, "payload": {"message": "An older summary."}})
    (report,) = import_codex(store, LOCAL.copy(tmp_path, lines))
    assert report.status == "doubtful"
    first = store.compactions(LOCAL.id)[0]
    (summary,) = first["added"]
    assert store.explain(LOCAL.id, summary)["message"]["content"] == "An older summary."
    assert any("without replacement_history" in note for note in report.notes)


def test_a_replacement_keeping_a_tool_output_without_its_call_is_a_failed_attempt(
    store: TranscriptStore, tmp_path: Path
) -> None:
    records = LOCAL.records()
    output = next(
        r["payload"] for r in records if r["payload"].get("type") == "function_call_output"
    )
    number = line_of(LOCAL, lambda r: r["type"] == "compacted")
    lines = edited(
        LOCAL,
        number,
        lambda r: {
            **r,
            "payload": {
                **r["payload"],
                "replacement_history": [output, *r["payload"]["replacement_history"]],
            },
        },
    )
    (report,) = import_codex(store, LOCAL.copy(tmp_path, lines))
    assert report.status == "doubtful"
    first = store.compactions(LOCAL.id)[0]
    assert (first["status"], first["failure"]) == ("failed", "orphaned_tool_result")


def test_session_metadata_the_store_cannot_hold_is_cut_to_what_it_can_and_the_session_doubtful(
    store: TranscriptStore, tmp_path: Path
) -> None:
    deep: dict[str, object] = {}
    for _ in range(200):
        deep = {"deeper": deep}
    lines = edited(LOCAL, 1, lambda r: {**r, "payload": {**r["payload"], "extra": deep}})
    (report,) = import_codex(store, LOCAL.copy(tmp_path, lines))
    assert report.status == "doubtful"
    assert any(
        note.startswith("line 1: session_meta the store cannot hold") for note in report.notes
    )
    (session,) = store.sessions()
    assert sorted(session["metadata"]) == [
        "cli_version",
        "cwd",
        "instructions_sha256",
        "originator",
        "rollout",
    ]
    assert [m["id"] for m in store.active(LOCAL.id)] == LOCAL.final_context()


def test_a_file_that_is_no_rollout_is_reported_unreadable_and_others_still_import(
    store: TranscriptStore, tmp_path: Path
) -> None:
    (tmp_path / "rollout-notes.jsonl").write_text('{"role": "user", "content": "hi"}\n')
    (tmp_path / "rollout-meta.jsonl").write_text('{"type": "turn_context", "payload": {}}\n')
    (tmp_path / "rollout-binary.jsonl").write_bytes(b"\x00\xff\n")
    LOCAL.copy(tmp_path)
    reports = import_codex(store, tmp_path)
    assert sorted((r.status, r.notes[0] if r.status == "unreadable" else "") for r in reports) == [
        ("imported", ""),
        ("unreadable", "not a Codex rollout: line 1 is no session_meta record"),
        ("unreadable", "not a Codex rollout: none of its lines is a rollout record"),
        ("unreadable", "not a Codex rollout: none of its lines is a rollout record"),
    ]


def test_a_path_that_does_not_exist_is_an_error_and_nothing_is_imported(
    store: TranscriptStore, tmp_path: Path
) -> None:
    with pytest.raises(CodexImportError, match="no such file or folder: .*missing"):
        import_codex(store, [LOCAL.path, tmp_path / "missing"])
    assert store.sessions() == []


def test_without_paths_the_sessions_folder_of_codex_home_is_read(
    store: TranscriptStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "codex-home" / "sessions" / "2026" / "12" / "06"
    folder.mkdir(parents=True)
    LOCAL.copy(folder)
    (folder / "notes.jsonl").write_text("not a rollout\n")  # not rollout-*.jsonl: not read
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert [(r.session_id, r.status) for r in import_codex(store)] == [(LOCAL.id, "imported")]


def test_without_paths_or_codex_home_the_folder_in_home_is_read(
    store: TranscriptStore, private_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEX_HOME", raising=False)
    with pytest.raises(CodexImportError, match=r"no Codex sessions folder at .*\.codex/sessions"):
        import_codex(store)
    folder = private_data_dir / ".codex" / "sessions" / "2026"
    folder.mkdir(parents=True)
    LOCAL.copy(folder)
    assert [r.session_id for r in import_codex(store)] == [LOCAL.id]


def test_a_fork_whose_parent_rollout_is_not_found_is_unreadable_and_nothing_is_stored(
    store: TranscriptStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex-here"))
    fork = scenario("fork")
    (report,) = import_codex(store, fork.copy(tmp_path))
    assert (report.session_id, report.status) == (fork.id, "unreadable")
    assert report.notes == [
        f"forked from session {fork.truth['forked_from']} (its lines before ordinal 77), whose "
        "rollout is not under the paths given nor in the Codex sessions folder: not imported "
        "(import it with that rollout)"
    ]
    assert store.sessions() == []


def test_a_fork_given_alone_finds_its_parent_in_the_sessions_folder_around_it(
    store: TranscriptStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex-here"))
    sessions = copy_all(tmp_path)
    fork = scenario("fork")
    (report,) = import_codex(store, next(sessions.rglob(fork.path.name)))
    assert report.status == "imported"
    assert [m["id"] for m in store.active(fork.id)] == fork.final_context()


def test_a_fork_that_forks_from_itself_is_unreadable(
    store: TranscriptStore, tmp_path: Path
) -> None:
    lines = edited(
        LOCAL,
        1,
        lambda r: {
            **r,
            "payload": {
                **r["payload"],
                "history_base": {"thread_id": LOCAL.id, "end_ordinal_exclusive": 5},
            },
        },
    )
    (report,) = import_codex(store, LOCAL.copy(tmp_path, lines))
    assert (report.status, report.notes) == (
        "unreadable",
        [f"forked from session {LOCAL.id}, which forks from it in turn: not imported"],
    )
