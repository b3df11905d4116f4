"""A session as one self-contained HTML file, for an incident report: the web app's views
(its facts, the timeline chart with its marks, every compaction before and after, the
active context or the whole history) with the stylesheet inline and no script. Nothing in
it requests anything when opened: a Content-Security-Policy in the file forbids every
fetch, and links point within the file.

The file is written as it is read. The compactions' before and after come from one pass over
the session's events (`ContextFold`), keeping the active context in memory, as a fold of the
log does; the context at the end of the pass is the one shown (or, with `as_of`, the
context right after that version, which equals `store.active_at`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ... import TranscriptError, TranscriptStore
from ..web.chart import Chart
from ..web.compaction import CompactionPage, committed, committed_context, failed
from ..web.context_timeline import ContextTimeline, read_timeline
from ..web.links import ServerLinks
from ..web.messages import paired
from ..web.pages import session_summary
from ..web.rendering import STATIC, anchor, environment
from .streamed_timeline import streamed_timeline

CSP = (  # in the file: nothing may be fetched, styles are inline
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; "
    "base-uri 'none'"
)


class FileLinks(ServerLinks):
    """Links within the one file: to the sections and messages it holds."""

    in_file = True

    def sessions(self, *, source: str = "", sort: str = "", page: int = 1) -> str:
        return "#top"

    def session(self, session_id: str, *, after: int = 0) -> str:
        return "#top"

    def event(self, session_id: str, version: int) -> str:
        return f"#event-v{version}"

    def message(self, session_id: str, message_id: str) -> str:
        return f"#{anchor(message_id)}"

    def compaction(self, session_id: str, compaction_id: str) -> str:
        return f"#{anchor(compaction_id)}"

    def replay(self, session_id: str, version: int, page: int = 1) -> str:
        return f"#event-v{version}"

    def history(self, session_id: str, page: int = 1) -> str:
        return "#history"


def html_chunks(
    store: TranscriptStore,
    session_id: str,
    *,
    as_of: int | None = None,
    history: bool = False,
) -> Iterator[str]:
    """The document in pieces, read as they are written. The session is read by the call (an
    unknown one raises here); `as_of` past the session's last version is a TranscriptError."""
    session = session_summary(store, session_id)
    if as_of is not None and not 1 <= as_of <= session["version"]:
        raise TranscriptError(
            f"session {session_id!r} has versions 1 to {session['version']}, not {as_of}"
        )
    if history and as_of is not None:
        raise TranscriptError("give as_of or history, not both")
    timeline = read_timeline(store, session_id, session, until=as_of)
    fold = ContextFold(store, session, timeline)
    items = streamed_timeline(store, session_id) if history else None
    template = environment().get_template("export.html")
    return template.generate(
        links=FileLinks(),
        store_name=store.config.url,
        inline_css=(STATIC / "style.css").read_text("utf-8"),
        csp=CSP,
        s=session,
        sid=session_id,
        as_of=as_of,
        timeline=timeline,
        chart=Chart(timeline),
        compactions=fold.compactions(),
        fold=fold,
        history_view=None if items is None else _HistoryView(items, timeline),
    )


class ContextFold:
    """One pass over a session's events up to the timeline's head, keeping the active
    context: each compaction's before and after as it goes by, the context at the end."""

    def __init__(
        self, store: TranscriptStore, session: dict[str, Any], timeline: ContextTimeline
    ) -> None:
        self.store = store
        self.session = session
        self.timeline = timeline
        self.active: list[dict[str, Any]] = []
        self.fence = 0  # the version of the last commit or rewind

    def compactions(self) -> Iterator[CompactionPage]:
        attempts = {
            mark.attempt["id"]: mark.attempt for mark in self.timeline.marks if mark.attempt
        }
        session_id = self.session["id"]
        for event in self.store.iter_events(session_id, until=self.timeline.head):
            kind, data, version = event["type"], event["data"], event["version"]
            if kind == "MessageAppended":
                self.active.append({**data["message"], "id": data["message_id"]})
            elif kind == "CompactionCommitted":
                attempt = attempts[data["compaction_id"]]
                yield committed(self.session, attempt, self.active, data)
                self.active, self.fence = committed_context(self.active, data), version
            elif kind == "CompactionFailed":
                attempted = {"proposed": data["proposed"], "exception": data["exception"]}
                attempt = {**attempts[data["compaction_id"]], **attempted}  # kept in the event
                yield failed(self.session, attempt, self._snapshot(data))
            elif kind == "Rewound":
                gone = set(data["message_ids"])
                self.active = [message for message in self.active if message["id"] not in gone]
                self.fence = version

    def context(self) -> list[Any]:
        """The active context at the end of the pass, as views (after `compactions()`)."""
        return paired(self.active)

    def _snapshot(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        """A failed attempt's snapshot: the start of the context when nothing but appends
        came since it began, else read (an attempt that lost a race)."""
        based_on = data["based_on_version"]
        if based_on >= self.fence:
            return self.active[: self.timeline.size_at(based_on)]
        return self.store.active_at(self.session["id"], based_on)


class _HistoryView:
    """The history section's items, as the history page's template reads them."""

    def __init__(self, items: Iterator[Any], timeline: ContextTimeline) -> None:
        self.items = items
        attempts = [mark.attempt for mark in timeline.marks if mark.attempt]
        self.compaction_versions = {attempt["id"]: attempt["version"] for attempt in attempts}
