"""Importing the state.db files real Hermes releases wrote (tests/data/hermes, made by its
generate.py with the shipped hermes-agent code): every session is compared with the truth
recorded while Hermes wrote it. On every backend.

One thing the files cannot tell (README, `import hermes`): a failed commit whose rows a later
compaction archived looks exactly like a commit, so it is imported as committed; for those
sessions the real messages, the active context and the statuses are compared, and the
summary the failed attempt wrote is the one extra message of the history.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from transcripts import TranscriptStore
from transcripts.adapters.importers.hermes import SessionReport, import_hermes

from support.hermes import RELEASES, Release

IN_PLACE = "Hermes in-place compaction"
REWIND = "Hermes rewind"


def archived_later(truth: dict[str, Any]) -> list[dict[str, Any]]:
    """Failed attempts a later commit archived: the file shows them as commits."""
    attempts = truth["attempts"]
    return [
        attempt
        for index, attempt in enumerate(attempts)
        if attempt["kind"] == "fail" and any(a["kind"] == "commit" for a in attempts[index + 1 :])
    ]


def expected_statuses(truth: dict[str, Any]) -> list[str]:
    hidden = {id(attempt) for attempt in archived_later(truth)}
    return [
        "failed" if attempt["kind"] == "fail" and id(attempt) not in hidden else "committed"
        for attempt in truth["attempts"]
        if attempt["kind"] in ("commit", "fail")
    ]


def real(ids: list[str]) -> list[str]:
    return [m for m in ids if "/summary" not in m]


def check_session(
    store: TranscriptStore, release: Release, session_id: str, report: SessionReport
) -> None:
    truth = release.sessions[session_id]
    where = f"{release.version} {session_id}"
    truth_of = lambda m: release.truth_of(store, session_id, m)  # noqa: E731
    entries = store.history(session_id)
    history = [truth_of(entry["id"]) for entry in entries]
    active = [truth_of(message["id"]) for message in store.active(session_id)]
    hidden = archived_later(truth)
    if hidden:
        assert real(history) == real(truth["history"]), where
        extra = [m for m in history if m not in truth["history"]]
        assert extra == [attempt["summary"] for attempt in hidden], where
    else:
        assert history == truth["history"], where
    assert len(history) == len(set(history)), f"{where}: a message stored twice"
    assert active == truth["active"], where

    audit = store.compactions(session_id)
    in_place = [entry for entry in audit if entry["reason"].startswith(IN_PLACE)]
    assert [entry["status"] for entry in in_place] == expected_statuses(truth), where
    superseded = [[truth_of(m) for m in entry["superseded"]] for entry in in_place]
    attempts = [a for a in truth["attempts"] if a["kind"] in ("commit", "fail")]
    if not hidden:
        assert superseded == [attempt["superseded"] for attempt in attempts], where
    assert {m for ids in superseded for m in real(ids)} == {
        m for attempt in attempts for m in real(attempt["superseded"])
    }, where
    assert len(audit) == len(in_place), f"{where}: a rewind in the compaction audit"
    undone = [[release.row(row)["message"] for row in rows] for rows in truth["rewinds"]]
    rewinds = [event["data"] for event in store.events(session_id) if event["type"] == "Rewound"]
    assert [[truth_of(m) for m in data["message_ids"]] for data in rewinds] == undone, where
    assert all(data["reason"].startswith(REWIND) for data in rewinds), where
    rewound = [entry for entry in entries if entry["rewound"]]
    assert [truth_of(entry["id"]) for entry in rewound] == [m for ms in undone for m in ms], where
    assert all(entry["superseded_by"] is None for entry in rewound), where

    session = next(s for s in store.sessions() if s["id"] == session_id)
    assert (session["source"], session["model"], session["parent_id"]) == (
        truth["source"],
        truth["model"],
        truth["parent_session_id"],
    ), where
    assert session["metadata"].get("title") == truth["title"], where
    assert session["metadata"].get("end_reason") == truth["end_reason"], where

    statuses = expected_statuses(truth)
    assert report.status == ("repaired" if "failed" in statuses else "imported"), where
    assert (report.messages, report.active) == (len(history), len(active)), where
    assert report.compactions_failed == statuses.count("failed"), where
    assert report.compactions_committed == statuses.count("committed"), where
    assert report.rewinds == len(truth["rewinds"]), where
    copies = [
        entry
        for entry in release.truth["rows"].values()
        if entry["session"] == session_id and entry.get("copy") and "summary" not in entry
    ]
    dropped = 0 if hidden else sum(entry["write"] == "flush" for entry in copies)
    assert report.duplicates_dropped == dropped, where


def fingerprint(path: Path) -> tuple[str, int, list[str]]:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, path.stat().st_mtime_ns, sorted(os.listdir(path.parent))


@pytest.mark.parametrize("version", RELEASES)
def test_every_session_a_release_wrote_imports_as_the_truth_recorded_while_it_wrote(
    store: TranscriptStore, version: str
) -> None:
    release = Release.load(version)
    reports = {report.session_id: report for report in import_hermes(store, release.path)}
    assert set(reports) == set(release.sessions)
    for session_id, report in reports.items():
        check_session(store, release, session_id, report)
    assert store.verify_projections().ok


@pytest.mark.parametrize("version", RELEASES)
def test_importing_a_release_s_file_again_stores_nothing_and_the_file_never_changes(
    sqlite_url: str, tmp_path: Path, version: str
) -> None:
    (tmp_path / "hermes").mkdir()
    source = tmp_path / "hermes" / "state.db"
    shutil.copy2(Release.load(version).path, source)
    before = fingerprint(source)
    with TranscriptStore.open(sqlite_url) as store:
        first = import_hermes(store, source)
        events = {report.session_id: store.events(report.session_id) for report in first}
        again = import_hermes(store, source)
        assert {report.status for report in again} == {"unchanged"}
        assert {r.session_id: store.events(r.session_id) for r in again} == events
    assert fingerprint(source) == before


def test_the_generated_files_cover_the_current_release_and_two_older_schemas() -> None:
    schemas = {Release.load(version).truth["schema_version"] for version in RELEASES}
    assert "0.19.0" in RELEASES
    assert {22, 16, 11} <= schemas
