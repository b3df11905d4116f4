"""Issue 29: `transcripts demo` leaves the user's store alone. It writes to a demo store of its
own beside the default one (never the default store, nor $TRANSCRIPTS_URL's), unless `--db`
names one; its failure says it is simulated; it ends with three commands to try on that
store, which work. Run as a real process with a scratch HOME and XDG data folder."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from support.cli import run_process
from transcripts import TranscriptStore

pytestmark = pytest.mark.slow


def transcripts(*args: str, home: Path, url: str | None = None) -> subprocess.CompletedProcess:
    return run_process(*args, cwd=home, home=home, url=url)


def files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


def test_the_demo_writes_its_own_store_beside_the_default_one_and_never_the_default(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    real = tmp_path / "real.db"
    demo = transcripts("demo", home=home, url=f"sqlite:///{real}")  # $TRANSCRIPTS_URL set
    assert demo.returncode == 0, demo.stderr
    default = Path(transcripts("path", home=home).stdout.strip())
    assert default == home / "data" / "transcripts" / "transcripts.db"
    assert not default.exists() and not real.exists()
    demo_store = default.with_name("demo.db")
    with TranscriptStore.open(f"sqlite:///{demo_store}") as store:
        [session] = store.sessions()
    assert session["source"] == "demo"
    assert not default.exists()


def test_the_demo_says_its_failure_is_simulated_and_ends_with_three_commands_that_work(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    demo = transcripts("demo", home=home)
    assert demo.returncode == 0, demo.stderr
    assert "database is locked" not in demo.stdout
    assert "Simulated failure" in demo.stdout
    lines = demo.stdout.splitlines()
    start = lines.index("Try next:")
    tries = [line.strip() for line in lines[start + 1 :]]
    assert len(tries) == 3
    demo_url = str(home / "data" / "transcripts" / "demo.db")  # a bare path: --db takes it
    for line in tries:
        program, db_option, url, *command = shlex.split(line)
        assert (program, db_option, url) == ("transcripts", "--db", demo_url)
        tried = transcripts("--db", url, *command, home=home)
        assert tried.returncode == 0, (line, tried.stderr)
        assert tried.stdout.strip()
    assert not (home / "data" / "transcripts" / "transcripts.db").exists()


def test_db_still_names_the_store_the_demo_writes_to(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    chosen = tmp_path / "chosen.db"
    demo = transcripts("--db", f"sqlite:///{chosen}", "demo", home=home)
    assert demo.returncode == 0, demo.stderr
    assert f"transcripts --db sqlite:///{chosen} history demo-" in demo.stdout
    assert files(home) == []  # neither the default store nor the demo store
    with TranscriptStore.open(f"sqlite:///{chosen}") as store:
        assert [session["source"] for session in store.sessions()] == ["demo"]


def test_a_demo_in_memory_says_its_store_is_gone_rather_than_suggesting_commands(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    demo = transcripts("--db", "memory://", "demo", home=home)
    assert demo.returncode == 0, demo.stderr
    assert "Try next:" not in demo.stdout
    assert demo.stdout.splitlines()[-1].startswith("The store was in memory: it is gone now.")
    assert files(home) == []
