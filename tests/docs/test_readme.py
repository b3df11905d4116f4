"""The README is short, its commands are the ones CI runs, and the demo it shows is the
demo's output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from support.markdown_blocks import ROOT, blocks

README = ROOT / "README.md"
BIN = Path(sys.executable).parent


def readme_commands() -> list[str]:
    return [block.code for block in blocks(README) if block.lang == "bash"]


def normalized(line: str) -> str:
    """A line of the demo's output without what changes from run to run (ids, times)."""
    line = re.sub(r"\b(msg|cmp)_[0-9a-f]+…?", r"\1_…", line)
    line = re.sub(r"\d{4}-\d\d-\d\d", "yyyy-mm-dd", line)
    line = re.sub(r"demo-\d{8}-\d{6}-\d+", "demo-…", line)
    return re.sub(r"\d\d:\d\d:\d\d", "hh:mm:ss", line).rstrip()


def test_the_readme_is_at_most_200_lines() -> None:
    assert len(README.read_text().splitlines()) <= 200


def test_ci_runs_exactly_the_readme_test_command() -> None:
    test_command = next(command for command in readme_commands() if "pytest" in command)
    assert test_command in (ROOT / ".ci" / "run").read_text().splitlines()


def test_ci_builds_the_docs_site_strictly() -> None:
    assert ".venv/bin/mkdocs build --strict" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_install_command_runs_the_demo() -> None:
    assert any(command.endswith("transcripts demo") for command in readme_commands())


def test_the_demo_output_in_the_readme_is_what_the_demo_prints(tmp_path: Path) -> None:
    shown = next(block.code for block in blocks(README) if block.code.startswith("Session demo-"))
    result = subprocess.run(
        [str(BIN / "transcripts"), "--db", f"sqlite:///{tmp_path / 'demo.db'}", "demo"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        check=True,
    )
    printed = {normalized(line) for line in result.stdout.splitlines()}
    missing = [line for line in shown.splitlines() if normalized(line) not in printed]
    assert missing == []


def test_every_relative_link_of_the_readme_names_a_file_of_the_repository() -> None:
    links = re.findall(r"\]\(([^)#]+)\)", README.read_text())
    relative = [link for link in links if "://" not in link]
    assert relative
    assert [link for link in relative if not (ROOT / link).exists()] == []
