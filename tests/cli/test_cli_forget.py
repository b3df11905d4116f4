"""`transcripts forget SESSION`, run with click's CliRunner on the `populated` store file: it
asks first, erases, says what it erased; the other commands then treat the session as erased."""

from __future__ import annotations

import json
from collections.abc import Callable

from support.cli import Run

ERASED_LINE = "Error: session 'trip' was erased at YYYY-MM-DD hh:mm:ss UTC\n"


def test_forget_asks_first_and_a_no_changes_nothing(
    run: Run, populated: str, normalise: Callable[[str], str]
) -> None:
    result = run("forget", "trip", input="n\n")
    assert result.exit_code == 1
    assert result.stderr == (
        "Erase session 'trip' for good (7 messages, 2 compaction attempts)? "
        "It cannot be undone [y/N]: n\nAborted!\n"
    )
    assert run("show", "trip").exit_code == 0


def test_forget_with_yes_erases_the_session_and_says_what_it_erased(
    run: Run, populated: str, normalise: Callable[[str], str]
) -> None:
    result = run("forget", "trip", "--yes")
    assert result.exit_code == 0, result.output
    assert normalise(result.stdout) == (
        "Erased session trip at YYYY-MM-DD hh:mm:ss: 7 messages, 2 compaction attempts, "
        "9 events (started YYYY-MM-DD hh:mm:ss).\n"
    )
    assert result.stderr == ""


def test_a_confirmed_forget_erases_and_forgetting_again_says_when_it_was_erased(
    run: Run, populated: str, normalise: Callable[[str], str]
) -> None:
    assert run("forget", "trip", input="y\n").exit_code == 0
    again = run("forget", "trip")  # no question: there is nothing left to erase
    assert again.exit_code == 0
    assert normalise(again.stdout) == (
        "Session trip was erased at YYYY-MM-DD hh:mm:ss already: nothing changed.\n"
    )


def test_the_content_commands_of_a_forgotten_session_are_one_line_and_exit_1(
    run: Run, populated: str, normalise: Callable[[str], str]
) -> None:
    run("forget", "trip", "--yes")
    for command in [
        ("show", "trip"),
        ("show", "trip", "--as-of", "2"),
        ("history", "trip"),
        ("audit", "trip"),
        ("explain", "trip", "m1"),
        ("export", "trip"),
    ]:
        result = run(*command)
        assert result.exit_code == 1, command
        assert (normalise(result.stderr), result.stdout) == (ERASED_LINE, ""), command


def test_sessions_info_audit_and_events_show_the_forgotten_session_as_erased(
    run: Run, populated: str
) -> None:
    run("forget", "trip", "--yes")
    sessions = {s["id"]: s for s in json.loads(run("sessions", "--json").stdout)}
    assert sessions["trip"]["erased_at"] is not None
    assert (sessions["trip"]["messages"], sessions["trip"]["metadata"]) == (0, {})
    assert sessions["chat"]["erased_at"] is None
    table = run("sessions").stdout
    assert "erased" in table.splitlines()[2]
    info = json.loads(run("info", "--json").stdout)
    assert (info["sessions"], info["erased"], info["messages"], info["events"]) == (2, 1, 2, 4)
    assert "Sessions:     2 (1 erased)" in run("info").stdout
    audit = json.loads(run("audit", "--json").stdout)
    assert audit == []  # chat has no attempts, and trip's are gone
    [tombstone] = json.loads(run("events", "trip", "--json").stdout)
    assert (tombstone["type"], tombstone["version"]) == ("Erased", 10)
    assert run("projections", "verify").stdout == "OK: the views of 2 sessions match the log.\n"


def test_forget_json_gives_the_erasure_for_programs(run: Run, populated: str) -> None:
    erasure = json.loads(run("forget", "trip", "--yes", "--json").stdout)
    assert {key: erasure[key] for key in erasure if not key.endswith("_at")} == {
        "session_id": "trip",
        "messages": 7,
        "compactions_committed": 1,
        "compactions_failed": 1,
        "events": 9,
        "already_erased": False,
    }


def test_forgetting_an_unknown_session_is_one_line_and_exit_1(run: Run, populated: str) -> None:
    result = run("forget", "nope", "--yes")
    assert result.exit_code == 1
    assert result.stderr == "Error: session 'nope' was never started\n"
