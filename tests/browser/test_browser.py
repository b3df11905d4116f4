"""The web app and the HTML export in a real browser (Debian's chromium, through
Playwright): the timeline's marks, a compaction's before and after, replay against
`active_at`, hostile content, the export opened from file://, JavaScript off."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support.browser import watch
from support.cli import COMMAND
from support.story import PAYLOADS, mark_versions
from transcripts import TranscriptStore
from transcripts.adapters.web.links import ServerLinks

LINKS = ServerLinks()
COUNTS = ["versions", "messages", "active", "committed", "failed", "rewound"]
MARK_TYPES = ["CompactionCommitted", "CompactionFailed", "Rewound", "Restored"]


def open_story(page: Any, server: str) -> None:
    page.goto(server + LINKS.session("story"))


def marks(page: Any) -> list[tuple[str, int]]:
    found = page.locator("svg.timeline [data-type]")
    return [
        (found.nth(i).get_attribute("data-type"), int(found.nth(i).get_attribute("data-version")))
        for i in range(found.count())
    ]


def counts(page: Any) -> dict[str, str]:
    found = page.locator("main > dl.facts [data-count], figure.chart [data-count]")
    return {
        found.nth(i).get_attribute("data-count"): found.nth(i).inner_text()
        for i in range(found.count())
    }


def test_the_timeline_has_one_mark_per_compaction_rewind_and_restore(page, server, built):
    open_story(page, server)
    with TranscriptStore.open(built.url) as store:
        expected = mark_versions(store, "story")
    shown = marks(page)
    assert sorted(shown) == sorted((kind, v) for kind, vs in expected.items() for v in vs)
    assert {kind for kind, _ in shown} == set(MARK_TYPES)
    for index, (kind, version) in enumerate(shown):
        mark = page.locator("svg.timeline [data-type]").nth(index)
        label = mark.get_attribute("aria-label")
        assert label.startswith(f"{kind} at version {version}")
        assert mark.locator("title").text_content() == label
    assert page.watched.clean()


def test_hovering_or_focusing_a_mark_names_it(page, server):
    open_story(page, server)
    first = page.locator("svg.timeline a.mark").nth(0)
    second = page.locator('svg.timeline a.mark[data-type="CompactionCommitted"]').nth(1)
    assert not first.locator(".mark-label").is_visible()
    first.focus()
    assert first.locator(".mark-label").is_visible()
    assert "at version" in first.locator(".mark-label").text_content()
    second.locator(".shape").hover()
    assert second.locator(".mark-label").is_visible()


def test_clicking_a_committed_compaction_shows_its_before_and_after(page, server, built):
    open_story(page, server)
    page.locator('svg.timeline [data-type="CompactionCommitted"] .shape').first.click()
    page.wait_for_url(re.compile(r"/compactions/"))
    with TranscriptStore.open(built.url) as store:
        attempt = next(a for a in store.compactions("story") if a["status"] == "committed")
        before = store.active_at("story", attempt["version"] - 1)
    assert page.locator("h1").inner_text().startswith("✂ Compaction committed")
    runs = page.locator("section.before li.run")
    kinds = [runs.nth(i).get_attribute("data-kind") for i in range(runs.count())]
    sizes = [int(runs.nth(i).get_attribute("data-size")) for i in range(runs.count())]
    assert sum(sizes) == len(before) and "superseded" in kinds
    superseded = page.locator('section.before li.run[data-kind="superseded"]')
    assert superseded.get_attribute("data-size") == str(len(attempt["superseded"]))
    assert page.locator('section.after li.run[data-kind="added"] details.message').count() == 1
    superseded.locator("summary").first.click()  # expands the collapsed run
    assert superseded.locator("details.message").first.is_visible()
    assert page.watched.clean()


def test_clicking_a_failed_compaction_shows_what_it_would_have_done_and_why(page, server):
    open_story(page, server)
    page.locator('svg.timeline [data-type="CompactionFailed"] .shape').first.click()
    page.wait_for_url(re.compile(r"/compactions/"))
    assert page.locator("h1").inner_text().startswith("✗ Compaction failed")
    assert "the summarizer timed out" in page.locator("section.failure").inner_text()
    assert page.locator('section.before li.run[data-kind="superseded"]').count() >= 1
    assert page.watched.clean()


def context_ids(page: Any) -> list[str]:
    """The message ids of a replay, page after page."""
    ids: list[str] = []
    while True:
        found = page.locator("ol.context > li > details.message")
        ids += [found.nth(i).get_attribute("data-message-id") for i in range(found.count())]
        following = page.locator('nav.pager a[rel="next"]')
        if not following.count():
            return ids
        with page.expect_navigation():  # (a load state alone can be the page before's)
            following.click()


def test_replay_at_a_version_equals_active_at(page, server, built):
    open_story(page, server)
    with page.expect_navigation():
        page.get_by_role("link", name="Replay", exact=True).click()
    with TranscriptStore.open(built.url) as store:
        head = store.version("story")
        assert page.url.endswith(f"?version={head}")
        assert context_ids(page) == [m["id"] for m in store.active_at("story", head)]
        for version in [2, 1_500, head - 3, head - 1]:
            page.goto(server + LINKS.replay("story", head))
            page.locator("input.version-number").fill(str(version))
            page.get_by_role("button", name="Go").click()
            page.wait_for_url(re.compile(rf"\?version={version}$"))
            expected = [m["id"] for m in store.active_at("story", version)]
            assert context_ids(page) == expected, version
    assert page.watched.clean()


def test_the_events_list_of_a_long_session_shows_a_page_of_it(page, server, built):
    open_story(page, server)
    assert page.locator("table.events tbody tr").count() == 100
    assert page.locator('span[data-count="versions"], dd[data-count="versions"]').count() == 1
    with page.expect_navigation():
        page.locator('nav.pager a[rel="next"]').first.click()
    assert page.locator("table.events tbody tr").first.get_attribute("id") == "v101"


def visit_everything(page: Any, server: str, session_id: str) -> list[str]:
    """The pages of a session, each opened with every message expanded and each mark
    hovered; the URLs visited."""
    page.goto(server + LINKS.session(session_id))
    urls = [page.url]
    for index in range(page.locator("svg.timeline a.mark").count()):
        page.locator("svg.timeline a.mark .hit").nth(index).hover(force=True)
    links = page.locator("a[href^='/sessions/']")
    hrefs = {links.nth(i).get_attribute("href") for i in range(links.count())}
    for href in sorted(hrefs)[:25]:
        page.goto(server + href)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        urls.append(page.url)
    return urls


def test_hostile_content_fires_no_dialog_console_error_or_request_outside_the_server(
    page, server, built
):
    page.goto(server + "/")
    page.goto(server + "/?q=script")
    visited = [page.url]
    for session_id in built.hostile:
        visited += visit_everything(page, server, session_id)
    assert len(visited) > 40
    assert page.watched.clean(), page.watched
    page.goto(server + LINKS.session(built.hostile[0]))
    shown = page.locator("main").inner_text()
    assert PAYLOADS["a script element"] in shown  # shown as text, not run


def export(url: str, session_id: str, path: Path, *more: str) -> None:
    command = [*COMMAND, "--db", url, "export", session_id]
    subprocess.run([*command, "--format", "html", "-o", str(path), *more], check=True)


def test_the_html_export_opens_from_file_with_no_request_and_shows_the_same_counts(
    context, server, built, tmp_path
):
    served = context.new_page()
    served.watched = watch(served, server)
    open_story(served, server)
    for session_id, name in [("story", "story.html"), (built.hostile[0], "hostile.html")]:
        path = tmp_path / name
        export(built.url, session_id, path)
        page = context.new_page()
        watched = watch(page, path.as_uri())
        requests: list[str] = []
        page.on("request", lambda r, seen=requests: seen.append(r.url))
        page.goto(path.as_uri())
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        for index in range(page.locator("svg.timeline a.mark").count()):
            page.locator("svg.timeline a.mark .hit").nth(index).hover(force=True)
        assert requests == [path.as_uri()] and watched.clean(), (requests, watched)
        if session_id == "story":
            assert counts(page) == counts(served) and len(counts(page)) == 10
            assert sorted(marks(page)) == sorted(marks(served))
            shown = int(page.locator('[data-count="context"]').inner_text().replace(",", ""))
            with TranscriptStore.open(built.url) as store:
                assert shown == len(store.active("story"))


def test_the_pages_work_with_javascript_off(browser, server):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.watched = watch(page, server)
    open_story(page, server)
    assert page.locator("svg.timeline [data-type]").count() >= 6
    with page.expect_navigation():
        page.get_by_role("link", name="Replay", exact=True).click()
    page.locator("input.version-number").fill("3")
    page.get_by_role("button", name="Go").click()
    page.wait_for_url(re.compile(r"\?version=3$"))
    assert page.locator("ol.context > li").count() == 2
    assert page.watched.clean()
    context.close()


@pytest.mark.parametrize("name", ["timeline", "failed-compaction"])
def test_screenshots_of_the_timeline_and_of_a_failed_compaction(page, server, screenshots, name):
    open_story(page, server)
    if name == "failed-compaction":
        page.locator('svg.timeline [data-type="CompactionFailed"] .shape').first.click()
        page.wait_for_url(re.compile(r"/compactions/"))
        page.locator("section.before li.run summary").first.click()
    path = screenshots / f"{name}.png"
    page.screenshot(path=path)
    assert path.read_bytes().startswith(b"\x89PNG")
