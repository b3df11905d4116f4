"""`transcripts search`: one table for people, JSON for programs, one line for a bad query."""

from __future__ import annotations

import json

from support.cli import Run


def test_search_prints_the_matching_messages_of_every_session(run: Run) -> None:
    assert run("demo").exit_code == 0
    result = run("search", "jacket")
    assert result.exit_code == 0
    assert "1 match for 'jacket'" in result.output
    assert "jacket" in result.output


def test_search_json_lists_hits_with_marked_snippets(run: Run) -> None:
    run("demo")
    hits = json.loads(run("search", "lisbon", "--active-only", "--json").output)
    assert hits and all(hit["active"] for hit in hits)
    assert all("«" in hit["snippet"] for hit in hits)


def test_a_query_that_is_not_fts_syntax_is_one_line_and_exit_1(run: Run) -> None:
    run("demo")
    result = run("search", '"unbalanced')
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: invalid search query '\"unbalanced': unterminated string"
    ]
