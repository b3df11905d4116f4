"""Issue 29: a message read whole. `show` and `history` use the terminal's width and take
`--full`; a tool call shows its arguments; in a pipe every command prints one record a line,
nothing wrapped or cut; `--jsonl` streams one JSON object a line. Through the command line
in-process (a table of a given width) and as real processes (a real pipe)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support.cli import Run, run_cli, run_process
from transcripts import TranscriptStore

LONG = (
    "The first line of a long answer, well past sixty characters, says where to go.\n"
    "A second line names the bakery: Manteigaria, Rua do Loreto 2, open until midnight."
)
CALL = {
    "id": "m2",
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "forecast", "arguments": '{"city": "Lisbon", "days": 3}'},
        }
    ],
}


@pytest.fixture
def long_answer(db: str) -> str:
    """Session `s`: a question, a tool call and a long answer of two lines."""
    with TranscriptStore.open(db) as store:
        store.start("s")
        store.append(
            "s",
            [
                {"id": "m1", "role": "user", "content": "Where are the best pastéis?"},
                CALL,
                {"id": "m3", "role": "assistant", "content": LONG},
            ],
        )
    return db


def cli_at(url: str, width: int, *args: str) -> str:
    """The stdout of a command on a table `width` columns wide."""
    from click.testing import CliRunner

    from transcripts.adapters.cli import cli

    runner = CliRunner(env={"COLUMNS": str(width), "NO_COLOR": "1"})
    result = runner.invoke(cli, ["--db", url, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line as a process writing into a pipe, $COLUMNS unset."""
    return run_process(*args, cwd=cwd, columns=None)


def test_show_at_160_columns_uses_the_width_rather_than_cutting_at_60_characters(
    long_answer: str,
) -> None:
    shown = cli_at(long_answer, 160, "show", "s")
    first_line = LONG.splitlines()[0]
    assert first_line in shown  # 80 characters: more than the 60 of old
    assert all(len(line) <= 160 for line in shown.splitlines())
    [row] = [line for line in shown.splitlines() if "│ m3 " in line]
    assert row.rstrip().endswith("… │")  # the rest cut at the edge, on one line


def test_show_full_wraps_every_line_of_the_content_and_cuts_nothing(long_answer: str) -> None:
    shown = cli_at(long_answer, 100, "show", "s", "--full")
    cells = " ".join(
        line.split("│")[4].strip() for line in shown.splitlines() if line.count("│") == 5
    )
    assert " ".join(LONG.split()) in " ".join(cells.split())
    assert "…" not in shown


def test_history_full_shows_the_content_whole_too(long_answer: str) -> None:
    shown = cli_at(long_answer, 100, "history", "s", "--full")
    assert "midnight." in shown and "…" not in shown


def test_a_tool_call_shows_its_name_and_its_arguments(run: Run, long_answer: str) -> None:
    for command in ("show", "history", "events"):
        shown = run(command, "s").stdout
        assert 'calls forecast({"city": "Lisbon", "days": 3})' in shown, command


@pytest.mark.slow
def test_in_a_pipe_show_and_history_print_one_record_a_line_whole_and_tab_separated(
    long_answer: str, tmp_path: Path
) -> None:
    shown = process("--db", long_answer, "show", "s", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        "#\tid\trole\tcontent",
        "1\tm1\tuser\tWhere are the best pastéis?",
        '2\tm2\tassistant\tcalls forecast({"city": "Lisbon", "days": 3})',
        f"3\tm3\tassistant\t{' '.join(LONG.split())}",
    ]
    full = process("--db", long_answer, "show", "s", "--full", cwd=tmp_path)
    escaped = LONG.replace("\n", "\\n")  # a line break in a cell, written \n
    assert full.stdout.splitlines()[-1] == f"3\tm3\tassistant\t{escaped}"
    history = process("--db", long_answer, "history", "s", cwd=tmp_path).stdout.splitlines()
    assert history[0] == "v\tid\trole\tstate\tcontent"
    assert history[-1] == f"4\tm3\tassistant\tactive\t{' '.join(LONG.split())}"


@pytest.mark.slow
def test_in_a_pipe_events_never_folds_its_type_column(db: str, tmp_path: Path) -> None:
    with TranscriptStore.open(db) as store:
        store.start("s")
        store.append("s", [{"role": "user", "content": f"turn {i} " * 20} for i in range(150)])
        store.compact("s", lambda messages: [{"role": "system", "content": "sum"}])
    lines = process("--db", db, "events", "s", cwd=tmp_path).stdout.splitlines()
    assert len(lines) == 1 + 152  # the header, then one line an event
    assert [line.split("\t")[2] for line in lines[1:3]] == ["Started", "MessageAppended"]
    assert lines[-1].split("\t")[2] == "CompactionCommitted"
    assert lines[2].endswith("turn 0 " * 19 + "turn 0")  # whole, never cut


def test_on_a_narrow_terminal_a_long_events_table_keeps_its_type_column_whole(db: str) -> None:
    with TranscriptStore.open(db) as store:
        store.start("s")
        store.append("s", [{"role": "user", "content": "hi"} for _ in range(150)])
        store.compact("s", lambda messages: [{"role": "system", "content": "sum"}])
    shown = cli_at(db, 60, "events", "s")
    assert "CompactionCommitted" in shown and "MessageAppended" in shown


@pytest.mark.parametrize("command", ["show", "history", "events"])
def test_jsonl_streams_one_json_object_a_line_the_items_of_json(
    run: Run, long_answer: str, command: str
) -> None:
    as_json = json.loads(run(command, "s", "--json").stdout)
    lines = run(command, "s", "--jsonl").stdout.splitlines()
    assert [json.loads(line) for line in lines] == as_json
    assert len(lines) == len(as_json) >= 3


def test_audit_and_search_take_jsonl_too(run: Run) -> None:
    assert run("demo").exit_code == 0  # into the `db` store: --db wins
    for args in (["audit"], ["search", "lisbon"]):
        as_json = json.loads(run(*args, "--json").stdout)
        assert [json.loads(line) for line in run(*args, "--jsonl").stdout.splitlines()] == (as_json)
        assert as_json


def test_jsonl_of_a_long_history_has_one_line_an_entry(db: str) -> None:
    with TranscriptStore.open(db) as store:
        store.start("long")
        store.append("long", [{"role": "user", "content": f"m{i}"} for i in range(250)])
    lines = run_cli(db, "history", "long", "--jsonl").stdout.splitlines()
    assert [json.loads(line)["message"]["content"] for line in lines] == [
        f"m{i}" for i in range(250)
    ]
