"""Issue 29: the command line does what the API does, and minds its pipes. `events` filters
as `iter_events` does; `sessions` is ordered by last activity; `search` says when it shows
only some matches and when there are none; `--as-of` past the end is an error; a pipe closed
early ends quietly with exit status 0; an unknown session id suggests the closest. On SQLite
and PostgreSQL (`durable_url`) where the store answers."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from support.cli import COMMAND, error_line, process_environment, run_cli, run_process
from transcripts import TranscriptStore


def story(url: str) -> None:
    """Session `trip`: 6 messages (versions 2-7), a failed compaction (8), a committed one
    (9), a rewind (10) and a message (11)."""
    with TranscriptStore.open(url) as store:
        store.start("trip")
        store.append("trip", [{"role": "user", "content": f"lisbon turn {i}"} for i in range(6)])
        store.compact("trip", lambda messages: 1 / 0)
        store.compact("trip", lambda messages: [{"role": "system", "content": "sum"}])
        store.append("trip", [{"role": "user", "content": "more"}])
        store.rewind("trip", count=1)
        store.append("trip", [{"role": "user", "content": "again"}])


def versions_and_types(url: str, *args: str) -> list[tuple[int, str]]:
    result = run_cli(url, "events", "trip", "--json", *args)
    assert result.exit_code == 0, result.output
    return [(event["version"], event["type"]) for event in json.loads(result.stdout)]


def test_events_filters_by_type_and_version_and_keeps_the_last_n(durable_url: str) -> None:
    story(durable_url)
    with TranscriptStore.open(durable_url) as store:
        api = [
            (event["version"], event["type"])
            for event in store.iter_events(
                "trip", types=["CompactionFailed", "Rewound"], after=2, until=12
            )
        ]
    chosen = ["--type", "CompactionFailed", "--type", "Rewound", "--after", "2", "--until", "12"]
    assert (
        versions_and_types(durable_url, *chosen)
        == api
        == [
            (8, "CompactionFailed"),
            (11, "Rewound"),
        ]
    )
    assert versions_and_types(durable_url, "--after", "9", "--until", "10") == [
        (10, "MessageAppended")
    ]
    assert versions_and_types(durable_url, "--tail", "2") == [
        (11, "Rewound"),
        (12, "MessageAppended"),
    ]
    assert versions_and_types(durable_url, "--type", "MessageAppended", "--tail", "1") == [
        (12, "MessageAppended")
    ]
    table = run_cli(durable_url, "events", "trip", "--type", "Rewound").stdout
    assert "Rewound" in table and "MessageAppended" not in table
    mistyped = run_cli(durable_url, "events", "trip", "--type", "Rewind")
    assert mistyped.exit_code == 2 and "'Rewind' is not one of 'Started'" in mistyped.stderr


def test_sessions_are_listed_by_last_activity_with_a_column_for_it(durable_url: str) -> None:
    with TranscriptStore.open(durable_url) as store:
        for session_id in ("old", "new"):
            store.start(session_id)
        time.sleep(0.01)
        store.append("old", [{"role": "user", "content": "the old one goes on"}])
    listed = json.loads(run_cli(durable_url, "sessions", "--json").stdout)
    assert [session["id"] for session in listed] == ["new", "old"]
    last = json.loads(run_cli(durable_url, "sessions", "--json", "-n", "1").stdout)
    assert [session["id"] for session in last] == ["old"]
    assert "last activity" in run_cli(durable_url, "sessions").stdout


def test_search_says_when_it_shows_only_some_matches_and_when_none_match(
    durable_url: str,
) -> None:
    story(durable_url)
    capped = run_cli(durable_url, "search", "lisbon", "-n", "2")
    assert capped.exit_code == 0
    assert "Showing 2 of more matches for 'lisbon'" in capped.stdout
    every = run_cli(durable_url, "search", "lisbon", "-n", "6")
    assert "6 matches for 'lisbon'" in every.stdout and "Showing" not in every.stdout
    none = run_cli(durable_url, "search", "porto")
    assert (none.exit_code, none.stdout) == (0, "No matches for 'porto'.\n")
    assert json.loads(run_cli(durable_url, "search", "lisbon", "-n", "2", "--json").stdout)
    assert (
        len(json.loads(run_cli(durable_url, "search", "lisbon", "-n", "2", "--json").stdout)) == 2
    )


def test_show_as_of_past_the_last_version_is_an_error_naming_the_last(sqlite_url: str) -> None:
    story(sqlite_url)
    line = error_line(run_cli(sqlite_url, "show", "trip", "--as-of", "13"))
    assert line == "Error: session 'trip' has versions 1 to 12: there is no version 13"
    assert run_cli(sqlite_url, "show", "trip", "--as-of", "12").exit_code == 0


def test_an_unknown_session_id_suggests_the_closest_ones(sqlite_url: str) -> None:
    story(sqlite_url)
    with TranscriptStore.open(sqlite_url) as store:
        store.start("trip-2")
        store.start("unrelated")
    for command in ("show", "history", "events", "audit"):
        line = error_line(run_cli(sqlite_url, command, "tirp"))
        assert line == "Error: session 'tirp' was never started; did you mean 'trip', 'trip-2'?"
    assert error_line(run_cli(sqlite_url, "show", "zzzzzzzz")) == (
        "Error: session 'zzzzzzzz' was never started"
    )


def closed_early(url: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The command writing into a pipe whose reader reads one line and closes it (`| head
    -1`); its status and stderr."""
    process = subprocess.Popen(
        [*COMMAND, "--db", url, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=process_environment(columns=None),
        cwd=cwd,
    )
    assert process.stdout is not None
    assert process.stdout.readline()
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    return subprocess.CompletedProcess(args, process.returncode, b"", stderr)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["events", "long"],
        ["events", "long", "--jsonl"],
        ["show", "long", "--json"],
        ["history", "long"],
        ["export", "long"],
        ["search", "word", "-n", "3000"],
        ["sessions"],
    ],
    ids=lambda args: " ".join(args),
)
def test_a_pipe_closed_after_the_first_line_ends_the_command_quietly_with_status_0(
    long_store: str, tmp_path: Path, args: list[str]
) -> None:
    ended = closed_early(long_store, *args, cwd=tmp_path)
    assert (ended.returncode, ended.stderr) == (0, b"")


@pytest.fixture(scope="module")
def long_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Session `long` of 3,000 messages (more than a pipe holds in every form) and 3,000
    more sessions."""
    url = f"sqlite:///{tmp_path_factory.mktemp('long') / 'store.db'}"
    with TranscriptStore.open(url) as store:
        store.start("long")
        store.append("long", [{"role": "user", "content": f"word {i} " * 5} for i in range(3000)])
        for i in range(3000):
            store.start(f"session-{i:04}")
    return url


@pytest.mark.slow
def test_in_a_pipe_search_prints_one_line_a_hit_with_whole_ids_and_the_count_on_stderr(
    sqlite_url: str, tmp_path: Path
) -> None:
    story(sqlite_url)
    searched = run_process(
        "--db", sqlite_url, "search", "lisbon", "-n", "2", cwd=tmp_path, columns=None
    )
    assert searched.returncode == 0
    header, *hits = searched.stdout.splitlines()
    assert header == "session\tmessage\trole\tactive\tsnippet"
    assert len(hits) == 2
    assert all(hit.split("\t")[0] == "trip" and "«lisbon»" in hit for hit in hits)
    assert searched.stderr == "Showing 2 of more matches for 'lisbon' (-n to show more)\n"
