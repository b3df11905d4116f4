"""Untrusted text made inert for a terminal.

Stored text (message content, ids, a fetched web page in a tool result) may hold control
characters: an ESC sequence can write the clipboard (OSC 52), hide text (SGR 8) or clear
the screen (CSI 2J). `inert` shows every control character (C0, DEL, C1) and every format
character (bidirectional overrides, zero-width characters) as its Python escape, visibly
(`\\x1b`, `\\x00`, `\\x9b`, `\\u202e`); tab and newline are kept where the text may hold
lines. A backslash is left as it is, so `\\x1b` in the output is either an escaped ESC or
the four characters themselves.

`InertConsole` is a rich console that never reads text as markup or emoji codes (`[bold]`
and `:smile:` in content stay literal) and makes every string it renders inert: a table
built of plain strings is safe to print. `--json` output needs none of this: JSON escapes
control characters itself, and stays exact.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import click
from rich.console import Console
from rich.text import Text

_UNSAFE = frozenset({"Cc", "Cf"})
_LINES = frozenset("\t\n")


def inert(text: str, *, lines: bool = False) -> str:
    """`text` with its control and format characters shown as escapes; with `lines`, tab
    and newline stay as they are."""
    if text.isprintable():  # the common case: nothing to escape (a space is printable)
        return text
    kept = _LINES if lines else frozenset()
    return "".join(
        ch
        if ch in kept or unicodedata.category(ch) not in _UNSAFE
        else ascii(ch)[1:-1]  # '\x1b', '\u202e'
        for ch in text
    )


def echo(text: str, *, err: bool = False) -> None:
    """`click.echo` of a line that may hold stored text (an id, a stored error)."""
    click.echo(inert(text, lines=True), err=err)


class InertConsole(Console):
    """A console whose strings are text: inert, never markup, never emoji codes.

    rich renders every string it is given (to `print`, as a table cell, title or caption)
    through `render_str`, so this is the one place. `Text` objects are drawn as they are:
    build them from `inert` text."""

    def render_str(self, text: str, **options: Any) -> Text:
        options.update(markup=False, emoji=False)
        return super().render_str(inert(text, lines=True), **options)
