"""`transcripts forget SESSION`: erase a session's content for good, keeping its tombstone."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from ... import Erasure, StorageError, TranscriptStore
from ..exporters.timeline import when
from .inert import echo
from .render import to_json
from .render_read import plural
from .support import json_option, with_store


@click.command()
@click.argument("session_id", metavar="SESSION")
@click.option("-y", "--yes", is_flag=True, help="Erase without asking for confirmation.")
@json_option
@with_store
def forget(store: TranscriptStore, session_id: str, yes: bool, as_json: bool) -> None:
    """Erase a session's messages, compactions and metadata for good (privacy requests).

    Its events are replaced by one tombstone, so the store keeps that the session existed
    (its id, source, model and start), when it was erased and how much it held. Asks first
    unless --yes; forgetting an erased session again changes nothing.

    Example: transcripts forget 20260830_141200_d4e5f6 --yes
    """
    session = _summary(store, session_id)
    if not yes and (session is None or session["erased_at"] is None):
        held = "the views leave it out" if session is None else _held(session)
        click.confirm(
            f"Erase session {session_id!r} for good ({held})? It cannot be undone",
            abort=True,
            err=True,
        )
    erasure = store.forget(session_id)
    if as_json:
        click.echo(to_json(asdict(erasure)))
    else:
        echo(_report(erasure))


def _summary(store: TranscriptStore, session_id: str) -> dict[str, Any] | None:
    """The session as `sessions` lists it; None if it is stored but the views leave it out
    (its start cannot be read or taken): `forget` erases it all the same."""
    for session in store.sessions():
        if session["id"] == session_id:
            return session
    try:
        store.events(session_id)  # SessionNotFoundError if it was never started
    except StorageError:
        pass
    return None


def _held(session: dict[str, Any]) -> str:
    return _counts(
        session["messages"], session["compactions_committed"], session["compactions_failed"]
    )


def _counts(messages: int, committed: int, failed: int) -> str:
    attempts = plural(committed + failed, "compaction attempt")
    return f"{plural(messages, 'message')}, {attempts}"


def _report(erasure: Erasure) -> str:
    at = when(erasure.erased_at)
    if erasure.already_erased:
        return f"Session {erasure.session_id} was erased at {at} already: nothing changed."
    held = _counts(erasure.messages, erasure.compactions_committed, erasure.compactions_failed)
    return (
        f"Erased session {erasure.session_id} at {at}: {held}, "
        f"{plural(erasure.events, 'event')} (started {when(erasure.started_at)})."
    )
