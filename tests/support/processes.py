"""Child processes driven by a test: start a program, read its lines, release barriers, kill it
or collect its JSON result.

Parent and child talk over pipes: the child prints status lines (`ready`, `begun …`, or one
JSON object a line) and, where the test needs a barrier, blocks reading its stdin until the
parent writes `go`. So the races are set up by barriers, not sleeps. The child programs live
in support/programs/ and run as scripts with this interpreter (`program(...)`).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROGRAMS = Path(__file__).with_name("programs")
STARTUP_TIMEOUT = 90.0  # a fresh interpreter importing the package and a framework (the Agents
# SDK alone takes seconds), on a 2-core machine busy with other tests: 30 s was seen to run out
RUN_TIMEOUT = 90.0


def program(script: str, *args: str) -> list[str]:
    """The command running a program of support/programs/: program("workers.py", "append", …)."""
    return [sys.executable, str(PROGRAMS / script), *args]


class Child:
    """One child process: its stdout read line by line in a thread (each line decoded with
    `decode`: text as is, or `json.loads`), its stderr kept in a file of `directory`.

    Every line read is kept in `seen`. A child that says nothing within `timeout`, or ends
    while a line is awaited, fails the test with what it wrote on stderr.
    """

    def __init__(
        self,
        directory: Path,
        name: str,
        command: list[str],
        *,
        decode: Callable[[str], Any] = str,
        timeout: float = STARTUP_TIMEOUT,
    ) -> None:
        self.name = name
        self.timeout = timeout
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
        self.lines: queue.Queue[Any] = queue.Queue()
        self.seen: list[Any] = []
        self.decode = decode
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(self.decode(line.rstrip("\n")))
        self.lines.put(None)  # end of output

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    # -- reading --------------------------------------------------------------------------

    def line(self, timeout: float | None = None) -> Any:
        """The next line; fail if none comes within the timeout or the child ends first."""
        timeout = self.timeout if timeout is None else timeout
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"{self.name}: no line within {timeout} s (it said {self.seen[-5:]})\n"
                + self.stderr()
            ) from None
        if line is None:
            self.lines.put(None)  # still the end for the next reader
            self.process.wait(timeout=RUN_TIMEOUT)
            raise AssertionError(
                f"{self.name} ended (exit {self.process.returncode}) after {self.seen[-5:]}:\n"
                + self.stderr()
            )
        self.seen.append(line)
        return line

    def expect(self, prefix: str, timeout: float | None = None) -> str:
        """Wait for the next status line, which must start with `prefix`; return the rest."""
        line = self.line(timeout)
        if not isinstance(line, str) or not line.startswith(prefix):
            raise AssertionError(
                f"{self.name}: expected {prefix!r}, got {line!r} "
                f"(exit code {self.process.poll()})\n{self.stderr()}"
            )
        return line[len(prefix) :].strip()

    def wait_for(self, wanted: Callable[[Any], bool]) -> Any:
        """Read lines until one is `wanted`; return it."""
        while not wanted(line := self.line()):
            pass
        return line

    # -- writing --------------------------------------------------------------------------

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def go(self) -> None:
        """Release a child blocked at a barrier."""
        self.send("go")

    # -- the end --------------------------------------------------------------------------

    def result(self, timeout: float = RUN_TIMEOUT) -> Any:
        """Wait for the child to exit cleanly; return its JSON result (its last line)."""
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"{self.name}: still running after {timeout} s\n{self.stderr()}"
            ) from None
        self.reader.join(timeout=RUN_TIMEOUT)
        lines = []
        while (line := self.lines.get_nowait()) is not None:
            lines.append(line)
        assert code == 0, f"{self.name} failed with exit code {code}:\n{self.stderr()}"
        assert "Traceback" not in self.stderr(), f"{self.name}:\n{self.stderr()}"
        assert lines, f"{self.name} printed no result\n{self.stderr()}"
        return json.loads(lines[-1]) if isinstance(lines[-1], str) else lines[-1]

    def kill(self) -> list[Any]:
        """SIGKILL the child, wait for it, and return every line it printed."""
        self.process.kill()
        assert self.process.wait(timeout=RUN_TIMEOUT) == -signal.SIGKILL, self.stderr()
        while True:
            try:
                line = self.lines.get(timeout=10)
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
        self._close_stdin()
        assert "Traceback" not in self.stderr(), f"{self.name}:\n{self.stderr()}"
        return self.seen

    def stop(self) -> None:
        """Kill the child if it still runs (at teardown)."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=RUN_TIMEOUT)
        self._close_stdin()

    def _close_stdin(self) -> None:
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass


Spawn = Callable[..., Child]


def release_together(children: list[Child], status: str) -> list[str]:
    """A barrier: wait until every child reported `status`, then let them all go."""
    reports = [child.expect(status) for child in children]
    for child in children:
        child.go()
    return reports
