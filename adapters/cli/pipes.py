"""A reader that stops early (`transcripts events S | head -1`): the command ends quietly,
exit status 0, as `cat` and `grep` do under `set -o pipefail` too."""

from __future__ import annotations

import errno
import os
import sys

import click

from .inert import InertConsole


class PipeConsole(InertConsole):
    """The command line's console (`InertConsole`), leaving a closed pipe to
    `end_quietly` (rich's own handling exits 1)."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def end_quietly() -> click.exceptions.Exit:
    """Stdout was closed by its reader: point it at /dev/null (so that nothing flushed
    at exit fails again) and end with status 0; returns the exit to raise."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a file descriptor (a test runner's stdout)
        pass
    finally:
        os.close(devnull)
    return click.exceptions.Exit(0)
