"""The line protocol every child program speaks with the test that started it (see
support/processes.py): one line at a time on stdout, flushed at once; `go` on stdin to pass
a barrier.

The programs of this folder run as scripts, so they import this module as `parent`.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def say(line: str | dict[str, Any]) -> None:
    """Print one line for the parent (a dict as one JSON object) and flush it."""
    sys.stdout.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    sys.stdout.flush()


def wait_for_go() -> None:
    """Block until the parent writes `go`."""
    line = sys.stdin.readline()
    if line.strip() != "go":
        raise SystemExit(f"expected 'go' from the parent, got {line!r}")
