"""Every code block the README or a docs page marks `<!-- runnable -->` runs, so the docs
cannot drift from the code; every other command block of the README is one CI runs.

A page's runnable blocks run in order in one fresh folder (a block may use the store an
earlier one made), with `examples/` beside them, `python` and `transcripts` the ones of this
environment, and the default store in a temporary home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import process_environment
from support.markdown_blocks import ROOT, Block, blocks, pages

BIN = Path(sys.executable).parent
# The README's commands that are not run here: installing from a registry, and the two
# commands CI runs (the demo's output and the test command are checked by test_readme.py).
CHECKED_ELSEWHERE = ("pip install transcript-store", "transcripts demo", "-m pytest tests")
PAGES_WITH_RUNNABLE_BLOCKS = [page for page in pages() if any(b.runnable for b in blocks(page))]


def run(block: Block, folder: Path) -> subprocess.CompletedProcess[str]:
    if block.lang == "python":
        command = [sys.executable, "-c", block.code]
    elif block.lang in {"bash", "sh"}:
        command = ["bash", "-euo", "pipefail", "-c", block.code]
    else:
        raise AssertionError(f"{block.name}: a runnable block must be bash, sh or python")
    path = f"{BIN}{os.pathsep}{os.environ['PATH']}"
    env = process_environment(home=folder / "home", columns=100, PATH=path)
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", PAGES_WITH_RUNNABLE_BLOCKS, ids=lambda page: str(page.relative_to(ROOT))
)
def test_every_runnable_block_of_the_page_runs(page: Path, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    for block in blocks(page):
        if block.runnable:
            result = run(block, tmp_path)
            assert result.returncode == 0, f"{block.name}\n{result.stdout}\n{result.stderr}"


def test_the_readme_and_the_tutorial_have_runnable_blocks() -> None:
    names = {page.relative_to(ROOT).as_posix() for page in PAGES_WITH_RUNNABLE_BLOCKS}
    assert {"README.md", "docs/tutorial.md"} <= names


def test_every_command_block_of_the_readme_runs_here_or_in_ci() -> None:
    unchecked = [
        block.name
        for block in blocks(ROOT / "README.md")
        if block.lang in {"bash", "sh", "python"}
        and not block.runnable
        and not any(command in block.code for command in CHECKED_ELSEWHERE)
    ]
    assert unchecked == []
