"""Moving transcripts in and out: `import hermes`, `import codex`, `import claude-code`,
`import jsonl`, `export`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from ... import TranscriptError, TranscriptStore
from ..exporters.jsonl import jsonl_lines
from ..exporters.markdown import markdown_chunks
from ..importers.claude_code import import_claude_code
from ..importers.codex import import_codex
from ..importers.hermes import import_hermes
from ..importers.jsonl import JsonlSession, import_session, read_jsonl
from .inert import echo
from .progress import progress_bar, progress_phases, quiet_option
from .render import to_json
from .render_claude_code import claude_code_notes, claude_code_report_table, claude_code_summary
from .render_codex import codex_notes, codex_report_table, codex_summary
from .render_read import hermes_report_table, hermes_summary, plural
from .serve import WEB_EXTRA
from .support import CONTEXT_SETTINGS, console, creating_store, json_option, with_store


@click.group("import", context_settings=CONTEXT_SETTINGS)
def import_() -> None:
    """Import transcripts from other formats.

    Example: transcripts import hermes ~/.hermes/state.db

    Example: transcripts import codex ~/.codex/sessions --dry-run

    Example: transcripts import claude-code ~/.claude/projects
    """


def print_reports(
    reports: Sequence[Any],
    as_json: bool,
    dry_run: bool,
    table: Callable[..., Any],
    summary: Callable[..., str],
    notes: Callable[[Sequence[Any]], Iterable[Any]] = lambda reports: (),
) -> None:
    """An importer's reports: as JSON, or its table, its notes and its one-line summary."""
    if as_json:
        click.echo(to_json([{**asdict(report), "dry_run": dry_run} for report in reports]))
        return
    output = console()
    output.print(table(reports, dry_run=dry_run))
    for note in notes(reports):
        output.print(note)
    click.echo(summary(reports, dry_run=dry_run))


@import_.command("hermes")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Print the report without writing anything.")
@json_option
@quiet_option
@creating_store
def import_hermes_command(
    store: TranscriptStore, path: Path, dry_run: bool, as_json: bool, quiet: bool
) -> None:
    """Import a Hermes agent session store (state.db), repairing failed-commit corruption.

    Reads schema versions 11 to 31 (every hermes-agent release). Each session gets a
    faithful history: messages with their tool calls and reasoning, compactions as compaction
    events, parent sessions kept. Copies re-inserted by failed compaction commits (known by
    their content and the shape of a compaction, never by timestamps) are dropped and each
    failed commit is recorded as a failed attempt; each /undo is a rewind, not a compaction.
    The file is opened read-only; importing it again stores nothing new. Prints a report per
    session: imported, repaired, doubtful (the notes say what could not be told) or
    unchanged.

    Example: transcripts import hermes ~/.hermes/state.db --dry-run
    """
    label = f"Reading {path.name}" if dry_run else f"Importing {path.name}"
    with progress_bar(label, quiet=quiet) as bar:
        reports = import_hermes(store, path, dry_run=dry_run, progress=bar)
    print_reports(reports, as_json, dry_run, hermes_report_table, hermes_summary)


