"""Where the pages link to. Ids may hold any text (`/`, `?`, `#`, quotes, spaces), so each
is one percent-encoded path segment: the web app routes on the path as sent (see `app`) and
decodes each id once. The HTML export links within its one file instead (`exporters.html`).
"""

from __future__ import annotations

from urllib.parse import quote, unquote_to_bytes, urlencode


def segment(text: str) -> str:
    """An id as one path segment: every character but letters, digits and `-._~` encoded."""
    return quote(text, safe="")


def decoded(segment_text: str) -> str:
    """A path segment back to its id (UnicodeDecodeError if its bytes are not UTF-8)."""
    return unquote_to_bytes(segment_text.encode("latin-1")).decode("utf-8")


class ServerLinks:
    """The web app's URLs: stable, so that one pasted into a ticket opens the same view."""

    in_file = False

    def sessions(self, *, source: str = "", sort: str = "", page: int = 1) -> str:
        query = {"source": source, "sort": sort, "page": page if page > 1 else ""}
        kept = {key: value for key, value in query.items() if value}
        return "/" + (f"?{urlencode(kept)}" if kept else "")

    def session(self, session_id: str, *, after: int = 0) -> str:
        url = f"/sessions/{segment(session_id)}"
        return f"{url}?after={after}#events" if after else url

    def event(self, session_id: str, version: int) -> str:
        return f"/sessions/{segment(session_id)}/events/{version}"

    def replay(self, session_id: str, version: int, page: int = 1) -> str:
        query = f"?version={version}" + (f"&page={page}" if page > 1 else "")
        return f"/sessions/{segment(session_id)}/replay{query}"

    def message(self, session_id: str, message_id: str) -> str:
        return f"/sessions/{segment(session_id)}/messages/{segment(message_id)}"

    def compaction(self, session_id: str, compaction_id: str) -> str:
        return f"/sessions/{segment(session_id)}/compactions/{segment(compaction_id)}"

    def history(self, session_id: str, page: int = 1) -> str:
        return f"/sessions/{segment(session_id)}/history" + (f"?page={page}" if page > 1 else "")

    def static(self, name: str) -> str:
        return f"/static/{name}"
