"""Stored text reaches the terminal inert (issue 36): escape sequences and control characters
in a message or a session id (a fetched web page in a tool result) are shown escaped by every
command that prints them, never sent; rich markup in them stays literal; `--json` stays exact.
Run as real processes, as an operator would, on a terminal (colours forced) and in a pipe."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support.cli import COMMAND, process_environment
from transcripts import TranscriptStore

pytestmark = pytest.mark.slow

OSC_52 = "\x1b]52;c;ZXZpbA==\x07"  # writes the clipboard
SGR_8 = "\x1b[8m"  # hides what follows
CSI_2J = "\x1b[2J"  # clears the screen
C1_CSI = "\u009b2J"  # the same, with the one-character CSI
HOSTILE = f"[bold]loud[/bold] page {OSC_52} {SGR_8}hidden {CSI_2J}{C1_CSI} nul\x00 bell\x07"
# Neither these nor the bare characters may reach the terminal...
RAW = [OSC_52, SGR_8, CSI_2J, "\u009b", "\x00", "\x07", "\x1b]"]
# ...which are shown as these instead.
ESCAPED = ["\\x1b]52;c;ZXZpbA==\\x07", "\\x1b[8m", "\\x1b[2J", "\\x9b2J", "\\x00", "[bold]loud"]
SESSION = f"evil{SGR_8}[red]id"
SESSION_SHOWN = "evil\\x1b[8m[red]id"


def transcripts(url: str, *args: str, terminal: bool) -> subprocess.CompletedProcess[bytes]:
    """The command line as a process; with `terminal`, rich writes as it would to one
    (colours and styles: escape sequences of its own, never the stored ones)."""
    switches = {"FORCE_COLOR": "1", "TTY_COMPATIBLE": "1"} if terminal else {}
    return subprocess.run(
        [*COMMAND, *args],
        capture_output=True,
        env=process_environment(url=url, columns=200, **switches),
        timeout=60,
    )


@pytest.fixture(scope="module")
def hostile_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A session whose id and messages hold escape sequences, control characters and rich
    markup: in content, in a tool result, in a failed compaction's error."""
    url = f"sqlite:///{tmp_path_factory.mktemp('inert') / 'store.db'}"
    with TranscriptStore.open(url) as store:
        store.start(SESSION, source=f"web{CSI_2J}", model="m[bold]x")
        store.append(
            SESSION,
            [
                {"id": "m1", "role": "user", "content": f"fetch {HOSTILE}"},
                {
                    "id": "m2",
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": f"get{OSC_52}", "arguments": "{}"},
                        }
                    ],
                },
                {"id": "m3", "role": "tool", "tool_call_id": "c1", "content": HOSTILE},
            ],
        )
        attempt = store.begin_compaction(SESSION)
        store.fail_compaction(attempt, f"summarizer said {HOSTILE}", reason=f"why {SGR_8}")
    return url


COMMANDS = {
    "sessions": ["sessions"],
    "show": ["show", SESSION],
    "history": ["history", SESSION],
    "events": ["events", SESSION],
    "search": ["search", "page"],
    "explain": ["explain", SESSION, "m3"],
    "message": ["message", SESSION, "m3"],
    "message with a tool call": ["message", SESSION, "m2"],
    "audit": ["audit", SESSION],
    "audit of every session": ["audit"],
}


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_stored_escape_sequences_are_shown_escaped_and_never_sent(
    hostile_url: str, command: str, terminal: bool
) -> None:
    result = transcripts(hostile_url, *COMMANDS[command], terminal=terminal)
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    for raw in RAW:
        assert raw not in out and raw not in result.stderr.decode()
    if not terminal:  # in a pipe rich writes no escape sequence at all
        assert "\x1b" not in out
    flat = "".join(out.split())  # cells may wrap anywhere
    if command != "sessions":
        assert "".join(ESCAPED[1].split()) in flat
    if command in ("show", "history", "explain", "search", "message"):
        assert any("".join(text.split()) in flat for text in ESCAPED)
    if command in ("show", "history", "events", "sessions"):
        assert SESSION_SHOWN in flat or command == "show" and "\\x1b[8m" in flat


def test_a_session_id_in_an_error_line_is_shown_escaped(hostile_url: str) -> None:
    result = transcripts(hostile_url, "show", f"no{OSC_52}such\x07", terminal=True)
    assert (result.returncode, result.stdout) == (1, b"")
    err = result.stderr.decode()
    assert err.splitlines() == [
        "Error: session 'no\\x1b]52;c;ZXZpbA==\\x07such\\x07' was never started"
    ]


def test_a_whole_attempt_shows_its_stored_error_escaped(hostile_url: str) -> None:
    with TranscriptStore.open(hostile_url) as store:
        [attempt] = store.compactions(SESSION)
    result = transcripts(hostile_url, "audit", SESSION, attempt["id"], terminal=True)
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    assert not any(raw in out for raw in RAW)
    assert "summarizer said [bold]loud[/bold] page \\x1b]52;c;ZXZpbA==\\x07" in out


def test_json_output_stays_exact(hostile_url: str) -> None:
    result = transcripts(hostile_url, "show", SESSION, "--json", terminal=True)
    assert result.returncode == 0, result.stderr
    assert b"\x1b" not in result.stdout  # JSON escapes control characters itself
    messages = json.loads(result.stdout)
    assert messages[2]["content"] == HOSTILE
    assert messages[1]["tool_calls"][0]["function"]["name"] == f"get{OSC_52}"


def test_markup_in_content_stays_literal_and_unstyled(hostile_url: str) -> None:
    result = transcripts(hostile_url, "show", SESSION, terminal=True)
    out = result.stdout.decode()
    assert "[bold]loud[/bold]" in out
    assert "\x1b[1mloud" not in out  # not made bold


def test_a_file_name_in_an_error_line_is_shown_escaped(tmp_path: Path) -> None:
    path = tmp_path / f"page{CSI_2J}{SGR_8}.jsonl"
    path.write_text("not json\n")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    result = transcripts(url, "import", "jsonl", str(path), terminal=True)
    assert (result.returncode, result.stdout) == (1, b"")
    [line] = result.stderr.decode().splitlines()
    assert line.startswith(f"Error: {tmp_path}/page\\x1b[2J\\x1b[8m.jsonl line 1: not valid JSON")


def test_the_report_of_forgetting_a_hostile_session_is_shown_escaped(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with TranscriptStore.open(url) as store:
        store.start(SESSION, source="test")
    result = transcripts(url, "forget", SESSION, "--yes", terminal=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().startswith(f"Erased session {SESSION_SHOWN} at ")
