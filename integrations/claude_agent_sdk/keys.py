"""The store session of a Claude Agent SDK `SessionKey`.

A `SessionKey` is `(project_key, session_id[, subpath])`, and one `session_id` may come under
two project keys: the store's session id is made of the whole key,
`<project_key>:<session_id>` for a main transcript and `<project_key>:<session_id>:<subpath>`
for a subagent's, each part with `%` written `%25` and `:` written `%3A` (so that two keys
never make one id). The session's metadata holds the three parts as given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def escape(part: str) -> str:
    return part.replace("%", "%25").replace(":", "%3A")


def store_session_id(key: Mapping[str, Any]) -> str:
    parts = [key["project_key"], key["session_id"]]
    if key.get("subpath"):
        parts.append(key["subpath"])
    return ":".join(escape(str(part)) for part in parts)


def key_metadata(key: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "project_key": key["project_key"],
        "session_id": key["session_id"],
        "subpath": key.get("subpath") or None,
    }
