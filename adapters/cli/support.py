"""What every command of the command line shares: the store named by `--db`, `--json`, consoles."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import click

from ... import SessionNotFoundError, StoreNotFoundError, TranscriptStore
from .pipes import PipeConsole
from .suggest import with_suggestions

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")


CREATING = (
    "`transcripts import …` or `transcripts demo` create one, "
    "`transcripts migrate --to URL` copies one"
)


class StoreOpener:
    """Opens the store named by `--db` (else $TRANSCRIPTS_URL, else the default file; a bare
    file path is a SQLite file), with `--durability` (else $TRANSCRIPTS_DURABILITY).

    Only the commands marked `creating_store` create a missing store; the others say there
    is none, and write nothing anywhere."""

    def __init__(self, url: str | None, durability: str | None = None) -> None:
        self.url = url
        self.durability = durability

    def open(self, *, create: bool = False) -> TranscriptStore:
        try:
            return TranscriptStore.open(self.url, durability=self.durability, create=create)
        except StoreNotFoundError as error:
            raise StoreNotFoundError(
                error.url, f"{error.reason}; nothing was created ({CREATING})"
            ) from None


def with_store(command: F) -> F:
    """Open the existing store before the command runs (passed as its first argument), close
    it after; a missing store is an error (`StoreOpener`)."""
    return _opening(command, create=False)


def creating_store(command: F) -> F:
    """`with_store` for the commands that may create the store: demo, import."""
    return _opening(command, create=True)


def _opening(command: F, *, create: bool) -> F:
    @click.pass_obj
    @functools.wraps(command)
    def run(opener: StoreOpener, *args: Any, **kwargs: Any) -> Any:
        with opener.open(create=create) as store:
            try:
                return command(store, *args, **kwargs)
            except SessionNotFoundError as error:
                raise with_suggestions(store, error) from None

    return run  # type: ignore[return-value]


def console() -> PipeConsole:
    """A console on the current stdout (click's test runner swaps it) that prints stored
    text inert (`inert`): never markup, never control characters."""
    return PipeConsole(highlight=False)


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
