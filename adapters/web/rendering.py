"""The templates, shared by the web app and the HTML export: one Jinja2 environment that
escapes every value it writes (autoescape on every template, whatever its name), and the
filters the templates format values with."""

from __future__ import annotations

import hashlib
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..exporters.timeline import boundary_text, rewind_text
from .context_timeline import MARK_TYPES, SYMBOLS
from .messages import MessageView

HERE = Path(__file__).parent
STATIC = HERE / "static"


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(when=when, number=number, anchor=anchor, plural=plural, pretty=pretty)
    env.globals.update(
        MARK_TYPES=MARK_TYPES,
        SYMBOLS=SYMBOLS,
        message_view=MessageView.of,
        boundary_text=boundary_text,
        rewind_text=rewind_text,
    )
    return env


def render(template: str, **values: Any) -> str:
    return environment().get_template(template).render(**values)


def when(at: datetime | None) -> str:
    """A time for people: UTC, to the second."""
    return "" if at is None else at.strftime("%Y-%m-%d %H:%M:%S UTC")


def number(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def pretty(value: Any) -> str:
    """A JSON value indented for reading (any key, any nesting the store accepts)."""
    options = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
    return orjson.dumps(value, default=str, option=options).decode()


def anchor(text: str) -> str:
    """An element id for any text (an id, which may hold spaces or quotes): its digest."""
    return "id-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
