"""`transcripts rewind SESSION`: take the tail of a session's active context out of it."""

from __future__ import annotations

import click

from ... import TranscriptStore
from .inert import echo
from .render import to_json
from .render_read import context_table, plural
from .support import console, json_option, with_store


@click.command()
@click.argument("session_id", metavar="SESSION")
@click.option(
    "--count",
    type=click.IntRange(min=1),
    metavar="N",
    help="Rewind the last N active messages (all of them, if there are fewer).",
)
@click.option("--to", "to", metavar="MESSAGE_ID", help="Rewind every active message after it.")
@click.option("--reason", default="", help="Why: kept in the Rewound event.")
@json_option
@with_store
def rewind(
    store: TranscriptStore,
    session_id: str,
    count: int | None,
    to: str | None,
    reason: str,
    as_json: bool,
) -> None:
    """Take the last N active messages, or every one after MESSAGE_ID, out of the context.

    One Rewound event, printed as the messages it took out. They stay in the history, marked
    rewound (`history`, `explain`); appending one again with the library restores it.

    Example: transcripts rewind 20260830_141200_d4e5f6 --count 1 --reason "wrong tool call"
    """
    if (count is None) == (to is None):
        raise click.UsageError("give exactly one of --count and --to")
    rewound = store.rewind(session_id, count=count, to=to, reason=reason)
    if as_json:
        click.echo(to_json(rewound))
    elif not rewound:
        echo(f"Nothing to rewind in {session_id}.")
    else:
        title = f"Rewound from {session_id} ({plural(len(rewound), 'message')})"
        console().print(context_table(rewound, title))
