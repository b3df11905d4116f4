"""The package's shape: every layer ships, and dependencies point inwards."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN_IN_DOMAIN = {"sqlite3", "orjson", "click", "rich", "psycopg", "psycopg_pool", "platformdirs"}
OUTER_LAYERS = {"adapters", "application", "config", "projections"}


def imported_modules(path: Path) -> set[str]:
    """Absolute module names and package-relative names (level, name) a file imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                names.add("." * node.level + module)
            else:
                names.add(module)
    return names


def top_name(imported: str, file: Path) -> str:
    """The package-level name an import reaches: `..adapters.x` from domain/ is `adapters`."""
    if not imported.startswith("."):
        return imported.split(".")[0]
    level = len(imported) - len(imported.lstrip("."))
    package = file.parent.relative_to(ROOT).parts
    base = package[: len(package) - (level - 1)]
    parts = [*base, *filter(None, imported.lstrip(".").split("."))]
    return parts[0] if parts else ""


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        "transcripts" + "".join(f".{part}" for part in init.parent.relative_to(ROOT).parts)
        for init in ROOT.glob("**/__init__.py")
        if not {"tests", "benchmarks", ".venv", "build"} & set(init.relative_to(ROOT).parts)
    }
    assert found == listed


@pytest.mark.parametrize("file", sorted((ROOT / "domain").glob("*.py")), ids=lambda p: p.name)
def test_the_domain_imports_no_io_and_no_outer_layer(file: Path) -> None:
    reached = {top_name(name, file) for name in imported_modules(file)}
    assert not reached & (FORBIDDEN_IN_DOMAIN | OUTER_LAYERS)


@pytest.mark.parametrize("file", sorted((ROOT / "projections").glob("*.py")), ids=lambda p: p.name)
def test_projections_depend_only_on_the_domain(file: Path) -> None:
    reached = {top_name(name, file) for name in imported_modules(file)}
    assert not reached & (OUTER_LAYERS - {"projections"} | {"sqlite3", "psycopg", "orjson"})


def test_sql_lives_only_in_adapters() -> None:
    outside = [
        path
        for path in ROOT.glob("**/*.py")
        if path.relative_to(ROOT).parts[0] not in {"adapters", "tests", "benchmarks", ".venv", "build"}
    ]
    assert not [path for path in outside if "sqlite3" in imported_modules(path)]


def test_the_package_passes_the_linter_and_the_formatter() -> None:
    sources = [str(ROOT / name) for name in ("domain", "projections", "adapters", "application", "integrations")]
    sources += [str(path) for path in ROOT.glob("*.py")]
    ruff = [sys.executable, "-m", "ruff"]
    config = ["--config", str(ROOT / "pyproject.toml")]
    lint = subprocess.run([*ruff, "check", *config, *sources], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    form = subprocess.run([*ruff, "format", "--check", *config, *sources], capture_output=True, text=True)
    assert form.returncode == 0, form.stdout
