"""What each page shows, read from a store through the public API: plain data the templates
lay out (they escape every value). A session the store never started is its
`SessionNotFoundError`, a version, page or message it does not hold a `NotFound`; the web
app turns both into a 404 page.

Reads are bounded by the page, not the session: the events list reads one page of events
(`iter_events` after a version), the history one page of the streamed timeline, the
timeline the compaction audit and the rewinds (see `context_timeline`). Replay folds the
log up to the version asked (`active_at`), as the store does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ... import MessageNotFoundError, SessionNotFoundError, TranscriptError, TranscriptStore
from ..exporters.streamed_timeline import streamed_timeline
from ..exporters.timeline import Entry, Item
from .chart import Chart
from .context_timeline import RESTORED, ContextTimeline, Mark, first_line, read_timeline
from .messages import MessageView, paired, snippet

EVENTS_PAGE = 100
HISTORY_PAGE = 200
REPLAY_PAGE = 500
SESSIONS_PAGE = 100
SORTS = {  # the sessions list's orders: (key, newest or largest first)
    "last_activity": (lambda s: s["last_event_at"], True),
    "started": (lambda s: s["started_at"], True),
    "messages": (lambda s: s["messages"], True),
    "active": (lambda s: s["active"], True),
    "compactions": (lambda s: s["compactions_committed"], True),
    "failed": (lambda s: s["compactions_failed"], True),
    "rewound": (lambda s: s["rewound"], True),
    "id": (lambda s: s["id"], False),
}


class NotFound(TranscriptError):
    """What a page names is not in the store (a 404)."""


# -- the sessions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionsPage:
    sessions: list[dict[str, Any]]
    total: int  # sessions matching the filter
    sources: list[str]
    source: str
    sort: str
    page: int
    pages: int
    query: str
    hits: list[dict[str, Any]]
    search_error: str


def sessions_page(
    store: TranscriptStore, *, source: str = "", sort: str = "", query: str = "", page: int = 1
) -> SessionsPage:
    """The sessions, filtered by source and sorted; with a query, the search's hits."""
    every = store.sessions()
    sort = sort if sort in SORTS else "last_activity"
    key, descending = SORTS[sort]
    chosen = sorted((s for s in every if not source or s["source"] == source), key=key)
    if descending:
        chosen.reverse()
    pages = max(1, -(-len(chosen) // SESSIONS_PAGE))
    page = min(max(page, 1), pages)
    hits, error = [], ""
    if query.strip():
        try:
            hits = store.search(query, limit=50)
        except TranscriptError as failure:  # invalid syntax, or an encrypted store
            error = str(failure)
        for hit in hits:
            hit["snippet_parts"] = highlighted(hit["snippet"])
    return SessionsPage(
        sessions=chosen[(page - 1) * SESSIONS_PAGE : page * SESSIONS_PAGE],
        total=len(chosen),
        sources=sorted({s["source"] for s in every}),
        source=source,
        sort=sort,
        page=page,
        pages=pages,
        query=query,
        hits=hits,
        search_error=error,
    )


def highlighted(snippet_text: str) -> list[tuple[str, bool]]:
    """A search snippet as (text, is a match) pieces: the store marks matches «so»."""
    pieces: list[tuple[str, bool]] = []
    for index, chunk in enumerate(snippet_text.split("«")):
        match, _, rest = chunk.partition("»") if index else ("", "", chunk)
        if match:
            pieces.append((match, True))
        if rest:
            pieces.append((rest, False))
    return pieces


def session_summary(store: TranscriptStore, session_id: str) -> dict[str, Any]:
    """The session's `sessions()` entry (SessionNotFoundError if it was never started)."""
    for session in store.sessions():
        if session["id"] == session_id:
            return session
    raise SessionNotFoundError(session_id)


# -- a session: its timeline and its events -------------------------------------------------


@dataclass(frozen=True)
class EventRow:
    version: int
    type: str
    at: datetime
    summary: str
    message_id: str = ""  # an append's message
    compaction_id: str = ""
    restore: bool = False


@dataclass(frozen=True)
class SessionPage:
    session: dict[str, Any]
    timeline: ContextTimeline
    chart: Chart
    events: list[EventRow]
    after: int  # the events shown are those after this version
    page_size: int

    @property
    def previous_after(self) -> int | None:
        return None if self.after <= 0 else max(0, self.after - self.page_size)

    @property
    def next_after(self) -> int | None:
        last = self.after + self.page_size
        return last if last < self.session["version"] else None

    @property
    def last_after(self) -> int:
        head = self.session["version"]
        return max(0, head - (head - 1) % self.page_size - 1)


def session_page(store: TranscriptStore, session_id: str, *, after: int = 0) -> SessionPage:
    session = session_summary(store, session_id)
    if session["erased_at"] is not None:  # only its tombstone is left
        nothing = ContextTimeline.of(session_id, 1, [], [], [])
        return SessionPage(session, nothing, Chart(nothing), [], 0, EVENTS_PAGE)
    if not 0 <= after < session["version"]:
        raise NotFound(f"session {session_id!r} has no event after version {after}")
    timeline = read_timeline(store, session_id, session)
    restores = {mark.version for mark in timeline.marks if mark.type == RESTORED}
    until = after + EVENTS_PAGE
    events = store.iter_events(session_id, after=after, until=until, page_size=EVENTS_PAGE)
    rows = [event_row(event, event["version"] in restores) for event in events]
    return SessionPage(session, timeline, Chart(timeline), rows, after, EVENTS_PAGE)


def event_row(event: dict[str, Any], restore: bool = False) -> EventRow:
    """One line of the events list: what the event did."""
    kind, data = event["type"], event["data"]
    row = {"version": event["version"], "type": kind, "at": event["at"]}
    if kind == "MessageAppended":
        message = data["message"]
        text = f"{message.get('role', '?')}: {snippet(message)}"
        return EventRow(**row, summary=text, message_id=data["message_id"], restore=restore)
    if kind in {"CompactionCommitted", "CompactionFailed"}:
        if kind == "CompactionCommitted":
            text = f"replaced {data['replaced']}, kept {len(data['kept'])}"
            text += f", added {len(data['added'])}"
        else:
            text = f"{data['failure']}: {first_line(data['error'])}"
        text = _with_reason(text, data)
        return EventRow(**row, summary=text, compaction_id=data["compaction_id"])
    if kind == "Rewound":
        count = len(data["message_ids"])
        return EventRow(**row, summary=_with_reason(f"{count} rewound", data))
    if kind == "Started":
        text = f"source {data['source']}" + (f", model {data['model']}" if data["model"] else "")
        return EventRow(**row, summary=text)
    return EventRow(**row, summary="")


def _with_reason(text: str, data: dict[str, Any]) -> str:
    return f"{text} ({data['reason']})" if data.get("reason") else text


# -- one event, one message ------------------------------------------------------------------


@dataclass(frozen=True)
class EventPage:
    session: dict[str, Any]
    event: dict[str, Any]
    row: EventRow
    mark: Mark | None
    messages: list[MessageView]  # an append's message, a rewind's or a commit's added ones


def event_page(store: TranscriptStore, session_id: str, version: int) -> EventPage:
    session = session_summary(store, session_id)
    event = next(iter(store.iter_events(session_id, after=version - 1, until=version)), None)
    if event is None or version < 1:
        raise NotFound(f"session {session_id!r} has no event {version}")
    timeline = read_timeline(store, session_id, session, until=version)
    mark = next((m for m in timeline.marks if m.version == version), None)
    data = event["data"]
    if event["type"] == "MessageAppended":
        messages = [{**data["message"], "id": data["message_id"]}]
    elif event["type"] == "CompactionCommitted":
        messages = [{**added["message"], "id": added["id"]} for added in data["added"]]
    elif event["type"] == "Rewound":
        messages = [store.explain(session_id, i)["message"] for i in data["message_ids"][:100]]
    else:
        messages = []
    restore = mark is not None and mark.type == RESTORED
    return EventPage(session, event, event_row(event, restore), mark, paired(messages))


@dataclass(frozen=True)
class MessagePage:
    session: dict[str, Any]
    explanation: dict[str, Any]
    message: MessageView


def message_page(store: TranscriptStore, session_id: str, message_id: str) -> MessagePage:
    session = session_summary(store, session_id)
    try:
        explanation = store.explain(session_id, message_id)
    except MessageNotFoundError:
        raise NotFound(f"session {session_id!r} never stored a message {message_id!r}") from None
    message = MessageView.of(explanation["message"], whole=True)
    return MessagePage(session, explanation, message)


# -- replay and history -----------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayPage:
    session: dict[str, Any]
    version: int
    event: EventRow
    messages: list[MessageView]
    total: int  # messages in the context at the version
    first: int  # the position of the first message shown (1, …)
    page: int
    pages: int
    previous_mark: int | None
    next_mark: int | None


def replay_page(
    store: TranscriptStore, session_id: str, version: int, *, page: int = 1
) -> ReplayPage:
    """The active context right after event `version` (`store.active_at`), a page of it."""
    session = session_summary(store, session_id)
    if not 1 <= version <= session["version"]:
        raise NotFound(f"session {session_id!r} has no version {version}")
    context = store.active_at(session_id, version)
    pages = max(1, -(-len(context) // REPLAY_PAGE))
    if not 1 <= page <= pages:
        raise NotFound(f"the context at version {version} has no page {page}")
    start = (page - 1) * REPLAY_PAGE
    event = next(iter(store.iter_events(session_id, after=version - 1, until=version)))
    marks = [m.version for m in read_timeline(store, session_id, session).marks]
    return ReplayPage(
        session=session,
        version=version,
        event=event_row(event),
        messages=paired(context)[start : start + REPLAY_PAGE],
        total=len(context),
        first=start + 1,
        page=page,
        pages=pages,
        previous_mark=max((m for m in marks if m < version), default=None),
        next_mark=min((m for m in marks if m > version), default=None),
    )


@dataclass(frozen=True)
class HistoryPage:
    session: dict[str, Any]
    items: list[Item]
    compaction_versions: dict[str, int]
    page: int
    more: bool


def history_page(store: TranscriptStore, session_id: str, *, page: int = 1) -> HistoryPage:
    """Every message ever stored, with the compaction attempts and rewinds where they
    happened, a page of messages at a time (read up to the page's last message)."""
    session = session_summary(store, session_id)
    if page < 1:
        raise NotFound(f"no page {page}")
    shown = page * HISTORY_PAGE
    items = list(_history_window(streamed_timeline(store, session_id, limit=shown + 1), page))
    entries = sum(isinstance(item, Entry) for item in items)
    if page > 1 and not entries:
        raise NotFound(f"the history of {session_id!r} has no page {page}")
    more = entries > HISTORY_PAGE
    if more:
        while not isinstance(items[-1], Entry):
            items.pop()
        items.pop()  # the one message of the next page, read to know there is one
    versions = {attempt["id"]: attempt["version"] for attempt in store.compactions(session_id)}
    return HistoryPage(session, items, versions, page, more)


def _history_window(items: Iterator[Item], page: int) -> Iterator[Item]:
    """The items of page `page`: those after the last message of the pages before."""
    skip = (page - 1) * HISTORY_PAGE
    seen = 0
    for item in items:
        if seen >= skip:
            yield item
        elif isinstance(item, Entry):
            seen += 1
