"""Fixtures of the multi-process tests: child processes, killed at teardown if still running."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.processes import Child, Spawn


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """Start a child: spawn("name", program("workers.py", "append", url, …)), with `Child`'s
    keyword arguments (`decode=json.loads` for a program of JSON lines). Any still running at
    teardown are killed (by handle)."""
    started: list[Child] = []

    def start(name: str, command: list[str], **options: Any) -> Child:
        child = Child(tmp_path, name, command, **options)
        started.append(child)
        return child

    yield start
    for child in started:
        child.stop()
