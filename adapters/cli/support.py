"""What every command of the command line shares: the store named by `--db`, `--json`, consoles."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import click

from ... import TranscriptStore
from .inert import InertConsole

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")


class StoreOpener:
    """Opens the store named by `--db` (else $TRANSCRIPTS_URL, else the default file), with
    `--durability` (else $TRANSCRIPTS_DURABILITY)."""

    def __init__(self, url: str | None, durability: str | None = None) -> None:
        self.url = url
        self.durability = durability

    def open(self) -> TranscriptStore:
        return TranscriptStore.open(self.url, durability=self.durability)


def with_store(command: F) -> F:
    """Open the store before the command runs (passed as its first argument), close it after."""

    @click.pass_obj
    @functools.wraps(command)
    def run(opener: StoreOpener, *args: Any, **kwargs: Any) -> Any:
        with opener.open() as store:
            return command(store, *args, **kwargs)

    return run  # type: ignore[return-value]


def console() -> InertConsole:
    """A console on the current stdout (click's test runner swaps it) that prints stored
    text inert (`inert`): never markup, never control characters."""
    return InertConsole(highlight=False)


def parse_since(
    _context: click.Context, _param: click.Parameter, value: str | None
) -> datetime | None:
    """`--since`: a date or an ISO 8601 datetime; UTC unless it carries an offset."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a date (2026-03-01) or an ISO datetime (2026-03-01T09:30:00+02:00)"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
