"""Fixtures of the multi-process tests: child processes that are killed at teardown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.processes import Spawn, Worker, worker_command


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """Start workers.py children: spawn("name", "append", url, ...). Any still running at
    teardown are killed (by handle)."""
    started: list[Worker] = []

    def start(name: str, *args: str) -> Worker:
        worker = Worker(tmp_path, name, worker_command(*args))
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
