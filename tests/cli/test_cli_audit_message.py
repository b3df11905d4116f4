"""`audit` says "no replacement" for a failure that proposed none and shows one attempt whole
(`audit SESSION ATTEMPT_ID`); `message SESSION MESSAGE_ID` shows one message in full. Run
in-process on SQLite and as processes on PostgreSQL."""

from __future__ import annotations

import json
import subprocess

import pytest

from support.cli import Run, error_line, run_process
from support.messages import TRIP
from transcripts import TranscriptStore

LONG = "Day 1: " + "Alfama and the castle, " * 10 + "\nDay 2: Belém\n[bold]markup[/bold]"


def summarizer_down(messages: list[dict]) -> list[dict]:
    raise ConnectionError("model unreachable")


def fill(url: str) -> dict[str, str]:
    """Session `trip`: a summarizer that raised, a refused replacement (conflict), a commit;
    returns the attempts' ids by what they were."""
    with TranscriptStore.open(url) as store:
        store.start("trip")
        store.append("trip", [*TRIP, {"id": "m7", "role": "assistant", "content": LONG}])
        raised = store.compact("trip", summarizer_down, reason="budget", count_tokens=len)
        stale, winner = store.begin_compaction("trip"), store.begin_compaction("trip")
        system = winner.messages[0]
        won = store.commit_compaction(winner, [system, {"role": "assistant", "content": "won"}])
        lost = store.commit_compaction(stale, [system, {"role": "assistant", "content": "lost"}])
    return {"raised": raised.compaction_id, "lost": lost.compaction_id, "won": won.compaction_id}


def test_audit_says_no_replacement_only_for_a_failure_that_proposed_none(run: Run, db: str) -> None:
    fill(db)
    result = run("audit", "trip")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "cmp_" in line]
    assert ["no replacement" in row for row in rows] == [True, False, False]
    assert "(-6 +1)" in rows[2] and "-6 +1" in rows[1]  # the conflict proposed one
    assert "7→?" in rows[0]  # tokens counted before (len: 7 messages), none after


def test_audit_of_one_attempt_shows_the_exception_and_its_traceback(run: Run, db: str) -> None:
    attempts = fill(db)
    result = run("audit", "trip", attempts["raised"][:10])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"Compaction attempt {attempts['raised']} of session trip" in out
    assert "  status:          failed (summarize_error)" in out
    assert "  proposed:        no replacement" in out
    assert "  exception:       ConnectionError: model unreachable" in out
    assert "in summarizer_down" in out and "    Traceback (most recent call last):" in out
    assert "would supersede: m1, m2, m3, m4, m5, m6, m7" in out


def test_audit_of_a_refused_attempt_shows_what_it_proposed(run: Run, db: str) -> None:
    attempts = fill(db)
    out = run("audit", "trip", attempts["lost"]).stdout
    assert "  proposed:        1 message (new, not committed)" in out
    assert "      lost" in out and "exception" not in out
    whole = json.loads(run("audit", "trip", attempts["lost"], "--json").stdout)
    assert whole["proposed"] == [{"role": "assistant", "content": "lost"}]
    assert (whole["failure"], whole["exception"]) == ("conflict", None)


def test_audit_of_an_unknown_attempt_is_one_line(run: Run, db: str) -> None:
    fill(db)
    assert error_line(run("audit", "trip", "cmp_nope")) == (
        "Error: session 'trip' has no compaction attempt 'cmp_nope'"
    )
    assert "give more of it" in error_line(run("audit", "trip", "cmp_"))


def test_message_shows_its_content_whole_and_its_state(run: Run, db: str) -> None:
    attempts = fill(db)
    result = run("message", "trip", "m7")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Message m7 of session trip" in out
    assert f"no: superseded by compaction {attempts['won']} at version" in out
    assert "added:       by MessageAppended, at version 8," in out  # the event storing it
    for line in LONG.split("\n"):
        assert f"    {line}" in out  # whole, never cut, markup literal
    assert json.loads(run("message", "trip", "m7", "--json").stdout) == {
        "id": "m7",
        "role": "assistant",
        "content": LONG,
    }


def test_message_shows_a_tool_call_with_its_arguments_and_its_result(run: Run, db: str) -> None:
    fill(db)
    call = run("message", "trip", "m4").stdout
    assert "tool call call_1: forecast" in call
    assert '"city": "Lisbon"' in call
    assert "call call_1: answered by m5 (superseded by cmp_" in call
    result = run("message", "trip", "m5").stdout
    assert "answers call call_1, made by m4 (superseded by cmp_" in result
    assert "17°C, showers." in result


def test_message_takes_a_unique_start_of_an_id(run: Run, db: str) -> None:
    with TranscriptStore.open(db) as store:
        store.start("s")
        [stored] = store.append("s", [{"role": "user", "content": "hello"}])
    out = run("message", "s", stored["id"][:12]).stdout
    assert f"Message {stored['id']} of session s" in out
    assert error_line(run("message", "s", "nope")) == "Error: session 's' has no message 'nope'"


def transcripts(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_process(*args, url=url)


@pytest.mark.slow
def test_on_postgres_audit_and_message_as_processes(postgres_url: str) -> None:
    attempts = fill(postgres_url)
    audit = transcripts(postgres_url, "audit", "trip")
    assert audit.returncode == 0, audit.stderr
    assert audit.stdout.count("no replacement") == 1
    whole = transcripts(postgres_url, "audit", "trip", attempts["raised"], "--json")
    assert json.loads(whole.stdout)["exception"]["type"] == "ConnectionError"
    shown = transcripts(postgres_url, "message", "trip", "m7")
    assert shown.returncode == 0, shown.stderr
    assert "[bold]markup[/bold]" in shown.stdout
