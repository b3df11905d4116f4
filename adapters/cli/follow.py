"""`transcripts projections follow`: project new events as they are stored, until stopped."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import click

from ... import TranscriptStore
from .support import with_store

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@click.command("follow")
@click.option("--verbose", "-v", is_flag=True, help="Print a line for every batch projected.")
@with_store
def follow(store: TranscriptStore, verbose: bool) -> None:
    """Keep the views up to date as events are stored, until Ctrl-C or SIGTERM.

    On PostgreSQL it follows the log with LISTEN/NOTIFY and projects what has arrived in
    batches; on SQLite it polls. Each event is projected exactly once, however many
    followers and readers run. It stops between batches, so nothing is left half-done.

    Example: transcripts --db postgresql://localhost/agents projections follow
    """
    stop = threading.Event()
    total = 0

    def projected(count: int) -> None:
        nonlocal total
        total += count
        if verbose:
            click.echo(f"Projected {count} events ({total} in all).")

    with stopping_on_signals(stop):
        click.echo("Following the log (Ctrl-C stops).", err=True)
        store.follow_projections(stop, on_batch=projected)
    click.echo(f"Stopped after projecting {total} events.")


@contextmanager
def stopping_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set `stop` (instead of interrupting) while the block runs."""

    def handler(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    if threading.current_thread() is not threading.main_thread():
        yield  # signals are only delivered to the main thread
        return
    previous = {number: signal.signal(number, handler) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)
