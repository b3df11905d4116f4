"""`transcripts search`: one table for people, JSON for programs, one line for a bad query."""

from __future__ import annotations

import json

from click.testing import CliRunner

from transcripts.adapters.cli import cli


def run(db: str, *arguments: str):
    return CliRunner().invoke(cli, ["--db", db, *arguments])


def test_search_prints_the_matching_messages_of_every_session(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    assert run(db, "demo").exit_code == 0
    result = run(db, "search", "jacket")
    assert result.exit_code == 0
    assert "1 matches for 'jacket'" in result.output
    assert "jacket" in result.output


def test_search_json_lists_hits_with_marked_snippets(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    run(db, "demo")
    hits = json.loads(run(db, "search", "lisbon", "--active-only", "--json").output)
    assert hits and all(hit["active"] for hit in hits)
    assert all("«" in hit["snippet"] for hit in hits)


def test_a_query_that_is_not_fts_syntax_is_one_line_and_exit_1(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    run(db, "demo")
    result = run(db, "search", '"unbalanced')
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: invalid search query '\"unbalanced': unterminated string"
    ]
