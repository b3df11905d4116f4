"""The hostile-input child program: the library or the command line under resource limits
(tests/integration/test_hostile_input.py and tests/cli/test_hostile_cli.py).

    python limited.py LIMITS append URL   open the store, append 2 MB to session `kept`, and
                                          print what it raised as JSON (`{"error": null}`: nothing)
    python limited.py LIMITS cli ARGS…    the command line: `transcripts ARGS…`

LIMITS is a JSON object: `drop_privileges` (when run as root: become `nobody`, for whom file
modes count) and `file_size` (RLIMIT_FSIZE in bytes: writes past it fail with EFBIG, a disk
that fills up). Every module is imported first, while it still can be.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time

from transcripts import TranscriptStore
from transcripts.adapters.cli import main as cli


def limit(limits: dict) -> None:
    if limits.get("drop_privileges") and os.geteuid() == 0:
        os.setgid(65534)
        os.setuid(65534)  # nobody: root ignores file modes
    if "file_size" in limits:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size"], resource.RLIM_INFINITY))


def append(url: str) -> None:
    started = time.monotonic()
    try:
        with TranscriptStore.open(url, lock_timeout=30) as store:
            store.append("kept", [{"id": "new", "role": "tool", "content": "x" * 2_000_000}])
        print(json.dumps({"error": None}))
    except Exception as error:
        print(json.dumps({
            "error": [c.__name__ for c in type(error).__mro__],
            "text": str(error),
            "seconds": time.monotonic() - started,
        }))  # fmt: skip


if __name__ == "__main__":
    limits, command, *arguments = sys.argv[1:]
    TranscriptStore.open("memory://").close()  # imports every module while it still can
    limit(json.loads(limits))
    if command == "append":
        append(*arguments)
    elif command == "cli":
        sys.argv = ["transcripts", *arguments]
        cli()
    else:
        raise SystemExit(f"unknown command {command!r}")
