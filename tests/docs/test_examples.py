"""Every script in examples/ runs (no network: the integrations use the frameworks' fake
models) and prints what it is there to show."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support.markdown_blocks import ROOT

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
# What each example must print: the point it makes.
SHOWS = {
    "store_and_compact.py": "compaction committed: True; 2 active",
    "audit_failed_compaction.py": "active messages unchanged: True",
    "rebuild_views.py": "after rebuild: ok=True",
    "openai_agents_session.py": "California.",
    "langchain_history.py": "Your name is Ada.",
    "pydantic_ai_conversation.py": "4 messages: two turns",
    "claude_agent_sdk_store.py": "compaction committed: tokens 1200 -> 90",
}


def test_every_example_has_what_it_shows_listed() -> None:
    assert sorted(SHOWS) == [path.name for path in EXAMPLES]


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_the_example_runs_in_a_fresh_folder(example: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(example)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert SHOWS[example.name] in result.stdout
    assert not result.stderr.strip(), result.stderr
