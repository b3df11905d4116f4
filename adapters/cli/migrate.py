"""`transcripts migrate --from URL --to URL`: copy a whole store (see `adapters.migration`)."""

from __future__ import annotations

import os

import click

from ...config import CIPHER_KEY_VARIABLE
from ..migration import migrate
from .inert import echo
from .progress import progress_phases, quiet_option
from .support import CONTEXT_SETTINGS


@click.command("migrate", context_settings=CONTEXT_SETTINGS)
@click.option(
    "--from", "source", required=True, metavar="URL", help="The store to copy (only read)."
)
@click.option(
    "--to", "target", required=True, metavar="URL", help="The store to copy into (empty)."
)
@click.option(
    "--append",
    is_flag=True,
    help="Copy into a store that has events already, if no session is in both.",
)
@click.option(
    "--from-key-env",
    "source_key_variable",
    default=CIPHER_KEY_VARIABLE,
    show_default=True,
    metavar="NAME",
    help="The environment variable holding the source's cipher key (unset: a plain store).",
)
@click.option(
    "--to-key-env",
    "target_key_variable",
    default=CIPHER_KEY_VARIABLE,
    show_default=True,
    metavar="NAME",
    help="The environment variable holding the target's cipher key (unset: a plain store).",
)
@quiet_option
def migrate_command(
    source: str,
    target: str,
    append: bool,
    source_key_variable: str,
    target_key_variable: str,
    quiet: bool,
) -> None:
    """Copy a whole store to another one, e.g. SQLite to PostgreSQL or back.

    Every stored event is copied as it is, in log order (ids, versions and timestamps
    unchanged); then the copy is compared with the source, and the target's views are
    rebuilt and verified, each phase with its progress bar (on a terminal, unless
    --quiet). Exit status 1 if the check or the verification fails. A target
    with events is refused unless --append. `--db` is not used. To encrypt a plain store,
    or change its key, name the variables holding the keys: `NEW=$(transcripts
    generate-key) transcripts migrate --from … --to … --to-key-env NEW`.

    Example: transcripts migrate --from sqlite:///transcripts.db --to postgresql://localhost/agents
    """
    with progress_phases(quiet=quiet) as phases:
        phases.start("Opening the stores")
        migration = migrate(
            source,
            target,
            append=append,
            source_key=os.environ.get(source_key_variable, ""),
            target_key=os.environ.get(target_key_variable, ""),
            progress=phases.phase("Copying events"),
            check_progress=phases.phase("Checking the copy"),
            rebuild_progress=phases.phase("Rebuilding the views"),
            verify_progress=phases.phase("Verifying the views"),
        )
    click.echo(
        f"Copied {migration.events} events of {migration.sessions} sessions "
        f"from {migration.source} to {migration.target}."
    )
    for mismatch in migration.mismatches:
        echo(mismatch)
    report = migration.report
    assert report is not None
    if report.ok:
        click.echo(f"Rebuilt and verified the views of {report.sessions} sessions.")
    else:
        for problem in report.problems:
            echo(str(problem))
        click.echo(f"{len(report.problems)} problems in the target's views.")
    if not migration.ok:
        raise SystemExit(1)
