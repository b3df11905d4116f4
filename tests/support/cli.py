"""The command line run in-process on a store (`run_cli`, and the JSONL `exported` of a
session) or as a real process (`run_process`, `process_environment`), the one line a failed
command prints, and outputs made comparable.

Ids the store makes up (compaction ids, summary message ids) and times are volatile:
`normalise` replaces them with placeholders of the same length, so table layouts compare
exactly.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from textwrap import dedent
from typing import Any

from click.testing import CliRunner, Result

Run = Callable[..., Result]  # the `run` fixture: run("show", "trip", url=None, input=None)
WIDTH = "120"  # columns of the tables the commands print

_VOLATILE = [
    (re.compile(r"\b(cmp|msg)_[0-9a-f]{32}\b"), lambda m: f"{m[1]}_" + "x" * 32),
    (re.compile(r"\b(cmp|msg)_[0-9a-f]{8}…"), lambda m: f"{m[1]}_" + "x" * 8 + "…"),
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?"), None),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d"), lambda m: "YYYY-MM-DD hh:mm"),
]


def run_cli(url: str, *args: str, input: str | None = None) -> Result:
    """The command line on the store at `url`: run_cli(url, "export", "trip"). Tables are
    120 wide, without colours; exceptions propagate (a traceback is a bug: the command line
    must turn every error into one line)."""
    from transcripts.adapters.cli import cli

    runner = CliRunner(
        env={"COLUMNS": WIDTH, "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1"}
    )
    return runner.invoke(
        cli, ["--db", url, *args], input=input, catch_exceptions=False, prog_name="transcripts"
    )


COMMAND = [sys.executable, "-m", "transcripts"]  # the command line, as a process
_TERMINAL_SWITCHES = ("COLUMNS", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE")


def process_environment(
    *, url: str | None = None, home: Path | None = None, columns: int | None = 120, **more: str
) -> dict[str, str]:
    """The environment of the command line as a process: this one's without any TRANSCRIPTS_
    variable (but $TRANSCRIPTS_URL when `url` is given) or colour switch; $COLUMNS set to
    `columns` (None: unset, as in a pipe); HOME in `home` with the XDG data folder
    (the default store's) in `home`/data when given; then `more`."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("TRANSCRIPTS_") and name not in _TERMINAL_SWITCHES
    }
    if url is not None:
        environment["TRANSCRIPTS_URL"] = url
    if columns is not None:
        environment["COLUMNS"] = str(columns)
    if home is not None:
        environment.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"))
    return {**environment, **more}


def run_process(
    *args: str, cwd: Path | None = None, timeout: float = 60, **environment: Any
) -> subprocess.CompletedProcess[str]:
    """`transcripts ARGS` as a real process writing into pipes, in the environment
    `process_environment(**environment)` makes: its status and output, as text."""
    return subprocess.run(
        [*COMMAND, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=process_environment(**environment),
        timeout=timeout,
    )


def exported(url: str, session_id: str, *, history: bool = False) -> list[dict[str, Any]]:
    """The messages `transcripts export SESSION` (JSONL) prints, `--history` with `history`."""
    result = run_cli(url, "export", session_id, *(["--history"] if history else []))
    assert result.exit_code == 0, (result.output, result.stderr)
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def table(text: str) -> str:
    """An expected output written indented in a test (`dedent`ed, without its first newline)."""
    return dedent(text).lstrip("\n")


def normalise(text: str) -> str:
    """Replace made-up ids and times with placeholders of the same length."""
    for pattern, replacement in _VOLATILE:
        if replacement is None:
            text = pattern.sub(lambda m: _time_placeholder(m[0]), text)
        else:
            text = pattern.sub(replacement, text)
    return text


def _time_placeholder(time: str) -> str:
    placeholder = "YYYY-MM-DD hh:mm:ss"
    return placeholder + "." * (len(time) - len(placeholder))


def error_line(result: Result) -> str:
    """The one line a failed command printed (and check that it printed nothing else)."""
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    return line
