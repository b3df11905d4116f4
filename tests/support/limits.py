"""The parent side of support/programs/limited.py: the library or the command line in a child
process under resource limits, and a store file the child (as `nobody`) may not write."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .processes import program

NOBODY = 65534
# (file mode, directory mode) of a store the child may read and not write.
READ_ONLY = {"a read-only file": (0o400, 0o700), "a read-only directory": (0o600, 0o500)}


def limited(command: str, *args: str, env: dict[str, str] | None = None, **limits: Any):
    """Run limited.py `command` (`append` or `cli`) to its end under `limits`
    (`file_size`, `drop_privileges`); the completed process, output as text."""
    return subprocess.run(
        program("limited.py", json.dumps(limits), command, *args),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@contextmanager
def reachable_directory() -> Iterator[Path]:
    """A new directory the `nobody` user can reach (tmp_path's parents are private to root)."""
    directory = Path(tempfile.mkdtemp(prefix="transcripts-ro-"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        directory.chmod(0o700)
        shutil.rmtree(directory)


@contextmanager
def read_only(path: Path, file_mode: int, dir_mode: int) -> Iterator[None]:
    """The file `path` and its directory under these modes while the block runs, owned by
    `nobody` when run as root (the child drops to `nobody`, for whom the modes count)."""
    if os.geteuid() == 0:
        os.chown(path.parent, NOBODY, NOBODY)
        os.chown(path, NOBODY, NOBODY)
    path.chmod(file_mode)
    path.parent.chmod(dir_mode)
    try:
        yield
    finally:
        path.parent.chmod(0o700)
        path.chmod(0o600)
