"""What a page of ours must never do, watched in the browser: open a dialog, log an error,
throw, or request anything from elsewhere than where it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Watched:
    """What a page did that a page of ours must never do."""

    origin: str
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # console errors and uncaught exceptions
    outside: list[str] = field(default_factory=list)  # requests to anywhere but `origin`

    def clean(self) -> bool:
        return not (self.dialogs or self.errors or self.outside)


def watch(page: Any, origin: str) -> Watched:
    watched = Watched(origin)

    def dialog(d: Any) -> None:
        watched.dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    page.on("console", lambda m: m.type == "error" and watched.errors.append(m.text))
    page.on("pageerror", lambda error: watched.errors.append(str(error)))
    page.on(
        "request",
        lambda r: r.url.startswith(origin) or watched.outside.append(r.url),
    )
    return watched
