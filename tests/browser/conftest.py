"""The browser tests: `transcripts serve` in a subprocess on a store the tests build, driven
by Debian's chromium through Playwright (launched with the system browser's path:
`playwright install` is never needed).

The browser is $TRANSCRIPTS_TEST_CHROMIUM, else /usr/bin/chromium. Without it the tests are
skipped (-ra lists them); with the variable set, a missing browser fails them (CI sets it).
Screenshots go to $TRANSCRIPTS_SCREENSHOTS when set, else to the run's temporary folder.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.browser import watch
from support.cli import COMMAND
from support.story import hostile_session_ids, tell_hostile, tell_story
from transcripts import TranscriptStore

VARIABLE = "TRANSCRIPTS_TEST_CHROMIUM"
CHROMIUM = os.environ.get(VARIABLE, "/usr/bin/chromium")
FLAGS = [  # headless as root in a container, and quiet: no request of its own to anywhere
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
]
STORY_MESSAGES = 10_000
HOSTILE = 4  # sessions whose every text is hostile markup


@dataclass
class Built:
    url: str  # the store's
    hostile: list[str]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """A store with the story (10,000 messages, compactions committed and failed, a rewind
    and a restore) and hostile sessions."""
    url = f"sqlite:///{tmp_path_factory.mktemp('browser') / 'store.db'}"
    hostile = hostile_session_ids()[-HOSTILE:]
    with TranscriptStore.open(url) as store:
        tell_story(store, messages=STORY_MESSAGES)
        for session_id in hostile:
            tell_hostile(store, session_id)
        for session_id in hostile_session_ids()[:-HOSTILE]:
            store.start(session_id, source="names")
            store.append(session_id, [{"role": "user", "content": session_id}])
    return Built(url, hostile)


@pytest.fixture(scope="module")
def server(built: Built) -> Iterator[str]:
    """`transcripts serve --port 0` on the store; its address."""
    command = [*COMMAND, "--db", built.url, "serve", "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        if " at http://" not in line:
            process.kill()
            raise AssertionError(f"serve did not start: {line!r} {process.communicate()[1]!r}")
        yield line.split(" at ", 1)[1].split()[0].rstrip("/")
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """The browser, for one module's tests: Playwright's sync API runs an event loop in this
    thread while it is open, which asyncio.run in later tests would find running."""
    if not Path(CHROMIUM).exists():
        message = f"no browser at {CHROMIUM} (apt-get install chromium, or set ${VARIABLE})"
        if VARIABLE in os.environ:
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context
    context.close()


@pytest.fixture
def page(context: Any, server: str) -> Any:
    page = context.new_page()
    page.watched = watch(page, server)
    return page


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = os.environ.get("TRANSCRIPTS_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path
