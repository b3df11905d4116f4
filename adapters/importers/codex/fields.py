"""Reading the fields of rollout records, and naming what was read in notes."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ....domain.errors import InvalidMessageError
from ....domain.messages import check_name


def id_of(item: dict[str, Any]) -> str | None:
    item_id = item.get("id")
    return item_id if isinstance(item_id, str) else None


def usable_id(value: object) -> bool:
    if not isinstance(value, str) or not value:
        return False
    try:
        check_name(value, "id")
    except InvalidMessageError:
        return False
    return True


def error_code(error: object) -> object:
    """A turn error's `codex_error_info`: a code, or an object keyed by its code."""
    if not isinstance(error, dict):
        return None
    info = error.get("codex_error_info")
    if isinstance(info, dict) and len(info) == 1:
        return next(iter(info))
    return info


def numbers(lines: list[int]) -> str:
    shown = ", ".join(map(str, lines[:10]))
    return shown + (f" and {len(lines) - 10} more" if len(lines) > 10 else "")


def counted(counter: Counter[str]) -> str:
    return ", ".join(f"{name} ({count})" for name, count in counter.most_common())
