"""Child processes for the multi-process tests: start workers.py, read its status lines,
release barriers, collect its JSON result.

Parent and children synchronise over pipes (a child prints a status line and blocks on stdin
until the parent writes `go`), so the races are set up by barriers, not sleeps.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

WORKERS = Path(__file__).parent / "programs" / "workers.py"
STARTUP_TIMEOUT = 30.0  # a fresh interpreter importing the package, on a busy 2-core machine
RUN_TIMEOUT = 90.0


class Worker:
    """One child process; its stdout is read line by line in a thread."""

    def __init__(self, directory: Path, name: str, command: list[str]) -> None:
        self.name = name
        self.stderr_path = directory / f"{name}.stderr"
        with self.stderr_path.open("w") as stderr:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)  # end of output

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def expect(self, prefix: str, timeout: float = STARTUP_TIMEOUT) -> str:
        """Wait for the next status line, which must start with `prefix`; return the rest."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"{self.name}: no {prefix!r} line within {timeout} s\n{self.stderr()}")
        if line is None or not line.startswith(prefix):
            self.process.wait(timeout=RUN_TIMEOUT)
            pytest.fail(
                f"{self.name}: expected {prefix!r}, got {line!r} "
                f"(exit code {self.process.returncode})\n{self.stderr()}"
            )
        return line[len(prefix) :].strip()

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def result(self, timeout: float = RUN_TIMEOUT) -> dict:
        """Wait for the worker to exit cleanly; return its JSON result (its last line)."""
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{self.name}: still running after {timeout} s\n{self.stderr()}")
        self.reader.join(timeout=RUN_TIMEOUT)
        lines = []
        while (line := self.lines.get_nowait()) is not None:
            lines.append(line)
        assert code == 0, f"{self.name} failed with exit code {code}:\n{self.stderr()}"
        assert "Traceback" not in self.stderr(), f"{self.name}:\n{self.stderr()}"
        assert lines, f"{self.name} printed no result\n{self.stderr()}"
        return json.loads(lines[-1])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=RUN_TIMEOUT)
        if self.process.stdin is not None:
            self.process.stdin.close()


Spawn = Callable[..., Worker]


def worker_command(*args: str) -> list[str]:
    """The command running a workers.py program: worker_command("append", url, ...)."""
    return [sys.executable, str(WORKERS), *args]


def release_together(workers: list[Worker], status: str) -> list[str]:
    """A barrier: wait until every worker reported `status`, then let them all go."""
    reports = [worker.expect(status) for worker in workers]
    for worker in workers:
        worker.go()
    return reports


def without_id(message: dict) -> dict:
    return {key: value for key, value in message.items() if key != "id"}
