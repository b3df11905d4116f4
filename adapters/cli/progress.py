"""Progress of long operations: a rich bar on stderr, only on a terminal and without
`--quiet`, driven by the library's `progress(done, total)` callbacks. Stdout stays the
command's output; in a pipe or a log file nothing is drawn."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

Callback = Callable[[int, int], None]

quiet_option = click.option("-q", "--quiet", is_flag=True, help="Draw no progress bar.")


class Phases:
    """One bar per phase of an operation, each with its own label: `phase(label)` is the
    callback of that phase; its first call ends the phase before (its bar disappears), so a
    bar never restarts within a phase, nor sits full while the next one works. Nothing is
    drawn before the first phase starts."""

    def __init__(self, bar: Progress) -> None:
        self._bar = bar
        self._task: TaskID | None = None
        self._label: str | None = None

    @property
    def started(self) -> bool:
        return self._task is not None

    def phase(self, label: str) -> Callback:
        def advance(done: int, total: int) -> None:
            if self._label != label:
                self.start(label)
            assert self._task is not None
            self._bar.update(self._task, completed=done, total=total)

        return advance

    def start(self, label: str, total: int | None = None) -> None:
        """Begin the phase `label` now (its bar pulses until its first callback)."""
        if self._task is None:
            self._bar.start()
        else:
            self._bar.remove_task(self._task)
        self._task = self._bar.add_task(label, total=total)
        self._label = label
        self._bar.refresh()  # every phase is drawn, however short


@contextmanager
def progress_phases(*, quiet: bool = False) -> Iterator[Phases]:
    """Bars for the phases of an operation (see `Phases`), drawn on stderr if it is a
    terminal and not `quiet`; gone once the operation ends."""
    console = Console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    disable = quiet or not console.is_terminal
    bar = Progress(*columns, console=console, transient=True, disable=disable)
    phases = Phases(bar)
    try:
        yield phases
    finally:
        if phases.started:
            bar.stop()


@contextmanager
def progress_bar(description: str, *, quiet: bool = False) -> Iterator[Callback]:
    """One bar labelled `description` (see `progress_phases`); yields its callback."""
    with progress_phases(quiet=quiet) as phases:
        phases.start(description)
        yield phases.phase(description)
