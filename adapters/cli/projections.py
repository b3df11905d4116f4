"""`transcripts projections status | rebuild | catch-up | verify`."""

from __future__ import annotations

from dataclasses import asdict

import click

from ... import TranscriptStore
from .inert import echo
from .progress import progress_bar, quiet_option
from .render import status_table, to_json
from .support import CONTEXT_SETTINGS, console, json_option, with_store


@click.group(context_settings=CONTEXT_SETTINGS)
def projections() -> None:
    """Inspect, verify and rebuild the views projected from the event log.

    Example: transcripts projections verify
    """


@projections.command("status")
@json_option
@with_store
def projections_status(store: TranscriptStore, as_json: bool) -> None:
    """Per view: version, tracked log position against the head (lag), rows, quarantined.

    Example: transcripts projections status
    """
    statuses = store.projection_status()
    if as_json:
        click.echo(to_json([{**asdict(status), "lag": status.lag} for status in statuses]))
        return
    console().print(status_table(statuses))


@projections.command("rebuild")
@quiet_option
@with_store
def projections_rebuild(store: TranscriptStore, quiet: bool) -> None:
    """Replay the whole log into fresh views and swap them in atomically.

    Example: transcripts projections rebuild
    """
    with progress_bar("Rebuilding views", quiet=quiet) as progress:
        replayed = store.rebuild_projections(progress)
    click.echo(f"Rebuilt the views from {replayed} events.")


@projections.command("catch-up")
@quiet_option
@with_store
def projections_catch_up(store: TranscriptStore, quiet: bool) -> None:
    """Project the events the views have not seen yet (queries do this by themselves).

    Example: transcripts projections catch-up
    """
    with progress_bar("Catching up", quiet=quiet) as progress:
        projected = store.catch_up_projections(progress)
    click.echo(f"Projected {projected} events.")


@projections.command("verify")
@json_option
@quiet_option
@with_store
def projections_verify(store: TranscriptStore, as_json: bool, quiet: bool) -> None:
    """Diff every view against an independent fold of the log; exit 1 if they disagree.

    A progress bar counts the sessions verified (on a terminal, unless --quiet).

    Example: transcripts projections verify
    """
    with progress_bar("Verifying sessions", quiet=quiet) as progress:
        report = store.verify_projections(progress)
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
            echo(str(problem))
        click.echo(
            f"{len(report.problems)} problems; `transcripts projections rebuild` repairs the views."
        )
    if not report.ok:
        raise SystemExit(1)
