"""Every command has help with an example, answers -h, and is in the command table of the
docs' Command line page (docs/cli.md) with every one of its options. (The CLI reference page
is generated from the commands themselves.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import takewhile
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from transcripts.adapters.cli import cli

COMMAND_LINE_PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def commands(
    group: click.Group = cli, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command and group below `group`, with the words that name it."""
    for name, command in sorted(group.commands.items()):
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


ALL = list(commands())
LEAVES = [(path, command) for path, command in ALL if not isinstance(command, click.Group)]


def table_rows() -> dict[str, str]:
    """The rows of the command table, by the command they document (the words after
    `transcripts` up to the first argument or option)."""
    rows = {}
    for line in COMMAND_LINE_PAGE.read_text().splitlines():
        match = re.match(r"^\| `transcripts ([^`]+)`", line)
        if match:
            words = list(takewhile(re.compile(r"[a-z][a-z-]*").fullmatch, match[1].split()))
            rows[" ".join(words)] = line
    return rows


def options(command: click.Command) -> list[click.Option]:
    return [
        param
        for param in command.params
        if isinstance(param, click.Option) and "--help" not in param.opts
    ]


def named(pairs: list[tuple[tuple[str, ...], click.Command]]) -> list[object]:
    return [
        pytest.param(path, command, id=" ".join(path) or "transcripts") for path, command in pairs
    ]


@pytest.mark.parametrize(("path", "command"), named([((), cli), *ALL]))
def test_every_command_has_help_text_with_an_example(
    path: tuple[str, ...], command: click.Command
) -> None:
    assert command.help and command.help.strip()
    assert "Example: transcripts" in command.help
    for option in options(command):
        assert option.help, f"{' '.join(path)} {option.opts} has no help"


@pytest.mark.parametrize(
    "path", [(), *(path for path, _ in ALL)], ids=lambda p: " ".join(p) or "transcripts"
)
def test_h_and_help_print_the_help_of_every_command(path: tuple[str, ...]) -> None:
    for flag in ("-h", "--help"):
        result = CliRunner().invoke(cli, [*path, flag], prog_name="transcripts")
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"Usage: transcripts {' '.join(path)}".rstrip())
        assert "Example:" in result.stdout


@pytest.mark.parametrize(("path", "command"), named(LEAVES))
def test_every_command_and_each_of_its_options_is_in_the_command_table(
    path: tuple[str, ...], command: click.Command
) -> None:
    rows = table_rows()
    name = " ".join(path)
    assert name in rows, f"no row for `transcripts {name}` in the command table of docs/cli.md"
    for option in options(command):
        assert any(
            re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", rows[name]) for opt in option.opts
        ), f"`transcripts {name}` option {'/'.join(option.opts)} is not in its table row"


def test_the_command_table_documents_no_command_that_does_not_exist() -> None:
    assert set(table_rows()) <= {" ".join(path) for path, _ in LEAVES}


def test_the_command_line_page_names_the_global_options() -> None:
    page = COMMAND_LINE_PAGE.read_text()
    for option in ("--db URL", "--durability full|normal", "--version", "-h/--help"):
        assert option in page
