"""The README's commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_ci_runs_exactly_the_readme_test_command() -> None:
    test_command = next(command for command in readme_commands() if "pytest" in command)
    assert test_command in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_readme_install_command_runs_the_demo() -> None:
    assert any(command.endswith("transcripts demo") for command in readme_commands())
