"""A store whose views were built by a newer release (a view version above this release's
`Projector.VERSIONS`) is refused on open with a `StorageError` telling to upgrade
transcript-store, and nothing is changed: this release must not rebuild a newer release's
views down to its own. (Older view versions are rebuilt on open, as the README says.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from transcripts import StorageError, TranscriptStore
from transcripts.projections.projector import Projector

from .reliability_support import (
    DURABLE_BACKENDS,
    durable_url,
    error_line,
    log_rows,
    run_cli,
    sql,
    table_names,
    view_rows,
)


@pytest.fixture(params=DURABLE_BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return durable_url(request.param, tmp_path, request)


def fill(url: str) -> None:
    with TranscriptStore.open(url) as store:
        store.start("s", source="older")
        store.append("s", [{"id": f"m{i}", "role": "user", "content": f"m {i}"} for i in range(4)])
        assert store.compact("s", lambda ms: [{"role": "system", "content": "sum"}]).committed
        store.catch_up_projections()


def everything(url: str) -> dict[str, Any]:
    return {"tables": table_names(url), "views": view_rows(url), "log": log_rows(url)}


def bump(url: str, view: str, by: int = 1) -> None:
    version = Projector.VERSIONS[view] + by
    sql(url, "UPDATE view_versions SET version = ? WHERE view = ?", (version, view))
    assert dict(sql(url, "SELECT view, version FROM view_versions"))[view] == version


@pytest.mark.parametrize("view", list(Projector.VERSIONS))
def test_views_of_a_newer_release_are_refused_on_open_and_left_as_they_are(
    url: str, view: str
) -> None:
    fill(url)
    bump(url, view)
    before = everything(url)
    with pytest.raises(StorageError) as raised:
        TranscriptStore.open(url).close()
    message = str(raised.value)
    assert "upgrade" in message.lower() and "transcript-store" in message, message
    assert everything(url) == before


def test_views_far_ahead_are_refused_too_and_every_open_refuses_them(url: str) -> None:
    fill(url)
    bump(url, "message_history", by=40)
    before = everything(url)
    for _ in range(2):
        with pytest.raises(StorageError):
            TranscriptStore.open(url, lock_timeout=2).close()
    assert everything(url) == before


def test_the_command_line_refuses_newer_views_in_one_line(url: str) -> None:
    fill(url)
    bump(url, "sessions")
    before = everything(url)
    for args in (("sessions",), ("show", "s"), ("projections", "rebuild")):
        line = error_line(run_cli(url, *args))
        assert "upgrade" in line.lower() and "transcript-store" in line, line
    assert everything(url) == before


def test_views_of_an_older_release_are_still_rebuilt_on_open(url: str) -> None:
    """The other direction keeps working: a fixed release repairs an older one's views."""
    fill(url)
    view = "active_messages"
    sql(
        url,
        "UPDATE view_versions SET version = ? WHERE view = ?",
        (Projector.VERSIONS[view] - 1, view),
    )
    sql(url, "DELETE FROM active_messages")
    with TranscriptStore.open(url) as store:
        assert [m["content"] for m in store.active("s")] == ["sum"]
        assert store.verify_projections().ok
    assert dict(sql(url, "SELECT view, version FROM view_versions")) == Projector.VERSIONS
