"""The `transcripts` command line: a thin client of the library."""

from __future__ import annotations

from importlib.metadata import version

import click
from rich.console import Console

from ..application import TranscriptStore
from ..config import default_path
from ..domain.errors import TranscriptError
from .demo import run_demo

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


class StoreOpener:
    """Opens the store named by `--db` (else $TRANSCRIPTS_URL, else the default file)."""

    def __init__(self, url: str | None) -> None:
        self.url = url

    def open(self) -> TranscriptStore:
        return TranscriptStore.open(self.url)


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(version("transcript-store"), "--version", prog_name="transcripts")
@click.option(
    "--db",
    "url",
    envvar="TRANSCRIPTS_URL",
    metavar="URL",
    help="Store URL: memory://, sqlite:///file.db (default: $TRANSCRIPTS_URL, else the file "
    "`transcripts path` prints).",
)
@click.pass_context
def cli(context: click.Context, url: str | None) -> None:
    """An event-sourced store for LLM agent transcripts.

    Example: transcripts demo
    """
    context.obj = StoreOpener(url)


@cli.command()
@click.pass_obj
def demo(opener: StoreOpener) -> None:
    """Run a short agent session with a failed and a committed compaction, then print it.

    Example: transcripts --db sqlite:///demo.db demo
    """
    with _opened(opener) as store:
        run_demo(store, Console())


@cli.command()
def path() -> None:
    """Print where the default store file is."""
    click.echo(default_path())


def _opened(opener: StoreOpener) -> TranscriptStore:
    try:
        return opener.open()
    except TranscriptError as error:
        raise click.ClickException(str(error)) from None


def main() -> None:
    try:
        cli()
    except TranscriptError as error:
        raise SystemExit(f"Error: {error}") from None
