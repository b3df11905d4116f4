"""The web's commands: `timeline` in the terminal, `export --format html` (with -o, --as-of,
--history) and `serve` in a subprocess (where it binds, what it answers, what it refuses)."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from support.cli import COMMAND
from support.story import PAYLOADS, hostile_session_ids, tell_hostile, tell_story
from transcripts import TranscriptStore


@pytest.fixture
def story(db: str) -> str:
    with TranscriptStore.open(db) as store:
        tell_story(store, messages=60)
    return db


def test_timeline_draws_the_context_and_lists_each_mark(run, story):
    result = run("timeline", "story")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Context of story: ")
    assert "2 committed, 2 failed, 1 rewound, 1 restored" in lines[0]
    marks = [line for line in lines if line[:1] in {"✂", "✗", "↶", "↷"}]
    assert [line.split()[2] for line in marks] == [
        "CompactionCommitted",
        "CompactionFailed",
        "CompactionFailed",
        "CompactionCommitted",
        "Rewound",
        "Restored",
    ]
    assert "tokens 9,000 → 1,200 (context over budget)" in marks[0]


def test_timeline_of_an_unknown_session_is_one_line(run, story):
    result = run("timeline", "nobody")
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1


def test_timeline_shows_terminal_escapes_from_the_store_as_text(run, db):
    session_id = next(i for i in hostile_session_ids() if "\x1b" in i)
    with TranscriptStore.open(db) as store:
        tell_hostile(store, session_id)
    result = run("timeline", session_id)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "\\x1b[31m" in result.stdout


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.urls += [v or "" for k, v in attrs if k in {"href", "src", "action", "data"}]


def test_export_html_writes_one_file_that_loads_nothing(run, db, tmp_path):
    session_id = hostile_session_ids()[-2]
    with TranscriptStore.open(db) as store:
        tell_story(store, messages=60)
        tell_hostile(store, session_id)
    for session in ["story", session_id]:
        path = tmp_path / "out.html"
        result = run("export", session, "--format", "html", "-o", str(path))
        assert result.exit_code == 0 and result.stdout == ""
        tags = Tags()
        tags.feed(path.read_text("utf-8"))
        assert not tags.tags & {"script", "link", "img", "iframe", "object", "base", "form"}
        assert all(url.startswith("#") for url in tags.urls), tags.urls
        assert "Content-Security-Policy" in path.read_text("utf-8")
    assert PAYLOADS["a script element"] not in path.read_text("utf-8")


def test_export_as_of_a_version_is_the_context_active_at_it_in_every_format(run, story):
    with TranscriptStore.open(story) as store:
        expected = store.active_at("story", 20)
    jsonl = run("export", "story", "--as-of", "20").stdout.splitlines()
    assert [json.loads(line) for line in jsonl] == expected
    markdown = run("export", "story", "--format", "md", "--as-of", "20").stdout
    assert "## Active context at version 20" in markdown
    assert all(f"`{message['id']}`" in markdown for message in expected)
    page = run("export", "story", "--format", "html", "--as-of", "20").stdout
    context = page.split('id="context"', 1)[1]
    assert context.count('class="message') == len(expected)
    assert all(f'data-message-id="{message["id"]}"' in context for message in expected)


def test_export_refuses_a_version_past_the_end_and_as_of_with_history(run, story, tmp_path):
    path = tmp_path / "out.html"
    result = run("export", "story", "--format", "html", "--as-of", "9999", "-o", str(path))
    assert result.exit_code == 1 and "versions 1 to" in result.stderr
    assert not path.exists()
    assert run("export", "story", "--history", "--as-of", "3").exit_code == 2


def test_export_to_a_file_leaves_it_as_it_was_when_the_export_fails(run, story, tmp_path):
    path = tmp_path / "kept.html"
    path.write_text("before")
    assert run("export", "nobody", "--format", "html", "-o", str(path)).exit_code == 1
    assert path.read_text() == "before"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    missing = tmp_path / "no" / "such" / "folder.html"
    result = run("export", "story", "--format", "html", "-o", str(missing))
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1


def serve(url: str, *more: str) -> subprocess.Popen[str]:
    command = [*COMMAND, "--db", url, "serve", "--port", "0", *more]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def address(process: subprocess.Popen[str]) -> str:
    line = process.stdout.readline() if process.stdout else ""
    assert " at http://" in line, (line, process.stderr and process.stderr.read())
    return line.split(" at ", 1)[1].split()[0]


def stop(process: subprocess.Popen[str]) -> str:
    process.terminate()
    _, stderr = process.communicate(timeout=30)
    return stderr


@pytest.mark.slow
def test_serve_listens_on_127_0_0_1_and_answers_only_reads(story):
    process = serve(story)
    try:
        root = address(process)
        assert root.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(root + "sessions/story") as response:
            assert response.status == 200
            assert "script-src 'self'" in response.headers["content-security-policy"]
            assert b'data-type="CompactionFailed"' in response.read()
        request = urllib.request.Request(root + "sessions/story", data=b"x", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        assert refused.value.code == 405
    finally:
        assert stop(process) == ""


@pytest.mark.slow
def test_serve_says_so_when_it_listens_beyond_this_machine(story):
    process = serve(story, "--host", "0.0.0.0")
    try:
        assert address(process).startswith("http://0.0.0.0:")
    finally:
        stderr = stop(process)
    assert "Warning: listening on 0.0.0.0, not on 127.0.0.1" in stderr


@pytest.mark.slow
def test_serve_on_a_port_in_use_is_one_line(story):
    process = serve(story)
    try:
        port = address(process).rsplit(":", 1)[1].strip("/")
        command = [*COMMAND, "--db", story, "serve", "--port", port]
        busy = subprocess.run(command, capture_output=True, text=True, timeout=60)
    finally:
        stop(process)
    assert busy.returncode == 1 and len(busy.stderr.splitlines()) == 1
    assert "Address already in use" in busy.stderr


def test_every_web_command_has_help(run):
    for command in ["serve", "timeline"]:
        result = run(command, "--help")
        assert result.exit_code == 0 and "Example:" in result.stdout
    assert "html" in run("export", "--help").stdout


def test_the_files_of_the_web_app_ship_with_the_package():
    from transcripts.adapters.web.rendering import HERE

    assert (HERE / "templates" / "session.html").is_file()
    assert (HERE / "static" / "style.css").is_file()
    assert Path(HERE, "static", "app.js").read_text().startswith("// Progressive")
