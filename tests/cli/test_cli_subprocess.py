"""The installed `transcripts` console script, run as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def transcripts_command() -> list[str]:
    """The console script next to this interpreter, else `python -m transcripts`."""
    script = Path(sys.executable).with_name("transcripts")
    return [str(script)] if script.exists() else [sys.executable, "-m", "transcripts"]


def transcripts(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "COLUMNS": "100"}
    environment.pop("TRANSCRIPTS_URL", None)
    return subprocess.run(
        [*transcripts_command(), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=60,
    )


def test_the_console_script_imports_shows_exports_and_reports_errors_in_one_line(
    tmp_path: Path,
) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        '{"id": "q", "role": "user", "content": "Is this on disk?"}\n'
        '{"id": "a", "role": "assistant", "content": "Yes."}\n'
    )
    db = ["--db", "sqlite:///store.db"]  # relative to the working directory

    imported = transcripts(*db, "import", "jsonl", "chat.jsonl", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.splitlines()[-1] == "Imported 2 new messages into 1 session."
    assert (tmp_path / "store.db").exists()

    shown = transcripts(*db, "show", "chat", "--json", cwd=tmp_path)
    assert [message["id"] for message in json.loads(shown.stdout)] == ["q", "a"]

    exported = transcripts(*db, "export", "chat", cwd=tmp_path)
    assert exported.stdout == (
        '{"id":"q","role":"user","content":"Is this on disk?"}\n'
        '{"id":"a","role":"assistant","content":"Yes."}\n'
    )

    missing = transcripts(*db, "history", "nope", cwd=tmp_path)
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == "Error: session 'nope' was never started\n"

    version = transcripts("--version", cwd=tmp_path)
    assert version.stdout.startswith("transcripts, version ")
