"""`import hermes` on the synthetic schema-31 file and on a file hermes-agent 0.19.0 wrote, then
the read commands on what it stored.

The report's notes are the importer's words (adapters/importers/hermes); these tests check
the table around them exactly and the notes only for what they must say.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import Result

from support.cli import Run
from support.hermes import SYNTHETIC as FIXTURE
from support.hermes import Release, make_hermes

HEALTHY, COMPACTED, CORRUPTED = (
    "20260829_101500_a1b2c3",
    "20260830_141200_d4e5f6",
    "20260831_093000_99477a",
)
PARENT, CHILD = "20260901_080000_0a0b0c", "20260901_083000_0d0e0f"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lines(result: Result) -> list[str]:
    assert result.exit_code == 0, result.output
    return [line.rstrip() for line in result.stdout.splitlines()]


def as_json(result: Result) -> object:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def imported(run: Run) -> Run:
    result = run("import", "hermes", str(FIXTURE))
    assert result.exit_code == 0, result.output
    return run


def test_a_dry_run_prints_the_report_per_session_and_writes_nothing(run: Run) -> None:
    before = digest(FIXTURE)
    report = lines(run("import", "hermes", str(FIXTURE), "--dry-run"))
    assert report[:6] == [
        "                                        Hermes import (dry run: nothing written)",
        "┏━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━┓",
        "┃ session                ┃ status   ┃ messages ┃ active ┃ compactions   ┃ rewinds ┃ dropped ┃ notes                    ┃",
        "┡━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━┩",
        "│ 20260829_101500_a1b2c3 │ imported │       59 │     59 │ 0             │       0 │       0 │                          │",
        "│ 20260830_141200_d4e5f6 │ imported │       55 │     14 │ 1             │       0 │       0 │ 5 rows carried past a    │",
    ]  # fmt: skip
    assert any(
        line.startswith(
            "│ 20260831_093000_99477a │ repaired │       54 │     54 │ 0 (48 failed) │       0 │     360 │"
        )
        for line in report
    )
    assert (
        report[-1]
        == "5 sessions: 4 imported, 1 repaired, 0 unchanged (dry run: nothing was written)."
    )
    assert as_json(run("sessions", "--json")) == []
    assert digest(FIXTURE) == before


def test_the_import_reports_each_session_and_again_stores_nothing_new(run: Run) -> None:
    before = digest(FIXTURE)
    first = as_json(run("import", "hermes", str(FIXTURE), "--json"))
    assert [(r["session_id"], r["status"], r["dry_run"]) for r in first] == [
        (HEALTHY, "imported", False),
        (COMPACTED, "imported", False),
        (CORRUPTED, "repaired", False),
        (PARENT, "imported", False),
        (CHILD, "imported", False),
    ]
    events = {s: len(as_json(run("events", s, "--json"))) for s in (HEALTHY, CORRUPTED)}
    again = lines(run("import", "hermes", str(FIXTURE)))
    assert again[-1] == "5 sessions: 0 imported, 0 repaired, 5 unchanged."
    assert {s: len(as_json(run("events", s, "--json"))) for s in events} == events
    assert digest(FIXTURE) == before
    assert not FIXTURE.with_name(FIXTURE.name + "-wal").exists()
    assert not FIXTURE.with_name(FIXTURE.name + "-shm").exists()


def test_sessions_keep_their_source_model_and_lineage(imported: Run) -> None:
    sessions = {s["id"]: s for s in as_json(imported("sessions", "--json"))}
    assert list(sessions) == [HEALTHY, COMPACTED, CORRUPTED, PARENT, CHILD]
    assert sessions[CHILD]["parent_id"] == PARENT
    assert sessions[CORRUPTED]["source"] == "telegram"
    assert [s["id"] for s in as_json(imported("sessions", "--json", "--source", "telegram"))] == [
        CORRUPTED
    ]


def test_the_corrupted_session_has_each_message_once_and_48_failed_attempts(
    imported: Run,
) -> None:
    active = as_json(imported("show", CORRUPTED, "--json"))
    contents = [json.dumps(m.get("content"), sort_keys=True) for m in active if m["role"] == "user"]
    assert len(contents) == len(set(contents))  # the first user message is not there 49 times
    assert not any(str(m.get("content", "")).startswith("[CONTEXT COMPACTION") for m in active)
    failed = as_json(imported("audit", CORRUPTED, "--failed", "--json"))
    assert len(failed) == 48
    assert {attempt["failure"] for attempt in failed} == {"storage_error"}
    assert as_json(imported("audit", CORRUPTED, "--json")) == failed
    summary = lines(imported("audit", CORRUPTED))[-1]
    assert summary == "48 attempts: 0 committed, 48 failed; 0 tokens saved."


def test_the_compacted_session_shows_its_compaction_where_it_happened(imported: Run) -> None:
    history = as_json(imported("history", COMPACTED, "--json"))
    assert (len(history), sum(entry["active"] for entry in history)) == (55, 14)
    [committed] = as_json(imported("audit", COMPACTED, "--json"))
    assert committed["status"] == "committed"
    boundary = [line for line in lines(imported("history", COMPACTED)) if committed["id"] in line]
    assert len(boundary) == 1 and "compaction: 41 superseded, 1 added" in boundary[0]
    superseded = [entry for entry in history if entry["superseded_by"] == committed["id"]]
    assert len(superseded) == 41
    assert all(entry["version"] < committed["version"] for entry in superseded)
    markdown = imported("export", COMPACTED, "--format", "md").stdout
    assert f"> **Compaction `{committed['id']}`** at version {committed['version']}" in markdown


def test_a_file_that_is_not_a_hermes_store_is_one_line(run: Run, tmp_path: Path) -> None:
    text = tmp_path / "state.db"
    text.write_text("not sqlite\n")
    result = run("import", "hermes", str(text))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Error: {text} is not a Hermes store: not an SQLite database\n"
    missing = run("import", "hermes", str(tmp_path / "nope.db"))
    assert missing.stderr == f"Error: {tmp_path / 'nope.db'}: no such file\n"


def test_a_hermes_file_given_as_the_store_is_refused_and_untouched(run: Run) -> None:
    before = digest(FIXTURE)
    result = run("sessions", url=f"sqlite:///{FIXTURE}")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: {FIXTURE} is not a transcript store: it is a SQLite database of another program"
    )
    assert digest(FIXTURE) == before


def test_a_file_hermes_0_19_0_wrote_imports_with_its_failed_commits_repaired_and_its_undos_rewound(
    run: Run,
) -> None:
    release = Release.load("0.19.0")
    reports = as_json(run("import", "hermes", str(release.path), "--json"))
    statuses = {report["session_id"]: report["status"] for report in reports}
    failing = {
        s
        for s, truth in release.sessions.items()
        if any(a["kind"] == "fail" for a in truth["attempts"])
    }
    assert {s for s, status in statuses.items() if status == "repaired"} == failing
    assert set(statuses.values()) == {"imported", "repaired"}
    undo = "20260101_120000_rewnd1"
    truth = release.sessions[undo]
    rewinds = [rewind["messages"] for rewind in truth["rewinds"] if rewind["messages"]]
    [report] = [report for report in reports if report["session_id"] == undo]
    assert report["rewinds"] == len(rewinds) > 0
    audit = as_json(run("audit", undo, "--json"))
    kinds = [attempt["kind"] for attempt in truth["attempts"]]
    assert [entry["status"] for entry in audit] == [
        "failed" if kind == "fail" else "committed" for kind in kinds
    ]
    history = lines(run("history", undo))
    assert history[0].strip() == (
        f"History of {undo} ({len(truth['history'])} messages, {len(kinds)} compaction "
        f"attempts, {len(rewinds)} rewinds)"
    )
    assert sum("│ rewound by v" in line for line in history) == sum(map(len, rewinds))
    assert lines(run("import", "hermes", str(release.path)))[-1] == (
        f"{len(reports)} sessions: 0 imported, 0 repaired, {len(reports)} unchanged."
    )


def test_a_malformed_hermes_file_is_one_line_and_stores_nothing(run: Run, tmp_path: Path) -> None:
    source = make_hermes(tmp_path / "state.db")
    with sqlite3.connect(source) as connection:
        connection.execute("INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1)")
        connection.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, 1)",
            ("s1", "user", "\x00json:" + "[" * 100_000 + "]" * 100_000),
        )
    connection.close()
    result = run("import", "hermes", str(source))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"Error: {source}: row 1: its content is JSON nested deeper than 100 levels, deeper "
        "than a message may be; nothing was imported\n"
    )
    assert as_json(run("sessions", "--json")) == []
