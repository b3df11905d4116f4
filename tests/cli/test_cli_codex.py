"""`transcripts import codex` on the rollouts the real Codex CLI wrote (tests/data/codex): the
report, a dry run, `--json`, importing again, a rollout Codex rewrote (exit 1), where it looks
without a PATH, and bad paths. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import Run, error_line, run_cli
from support.codex import DATA, SESSIONS, VERSION, scenario
from transcripts import TranscriptStore

ROLLOUTS = DATA / VERSION / "sessions"
LOCAL = scenario("local")


def expected_rows(store_url: str) -> list[str]:
    """The report's rows, as the store counts each imported session."""
    with TranscriptStore.open(store_url) as store:
        sessions = sorted(store.sessions(), key=lambda s: SESSIONS[s["id"]]["rollout"])
    rows = []
    for s in sessions:
        compactions = str(s["compactions_committed"])
        if s["compactions_failed"]:
            compactions += f" +{s['compactions_failed']} failed"
        row = f"{s['id']}  imported  {s['messages']:>8}  {s['active']:>6}  {compactions}"
        rows.append(" " + row)
    return rows


def test_import_codex_prints_a_row_per_rollout_then_its_notes_and_a_summary(
    durable_url: str,
) -> None:
    result = run_cli(durable_url, "import", "codex", str(ROLLOUTS))
    assert result.exit_code == 0, result.output
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines[0].strip() == "Codex import"
    assert lines[2].split() == ["session", "status", "messages", "active", "compactions"]
    count = len(SESSIONS)
    assert lines[4 : 4 + count] == expected_rows(durable_url)
    overflow = scenario("overflow").id
    assert lines[5 + count].startswith(f"{overflow[:12]}…: line 21: turn ")
    assert lines[-1] == f"{count} rollouts: {count} imported, 0 unchanged."
    again = run_cli(durable_url, "import", "codex", str(ROLLOUTS))
    assert again.stdout.splitlines()[-1] == f"{count} rollouts: 0 imported, {count} unchanged."


def test_a_dry_run_says_so_and_stores_nothing(run: Run) -> None:
    result = run("import", "codex", str(ROLLOUTS), "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].strip() == "Codex import (dry run: nothing written)"
    assert result.stdout.splitlines()[-1] == (
        f"{len(SESSIONS)} rollouts: {len(SESSIONS)} imported, 0 unchanged "
        "(dry run: nothing was written)."
    )
    assert json.loads(run("sessions", "--json").stdout) == []


def test_json_gives_every_report_field(run: Run) -> None:
    result = run("import", "codex", str(LOCAL.path), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [
        {
            "path": str(LOCAL.path),
            "session_id": LOCAL.id,
            "status": "imported",
            "messages": 24,
            "active": len(LOCAL.final_context()),
            "compactions_committed": 2,
            "compactions_failed": 0,
            "diverged_at_line": None,
            "notes": [],
            "dry_run": False,
        }
    ]


def test_a_rollout_codex_rewrote_is_reported_diverged_and_the_command_exits_1(
    run: Run, tmp_path: Path
) -> None:
    assert run("import", "codex", str(LOCAL.path)).exit_code == 0
    rewritten = LOCAL.copy(tmp_path, [LOCAL.lines()[0], *LOCAL.lines()[20:]])
    history = run("history", LOCAL.id, "--json").stdout
    result = run("import", "codex", str(rewritten), "--json")
    assert result.exit_code == 1
    (report,) = json.loads(result.stdout)
    assert (report["status"], report["diverged_at_line"]) == ("diverged", 3)
    assert run("history", LOCAL.id, "--json").stdout == history
    table = run("import", "codex", str(rewritten))
    assert table.exit_code == 1
    assert table.stdout.splitlines()[-1] == "1 rollout: 0 imported, 0 unchanged, 1 diverged."


def test_without_a_path_it_reads_the_sessions_folder_of_codex_home(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "home" / "sessions" / "2026"
    folder.mkdir(parents=True)
    LOCAL.copy(folder)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "home"))
    result = run("import", "codex", "--json")
    assert [(r["session_id"], r["status"]) for r in json.loads(result.stdout)] == [
        (LOCAL.id, "imported")
    ]


def test_a_path_that_does_not_exist_is_one_line_and_exit_1(run: Run, tmp_path: Path) -> None:
    result = run("import", "codex", str(LOCAL.path), str(tmp_path / "nowhere"))
    assert error_line(result) == f"Error: no such file or folder: {tmp_path / 'nowhere'}"
    assert json.loads(run("sessions", "--json").stdout) == []


def test_rollout_text_in_the_report_is_shown_as_text_not_markup(run: Run, tmp_path: Path) -> None:
    lines = LOCAL.lines()
    meta = json.loads(lines[0])
    meta["payload"]["id"] = "[bold red]evil[/bold red]"
    path = LOCAL.copy(tmp_path, [json.dumps(meta) + "\n", *lines[1:], "{cut"])
    result = run("import", "codex", str(path))
    assert result.exit_code == 0, result.output
    assert " [bold red]evil[/bold red]  imported" in result.stdout
    assert "[bold red]ev…: the last line (" in result.stdout
