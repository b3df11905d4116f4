"""show, history, events and export print as they read: --limit / --tail, long sessions in
chunks with the look of one table, JSON item by item, and a closed pipe ends them quietly."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from rich.cells import cell_len

from support.cli import COMMAND, Run, process_environment
from transcripts import TranscriptStore
from transcripts.adapters.cli.render import to_json
from transcripts.adapters.exporters.timeline import Entry, timeline

LONG = 260  # messages: more than two chunks of rows


@pytest.fixture
def long_session(db: str) -> str:
    """Session `long`: 260 messages, the first 200 compacted into a summary, 2 rewound."""
    with TranscriptStore.open(db) as store:
        store.start("long")
        store.append("long", [{"role": "user", "content": f"m{i}"} for i in range(LONG)])
        store.compact("long", lambda messages: [{"role": "user", "content": "s"}, *messages[200:]])
        store.rewind("long", count=2, reason="undo")
    return db


def rows(text: str) -> list[str]:
    """The data rows of a table (lines between borders starting with │)."""
    return [line for line in text.splitlines() if line.startswith("│")]


def test_show_limit_and_tail_print_the_first_or_last_messages_at_their_places(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    assert [row.split("│")[1:4] for row in rows(output(run("show", "trip", "--limit", "2")))] == [
        [" 1 ", " m1                                   ", " system    "],
        [" 2 ", " msg_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx ", " assistant "],
    ]
    tail = output(run("show", "trip", "--tail", "1"))
    assert [row.split("│")[1:3] for row in rows(tail)] == [[" 3 ", " m6 "]]
    assert tail.splitlines()[-1].strip() == "1 message"
    assert json.loads(run("show", "trip", "--tail", "2", "--json").stdout)[1]["id"] == "m6"
    as_of = json.loads(run("show", "trip", "--as-of", "4", "--tail", "5", "--json").stdout)
    assert [message["id"] for message in as_of] == ["m1", "m2", "m3"]
    as_of = json.loads(run("show", "trip", "--as-of", "4", "--tail", "1", "--json").stdout)
    assert [message["id"] for message in as_of] == ["m3"]


def test_history_limit_and_tail_keep_the_compactions_between_the_messages_shown(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    first = rows(output(run("history", "trip", "--limit", "2")))
    assert [row.split("│")[2].strip() for row in first] == ["m1", "m2"]
    last = output(run("history", "trip", "--tail", "2"))
    assert "History of trip (2 messages, 2 compaction attempts)" in last
    assert [row.split("│")[1].strip() for row in rows(last)][0] == "7"
    entries = json.loads(run("history", "trip", "--tail", "1", "--json").stdout)
    assert [(entry["version"], entry["added_by"] is not None) for entry in entries] == [(9, True)]


def test_limit_and_tail_together_or_negative_are_usage_errors(run: Run, populated: str) -> None:
    for command in ("show", "history"):
        both = run(command, "trip", "--limit", "1", "--tail", "1")
        assert both.exit_code == 2
        assert "give --limit or --tail, not both" in both.stderr
        negative = run(command, "trip", "--tail", "-1")
        assert negative.exit_code == 2
        assert "Invalid value for '--tail'" in negative.stderr


def test_a_long_history_prints_in_chunks_that_read_as_one_table(
    run: Run, long_session: str, output: Callable[[Result], str]
) -> None:
    text = output(run("history", "long"))
    lines = text.splitlines()
    assert lines[0].strip() == "History of long"
    assert lines[-1].strip() == f"{LONG + 1} messages, 1 compaction attempt, 1 rewind"
    assert sum(line.startswith("┏") for line in lines) == 1  # one top border
    assert sum(line.startswith("└") for line in lines) == 1  # one bottom border
    assert len({len(line) for line in lines[1:-1]}) == 1  # every row as wide
    with TranscriptStore.open(long_session) as store:
        items = timeline(store, "long")
    versions = [row.split("│")[1].strip() for row in rows(text)]
    assert [v for v in versions if v] == [str(item.version) for item in items]  # rows in order


def test_a_long_table_of_wide_characters_keeps_its_borders_in_line(
    run: Run, db: str, output: Callable[[Result], str]
) -> None:
    with TranscriptStore.open(db) as store:
        store.start("wide")
        words = ["日本語のテキスト" * 3, "café crème " * 6, "x" * 90, "tool → result ✓"]
        store.append("wide", [{"role": "user", "content": words[i % 4]} for i in range(150)])
    lines = output(run("events", "wide")).splitlines()
    assert len({cell_len(line) for line in lines[1:-1]}) == 1
    assert lines[-1].startswith("└")


def test_json_of_a_long_session_is_printed_item_by_item_as_the_whole_list_was(
    run: Run, long_session: str
) -> None:
    with TranscriptStore.open(long_session) as store:
        active, events = store.active("long"), store.events("long")
        history = [item.as_json() for item in timeline(store, "long") if isinstance(item, Entry)]
    assert run("show", "long", "--json").stdout == to_json(active) + "\n"
    assert run("history", "long", "--json").stdout == to_json(history) + "\n"
    assert run("events", "long", "--json").stdout == to_json(events) + "\n"
    assert run("show", "long", "--limit", "0", "--json").stdout == "[]\n"


def test_export_of_a_long_session_streams_every_message_as_stored(
    run: Run, long_session: str
) -> None:
    with TranscriptStore.open(long_session) as store:
        active = [json.dumps(m) for m in store.active("long")]
        every = [json.dumps(entry["message"]) for entry in store.history("long")]
    assert [json.dumps(json.loads(line)) for line in run("export", "long").stdout.splitlines()] == (
        active
    )
    exported = run("export", "long", "--history").stdout.splitlines()
    assert [json.dumps(json.loads(line)) for line in exported] == every


@pytest.mark.slow
def test_history_into_a_pipe_closed_after_three_lines_ends_quietly_with_status_0(
    db: str, tmp_path: Path
) -> None:
    with TranscriptStore.open(db) as store:  # ~400 kB of table: more than a pipe holds
        store.start("long")
        store.append("long", [{"role": "user", "content": f"m{i}"} for i in range(3000)])
    process = subprocess.Popen(
        [*COMMAND, "--db", db, "history", "long"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=process_environment(),
        cwd=tmp_path,
    )
    assert process.stdout is not None
    head = [process.stdout.readline() for _ in range(3)]
    process.stdout.close()  # as `| head -3` does
    _, stderr = process.communicate(timeout=60)
    assert head[0].decode().strip() == "History of long"
    assert stderr == b""  # no BrokenPipeError, no traceback
    assert process.returncode == 0  # a reader that stops early is no failure
