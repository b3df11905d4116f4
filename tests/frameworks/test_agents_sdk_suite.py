"""The OpenAI Agents SDK's own session tests (tests/memory/test_session.py and
test_session_limit.py of the installed version's sdist, fetched from PyPI at test time) pass
against TranscriptSession, but those that read SQLiteSession's internals (LEFT_OUT).

The SDK's test files are used as released, with `SQLiteSession` renamed `TranscriptSession`
(support/sdk_suite/transcripts_session_swap.py makes that name ours), and run by pytest in
a child process. A download that fails is a failure of this test, never a skip.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ElementTree
from importlib.metadata import version
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SDK_VERSION = version("openai-agents")
SUITE = ("tests/memory/test_session.py", "tests/memory/test_session_limit.py")
SWAP = Path(__file__).parents[1] / "support" / "sdk_suite"
INTERNALS = "reads SQLiteSession's internals"
LEFT_OUT = {
    # Its per-thread sqlite3 connections (`_connections`, `_get_connection`, closing them).
    "test_sqlite_session_close_closes_worker_thread_connections": INTERNALS,
    "test_sqlite_session_reaps_connections_from_exited_worker_threads": INTERNALS,
    "test_sqlite_session_closes_retired_connections_before_the_next_allocation": INTERNALS,
    "test_sqlite_session_keeps_connections_of_live_worker_threads": INTERNALS,
    "test_sqlite_session_rollback_failure_evicts_connection": INTERNALS,
    "test_sqlite_session_close_retries_quarantined_connection": INTERNALS,
    "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome": INTERNALS,
    # Its process-wide lock per file (`_lock`, `_file_lock_counts`, `_file_locks`).
    "test_sqlite_session_file_lock_is_shared_across_instances": INTERNALS,
    # Rows written into its tables (`_locked_connection`, `messages_table`) as corrupt JSON.
    "test_sqlite_session_pop_item_skips_corrupt_most_recent": INTERNALS,
    "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows": INTERNALS,
    "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows": INTERNALS,
    "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows": INTERNALS,
    # Its tables dropped or probed with sqlite3 (`agent_sessions`, `agent_messages`), its
    # sqlite3 errors and write lock expected.
    "test_sqlite_session_failed_add_items_releases_write_lock": INTERNALS,
    "test_sqlite_session_failed_clear_session_rolls_back": INTERNALS,
    "test_sqlite_session_failed_pop_item_releases_write_lock": INTERNALS,
}


@pytest.fixture(scope="module")
def sdk_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist's tests and pytest settings, SQLiteSession renamed in the suite's files."""
    download = tmp_path_factory.mktemp("sdist")
    fetched = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-binary",
            ":all:",
            "--no-deps",
            "--disable-pip-version-check",
            "-d",
            str(download),
            f"openai-agents=={SDK_VERSION}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert fetched.returncode == 0, f"the SDK's sdist could not be downloaded:\n{fetched.stderr}"
    [sdist] = download.glob("openai_agents-*.tar.gz")
    root = tmp_path_factory.mktemp("sdk")
    with tarfile.open(sdist) as archive:
        prefix = f"{archive.getnames()[0].split('/')[0]}/"
        members = [
            member
            for member in archive.getmembers()
            if member.name.startswith((f"{prefix}tests/", f"{prefix}pyproject.toml"))
        ]
        for member in members:
            member.name = member.name.removeprefix(prefix)
        archive.extractall(root, members=members, filter="data")
    for name in SUITE:
        path = root / name
        path.write_text(path.read_text().replace("SQLiteSession", "TranscriptSession"))
    return root


def test_the_agents_sdk_s_own_session_tests_pass_against_transcript_session(
    sdk_root: Path,
) -> None:
    source = "\n".join((sdk_root / name).read_text() for name in SUITE)
    missing = [name for name in LEFT_OUT if f"def {name}(" not in source]
    assert missing == [], "tests left out that this SDK version does not have"

    report = sdk_root / "report.xml"
    deselected = [f"--deselect={SUITE[0]}::{name}" for name in LEFT_OUT]
    environment = {**os.environ, "PYTHONPATH": str(SWAP)}
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "transcripts_session_swap",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--junitxml={report}",
            *deselected,
            *SUITE,
        ],
        cwd=sdk_root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    outcomes = _outcomes(report) if report.exists() else {}
    failed = sorted(test for test, outcome in outcomes.items() if outcome != "passed")
    assert failed == [], ran.stdout[-6000:]
    assert ran.returncode == 0, ran.stdout[-6000:] + ran.stderr[-2000:]
    ran_names = {re.sub(r"\[.*\]$", "", test) for test in outcomes}
    assert not ran_names & set(LEFT_OUT)
    every_test = set(re.findall(r"^(?:async )?def (test_\w+)\(", source, re.MULTILINE))
    assert ran_names == every_test - set(LEFT_OUT)


def _outcomes(report: Path) -> dict[str, str]:
    """Each test case's name and outcome (passed, failed, error or skipped)."""
    outcomes = {}
    for case in ElementTree.parse(report).iter("testcase"):
        kinds = {child.tag for child in case} & {"failure", "error", "skipped"}
        outcomes[case.get("name", "")] = kinds.pop() if kinds else "passed"
    return outcomes
