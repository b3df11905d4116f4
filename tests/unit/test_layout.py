"""The package's shape: every layer ships, dependencies point inwards, each role keeps to its
side of the public API, and the code passes the linter."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Folders that are not the package, besides hidden ones (.venv, .mkdocs, …).
NOT_PACKAGE = {"tests", "benchmarks", "build", "docs", "examples", "site"}
IO = {"sqlite3", "orjson", "click", "rich", "psycopg", "psycopg_pool", "platformdirs"}
OUTER_LAYERS = {"adapters", "application", "config", "projections", "integrations"}
BACKENDS = sorted(
    path.name
    for path in (ROOT / "adapters" / "storage").iterdir()
    if (path / "backend.py").exists()
)
# The roles that must keep to the public API (the package's `__init__`), the pure domain,
# the settings, and their own role's modules.
PUBLIC_API_USERS = [
    "adapters/cli",
    "adapters/importers",
    "adapters/exporters",
    "adapters/web",
    "adapters/migration.py",
    "integrations",
]
INTERNALS = {"application", "projections", "adapters.storage"}
LIBRARIES = {"eventsourcing", "sqlite3", "psycopg"}  # the storage internals' own
MAX_MODULE_LINES = 400


def package_files(*parts: str) -> list[Path]:
    place = ROOT.joinpath(*parts)
    files = [place] if place.suffix == ".py" else sorted(place.rglob("*.py"))
    return [path for path in files if in_package(path)]


def in_package(path: Path) -> bool:
    parts = path.relative_to(ROOT).parts
    return not NOT_PACKAGE & set(parts) and not any(part.startswith(".") for part in parts)


def imported_modules(path: Path) -> set[str]:
    """The absolute names of the modules a package file imports (`transcripts.x.y`, or a
    third-party top name), relative imports resolved; `from . import x` gives `….x`."""
    package = ["transcripts", *path.parent.relative_to(ROOT).parts]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *filter(None, (node.module or "").split("."))])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names if node.level)
    return names


def inside(module: str, *prefixes: str) -> bool:
    return any(
        module == f"transcripts.{p}" or module.startswith(f"transcripts.{p}.") for p in prefixes
    )


def top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if parts[0] == "transcripts" and len(parts) > 1 else parts[0]


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        "transcripts" + "".join(f".{part}" for part in init.parent.relative_to(ROOT).parts)
        for init in ROOT.glob("**/__init__.py")
        if in_package(init)
    }
    assert found == listed


@pytest.mark.parametrize("file", package_files("domain"), ids=lambda p: p.name)
def test_the_domain_imports_no_io_and_no_outer_layer(file: Path) -> None:
    reached = {top(name) for name in imported_modules(file)}
    assert not reached & (IO | OUTER_LAYERS)


@pytest.mark.parametrize("file", package_files("projections"), ids=lambda p: p.name)
def test_projections_depend_only_on_the_domain(file: Path) -> None:
    reached = {top(name) for name in imported_modules(file)}
    assert not reached & (OUTER_LAYERS - {"projections"} | IO)


@pytest.mark.parametrize("file", package_files("application") + package_files("config.py"), ids=str)
def test_the_application_and_the_settings_import_no_adapter(file: Path) -> None:
    assert not [name for name in imported_modules(file) if inside(name, "adapters", "integrations")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_storage_backend_is_imported_by_no_module_outside_its_folder(backend: str) -> None:
    importers = [
        path.relative_to(ROOT)
        for path in package_files(".")
        if path.parent != ROOT / "adapters" / "storage" / backend
        and any(inside(name, f"adapters.storage.{backend}") for name in imported_modules(path))
    ]
    assert importers == []


def test_every_backend_is_registered_by_its_url_schemes_and_nothing_else_is() -> None:
    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    registered = {value.split(":")[0] for value in entry_points["transcripts.backends"].values()}
    assert registered == {f"transcripts.adapters.storage.{backend}" for backend in BACKENDS}


@pytest.mark.parametrize(
    "file", [file for place in PUBLIC_API_USERS for file in package_files(place)], ids=str
)
def test_the_command_line_importers_exporters_migration_and_integrations_use_the_public_api(
    file: Path,
) -> None:
    reached = [
        name
        for name in imported_modules(file)
        if inside(name, *INTERNALS)
        or name.split(".")[0] in LIBRARIES
        and "importers/hermes" not in str(file)
    ]
    assert reached == [], "use `transcripts` (its __all__), the domain, or your own role"


def test_the_library_s_private_internals_are_used_in_one_module_only() -> None:
    users = []
    for path in package_files("."):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and (
                    node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    or node.attr == "__wrapped__"
                )
                and not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"})
            ):
                users.append(f"{path.relative_to(ROOT)}: .{node.attr}")
    assert {user.split(":")[0] for user in users} <= {"adapters/storage/internals.py"}, users


def test_sql_lives_only_in_the_storage_adapters_and_the_hermes_reader() -> None:
    allowed = {ROOT / "adapters" / "storage", ROOT / "adapters" / "importers" / "hermes"}
    outside = [
        path.relative_to(ROOT)
        for path in package_files(".")
        if "sqlite3" in imported_modules(path)
        and not any(place in path.parents for place in allowed)
    ]
    assert outside == []


@pytest.mark.parametrize("file", package_files("."), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_is_small(file: Path) -> None:
    assert len(file.read_text().splitlines()) <= MAX_MODULE_LINES


def test_the_package_passes_the_linter_and_the_formatter() -> None:
    sources = [
        str(ROOT / name)
        for name in ("domain", "projections", "adapters", "application", "integrations")
    ]
    sources += [str(path) for path in ROOT.glob("*.py")]
    ruff = [sys.executable, "-m", "ruff"]
    config = ["--config", str(ROOT / "pyproject.toml")]
    lint = subprocess.run([*ruff, "check", *config, *sources], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    form = subprocess.run(
        [*ruff, "format", "--check", *config, *sources], capture_output=True, text=True
    )
    assert form.returncode == 0, form.stdout