@import_.command("codex")
@click.argument("paths", metavar="[PATH]...", nargs=-1, type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Print the report without writing anything.")
@json_option
@quiet_option
@creating_store
def import_codex_command(
    store: TranscriptStore, paths: tuple[Path, ...], dry_run: bool, as_json: bool, quiet: bool
) -> None:
    """Import Codex CLI rollouts: each rollout file becomes one session.

    PATH is a rollout file or a folder searched at any depth for rollout-*.jsonl; none
    given: $CODEX_HOME/sessions, else ~/.codex/sessions. Response items become messages in
    order (tool calls linked to their outputs), each `compacted` line one committed
    compaction, each turn that ended because Codex's compaction found no room
    (context_window_exceeded) one failed attempt. Files are only read; importing them again
    stores nothing new, and a session that went on in Codex is resumed. A session the store
    holds with another history (Codex rewrote the file) is reported diverged, with the
    first line that differs, and left as it is. Exits 1 if a rollout diverged or could not
    be read.

    Example: transcripts import codex ~/.codex/sessions/2026/12 --dry-run
    """
    label = "Reading rollouts" if dry_run else "Importing rollouts"
    with progress_bar(label, quiet=quiet) as bar:
        reports = import_codex(store, paths, dry_run=dry_run, progress=bar)
    print_reports(reports, as_json, dry_run, codex_report_table, codex_summary, codex_notes)
    if any(report.status in ("diverged", "unreadable") for report in reports):
        raise SystemExit(1)


@import_.command("claude-code")
@click.argument("paths", metavar="[PATH]...", nargs=-1, type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Print the report without writing anything.")
@json_option
@quiet_option
@creating_store
def import_claude_code_command(
    store: TranscriptStore, paths: tuple[Path, ...], dry_run: bool, as_json: bool, quiet: bool
) -> None:
    """Import Claude Code sessions: each session file becomes one session.

    PATH is a session file, a project folder or a `projects` folder; none given:
    $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects. Conversation records become
    messages under their uuids, each compact_boundary one committed compaction, each failed
    /compact one failed attempt; a subagent is a child session. Files are only read;
    importing them again stores nothing new. Exits 1 if a session diverged.

    Example: transcripts import claude-code ~/.claude/projects --dry-run
    """
    label = "Reading sessions" if dry_run else "Importing sessions"
    with progress_bar(label, quiet=quiet) as bar:
        reports = import_claude_code(store, paths, dry_run=dry_run, progress=bar)
    print_reports(
        reports, as_json, dry_run, claude_code_report_table, claude_code_summary, claude_code_notes
    )
    if any(report.status == "diverged" for report in reports):
        raise SystemExit(1)


@import_.command("jsonl")
@click.argument(
    "paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(path_type=Path)
)
@click.option(
    "--keep-going",
    is_flag=True,
    help="Import the good files even if others fail (exit 1 at the end if any failed).",
)
@quiet_option
@creating_store
def import_jsonl(
    store: TranscriptStore, paths: tuple[Path, ...], keep_going: bool, quiet: bool
) -> None:
    """Import OpenAI-style chat messages, one JSON object per line.

    Each file is one session named after the file's stem, unless a line has a `session_id`
    field. Every line is checked first: a malformed line names its file and line, and
    nothing of that file is imported. Lines keep their "id"; lines without one get an id
    derived from the file name, the session, their place and content, so importing the
    same file again stores nothing new. Progress bars (on a terminal, unless --quiet) count
    the files read, then the messages stored.

    Example: transcripts import jsonl chats/*.jsonl --keep-going
    """
    failures = 0
    read: list[JsonlSession] = []
    with progress_phases(quiet=quiet) as phases:
        reading = phases.phase("Reading files")
        for done, path in enumerate(paths, 1):
            try:
                read += read_jsonl(path)
            except TranscriptError as error:
                if not keep_going:
                    raise
                failures += 1
                echo(f"Error: {error}", err=True)
            reading(done, len(paths))
        storing = phases.phase("Storing messages")
        total, done = sum(len(session.messages) for session in read), 0
        new = 0
        imported: set[str] = set()
        for session in read:
            storing(done, total)
            done += len(session.messages)
            try:
                report = import_session(store, session)
            except TranscriptError as error:
                message = f"{session.path}: session {session.session_id}: {error}"
                if not keep_going:
                    raise TranscriptError(message) from None
                failures += 1
                echo(f"Error: {message}", err=True)
                continue
            new += report.new
            imported.add(report.session_id)
            stored = "already stored" if report.messages and not report.new else f"{report.new} new"
            echo(
                f"{report.path}: session {report.session_id}: "
                f"{plural(report.messages, 'message')}, {stored}"
                + (" (new session)" if report.started else "")
            )
    click.echo(f"Imported {plural(new, 'new message')} into {plural(len(imported), 'session')}.")
    if failures:
        raise click.ClickException(f"not everything was imported: {failures} error(s) above.")


@click.command()
@click.argument("session_id", metavar="SESSION")
@click.option(
    "--format",
    "format_",
    type=click.Choice(["jsonl", "md", "html"]),
    default="jsonl",
    show_default=True,
    help="jsonl: messages for programs (`import jsonl` reads it back); md: Markdown for "
    "people; html: one self-contained page (timeline, compactions before and after).",
)
@click.option(
    "--history",
    "whole_history",
    is_flag=True,
    help="Every message ever stored, superseded ones too (md, html: with every compaction "
    "attempt and rewind).",
)
@click.option(
    "--as-of",
    "as_of",
    type=click.IntRange(min=1),
    metavar="VERSION",
    help="The active context right after event VERSION of the session (see `events`).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file (replaced whole once written) instead of stdout.",
)
@with_store
def export(
    store: TranscriptStore,
    session_id: str,
    format_: str,
    whole_history: bool,
    as_of: int | None,
    output: Path | None,
) -> None:
    """Write a session to stdout (or a file): its active context, or with --history
    everything it stored.

    JSONL is one message per line with its "id", as `import jsonl` reads it back (a file
    named SESSION.jsonl imports into the same session). JSONL holds messages only: importing
    a --history file makes every message active. Markdown shows compactions as boundaries.
    HTML is one file that loads nothing (no script, no request): to attach to a report.

    Example: transcripts export 20260830_141200_d4e5f6 --format html -o session.html
    """
    if whole_history and as_of is not None:
        raise click.UsageError("give --history or --as-of, not both")
    chunks = export_chunks(store, session_id, format_, whole_history, as_of)
    if output is None:
        for chunk in chunks:
            click.echo(chunk, nl=False)
        return
    write_whole(output, chunks)


def export_chunks(
    store: TranscriptStore, session_id: str, format_: str, whole_history: bool, as_of: int | None
) -> Iterator[str]:
    """The export's text in pieces; the session is read by the call (an unknown one raises
    before anything is written)."""
    if as_of is not None:
        last = store.version(session_id)
        if as_of > last:
            raise TranscriptError(f"session {session_id!r} has versions 1 to {last}, not {as_of}")
    if format_ == "md":
        return markdown_chunks(store, session_id, history=whole_history, as_of=as_of)
    if format_ == "html":
        try:
            from ..exporters.html import html_chunks
        except ImportError as error:
            raise click.ClickException(f"--format html needs {error.name}: {WEB_EXTRA}") from None
        return html_chunks(store, session_id, history=whole_history, as_of=as_of)
    if whole_history:
        messages: Iterable[dict[str, Any]] = (e["message"] for e in store.iter_history(session_id))
    elif as_of is not None:
        messages = store.active_at(session_id, as_of)
    else:
        messages = store.iter_active(session_id)
    return (line + "\n" for line in jsonl_lines(messages))


def write_whole(path: Path, chunks: Iterable[str]) -> None:
    """Write `chunks` to `path` through a file beside it, renamed into place once complete:
    a failed export leaves `path` as it was."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("w", encoding="utf-8") as file:
            for chunk in chunks:
                file.write(chunk)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


COMMANDS = [import_, export]
