"""`transcripts demo`: a short agent session that survives a failed compaction and commits
another, in a demo store of its own (`demo.db` beside the default store) unless `--db`
names one: the user's store is left alone."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime

import click
from click.core import ParameterSource
from rich.console import Console
from rich.text import Text

from ... import TranscriptStore
from ...config import default_path
from ..exporters.streamed_timeline import streamed_timeline
from .render_read import audit_table, context_table, timeline_table
from .support import StoreOpener, console

CONVERSATION = [
    {"role": "system", "content": "You are a careful travel assistant."},
    {"role": "user", "content": "Plan three days in Lisbon for me in March."},
    {"role": "assistant", "content": "Day 1 Alfama and the castle, day 2 Belém, day 3 Sintra."},
    {"role": "user", "content": "What will the weather be like?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_weather",
                "type": "function",
                "function": {"name": "forecast", "arguments": '{"city": "Lisbon"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_weather", "content": "March: 17°C, some showers."},
    {"role": "assistant", "content": "Mild, around 17°C, with some showers: pack a light jacket."},
    {"role": "user", "content": "Great, and where should I eat pastéis de nata?"},
]


class SimulatedOutage(Exception):
    """The failure the demo's summarizer raises on purpose."""


SIMULATED = "simulated for the demo: the summarizer's model did not answer"


@click.command()
@click.pass_context
def demo(context: click.Context) -> None:
    """Run a short agent session with a failed and a committed compaction, print it, and
    what to try next.

    It writes to a demo store of its own, demo.db beside the default store (`transcripts
    path`), never to the default store nor to $TRANSCRIPTS_URL's; `--db` names another.

    Example: transcripts demo
    """
    opener: StoreOpener = context.obj
    url = demo_url(context, opener)
    with StoreOpener(url, opener.durability).open(create=True) as store:
        session_id = run_demo(store, console())
        kept = store.config.location.persistent
    if not kept:
        click.echo("\nThe store was in memory: it is gone now. Give --db a file to keep it.")
        return
    db = shlex.quote(url)
    click.echo("\nTry next:")
    click.echo(f"  transcripts --db {db} history {session_id}")
    click.echo(f"  transcripts --db {db} audit {session_id}")
    click.echo(f"  transcripts --db {db} search lisbon")


def demo_url(context: click.Context, opener: StoreOpener) -> str:
    """`--db` if given on the command line, else the demo store beside the default one (a
    bare file path: `--db` takes it)."""
    root = context.find_root()
    if opener.url and root.get_parameter_source("url") == ParameterSource.COMMANDLINE:
        return opener.url
    return str(default_path().with_name("demo.db"))


def run_demo(store: TranscriptStore, console: Console) -> str:
    """Run the demo session on `store`, print what it stored, return its session id."""
    session_id = datetime.now(UTC).strftime("demo-%Y%m%d-%H%M%S-%f")
    store.start(session_id, source="demo", model="example-model")
    live = store.append(session_id, CONVERSATION)
    console.print(
        Text.assemble("Session ", (session_id, "bold"), f": {len(live)} messages stored.")
    )

    def summarizer_down(messages: list[dict]) -> list[dict]:
        raise SimulatedOutage(SIMULATED)

    failed = store.compact(session_id, summarizer_down, reason="context over budget")
    console.print(
        f"Simulated failure: the summarizer raised on purpose ({failed.error}), so the "
        f"compaction failed ({failed.failure}); {len(failed.messages)} messages still active, "
        "none lost or duplicated.",
        markup=False,
    )
    store.sync(session_id, failed.messages)  # the agent's flush: stores nothing new

    attempt = store.begin_compaction(session_id)
    system, *older, last_question = attempt.messages
    summary = {
        "role": "assistant",
        "content": "Summary: a 3-day Lisbon plan (Alfama, Belém, Sintra); March is mild "
        "(17°C, showers).",
    }
    committed = store.commit_compaction(
        attempt,
        [system, summary, last_question],
        reason="context over budget",
        tokens_before=412,
        tokens_after=96,
    )
    console.print(
        f"Compaction committed: {len(older)} messages superseded by one summary; "
        f"{len(committed.messages)} active."
    )
    console.print(context_table(store.active(session_id), "Active context"))
    console.print(timeline_table(list(streamed_timeline(store, session_id)), "History"))
    console.print(audit_table(store.compactions(session_id), with_sessions=False))
    return session_id
