"""The `transcripts` command line: a thin client of the library."""

from __future__ import annotations

from dataclasses import asdict
from importlib.metadata import version

import click
from rich.console import Console

from ..application import TranscriptStore
from ..config import default_path
from ..domain.errors import TranscriptError
from .demo import run_demo
from .render import progress_bar, status_table, to_json

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


@cli.group()
def projections() -> None:
    """Inspect, verify and rebuild the views projected from the event log."""


@projections.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")
@click.pass_obj
def projections_status(opener: StoreOpener, as_json: bool) -> None:
    """Per view: version, tracked log position against the head (lag), rows, quarantined.

    Example: transcripts projections status
    """
    with _opened(opener) as store:
        statuses = store.projection_status()
    if as_json:
        click.echo(to_json([{**asdict(status), "lag": status.lag} for status in statuses]))
        return
    Console().print(status_table(statuses))


@projections.command("rebuild")
@click.pass_obj
def projections_rebuild(opener: StoreOpener) -> None:
    """Replay the whole log into fresh views and swap them in atomically.

    Example: transcripts projections rebuild
    """
    with _opened(opener) as store, progress_bar("Rebuilding views") as progress:
        replayed = store.rebuild_projections(progress)
    click.echo(f"Rebuilt the views from {replayed} events.")


@projections.command("catch-up")
@click.pass_obj
def projections_catch_up(opener: StoreOpener) -> None:
    """Project the events the views have not seen yet (queries do this by themselves).

    Example: transcripts projections catch-up
    """
    with _opened(opener) as store, progress_bar("Catching up") as progress:
        projected = store.catch_up_projections(progress)
    click.echo(f"Projected {projected} events.")


@projections.command("verify")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")
@click.pass_obj
def projections_verify(opener: StoreOpener, as_json: bool) -> None:
    """Diff every view against an independent fold of the log; exit 1 if they disagree.

    Example: transcripts projections verify
    """
    with _opened(opener) as store:
        report = store.verify_projections()
    if as_json:
        click.echo(
            to_json(
                {
                    "ok": report.ok,
                    "sessions": report.sessions,
                    "problems": [asdict(problem) for problem in report.problems],
                }
            )
        )
    elif report.ok:
        click.echo(f"OK: the views of {report.sessions} sessions match the log.")
    else:
        for problem in report.problems:
            click.echo(str(problem))
        click.echo(
            f"{len(report.problems)} problems; `transcripts projections rebuild` repairs the views."
        )
    if not report.ok:
        raise SystemExit(1)


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
