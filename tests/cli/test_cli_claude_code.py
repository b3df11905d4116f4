"""`transcripts import claude-code` on the session the real Claude Code CLI wrote
(tests/data/claude_code): the report, a dry run, `--json`, importing again, where it looks
without a PATH, and a bad path or line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.claude_code import PROJECTS, SESSION_ID, copy_projects
from support.cli import Run, error_line


def test_import_claude_code_prints_a_row_per_session_and_a_summary(run: Run) -> None:
    result = run("import", "claude-code", str(PROJECTS))
    assert result.exit_code == 0, result.output
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines[0].strip() == "Claude Code import"
    assert lines[2].split() == [
        "session", "status", "messages", "active", "compactions", "duplicates",
    ]  # fmt: skip
    assert lines[4].split() == [SESSION_ID, "imported", "53", "14", "2", "+1", "failed", "0"]
    assert lines[5].split()[:3] == ["└", "agent-a3fd540e4678bb887", "imported"]
    assert lines[-1] == "2 sessions: 2 imported, 0 unchanged."
    again = run("import", "claude-code", str(PROJECTS))
    assert again.stdout.splitlines()[-1] == "2 sessions: 0 imported, 2 unchanged."


def test_a_dry_run_with_json_reports_and_stores_nothing(run: Run) -> None:
    result = run("import", "claude-code", str(PROJECTS), "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    reports = json.loads(result.stdout)
    assert [(r["session_id"], r["status"], r["dry_run"]) for r in reports][0] == (
        SESSION_ID, "imported", True,
    )  # fmt: skip
    assert reports[0]["compactions_committed"] == 2 and reports[0]["compactions_failed"] == 1
    assert json.loads(run("sessions", "--json").stdout) == []


def test_without_a_path_it_reads_claude_config_dir(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_projects(tmp_path)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    result = run("import", "claude-code", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["session_id"] == SESSION_ID


def test_a_missing_path_or_a_malformed_line_is_one_line_and_exit_1(
    run: Run, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere"
    assert error_line(run("import", "claude-code", str(missing))) == (
        f"Error: no such file or folder: {missing}"
    )
    projects = copy_projects(tmp_path)
    session = next(projects.glob(f"*/{SESSION_ID}.jsonl"))
    session.write_text("{}\n" + session.read_text())
    assert error_line(run("import", "claude-code", str(projects))).endswith(
        "line 1 is not a Claude Code record (a JSON object with a type)"
    )
    assert json.loads(run("sessions", "--json").stdout) == []
