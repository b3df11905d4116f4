"""The web app over HTTP: every page of a session answers, links are stable URLs whatever
an id holds, unknown things are 404 pages, a failing store a 500 page of one line, only
GET and HEAD are served, every response carries the Content-Security-Policy, and no text
from the store reaches a page unescaped."""

from __future__ import annotations

import html
from html.parser import HTMLParser

import pytest
from markupsafe import escape
from starlette.testclient import TestClient

from support.rows import damage_event
from support.story import PAYLOADS, hostile_session_ids, tell_hostile, tell_story
from transcripts import TranscriptStore
from transcripts.adapters.web.app import create_app
from transcripts.adapters.web.links import ServerLinks

LINKS = ServerLinks()


def escaped(text: str) -> str:
    """Text as the templates write it (Jinja2's autoescape)."""
    return str(escape(text))


class Hrefs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hrefs += [value for name, value in attrs if name == "href" and value]


def hrefs(page: str) -> list[str]:
    parser = Hrefs()
    parser.feed(page)
    return parser.hrefs


def crawl(client: TestClient, start: str, limit: int = 60) -> dict[str, str]:
    """The pages reached from `start` by the app's own links (at most `limit`), by URL."""
    seen: dict[str, str] = {}
    queue = [start]
    while queue and len(seen) < limit:
        url = queue.pop(0).split("#")[0]
        if url in seen or not url.startswith("/") or url.startswith("/static/"):
            continue
        response = client.get(url)
        assert response.status_code == 200, (url, response.text)
        seen[url] = response.text
        queue += hrefs(response.text)
    return seen


def test_every_page_of_a_session_answers_from_its_own_links(client, store):
    tell_story(store, messages=60)
    pages = crawl(client, LINKS.session("story"), limit=200)
    kinds = {url.split("/")[3].split("?")[0] for url in pages if url.count("/") >= 3}
    assert kinds == {"events", "replay", "messages", "compactions", "history"}


def test_every_response_carries_the_content_security_policy(client, store):
    tell_story(store, messages=20)
    for url in ["/", LINKS.session("story"), "/static/style.css", "/nowhere"]:
        response = client.get(url)
        policy = response.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert "'unsafe-inline'" not in policy
        assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "url",
    [
        "/sessions/nobody",
        "/sessions/story/replay?version=999",
        "/sessions/story/replay?version=0",
        "/sessions/story/events/999",
        "/sessions/story/messages/nothing",
        "/sessions/story/compactions/cmp_nothing",
        "/sessions/story/history?page=99",
        "/sessions/%FF%FE",
        "/no/such/page",
    ],
)
def test_what_the_store_does_not_hold_is_a_404_page_of_one_line(client, store, url):
    tell_story(store, messages=20)
    response = client.get(url)
    assert response.status_code == 404
    assert "text/html" in response.headers["content-type"]
    assert response.text.count('class="error"') == 1 and "Traceback" not in response.text


def test_a_query_value_that_is_no_number_is_a_400_page(client, store):
    tell_story(store, messages=20)
    assert client.get("/sessions/story/replay?version=twelve").status_code == 400
    assert client.get("/sessions/story/replay").status_code == 400


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_only_get_and_head_are_served(client, store, method):
    tell_story(store, messages=20)
    before = store.events("story")
    response = client.request(method, LINKS.session("story"))
    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"
    assert client.head(LINKS.session("story")).status_code == 200
    assert store.events("story") == before


def test_a_host_other_than_the_loopback_names_is_refused(client, store):
    tell_story(store, messages=20)
    assert client.get("/", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200


def test_an_erased_session_shows_its_tombstone_and_its_content_is_gone(client, store):
    tell_story(store, messages=20)
    store.forget("story")
    page = client.get(LINKS.session("story"))
    assert page.status_code == 200 and "was erased" in page.text
    assert client.get(LINKS.replay("story", 2)).status_code in {404, 410}
    assert client.get(LINKS.history("story")).status_code == 410


def test_a_store_that_cannot_read_an_event_is_a_500_page_of_one_line(durable_url):
    with TranscriptStore.open(durable_url) as store:
        tell_story(store, messages=20)
        damage_event(durable_url, "story", 3, state=lambda _: b"\x00 not an event")
        app = create_app(store)
        with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
            response = c.get(LINKS.event("story", 3))
    assert response.status_code == 500
    assert response.text.count('class="error"') == 1 and "Traceback" not in response.text
    assert "version 3" in html.unescape(response.text)


def test_ids_holding_any_text_are_stable_urls_that_lead_back_to_them(client, store):
    for session_id in hostile_session_ids():
        message_id = f"{session_id[:1000]}/m?#1"
        store.start(session_id)
        store.append(session_id, [{"id": message_id, "role": "user", "content": "hi"}])
        page = client.get(LINKS.session(session_id))
        assert page.status_code == 200, session_id
        assert escaped(session_id) in page.text
        message = client.get(LINKS.message(session_id, message_id))
        assert message.status_code == 200 and escaped(message_id) in message.text


def test_no_text_from_the_store_reaches_a_page_unescaped(client, store):
    session_ids = hostile_session_ids()[-6:]
    for session_id in session_ids:
        tell_hostile(store, session_id)
    pages = crawl(client, "/", limit=80)
    pages.update(crawl(client, "/?q=script", limit=5))
    for session_id in session_ids:
        pages.update(crawl(client, LINKS.session(session_id), limit=40))
    markup = [text for text in PAYLOADS.values() if "<" in text or '"' in text]
    for url, page in pages.items():
        for text in markup:
            assert text not in page, (url, text)
    shown = "".join(pages.values())
    assert all(escaped(text) in shown for text in markup)


def test_a_failed_compaction_page_shows_what_was_proposed_or_no_replacement_and_the_traceback(
    client, store
) -> None:
    def summarizer_down(messages: list[dict]) -> list[dict]:
        raise ConnectionError("model unreachable")

    store.start("failures")
    store.append("failures", [{"role": "user", "content": f"turn {n}"} for n in range(3)])
    raised = store.compact("failures", summarizer_down)
    stale, winner = store.begin_compaction("failures"), store.begin_compaction("failures")
    assert store.commit_compaction(winner, [{"role": "system", "content": "won"}]).committed
    lost = store.commit_compaction(stale, [{"role": "system", "content": "the lost summary"}])

    page = client.get(f"/sessions/failures/compactions/{raised.compaction_id}").text
    assert "No replacement was proposed." in page
    assert "ConnectionError: model unreachable" in page and "in summarizer_down" in page
    page = client.get(f"/sessions/failures/compactions/{lost.compaction_id}").text
    assert "The replacement it proposed (rejected): 1 new message" in page
    assert "the lost summary" in page and "No replacement" not in page
