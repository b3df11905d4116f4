"""Issue 29: every long operation shows its progress on a terminal (stderr a pseudo-terminal
here), and nothing in a pipe or with --quiet: `projections verify`, `import jsonl`, `import
hermes`, and `migrate` with one labelled bar per phase. Through the API: the callbacks
`verify_projections` and `migrate` call, phase by phase."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support.cli import COMMAND, process_environment
from support.hermes import make_hermes
from transcripts import TranscriptStore
from transcripts.adapters.migration import migrate

pytestmark = pytest.mark.slow

MIGRATE_PHASES = ["Copying events", "Checking the copy", "Rebuilding the views", "Verifying"]


def run(*args: str, terminal: bool, cwd: Path) -> tuple[int, str, str]:
    """The command line as a process, its stdout a pipe and its stderr a pseudo-terminal
    (with `terminal`) or a pipe: its status, stdout and stderr."""
    environment = process_environment(columns=None, TERM="xterm")
    command = [*COMMAND, *args]
    if not terminal:
        done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=cwd)
        return done.returncode, done.stdout, done.stderr
    main, other = os.openpty()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=other, env=environment, cwd=cwd
    )
    os.close(other)
    drawn = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the process ended: the terminal is gone
            break
        if not chunk:
            break
        drawn += chunk
    os.close(main)
    assert process.stdout is not None
    stdout = process.stdout.read().decode()
    process.wait(timeout=60)
    return process.returncode, stdout, drawn.decode(errors="replace")


def some_sessions(url: str) -> None:
    with TranscriptStore.open(url) as store:
        for number in range(3):
            store.start(f"s{number}")
            store.append(f"s{number}", [{"role": "user", "content": "hi"}])


def test_projections_verify_shows_progress_on_a_terminal_only_and_not_with_quiet(
    sqlite_url: str, tmp_path: Path
) -> None:
    some_sessions(sqlite_url)
    status, stdout, drawn = run(
        "--db", sqlite_url, "projections", "verify", terminal=True, cwd=tmp_path
    )
    assert (status, stdout) == (0, "OK: the views of 3 sessions match the log.\n")
    assert "Verifying sessions" in drawn and "3/3" in drawn
    quiet = run("--db", sqlite_url, "projections", "verify", "-q", terminal=True, cwd=tmp_path)
    assert quiet[0] == 0 and quiet[2] == ""
    piped = run("--db", sqlite_url, "projections", "verify", terminal=False, cwd=tmp_path)
    assert piped == (0, stdout, "")


def test_import_jsonl_shows_the_files_read_then_the_messages_stored(tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text("".join(f'{{"role": "user", "content": "m{i}"}}\n' for i in range(50)))
    url = f"sqlite:///{tmp_path / 'store.db'}"
    status, stdout, drawn = run(
        "--db", url, "import", "jsonl", str(chat), terminal=True, cwd=tmp_path
    )
    assert status == 0, drawn
    assert stdout.endswith("Imported 50 new messages into 1 session.\n")
    assert "Reading files" in drawn and "Storing messages" in drawn
    again = run("--db", url, "import", "jsonl", str(chat), "--quiet", terminal=True, cwd=tmp_path)
    assert again[0] == 0 and again[2] == ""


def test_import_hermes_shows_its_progress_and_nothing_with_quiet(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    make_hermes(state)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    status, _, drawn = run(
        "--db", url, "import", "hermes", str(state), "--dry-run", terminal=True, cwd=tmp_path
    )
    assert status == 0 and "Reading state.db" in drawn
    quiet = run("--db", url, "import", "hermes", str(state), "-q", terminal=True, cwd=tmp_path)
    assert quiet[0] == 0 and quiet[2] == ""


def test_migrate_draws_one_labelled_bar_per_phase_in_order(tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    some_sessions(source)
    target = f"sqlite:///{tmp_path / 'target.db'}"
    status, stdout, drawn = run(
        "migrate", "--from", source, "--to", target, terminal=True, cwd=tmp_path
    )
    assert status == 0, stdout
    places = [drawn.find(label) for label in MIGRATE_PHASES]
    assert -1 not in places and places == sorted(places), places
    quiet_target = f"sqlite:///{tmp_path / 'quiet.db'}"
    quiet = run(
        "migrate", "--from", source, "--to", quiet_target, "-q", terminal=True, cwd=tmp_path
    )
    assert quiet[0] == 0 and quiet[2] == ""


def test_verify_and_migrate_report_the_progress_of_each_phase_to_their_callbacks(
    durable_url: str, tmp_path: Path
) -> None:
    some_sessions(durable_url)
    calls: dict[str, list[tuple[int, int]]] = {}

    def phase(name: str):  # noqa: ANN202
        return lambda done, total: calls.setdefault(name, []).append((done, total))

    with TranscriptStore.open(durable_url) as store:
        assert store.verify_projections(phase("verify")).ok
    assert calls.pop("verify") == [(0, 3), (1, 3), (2, 3), (3, 3)]
    migration = migrate(
        durable_url,
        f"sqlite:///{tmp_path / 'copy.db'}",
        progress=phase("copy"),
        check_progress=phase("check"),
        rebuild_progress=phase("rebuild"),
        verify_progress=phase("verify"),
    )
    assert migration.ok
    assert list(calls) == ["copy", "check", "rebuild", "verify"]
    assert calls["copy"][-1] == (6, 6) and calls["check"][0] == (0, 6)
    assert calls["verify"][-1] == (3, 3)
