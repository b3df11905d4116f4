"""A Codex session's metadata in the store: what its session_meta line says."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ....domain.messages import canonical_json

LIFTED = ("cwd", "cli_version", "originator", "source", "model_provider", "git")
# What is kept of metadata the store cannot hold (values nested too deep, say).
SAFE_METADATA = ("cwd", "cli_version", "originator", "instructions_sha256", "rollout")


def session_metadata(meta: dict[str, Any], path: Path) -> dict[str, Any]:
    """The store session's metadata: what the session_meta line says, with the digest of
    each instructions text in place of the text."""
    rest = {key: value for key, value in meta.items() if key not in ("id", "session_id")}
    lifted = {key: rest.pop(key, None) for key in LIFTED}
    instructions = {key: rest.pop(key) for key in list(rest) if key.endswith("instructions")}
    return {
        **lifted,
        "instructions_sha256": _digest(instructions.pop("base_instructions", None)),
        "started_at": rest.pop("timestamp", None),
        "rollout": path.name,
        "session_meta": {
            **rest,
            **{f"{key}_sha256": _digest(value) for key, value in instructions.items()},
        },
    }


def _digest(value: object) -> str | None:
    """SHA-256 of an instructions text (`{"text": …}` or a string; else its JSON)."""
    if value is None:
        return None
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        value = value["text"]
    data = value.encode() if isinstance(value, str) else canonical_json(value)
    return hashlib.sha256(data).hexdigest()
