"""Importing the state.db files real Hermes releases wrote (tests/data/hermes, made by its
generate.py driving the shipped hermes-agent code): every session is compared with the truth
recorded while Hermes wrote it — history, active context, committed and failed compactions,
rewinds, lineage, and a status that says `imported` only when nothing was guessed. On every
backend.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from support.hermes import RELEASES, Release
from transcripts import TranscriptStore
from transcripts.adapters.importers.hermes import SessionReport, import_hermes

IN_PLACE = "Hermes in-place compaction"
REWIND = "Hermes rewind"


def left_rows(release: Release, attempt: dict[str, Any]) -> bool:
    """Whether an attempt left a row: a commit always does; hermes-agent 0.18.0's failed
    commit leaves none when its summary was merged into a tail message (see README)."""
    rows = release.truth["rows"].values()
    return attempt["kind"] == "commit" or any(e.get("summary") == attempt["summary"] for e in rows)


def in_place_attempts(release: Release, truth: dict[str, Any]) -> list[dict[str, Any]]:
    """The in-place compactions the file shows."""
    return [
        attempt
        for attempt in truth["attempts"]
        if attempt["kind"] in ("commit", "fail") and left_rows(release, attempt)
    ]


def lone(release: Release, session_id: str, attempt: dict[str, Any]) -> bool:
    """A failed commit that wrote only its summary, no copies (hermes-agent 0.18.0)."""
    rows = release.rows_of(session_id)
    at = next(i for i, (_, e) in enumerate(rows) if e.get("summary") == attempt["summary"])
    around = [rows[i][1] for i in (at - 1, at + 1) if 0 <= i < len(rows)]
    return attempt["kind"] == "fail" and not any(entry.get("copy") for entry in around)


def check_session(
    store: TranscriptStore, release: Release, session_id: str, report: SessionReport
) -> None:
    truth = release.sessions[session_id]
    where = f"{release.version} {session_id}"
    truth_of = lambda m: release.truth_of(store, session_id, m)  # noqa: E731
    entries = store.history(session_id)
    history = [truth_of(entry["id"]) for entry in entries]
    active = [truth_of(message["id"]) for message in store.active(session_id)]
    assert history == truth["history"], where
    assert active == truth["active"], where

    audit = store.compactions(session_id)
    in_place = [entry for entry in audit if entry["reason"].startswith(IN_PLACE)]
    attempts = in_place_attempts(release, truth)
    statuses = ["failed" if a["kind"] == "fail" else "committed" for a in attempts]
    assert [entry["status"] for entry in in_place] == statuses, where
    superseded = [[truth_of(m) for m in entry["superseded"]] for entry in in_place]
    assert superseded == [
        attempt["snapshot"] if lone(release, session_id, attempt) else attempt["superseded"]
        for attempt in attempts
    ], where
    assert len(audit) == len(in_place), f"{where}: a rewind in the compaction audit"
    undone = [rewind["messages"] for rewind in truth["rewinds"] if rewind["messages"]]
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

    assert report.status == ("repaired" if "failed" in statuses else "imported"), (
        where,
        report.notes,
    )
    assert (report.messages, report.active) == (len(history), len(active)), where
    assert report.compactions_failed == statuses.count("failed"), where
    assert report.compactions_committed == statuses.count("committed"), where
    assert report.rewinds == len(undone), where
    assert report.duplicates_dropped == release.copies_dropped(session_id), where


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


def test_the_generated_files_cover_every_release_from_0_13_0_on() -> None:
    assert RELEASES == [
        "0.13.0", "0.14.0", "0.15.0", "0.15.1", "0.15.2", "0.16.0",
        "0.17.0", "0.18.0", "0.18.1", "0.18.2", "0.19.0",
    ]  # fmt: skip
    schemas = [Release.load(version).truth["schema_version"] for version in RELEASES]
    assert schemas == [11, 11, 13, 13, 13, 14, 16, 17, 19, 19, 22]
