"""The `transcripts` command line: a thin client of the library.

This module holds the group, its global options and the one place where errors become
messages; the commands live in `read` (info, sessions, show, history, audit, events,
explain), `transfer` (import hermes, import jsonl, export), `search`, `rewind`, `forget`,
`migrate`, `projections` (status, rebuild, catch-up, verify, follow), `serve` (the web app)
and `timeline`.
"""

from __future__ import annotations

import errno
import sys
from importlib.metadata import version
from typing import Any

import click

from ... import TranscriptError
from ...config import DURABILITIES, default_path, new_cipher_key
from . import read, transfer
from .demo import demo
from .follow import follow
from .forget import forget
from .inert import inert
from .message import message
from .migrate import migrate_command
from .pipes import end_quietly
from .projections import projections
from .rewind import rewind
from .search import search
from .serve import serve
from .support import CONTEXT_SETTINGS, StoreOpener
from .timeline import timeline


class TranscriptsGroup(click.Group):
    """A group that turns user errors into one line on stderr and exit status 1.

    Subcommands run inside the root group's `invoke`, so this is the one place: errors the
    library raises on purpose (`TranscriptError`: unknown sessions or messages, bad URLs,
    a file that is not a store, malformed input, storage trouble of any kind, a stored
    event that cannot be read) and file errors (`OSError`) become `click.ClickException`s
    of one line. Anything else is a bug and keeps its traceback.
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # a closed pipe shows here, not at exit
            return result
        except TranscriptError as error:
            raise one_line(str(error)) from None
        except OSError as error:
            if error.errno == errno.EPIPE:  # stdout closed early (`| head`): exit 0
                raise end_quietly() from None
            raise one_line(os_error_text(error)) from None


def one_line(text: str) -> click.ClickException:
    """An error of one line, whatever line breaks its text holds (a file name, a driver's
    multi-line message), inert (its ids and stored text may hold control characters)."""
    lines = text.splitlines()
    if len(lines) > 1:
        text = " ".join(line.strip() for line in lines if line.strip())
    return click.ClickException(inert(text))


def os_error_text(error: OSError) -> str:
    if error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)


@click.group(cls=TranscriptsGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(version("transcript-store"), "--version", prog_name="transcripts")
@click.option(
    "--db",
    "url",
    envvar="TRANSCRIPTS_URL",
    metavar="URL",
    help="Store URL: memory://, sqlite:///file.db, postgresql://user@host/dbname (default: "
    "$TRANSCRIPTS_URL, else the file `transcripts path` prints).",
)
@click.option(
    "--durability",
    type=click.Choice(DURABILITIES),
    help="full: a write that returned is on disk (the default); normal: faster, the last "
    "writes can be lost on power loss, never half-applied (default: $TRANSCRIPTS_DURABILITY, "
    "else full).",
)
@click.pass_context
def cli(context: click.Context, url: str | None, durability: str | None) -> None:
    """An event-sourced store for LLM agent transcripts.

    Example: transcripts --db sqlite:///work.db sessions
    """
    context.obj = StoreOpener(url, durability)


@cli.command()
def path() -> None:
    """Print where the default store file is.

    Example: transcripts path
    """
    click.echo(default_path())


@cli.command("generate-key")
def generate_key() -> None:
    """Print a new random key to encrypt a store at rest with (AES-256).

    Keep it safe: a store made with it cannot be read without it. Use it as
    `export TRANSCRIPTS_CIPHER_KEY=$(transcripts generate-key)` before creating the store.

    Example: transcripts generate-key
    """
    click.echo(new_cipher_key())


for command in [
    demo,
    *read.COMMANDS,
    *transfer.COMMANDS,
    projections,
    migrate_command,
    search,
    message,
    rewind,
    forget,
    serve,
    timeline,
]:
    cli.add_command(command)
projections.add_command(follow)  # `projections follow`


def main() -> None:
    try:
        cli()
    except TranscriptError as error:  # raised outside a command (none should be)
        raise SystemExit(f"Error: {inert(str(error))}") from None
